#!/usr/bin/env python3
"""A tool that asks the client during a call, over stdio: the server's
sampling/createMessage request arrives between the call and its answer;
the client answers it; the tool's result carries the answer. Without the
sampling capability, the tool gets an error instead. Prints one line:
"ok" or what went wrong. Usage: mcp_ask.py TOOLGATE CATALOG"""
import json
import subprocess
import sys


def session(caps):
    p = subprocess.Popen([sys.argv[1], "serve", "--catalog", sys.argv[2], "--record", "/dev/null"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)

    def send(m):
        p.stdin.write(json.dumps(m) + "\n")
        p.stdin.flush()

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize",
          "params": {"protocolVersion": "2025-11-25", "capabilities": caps}})
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
          "params": {"name": "test_sampling", "arguments": {"prompt": "two plus two?"}}})
    asked = None
    for line in p.stdout:
        m = json.loads(line)
        if m.get("method") == "sampling/createMessage":
            asked = m
            send({"jsonrpc": "2.0", "id": m["id"], "result": {"role": "assistant", "model": "test",
                                                              "content": {"type": "text", "text": "four"}}})
        elif m.get("id") == 1:
            p.stdin.close()
            p.wait()
            return asked, m["result"]
    return asked, None


asked, result = session({"sampling": {}})
if not asked or asked["params"]["messages"][0]["content"]["text"] != "two plus two?":
    print("no sampling request reached the client: %s" % asked)
elif not result or result["content"][0]["text"] != "LLM response: four" or result["isError"]:
    print("the tool did not get the answer: %s" % result)
else:
    asked, result = session({})
    if asked or not result or not result["isError"] or "did not declare" not in result["content"][0]["text"]:
        print("without the capability: asked=%s result=%s" % (asked, result))
    else:
        print("ok")
