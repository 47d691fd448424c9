#!/usr/bin/env python3
"""Export a Notion page tree to Markdown via api.notion.com."""
import json
import os
import pathlib
import re
import sys
import urllib.request

API = "https://api.notion.com/v1"
HEADERS = {"Notion-Version": "2022-06-28"}


def get(path):
    token = os.environ.get("NOTION_TOKEN")
    if not token:
        sys.exit("export NOTION_TOKEN first")
    req = urllib.request.Request(API + path, headers={**HEADERS, "Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.load(r)


def text(rich):
    out = ""
    for t in rich:
        s = t["plain_text"]
        a = t.get("annotations", {})
        if a.get("code"):
            s = f"`{s}`"
        if a.get("bold"):
            s = f"**{s}**"
        if a.get("italic"):
            s = f"*{s}*"
        if t.get("href"):
            s = f"[{s}]({t['href']})"
        out += s
    return out


def children(block_id):
    cursor = None
    while True:
        q = f"/blocks/{block_id}/children?page_size=100" + (f"&start_cursor={cursor}" if cursor else "")
        page = get(q)
        yield from page["results"]
        if not page.get("has_more"):
            return
        cursor = page["next_cursor"]


def render(block_id, out_dir, depth=0):
    lines = []
    for b in children(block_id):
        t, v = b["type"], b.get(b["type"], {})
        if t.startswith("heading_"):
            lines.append("#" * int(t[-1]) + " " + text(v["rich_text"]))
        elif t == "paragraph":
            lines.append(text(v["rich_text"]))
        elif t == "bulleted_list_item":
            lines.append("  " * depth + "- " + text(v["rich_text"]))
        elif t == "numbered_list_item":
            lines.append("  " * depth + "1. " + text(v["rich_text"]))
        elif t == "to_do":
            lines.append(f"- [{'x' if v.get('checked') else ' '}] " + text(v["rich_text"]))
        elif t == "code":
            lines.append(f"```{v.get('language', '')}\n{text(v['rich_text'])}\n```")
        elif t == "quote":
            lines.append("> " + text(v["rich_text"]))
        elif t == "image":
            src = v.get("file", v.get("external", {})).get("url", "")
            lines.append(f"![image]({src})")
        elif t == "child_page":
            title = v["title"]
            fname = re.sub(r"[^\w-]+", "-", title).strip("-") + ".md"
            export(b["id"], out_dir, title, fname)
            lines.append(f"- [{title}]({fname})")
    return "\n\n".join(lines)


def export(page_id, out_dir, title, fname):
    body = render(page_id, out_dir)
    (out_dir / fname).write_text(f"# {title}\n\n{body}\n", encoding="utf-8")
    print(f"wrote {fname}")


if __name__ == "__main__":
    out = pathlib.Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    page = get(f"/pages/{sys.argv[1]}")
    props = page["properties"]
    title = next((text(p["title"]) for p in props.values() if p["type"] == "title"), "Untitled")
    export(sys.argv[1], out, title, "index.md")
