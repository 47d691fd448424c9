#!/usr/bin/env python3
"""A fake upstream MCP server over Streamable HTTP, for
tests/unit/test_upstream_http.c: the standard library's threaded HTTP
server on 127.0.0.1, at /mcp. It binds the port given (0: any), prints it
on stdout as one line, and serves until killed.

  fake_http.py PORT [--sse] [--get] [--log FILE]

  --sse    every answer to a request is a text/event-stream, not JSON
  --get    the GET stream is served (a notifications/message "hello from
           GET" on it, then it stays open); without it, GET is 405
  --log F  one line a request appended to F: "METHOD SESSION RPC-METHOD"

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
"""
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
LOG = ARGS[ARGS.index("--log") + 1] if "--log" in ARGS else None

sessions = set()
lock = threading.Lock()

TOOLS = [{"name": n, "description": "A test tool.", "inputSchema": {"type": "object"}}
         for n in ("echo", "headers", "progress", "slow", "hang", "expire", "big", "bigsse",
                   "status", "batch")]


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
        log("DELETE %s -" % self.headers.get("Mcp-Session-Id"))
        sid = self.session()
        if sid:
            with lock:
                sessions.discard(sid)
            self.plain(200)

    def do_GET(self):
        log("GET %s -" % self.headers.get("Mcp-Session-Id"))
        if not GET:
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
        log("POST %s %s" % (self.headers.get("Mcp-Session-Id"), method or "response"))
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
