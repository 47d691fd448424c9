"""Read raw CSV/JSONL files from the landing folder."""
import csv
import json
import pathlib

def run(cfg, ctx):
    src = pathlib.Path(cfg["landing_dir"])
    for f in sorted(src.glob("*.csv")) + sorted(src.glob("*.jsonl")):
        ctx.log(f"reading {f.name}")
        yield from (read_csv(f) if f.suffix == ".csv" else read_jsonl(f))


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        yield from csv.DictReader(fh)


def read_jsonl(path):
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                yield json.loads(line)
