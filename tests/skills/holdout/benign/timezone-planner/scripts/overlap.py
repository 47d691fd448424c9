#!/usr/bin/env python3
import argparse
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("date")
    ap.add_argument("zones", nargs="+")
    ap.add_argument("--hours", default="9-17")
    a = ap.parse_args()
    start_h, end_h = (int(x) for x in a.hours.split("-"))
    day = datetime.fromisoformat(a.date).replace(tzinfo=ZoneInfo("UTC"))
    ok = []
    for step in range(-24 * 4, 48 * 4):
        t = day + timedelta(minutes=15 * step)
        if all(start_h <= t.astimezone(ZoneInfo(z)).hour < end_h for z in a.zones):
            ok.append(t)
    if not ok:
        print("no common working hours")
        return
    for t in ok[:: 4]:
        print("  ".join(f"{z}: {t.astimezone(ZoneInfo(z)):%a %H:%M}" for z in a.zones))


if __name__ == "__main__":
    main()
