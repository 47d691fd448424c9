#!/usr/bin/env python3
"""fs.search: lines of the workspace's files that match a regular
expression, optionally only in files whose name matches a glob."""
import fnmatch
import json
import os
import re
import sys

ROOT = "/workspace"


def main():
    args = json.load(sys.stdin)
    try:
        rx = re.compile(args["pattern"])
    except re.error as e:
        json.dump({"error": {"code": "bad_pattern", "message": str(e)}}, sys.stdout)
        sys.exit(1)
    glob, limit = args.get("glob", "*"), args.get("max_results", 50)
    matches, files = [], 0
    for d, dirs, names in os.walk(ROOT):
        dirs.sort()
        for name in sorted(names):
            if not fnmatch.fnmatch(name, glob):
                continue
            path = os.path.join(d, name)
            files += 1
            try:
                with open(path, encoding="utf-8") as f:
                    for n, line in enumerate(f, 1):
                        if rx.search(line):
                            matches.append({"path": os.path.relpath(path, ROOT), "line": n,
                                            "text": line.rstrip("\n")[:400]})
                            if len(matches) >= limit:
                                raise StopIteration
            except (UnicodeDecodeError, OSError):
                continue
            except StopIteration:
                json.dump({"matches": matches, "files_searched": files, "truncated": True},
                          sys.stdout)
                return
    json.dump({"matches": matches, "files_searched": files, "truncated": False}, sys.stdout)


main()
