#!/usr/bin/env python3
"""The audit log (docs/AUDIT.md), end to end:

- a gateway over HTTP records its loads, calls, refusals and a person's
  decision made by `toolgate approvals` (another process, the same log);
- `toolgate audit verify` holds, and the chain checks out with nothing
  but SHA-256 (the format is what the docs say);
- query and tail find what they should; a call's args_sha256 is that of
  its canonical arguments, a decision's is the ticket's;
- a copy of the log edited, cut, with a record removed, inserted or two
  swapped: verify names the first bad line; --expect finds a log cut back;
- kill -9 during calls from four threads: every acknowledged call's
  record is in the log, and the log verifies (after the next open cuts a
  torn last line, if the kill left one);
- a log that cannot be written: the call that ran is answered with an
  error, and the next is refused;
- what an agent chose (a tool name with a bidi override, a CSI, an ESC)
  is written to the log as JSON escapes, the same values; tail and query
  print escaped a log written raw, as before, which still verifies.

    audit.py TOOLGATE REPO TMPDIR
"""
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, example_gateway, issue_token, modern_post, start_http  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
CAT, WS = example_gateway(REPO, TMP)
STATE = os.path.join(TMP, "state")
POLICY, LOG = os.path.join(TMP, "policy.json"), os.path.join(TMP, "state", "audit.log")
c = Checks("audit")

with open(POLICY, "w") as f:
    json.dump({"writes": {"wait": "0"},  # held calls answered at once
               "principals": {"agent": {"scopes": ["*:read", "fs.*:write"]},
                              "ops": {"scopes": ["fs.*:approve"]},
                              # a scraper's token may outlive the policy's hour
                              "prometheus": {"scopes": ["metrics:scrape"],
                                             "max_token_ttl": "365d"}}}, f)


def cli(*argv):
    return subprocess.run([TG] + list(argv), capture_output=True, text=True, timeout=120)


def args_hash(args):
    return hashlib.sha256(json.dumps(args, sort_keys=True, separators=(",", ":"))
                          .encode()).hexdigest()


TOKEN = issue_token(TG, STATE, POLICY, "agent", "*:read", "fs.*:write")
OPS = issue_token(TG, STATE, POLICY, "ops", "fs.*:approve")
SCRAPER = subprocess.run([TG, "token", "issue", "--state", STATE, "--policy", POLICY, "--principal",
                          "prometheus", "--scope", "metrics:scrape", "--ttl", "300d"],
                         capture_output=True, text=True, timeout=120).stdout.strip()
ERRS = []


def serve(*extra, name="serve"):
    err = os.path.join(TMP, name + ".err")
    ERRS.append(err)
    return start_http([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE,
                       "--policy", POLICY] + list(extra), err)


def call(port, tool, args, token=TOKEN, key=None, rid=1):
    headers = {"Authorization": "Bearer " + token} if token else {}
    if key:
        headers["Idempotency-Key"] = key
    return modern_post(port, "tools/call", {
        "id": rid, "name": tool, "arguments": args,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}, headers)


def records(path):
    with open(path) as f:
        return [json.loads(x) for x in f if x.endswith("}\n")]


def chain_holds(path):
    """The chain checked with SHA-256 alone, as docs/AUDIT.md says."""
    prev, seq = "0" * 64, 0
    with open(path, "rb") as f:
        for line in f:
            line = line.rstrip(b"\n")
            at = line.rindex(b',"hash":"')
            rec = json.loads(line)
            if (hashlib.sha256(line[:at]).hexdigest() != rec["hash"] or rec["prev"] != prev
                    or rec["seq"] != seq + 1):
                return False
            prev, seq = rec["hash"], rec["seq"]
    return seq > 0


