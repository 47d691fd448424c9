"""Check each record against the schema; send bad ones to quarantine."""
import csv
import json
import pathlib

def run(records, cfg, ctx):
    schema = json.loads(pathlib.Path(cfg["schema"]).read_text())
    required = schema.get("required", [])
    for r in records:
        missing = [k for k in required if r.get(k) in (None, "")]
        if missing:
            ctx.quarantine(r, f"missing {', '.join(missing)}")
            continue
        yield r
