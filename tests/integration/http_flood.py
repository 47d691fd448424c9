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
- answers refused for want of a token do not count against the waiting
  budget once answered: 800 of them, 8 at a time, next to 120 idle
  connections, close none of those;
- a token holder keeps at most 64 connections: its 100 keep-alive ones
  leave 64 open, its oldest closed; a listener full of 512 token holders'
  idle connections (the approver's address holding 256 of them) still
  takes an approver's, closing the longest-idle one (of its address, then
  of all);
- one client address cannot hold more than 256 connections that serve
  requests (held by their bodies, four principals' 64 each); another
  address still gets in; a principal whose 64 all serve is answered 429.

    http_flood.py TOOLGATE REPO TMPDIR

Loopback only; about ten seconds (thirty under the sanitizers). The
process raises its own descriptor limit (the flood needs some 700).
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, issue_token, nobody_workspace, start_http  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
c = Checks("http_flood")
FLOOD, DEADLINE, PER_ADDRESS, PER_PRINCIPAL, LIMIT = 600, 3, 256, 64, 512

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
shutil.copytree(os.path.join(REPO, "examples/data"), os.path.join(TMP, "data"))
os.chown(os.path.join(TMP, "data"), 65534, 65534)  # sql.execute writes it
WS = nobody_workspace(REPO, TMP)
OTHERS = ["p%d" % i for i in range(1, 8)]  # seven more token holders
with open(POLICY, "w") as f:
    json.dump({"principals": dict({"agent": {"scopes": ["*:read"]},
                                   "alice": {"scopes": ["sql.*:approve"]}},
                                  **{p: {"scopes": ["*:read"]} for p in OTHERS})}, f)
AGENT = issue_token(TG, STATE, POLICY, "agent", "*:read")
ALICE = issue_token(TG, STATE, POLICY, "alice", "sql.*:approve")
TOKEN = {p: issue_token(TG, STATE, POLICY, p, "*:read") for p in OTHERS}
srv, port = start_http([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE,
                        "--policy", POLICY,
                        "--audit", os.path.join(TMP, "audit.log"),
                        "--header-timeout", str(DEADLINE)], ERR)


def call(method, path, token, body=None, timeout=10, src="127.0.0.1"):
    """(status, text) of one request on a connection of its own from
    address src; (None, why) when the connection failed (refused, closed,
    timed out)."""
    h = {"Accept": "application/json, text/event-stream", "Connection": "close"}
    if token:
        h["Authorization"] = "Bearer " + token
    if body is not None:
        h["Content-Type"] = "application/json"
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout, source_address=(src, 0))
    try:
        conn.request(method, path, body=json.dumps(body) if body is not None else None, headers=h)
        r = conn.getresponse()
        return r.status, r.read().decode()
    except (OSError, http.client.HTTPException) as e:
        return None, repr(e)
    finally:
        conn.close()


def scrape():
    """The connection metrics, as an approver reads them (docs/METRICS.md)."""
    status, text = call("GET", "/metrics", ALICE)
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if status == 200 and line.startswith("toolgate_http_connections")}


def closed(reason):
    return 'toolgate_http_connections_closed_total{reason="%s"}' % reason


def refused(reason):
    return 'toolgate_http_connections_refused_total{reason="%s"}' % reason


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

metrics = scrape()
timeout_n, budget_n = metrics.get(closed("header_timeout"), 0), metrics.get(closed("waiting_budget"), 0)
c("metrics_count_the_closed", timeout_n >= 1 and budget_n >= 1 and timeout_n + budget_n >= FLOOD + 1,
  "%s" % metrics)


# ---- refused answers do not wait ---------------------------------------------------
def tokenless(n):
    for _ in range(n):
        call("GET", "/mcp", None)


idle = [connect() for _ in range(120)]
time.sleep(0.2)
before = scrape().get(closed("waiting_budget"), 0)
workers = [threading.Thread(target=tokenless, args=(100,)) for _ in range(8)]
for t in workers:
    t.start()
for t in workers:
    t.join()
after = scrape().get(closed("waiting_budget"), 0)
# 120 wait (until the deadline), and at most 8 more that have not sent
# their headers yet: an answered 401 that waited again, until its close,
# would push the longest-waiting out
c("refused_answers_do_not_wait", after == before,
  "%d closed for the waiting budget" % (after - before))
for s in idle:
    s.close()


# ---- token holders' idle connections ---------------------------------------------
def authenticated(src, token=AGENT, body=None):
    """A connection that made one request with a token, kept open: the
    socket and the status (None: closed unanswered). body: a POST whose
    body never comes (the connection serves it until then), unread."""
    s = connect(src)
    if body is not None:
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n"
                  b"Accept: application/json, text/event-stream\r\n"
                  b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                  % (port, token.encode(), body))
        return s, 0
    s.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nAuthorization: Bearer %s\r\n\r\n"
              % (port, token.encode()))
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


