#!/usr/bin/env python3
"""Numbers past what a double holds, end to end through the gateway
(docs/SCHEMA.md, "Numbers"): a tools/call's arguments reach the validator,
a command tool and the approval ticket with every digit the client wrote,
over stdio, over HTTP (its event stream too) and in a 2025-03-26 batch.

- a decimal of more than 17 significant digits is compared exactly: one
  past the schema's maximum in its 20th digit is refused, where its
  nearest double would pass;
- an integer past 64 bits is read (it used to be refused as a parse error)
  and compared exactly against a bound past 64 bits;
- the command tool's stdin and its answer's text block keep the digits;
- an idempotency key's arguments are told apart past a double's digits
  (the key reused with other arguments is refused, not replayed), and the
  same arguments written otherwise still find their ticket, which shows
  every digit;
- a number past a double's range is still a parse error.

    exact_numbers.py TOOLGATE REPO TMPDIR
"""
import json
import os
import shutil
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, serving  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.rmtree(TMP, ignore_errors=True)
CAT, STATE, ERR = os.path.join(TMP, "cat"), os.path.join(TMP, "state"), os.path.join(TMP, "err")
POLICY = os.path.join(TMP, "policy.json")
os.makedirs(CAT)
with open(POLICY, "w") as f:
    json.dump({"principals": {"agent": {"scopes": ["num.*:read", "num.*:write"]}}}, f)
c = Checks("exact")

OWNER = {"team": "t", "contact": "t@example.test"}
# the bounds are past a double's digits: 0.1 and 2^64 are their nearest
SCHEMA = {"type": "object", "additionalProperties": False,
          "properties": {"amount": {"type": "number", "maximum": "MAX"},
                         "id": {"type": "integer", "minimum": "MIN"}}}
CONTRACTS = {
    "num.cat": {"authority": "read", "executor": {"kind": "command", "argv": ["/bin/cat"],
                                                  "tier": "strict"}},
    "num.echo": {"authority": "read", "executor": {"kind": "builtin", "name": "echo"}},
    # its schema takes any object: the key's check comes after the schema's
    "num.record": {"authority": "write", "executor": {"kind": "builtin", "name": "echo"},
                   "dry_run": "supported", "compensation": {"irreversible": "a record"}},
    # a secret behind JSON escapes beside a long number, in a tool's output
    "num.leak": {"authority": "read", "executor": {
        "kind": "command", "tier": "strict", "argv": [
            "/bin/echo", '{"n": 123456789012345678901234567890, '
            '"url": "https:\\/\\/admin:S3cr3tPassw0rd@db.example.com\\/x", '
            '"p\\u0061ssword": "Zq8vN2kLp4Xw9Rt"}']}},
    # its compensation's mapping reads the arguments as jansson values
    "num.undoable": {"authority": "write", "executor": {"kind": "builtin", "name": "echo"},
                     "dry_run": "supported",
                     "compensation": {"tool": "num.record@1", "arguments": {"was": "${arguments.amount}"}}},
}
for name, extra in CONTRACTS.items():
    k = {"name": name, "version": "1.0.0", "description": name, "owner": OWNER,
         "input_schema": SCHEMA if name == "num.cat" else {"type": "object"}}
    k.update(extra)
    text = json.dumps(k, indent=1).replace('"MAX"', "0.10000000000000000001")
    with open(os.path.join(CAT, name + ".json"), "w") as f:
        f.write(text.replace('"MIN"', "18446744073709551616"))

A1 = '{"amount": 0.10000000000000000001, "id": 18446744073709551617}'
A1_OTHER_SPELLING = '{ "id" : 18446744073709551617 , "amount" : 0.10000000000000000001 }'
A2 = '{"amount": 0.10000000000000000002, "id": 18446744073709551617}'
A3 = '{"id": 18446744073709551615}'
BIG = '{"n": 123456789012345678901234567890, "d": -0.000012345678901234567890123}'
INIT = ('{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"%s",'
        '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}')
READY = '{"jsonrpc":"2.0","method":"notifications/initialized"}'
STDERR = []  # every stdio gateway's, for sanitizer reports


def call(rid, name, args, key=None):
    meta = ',"_meta":{"dev.toolgate/idempotencyKey":"%s"}' % key if key else ""
    return ('{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s",'
            '"arguments":%s%s}}' % (rid, name, args, meta))


