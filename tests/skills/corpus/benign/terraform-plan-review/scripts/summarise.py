#!/usr/bin/env python3
"""Summarise terraform show -json output, riskiest first."""
import json
import sys

RISKY_TYPES = ("aws_iam_", "aws_security_group", "google_project_iam", "azurerm_role",
               "aws_db_instance", "aws_s3_bucket", "google_sql_database_instance")
ORDER = {"delete": 0, "replace": 1, "update": 2, "create": 3}


def action(actions):
    if actions == ["no-op"] or actions == ["read"]:
        return None
    if "delete" in actions and "create" in actions:
        return "replace"
    return actions[0]


def main(path):
    with open(path, encoding="utf-8") as f:
        plan = json.load(f)
    rows = []
    for rc in plan.get("resource_changes", []):
        a = action(rc["change"]["actions"])
        if a:
            risky = rc["type"].startswith(RISKY_TYPES)
            rows.append((ORDER[a], not risky, a, rc["address"], risky))
    rows.sort()
    counts = {}
    for _, _, a, addr, risky in rows:
        counts[a] = counts.get(a, 0) + 1
        print(f"{a:8} {addr}{'  <-- review' if risky or a in ('delete', 'replace') else ''}")
    print(", ".join(f"{n} to {a}" for a, n in counts.items()) or "no changes")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tfplan.json")
