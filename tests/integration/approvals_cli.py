#!/usr/bin/env python3
"""`toolgate approvals` for a person (docs/CLI.md, "Approvals"): tickets as
the pipeline makes them, their previews shaped as the example tools' dry
runs (sql.execute, fs.write, plan.run), put in the store of a state
directory that `serve --policy` made, then:

- list: a table newest first, ids as short as tells them apart (8 hex
  digits, 9 here where two share 8), age and time left, the anomaly
  flag; --json as the admin API's list; --status and --tool filters, a
  mistyped status refused (exit 2);
- show: the SQL rows as a table, the file's diff, the plan's numbered
  steps, the catalogue's owner with --catalog, long values folded (and
  whole with --full), hidden characters and escapes never raw, colour
  only on a terminal without NO_COLOR; --json as before; an id's first 8
  digits name it when no other ticket starts so;
- decisions with --token-file (a missing, world-readable or empty file
  refused, exit 3) and --token - (stdin);
- an identity provider's token (a provider on loopback, no audience of
  its own: --public-url gives it) approves as its principal; another
  audience, or none, is refused.

    approvals_cli.py TOOLGATE REPO TMPDIR
"""
import json
import os
import pty
import re
import shutil
import sqlite3
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, LoopbackProvider, issue_token  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
c = Checks("approvals")
shutil.rmtree(TMP, ignore_errors=True)
os.makedirs(TMP)
STATE, POLICY = (os.path.join(TMP, n) for n in ("state", "policy.json"))
CATALOG = os.path.join(REPO, "examples/catalog")
IDP = LoopbackProvider(TMP)
URL = "https://gw.example/mcp"


def cli(*argv, stdin=None, env=None):
    return subprocess.run([TG, *argv], capture_output=True, text=True, timeout=60, input=stdin,
                          env=env)


with open(POLICY, "w") as f:
    json.dump({"principals": {"local": {"scopes": ["fs.read:read"]},
                              "agent-1": {"scopes": ["sql.*:write", "fs.*:write"]},
                              "alice": {"scopes": ["sql.*:approve", "fs.*:approve",
                                                   "plan.*:approve"]},
                              "carol": {"scopes": ["fs.*:approve"]}},
               "identity_providers": [{"issuer": IDP.issuer, "scopes": "policy"}]}, f)
# the store as serve makes it (a reading command never does)
subprocess.run([TG, "serve", "--catalog", CATALOG, "--state", STATE, "--policy", POLICY],
               stdin=subprocess.DEVNULL, capture_output=True, timeout=120)

NOW = int(time.time())
SQL = {"statement": "DELETE FROM orders WHERE customer_id = ?", "rows_affected": 2,
       "rows_changed": 2, "tables": ["orders"], "dry_run": True,
       "sample": [{"table": "orders", "op": "delete", "columns": ["id", "customer_id", "total"],
                   "before": [2, 2, 1200], "after": None},
                  {"table": "orders", "op": "delete", "columns": ["id", "customer_id", "total"],
                   "before": [3, 2, "x\u202ey"], "after": None}]}
EVIL = "ok = 1 \u202e// admin\u2066 \x1b[2J\n"
FS = {"path": "notes/a.txt", "op": "write", "existed": True, "bytes_before": 12,
      "bytes_after": 20, "dry_run": True,
      "diff": "--- a/notes/a.txt\n+++ b/notes/a.txt\n@@ -1 +1,2 @@\n-hello world\n+hello there\n+"
              + EVIL}
PLAN = {"dry_run": True, "steps": [
    {"tool": "sql.execute", "version": "1.0.0", "preview": SQL},
    {"tool": "fs.write", "version": "1.0.0", "preview": FS},
    {"tool": "fs.read", "version": "1.0.0", "held": True,
     "anomalies": [{"rule": "traversal", "at": "/steps/2/arguments/path", "why": "'..'"}]}]}
IDS = {"sql": "5a1c" + "0" * 27 + "1", "fs": "f5e2" + "0" * 27 + "2",
       "plan": "9a17" + "0" * 27 + "3", "fs2": "f5e20000" + "1" * 23 + "4"}


def put(key, tool, args, structured, age, state="pending", findings=None, covers=None):
    """A ticket as the pipeline makes one (the store's schema, docs/STORE.md)."""
    preview = {"content": [{"type": "text", "text": json.dumps(structured)}], "isError": False,
               "structured": structured}
    db.execute("INSERT INTO tickets (id, principal, tool, args_sha256, preview, state, created, "
               "expires, arguments, findings, covers) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
               (IDS[key], "agent-1", tool, "ab" * 32, json.dumps(preview), state, NOW - age,
                NOW - age + 3600, json.dumps(args, sort_keys=True, separators=(",", ":")),
                json.dumps(findings) if findings else None, covers))


