#!/usr/bin/env python3
"""A contract catalogue signed as a skill is (`toolgate catalog
manifest|sign|verify`, `serve --catalog-trust`; docs/SKILLS.md, "Signed
catalogues"), each a real run judged by its outcome:

- sign and verify, with minisign reading what toolgate signed (skipped
  where minisign is not installed); a contract changed after signing is
  refused by name;
- serve with --catalog-trust refuses an unsigned catalogue at start
  (exit 3, recorded), serves a signed one;
- over HTTP, a contract added without signing and a SIGHUP: the reload is
  refused, the old tools stay served, the refusal is recorded and counted
  in toolgate_blocked_loads_total{kind="catalog",reason="tampered"}; signed
  again and a SIGHUP: the new tool is served;
- what is served and run is the bytes verified: a script the catalogue
  mounts, changed after start, does not run (the signed one does) until
  signed again and reloaded; a contract swapped for an unsigned one once
  the verification read it, and back before anything looked again (timed
  by inotify), is not what is served; a refusal names the folder, not the
  copy;
- rollback and upstream with --catalog-trust refuse an unsigned catalogue
  (exit 3) before anything of it runs, read a signed one, and leave no copy.

    catalog_sign.py TOOLGATE REPO TMPDIR
"""
import ctypes
import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, example_gateway, start_http  # noqa: E402

TG, REPO, TMP = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
shutil.rmtree(TMP, ignore_errors=True)
os.makedirs(TMP)
c = Checks("catalog_sign")
CAT = os.path.join(TMP, "catalog")
os.makedirs(CAT)
ERR = []


def contract(name):
    with open(os.path.join(CAT, name + "-1.0.0.json"), "w") as f:
        json.dump({"name": name, "version": "1.0.0", "description": "Echo the arguments.",
                   "owner": {"team": "t", "contact": "t@example.test"}, "authority": "read",
                   "executor": {"kind": "builtin", "name": "echo"},
                   "input_schema": {"type": "object"}}, f)


def tg(*args, **kw):
    p = subprocess.run([TG, *args], capture_output=True, text=True, timeout=60, cwd=TMP, **kw)
    ERR.append(p.stderr)
    return p


contract("t.echo")
tg("skill", "keygen", "--secret-key", "k.sec", "--public-key", "k.pub", "--no-password")
tg("skill", "trust", "add", "ops", "k.pub", "--trust", "trust.json")
p = tg("catalog", "sign", CAT, "--secret-key", "k.sec")
v = tg("catalog", "verify", CAT, "--trust", "trust.json")
c("signed_and_verified", p.returncode == 0 and v.returncode == 0 and "signed by ops: 1 file" in v.stdout,
  p.stderr + v.stdout + v.stderr)
if shutil.which("minisign"):
    m = subprocess.run(["minisign", "-Vm", os.path.join(CAT, "SHA256SUMS"), "-p", os.path.join(TMP, "k.pub")],
                       capture_output=True, text=True)
    s = subprocess.run(["sha256sum", "-c", "--strict", "SHA256SUMS"], cwd=CAT, capture_output=True, text=True)
    c("minisign_and_sha256sum_verify", m.returncode == 0 and s.returncode == 0, m.stderr + s.stdout)
else:
    print("ok - integration/catalog_sign_minisign_and_sha256sum_verify # SKIP no minisign")
with open(os.path.join(CAT, "t.echo-1.0.0.json"), "a") as f:
    f.write(" ")
v = tg("catalog", "verify", CAT, "--trust", "trust.json")
c("changed_contract_refused", v.returncode == 1 and
  "tampered: %s/t.echo-1.0.0.json: changed since the manifest was made" % CAT in v.stderr, v.stderr)
tg("catalog", "sign", CAT, "--secret-key", "k.sec")

INIT = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25",' \
       '"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}'
LIST = '{"jsonrpc":"2.0","id":1,"method":"tools/list"}'
unsigned = os.path.join(TMP, "unsigned")
shutil.copytree(CAT, unsigned)
os.unlink(os.path.join(unsigned, "SHA256SUMS.minisig"))
p = tg("serve", "--catalog", unsigned, "--catalog-trust", "trust.json", "--stdio",
       "--record", os.path.join(TMP, "a1.log"), input=INIT + "\n")
c("unsigned_refused_at_start", p.returncode == 3 and "not signed as --catalog-trust asks" in p.stderr and
  "load_refused" in open(os.path.join(TMP, "a1.log")).read(), "%d %s" % (p.returncode, p.stderr))
p = tg("serve", "--catalog", CAT, "--catalog-trust", "trust.json", "--stdio", "--record", "/dev/null",
       input=INIT + "\n" + LIST + "\n")
c("signed_served", p.returncode == 0 and '"name":"t.echo"' in p.stdout, p.stdout + p.stderr)

