#!/usr/bin/env python3
"""A fake upstream MCP server of the 2026-07-28 (stateless) revision over
stdio, for the upstream client's modern era: one JSON-RPC message a line on
stdin and stdout, the rules of docs/MCP.md "The modern era (2026-07-28)",
"Multi round-trip requests" and "subscriptions/listen" (toolgate's own
server side). Python's standard library only. Its behaviour is chosen by
argv[1]:

  modern       2026-07-28 only: initialize, ping, logging/setLevel and any
               unknown method are -32601
  dual         also answers initialize as a 2025-11-25 server (capabilities
               tools.listChanged); after it, a request without a version in
               _meta is served in the session era (tools/list lists echo,
               tools/call echo answers its arguments, ping answers {}),
               one with it by the modern rules below

Every modern request carries in params._meta
"io.modelcontextprotocol/protocolVersion" "2026-07-28" (missing: -32602
naming it; another: -32022 with data {"supported": ["2026-07-28"],
"requested": V}) and "io.modelcontextprotocol/clientCapabilities", an
object (else -32602 naming it); that check comes before the method's, but
for initialize, which is -32601 in modern mode whatever it carries. Every
result has "resultType": "complete" (but input_required ones), lists also
"ttlMs": 60000. Methods:

  server/discover      supportedVersions ["2026-07-28"], capabilities
                       (tools, resources, prompts with listChanged;
                       completions), serverInfo fake-modern 1.0.0,
                       instructions
  tools/list           on two pages (nextCursor "page2"; another cursor is
                       -32602)
  tools/call           echo {text} answers its arguments (content text is
                       their JSON, structuredContent them); meta answers
                       {"meta": this request's _meta, "requests": requests
                       this process got so far (refused ones and this one
                       counted; notifications not), "caps":
                       the clientCapabilities}; progress {n} sends n
                       notifications/progress with _meta.progressToken (none
                       without one), then answers {"token": it}; log {text}
                       sends notifications/message level info with text
                       only when _meta "io.modelcontextprotocol/logLevel"
                       is debug or info, then answers {"logged": whether};
                       hang never answers, and a notifications/cancelled
                       for it writes "cancelled ID REASON" to stderr (ID as
                       JSON); change {description} sets echo's description,
                       sends notifications/tools/list_changed to each open
                       subscription whose filter has toolsListChanged true,
                       then answers {"changed": true}; region {region}
                       (its property marked "x-mcp-header": "Region")
                       answers its arguments; an unknown tool is -32602
  multi round-trip     confirm {message} asks elicitation/create (key "ok",
                       a form of one boolean "ok") then answers content
                       text "answered: " + JSON(answer), structuredContent
                       {"answer": answer}; twice asks sampling/createMessage
                       (key "s"), then elicitation/create (key "e"), then
                       answers {"s": .., "e": ..}; roots asks roots/list
                       (key "r") and answers {"roots": answer}; forever asks
                       elicitation/create (key "ok") every round and never
                       completes. The requestState is base64url(JSON {tool,
                       args digest, round, answers so far}) "." HMAC-SHA256
                       under a random key of this process: one that fails
                       is -32602 "requestState: ..."; a retry without a
                       state, or without the key the state's round asked,
                       is asked that round's question again. A question
                       whose capability (sampling, elicitation, roots) the
                       request's clientCapabilities lacks is -32021 with
                       data {"requiredCapabilities": {CAP: {}}}, unless the
                       call's arguments hold "force": true
  raw {reply}          (a hostile server, for the tests) answers
                       reply as it is; a retry (inputResponses or
                       requestState in its params) answers
                       {"retry": {inputResponses, requestState}}
  subscriptions/listen {"notifications": filter (an object, else -32602)}:
                       sends notifications/subscriptions/acknowledged
                       {"_meta": {subscriptionId: the request's id},
                       "notifications": filter} and leaves the request open;
                       notifications/cancelled of its id ends it unanswered;
                       at stdin's end each open one is answered
                       {"resultType": "complete", "_meta": {subscriptionId}}
  resources/list       file:///notes.txt; resources/templates/list none;
                       resources/read of it "notes", of any other URI -32602
  prompts/list         greet {who}; prompts/get greet answers a user message
                       "Hello WHO"
  completion/complete  {"completion": {"values": ["alice"]}}

A line that is not JSON, or not an object, is ignored; responses from the
client are ignored (a modern server sends no requests).
"""
import base64
import hashlib
import hmac
import json
import os
import sys

