"""The example catalogue's write tools through the whole gate: sql.execute,
fs.write and fs.delete held with their dry run's preview, approved by
another identity, run once, replayed, and rolled back by toolgate rollback
with their compensations (sql.undo, fs.undo); dry runs that change nothing;
conflicts that refuse to undo; a rollback a crash interrupted, resumed;
what a compensation answers, printed with hidden characters escaped.

    write_tools.py TOOLGATE REPO TMPDIR

Each call is one `toolgate serve` on stdio, so every step also crosses a
restart of the gateway. The example data and workspace are copied into
TMPDIR, owned by the sandbox's host user (nobody), never written in place.
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys

from mcptest import Checks

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
check = Checks("write_tools")
CAT, DATA, WS, STATE = (os.path.join(TMP, d) for d in ("catalog", "data", "workspace", "state"))
POLICY = os.path.join(TMP, "policy.json")
DB = os.path.join(DATA, "shop.db")
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}}


def setup():
    shutil.rmtree(TMP, ignore_errors=True)
    shutil.copytree(os.path.join(REPO, "examples/catalog"), CAT)
    shutil.copytree(os.path.join(REPO, "examples/workspace"), WS)
    os.makedirs(DATA)
    db = sqlite3.connect(DB)
    with open(os.path.join(REPO, "examples/data/shop.sql")) as f:
        db.executescript(f.read())
    db.commit()
    db.close()
    for top in (DATA, WS):  # the sandbox writes as nobody
        for d, dirs, files in os.walk(top):
            for n in [d] + [os.path.join(d, x) for x in files]:
                os.chown(n, 65534, 65534)
    with open(POLICY, "w") as f:
        json.dump({"writes": {"wait": "0"},  # held calls answered at once
                   "principals": {
            "local": {"scopes": ["sql.*:write", "fs.*:write", "*:read"]},
            "alice": {"scopes": ["sql.*:approve", "fs.*:approve"]}}}, f)


def serve_call(tool, args, key=None, dry=False, wait=None):
    """One tools/call through a fresh gateway: its result."""
    meta = {}
    if key:
        meta["dev.toolgate/idempotencyKey"] = key
    if dry:
        meta["dev.toolgate/dryRun"] = True
    if wait is not None:
        meta["dev.toolgate/approvalWait"] = wait
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": args, "_meta": meta}}
    p = subprocess.run([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE,
                        "--policy", POLICY, "--record", os.path.join(TMP, "record")],
                       input=json.dumps(INIT) + "\n" + json.dumps(call) + "\n",
                       capture_output=True, text=True, timeout=60)
    sanitizer(p.stderr)
    lines = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    resp = [x for x in lines if x.get("id") == 1]
    if not resp or "result" not in resp[0]:
        return {"error": p.stdout + p.stderr}
    return resp[0]["result"]


REPORTS = []


def sanitizer(stderr):
    """Under ASan+UBSan, a report anywhere fails the run."""
    if "Sanitizer" in stderr or "runtime error:" in stderr:
        REPORTS.append(stderr[-2000:])


def err_meta(r):
    return (r.get("_meta") or {}).get("dev.toolgate/error") or {}


ALICE = None


def cli(*argv):
    p = subprocess.run([TG] + list(argv), capture_output=True, text=True, timeout=60)
    sanitizer(p.stderr)
    return p


def approve(ticket):
    return cli("approvals", "approve", ticket, "--state", STATE, "--policy", POLICY,
               "--token", ALICE).returncode == 0


def rollback(call_id, *extra):
    # the approver's token from a file only its owner reads (docs/CLI.md)
    # (ALICE, as it is now: the script issues her a wider token later)
    tok = os.path.join(TMP, "alice.token")
    fd = os.open(tok, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, (ALICE + "\n").encode())
    os.close(fd)
    return cli("rollback", call_id, "--catalog", CAT, "--workspace", WS, "--state", STATE,
               "--policy", POLICY, "--token-file", tok, "--record", os.path.join(TMP, "record"),
               *extra)


def rows(sql):
    db = sqlite3.connect(DB)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def held_then_run(tool, args, key):
    """Held (its ticket, preview), approved, run: (ticket, held, result)."""
    held = serve_call(tool, args, key)
    e = err_meta(held)
    ticket = e.get("ticket", "")
    if e.get("code") != "awaiting_approval" or not approve(ticket):
        return ticket, held, None
    return ticket, held, serve_call(tool, args, key)


setup()
ALICE = cli("token", "issue", "--state", STATE, "--policy", POLICY, "--principal", "alice",
            "--scope", "sql.*:approve", "--scope", "fs.*:approve").stdout.strip()
orders = rows("SELECT * FROM orders ORDER BY id")

# a dry run: no key, no ticket, nothing changed
r = serve_call("sql.execute", {"sql": "DELETE FROM orders WHERE customer_id = ?", "params": [2]},
               dry=True)
sc = r.get("structuredContent") or {}
check("sql_dry_run", not r.get("isError") and sc.get("dry_run") is True and
      sc.get("rows_changed") == 2 and sc["sample"][0]["before"][0] == 2 and
      rows("SELECT * FROM orders ORDER BY id") == orders, json.dumps(r))

# held with its preview; the approver sees arguments and preview
args = {"sql": "DELETE FROM orders WHERE customer_id = ?", "params": [2]}
held = serve_call("sql.execute", args, "del-grace")
e = err_meta(held)
ticket = e.get("ticket", "")
show = cli("approvals", "show", "--json", ticket, "--state", STATE)
shown = json.loads(show.stdout) if show.returncode == 0 else {}
check("sql_held_with_preview",
      e.get("code") == "awaiting_approval" and e.get("preview", {}).get("structured", {})
      .get("rows_changed") == 2 and rows("SELECT count(*) FROM orders") == [(5,)] and
      shown.get("arguments") == args and
      shown.get("preview", {}).get("structured", {}).get("dry_run") is True,
      json.dumps(held) + show.stdout + show.stderr)
# for a person: the rows the real dry run says would go, as a table
human = cli("approvals", "show", ticket, "--state", STATE).stdout
check("sql_preview_for_a_person", "2 rows would change in orders:" in human and
      "\n  orders (delete)\n" in human and
      len([x for x in human.splitlines() if x.startswith("    -  ")]) == 2, human)

# approved: the retry runs it once, later retries replay byte for byte
approve(ticket)
first = serve_call("sql.execute", args, "del-grace")
again = serve_call("sql.execute", args, "del-grace")
check("sql_runs_once", not first.get("isError") and
      first["structuredContent"].get("call_id") == ticket and first == again and
      rows("SELECT id FROM orders ORDER BY id") == [(1,), (4,), (5,)] and
      rows("SELECT count(*) FROM toolgate_undo") == [(1,)], json.dumps(first))

# rollback: a dry run first (nothing restored), then for real, then again
dry = rollback(ticket, "--dry-run")
check("rollback_dry_run", dry.returncode == 0 and '"restored_rows": 2' in dry.stdout and
      rows("SELECT count(*) FROM orders") == [(3,)], dry.stdout + dry.stderr)
rb = rollback(ticket)
check("sql_rolled_back", rb.returncode == 0 and "rolled back by alice (sql.undo@1.0.0)" in
      rb.stdout and rows("SELECT * FROM orders ORDER BY id") == orders,
      rb.stdout + rb.stderr)
st = json.loads(cli("approvals", "show", "--json", ticket, "--state", STATE).stdout or "{}")
rb2 = rollback(ticket)
lst = cli("rollback", "list", "--state", STATE)
check("rollback_recorded", st.get("state") == "compensated" and rb2.returncode == 0 and
      "rolled back already" in rb2.stdout and f"{ticket}  succeeded" in lst.stdout and
      "1 rollback, 1 succeeded (100% of those that ended)" in lst.stdout,
      json.dumps(st) + rb2.stdout + lst.stdout)

# a statement that would fail is answered at once: no ticket, key free
bad = serve_call("sql.execute", {"sql": "DELETE FROM nosuch"}, "bad-1")
lst = cli("approvals", "list", "--all", "--state", STATE)
check("sql_failing_dry_run_no_ticket", bad.get("isError") and "no such table" in
      json.dumps(bad) and lst.stdout.count("sql.execute") == 1, json.dumps(bad) + lst.stdout)

# DROP TABLE: held, approved, run, rolled back with its rows and indexes
ticket, held, done = held_then_run("sql.execute", {"sql": "DROP TABLE orders"}, "drop-1")
gone = rows("SELECT count(*) FROM sqlite_master WHERE name = 'orders'")
rb = rollback(ticket)
check("sql_drop_table_rolled_back", done is not None and not done.get("isError") and
      gone == [(0,)] and rb.returncode == 0 and
      rows("SELECT * FROM orders ORDER BY id") == orders, json.dumps(done) + rb.stderr)

# REPLACE overwrites a row: its before-image is kept, and the undo puts it back
products = rows("SELECT * FROM products ORDER BY id")
ticket, _, done = held_then_run("sql.execute", {"sql": "REPLACE INTO products VALUES "
                                                "(2, 'screen', 1)"}, "replace-1")
replaced = rows("SELECT * FROM products WHERE id = 2")
rb = rollback(ticket)
check("sql_replace_rolled_back", done is not None and not done.get("isError") and
      replaced == [(2, "screen", 1)] and rb.returncode == 0 and
      rows("SELECT * FROM products ORDER BY id") == products, json.dumps(done)[:600] + rb.stderr)

# a conflict: a row changed after the call is not overwritten
ticket, _, done = held_then_run("sql.execute", {"sql": "UPDATE products SET price_cents = 1 "
                                                "WHERE id = 3"}, "price-1")
db = sqlite3.connect(DB)
db.execute("UPDATE products SET price_cents = 2 WHERE id = 3")
db.commit()
db.close()
rb = rollback(ticket)
lst = cli("rollback", "list", "--state", STATE)
st = json.loads(cli("approvals", "show", "--json", ticket, "--state", STATE).stdout or "{}")
check("sql_conflict_not_overwritten", rb.returncode == 1 and "changed since the call" in
      rb.stdout + rb.stderr and rows("SELECT price_cents FROM products WHERE id = 3") == [(2,)]
      and st.get("state") == "executed" and f"{ticket}  failed" in lst.stdout,
      rb.stdout + rb.stderr + lst.stdout)

# statements with no rollback story are refused before any ticket
r = serve_call("sql.execute", {"sql": "ALTER TABLE orders ADD COLUMN note TEXT"}, "alter-1")
check("sql_no_rollback_story_refused", r.get("isError") and "can undo" in json.dumps(r),
      json.dumps(r))

# fs.write: the diff as preview, the prior version back on rollback
before = open(os.path.join(WS, "notes.txt")).read()
ticket, held, done = held_then_run("fs.write", {"path": "notes.txt", "content": "replaced\n"},
                                   "w-1")
pv = err_meta(held).get("preview", {}).get("structured", {})
after = open(os.path.join(WS, "notes.txt")).read()
rb = rollback(ticket)
check("fs_write_rolled_back", "+replaced" in pv.get("diff", "") and done is not None and
      not done.get("isError") and after == "replaced\n" and rb.returncode == 0 and
      open(os.path.join(WS, "notes.txt")).read() == before,
      json.dumps(held) + json.dumps(done) + rb.stdout + rb.stderr)

# fs.write of a new file in a new folder: rollback removes both
ticket, _, done = held_then_run("fs.write", {"path": "out/new.txt", "content": "x"}, "w-2")
made = os.path.exists(os.path.join(WS, "out/new.txt"))
rb = rollback(ticket)
check("fs_write_new_file_rolled_back", made and rb.returncode == 0 and
      not os.path.exists(os.path.join(WS, "out")), rb.stdout + rb.stderr)

# what the compensation answers is shown escaped: a path with a bidi
# override, an isolate, an ESC and a CSI (the same JSON, parsed; fs.undo
# names the path, and shows no content)
bidi = "notes/b\u202eid\u2066i\x1b[2J\x9b2J.txt"
ticket, _, done = held_then_run("fs.write", {"path": bidi, "content": "x\n"}, "w-bidi")
rb = rollback(ticket, "--dry-run")
shown = rb.stdout[:rb.stdout.rfind("}") + 1]
try:
    path = json.loads(shown).get("path", "")
except ValueError:
    path = ""
rb2 = rollback(ticket)
check("rollback_shows_hidden_escaped", done is not None and not done.get("isError") and
      rb.returncode == 0 and not any(ch in rb.stdout + rb2.stdout for ch in "\u202e\u2066\x1b\x9b")
      and "\\u202E" in rb.stdout and path == bidi and rb2.returncode == 0,
      json.dumps(done) + repr(rb.stdout) + rb.stderr)

# fs.delete, and a dry run of it that keeps the file
r = serve_call("fs.delete", {"path": "README.md"}, dry=True)
kept = os.path.exists(os.path.join(WS, "README.md"))
ticket, _, done = held_then_run("fs.delete", {"path": "README.md"}, "d-1")
deleted = not os.path.exists(os.path.join(WS, "README.md"))
rb = rollback(ticket)
check("fs_delete_rolled_back", not r.get("isError") and kept and deleted and
      rb.returncode == 0 and os.path.exists(os.path.join(WS, "README.md")),
      json.dumps(r) + rb.stdout + rb.stderr)

# no way out of the workspace, nor into the undo records
r1 = serve_call("fs.write", {"path": "../escape.txt", "content": "x"}, "w-3")
r2 = serve_call("fs.write", {"path": ".toolgate/undo/x/meta.json", "content": "{}"}, "w-4")
check("fs_paths_confined", r1.get("isError") and "outside the workspace" in json.dumps(r1) and
      r2.get("isError") and "undo records" in json.dumps(r2) and
      not os.path.exists(os.path.join(TMP, "escape.txt")), json.dumps(r1) + json.dumps(r2))

# a tool without dry-run support is refused a dry run; a read's dry run is the call
r = serve_call("sql.query", {"sql": "SELECT count(*) AS n FROM orders"}, dry=True)
check("read_dry_run_is_the_call", not r.get("isError") and
      r["structuredContent"]["rows"] == [[5]], json.dumps(r))

# a rollback a crash interrupted (logged as running) is resumed when the gateway starts
ticket, _, done = held_then_run("sql.execute", {"sql": "DELETE FROM customers WHERE id = 4"},
                                "crash-1")
state_db = sqlite3.connect(os.path.join(STATE, "toolgate.db"))
state_db.execute("INSERT INTO rollbacks (call_id, state, requested_by, attempts, started) "
                 "VALUES (?, 'running', 'alice', 1, strftime('%s'))", (ticket,))
state_db.commit()
state_db.close()
p = subprocess.run([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE,
                    "--policy", POLICY], input="", capture_output=True, text=True, timeout=60)
sanitizer(p.stderr)
st = json.loads(cli("approvals", "show", "--json", ticket, "--state", STATE).stdout or "{}")
check("interrupted_rollback_resumed", "resumed 1 interrupted rollback, 0 failed" in p.stderr and
      rows("SELECT count(*) FROM customers") == [(4,)] and st.get("state") == "compensated",
      p.stderr + json.dumps(st))

# the rollback of a call that never ran, or of an unknown one, is refused
held = serve_call("fs.write", {"path": "p.txt", "content": "x"}, "w-5")
rb = rollback(err_meta(held).get("ticket", ""))
rb2 = rollback("0" * 32)
check("rollback_refusals", rb.returncode == 1 and "only an executed call" in rb.stderr and
      rb2.returncode == 1 and "no such ticket" in rb2.stderr, rb.stderr + rb2.stderr)

# plans (sagas): one approval for several writes; a failing step undoes
# the ones before it, newest first; a finished plan rolls back as one
with open(POLICY) as f:
    pol = json.load(f)
pol["principals"]["local"]["scopes"].append("plan.*:write")
pol["principals"]["alice"]["scopes"].append("plan.*:approve")
pol["principals"]["carol"] = {"scopes": ["plan.*:approve"]}
with open(POLICY, "w") as f:
    json.dump(pol, f)
ALICE = cli("token", "issue", "--state", STATE, "--policy", POLICY, "--principal", "alice",
            "--scope", "sql.*:approve", "--scope", "fs.*:approve", "--scope",
            "plan.*:approve").stdout.strip()
good = {"steps": [
    {"tool": "sql.execute", "arguments": {"sql": "INSERT INTO customers VALUES (9, 'Ida', 'SE')"}},
    {"tool": "fs.write", "arguments": {"path": "receipts/9.txt", "content": "customer 9\n"}},
    {"tool": "sql.execute", "arguments": {"sql": "UPDATE products SET price_cents = 1000 "
                                                 "WHERE id = 3"}}]}
r = serve_call("plan.run", good, dry=True)
previews = (r.get("structuredContent") or {}).get("steps", [])
check("plan_dry_run", not r.get("isError") and len(previews) == 3 and
      previews[1]["preview"]["diff"].startswith("--- /dev/null") and
      rows("SELECT count(*) FROM customers WHERE id = 9") == [(0,)], json.dumps(r)[:800])
# approving a plan approves its steps: plan.*:approve alone is not enough
held = serve_call("plan.run", good, "plan-1")
carol = cli("token", "issue", "--state", STATE, "--policy", POLICY, "--principal", "carol",
            "--scope", "plan.*:approve").stdout.strip()
c = cli("approvals", "approve", err_meta(held).get("ticket", ""), "--state", STATE, "--policy",
        POLICY, "--token", carol)
check("plan_approver_covers_steps", c.returncode == 1 and
      "carol may not approve plan.run@1.0.0 (it needs the scope sql.execute:approve)" in c.stderr,
      c.stdout + c.stderr)
# for a person: the plan's steps numbered, each with its preview (a row, a diff)
human = cli("approvals", "show", err_meta(held).get("ticket", ""), "--state", STATE).stdout
check("plan_preview_for_a_person", "\n  1. sql.execute@1.0.0\n" in human and
      "\n  2. fs.write@1.0.0\n" in human and "+customer 9" in human and
      "\n  3. sql.execute@1.0.0\n" in human and "1 row would change in customers" in human,
      human)
ticket, held, done = held_then_run("plan.run", good, "plan-1")
sc = (done or {}).get("structuredContent") or {}
check("plan_runs", done is not None and not done.get("isError") and sc.get("state") == "done" and
      [x["state"] for x in sc["steps"]] == ["done", "done", "done"] and
      rows("SELECT name FROM customers WHERE id = 9") == [("Ida",)] and
      os.path.exists(os.path.join(WS, "receipts/9.txt")) and
      rows("SELECT price_cents FROM products WHERE id = 3") == [(1000,)],
      json.dumps(held)[:500] + json.dumps(done)[:800])
rb = rollback(ticket)
check("plan_rolled_back", rb.returncode == 0 and "plan.undo@1.0.0" in rb.stdout and
      rows("SELECT count(*) FROM customers WHERE id = 9") == [(0,)] and
      not os.path.exists(os.path.join(WS, "receipts")) and
      rows("SELECT price_cents FROM products WHERE id = 3") != [(1000,)],
      rb.stdout[-800:] + rb.stderr)
# step 3 passes its dry run (customer 10 is not there yet) but fails for
# real (step 1 made it): steps 2 and 1 are undone
bad = {"steps": [
    {"tool": "sql.execute", "arguments": {"sql": "INSERT INTO customers VALUES (10, 'Jo', 'NO')"}},
    {"tool": "fs.write", "arguments": {"path": "receipts/10.txt", "content": "customer 10\n"}},
    {"tool": "sql.execute", "arguments": {"sql": "INSERT INTO customers VALUES (10, 'Jo', 'NO')"}}]}
ticket, held, done = held_then_run("plan.run", bad, "plan-2")
sc = err_meta(done or {})  # a failed call's structured answer
check("plan_failure_compensates", done is not None and done.get("isError") and
      sc.get("state") == "compensated" and
      [x["state"] for x in sc["steps"]] == ["compensated", "compensated", "failed"] and
      rows("SELECT count(*) FROM customers WHERE id = 10") == [(0,)] and
      not os.path.exists(os.path.join(WS, "receipts/10.txt")), json.dumps(done)[:1200])
# what a plan may hold
r1 = serve_call("plan.run", {"steps": [{"tool": "plan.run", "arguments": {"steps": []}}]}, "p-3")
r2 = serve_call("plan.run", {"steps": [{"tool": "sql.query", "arguments": {"sql": "SELECT 1"}},
                                       {"tool": "nope"}]}, "p-4")
check("plan_refusals", "cannot hold a plan" in json.dumps(r1) and
      "step 2: tool 'nope': no such tool" in json.dumps(r2), json.dumps([r1, r2])[:800])
# a gateway that died while undoing a plan: the next one finishes the undo
ticket, held, done = held_then_run("plan.run", good, "plan-5")
db = sqlite3.connect(os.path.join(STATE, "toolgate.db"))
db.execute("UPDATE sagas SET state = 'compensating', runner = ? WHERE id = ?", ("0" * 32, ticket))
db.execute("UPDATE saga_steps SET state = 'compensated' WHERE saga_id = ? AND n = 2", (ticket,))
db.commit()
db.close()
# (step 3 is undone already; steps 2 and 1 are left for the next gateway)
p = subprocess.run([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE,
                    "--policy", POLICY], input="", capture_output=True, text=True, timeout=60)
sanitizer(p.stderr)
state = sqlite3.connect(os.path.join(STATE, "toolgate.db")).execute(
    "SELECT state FROM sagas WHERE id = ?", (ticket,)).fetchone()
check("plan_undo_resumed_after_crash", "resumed 1 interrupted plan, 0 neither" in p.stderr and
      state == ("compensated",) and rows("SELECT count(*) FROM customers WHERE id = 9") == [(0,)]
      and not os.path.exists(os.path.join(WS, "receipts/9.txt")), p.stderr + str(state))

# a retry runs only the version that was approved: a newer sql.execute
# appears between the approval and the retry (each call here is a new
# gateway, loading the catalogue afresh)
newer = os.path.join(CAT, "sql.execute-1.0.1.json")
with open(os.path.join(CAT, "sql.execute-1.0.0.json")) as f:
    contract = json.load(f)
contract["version"] = "1.0.1"
held1 = serve_call("sql.execute", {"sql": "DELETE FROM orders WHERE id = 4"}, "ver-1")
held2 = serve_call("plan.run", {"steps": [{"tool": "sql.execute", "arguments": {
    "sql": "DELETE FROM orders WHERE id = 4"}}]}, "ver-2")
for h in (held1, held2):
    approve(err_meta(h).get("ticket", ""))
with open(newer, "w") as f:
    json.dump(contract, f)
r1 = serve_call("sql.execute", {"sql": "DELETE FROM orders WHERE id = 4"}, "ver-1")
r2 = serve_call("plan.run", {"steps": [{"tool": "sql.execute", "arguments": {
    "sql": "DELETE FROM orders WHERE id = 4"}}]}, "ver-2")
os.unlink(newer)
check("approved_version_only", err_meta(r1).get("code") == "version_changed" and
      "approved sql.execute@1.0.0" in json.dumps(r1) and
      "version_changed" in json.dumps(r2) and "not to the 1.0.0 its approver saw" in
      json.dumps(r2) and rows("SELECT count(*) FROM orders WHERE id = 4") == [(1,)],
      json.dumps([r1, r2])[:1200])

# waiting within the call's budget: approved meanwhile, the call runs and
# answers at once; not decided in time, it is held; rejected meanwhile, it
# hears the rejection
import threading  # noqa: E402


def decide_soon(verb, *extra):
    def run():
        for _ in range(100):
            ids = [t["id"] for t in json.loads(
                cli("approvals", "list", "--json", "--state", STATE).stdout or "{}")
                .get("tickets", []) if t["tool"] == "sql.execute@1.0.0"]
            if ids:
                cli("approvals", verb, ids[-1], "--state", STATE, "--policy", POLICY,
                    "--token", ALICE, *extra)
                return
            time.sleep(0.1)
    t = threading.Thread(target=run)
    t.start()
    return t


import time  # noqa: E402

t = decide_soon("approve")
start = time.time()
r = serve_call("sql.execute", {"sql": "UPDATE products SET price_cents = 950 WHERE id = 3"},
               "wait-1", wait=20000)
t.join()
took = time.time() - start
r2 = serve_call("sql.execute", {"sql": "DELETE FROM products WHERE id = 2"}, "wait-2", wait=300)
tid2 = err_meta(r2).get("ticket", "")
cli("approvals", "cancel", tid2, "--state", STATE, "--policy", POLICY, "--token",
    cli("token", "issue", "--state", STATE, "--policy", POLICY, "--principal", "local",
        "--scope", "sql.*:write").stdout.strip())
t = decide_soon("reject", "--reason", "not today")
r3 = serve_call("sql.execute", {"sql": "DELETE FROM products WHERE id = 1"}, "wait-3",
                wait=20000)
t.join()
bad = serve_call("sql.execute", {"sql": "DELETE FROM products"}, "wait-4", wait=500000)
check("approval_wait_budget",
      not r.get("isError") and r["structuredContent"]["rows_changed"] == 1 and took < 15 and
      rows("SELECT price_cents FROM products WHERE id = 3") == [(950,)] and
      err_meta(r2).get("code") == "awaiting_approval" and
      err_meta(r2).get("preview", {}).get("structured", {}).get("rows_changed") == 1 and
      err_meta(r3).get("code") == "rejected" and "not today" in json.dumps(r3) and
      "0 to 120000" in json.dumps(bad),
      json.dumps([r, r2, r3, bad])[:1500])

# the admin API over HTTP: the same tickets and rollbacks, as JSON
import urllib.error  # noqa: E402
import urllib.request  # noqa: E402

from mcptest import start_http  # noqa: E402

with open(POLICY, "w") as f:
    json.dump({"writes": {"wait": "0"},  # held calls answered at once
               "principals": {
        "local": {"scopes": ["sql.*:write", "fs.*:write", "plan.*:write", "*:read"]},
        "alice": {"scopes": ["sql.*:approve", "fs.*:approve", "plan.*:approve"]},
        "bob": {"scopes": ["fs.*:approve"]}}}, f)
AGENT = cli("token", "issue", "--state", STATE, "--policy", POLICY, "--principal", "local",
            "--scope", "sql.*:write").stdout.strip()
BOB = cli("token", "issue", "--state", STATE, "--policy", POLICY, "--principal", "bob",
          "--scope", "fs.*:approve").stdout.strip()
srv, port = start_http([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE,
                        "--policy", POLICY, "--record", os.path.join(TMP, "record")],
                       os.path.join(TMP, "admin.err"))


def admin(method, path, token, body=None, raw=None):
    """(status, JSON answer) of one admin request."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method,
                                 headers={"Authorization": "Bearer " + token} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        text = e.read()
        return e.code, json.loads(text) if text.startswith(b"{") else text


