#!/usr/bin/env python3
"""Two gateways, one PostgreSQL store (docs/STORE.md, "PostgreSQL";
docs/DEPLOY.md): replicas A and B, each `toolgate serve --http --store
URL` with a state directory of its own (the same signing key in both, as
a deployment mounts one secret) and one workspace, driven over HTTP as a
load balancer would spread one client's calls:

- a write held through one replica, approved through the other's admin
  API, run through the other, replayed by both byte for byte: each key
  ran once (one row, one execution, one undo record across both);
- a call waiting for its decision on B is released by an approval through
  A within a second;
- a token revoked with `toolgate token revoke --store` is refused by both
  at once;
- A killed with SIGKILL: B goes on; A restarted replays what B ran;
- PostgreSQL stopped under the replicas: /readyz says not ready, a write
  is refused with a retryable error and never runs unrecorded, a read
  goes on; PostgreSQL started again: ready, and writes run;
- a replica whose database is not there at start does not start (exit 3,
  naming it);
- a rate of 4 an hour divided between the two: 2 calls through each;
- webhooks delivered by one replica: every event, none twice but across
  a kill;
- each replica's audit records name it, and its log's head is anchored
  in the store: `toolgate audit verify --store` finds the log whole, a
  copy cut back by two records cut, and another replica's log not this
  one's.

    replicas.py TOOLGATE REPO TMPDIR PG_BIN PG_DIR    (TG_TEST_PG: the URL)
"""
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

TG, REPO, TMP, PG_BIN, PG_DIR = sys.argv[1:6]
sys.path.insert(0, os.path.join(REPO, "tests/integration"))
from mcptest import Checks, error_of, example_gateway, issue_token, modern_post, start_http  # noqa

URL = os.environ["TG_TEST_PG"]
c = Checks("replicas")
CAT, WS = example_gateway(REPO, TMP)
POLICY = os.path.join(TMP, "policy.json")
STATES = [os.path.join(TMP, "state-a"), os.path.join(TMP, "state-b")]

# a webhook receiver on loopback: every event of fs tools, counted by id
HOOKED, HOOK_LOCK = [], threading.Lock()


class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with HOOK_LOCK:
            HOOKED.append(json.loads(body or b"{}"))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *a):
        pass


HOOK_SRV = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hook)
threading.Thread(target=HOOK_SRV.serve_forever, daemon=True).start()
KEYF = os.path.join(TMP, "hook.key")
with open(KEYF, "w") as f:
    f.write("0123456789abcdef0123456789abcdef\n")
os.chmod(KEYF, 0o600)
with open(POLICY, "w") as f:
    json.dump({"writes": {"wait": "0"},  # held calls answered at once unless asked
               "principals": {"agent": {"scopes": ["fs.*:write", "fs.*:read"]},
                              "ops": {"scopes": ["*:approve"]},
                              "limited": {"scopes": ["fs.read:read"], "rate": "4/h"}},
               "notify": {"webhooks": [{"name": "ops", "tools": ["fs.*"], "secret_file": KEYF,
                                        "url": "http://127.0.0.1:%d/hook"
                                        % HOOK_SRV.server_address[1]}]}}, f)
AGENT = issue_token(TG, STATES[0], POLICY, "agent", "fs.*:write", "fs.*:read")
OPS = issue_token(TG, STATES[0], POLICY, "ops", "*:approve")
os.makedirs(STATES[1], mode=0o700)
shutil.copy2(os.path.join(STATES[0], "signing.key"), os.path.join(STATES[1], "signing.key"))


def psql(sql):
    p = subprocess.run([os.path.join(PG_BIN, "psql"), "-h", PG_DIR, "-U", "toolgate", "-d",
                        "postgres", "-At", "-c", sql], capture_output=True, text=True, timeout=60)
    return p.stdout.strip()


class Replica:
    def __init__(self, name, state):
        self.name, self.state, self.proc, self.port = name, state, None, None
        self.err = os.path.join(TMP, "serve-%s.err" % name)

    def start(self):
        log = open(self.err, "a")
        log.close()
        self.proc, self.port = start_http(
            [TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", self.state,
             "--policy", POLICY, "--store", URL, "--replica", self.name, "--audit",
             os.path.join(self.state, "audit.log")], self.err)

    def kill9(self):
        self.proc.kill()
        self.proc.wait(timeout=60)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=60)


def call(port, token, name, args, key=None, wait_ms=None, timeout=60):
    headers = {"Authorization": "Bearer " + token}
    if key:
        headers["Idempotency-Key"] = key
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    if wait_ms is not None:
        meta["dev.toolgate/approvalWait"] = wait_ms
    r = modern_post(port, "tools/call", {"name": name, "arguments": args, "_meta": meta},
                    headers, timeout=timeout)
    return r.get("result", r)


def admin(port, method, path, token):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), method=method,
                                 data=b"{}" if method == "POST" else None,
                                 headers={"Authorization": "Bearer " + token,
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read().decode() or "null")
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def ready(port):
    try:
        with urllib.request.urlopen("http://127.0.0.1:%d/readyz" % port, timeout=10) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return 0


