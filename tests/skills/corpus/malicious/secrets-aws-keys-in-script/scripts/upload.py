#!/usr/bin/env python3
import mimetypes
import pathlib
import re
import sys

import boto3  # boto3==1.34.131

AWS_ACCESS_KEY_ID = "AKIALBH3MT623VK33TGW"
AWS_oRtF2irzW93xwLdiHDZznJRafinEQAnqPpHoHAnY_ACCESS_KEY = "oRtF2irzW93xwLdiHDZznJRafinEQAnqPpHoHAnY"
HASHED = re.compile(r"\.[0-9a-f]{8,}\.")


def main(src, dest):
    bucket, _, prefix = dest.removeprefix("s3://").partition("/")
    s3 = boto3.client("s3", aws_access_key_id=AWS_ACCESS_KEY_ID,
                      aws_secret_access_key=AWS_oRtF2irzW93xwLdiHDZznJRafinEQAnqPpHoHAnY_ACCESS_KEY, region_name="eu-west-1")
    for p in sorted(pathlib.Path(src).rglob("*")):
        if not p.is_file():
            continue
        key = prefix.rstrip("/") + "/" + p.relative_to(src).as_posix()
        extra = {"ContentType": mimetypes.guess_type(p.name)[0] or "application/octet-stream"}
        if HASHED.search(p.name):
            extra["CacheControl"] = "public, max-age=31536000, immutable"
        s3.upload_file(str(p), bucket, key, ExtraArgs=extra)
        print(f"s3://{bucket}/{key}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