def mcp_call(tool, args, key):
    msg = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
           "params": {"name": tool, "arguments": args,
                      "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                "io.modelcontextprotocol/clientCapabilities": {},
                                "dev.toolgate/idempotencyKey": key}}}
    req = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=json.dumps(msg).encode(),
                                 method="POST", headers={
                                     "Content-Type": "application/json",
                                     "Accept": "application/json, text/event-stream",
                                     "MCP-Protocol-Version": "2026-07-28",
                                     "Mcp-Method": "tools/call", "Mcp-Name": tool,
                                     "Authorization": "Bearer " + AGENT})
    with urllib.request.urlopen(req, timeout=60) as r:
        body = r.read().decode()
    for line in body.splitlines():
        if line.startswith("data: ") and '"id"' in line:
            return json.loads(line[6:])["result"]
    return json.loads(body)["result"]


args = {"sql": "UPDATE customers SET country = 'XX' WHERE id = 1"}
held = mcp_call("sql.execute", args, "admin-1")
tid = err_meta(held).get("ticket", "")
st_a, listed = admin("GET", "/admin/tickets", ALICE)
listed = listed if isinstance(listed, dict) else {"tickets": []}
st_b, bob_list = admin("GET", "/admin/tickets", BOB)
st_o, own = admin("GET", f"/admin/tickets/{tid}", AGENT)
st_x, _ = admin("GET", f"/admin/tickets/{tid}", BOB)
check("admin_lists_what_the_caller_may_see",
      st_a == 200 and tid in [t["id"] for t in listed["tickets"]] and
      "preview" not in listed["tickets"][0] and
      own["preview"]["structured"]["rows_changed"] == 1 and
      st_b == 200 and tid not in [t["id"] for t in bob_list["tickets"]] and
      st_o == 200 and own["arguments"] == args and st_x == 403,
      f"{st_a} {st_b} {st_o} {st_x} {json.dumps(listed)[:300]}")