def stdio(lines, version="2025-11-25"):
    """toolgate serve on stdio, given the raw lines: {id: the raw line of
    its answer} (raw: json.loads would round the digits looked for)."""
    p = subprocess.run([TG, "serve", "--catalog", CAT, "--state", STATE, "--policy", POLICY,
                        "--principal", "agent", "--record", "/dev/null"], input="\n".join([INIT % version, READY] + lines) + "\n",
                       capture_output=True, text=True, timeout=120)
    STDERR.append(p.stderr)
    out = {"stderr": p.stderr[-500:]}
    for line in p.stdout.splitlines():
        m = json.loads(line)
        items = m if isinstance(m, list) else [m]
        for i in items:
            out[i.get("id")] = json.dumps(i) if isinstance(m, list) else line
    return p, out


def text_of(raw):
    """The first text block of an answer's result (a string: exact)."""
    try:
        return json.loads(raw)["result"]["content"][0]["text"]
    except (KeyError, IndexError, TypeError, ValueError):
        return ""


def refused_for(raw, word):
    try:
        r = json.loads(raw)["result"]
    except (KeyError, TypeError, ValueError):
        return False
    return r.get("isError") and word in r["content"][0]["text"]


# ---- stdio -----------------------------------------------------------------

p, out = stdio([call(1, "num.cat", A1), call(2, "num.cat", A2), call(3, "num.cat", A3),
                call(4, "num.echo", BIG),
                '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"num.echo",'
                '"arguments":{"x":1e400}}}'])
t = text_of(out.get(1, ""))
c("stdio_command_gets_every_digit", "0.10000000000000000001" in t and
  "18446744073709551617" in t, out.get(1) or out)
c("stdio_maximum_past_a_doubles_digits", refused_for(out.get(2, ""), "maximum"), out.get(2))
c("stdio_minimum_past_64_bits", refused_for(out.get(3, ""), "minimum"), out.get(3))
c("stdio_arguments_go_on_compact",
  t == '{"amount":0.10000000000000000001,"id":18446744073709551617}', t)
t = text_of(out.get(4, ""))
c("stdio_builtin_echo_every_digit", "123456789012345678901234567890" in t and
  "-0.000012345678901234567890123" in t, out.get(4))
c("stdio_past_a_doubles_range_parse_error", '"code": -32700' in out.get(None, "") or
  '"code":-32700' in out.get(None, ""), out)

# member names written with escapes are the names jansson reads
p, out = stdio(['{"jsonrpc":"2.0","id":1,"method":"tools/call","par\\u0061ms":{"name":"num.cat",'
                '"argum\\u0065nts":%s}}' % A1, call(2, "num.leak", "{}")])
t = text_of(out.get(1, ""))
c("stdio_escaped_names_every_digit", "0.10000000000000000001" in t and
  "18446744073709551617" in t, out.get(1) or out)
# the tool's own text keeps its digits, never a secret its escapes hide
t = text_of(out.get(2, ""))
c("output_escaped_secret_redacted", t and "S3cr3tPassw0rd" not in out.get(2, "") and
  "Zq8vN2kLp4Xw9Rt" not in out.get(2, "") and "REDACTED" in t, out.get(2))

# ---- a 2025-03-26 batch: each item's own arguments ---------------------------

p, out = stdio(["[%s,%s]" % (call(6, "num.echo", '{"first":1}'), call(7, "num.cat", A1))],
               version="2025-03-26")
t = text_of(out.get(7, ""))
c("batch_item_gets_every_digit", "0.10000000000000000001" in t and
  "18446744073709551617" in t, out)

# ---- the idempotency key and the ticket ------------------------------------------

# one call a session: a session's calls run at once, and these must not
out = {}
for rid, name, args, key in ((8, "num.record", A1, "k-exact-1"), (9, "num.record", A2, "k-exact-1"),
                             (10, "num.record", A1_OTHER_SPELLING, "k-exact-1"),
                             (15, "num.record", '{"big": 100000000000000000001, '
                              '"cmd": "\\u0072\\u006d -rf \\/"}', "k-exact-5"),
                             (13, "num.record", '{"big": 100000000000000000001, "a": 9007199254740992.0}',
                              "k-exact-4"),
                             (14, "num.record", '{"big": 100000000000000000001, "a": 9007199254740993.0}',
                              "k-exact-4"),
                             (11, "num.undoable", A1, "k-exact-2"),
                             (12, "num.undoable", '{"amount": 0.5}', "k-exact-3")):
    out.update(stdio([call(rid, name, args, key=key)])[1])


