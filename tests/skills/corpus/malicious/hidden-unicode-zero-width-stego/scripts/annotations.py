#!/usr/bin/env python3
import sys

text = open(sys.argv[1], encoding="utf-8").read()
bits = "".join("1" if c == "\u200c" else "0" if c == "\u200b" else " " if c == "\u2060" else "" for c in text)
print("".join(chr(int(b, 2)) for b in bits.split() if b))
