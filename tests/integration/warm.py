#!/usr/bin/env python3
"""The gateway's warm pools (serve --warm), end to end over HTTP:

- python.run (a prestart tool: the zygote) and fs.read (a warm sandbox
  waiting for its command) give the same answers warm as cold;
- after the first call of a tool, its calls find a ready sandbox
  (GET /admin/warm counts them), two a tool without --warm;
- nothing one call leaves behind is there for the next: files in /tmp,
  the work directory and /dev/shm, a process, an abstract socket, SysV
  shared memory;
- a call the pool cannot serve as it is (a dry run) runs cold, right.

    warm.py TOOLGATE REPO TMPDIR
"""
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, example_gateway, start_http  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
CAT, WS, STATE = os.path.join(TMP, "catalog"), os.path.join(TMP, "ws"), os.path.join(TMP, "state")
POLICY = os.path.join(TMP, "policy.json")
c = Checks("warm")

example_gateway(REPO, TMP)
with open(POLICY, "w") as f:
    json.dump({"writes": {"wait": "0"},  # held calls answered at once
               "principals": {"agent": {"scopes": ["*:read", "fs.*:write"]},
                              "ops": {"scopes": ["fs.*:approve"]}}}, f)


def cli(*argv):
    return subprocess.run([TG] + list(argv), capture_output=True, text=True, timeout=60)


TOKEN = cli("token", "issue", "--state", STATE, "--policy", POLICY, "--principal", "agent",
            "--scope", "*:read", "--scope", "fs.*:write").stdout.strip()
OPS = cli("token", "issue", "--state", STATE, "--policy", POLICY, "--principal", "ops",
          "--scope", "fs.*:approve").stdout.strip()
# no --warm: two sandboxes a command tool is the default
srv, port = start_http([TG, "serve", "--catalog", CAT, "--workspace", WS, "--state", STATE,
                        "--policy", POLICY, "--record", os.path.join(TMP, "record")],
                       os.path.join(TMP, "serve.err"))


def post(path, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                 method="POST", headers={
                                     "Content-Type": "application/json",
                                     "Accept": "application/json, text/event-stream",
                                     "MCP-Protocol-Version": "2026-07-28",
                                     "Mcp-Method": "tools/call", "Mcp-Name": body["params"]["name"],
                                     "Authorization": "Bearer " + TOKEN})
    with urllib.request.urlopen(req, timeout=60) as r:
        text = r.read().decode()
    for line in text.splitlines():
        if line.startswith("data: ") and '"id"' in line:
            return json.loads(line[6:])
    return json.loads(text)


def call(tool, args, meta=None):
    m = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
         "io.modelcontextprotocol/clientCapabilities": {}}
    m.update(meta or {})
    r = post("/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                      "params": {"name": tool, "arguments": args, "_meta": m}})
    return r.get("result", r)


def warm_stats(token=None):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/admin/warm",
                                 headers={"Authorization": "Bearer " + (token or OPS)})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return json.loads(r.read())
    except urllib.error.HTTPError as e:
        return {"status": e.code}


def settle(ready):
    """Until `ready` sandboxes wait (10 s at most)."""
    for _ in range(500):
        s = warm_stats()
        if s["ready"] >= ready and not s["refilling"] and not s["spent"]:
            return s
        time.sleep(0.02)
    return warm_stats()


def py(code):
    r = call("python.run", {"code": code})
    return r.get("structuredContent") or {"error": r}


try:
    first = py("print(6 * 7)")
    c("zygote_first_call_cold", first.get("stdout") == "42\n", first)
    s = settle(2)
    c("pool_made_after_first_call", s["size"] == 2 and s["ready"] == 2 and s["failed"] == 0, s)
    outs = [py("import sys; print(sum(range(%d)), sys.argv)" % n) for n in (10, 100, 1000)]
    c("zygote_answers", [o.get("stdout") for o in outs] ==
            ["45 ['-c']\n", "4950 ['-c']\n", "499500 ['-c']\n"], outs)
    err = py("import json\nraise ValueError(json.dumps([1]))")
    c("zygote_errors_as_python_c", err.get("exit_code") == 1 and
            err.get("stderr", "").startswith("Traceback (most recent call last):\n  File \"<string>\"")
            and "ValueError: [1]" in err.get("stderr", ""), err)
    s = warm_stats()
    c("calls_found_warm_sandboxes", s["warm_runs"] >= 3, s)

    # nothing crosses: one call leaves everything it can, the next looks
    settle(2)
    leave = py("import os, socket, subprocess, ctypes\n"
               "for d in ('/tmp', '/work', '/dev/shm'):\n"
               "    open(d + '/left-behind', 'w').write('x')\n"
               "subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
               "s = socket.socket(socket.AF_UNIX); s.bind('\\0left-behind'); s.listen()\n"
               "libc = ctypes.CDLL(None); libc.shmget.restype = ctypes.c_int\n"
               "print(libc.shmget(0x7467, 4096, 0o1666) >= 0)\n")
    settle(2)
    look = py("import os, glob\n"
              "print(sorted(os.listdir('/tmp') + os.listdir('/work') + os.listdir('/dev/shm')))\n"
              "print(sum('sleep' in open(p).read() for p in glob.glob('/proc/[0-9]*/comm')))\n"
              "print(sum('left-behind' in l for l in open('/proc/net/unix')))\n"
              "print(len(open('/proc/sysvipc/shm').readlines()) - 1)\n")
    c("nothing_crosses_calls", leave.get("stdout") == "True\n" and
            look.get("stdout") == "[]\n0\n0\n0\n", {"leave": leave, "look": look})

    # a warm sandbox waiting for its command: fs.read, twice
    a = call("fs.read", {"path": "README.md"})
    settle(2)
    b = call("fs.read", {"path": "README.md"})
    c("warm_command_tool", not a.get("isError") and a == b, [a, b])

    # a dry run is unlike the pool's runs (every mount read-only): cold
    before = warm_stats()
    d = call("fs.write", {"path": "notes/warm.txt", "content": "hi\n"}, {"dev.toolgate/dryRun": True})
    after = warm_stats()
    c("dry_run_cold", not d.get("isError") and "warm.txt" in json.dumps(d) and
            after["warm_runs"] == before["warm_runs"], [d, before, after])
    c("no_sandbox_failed", after["failed"] == 0, after)
    c("pools_shown_to_operators_only", warm_stats(TOKEN) == {"status": 403}, warm_stats(TOKEN))

    # what a call leaves running is ended before its answer comes: the
    # next call's sandbox is another, and the host sees nothing more
    bg = py("import subprocess\n"
            "subprocess.Popen(['sh', '-c', 'sleep 0.3; echo late >/dev/stderr'],"
            " start_new_session=True)\nprint('left')")
    c("background_process_ended_with_call", bg.get("stdout") == "left\n" and
      "late" not in bg.get("stderr", ""), bg)
    # the zygote runs a snippet as python3 -c: its own __main__, its
    # threads finished and atexit run before the end
    fid = py("import pickle, threading, atexit, time\n"
             "class A: pass\n"
             "print(len(pickle.dumps(A())) > 0)\n"
             "atexit.register(lambda: print('atexit'))\n"
             "threading.Thread(target=lambda: (time.sleep(0.1), print('thread'))).start()\n")
    c("zygote_like_python_c", fid.get("stdout") == "True\nthread\natexit\n", fid)
finally:
    srv.terminate()
    srv.wait(timeout=30)
    with open(os.path.join(TMP, "serve.err")) as f:
        text = f.read()
    c("no_sanitizer_reports", "Sanitizer" not in text and "runtime error:" not in text, text[-2000:])
c.done()
