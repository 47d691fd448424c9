#!/usr/bin/env python3
"""toolgate under systemd (docs/SYSTEMD.md), without systemd as PID 1: the
unit installed by `make install-systemd` into a DESTDIR passes
`systemd-analyze verify` with nothing said and keeps its `systemd-analyze
security` exposure; `toolgate serve` speaks sd_notify to a datagram socket
of the test's (READY=1 only once the listener answers, WATCHDOG=1 every
WATCHDOG_USEC/2, RELOADING=1 then READY=1 on SIGHUP, STOPPING=1 on
SIGTERM, no pings for another WATCHDOG_PID), and maps libsystemd only when
NOTIFY_SOCKET is set. Prints "ok - ..." or "not ok - ...: why" per check.
Usage: systemd.py TOOLGATE REPO WORKDIR"""
import http.client
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks  # noqa: E402

TG, REPO, WORK = sys.argv[1:4]
TG = os.path.abspath(TG)
check = Checks("systemd")
# the figure docs/SYSTEMD.md reports: a setting dropped from the unit
# makes this fail rather than the document go stale
EXPOSURE = 3.2

shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
sanitizer = []


# --- the unit ------------------------------------------------------------------
dest = os.path.join(WORK, "dest")
unit = os.path.join(dest, "usr/lib/systemd/system/toolgate.service")
mk = ["make", "-s", "--no-print-directory", "-C", REPO, "DESTDIR=" + dest, "PREFIX=/usr",
      "BINDIR=" + os.path.dirname(TG), "SYSCONFDIR=/etc"]
r = subprocess.run(mk + ["install-systemd"], capture_output=True, text=True, timeout=60)
text = open(unit).read() if os.path.exists(unit) else ""
check("install_substitutes", r.returncode == 0 and "@BINDIR@" not in text and
      "@SYSCONFDIR@" not in text and
      ("ExecStart=%s serve --config /etc/toolgate/toolgate.conf" % TG) in text,
      "rc=%d %s %s" % (r.returncode, r.stderr[-300:], text[:200]))
if shutil.which("systemd-analyze"):
    # verify wants ExecStart's binary to exist: BINDIR is the build's
    v = subprocess.run(["systemd-analyze", "verify", unit], capture_output=True, text=True,
                       timeout=60)
    check("verify_clean", v.returncode == 0 and not v.stdout.strip() and not v.stderr.strip(),
          "rc=%d %s %s" % (v.returncode, v.stdout[-400:], v.stderr[-400:]))
    s = subprocess.run(["systemd-analyze", "security", "--offline=true", unit],
                       capture_output=True, text=True, timeout=60)
    m = re.search(r"Overall exposure level for toolgate.service: ([0-9.]+)", s.stdout)
    if "--offline" in s.stderr and not m:
        print("skip - integration/systemd_exposure: this systemd-analyze has no --offline")
    else:
        check("exposure", m and float(m.group(1)) <= EXPOSURE,
              "want <= %s: %s %s" % (EXPOSURE, s.stdout[-300:], s.stderr[-300:]))
else:
    print("skip - integration/systemd_verify_clean: no systemd-analyze")
# the service's user, made by systemd-sysusers from the file installed,
# in the DESTDIR as a root of its own
users = os.path.join(dest, "usr/lib/sysusers.d/toolgate.conf")
if shutil.which("systemd-sysusers"):
    os.makedirs(os.path.join(dest, "etc"), exist_ok=True)
    u = subprocess.run(["systemd-sysusers", "--root=" + dest, users], capture_output=True,
                       text=True, timeout=60)
    passwd = open(os.path.join(dest, "etc/passwd")).read() \
        if os.path.exists(os.path.join(dest, "etc/passwd")) else ""
    check("sysusers_makes_the_user", u.returncode == 0 and re.search(
        r"^toolgate:x:\d+:\d+:toolgate MCP gateway:/var/lib/toolgate:/usr/sbin/nologin$",
        passwd, re.M), "rc=%d %s %s" % (u.returncode, u.stderr[-300:], passwd[-300:]))
else:
    print("skip - integration/systemd_sysusers_makes_the_user: no systemd-sysusers")
r = subprocess.run(mk + ["uninstall-systemd"], capture_output=True, text=True, timeout=60)
check("uninstall", r.returncode == 0 and not os.path.exists(unit) and not os.path.exists(users),
      r.stderr[-300:])


# --- sd_notify ------------------------------------------------------------------
def serve(env, err):
    argv = [TG, "serve", "--http", "127.0.0.1:0", "--catalog", os.path.join(REPO, "examples/catalog"),
            "--workspace", os.path.join(REPO, "examples/workspace")]
    return subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=open(err, "w"))


