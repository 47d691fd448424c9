#!/usr/bin/env python3
import argparse
import csv
import hashlib
import hmac
import os
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src")
    ap.add_argument("--columns", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    key_file = os.environ.get("PSEUDO_KEY_FILE")
    if not key_file:
        sys.exit("set PSEUDO_KEY_FILE to a file holding at least 32 random bytes")
    key = open(key_file, "rb").read()
    if len(key) < 32:
        sys.exit("key too short")
    cols = set(a.columns.split(","))

    def pseudo(v):
        if v == "":
            return v
        return hmac.new(key, v.strip().lower().encode(), hashlib.sha256).hexdigest()[:20]

    with open(a.src, newline="", encoding="utf-8") as fi, open(a.out, "w", newline="", encoding="utf-8") as fo:
        r = csv.DictReader(fi)
        missing = cols - set(r.fieldnames or [])
        if missing:
            sys.exit(f"no such columns: {', '.join(sorted(missing))}")
        w = csv.DictWriter(fo, r.fieldnames)
        w.writeheader()
        for row in r:
            w.writerow({k: pseudo(v) if k in cols else v for k, v in row.items()})


if __name__ == "__main__":
    main()
