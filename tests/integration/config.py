#!/usr/bin/env python3
"""The configuration file (docs/CONFIG.md): one file names the catalogue,
the state directory, the policy, the workspace and serve's listener, and
every command reads it; the command line wins over it.

- serve with --config and nothing else serves the catalogue on the [serve]
  section's listener; a read call through it works; --http on the command
  line wins over the file's;
- token issue, approvals list and audit verify find the state directory
  and the policy in the same file; $TOOLGATE_CONFIG names it too, and an
  empty one means none;
- a relative path counts from the file's directory;
- config show prints each value with its line, and with a command what
  that command takes;
- each mistake is refused with exit 3, naming the file, the line and the
  key: a typo (with the key it means), a key the section's command does
  not take, a key given twice, a yes-or-no that is neither, a bad value
  (said by the command as its option, then the file's line), an unknown
  section, a line that is not KEY = VALUE, a NUL byte, a line too long, a
  file larger than 64 KiB, a file every user may change, a missing file,
  a directory; nothing starts and nothing is written;
- serve --stdio beside the file's HTTP gateway (same state directory)
  answers on stdio, not serving the file's listener too; config show
  refuses a broken file; a line of exactly 4,096 bytes is kept, an
  unknown section with no key refused.

    config.py TOOLGATE REPO TMPDIR
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, example_gateway, modern_post  # noqa

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
c = Checks("config")
CAT, WS = example_gateway(REPO, TMP)
ETC = os.path.join(TMP, "etc")
os.makedirs(ETC)
with open(os.path.join(ETC, "policy.json"), "w") as f:
    json.dump({"principals": {"agent": {"scopes": ["*:read"]},
                              "ops": {"scopes": ["fs.*:approve"]}}}, f)
CONF = os.path.join(ETC, "toolgate.conf")
ENV = dict(os.environ, TOOLGATE_CONFIG="")


def write(path, text, mode=0o644):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)
    return path


# relative paths: policy.json and ../state count from etc/
write(CONF, """# toolgate's configuration, as an operator writes it
catalog = %s
state = ../state
policy = policy.json
workspace = %s

