"""What a command tool is given of the gateway's directories, through the
real gateway (docs/contracts.md, executor.workspace and executor.state):

- after an approved fs.delete, python.run (no executor.workspace) sees
  neither the workspace nor the state directory, nor anything of the
  deleted file's undo copy, which is under STATE/tools/fs, not in the
  workspace;
- fs.read (workspace read) reads the workspace, and its undo area is not
  there at all: not_found, not a refusal of its script's; fs.search finds
  nothing of the copy; fs.undo (state) restores the file from it;
- contracts: a bad executor.workspace, a read tool asking to write the
  workspace or for the state, are refused naming the file and the field;
- the gateway refuses a workspace still holding .toolgate/undo (an
  earlier toolgate's records) and says how to move them, after which
  the compensation finds them; it refuses a state directory inside the
  workspace, and a contract that mounts the state directory;
- fs.undo's dry run, which needs no approval, and the preview of a held
  fs.undo name the deleted file's copy by size and SHA-256, never its
  content;
- a read tool mounting STATE/tools/fs, or STATE itself, before the store
  has made them (a first run) is refused all the same; so is a workspace
  that is, holds or lies in the catalogue, or holds the record; a
  contract mount of the workspace, or of a directory holding an earlier
  toolgate's .toolgate/undo, and a writable mount of the catalogue.

    workspace.py TOOLGATE REPO TMPDIR
"""
import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, example_gateway, stdio_session  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
c = Checks("workspace")
CAT, WS = example_gateway(REPO, TMP)
STATE, POLICY = os.path.join(TMP, "state"), os.path.join(TMP, "policy.json")
SECRET = "approved-deletion-" + secrets.token_hex(8)
INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "t", "version": "1"}}}
REPORTS = []

with open(POLICY, "w") as f:
    json.dump({"writes": {"wait": "0"},  # held calls answered at once
               "principals": {"local": {"scopes": ["fs.*:write", "*:read"]},
                              "alice": {"scopes": ["fs.*:approve"]}}}, f)
with open(os.path.join(WS, "secret.txt"), "w") as f:
    f.write(SECRET + "\n")
os.chown(os.path.join(WS, "secret.txt"), 65534, 65534)


def sanitizer(stderr):
    if "Sanitizer" in stderr or "runtime error:" in stderr:
        REPORTS.append(stderr[-2000:])


def cli(*argv):
    p = subprocess.run([TG] + list(argv), capture_output=True, text=True, timeout=60)
    sanitizer(p.stderr)
    return p


def serve(argv, calls=()):
    """toolgate serve on stdio with argv, the calls sent: (process, {id: result})."""
    msgs = [INIT] + [{"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": x}
                     for i, x in enumerate(calls)]
    p, out = stdio_session(TG, argv, msgs, timeout=60)
    sanitizer(p.stderr)
    return p, out


GATEWAY = ["--catalog", CAT, "--workspace", WS, "--state", STATE, "--policy", POLICY,
           "--record", os.path.join(TMP, "record")]


def call(tool, args, key=None):
    meta = {"dev.toolgate/idempotencyKey": key} if key else {}
    return serve(GATEWAY, [{"name": tool, "arguments": args, "_meta": meta}])[1].get(1) or {}


ALICE = cli("token", "issue", "--state", STATE, "--policy", POLICY, "--principal", "alice",
            "--scope", "fs.*:approve").stdout.strip()

# an approved fs.delete: the deleted file's copy is kept to undo it
held = call("fs.delete", {"path": "secret.txt"}, "del-1")
ticket = ((held.get("_meta") or {}).get("dev.toolgate/error") or {}).get("ticket", "")
ok = cli("approvals", "approve", ticket, "--state", STATE, "--policy", POLICY, "--token", ALICE)
done = call("fs.delete", {"path": "secret.txt"}, "del-1")
copy = os.path.join(STATE, "tools", "fs", "undo", ticket, "prior")
FS = os.path.join(STATE, "tools", "fs")
st = os.stat(FS) if os.path.isdir(FS) else None
c("undo_copy_in_the_state_directory",
  ok.returncode == 0 and not done.get("isError") and
  not os.path.exists(os.path.join(WS, "secret.txt")) and os.path.isfile(copy) and
  open(copy).read() == SECRET + "\n" and st and st.st_uid == 65534 and
  (st.st_mode & 0o777) == 0o700,
  json.dumps(held)[:400] + ok.stderr + json.dumps(done)[:400])
