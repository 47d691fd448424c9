#!/usr/bin/env python3
import re
import sys

START, STOP = "<!-- toc -->", "<!-- tocstop -->"


def anchor(title, used):
    a = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
    n = used.get(a, 0)
    used[a] = n + 1
    return a if n == 0 else f"{a}-{n}"


def toc(lines):
    out, used, fence = [], {}, False
    for line in lines:
        if line.startswith(("```", "~~~")):
            fence = not fence
        if fence:
            continue
        m = re.match(r"(#{2,3}) (.+?)\s*#*\s*$", line)
        if m:
            depth = len(m[1]) - 2
            out.append(f"{'  ' * depth}- [{m[2]}](#{anchor(m[2], used)})")
    return out


def main(path):
    text = open(path, encoding="utf-8").read()
    if START not in text or STOP not in text:
        sys.exit(f"{path}: add {START} and {STOP} first")
    head, rest = text.split(START, 1)
    _, tail = rest.split(STOP, 1)
    body = "\n".join(toc(text.splitlines()))
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"{head}{START}\n{body}\n{STOP}{tail}")


if __name__ == "__main__":
    main(sys.argv[1])
