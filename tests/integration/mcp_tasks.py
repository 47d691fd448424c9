"""A write call held for approval, followed as an MCP task (docs/MCP.md):
the 2026-07-28 tasks extension over HTTP (the call becomes a task while
it awaits its approval; tasks/get, tasks/cancel; principals kept apart)
and the 2025-11-25 revision's tasks over stdio (the client asks for one;
tasks/get, tasks/list, tasks/result, tasks/cancel).

    mcp_tasks.py TOOLGATE REPO TMPDIR
"""
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import threading
import time

from mcptest import Checks, nobody_workspace, request, start_http

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
check = Checks("tasks")
CAT, DATA, STATE, WS = (os.path.join(TMP, d) for d in ("catalog", "data", "state", "ws"))
POLICY = os.path.join(TMP, "policy.json")
DB = os.path.join(DATA, "shop.db")
EXT = "io.modelcontextprotocol/tasks"
REPORTS = []


def sanitizer(text):
    """Under ASan+UBSan, a report anywhere fails the run."""
    if "Sanitizer" in text or "runtime error:" in text:
        REPORTS.append(text[-2000:])


def cli(*argv):
    p = subprocess.run([TG] + list(argv), capture_output=True, text=True, timeout=60)
    sanitizer(p.stderr)
    return p


def setup():
    shutil.rmtree(TMP, ignore_errors=True)
    shutil.copytree(os.path.join(REPO, "examples/catalog"), CAT)
    os.makedirs(DATA)
    db = sqlite3.connect(DB)
    with open(os.path.join(REPO, "examples/data/shop.sql")) as f:
        db.executescript(f.read())
    db.commit()
    db.close()
    for n in (DATA, DB):
        os.chown(n, 65534, 65534)  # the sandbox writes as nobody
    nobody_workspace(REPO, TMP)
    with open(POLICY, "w") as f:
        # held calls answered at once; sql.execute without a key of the
        # client's refused, a call that fails at once (below)
        json.dump({"writes": {"wait": "0", "client_key": ["sql.execute"]},
                   "principals": {
            "local": {"scopes": ["sql.*:write", "*:read"]},
            "agent": {"scopes": ["sql.*:write", "*:read"]},
            "bob": {"scopes": ["sql.*:write", "*:read"]},
            "alice": {"scopes": ["sql.*:approve"]}}}, f)


def token(who, *scopes):
    argv = ["token", "issue", "--state", STATE, "--policy", POLICY, "--principal", who,
            "--ttl", "1h"]
    for s in scopes:
        argv += ["--scope", s]
    return cli(*argv).stdout.strip()


def rows(sql):
    db = sqlite3.connect(DB)
    try:
        return db.execute(sql).fetchall()
    finally:
        db.close()


def ticket_state(ticket):
    p = cli("approvals", "show", "--json", ticket, "--state", STATE)
    return json.loads(p.stdout).get("state") if p.returncode == 0 else p.stderr


# ---- the 2026-07-28 extension, over HTTP -------------------------------------------

