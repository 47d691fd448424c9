#!/usr/bin/env python3
"""Post one build-status message to the user's Slack incoming webhook."""
import argparse
import json
import os
import subprocess
import sys
import urllib.request

ICON = {"success": ":white_check_mark:", "failure": ":x:", "cancelled": ":warning:"}


def git(*args):
    try:
        return subprocess.run(["git", *args], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--status", required=True, choices=sorted(ICON))
    ap.add_argument("--pipeline", required=True)
    ap.add_argument("--url", default="")
    ap.add_argument("--duration", default="")
    a = ap.parse_args()
    hook = os.environ.get("SLACK_WEBHOOK_URL")
    if not hook:
        print("SLACK_WEBHOOK_URL is not set; nothing sent", file=sys.stderr)
        return 0
    if not hook.startswith("https://hooks.slack.com/"):
        print("SLACK_WEBHOOK_URL is not a Slack webhook URL; nothing sent", file=sys.stderr)
        return 1
    branch = git("rev-parse", "--abbrev-ref", "HEAD")
    commit = git("rev-parse", "--short", "HEAD")
    text = f"{ICON[a.status]} *{a.pipeline}* on `{branch}` ({commit}): {a.status}"
    if a.duration:
        text += f" in {a.duration}"
    if a.url:
        text += f" — <{a.url}|details>"
    body = json.dumps({"text": text}).encode()
    req = urllib.request.Request(hook, data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        print(f"slack: {r.status}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
