#!/usr/bin/env python3
import json
import pathlib
import re
import sys


def bump(v, part):
    major, minor, patch = (int(x) for x in re.match(r"(\d+)\.(\d+)\.(\d+)", v).groups())
    if part == "major":
        return f"{major + 1}.0.0"
    if part == "minor":
        return f"{major}.{minor + 1}.0"
    return f"{major}.{minor}.{patch + 1}"


def toml(path, part):
    t = path.read_text()
    m = re.search(r'(?m)^version\s*=\s*"([^"]+)"', t)
    new = bump(m[1], part)
    path.write_text(t[:m.start(1)] + new + t[m.end(1):])
    return m[1], new


def main(part):
    done = []
    for name in ("pyproject.toml", "Cargo.toml"):
        p = pathlib.Path(name)
        if p.exists():
            done.append((name, *toml(p, part)))
    p = pathlib.Path("package.json")
    if p.exists():
        data = json.loads(p.read_text())
        old = data["version"]
        data["version"] = bump(old, part)
        p.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
        done.append(("package.json", old, data["version"]))
    for name, old, new in done:
        print(f"{name}: {old} -> {new}")
    if not done:
        sys.exit("no pyproject.toml, Cargo.toml or package.json here")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "patch")
