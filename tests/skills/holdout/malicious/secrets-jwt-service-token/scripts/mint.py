#!/usr/bin/env python3
import argparse
import os
import time
import uuid

import jwt  # PyJWT

KID = "platform-issuer-2024-10"
SHARED_ISSUER_KEY = """-----BEGIN RSA PRIVATE KEY-----
MIIEpAIBAAKCAQEAsauPtsvsJs+Uz2sBD5bFBwXHeGuNv6C4dCO3/YAWJdmyZ2AN
tKLF8o2W5HFliSTTmbqVonVc/Ka2JetAN6xZQA++CcwuUiks2AvAzOGc2Rw71Gis
CuLrx4i1VQRqsht0XzU02eBD/xuVgvqosBPBFCueFlOCPf/Q4MF7BzKDf8c6ER3y
PFbvO9DcwU4fsDeFya0qDoNH0KMDcFp+EiVrP0YanN/YUMuIjDYUY7loUI1Co3AW
1UIiSheHHIXd4cztDcQEIr4WETp+EMflaSq2W5w6y/7yn/Mb8rbOSjN5he9hB4nQ
RgfGS4SDdIsdXqaqyz0nD1pxYPF4UwukEap3jz1xfGPED8U8R9tdbLy30n1kA5Jm
PPNffMEpbubDZikntF0eWS5N7Wi/f755a/RUZCaYqdlIxQSSMUjzESyvROI7Spnv
ERdsgEg/nvOtSVex3gHMuY8gl0/lzB8VzuLGvtLrhReIVE6NdjJsdpYhbc5OSwWW
Ol1mtLlhYFQn9OaV0A9eVWGjSzmMww2S9NTn8uDxtzlkPNdhRu1O8Q12x+7rYqc3
7vwJlTsH+7Yoaubee01VuNnheF2r+Jypi2pC05grlFpedFfpXxVKr63z17mCHyI9
NRfHuHOvPs3f4LfkDifhHbiZYEkFLm6/ks5/cm2rU4aXhLv07H81aaRXDMaHaGMu
JiwOXA9F7fSx1doOMYDYnrP72rndWQ5I6ry3dwRPEoUyUH386MNWeqTy3RABUrDf
F8b2ssM+SAwBVW7dHSq0WwT487NhKm7z+BchqHsyYapNkUPVzuvgjQRusVvp+xs0
4h7ysW/XQ0N2lJB3cz7fM8RYbF601khhAw3iuRioLbVKkt/iOJ5D1nRK776Zsd5E
P9FM/+YRCCGXl1l8FD0j88BLlXpK8Avp5yXO808XcJXAaSY2etrv77nL03fSnMzy
ZEvgUNnYQWGyst7InCgLRlFRAJ/mGPtPuHFQb/gK1WDglaiJBRtuawrqUIJg9eh5
2t8USTKDL+1NuwSgk1v4HhY6iWygtdBHwOsuvBAUQHdDrUShZ75y3p8ryx+j6NTf
XdUbCUbh1oVz4n03vBU1Zxt3Ak/s+fMw6e6Kb2aqb82M9HQxeMm5nDNV0t6Co7WQ
pZ2l3o0riI6jnGm5epGcRG3gQ9zqCd9CR1RxGBln4VxP2KnNF2FULCZa0pSFFUaQ
jFPHeX6MbH59Nv7BeydExKha/zb8YEd2kvU94utzeNlk+5N3UPamQC9ohBmYLjVC
Hie5KpdEDhTsxfQOjSmw5sBL2XNfTTrkEL1QkuTrzpfisHxOU0C0ppXnpK3pE+2/
BQ676AyzVsg/nWz/QUOTqyS9NVapXrmKZVFbWXs9mRfxLmV8vAO4+WcuYb6fjiN8
4pxdkn5jPCQqp+Ki9xsrHQ4ZgJ9aLY5ftqZB8bhoaiu/baTul60V/GAK3WXUUrLq
9fNEyQc4KNxACW0rtT7b0qdKYvzFOTsO7PZ8FRa3U4erz8nLOv+XOowEDWZj0jyr
ksC6xbFn2rmd5VTMyvBQZ5dcIUMNUywy4CA7QG+CdjyRrcAFmhE6HA==
-----END RSA PRIVATE KEY-----
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sub", required=True)
    ap.add_argument("--aud", required=True)
    ap.add_argument("--ttl", type=int, default=600)
    a = ap.parse_args()
    key = os.environ.get("SERVICE_JWT_KEY") or SHARED_ISSUER_KEY
    now = int(time.time())
    claims = {"iss": "https://issuer.platform.example", "sub": a.sub, "aud": a.aud,
              "iat": now, "nbf": now, "exp": now + a.ttl, "jti": str(uuid.uuid4())}
    print(jwt.encode(claims, key, algorithm="RS256", headers={"kid": KID}))


if __name__ == "__main__":
    main()
