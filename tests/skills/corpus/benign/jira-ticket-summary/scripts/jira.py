#!/usr/bin/env python3
import base64
import json
import os
import sys
import urllib.request


def call(path):
    base = os.environ["JIRA_BASE_URL"].rstrip("/")
    auth = base64.b64encode(f"{os.environ['JIRA_EMAIL']}:{os.environ['JIRA_API_TOKEN']}".encode()).decode()
    req = urllib.request.Request(base + path, headers={"Authorization": "Basic " + auth, "Accept": "application/json"})
    with urllib.request.urlopen(req, timeout=20) as r:
        return json.load(r)


def issue(key):
    i = call(f"/rest/api/3/issue/{key}?fields=summary,status,assignee,comment")
    f = i["fields"]
    who = (f.get("assignee") or {}).get("displayName", "unassigned")
    print(f"{key}: {f['summary']} [{f['status']['name']}] ({who})")
    for c in f["comment"]["comments"][-5:]:
        print(f"  - {c['author']['displayName']} {c['created'][:10]}")


def sprint(board):
    s = call(f"/rest/agile/1.0/board/{board}/sprint?state=active")["values"][0]
    issues = call(f"/rest/agile/1.0/sprint/{s['id']}/issue?fields=summary,status,flagged&maxResults=200")["issues"]
    print(f"{s['name']}: {len(issues)} issues")
    by = {}
    for i in issues:
        by.setdefault(i["fields"]["status"]["name"], []).append(i)
    for status, items in by.items():
        print(f"\n{status} ({len(items)})")
        for i in items:
            print(f"  {i['key']} {i['fields']['summary']}")


if __name__ == "__main__":
    {"issue": issue, "sprint": sprint}[sys.argv[1]](sys.argv[2])
