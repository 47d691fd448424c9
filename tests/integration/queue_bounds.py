#!/usr/bin/env python3
"""The approvers' queue within bounds (docs/PIPELINE.md, "Bounds of the
queue"), over HTTP, with the policy's "tickets":

- a principal with a write scope holds at most max_pending tickets
  awaiting a decision: the next new call is answered too_many_pending and
  makes no ticket; a retry under a held key is still answered; another
  principal is not affected; once one is decided, a new one is held;
- a call whose arguments and preview are more than max_bytes is answered
  too_large_to_hold, and stores nothing: forty calls of 900 KB leave the
  state directory as it was;
- the store's collection runs every collect_every, and the metrics count
  what it removed and the refusals.

    queue_bounds.py TOOLGATE REPO TMPDIR
"""
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, error_of, example_gateway, issue_token, serving, tool_call  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
CAT, WS = example_gateway(REPO, TMP)
STATE, POLICY = os.path.join(TMP, "state"), os.path.join(TMP, "policy.json")
c = Checks("queue")

with open(POLICY, "w") as f:
    json.dump({"writes": {"wait": "0"},  # held calls answered at once
               "principals": {"agent": {"scopes": ["fs.*:write"]},
                              "other": {"scopes": ["fs.*:write"]},
                              "burst": {"scopes": ["fs.*:write"]},
                              "ops": {"scopes": ["*:approve"]}},
               "tickets": {"max_pending": 3, "max_bytes": "64K", "collect_every": "1s"}}, f)
AGENT = issue_token(TG, STATE, POLICY, "agent", "fs.*:write")
OTHER = issue_token(TG, STATE, POLICY, "other", "fs.*:write")
BURST = issue_token(TG, STATE, POLICY, "burst", "fs.*:write")
OPS = issue_token(TG, STATE, POLICY, "ops", "*:approve")
ERR = os.path.join(TMP, "serve.err")


def write(port, token, key, content="x"):
    return error_of(tool_call(port, token, "fs.write",
                              {"path": "q/%s.txt" % key, "content": content}, key=key))


def tickets():
    """The pending tickets' lines, as `toolgate approvals list` shows them."""
    p = subprocess.run([TG, "approvals", "list", "--state", STATE],
                       capture_output=True, text=True, timeout=60)
    return [x for x in p.stdout.splitlines() if " pending " in x]


def du(path):
    total = 0
    for d, _, fs in os.walk(path):
        total += sum(os.path.getsize(os.path.join(d, n)) for n in fs)
    return total


with serving([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE,
              "--policy", POLICY], ERR) as port:
    held = [write(port, AGENT, "k%d" % i) for i in range(3)]
    c("held_up_to_max_pending", all(e.get("code") == "awaiting_approval" for e in held), held)
    over = write(port, AGENT, "k3")
    c("past_max_pending_refused", over.get("code") == "too_many_pending" and
      not over.get("ticket") and over.get("retryable") is True, over)
    t = tickets()
    c("no_ticket_made_past_the_cap", len(t) == 3, t)
    again = write(port, AGENT, "k0")
    c("a_held_keys_retry_still_answered", again.get("code") == "awaiting_approval" and
      again.get("ticket") == held[0].get("ticket"), again)
    c("another_principal_unaffected", write(port, OTHER, "o1").get("code") ==
      "awaiting_approval")
    rej = subprocess.run([TG, "approvals", "reject", held[1]["ticket"], "--state", STATE,
                          "--policy", POLICY, "--token", OPS, "--reason", "no"],
                         capture_output=True, text=True, timeout=60)
    c("decided_frees_a_place", rej.returncode == 0 and
      write(port, AGENT, "k4").get("code") == "awaiting_approval", rej.stderr)

    # sixteen at once: the bound is looked at where no other call adds to it
    got = [None] * 16

    def one(i):
        got[i] = write(port, BURST, "b%d" % i).get("code")

    ths = [threading.Thread(target=one, args=(i,)) for i in range(16)]
    for t in ths:
        t.start()
    for t in ths:
        t.join(timeout=120)
    c("concurrent_calls_within_the_bound", got.count("awaiting_approval") == 3 and
      got.count("too_many_pending") == 13, got)

    big = write(port, OTHER, "big", "y" * (100 << 10))
    c("too_large_to_hold", big.get("code") == "too_large_to_hold" and
      big.get("retryable") is False and "max_bytes" in big.get("message", ""), big)
    before = du(STATE)
    for i in range(40):
        write(port, OTHER, "huge%d" % i, "z" * (900 << 10))
    grown = du(STATE) - before
    # what grows is the audit log's records of the refusals and the WAL's
    # pages, not the arguments: held, they would be 36 MB
    print("# forty refused calls of 900 KB grew the state by %d bytes" % grown)
    c("forty_large_calls_store_nothing", grown < (4 << 20), "the state grew %d bytes" % grown)

    time.sleep(2.5)
    req = urllib.request.Request("http://127.0.0.1:%d/metrics" % port,
                                 headers={"Authorization": "Bearer " + OPS})
    with urllib.request.urlopen(req, timeout=30) as resp:
        metrics = resp.read().decode()
    c("refusals_counted", 'toolgate_excessive_agency_total{kind="queue_full"} 55' in metrics,
      [x for x in metrics.splitlines() if "queue_full" in x])
    c("collection_runs_and_is_counted",
      'toolgate_store_collected_total{kind="tickets"}' in metrics and
      'toolgate_store_collected_total{kind="idempotency"}' in metrics and
      'kind="failed"' not in metrics,
      [x for x in metrics.splitlines() if "collected" in x])

# the collector's thread takes no signal: SIGHUP reloads a stdio gateway
# with a policy (it ended it, the collector's default action)
p = subprocess.Popen([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE,
                      "--policy", POLICY, "--principal", "agent", "--stdio"], stdin=subprocess.PIPE,
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
time.sleep(1.0)
for _ in range(5):
    p.send_signal(signal.SIGHUP)
    time.sleep(0.3)
alive = p.poll() is None
p.stdin.close()
p.wait(timeout=60)
hup_err = p.stderr.read()
c("sighup_reloads_not_kills", alive and hup_err.count("reloaded") >= 1, (alive, hup_err[-600:]))

bad = os.path.join(TMP, "bad.json")
with open(bad, "w") as f:
    json.dump({"principals": {}, "tickets": {"max_pending": 3, "keep": "2h"}}, f)
p = subprocess.run([TG, "policy", "lint", bad], capture_output=True, text=True, timeout=60)
c("bad_tickets_policy_named", p.returncode != 0 and "tickets.keep" in p.stderr + p.stdout,
  p.stderr + p.stdout)

with open(ERR) as f:
    err = f.read()
c("no_sanitizer_reports", "ERROR: AddressSanitizer" not in err and "runtime error" not in err,
  err[-2000:])
c.done()
