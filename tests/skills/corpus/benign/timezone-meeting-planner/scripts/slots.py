#!/usr/bin/env python3
import sys
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

START, END = time(8), time(18)


def main(day, zones):
    d = date.fromisoformat(day)
    tzs = [ZoneInfo(z) for z in zones]
    t = datetime.combine(d, time(0), tzinfo=timezone.utc) - timedelta(hours=12)
    stop = t + timedelta(hours=48)
    rows = []
    while t < stop:
        local = [t.astimezone(z) for z in tzs]
        outside = [z for z, l in zip(zones, local) if not (START <= l.time() and (l + timedelta(minutes=30)).time() <= END and l.date() == d)]
        cost = sum(abs(l.hour + l.minute / 60 - 13) for l in local)
        rows.append((len(outside), cost, t, local, outside))
        t += timedelta(minutes=30)
    rows.sort(key=lambda r: (r[0], r[1]))
    for n_out, _, t, local, outside in rows[:8]:
        cells = "  ".join(f"{z.split('/')[-1]} {l:%a %H:%M}" for z, l in zip(zones, local))
        note = "" if not outside else "  (outside hours: " + ", ".join(outside) + ")"
        print(f"{t:%H:%M} UTC  {cells}{note}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
