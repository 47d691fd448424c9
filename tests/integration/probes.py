#!/usr/bin/env python3
"""The probes on the HTTP listener (docs/MCP.md, "Health"):

- GET or HEAD /healthz and /readyz, no token, never cached, never on the
  audit record; another method 405;
- a probe that names the listener by another address (a kubelet's Host:
  POD_IP:PORT) is answered, without the reason; one with an Origin or a
  forwarded header is refused as any request that does not name the
  server;
- /readyz is 503 with a one-line reason while the store's file system is
  full (the state directory a 4 MiB tmpfs, in a mount namespace of the
  gateway's own, filled up), and 200 again once there is room;
- 503 while the audit log is replaced by a directory, 200 once it is
  back; once a write found it gone the log has stopped, and /readyz stays
  503 with why.

    probes.py TOOLGATE REPO TMPDIR
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, example_gateway, issue_token, start_http  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
CAT, WS = example_gateway(REPO, TMP)
SEED, STATE = os.path.join(TMP, "seed"), os.path.join(TMP, "state")
POLICY, LOG = os.path.join(TMP, "policy.json"), os.path.join(TMP, "audit.log")
ERR = os.path.join(TMP, "serve.err")
c = Checks("probes")

with open(POLICY, "w") as f:
    json.dump({"principals": {"agent": {"scopes": ["fs.*:read"]}}}, f)
# the state's key made here, copied onto the tmpfs the gateway gets
issue_token(TG, SEED, POLICY, "agent", "fs.*:read")
os.makedirs(STATE)
srv, port = start_http(["unshare", "-m", "--propagation", "private", "sh", "-c",
                        'mount -t tmpfs -o size=4m,mode=0700 tmpfs "$0" && cp -a "$1"/. "$0"/ && '
                        'shift && exec "$@"', STATE, SEED, TG, "serve", "--catalog", CAT,
                        "--workspace", WS, "--state", STATE, "--policy", POLICY, "--audit", LOG],
                       ERR)
# the gateway's view of its state directory: the tmpfs
THERE = "/proc/%d/root%s" % (srv.pid, STATE)


def probe(path, method="GET", headers=None):
    req = urllib.request.Request("http://127.0.0.1:%d%s" % (port, path), method=method,
                                 headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.headers, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read().decode()


def records():
    with open(LOG) as f:
        return sum(1 for _ in f)


try:
    before = records()
    st, hd, body = probe("/healthz")
    c("healthz_ok", st == 200 and body == "ok\n" and hd.get("Cache-Control") == "no-store" and
      hd.get("Content-Type", "").startswith("text/plain"), (st, dict(hd), body))
    st, _, body = probe("/readyz")
    c("readyz_ok", st == 200 and body == "ok\n", (st, body))
    st, _, body = probe("/readyz", "HEAD")
    c("head", st == 200 and body == "", (st, body))
    st, hd, _ = probe("/readyz", "POST")
    c("other_method_405", st == 405 and hd.get("Allow") == "GET, HEAD", (st, dict(hd)))
    # a kubelet names the pod's address, which this server does not answer to
    pod = {"Host": "10.1.2.3:%d" % port}
    st, _, body = probe("/readyz", headers=pod)
    mcp = probe("/mcp", "POST", pod)[0]
    c("probe_by_another_address", st == 200 and body == "ok\n" and mcp == 403, (st, body, mcp))
    for name, h in (("origin", {"Origin": "http://evil.test"}),
                    ("forwarded", {"X-Forwarded-Host": "evil.test"})):
        st, _, body = probe("/readyz", headers=dict(pod, **h))
        c("probe_with_%s_refused" % name, st == 403 and "Forbidden" in body, (st, body))
    c("probes_not_recorded", records() == before, (before, records()))

    # the store's file system full: not ready, and ready again with room
    filler = os.path.join(THERE, "filler")
    try:
        with open(filler, "wb") as f:
            while True:
                f.write(b"\0" * (64 << 10))
                f.flush()
    except OSError:
        pass
    st, _, body = probe("/readyz")
    far = probe("/readyz", headers=pod)
    c("store_full_not_ready", st == 503 and body.startswith("not ready: store: state directory ")
      and "full" in body and body.count("\n") == 1, (st, body))
    c("reason_only_to_the_named", far[0] == 503 and far[2] == "not ready\n", far)
    c("healthz_still_ok", probe("/healthz")[0] == 200)
    os.unlink(filler)
    st, _, body = probe("/readyz")
    c("store_room_ready_again", st == 200, (st, body))

    # the audit log replaced by a directory: not ready until it is back
    os.rename(LOG, LOG + ".1")
    os.mkdir(LOG)
    st, _, body = probe("/readyz")
    c("audit_replaced_not_ready", st == 503 and "audit log %s: the file was moved" % LOG in body,
      (st, body))
    os.rmdir(LOG)
    os.rename(LOG + ".1", LOG)
    st, _, body = probe("/readyz")
    c("audit_back_ready", st == 200, (st, body))
    # a write that finds it gone stops the log for good: not ready, with why
    os.rename(LOG, LOG + ".1")
    os.mkdir(LOG)
    probe("/mcp", "POST")  # no token: its refusal is recorded, or tried
    # the refusal's record may be written after the answer: the log has
    # stopped once the readiness says where its records would have gone
    for _ in range(100):
        if "go where nobody looks" in probe("/readyz")[2]:
            break
        time.sleep(0.1)
    os.rmdir(LOG)
    os.rename(LOG + ".1", LOG)
    st, _, body = probe("/readyz")
    c("audit_stopped_not_ready", st == 503 and "not ready: audit log" in body and
      "moved, removed or replaced" in body, (st, body))
finally:
    srv.send_signal(signal.SIGTERM)
    srv.wait(timeout=60)
    shutil.rmtree(SEED, ignore_errors=True)

with open(ERR) as f:
    err = f.read()
c("no_sanitizer_reports", "ERROR: AddressSanitizer" not in err and "runtime error" not in err,
  err[-2000:])
c.done()