def hold(src, token, n, body=None):
    """n connections of token's from src: (sockets, set of statuses)."""
    socks, statuses = [], set()
    for _ in range(n):
        try:
            s, st = authenticated(src, token, body)
        except OSError as e:
            statuses.add(repr(e))
            continue
        socks.append(s)
        statuses.add(st)
    return socks, statuses


def settle(state, ok):
    """Wait (up to 5 s) for the server's count of connections in state to
    be ok(n)."""
    key = 'toolgate_http_connections{state="%s"}' % state
    for _ in range(50):
        n = scrape().get(key)
        if n is not None and ok(n):
            return n
        time.sleep(0.1)
    return n


agent, st = hold("127.0.0.2", AGENT, 100)
time.sleep(0.2)
# the oldest closed: those that went idle first on the server's side, which
# a connection whose thread sent its answer but was slow to finish may miss
oldest = still_open(agent[:100 - PER_PRINCIPAL])
c("a_principal_keeps_at_most_64_idle", st == {406} and still_open(agent) == PER_PRINCIPAL and
  oldest <= 4, "statuses %s; %d of 100 open, %d of its oldest 36" % (st, still_open(agent), oldest))
agent = [s for s in agent if still_open([s])]
# 448 more of seven other principals: 192 from one address, 256 from the
# approver's own; with the agent's 64, the listener's 512 are taken
others, sts = {}, set()
for i, p in enumerate(OTHERS):
    others[p], st = hold("127.0.0.3" if i < 3 else "127.0.0.1", TOKEN[p], PER_PRINCIPAL)
    sts |= st
held = agent + sum(others.values(), [])
c("the_listener_fills_with_idle_token_holders", sts == {406} and still_open(held) == LIMIT,
  "statuses %s, %d of %d open" % (sts, still_open(held), LIMIT))
# the approver's address is full: its longest-idle connection makes room
here = sum((others[p] for p in OTHERS[3:]), [])
status, text = call("GET", "/admin/tickets", ALICE)
time.sleep(0.1)
c("approver_gets_in_past_its_address_full_of_idle", status == 200 and '"tickets"' in text and
  still_open(here) == PER_ADDRESS - 1 and still_open(held) == LIMIT - 1,
  "status %s %s; %d of the address's open, %d of all" %
  (status, text[:200], still_open(here), still_open(held)))
# the listener is full again (the approver keeps a connection of her own):
# the longest-idle of all makes room for her next
mine, st = hold("127.0.0.8", ALICE, 1)
status, text = call("GET", "/admin/tickets", ALICE, src="127.0.0.9")
time.sleep(0.1)
c("approver_gets_in_past_a_listener_full_of_idle", st == {406} and status == 200 and
  still_open(agent) == PER_PRINCIPAL - 1 and still_open(held + mine) == LIMIT - 1,
  "status %s %s %s; %d of the longest-idle principal's open, %d of all" %
  (st, status, text[:200], still_open(agent), still_open(held + mine)))
metrics = scrape()
c("metrics_count_the_closed_for_room",
  metrics.get(closed("per_principal"), 0) >= 100 - PER_PRINCIPAL and
  metrics.get(closed("room"), 0) >= 2, "%s" % metrics)
for s in held + mine:
    s.close()
settle("idle", lambda n: n == 0)

# ---- one address, 256 connections serving requests ----------------------------------
serving, sts = [], set()
for p in OTHERS[:4]:
    socks, st = hold("127.0.0.5", TOKEN[p], PER_PRINCIPAL, body=100)
    serving += socks
    sts |= st
n = settle("serving", lambda n: n > PER_ADDRESS)  # and the scrape's own
c("an_address_holds_its_serving_connections", len(serving) == PER_ADDRESS and sts == {0} and
  n > PER_ADDRESS, "%d held, statuses %s, %s serving" % (len(serving), sts, n))
try:
    s, st = authenticated("127.0.0.5")
    s.close()
except OSError as e:
    st = repr(e)
c("one_address_past_its_limit_is_refused", st is None or "Error" in str(st), "got %s" % st)
try:
    s, st = authenticated("127.0.0.6")
    s.close()
except OSError as e:
    st = repr(e)
c("another_address_still_gets_in", st == 406, "got %s" % st)
for _ in range(10):  # once the server has read each of its 64's headers
    status, text = call("GET", "/mcp", TOKEN[OTHERS[0]], src="127.0.0.6")
    if status == 429:
        break
    time.sleep(0.2)
c("a_principal_with_64_serving_is_answered_429", status == 429 and "64 connections" in text,
  "status %s %s" % (status, text[:300]))
for s in serving:
    s.close()
metrics = scrape()
c("metrics_count_the_refused", metrics.get(refused("per_address"), 0) >= 1 and
  metrics.get(refused("per_principal"), 0) >= 1, "%s" % metrics)

srv.terminate()
rc = srv.wait(timeout=60)
err = open(ERR).read()
c("server_exits_cleanly", rc == 0 and "Sanitizer" not in err and "runtime error:" not in err,
  "rc=%s %s" % (rc, err[-2000:]))
c.done()
