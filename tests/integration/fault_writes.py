"""Fault injection on the write path: the gateway is killed with SIGKILL at
random moments while clients drive N write calls (sql.execute, one INSERT
per idempotency key, through the sandbox) to their end, retrying under the
same keys through every crash and restart, and a person approves each
held call from the CLI. Then the target database is counted.

    fault_writes.py TOOLGATE REPO TMPDIR [N]

Checked: every key's row is in the database exactly once (no lost write,
no double write), every ticket ended executed (no approval lost, none
left approved or pending), no key is left running; then 100 concurrent
retries of one approved key run it once. The gateway serves HTTP on
loopback only; every restart listens on the same port.
"""
import json
import os
import random
import shutil
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from mcptest import Checks

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
N = int(sys.argv[4]) if len(sys.argv) > 4 else 1000
WORKERS = 8
check = Checks("fault")
CAT, DATA, STATE = (os.path.join(TMP, d) for d in ("catalog", "data", "state"))
POLICY = os.path.join(TMP, "policy.json")
DB = os.path.join(DATA, "shop.db")
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "fault", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}


def cli(*argv):
    return subprocess.run([TG] + list(argv), capture_output=True, text=True, timeout=60)


def setup():
    shutil.rmtree(TMP, ignore_errors=True)
    shutil.copytree(os.path.join(REPO, "examples/catalog"), CAT)
    os.makedirs(DATA)
    db = sqlite3.connect(DB)
    with open(os.path.join(REPO, "examples/data/shop.sql")) as f:
        db.executescript(f.read())
    db.execute("CREATE TABLE ledger (id INTEGER PRIMARY KEY, k TEXT NOT NULL)")
    db.commit()
    db.close()
    for n in (DATA, DB):
        os.chown(n, 65534, 65534)  # the sandbox writes as nobody
    with open(POLICY, "w") as f:
        json.dump({"principals": {"agent": {"scopes": ["sql.execute:write"]},
                                  "alice": {"scopes": ["sql.*:approve"]}}}, f)
    agent = cli("token", "issue", "--state", STATE, "--policy", POLICY, "--principal", "agent",
                "--scope", "sql.execute:write", "--ttl", "1h").stdout.strip()
    alice = cli("token", "issue", "--state", STATE, "--policy", POLICY, "--principal", "alice",
                "--scope", "sql.*:approve", "--ttl", "1h").stdout.strip()
    return agent, alice


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Gateway:
    """toolgate serve --http on one port, killed and started again."""

    def __init__(self, port):
        self.port, self.p, self.kills = port, None, 0
        self.err = open(os.path.join(TMP, "serve.err"), "a")

    def start(self):
        for _ in range(100):
            self.p = subprocess.Popen([TG, "serve", "--catalog", CAT, "--state", STATE,
                                       "--policy", POLICY, "--http", f"127.0.0.1:{self.port}",
                                       "--record", os.path.join(TMP, "record")],
                                      stderr=self.err)
            for _ in range(100):
                if self.p.poll() is not None:
                    break  # the port is not free yet: again
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                    return
                except OSError:
                    time.sleep(0.02)
            self.p.kill()
            self.p.wait()
            time.sleep(0.1)
        raise SystemExit("the gateway does not start again")

    def kill(self):
        self.p.kill()  # SIGKILL: no cleanup of any kind
        self.p.wait()
        self.kills += 1


def post(port, token, key, args):
    msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": "sql.execute", "arguments": args,
                      "_meta": dict(META, **{"dev.toolgate/idempotencyKey": key})}}
    req = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp", data=json.dumps(msg).encode(), method="POST",
        headers={"Content-Type": "application/json",
                 "Accept": "application/json, text/event-stream",
                 "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
                 "Mcp-Name": "sql.execute", "Authorization": "Bearer " + token})
    with urllib.request.urlopen(req, timeout=60) as resp:
        body = resp.read().decode()
    for line in body.splitlines():
        if line.startswith("data: ") and '"id"' in line:
            return json.loads(line[6:])["result"]
    return json.loads(body)["result"]


def drive(port, agent, alice, key, stats, deadline):
    """One key's call to its end, through crashes: its final result."""
    args = {"sql": "INSERT INTO ledger (k) VALUES (?)", "params": [key]}
    while time.time() < deadline:
        try:
            r = post(port, agent, key, args)
        except (OSError, urllib.error.URLError, ValueError, KeyError):
            stats["transport_errors"] += 1
            time.sleep(0.05)
            continue
        e = (r.get("_meta") or {}).get("dev.toolgate/error") or {}
        if not r.get("isError"):
            return r
        if e.get("code") == "awaiting_approval":
            a = cli("approvals", "approve", e["ticket"], "--state", STATE, "--policy", POLICY,
                    "--token", alice)
            if a.returncode != 0 and "not pending" not in a.stderr:
                stats["approve_errors"] += 1
            stats["approvals"] += 1
        elif e.get("code") == "running":
            stats["running"] += 1
            time.sleep(0.05)
        else:
            return r  # a failure the test reports
    return None


