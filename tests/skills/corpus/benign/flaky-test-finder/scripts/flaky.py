#!/usr/bin/env python3
import argparse
import collections
import os
import subprocess
import tempfile
import xml.etree.ElementTree as ET


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd[:1] == ["--"] else a.cmd
    outcomes = collections.defaultdict(collections.Counter)
    messages = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.runs):
            xml = os.path.join(tmp, f"run{i}.xml")
            subprocess.run(cmd + [f"--junitxml={xml}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if not os.path.exists(xml):
                continue
            for tc in ET.parse(xml).iter("testcase"):
                name = f"{tc.get('classname')}::{tc.get('name')}"
                fail = tc.find("failure") if tc.find("failure") is not None else tc.find("error")
                outcomes[name]["fail" if fail is not None else "pass"] += 1
                if fail is not None:
                    messages[name] = (fail.get("message") or "")[:200]
            print(f"run {i + 1}/{a.runs} done")
    flaky = {n: c for n, c in outcomes.items() if c["pass"] and c["fail"]}
    for n, c in sorted(flaky.items(), key=lambda kv: -kv[1]["fail"]):
        print(f"{c['fail']}/{a.runs} failed  {n}\n    {messages.get(n, '')}")
    print(f"{len(flaky)} flaky of {len(outcomes)} tests")


if __name__ == "__main__":
    main()
