#!/usr/bin/env python3
"""bench/upstream.sh, part 2: the gateway's memory per idle upstream, and
the floor (a bare spawn of /bin/true) measured in the same run.

usage: memory.py TOOLGATE NODE_MODULES WORKDIR [COUNTS...]   (default 0 1 8)

For each count N, `toolgate serve --http` on 127.0.0.1 with a catalogue of
the bench's builtin echo contract and N stdio upstreams, each
server-everything over stdio in its own strict-tier sandbox (the
node_modules directory mounted read-only). Once tools/list holds every
upstream's tools (their first listing) and a second has passed, it reads:

- the gateway's own process: VmRSS (/proc/PID/status) and Pss
  (/proc/PID/smaps_rollup);
- each sandbox's PID 1, a copy of the gateway made when the sandbox is
  (docs/SANDBOX.md): Rss and Pss, since it shares the gateway's pages
  until either writes them;
- the servers (node, inside the sandboxes): Rss and Pss. They are the
  upstream's, not the gateway's, and given apart.

Prints a table and one JSON line (prefixed "json ") for the script.
Nothing here is a test: it asserts nothing.
"""
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request

TG, NM, WORK = sys.argv[1], os.path.abspath(sys.argv[2]), sys.argv[3]
COUNTS = [int(a) for a in sys.argv[4:]] or [0, 1, 8]
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SERVER = "/opt/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js"


def catalogue(n):
    cat = os.path.join(WORK, "mem-cat-%d" % n)
    shutil.rmtree(cat, ignore_errors=True)
    os.makedirs(os.path.join(cat, "upstreams"))
    shutil.copy(os.path.join(REPO, "bench/mcp/catalog/echo.json"), cat)
    for i in range(n):
        with open(os.path.join(cat, "upstreams", "everything%d.json" % i), "w") as f:
            json.dump({"transport": "stdio", "argv": ["/usr/bin/node", SERVER, "stdio"],
                       "sandbox": {"tier": "strict",
                                   "mounts": [{"host": NM, "inside": "/opt/mcp/node_modules"}]},
                       "tools": {"echo": {"authority": "read"}}}, f)
    return cat


