#!/usr/bin/env python3
import sys


def lum(hex_):
    h = hex_.lstrip("#")
    rgb = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


a, b = sorted((lum(sys.argv[1]), lum(sys.argv[2])), reverse=True)
r = (a + 0.05) / (b + 0.05)
verdict = "AAA" if r >= 7 else "AA" if r >= 4.5 else "AA large only" if r >= 3 else "fails"
print(f"{r:.2f}:1  {verdict}")
