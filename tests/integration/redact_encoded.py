#!/usr/bin/env python3
"""Secrets inside base64 and hex are redacted in what the caller decodes
(docs/REDACTION.md, "Encoded secrets"), through the real gateway over
stdio with the example catalogue:

- fs.read of a .env holding an AWS key id, a GitHub token and a byte that
  is not UTF-8 (so fs.read returns it as base64): the structured content
  is still base64, and decodes to the file with both secrets redacted;
  the text block is that structured content's JSON (made again from it
  once redacted, never redacted apart); the record counts both rules;
- fs.read of a binary file with a token among random bytes: neither copy
  decodes to the token;
- a tool whose answer holds secrets as member names: renamed;
- python.run printing b64encode of a secret (as bytes and as str), its
  URL-safe form and its hex, and base64(1)'s wrapped lines: none of it
  reaches the caller;
- a tool whose MCP result carries a resource blob and an image's data
  with a secret in them: decoded, redacted, encoded again.

The secrets are made here from a seeded generator (the snippet that
python.run runs makes the same ones): no credential-shaped literal sits
in the repository.

    redact_encoded.py TOOLGATE REPO TMPDIR
"""
import base64
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, example_gateway  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
c = Checks("redact_encoded")

MAKE = '''
import random, zlib
def make(seed):
    r = random.Random(seed)
    b62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    body = "".join(r.choice(b62) for _ in range(30))
    crc, tail = zlib.crc32(body.encode()), ""
    for _ in range(6):
        tail, crc = b62[crc % 62] + tail, crc // 62
    key = "AK" + "IA" + "".join(r.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
    return key, "gh" + "p_" + body + tail
'''
scope = {}
exec(MAKE, scope)
AWS, GH = scope["make"](25)
ENV = ("# staging\nAWS_ACCESS_KEY_ID=%s\nGITHUB_TOKEN=%s\nOWNER=Jos\xe9\n" % (AWS, GH)).encode("latin-1")

CAT, WS = example_gateway(REPO, TMP)
with open(os.path.join(WS, ".env"), "wb") as f:
    f.write(ENV)
os.chown(os.path.join(WS, ".env"), 65534, 65534)

# a binary file (a database, say) holding a token among random bytes: its
# base64 in the structured content, and the text block that mirrors it
rnd = bytes(random.Random(7).randrange(256) for _ in range(701))
with open(os.path.join(WS, "app.db"), "wb") as f:
    f.write(rnd + b"GITHUB_TOKEN=" + GH.encode() + b"\n" + rnd[:99])
os.chown(os.path.join(WS, "app.db"), 65534, 65534)
# a tool whose answer holds secrets as member names
with open(os.path.join(CAT, "keyed-1.0.0.json"), "w") as f:
    json.dump({"name": "keyed", "version": "1.0.0", "description": "Returns names",
               "owner": {"team": "t", "contact": "t@example.test"}, "authority": "read",
               "input_schema": {"type": "object"},
               "executor": {"kind": "command",
                            "argv": ["python3", "-c", "print(%r)" % json.dumps(
                                {GH: 1, "nested": {AWS: "x"}, "plain": 2})]}}, f)

# a tool answering with an MCP result: a resource's blob, an image's data
blob = base64.b64encode(ENV).decode()
image = base64.b64encode(b"\x89PNG\r\n\x1a\n\0\0\0\rtEXtComment\0token=" + GH.encode() + b"\0").decode()
result = {"content": [{"type": "resource", "resource": {"uri": "file:///ws/.env", "blob": blob}},
                      {"type": "image", "mimeType": "image/png", "data": image}]}
with open(os.path.join(CAT, "blobby-1.0.0.json"), "w") as f:
    json.dump({"name": "blobby", "version": "1.0.0", "description": "Returns a blob",
               "owner": {"team": "t", "contact": "t@example.test"}, "authority": "read",
               "input_schema": {"type": "object"},
               "executor": {"kind": "command", "output": "mcp",
                            "argv": ["python3", "-c", "print(%r)" % json.dumps(result)]}}, f)

SNIPPET = MAKE + '''
import base64
aws, gh = make(25)
line = ("GITHUB_TOKEN=%s\\n" % gh).encode()
print(base64.b64encode(line))
print(base64.b64encode(gh.encode()).decode())
print(base64.urlsafe_b64encode(("AWS_ACCESS_KEY_ID=" + aws).encode()).decode().rstrip("="))
print(gh.encode().hex())
print(base64.encodebytes(line * 4).decode())
'''

