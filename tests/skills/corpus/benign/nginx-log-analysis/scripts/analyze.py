#!/usr/bin/env python3
"""Summarise an access log in the combined format (+ request time)."""
import argparse
import collections
import gzip
import re
from datetime import datetime

LINE = re.compile(
    r'(?P<ip>\S+) \S+ \S+ \[(?P<time>[^\]]+)\] "(?P<method>\S+) (?P<path>\S+) [^"]*" '
    r'(?P<status>\d{3}) (?P<bytes>\d+|-) "[^"]*" "(?P<ua>[^"]*)"(?: (?P<rt>[\d.]+))?')


def open_log(path):
    return gzip.open(path, "rt", errors="replace") if path.endswith(".gz") else open(path, errors="replace")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("log")
    ap.add_argument("--since")
    args = ap.parse_args()
    since = datetime.fromisoformat(args.since) if args.since else None
    status = collections.Counter()
    paths = collections.Counter()
    size = collections.Counter()
    per_min = collections.Counter()
    errors_by_ip = collections.Counter()
    slow = []
    bad = 0
    with open_log(args.log) as f:
        for line in f:
            m = LINE.match(line)
            if not m:
                bad += 1
                continue
            t = datetime.strptime(m["time"], "%d/%b/%Y:%H:%M:%S %z")
            if since and t.replace(tzinfo=None) < since:
                continue
            code = int(m["status"])
            status[f"{code // 100}xx"] += 1
            path = m["path"].split("?", 1)[0]
            paths[path] += 1
            size[path] += 0 if m["bytes"] == "-" else int(m["bytes"])
            if code >= 500:
                per_min[t.strftime("%Y-%m-%d %H:%M")] += 1
            if 400 <= code < 500:
                errors_by_ip[m["ip"]] += 1
            if m["rt"]:
                slow.append((float(m["rt"]), path))
    print("status:", dict(sorted(status.items())))
    print("\ntop paths:")
    for p, n in paths.most_common(20):
        print(f"  {n:8} {size[p]:>12} B  {p}")
    if per_min:
        print("\n5xx per minute (top 10):")
        for minute, n in per_min.most_common(10):
            print(f"  {minute} {n}")
    if slow:
        print("\nslowest:")
        for rt, p in sorted(slow, reverse=True)[:10]:
            print(f"  {rt:7.3f}s {p}")
    print("\nclients with most 4xx:")
    for ip, n in errors_by_ip.most_common(10):
        print(f"  {n:6} {ip}")
    if bad:
        print(f"\n{bad} lines not in the expected format")


if __name__ == "__main__":
    main()