def post(port, sid, body):
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
         "MCP-Protocol-Version": "2025-11-25"}
    if sid:
        h["Mcp-Session-Id"] = sid
    req = urllib.request.Request("http://127.0.0.1:%d/mcp" % port, data=json.dumps(body).encode(),
                                 headers=h, method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        text = r.read().decode()
        sid = r.headers.get("Mcp-Session-Id") or sid
    for line in text.splitlines():  # an event stream's data lines, or one JSON body
        if line.startswith("data: ") and '"jsonrpc"' in line:
            return sid, json.loads(line[6:])
    return sid, json.loads(text) if text.strip() else {}


def listed(port):
    """The names tools/list holds, every page."""
    sid, _ = post(port, None, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench-memory", "version": "1"}}})
    post(port, sid, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    names, cursor = [], None
    while True:
        _, r = post(port, sid, {"jsonrpc": "2.0", "id": 1, "method": "tools/list",
                                "params": {"cursor": cursor} if cursor else {}})
        names += [t["name"] for t in r.get("result", {}).get("tools", [])]
        cursor = r.get("result", {}).get("nextCursor")
        if not cursor:
            break
    req = urllib.request.Request("http://127.0.0.1:%d/mcp" % port, method="DELETE",
                                 headers={"Mcp-Session-Id": sid})
    try:
        urllib.request.urlopen(req, timeout=5).read()
    except OSError:
        pass
    return names


def kib(path, key):
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def children():
    kids = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            ppid = kib("/proc/%s/status" % p, "PPid")
            kids.setdefault(ppid, []).append(int(p))
    return kids


def comm(pid):
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return ""


def measure(n):
    cat = catalogue(n)
    err = open(os.path.join(WORK, "mem-%d.err" % n), "w")
    t0 = time.monotonic()
    gw = subprocess.Popen([TG, "serve", "--catalog", cat, "--http", "127.0.0.1:0",
                           "--record", "/dev/null"], stderr=err, stdin=subprocess.DEVNULL)
    try:
        port = None
        while port is None and time.monotonic() - t0 < 20:
            with open(err.name) as f:
                text = f.read()
            if "MCP on " in text:
                port = int(text.split("MCP on ")[1].split("/")[2].split(":")[1])
            time.sleep(0.05)
        if port is None:
            raise SystemExit("memory.py: the gateway did not start: see " + err.name)
        while True:
            names = listed(port)
            if sum(1 for x in names if x.startswith("everything") and x.endswith(".echo")) == n:
                break
            if time.monotonic() - t0 > 120:
                raise SystemExit("memory.py: %d upstreams not listed in 120 s: see %s"
                                 % (n, err.name))
            time.sleep(0.2)
        listed_s = time.monotonic() - t0
        time.sleep(1)
        kids = children()
        pid1s = [k for k in kids.get(gw.pid, []) if comm(k) == "toolgate"]
        servers = [s for k in pid1s for s in kids.get(k, [])]
        g = "/proc/%d/" % gw.pid
        return {"upstreams": n, "tools": len(names), "listed_s": round(listed_s, 2),
                "gw_rss": kib(g + "status", "VmRSS"), "gw_pss": kib(g + "smaps_rollup", "Pss"),
                "pid1s": len(pid1s),
                "pid1_rss": sum(kib("/proc/%d/status" % k, "VmRSS") for k in pid1s),
                "pid1_pss": sum(kib("/proc/%d/smaps_rollup" % k, "Pss") for k in pid1s),
                "servers": len(servers),
                "srv_rss": sum(kib("/proc/%d/status" % s, "VmRSS") for s in servers),
                "srv_pss": sum(kib("/proc/%d/smaps_rollup" % s, "Pss") for s in servers)}
    finally:
        gw.terminate()
        try:
            gw.wait(timeout=20)
        except subprocess.TimeoutExpired:
            gw.kill()
            gw.wait()


def floor(runs=300):
    """A bare posix_spawn of /bin/true and its wait: the machine's floor."""
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        pid = os.posix_spawn("/bin/true", ["/bin/true"], {})
        os.waitpid(pid, 0)
        ts.append(time.perf_counter() - t)
    ts.sort()
    return round(ts[len(ts) // 2] * 1e3, 3)


def main():
    rows = [measure(n) for n in COUNTS]
    print("%-10s %6s %9s %11s %11s %18s %18s" % ("upstreams", "tools", "listed", "gateway RSS",
                                                 "gateway PSS", "sandbox PID 1 PSS",
                                                 "servers RSS (PSS)"))
    for r in rows:
        print("%-10d %6d %8.2fs %8d KiB %8d KiB %14d KiB %9d KiB (%d)" % (
            r["upstreams"], r["tools"], r["listed_s"], r["gw_rss"], r["gw_pss"], r["pid1_pss"],
            r["srv_rss"], r["srv_pss"]))
    base = rows[0]
    for r in rows[1:]:
        n = r["upstreams"] - base["upstreams"]
        if n > 0:
            print("per upstream, %d against %d: gateway RSS +%.0f KiB, PSS +%.0f KiB; "
                  "its sandbox's PID 1 PSS %.0f KiB; the server RSS %.0f KiB (PSS %.0f)" % (
                      r["upstreams"], base["upstreams"], (r["gw_rss"] - base["gw_rss"]) / n,
                      (r["gw_pss"] - base["gw_pss"]) / n, r["pid1_pss"] / r["upstreams"],
                      r["srv_rss"] / r["upstreams"], r["srv_pss"] / r["upstreams"]))
    f = floor()
    print("floor: a bare posix_spawn of /bin/true and its wait, median of 300: %.3f ms" % f)
    print("json " + json.dumps({"memory": rows, "floor_ms": f}))


main()
