#!/usr/bin/env python3
"""serve's own lines on stderr (docs/CLI.md, "Logs"):

- --log-format json: every line a JSON object with time, level, who and
  msg; an HTTP gateway says what runs (the version, the catalogue's tools
  by authority, who may call, the audit log, the state) and that it
  stops;
- --log-level error leaves the info lines out; the configuration file's
  log-format and log-level count as the options;
- a format or level that is none is refused, exit 2, naming the option.

    logs.py TOOLGATE REPO TMPDIR
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, example_gateway  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
c = Checks("logs")
CAT, WS = example_gateway(REPO, TMP)
ENV = dict(os.environ, TOOLGATE_CONFIG="")


def serve(*extra, env=ENV):
    """A gateway on HTTP until it said it listens (or a second passed),
    then stopped with SIGTERM: its stderr's lines."""
    err = os.path.join(TMP, "serve.err")
    p = subprocess.Popen([TG, "serve", "--catalog", CAT, "--workspace", WS, "--record",
                          "/dev/null", "--http", "127.0.0.1:0", *extra],
                         stderr=open(err, "w"), env=env)
    for _ in range(100):
        if "MCP on" in open(err).read() or p.poll() is not None:
            break
        time.sleep(0.05)
    time.sleep(0.2)
    p.send_signal(signal.SIGTERM)
    rc = p.wait(timeout=60)
    return rc, open(err).read().splitlines()


rc, lines = serve("--log-format", "json")
objs = []
for line in lines:
    try:
        objs.append(json.loads(line))
    except ValueError:
        objs.append(None)
c("every_line_json", rc == 0 and lines and all(o and set(o) == {"time", "level", "who", "msg"}
                                               for o in objs), "\n".join(lines))
msgs = [o["msg"] for o in objs if o]
c("time_utc_ms", all(o and re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["time"])
                     for o in objs), str(objs[:1]))
c("says_what_runs", any(re.search(r"toolgate \d+\.\d+\.\d+: .*catalog: 11 tools \(4 read, 7 "
                                  r"write; 0 of upstream servers\); callers: anyone on loopback",
                                  m) for m in msgs), "\n".join(msgs))
c("says_it_stops", "stopping (SIGTERM)" in msgs, "\n".join(msgs))
rc, lines = serve("--log-format", "json", "--log-level", "error")
c("level_error_leaves_info_out", rc == 0 and not any('"info"' in x for x in lines) and
  not any("MCP on" in x for x in lines), "\n".join(lines))

conf = os.path.join(TMP, "t.conf")
with open(conf, "w") as f:
    f.write("[serve]\nlog-format = json\nlog-level = info\n")
rc, lines = serve("--config", conf)
c("configuration_file", rc == 0 and lines and all(x.startswith("{") for x in lines),
  "\n".join(lines))
rc, lines = serve()
c("text_by_default", rc == 0 and any(x.startswith("toolgate serve: MCP on http://") for x in lines),
  "\n".join(lines))

for opt, val, want in (("--log-format", "xml", "takes text or json"),
                       ("--log-level", "loud", "takes error, warning, info or debug")):
    p = subprocess.run([TG, "serve", "--catalog", CAT, opt, val], capture_output=True,
                       text=True, env=ENV, timeout=60)
    c("refused_%s" % opt[2:].replace("-", "_"), p.returncode == 2 and "%s '%s': %s"
      % (opt, val, want) in p.stderr, p.stderr)
c.done()
