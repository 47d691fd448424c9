#!/usr/bin/env python3
import argparse
import os
import pathlib
import re

MASK = [
    (re.compile(r"(?i)((?:token|secret|password|passwd|api[_-]?key)\S*?[=:]\s*)\S+"), r"\1****"),
    (re.compile(r"(\s-p)\S+"), r"\1****"),
    (re.compile(r"(?i)(authorization:\s*bearer\s+)\S+"), r"\1****"),
]


def entries():
    home = pathlib.Path.home()
    files = [os.environ.get("HISTFILE"), home / ".bash_history", home / ".zsh_history",
             home / ".local/share/fish/fish_history"]
    for f in files:
        if not f or not pathlib.Path(f).is_file():
            continue
        for line in pathlib.Path(f).read_text(errors="replace").splitlines():
            if line.startswith(": ") and ";" in line:
                line = line.split(";", 1)[1]
            elif line.startswith("- cmd: "):
                line = line[7:]
            elif line.startswith(("  when:", "  paths:", "#")):
                continue
            yield line


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("query")
    ap.add_argument("--limit", type=int, default=20)
    a = ap.parse_args()
    words = a.query.lower().split()
    seen, out = set(), []
    for cmd in reversed(list(entries())):
        if all(w in cmd.lower() for w in words) and cmd not in seen:
            seen.add(cmd)
            for rx, rep in MASK:
                cmd = rx.sub(rep, cmd)
            out.append(cmd)
        if len(out) >= a.limit:
            break
    print("\n".join(out))


if __name__ == "__main__":
    main()