c("no_records_in_the_workspace", not os.path.exists(os.path.join(WS, ".toolgate")),
  str(os.listdir(WS)))

# fs.undo's dry run needs no approval and answers the caller: the deleted
# file's copy is named by size and hash, never shown; nor in the preview
# of an fs.undo held for approval
WANT = {"bytes": len(SECRET) + 1, "sha256": hashlib.sha256((SECRET + "\n").encode()).hexdigest()}
_, out = serve(GATEWAY, [{"name": "fs.undo", "arguments": {"call_id": ticket},
                          "_meta": {"dev.toolgate/dryRun": True}}])
r = out.get(1) or {}
sc = r.get("structuredContent") or {}
c("undo_dry_run_shows_no_content", not r.get("isError") and SECRET not in json.dumps(r) and
  sc.get("dry_run") is True and sc.get("prior") == WANT and sc.get("current") is None and
  sc.get("restored") == "prior version", json.dumps(r)[:800])
r = call("fs.undo", {"call_id": ticket}, "undo-held")
c("undo_preview_shows_no_content", r.get("isError") and SECRET not in json.dumps(r) and
  WANT["sha256"] in json.dumps(r), json.dumps(r)[:800])

# python.run's contract asks for no host files: it is given none of them
PROBE = """
import json, os
found = []
for top in ("/workspace", "/state", %r, %r, "/"):
    for d, dirs, files in os.walk(top):
        if d == "/":
            dirs[:] = [x for x in dirs if x not in ("usr", "proc", "sys", "dev", "etc")]
        for n in files:
            try:
                with open(os.path.join(d, n), "rb") as f:
                    if %r in f.read(1 << 20):
                        found.append(os.path.join(d, n))
            except OSError:
                pass
print(json.dumps({"root": sorted(os.listdir("/")), "found": found,
                  "mounts": open("/proc/self/mountinfo").read()}))
""" % (WS, STATE, SECRET.encode())
r = call("python.run", {"code": PROBE})
seen = json.loads(((r.get("structuredContent") or {}).get("stdout") or "{}").strip() or "{}")
c("python_run_sees_no_host_files",
  seen.get("root") is not None and "workspace" not in seen["root"] and
  "state" not in seen["root"] and seen.get("found") == [] and
  WS not in seen.get("mounts", "") and STATE not in seen.get("mounts", ""),
  json.dumps(r)[:1500])

# fs.read is given the workspace, read-only, and the undo area is not in it
r = call("fs.read", {"path": "README.md"})
c("fs_read_reads_the_workspace", not r.get("isError") and
  "workspace" in (r.get("structuredContent") or {}).get("content", ""), json.dumps(r)[:600])
r = call("fs.read", {"path": f".toolgate/undo/{ticket}/prior"})
code = ((r.get("_meta") or {}).get("dev.toolgate/error") or {}).get("code")
c("fs_read_undo_copy_is_not_there", r.get("isError") and code == "not_found" and
  SECRET not in json.dumps(r), json.dumps(r)[:600])
r = call("fs.search", {"pattern": SECRET})
c("fs_search_finds_no_copy", not r.get("isError") and
  (r.get("structuredContent") or {}).get("matches") == [], json.dumps(r)[:600])

# records an earlier toolgate kept in the workspace: refused until moved
# as the refusal says, then the compensation finds them
if os.path.isdir(FS):
    os.makedirs(os.path.join(WS, ".toolgate"))
    os.rename(os.path.join(FS, "undo"), os.path.join(WS, ".toolgate", "undo"))
    shutil.rmtree(FS)
p, _ = serve(GATEWAY)
c("refuses_workspace_with_old_records", p.returncode != 0 and ".toolgate/undo" in p.stderr and
  f"mkdir -p {STATE}/tools/fs && mv " in p.stderr, p.stderr)
