#!/usr/bin/env python3
"""The HTTP listener under a connection flood (docs/MCP.md, "Connections"):
a local process without a token opens more idle connections than the
server takes (600, past the 512 it holds) and a slowloris one that sends
its headers a byte at a time, and yet

- a token holder's MCP initialize and an approver's admin API call are
  answered while the idle connections the server keeps are still open
  (not thanks to the deadline, which has not come for them yet);
- every idle connection, and the slowloris one, is closed within the
  header deadline (--header-timeout 3) of the server taking it, which is
  before it answered the initialize;
- the metrics count what was closed and why;
- one client address cannot hold more than 256 connections, even with a
  token; another address still gets in.

    http_flood.py TOOLGATE REPO TMPDIR

Loopback only; about ten seconds. The process raises its own descriptor
limit (the flood needs some 700).
"""
import http.client
import json
import os
import resource
import selectors
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, issue_token, start_http  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
c = Checks("http_flood")
FLOOD, DEADLINE, PER_ADDRESS = 600, 3, 256

soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
want = 2048 if hard == resource.RLIM_INFINITY else min(hard, 2048)
if soft < want:
    resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
if want < FLOOD + PER_ADDRESS:
    print("skip - integration/http_flood: the descriptor limit (%d) is below %d"
          % (want, FLOOD + PER_ADDRESS))
    sys.exit(0)

shutil.rmtree(TMP, ignore_errors=True)
os.makedirs(TMP)
CAT, STATE = os.path.join(TMP, "catalog"), os.path.join(TMP, "state")
POLICY, ERR = os.path.join(TMP, "policy.json"), os.path.join(TMP, "serve.err")
shutil.copytree(os.path.join(REPO, "examples/catalog"), CAT)
with open(POLICY, "w") as f:
    json.dump({"principals": {"agent": {"scopes": ["*:read"]},
                              "alice": {"scopes": ["sql.*:approve"]}}}, f)
AGENT = issue_token(TG, STATE, POLICY, "agent", "*:read")
ALICE = issue_token(TG, STATE, POLICY, "alice", "sql.*:approve")
srv, port = start_http([TG, "serve", "--catalog", CAT, "--state", STATE, "--policy", POLICY,
                        "--audit", os.path.join(TMP, "audit.log"),
                        "--header-timeout", str(DEADLINE)], ERR)
URL = "http://127.0.0.1:%d" % port


def call(method, path, token, body=None, timeout=10):
    """(status, text) of one request on a connection of its own; (None,
    why) when the connection failed (refused, closed, timed out)."""
    h = {"Authorization": "Bearer " + token, "Accept": "application/json, text/event-stream"}
    if body is not None:
        h["Content-Type"] = "application/json"
    req = urllib.request.Request(URL + path, method=method, headers=h,
                                 data=json.dumps(body).encode() if body is not None else None)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()
    except (OSError, http.client.HTTPException) as e:
        return None, repr(e)


def still_open(socks):
    """How many of socks the server has not closed (peeked, nothing read)."""
    n = 0
    for s in socks:
        s.setblocking(False)
        try:
            n += s.recv(1, socket.MSG_PEEK) != b""
        except BlockingIOError:
            n += 1
        except OSError:
            pass
        s.setblocking(True)
    return n


def connect(src="127.0.0.1"):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.settimeout(5)
    s.connect(("127.0.0.1", port))
    return s


def slowloris(s, sent, stop):
    """Headers a byte every half second, never finished."""
    head = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nX-Slow: " % port + b"a" * 200
    for b in head:
        if stop.is_set():
            return
        try:
            s.send(bytes([b]))
        except OSError:
            return
        sent[0] += 1
        time.sleep(0.5)


# ---- the flood ------------------------------------------------------------------
t0 = time.monotonic()
flood = []
for _ in range(FLOOD):
    try:
        flood.append(connect())
    except OSError:
        break
c("flood_opened", len(flood) == FLOOD, "%d of %d connections opened" % (len(flood), FLOOD))
slow, sent, stop = connect(), [0], threading.Event()
threading.Thread(target=slowloris, args=(slow, sent, stop), daemon=True).start()
time.sleep(0.2)

# the server takes connections in the order they came: when it answers
# this one, it has taken (and timed) every one of the flood
status, text = call("POST", "/mcp", AGENT, {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {},
               "clientInfo": {"name": "t", "version": "1"}}})