def modern(port, tok, method, params, tasks=True, name=None):
    caps = {"extensions": {EXT: {}}} if tasks else {}
    body = {"jsonrpc": "2.0", "id": 1, "method": method,
            "params": dict(params, _meta=dict(params.get("_meta", {}), **{
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": caps}))}
    h = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method,
         "Authorization": "Bearer " + tok}
    if name is not None:
        h["Mcp-Name"] = name
    r = request(port, "POST", body, h, timeout=60)
    text = r.read().decode()
    for line in text.splitlines():  # an SSE answer: its last message
        if line.startswith("data: ") and '"id"' in line:
            text = line[6:]
    return json.loads(text)


def call(port, tok, args, key, tasks=True):
    return modern(port, tok, "tools/call",
                  {"name": "sql.execute", "arguments": args,
                   "_meta": {"dev.toolgate/idempotencyKey": key}}, tasks, "sql.execute")


def get(port, tok, tid, tasks=True):
    return modern(port, tok, "tasks/get", {"taskId": tid}, tasks, tid)


def until(port, tok, tid, want, seconds=30):
    end = time.time() + seconds
    while True:
        r = get(port, tok, tid).get("result", {})
        if r.get("status") in want or time.time() > end:
            return r
        time.sleep(0.1)


def ticket_of(task):
    msg = task.get("statusMessage") or ""
    return msg.split("ticket ")[1].split()[0] if "ticket " in msg else ""


def held(port, tok, tid, seconds=30):
    """The task once its call awaits approval (the dry run before it may
    take a while on a loaded machine), or as it is after seconds."""
    end = time.time() + seconds
    while True:
        r = get(port, tok, tid).get("result", {})
        if ticket_of(r) or r.get("status") != "working" or time.time() > end:
            return r
        time.sleep(0.1)


setup()
AGENT, BOB = token("agent", "sql.*:write", "*:read"), token("bob", "sql.*:write", "*:read")
ALICE = token("alice", "sql.*:approve")
p, port = start_http([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE, "--policy", POLICY,
                      "--record", os.path.join(TMP, "record")], os.path.join(TMP, "http.err"))
try:
    listed = modern(port, AGENT, "tools/list", {}).get("result", {}).get("tools", [])
    support = {t["name"]: (t.get("execution") or {}).get("taskSupport") for t in listed}
    check("write_tools_offer_tasks", support.get("sql.execute") == "optional" and
          support.get("sql.query") is None, json.dumps(support))

    # held for approval: the call becomes a task that awaits the decision
    upd = {"sql": "UPDATE products SET price_cents = price_cents + 1 WHERE id = ?", "params": [1]}
    price = rows("SELECT price_cents FROM products WHERE id = 1")
    created = call(port, AGENT, upd, "t-upd").get("result", {})
    tid = created.get("taskId", "")
    task = held(port, AGENT, tid)
    ticket = ticket_of(task)
    check("held_call_becomes_task", created.get("resultType") == "task" and
          task.get("status") == "working" and ticket and
          "awaiting approval" in task.get("statusMessage", "") and
          rows("SELECT price_cents FROM products WHERE id = 1") == price,
          json.dumps(created) + json.dumps(task))

    # another principal, or a request without the extension: no such task
    other = get(port, BOB, tid)
    undeclared = get(port, AGENT, tid, tasks=False)
    check("task_bound_to_principal",
          other.get("error", {}).get("code") == -32602 and "result" not in other and
          undeclared.get("error", {}).get("code") == -32021, json.dumps(other) +
          json.dumps(undeclared))

    # the approval comes from a person: the task runs the write, once
    ok = cli("approvals", "approve", ticket, "--state", STATE, "--policy", POLICY,
             "--token", ALICE)
    done = until(port, AGENT, tid, ("completed", "failed"))
    res = done.get("result", {})
    check("approved_task_completes", ok.returncode == 0 and done.get("status") == "completed"
          and res.get("isError") is False and
          res.get("structuredContent", {}).get("call_id") == ticket and
          rows("SELECT price_cents FROM products WHERE id = 1") == [(price[0][0] + 1,)] and
          ticket_state(ticket) == "executed", json.dumps(done) + ok.stderr)

    # a retry under the same key (a client that does not follow tasks)
    # gets the same single result: nothing runs again
    again = call(port, AGENT, upd, "t-upd", tasks=False).get("result", {})
    check("task_result_is_the_keys", again.get("structuredContent") ==
          res.get("structuredContent") and
          rows("SELECT price_cents FROM products WHERE id = 1") == [(price[0][0] + 1,)],
          json.dumps(again))

    # cancelled while it awaits approval: the request is withdrawn
    dele = {"sql": "DELETE FROM orders WHERE id = ?", "params": [1]}
    tid2 = call(port, AGENT, dele, "t-del").get("result", {}).get("taskId", "")
    ticket2 = ticket_of(held(port, AGENT, tid2))
    ack = modern(port, AGENT, "tasks/cancel", {"taskId": tid2}, name=tid2).get("result", {})
    t2 = get(port, AGENT, tid2).get("result", {})
    for _ in range(50):
        if ticket_state(ticket2) == "cancelled":
            break
        time.sleep(0.1)
    late = cli("approvals", "approve", ticket2, "--state", STATE, "--policy", POLICY,
               "--token", ALICE)
    check("cancel_withdraws_the_request", ack == {"resultType": "complete", "_meta": ack.get(
          "_meta")} and t2.get("status") == "cancelled" and
          ticket_state(ticket2) == "cancelled" and late.returncode != 0 and
          rows("SELECT count(*) FROM orders WHERE id = 1") == [(1,)],
          json.dumps(ack) + json.dumps(t2) + ticket2 + late.stderr)

    # rejected: the task completes with the refusal as the tool's error
    tid3 = call(port, AGENT, dele, "t-rej").get("result", {}).get("taskId", "")
    ticket3 = ticket_of(held(port, AGENT, tid3))
    rej = cli("approvals", "reject", ticket3, "--reason", "not today", "--state", STATE,
              "--policy", POLICY, "--token", ALICE)
    t3 = until(port, AGENT, tid3, ("completed", "failed"))
    check("rejected_task_completes_with_error", rej.returncode == 0 and
          t3.get("status") == "completed" and t3.get("result", {}).get("isError") is True and
          "not today" in json.dumps(t3) and
          rows("SELECT count(*) FROM orders WHERE id = 1") == [(1,)], json.dumps(t3) + rej.stderr)

    # a client without the extension is answered as before: held, at once
    held = call(port, AGENT, dele, "t-plain", tasks=False).get("result", {})
    check("no_extension_no_task", "taskId" not in held and held.get("isError") is True and
          (held.get("_meta") or {}).get("dev.toolgate/error", {}).get("code") ==
          "awaiting_approval", json.dumps(held))

    # an unknown task, a malformed update
    unknown = get(port, AGENT, "0" * 32).get("error", {})
    bad = modern(port, AGENT, "tasks/update", {"taskId": tid, "inputResponses": [1]},
                 name=tid).get("error", {})
    check("task_bad_input", unknown.get("code") == -32602 and bad.get("code") == -32602,
          json.dumps(unknown) + json.dumps(bad))

    # the record says when each task began and how it ended
    with open(os.path.join(TMP, "record")) as f:
        lines = [json.loads(x) for x in f if '"subject":"task ' in x]
    seen = {(x["subject"][5:], x["outcome"]) for x in lines}
    check("tasks_recorded", {(tid, "task_created"), (tid, "task_completed"),
                             (tid2, "task_created"), (tid2, "task_cancelled"),
                             (tid3, "task_completed")} <= seen and
          all(x["principal"] == "agent" for x in lines), json.dumps(lines)[:2000])
finally:
    p.terminate()
    p.wait(timeout=30)
    with open(os.path.join(TMP, "http.err")) as f:
        sanitizer(f.read())


# ---- the 2025-11-25 revision's tasks, over stdio -----------------------------------

class Stdio:
    """toolgate serve on stdio as principal local: requests, answers by id."""

    def __init__(self, version):
        self.p = subprocess.Popen([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE, "--policy",
                                   POLICY, "--record", os.path.join(TMP, "record")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(os.path.join(TMP, "stdio.err"), "a"), text=True)
        self.answers, self.lock, self.next = {}, threading.Condition(), 0
        threading.Thread(target=self.read, daemon=True).start()
        self.init = self.ask("initialize", {"protocolVersion": version, "capabilities": {},
                                            "clientInfo": {"name": "t", "version": "1"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0",
                                       "method": "notifications/initialized"}) + "\n")
        self.p.stdin.flush()

    def read(self):
        for line in self.p.stdout:
            msg = json.loads(line)
            with self.lock:
                if "id" in msg:
                    self.answers[msg["id"]] = msg
                    self.lock.notify_all()

    def send(self, method, params):
        with self.lock:
            self.next += 1
            n = self.next
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": n, "method": method,
                                       "params": params}) + "\n")
        self.p.stdin.flush()
        return n

    def wait(self, n, timeout=60):
        with self.lock:
            self.lock.wait_for(lambda: n in self.answers, timeout)
            return self.answers.pop(n, {"error": {"message": "no answer"}})

    def ask(self, method, params):
        return self.wait(self.send(method, params))

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


s = Stdio("2025-11-25")
try:
    caps = s.init.get("result", {}).get("capabilities", {})
    check("legacy_tasks_capability", caps.get("tasks", {}).get("requests") ==
          {"tools": {"call": {}}} and "list" in caps["tasks"] and "cancel" in caps["tasks"],
          json.dumps(caps))

    ins = {"sql": "INSERT INTO customers (name, country) VALUES (?, ?)",
           "params": ["Task", "NL"]}
    made = s.ask("tools/call", {"name": "sql.execute", "arguments": ins, "task": {"ttl": 600000},
                                "_meta": {"dev.toolgate/idempotencyKey": "l-ins"}})
    task = made.get("result", {}).get("task", {})
    tid = task.get("taskId", "")
    # tasks/result waits for the task's end, while other requests go on
    waiting = s.send("tasks/result", {"taskId": tid})
    ticket = ""
    for _ in range(100):
        g = s.ask("tasks/get", {"taskId": tid}).get("result", {})
        ticket = ticket_of(g)
        if ticket:
            break
        time.sleep(0.1)
    listing = s.ask("tasks/list", {}).get("result", {}).get("tasks", [])
    check("legacy_task_created", task.get("status") == "working" and task.get("ttl") == 600000
          and task.get("pollInterval") and g.get("status") == "working" and ticket and
          [t["taskId"] for t in listing] == [tid] and
          rows("SELECT count(*) FROM customers WHERE name = 'Task'") == [(0,)],
          json.dumps(made) + json.dumps(g))

    cli("approvals", "approve", ticket, "--state", STATE, "--policy", POLICY, "--token", ALICE)
    res = s.wait(waiting).get("result", {})
    g = s.ask("tasks/get", {"taskId": tid}).get("result", {})
    check("legacy_task_result", res.get("isError") is False and
          res.get("_meta", {}).get("io.modelcontextprotocol/related-task") ==
          {"taskId": tid} and g.get("status") == "completed" and
          rows("SELECT count(*) FROM customers WHERE name = 'Task'") == [(1,)],
          json.dumps(res) + json.dumps(g))

    # cancelling: a finished task cannot be; a waiting one is, and stays so
    again = s.ask("tasks/cancel", {"taskId": tid}).get("error", {})
    tid2 = s.ask("tools/call", {"name": "sql.execute", "arguments": ins, "task": {},
                                "_meta": {"dev.toolgate/idempotencyKey": "l-ins2"}}
                 ).get("result", {}).get("task", {}).get("taskId", "")
    gone = s.ask("tasks/cancel", {"taskId": tid2}).get("result", {})
    after = s.ask("tasks/result", {"taskId": tid2})
    check("legacy_task_cancel", again.get("code") == -32602 and "completed" in
          again.get("message", "") and gone.get("status") == "cancelled" and
          "error" in after and
          rows("SELECT count(*) FROM customers WHERE name = 'Task'") == [(1,)],
          json.dumps(again) + json.dumps(gone) + json.dumps(after))

    # a read tool does not run as a task; an unknown task is -32602
    read = s.ask("tools/call", {"name": "sql.query", "arguments": {"sql": "SELECT 1"},
                                "task": {}}).get("error", {})
    unknown = s.ask("tasks/get", {"taskId": "nope"}).get("error", {})
    check("legacy_task_refusals", read.get("code") == -32601 and
          unknown.get("code") == -32602, json.dumps(read) + json.dumps(unknown))
finally:
    s.close()

# an older revision has no tasks: params.task is ignored, the call answers
old = Stdio("2025-06-18")
try:
    plain = old.ask("tools/call", {"name": "sql.execute", "arguments": ins, "task": {},
                                   "_meta": {"dev.toolgate/idempotencyKey": "l-old"}})
    check("older_revision_ignores_task", "tasks" not in old.init.get("result", {}).get(
          "capabilities", {}) and "task" not in plain.get("result", {}) and
          plain.get("result", {}).get("isError") is True, json.dumps(plain))
finally:
    old.close()

# calls that fail at once (a write without the idempotency key the
# policy's writes.client_key asks of its client, arguments the schema
# refuses) still end as tasks that failed, with the error: none
# stays working, none counts toward the 32 unfinished tasks a principal may
# have, so the 33rd is a task too (issue 17)
fast = Stdio("2025-11-25")
try:
    ids, refused = [], []
    for i in range(33):
        params = {"name": "sql.execute", "task": {}, "arguments": ins}
        if i % 2:
            params["arguments"] = {"params": ["no statement"]}
            params["_meta"] = {"dev.toolgate/idempotencyKey": "fast-%d" % i}
        r = fast.ask("tools/call", params)
        tid = r.get("result", {}).get("task", {}).get("taskId")
        (ids.append(tid) if tid else refused.append(r))
    ended, end = {}, time.time() + 10
    while len(ended) < len(ids) and time.time() < end:
        for tid in ids:
            if tid not in ended:
                g = fast.ask("tasks/get", {"taskId": tid}).get("result", {})
                if g.get("status") not in ("working", "input_required"):
                    ended[tid] = g
        time.sleep(0.05)
    stuck = [t for t in ids if t not in ended]
    # what each kind of failure answers (a task that never ends, never)
    results = [fast.wait(fast.send("tasks/result", {"taskId": ids[k]}), 5)
               if len(ids) > k and ids[k] in ended else {} for k in (0, 1)]
    check("fast_failing_tasks_end_failed",
          not refused and len(ids) == 33 and not stuck and
          all(g.get("status") == "failed" and g.get("statusMessage") for g in ended.values())
          and all(r.get("result", {}).get("isError") is True for r in results) and
          "idempotency" in json.dumps(results[0]).lower(),
          "%d refused, %d of %d stuck working: %s %s" % (
              len(refused), len(stuck), len(ids), json.dumps(refused[:1])[:300],
              json.dumps(results)[:600]))
finally:
    try:
        fast.close()
    except subprocess.TimeoutExpired:
        fast.p.kill()
        fast.p.wait()
        check("fast_failing_tasks_server_exits", False, "it waited for tasks that never end")

with open(os.path.join(TMP, "stdio.err")) as f:
    sanitizer(f.read())
check("no_sanitizer_reports", not REPORTS, "\n".join(REPORTS)[:3000])
check.done()