srv, port = serve()
try:
    ok = call(port, "fs.read", {"path": "README.md"})
    bad = call(port, "fs.read", {"path": "nowhere/at-all.txt"})
    anon = call(port, "fs.read", {"path": "README.md"}, token=None)
    held = call(port, "fs.write", {"path": "notes/audit.txt", "content": "x\n"}, key="k-audit-1")
    ticket = held.get("result", {}).get("_meta", {}).get("dev.toolgate/error", {}).get("ticket", "")
    appr = cli("approvals", "approve", ticket, "--state", STATE, "--policy", POLICY, "--token", OPS)
    ran = call(port, "fs.write", {"path": "notes/audit.txt", "content": "x\n"}, key="k-audit-1")
    escape = call(port, "python.run", {"code": "import ctypes\nctypes.CDLL(None).unshare(0x10000000)"})
    # a flood of requests without a token: recorded, but not without bound
    t0 = time.time()
    flood = [call(port, "fs.read", {"path": "README.md"}, token=None).get("status")
             for _ in range(400)]
    flood_s = time.time() - t0
    # a principal's refusal right after: its own bucket, not the flood's
    forbidden = call(port, "sql.execute", {"sql": "select 1"})
    time.sleep(0.2)
    call(port, "fs.read", {"path": "README.md"}, token=None)
    # the counters, as Prometheus scrapes them (docs/METRICS.md)
    def scrape(token):
        req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics",
                                     headers={"Authorization": "Bearer " + token} if token else {})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.headers.get("Content-Type", ""), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, "", ""
    status, ctype, metrics = scrape(OPS)
    anon_metrics = scrape(None)[0]
    agent_metrics = scrape(TOKEN)[0]
    scraper_metrics = scrape(SCRAPER)[0] if SCRAPER else "no token issued"
    scraper_call = call(port, "fs.read", {"path": "README.md"}, token=SCRAPER) if SCRAPER else {}
    c("calls_made", not ok["result"].get("isError") and bad["result"].get("isError") and
      anon.get("status") == 401 and ticket and appr.returncode == 0 and
      not ran.get("result", {}).get("isError") and escape.get("result", {}).get("isError"),
      [ok, bad, anon, held, appr.stderr, ran, escape])
finally:
    srv.send_signal(signal.SIGTERM)
    srv.wait(timeout=30)

series = {}
for line in metrics.splitlines():
    if line and not line.startswith("#"):
        k, v = line.rsplit(" ", 1)
        series[k] = float(v)
writes = sum(1 for n in os.listdir(CAT) if n.endswith(".json") and
             json.load(open(os.path.join(CAT, n))).get("authority") == "write")
want = {'toolgate_calls_total{tool="fs.read",outcome="ok"}': 1,
        'toolgate_calls_total{tool="fs.read",outcome="tool_error"}': 1,
        'toolgate_tool_errors_total{tool="fs.read"}': 2,  # and python.run's, below
        'toolgate_calls_held_total{tool="fs.write"}': 1,
        'toolgate_approvals_total{outcome="approved"}': 1,
        'toolgate_sandbox_violations_total{kind="seccomp_violation"}': 1,
        'toolgate_call_duration_seconds_count{tool="fs.read"}': 2,
        "toolgate_write_tools": writes, "toolgate_write_tools_gated_ratio": 1,
        "toolgate_audit_up": 1}
want['toolgate_tool_errors_total{tool="fs.read"}'] = 1
got = {k: series.get(k) for k in want}
c("metrics_counted", status == 200 and ctype.startswith("text/plain; version=0.0.4") and
  got == want and writes > 0, [status, ctype, got])
c("metrics_need_a_token", anon_metrics == 401, anon_metrics)
# every principal's calls are there: an agent's token is not enough
c("metrics_need_an_approve_scope", agent_metrics == 403, agent_metrics)
c("metrics_scrape_scope_long_lived", scraper_metrics == 200, scraper_metrics)
c("scrape_scope_calls_nothing", scraper_call.get("status") == 403, scraper_call)
if shutil.which("promtool"):
    pt = subprocess.run(["promtool", "check", "metrics"], input=metrics, capture_output=True,
                        text=True, timeout=60)
    c("metrics_promtool", pt.returncode == 0 and not pt.stdout.strip() and not pt.stderr.strip(),
      pt.stdout + pt.stderr)
else:
    print("skip - integration/audit_metrics_promtool: no promtool (Debian's prometheus package)")

v = cli("audit", "verify", "--state", STATE)
c("verify_holds", v.returncode == 0 and "the chain holds" in v.stdout, v.stdout + v.stderr)
c("chain_with_sha256_alone", chain_holds(LOG), open(LOG).read()[-2000:])
recs = records(LOG)
c("loads_recorded", sum(r.get("outcome") == "loaded" for r in recs) ==
  len([n for n in os.listdir(CAT) if n.endswith(".json")]), [r for r in recs if r["kind"] == "event"])
q = cli("audit", "query", "--state", STATE, "--principal", "agent", "--tool", "fs.read",
        "--outcome", "ok", "--kind", "call")
