#!/usr/bin/env python3
"""fs.write, fs.delete and their compensation fs.undo: files of the
workspace (mounted at /workspace, writable only for a real run of an
approved call), each change with its prior version kept to undo it.

    fs_change.py write | delete | undo     (the arguments on stdin)

Dry run (TOOLGATE_DRY_RUN=1; the workspace and /state are read-only
then): the diff a write or a delete would make, nothing written; an
undo names what it would restore and what it would replace by size and
SHA-256 only, never their content: /state holds copies of what people
approved to delete, and a dry run answers the caller with no approval. A real run has
the call's id (TOOLGATE_CALL_ID) and keeps, before it touches the file,
the prior version and what it is about to do in /state/undo/ID/ (the
contracts' executor.state: the gateway's STATE/tools/fs, outside the
workspace, which no read tool is given; written to a temporary folder,
synced, then renamed: it exists whole or not at all). The change itself is a write to a temporary file, synced and
renamed over the path. result.json in that folder marks the call done: a
rerun with the same id (the gateway crashed before it kept the result)
replays it, or finishes the same change if the crash came first. fs.undo
puts the prior version back, unless the file changed since (a conflict:
nothing is touched), and is harmless twice; its answer, like its dry
run's, shows the versions by size and hash.
"""
import base64
import difflib
import hashlib
import json
import os
import shutil
import stat
import sys

ROOT = os.environ.get("WORKSPACE_ROOT", "/workspace")  # the mounts; tests may move them
STATE = os.environ.get("STATE_ROOT", "/state")
RESERVED = ".toolgate"  # where versions before /state kept the undo records
MAX_PRIOR = 16 << 20      # bytes of a prior version kept to undo a change
MAX_DIFF = 64 << 10       # characters of diff shown


