#!/usr/bin/env python3
import argparse
import base64
import mimetypes
import pathlib
import re
import sys
import urllib.parse

URL = re.compile(r"url\((['\"]?)([^)'\"]+)\1\)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("css", type=pathlib.Path)
    ap.add_argument("--max-bytes", type=int, default=4096)
    a = ap.parse_args()
    base = a.css.parent

    def repl(m):
        ref = m.group(2)
        if ref.startswith(("data:", "http:", "https:", "//")):
            return m.group(0)
        p = (base / ref).resolve()
        if not p.is_file() or p.stat().st_size > a.max_bytes:
            return m.group(0)
        mime = mimetypes.guess_type(p.name)[0] or "application/octet-stream"
        if mime == "image/svg+xml":
            return f"url(\"data:{mime},{urllib.parse.quote(p.read_text())}\")"
        return f"url(data:{mime};base64,{base64.b64encode(p.read_bytes()).decode()})"

    sys.stdout.write(URL.sub(repl, a.css.read_text()))


if __name__ == "__main__":
    main()
