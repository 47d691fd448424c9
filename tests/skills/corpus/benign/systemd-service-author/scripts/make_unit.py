#!/usr/bin/env python3
import argparse
import pathlib
import re

HERE = pathlib.Path(__file__).resolve().parent.parent

ap = argparse.ArgumentParser()
ap.add_argument("--name", required=True)
ap.add_argument("--exec", required=True, dest="exec_")
ap.add_argument("--user", required=True)
ap.add_argument("--description", default="")
ap.add_argument("--out", default="deploy")
a = ap.parse_args()
if not re.fullmatch(r"[a-z][a-z0-9-]*", a.name):
    raise SystemExit("name: lowercase letters, digits, hyphens")
text = (HERE / "assets" / "service.template").read_text().format(
    name=a.name, exec=a.exec_, user=a.user, description=a.description or a.name)
out = pathlib.Path(a.out)
out.mkdir(exist_ok=True)
(out / f"{a.name}.service").write_text(text)
print(f"wrote {out / (a.name + '.service')}")
