#!/usr/bin/env python3
"""Decode common obfuscation layers statically. Prints; never executes."""
import base64
import binascii
import gzip
import re
import sys
import zlib

B64 = re.compile(r"[A-Za-z0-9+/]{40,}={0,2}")
HEX = re.compile(r"(?:[0-9a-fA-F]{2}){20,}")
CHARCODES = re.compile(r"(?:fromCharCode|\[char\[\]\])\s*\(?\s*((?:\d{2,3}\s*,\s*)+\d{2,3})")


def try_decompress(b):
    for f in (gzip.decompress, zlib.decompress, lambda x: zlib.decompress(x, -15)):
        try:
            return f(b)
        except Exception:
            pass
    return b


def as_text(b):
    if len(b) > 3 and b[1] == 0 and b[3] == 0:
        return b.decode("utf-16le", "replace")
    return b.decode("utf-8", "replace")


def peel(text, depth=0):
    if depth > 8:
        return
    for rx, kind in ((B64, "base64"), (HEX, "hex")):
        for m in rx.finditer(text):
            try:
                raw = base64.b64decode(m.group(0)) if kind == "base64" else binascii.unhexlify(m.group(0))
            except (binascii.Error, ValueError):
                continue
            out = as_text(try_decompress(raw))
            if sum(c.isprintable() for c in out) < 0.9 * len(out):
                continue
            print(f"{'  ' * depth}[{kind} layer {depth + 1}] {out[:400]!r}")
            peel(out, depth + 1)
    for m in CHARCODES.finditer(text):
        out = "".join(chr(int(n)) for n in m.group(1).split(","))
        print(f"{'  ' * depth}[charcodes] {out[:400]!r}")
        peel(out, depth + 1)


peel(open(sys.argv[1], errors="replace").read())
