#!/usr/bin/env python3
"""Reloading the catalogue (SIGHUP) under toolgate serve: clients hear
what changed (list_changed, resources/updated for what they watch), over
stdio and Streamable HTTP, in both eras; a call in flight finishes on the
catalogue it started with; a catalogue that does not load leaves the old
one served; a reload that changes nothing says nothing. Prints "ok - ..."
or "not ok - ...: why" per check.
Usage: mcp_reload.py TOOLGATE WORKDIR SLOW-TOOL-SCRIPT"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import META, Checks, message, request as req, start_http  # noqa: E402

TG, WORK, SLOW = sys.argv[1:4]
CAT = os.path.join(WORK, "catalog")
check = Checks("reload")


def contract(name, builtin="echo"):
    with open(os.path.join(CAT, name + ".json"), "w") as f:
        json.dump({"name": name, "version": "1.0.0", "description": "t", "authority": "read",
                   "owner": {"team": "t", "contact": "t@example.test"}, "input_schema": {"type": "object"},
                   "executor": {"kind": "builtin", "name": builtin}}, f)


def resource(text):
    with open(os.path.join(CAT, "resources", "doc.json"), "w") as f:
        json.dump({"uri": "test://doc", "name": "doc", "mimeType": "text/plain", "text": text}, f)


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(os.path.join(CAT, "resources"))
os.makedirs(os.path.join(CAT, "tools"))
shutil.copy(SLOW, os.path.join(CAT, "tools", "slow_steps.py"))
with open(os.path.join(CAT, "slow.json"), "w") as f:
    json.dump({"name": "slow.steps", "version": "1.0.0", "description": "Six steps", "authority": "read",
               "owner": {"team": "t", "contact": "t@example.test"}, "input_schema": {"type": "object"},
               "executor": {"kind": "command", "argv": ["python3", "/tools/slow_steps.py"], "tier": "strict",
                            "limits": {"timeout": "30s"}, "mounts": [{"host": "tools", "inside": "/tools"}]}}, f)
contract("first")
resource("v1")
ERR = os.path.join(WORK, "err")


def reloads():
    with open(ERR) as f:
        return f.read().count("toolgate serve: reload")


def hup(p):
    """SIGHUP, and wait until the server says it reloaded (or refused)."""
    n = reloads()
    p.send_signal(signal.SIGHUP)
    for _ in range(200):
        if reloads() > n:
            return True
        time.sleep(0.02)
    return False


# ---- stdio -------------------------------------------------------------------
p = subprocess.Popen([TG, "serve", "--catalog", CAT, "--record", "/dev/null"], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=open(ERR, "w"), text=True)


def send(m):
    p.stdin.write(json.dumps(m) + "\n")
    p.stdin.flush()


def until(rid):
    """Messages up to the response to rid: (notifications, response)."""
    notes = []
    for line in p.stdout:
        m = json.loads(line)
        if m.get("id") == rid and "method" not in m:
            return notes, m
        notes.append(m)
    return notes, None


send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}}})
_, init = until(0)
caps = init["result"]["capabilities"]
check("capabilities_promise_changes", caps["tools"]["listChanged"] and caps["resources"]["subscribe"] and
      caps["resources"]["listChanged"] and caps["prompts"]["listChanged"], caps)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})
send({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "test://doc"}})
until(1)
send({"jsonrpc": "2.0", "id": "L", "method": "subscriptions/listen",
      "params": {"notifications": {"toolsListChanged": True, "resourceSubscriptions": ["test://doc"]}, "_meta": META}})
ack = json.loads(p.stdout.readline())
check("listen_acknowledges_what_reloads_bring", ack["params"]["notifications"] ==
      {"toolsListChanged": True, "resourceSubscriptions": ["test://doc"]}, ack)

# nothing changed: nothing said
ok = hup(p)
send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
notes, _ = until(2)
check("unchanged_reload_is_silent", ok and notes == [], notes)

# a call in flight, then a reload that removes its tool and changes the rest
send({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "slow.steps", "arguments": {}}})
time.sleep(0.3)
os.remove(os.path.join(CAT, "slow.json"))
contract("second")
resource("v2")
ok = hup(p)
notes, r3 = until(3)
methods = sorted((n["method"], "sub" if "_meta" in n.get("params", {}) else "session") for n in notes)
check("changes_reach_both_eras", ok and methods == [
    ("notifications/resources/updated", "session"), ("notifications/resources/updated", "sub"),
    ("notifications/tools/list_changed", "session"), ("notifications/tools/list_changed", "sub")], notes)
check("call_in_flight_finishes_on_its_catalogue", r3 and not r3["result"]["isError"] and
      "steps" in r3["result"]["content"][0]["text"], r3)
send({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})
_, r4 = until(4)
send({"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": {"uri": "test://doc"}})
_, r5 = until(5)
send({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "slow.steps", "arguments": {}}})
_, r6 = until(6)
check("the_new_catalogue_is_served", sorted(t["name"] for t in r4["result"]["tools"]) == ["first", "second"] and
      r5["result"]["contents"][0]["text"] == "v2" and r6.get("error", {}).get("code") == -32602,
      "%s %s %s" % (r4, r5, r6))

# a catalogue that does not load: reported, the old one stays
with open(os.path.join(CAT, "broken.json"), "w") as f:
    f.write("{not json")
ok = hup(p)
send({"jsonrpc": "2.0", "id": 7, "method": "tools/list"})
notes, r7 = until(7)
with open(ERR) as f:
    err = f.read()
check("broken_catalogue_keeps_the_old", ok and notes == [] and "still serving the catalogue as it was" in err and
      sorted(t["name"] for t in r7["result"]["tools"]) == ["first", "second"], "%s %s %s" % (notes, r7, err))
os.remove(os.path.join(CAT, "broken.json"))
p.stdin.close()
rc = p.wait(timeout=20)
check("stdio_exits_cleanly", rc == 0 and "Sanitizer" not in open(ERR).read(), "rc=%s" % rc)

# ---- Streamable HTTP -----------------------------------------------------------
p, port = start_http([TG, "serve", "--catalog", CAT, "--record", "/dev/null"], ERR)


def request(method, body=None, headers=None):
    return req(port, method, body, headers)


try:
    r = request("POST", {"jsonrpc": "2.0", "id": 0, "method": "initialize",
                         "params": {"protocolVersion": "2025-11-25", "capabilities": {}}})
    sid = r.getheader("Mcp-Session-Id")
    r.read()
    S = {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25"}
    request("POST", {"jsonrpc": "2.0", "method": "notifications/initialized"}, S).read()
    get = request("GET", None, dict(S, Accept="text/event-stream"))
    ls = request("POST", {"jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
                          "params": {"notifications": {"toolsListChanged": True}, "_meta": META}},
                 {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"})
    message(ls)  # the acknowledgment
    contract("third")
    hup(p)
    on_get, on_listen = message(get), message(ls)
    check("http_changes_reach_get_stream_and_listen",
          on_get["method"] == "notifications/tools/list_changed" and "params" not in on_get and
          on_listen["method"] == "notifications/tools/list_changed" and
          on_listen["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == 9,
          "%s %s" % (on_get, on_listen))
finally:
    p.terminate()
    rc = p.wait(timeout=20)
check("http_exits_cleanly", rc == 0 and "Sanitizer" not in open(ERR).read(), "rc=%s %s" % (rc, open(ERR).read()[-500:]))
check.done()