class Refused(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def resolve(rel):
    """The absolute path of rel in the workspace, refusing any way out and
    .toolgate/ (the gateway refuses a workspace holding .toolgate/undo)."""
    if not rel or "\0" in rel:
        raise Refused("bad_path", "a path in the workspace is required")
    path = os.path.realpath(os.path.join(ROOT, rel.lstrip("/")))
    if not path.startswith(ROOT + "/"):
        raise Refused("outside_workspace", f"{rel} is outside the workspace")
    if os.path.relpath(path, ROOT).split("/")[0] == RESERVED:
        raise Refused("outside_workspace", f"{rel}: {RESERVED}/ is reserved (earlier versions "
                      "kept toolgate's undo records there)")
    return path


def read(path):
    """The file's bytes, or None if there is none."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        raise Refused("not_a_file", f"{os.path.relpath(path, ROOT)} is not a regular file")
    if st.st_size > MAX_PRIOR:
        raise Refused("too_large", f"{os.path.relpath(path, ROOT)} is larger than {MAX_PRIOR} "
                      "bytes: too large to keep its prior version")
    with open(path, "rb") as f:
        return f.read()


def sha(data):
    return hashlib.sha256(data).hexdigest() if data is not None else None


def summary(data):
    """A version of a file by its size and SHA-256, never its content; None
    for no file."""
    return {"bytes": len(data), "sha256": sha(data)} if data is not None else None


def diff(rel, old, new):
    try:
        a = (old or b"").decode().splitlines(keepends=True)
        b = (new or b"").decode().splitlines(keepends=True)
    except UnicodeDecodeError:
        return f"binary {rel}: {len(old or b'')} bytes -> {len(new or b'')} bytes\n"
    text = "".join(difflib.unified_diff(a, b, "a/" + rel if old is not None else "/dev/null",
                                        "b/" + rel if new is not None else "/dev/null"))
    return text[:MAX_DIFF] + ("\n[diff truncated]\n" if len(text) > MAX_DIFF else "")


def sync_dir(path):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def put(path, data, mode=None):
    """Replace path with data: a synced temporary file renamed over it,
    with the mode the file had (0644 for a new one)."""
    if mode is None:
        try:
            mode = stat.S_IMODE(os.lstat(path).st_mode)
        except FileNotFoundError:
            mode = 0o644
    tmp = f"{path}.toolgate-tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, mode)
    os.fchmod(fd, mode)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.rename(tmp, path)
    sync_dir(os.path.dirname(path))


def put_json(path, obj):
    put(path, json.dumps(obj).encode())


def undo_dir(call_id):
    if not call_id or not all(c.isalnum() or c in "-_" for c in call_id):
        raise Refused("not_approved", "a real run needs the approved call's id")
    return os.path.join(STATE, "undo", call_id)


def begin(call_id, meta, prior):
    """Keep the prior version and the plan, whole or not at all."""
    final = undo_dir(call_id)
    tmp = final + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp, mode=0o700)
    if prior is not None:
        put(os.path.join(tmp, "prior"), prior)
    put_json(os.path.join(tmp, "meta.json"), meta)
    os.rename(tmp, final)
    sync_dir(os.path.dirname(final))


def load(call_id, name):
    try:
        with open(os.path.join(undo_dir(call_id), name), "rb") as f:
            return f.read()
    except FileNotFoundError:
        return None


def change(op, args, dry, call_id):
    rel = args["path"]
    path = resolve(rel)
    rel = os.path.relpath(path, ROOT)
    if op == "write":
        new = (base64.b64decode(args["content"], validate=True)
               if args.get("encoding") == "base64" else args["content"].encode())
        if args.get("create_only") and os.path.lexists(path):
            raise Refused("exists", f"{rel} exists, and create_only was asked")
    else:
        new = None
    if not dry:
        done = load(call_id, "result.json")
        if done is not None:  # it ran: the gateway's rerun after a crash
            return json.loads(done)
        meta = load(call_id, "meta.json")
        if meta is not None:  # it began: finish the same change
            meta = json.loads(meta)
            old = load(call_id, "prior")
            return finish(call_id, meta, path, old, new)
    old = read(path)
    if op == "delete" and old is None:
        raise Refused("not_found", f"{rel}: no such file in the workspace")
    result = {"path": rel, "op": op, "existed": old is not None,
              "bytes_before": len(old) if old is not None else 0,
              "bytes_after": len(new) if new is not None else 0,
              "diff": diff(rel, old, new), "dry_run": dry}
    if dry:
        return result
    parent = os.path.dirname(path)
    missing = []
    while not os.path.isdir(parent):
        missing.insert(0, os.path.relpath(parent, ROOT))
        parent = os.path.dirname(parent)
    meta = {"op": op, "path": rel, "existed": old is not None, "after_sha256": sha(new),
            "created_dirs": missing, "result": result}
    begin(call_id, meta, old)
    return finish(call_id, meta, path, old, new)


def finish(call_id, meta, path, old, new):
    for d in meta["created_dirs"]:
        os.makedirs(os.path.join(ROOT, d), exist_ok=True)
    if meta["op"] == "write":
        put(path, new)
    elif os.path.lexists(path):
        os.unlink(path)
        sync_dir(os.path.dirname(path))
    result = dict(meta["result"], call_id=call_id)
    put_json(os.path.join(undo_dir(call_id), "result.json"), result)
    return result


def undo(args, dry):
    call_id = args["call_id"]
    meta = load(call_id, "meta.json")
    if meta is None:
        raise Refused("not_found", f"no prior version of call {call_id} in the state directory")
    meta = json.loads(meta)
    if load(call_id, "compensated") is not None:
        return {"call_id": call_id, "path": meta["path"], "already": True, "dry_run": dry}
    path = resolve(meta["path"])
    now = read(path)
    prior = load(call_id, "prior") if meta["existed"] else None
    if sha(now) != meta["after_sha256"] and sha(now) != sha(prior):
        raise Refused("conflict", f"call {call_id} cannot be undone: {meta['path']} changed "
                      "since the call; nothing was restored")
    if sha(now) == sha(prior) and sha(now) != meta["after_sha256"]:
        # restored already: a crash came before the marker (the undo reruns)
        if not dry:
            put(os.path.join(undo_dir(call_id), "compensated"), b"")
        return {"call_id": call_id, "path": meta["path"], "already": True, "dry_run": dry}
    # by size and hash only: the prior version is a copy of what the call
    # changed or deleted, and this answer goes to whoever asks, a dry run
    # with no approval (docs/contracts.md, "What a write tool's dry run may show")
    result = {"call_id": call_id, "path": meta["path"], "already": False,
              "restored": "prior version" if meta["existed"] else "absent",
              "prior": summary(prior), "current": summary(now), "dry_run": dry}
    if dry:
        return result
    if prior is not None:
        put(path, prior)
    elif os.path.lexists(path):
        os.unlink(path)
    for d in reversed(meta["created_dirs"]):
        try:
            os.rmdir(os.path.join(ROOT, d))
        except OSError:
            break  # not empty: someone else's files are there now
    put(os.path.join(undo_dir(call_id), "compensated"), b"")
    return result


def main():
    op = sys.argv[1]
    args = json.load(sys.stdin)
    dry = os.environ.get("TOOLGATE_DRY_RUN") == "1"
    call_id = os.environ.get("TOOLGATE_CALL_ID", "")
    try:
        if op == "undo":
            result = undo(args, dry)
        else:
            if not dry:
                undo_dir(call_id)
            result = change(op, args, dry, call_id)
    except Refused as e:
        json.dump({"error": {"code": e.code, "message": str(e)}}, sys.stdout)
        sys.exit(1)
    except (OSError, ValueError) as e:
        json.dump({"error": {"code": "io_error", "message": str(e)}}, sys.stdout)
        sys.exit(1)
    json.dump(result, sys.stdout)


main()