mv = subprocess.run(f"mkdir -p {FS} && mv {WS}/.toolgate/undo {FS}/ && rmdir {WS}/.toolgate",
                    shell=True, capture_output=True, text=True)

# the write tools' compensation reads the copy from the state directory
rb = cli("rollback", ticket, "--catalog", CAT, "--workspace", WS, "--state", STATE, "--policy",
         POLICY, "--token", ALICE, "--record", os.path.join(TMP, "record"))
c("rollback_from_the_state_directory", mv.returncode == 0 and rb.returncode == 0 and
  open(os.path.join(WS, "secret.txt")).read() == SECRET + "\n" and
  os.stat(FS).st_uid == 65534, mv.stderr + rb.stdout + rb.stderr)

# contracts that ask for what they may not have are refused at load
BAD = os.path.join(TMP, "bad")
shutil.copytree(CAT, BAD)
with open(os.path.join(CAT, "fs.read-1.0.0.json")) as f:
    read = json.load(f)
for name, change in (("bogus", {"workspace": "everything"}), ("rw", {"workspace": "write"}),
                     ("st", {"state": True})):
    k = json.loads(json.dumps(read))
    k["name"] = "fs.read_" + name
    k["executor"].update(change)
    with open(os.path.join(BAD, f"{name}.json"), "w") as f:
        json.dump(k, f)
lint = cli("catalog", "lint", BAD)
c("lint_names_file_and_field", lint.returncode == 1 and
  "bogus.json: executor.workspace: must be none (the default), read or write" in lint.stdout +
  lint.stderr, lint.stdout + lint.stderr)
c("read_tool_asking_to_write_refused",
  "rw.json: executor.workspace: write is for write tools" in lint.stdout + lint.stderr,
  lint.stdout + lint.stderr)
c("read_tool_asking_for_state_refused",
  "st.json: executor.state: is for write tools" in lint.stdout + lint.stderr,
  lint.stdout + lint.stderr)
os.remove(os.path.join(BAD, "rw.json"))
os.remove(os.path.join(BAD, "st.json"))
p, _ = serve(["--catalog", BAD, "--workspace", WS])
c("serve_refuses_bad_workspace_value", p.returncode != 0 and
  "bogus.json: executor.workspace" in p.stderr, p.stderr)

# the gateway's own records never lie in what a tool can be given
p, _ = serve(["--catalog", CAT, "--workspace", WS, "--state", os.path.join(WS, "state"),
              "--record", os.path.join(TMP, "record")])
c("refuses_state_in_workspace", p.returncode != 0 and "overlap" in p.stderr and
  not os.path.exists(os.path.join(WS, "state")), p.stderr)
MNT = os.path.join(TMP, "mnt")
shutil.copytree(CAT, MNT)
k = json.loads(json.dumps(read))
k["executor"]["mounts"].append({"host": STATE, "inside": "/s"})
with open(os.path.join(MNT, "fs.read-1.0.0.json"), "w") as f:
    json.dump(k, f)
p, _ = serve(["--catalog", MNT, "--workspace", WS, "--state", STATE])
c("refuses_mount_of_the_state", p.returncode != 0 and
  "fs.read-1.0.0.json: executor.mounts[1]" in p.stderr and "state directory" in p.stderr,
  p.stderr)

def catalog_with(name, contract):
    """A copy of the example catalogue with contract added as name.json."""
    d = os.path.join(TMP, name)
    shutil.copytree(CAT, d)
    with open(os.path.join(d, name + ".json"), "w") as f:
        json.dump(contract, f)
    return d


def peek(name, host):
    """fs.read as name, mounting host at /m besides its program."""
    k = json.loads(json.dumps(read))
    k["name"] = name
    k["executor"]["mounts"].append({"host": host, "inside": "/m"})
    return k