got = [json.loads(x) for x in q.stdout.splitlines()]
c("query_a_call", q.returncode == 0 and len(got) == 1 and
  got[0]["args_sha256"] == args_hash({"path": "README.md"}) and got[0]["version"] == "1.0.0",
  q.stdout + q.stderr)
show = json.loads(cli("approvals", "show", "--json", ticket, "--state", STATE).stdout or "{}")
q = cli("audit", "query", LOG, "--kind", "decision")
dec = [json.loads(x) for x in q.stdout.splitlines()]
c("decision_recorded", len(dec) == 1 and dec[0]["principal"] == "ops" and
  dec[0]["outcome"] == "approved" and dec[0]["subject"] == ticket and
  dec[0]["requester"] == "agent" and dec[0]["args_sha256"] == show.get("args_sha256") and
  dec[0]["args_sha256"] == args_hash({"path": "notes/audit.txt", "content": "x\n"}),
  [dec, show.get("args_sha256")])
outcomes = [r["outcome"] for r in recs if r["kind"] == "call"]
c("sandbox_violation_recorded", [r.get("sandbox") for r in recs if r.get("tool") == "python.run"]
  == ["seccomp_violation"], [r for r in recs if r.get("tool") == "python.run"])
c("calls_recorded", outcomes == ["ok", "tool_error", "held", "ok", "tool_error"] and
  any(r.get("outcome") == "unauthorized" for r in recs), outcomes)
unauth = [r for r in recs if r.get("outcome") == "unauthorized"]
# every 401 this test caused: the anonymous call, the flood, the one after
# it, the anonymous scrape; each one recorded or counted in the next
c("refusal_flood_bounded", flood == [401] * 400 and
  len(unauth) <= 100 + 20 * (flood_s + 0.5) + 3 and len(unauth) < 403 and
  sum(r.get("suppressed_before", 0) for r in unauth) + len(unauth) == 403,
  [len(unauth), flood_s, [r.get("suppressed_before") for r in unauth][-3:]])
c("refusal_after_flood_recorded", forbidden.get("status") == 403 and
  [(r["principal"], r["subject"]) for r in recs if r.get("outcome") == "forbidden"] ==
  [("agent", "sql.execute:write"), ("prometheus", "fs.read:read")], [forbidden, [r for r in recs if r.get("outcome") == "forbidden"]])
c("nothing_secret", "README" not in open(LOG).read() and OPS not in open(LOG).read() and
  TOKEN not in open(LOG).read(), "arguments or tokens in the log")
q = cli("audit", "query", LOG, "--since", "2999-01-01")
q2 = cli("audit", "query", LOG, "--since", "2020-01-01", "--until", str(int(time.time()) + 60),
         "--kind", "call")
c("query_by_time", q.returncode == 1 and q.stdout == "" and q2.returncode == 0 and
  len(q2.stdout.splitlines()) == 5, [q.stdout, q2.stdout])
t = cli("audit", "tail", LOG, "-n", "2")
c("tail", [json.loads(x)["seq"] for x in t.stdout.splitlines()] ==
  [r["seq"] for r in recs[-2:]], t.stdout)

# tampering, on copies: the first bad line is named
lines = open(LOG).read().splitlines(keepends=True)
BAD = os.path.join(TMP, "bad.log")


def verify_copy(ls, *extra):
    with open(BAD, "w") as f:
        f.writelines(ls)
    return cli("audit", "verify", BAD, *extra)


edited = list(lines)
edited[5] = edited[5].replace('"outcome":"loaded"', '"outcome":"refused"', 1) \
    if '"outcome":"loaded"' in edited[5] else edited[5].replace('"kind":', '"kind" :', 1)
r = verify_copy(edited)
c("tamper_edit", r.returncode == 1 and "line 6: edited" in r.stdout, r.stdout)
r = verify_copy(lines[:3] + lines[4:])
c("tamper_remove", r.returncode == 1 and "line 4:" in r.stdout and "removed" in r.stdout, r.stdout)
r = verify_copy(lines[:7] + [lines[2]] + lines[7:])
c("tamper_insert", r.returncode == 1 and "line 8:" in r.stdout and "inserted" in r.stdout, r.stdout)
r = verify_copy(lines[:4] + [lines[5], lines[4]] + lines[6:])
c("tamper_reorder", r.returncode == 1 and "line 5:" in r.stdout, r.stdout)
head = v.stdout.split("head ")[1].strip()
r = verify_copy(lines[:-1], "--expect", head)
r2 = verify_copy(lines, "--expect", head)
c("expect_finds_cut_log", r.returncode == 1 and "not there" in r.stdout and r2.returncode == 0,
  [r.stdout, r2.stdout])