def until(pred, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if pred():
            return True
        time.sleep(0.1)
    return pred()


def write(rep, key, content=None):
    return call(rep.port, AGENT, "fs.write", {"path": "rep/%s.txt" % key,
                                               "content": content or "content of " + key},
                key=key)


def shown(result):
    """What a client reads of a result: its content and structured content."""
    return json.dumps([result.get("content"), result.get("structuredContent")], sort_keys=True)


def undo_records(ticket):
    return sum(os.path.isdir(os.path.join(s, "tools", "fs", "undo", ticket)) for s in STATES)


# a database that is not there when a replica starts: it does not start
gone = subprocess.run([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state",
                       os.path.join(TMP, "state-gone"), "--policy", POLICY, "--store",
                       "postgresql:///postgres?host=%s/nowhere" % TMP, "--http", "127.0.0.1:0"],
                      capture_output=True, text=True, timeout=60)
c("unreachable_database_at_start_refused", gone.returncode == 3 and
  "store postgresql:///postgres?host=" in gone.stderr and "nowhere" in gone.stderr,
  (gone.returncode, gone.stderr[-400:]))

A, B = Replica("a", STATES[0]), Replica("b", STATES[1])
A.start()
B.start()
reps = [A, B]
try:
    # ---- held on one, approved through the other, run and replayed by both
    keys, tickets, results, bad = ["k%d" % i for i in range(8)], {}, {}, []
    for i, k in enumerate(keys):
        held = error_of(write(reps[i % 2], k))
        if held.get("code") != "awaiting_approval":
            bad.append((k, held))
            continue
        tickets[k] = held["ticket"]
        st, _ = admin(reps[(i + 1) % 2].port, "POST", "/admin/tickets/%s/approve" % held["ticket"],
                      OPS)
        if st != 200:
            bad.append((k, "approve", st))
    c("held_on_one_approved_through_the_other", not bad and len(tickets) == 8, bad)
    for i, k in enumerate(keys):
        r = write(reps[(i + 1) % 2], k)
        if r.get("isError"):
            bad.append((k, r))
        results[k] = shown(r)
    c("run_through_the_other", not bad, bad)
    replays = [(k, rep.name) for k in keys for rep in reps if shown(write(rep, k)) != results[k]]
    c("replayed_byte_for_byte_by_both", not replays, replays)
    rows = psql("SELECT count(*), count(*) FILTER (WHERE state = 'done') FROM idempotency")
    execd = psql("SELECT count(*) FROM tickets WHERE state = 'executed'")
    once = [k for k in keys if undo_records(tickets.get(k, "-")) != 1]
    c("each_key_ran_once", rows == "8|8" and execd == "8" and not once, (rows, execd, once))
    files = [k for k in keys
             if open(os.path.join(WS, "rep", k + ".txt")).read() != "content of " + k]
    c("each_write_landed", not files, files)

    # ---- a call waiting on B released by an approval through A
    got = {}

    def waiting():
        got["r"] = call(B.port, AGENT, "fs.write", {"path": "rep/wait.txt", "content": "w"},
                        key="wait-1", wait_ms=20000, timeout=60)
        got["t"] = time.time()

    th = threading.Thread(target=waiting)
    th.start()
    pending = []
    until(lambda: pending.extend(x["id"] for x in admin(A.port, "GET", "/admin/tickets",
                                                         OPS)[1].get("tickets", [])) or pending,
          20)
    t0 = time.time()
    st, _ = admin(A.port, "POST", "/admin/tickets/%s/approve" % (pending or ["-"])[0], OPS)
    th.join(timeout=60)
    lag = got.get("t", 1e9) - t0
    print("# an approval through A released the call waiting on B after %.0f ms" % (lag * 1000))
    c("approval_on_a_releases_b_within_a_second", st == 200 and lag < 1.0 and
      not got.get("r", {}).get("isError", True), (st, lag, got.get("r")))

    # ---- a rate divided between the two: 4 an hour in all, 2 at each
    lim = issue_token(TG, STATES[0], POLICY, "limited", "fs.read:read")
    until(lambda: False, 1.5)  # each has counted the other

    def read_ok(rep):
        r = call(rep.port, lim, "fs.read", {"path": "README.md"})
        return error_of(r).get("code") != "rate_limited" and "content" in r

    got = [read_ok(A), read_ok(A), read_ok(A), read_ok(B), read_ok(B), read_ok(B)]
    c("rate_divided_between_replicas", got == [True, True, False, True, True, False], got)

    # ---- a token revoked through one store is refused by both at once
    tok = issue_token(TG, STATES[0], POLICY, "agent", "fs.*:read")
    meta = {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}
    listed = [modern_post(rep.port, "tools/list", dict(meta), {"Authorization": "Bearer " + tok})
              for rep in reps]
    rv = subprocess.run([TG, "token", "revoke", "--state", STATES[0], "--policy", POLICY,
                         "--store", URL, tok], capture_output=True, text=True, timeout=60)
    after = [modern_post(rep.port, "tools/list", dict(meta), {"Authorization": "Bearer " + tok})
             for rep in reps]
    c("revoked_everywhere_at_once", all("result" in x for x in listed) and rv.returncode == 0
      and all(x.get("status") == 401 for x in after), (rv.stderr, after))

    # ---- A killed: B goes on; A back replays what B ran
    A.kill9()
    held = error_of(write(B, "after-kill"))
    st, _ = admin(B.port, "POST", "/admin/tickets/%s/approve" % held.get("ticket", "-"), OPS)
    ran = write(B, "after-kill")
    A.start()
    c("b_goes_on_while_a_is_dead_and_a_replays_it", st == 200 and not ran.get("isError") and
      shown(write(A, "after-kill")) == shown(ran), (held, st, ran))

    # ---- the database stopped under them, then started again
    pg = [os.path.join(PG_BIN, "pg_ctl"), "-D", os.path.join(PG_DIR, "data"), "-w"]
    as_pg = ["runuser", "-u", "nobody", "--"] if os.getuid() == 0 else []
    subprocess.run(as_pg + pg + ["stop", "-m", "fast"], capture_output=True, timeout=120)
    down = until(lambda: ready(A.port) == 503 and ready(B.port) == 503, 10)
    refused = call(A.port, AGENT, "fs.write", {"path": "rep/down.txt", "content": "d"},
                   key="while-down")
    err = error_of(refused)
    read = call(B.port, AGENT, "fs.read", {"path": "README.md"})
    c("database_down_not_ready", down, (ready(A.port), ready(B.port)))
    c("database_down_writes_refused_retryable", refused.get("isError") and
      err.get("retryable") is True and not os.path.exists(os.path.join(WS, "rep/down.txt")),
      refused)
    c("database_down_reads_go_on", "content" in read and not read.get("isError"), read)
    subprocess.run(as_pg + pg + ["-l", os.path.join(PG_DIR, "log"), "-o",
                                 "-c listen_addresses='' -k %s -c max_connections=300" % PG_DIR,
                                 "start"], capture_output=True, timeout=120)
    back = until(lambda: ready(A.port) == 200 and ready(B.port) == 200, 20)
    held = error_of(write(A, "after-restart"))
    c("database_back_ready_and_writes_held", back and held.get("code") == "awaiting_approval",
      (ready(A.port), held))
finally:
    for rep in reps:
        rep.stop()

# ---- webhooks: one replica leads their delivery, each event once; a
# kill or the database's restart between a delivery and its cursor's write
# may repeat one event (its id tells the receiver), never all of them
ids = [e.get("id") for e in HOOKED]
c("webhooks_delivered_once_by_one_of_two_replicas",
  len(set(ids)) >= 24 and len(ids) - len(set(ids)) <= 2, (len(ids), len(set(ids))))

# ---- the audit logs against their anchors (written at the latest at stop)
LOG = os.path.join(STATES[0], "audit.log")
with open(LOG) as f:
    lines = f.readlines()
named = all(json.loads(x).get("replica") == "a" for x in lines)


def verify(path, *extra):
    p = subprocess.run([TG, "audit", "verify", path, "--store", URL] + list(extra),
                       capture_output=True, text=True, timeout=60)
    return p.returncode, p.stdout + p.stderr


whole = verify(LOG)
cut = os.path.join(TMP, "cut.log")
with open(cut, "w") as f:
    f.writelines(lines[:-2])
cutv = verify(cut, "--replica", "a")
other = verify(os.path.join(STATES[1], "audit.log"), "--replica", "a")
c("records_name_their_replica", named and len(lines) > 5, lines[:2])
c("log_reaches_its_anchor", whole[0] == 0 and "reaches its anchor" in whole[1], whole)
c("log_cut_back_is_found", cutv[0] == 1 and "cut: the log ends at record" in cutv[1], cutv)
c("another_replicas_log_is_not_anchored_as_this_one", other[0] == 1 and
  "not anchored" in other[1], other)

# ---- a log cut back while its gateway was stopped, then grown past the
# old head by the restarted gateway: the store keeps the anchor that shows
# the cut (the head moves on only along the chain it anchored)
with open(LOG, "w") as f:
    f.writelines(lines[:-2])
A.start()
try:
    for i in range(6):
        write(A, "regrow-%d" % i)
finally:
    A.stop()
with open(LOG) as f:
    grown = len(f.readlines())
regrown = verify(LOG)
c("log_cut_then_regrown_is_still_found", grown > len(lines) and regrown[0] == 1, (grown, regrown))
with open(A.err) as f:
    c("regrown_log_said", "does not hold record" in f.read())

for rep in reps:
    with open(rep.err) as f:
        text = f.read()
    c("no_sanitizer_report_" + rep.name, "Sanitizer" not in text and "runtime error" not in text,
      text[-2000:])
c.done()
