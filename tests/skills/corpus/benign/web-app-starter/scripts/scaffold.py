#!/usr/bin/env python3
"""Copy assets/template to a new folder, filling APP_NAME and APP_TITLE."""
import pathlib
import re
import shutil
import sys

HERE = pathlib.Path(__file__).resolve().parent.parent / "assets" / "template"


def main(dest, title):
    dest = pathlib.Path(dest)
    if dest.exists() and any(dest.iterdir()):
        sys.exit(f"{dest} exists and is not empty")
    name = re.sub(r"[^a-z0-9-]+", "-", title.lower()).strip("-")
    shutil.copytree(HERE, dest, dirs_exist_ok=True)
    for p in dest.rglob("*"):
        if p.is_file():
            t = p.read_text(encoding="utf-8")
            t2 = t.replace("APP_NAME", name).replace("APP_TITLE", title)
            if t2 != t:
                p.write_text(t2, encoding="utf-8")
    print(f"created {dest}; next: cd {dest} && npm ci && npm run dev")


if __name__ == "__main__":
    main(sys.argv[1], " ".join(sys.argv[2:]) or "My app")
