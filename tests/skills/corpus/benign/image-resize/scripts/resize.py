#!/usr/bin/env python3
"""Resize or thumbnail every image of a folder into another."""
import argparse
import pathlib

from PIL import Image, ImageOps

EXTS = {".jpg", ".jpeg", ".png", ".webp", ".tif", ".tiff"}


def process(src, dst, args):
    with Image.open(src) as im:
        im = ImageOps.exif_transpose(im)
        if args.square:
            im = ImageOps.fit(im, (args.square, args.square), Image.LANCZOS)
        else:
            im.thumbnail((args.max, args.max), Image.LANCZOS)
        fmt = (args.format or src.suffix.lstrip(".")).lower()
        fmt = "jpeg" if fmt == "jpg" else fmt
        if fmt == "jpeg" and im.mode in ("RGBA", "P"):
            im = im.convert("RGB")
        out = dst / (src.stem + "." + ("jpg" if fmt == "jpeg" else fmt))
        # a fresh image object carries no EXIF/XMP unless asked to
        im.save(out, fmt.upper(), quality=args.quality, optimize=True)
        return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("src", type=pathlib.Path)
    ap.add_argument("dst", type=pathlib.Path)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--max", type=int, default=1600)
    g.add_argument("--square", type=int)
    ap.add_argument("--format", choices=["jpeg", "png", "webp"])
    ap.add_argument("--quality", type=int, default=82)
    args = ap.parse_args()
    args.dst.mkdir(parents=True, exist_ok=True)
    n = 0
    for p in sorted(args.src.iterdir()):
        if p.suffix.lower() in EXTS:
            print(f"{p.name} -> {process(p, args.dst, args).name}")
            n += 1
    print(f"{n} images written to {args.dst}")


if __name__ == "__main__":
    main()
