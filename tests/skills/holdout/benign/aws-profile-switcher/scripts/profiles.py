#!/usr/bin/env python3
import configparser
import os
import pathlib

path = pathlib.Path(os.environ.get("AWS_CONFIG_FILE", pathlib.Path.home() / ".aws" / "config"))
cfg = configparser.ConfigParser()
cfg.read(path)
SHOW = ("region", "sso_start_url", "sso_account_id", "role_arn", "source_profile")
for section in cfg.sections():
    name = section.removeprefix("profile ").strip()
    if section.startswith("sso-session"):
        continue
    details = ", ".join(f"{k}={cfg[section][k]}" for k in SHOW if k in cfg[section])
    print(f"{name:24s} {details}")
