"""Drop records already seen, by business key."""
import csv
import json
import pathlib

def run(records, cfg, ctx):
    seen = set()
    key = cfg.get("key", ["order_id"])
    for r in records:
        k = tuple(r.get(f) for f in key)
        if k in seen:
            ctx.count("duplicates")
            continue
        seen.add(k)
        yield r
