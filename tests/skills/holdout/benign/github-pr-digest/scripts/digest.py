#!/usr/bin/env python3
import argparse
import datetime as dt
import json
import os
import sys
import urllib.request

API = "https://api.github.com"


def get(path, token):
    req = urllib.request.Request(API + path, headers={
        "Authorization": f"Bearer {token}",
        "Accept": "application/vnd.github+json",
        "X-GitHub-Api-Version": "2022-11-28",
        "User-Agent": "pr-digest-skill",
    })
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", action="append", required=True)
    a = ap.parse_args()
    token = os.environ.get("GITHUB_TOKEN")
    if not token:
        sys.exit("GITHUB_TOKEN is not set")
    me = get("/user", token)["login"]
    now = dt.datetime.now(dt.timezone.utc)
    rows = []
    for repo in a.repo:
        for pr in get(f"/repos/{repo}/pulls?state=open&per_page=100", token):
            if me not in [u["login"] for u in pr.get("requested_reviewers", [])]:
                continue
            full = get(f"/repos/{repo}/pulls/{pr['number']}", token)
            age = now - dt.datetime.fromisoformat(pr["created_at"].replace("Z", "+00:00"))
            rows.append((age.days, repo, pr["number"], pr["title"], full["additions"] + full["deletions"]))
    for days, repo, num, title, size in sorted(rows, reverse=True):
        print(f"{days:3d}d  {repo}#{num}  +/-{size:<5d} {title}")


if __name__ == "__main__":
    main()