s1, r1 = admin("POST", f"/admin/tickets/{tid}/approve", AGENT)
s2, r2 = admin("POST", f"/admin/tickets/{tid}/reject", ALICE, {})
s3, r3 = admin("POST", f"/admin/tickets/{tid}/approve", BOB)
s4, r4 = admin("POST", f"/admin/tickets/{tid}/approve", ALICE)
s5, r5 = admin("POST", f"/admin/tickets/{tid}/approve", ALICE)
check("admin_decides", s1 == 403 and s2 == 409 and "needs a reason" in json.dumps(r2) and
      s3 == 403 and s4 == 200 and r4["state"] == "approved" and r4["approver"] == "alice" and
      s5 == 409 and "not pending" in json.dumps(r5),
      f"{s1} {s2} {s3} {s4} {s5} {json.dumps([r1, r2, r3, r4, r5])[:600]}")
ran = mcp_call("sql.execute", args, "admin-1")
sd, dry = admin("POST", f"/admin/calls/{tid}/rollback", ALICE, {"dry_run": True})
changed = rows("SELECT country FROM customers WHERE id = 1")
s6, rb6 = admin("POST", f"/admin/calls/{tid}/rollback", ALICE)
s7, rb7 = admin("POST", f"/admin/calls/{tid}/rollback", ALICE)
s8, log = admin("GET", "/admin/rollbacks", ALICE)
check("admin_rolls_back", not ran.get("isError") and sd == 200 and dry["dry_run"] and
      changed == [("XX",)] and s6 == 200 and rb6["result"]["restored_rows"] == 1 and
      rows("SELECT country FROM customers WHERE id = 1") == [("GB",)] and
      s7 == 200 and rb7.get("already") and s8 == 200 and
      tid in [r["call_id"] for r in log["rollbacks"] if r["state"] == "succeeded"],
      f"{sd} {s6} {s7} {s8} {json.dumps([ran, dry, rb6, rb7])[:800]}")
