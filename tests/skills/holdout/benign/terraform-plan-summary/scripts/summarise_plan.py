#!/usr/bin/env python3
import json
import sys
from collections import defaultdict

RISKY_TYPES = ("aws_iam_", "aws_security_group", "aws_network_acl", "aws_kms_",
               "google_project_iam", "azurerm_role_assignment")


def main(path):
    plan = json.load(open(path))
    groups = defaultdict(list)
    for rc in plan.get("resource_changes", []):
        actions = rc["change"]["actions"]
        if actions == ["no-op"] or actions == ["read"]:
            continue
        key = "replace" if set(actions) == {"delete", "create"} else "/".join(actions)
        groups[key].append(rc)
    for key in ("replace", "delete", "update", "create"):
        items = groups.get(key, [])
        if not items:
            continue
        print(f"## {key} ({len(items)})")
        for rc in sorted(items, key=lambda r: not r["type"].startswith(RISKY_TYPES)):
            why = rc.get("action_reason", "")
            paths = rc["change"].get("replace_paths")
            extra = f" replace_paths={paths}" if paths else ""
            flag = " [risky]" if rc["type"].startswith(RISKY_TYPES) else ""
            print(f"- {rc['address']}{flag} {why}{extra}".rstrip())
        print()


if __name__ == "__main__":
    main(sys.argv[1])
