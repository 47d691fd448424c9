#!/usr/bin/env python3
import json
import pathlib
import re
import sys

POPULAR = [l.strip() for l in (pathlib.Path(__file__).resolve().parent.parent / "assets" / "popular.txt").read_text().split() if l.strip()]


def dist(a, b):
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1]


def norm(n):
    return re.sub(r"[-_.]+", "", n.lower())


def look_alike(name):
    if name in POPULAR:
        return None
    for p in POPULAR:
        if norm(p) == norm(name) or dist(name.lower(), p) <= (1 if len(p) < 6 else 2):
            return p
    return None


def deps(path):
    p = pathlib.Path(path)
    if p.name == "package.json":
        data = json.loads(p.read_text())
        for sec in ("dependencies", "devDependencies", "optionalDependencies"):
            for name, ver in data.get(sec, {}).items():
                yield name, ver
    else:
        for line in p.read_text().splitlines():
            line = line.split("#", 1)[0].strip()
            if line and not line.startswith("-"):
                m = re.match(r"([A-Za-z0-9_.\-]+)(.*)", line)
                yield m[1], m[2].strip()


def main():
    bad = 0
    for path in sys.argv[1:]:
        for name, ver in deps(path):
            alike = look_alike(name)
            if alike:
                print(f"{path}: {name}: looks like '{alike}'")
                bad += 1
            if ver in ("*", "latest", "") or re.match(r"(https?|git)[:+]", ver) or (path.endswith(".txt") and "==" not in ver):
                print(f"{path}: {name}: not pinned ({ver or 'no version'})")
                bad += 1
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