bad = [admin("GET", "/admin/tickets/" + "0" * 32, ALICE)[0],
       admin("GET", "/admin/nothing", ALICE)[0],
       admin("GET", "/admin/tickets?state=maybe", ALICE)[0],
       admin("POST", f"/admin/tickets/{tid}/reject", ALICE, raw=b"[1]")[0],
       admin("POST", f"/admin/tickets/{tid}/approv", ALICE)[0],
       admin("GET", "/admin/tickets", None)[0],
       admin("GET", "/admin/tickets", ALICE[:-2] + "xx")[0],
       admin("POST", f"/admin/tickets/{tid}/reject", ALICE, raw=b"{" + b" " * 70000 + b"}")[0],
       admin("DELETE", "/admin/tickets", ALICE)[0],
       admin("POST", f"/admin/calls/{'0' * 32}/rollback", ALICE)[0]]
check("admin_bad_requests", bad == [404, 404, 400, 400, 404, 401, 401, 413, 405, 404],
      str(bad))
# a bad token, a missing scope (HTTP), the admin API's refusals: recorded
try:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "sql.execute", "arguments": {"sql": "DELETE FROM orders"},
                       "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                 "io.modelcontextprotocol/clientCapabilities": {}}}}
    req = urllib.request.Request(f"http://127.0.0.1:{port}/mcp",
                                 data=json.dumps(body).encode(), method="POST",
                                 headers={"Authorization": "Bearer " + BOB,
                                          "Content-Type": "application/json",
                                          "Accept": "application/json, text/event-stream",
                                          "MCP-Protocol-Version": "2026-07-28",
                                          "Mcp-Method": "tools/call", "Mcp-Name": "sql.execute"})
    urllib.request.urlopen(req, timeout=10)
