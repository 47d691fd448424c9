#!/usr/bin/env python3
"""An upstream for tests/unit/test_upstream_run.c (relay_late,
relay_read_before) whose requests to its client come when a gateway cannot
tell whose call they are for. It ignores notifications/cancelled, as a slow
or careless server may. Its tools:

  a    never answered; 1.5 s and 1.6 s after it came, the server sends
       sampling/createMessage carrying a's arguments (for a call that has
       ended at the gateway by then)
  b    answered {} after 3 s
  p    sends notifications/progress with the call's progressToken, then at
       once sampling/createMessage carrying p's arguments; answers p with
       the client's answer to it ({"answer": {"result": ...} or
       {"error": ...}})
  die  the server exits, answering nothing
"""
import json
import os
import sys
import threading

lock = threading.Lock()
asked = {}      # our request's id -> the tools/call it serves
next_id = [1000]


def send(msg):
    with lock:
        sys.stdout.write(json.dumps(msg) + "\n")
        sys.stdout.flush()


def later(delay, msg):
    t = threading.Timer(delay, send, [msg])
    t.daemon = True
    t.start()


def sampling(rid, args):
    return {"jsonrpc": "2.0", "id": rid, "method": "sampling/createMessage",
            "params": {"maxTokens": 5, "messages": [{"role": "user", "content": {
                "type": "text", "text": json.dumps(args)}}]}}


def answered(mid, res):
    send({"jsonrpc": "2.0", "id": mid, "result": {
        "content": [{"type": "text", "text": json.dumps(res)}],
        "structuredContent": res, "isError": False}})


def tools_call(mid, p):
    name, args = p.get("name"), p.get("arguments")
    if name == "a":
        later(1.5, sampling(777, args))
        later(1.6, sampling(778, args))
    elif name == "b":
        t = threading.Timer(3.0, answered, [mid, {}])
        t.daemon = True
        t.start()
    elif name == "p":
        token = (p.get("_meta") or {}).get("progressToken")
        if token is not None:
            send({"jsonrpc": "2.0", "method": "notifications/progress",
                  "params": {"progressToken": token, "progress": 1}})
        next_id[0] += 1
        asked[next_id[0]] = mid
        send(sampling(next_id[0], args))
    elif name == "die":
        os._exit(0)


for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    method, mid = m.get("method"), m.get("id")
    if method is None and mid in asked:
        answered(asked.pop(mid), {"answer": {k: m[k] for k in ("result", "error")
                                             if k in m}})
    elif method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "late", "version": "1"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": [
            {"name": n, "inputSchema": {"type": "object"}} for n in ("a", "b", "p", "die")]}})
    elif method == "tools/call":
        tools_call(mid, m.get("params") or {})
    elif method == "ping" and mid is not None:
        send({"jsonrpc": "2.0", "id": mid, "result": {}})
    elif mid is not None and method:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no"}})
