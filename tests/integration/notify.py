#!/usr/bin/env python3
"""Webhooks (docs/NOTIFY.md): `toolgate serve --policy` with a webhook whose
receiver listens on 127.0.0.1, checks every signature as docs/NOTIFY.md
tells a receiver to (HMAC-SHA256 over "T." and the body, a 5-minute
window, a constant-time compare) and counts deliveries per event id:

- a held write's ticket is told as created, its approval by `toolgate
  approvals approve` (another process) as approved, its run as executed;
  a rejection with its reason; each event id arrives once, every
  signature holds, no body carries the arguments;
- a receiver that is down does not hold up a call (the call completes and
  its ticket exists; no timing is asserted), each failed attempt is
  recorded and counted, and deliveries resume when it returns;
- an event still to deliver when the gateway stops (its receiver down) is
  delivered once after a restart, and none delivered before is sent again;
- a stdio gateway sharing the store (a host's session) does not deliver
  what the HTTP one does; when the HTTP one stops, it takes over;
- a webhook url naming the metadata address (169.254.169.254, or spelled
  0xa9fea9fe) is refused when the policy loads, naming the file and field.

    notify.py TOOLGATE REPO TMPDIR
"""
import collections
import hashlib
import hmac
import http.server
import json
import os
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, example_gateway, free_port, issue_token, modern_post, start_http  # noqa

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
c = Checks("notify")
CAT, WS = example_gateway(REPO, TMP)
STATE, POLICY, KEYF = (os.path.join(TMP, n) for n in ("state", "policy.json", "hook.key"))
LOG = os.path.join(STATE, "audit.log")
SECRET = os.urandom(32).hex()
with open(KEYF, "w") as f:
    f.write(SECRET + "\n")
os.chmod(KEYF, 0o600)
PORT = free_port()


class Receiver:
    """A webhook receiver on 127.0.0.1:PORT that may be stopped and started."""

    def __init__(self):
        self.seen = collections.Counter()   # event id -> deliveries
        self.bodies = {}                    # event id -> body
        self.bad = []                       # what failed the check
        self.srv = None

    def start(self):
        rec = self

        class H(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                sig = self.headers.get("X-Toolgate-Signature", "")
                parts = dict(p.split("=", 1) for p in sig.split(",") if "=" in p)
                t = parts.get("t", "0")
                want = hmac.new(SECRET.encode(), t.encode() + b"." + body,
                                hashlib.sha256).hexdigest()
                ok = (t.isascii() and t.isdigit() and abs(time.time() - int(t)) <= 300 and
                      hmac.compare_digest(want.encode(), parts.get("v1", "").encode()))
                ev = json.loads(body) if ok else {}
                if not ok or ev.get("id") != self.headers.get("X-Toolgate-Event"):
                    rec.bad.append(sig)
                    self.send_response(401)
                else:
                    rec.seen[ev["id"]] += 1
                    rec.bodies[ev["id"]] = ev
                    self.send_response(204)
                self.end_headers()

            def log_message(self, *a):
                pass

        self.srv = http.server.ThreadingHTTPServer(("127.0.0.1", PORT), H)
        threading.Thread(target=self.srv.serve_forever, daemon=True).start()

    def stop(self):
        self.srv.shutdown()
        self.srv.server_close()

    def find(self, ticket, event):
        return [b for b in list(self.bodies.values())
                if b.get("ticket") == ticket and b.get("event") == event]

    def wait(self, ticket, event, seconds=15):
        end = time.time() + seconds
        while time.time() < end:
            got = self.find(ticket, event)
            if got:
                return got[0]
            time.sleep(0.05)
        return None


def write_policy(path, hooks):
    with open(path, "w") as f:
        json.dump({"principals": {"agent": {"scopes": ["*:read", "fs.*:write"]},
                                  "ops": {"scopes": ["fs.*:approve"]},
                                  "prometheus": {"scopes": ["metrics:scrape"]}},
                   "writes": {"wait": "0"}, "notify": {"webhooks": hooks}}, f)


HOOK = {"name": "ops", "url": "http://127.0.0.1:%d/hook" % PORT, "tools": ["fs.*"],
        "secret_file": KEYF}
write_policy(POLICY, [HOOK])

# ---- the metadata address is refused when the policy loads --------------------------------
for n, url in enumerate(["http://169.254.169.254/latest", "https://0xa9fea9fe/x"]):
    bad = os.path.join(TMP, "bad%d.json" % n)
    write_policy(bad, [dict(HOOK, url=url)])
    p = subprocess.run([TG, "serve", "--catalog", CAT, "--state", STATE, "--policy", bad,
                        "--stdio"], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                       timeout=60)
    c("metadata_refused_%d" % n, p.returncode != 0 and
      "bad%d.json: notify.webhooks[0].url" % n in p.stderr and "metadata" in p.stderr, p.stderr)

TOKEN = issue_token(TG, STATE, POLICY, "agent", "*:read", "fs.*:write")
OPS = os.path.join(TMP, "ops.tok")
with open(OPS, "w") as f:
    f.write(issue_token(TG, STATE, POLICY, "ops", "fs.*:approve") + "\n")
os.chmod(OPS, 0o600)
SCRAPER = issue_token(TG, STATE, POLICY, "prometheus", "metrics:scrape")


def call(port, args, key):
    r = modern_post(port, "tools/call", {
        "id": 1, "name": "fs.write", "arguments": args,
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}},
        {"Authorization": "Bearer " + TOKEN, "Idempotency-Key": key})
    return r.get("result", {})


