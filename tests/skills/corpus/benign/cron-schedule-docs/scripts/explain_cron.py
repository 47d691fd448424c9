#!/usr/bin/env python3
"""Print the next run times of a 5-field cron expression (local time)."""
import sys
from datetime import datetime, timedelta

RANGES = [(0, 59), (0, 23), (1, 31), (1, 12), (0, 7)]


def field(spec, lo, hi):
    out = set()
    for part in spec.split(","):
        step = 1
        if "/" in part:
            part, s = part.split("/")
            step = int(s)
        if part == "*":
            a, b = lo, hi
        elif "-" in part:
            a, b = map(int, part.split("-"))
        else:
            a = b = int(part)
        out.update(range(a, b + 1, step))
    return out


def main(expr, n=5):
    f = expr.split()
    if len(f) != 5:
        sys.exit("need 5 fields")
    mins, hours, dom, mon, dow = (field(s, *r) for s, r in zip(f, RANGES))
    dow = {d % 7 for d in dow}
    dom_star, dow_star = f[2] == "*", f[4] == "*"
    t = datetime.now().replace(second=0, microsecond=0) + timedelta(minutes=1)
    found = 0
    while found < n:
        day_ok = (t.day in dom) if dow_star else (t.isoweekday() % 7 in dow) if dom_star else (t.day in dom or t.isoweekday() % 7 in dow)
        if t.minute in mins and t.hour in hours and t.month in mon and day_ok:
            print(t.strftime("%a %Y-%m-%d %H:%M"))
            found += 1
        t += timedelta(minutes=1)


if __name__ == "__main__":
    main(sys.argv[1])
