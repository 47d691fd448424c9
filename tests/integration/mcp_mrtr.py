#!/usr/bin/env python3
"""Multi round-trip requests (MCP 2026-07-28) against toolgate serve:
an interactive tool that asks two questions is called, answered round by
round through requestState and inputResponses, over stdio and over
Streamable HTTP; refusals of missing capabilities (-32021) and of bad
states (-32602). Prints "ok NAME" or "not ok NAME: why" per check.
Usage: mcp_mrtr.py TOOLGATE CATALOG RECORD-FILE STATE-KEY-FILE"""
import json
import os
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks  # noqa: E402

TG, CATALOG, RECORD, KEY = sys.argv[1:5]
CAPS = {"elicitation": {"form": {}}, "sampling": {}}
check = Checks("mrtr")


def meta(caps):
    return {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": caps}


def call(rid, caps=CAPS, q="two plus two?", state=None, responses=None):
    params = {"name": "ask.two", "arguments": {"q": q}, "_meta": meta(caps)}
    if state is not None:
        params["requestState"] = state
    if responses is not None:
        params["inputResponses"] = responses
    return {"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}


class Stdio:
    def __init__(self, *extra):
        self.p = subprocess.Popen([TG, "serve", "--catalog", CATALOG, "--record", RECORD,
                                   "--state-key", KEY] + list(extra),
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)

    def rpc(self, msg):
        self.p.stdin.write(json.dumps(msg) + "\n")
        self.p.stdin.flush()
        for line in self.p.stdout:
            m = json.loads(line)
            if m.get("id") == msg["id"]:
                return m
        return None

    def close(self):
        self.p.stdin.close()
        self.p.wait()


def answer_for(result):
    """The client's answers to an InputRequiredResult's questions."""
    out = {}
    for key, req in result["inputRequests"].items():
        if req["method"] == "elicitation/create":
            out[key] = {"action": "accept", "content": {"name": "ada"}}
        else:
            out[key] = {"role": "assistant", "model": "m", "content": {"type": "text", "text": "four"}}
    return out


def round_trips(rpc):
    """Call, answer each round; the final response and the rounds."""
    r = rpc(call(1))
    rounds = [r]
    rid = 2
    while r and r.get("result", {}).get("resultType") == "input_required" and rid < 6:
        res = r["result"]
        r = rpc(call(rid, state=res["requestState"], responses=answer_for(res)))
        rounds.append(r)
        rid += 1
    return r, rounds


s = Stdio()
final, rounds = round_trips(s.rpc)
first = rounds[0].get("result", {})
check("first_round_asks_one_question",
      first.get("resultType") == "input_required" and len(first.get("inputRequests", {})) == 1 and
      list(first["inputRequests"].values())[0]["method"] == "elicitation/create" and
      isinstance(first.get("requestState"), str) and
      "io.modelcontextprotocol/serverInfo" in first.get("_meta", {}), json.dumps(rounds[0]))
check("second_round_asks_the_next",
      len(rounds) == 3 and list(rounds[1]["result"]["inputRequests"].values())[0]["method"] ==
      "sampling/createMessage", json.dumps(rounds[1:2]))
check("third_round_completes",
      final and final.get("result", {}).get("resultType") == "complete" and
      final["result"].get("structuredContent", {}).get("greeting") == "hello ada: four", json.dumps(final))

# the state carries the answers of earlier rounds: round 3 gave only the
# model's answer, and the tool still had the name
st = rounds[1]["result"]["requestState"]
again = s.rpc(call(10, state=st))
check("retry_without_responses_asks_again",
      again.get("result", {}).get("resultType") == "input_required" and
      list(again["result"]["inputRequests"].keys()) == list(rounds[1]["result"]["inputRequests"].keys()),
      json.dumps(again))

tampered = st[:-4] + ("AAAA" if st[-4:] != "AAAA" else "BBBB")
r = s.rpc(call(11, state=tampered, responses=answer_for(rounds[1]["result"])))
check("tampered_state_refused", r.get("error", {}).get("code") == -32602 and
      "not one this server issued" in r["error"]["message"], json.dumps(r))
r = s.rpc(call(12, q="other arguments", state=st, responses=answer_for(rounds[1]["result"])))
check("state_for_other_arguments_refused", r.get("error", {}).get("code") == -32602 and
      "other arguments" in r["error"]["message"], json.dumps(r))
r = s.rpc(call(13, responses={"x": {}}))
check("responses_without_state_ask_again", r.get("result", {}).get("resultType") == "input_required",
      json.dumps(r))
r = s.rpc(call(14, state=12345))
check("state_not_a_string_refused", r.get("error", {}).get("code") == -32602, json.dumps(r))
r = s.rpc(call(15, state="A" * (2 << 20)))
check("oversized_state_refused", r.get("error", {}).get("code") == -32602 and
      "longer" in r["error"]["message"], json.dumps(r)[:300])

# a question needs a capability the client did not declare: -32021
r = s.rpc(call(16, caps={}))
check("missing_capability_32021", r.get("error", {}).get("code") == -32021 and
      r["error"].get("data", {}).get("requiredCapabilities") == {"elicitation": {}}, json.dumps(r))
r = s.rpc(call(17, caps={"elicitation": {}}, state=first["requestState"],
               responses=answer_for(first)))
check("missing_capability_on_a_later_round", r.get("error", {}).get("code") == -32021 and
      r["error"]["data"]["requiredCapabilities"] == {"sampling": {}}, json.dumps(r))
s.close()

# another instance with the same key takes the state; another principal does not
s = Stdio()
r = s.rpc(call(20, state=rounds[1]["result"]["requestState"], responses=answer_for(rounds[1]["result"])))
check("state_works_on_another_instance_with_the_key",
      r.get("result", {}).get("structuredContent", {}).get("greeting") == "hello ada: four", json.dumps(r))
s.close()
s = Stdio("--principal", "mallory")
r = s.rpc(call(21, state=rounds[1]["result"]["requestState"], responses=answer_for(rounds[1]["result"])))
check("state_of_another_principal_refused", r.get("error", {}).get("code") == -32602 and
      "another principal" in r["error"]["message"], json.dumps(r))
s.close()

with open(RECORD) as f:
    outcomes = [r["outcome"] for r in map(json.loads, filter(str.strip, f)) if r["kind"] == "call"]
check("recorded_as_input_required", outcomes[:3] == ["input_required", "input_required", "ok"], outcomes)

# Streamable HTTP: the same rounds, one POST each
p = subprocess.Popen([TG, "serve", "--catalog", CATALOG, "--record", "/dev/null", "--state-key", KEY,
                      "--http", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
url = None
for _ in range(100):
    line = p.stderr.readline()
    if "MCP on" in line:
        url = line.split("MCP on ")[1].split()[0]
        break


def http_rpc(msg):
    req = urllib.request.Request(url, data=json.dumps(msg).encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": msg["method"], "Mcp-Name": msg["params"]["name"]})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            body = resp.read().decode()
    except urllib.error.HTTPError as e:
        body = e.read().decode()
    for line in body.splitlines():
        if line.startswith("data: ") and '"id"' in line:
            return json.loads(line[6:])
    return json.loads(body) if body.startswith("{") else None


try:
    final, rounds = round_trips(http_rpc)
    check("http_round_trips", len(rounds) == 3 and
          final.get("result", {}).get("structuredContent", {}).get("greeting") == "hello ada: four",
          json.dumps(rounds))
finally:
    p.terminate()
    p.wait()
check.done()
