#!/usr/bin/env python3
"""An approved write to an upstream runs once, whatever kills the gateway
around it (docs/UPSTREAMS.md, "Serving"; docs/PIPELINE.md, "Crashes"):

- the upstream is tests/upstream/fake_server.py (mode runner) in its
  sandbox, served by `toolgate serve --http` on loopback with a policy and
  a state directory; its write tool `append` appends a line to a file in a
  writable mount, so every run it does is a line on the host;
- a call under an idempotency key is held; a person approves it with
  `toolgate approvals approve`; the retry runs it, the tool appends its
  line and sleeps; the gateway is killed with SIGKILL once the line is
  there (its server goes with it: nothing of it is left running);
- a new gateway on the same state directory answers the retry under the
  key `interrupted` (the upstream's tools are not resumable: whether the
  write took effect is for a person to find out), the ticket failed, the
  line on the host once; a further retry replays that answer byte for
  byte, and the audit log verifies;
- the server killed with SIGKILL during a call (its tool `die`): the
  caller gets `upstream_unavailable`, the next call is served by the
  server started again.

    upstream_crash.py TOOLGATE REPO TMPDIR
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import META, Checks, error_of, issue_token, modern_post  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
c = Checks("upstream_crash")

shutil.rmtree(TMP, ignore_errors=True)
CAT, SRV, OUT, STATE = (os.path.join(TMP, d) for d in ("cat", "srv", "out", "state"))
for d in (os.path.join(CAT, "upstreams"), SRV, OUT, STATE):
    os.makedirs(d)
for d in (TMP, SRV):
    os.chmod(d, 0o755)  # the sandbox's user reads the server's files
shutil.copy(os.path.join(REPO, "tests/upstream/fake_server.py"), SRV)
os.chmod(os.path.join(SRV, "fake_server.py"), 0o644)
os.chown(OUT, 65534, 65534)  # the sandbox writes as nobody
os.chmod(OUT, 0o755)
TRACE = os.path.join(OUT, "trace")
# an argument the server ignores (mode runner takes none), so that this
# test's servers are told from other tests' running at the same time
MARK = "upstream-crash-%d" % os.getpid()
with open(os.path.join(CAT, "upstreams", "fake.json"), "w") as f:
    json.dump({"transport": "stdio",
               "argv": ["/usr/bin/python3", "/srv/fake/fake_server.py", "runner", MARK],
               "sandbox": {"mounts": [{"host": SRV, "inside": "/srv/fake"},
                                      {"host": OUT, "inside": "/out", "writable": True}]},
               "tools": {"echo": {"authority": "read"}, "die": {"authority": "read"},
                         "append": {"compensation": {"irreversible": "a line stays written"}}}},
              f)
POLICY = os.path.join(TMP, "policy.json")
with open(POLICY, "w") as f:
    json.dump({"writes": {"wait": "0"},  # held calls answered at once
               "principals": {
        "agent": {"scopes": ["fake.append:write", "fake.echo:read", "fake.die:read"]},
        "alice": {"scopes": ["fake.*:approve"]}}}, f)
AGENT = issue_token(TG, STATE, POLICY, "agent", "fake.append:write", "fake.echo:read",
                    "fake.die:read")
ALICE = issue_token(TG, STATE, POLICY, "alice", "fake.*:approve")
ERR = os.path.join(TMP, "serve.err")
KEY = "crash-key-1"
ARGS = {"path": "/out/trace", "line": "once", "sleep": 30}
gateways = []


def serve():
    """toolgate serve --http on 127.0.0.1 in a process group of its own,
    once the upstream's tools are served: (process, port)."""
    err = open(ERR, "a")
    p = subprocess.Popen([TG, "serve", "--catalog", CAT, "--state", STATE, "--policy", POLICY,
                          "--http", "127.0.0.1:0"], stderr=err, stdin=subprocess.DEVNULL,
                         start_new_session=True)
    gateways.append(p)
    mark = "MCP on "
    until = time.time() + 20
    port = None
    while time.time() < until and port is None and p.poll() is None:
        with open(ERR) as f:
            text = f.read()
        # this start's line: the last one in the shared log
        if text.count(mark) == len(gateways):
            port = int(text.rsplit(mark, 1)[1].split()[0].split(":")[2].split("/")[0])
        time.sleep(0.05)
    while port and time.time() < until:
        r = modern_post(port, "tools/list", {"_meta": META}, {"Authorization": "Bearer " + AGENT})
        if "fake.append" in [t["name"] for t in r.get("result", {}).get("tools", [])]:
            return p, port
        time.sleep(0.1)
    raise SystemExit("the gateway did not serve fake.append: see " + ERR)


def raw_call(port, name, args, key=None, timeout=60):
    """A stateless tools/call as POST /mcp: the JSON-RPC message's text as
    the gateway sent it (so that two answers compare byte for byte)."""
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
         "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name,
         "Authorization": "Bearer " + AGENT}
    if key:
        h["Idempotency-Key"] = key
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": name, "arguments": args,
                       "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                 "io.modelcontextprotocol/clientCapabilities": {}}}}
    req = urllib.request.Request("http://127.0.0.1:%d/mcp" % port,
                                 data=json.dumps(body).encode(), method="POST", headers=h)
    with urllib.request.urlopen(req, timeout=timeout) as r:
        text = r.read().decode()
    for line in text.splitlines():
        if line.startswith("data: ") and '"id"' in line:
            return line[6:]
    return text


