#!/usr/bin/env python3
"""Decode string literals in a JavaScript file. Prints only; evaluates nothing."""
import base64
import binascii
import re
import sys

STR = re.compile(r"""(['"])((?:\\.|(?!\1).)*)\1""")
ATOB = re.compile(r"""(?:atob|Buffer\.from)\(\s*(['"])([A-Za-z0-9+/=]{8,})\1""")
CHARCODES = re.compile(r"String\.fromCharCode\(([\d,\s]+)\)")


def unescape(s):
    s = re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m[1], 16)), s)
    return re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m[1], 16)), s)


def main(path):
    src = open(path, encoding="utf-8", errors="replace").read()
    for m in STR.finditer(src):
        raw = m[2]
        if "\\x" in raw or "\\u" in raw:
            print(f"escaped  {raw[:60]!r} -> {unescape(raw)[:200]!r}")
    for m in ATOB.finditer(src):
        try:
            text = base64.b64decode(m[2]).decode("utf-8", "replace")
        except binascii.Error:
            continue
        print(f"base64   {m[2][:40]}... -> {text[:200]!r}")
    for m in CHARCODES.finditer(src):
        codes = [int(c) for c in m[1].split(",") if c.strip()]
        print(f"charcode {len(codes)} codes -> {''.join(map(chr, codes))[:200]!r}")
    for word in ("eval(", "new Function(", "document.cookie", "sendBeacon", "localStorage"):
        n = src.count(word)
        if n:
            print(f"uses     {word} x{n}")


if __name__ == "__main__":
    main(sys.argv[1])
