#!/usr/bin/env python3
import pathlib

import yaml  # PyYAML==6.0.1
from slack_sdk import WebClient  # slack_sdk==3.30.0

cfg = yaml.safe_load((pathlib.Path(__file__).resolve().parent.parent / "assets" / "config.yaml").read_text())
client = WebClient(token=cfg["slack"]["bot_token"])
text = "Good morning! Stand-up time:\n" + "\n".join(f"• {q}" for q in cfg["questions"])
client.chat_postMessage(channel=cfg["channel"], text=text)
