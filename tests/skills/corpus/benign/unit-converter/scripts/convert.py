#!/usr/bin/env python3
import sys
from fractions import Fraction as F

FACTORS = {  # to the base unit of each dimension
    "length": {"m": F(1), "km": F(1000), "cm": F(1, 100), "mm": F(1, 1000),
               "in": F(254, 10000), "ft": F(3048, 10000), "yd": F(9144, 10000),
               "mi": F(1609344, 1000), "nmi": F(1852)},
    "mass": {"kg": F(1), "g": F(1, 1000), "mg": F(1, 10**6), "lb": F(45359237, 10**8),
             "oz": F(45359237, 16 * 10**8), "t": F(1000)},
    "volume": {"l": F(1), "ml": F(1, 1000), "m3": F(1000), "gal": F(3785411784, 10**9),
               "qt": F(946352946, 10**9), "cup": F(2365882365, 10**10)},
    "data": {"B": F(1), "kB": F(1000), "MB": F(10**6), "GB": F(10**9), "KiB": F(1024),
             "MiB": F(1024**2), "GiB": F(1024**3), "b": F(1, 8), "Mb": F(10**6, 8)},
    "time": {"s": F(1), "min": F(60), "h": F(3600), "d": F(86400), "wk": F(604800)},
    "speed": {"m/s": F(1), "km/h": F(1000, 3600), "mph": F(1609344, 3600000), "kn": F(1852, 3600)},
}
TEMPS = {"C", "F", "K"}


def temp(v, a, b):
    c = {"C": v, "F": (v - 32) * 5 / 9, "K": v - 273.15}[a]
    return {"C": c, "F": c * 9 / 5 + 32, "K": c + 273.15}[b]


def convert(v, a, b):
    if a in TEMPS and b in TEMPS:
        return temp(v, a, b)
    for table in FACTORS.values():
        if a in table and b in table:
            return float(F(str(v)) * table[a] / table[b])
    raise SystemExit(f"cannot convert {a} to {b}")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: convert.py VALUE FROM TO")
    v = float(sys.argv[1])
    print(f"{convert(v, sys.argv[2], sys.argv[3]):.6g} {sys.argv[3]}")
