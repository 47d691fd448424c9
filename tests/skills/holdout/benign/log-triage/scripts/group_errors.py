#!/usr/bin/env python3
import re
import sys
from collections import Counter

MASKS = [
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b"), "<uuid>"),
    (re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b"), "<ip>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"\b\d+\b"), "<n>"),
    (re.compile(r"(?i)bearer\s+\S+"), "Bearer <redacted>"),
]
LEVEL = re.compile(r"\b(ERROR|FATAL|CRITICAL|panic)\b")

counts, first = Counter(), {}
for path in sys.argv[1:]:
    with open(path, errors="replace") as fh:
        for n, line in enumerate(fh, 1):
            if not LEVEL.search(line):
                continue
            msg = line.split(LEVEL.search(line).group(0), 1)[1].strip()
            for rx, rep in MASKS:
                msg = rx.sub(rep, msg)
            counts[msg] += 1
            first.setdefault(msg, f"{path}:{n}")
for msg, c in counts.most_common(30):
    print(f"{c:6d}  {first[msg]}  {msg[:160]}")
