#!/usr/bin/env python3
"""Print a per-column profile of a CSV file (standard library only)."""
import argparse
import csv
import math
import sys
from collections import Counter


def classify(value):
    if value == "":
        return "empty"
    try:
        int(value)
        return "int"
    except ValueError:
        pass
    try:
        f = float(value)
        return "float" if math.isfinite(f) else "text"
    except ValueError:
        pass
    if len(value) == 10 and value[4] == "-" and value[7] == "-":
        return "date"
    return "text"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--rows", type=int, default=0, help="profile only the first N rows")
    ap.add_argument("--sample", type=int, default=3)
    ap.add_argument("--delimiter", default=None)
    args = ap.parse_args()

    with open(args.path, newline="", encoding="utf-8-sig") as fh:
        head = fh.read(64 * 1024)
        fh.seek(0)
        dialect = csv.Sniffer().sniff(head) if args.delimiter is None else None
        reader = csv.reader(fh, dialect) if dialect else csv.reader(fh, delimiter=args.delimiter)
        header = next(reader)
        kinds = [Counter() for _ in header]
        distinct = [Counter() for _ in header]
        numeric = [[math.inf, -math.inf] for _ in header]
        sample = []
        n = 0
        for row in reader:
            n += 1
            if len(sample) < args.sample:
                sample.append(row)
            for i, cell in enumerate(row[: len(header)]):
                k = classify(cell.strip())
                kinds[i][k] += 1
                if len(distinct[i]) < 10000:
                    distinct[i][cell] += 1
                if k in ("int", "float"):
                    v = float(cell)
                    numeric[i][0] = min(numeric[i][0], v)
                    numeric[i][1] = max(numeric[i][1], v)
            if args.rows and n >= args.rows:
                break

    print(f"rows profiled: {n}")
    for i, col in enumerate(header):
        print(f"\n== {col}")
        print("  kinds:   " + ", ".join(f"{k}={c}" for k, c in kinds[i].most_common()))
        print(f"  distinct: {len(distinct[i])}{'+' if len(distinct[i]) >= 10000 else ''}")
        if numeric[i][0] != math.inf:
            print(f"  range:   {numeric[i][0]} .. {numeric[i][1]}")
        top = ", ".join(repr(v) for v, _ in distinct[i].most_common(3))
        print(f"  top:     {top}")
    print("\nsample rows:")
    for row in sample:
        print("  " + " | ".join(row))


if __name__ == "__main__":
    sys.exit(main())