db = sqlite3.connect(os.path.join(STATE, "toolgate.db"))
put("sql", "sql.execute@1.0.0", {"sql": SQL["statement"], "params": [2]}, SQL, 180)
put("fs", "fs.write@1.0.0", {"path": "notes/a.txt", "content": "hello there\n" + EVIL + "x" * 900},
    FS, 60, findings=[{"rule": "unicode", "at": "/content", "why": "a bidi control"}])
put("plan", "plan.run@1.0.0", {"steps": []}, PLAN, 7200, state="approved",
    covers="sql.execute fs.write")
put("fs2", "fs.write@1.0.0", {"path": "b", "content": ""}, FS, 30)
db.commit()
db.close()

# ---- list ---------------------------------------------------------------------------------
p = cli("approvals", "list", "--state", STATE)
rows = p.stdout.splitlines()
c("list_table", p.returncode == 0 and rows[0].startswith("ID ") and "LEFT" in rows[0] and
  rows[1].startswith(IDS["fs2"][:9] + " ") and rows[3].startswith(IDS["sql"][:9] + " ") and
  # a second or more may pass between the tickets' making and the list
  # (it did under ASan): 58m left is 3,540 s of the hour, minus 61 s
  re.search(r"fs\.write@1\.0\.0 +agent-1 .* 1m ago +5[89]m left +anomalous \(1\)$", rows[2]) and
  rows[-1] == "3 tickets" and "\x1b" not in p.stdout, p.stdout + p.stderr)
p = cli("approvals", "list", "--json", "--state", STATE)
got = json.loads(p.stdout or "{}").get("tickets", [])
c("list_json", p.returncode == 0 and [t["id"] for t in got] ==
  [IDS["sql"], IDS["fs"], IDS["fs2"]] and all("arguments" not in t and "preview" not in t
                                              for t in got), p.stdout)
p = cli("approvals", "list", "--status", "approved", "--state", STATE)
q = cli("approvals", "list", "--all", "--tool", "sql.*", "--state", STATE)
c("list_filters", p.returncode == 0 and "plan.run@1.0.0" in p.stdout and
  "1 ticket" in p.stdout and q.returncode == 0 and "sql.execute" in q.stdout and
  "1 ticket" in q.stdout, p.stdout + q.stdout)
p = cli("approvals", "list", "--status", "pendng", "--state", STATE)
c("list_status_typo", p.returncode == 2 and "--status 'pendng': one of pending" in p.stderr,
  p.stderr)

# ---- show -----------------------------------------------------------------------------------
p = cli("approvals", "show", IDS["sql"][:8], "--state", STATE)
c("show_sql_rows", p.returncode == 0 and "2 rows would change in orders" in p.stdout and
  re.search(r"^ +- +2 +2 +1200$", p.stdout, re.M) and "x\\u202Ey" in p.stdout, p.stdout)
p = cli("approvals", "show", IDS["fs"], "--catalog", CATALOG, "--state", STATE)
c("show_file_diff", p.returncode == 0 and "\n  -hello world\n  +hello there\n" in p.stdout and
  "unicode at /content: a bidi control" in p.stdout, p.stdout)
c("show_never_raw", p.returncode == 0 and not any(ch in p.stdout for ch in "\u202e\u2066\x1b")
  and "\\u202E// admin\\u2066 \\u001B[2J" in p.stdout, repr(p.stdout))
c("show_catalog", re.search(r"owner +\S", p.stdout) and "undone by fs.undo" in p.stdout,
  p.stdout)
c("show_folds", "[... folded: " in p.stdout, p.stdout)
p = cli("approvals", "show", IDS["fs"], "--full", "--state", STATE)
c("show_full", p.returncode == 0 and "folded" not in p.stdout and "x" * 900 in p.stdout,
  p.stdout[-300:])
p = cli("approvals", "show", IDS["plan"], "--state", STATE)
c("show_plan_steps", p.returncode == 0 and "\n  1. sql.execute@1.0.0\n" in p.stdout and
  "\n  2. fs.write@1.0.0\n" in p.stdout and
  "3. fs.read@1.0.0: held for its anomalies" in p.stdout, p.stdout)
p = cli("approvals", "show", IDS["fs"], "--json", "--state", STATE)
j = json.loads(p.stdout or "{}")
c("show_json", p.returncode == 0 and j.get("id") == IDS["fs"] and
  j.get("arguments", {}).get("content", "").startswith("hello there\n" + EVIL) and
  "\u202e" not in p.stdout and j.get("preview", {}).get("structured") == FS, p.stdout[:300])