agent, alice = setup()
gw = Gateway(free_port())
gw.start()
keys = [f"key-{i:04d}" for i in range(N)]
results, stats, lock = {}, {"transport_errors": 0, "approvals": 0, "running": 0,
                            "approve_errors": 0}, threading.Lock()
deadline = time.time() + 900
todo = list(keys)


def worker():
    while True:
        with lock:
            if not todo:
                return
            key = todo.pop()
        local = {"transport_errors": 0, "approvals": 0, "running": 0, "approve_errors": 0}
        r = drive(gw.port, agent, alice, key, local, deadline)
        with lock:
            results[key] = r
            for k, v in local.items():
                stats[k] += v


threads = [threading.Thread(target=worker) for _ in range(WORKERS)]
for t in threads:
    t.start()
rng = random.Random(int(os.environ.get("FAULT_SEED", time.time())))
while any(t.is_alive() for t in threads):
    time.sleep(rng.uniform(0.05, 0.6))
    if any(t.is_alive() for t in threads):
        gw.kill()
        gw.start()
for t in threads:
    t.join()

failed = {k: r for k, r in results.items() if r is None or r.get("isError")}
counts = dict(sqlite3.connect(DB).execute("SELECT k, count(*) FROM ledger GROUP BY k").fetchall())
once = sum(1 for k in keys if counts.get(k) == 1)
extra = {k: c for k, c in counts.items() if c != 1 or k not in keys}
records = [json.loads(x) for x in open(os.path.join(TMP, "record")) if x.endswith("}\n")]
resumed = sum(1 for r in records if r.get("resumed"))
print(f"# {N} write calls, {gw.kills} kills -9, {stats['approvals']} approvals, "
      f"{stats['transport_errors']} transport errors retried, {stats['running']} 'running' "
      f"answers retried, {resumed} calls resumed after a kill; {once} keys with exactly one row")
check("every_call_ends", not failed, json.dumps(dict(list(failed.items())[:3])))
check("exactly_one_row_per_key", once == N and not extra,
      f"{once} of {N} once; others {dict(list(extra.items())[:5])}; missing "
      f"{[k for k in keys if k not in counts][:5]}")
check("kills_happened", gw.kills >= 10, f"{gw.kills} kills")
tickets = cli("approvals", "list", "--all", "--state", STATE).stdout
states = [line.split()[1] for line in tickets.splitlines() if len(line.split()) >= 4]
check("no_approval_lost", states.count("executed") == N and len(states) == N,
      f"{len(states)} tickets: " + " ".join(f"{s}={states.count(s)}" for s in set(states)))
running = sqlite3.connect(os.path.join(STATE, "toolgate.db")).execute(
    "SELECT count(*) FROM idempotency WHERE state = 'running'").fetchone()[0]
check("no_key_left_running", running == 0, f"{running} running")
check("approvals_all_accepted", stats["approve_errors"] == 0, json.dumps(stats))

# 100 concurrent retries of one approved key: one run
held = post(gw.port, agent, "dup-1", {"sql": "INSERT INTO ledger (k) VALUES ('dup-1')"})
ticket = held["_meta"]["dev.toolgate/error"]["ticket"]
cli("approvals", "approve", ticket, "--state", STATE, "--policy", POLICY, "--token", alice)
answers = []


def dup():
    try:
        answers.append(post(gw.port, agent, "dup-1",
                            {"sql": "INSERT INTO ledger (k) VALUES ('dup-1')"}))
    except (OSError, urllib.error.URLError) as e:
        answers.append({"transport": str(e)})


ts = [threading.Thread(target=dup) for _ in range(100)]
for t in ts:
    t.start()
for t in ts:
    t.join()
ran = sqlite3.connect(DB).execute("SELECT count(*) FROM ledger WHERE k = 'dup-1'").fetchone()[0]
codes = [((a.get("_meta") or {}).get("dev.toolgate/error") or {}).get("code", "ok")
         if "transport" not in a else "transport" for a in answers]
check("hundred_duplicates_one_run", ran == 1 and codes.count("ok") >= 1 and
      set(codes) <= {"ok", "running"}, f"{ran} rows; " +
      " ".join(f"{c}={codes.count(c)}" for c in set(codes)))
gw.kill()
err = open(os.path.join(TMP, "serve.err")).read()
check("no_sanitizer_reports", "Sanitizer" not in err and "runtime error:" not in err, err[-2000:])
check.done()
