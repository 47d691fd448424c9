#!/usr/bin/env python3
"""A skill's scripts as sandboxed tools (docs/SKILLS.md, "Scripts as
tools"), through the real gateway, each check a real attempt judged by its
outcome:

- a signed skill's toolgate.json makes its scripts tools: listed with
  their contracts, run in the sandbox with the skill's files at /skill;
- what runs is the bytes verified at start: the script changed on disk
  afterwards changes nothing, and the script cannot change its own files
  (read-only) nor read the host's;
- a write tool is held for approval like any other, runs once approved,
  and its dry run writes nothing;
- refused, naming the file, the tool and the field: a mount, the state, a
  builtin, a name outside the skill's namespace, an argv that runs no
  script of the skill or a script that is not executable, a compensation
  outside the skill, a namespace the catalogue's tools use; by `skill
  check` before signing and by `serve`, which counts the refusal;
- in warn mode an unsigned skill's text is served, its tools are not;
  without --skills-trust no skill is trusted, and none runs as tools;
- an egress rule that names an address (which opens even the host's
  loopback and the cloud's metadata service) is refused;
- SIGHUP reads the skills again: a skill added is served with its tools
  and clients are told; one changed under its version is refused; one
  whose namespace the reloaded catalogue takes is refused; a call in
  flight when its skill goes keeps the files it started with; a
  catalogue's own skills/ removed and added again is followed, the
  catalogue still reloaded;
- a check of the deployment (doctor) pins no skill: only one served is;
- each tool loaded is on the record; a gateway with umask 077 runs them;
- `skill show` says what each tool may do.

    skill_tools.py TOOLGATE REPO TMPDIR
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, example_gateway, stdio_session  # noqa: E402

TG, REPO, TMP = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3]
c = Checks("skill_tools")
CAT, WS = example_gateway(REPO, TMP)
os.chmod(TMP, 0o755)
STATE, POLICY = os.path.join(TMP, "state"), os.path.join(TMP, "policy.json")
SKILLS = os.path.join(TMP, "skills")
REPORTS = []
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}}

with open(POLICY, "w") as f:
    json.dump({"writes": {"wait": "0"},
               "principals": {"local": {"scopes": ["notes.*:write", "*:read"]},
                              "alice": {"scopes": ["notes.*:approve"]}}}, f)


def sanitizer(stderr):
    if "Sanitizer" in stderr or "runtime error:" in stderr:
        REPORTS.append(stderr[-2000:])


def tg(*argv):
    p = subprocess.run([TG, *argv], capture_output=True, text=True, timeout=60, cwd=TMP)
    sanitizer(p.stderr)
    return p


def write(path, text, mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def tool(name, authority="read", argv=None, **more):
    t = {"name": name, "version": "1.0.0", "description": "A tool of a skill.",
         "owner": {"team": "docs", "contact": "docs@example.com"}, "authority": authority,
         "input_schema": {"type": "object"},
         "executor": {"kind": "command", "argv": argv or ["python3", "/skill/scripts/run.py"]}}
    if authority == "write":
        t.update({"dry_run": "overlay", "compensation": {"irreversible": "a test's note"}})
    for k, v in more.items():
        if k == "executor":
            t["executor"].update(v)
        else:
            t[k] = v
    return t


def skill(name, tools, scripts=None, top=SKILLS, sign=True, version="1.0"):
    d = os.path.join(top, name)
    shutil.rmtree(d, ignore_errors=True)
    write(os.path.join(d, "SKILL.md"), "---\nname: %s\ndescription: A skill with tools.\n"
          "metadata:\n  version: \"%s\"\n---\n# %s\n\nUse its tools.\n" % (name, version, name))
    for path, (text, mode) in (scripts or {"run.py": (RUN, 0o644)}).items():
        write(os.path.join(d, "scripts", path), text, mode)
    if tools is not None:
        write(os.path.join(d, "toolgate.json"), json.dumps({"tools": tools}, indent=1))
    if sign:
        tg("skill", "sign", d, "--secret-key", "k.sec")
    return d


def serve(argv, calls=(), methods=None):
    """toolgate serve on stdio: (process, {id: result})."""
    msgs = [INIT] + [{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": x}
                     for i, x in enumerate(calls)]
    for i, m in enumerate(methods or []):
        msgs.append({"jsonrpc": "2.0", "id": 100 + i, "method": m, "params": {}})
    p, out = stdio_session(TG, argv, msgs)
    sanitizer(p.stderr)
    return p, out


RUN = "import json, sys\nargs = json.loads(sys.stdin.readline())\n" \
      "print(json.dumps({'words': len(args['text'].split())}))\n"
PROBE = r"""import json, os, sys
json.loads(sys.stdin.readline())
def attempt(f):
    try:
        f()
        return "done"
    except OSError as e:
        return e.strerror
