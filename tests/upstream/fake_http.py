#!/usr/bin/env python3
"""A fake upstream MCP server over Streamable HTTP, for
tests/unit/test_upstream_http.c: the standard library's threaded HTTP
server on 127.0.0.1, at /mcp. It binds the port given (0: any), prints it
on stdout as one line, and serves until killed.

  fake_http.py PORT [--sse] [--get] [--modern] [--log FILE]

  --sse    every answer to a request is a text/event-stream, not JSON
  --get    the GET stream is served (a notifications/message "hello from
           GET" on it, then it stays open); without it, GET is 405
  --modern a stateless 2026-07-28 server instead (below)
  --log F  one line a request appended to F: "METHOD SESSION RPC-METHOD
           MCP-METHOD" (the last two "-" for a GET or a DELETE); with
           --modern also "CLOSED RPC-METHOD ID" when the client closed a
           streamed answer (a cancellation), "MISMATCH HEADER" for a 400

initialize gives a session id (Mcp-Session-Id); every later request must
carry it (else 400) and a known one (else 404). Its tools (tools/call):

  echo {..}        answers its arguments
  headers          answers the request's Mcp-Session-Id,
                   MCP-Protocol-Version and Authorization headers
  progress {n}     a text/event-stream: n notifications/progress (with the
                   call's _meta.progressToken, "p" without one), then the
                   result
  slow {ms}        answers after ms milliseconds
  hang             never answers (until the connection goes)
  expire           answers, and forgets the session: then 404
  big              a JSON body of 5 MiB
  bigsse           an event of 5 MiB
  status {code}    answers that HTTP status, no body
  batch            a JSON array: a notification and the result

With --modern: no session (none given, none read), GET and DELETE 405.
Every POST must carry MCP-Protocol-Version equal to its
params._meta["io.modelcontextprotocol/protocolVersion"], Mcp-Method equal
to its method, Mcp-Name (plain or =?base64?...?=) equal to the name of a
tools/call or prompts/get or the uri of a resources/read, and
Mcp-Param-Region equal to a region call's arguments.region (absent when
it is absent or null): else 400 with a JSON-RPC error -32020
(HeaderMismatch). Methods: server/discover, tools/list, tools/call,
resources/read (its result's "headers": those the request got),
subscriptions/listen (an event stream: the acknowledged notification,
then a keep-alive comment every second until the client closes it).
Tools: echo, headers (answers every Mcp-* and MCP-* header it got, names
in lower case), region {region} ("x-mcp-header": "Region"; answers as
headers), slow {ms}, hang (an event stream of comments every 100 ms until
the client closes it).
"""
import base64
import http.server
import json
import sys
import threading
import time
import uuid

ARGS = sys.argv[1:]
PORT = int(ARGS[0]) if ARGS else 0
SSE = "--sse" in ARGS
GET = "--get" in ARGS
MODERN = "--modern" in ARGS
LOG = ARGS[ARGS.index("--log") + 1] if "--log" in ARGS else None
VERSION_META = "io.modelcontextprotocol/protocolVersion"

sessions = set()
lock = threading.Lock()

TOOLS = [{"name": n, "description": "A test tool.", "inputSchema": {"type": "object"}}
         for n in ("echo", "headers", "progress", "slow", "hang", "expire", "big", "bigsse",
                   "status", "batch")]
