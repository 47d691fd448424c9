#!/usr/bin/env python3
import sys

MAGIC = [
    (b"%PDF-", "PDF document"),
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF8", "GIF image"),
    (b"PK\x03\x04", "ZIP archive (also docx, xlsx, jar, apk)"),
    (b"\x1f\x8b", "gzip"),
    (b"\x7fELF", "ELF executable"),
    (b"\xcf\xfa\xed\xfe", "Mach-O 64-bit"),
    (b"MZ", "Windows PE executable"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"wOF2", "WOFF2 font"),
]

for path in sys.argv[1:]:
    head = open(path, "rb").read(32)
    kind = next((name for sig, name in MAGIC if head.startswith(sig)), "unknown")
    print(f"{path}: {kind}  [{head[:16].hex(' ')}]")
