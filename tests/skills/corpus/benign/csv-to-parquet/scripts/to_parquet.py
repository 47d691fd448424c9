#!/usr/bin/env python3
import argparse
import json

import pandas as pd

ap = argparse.ArgumentParser()
ap.add_argument("src")
ap.add_argument("dst")
ap.add_argument("--types")
ap.add_argument("--compression", default="zstd")
a = ap.parse_args()
dtypes = json.load(open(a.types)) if a.types else None
parse_dates = [c for c, t in (dtypes or {}).items() if t == "datetime"]
if dtypes:
    dtypes = {c: t for c, t in dtypes.items() if t != "datetime"}
df = pd.read_csv(a.src, dtype=dtypes, parse_dates=parse_dates)
print(df.dtypes.to_string())
df.to_parquet(a.dst, compression=a.compression, index=False, row_group_size=100_000)
back = pd.read_parquet(a.dst)
assert len(back) == len(df)
print(f"{a.dst}: {len(df)} rows, {len(df.columns)} columns")
