#!/usr/bin/env python3
"""Exactly once across replicas killed at random (issue 24's proof;
docs/STORE.md, "Exactly once across replicas"): N replicas of `toolgate
serve --store` on one PostgreSQL, one workspace, and a write tool that
appends its key to a ledger (not resumable, so a call a crash cut short
is marked failed, never run twice). Workers send each key's write, held,
approved through any replica's admin API, then retried under the same key
on the replicas in turn until it has an answer; meanwhile a killer sends
SIGKILL to a replica at random and starts it again. Then, every replica
up:

- every key acknowledged as run is in the ledger exactly once, and no
  key is there twice (one interrupted may be there once or not at all:
  whether it took effect is unknown, which is what it says);
- every replica replays each acknowledged result byte for byte;
- the store holds one idempotency row a key, each done, and one ticket
  a key, executed or failed: nothing duplicated, nothing lost.

    chaos.py TOOLGATE REPO TMPDIR PG_BIN PG_DIR REPLICAS KEYS
    (TG_TEST_PG: the URL)
"""
import json
import os
import random
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

TG, REPO, TMP, PG_BIN, PG_DIR = sys.argv[1:6]
NREP, NKEYS = int(sys.argv[6]), int(sys.argv[7])
sys.path.insert(0, os.path.join(REPO, "tests/integration"))
from mcptest import Checks, error_of, issue_token, modern_post, nobody_workspace, start_http  # noqa

c = Checks("chaos")
SCHEMA = "chaos_%d" % os.getpid()


def psql(sql):
    p = subprocess.run([os.path.join(PG_BIN, "psql"), "-h", PG_DIR, "-U", "toolgate", "-d",
                        "postgres", "-At", "-c", sql], capture_output=True, text=True, timeout=60)
    return p.stdout.strip()


# a schema of its own: what an earlier run left is not this run's
psql("CREATE SCHEMA " + SCHEMA)
URL = os.environ["TG_TEST_PG"] + "&options=-csearch_path%3D" + SCHEMA
os.makedirs(TMP, exist_ok=True)
CAT = os.path.join(TMP, "catalog")
os.makedirs(CAT)
WS = nobody_workspace(REPO, TMP)
POLICY = os.path.join(TMP, "policy.json")
APPEND = ("import json, sys\n"
          "a = json.load(sys.stdin)\n"
          "with open('/workspace/ledger', 'a') as f:\n"
          "    f.write(a['key'] + '\\n')\n"
          "print(json.dumps({'appended': a['key']}))\n")
with open(os.path.join(CAT, "ledger.append-1.0.0.json"), "w") as f:
    json.dump({"name": "ledger.append", "version": "1.0.0", "title": "Append to the ledger",
               "description": "Appends its key as a line to the workspace's ledger file. Not "
                              "resumable: a call cut short by a crash is marked failed.",
               "owner": {"team": "test", "contact": "test@example.test"},
               "authority": "write", "risk": "low", "idempotent": False,
               "dry_run": "unsupported",
               "compensation": {"irreversible": "a ledger is only appended to"},
               "input_schema": {"type": "object",
                                "properties": {"key": {"type": "string", "maxLength": 64}},
                                "required": ["key"], "additionalProperties": False},
               "executor": {"kind": "command", "argv": ["python3", "-c", APPEND],
                            "tier": "strict", "limits": {"memory": "128M", "timeout": "10s"},
                            "workspace": "write"},
               "timeout": "15s"}, f)
with open(POLICY, "w") as f:
    json.dump({"writes": {"wait": "0"},
               "principals": {"agent": {"scopes": ["ledger.*:write"]},
                              "ops": {"scopes": ["*:approve"]}}}, f)
STATES = [os.path.join(TMP, "state-%d" % i) for i in range(NREP)]
AGENT = issue_token(TG, STATES[0], POLICY, "agent", "ledger.*:write")
OPS = issue_token(TG, STATES[0], POLICY, "ops", "*:approve")
for s in STATES[1:]:
    os.makedirs(s, mode=0o700)
    with open(os.path.join(STATES[0], "signing.key")) as a, \
            open(os.path.join(s, "signing.key"), "w") as b:
        b.write(a.read())
    os.chmod(os.path.join(s, "signing.key"), 0o600)


class Replica:
    def __init__(self, i):
        self.i, self.proc, self.port, self.lock = i, None, 0, threading.Lock()
        self.err = os.path.join(TMP, "serve-%d.err" % i)
        self.kills = 0

    def start(self):
        self.proc, self.port = start_http(
            [TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATES[self.i],
             "--policy", POLICY, "--store", URL, "--replica", "r%d" % self.i, "--audit",
             os.path.join(STATES[self.i], "audit.log")], self.err)

    def kill(self):
        self.proc.kill()
        self.proc.wait(timeout=60)
        self.kills += 1


