#!/usr/bin/env python3
"""A plan's steps are calls (docs/PIPELINE.md, "Sagas"): in a plan's dry
run, in the preview its ticket shows and when it runs, each step goes
through the stages a direct call does, over HTTP:

- a read step that a direct call would hold for its anomalies (a `..` in
  a path) is not run in the dry run nor the preview: its place holds its
  findings, never the file; the plan's ticket carries them, pointing into
  the plan's arguments; once a person approves the plan, the step runs;
- a principal past its rate for a tool gets no more of that tool's
  results from a plan than from direct calls;
- every step is recorded as a call of its own, tied to its plan (by the
  plan's arguments' hash, and by its id once it has one), and counted in
  the metrics.

    plan_steps.py TOOLGATE REPO TMPDIR
"""
import json
import os
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, error_of, example_gateway, issue_token, serving, tool_call  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
CAT, WS = example_gateway(REPO, TMP)
STATE, POLICY = os.path.join(TMP, "state"), os.path.join(TMP, "policy.json")
LOG = os.path.join(STATE, "audit.log")
c = Checks("plan_steps")

with open(POLICY, "w") as f:
    json.dump({"writes": {"wait": "0"},  # held calls answered at once
               "principals": {
        "agent": {"scopes": ["*:read", "plan.run:write", "fs.*:write"]},
        "slow": {"scopes": ["*:read", "plan.run:write"], "rate": "3/h"},
        "slow2": {"scopes": ["*:read", "plan.run:write"], "rate": "3/h"},
        "ops": {"scopes": ["*:approve"]}}}, f)
TOKEN = issue_token(TG, STATE, POLICY, "agent", "*:read", "plan.run:write", "fs.*:write")
SLOW = issue_token(TG, STATE, POLICY, "slow", "*:read", "plan.run:write")
SLOW2 = issue_token(TG, STATE, POLICY, "slow2", "*:read", "plan.run:write")
OPS = issue_token(TG, STATE, POLICY, "ops", "*:approve")
with open(os.path.join(WS, "notes.txt")) as f:
    NOTES = f.read().splitlines()[0]  # a line of the file the held step would read
ERR = os.path.join(TMP, "serve.err")


def call(port, tool, args, key=None, token=None, dry=False):
    return tool_call(port, token or TOKEN, tool, args, key=key, dry=dry)


def cli(*argv):
    return subprocess.run([TG] + list(argv), capture_output=True, text=True, timeout=120)


def show(ticket):
    p = cli("approvals", "show", "--json", ticket, "--state", STATE)
    try:
        return json.loads(p.stdout)
    except ValueError:
        return {"stdout": p.stdout, "stderr": p.stderr}


def records():
    with open(LOG) as f:
        return [json.loads(x) for x in f if x.endswith("}\n")]


TRAVERSAL = {"steps": [{"tool": "fs.read", "arguments": {"path": "README.md"}},
                       {"tool": "fs.read", "arguments": {"path": "src/../notes.txt"}}]}