MODE = sys.argv[1] if len(sys.argv) > 1 else "modern"
MODERN = "2026-07-28"
LEGACY = "2025-11-25"
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPS = "io.modelcontextprotocol/clientCapabilities"
META_LOG = "io.modelcontextprotocol/logLevel"
META_SUB = "io.modelcontextprotocol/subscriptionId"
LOG_LEVELS = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"]
TTL_MS = 60000
PAGE = 6  # tools on the first page of tools/list
KEY = os.urandom(32)  # signs requestState: a retry reaches only this process

INVALID_PARAMS = -32602
METHOD_NOT_FOUND = -32601
MISSING_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022


def tool(name, description, props=None):
    return {"name": name, "description": description,
            "inputSchema": {"type": "object", "properties": props or {}}}


TOOLS = [
    tool("echo", "Echoes its arguments.", {"text": {"type": "string"}}),
    tool("meta", "Answers this request's _meta, the request count and the capabilities."),
    tool("progress", "Sends n progress notifications, then answers.",
         {"n": {"type": "number"}}),
    tool("log", "Logs text at info when the request's log level allows.",
         {"text": {"type": "string"}}),
    tool("hang", "Never answers."),
    tool("confirm", "Asks the client to confirm, then answers the answer.",
         {"message": {"type": "string"}}),
    tool("twice", "Asks a sampling, then an elicitation, then answers both."),
    tool("forever", "Asks an elicitation every round; never completes."),
    tool("roots", "Asks the client's roots, then answers them."),
    tool("raw", "Answers its argument reply as it is; a retry answers what it was sent."),
    tool("change", "Changes echo's description and tells the subscriptions.",
         {"description": {"type": "string"}}),
    tool("region", "Answers its arguments; region is mirrored into a header.",
         {"region": {"type": "string", "x-mcp-header": "Region"}}),
]
BOOL_FORM = {"type": "object", "properties": {"ok": {"type": "boolean"}}}
STATE = {"requests": 0, "session": False}
SUBS = {}      # open subscriptions: JSON of the id -> (id, filter)
HANGING = {}   # calls of hang: JSON of the id -> id


class Refusal(Exception):
    """A JSON-RPC error to answer the request with."""

    def __init__(self, code, message, data=None):
        super().__init__(message)
        self.code, self.message, self.data = code, message, data