p = cli("approvals", "show", "f5e20000", "--state", STATE)
q = cli("approvals", "show", "f5e2", "--state", STATE)
r = cli("approvals", "show", "0123456789abcdef", "--state", STATE)
c("show_ids", p.returncode == 1 and "2 tickets begin so" in p.stderr and q.returncode == 1 and
  "or its first 8 or more" in q.stderr and r.returncode == 1 and "no such ticket" in r.stderr,
  p.stderr + q.stderr + r.stderr)


def on_tty(env):
    """approvals show on a terminal (a pty): what it wrote."""
    master, slave = pty.openpty()
    proc = subprocess.Popen([TG, "approvals", "show", IDS["fs"], "--state", STATE],
                            stdout=slave, stderr=slave, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    proc.wait(timeout=60)
    os.close(master)
    return out.decode(errors="replace")


env = dict(os.environ, TERM="xterm")
env.pop("NO_COLOR", None)
coloured, plain = on_tty(env), on_tty(dict(env, NO_COLOR="1"))
c("colour_on_a_terminal_only", "\x1b[32m+hello there" in coloured and "\x1b" not in plain and
  "\u202e" not in coloured, repr(coloured[:200]) + repr(plain[:200]))

# ---- tokens from a file or stdin --------------------------------------------------------------
ARGS = ["--state", STATE, "--policy", POLICY]
TOK = os.path.join(TMP, "alice.tok")
with open(TOK, "w") as f:
    f.write(issue_token(TG, STATE, POLICY, "alice", "fs.*:approve", "sql.*:approve") + "\n")
os.chmod(TOK, 0o644)
p = cli("approvals", "approve", IDS["fs"], *ARGS, "--token-file", TOK)
q = cli("approvals", "approve", IDS["fs"], *ARGS, "--token-file", TOK + ".missing")
EMPTY = os.path.join(TMP, "empty.tok")
open(EMPTY, "w").close()
os.chmod(EMPTY, 0o600)
r = cli("approvals", "approve", IDS["fs"], *ARGS, "--token-file", EMPTY)
c("token_file_refused", p.returncode == 3 and "has mode 0644" in p.stderr and
  "chmod 600" in p.stderr and q.returncode == 3 and "No such file" in q.stderr and
  r.returncode == 3 and "is empty" in r.stderr, p.stderr + q.stderr + r.stderr)
os.chmod(TOK, 0o600)
p = cli("approvals", "approve", IDS["fs"], *ARGS, "--token-file", TOK)
c("token_file_approves", p.returncode == 0 and p.stdout == IDS["fs"] + " approved by alice\n",
  p.stdout + p.stderr)
p = cli("approvals", "reject", IDS["sql"][:8], *ARGS, "--reason", "not today", "--token", "-",
        stdin=open(TOK).read())
q = cli("approvals", "approve", IDS["fs2"], *ARGS, "--token", "-", stdin="")
c("token_from_stdin", p.returncode == 0 and "rejected by alice" in p.stdout and
  q.returncode == 2 and "no token on stdin" in q.stderr, p.stdout + p.stderr + q.stderr)

# ---- an identity provider's token ---------------------------------------------------------------
IDP.start()


def idp_token(sub, aud=URL):
    return IDP.token({"iss": IDP.issuer, "aud": aud, "sub": sub, "iat": int(time.time()),
                      "exp": int(time.time()) + 600})


p = cli("approvals", "approve", IDS["fs2"], *ARGS, "--public-url", URL, "--token", "-",
        stdin=idp_token("carol", "https://other/mcp"))
q = cli("approvals", "approve", IDS["fs2"], *ARGS, "--token", "-", stdin=idp_token("carol"))
c("provider_audience_checked", p.returncode == 1 and "aud" in p.stderr and q.returncode == 1,
  p.stderr + q.stderr)
p = cli("approvals", "approve", IDS["fs2"], *ARGS, "--public-url", URL, "--token", "-",
        stdin=idp_token("agent-1"))
q = cli("approvals", "approve", IDS["fs2"], *ARGS, "--public-url", URL, "--token", "-",
        stdin=idp_token("carol"))
c("provider_token_decides", p.returncode == 1 and q.returncode == 0 and
  "approved by carol" in q.stdout, p.stderr + q.stdout + q.stderr)
IDP.stop()
log = open(os.path.join(STATE, "audit.log")).read()
c("decisions_recorded", '"principal":"carol"' in log and '"outcome":"approved"' in log, log[-400:])
c.done()