with serving([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE,
              "--policy", POLICY], ERR) as port:
    direct = call(port, "fs.read", {"path": "src/../notes.txt"})
    c("direct_traversal_read_is_held", error_of(direct).get("code") == "awaiting_approval", direct)

    # the plan's steps are looked at each as a call of its tool
    dry = call(port, "plan.run", TRAVERSAL, dry=True)
    steps = dry.get("structuredContent", {}).get("steps", [])
    c("dry_run_runs_the_plain_step", len(steps) == 2 and "preview" in steps[0] and
      not dry.get("isError"), dry)
    c("dry_run_holds_the_anomalous_step", len(steps) == 2 and steps[1].get("held") is True and
      "preview" not in steps[1] and
      any(f.get("rule") == "traversal" for f in steps[1].get("anomalies", [])), steps)
    c("dry_run_never_shows_the_held_steps_result", NOTES not in json.dumps(dry), dry)

    held = call(port, "plan.run", TRAVERSAL, key="plan-k1")
    e = error_of(held)
    ticket = e.get("ticket", "")
    c("plan_is_held", e.get("code") == "awaiting_approval" and ticket, held)
    pv = e.get("preview", {}).get("structured", {}).get("steps", [])
    c("preview_holds_no_result_of_the_held_step", len(pv) == 2 and pv[1].get("held") is True and
      "preview" not in pv[1] and "preview" in pv[0] and NOTES not in json.dumps(held), pv)
    t = show(ticket)
    c("ticket_carries_the_steps_findings",
      any(f.get("rule") == "traversal" and f.get("at") == "/steps/1/arguments/path"
          for f in t.get("anomalies", [])) and NOTES not in json.dumps(t), t)

    recs = records()
    plan_rec = [r for r in recs if r.get("kind") == "call" and r.get("tool") == "plan.run"]
    step_recs = [r for r in recs if r.get("kind") == "call" and r.get("plan_step")]
    sha = plan_rec[-1].get("args_sha256") if plan_rec else None
    mine = [r for r in step_recs if r.get("plan_args_sha256") == sha]
    c("each_step_is_recorded_as_a_call",
      sorted((r["plan_step"], r["tool"], r["outcome"]) for r in mine) ==
      [(1, "fs.read", "dry_run"), (1, "fs.read", "dry_run"),
       (2, "fs.read", "anomalous"), (2, "fs.read", "anomalous")], mine)
    c("held_steps_record_names_the_rule",
      all(r.get("anomalies") and r.get("anomaly_action") == "hold"
          for r in mine if r["plan_step"] == 2), mine)

    ok = cli("approvals", "approve", ticket, "--state", STATE, "--policy", POLICY,
             "--token", OPS)
    c("approver_approves_the_plan", ok.returncode == 0, ok.stderr)
    run = call(port, "plan.run", TRAVERSAL, key="plan-k1")
    done = run.get("structuredContent", {})
    c("approved_plan_runs_its_held_step", not run.get("isError") and
      done.get("state") == "done" and len(done.get("steps", [])) == 2, run)
    real = [r for r in records() if r.get("kind") == "call" and r.get("plan") == ticket]
    c("approved_steps_recorded_with_the_plans_id",
      sorted((r["plan_step"], r["outcome"]) for r in real) == [(1, "ok"), (2, "ok")] and
      [r.get("anomaly_action") for r in real if r["plan_step"] == 2] == ["approved"] and
      all(r.get("plan_args_sha256") == sha for r in real), real)

    # a write whose arguments would hold it shows no dry run, and its held
    # answer no preview: only a person sees what it would touch
    wdry = call(port, "fs.delete", {"path": "src/../notes.txt"}, dry=True)
    c("anomalous_write_dry_run_not_shown",
      error_of(wdry).get("code") == "anomalous_arguments" and NOTES not in json.dumps(wdry), wdry)
    wheld = call(port, "fs.delete", {"path": "src/../notes.txt"}, key="del-anom")
    c("anomalous_write_held_without_preview",
      error_of(wheld).get("code") == "awaiting_approval" and "preview" not in error_of(wheld) and
      NOTES not in json.dumps(wheld), wheld)

    # a read step refused for its rate when the plan runs: the plan is
    # undone (nothing to undo of a read), not failed
    two = {"steps": [{"tool": "fs.read", "arguments": {"path": "README.md"}},
                     {"tool": "fs.read", "arguments": {"path": "notes.txt"}}]}
    h2 = call(port, "plan.run", two, key="plan-k2", token=SLOW2)
    t2 = error_of(h2).get("ticket", "")
    cli("approvals", "approve", t2, "--state", STATE, "--policy", POLICY, "--token", OPS)
    r2 = call(port, "plan.run", two, key="plan-k2", token=SLOW2)
    r2 = r2.get("structuredContent") or json.loads(r2.get("content", [{}])[0].get("text", "{}"))
    c("a_plans_reads_need_no_undo", r2.get("state") == "compensated" and
      [x.get("state") for x in r2.get("steps", [])] == ["done", "failed"], r2)

    # the rate: 3 fs.read an hour for "slow", whether called or planned
    many = {"steps": [{"tool": "fs.read", "arguments": {"path": "notes.txt"}}] * 6}
    r = call(port, "plan.run", many, token=SLOW, dry=True)
    c("plan_steps_are_rate_limited", r.get("isError") and "rate limited" in json.dumps(r) and
      json.dumps(r).count(NOTES) == 0, json.dumps(r)[:400])
    direct = call(port, "fs.read", {"path": "notes.txt"}, token=SLOW)
    c("the_plans_steps_spent_the_rate", error_of(direct).get("code") == "rate_limited", direct)

    req = urllib.request.Request("http://127.0.0.1:%d/metrics" % port,
                                 headers={"Authorization": "Bearer " + OPS})
    with urllib.request.urlopen(req, timeout=30) as resp:
        metrics = resp.read().decode()
    c("steps_counted_in_the_metrics",
      'tool="fs.read",outcome="anomalous"' in metrics and
      'tool="fs.read",outcome="rate_limited"' in metrics, metrics[-1500:])

with open(ERR) as f:
    err = f.read()
c("no_sanitizer_reports", "ERROR: AddressSanitizer" not in err and "runtime error" not in err,
  err[-2000:])
c.done()