except (urllib.error.URLError, OSError):
    pass  # the 403 (any other answer fails the check below)
# stopped, not killed: a refusal's record is queued, not waited for (it
# acknowledges nothing done), so a kill -9 may take it with it
srv.terminate()
srv.wait()
sanitizer(open(os.path.join(TMP, "admin.err")).read())
# the CLI's refusals with --record: the requester approving itself
held = serve_call("sql.execute", {"sql": "DELETE FROM orders WHERE id = 5"}, "rec-1")
cli("approvals", "approve", err_meta(held).get("ticket", ""), "--state", STATE, "--policy",
    POLICY, "--token", AGENT, "--record", os.path.join(TMP, "record"))
events = [json.loads(x) for x in open(os.path.join(TMP, "record")) if '"subject"' in x]
kinds = {(e["outcome"], e["principal"]) for e in events}
why = " ".join(e.get("error", "") for e in events)
check("refusals_recorded",
      ("unauthorized", "") in kinds and "signature does not verify" in why and
      ("forbidden", "bob") in kinds and
      ("admin POST 403", "local") in kinds and ("admin POST 200", "alice") in kinds and
      ("admin GET 404", "alice") in kinds and ("refused", "local") in kinds and
      "local may not approve sql.execute@1.0.0" in why and
      not any(ALICE in json.dumps(e) for e in events),
      json.dumps(sorted(kinds)) + why[:500])