# hidden characters an agent chose: a tool by a name that reorders and
# clears what a terminal shows, recorded as JSON escapes (the same value)
LOG4 = os.path.join(TMP, "hidden.log")
EVIL = "fs.read\u202etxt.exe\x9b2J\x1b]0;owned\x07\U000E0041"
RAW = ["\u202e", "\x9b", "\x1b", "\x07", "\U000E0041"]
# (over stdio: an HTTP header could not carry the name)
msgs = [{"jsonrpc": "2.0", "id": 0, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
         "params": {"name": EVIL, "arguments": {"path": "README.md"}}}]
p = subprocess.run([TG, "serve", "--catalog", CAT, "--workspace", WS, "--audit", LOG4],
                   input="".join(json.dumps(m) + "\n" for m in msgs), capture_output=True,
                   text=True, timeout=120)
evil = [json.loads(x) for x in p.stdout.splitlines() if '"id":1' in x.replace(" ", "")]
text = open(LOG4, encoding="utf-8").read()
mine = [r for r in records(LOG4) if r.get("tool") == EVIL and EVIL in r.get("error", "")]
c("hidden_recorded_escaped", evil and mine and
  not any(ch in text for ch in RAW) and "\\u202E" in text and
  cli("audit", "verify", LOG4).returncode == 0, [evil, text[-600:]])
# a log written raw (before records were escaped, or by another program):
# it verifies; tail and query print it escaped, the same JSON
OLD = os.path.join(TMP, "old.log")
prev, old = "0" * 64, []
for seq, tool in enumerate(["fs.read", EVIL], 1):
    head = json.dumps({"seq": seq, "ts": "2026-11-30T10:00:0%d.000000Z" % seq, "prev": prev,
                       "kind": "call", "principal": "agent", "tool": tool, "outcome": "ok"},
                      ensure_ascii=False, separators=(",", ":"))[:-1]
    prev = hashlib.sha256(head.encode()).hexdigest()
    old.append(head + ',"hash":"' + prev + '"}\n')
with open(OLD, "w", encoding="utf-8") as f:
    f.writelines(old)
v = cli("audit", "verify", OLD)
t = cli("audit", "tail", OLD, "-n", "1")
q = cli("audit", "query", OLD, "--principal", "agent")
c("old_raw_log_verifies", v.returncode == 0 and "2 records" in v.stdout, v.stdout + v.stderr)
c("tail_query_escape_hidden", all(not any(ch in p.stdout for ch in RAW) for p in (t, q)) and
  json.loads(t.stdout)["tool"] == EVIL and [json.loads(x)["tool"] for x in q.stdout.splitlines()]
  == ["fs.read", EVIL] and "\\u202E" in t.stdout, [t.stdout, q.stdout])

# kill -9 while four threads call: each acknowledged call is on the record
LOG2 = os.path.join(TMP, "kill.log")
srv, port = serve("--audit", LOG2, name="kill")
acked, stop = [], threading.Event()


def caller(n):
    i = 0
    while not stop.is_set():
        args = {"path": "nofile-%d-%d.txt" % (n, i)}
        try:
            r = call(port, "fs.read", args, rid=i)
            if "result" in r:
                acked.append(args)
        except Exception:
            return
        i += 1


ths = [threading.Thread(target=caller, args=(n,)) for n in range(4)]
for t in ths:
    t.start()
# killed once eight calls are acknowledged, the others under way (at most
# 30 s: a slow machine's first calls take long)
deadline = time.time() + 30
while len(acked) < 8 and time.time() < deadline:
    time.sleep(0.05)
srv.send_signal(signal.SIGKILL)
srv.wait(timeout=30)
stop.set()
for t in ths:
    t.join(timeout=60)
v1 = cli("audit", "verify", LOG2)
torn_only = v1.returncode == 0 or ("torn last line" in v1.stdout)
have = {r.get("args_sha256") for r in records(LOG2)}
missing = [a for a in acked if args_hash(a) not in have]
c("kill9_acknowledged_recorded", acked and not missing and torn_only,
  [len(acked), missing[:3], v1.stdout])
