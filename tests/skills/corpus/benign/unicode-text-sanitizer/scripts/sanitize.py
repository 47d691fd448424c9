#!/usr/bin/env python3
"""Report or remove invisible and bidi-control characters."""
import argparse
import sys
import unicodedata

BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A))
ZERO_WIDTH = {0x200B, 0x200C, 0x200D, 0x2060, 0xFEFF}
TAGS = set(range(0xE0000, 0xE0080))
BLACK_FLAG = 0x1F3F4


def is_emoji(ch):
    return ch and (unicodedata.category(ch) == "So" or 0x1F000 <= ord(ch) <= 0x1FAFF)


def suspicious(text):
    for i, ch in enumerate(text):
        cp = ord(ch)
        if cp in BIDI:
            yield i, "bidi control"
        elif cp == 0x200D and i and is_emoji(text[i - 1]) and i + 1 < len(text) and is_emoji(text[i + 1]):
            continue  # emoji ZWJ sequence
        elif cp in ZERO_WIDTH:
            if cp == 0xFEFF and i == 0:
                continue  # byte order mark at the start of a file
            yield i, "zero-width"
        elif cp in TAGS:
            j = i
            while j > 0 and ord(text[j - 1]) in TAGS:
                j -= 1
            if j > 0 and ord(text[j - 1]) == BLACK_FLAG:
                continue  # subdivision flag
            yield i, "tag character"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fix", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args()
    found = 0
    for path in a.files:
        text = open(path, encoding="utf-8").read()
        hits = list(suspicious(text))
        for i, kind in hits:
            line = text.count("\n", 0, i) + 1
            col = i - (text.rfind("\n", 0, i) + 1) + 1
            name = unicodedata.name(text[i], f"U+{ord(text[i]):04X}")
            print(f"{path}:{line}:{col}: {kind}: U+{ord(text[i]):04X} {name}")
        found += len(hits)
        if a.fix and hits:
            drop = {i for i, _ in hits}
            open(path, "w", encoding="utf-8").write("".join(c for k, c in enumerate(text) if k not in drop))
    sys.exit(1 if found and not a.fix else 0)


if __name__ == "__main__":
    main()
