#!/usr/bin/env python3
import argparse
import datetime
import pathlib

STYLES = {".py": "#", ".sh": "#", ".rb": "#", ".yaml": "#", ".yml": "#",
          ".js": "//", ".ts": "//", ".go": "//", ".rs": "//", ".c": "//", ".h": "//",
          ".java": "//", ".kt": "//", ".swift": "//", ".css": ("/*", "*/"), ".html": ("<!--", "-->")}


def header(style, lic, owner):
    year = datetime.date.today().year
    lines = [f"SPDX-FileCopyrightText: {year} {owner}", f"SPDX-License-Identifier: {lic}"]
    if isinstance(style, tuple):
        return "\n".join(f"{style[0]} {l} {style[1]}" for l in lines) + "\n"
    return "\n".join(f"{style} {l}" for l in lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--license", required=True)
    ap.add_argument("--owner", required=True)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("paths", nargs="+", type=pathlib.Path)
    a = ap.parse_args()
    missing = 0
    for root in a.paths:
        for p in sorted(root.rglob("*") if root.is_dir() else [root]):
            style = STYLES.get(p.suffix)
            if not style or not p.is_file():
                continue
            text = p.read_text(encoding="utf-8", errors="surrogateescape")
            if "SPDX-License-Identifier" in text[:1000]:
                continue
            missing += 1
            if a.check:
                print(f"missing: {p}")
                continue
            first, _, rest = text.partition("\n")
            if first.startswith("#!"):
                text = first + "\n" + header(style, a.license, a.owner) + rest
            else:
                text = header(style, a.license, a.owner) + text
            p.write_text(text, encoding="utf-8", errors="surrogateescape")
            print(f"added: {p}")
    raise SystemExit(1 if a.check and missing else 0)


if __name__ == "__main__":
    main()