def rewrite():
    with open("/skill/scripts/run.py", "a") as f:
        f.write("# changed\n")
def host():
    open(%r).read()
def swap():
    os.rename("/skill/scripts/run.py", "/skill/x")
files = sorted(os.path.join(d, n)[len("/skill/"):] for d, _, ns in os.walk("/skill") for n in ns)
print(json.dumps({"rewrite": attempt(rewrite), "host": attempt(host),
                  "swap": attempt(swap), "files": files, "uid": os.getuid()}))
""" % os.path.join(TMP, "k.sec")
NOTE = "#!/usr/bin/env python3\nimport json, os, sys\nargs = json.loads(sys.stdin.readline())\n" \
       "dry = os.environ.get('TOOLGATE_DRY_RUN') == '1'\n" \
       "with open('/workspace/skill-notes.txt', 'a') as f:\n    f.write(args['text'] + '\\n')\n" \
       "print(json.dumps({'appended': args['text']}))\n"

tg("skill", "keygen", "--secret-key", "k.sec", "--public-key", "k.pub", "--no-password")
tg("skill", "trust", "add", "acme", "k.pub", "--trust", "trust.json")
TEXT_SCHEMA = {"type": "object", "properties": {"text": {"type": "string"}},
               "required": ["text"], "additionalProperties": False}
skill("word-count", [tool("word-count.count", input_schema=TEXT_SCHEMA,
                          output_schema={"type": "object", "required": ["words"]}),
                     tool("word-count.probe", argv=["python3", "/skill/scripts/probe.py"])],
      {"run.py": (RUN, 0o644), "probe.py": (PROBE, 0o644)})
skill("notes", [tool("notes.append", "write", ["/skill/scripts/note.py"],
                     input_schema=TEXT_SCHEMA, executor={"workspace": "write"})],
      {"note.py": (NOTE, 0o755)})
GATEWAY = ["--catalog", CAT, "--workspace", WS, "--state", STATE, "--policy", POLICY,
           "--record", os.path.join(TMP, "record"), "--skills", SKILLS,
           "--skills-trust", os.path.join(TMP, "trust.json")]



def copies():
    top = os.environ.get("TMPDIR") or "/tmp"
    return sorted(x for x in os.listdir(top) if x.startswith("toolgate-skills-"))


# listed and run; the on-disk script changed after start changes nothing
BEFORE = copies()
p, out = serve(GATEWAY, [{"name": "word-count.count", "arguments": {"text": "one two three"}},
                         {"name": "word-count.probe", "arguments": {}}], ["tools/list"])
names = {t["name"]: t for t in (out.get(100) or {}).get("tools", [])}
c("tools_listed", "word-count.count" in names and "notes.append" in names and
  names["word-count.count"]["annotations"]["readOnlyHint"] is True and
  names["notes.append"]["annotations"]["readOnlyHint"] is False and
  names["word-count.count"]["inputSchema"] == TEXT_SCHEMA, json.dumps(out.get(100))[:800])
r = out.get(1) or {}
c("read_tool_runs", r.get("structuredContent") == {"words": 3} and not r.get("isError"),
  json.dumps(r)[:600] + p.stderr[-800:])
probe = json.loads(((out.get(2) or {}).get("structuredContent") and
                    json.dumps(out[2]["structuredContent"])) or "{}")
c("script_cannot_change_its_skill_nor_read_the_hosts_files",
  probe.get("rewrite") in ("Read-only file system", "Permission denied") and probe.get("swap") in
  ("Read-only file system", "Device or resource busy") and probe.get("host") in
  ("Permission denied", "No such file or directory") and probe.get("uid") != 0 and
  probe.get("files") == ["SKILL.md", "scripts/probe.py", "scripts/run.py", "toolgate.json"],
  json.dumps(out.get(2))[:800])
on_disk = os.path.join(SKILLS, "word-count", "scripts", "run.py")
c("copy_removed_at_exit", p.returncode == 0 and copies() == BEFORE, str(copies()))
LOADED = [json.loads(x) for x in open(os.path.join(TMP, "record")) if '"loaded"' in x]
c("each_tool_loaded_on_the_record",
  {"word-count.count@1.0.0", "word-count.probe@1.0.0", "notes.append@1.0.0"} <=
  {x.get("subject") for x in LOADED if x.get("outcome") == "loaded"},
  json.dumps(LOADED)[-600:])
# a umask that leaves folders to the gateway alone: the sandbox's user
# still reaches /skill/scripts (a root gateway's sandbox runs as nobody)
old_umask = os.umask(0o077)
p, out = serve(GATEWAY, [{"name": "word-count.count", "arguments": {"text": "one two"}}])
os.umask(old_umask)
c("runs_under_umask_077", (out.get(1) or {}).get("structuredContent") == {"words": 2},
  json.dumps(out.get(1))[:600])
# a gateway that runs while the script is changed runs the signed one
proc = subprocess.Popen([TG, "serve"] + GATEWAY, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True)
proc.stdin.write(json.dumps(INIT) + "\n")
proc.stdin.flush()
proc.stdout.readline()
with open(on_disk, "w") as f:
    f.write("import json\nprint(json.dumps({'words': -1}))\n")
proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                             "params": {"name": "word-count.count",
                                        "arguments": {"text": "a b"}}}) + "\n")
proc.stdin.flush()
line = proc.stdout.readline()
proc.stdin.close()
sanitizer(proc.stderr.read())
proc.wait(timeout=60)
got = json.loads(line or "{}").get("result", {})
c("runs_what_was_verified_not_what_is_on_disk_now", got.get("structuredContent") == {"words": 2},
  line[:400])
p, out = serve(GATEWAY, [{"name": "word-count.count", "arguments": {"text": "a b"}}],
               ["tools/list"])
c("changed_on_disk_refused_at_the_next_start",
  "word-count.count" not in json.dumps(out.get(100)) and "tampered" in p.stderr,
  p.stderr[-600:])
# pinned: the change signed again under the same version is refused at
# the next start (--state keeps the pin); a new version is served
tg("skill", "sign", os.path.join(SKILLS, "word-count"), "--secret-key", "k.sec")
p, out = serve(GATEWAY, [], ["tools/list"])
c("same_version_other_files_refused_by_the_pin",
  "word-count.count" not in json.dumps(out.get(100)) and
  "skill word-count refused (tampered): version 1.0 was served with other files" in p.stderr,
  p.stderr[-600:])
skill("word-count", [tool("word-count.count", input_schema=TEXT_SCHEMA)], version="1.1")
p, out = serve(GATEWAY, [], ["tools/list"])
c("a_new_version_is_served_and_pinned",
  "word-count.count" in json.dumps(out.get(100)) and
  "skill word-count: version 1.1 is served in place of 1.0" in p.stderr, p.stderr[-600:])

# a write: held, approved, run once; its dry run writes nothing
ALICE = tg("token", "issue", "--state", STATE, "--policy", POLICY, "--principal", "alice",
           "--scope", "notes.*:approve").stdout.strip()
NOTES = os.path.join(WS, "skill-notes.txt")
args = {"name": "notes.append", "arguments": {"text": "approved line"},
        "_meta": {"dev.toolgate/idempotencyKey": "note-1"}}
_, out = serve(GATEWAY, [{"name": "notes.append", "arguments": {"text": "dry line"},
                          "_meta": {"dev.toolgate/dryRun": True}}, args])
dry, held = out.get(1) or {}, out.get(2) or {}
ticket = ((held.get("_meta") or {}).get("dev.toolgate/error") or {}).get("ticket", "")
c("write_dry_run_writes_nothing", not dry.get("isError") and not os.path.exists(NOTES) and
  "skill-notes.txt" in json.dumps(dry), json.dumps(dry)[:600])
c("write_held_for_approval", held.get("isError") and ticket and not os.path.exists(NOTES),
  json.dumps(held)[:600])
ok = tg("approvals", "approve", ticket, "--state", STATE, "--policy", POLICY, "--token", ALICE)
_, out = serve(GATEWAY, [args])
_, again = serve(GATEWAY, [args])
c("write_runs_once_approved", ok.returncode == 0 and not (out.get(1) or {}).get("isError") and
  os.path.exists(NOTES) and open(NOTES).read() == "approved line\n" and
  (again.get(1) or {}).get("structuredContent") == {"appended": "approved line"},
  ok.stderr + json.dumps(out)[:800] + json.dumps(again)[:800])

# refusals, by skill check before signing and by serve
BAD = {
    "mounts": ([tool("bad.t", executor={"mounts": [{"host": "/etc", "inside": "/etc"}]})],
               "executor.mounts: a skill's tool is given its skill's files at /skill"),
    "state": ([tool("bad.t", "write", executor={"state": True}, dry_run="unsupported")],
              "executor.state: not for"),
    "builtin": ([dict(tool("bad.t"), executor={"kind": "builtin", "name": "echo"})],
                "executor: a skill's tool is a command"),
    "namespace": ([tool("fs.write")], "name: fs.write: a skill's tool is named in the "
                  "skill's own namespace, bad.TOOL"),
    "no_script": ([tool("bad.t", argv=["/bin/sh", "-c", "cat /etc/passwd"])],
                  "executor.argv: runs none of the skill's scripts"),
    "missing_script": ([tool("bad.t", argv=["python3", "/skill/scripts/gone.py"])],
                       "executor.argv[1]: /skill/scripts/gone.py: the skill has no such script"),
    "not_executable": ([tool("bad.t", argv=["/skill/scripts/run.py"])],
                       "executor.argv[0]: /skill/scripts/run.py: not executable"),
    "compensation": ([tool("bad.t", "write", compensation={"tool": "fs.write@1.0.0"},
                           dry_run="unsupported")],
                     "compensation.tool: fs.write@1.0.0 is not a write tool of this skill"),
    "contract": ([dict(tool("bad.t"), authority="delete")], "authority: must be read or write"),
    "twice": ([tool("bad.t"), tool("bad.t")], "tools[1]: name: given twice"),
    "egress_address": ([tool("bad.t", executor={"tier": "standard",
                                               "egress": ["169.254.169.254:80"]})],
                       "executor.egress[0]: 169.254.169.254:80: a skill's tool names the hosts"),
    "egress_loopback": ([tool("bad.t", executor={"tier": "standard", "egress": ["[::1]:8080"]})],
                        "executor.egress[0]: [::1]:8080: a skill's tool names the hosts"),
}
for case, (tools, needle) in BAD.items():
    d = skill("bad", tools, top=os.path.join(TMP, "bad-" + case), sign=False)
    r = tg("skill", "check", d)
    c("check_refuses_" + case, r.returncode == 1 and needle in r.stderr and
      "toolgate.json: tools[" in r.stderr, r.stderr[-500:])
d = skill("bad", [tool("bad.t", executor={"mounts": [{"host": "/etc", "inside": "/etc"}]})])
os.makedirs(os.path.join(TMP, "installed"), exist_ok=True)
r = tg("skill", "install", d, "--skills", os.path.join(TMP, "installed"), "--trust", "trust.json")
c("install_refuses_bad_tools", r.returncode == 1 and "refused (malformed)" in r.stderr and
  "executor.mounts" in r.stderr and not os.listdir(os.path.join(TMP, "installed")),
  r.stderr[-500:])
r = tg("skill", "check", os.path.join(TMP, "skills", "nothing"))
c("check_names_a_missing_folder", r.returncode != 0 and "skills/nothing" in r.stderr,
  r.stderr[-300:])
skill("fs", [tool("fs.mine")])  # the catalogue's fs.* family
p, out = serve(GATEWAY, [], ["tools/list", "resources/list"])
listed = json.dumps(out.get(100)) + json.dumps(out.get(101))
c("serve_refuses_a_skill_with_bad_tools",
  "bad.t" not in listed and "skill://bad/" not in listed and
  "executor.mounts: a skill's tool is given" in p.stderr and "refused (malformed)" in p.stderr,
  p.stderr[-800:])
c("serve_refuses_the_catalogues_namespace",
  "fs.mine" not in listed and "skill://fs/" not in listed and
  "its tools' namespace fs. is the catalogue's" in p.stderr, p.stderr[-800:])
c("others_still_served", "word-count.count" in listed and "notes.append" in listed, listed[:400])
shutil.rmtree(os.path.join(SKILLS, "bad"))
shutil.rmtree(os.path.join(SKILLS, "fs"))

# warn mode: an unsigned skill's text is served, its scripts are not tools
skill("unsigned-tools", [tool("unsigned-tools.run")], sign=False)
p, out = serve(GATEWAY + ["--skills-mode", "warn"], [{"name": "unsigned-tools.run",
                                                      "arguments": {"text": "x"}}],
               ["tools/list", "resources/list"])
c("warn_mode_serves_text_not_tools",
  "skill://unsigned-tools/SKILL.md" in json.dumps(out.get(101)) and
  "unsigned-tools.run" not in json.dumps(out.get(100)) and
  ((out.get(1) or {}).get("isError") or "code" in (out.get(1) or {})) and
  "served in warn mode without its tools" in p.stderr, p.stderr[-600:] + json.dumps(out)[:600])
shutil.rmtree(os.path.join(SKILLS, "unsigned-tools"))

# without --skills-trust no key is trusted: a signed skill is refused as
# untrusted, and its scripts never run
NO_TRUST = ["--catalog", CAT, "--workspace", WS, "--skills", SKILLS]
COUNT = [{"name": "word-count.count", "arguments": {"text": "x"}}]
_, trusted = serve(NO_TRUST + ["--skills-trust", os.path.join(TMP, "trust.json")], COUNT)
p, out = serve(NO_TRUST, COUNT, ["tools/list"])
c("without_a_trust_store_no_tool_runs",
  (trusted.get(1) or {}).get("structuredContent") == {"words": 1} and
  "tools" in (out.get(100) or {}) and "word-count.count" not in json.dumps(out.get(100)) and
  "skill word-count refused (untrusted)" in p.stderr and
  "no such tool" in json.dumps(out.get(1)),
  p.stderr[-600:] + json.dumps(out.get(1))[:300] + json.dumps(trusted.get(1))[:300])

# SIGHUP reads the skills again: a skill added is served with its tools,
# clients are told; one changed under its version is refused by its pin;
# one whose namespace the reloaded catalogue takes is refused


class Session:
    """toolgate serve on stdio, kept running: requests answered by id,
    notifications kept."""

    def __init__(self, argv):
        self.errf = os.path.join(TMP, "session.err")
        self.p = subprocess.Popen([TG, "serve"] + argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=open(self.errf, "w"), text=True)
        self.notes, self.n = [], 0
        self.rpc("initialize", INIT["params"])
        self.p.stdin.write('{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')

    def rpc(self, method, params=None):
        self.n += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method,
                                       "params": params or {}}) + "\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            if not line:
                return {}
            m = json.loads(line)
            if m.get("id") == self.n:
                return m.get("result", m.get("error"))
            self.notes.append(m.get("method"))

    def tools(self):
        return [t["name"] for t in (self.rpc("tools/list") or {}).get("tools", [])]

    def reload_until(self, cond):
        self.p.send_signal(signal.SIGHUP)
        for _ in range(200):
            if cond():
                return True
            time.sleep(0.05)
        return False

    def end(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)
        err = open(self.errf).read()
        sanitizer(err)
        return err


HELLO = "import json, sys\nargs = json.loads(sys.stdin.readline())\n" \
        "print(json.dumps({'hello': args.get('who', 'world')}))\n"
live = Session(GATEWAY)
before = live.tools()
skill("greet", [tool("greet.hello", argv=["python3", "/skill/scripts/hello.py"])],
      {"hello.py": (HELLO, 0o644)})
added = live.reload_until(lambda: "greet.hello" in live.tools())
r = live.rpc("tools/call", {"name": "greet.hello", "arguments": {"who": "reload"}})
res = live.rpc("resources/list")
c("reload_serves_a_skill_added", "greet.hello" not in before and added and
  (r or {}).get("structuredContent") == {"hello": "reload"} and
  "skill://greet/SKILL.md" in json.dumps(res) and
  "notifications/tools/list_changed" in live.notes and
  "notifications/resources/list_changed" in live.notes, json.dumps([r, live.notes])[:600])
write(os.path.join(SKILLS, "greet", "scripts", "hello.py"), HELLO.replace("hello", "bye"))
tg("skill", "sign", os.path.join(SKILLS, "greet"), "--secret-key", "k.sec")
gone = live.reload_until(lambda: "greet.hello" not in live.tools())
res = live.rpc("resources/list")
still = live.rpc("tools/call", {"name": "word-count.count", "arguments": {"text": "x y"}})
# a call in flight when its skill goes keeps the files it started with
SLOW = "import json, sys, time\njson.loads(sys.stdin.readline())\ntime.sleep(1.5)\n" \
       "print(json.dumps({'read': len(open('/skill/SKILL.md').read())}))\n"
skill("slow", [tool("slow.run", argv=["python3", "/skill/scripts/slow.py"])],
      {"slow.py": (SLOW, 0o644)})
live.reload_until(lambda: "slow.run" in live.tools())
live.n += 1
live.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": live.n, "method": "tools/call",
                               "params": {"name": "slow.run", "arguments": {}}}) + "\n")
live.p.stdin.flush()
time.sleep(0.5)
shutil.rmtree(os.path.join(SKILLS, "slow"))
live.p.send_signal(signal.SIGHUP)
answer = {}
while True:
    m = json.loads(live.p.stdout.readline() or "{}")
    if not m or m.get("id") == live.n:
        answer = m.get("result", {})
        break
gone_slow = live.reload_until(lambda: "slow.run" not in live.tools())
c("a_call_in_flight_keeps_its_skills_files",
  not answer.get("isError") and (answer.get("structuredContent") or {}).get("read", 0) > 0 and
  gone_slow, json.dumps(answer)[:400])
TAKEN = os.path.join(CAT, "notes.extra-1.0.0.json")
with open(os.path.join(CAT, "fs.read-1.0.0.json")) as f:
    extra = json.load(f)
extra["name"] = "notes.extra"
with open(TAKEN, "w") as f:
    json.dump(extra, f)
taken = live.reload_until(lambda: "notes.extra" in live.tools())
after = live.tools()
err = live.end()
os.remove(TAKEN)
c("reload_refuses_a_change_under_the_same_version",
  gone and "skill://greet/" not in json.dumps(res) and
  "skill greet refused (tampered): version 1.0 was served with other files" in err and
  (still or {}).get("structuredContent") == {"words": 2}, err[-800:])
c("reload_refuses_a_skill_whose_namespace_the_catalogue_takes",
  taken and "notes.append" not in after and
  "skill notes refused (malformed)" in err and
  "its tools' namespace notes. is the catalogue's" in err, err[-800:] + json.dumps(after))
shutil.rmtree(os.path.join(SKILLS, "greet"))

# the catalogue's own skills folder (CATALOG/skills) is served without
# --skills, from the verified copy with --catalog-trust
CAT2 = os.path.join(TMP, "catalog2")
shutil.copytree(CAT, CAT2)
skill("greet", [tool("greet.hello", argv=["python3", "/skill/scripts/hello.py"])],
      {"hello.py": (HELLO, 0o644)}, top=os.path.join(CAT2, "skills"))
tg("catalog", "sign", CAT2, "--secret-key", "k.sec")
HELLO_CALL = [{"name": "greet.hello", "arguments": {"who": "catalogue"}}]
for extra in ([], ["--catalog-trust", os.path.join(TMP, "trust.json")]):
    p, out = serve(["--catalog", CAT2, "--workspace", WS, "--skills-trust",
                    os.path.join(TMP, "trust.json")] + extra, HELLO_CALL, ["resources/list"])
    c("catalogue_skills_served" + ("_signed" if extra else ""),
      (out.get(1) or {}).get("structuredContent") == {"hello": "catalogue"} and
      "skill://greet/SKILL.md" in json.dumps(out.get(100)), p.stderr[-600:] + json.dumps(out)[:400])
r = tg("catalog", "lint", CAT2)
c("catalogue_lint_takes_a_skills_folder", r.returncode == 0, r.stdout[-400:] + r.stderr[-400:])

# a reload serves the skills/ the new catalogue has: removed, none (and
# the catalogue still reloads: a contract added is served); back, served
CAT3 = os.path.join(TMP, "catalog3")
shutil.copytree(CAT2, CAT3)
live = Session(["--catalog", CAT3, "--workspace", WS, "--skills-trust",
                os.path.join(TMP, "trust.json")])
had = "greet.hello" in live.tools()
shutil.move(os.path.join(CAT3, "skills"), os.path.join(TMP, "skills3"))
with open(os.path.join(CAT3, "fs.read-1.0.0.json")) as f:
    extra = json.load(f)
extra["name"] = "extra.read"
with open(os.path.join(CAT3, "extra.read-1.0.0.json"), "w") as f:
    json.dump(extra, f)
gone = live.reload_until(lambda: "extra.read" in live.tools())
gone = gone and "greet.hello" not in live.tools()
shutil.move(os.path.join(TMP, "skills3"), os.path.join(CAT3, "skills"))
back = live.reload_until(lambda: "greet.hello" in live.tools())
err = live.end()
c("reload_follows_the_catalogues_skills_folder", had and gone and back and
  "skills folder" not in err, err[-800:])

# a check of the deployment pins nothing: doctor reads the skills as
# serve would, and serves none
import sqlite3  # noqa: E402
skill("unserved", [tool("unserved.run")], version="7.0")
CONF = os.path.join(TMP, "doctor.conf")
with open(CONF, "w") as f:
    f.write("catalog = %s\nworkspace = %s\nstate = %s\npolicy = %s\nskills = %s\n"
            "skills-trust = %s\n" % (CAT, WS, STATE, POLICY, SKILLS,
                                     os.path.join(TMP, "trust.json")))
d = subprocess.run([TG, "doctor"], capture_output=True, text=True, timeout=120, cwd=TMP,
                   env=dict(os.environ, TOOLGATE_CONFIG=CONF))
sanitizer(d.stderr)
db = sqlite3.connect(os.path.join(STATE, "toolgate.db"))
pinned = [r[0] for r in db.execute("SELECT name FROM skill_pins WHERE name = 'unserved'")]
db.close()
shutil.rmtree(os.path.join(SKILLS, "unserved"))
c("doctor_pins_no_skill", not pinned, d.stdout[-400:] + d.stderr[-400:])

# skill show: what each tool may do
r = tg("skill", "show", os.path.join(SKILLS, "notes"), "--trust", "trust.json")
c("show_says_what_each_tool_may_do", r.returncode == 0 and
  "notes.append@1.0.0  write, standard tier, workspace write, egress none" in r.stdout and
  "runs: /skill/scripts/note.py" in r.stdout, r.stdout + r.stderr)

c("no_sanitizer_reports", not REPORTS, "\n".join(REPORTS)[:3000])
c.done()