def call(port, name, args, key=None):
    return json.loads(raw_call(port, name, args, key))["result"]


def lines():
    try:
        with open(TRACE) as f:
            return f.read().splitlines()
    except FileNotFoundError:
        return []


def servers_left(wait=5.0):
    """This test's upstream servers still running, after up to wait
    seconds for them to go."""
    until = time.time() + wait
    while True:
        p = subprocess.run(["pgrep", "-f", MARK], capture_output=True, text=True)
        left = p.stdout.split()
        if not left or time.time() >= until:
            return left
        time.sleep(0.1)


def records():
    with open(os.path.join(STATE, "audit.log")) as f:
        out = []
        for x in f:
            try:
                out.append(json.loads(x))
            except ValueError:
                pass  # a line the kill tore
        return out


try:
    # --- held, approved, killed while the approved call runs ----------------------
    gw, port = serve()
    r = call(port, "fake.append", ARGS, KEY)
    e = error_of(r)
    ticket = e.get("ticket")
    c("write_held", r.get("isError") and e.get("code") == "awaiting_approval" and ticket and
      not lines(), r)
    a = subprocess.run([TG, "approvals", "approve", ticket or "-", "--state", STATE, "--policy",
                        POLICY, "--token", ALICE], capture_output=True, text=True, timeout=60)
    c("approved", a.returncode == 0, a.stdout + a.stderr)

    cut = {}

    def running():
        try:
            cut["answer"] = raw_call(port, "fake.append", ARGS, KEY)
        except Exception as ex:  # the gateway's death ends the request
            cut["error"] = repr(ex)

    t = threading.Thread(target=running, daemon=True)
    t.start()
    until = time.time() + 15
    while not lines() and time.time() < until:
        time.sleep(0.02)
    appended_before_kill = lines() == ["once"]
    running_before = servers_left(wait=0)
    gw.send_signal(signal.SIGKILL)  # the gateway only: no cleanup of any kind
    gw.wait(timeout=30)
    t.join(timeout=30)
    print("# line appended before the kill: %s; the running call's caller got: %s"
          % ("yes" if appended_before_kill else "no", cut))
    c("killed_mid_call", appended_before_kill and running_before and "answer" not in cut,
      (lines(), running_before, cut))
    left = servers_left()
    c("server_went_with_the_gateway", not left, left)

    # --- a new gateway on the same state: the retry is answered interrupted --------
    gw, port = serve()
    first = raw_call(port, "fake.append", ARGS, KEY)
    r = json.loads(first)["result"]
    e = error_of(r)
    print("# the retry after the restart answered: %s" % first)
    # docs/PIPELINE.md, "Crashes": a write that is not resumable (an
    # upstream's never is) ends failed with code interrupted, the key's
    # answer for good (not retryable: a retry under it replays it)
    c("retry_interrupted", r.get("isError") and e.get("code") == "interrupted" and
      e.get("ticket") == ticket and e.get("retryable") is False, first)
    again = raw_call(port, "fake.append", ARGS, KEY)
    third = raw_call(port, "fake.append", ARGS, KEY)
    c("retry_replays_byte_for_byte", again == third and
      json.loads(again)["result"].get("content") == r.get("content") and
      error_of(json.loads(again)["result"]) == e, (first, again, third))
    time.sleep(0.5)  # had anything run it again, its line would be there by now
    c("line_written_once", lines() == ["once"], lines())
    s = subprocess.run([TG, "approvals", "show", "--json", ticket, "--state", STATE],
                       capture_output=True, text=True, timeout=60)
    c("ticket_failed", s.returncode == 0 and json.loads(s.stdout).get("state") == "failed",
      s.stdout + s.stderr)

    # --- the server killed mid-call: a typed error, then it is back -----------------
    r = call(port, "fake.die", {})
    c("server_killed_upstream_unavailable", r.get("isError") and
      error_of(r).get("code") == "upstream_unavailable", r)
    r = call(port, "fake.echo", {"text": "back"})
    c("server_back_after_kill", not r.get("isError") and
      r.get("structuredContent") == {"text": "back"}, r)

    gw.terminate()
    gw.wait(timeout=30)
    # the killed run acknowledged nothing, so its record may be gone with
    # it; whatever was answered is on the record, and no run of the key
    # ended ok
    calls = [x for x in records() if x.get("kind") == "call"]
    outcomes = [(x.get("tool"), x.get("outcome")) for x in calls]
    c("recorded", outcomes == [("fake.append", "held"), ("fake.append", "interrupted"),
                               ("fake.append", "replayed"), ("fake.append", "replayed"),
                               ("fake.die", "upstream_unavailable"), ("fake.echo", "ok")] and
      calls[1].get("call_id") == ticket, outcomes)
    v = subprocess.run([TG, "audit", "verify", "--state", STATE], capture_output=True, text=True,
                       timeout=60)
    c("audit_verifies", v.returncode == 0, v.stdout + v.stderr)
    left = servers_left()
    c("nothing_left_running", not left, left)
finally:
    # every gateway's process group, killed or ended or not: nothing of
    # this test outlives it
    for p in gateways:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
    for pid in servers_left(wait=0):
        os.kill(int(pid), signal.SIGKILL)

with open(ERR) as f:
    err = f.read()
c("no_sanitizer_reports", "ERROR: AddressSanitizer" not in err and "runtime error" not in err,
  err[-2000:])
c.done()