def code_of(raw):
    try:
        return json.loads(raw)["result"]["_meta"]["dev.toolgate/error"]
    except (KeyError, TypeError, ValueError):
        return {}


first, other, again = code_of(out.get(8, "")), code_of(out.get(9, "")), code_of(out.get(10, ""))
c("key_held_for_approval", first.get("code") == "awaiting_approval" and first.get("ticket"),
  out.get(8))
c("key_reused_past_a_doubles_digits", other.get("code") == "key_reused", out.get(9))
c("same_arguments_otherwise_written_find_the_ticket",
  again.get("ticket") == first.get("ticket") and again.get("code") == "awaiting_approval",
  out.get(10))
# beside a long number, numbers that share a double are still told apart
c("key_reused_numbers_sharing_a_double", code_of(out.get(14, "")).get("code") == "key_reused" and
  code_of(out.get(13, "")).get("code") == "awaiting_approval", [out.get(13), out.get(14)])
# refused, not rounded, where a mapping would read them; held as usual otherwise
c("compensation_refuses_rather_than_rounds",
  refused_for(out.get(11, ""), "refused rather than rounded") and not code_of(out.get(11, "")).get("ticket"),
  out.get(11))
c("compensation_ordinary_numbers_held", code_of(out.get(12, "")).get("code") == "awaiting_approval",
  out.get(12))
show = subprocess.run([TG, "approvals", "show", first.get("ticket", "-"), "--state", STATE],
                      capture_output=True, text=True, timeout=60)
c("ticket_shows_every_digit", "0.10000000000000000001" in show.stdout and
  "18446744073709551617" in show.stdout, show.stdout + show.stderr)
# a person reads what the tool decodes: escapes are no disguise
show = subprocess.run([TG, "approvals", "show", "--json", code_of(out.get(15, "")).get("ticket", "-"),
                       "--state", STATE], capture_output=True, text=True, timeout=60)
c("ticket_strings_decoded", '\\"cmd\\":\\"rm -rf /\\"' in show.stdout, show.stdout + show.stderr)
show = subprocess.run([TG, "approvals", "show", "--json", first.get("ticket", "-"), "--state",
                       STATE], capture_output=True, text=True, timeout=60)
try:
    shown = json.loads(show.stdout).get("arguments")
except ValueError:
    shown = None
c("ticket_json_arguments_as_sent",
  shown == '{"amount":0.10000000000000000001,"id":18446744073709551617}', show.stdout + show.stderr)

# ---- HTTP: the event stream a command tool answers on, and plain JSON ---------


def post(port, body):
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
         "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
         "Mcp-Name": json.loads(body.replace("1e400", "0"))["params"]["name"]}
    req = urllib.request.Request("http://127.0.0.1:%d/mcp" % port, data=body.encode(),
                                 method="POST", headers=h)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            text = r.read().decode()
    except urllib.error.HTTPError as e:
        return e.read().decode()
    for line in text.splitlines():
        if line.startswith("data: ") and '"result"' in line:
            return line[6:]
    return text


META = ('"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
        '"io.modelcontextprotocol/clientCapabilities":{}}')


def modern(name, args):
    return ('{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"%s",'
            '"arguments":%s,%s}}' % (name, args, META))


with serving([TG, "serve", "--catalog", CAT, "--state", os.path.join(TMP, "state2"),
              "--record", "/dev/null"], ERR) as port:
    t = text_of(post(port, modern("num.cat", A1)))
    c("http_stream_command_gets_every_digit", "0.10000000000000000001" in t and
      "18446744073709551617" in t, t)
    c("http_maximum_past_a_doubles_digits",
      refused_for(post(port, modern("num.cat", A2)), "maximum"), "")
    t = text_of(post(port, modern("num.echo", BIG)))
    c("http_builtin_echo_every_digit", "123456789012345678901234567890" in t, t)
    r = post(port, modern("num.echo", '{"x":1e400}'))
    c("http_past_a_doubles_range_parse_error", "-32700" in r, r)
with open(ERR) as f:
    err = f.read() + "".join(STDERR)
c("no_sanitizer_reports", "ERROR: AddressSanitizer" not in err and "runtime error" not in err,
  err[-2000:])
c.done()
