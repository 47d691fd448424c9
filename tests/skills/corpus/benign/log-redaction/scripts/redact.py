#!/usr/bin/env python3
import collections
import re
import sys

PATTERNS = [
    ("auth-header", re.compile(r"(?i)(authorization:\s*(?:bearer|basic|token)\s+)\S+"), r"\1[REDACTED:auth]"),
    ("param", re.compile(r"(?i)\b(password|passwd|token|secret|api_key)=([^&\s]+)"), r"\1=[REDACTED:param]"),
    ("aws-key-id", re.compile(r"\b(AKIA|ASIA)[A-Z0-9]{16}\b"), "[REDACTED:aws-key-id]"),
    ("github-token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{36,}\b"), "[REDACTED:github-token]"),
    ("slack-token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}\b"), "[REDACTED:slack-token]"),
    ("private-key", re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.S), "[REDACTED:private-key]"),
    ("email", re.compile(r"\b([A-Za-z0-9._%+-]+)@([A-Za-z0-9.-]+\.[A-Za-z]{2,})\b"), r"user@[REDACTED]"),
    ("ipv4", re.compile(r"\b(\d{1,3}\.\d{1,3}\.\d{1,3})\.\d{1,3}\b"), r"\1.x"),
]
CARD = re.compile(r"\b(?:\d[ -]?){13,19}\b")


def luhn(digits):
    total = 0
    for i, ch in enumerate(reversed(digits)):
        n = int(ch)
        if i % 2:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def main():
    text = sys.stdin.read()
    counts = collections.Counter()
    for kind, rx, repl in PATTERNS:
        text, n = rx.subn(repl, text)
        counts[kind] += n

    def card(m):
        digits = re.sub(r"\D", "", m[0])
        if luhn(digits):
            counts["card"] += 1
            return "[REDACTED:card]"
        return m[0]
    text = CARD.sub(card, text)
    sys.stdout.write(text)
    for k, n in counts.items():
        if n:
            print(f"{k}: {n}", file=sys.stderr)


if __name__ == "__main__":
    main()
