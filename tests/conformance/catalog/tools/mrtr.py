#!/usr/bin/env python3
"""The conformance suite's 2026-07-28 tools that ask the client through
multi round-trip requests (docs/MCP.md): each asks under the key the
scenario names, "more" when it asks several at once, and answers once
the client has answered (the tool is run again each round; the answers
come on stdin in the order of the questions). A question the client
cannot be asked is answered with an error (-32021)."""
import json
import sys


def ask(key, method, params, more=False):
    line = {"request": {"method": method, "params": params}, "key": key}
    if more:
        line["more"] = True
    sys.stderr.write("@toolgate " + json.dumps(line) + "\n")
    sys.stderr.flush()


def answer():
    return json.loads(sys.stdin.readline())


def reply(text, error=False):
    json.dump({"content": [{"type": "text", "text": text}], "isError": error}, sys.stdout)
    sys.exit(0)


def form(message, prop, kind="string"):
    return {"message": message,
            "requestedSchema": {"type": "object", "properties": {prop: {"type": kind}}, "required": [prop]}}


def sampling(text, tokens=100):
    return {"messages": [{"role": "user", "content": {"type": "text", "text": text}}], "maxTokens": tokens}


json.loads(sys.stdin.readline())  # the arguments: none needed
mode = sys.argv[1]
if mode in ("elicitation", "streaming"):
    if mode == "streaming":
        sys.stderr.write('@toolgate {"progress": {"progress": 1, "total": 2}}\n')
    ask("user_name", "elicitation/create", form("What is your name?", "name"))
    a = answer()
    if "error" in a:
        sys.exit(a["error"]["message"])
    reply("Hello, %s!" % a["result"].get("content", {}).get("name", "?"))
if mode == "sampling":
    ask("capital_question", "sampling/createMessage", sampling("What is the capital of France?"))
    a = answer()
    if "error" in a:
        sys.exit(a["error"]["message"])
    reply(a["result"]["content"].get("text", ""))
if mode == "list_roots":
    ask("client_roots", "roots/list", {})
    a = answer()
    if "error" in a:
        sys.exit(a["error"]["message"])
    reply("Roots: " + ", ".join(r.get("uri", "") for r in a["result"].get("roots", [])))
if mode in ("request_state", "tampered_state"):
    ask("confirm", "elicitation/create", form("Please confirm", "ok", "boolean"))
    a = answer()
    if "error" in a:
        sys.exit(a["error"]["message"])
    reply("state-ok: confirmed=%s" % json.dumps(a["result"].get("content", {}).get("ok")))
if mode == "multiple_inputs":
    ask("user_name", "elicitation/create", form("What is your name?", "name"), more=True)
    ask("greeting", "sampling/createMessage", sampling("Generate a greeting", 50), more=True)
    ask("client_roots", "roots/list", {})
    name, greeting, roots = answer(), answer(), answer()
    for a in (name, greeting, roots):
        if "error" in a:
            sys.exit(a["error"]["message"])
    reply("%s, %s (%d roots)" % (greeting["result"]["content"].get("text", ""),
                                 name["result"].get("content", {}).get("name", "?"), len(roots["result"].get("roots", []))))
if mode == "multi_round":
    ask("step1", "elicitation/create", form("Step 1: What is your name?", "name"))
    name = answer()
    if "error" in name:
        sys.exit(name["error"]["message"])
    ask("step2", "elicitation/create", form("Step 2: What is your favorite color?", "color"))
    color = answer()
    if "error" in color:
        sys.exit(color["error"]["message"])
    reply("%s likes %s" % (name["result"].get("content", {}).get("name"), color["result"].get("content", {}).get("color")))
if mode == "capabilities":
    # elicitation if the client can, else its model
    ask("user_name", "elicitation/create", form("What is your name?", "name"))
    a = answer()
    if "error" in a:
        ask("model_name", "sampling/createMessage", sampling("Suggest a name"))
        a = answer()
        if "error" in a:
            sys.exit(a["error"]["message"])
        reply("Hello, %s!" % a["result"]["content"].get("text", ""))
    reply("Hello, %s!" % a["result"].get("content", {}).get("name", "?"))
if mode == "missing_capability":
    # cannot do without the client's model: the call fails, and the
    # client hears -32021 naming sampling
    ask("summary", "sampling/createMessage", sampling("Summarize the day"))
    a = answer()
    if "error" in a:
        sys.exit(a["error"]["message"])
    reply(a["result"]["content"].get("text", ""))
sys.exit("unknown mode " + mode)