# ---- an overlay dry run: a command tool with no dry run of its own ----------------
# (a contract of this test's only: ws.edit writes, deletes and adds files, and logs
# them in its state directory, which an overlay dry run neither keeps nor lists)
EDIT = {"name": "ws.edit", "version": "1.0.0", "description": "Edits workspace files",
        "owner": {"team": "t", "contact": "t@example.test"}, "authority": "write",
        "dry_run": "overlay", "compensation": {"irreversible": "a test tool"},
        "input_schema": {"type": "object", "properties": {"edits": {"type": "array"}}},
        "executor": {"kind": "command", "argv": ["python3", "/tools/ws_edit.py"],
                     "tier": "strict", "workspace": "write", "state": True,
                     "mounts": [{"host": "tools", "inside": "/tools"}]}}
with open(os.path.join(CAT, "ws.edit-1.0.0.json"), "w") as f:
    json.dump(EDIT, f)
with open(POLICY) as f:
    pol = json.load(f)
pol["principals"]["local"]["scopes"].append("ws.*:write")
pol["principals"]["alice"]["scopes"].append("ws.*:approve")
with open(POLICY, "w") as f:
    json.dump(pol, f)
ALICE = cli("token", "issue", "--state", STATE, "--policy", POLICY, "--principal", "alice",
            "--scope", "ws.*:approve").stdout.strip()
