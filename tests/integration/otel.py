#!/usr/bin/env python3
"""Traces (docs/TRACING.md), end to end, against a collector this test
runs on loopback:

- a gateway with --otlp exports, as OTLP/HTTP JSON to /v1/traces, a server
  span for each MCP request ("tools/call TOOL", kind SERVER) whose parent
  is the traceparent the client sent in params._meta, and under it an
  execute_tool span (gen_ai.* attributes) with its children: validate,
  sandbox, approval wait;
- the attributes the MCP and GenAI conventions name; error.type tool_error
  on a tool's failure, the JSON-RPC code on a request's;
- an invalid traceparent begins a new trace;
- the audit record of a call names its trace and span;
- a collector that is down: calls are answered all the same, and
  /metrics counts the spans dropped and the exports that failed.

    otel.py TOOLGATE REPO TMPDIR
"""
import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, example_gateway, modern_post, start_http  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
CAT, WS, STATE = os.path.join(TMP, "catalog"), os.path.join(TMP, "ws"), os.path.join(TMP, "state")
POLICY = os.path.join(TMP, "policy.json")
c = Checks("otel")

example_gateway(REPO, TMP)
with open(POLICY, "w") as f:
    json.dump({"writes": {"wait": "0"},  # held calls answered at once
               "principals": {"agent": {"scopes": ["*:read", "fs.*:write"]},
                              "ops": {"scopes": ["*:approve"]}}}, f)


def cli(*argv):
    return subprocess.run([TG] + list(argv), capture_output=True, text=True, timeout=120)


TOKEN = cli("token", "issue", "--state", STATE, "--policy", POLICY, "--principal", "agent",
            "--scope", "*:read", "--scope", "fs.*:write").stdout.strip()
# the counters are an operator's (docs/METRICS.md)
OPS = cli("token", "issue", "--state", STATE, "--policy", POLICY, "--principal", "ops",
          "--scope", "*:approve").stdout.strip()
BODIES = []


class Collector(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        n = int(self.headers.get("Content-Length", 0))
        BODIES.append((self.path, self.headers.get("Content-Type"), self.rfile.read(n)))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *a):
        pass


collector = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Collector)
threading.Thread(target=collector.serve_forever, daemon=True).start()
OTLP = "http://127.0.0.1:%d/v1/traces" % collector.server_address[1]
ERRS = []

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"


def serve(*extra, name="serve"):
    err = os.path.join(TMP, name + ".err")
    ERRS.append(err)
    return start_http([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE,
                       "--policy", POLICY] + list(extra), err)


def call(port, tool, args, meta=None, rid=1, method="tools/call"):
    m = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
         "io.modelcontextprotocol/clientCapabilities": {}}
    m.update(meta or {})
    params = {"id": rid, "_meta": m}
    if method == "tools/call":
        params.update(name=tool, arguments=args)
    return modern_post(port, method, params, {"Authorization": "Bearer " + TOKEN})


def attrs(span):
    out = {}
    for a in span.get("attributes", []):
        v = a["value"]
        out[a["key"]] = next(iter(v.values()))
    return out


def tp(span_id, trace=TRACE):
    return {"traceparent": "00-%s-%s-01" % (trace, span_id), "tracestate": "rojo=1"}


srv, port = serve("--otlp", OTLP)
try:
    ok = call(port, "fs.read", {"path": "README.md"}, tp(PARENT), rid=7)
    bad = call(port, "fs.read", {"path": "nowhere.txt"}, tp("00f067aa0ba902b8"), rid="r-8")
    invalid = call(port, "fs.read", {"path": "README.md"},
                   {"traceparent": "00-" + "0" * 32 + "-" + PARENT + "-01"}, rid=9)
    unknown = call(port, "no.such.tool", {}, tp("00f067aa0ba902b9"), rid=10)
    held = call(port, "fs.write", {"path": "notes/otel.txt", "content": "x"},
                dict(tp("00f067aa0ba902ba"), **{"dev.toolgate/idempotencyKey": "k-otel",
                                                "dev.toolgate/approvalWait": 300}), rid=11)
    listed = call(port, "", {}, tp("00f067aa0ba902bb"), rid=12, method="tools/list")
finally:
    srv.send_signal(signal.SIGTERM)  # what waits is exported on the way out
    srv.wait(timeout=30)

c("calls_answered", not ok["result"].get("isError") and bad["result"].get("isError") and
  not invalid["result"].get("isError") and "result" in listed, [ok, bad, invalid, listed])
spans = []
for path, ctype, body in BODIES:
    for rs in json.loads(body)["resourceSpans"]:
        res = attrs(rs["resource"])
        for ss in rs["scopeSpans"]:
            spans += ss["spans"]
c("exported_otlp_json", BODIES and all(p == "/v1/traces" and t == "application/json"
                                       for p, t, _ in BODIES) and
  res.get("service.name") == "toolgate" and spans, [(p, t) for p, t, _ in BODIES])
by_parent = {}
for s in spans:
    by_parent.setdefault(s.get("parentSpanId"), []).append(s)


def children(s, name=None):
    return [x for x in by_parent.get(s["spanId"], []) if name is None or x["name"] == name]


def server(parent):
    got = [s for s in by_parent.get(parent, []) if s["kind"] == 2]
    return got[0] if len(got) == 1 else None


