#!/usr/bin/env python3
import argparse
import base64
import binascii
import json
import sys


def pad(s):
    return s + "=" * (-len(s) % 4)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["encode", "decode", "jwt"])
    ap.add_argument("arg", help="file (encode/decode, - for stdin) or a JWT")
    ap.add_argument("--url", action="store_true")
    ap.add_argument("--wrap", type=int, default=0)
    ap.add_argument("-o", "--out")
    a = ap.parse_args()
    if a.cmd == "jwt":
        head, payload, _sig = a.arg.split(".")
        for part in (head, payload):
            print(json.dumps(json.loads(base64.urlsafe_b64decode(pad(part))), indent=2))
        print("(signature not verified)")
        return
    data = sys.stdin.buffer.read() if a.arg == "-" else open(a.arg, "rb").read()
    if a.cmd == "encode":
        s = (base64.urlsafe_b64encode if a.url else base64.b64encode)(data).decode()
        if a.wrap:
            s = "\n".join(s[i:i + a.wrap] for i in range(0, len(s), a.wrap))
        out = (s + "\n").encode()
    else:
        text = b"".join(data.split()).decode()
        try:
            if a.url:
                out = base64.urlsafe_b64decode(pad(text))
            else:
                out = base64.b64decode(pad(text), validate=True)
        except binascii.Error as e:
            sys.exit(f"not valid Base64: {e}")
    if a.out:
        open(a.out, "wb").write(out)
    else:
        sys.stdout.buffer.write(out)


if __name__ == "__main__":
    main()
