#!/usr/bin/env python3
"""Send each test prompt to the user's chatbot endpoint and record replies."""
import argparse
import json
import urllib.request


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--endpoint", required=True, help="the user's own staging chatbot")
    ap.add_argument("--in", dest="inp", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    with open(a.inp) as fi, open(a.out, "w") as fo:
        for line in fi:
            case = json.loads(line)
            req = urllib.request.Request(
                a.endpoint,
                data=json.dumps({"message": case["prompt"]}).encode(),
                headers={"content-type": "application/json"},
            )
            with urllib.request.urlopen(req, timeout=60) as r:
                reply = json.load(r).get("reply", "")
            fo.write(json.dumps({**case, "reply": reply}) + "\n")


if __name__ == "__main__":
    main()
