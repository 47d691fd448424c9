#!/usr/bin/env python3
"""One gateway a state directory (docs/CLI.md, "One gateway a state
directory"):

- a second `toolgate serve --http` on the --state a running one holds is
  refused at start, exit 3, naming the directory and the pid that holds
  it, and writes nothing there: the audit log is byte for byte as it was;
- stdio gateways (a host starts one a session) share the directory with
  it and with each other: two answer at once beside it;
- the other commands (token, approvals, audit) work beside the gateway;
- the lock, not its file, decides: the gateway killed with SIGKILL leaves
  serve.lock behind, and a new one starts on the directory at once.

    serve_lock.py TOOLGATE REPO TMPDIR
"""
import json
import os
import signal
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, example_gateway, issue_token, start_http  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
CAT, WS = example_gateway(REPO, TMP)
STATE, POLICY = os.path.join(TMP, "state"), os.path.join(TMP, "policy.json")
LOG, LOCK = os.path.join(STATE, "audit.log"), os.path.join(STATE, "serve.lock")
c = Checks("serve_lock")

with open(POLICY, "w") as f:
    json.dump({"principals": {"agent": {"scopes": ["fs.*:read"]},
                              "ops": {"scopes": ["*:approve"]}}}, f)
issue_token(TG, STATE, POLICY, "agent", "fs.*:read")
GATEWAY = [TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE, "--policy", POLICY]
ERRS = [os.path.join(TMP, n) for n in ("first.err", "second.err", "third.err")]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def cli(*argv):
    return subprocess.run([TG, *argv], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=60)


first, _ = start_http(GATEWAY, ERRS[0])
try:
    before = read(LOG)
    # a second one that serves HTTP: refused before it writes
    p = subprocess.run(GATEWAY + ["--http", "127.0.0.1:0"], stdin=subprocess.DEVNULL,
                       capture_output=True, text=True, timeout=60)
    c("second_http_refused", p.returncode == 3 and
      "--state %s is in use by another gateway that serves HTTP (pid %d holds %s)"
      % (STATE, first.pid, LOCK) in p.stderr and "MCP on" not in p.stderr,
      "rc=%d %s" % (p.returncode, p.stderr))
    c("second_writes_nothing", read(LOG) == before, "the audit log changed")
    c("lock_names_its_holder", read(LOCK).decode().strip() == str(first.pid), read(LOCK))

    # stdio sessions of hosts beside it: two at once
    INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}) + "\n"
    sessions = [subprocess.Popen(GATEWAY + ["--stdio", "--principal", "agent"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=open(os.path.join(TMP, "s%d.err" % i), "w"), text=True)
                for i in range(2)]
    answers = []
    for s in sessions:
        s.stdin.write(INIT)
        s.stdin.flush()
        answers.append(s.stdout.readline())
    for s in sessions:
        s.stdin.close()
        s.wait(timeout=60)
    c("stdio_sessions_beside", all('"protocolVersion"' in a for a in answers), answers)

    # the commands beside a gateway still work on its state directory
    tok = cli("token", "issue", "--state", STATE, "--policy", POLICY, "--principal", "ops",
              "--scope", "*:approve")
    lst = cli("approvals", "list", "--state", STATE)
    ver = cli("audit", "verify", "--state", STATE)
    c("other_commands_beside", tok.returncode == 0 and tok.stdout.strip() and
      lst.returncode == 0 and ver.returncode == 0,
      [tok.returncode, tok.stderr, lst.returncode, lst.stderr, ver.returncode, ver.stdout])
finally:
    # killed: no chance to tidy; its serve.lock stays, its lock goes
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=60)

c("killed_leaves_the_file", os.path.exists(LOCK), os.listdir(STATE))
try:
    third, _ = start_http(GATEWAY, ERRS[2])
except SystemExit as e:
    third = None
    c("new_gateway_after_kill", False, str(e))
if third:
    c("new_gateway_after_kill", read(LOCK).decode().strip() == str(third.pid), read(LOCK))
    third.terminate()
    c("stops_cleanly", third.wait(timeout=60) == 0, read(ERRS[2])[-600:])

err = ""
for path in ERRS + [os.path.join(TMP, "s%d.err" % i) for i in range(2)]:
    if os.path.exists(path):
        err += read(path).decode(errors="replace")
c("no_sanitizer_reports", "ERROR: AddressSanitizer" not in err and "runtime error" not in err,
  err[-2000:])
c.done()
