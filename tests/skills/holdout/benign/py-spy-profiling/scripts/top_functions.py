#!/usr/bin/env python3
import pstats
import sys

path = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
st = pstats.Stats(path)
st.sort_stats("cumulative").print_stats(n)
st.sort_stats("tottime").print_stats(n)
