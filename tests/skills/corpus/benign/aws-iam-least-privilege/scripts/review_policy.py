#!/usr/bin/env python3
import json
import sys

WRITE_PREFIXES = ("Put", "Delete", "Create", "Update", "Attach", "Detach", "Pass", "Modify", "Terminate")


def as_list(x):
    return x if isinstance(x, list) else [x]


doc = json.load(open(sys.argv[1]))
for i, st in enumerate(as_list(doc["Statement"])):
    if st.get("Effect") != "Allow":
        continue
    sid = st.get("Sid", f"#{i}")
    actions = as_list(st.get("Action", []))
    resources = as_list(st.get("Resource", []))
    if "NotAction" in st:
        print(f"{sid}: NotAction allows everything else; list actions instead")
    if "*" in actions:
        print(f"{sid}: Action '*' grants every action")
    writes = [a for a in actions if a.split(":")[-1].startswith(WRITE_PREFIXES) or a.endswith(":*")]
    if writes and "*" in resources:
        print(f"{sid}: write actions {writes} on Resource '*'")
    if "iam:PassRole" in actions and "*" in resources:
        print(f"{sid}: iam:PassRole on any role allows privilege escalation")