t_init = time.monotonic()
c("token_holder_initializes_during_flood", status == 200 and '"serverInfo"' in text,
  "status %s after %.2f s: %s" % (status, t_init - t0, text[:200]))
status, text = call("GET", "/admin/tickets", ALICE)
c("admin_api_answers_during_flood", status == 200 and '"tickets"' in text,
  "status %s after %.2f s: %s" % (status, time.monotonic() - t0, text[:200]))
waiting = still_open(flood)
c("answered_while_idle_connections_wait", waiting >= 100,
  "%d idle connections still open when both were answered" % waiting)

# ---- every idle connection closed within the deadline ---------------------------
sel = selectors.DefaultSelector()
for s in flood + [slow]:
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ)
open_ = len(flood) + 1
closed_at = {}
limit = t_init + DEADLINE + 1.5
while open_ and time.monotonic() < limit:
    for key, _ in sel.select(timeout=0.2):
        try:
            data = key.fileobj.recv(4096)
        except BlockingIOError:
            continue
        except OSError:
            data = b""
        if not data:
            closed_at[key.fileobj] = time.monotonic() - t0
            sel.unregister(key.fileobj)
            open_ -= 1
stop.set()
c("idle_connections_closed_within_the_deadline",
  all(s in closed_at for s in flood),
  "%d of %d still open %.1f s after they were opened"
  % (sum(s not in closed_at for s in flood), len(flood), limit - t0))
c("slowloris_closed_within_the_deadline", slow in closed_at and sent[0] >= 4,
  "closed after %s s, having sent %d bytes" % (closed_at.get(slow), sent[0]))
for s in flood + [slow]:
    s.close()

status, text = call("GET", "/metrics", ALICE)  # an approver: docs/METRICS.md
metrics = {}
for line in text.splitlines():
    if line.startswith("toolgate_http_connections"):
        name, value = line.rsplit(" ", 1)
        metrics[name] = float(value)
timeout_n = metrics.get('toolgate_http_connections_closed_total{reason="header_timeout"}', 0)
budget_n = metrics.get('toolgate_http_connections_closed_total{reason="waiting_budget"}', 0)
c("metrics_count_the_closed", status == 200 and timeout_n >= 1 and budget_n >= 1 and
  timeout_n + budget_n >= FLOOD + 1, "status %s: %s" % (status, metrics))

# ---- one address, 256 connections -------------------------------------------------
def authenticated(src):
    """A connection that made one request with a token, kept open."""
    s = connect(src)
    s.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n\r\n"
              % (port, AGENT.encode()))
    got = b""
    while b"\r\n\r\n" not in got:
        part = s.recv(4096)
        if not part:
            return s, None
        got += part
    head, body = got.split(b"\r\n\r\n", 1)
    length = int([h.split(b":")[1] for h in head.split(b"\r\n")
                  if h.lower().startswith(b"content-length:")][0])
    while len(body) < length:
        body += s.recv(4096)
    return s, int(head.split()[1])


held, statuses = [], set()
for _ in range(PER_ADDRESS):
    try:
        s, st = authenticated("127.0.0.1")
    except OSError as e:
        statuses.add(repr(e))
        break
    held.append(s)
    statuses.add(st)
c("an_address_holds_its_connections", len(held) == PER_ADDRESS and statuses == {406},
  "%d held, statuses %s" % (len(held), statuses))
try:
    s, st = authenticated("127.0.0.1")
    s.close()
except OSError as e:
    st = repr(e)
c("one_address_past_its_limit_is_refused", st is None or "Error" in str(st), "got %s" % st)
try:
    s, st = authenticated("127.0.0.2")
    s.close()
except OSError as e:
    st = repr(e)
c("another_address_still_gets_in", st == 406, "got %s" % st)
for s in held:
    s.close()
status, text = call("GET", "/metrics", ALICE)  # an approver: docs/METRICS.md
refused = [line for line in text.splitlines()
           if line.startswith('toolgate_http_connections_refused_total{reason="per_address"}')]
c("metrics_count_the_refused", refused and float(refused[0].split()[-1]) >= 1, text[-600:])

srv.terminate()
rc = srv.wait(timeout=60)
err = open(ERR).read()
c("server_exits_cleanly", rc == 0 and "Sanitizer" not in err and "runtime error:" not in err,
  "rc=%s %s" % (rc, err[-2000:]))
c.done()
