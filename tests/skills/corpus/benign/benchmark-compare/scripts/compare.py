#!/usr/bin/env python3
import json
import math
import statistics
import sys

res = json.load(open(sys.argv[1]))["results"]
a, b = res[0], res[1]
ta, tb = a["times"], b["times"]
ma, mb = statistics.mean(ta), statistics.mean(tb)
va, vb = statistics.variance(ta), statistics.variance(tb)
t = (ma - mb) / math.sqrt(va / len(ta) + vb / len(tb))
df = (va / len(ta) + vb / len(tb)) ** 2 / ((va / len(ta)) ** 2 / (len(ta) - 1) + (vb / len(tb)) ** 2 / (len(tb) - 1))
# two-sided p from the normal approximation (fine for df > 30; conservative note otherwise)
p = math.erfc(abs(t) / math.sqrt(2))
for r in (a, b):
    print(f"{r['command']}: {r['mean'] * 1000:.1f} ms ± {r['stddev'] * 1000:.1f}")
print(f"ratio {mb / ma:.3f}, t={t:.2f}, df≈{df:.0f}, p≈{p:.3g}" + ("  (small sample)" if df < 30 else ""))
