#!/usr/bin/env python3
"""Suggest labels and find duplicates among new issues (api.github.com)."""
import argparse
import datetime
import difflib
import json
import os
import pathlib
import re
import urllib.request

API = "https://api.github.com"
RULES = json.loads((pathlib.Path(__file__).resolve().parent.parent / "assets" / "label-rules.json").read_text())


def gh(path, method="GET", body=None):
    token = os.environ["GITHUB_TOKEN"]
    req = urllib.request.Request(
        API + path, method=method,
        data=json.dumps(body).encode() if body is not None else None,
        headers={"Authorization": f"Bearer {token}",
                 "Accept": "application/vnd.github+json",
                 "X-GitHub-Api-Version": "2022-11-28"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def suggest(issue):
    text = f"{issue['title']}\n{issue.get('body') or ''}".lower()
    return sorted({label for label, words in RULES.items() if any(re.search(rf"\b{re.escape(w)}\b", text) for w in words)})


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("repo")
    ap.add_argument("--days", type=int, default=14)
    ap.add_argument("--apply", action="store_true")
    a = ap.parse_args()
    since = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=a.days)).isoformat()
    issues = [i for i in gh(f"/repos/{a.repo}/issues?state=open&since={since}&per_page=100")
              if "pull_request" not in i]
    all_titles = {i["number"]: i["title"] for i in gh(f"/repos/{a.repo}/issues?state=all&per_page=100")}
    for i in issues:
        if i["labels"]:
            continue
        labels = suggest(i)
        dups = [n for n, t in all_titles.items() if n != i["number"]
                and difflib.SequenceMatcher(None, t.lower(), i["title"].lower()).ratio() > 0.8]
        print(f"#{i['number']} {i['title']}\n    labels: {labels or '-'}"
              + (f"\n    possible duplicates: {', '.join('#' + str(n) for n in dups)}" if dups else ""))
        if a.apply and labels:
            gh(f"/repos/{a.repo}/issues/{i['number']}/labels", "POST", {"labels": labels})


if __name__ == "__main__":
    main()
