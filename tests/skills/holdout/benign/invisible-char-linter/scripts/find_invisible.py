#!/usr/bin/env python3
import pathlib
import sys
import unicodedata

BIDI = set(range(0x202A, 0x202F)) | set(range(0x2066, 0x206A)) | {0x200E, 0x200F, 0x061C}
ZW = {0x200B, 0x2060, 0xFEFF, 0x180E}
TAGS = range(0xE0000, 0xE0080)
VS = set(range(0xFE00, 0xFE10)) | set(range(0xE0100, 0xE01F0))
JOINERS = {0x200C, 0x200D}


def is_emoji(ch):
    return ch and (unicodedata.category(ch) == "So" or 0x1F000 <= ord(ch) <= 0x1FAFF)


def is_joining_script(ch):
    return ch and ("ARABIC" in unicodedata.name(ch, "") or "DEVANAGARI" in unicodedata.name(ch, "")
                   or "BENGALI" in unicodedata.name(ch, ""))


def suspicious(text, i):
    cp = ord(text[i])
    prev = text[i - 1] if i else ""
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if cp in BIDI or cp in ZW or cp in TAGS:
        if cp in TAGS and prev and (ord(prev) == 0x1F3F4 or ord(prev) in TAGS):
            return False  # subdivision flag sequence
        return True
    if cp in JOINERS:
        if cp == 0x200D and (is_emoji(prev) or is_emoji(nxt)):
            return False
        if cp == 0x200C and (is_joining_script(prev) and is_joining_script(nxt)):
            return False
        return True
    if cp in VS:
        return not (cp in (0xFE0E, 0xFE0F) and (is_emoji(prev) or ord(prev or " ") < 0x3000))
    return False


def main(args):
    fix = "--fix" in args
    hits = 0
    for arg in (a for a in args if a != "--fix"):
        for p in (pathlib.Path(arg).rglob("*") if pathlib.Path(arg).is_dir() else [pathlib.Path(arg)]):
            if not p.is_file():
                continue
            try:
                text = p.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            keep = []
            line, col = 1, 0
            for i, ch in enumerate(text):
                col += 1
                if ch == "\n":
                    line, col = line + 1, 0
                if suspicious(text, i):
                    hits += 1
                    print(f"{p}:{line}:{col} U+{ord(ch):04X} {unicodedata.name(ch, '?')}")
                    if fix:
                        continue
                keep.append(ch)
            if fix:
                p.write_text("".join(keep), encoding="utf-8")
    return 1 if hits and not fix else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
