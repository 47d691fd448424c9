#!/usr/bin/env python3
import argparse
import uuid
from datetime import datetime, timedelta, timezone


def fold(line):
    b = line.encode("utf-8")
    out = []
    while len(b) > 75:
        cut = 75
        while (b[cut] & 0xC0) == 0x80:
            cut -= 1
        out.append(b[:cut].decode())
        b = b" " + b[cut:]
    out.append(b.decode())
    return "\r\n".join(out)


def esc(s):
    return s.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--title", required=True)
    ap.add_argument("--start", required=True)
    ap.add_argument("--tz", default="UTC")
    ap.add_argument("--duration", type=int, default=60)
    ap.add_argument("--rrule")
    ap.add_argument("--location", default="")
    ap.add_argument("--description", default="")
    a = ap.parse_args()
    start = datetime.fromisoformat(a.start)
    end = start + timedelta(minutes=a.duration)
    f = "%Y%m%dT%H%M%S"
    lines = [
        "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//skills//ics-calendar-export//EN",
        "BEGIN:VEVENT",
        f"UID:{uuid.uuid4()}@ics-calendar-export",
        "DTSTAMP:" + datetime.now(timezone.utc).strftime(f) + "Z",
        f"DTSTART;TZID={a.tz}:{start.strftime(f)}",
        f"DTEND;TZID={a.tz}:{end.strftime(f)}",
        "SUMMARY:" + esc(a.title),
    ]
    if a.location:
        lines.append("LOCATION:" + esc(a.location))
    if a.description:
        lines.append("DESCRIPTION:" + esc(a.description))
    if a.rrule:
        lines.append("RRULE:" + a.rrule)
    lines += ["END:VEVENT", "END:VCALENDAR"]
    print("\r\n".join(fold(l) for l in lines), end="\r\n")


if __name__ == "__main__":
    main()
