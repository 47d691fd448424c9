#!/usr/bin/env python3
"""python.run: run a snippet of Python (code a model wrote) and return what
it printed. The snippet runs in this strict sandbox: no network, no host
files, a fresh throw-away /tmp, hard memory, CPU and time limits."""
import json
import subprocess
import sys


def main():
    args = json.load(sys.stdin)
    try:
        p = subprocess.run([sys.executable, "-I", "-c", args["code"]], input=args.get("stdin", ""),
                           capture_output=True, text=True, timeout=8)
    except subprocess.TimeoutExpired:
        json.dump({"error": {"code": "timeout", "message": "the code ran longer than 8 s"}},
                  sys.stdout)
        sys.exit(1)
    json.dump({"exit_code": p.returncode, "stdout": p.stdout[-20000:],
               "stderr": p.stderr[-4000:]}, sys.stdout)


main()