def listener(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(path)
    s.settimeout(10)
    return s


def recv(s, timeout=10):
    """The next message as {key: value}, and when it came; None on timeout."""
    s.settimeout(timeout)
    try:
        data = s.recv(4096).decode()
    except socket.timeout:
        return None, time.monotonic()
    return dict(x.split("=", 1) for x in data.split("\n") if "=" in x), time.monotonic()


def until(s, key, limit=50):
    """Messages up to the first with key: (that one, those before it)."""
    seen = []
    for _ in range(limit):
        m, _t = recv(s)
        if m is None or key in m:
            return m, seen
        seen.append(m)
    return None, seen


def maps_has_libsystemd(pid):
    with open("/proc/%d/maps" % pid) as f:
        return "libsystemd" in f.read()


def finish(p, err):
    if p.poll() is None:
        p.kill()
    p.wait()
    text = open(err).read()
    if "Sanitizer" in text or "runtime error:" in text:
        sanitizer.append(text[-2000:])


sock = os.path.join(WORK, "notify.sock")
s = listener(sock)
env = dict(os.environ, NOTIFY_SOCKET=sock, WATCHDOG_USEC="500000")
env.pop("WATCHDOG_PID", None)
err = os.path.join(WORK, "serve.err")
p = serve(env, err)
ready, before = until(s, "READY")
check("ready", ready is not None and ready.get("READY") == "1" and not before,
      "ready=%r before=%r %s" % (ready, before, open(err).read()[-400:]))
url = re.search(r"on (http://[^ ]+)", (ready or {}).get("STATUS", ""))
answered = False
if url:
    # READY=1 says the listener answers: it must, now
    host, port = url.group(1).split("/")[2].split(":")
    c = http.client.HTTPConnection(host, int(port), timeout=5)
    try:
        c.request("GET", "/healthz")
        answered = c.getresponse().status > 0
    except OSError:
        pass
check("ready_after_listening", answered and "MCP on" in open(err).read(),
      "status=%r answered=%s" % ((ready or {}).get("STATUS"), answered))
check("libsystemd_loaded_with_socket", maps_has_libsystemd(p.pid), "no libsystemd in maps")

times = []
for _ in range(5):
    m, t = recv(s, 2)
    if m and m.get("WATCHDOG") == "1":
        times.append(t)
gaps = [b - a for a, b in zip(times, times[1:])]
check("watchdog_pings", len(times) == 5 and all(0.15 < g < 0.45 for g in gaps),
      "pings=%d gaps=%s" % (len(times), ["%.3f" % g for g in gaps]))

p.send_signal(signal.SIGHUP)
reloading, _ = until(s, "RELOADING")
again, _ = until(s, "READY")
check("reload", reloading is not None and reloading.get("RELOADING") == "1" and
      re.fullmatch(r"[0-9]+", reloading.get("MONOTONIC_USEC", "")) and again is not None and
      again.get("READY") == "1", "reloading=%r ready=%r" % (reloading, again))

p.send_signal(signal.SIGTERM)
stopping, _ = until(s, "STOPPING")
rc = p.wait(timeout=30)
check("stopping", stopping is not None and stopping.get("STOPPING") == "1" and rc == 0,
      "stopping=%r rc=%d" % (stopping, rc))
finish(p, err)

# another process's watchdog (WATCHDOG_PID): ready, but no pings
p = serve(dict(env, WATCHDOG_PID="1"), err)
ready, _ = until(s, "READY")
pings = []
end = time.monotonic() + 1.2
while time.monotonic() < end:
    m, _t = recv(s, 0.3)
    if m:
        pings.append(m)
check("watchdog_pid_not_ours", ready is not None and not any("WATCHDOG" in m for m in pings),
      "ready=%r then %r" % (ready, pings))
p.send_signal(signal.SIGTERM)
p.wait(timeout=30)
finish(p, err)
s.close()

# without NOTIFY_SOCKET: libsystemd is not even mapped
env = dict(os.environ)
for k in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
    env.pop(k, None)
p = serve(env, err)
for _ in range(200):
    if "MCP on" in open(err).read():
        break
    time.sleep(0.05)
check("no_libsystemd_without_socket", "MCP on" in open(err).read() and
      not maps_has_libsystemd(p.pid), open(err).read()[-300:])
p.send_signal(signal.SIGTERM)
p.wait(timeout=30)
finish(p, err)

check("no_sanitizer_reports", not sanitizer, "\n".join(sanitizer)[-2000:])
check.done()
