#!/usr/bin/env python3
"""fs.read: one file of the workspace (mounted read-only at /workspace).

Arguments on stdin ({"path", "offset", "length"}), the result on stdout.
The workspace is the only place it can read: the sandbox has no other
user files (the gateway's undo records are in its state directory, which
no read tool is given), and a path that leaves /workspace (.., a symlink)
is refused.
"""
import base64
import json
import os
import sys

ROOT = "/workspace"


def fail(code, message):
    json.dump({"error": {"code": code, "message": message}}, sys.stdout)
    sys.exit(1)


def main():
    args = json.load(sys.stdin)
    rel = args["path"].lstrip("/")
    path = os.path.realpath(os.path.join(ROOT, rel))
    if path != ROOT and not path.startswith(ROOT + "/"):
        fail("outside_workspace", f"{args['path']} is outside the workspace")
    if not os.path.isfile(path):
        fail("not_found", f"{args['path']}: no such file in the workspace")
    offset, length = args.get("offset", 0), args.get("length", 65536)
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        f.seek(offset)
        data = f.read(length)
    try:
        text, encoding = data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        text, encoding = base64.b64encode(data).decode(), "base64"
    json.dump({"path": os.path.relpath(path, ROOT), "size": size, "offset": offset,
               "encoding": encoding, "content": text,
               "truncated": offset + len(data) < size}, sys.stdout)


main()
