"""python3 -m scripts.pipeline.run CONFIG --date YYYY-MM-DD"""
import argparse
import importlib
import json
import pathlib

import yaml  # PyYAML==6.0.1

from .context import Context
from .stages import STAGES


def counted(records, ctx, stage):
    for r in records:
        ctx.count(stage)
        yield r


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("config")
    ap.add_argument("--date", required=True)
    a = ap.parse_args()
    cfg = yaml.safe_load(open(a.config, encoding="utf-8"))
    ctx = Context(cfg, a.date)
    mods = {s: importlib.import_module(f".stages.{s}", __package__) for s in STAGES}
    records = counted(mods["extract"].run(cfg, ctx), ctx, "extract")
    for s in STAGES[1:-1]:
        records = counted(mods[s].run(records, cfg, ctx), ctx, s)
    mods["load"].run(records, cfg, ctx)
    ctx.close()
    out = pathlib.Path(cfg.get("reports_dir", "reports"))
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{a.date}.json").write_text(json.dumps(dict(ctx.counts), indent=2))
    ctx.log(f"done: {dict(ctx.counts)}")


if __name__ == "__main__":
    main()
