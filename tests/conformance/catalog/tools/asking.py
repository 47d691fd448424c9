#!/usr/bin/env python3
"""The conformance suite's tools that ask the client during a call
(sampling, elicitation): an interactive command tool reads its arguments
as the first line of stdin, writes a request as an "@toolgate {...}" line
on stderr, and reads the client's answer as the next line of stdin
(docs/PIPELINE.md)."""
import json
import sys


def ask(method, params):
    sys.stderr.write("@toolgate " + json.dumps({"request": {"method": method, "params": params}}) + "\n")
    sys.stderr.flush()
    return json.loads(sys.stdin.readline())


def reply(text, error=False):
    json.dump({"content": [{"type": "text", "text": text}], "isError": error}, sys.stdout)


args = json.loads(sys.stdin.readline())
which = sys.argv[1]
if which == "sampling":
    a = ask("sampling/createMessage", {"messages": [{"role": "user", "content": {"type": "text", "text": args["prompt"]}}],
                                       "maxTokens": 100})
    if "error" in a:
        reply("Sampling failed: " + a["error"]["message"], True)
    else:
        reply("LLM response: " + a["result"]["content"].get("text", ""))
    sys.exit(0)
if which == "elicitation":
    schema = {"type": "object", "properties": {"username": {"type": "string", "description": "User's response"},
                                               "email": {"type": "string", "description": "User's email address"}},
              "required": ["username", "email"]}
    message = args["message"]
elif which == "defaults":
    schema = {"type": "object", "properties": {
        "name": {"type": "string", "description": "User name", "default": "John Doe"},
        "age": {"type": "integer", "description": "User age", "default": 30},
        "score": {"type": "number", "description": "User score", "default": 95.5},
        "status": {"type": "string", "description": "User status", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "description": "Verification status", "default": True}}, "required": []}
    message = "Test client default value handling - please accept with defaults"
else:
    schema = {"type": "object", "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "oneOf": [{"const": "value1", "title": "First Option"},
                                                     {"const": "value2", "title": "Second Option"},
                                                     {"const": "value3", "title": "Third Option"}]},
        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                       "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                                             {"const": "value2", "title": "Second Choice"},
                                                             {"const": "value3", "title": "Third Choice"}]}}},
        "required": []}
    message = "Test enum schema variants"
a = ask("elicitation/create", {"message": message, "requestedSchema": schema})
if "error" in a:
    reply("Elicitation failed: " + a["error"]["message"], True)
elif which == "elicitation":
    reply("User response: action=%s, content=%s" % (a["result"]["action"], json.dumps(a["result"].get("content", {}))))
else:
    reply("Elicitation completed: action=%s, content=%s" % (a["result"]["action"], json.dumps(a["result"].get("content", {}))))
