#!/usr/bin/env python3
"""An interactive tool for tests/integration/mcp_mrtr.py: asks the
client's user for a name (elicitation), then its model a question
(sampling), and answers with both (docs/PIPELINE.md's protocol)."""
import json
import sys


def ask(method, params):
    sys.stderr.write("@toolgate " + json.dumps({"request": {"method": method, "params": params}}) + "\n")
    sys.stderr.flush()
    return json.loads(sys.stdin.readline())


args = json.loads(sys.stdin.readline())
who = ask("elicitation/create", {"mode": "form", "message": "Your name?",
                                 "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}})
if "error" in who:
    sys.exit("no name: " + who["error"]["message"])  # a failed call
answer = ask("sampling/createMessage", {"messages": [{"role": "user", "content": {"type": "text", "text": args["q"]}}],
                                        "maxTokens": 10})
if "error" in answer:
    sys.exit("no answer: " + answer["error"]["message"])
print(json.dumps({"greeting": "hello %s: %s" % (who["result"]["content"]["name"], answer["result"]["content"]["text"])}))
