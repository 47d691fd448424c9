#!/usr/bin/env python3
"""The conformance suite's MCP tasks fixtures (2026-07-28 tasks
extension): tools that run long enough to become tasks (toolgate makes a
call a task when it outlasts 500 ms, docs/MCP.md), fail, or ask their
client while they run. A question is a "@toolgate" line on stderr; its
answers come on stdin, one line each, in the order asked."""
import json
import sys
import time


def ask(key, method, params, more=False):
    line = {"request": {"method": method, "params": params}, "key": key}
    if more:
        line["more"] = True
    sys.stderr.write("@toolgate " + json.dumps(line) + "\n")
    sys.stderr.flush()


def answer():
    a = json.loads(sys.stdin.readline())
    if "error" in a:
        sys.exit(a["error"]["message"])
    return a["result"]


def reply(text, error=False):
    json.dump({"content": [{"type": "text", "text": text}], "isError": error}, sys.stdout)
    sys.exit(0)


def form(message, props):
    return {"message": message, "requestedSchema": {"type": "object", "properties": props}}


args = json.loads(sys.stdin.readline())
mode = sys.argv[1]
if mode == "greet":
    reply("Hello, %s!" % args.get("name", "World"))
if mode == "slow_compute":
    time.sleep(args.get("seconds", 0))
    reply("computed %s after %ss" % (args.get("label", ""), args.get("seconds", 0)))
if mode == "failing_job":
    time.sleep(1)
    reply("the job failed: its input queue is empty", error=True)
if mode == "protocol_error_job":
    # a protocol error, not the tool's: it needs the client's roots, which
    # the client did not declare; the task fails with -32021
    time.sleep(1)
    ask("roots", "roots/list", {})
    answer()
    reply("unreachable")
if mode == "confirm_delete":
    time.sleep(1)
    ask("confirm", "elicitation/create",
        form("Delete %s?" % args.get("filename", "?"), {"confirm": {"type": "boolean"}}))
    a = answer()
    ok = a.get("action") == "accept" and a.get("content", {}).get("confirm")
    reply(("deleted %s" if ok else "kept %s") % args.get("filename", "?"))
if mode == "multi_input":
    time.sleep(1)
    ask("first", "elicitation/create", form("First name?", {"name": {"type": "string"}}), more=True)
    ask("second", "elicitation/create", form("Second name?", {"name": {"type": "string"}}))
    first, second = answer(), answer()
    reply("%s and %s" % (first.get("content", {}).get("name"), second.get("content", {}).get("name")))
if mode == "with_task":
    # asks first (by MRTR, while the call is a request), then works
    # long enough to become a task
    ask("user_name", "elicitation/create", form("What is your name?", {"name": {"type": "string"}}))
    name = answer().get("content", {}).get("name", "?")
    time.sleep(1)
    reply("Hello, %s! The long part is done." % name)
sys.exit("unknown mode " + mode)
