#!/usr/bin/env python3
"""The operator's upstream commands (docs/UPSTREAMS.md, "Commands"), against
tests/upstream/fake_server.py in its sandbox, in mode "tools FILE" so that
the test changes what it lists between runs:

- list: one line an upstream, with --state its pins' count;
- show: the declaration, a credential by name and file, never its value
  (nor does any other command print it);
- test: served, hidden and refused lines, a refused tool's reason with a
  bidi override shown as '?', exit 1 with a refusal and 0 without;
- pin, then diff: nothing changed, exit 0; the server then lists a tool
  changed (its description, with a bidi override, and a required
  argument), one added and one gone: diff names each, what changed as an
  approval ticket's preview says it (the breaking finding, the old and
  new description as ASCII JSON), why it would not be served now, exit 1; pin pins what would be served (not the
  changed tool while its description is refused, then its next change),
  keeps the gone one's pin, and diff finds nothing changed once that tool
  comes back unchanged;
- declared, but would not work: a misspelt key of tools (test names it,
  with the nearest listed name, exit 1), a writable mount the sandbox's
  user cannot write (show and test say it with the chown that fixes it;
  test exits 1, and 0 once fixed), a server that never answers (the
  timeout says when it wrote nothing on stderr, and not when it did);
- mistakes: a misspelt NAME (exit 1, the declared names listed), a
  catalogue that is not there, a missing --state, a state directory
  without a store, a server whose binary does not exist (exit 3, naming
  it), usage errors (exit 2).

    upstream_cli.py TOOLGATE REPO TMPDIR
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
c = Checks("upstream_cli")
SECRET = "s3cr3t-VALUE-never-shown-4711"

shutil.rmtree(TMP, ignore_errors=True)
CAT, SRV, STATE = (os.path.join(TMP, d) for d in ("cat", "srv", "state"))
for d in (os.path.join(CAT, "upstreams"), SRV, STATE):
    os.makedirs(d)
for d in (TMP, SRV):
    os.chmod(d, 0o755)  # the sandbox's user reads the server's files
shutil.copy(os.path.join(REPO, "tests/upstream/fake_server.py"), SRV)
CRED = os.path.join(TMP, "token")
with open(CRED, "w") as f:
    f.write(SECRET + "\n")
os.chmod(CRED, 0o600)

ECHO = {"name": "echo", "description": "Echoes its arguments.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}}
ADD = {"name": "add", "title": "Add", "description": "Adds a and b.",
       "inputSchema": {"type": "object"}}
HIDDEN = {"name": "secret", "description": "Not for agents.", "inputSchema": {"type": "object"}}
BROKEN = {"name": "broken", "inputSchema": {"type": "object",
                                            "properties": {"x": {"$ref": "#/nope"}}}}
EVIL = {"name": "ev\u202eil", "inputSchema": {"type": "object"}}


def listing(name, tools):
    with open(os.path.join(SRV, name), "w") as f:
        json.dump(tools, f)
    os.chmod(os.path.join(SRV, name), 0o644)


def declare(name, tools_file, argv0="/usr/bin/python3", extra=None):
    d = {"transport": "stdio",
         "argv": [argv0, "/srv/fake/fake_server.py", "tools", "/srv/fake/" + tools_file],
         "sandbox": {"mounts": [{"host": SRV, "inside": "/srv/fake"}]},
         "credentials": {"env": {"API_TOKEN": CRED}},
         "tools": {"echo": {"authority": "read"}, "add": {"rename": "sum"},
                   "secret": {"hide": True}}}
    d.update(extra or {})
    with open(os.path.join(CAT, "upstreams", name + ".json"), "w") as f:
        json.dump(d, f)


outputs = []


def tg(*args):
    r = subprocess.run([TG, "upstream"] + list(args), capture_output=True, text=True,
                       timeout=60)
    outputs.append(r.stdout + r.stderr)
    return r.returncode, r.stdout, r.stderr


def lines_of(out):
    return [" ".join(x.split()) for x in out.splitlines()]


listing("fake.json", [ECHO, ADD, HIDDEN, BROKEN, EVIL])
listing("clean.json", [ECHO, ADD, HIDDEN])
declare("fake", "fake.json")
declare("clean", "clean.json")

# --- list, show ---------------------------------------------------------------
rc, out, err = tg("list", "--catalog", CAT)
c("list", rc == 0 and "clean stdio strict 3" in lines_of(out) and
  "fake stdio strict 3" in lines_of(out), "rc=%d %s %s" % (rc, out, err))

rc, out, err = tg("show", "fake", "--catalog", CAT)
c("show", rc == 0 and "credential: env API_TOKEN from %s" % CRED in out and
  "tool: add as fake.sum: write, no dry_run" in lines_of(out) and
  "tool: secret as fake.secret: write, no dry_run, hidden" in lines_of(out) and
  "mount: %s -> /srv/fake (read-only)" % SRV in lines_of(out),
  "rc=%d %s %s" % (rc, out, err))

# --- test ---------------------------------------------------------------------
rc, out, err = tg("test", "fake", "--catalog", CAT)
ls = lines_of(out)
c("test_lines", rc == 1 and "fake.echo read served" in ls and "fake.sum write served" in ls and
  "fake.secret write hidden" in ls and
  any(x.startswith("fake.broken write refused: ") and "$ref" in x for x in ls) and
  "5 tools listed, 2 served, 1 hidden, 2 refused (protocol 2025-11-25)" in ls,
  "rc=%d %s %s" % (rc, out, err))
c("test_server_text_shown_safe", "\u202e" not in out and
  any(x.startswith("fake.ev?il write refused: ") for x in ls), out)
rc, out, err = tg("test", "clean", "--catalog", CAT)
c("test_clean_exit_0", rc == 0 and "clean.echo read served" in lines_of(out),
  "rc=%d %s %s" % (rc, out, err))
c("test_writes_nothing", os.listdir(STATE) == [], str(os.listdir(STATE)))

# --- pin, diff ----------------------------------------------------------------
rc, out, err = tg("pin", "fake", "--catalog", CAT, "--state", STATE, "--as", "alice")
ls = lines_of(out)
c("pin", rc == 0 and any(x.startswith("pinned fake.echo ") for x in ls) and
  any(x.startswith("pinned fake.sum ") for x in ls) and
  "not pinned fake.secret: hidden" in ls and "2 pinned by alice" in ls,
  "rc=%d %s %s" % (rc, out, err))
rc, out, err = tg("show", "fake", "--catalog", CAT, "--state", STATE)
c("show_pins", rc == 0 and "2 pins" in out and
  any(x.startswith("pinned: echo sha256 ") and x.endswith(" by alice") for x in lines_of(out)),
  "rc=%d %s %s" % (rc, out, err))
rc, out, err = tg("list", "--catalog", CAT, "--state", STATE)
c("list_pins", rc == 0 and "fake stdio strict 3 2" in lines_of(out) and
  "clean stdio strict 3 0" in lines_of(out), "rc=%d %s %s" % (rc, out, err))
rc, out, err = tg("diff", "fake", "--catalog", CAT, "--state", STATE)
c("diff_unchanged", rc == 0 and "nothing changed since the 2 pins of fake" in out,
  "rc=%d %s %s" % (rc, out, err))

changed = dict(ECHO, description="Echoes its arguments, \u202ebackwards\u202c.",
               inputSchema={"type": "object", "properties": {"text": {"type": "string"}},
                            "required": ["text"]})
FRESH = {"name": "fresh", "inputSchema": {"type": "object"}}
listing("fake.json", [changed, HIDDEN, FRESH])
rc, out, err = tg("diff", "fake", "--catalog", CAT, "--state", STATE)
ls = lines_of(out)
c("diff_changes", rc == 1 and "changed fake.echo" in ls and "added fake.fresh" in ls and
  "removed fake.sum" in ls and "3 changes since the pins of fake" in ls,
  "rc=%d %s %s" % (rc, out, err))
c("diff_what_changed", any(x.startswith("breaking: ") and "required" in x for x in ls) and
  'description was: "Echoes its arguments."' in ls and
  'description now: "Echoes its arguments, \\u202Ebackwards\\u202C."' in ls and
  "judged breaking for its callers" in ls and "\u202e" not in out, out)

c("diff_now_refused", any(x.startswith("refused now: fake.echo: bidi_control") for x in ls), out)

# a changed tool that would not be served is not pinned; one that would is
rc, out, err = tg("pin", "fake", "--catalog", CAT, "--state", STATE)
c("pin_not_refused", rc == 0 and any(x.startswith("not pinned fake.echo: ") for x in lines_of(out)),
  "rc=%d %s %s" % (rc, out, err))
louder = dict(changed, description="Echoes its arguments, louder.")
listing("fake.json", [louder, HIDDEN, FRESH])
rc, out, err = tg("pin", "fake", "--catalog", CAT, "--state", STATE)
ls = lines_of(out)
c("pin_again", rc == 0 and any(x.startswith("changed (re-pinned) fake.echo ") for x in ls) and
  any(x.startswith("unchanged fake.fresh ") for x in ls) and
  "kept fake.sum (not listed now)" in ls and "1 pinned by operator " in out,
  "rc=%d %s %s" % (rc, out, err))
listing("fake.json", [louder, ADD, HIDDEN, FRESH])
rc, out, err = tg("diff", "fake", "--catalog", CAT, "--state", STATE)
c("diff_back_unchanged", rc == 0 and "nothing changed since the 3 pins of fake" in out,
  "rc=%d %s %s" % (rc, out, err))

# --- declared, but would not work ------------------------------------------------
# a misspelt key of tools would defeat its hide or authority silently: test
# names it, with the nearest listed name when it is close, and exits 1
GETENV = {"name": "get-env", "description": "Its environment.", "inputSchema": {"type": "object"}}
listing("typo.json", [ECHO, GETENV])
declare("typo", "typo.json", extra={"tools": {"get_env": {"hide": True},
                                              "ech0": {"authority": "read"},
                                              "zzzq": {"authority": "read"}}})
rc, out, err = tg("test", "typo", "--catalog", CAT)
ls = lines_of(out)
c("test_declared_not_listed", rc == 1 and "typo.get-env write served" in ls and
  "tools.get_env: declared, but the server lists no such tool (did you mean get-env?)" in ls and
  "tools.ech0: declared, but the server lists no such tool (did you mean echo?)" in ls and
  "tools.zzzq: declared, but the server lists no such tool" in ls and
  "2 tools listed, 2 served, 0 hidden, 0 refused (protocol 2025-11-25)" in ls,
  "rc=%d %s %s" % (rc, out, err))
os.unlink(os.path.join(CAT, "upstreams", "typo.json"))

# a writable mount the sandbox's user cannot write: every approved write
# would fail with EACCES in the server; show and test say it (test exits 1)
ROOTS = os.path.join(TMP, "rootowned")
os.makedirs(ROOTS)
os.chmod(ROOTS, 0o755 if os.geteuid() == 0 else 0o555)
uid, gid = (65534, 65534) if os.geteuid() == 0 else (os.geteuid(), os.getegid())
declare("wmount", "clean.json", extra={"sandbox": {"mounts": [
    {"host": SRV, "inside": "/srv/fake"}, {"host": ROOTS, "inside": "/data", "writable": True}]}})
said = ("sandbox.mounts[1]: writable, but %s is not writable by the sandbox's user "
        "(uid %d: chown %d:%d %s)" % (ROOTS, uid, uid, gid, ROOTS))
rc, out, err = tg("show", "wmount", "--catalog", CAT)
c("show_mount_not_writable", rc == 0 and "warning: " + said in lines_of(out),
  "rc=%d %s %s" % (rc, out, err))
rc, out, err = tg("test", "wmount", "--catalog", CAT)
c("test_mount_not_writable", rc == 1 and said in lines_of(out) and
  "clean.echo" not in out and "wmount.echo read served" in lines_of(out) and
  said not in err, "rc=%d %s %s" % (rc, out, err))
if os.geteuid() == 0:
    os.chown(ROOTS, uid, gid)
else:
    os.chmod(ROOTS, 0o755)
rc, out, err = tg("test", "wmount", "--catalog", CAT)
c("test_mount_writable_now", rc == 0 and "writable, but" not in out + err,
  "rc=%d %s %s" % (rc, out, err))
os.unlink(os.path.join(CAT, "upstreams", "wmount.json"))

# a server that never answers: the timeout says whether it wrote anything
# on stderr (nothing: most often npx fetching its package without a
# network); both at once, each takes the handshake's 10 s
for name, mode in (("silent", ["noinit"]), ("chatty", ["noinit", "npm: fetching..."])):
    d = {"transport": "stdio", "protocol": "2025-11-25",
         "argv": ["/usr/bin/python3", "/srv/fake/fake_server.py"] + mode,
         "sandbox": {"mounts": [{"host": SRV, "inside": "/srv/fake"}]}}
    with open(os.path.join(CAT, "upstreams", name + ".json"), "w") as f:
        json.dump(d, f)
procs = {n: subprocess.Popen([TG, "upstream", "test", n, "--catalog", CAT],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
         for n in ("silent", "chatty")}
got = {n: (p.wait(timeout=60),) + p.communicate() for n, p in procs.items()}
rc, out, err = got["silent"]
c("timeout_silent_said", rc == 3 and "initialize: no answer within 10000 ms; the server wrote "
  "nothing on stderr" in err, "rc=%d %s %s" % (rc, out, err))
rc, out, err = got["chatty"]
c("timeout_chatty_not_said", rc == 3 and "initialize: no answer within 10000 ms" in err and
  "wrote nothing" not in err and "npm: fetching..." in err, "rc=%d %s %s" % (rc, out, err))
for name in ("silent", "chatty"):
    os.unlink(os.path.join(CAT, "upstreams", name + ".json"))

# --- mistakes -----------------------------------------------------------------
rc, out, err = tg("show", "fkae", "--catalog", CAT)
c("typo_name", rc == 1 and "no upstream 'fkae'" in err and "(declared: clean, fake)" in err,
  "rc=%d %s" % (rc, err))
rc, out, err = tg("test", "fake", "--catalog", CAT + "x")
c("no_catalog", rc == 3 and "--catalog %sx: no such catalogue directory" % CAT in err,
  "rc=%d %s" % (rc, err))
rc, out, err = tg("diff", "fake", "--catalog", CAT)
c("no_state", rc == 2 and "--state DIR is needed" in err, "rc=%d %s" % (rc, err))
empty = os.path.join(TMP, "empty")
os.makedirs(empty)
rc, out, err = tg("diff", "fake", "--catalog", CAT, "--state", empty)
c("state_without_store", rc == 3 and "holds no store yet" in err and
  os.listdir(empty) == [], "rc=%d %s" % (rc, err))
rc, out, err = tg("pin", "fake", "--catalog", CAT, "--state", empty + "x")
c("pin_no_state_dir", rc == 3 and "no such state directory" in err and
  not os.path.exists(empty + "x"), "rc=%d %s" % (rc, err))
declare("gone", "clean.json", argv0="/usr/bin/pyhton3")
rc, out, err = tg("test", "gone", "--catalog", CAT)
c("no_binary", rc == 3 and "upstream gone" in err and "/usr/bin/pyhton3" in err and
  "No such file" in err and "restarting" not in err, "rc=%d %s" % (rc, err))
os.unlink(os.path.join(CAT, "upstreams", "gone.json"))
rc, out, err = tg("test", "fake", "--catalog", CAT, "--timeout", "0")
c("bad_timeout", rc == 2 and "--timeout '0'" in err, "rc=%d %s" % (rc, err))
rc, out, err = tg()
c("no_verb", rc == 2 and "usage: toolgate upstream list" in err, "rc=%d %s" % (rc, err))
rc, out, err = tg("--help")
c("help", rc == 0 and "toolgate upstream diff NAME" in out, "rc=%d %s" % (rc, out))

c("secret_never_printed", not any(SECRET in o for o in outputs), "a credential's value was printed")
c.done()