def ticket_of(result):
    return result.get("_meta", {}).get("dev.toolgate/error", {}).get("ticket", "")


def cli(*argv):
    return subprocess.run([TG, *argv, "--state", STATE], capture_output=True, text=True,
                          timeout=60)


rx = Receiver()
rx.start()
err = os.path.join(TMP, "serve.err")
err2 = os.path.join(TMP, "serve2.err")
err3 = os.path.join(TMP, "stdio.err")
srv, port = start_http([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE,
                        "--policy", POLICY], err)
try:
    # ---- created, approved in another process, executed ----------------------------------
    args = {"path": "notes/hook.txt", "content": "secret-argument-42\n"}
    t1 = ticket_of(call(port, args, "k-hook-1"))
    made = rx.wait(t1, "created")
    c("created", t1 and made and made["tool"] == "fs.write@1.0.0" and
      made["principal"] == "agent" and made["state"] == "pending" and
      "agent asks to run fs.write" in made["text"], json.dumps(made))
    p = cli("approvals", "approve", t1, "--policy", POLICY, "--token-file", OPS)
    ok = rx.wait(t1, "approved")
    c("approved_by_another_process", p.returncode == 0 and ok and ok["approver"] == "ops" and
      "decided" in ok, p.stderr + json.dumps(ok))
    ran = call(port, args, "k-hook-1")
    done = rx.wait(t1, "executed")
    c("executed", not ran.get("isError") and done is not None, json.dumps(ran)[:300])

    # ---- a receiver that is down: the call goes on, the delivery waits ---------------------
    rx.stop()
    args2 = {"path": "notes/hook2.txt", "content": "x\n"}
    t2 = ticket_of(call(port, args2, "k-hook-2"))
    shown = cli("approvals", "show", t2, "--json")
    c("down_call_completes", t2 and shown.returncode == 0 and
      json.loads(shown.stdout or "{}").get("state") == "pending", shown.stdout + shown.stderr)
    time.sleep(1.5)  # an attempt or two fail
    rx.start()
    back = rx.wait(t2, "created", seconds=20)
    c("resumes_when_back", back is not None, str(rx.bodies.keys()))
    p = cli("approvals", "reject", t2, "--policy", POLICY, "--token-file", OPS, "--reason",
            "not <now> & not here")
    no = rx.wait(t2, "rejected")
    c("rejected_with_reason", p.returncode == 0 and no and
      no.get("reason") == "not <now> & not here" and "&lt;now&gt;" in no["text"],
      p.stderr + json.dumps(no))

    # ---- counted ---------------------------------------------------------------------------
    req = urllib.request.Request("http://127.0.0.1:%d/metrics" % port,
                                 headers={"Authorization": "Bearer " + SCRAPER})
    metrics = urllib.request.urlopen(req, timeout=20).read().decode()
    c("counted", 'toolgate_webhook_deliveries_total{webhook="ops",outcome="delivered"} 5'
      in metrics and 'toolgate_webhook_deliveries_total{webhook="ops",outcome="failed"}'
      in metrics, "\n".join(x for x in metrics.splitlines() if "webhook" in x))

    # ---- a restart with an event still to deliver ------------------------------------------
    rx.stop()
    t3 = ticket_of(call(port, {"path": "notes/hook3.txt", "content": "y\n"}, "k-hook-3"))
    srv.terminate()
    c("stops_with_a_delivery_waiting", srv.wait(timeout=60) == 0, open(err).read()[-2000:])
    rx.start()
    srv, port = start_http([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE,
                            "--policy", POLICY], err2)
    back = rx.wait(t3, "created", seconds=20)
    time.sleep(1.5)  # what was delivered before the stop would come again now
    c("delivered_after_restart", t3 and back is not None and rx.seen[back["id"]] == 1,
      "%s %s" % (t3, dict(rx.seen)))

    # ---- a stdio gateway on the same store: one of the two delivers -----------------------
    session = subprocess.Popen([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE,
                                "--policy", POLICY, "--stdio", "--principal", "agent"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=open(err3, "w"), text=True)

    def stdio(msg):
        session.stdin.write(json.dumps(msg) + "\n")
        session.stdin.flush()
        return json.loads(session.stdout.readline()) if "id" in msg else None

    stdio({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}})
    stdio({"jsonrpc": "2.0", "method": "notifications/initialized"})
    t4 = ticket_of(call(port, {"path": "notes/hook4.txt", "content": "z\n"}, "k-hook-4"))
    four = rx.wait(t4, "created")
    time.sleep(1.5)  # the stdio gateway would send it too now
    c("shared_store_delivered_once", four is not None and rx.seen[four["id"]] == 1,
      "%s %s" % (t4, dict(rx.seen)))
    srv.terminate()
    srv.wait(timeout=60)
    r = stdio({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "fs.write", "arguments": {"path": "notes/hook5.txt", "content": "w\n"}}})
    t5 = ticket_of(r.get("result", {}))
    five = rx.wait(t5, "created", seconds=20)
    c("stdio_takes_over", t5 and five is not None, "%s %s" % (json.dumps(r)[:300], dict(rx.seen)))
    session.stdin.close()
    session.wait(timeout=60)
finally:
    srv.terminate()
    srv.wait(timeout=60)
    rx.stop()

# ---- once each, signed, without the arguments --------------------------------------------
c("each_once", len(rx.seen) == 8 and set(rx.seen.values()) == {1} and not rx.bad,
  "%s bad %s" % (dict(rx.seen), rx.bad))
c("no_arguments", not any("secret-argument-42" in json.dumps(b) or "arguments" in b or
                          "preview" in b for b in rx.bodies.values()), str(rx.bodies))
recs = [json.loads(x) for x in open(LOG) if x.endswith("}\n")]
failed = [r for r in recs if r.get("outcome") == "webhook_failed"]
later = [r for r in recs if r.get("outcome") == "webhook_delivered"]
c("failures_recorded", failed and failed[0].get("subject") == "webhook ops" and
  "attempt 1" in failed[0].get("error", "") and later and
  "delivered after" in later[0].get("error", ""), json.dumps(failed[:2] + later[:1]))
text = open(err).read() + open(err2).read() + open(err3).read()
c("no_sanitizer_reports", "ERROR: AddressSanitizer" not in text and "runtime error" not in text,
  text[-2000:])
c.done()
