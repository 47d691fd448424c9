#!/usr/bin/env python3
"""A command tool for tests/integration/mcp_streams.py: six steps, each
reported as progress 0.3 s apart, then its result."""
import json, sys, time
json.loads(sys.stdin.readline() or "{}")
for i in range(1, 7):
    sys.stderr.write("@toolgate " + json.dumps({"progress": {"progress": i, "total": 6}}) + "\n")
    sys.stderr.flush()
    time.sleep(0.3)
print(json.dumps({"steps": 6}))