reps = [Replica(i) for i in range(NREP)]
try:
    for r in reps:
        r.start()
    stop = threading.Event()


    def call(i, key):
        """The write of key through replica i: its result, or None when the
        replica did not answer (killed meanwhile)."""
        r = reps[i % NREP]
        meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}
        try:
            got = modern_post(r.port, "tools/call",
                              {"name": "ledger.append", "arguments": {"key": key}, "_meta": meta},
                              {"Authorization": "Bearer " + AGENT, "Idempotency-Key": key},
                              timeout=30)
        except (OSError, ValueError, urllib.error.URLError):
            return None
        return got.get("result")


    def approve(i, ticket):
        r = reps[i % NREP]
        req = urllib.request.Request("http://127.0.0.1:%d/admin/tickets/%s/approve" % (r.port, ticket),
                                     method="POST", data=b"{}",
                                     headers={"Authorization": "Bearer " + OPS,
                                              "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as resp:
                return resp.status
        except urllib.error.HTTPError as e:
            return e.code
        except (OSError, ValueError):
            return 0


    def shown(result):
        return json.dumps([result.get("content"), result.get("structuredContent")], sort_keys=True)


    answers, troubles = {}, []


    def one(key, start):
        """key's write until it has an answer: run (its result) or
        interrupted; every other answer (held, running, unavailable, a
        result not kept yet, a replica gone) is asked again on the next
        replica."""
        i, approved, deadline = start, False, time.time() + 240
        while time.time() < deadline:
            i += 1
            res = call(i, key)
            if res is None:
                time.sleep(0.05)
                continue
            err = error_of(res)
            if not res.get("isError"):
                answers[key] = ("ran", shown(res))
                return
            code = err.get("code")
            if code == "interrupted":
                answers[key] = ("interrupted", shown(res))
                return
            if code == "awaiting_approval" and not approved:
                approved = approve(i + 1, err["ticket"]) in (200, 409)
            elif code not in ("awaiting_approval", "running", "unavailable", "unrecorded"):
                troubles.append((key, res))
                return
            time.sleep(0.05)
        troubles.append((key, "no answer in 240 s"))


    restarts = []


    def restart_pg():
        """PostgreSQL stopped (fast: its sessions cut) and started again."""
        pg = [os.path.join(PG_BIN, "pg_ctl"), "-D", os.path.join(PG_DIR, "data"), "-w"]
        as_pg = ["runuser", "-u", "nobody", "--"] if os.getuid() == 0 else []
        subprocess.run(as_pg + pg + ["stop", "-m", "fast"], capture_output=True, timeout=120)
        time.sleep(0.3)
        p = subprocess.run(as_pg + pg + ["-l", os.path.join(PG_DIR, "log"), "-o",
                                         "-c listen_addresses='' -k %s -c max_connections=300"
                                         % PG_DIR, "start"], capture_output=True, timeout=120)
        restarts.append(p.returncode)


    def killer():
        n = 0
        while not stop.is_set():
            time.sleep(random.uniform(0.2, 0.7))
            if stop.is_set():
                break
            n += 1
            if n == 3:  # once: the database itself, under the same load
                restart_pg()
                continue
            r = random.choice(reps)
            r.kill()
            time.sleep(random.uniform(0.1, 0.4))
            r.start()


    keys = ["k%03d" % n for n in range(NKEYS)]
    kth = threading.Thread(target=killer)
    kth.start()
    work = list(keys)
    lock = threading.Lock()


    def worker(w):
        while True:
            with lock:
                if not work:
                    return
                key = work.pop()
            one(key, w)


    workers = [threading.Thread(target=worker, args=(w,)) for w in range(8)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(timeout=600)
    during = sum(r.kills for r in reps)  # while keys were written
    stop.set()
    kth.join(timeout=120)
    for r in reps:
        if r.proc.poll() is not None:
            r.start()
    kills = sum(r.kills for r in reps)
    ran = [k for k in keys if answers.get(k, ("",))[0] == "ran"]
    cut = [k for k in keys if answers.get(k, ("",))[0] == "interrupted"]
    print("# %d replicas, %d keys, %d kills while they were written: %d ran, %d interrupted"
          % (NREP, NKEYS, during, len(ran), len(cut)))
    c("every_key_answered", not troubles and len(answers) == NKEYS, troubles[:5])
    c("replicas_killed_while_keys_were_written", during >= 2, during)
    c("postgres_restarted_while_keys_were_written", restarts == [0], restarts)

    LEDGER = os.path.join(WS, "ledger")
    lines = open(LEDGER).read().split() if os.path.exists(LEDGER) else []
    count = {k: lines.count(k) for k in keys}
    c("each_acknowledged_key_ran_once", all(count[k] == 1 for k in ran),
      [(k, count[k]) for k in ran if count[k] != 1])
    c("no_key_ran_twice", all(n <= 1 for n in count.values()) and len(lines) == sum(count.values()),
      [(k, n) for k, n in count.items() if n > 1])
    bad = [(k, r.i) for k in keys if k in answers for r in reps
           if shown(call(r.i, k) or {}) != answers[k][1]]
    c("every_replica_replays_every_answer", not bad, bad[:5])


    rows = psql("SELECT count(*), count(DISTINCT key), count(*) FILTER (WHERE state = 'done') "
                "FROM %s.idempotency WHERE tool = 'ledger.append'" % SCHEMA)
    tickets = psql("SELECT count(*), count(*) FILTER (WHERE state IN ('executed', 'failed')) "
                   "FROM %s.tickets WHERE tool = 'ledger.append@1.0.0'" % SCHEMA)
    c("one_done_row_and_one_decided_ticket_a_key",
      rows == "%d|%d|%d" % (NKEYS, NKEYS, NKEYS) and tickets == "%d|%d" % (NKEYS, NKEYS),
      (rows, tickets))
    for r in reps:
        r.proc.terminate()
        r.proc.wait(timeout=60)
finally:
    for r in reps:
        if r.proc and r.proc.poll() is None:
            r.proc.kill()
            r.proc.wait(timeout=60)
reports = [r.i for r in reps if "Sanitizer" in open(r.err).read() or
           "runtime error" in open(r.err).read()]
c("no_sanitizer_report", not reports, reports)
c.done()