MODERN_TOOLS = [
    {"name": "echo", "inputSchema": {"type": "object"}},
    {"name": "headers", "inputSchema": {"type": "object"}},
    {"name": "region", "inputSchema": {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"}}}},
    {"name": "slow", "inputSchema": {"type": "object"}},
    {"name": "hang", "inputSchema": {"type": "object"}},
]


def decode(v):
    """A mirrored header's value as toolgate's server decodes it."""
    if v is None:
        return None
    v = v.strip(" \t")
    if len(v) >= 11 and v.startswith("=?base64?") and v.endswith("?="):
        try:
            return base64.b64decode(v[9:-2], validate=True).decode("utf-8", "replace")
        except ValueError:
            return "?bad base64?"
    return v


def log(line):
    if LOG:
        with lock, open(LOG, "a", encoding="utf-8") as f:
            f.write(line + "\n")


def res(mid, result):
    return {"jsonrpc": "2.0", "id": mid, "result": result}


def text(mid, obj):
    return res(mid, {"content": [{"type": "text", "text": json.dumps(obj)}],
                     "structuredContent": obj, "isError": False})


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def plain(self, code, extra=None):
        self.send_response(code)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def json_body(self, obj, sid=None):
        body = obj if isinstance(obj, bytes) else json.dumps(obj, indent=1).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if sid:
            self.send_header("Mcp-Session-Id", sid)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def sse_start(self, sid=None):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        if sid:
            self.send_header("Mcp-Session-Id", sid)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def event(self, obj):
        # pretty-printed over several data lines, a comment first
        lines = json.dumps(obj, indent=1).split("\n")
        self.wfile.write(b": keep-alive\r\n" + b"".join(
            b"data: " + l.encode() + b"\r\n" for l in lines) + b"\r\n")
        self.wfile.flush()

    def answer(self, obj, sid=None):
        if SSE:
            self.sse_start(sid)
            self.event(obj)
        else:
            self.json_body(obj, sid)

    def session(self):
        sid = self.headers.get("Mcp-Session-Id")
        if not sid:
            self.plain(400)
            return None
        with lock:
            if sid not in sessions:
                self.plain(404)
                return None
        return sid

    def do_DELETE(self):
        log("DELETE %s - -" % self.headers.get("Mcp-Session-Id"))
        if MODERN:
            self.plain(405, {"Allow": "POST"})
            return
        sid = self.session()
        if sid:
            with lock:
                sessions.discard(sid)
            self.plain(200)

    def do_GET(self):
        log("GET %s - -" % self.headers.get("Mcp-Session-Id"))
        if not GET or MODERN:
            self.plain(405, {"Allow": "POST, DELETE"})
            return
        if not self.session():
            return
        self.sse_start()
        self.event({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": "hello from GET"}})
        try:
            while True:
                time.sleep(0.2)
                self.wfile.write(b": ping\n\n")
                self.wfile.flush()
        except OSError:
            pass

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        msg = json.loads(self.rfile.read(n))
        method, mid = msg.get("method"), msg.get("id")
        log("POST %s %s %s" % (self.headers.get("Mcp-Session-Id"), method or "response",
                               self.headers.get("Mcp-Method")))
        if MODERN:
            self.modern(msg)
            return
        if method == "initialize":
            sid = uuid.uuid4().hex
            with lock:
                sessions.add(sid)
            self.answer(res(mid, {"protocolVersion": "2025-06-18",
                                  "capabilities": {"tools": {}},
                                  "serverInfo": {"name": "fake-http", "version": "1"}}), sid)
            return
        sid = self.session()
        if not sid:
            return
        if mid is None or method is None:
            self.plain(202)
            return
        if method == "ping":
            self.answer(res(mid, {}))
        elif method == "tools/list":
            self.answer(res(mid, {"tools": TOOLS}))
        elif method == "tools/call":
            self.call(mid, msg.get("params") or {}, sid)
        else:
            self.answer({"jsonrpc": "2.0", "id": mid,
                         "error": {"code": -32601, "message": "no such method"}})

    def call(self, mid, params, sid):
        name, args = params.get("name"), params.get("arguments") or {}
        if name == "headers":
            self.answer(text(mid, {h: self.headers.get(h) for h in
                                   ("Mcp-Session-Id", "MCP-Protocol-Version",
                                    "Authorization")}))
        elif name == "progress":
            token = (params.get("_meta") or {}).get("progressToken", "p")
            self.sse_start()
            for i in range(int(args.get("n", 3))):
                self.event({"jsonrpc": "2.0", "method": "notifications/progress",
                            "params": {"progressToken": token, "progress": i}})
                time.sleep(0.02)
            self.event(text(mid, {"done": True}))
        elif name == "slow":
            time.sleep(int(args.get("ms", 1000)) / 1000)
            self.answer(text(mid, {"slept": args.get("ms", 1000)}))
        elif name == "hang":
            time.sleep(3600)
        elif name == "expire":
            with lock:
                sessions.discard(sid)
            self.answer(text(mid, {"expired": True}))
        elif name == "big":
            self.json_body(b'{"jsonrpc":"2.0","id":%d,"result":{"x":"%s"}}'
                           % (mid, b"a" * (5 << 20)))
        elif name == "bigsse":
            self.sse_start()
            self.wfile.write(b"data: " + b"a" * (5 << 20) + b"\n\n")
        elif name == "status":
            self.plain(int(args.get("code", 500)))
        elif name == "batch":
            self.json_body([{"jsonrpc": "2.0", "method": "notifications/message",
                             "params": {"level": "info", "data": "in a batch"}},
                            text(mid, {"batch": True})])
        else:
            self.answer(text(mid, args))

    # ---- the 2026-07-28 era ----

    def mcp_headers(self):
        return {k.lower(): v for k, v in self.headers.items()
                if k.lower().startswith("mcp-")}

    def mismatch(self, msg):
        """Why the mirrored headers disagree with the body, or None."""
        params = msg.get("params") or {}
        method = msg.get("method")
        version = (params.get("_meta") or {}).get(VERSION_META)
        if self.headers.get("MCP-Protocol-Version") != version:
            return "MCP-Protocol-Version"
        if self.headers.get("Mcp-Method") != method:
            return "Mcp-Method"
        field = {"tools/call": "name", "prompts/get": "name",
                 "resources/read": "uri"}.get(method)
        if field and decode(self.headers.get("Mcp-Name")) != params.get(field):
            return "Mcp-Name"
        if method == "tools/call" and params.get("name") == "region":
            if decode(self.headers.get("Mcp-Param-Region")) != \
                    (params.get("arguments") or {}).get("region"):
                return "Mcp-Param-Region"
        return None

    def until_closed(self, method, mid, every):
        """Comments on an open event stream until the client closes it."""
        try:
            while True:
                time.sleep(every)
                self.wfile.write(b": keep-alive\n\n")
                self.wfile.flush()
        except OSError:
            log("CLOSED %s %s" % (method, mid))

    def modern(self, msg):
        method, mid = msg.get("method"), msg.get("id")
        params = msg.get("params") or {}
        if self.headers.get("Mcp-Session-Id"):
            self.plain(400)
            return
        bad = self.mismatch(msg)
        if bad:
            log("MISMATCH %s" % bad)
            body = json.dumps({"jsonrpc": "2.0", "id": mid, "error": {
                "code": -32020, "message": "Header mismatch: " + bad}}).encode()
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        if mid is None or method is None:
            self.plain(202)
            return
        if method == "server/discover":
            self.answer(res(mid, {"resultType": "complete",
                                  "supportedVersions": ["2026-07-28"],
                                  "capabilities": {"tools": {"listChanged": True}},
                                  "serverInfo": {"name": "fake-http-modern", "version": "1"}}))
        elif method == "tools/list":
            self.answer(res(mid, {"resultType": "complete", "tools": MODERN_TOOLS}))
        elif method == "resources/read":
            self.answer(res(mid, {"resultType": "complete", "headers": self.mcp_headers(),
                                  "contents": [{"uri": params.get("uri"), "text": "x"}]}))
        elif method == "subscriptions/listen":
            self.sse_start()
            self.event({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": mid}}})
            self.until_closed(method, mid, 1.0)
        elif method == "tools/call":
            name, args = params.get("name"), params.get("arguments") or {}
            if name in ("headers", "region"):
                self.answer(text(mid, self.mcp_headers()))
            elif name == "slow":
                time.sleep(int(args.get("ms", 1000)) / 1000)
                self.answer(text(mid, {"slept": args.get("ms", 1000)}))
            elif name == "hang":
                self.sse_start()
                self.until_closed(method, mid, 0.1)
            else:
                self.answer(text(mid, args))
        else:
            self.answer({"jsonrpc": "2.0", "id": mid,
                         "error": {"code": -32601, "message": "no such method"}})


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that went away mid-answer (the oversized tests)


def main():
    srv = Server(("127.0.0.1", PORT), Handler)
    print(srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