# a first run: the store makes the state directory after the catalogue is
# checked; a mount of what will be there is refused all the same
FRESH = os.path.join(TMP, "fresh-state")
for name, host, what in (("peek", os.path.join(FRESH, "tools", "fs"), "lies in"),
                         ("peek_all", FRESH, "is")):
    p, _ = serve(["--catalog", catalog_with(name, peek(name, host)), "--workspace", WS,
                  "--state", FRESH, "--record", os.path.join(TMP, "record")])
    c(f"refuses_{name}_of_a_state_not_made_yet", p.returncode != 0 and
      f"{name}.json: executor.mounts[1]: {host} {what} the gateway's state directory" in p.stderr,
      p.stderr)

# the workspace only through executor.workspace; no old undo records in a mount
p, _ = serve(["--catalog", catalog_with("peek_ws", peek("peek_ws", WS)), "--workspace", WS,
              "--state", STATE])
c("refuses_mount_of_the_workspace", p.returncode != 0 and
  f"peek_ws.json: executor.mounts[1]: {WS} is the workspace" in p.stderr, p.stderr)
OLD = os.path.join(TMP, "old")
os.makedirs(os.path.join(OLD, ".toolgate", "undo"))
p, _ = serve(["--catalog", catalog_with("peek_old", peek("peek_old", OLD)), "--workspace", WS,
              "--state", STATE])
c("refuses_mount_with_old_records", p.returncode != 0 and
  "peek_old.json: executor.mounts[1]" in p.stderr and "holds .toolgate/undo" in p.stderr,
  p.stderr)

# the catalogue: never the workspace, never written by a tool
for ws, what in ((CAT, "is"), (os.path.join(CAT, "tools"), "lies in")):
    p, _ = serve(["--catalog", CAT, "--workspace", ws, "--state", STATE])
    c(f"refuses_workspace_that_{what.replace(' ', '_')}_the_catalogue", p.returncode != 0 and
      f"--workspace {ws} {what} the catalogue directory" in p.stderr, p.stderr)
with open(os.path.join(CAT, "fs.write-1.0.0.json")) as f:
    w = json.load(f)
w["name"], w["executor"]["mounts"][0]["writable"] = "fs.write_tools", True
p, _ = serve(["--catalog", catalog_with("fs.write_tools", w), "--workspace", WS, "--state", STATE])
c("refuses_writable_mount_of_the_catalogue", p.returncode != 0 and
  "executor.mounts[0]: tools is writable and lies in the catalogue directory" in p.stderr,
  p.stderr)

# each bind is checked again when the tool runs: what changed on the host
# since the catalogue loaded (old records put in a mounted directory) is
# refused, and the tool does not run
LATER = os.path.join(TMP, "later")
os.makedirs(LATER)
LATER_CAT = catalog_with("peek_later", peek("peek_later", LATER))
srv = subprocess.Popen([TG, "serve", "--catalog", LATER_CAT, "--workspace", WS, "--record",
                        os.path.join(TMP, "record")],
                       stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
srv.stdin.write(json.dumps(INIT) + "\n")
srv.stdin.flush()
first = srv.stdout.readline()
os.makedirs(os.path.join(LATER, ".toolgate", "undo"))
srv.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                            "params": {"name": "peek_later", "arguments": {"path": "README.md"}}})
                + "\n")
srv.stdin.flush()
answer = ""
while '"id":1' not in answer:
    line = srv.stdout.readline()
    if not line:
        break
    answer += line
srv.stdin.close()
srv.wait(timeout=30)
errs = srv.stderr.read()
sanitizer(errs)
c("refuses_at_run_time_what_changed_since", '"id":0' in first and
  f"executor.mounts[1]: {LATER} holds .toolgate/undo" in answer and "README" not in answer,
  first + answer + errs[-1500:])

# the gateway's own files: not in the workspace
p, _ = serve(["--catalog", CAT, "--workspace", WS, "--state", STATE, "--policy", POLICY,
              "--record", os.path.join(WS, "record")])
c("refuses_record_in_the_workspace", p.returncode != 0 and
  "a file of the gateway's own" in p.stderr, p.stderr)
if os.path.exists(os.path.join(WS, "record")):
    os.remove(os.path.join(WS, "record"))
c("no_sanitizer_reports", not REPORTS, "\n".join(REPORTS))
c.done()