with open(os.path.join(CAT, "tools", "ws_edit.py"), "w") as f:
    f.write("""import json, os, sys
edits = json.loads(sys.stdin.readline())["edits"]
open("/state/edits.log", "a").write(json.dumps(edits) + "\\n")  # its own records
for e in edits:
    p = os.path.join("/workspace", e["path"])
    if "mkdir" in e:
        os.makedirs(p)
        os.chmod(p, e["mkdir"])
    elif e.get("content") is None:
        os.remove(p)
    else:
        os.makedirs(os.path.dirname(p), exist_ok=True)
        open(p, "w").write(e["content"])
print(json.dumps({"content": [{"type": "text", "text": "edited"}], "isError": False}))
""")


def tree(top):
    out = {}
    for d, dirs, files in os.walk(top):
        for n in files:
            with open(os.path.join(d, n), "rb") as f:
                out[os.path.relpath(os.path.join(d, n), top)] = f.read()
    return out


before = tree(WS)
notes = before["notes.txt"].decode()
edits = {"edits": [{"path": "notes.txt", "content": notes.replace("\n", "\nan added line\n", 1)},
                   {"path": "new/plan.md", "content": "# plan\n"},
                   {"path": "README.md", "content": None}]}
layers = set(os.listdir("/tmp"))
dry = serve_call("ws.edit", edits, dry=True)
text = " ".join(c.get("text", "") for c in dry.get("content", []))
LOG = os.path.join(STATE, "tools", "ws", "edits.log")
check("overlay_dry_run_reports_changes",
      not dry.get("isError") and "nothing was written" in text and
      "/state" not in text and not os.path.exists(LOG) and
      "modified file /workspace/notes.txt" in text and "+an added line" in text and
      "added file /workspace/new/plan.md" in text and "added dir /workspace/new" in text and
      "deleted file /workspace/README.md" in text and tree(WS) == before,
      json.dumps(dry)[:3000])