def send(msg):
    sys.stdout.write(json.dumps(msg, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def notify(method, params):
    send({"jsonrpc": "2.0", "method": method, "params": params})


def answer(mid, res):
    send({"jsonrpc": "2.0", "id": mid, "result": res})


def refuse(mid, code, message, data=None):
    err = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    send({"jsonrpc": "2.0", "id": mid, "error": err})


def complete(res, ttl=False):
    res["resultType"] = "complete"
    if ttl:
        res["ttlMs"] = TTL_MS
    return res


def tool_result(out):
    return complete({"content": [{"type": "text", "text": json.dumps(out)}],
                     "structuredContent": out, "isError": False})


def key_of(mid):
    return json.dumps(mid, sort_keys=True)


# The requestState: what the rounds so far gathered, signed, so that the
# client (who holds it between rounds) cannot alter it. Bound to the tool
# and a digest of its arguments, as toolgate's own is (docs/MCP.md).
def args_digest(args):
    return hashlib.sha256(json.dumps(args, sort_keys=True).encode()).hexdigest()


def seal(payload):
    body = base64.urlsafe_b64encode(json.dumps(payload, sort_keys=True,
                                               separators=(",", ":")).encode())
    body = body.decode().rstrip("=")
    return body + "." + hmac.new(KEY, body.encode(), hashlib.sha256).hexdigest()


def unseal(state, name, args):
    if not isinstance(state, str):
        raise Refusal(INVALID_PARAMS, "requestState must be a string")
    body, _, mac = state.partition(".")
    good = hmac.new(KEY, body.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(good, mac):
        raise Refusal(INVALID_PARAMS, "requestState: not one this server issued, or altered")
    try:
        payload = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except ValueError:
        raise Refusal(INVALID_PARAMS, "requestState: not one this server issued, or altered")
    if payload.get("tool") != name or payload.get("args") != args_digest(args):
        raise Refusal(INVALID_PARAMS, "requestState: issued for another tool or other arguments")
    return payload


def elicit(message):
    return ("elicitation", {"method": "elicitation/create",
                            "params": {"mode": "form", "message": message,
                                       "requestedSchema": BOOL_FORM}})


SAMPLING = ("sampling", {"method": "sampling/createMessage",
                         "params": {"messages": [{"role": "user",
                                                  "content": {"type": "text", "text": "hi"}}],
                                    "maxTokens": 10}})
ROOTS = ("roots", {"method": "roots/list", "params": {}})


def question(name, args, n):
    """The n-th (from 0) question of a multi round-trip tool: its key,
    the capability it needs and the request; None once all are answered."""
    if name == "confirm" and n == 0:
        return ("ok",) + elicit(args.get("message", "Confirm?"))
    if name == "twice" and n < 2:
        return ("s",) + SAMPLING if n == 0 else ("e",) + elicit("And now?")
    if name == "roots" and n == 0:
        return ("r",) + ROOTS
    if name == "forever":
        return ("ok",) + elicit("Round %d: again?" % (n + 1))
    return None


def finish(name, answers):
    if name == "confirm":
        out = {"answer": answers["ok"]}
        res = tool_result(out)
        res["content"][0]["text"] = "answered: " + json.dumps(answers["ok"])
        return res
    if name == "twice":
        return tool_result({"s": answers["s"], "e": answers["e"]})
    return tool_result({"roots": answers["r"]})


def rounds(name, args, params, caps):
    """A multi round-trip tool: the next question, or its result once the
    state and this retry's responses hold every answer."""
    responses = params.get("inputResponses")
    if responses is not None and not isinstance(responses, dict):
        raise Refusal(INVALID_PARAMS, "inputResponses must be an object")
    n, answers = 0, {}
    if "requestState" in params:
        payload = unseal(params["requestState"], name, args)
        n, answers = payload.get("round", 0), payload.get("answers", {})
        # the question the state's round asked: answered now, or asked again
        asked = question(name, args, n - 1) if n > 0 else None
        if asked and responses and asked[0] in responses:
            answers[asked[0]] = responses[asked[0]]
        elif asked:
            n -= 1
    q = question(name, args, n)
    if q is None:
        return finish(name, answers)
    key, cap, request = q
    # {"force": true}: asked whatever the client declared (a server that
    # does not check)
    if not isinstance(caps.get(cap), dict) and args.get("force") is not True:
        raise Refusal(MISSING_CAPABILITY, "Missing required client capability: " + cap,
                      {"requiredCapabilities": {cap: {}}})
    state = seal({"tool": name, "args": args_digest(args), "round": n + 1, "answers": answers})
    return {"resultType": "input_required", "inputRequests": {key: request},
            "requestState": state}


def call(mid, params, meta):
    name, args = params.get("name"), params.get("arguments", {})
    caps = meta.get(META_CAPS)
    if not isinstance(args, dict):
        raise Refusal(INVALID_PARAMS, "arguments must be an object")
    if name in ("echo", "region"):
        return tool_result(args)
    if name == "meta":
        return tool_result({"meta": meta, "requests": STATE["requests"], "caps": caps})
    if name == "progress":
        token = meta.get("progressToken")
        n = int(args.get("n", 3))
        for i in range(n if token is not None else 0):
            notify("notifications/progress", {"progressToken": token, "progress": i + 1,
                                              "total": n})
        return tool_result({"token": token})
    if name == "log":
        level = meta.get(META_LOG)
        logged = level in LOG_LEVELS and LOG_LEVELS.index(level) <= LOG_LEVELS.index("info")
        if logged:
            notify("notifications/message", {"level": "info", "logger": "fake-modern",
                                             "data": args.get("text", "")})
        return tool_result({"logged": logged})
    if name == "hang":
        HANGING[key_of(mid)] = mid
        return None
    if name == "change":
        TOOLS[0]["description"] = args.get("description", "Changed.")
        for sid, flt in SUBS.values():
            if flt.get("toolsListChanged") is True:
                notify("notifications/tools/list_changed", {"_meta": {META_SUB: sid}})
        return tool_result({"changed": True})
    if name == "raw":
        # a hostile server: the first answer is whatever the test asks for
        if "inputResponses" in params or "requestState" in params:
            return tool_result({"retry": {k: params.get(k) for k in
                                          ("inputResponses", "requestState")}})
        return args.get("reply")
    if name in ("confirm", "twice", "forever", "roots"):
        return rounds(name, args, params, caps)
    raise Refusal(INVALID_PARAMS, "Unknown tool: %s" % name)


def listing(params, method):
    if method == "tools/list":
        cursor = params.get("cursor")
        if cursor is None:
            return complete({"tools": TOOLS[:PAGE], "nextCursor": "page2"}, ttl=True)
        if cursor == "page2":
            return complete({"tools": TOOLS[PAGE:]}, ttl=True)
        raise Refusal(INVALID_PARAMS, "Invalid cursor")
    if method == "resources/list":
        return complete({"resources": [{"uri": "file:///notes.txt", "name": "notes",
                                        "mimeType": "text/plain"}]}, ttl=True)
    if method == "resources/templates/list":
        return complete({"resourceTemplates": []}, ttl=True)
    return complete({"prompts": [{"name": "greet", "description": "Greets someone.",
                                  "arguments": [{"name": "who", "required": True}]}]}, ttl=True)


def catalog(params, method):
    if method == "resources/read":
        uri = params.get("uri")
        if uri != "file:///notes.txt":
            # -32602, no more -32002, in this revision
            raise Refusal(INVALID_PARAMS, "Resource not found: %s" % uri)
        return complete({"contents": [{"uri": uri, "mimeType": "text/plain",
                                       "text": "notes"}]})
    if method == "prompts/get":
        who = (params.get("arguments") or {}).get("who")
        if params.get("name") != "greet" or not isinstance(who, str):
            raise Refusal(INVALID_PARAMS, "greet needs who")
        return complete({"description": "A greeting.",
                         "messages": [{"role": "user",
                                       "content": {"type": "text", "text": "Hello " + who}}]})
    return complete({"completion": {"values": ["alice"]}})


def listen(mid, params):
    flt = params.get("notifications")
    if not isinstance(flt, dict):
        raise Refusal(INVALID_PARAMS, "notifications must be an object")
    SUBS[key_of(mid)] = (mid, flt)
    notify("notifications/subscriptions/acknowledged",
           {"_meta": {META_SUB: mid}, "notifications": flt})


def check_meta(meta):
    if META_VERSION not in meta:
        raise Refusal(INVALID_PARAMS, "Missing _meta " + META_VERSION)
    if meta[META_VERSION] != MODERN:
        raise Refusal(UNSUPPORTED_VERSION, "Unsupported protocol version",
                      {"supported": [MODERN], "requested": meta[META_VERSION]})
    if not isinstance(meta.get(META_CAPS), dict):
        raise Refusal(INVALID_PARAMS, "Missing _meta " + META_CAPS + " (an object)")


def modern(mid, method, params):
    """A request of the 2026-07-28 era; its result, or None when it has
    none now (hang, subscriptions/listen)."""
    meta = params.get("_meta") if isinstance(params.get("_meta"), dict) else {}
    check_meta(meta)
    if method == "server/discover":
        return complete({"supportedVersions": [MODERN],
                         "capabilities": {"tools": {"listChanged": True},
                                          "resources": {"listChanged": True},
                                          "prompts": {"listChanged": True},
                                          "completions": {}},
                         "serverInfo": {"name": "fake-modern", "version": "1.0.0"},
                         "instructions": "A fake 2026-07-28 server."})
    if method == "tools/call":
        return call(mid, params, meta)
    if method in ("tools/list", "resources/list", "resources/templates/list", "prompts/list"):
        return listing(params, method)
    if method in ("resources/read", "prompts/get", "completion/complete"):
        return catalog(params, method)
    if method == "subscriptions/listen":
        return listen(mid, params)
    raise Refusal(METHOD_NOT_FOUND, "Method not found")


def legacy(method, params):
    """dual mode, after initialize: a session-era request, echo only."""
    if method == "ping":
        return {}
    if method == "tools/list":
        return {"tools": TOOLS[:1]}
    if method == "tools/call" and params.get("name") == "echo":
        args = params.get("arguments", {})
        return {"content": [{"type": "text", "text": json.dumps(args)}],
                "structuredContent": args, "isError": False}
    if method == "tools/call":
        raise Refusal(INVALID_PARAMS, "Unknown tool: %s" % params.get("name"))
    raise Refusal(METHOD_NOT_FOUND, "Method not found")


def request(mid, method, params):
    STATE["requests"] += 1
    if method == "initialize" and MODE == "dual":
        STATE["session"] = True
        return {"protocolVersion": LEGACY, "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "fake-modern", "version": "1.0.0"},
                "instructions": "A fake 2026-07-28 server."}
    if method == "initialize":
        raise Refusal(METHOD_NOT_FOUND, "Method not found")
    meta = params.get("_meta")
    if STATE["session"] and not (isinstance(meta, dict) and META_VERSION in meta):
        return legacy(method, params)
    return modern(mid, method, params)


def cancelled(params):
    rid = params.get("requestId")
    if SUBS.pop(key_of(rid), None) is not None:
        return  # a subscription ends without a response
    if HANGING.pop(key_of(rid), None) is not None:
        sys.stderr.write("cancelled %s %s\n" % (key_of(rid), params.get("reason", "")))
        sys.stderr.flush()


def handle(m):
    method, mid = m.get("method"), m.get("id")
    params = m.get("params") if isinstance(m.get("params"), dict) else {}
    if not isinstance(method, str):
        return  # a response of the client's, or nonsense
    if mid is None:
        if method == "notifications/cancelled":
            cancelled(params)
        return
    try:
        res = request(mid, method, params)
    except Refusal as e:
        refuse(mid, e.code, e.message, e.data)
        return
    except Exception as e:  # a test double answers what it cannot handle
        refuse(mid, -32603, "fake-modern: %s: %s" % (type(e).__name__, e))
        return
    if res is not None:
        answer(mid, res)


def main():
    try:
        while True:
            raw = sys.stdin.buffer.readline()
            if not raw:
                break
            try:
                m = json.loads(raw.decode("utf-8", "replace"))
            except (ValueError, RecursionError):
                continue
            if isinstance(m, dict):
                handle(m)
        # stdin closed: every open subscription gets its response
        for sid, _ in list(SUBS.values()):
            answer(sid, {"resultType": "complete", "_meta": {META_SUB: sid}})
    except BrokenPipeError:
        # the client is gone: nothing more to say, and nothing to flush
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


if __name__ == "__main__":
    main()
