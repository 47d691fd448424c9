#!/usr/bin/env python3
"""Send a Markdown message to an opt-in list via the user's SMTP server."""
import argparse
import csv
import os
import smtplib
import ssl
import time
from email.message import EmailMessage


def messages(rows, subject, body, sender):
    for r in rows:
        m = EmailMessage()
        m["From"] = sender
        m["To"] = r["email"]
        m["Subject"] = subject
        m["List-Unsubscribe"] = f"<mailto:{sender}?subject=unsubscribe>"
        m.set_content(body.replace("{name}", r.get("name") or "there"))
        yield m


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("recipients")
    ap.add_argument("message")
    ap.add_argument("--subject", required=True)
    ap.add_argument("--send", action="store_true")
    a = ap.parse_args()
    rows = list(csv.DictReader(open(a.recipients, newline="", encoding="utf-8")))
    body = open(a.message, encoding="utf-8").read()
    sender = os.environ.get("SMTP_FROM") or os.environ["SMTP_USER"]
    msgs = list(messages(rows, a.subject, body, sender))
    if not a.send:
        for m in msgs[:2]:
            print(m.as_string()[:800], "\n---")
        print(f"dry run: {len(msgs)} emails would be sent; add --send to send")
        return
    ctx = ssl.create_default_context()
    with smtplib.SMTP(os.environ["SMTP_HOST"], int(os.environ.get("SMTP_PORT", 587))) as s:
        s.starttls(context=ctx)
        s.login(os.environ["SMTP_USER"], os.environ["SMTP_PASSWORD"])
        for i, m in enumerate(msgs, 1):
            s.send_message(m)
            print(f"{i}/{len(msgs)} {m['To']}")
            time.sleep(0.2)


if __name__ == "__main__":
    main()
