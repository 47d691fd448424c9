#!/usr/bin/env python3
"""Event streams of Streamable HTTP against toolgate serve --http: a
legacy session's GET stream, resuming a broken answer with Last-Event-ID,
a modern answer whose closing cancels the call, and 2026-07-28
subscriptions/listen with its graceful end when the server stops. Prints
"ok - ..." or "not ok - ...: why" per check.
Usage: mcp_streams.py TOOLGATE CATALOG RECORD-FILE (the catalogue has
slow.steps: six progress reports 0.3 s apart, then {"steps": 6})"""
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import META, Checks, events, request as req, start_http  # noqa: E402

TG, CATALOG, RECORD = sys.argv[1:4]
check = Checks("streams")


def start():
    return start_http([TG, "serve", "--catalog", CATALOG, "--record", RECORD], RECORD + ".err")


def request(port, method, body=None, headers=None, timeout=10):
    return req(port, method, body, headers, timeout)


p, port = start()
try:
    r = request(port, "POST", {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                               "params": {"protocolVersion": "2025-11-25", "capabilities": {}}})
    sid = r.getheader("Mcp-Session-Id")
    r.read()
    S = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
    request(port, "POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, S).read()

    # the GET stream: primed at once, one at a time, ended by DELETE
    g = request(port, "GET", None, dict(S, Accept="text/event-stream"))
    first = events(g, until=1)
    check("get_stream_opens", g.status == 200 and g.getheader("Content-Type") == "text/event-stream" and
          first and first[0][0].endswith("-0") and first[0][1] is None, "%s %s" % (g.status, first))
    r2 = request(port, "GET", None, dict(S, Accept="text/event-stream"))
    check("second_get_stream_409", r2.status == 409, r2.status)
    r2.read()
    for hdrs, want, name in (({"Accept": "text/event-stream"}, 400, "get_without_session_400"),
                             (dict(S, Accept="application/json"), 406, "get_without_event_stream_406"),
                             ({"Accept": "text/event-stream", "Mcp-Session-Id": "0" * 32}, 404,
                              "get_unknown_session_404"),
                             (dict(S, Accept="text/event-stream", **{"Last-Event-ID": "junk"}), 400,
                              "bad_last_event_id_400"),
                             (dict(S, Accept="text/event-stream", **{"Last-Event-ID": "99-1"}), 400,
                              "unknown_stream_400")):
        x = request(port, "GET", None, hdrs)
        check(name, x.status == want, "%s %s" % (x.status, x.read()[:200]))

    # an answer whose connection breaks goes on; a GET with Last-Event-ID
    # takes the rest of it over, the response included
    a = request(port, "POST", {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
                               "params": {"name": "slow.steps", "arguments": {},
                                          "_meta": {"progressToken": "t"}}}, S)
    got = events(a, until=3)  # the priming event, progress 1 and 2
    a.close()
    last = got[-1][0]
    rest = events(request(port, "GET", None, dict(S, Accept="text/event-stream", **{"Last-Event-ID": last}),
                          timeout=30))
    ids = [int(e[0].split("-")[1]) for e in rest]
    final = [e[1] for e in rest if e[1] and e[1].get("id") == 7]
    check("resume_after_last_event_id",
          ids and ids[0] == int(last.split("-")[1]) + 1 and ids == list(range(ids[0], ids[0] + len(ids))) and
          final and final[0]["result"]["structuredContent"] == {"steps": 6} and
          [e[1]["params"]["progress"] for e in rest if e[1] and e[1].get("method")] == list(range(3, 7)),
          "got %s then %s" % (got, rest))
    x = request(port, "GET", None, dict(S, Accept="text/event-stream", **{"Last-Event-ID": last}))
    check("resumed_stream_read_to_its_end_is_gone", x.status == 400, x.status)
    x.read()

    # answers abandoned past the 32 a session keeps push the oldest out,
    # never the GET stream: DELETE still ends it
    for i in range(34):
        x = request(port, "POST", {"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
                                   "params": {"name": "quick", "arguments": {}, "_meta": {"progressToken": i}}}, S)
        events(x, until=1)
        x.close()
    # DELETE ends the session's GET stream
    request(port, "DELETE", None, S).read()
    t0 = time.time()
    tail = events(g)
    check("delete_ends_get_stream", time.time() - t0 < 10 and tail == [], tail)

    # the modern era: closing the answer's stream cancels the call
    with open(RECORD) as f:
        before = sum(1 for line in f if line.strip())
    a = request(port, "POST", {"jsonrpc": "2.0", "id": 8, "method": "tools/call",
                               "params": {"name": "slow.steps", "arguments": {},
                                          "_meta": dict(META, progressToken="m")}},
                {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "slow.steps"})
    ev = events(a, until=1)
    check("modern_answer_has_no_ids", a.status == 200 and a.getheader("Content-Type") == "text/event-stream" and
          ev and ev[0][0] is None and ev[0][1]["method"] == "notifications/progress", "%s %s" % (a.status, ev))
    a.close()
    # its record, not any that comes next: the quick calls above, whose
    # streams were closed after their first event, may still be recording
    # (a loaded machine, the sanitizers)
    for _ in range(300):
        with open(RECORD) as f:
            recs = [json.loads(line) for line in f if line.strip()][before:]
        slow = [r["outcome"] for r in recs if r.get("tool") == "slow.steps"]
        if slow:
            break
        time.sleep(0.1)
    check("modern_closed_stream_cancels_the_call", slow == ["cancelled"],
          [(r.get("tool"), r.get("outcome")) for r in recs])

    # subscriptions/listen: the acknowledgment first, with the subscription
    # id and what the server honors (everything asked: a reload can change
    # any of it); open until the server stops, then the completion result
    L = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}
    bad = request(port, "POST", {"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
                                 "params": {"notifications": 5, "_meta": META}}, L)
    body = json.loads(bad.read())
    check("listen_bad_filter", body.get("error", {}).get("code") == -32602, body)
    nometa = request(port, "POST", {"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
                                    "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}},
                     L)
    check("modern_missing_capabilities_400", nometa.status == 400, nometa.status)
    nometa.read()
    ls = request(port, "POST", {"jsonrpc": "2.0", "id": "sub-1", "method": "subscriptions/listen",
                                "params": {"notifications": {"toolsListChanged": True, "bogus": True,
                                                             "resourceSubscriptions": ["test://x"]},
                                           "_meta": META}}, L, timeout=30)
    ack = events(ls, until=1)
    check("listen_acknowledged",
          ls.status == 200 and ack and ack[0][0] is None and
          ack[0][1]["method"] == "notifications/subscriptions/acknowledged" and
          ack[0][1]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1" and
          ack[0][1]["params"]["notifications"] == {"toolsListChanged": True, "resourceSubscriptions": ["test://x"]},
          "%s %s" % (ls.status, ack))
    gone = request(port, "POST", {"jsonrpc": "2.0", "id": "sub-2", "method": "subscriptions/listen",
                                  "params": {"notifications": {}, "_meta": META}}, L)
    events(gone, until=1)
    gone.close()  # a client that closes its stream ends its subscription
    time.sleep(0.2)
    p.terminate()
    end = events(ls)
    rc = p.wait(timeout=20)
    check("listen_ends_with_completion_on_stop",
          rc == 0 and len(end) == 1 and end[0][1]["id"] == "sub-1" and end[0][1]["result"]["resultType"] ==
          "complete" and end[0][1]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == "sub-1",
          "rc=%s %s" % (rc, end))
finally:
    if p.poll() is None:
        p.kill()
        p.wait()
check.done()