requests = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "fs.read", "arguments": {"path": ".env"}}},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
     "params": {"name": "python.run", "arguments": {"code": SNIPPET}}},
    {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "blobby", "arguments": {}}},
    {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
     "params": {"name": "fs.read", "arguments": {"path": "app.db"}}},
    {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "keyed", "arguments": {}}},
]
log = os.path.join(TMP, "audit.log")
p = subprocess.run([TG, "serve", "--catalog", CAT, "--workspace", WS, "--stdio", "--audit", log],
                   input="".join(json.dumps(r) + "\n" for r in requests), capture_output=True,
                   text=True, timeout=240)
answers = {}
for text in p.stdout.splitlines():
    try:
        m = json.loads(text)
    except ValueError:
        continue
    if "id" in m:
        answers[m["id"]] = m.get("result", m)
out = p.stdout

# every form in which the secrets could have left
forms = []
for s in (AWS, GH, "GITHUB_TOKEN=" + GH, "AWS_ACCESS_KEY_ID=" + AWS):
    b = s.encode()
    forms += [s, b.hex(), base64.b64encode(b).decode().rstrip("="),
              base64.urlsafe_b64encode(b).decode().rstrip("=")]
forms += [blob[:40], base64.b64encode(ENV[:60]).decode()]
leaked = [f for f in forms if f in out]
c("no_secret_in_any_form", not leaked and len(answers) == 6,
  "leaked %d forms; answers %s; stderr %s" % (len(leaked), sorted(answers), p.stderr[-1500:]))


def decoded(s):
    try:
        return base64.b64decode(s, validate=True)
    except ValueError:
        return b""


read = answers.get(2, {})
sc = read.get("structuredContent", {})
text = (read.get("content") or [{}])[0].get("text", "")
got = decoded(sc.get("content", ""))
c("fs_read_base64_redacted",
  sc.get("encoding") == "base64" and got.startswith(b"# staging\nAWS_ACCESS_KEY_ID=[REDACTED:aws_access_key_id]\n"
                                                    b"GITHUB_TOKEN=[REDACTED:github_token]\nOWNER=Jos\xe9")
  and text == json.dumps(sc, separators=(",", ":"), ensure_ascii=False)
  and not read.get("isError"), json.dumps(read)[:1500])

run = answers.get(3, {})
stdout = run.get("structuredContent", {}).get("stdout", "")
c("python_run_base64_redacted",
  stdout.count("[REDACTED:github_token]") >= 3 and "[REDACTED:aws_access_key_id]" in stdout
  and run.get("structuredContent", {}).get("exit_code") == 0, json.dumps(run)[:1500])

blk = answers.get(4, {}).get("content") or [{}, {}]
res, img = decoded(blk[0].get("resource", {}).get("blob", "")), decoded(blk[1].get("data", ""))
c("blob_and_image_data_redacted",
  b"GITHUB_TOKEN=[REDACTED:github_token]" in res and b"token=[REDACTED:github_token]\0" in img
  and img.startswith(b"\x89PNG"), json.dumps(answers.get(4))[:1500])

db = answers.get(5, {})
seen = [decoded(db.get("structuredContent", {}).get("content", ""))]
try:
    seen.append(decoded(json.loads((db.get("content") or [{}])[0].get("text", "{}"))
                        .get("content", "")))
except ValueError:
    seen.append(b"")
c("binary_file_redacted_in_both_copies",
  all(GH.encode() not in x and b"GITHUB_TOKEN=" in x for x in seen) and
  all(GH not in json.dumps(db) for _ in (0,)), [x[-120:] for x in seen])
keyed = answers.get(6, {})
c("member_names_redacted", GH not in json.dumps(keyed) and AWS not in json.dumps(keyed) and
  keyed.get("structuredContent", {}).get("plain") == 2, json.dumps(keyed)[:600])

calls = [json.loads(x) for x in open(log) if '"kind":"call"' in x] if os.path.exists(log) else []
counts = {}
for r in calls:  # by tool, over its calls (fs.read reads .env and app.db)
    for rule, n in r.get("redacted", {}).items():
        counts.setdefault(r.get("tool"), {})[rule] = counts.get(r.get("tool"), {}).get(rule, 0) + n
c("record_counts_rules",
  counts.get("fs.read", {}).get("aws_access_key_id", 0) >= 1 and
  counts.get("fs.read", {}).get("github_token", 0) >= 1 and
  counts.get("python.run", {}).get("github_token", 0) >= 1 and
  not any(f in open(log).read() for f in forms if len(f) > 12), json.dumps(counts))
c("no_sanitizer_reports", "Sanitizer" not in p.stderr and "runtime error:" not in p.stderr,
  p.stderr[-2000:])
c.done()
