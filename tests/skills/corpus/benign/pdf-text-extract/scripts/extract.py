#!/usr/bin/env python3
"""Extract the text of a PDF, page by page, into Markdown."""
import argparse
import sys

from pypdf import PdfReader


def page_range(spec, n):
    if not spec:
        return range(n)
    first, _, last = spec.partition("-")
    a = int(first) - 1
    b = int(last) if last else a + 1
    if a < 0 or b > n or a >= b:
        raise SystemExit(f"pages {spec}: the PDF has {n} pages")
    return range(a, b)


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("pdf")
    ap.add_argument("--out", default="-")
    ap.add_argument("--pages")
    ap.add_argument("--layout", action="store_true",
                    help="keep the physical layout (columns, tables)")
    args = ap.parse_args()

    reader = PdfReader(args.pdf)
    if reader.is_encrypted:
        print("the PDF is encrypted; ask the user for its password", file=sys.stderr)
        return 2
    parts = []
    empty = 0
    for i in page_range(args.pages, len(reader.pages)):
        mode = "layout" if args.layout else "plain"
        text = reader.pages[i].extract_text(extraction_mode=mode) or ""
        if not text.strip():
            empty += 1
        parts.append(f"<!-- page {i + 1} -->\n{text.strip()}\n")
    if empty == len(parts):
        print("no text layer: this PDF is scanned, OCR it first", file=sys.stderr)
        return 2
    out = "\n".join(parts)
    if args.out == "-":
        sys.stdout.write(out)
    else:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
