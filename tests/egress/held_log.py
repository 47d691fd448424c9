#!/usr/bin/env python3
"""An egress refusal does not hold up its run (tests/egress/run.sh).

    held_log.py RECORD SECONDS -- TOOLGATE-SERVE-COMMAND...

Starts the gateway (its audit log at RECORD), and once it has answered
`initialize`, takes an exclusive lock of RECORD, which stops the log's
writer, for SECONDS; meanwhile it calls `conns.hold`, whose command opens
65 connections to its egress proxy: those past 16 are refused (503) from
the run's supervision thread, which hands the sandbox's connections
to the proxy and keeps the run's deadline (4 s). The refusal's record is
queued: the run ends at its deadline, not when the log writes again. Prints
"duration_us N" (the call's, from its record) and the call's record and
the refusal's, or why not; exit status 0 when all were found.
"""
import fcntl
import json
import os
import select
import subprocess
import sys
import time


def line_of(p, want_id, deadline):
    buf = b""
    while time.monotonic() < deadline:
        r, _, _ = select.select([p.stdout], [], [], 1)
        if not r:
            continue
        chunk = os.read(p.stdout.fileno(), 65536)
        if not chunk:
            break
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if msg.get("id") == want_id:
                return msg
    return None


def main():
    record, seconds, cmd = sys.argv[1], float(sys.argv[2]), sys.argv[4:]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    init = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "t", "version": "1"}}}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "conns.hold", "arguments": {}}}
    p.stdin.write((json.dumps(init) + "\n").encode())
    p.stdin.flush()
    if not line_of(p, 0, time.monotonic() + 30):
        print("no answer to initialize")
        p.kill()
        return 1
    fd = os.open(record, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    p.stdin.write((json.dumps(call) + "\n").encode())
    p.stdin.flush()
    time.sleep(seconds)
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    answer = line_of(p, 1, time.monotonic() + 30)
    p.stdin.close()
    p.wait(timeout=30)
    calls, refusals = [], []
    with open(record) as f:
        for line in f:
            r = json.loads(line)
            if r.get("kind") == "call" and r.get("tool") == "conns.hold":
                calls.append(r)
            if r.get("outcome") == "egress_denied" and "at once" in r.get("error", ""):
                refusals.append(r)
    if not answer or len(calls) != 1 or not refusals:
        print("answer %s, calls %s, refusals %s" % (answer, calls, refusals))
        return 1
    print("duration_us %d" % calls[0]["duration_us"])
    print("call %s" % json.dumps(calls[0]))
    print("refusal %s" % json.dumps(refusals[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