# --- a reload of a catalogue changed without signing ---
audit = os.path.join(TMP, "a2.log")
err = os.path.join(TMP, "serve.err")
server, port = start_http([TG, "serve", "--catalog", CAT, "--catalog-trust", os.path.join(TMP, "trust.json"),
                           "--record", audit], err)


def post(body):
    req = urllib.request.Request("http://127.0.0.1:%d/mcp" % port, data=body.encode(), method="POST",
                                 headers={"Content-Type": "application/json",
                                          "Accept": "application/json, text/event-stream",
                                          "MCP-Protocol-Version": "2025-11-25"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read().decode(), r.headers.get("Mcp-Session-Id")


def tools():
    _, sid = post(INIT)
    req = urllib.request.Request("http://127.0.0.1:%d/mcp" % port, data=LIST.encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Mcp-Session-Id": sid,
                                          "Accept": "application/json, text/event-stream",
                                          "MCP-Protocol-Version": "2025-11-25"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return sorted(t["name"] for t in json.loads(r.read())["result"]["tools"])


def reloaded(n):
    """SIGHUP, then wait for the n-th reload's line in the log."""
    server.send_signal(signal.SIGHUP)
    for _ in range(300):
        if open(err).read().count("reload") >= n:
            return True
        time.sleep(0.05)
    return False


def metrics():
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=30) as r:
        return r.read().decode()


try:
    before = tools()
    contract("t.more")
    ok = reloaded(1)
    m = metrics()
    c("unsigned_change_not_reloaded",
      ok and before == ["t.echo"] and tools() == ["t.echo"] and
      'toolgate_blocked_loads_total{kind="catalog",reason="tampered"} 1' in m.splitlines() and
      '"outcome":"load_refused"' in open(audit).read(),
      "%s %s %s" % (before, open(err).read()[-400:], [x for x in m.splitlines() if "blocked" in x]))
    tg("catalog", "sign", CAT, "--secret-key", "k.sec")
    ok = reloaded(2)
    time.sleep(0.2)
    c("signed_change_reloaded", ok and tools() == ["t.echo", "t.more"], open(err).read()[-400:])
finally:
    server.terminate()
    server.wait(timeout=30)
ERR.append(open(err).read())

# --- a script the signed catalogue mounts, changed after start ---
CAT2 = os.path.join(TMP, "catalog2")
os.makedirs(os.path.join(CAT2, "tools"))
with open(os.path.join(CAT2, "hello.json"), "w") as f:
    json.dump({"name": "t.hello", "version": "1.0.0", "description": "Says which script ran.",
               "owner": {"team": "t", "contact": "t@example.test"}, "authority": "read",
               "input_schema": {"type": "object"},
               "executor": {"kind": "command", "argv": ["sh", "/tools/hello.sh"], "tier": "strict",
                            "limits": {"timeout": "30s"}, "mounts": [{"host": "tools", "inside": "/tools"}]}}, f)


def script(said):
    with open(os.path.join(CAT2, "tools", "hello.sh"), "w") as f:
        f.write('cat >/dev/null; echo \'{"said": "%s"}\'\n' % said)


script("signed one")
tg("catalog", "sign", CAT2, "--secret-key", "k.sec")
err2 = os.path.join(TMP, "serve2.err")
p = subprocess.Popen([TG, "serve", "--catalog", CAT2, "--catalog-trust", os.path.join(TMP, "trust.json"),
                      "--record", "/dev/null", "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=open(err2, "w"), text=True, cwd=TMP)


def answer(i, line):
    p.stdin.write(line + "\n")
    p.stdin.flush()
    for got in p.stdout:
        if got.startswith('{"jsonrpc":"2.0","id":%d,' % i):
            return got
    return ""


def said(i):
    return answer(i, '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"t.hello",'
                     '"arguments":{}}}' % i)


try:
    answer(0, INIT)
    first = said(1)
    script("UNSIGNED")
    second = said(2)
    c("unsigned_script_not_run", "signed one" in first and "signed one" in second and "UNSIGNED" not in second,
      first + second + open(err2).read()[-400:])
    script("signed two")
    tg("catalog", "sign", CAT2, "--secret-key", "k.sec")
    p.send_signal(signal.SIGHUP)
    for _ in range(300):
        if "reloaded" in open(err2).read():
            break
        time.sleep(0.05)
    third = said(3)
    c("signed_script_reloaded", "signed two" in third, third + open(err2).read()[-400:])
finally:
    p.stdin.close()
    p.wait(timeout=30)
ERR.append(open(err2).read())

# --- a signed catalogue whose contract is wrong: named as the folder's ---
CAT4 = os.path.join(TMP, "catalog4")
os.makedirs(CAT4)
with open(os.path.join(CAT4, "x.json"), "w") as f:
    f.write('{"name": "x", "version": "1.0.0"}')
tg("catalog", "sign", CAT4, "--secret-key", "k.sec")
p4 = tg("serve", "--catalog", CAT4, "--catalog-trust", "trust.json", "--stdio", "--record", "/dev/null",
        input=INIT + "\n")
c("refusal_names_the_folder", p4.returncode == 3 and "contract %s/x.json: authority" % CAT4 in p4.stderr and
  "toolgate-catalog-" not in p4.stderr, p4.stderr)

# --- a contract swapped after the verification read it, and back ---
CAT3 = os.path.join(TMP, "catalog3")
os.makedirs(CAT3)
NAME = "t.echo-1.0.0.json"


def echo(description):
    return json.dumps({"name": "t.echo", "version": "1.0.0", "description": description,
                       "owner": {"team": "t", "contact": "t@example.test"}, "authority": "read",
                       "executor": {"kind": "builtin", "name": "echo"}, "input_schema": {"type": "object"}})


def put(text):
    with open(os.path.join(TMP, "swap.json"), "w") as f:
        f.write(text)
    os.rename(os.path.join(TMP, "swap.json"), os.path.join(CAT3, NAME))  # as any writer of the folder can


put(echo("Signed."))
for i in range(4):  # bytes to hash: the windows a swap needs, wide
    os.makedirs(os.path.join(CAT3, "docs%d" % i))
    with open(os.path.join(CAT3, "docs%d" % i, "blob"), "wb") as f:
        f.write(os.urandom(2 << 20))
tg("catalog", "sign", CAT3, "--secret-key", "k.sec")
libc = ctypes.CDLL(None, use_errno=True)
ifd = libc.inotify_init1(os.O_CLOEXEC)
libc.inotify_add_watch(ifd, CAT3.encode(), 0x10)  # IN_CLOSE_NOWRITE


def swapper():
    closes = 0
    while closes < 2:
        try:
            buf = os.read(ifd, 4096)
        except OSError:  # closed once serve ended: it read the file fewer times
            return
        at = 0
        while at < len(buf):
            _, _, _, n = struct.unpack_from("iIII", buf, at)
            name = buf[at + 16:at + 16 + n].rstrip(b"\0").decode()
            at += 16 + n
            if name == NAME:
                closes += 1
                # 1: the verification read it; 2: the loader did
                put(echo("UNSIGNED") if closes == 1 else echo("Signed."))


t = threading.Thread(target=swapper, daemon=True)
t.start()
p3 = tg("serve", "--catalog", CAT3, "--catalog-trust", "trust.json", "--stdio", "--record", "/dev/null",
        input=INIT + "\n" + LIST + "\n")
os.close(ifd)
c("swapped_contract_not_served", '"description":"Signed."' in p3.stdout and "UNSIGNED" not in p3.stdout,
  p3.stdout[-600:] + p3.stderr[-400:])

# --- the other commands that run the catalogue's code: rollback, upstream ---


def copies():
    top = os.environ.get("TMPDIR") or "/tmp"
    return sorted(x for x in os.listdir(top) if x.startswith("toolgate-catalog-"))


BEFORE = copies()
STATE = os.path.join(TMP, "state")
os.makedirs(STATE, exist_ok=True)
with open(os.path.join(TMP, "policy.json"), "w") as f:
    json.dump({"principals": {"ops": {"scopes": ["*:approve"]}}}, f)
for argv in (["upstream", "list", "--catalog", unsigned, "--catalog-trust", "trust.json"],
             ["rollback", "0123456789abcdef", "--catalog", unsigned, "--catalog-trust", "trust.json",
              "--state", STATE, "--policy", "policy.json", "--token", "x"]):
    r = tg(*argv)
    c(argv[0] + "_refuses_an_unsigned_catalogue", r.returncode == 3 and
      "not signed as --catalog-trust asks" in r.stderr and not r.stdout.strip(),
      "%d %s %s" % (r.returncode, r.stdout, r.stderr))
r = tg("rollback", "0123456789abcdef", "--catalog", unsigned, "--state", STATE, "--policy",
       "policy.json", "--token", "x")
c("rollback_without_trust_reads_it", r.returncode == 1 and "no such ticket" in r.stderr,
  "%d %s" % (r.returncode, r.stderr))
r = tg("upstream", "list", "--catalog", CAT, "--catalog-trust", "trust.json")
c("upstream_reads_a_signed_catalogue", r.returncode == 0 and not r.stderr.strip(),
  "%d %s %s" % (r.returncode, r.stdout, r.stderr))
r = tg("upstream", "list", "--catalog", CAT, "--catalog-trust", "nope.json")
c("a_missing_trust_store_named", r.returncode == 3 and "nope.json" in r.stderr, r.stderr)
c("no_copy_left_behind", copies() == BEFORE, str(copies()))
reports = [e for e in ERR if "runtime error" in e or "AddressSanitizer" in e or "LeakSanitizer" in e]
c("no_sanitizer_reports", not reports, "\n".join(reports)[:2000])
print("catalog_sign_ran_to_the_end")
c.done()