sv = server(PARENT)
a = attrs(sv or {})
c("server_span", sv and sv["name"] == "tools/call fs.read" and sv["traceId"] == TRACE and
  sv.get("traceState") == "rojo=1" and a.get("mcp.method.name") == "tools/call" and
  a.get("jsonrpc.request.id") == "7" and a.get("gen_ai.tool.name") == "fs.read" and
  a.get("gen_ai.operation.name") == "execute_tool" and a.get("network.transport") == "tcp" and
  a.get("network.protocol.name") == "http" and a.get("mcp.protocol.version") == "2026-07-28" and
  "status" not in sv and int(sv["startTimeUnixNano"]) <= int(sv["endTimeUnixNano"]), sv)
ex = children(sv, "execute_tool fs.read") if sv else []
ea = attrs(ex[0]) if ex else {}
c("execute_tool_span", len(ex) == 1 and ex[0]["traceId"] == TRACE and ex[0]["kind"] == 1 and
  ex[0]["flags"] == 0x101 and sv["flags"] == 0x301 and
  ea.get("gen_ai.operation.name") == "execute_tool" and ea.get("gen_ai.tool.name") == "fs.read" and
  ea.get("gen_ai.tool.call.id") and ea.get("toolgate.outcome") == "ok" and
  ea.get("toolgate.principal") == "agent" and "status" not in ex[0], ex)
kids = sorted(x["name"] for x in children(ex[0])) if ex else []
c("child_spans", kids == ["sandbox", "validate"], kids)

sb = server("00f067aa0ba902b8")
eb = children(sb, "execute_tool fs.read") if sb else []
c("tool_error", sb and attrs(sb).get("error.type") == "tool_error" and
  sb.get("status", {}).get("code") == 2 and attrs(sb).get("jsonrpc.request.id") == "r-8" and
  eb and attrs(eb[0]).get("error.type") == "tool_error" and eb[0]["status"]["code"] == 2,
  [sb, eb])
fresh = [s for s in spans if s["kind"] == 2 and attrs(s).get("jsonrpc.request.id") == "9"]
c("invalid_traceparent_new_trace", len(fresh) == 1 and fresh[0]["traceId"] != TRACE and
  "parentSpanId" not in fresh[0], fresh)
su = server("00f067aa0ba902b9")
eu = children(su) if su else []
c("unknown_tool", su and su["name"] == "tools/call" and eu and eu[0]["name"] == "execute_tool" and
  attrs(eu[0]).get("gen_ai.tool.name") == "no.such.tool" and eu[0]["status"]["code"] == 2,
  [su, eu])
sh = server("00f067aa0ba902ba")
eh = children(sh, "execute_tool fs.write") if sh else []
aw = children(eh[0], "approval wait") if eh else []
c("approval_wait_span", held.get("result", {}).get("isError") and aw and
  attrs(aw[0]).get("toolgate.ticket") and attrs(aw[0]).get("toolgate.ticket.state") == "pending" and
  attrs(eh[0]).get("toolgate.outcome") == "held" and "status" not in eh[0], [held, eh, aw])
sl = server("00f067aa0ba902bb")
c("tools_list_span", sl and sl["name"] == "tools/list" and not children(sl), sl)

# the audit record names the trace and the span of its call
recs = [json.loads(x) for x in open(os.path.join(STATE, "audit.log")) if x.endswith("}\n")]
first = [r for r in recs if r.get("kind") == "call" and r.get("trace_id") == TRACE]
c("audit_names_trace", ex and first and first[0]["span_id"] == ex[0]["spanId"], first[:1])

# a collector that is down: answered all the same; counted
s2 = socket.socket()
s2.bind(("127.0.0.1", 0))
down = "http://127.0.0.1:%d/v1/traces" % s2.getsockname()[1]
s2.close()
srv, port = serve("--otlp", down, name="down")
try:
    answers = [call(port, "fs.read", {"path": "README.md"}, rid=i) for i in range(5)]
    metrics = ""
    for _ in range(100):
        req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics",
                                     headers={"Authorization": "Bearer " + OPS})
        with urllib.request.urlopen(req, timeout=30) as r:
            metrics = r.read().decode()
        if "toolgate_trace_export_failures_total 0" not in metrics:
            break
        time.sleep(0.1)
finally:
    srv.send_signal(signal.SIGTERM)
    srv.wait(timeout=30)
series = dict(line.rsplit(" ", 1) for line in metrics.splitlines()
              if line and not line.startswith("#"))
c("collector_down_calls_answered", all(not x["result"].get("isError") for x in answers), answers)
c("collector_down_counted", float(series.get("toolgate_trace_export_failures_total", 0)) >= 1 and
  float(series.get('toolgate_trace_spans_total{result="dropped"}', 0)) >= 1,
  [k for k in series if "trace" in k])
bad_url = subprocess.run([TG, "serve", "--catalog", CAT, "--otlp", "ftp://x", "--stdio"],
                         input="", capture_output=True, text=True, timeout=60)
c("bad_endpoint_refused", bad_url.returncode != 0 and "OTLP endpoint" in bad_url.stderr,
  bad_url.stderr)
collector.shutdown()

text = "".join(open(e).read() for e in ERRS if os.path.exists(e))
c("no_sanitizer_reports", "Sanitizer" not in text and "runtime error:" not in text, text[-2000:])
c.done()
