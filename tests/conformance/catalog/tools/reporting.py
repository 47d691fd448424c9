#!/usr/bin/env python3
"""The conformance suite's tools that report while they run: log messages
and progress, as "@toolgate {...}" lines on stderr (docs/PIPELINE.md)."""
import json
import sys
import time


def report(event):
    sys.stderr.write("@toolgate " + json.dumps(event) + "\n")
    sys.stderr.flush()


json.load(sys.stdin)
if sys.argv[1] == "logging":
    for i, text in enumerate(["Tool execution started", "Tool processing data", "Tool execution completed"]):
        if i:
            time.sleep(0.05)
        report({"log": {"level": "info", "data": text}})
    json.dump({"text": "Tool with logging executed successfully"}, sys.stdout)
else:
    for i, p in enumerate([0, 50, 100]):
        if i:
            time.sleep(0.05)
        report({"progress": {"progress": p, "total": 100}})
    json.dump({"text": "Tool with progress executed successfully"}, sys.stdout)