[serve]
http = 127.0.0.1:0
""" % (CAT, WS))
STATE = os.path.join(TMP, "state")


def run(*argv, env=ENV, timeout=60):
    return subprocess.run([TG, *argv], capture_output=True, text=True, timeout=timeout,
                          env=env)


# ---- every command finds its values in the file -------------------------------------------
tok = run("token", "issue", "--config", CONF, "--principal", "agent", "--scope", "fs.read:read")
c("token_issue_from_the_file", tok.returncode == 0 and tok.stdout.count(".") == 2 and
  os.path.isfile(os.path.join(STATE, "signing.key")), tok.stderr)
TOKEN = tok.stdout.strip()


def serve(*extra, env=ENV):
    err = os.path.join(TMP, "serve.err")
    p = subprocess.Popen([TG, "serve", *extra], stderr=open(err, "w"), text=True, env=env)
    for _ in range(1200):
        text = open(err).read()
        if "MCP on" in text or p.poll() is not None:
            break
        subprocess.run(["sleep", "0.05"])
    port = int(text.split("MCP on ")[1].split()[0].split(":")[2].split("/")[0]) \
        if "MCP on" in text else 0
    return p, port, err


p, port, err = serve("--config", CONF)
try:
    r = modern_post(port, "tools/call", {
        "name": "fs.read", "arguments": {"path": "notes.txt"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}},
        {"Authorization": "Bearer " + TOKEN}) if port else {}
    text = json.dumps(r)
    c("serve_from_the_file", port and "Release checklist" in text and
      not r.get("result", {}).get("isError"), open(err).read() + text[:300])
finally:
    p.terminate()
    p.wait(timeout=60)

# the command line wins over the file
p, port, err = serve("--config", CONF, "--http", "127.0.0.1:0", "--no-console")
try:
    c("command_line_wins", port and "approval console" not in open(err).read(),
      open(err).read())
finally:
    p.terminate()
    p.wait(timeout=60)

# a host's stdio session beside the file's HTTP gateway, in the same state
# directory: the file's listener is that gateway's, not the session's
# (kept, the session would serve HTTP too and be refused the serve.lock)
p, port, err = serve("--config", CONF)
try:
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}) + "\n"
    st = subprocess.run([TG, "serve", "--config", CONF, "--stdio", "--principal", "agent"],
                        input=init, capture_output=True, text=True, timeout=60, env=ENV)
    c("stdio_beside_the_files_gateway", port and st.returncode == 0 and
      '"protocolVersion"' in st.stdout and "MCP on" not in st.stderr, st.stdout + st.stderr)
finally:
    p.terminate()
    p.wait(timeout=60)

ls = run("approvals", "list", "--config", CONF)
c("approvals_from_the_file", ls.returncode == 0, ls.stdout + ls.stderr)
av = run("audit", "verify", env=dict(os.environ, TOOLGATE_CONFIG=CONF))
c("toolgate_config_env", av.returncode == 0, av.stdout + av.stderr)
none = run("audit", "verify")
c("empty_env_is_no_file", none.returncode == 2 and "--state" in none.stderr,
  none.stdout + none.stderr)

# ---- config show ----------------------------------------------------------------------------
sh = run("config", "show", "--config", CONF)
c("show_lines", "state = %s\t# line 3" % os.path.join(ETC, "../state") in sh.stdout and
  "[serve] http = 127.0.0.1:0\t# line 8" in sh.stdout, sh.stdout + sh.stderr)
sh = run("config", "show", "--config", CONF, "token")
c("show_for_a_command", "policy = %s\t# line 4" % os.path.join(ETC, "policy.json") in sh.stdout
  and "http" not in sh.stdout and "# workspace" not in sh.stdout, sh.stdout + sh.stderr)
bad = write(os.path.join(TMP, "show-bad.conf"), "state = /a\nstaet = /b\n")
sh = run("config", "show", env=dict(os.environ, TOOLGATE_CONFIG=bad))
c("show_refuses_a_broken_file", sh.returncode == 3 and "show-bad.conf:2: staet" in sh.stderr
  and "/a" not in sh.stdout, sh.stdout + sh.stderr)
# a line of exactly 4,096 bytes is kept, ended by \n or \r\n; one more is not
for end in ("\n", "\r\n"):
    edge = write(os.path.join(TMP, "edge.conf"), "state = /%s%s" % ("x" * 4087, end))
    sh = run("config", "show", "--config", edge)
    c("line_of_4096_kept_%d" % len(end), sh.returncode == 0 and "x" * 4087 in sh.stdout,
      sh.stderr)
edge = write(os.path.join(TMP, "edge.conf"), "state = /%s\n" % ("x" * 4088))
sh = run("config", "show", "--config", edge)
c("line_of_4097_refused", sh.returncode == 3 and "edge.conf:1: a line longer than 4096"
  in sh.stderr, sh.stderr)
keys = run("config", "keys")
c("keys_listed", keys.returncode == 0 and "trust-proxy" in keys.stdout and
  "console" in keys.stdout, keys.stdout)

# ---- mistakes, each with the file, the line and the key -------------------------------------
BAD = [
    ("typo", "catalgo = /x\n", "bad.conf:1: catalgo: no such key; did you mean catalog?"),
    ("wrong_section", "[token]\nhttp = 127.0.0.1:1\n",
     "bad.conf:2: http: toolgate token takes no --http"),
    ("twice", "state = /a\n\n[serve]\nstate = /b\nstate = /c\n",
     "bad.conf:5: state: given twice in [serve] (first on line 4)"),
    ("not_yes_or_no", "[serve]\nstdio = maybe\n", "bad.conf:2: stdio: 'maybe': want yes or no"),
    ("dash_not_a_state", "[serve]\nstate = -\n",
     "bad.conf:2: state: '-' names no file (only audit takes it, for stderr)"),
    ("bad_value", "[serve]\nwarm = lots\n", "(that is %s:2's warm)"),
    ("unknown_section", "# x\n[sevre]\nhttp = 1\n", "bad.conf:2: [sevre]: no such command"),
    ("unknown_empty_section", "state = /a\n[sevre]\n", "bad.conf:2: [sevre]: no such command"),
    ("not_key_value", "catalog\n", "bad.conf:1: want KEY = VALUE"),
    ("empty_value", "state =\n", "bad.conf:1: state: no value"),
    ("nul_byte", "catalog = /x\nstate = /a\0b\n", "bad.conf:2: a NUL byte"),
    ("line_too_long", "catalog = /%s\n" % ("x" * 5000), "bad.conf:1: a line longer than 4096"),
    ("too_big", "# %s\n" % ("x" * 70000), "bad.conf: larger than 64 KiB"),
]
for name, text, want in BAD:
    path = write(os.path.join(TMP, "bad.conf"), text)
    want = want % path if "%s" in want else want
    before = os.listdir(STATE)
    r = run("serve", "--config", path, "--stdio", timeout=20)
    c("refused_" + name, r.returncode == 3 and want in r.stderr and
      "MCP on" not in r.stderr and os.listdir(STATE) == before, r.stderr)

path = write(os.path.join(TMP, "open.conf"), "catalog = /x\n", 0o666)
r = run("serve", "--config", path)
c("refused_everyone_may_change", r.returncode == 3 and "every user may change it (mode 0666)"
  in r.stderr, r.stderr)
path = write(os.path.join(TMP, "group.conf"), "catalog = /x\n", 0o664)
r = run("serve", "--config", path)
c("refused_group_may_change", r.returncode == 3 and "its group may change it (mode 0664)"
  in r.stderr, r.stderr)
path = write(os.path.join(TMP, "theirs.conf"), "catalog = /x\n")
os.chown(path, 65534, 65534)
r = run("serve", "--config", path)
c("refused_another_users", r.returncode == 3 and "owned by uid 65534, neither root" in r.stderr,
  r.stderr)
r = run("serve", "--config", os.path.join(TMP, "missing.conf"))
c("refused_missing", r.returncode == 3 and "missing.conf: No such file" in r.stderr, r.stderr)
r = run("approvals", "list", "--config", TMP)
c("refused_directory", r.returncode == 3 and "not a regular file" in r.stderr, r.stderr)
# a command that takes no key reads no file it was not given, so a broken
# system file cannot stop `toolgate redact`
r = subprocess.run([TG, "redact"], input="hello\n", capture_output=True, text=True,
                   env=dict(os.environ, TOOLGATE_CONFIG=os.path.join(TMP, "bad.conf")))
c("keyless_command_unaffected", r.returncode == 0 and r.stdout == "hello\n", r.stderr)
c.done()