srv, port = serve("--audit", LOG2, name="kill2")  # the next open cuts a torn line
srv.send_signal(signal.SIGTERM)
srv.wait(timeout=30)
v2 = cli("audit", "verify", LOG2)
c("kill9_log_verifies_after_reopen", v2.returncode == 0, v2.stdout)

# a log that cannot be written: not served at all from the start; and
# once its disk is full, the call that ran is answered with an error and
# the next is refused (a tmpfs in a mount namespace of its own: 16 KiB,
# some thirty calls fill it; 64 KiB, four times as many, in make check-long)
full = subprocess.run([TG, "serve", "--catalog", CAT, "--audit", "/dev/full", "--stdio"],
                      input="", capture_output=True, text=True, timeout=60)
c("unwritable_log_not_served", full.returncode != 0 and "audit log" in full.stderr, full.stderr)
SMALL = os.path.join(TMP, "small")
os.makedirs(SMALL)
srv, port = start_http(["unshare", "-m", "--propagation", "private", "sh", "-c",
                        'mount -t tmpfs -o size=%s tmpfs "$0" && exec "$@"' %
                        ("64k" if os.environ.get("TOOLGATE_CHECK_LONG") == "1" else "16k"), SMALL,
                        TG, "serve", "--catalog", CAT, "--workspace", WS,
                        "--audit", os.path.join(SMALL, "audit.log")],
                       os.path.join(TMP, "small.err"))
ERRS.append(os.path.join(TMP, "small.err"))
try:
    answers = []
    for i in range(1000):
        answers.append(call(port, "fs.read", {"path": "README.md"}, token=None, rid=i))
        if "result" not in answers[-1]:
            break
    after = call(port, "fs.read", {"path": "README.md"}, token=None)
    failed = json.dumps(answers[-1])
    print("# the full log refused call %d" % len(answers))
    c("full_log_refuses_calls", len(answers) > 10 and "result" not in answers[-1] and
      "record could not be written" in failed and "result" not in after and
      "audit log" in json.dumps(after), [len(answers), answers[-1], after])
finally:
    srv.send_signal(signal.SIGTERM)
    srv.wait(timeout=30)

# the log cut or moved aside under a running gateway: it stops (the call
# that ran gets an error, the next is refused), rather than begin a new
# chain that would verify clean and hide what was lost
for how in ("cut", "moved"):
    LOG3 = os.path.join(TMP, how + ".log")
    srv, port = serve("--audit", LOG3, name=how)
    try:
        before = call(port, "fs.read", {"path": "README.md"})
        held3 = call(port, "fs.write", {"path": "notes/" + how, "content": "x"}, key="k-" + how)
        tk3 = held3.get("result", {}).get("_meta", {}).get("dev.toolgate/error", {}).get("ticket")
        call(port, "fs.read", {"path": "README.md"})  # synced: the log is where we left it
        if how == "cut":
            os.truncate(LOG3, 0)
        else:
            os.rename(LOG3, LOG3 + ".1")
        ran3 = call(port, "fs.read", {"path": "README.md"})
        after3 = call(port, "fs.read", {"path": "README.md"})
        # no decision the log cannot keep: refused, the ticket still pending
        req = urllib.request.Request(f"http://127.0.0.1:{port}/admin/tickets/{tk3}/approve",
                                     data=b"{}", method="POST",
                                     headers={"Authorization": "Bearer " + OPS,
                                              "Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                decided = r.status
        except urllib.error.HTTPError as e:
            decided = e.code
        still = json.loads(cli("approvals", "show", "--json", tk3, "--state", STATE).stdout or "{}")
    finally:
        srv.send_signal(signal.SIGTERM)
        srv.wait(timeout=30)
    why = "something cut it" if how == "cut" else "moved, removed or replaced"
    c("log_" + how + "_under_gateway_stops_it",
      not before["result"].get("isError") and "result" not in ran3 and
      "record could not be written" in json.dumps(ran3) and why in json.dumps(ran3) and
      "result" not in after3 and why in json.dumps(after3) and
      (how == "cut" and os.path.getsize(LOG3) == 0 or
       how == "moved" and not os.path.exists(LOG3) and
       cli("audit", "verify", LOG3 + ".1").returncode == 0) and
      tk3 and decided == 503 and still.get("state") == "pending",
      [before, held3, ran3, after3, decided, still])

text = "".join(open(e).read() for e in ERRS if os.path.exists(e))
c("no_sanitizer_reports", "Sanitizer" not in text and "runtime error:" not in text, text[-2000:])
c.done()
