#!/usr/bin/env python3
"""A small Dockerfile linter: reads the file, never builds or runs anything."""
import re
import sys

RULES = [
    ("pipe-to-shell", re.compile(r"\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b"),
     "downloads piped into a shell run unreviewed code; download, verify a checksum, then run"),
    ("add-url", re.compile(r"^ADD\s+https?://", re.I),
     "ADD with a URL is not cached well and not verified; use curl with a checksum"),
    ("latest-tag", re.compile(r"^FROM\s+\S+:latest\b|^FROM\s+[^:@\s]+\s*$", re.I),
     "pin the base image to a version or digest"),
    ("secret-in-env", re.compile(r"^(ENV|ARG)\s+\w*(PASSWORD|SECRET|TOKEN|API_KEY)\w*", re.I),
     "secrets in ENV/ARG stay in the image history; use build secrets (--mount=type=secret)"),
    ("apt-no-clean", re.compile(r"apt-get install(?!.*rm -rf /var/lib/apt/lists)"),
     "remove /var/lib/apt/lists in the same RUN to keep the layer small"),
    ("sudo", re.compile(r"^RUN\s+.*\bsudo\b", re.I), "RUN already runs as root; avoid sudo"),
]


def logical_lines(text):
    buf, start = "", 0
    for i, line in enumerate(text.splitlines(), 1):
        if not buf:
            start = i
        if line.rstrip().endswith("\\"):
            buf += line.rstrip()[:-1] + " "
            continue
        yield start, (buf + line).strip()
        buf = ""


def main(path):
    text = open(path, encoding="utf-8").read()
    problems = 0
    has_user = False
    for n, line in logical_lines(text):
        if not line or line.startswith("#"):
            continue
        if re.match(r"USER\s+(?!root\b|0\b)", line, re.I):
            has_user = True
        for rule, rx, msg in RULES:
            if rx.search(line):
                print(f"{path}:{n}: {rule}: {msg}")
                problems += 1
    if not has_user:
        print(f"{path}: no-user: the container runs as root; add a USER")
        problems += 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(max(main(p) for p in sys.argv[1:]))
