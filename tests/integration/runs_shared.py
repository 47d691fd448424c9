#!/usr/bin/env python3
"""The gateway's sandboxes shared (docs/PIPELINE.md, "Sandboxes at
once"), over HTTP with stateless 2026-07-28 requests, which no session's
in-flight cap holds: `serve --max-runs 3 --max-runs-per-principal 2`.

- one principal sending six python.run calls at once never has more than
  two running (each call's sandbox says when it started and ended);
- another principal's call runs while the first one's are still queued:
  it starts before the first principal's last call does;
- /metrics shows the bound.

    runs_shared.py TOOLGATE REPO TMPDIR
"""
import json
import os
import sys
import threading
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, example_gateway, issue_token, serving, tool_call  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
CAT, WS = example_gateway(REPO, TMP)
STATE, POLICY = os.path.join(TMP, "state"), os.path.join(TMP, "policy.json")
c = Checks("runs")

with open(POLICY, "w") as f:
    json.dump({"principals": {"busy": {"scopes": ["*:read"]}, "other": {"scopes": ["*:read"]},
                              "ops": {"scopes": ["*:approve"]}}}, f)
BUSY = issue_token(TG, STATE, POLICY, "busy", "*:read")
OTHER = issue_token(TG, STATE, POLICY, "other", "*:read")
OPS = issue_token(TG, STATE, POLICY, "ops", "*:approve")
ERR = os.path.join(TMP, "serve.err")
CODE = "import time\nt = time.time()\ntime.sleep(1.2)\nprint(t, time.time())\n"


def run(port, token, out, i):
    r = tool_call(port, token, "python.run", {"code": CODE}, rid=i)
    s = r.get("structuredContent", {})
    try:
        out[i] = tuple(float(x) for x in s.get("stdout", "").split())
    except ValueError:
        out[i] = r


with serving([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE, "--policy",
              POLICY, "--max-runs", "3", "--max-runs-per-principal", "2"], ERR) as port:
    busy, other = {}, {}
    ths = [threading.Thread(target=run, args=(port, BUSY, busy, i)) for i in range(6)]
    for t in ths:
        t.start()
    # the other principal's call, once the first's fill their share
    ths[0].join(timeout=0.3)
    o = threading.Thread(target=run, args=(port, OTHER, other, 0))
    o.start()
    for t in ths + [o]:
        t.join(timeout=120)
    spans = [v for v in busy.values() if isinstance(v, tuple) and len(v) == 2]
    c("every_call_ran", len(spans) == 6 and isinstance(other.get(0), tuple), [busy, other])
    # most of one principal's sandboxes running at once, from their own clocks
    events = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    most = now = 0
    for _, d in events:
        now += d
        most = max(most, now)
    c("one_principal_at_most_its_share", most <= 2 and len(spans) == 6, (most, spans))
    starts = sorted(a for a, _ in spans)
    c("another_principal_not_queued_behind_it",
      isinstance(other.get(0), tuple) and len(starts) == 6 and other[0][0] < starts[-1],
      (other, starts))
    req = urllib.request.Request("http://127.0.0.1:%d/metrics" % port,
                                 headers={"Authorization": "Bearer " + OPS})
    with urllib.request.urlopen(req, timeout=30) as resp:
        m = resp.read().decode()
    c("metrics_show_the_bound", "toolgate_sandboxes_max 3" in m and
      "toolgate_sandboxes_running 0" in m, [x for x in m.splitlines() if "sandboxes_" in x])
with open(ERR) as f:
    err = f.read()
c("no_sanitizer_reports", "ERROR: AddressSanitizer" not in err and "runtime error" not in err,
  err[-2000:])
c.done()
