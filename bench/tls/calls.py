#!/usr/bin/env python3
"""tools/call of a trivial tool, one after another on one keep-alive
connection (a host's session), over http or https: the median and p99 of
N calls in microseconds, and a handshake's cost (a new connection's first
call), as JSON. The client is the same for every server, so the
differences are the servers' (and TLS's).

    calls.py URL N [CAFILE]
"""
import http.client
import json
import ssl
import sys
import time
import urllib.parse

url, n = urllib.parse.urlsplit(sys.argv[1]), int(sys.argv[2])
ctx = ssl.create_default_context(cafile=sys.argv[3]) if len(sys.argv) > 3 else None
HDR = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json",
       "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"}
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}
BODY = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "echo", "arguments": {"x": 1}, "_meta": META}})


def connection():
    if url.scheme == "https":
        return http.client.HTTPSConnection(url.hostname, url.port, context=ctx, timeout=30)
    return http.client.HTTPConnection(url.hostname, url.port, timeout=30)


def one(c):
    c.request("POST", url.path, body=BODY, headers=HDR)
    r = c.getresponse()
    body = r.read()
    if r.status != 200 or b'"result"' not in body:
        raise SystemExit("%s: %d %s" % (sys.argv[1], r.status, body[:200]))


c = connection()
for _ in range(20):  # warm: the server's caches, the connection
    one(c)
times = []
for _ in range(n):
    t = time.perf_counter()
    one(c)
    times.append((time.perf_counter() - t) * 1e6)
c.close()
fresh = []
for _ in range(max(n // 10, 20)):
    t = time.perf_counter()
    c = connection()
    one(c)
    c.close()
    fresh.append((time.perf_counter() - t) * 1e6)
times.sort()
fresh.sort()
print(json.dumps({"p50_us": round(times[len(times) // 2], 1),
                  "p99_us": round(times[len(times) * 99 // 100], 1),
                  "new_connection_p50_us": round(fresh[len(fresh) // 2], 1)}))
