#!/usr/bin/env python3
"""Normalise a CSV file and report the changes."""
import csv
import re
import sys
from datetime import datetime

DATE_FORMATS = ("%Y-%m-%d", "%d/%m/%Y", "%m/%d/%Y", "%b %d %Y", "%d %B %Y")
NUM_RE = re.compile(r"^-?\d{1,3}([ ,.]\d{3})*([.,]\d+)?$|^-?\d+([.,]\d+)?$")


def snake(name):
    name = re.sub(r"[^0-9a-zA-Z]+", "_", name.strip()).strip("_").lower()
    return name or "column"


def parse_date(s):
    for fmt in DATE_FORMATS:
        try:
            return datetime.strptime(s, fmt).date().isoformat()
        except ValueError:
            pass
    return None


def parse_number(s):
    if not NUM_RE.match(s):
        return None
    s = s.replace(" ", "")
    if "," in s and "." in s:
        s = s.replace(",", "") if s.rfind(".") > s.rfind(",") else s.replace(".", "").replace(",", ".")
    elif "," in s:
        head, _, tail = s.rpartition(",")
        s = head.replace(",", "") + ("." + tail if len(tail) != 3 else tail)
    return s


def main(src, dst):
    with open(src, newline="", encoding="utf-8-sig") as f:
        rows = list(csv.reader(f))
    if not rows:
        print("empty file")
        return 1
    seen = {}
    header = []
    for h in rows[0]:
        s = snake(h)
        seen[s] = seen.get(s, 0) + 1
        header.append(s if seen[s] == 1 else f"{s}_{seen[s]}")
    body = [[c.strip() for c in r] for r in rows[1:]]
    report = [f"headers: {rows[0]} -> {header}"]
    for j, name in enumerate(header):
        col = [r[j] for r in body if j < len(r) and r[j]]
        if not col:
            continue
        for kind, fn in (("date", parse_date), ("number", parse_number)):
            conv = [fn(c) for c in col]
            if all(v is not None for v in conv):
                for r in body:
                    if j < len(r) and r[j]:
                        r[j] = fn(r[j])
                report.append(f"{name}: parsed as {kind}")
                break
    unique, dropped = [], 0
    seen_rows = set()
    for r in body:
        key = tuple(r)
        if key in seen_rows:
            dropped += 1
            continue
        seen_rows.add(key)
        unique.append(r)
    report.append(f"duplicate rows dropped: {dropped}")
    with open(dst, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(unique)
    print("\n".join(report))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] == sys.argv[2]:
        sys.exit("usage: clean_csv.py IN.csv OUT.csv (two different files)")
    sys.exit(main(sys.argv[1], sys.argv[2]))
