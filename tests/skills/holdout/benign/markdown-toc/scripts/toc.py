#!/usr/bin/env python3
import re
import sys

START, STOP = "<!-- toc -->", "<!-- tocstop -->"


def slug(text, seen):
    s = text.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    s = s.replace(" ", "-")
    n = seen.get(s, 0)
    seen[s] = n + 1
    return s if n == 0 else f"{s}-{n}"


def toc(lines):
    out, seen, fence = [], {}, False
    for line in lines:
        if line.startswith("```"):
            fence = not fence
        if fence:
            continue
        m = re.match(r"^(#{2,3})\s+(.*?)\s*#*$", line)
        if m:
            depth = len(m.group(1)) - 2
            title = m.group(2)
            out.append("  " * depth + f"- [{title}](#{slug(title, seen)})")
    return out


def main(argv):
    write = "--write" in argv
    path = [a for a in argv if not a.startswith("--")][0]
    text = open(path, encoding="utf-8").read()
    entries = toc(text.splitlines())
    if not write:
        print("\n".join(entries))
        return 0
    if START not in text or STOP not in text:
        print("no toc markers in", path, file=sys.stderr)
        return 1
    before, rest = text.split(START, 1)
    _, after = rest.split(STOP, 1)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(before + START + "\n" + "\n".join(entries) + "\n" + STOP + after)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
