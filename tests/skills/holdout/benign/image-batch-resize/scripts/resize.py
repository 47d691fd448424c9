#!/usr/bin/env python3
import argparse
import pathlib
import sys

from PIL import Image, ImageOps


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("src", type=pathlib.Path)
    ap.add_argument("dst", type=pathlib.Path)
    ap.add_argument("--max", type=int, default=1600)
    ap.add_argument("--format", default="webp", choices=["webp", "jpeg", "png", "avif"])
    ap.add_argument("--quality", type=int, default=85)
    ap.add_argument("--keep-metadata", action="store_true")
    a = ap.parse_args()
    if a.src.resolve() == a.dst.resolve():
        sys.exit("output directory must differ from input")
    a.dst.mkdir(parents=True, exist_ok=True)
    failed = []
    for p in sorted(a.src.iterdir()):
        if not p.is_file():
            continue
        try:
            with Image.open(p) as im:
                im = ImageOps.exif_transpose(im)
                im.thumbnail((a.max, a.max))
                kw = {"quality": a.quality}
                if a.keep_metadata and "exif" in im.info:
                    kw["exif"] = im.info["exif"]
                if a.format == "jpeg" and im.mode in ("RGBA", "P"):
                    im = im.convert("RGB")
                out = a.dst / (p.stem + "." + ("jpg" if a.format == "jpeg" else a.format))
                im.save(out, a.format.upper(), **kw)
                print(p.name, "->", out.name, im.size)
        except OSError as e:
            failed.append((p.name, str(e)))
    for name, err in failed:
        print("skipped", name, err, file=sys.stderr)


if __name__ == "__main__":
    main()
