#!/usr/bin/env python3
import sys


def lum(hexcolor):
    h = hexcolor.lstrip("#")
    if len(h) == 3:
        h = "".join(c * 2 for c in h)
    rgb = [int(h[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


a, b = sorted((lum(sys.argv[1]), lum(sys.argv[2])), reverse=True)
ratio = (a + 0.05) / (b + 0.05)
print(f"{ratio:.2f}:1", "AA" if ratio >= 4.5 else "AA-large" if ratio >= 3 else "fail")