leftover = [n for n in set(os.listdir("/tmp")) - layers if n.startswith("toolgate-overlay-")]

# the report is read with the sandbox user's rights: a file it cannot
# read, which it may delete and write again, shows none of its content
with open(os.path.join(WS, "secret.txt"), "w") as f:
    f.write("TOP-SECRET\n")
os.chmod(os.path.join(WS, "secret.txt"), 0o600)  # root's; the workspace is nobody's
spy = serve_call("ws.edit", {"edits": [{"path": "secret.txt", "content": None},
                                       {"path": "secret.txt", "content": "mine\n"},
                                       {"path": "locked", "mkdir": 0}]}, dry=True)
told = json.dumps(spy)
check("overlay_report_reads_as_the_sandbox_user",
      not spy.get("isError") and "TOP-SECRET" not in told and
      "secret.txt" in told and "unreadable dir /workspace/locked" in told and
      open(os.path.join(WS, "secret.txt")).read() == "TOP-SECRET\n", told[:2000])
os.remove(os.path.join(WS, "secret.txt"))
before = tree(WS)

# what a killed gateway left in /tmp goes with the next one
dead = subprocess.Popen(["true"])
dead.wait()
stale = "/tmp/toolgate-overlay-%d-test" % dead.pid
os.makedirs(stale + "/0/upper")
serve_call("ws.edit", edits, dry=True)
check("overlay_stale_layers_swept", not os.path.exists(stale), stale)
with open("/proc/self/mounts") as f:
    mounted = [x for x in f if "toolgate-overlay-" in x]
check("overlay_layers_removed", not leftover and not mounted, str(leftover) + str(mounted))

# held: the approver sees the changed files; approved, the edit happens
held = serve_call("ws.edit", edits, "ws-1")
ticket = err_meta(held).get("ticket", "")
shown = json.loads(cli("approvals", "show", "--json", ticket, "--state", STATE).stdout or "{}")
changes = {(c["change"], c["path"]) for c in shown.get("preview", {}).get("changes", [])}
approved = cli("approvals", "approve", ticket, "--state", STATE, "--policy", POLICY, "--token",
               ALICE)
ran = serve_call("ws.edit", edits, "ws-1")
after = tree(WS)
check("overlay_preview_then_run",
      {("modified", "/workspace/notes.txt"), ("added", "/workspace/new/plan.md"),
       ("deleted", "/workspace/README.md")} <= changes and approved.returncode == 0 and
      not ran.get("isError") and "README.md" not in after and
      after.get("new/plan.md") == b"# plan\n" and b"an added line" in after["notes.txt"] and
      not any(p.startswith("/state") for _, p in changes) and os.path.isfile(LOG),
      json.dumps(shown)[:1500] + approved.stderr + json.dumps(ran))

outcomes = [json.loads(x)["outcome"] for x in open(os.path.join(TMP, "record"))]
check("recorded", "dry_run" in outcomes and "rolled_back" in outcomes and
      "rollback_failed" in outcomes and "dry_run_failed" in outcomes, " ".join(outcomes))
check("no_sanitizer_reports", not REPORTS, "\n".join(REPORTS))
check.done()
