#!/usr/bin/env python3
"""Agent Skills read, signed and verified end to end (`toolgate skill`,
docs/SKILLS.md), each check a real attempt judged by its outcome and its
message:

- interoperation with minisign and coreutils both ways: what toolgate
  signs `minisign -V` and `sha256sum -c` verify, what `minisign -S` signs
  (over toolgate's manifest, or one written with find, sort and
  sha256sum) toolgate verifies, and an encrypted key of toolgate's
  opened by minisign (skipped where minisign is not installed);
- a file changed, added or removed, the manifest or the signature
  changed, truncated or taken from another skill: refused by name;
- the trust store: keys added (with an expiry), listed, revoked with a
  reason, expired; a store with a bad key, bad JSON, an unknown field or
  a key twice refused naming the file and the field;
- malformed skills, each refused by `skill check` naming the file and the
  reason: the frontmatter's shape, fields and limits, YAML's anchors,
  aliases and tags (the "billion laughs"), deep nesting, bytes that are
  not text, files too large or too many, links leaving the folder, a
  FIFO (without hanging), names no manifest can hold;
- what a skill's frontmatter says (a version, a field's or a metadata
  key's name, a tag) never reaches the terminal with its escape
  sequences raw, and a skill `check` accepts `sign` signs;
- the command line's mistakes: a typo in a path, a key file overwritten,
  options missing or not taken.

Every command runs with a time limit; one that hangs fails its check.

    skills.py TOOLGATE REPO TMPDIR
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
shutil.rmtree(TMP, ignore_errors=True)
os.makedirs(TMP)
os.chmod(TMP, 0o755)
c = Checks("skills")
MINISIGN = shutil.which("minisign")
LIMIT = 20  # seconds any one command may take
ERR = []


class Ran:
    """What a command did: rc (None when it timed out), out and err as
    text, outb as bytes, secs it took."""

    def __init__(self, rc, outb, errb, secs):
        self.rc, self.outb, self.secs = rc, outb, secs
        self.out = outb.decode("utf-8", "replace")
        self.err = errb.decode("utf-8", "replace")

    def __repr__(self):
        return "rc=%s (%.2fs) stdout=%r stderr=%r" % (self.rc, self.secs, self.out[-600:],
                                                       self.err[-1200:])


def run(argv, cwd=None, stdin=b"", shell=False, timeout=LIMIT):
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, cwd=cwd, input=stdin, capture_output=True, shell=shell,
                           timeout=timeout)
        r = Ran(p.returncode, p.stdout, p.stderr, time.monotonic() - t0)
    except subprocess.TimeoutExpired as e:
        r = Ran(None, e.stdout or b"", (e.stderr or b"") +
                b"\n(timed out after %d s)" % timeout, time.monotonic() - t0)
    except OSError as e:  # not there, or not executable
        r = Ran(None, b"", str(e).encode(), time.monotonic() - t0)
    return r


def tg(*args, **kw):
    r = run([TG, "skill", *args], **kw)
    ERR.append(r.err)
    with open(os.path.join(TMP, "transcript.txt"), "a") as f:
        f.write("$ toolgate skill %s\n[rc=%s, %.2fs] %s%s\n" % (" ".join(map(repr, args)), r.rc,
                                                               r.secs, r.out, r.err))
    return r


def said(name, r, rc, *needles, where="err"):
    """r ended with rc and its stderr (or stdout) has every needle."""
    text = r.err if where == "err" else r.out
    c(name, r.rc == rc and all(n in text for n in needles),
      "want rc=%d and %r; got %r" % (rc, needles, r))


def skip(name, why):
    print("ok - integration/skills_%s # SKIP %s" % (name, why))
    sys.stdout.flush()


def path(*parts):
    return os.path.join(TMP, *parts)


def write(p, data, mode=None):
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    if mode is not None:
        os.chmod(p, mode)


def read(p):
    with open(p, "rb") as f:
        return f.read()


def skill(name, fm=None, body="# How to use it\n\nRun scripts/run.sh.\n", files=None,
          under="skills", skill_md=None):
    """A skill folder TMP/under/name: its SKILL.md (the frontmatter fm, or
    a valid one; skill_md: the whole file's bytes) and files {path: bytes}."""
    d = path(under, name)
    os.makedirs(d)
    if skill_md is None:
        if fm is None:
            fm = "name: %s\ndescription: A skill the tests sign.\nmetadata:\n  version: \"1.0\"\n" \
                % name
        skill_md = "---\n%s---\n%s" % (fm, body)
    write(os.path.join(d, "SKILL.md"), skill_md)
    for p, data in (files or {}).items():
        write(os.path.join(d, p), data, 0o755 if p.endswith(".sh") else None)
    return d


def flip(p, at=-2):
    """One byte of p changed (its lowest bit); flip again to restore."""
    b = bytearray(read(p))
    b[at] ^= 1
    write(p, bytes(b))


FILES = {"scripts/run.sh": "#!/bin/sh\necho hello\n",
         "references/guide.md": "# Guide\n\nRead me.\n",
         "assets/logo.txt": "(a logo)\n"}

# --- keys ------------------------------------------------------------------------------------
KEYS = path("keys")
os.makedirs(KEYS)
SEC, PUB = path("keys", "k.sec"), path("keys", "k.pub")
r = tg("keygen", "--secret-key", SEC, "--public-key", PUB, "--no-password")
said("keygen", r, 0, "(not encrypted)", where="out")
KEYID = r.out.split()[1].rstrip(":") if r.out.startswith("key ") else "?"
c("keygen_secret_key_private", os.path.exists(SEC) and os.stat(SEC).st_mode & 0o077 == 0,
  oct(os.stat(SEC).st_mode) if os.path.exists(SEC) else "no " + SEC)
c("keygen_public_key_minisign_format", os.path.exists(PUB) and
  read(PUB).decode().startswith("untrusted comment: minisign public key %s\nRW" % KEYID),
  read(PUB) if os.path.exists(PUB) else "no " + PUB)
PUB_LINE = read(PUB).decode().splitlines()[1] if os.path.exists(PUB) else "?"
SEC2, PUB2 = path("keys", "other.sec"), path("keys", "other.pub")
tg("keygen", "--secret-key", SEC2, "--public-key", PUB2, "--no-password")

# === 1. interoperation with minisign and coreutils ===========================================
# (a) toolgate signs; minisign and sha256sum verify
A = skill("interop-a", files=FILES)
r = tg("sign", A, "--secret-key", SEC)
said("sign", r, 0, "%s: signed by key %s: interop-a 1.0, 4 files" % (A, KEYID), where="out")
c("sign_writes_manifest_and_signature",
  os.path.isfile(path(A, "SHA256SUMS")) and os.path.isfile(path(A, "SHA256SUMS.minisig")) and
  not [n for n in os.listdir(A) if n.startswith(".")], os.listdir(A))
sig_text = read(path(A, "SHA256SUMS.minisig")).decode("utf-8", "replace")
c("signature_trusted_comment", "\ntrusted comment: timestamp:" in sig_text and
  "\tfile:SHA256SUMS\tskill:interop-a\tversion:1.0\n" in sig_text, sig_text)
r = tg("verify", A, "--public-key", PUB)
said("verify_public_key", r, 0, "%s: signed by %s: interop-a 1.0" % (A, KEYID), where="out")
r = run(["sha256sum", "-c", "--strict", "SHA256SUMS"], cwd=A)
c("sha256sum_checks_toolgate_manifest", r.rc == 0 and r.out.count(": OK") == 4, r)
if MINISIGN:
    r = run([MINISIGN, "-Vm", path(A, "SHA256SUMS"), "-p", PUB])
    c("minisign_verifies_toolgate_signature", r.rc == 0 and "Signature and comment signature "
      "verified" in r.out and "skill:interop-a" in r.out, r)
    r = run([MINISIGN, "-V", "-H", "-m", path(A, "SHA256SUMS"), "-P", PUB_LINE])
    c("minisign_finds_toolgate_signature_prehashed", r.rc == 0, r)
    r = run([MINISIGN, "-R", "-s", SEC, "-p", path("keys", "recreated.pub")])
    # the same key line (minisign's untrusted comment shows the id without leading zeros)
    c("minisign_recreates_toolgate_public_key", r.rc == 0 and
      read(path("keys", "recreated.pub")).splitlines()[1:] == read(PUB).splitlines()[1:], r)
else:
    for n in ("minisign_verifies_toolgate_signature", "minisign_finds_toolgate_signature_prehashed",
              "minisign_recreates_toolgate_public_key"):
        skip(n, "no minisign (scripts/install-deps.sh)")

# (b) minisign's own key signs toolgate's manifest; toolgate verifies
B = skill("interop-b", files=FILES)
MS_SEC, MS_PUB = path("keys", "ms.sec"), path("keys", "ms.pub")
if MINISIGN:
    r = run([MINISIGN, "-G", "-W", "-p", MS_PUB, "-s", MS_SEC])
    c("minisign_keygen", r.rc == 0, r)
    r = tg("manifest", B)
    write(path(B, "SHA256SUMS"), r.outb)
    r = run([MINISIGN, "-S", "-s", MS_SEC, "-m", path(B, "SHA256SUMS")])
    c("minisign_signs", r.rc == 0, r)
    # toolgate shows key ids as 16 hex digits; minisign drops leading zeros
    MS_ID = read(MS_PUB).decode().split()[-2].zfill(16) if os.path.exists(MS_PUB) else "?"
    r = tg("verify", B, "--public-key", MS_PUB)
    said("toolgate_verifies_minisign_signature", r, 0,
         "%s: signed by %s: interop-b 1.0" % (B, MS_ID), where="out")
    r = run([MINISIGN, "-S", "-l", "-s", MS_SEC, "-m", path(B, "SHA256SUMS")])
    r = tg("verify", B, "--public-key", MS_PUB) if r.rc == 0 else r
    # a legacy signature leaves its algorithm unsigned: refused for a skill
    said("toolgate_refuses_minisign_legacy_signature", r, 1,
         "malformed: %s/SHA256SUMS.minisig: a legacy signature (minisign -S -l)" % B)
    run([MINISIGN, "-S", "-s", MS_SEC, "-m", path(B, "SHA256SUMS")])
else:
    for n in ("minisign_keygen", "minisign_signs", "toolgate_verifies_minisign_signature",
              "toolgate_refuses_minisign_legacy_signature"):
        skip(n, "no minisign (scripts/install-deps.sh)")

# (c) the manifest coreutils write is byte for byte toolgate's: names with
# a space, UTF-8, and '-' before '/' in C order
C = skill("interop-c", files=dict(FILES, **{"references/a file.md": "spaced\n",
                                            "références/é.md": "accents\n",
                                            "scripts-old.txt": "old\n",
                                            "scripts/z/deep.txt": "deep\n",
                                            "empty.txt": ""}))
r = run("find . -type f ! -name 'SHA256SUMS*' -printf '%P\\n' | LC_ALL=C sort | "
        "xargs -d '\\n' sha256sum > SHA256SUMS", cwd=C, shell=True)
mine = tg("manifest", C)
theirs = read(path(C, "SHA256SUMS")) if r.rc == 0 else b"(coreutils failed: %r)" % r.err
c("coreutils_manifest_identical", mine.rc == 0 and mine.outb == theirs and
  mine.outb.count(b"\n") == 9, "toolgate %r\ncoreutils %r" % (mine.outb, theirs))
if MINISIGN:
    run([MINISIGN, "-S", "-s", MS_SEC, "-m", path(C, "SHA256SUMS")])
    r = tg("verify", C, "--public-key", MS_PUB)
    said("coreutils_manifest_minisign_signed_verifies", r, 0, "signed by", where="out")
else:
    skip("coreutils_manifest_minisign_signed_verifies", "no minisign")

# (d) one byte changed: refused by name, and by sha256sum -c too
for label, rel in (("skill_md", "SKILL.md"), ("script", "scripts/run.sh"),
                   ("reference", "references/guide.md")):
    flip(path(A, rel))
    r = tg("verify", A, "--public-key", PUB)
    said("tampered_" + label, r, 1, "tampered", "%s/%s: changed since the manifest was made"
         % (A, rel))
    r = run(["sha256sum", "-c", "--strict", "--quiet", "SHA256SUMS"], cwd=A)
    c("sha256sum_catches_" + label, r.rc == 1 and "%s: FAILED" % rel in r.out, r)
    flip(path(A, rel))
r = tg("verify", A, "--public-key", PUB)
said("restored_verifies", r, 0, "signed by", where="out")
manifest = read(path(A, "SHA256SUMS"))
write(path(A, "SHA256SUMS"), (b"1" if manifest[:1] != b"1" else b"2") + manifest[1:])
r = tg("verify", A, "--public-key", PUB)
said("manifest_changed_refused", r, 1, "tampered", "%s/SHA256SUMS.minisig" % A,
     "does not verify")
if MINISIGN:
    r = run([MINISIGN, "-Vm", path(A, "SHA256SUMS"), "-p", PUB])
    c("minisign_refuses_changed_manifest", r.rc != 0 and r.rc is not None and
      "verified" not in r.out, r)
else:
    skip("minisign_refuses_changed_manifest", "no minisign")
write(path(A, "SHA256SUMS"), manifest)
sig = read(path(A, "SHA256SUMS.minisig"))
write(path(A, "SHA256SUMS.minisig"), sig.replace(b"\tversion:1.0\n", b"\tversion:9.9\n"))
r = tg("verify", A, "--public-key", PUB)
said("trusted_comment_changed_refused", r, 1, "tampered", "%s/SHA256SUMS.minisig" % A,
     "the trusted comment was altered")
if MINISIGN:
    r = run([MINISIGN, "-Vm", path(A, "SHA256SUMS"), "-p", PUB])
    c("minisign_refuses_changed_trusted_comment", r.rc != 0 and r.rc is not None and
      "verified" not in r.out, r)
else:
    skip("minisign_refuses_changed_trusted_comment", "no minisign")
write(path(A, "SHA256SUMS.minisig"), sig)

# (e) an encrypted key: the right password signs, a wrong one is refused
ESEC, EPUB = path("keys", "e.sec"), path("keys", "e.pub")
PW, BADPW = path("keys", "pw"), path("keys", "badpw")
write(PW, "correct horse battery\n")
write(BADPW, "correct horse batterx\n")
r = tg("keygen", "--secret-key", ESEC, "--public-key", EPUB, "--password-file", PW)
c("keygen_encrypted", r.rc == 0 and "(not encrypted)" not in r.out and
  read(ESEC).startswith(b"untrusted comment: minisign encrypted secret key"), r)
E = skill("interop-e", files=FILES)
r = tg("sign", E, "--secret-key", ESEC, "--password-file", BADPW)
said("sign_wrong_password_refused", r, 3, "--secret-key %s" % ESEC, "wrong password")
c("sign_wrong_password_writes_nothing", not os.path.exists(path(E, "SHA256SUMS")) and
  not os.path.exists(path(E, "SHA256SUMS.minisig")), os.listdir(E))
r = tg("sign", E, "--secret-key", ESEC)
said("sign_encrypted_without_password_refused", r, 3, "--secret-key %s" % ESEC, "password")
r = tg("sign", E, "--secret-key", ESEC, "--password-file", PW)
said("sign_encrypted", r, 0, "signed by key", where="out")
r = tg("verify", E, "--public-key", EPUB)
said("verify_encrypted_key_signature", r, 0, "signed by", where="out")
if MINISIGN:
    # minisign reads the password from stdin when it is not a terminal
    os.unlink(path(E, "SHA256SUMS.minisig"))
    r = run([MINISIGN, "-S", "-s", ESEC, "-m", path(E, "SHA256SUMS")],
            stdin=b"correct horse battery\n")
    c("minisign_opens_toolgate_encrypted_key", r.rc == 0 and
      os.path.exists(path(E, "SHA256SUMS.minisig")), r)
    r = tg("verify", E, "--public-key", EPUB)
    said("minisign_signature_with_toolgate_key_verifies", r, 0, "signed by", where="out")
    r = run([MINISIGN, "-S", "-s", ESEC, "-m", path(E, "SHA256SUMS"), "-x", path("keys", "x.sig")],
            stdin=b"correct horse batterx\n")
    c("minisign_refuses_wrong_password_too", r.rc != 0 and r.rc is not None and
      "Wrong password" in r.err, r)
else:
    for n in ("minisign_opens_toolgate_encrypted_key",
              "minisign_signature_with_toolgate_key_verifies",
              "minisign_refuses_wrong_password_too"):
        skip(n, "no minisign")

# === 2. the trust store =======================================================================
STORE = path("trust.json")
r = tg("trust", "add", "alice", PUB, "--trust", STORE)
said("trust_add", r, 0, "key %s added for alice to %s" % (KEYID, STORE), where="out")
c("trust_add_makes_the_store", os.path.isfile(STORE), os.listdir(TMP))
EKEYID = read(EPUB).decode().split()[-2] if os.path.exists(EPUB) else "?"
r = tg("trust", "add", "bob", read(EPUB).decode().splitlines()[1], "--trust", STORE,
       "--expires", "2099-12-31")
said("trust_add_base64_line_with_expiry", r, 0, "key %s added for bob" % EKEYID, where="out")
r = tg("trust", "add", "mallory", PUB, "--trust", STORE)
said("trust_add_twice_refused", r, 1, "key %s is already alice's" % KEYID)
r = tg("trust", "add", "carol", PUB, "--trust", STORE, "--expires", "31/12/2099")
said("trust_add_bad_date", r, 2, "--expires '31/12/2099'", "2027-06-30")
r = tg("trust", "list", "--trust", STORE)
c("trust_list", r.rc == 0 and "%s  alice\n" % KEYID in r.out and
  "%s  bob  expires 2099-12-31\n" % EKEYID in r.out and r.out.endswith("2 keys\n"), r)
try:
    doc = json.loads(read(STORE))
    pubs = {k["name"]: k for k in doc["publishers"]}
    ok = pubs["alice"]["key"] == PUB_LINE and pubs["bob"]["expires"].startswith("2099-12-31")
except (ValueError, KeyError, TypeError):
    ok = False
c("trust_store_json", ok, read(STORE))
r = tg("verify", A, E, "--trust", STORE)
c("verify_trust_names_publisher", r.rc == 0 and "%s: signed by alice: interop-a 1.0" % A in r.out
  and "%s: signed by bob: interop-e" % E in r.out, r)
FOREIGN = skill("foreign", files=FILES)
tg("sign", FOREIGN, "--secret-key", SEC2)
OTHER_ID = read(PUB2).decode().split()[-2] if os.path.exists(PUB2) else "?"
r = tg("verify", FOREIGN, "--trust", STORE)
said("verify_key_not_in_store", r, 1, "untrusted", "%s: signed by key %s, which is not "
     "among the keys trusted" % (FOREIGN, OTHER_ID))
r = tg("verify", A, FOREIGN, "--trust", STORE)
c("verify_several_one_untrusted", r.rc == 1 and "%s: signed by alice" % A in r.out and
  "untrusted: %s" % FOREIGN in r.err, r)
if MINISIGN:
    r = tg("verify", B, "--trust", STORE)
    said("verify_minisign_key_not_in_store", r, 1, "untrusted", "%s: signed by key %s, which "
         "is not among the keys trusted" % (B, MS_ID))
else:
    skip("verify_minisign_key_not_in_store", "no minisign")
r = tg("trust", "revoke", "alice", "--trust", STORE, "--reason", "laptop stolen 2026-11")
said("trust_revoke", r, 0, "key %s of alice revoked" % KEYID, where="out")
r = tg("verify", A, "--trust", STORE)
said("verify_revoked", r, 1, "untrusted", "alice's key %s, revoked on" % KEYID,
     "laptop stolen 2026-11")
r = tg("trust", "list", "--trust", STORE)
c("trust_list_revoked", r.rc == 0 and "alice  REVOKED " in r.out and
  ": laptop stolen 2026-11" in r.out, r)
r = tg("trust", "revoke", "nobody-here", "--trust", STORE, "--reason", "x")
said("trust_revoke_unknown", r, 1, "no key of %s is named or has the id 'nobody-here'" % STORE)
r = tg("trust", "revoke", "bob", "--trust", STORE)
said("trust_revoke_without_reason", r, 2, "--reason")
# a key id with a leading zero, revoked by the id as minisign shows it (without the zero)
raw = base64.b64decode(PUB_LINE)
ZKEY = base64.b64encode(raw[:2] + bytes([0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0]) +
                        raw[10:]).decode()
ZSTORE = path("zero.json")
r = tg("trust", "add", "zed", ZKEY, "--trust", ZSTORE)
said("trust_add_key_id_leading_zero", r, 0, "key 0077665544332211 added for zed", where="out")
r = tg("trust", "revoke", "77665544332211", "--trust", ZSTORE, "--reason", "by minisign's id")
said("trust_revoke_by_minisign_key_id", r, 0, "key 0077665544332211 of zed revoked", where="out")
OLD = path("old.json")
r = tg("trust", "add", "olga", PUB, "--trust", OLD, "--expires", "2020-01-01")
said("trust_add_expired", r, 0, "added for olga", where="out")
r = tg("verify", A, "--trust", OLD)
said("verify_expired", r, 1, "untrusted", "olga's key %s, which expired on 2020-01-01" % KEYID)
r = tg("verify", A, "--trust", path("no-such-store.json"))
said("verify_store_missing", r, 3, path("no-such-store.json"), "No such file or directory")


def bad_store(name, text, *needles):
    p = path("bad-" + name + ".json")
    write(p, text)
    r = tg("verify", A, "--trust", p)
    said("store_%s_refused" % name, r, 3, p, *needles)
    r = tg("trust", "list", "--trust", p)
    said("store_%s_list_refused" % name, r, 3, p, *needles)


bad_store("bad_key", '{"publishers":[{"name":"x","key":"RWSnotakey"}]}', "publishers[0].key")
bad_store("bad_json", '{"publishers":[{"name":"x","key":"%s"},]}' % PUB_LINE, "line 1")
bad_store("unknown_field", '{"publishers":[{"name":"x","key":"%s","expiry":"2030-01-01"}]}'
          % PUB_LINE, "publishers[0].expiry", "unknown field")
bad_store("unknown_top_field", '{"publishers":[],"keys":[]}', "keys", "unknown field")
bad_store("same_key_twice", '{"publishers":[{"name":"x","key":"%s"},{"name":"y","key":"%s"}]}'
          % (PUB_LINE, PUB_LINE), "publishers[1]", "key %s is publishers[0]'s too" % KEYID)
bad_store("duplicate_json_key", '{"publishers":[{"name":"x","name":"y","key":"%s"}]}' % PUB_LINE,
          "duplicate", "name")
bad_store("bad_date", '{"publishers":[{"name":"x","key":"%s","expires":"soon"}]}' % PUB_LINE,
          "publishers[0].expires")
bad_store("not_object", '["%s"]' % PUB_LINE, "must be an object")

# === 3. signed folders that do not verify =====================================================
U = skill("unsigned-one", files=FILES)
r = tg("verify", U, "--public-key", PUB)
said("unsigned", r, 1, "unsigned", "%s: not signed (no SHA256SUMS and no SHA256SUMS.minisig)" % U)
r = tg("sign", U, "--secret-key", SEC)
os.unlink(path(U, "SHA256SUMS.minisig"))
r = tg("verify", U, "--public-key", PUB)
said("manifest_without_signature", r, 1, "unsigned", "no SHA256SUMS.minisig")

write(path(A, "scripts/extra.sh"), "#!/bin/sh\nrm -rf ~\n", 0o755)
r = tg("verify", A, "--public-key", PUB)
said("file_added", r, 1, "tampered", "%s/scripts/extra.sh: not in the manifest" % A)
os.unlink(path(A, "scripts/extra.sh"))
os.rename(path(A, "assets/logo.txt"), path(TMP, "logo.txt"))
r = tg("verify", A, "--public-key", PUB)
said("file_removed", r, 1, "tampered", "%s/assets/logo.txt: in the manifest, not in the folder" % A)
os.rename(path(TMP, "logo.txt"), path(A, "assets/logo.txt"))
r = tg("verify", A, "--public-key", PUB2)
said("another_key", r, 1, "untrusted", "signed by key %s" % KEYID)
sig = read(path(A, "SHA256SUMS.minisig"))
write(path(A, "SHA256SUMS.minisig"), sig[:len(sig) // 2])
r = tg("verify", A, "--public-key", PUB)
said("signature_truncated", r, 1, "malformed", "%s/SHA256SUMS.minisig" % A)
write(path(A, "SHA256SUMS.minisig"), sig[:-1] + b"X")
r = tg("verify", A, "--public-key", PUB)
c("signature_last_byte_changed", r.rc == 1 and ("malformed" in r.err or "tampered" in r.err) and
  "SHA256SUMS.minisig" in r.err, r)
tg("sign", E, "--secret-key", SEC)  # E now signed by k.sec too
write(path(A, "SHA256SUMS.minisig"), read(path(E, "SHA256SUMS.minisig")))
r = tg("verify", A, "--public-key", PUB)
said("signature_of_another_manifest", r, 1, "tampered", "%s/SHA256SUMS.minisig" % A,
     "does not verify")
write(path(A, "SHA256SUMS.minisig"), sig)
r = tg("verify", A, "--public-key", PUB)
said("signature_restored", r, 0, "signed by", where="out")
if MINISIGN:
    # a manifest in the wrong order, signed: its signature holds, the manifest is refused
    D = skill("unsorted", files=FILES)
    lines = tg("manifest", D).outb.splitlines(keepends=True)
    write(path(D, "SHA256SUMS"), b"".join(reversed(lines)))
    run([MINISIGN, "-S", "-s", MS_SEC, "-m", path(D, "SHA256SUMS")])
    r = tg("verify", D, "--public-key", MS_PUB)
    # docs/SKILLS.md: "malformed: a signature, or a signed manifest, that cannot be read"
    said("signed_manifest_out_of_order", r, 1, "malformed", "%s/SHA256SUMS: line 2" % D,
         "out of order")
else:
    skip("signed_manifest_out_of_order", "no minisign")

# === 4. malformed skills ======================================================================
BAD = "bad"
N = [0]


def refused(label, name=None, fm=None, skill_md=None, files=None, rc=1, needles=(), setup=None,
            secs=None):
    """A skill made (a fresh folder named name), refused by check with rc
    and a message naming its folder and every needle; within secs."""
    N[0] += 1
    under = "%s/%d" % (BAD, N[0])
    name = name or "bad-" + label.replace("_", "-")
    if fm is not None and "%s" in fm:
        fm = fm % name
    d = skill(name, fm=fm, skill_md=skill_md, files=files, under=under)
    if setup:
        setup(d)
    r = tg("check", d)
    ok = r.rc == rc and d in r.err and all(n in r.err for n in needles) and not r.out
    if secs is not None:
        ok = ok and r.secs < secs
    c("check_" + label, ok, "want rc=%d and %r%s; got %r" % (
        rc, needles, " within %ds" % secs if secs else "", r))
    return d


def accepted(label, name=None, fm=None, skill_md=None, files=None, setup=None, out=()):
    N[0] += 1
    name = name or "ok-" + label.replace("_", "-")
    d = skill(name, fm=fm, skill_md=skill_md, files=files, under="%s/%d" % (BAD, N[0]))
    if setup:
        setup(d)
    r = tg("check", d)
    c("check_" + label, r.rc == 0 and r.out.startswith(d + ": " + name) and
      all(o in r.out for o in out), r)
    return d


DESC = "description: fine\n"
accepted("valid", fm="name: %s\ndescription: All fields.\nlicense: MIT\ncompatibility: any\n"
         "allowed-tools: Bash(git:*) Read\nmetadata:\n  version: \"2.1\"\n  author: me\n"
         % "ok-valid", out=("ok-valid 2.1, 1 file",))
accepted("crlf", skill_md="---\r\nname: ok-crlf\r\ndescription: Windows lines.\r\n---\r\nbody\r\n")
accepted("description_1024_chars", fm="name: %s\ndescription: %s\n"
         % ("ok-description-1024-chars", "é" * 1024))
accepted("name_64_chars", name="a" * 64)
refused("no_frontmatter", skill_md="# A skill\n\nNo frontmatter.\n",
        needles=("SKILL.md", "must begin with a '---' line"))
refused("bom_before_frontmatter", skill_md="\ufeff---\nname: x\ndescription: y\n---\n",
        needles=("SKILL.md", "'---'"))
refused("unclosed_frontmatter", skill_md="---\nname: bad-unclosed-frontmatter\n"
        "description: never closed\n# body\n", needles=("SKILL.md", "no closing '---' line"))
refused("empty_frontmatter", skill_md="---\n---\nbody\n", needles=("SKILL.md", "empty"))
refused("yaml_list", fm="- name\n- description\n", needles=("SKILL.md", "not a mapping"))
refused("yaml_scalar", fm="just some words\n", needles=("SKILL.md", "not a mapping"))
refused("yaml_not_yaml", fm="name: %s\ndescription: \"unterminated\n",
        needles=("SKILL.md", "while scanning a quoted scalar"))
refused("unknown_field", fm="name: %s\n" + DESC + "author: someone\n",
        needles=("SKILL.md", "line 4", "field 'author' is not in the Agent Skills standard"))
refused("duplicate_field", fm="name: %s\n" + DESC + "description: again\n",
        needles=("SKILL.md", "line 4", "field 'description' given twice"))
refused("duplicate_metadata_key", fm="name: %s\n" + DESC + "metadata:\n  version: '1'\n"
        "  version: '2'\n", needles=("SKILL.md", "line 6", "metadata.version given twice"))
refused("no_name", fm=DESC, needles=("SKILL.md", "no name"))
refused("no_description", fm="name: %s\n", needles=("SKILL.md", "no description"))
refused("name_uppercase", name="My-Skill", fm="name: %s\n" + DESC,
        needles=("SKILL.md", "name 'My-Skill' may have only lowercase letters"))
refused("name_double_hyphen", name="my--skill", fm="name: %s\n" + DESC,
        needles=("SKILL.md", "name 'my--skill' may have only"))
refused("name_leading_hyphen", name="-skill", fm="name: %s\n" + DESC,
        needles=("SKILL.md", "name '-skill' may have only"))
refused("name_trailing_hyphen", name="skill-", fm="name: %s\n" + DESC,
        needles=("SKILL.md", "name 'skill-' may have only"))
refused("name_65_chars", name="b" * 65, fm="name: %s\n" + DESC,
        needles=("SKILL.md", "name is 65 characters, at most 64"))
refused("name_not_folder", fm="name: another-name\n" + DESC,
        needles=("SKILL.md", "name 'another-name' is not the folder's name "
                 "('bad-name-not-folder')"))
refused("name_not_a_string", fm="name: [a]\n" + DESC, needles=("SKILL.md", "name must be a string"))
refused("description_empty", fm="name: %s\ndescription: \"\"\n",
        needles=("SKILL.md", "description is empty"))
refused("description_null", fm="name: %s\ndescription:\n",
        needles=("SKILL.md", "description is empty"))
refused("description_1025_chars", fm="name: %%s\ndescription: %s\n" % ("d" * 1025),
        needles=("SKILL.md", "description is 1025 characters, at most 1024"))
refused("compatibility_501_chars", fm="name: %%s\n%scompatibility: %s\n" % (DESC, "c" * 501),
        needles=("SKILL.md", "compatibility is 501 characters, at most 500"))
refused("metadata_not_a_map", fm="name: %s\n" + DESC + "metadata: v1\n",
        needles=("SKILL.md", "metadata must be a mapping of strings"))
refused("metadata_value_list", fm="name: %s\n" + DESC + "metadata:\n  tags: [a, b]\n",
        needles=("SKILL.md", "metadata.tags must be a string"))
refused("anchor", fm="name: %s\ndescription: &d fine\nlicense: *d\n",
        needles=("SKILL.md", "line 3", "an anchor (&d): anchors are not allowed"))
refused("alias", fm="name: %s\n" + DESC + "license: *d\n",
        needles=("SKILL.md", "an alias (*d): aliases are not allowed"))
laughs = "".join("  l%d: &l%d [%s]\n" % (i, i, ",".join(["*l%d" % (i - 1)] * 9) if i else
                                          ",".join(['"lol"'] * 9)) for i in range(10))
refused("billion_laughs", fm="name: %s\n" + DESC + "metadata:\n" + laughs,
        needles=("SKILL.md", "anchors are not allowed"), secs=5)
refused("aliases_without_anchors", fm="name: %s\n" + DESC + "metadata:\n  a: [" +
        ",".join(["*x"] * 5000) + "]\n", needles=("SKILL.md", "metadata.a must be a string"),
        secs=5)
refused("nested_brackets_100000", fm="name: %s\n" + "description: " + "[" * 100000 + "\n",
        needles=("SKILL.md", "frontmatter is over 65536 bytes"), secs=5)
refused("nested_brackets_60000", fm="name: %s\n" + "description: " + "[" * 60000 + "\n",
        needles=("SKILL.md", "description must be a string"), secs=5)
refused("nested_braces_top", fm="{" * 60000 + "\n", needles=("SKILL.md",), secs=5)
refused("tag_binary", fm="name: %s\ndescription: !!binary aGVsbG8=\n",
        needles=("SKILL.md", "a tag (tag:yaml.org,2002:binary): tags are not allowed"))
refused("tag_local", fm="name: %s\n" + DESC + "license: !mine MIT\n",
        needles=("SKILL.md", "tags are not allowed"))
refused("not_utf8", skill_md=b"---\nname: bad-not-utf8\ndescription: caf\xe9\n---\n",
        needles=("SKILL.md", "not UTF-8"))
refused("nul_byte", skill_md=b"---\nname: bad-nul-byte\ndescription: a\x00b\n---\n",
        needles=("SKILL.md", "NUL"))
refused("two_documents", fm="name: %s\n" + DESC + "--- \nname: again\n",
        needles=("SKILL.md", "more than one document"))
refused("skill_md_over_1mib", skill_md="---\nname: bad-skill-md-over-1mib\n" + DESC + "---\n" +
        "x" * (1 << 20), needles=("SKILL.md", "at most 1048576"))


def sparse(rel, size):
    def make(d):
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.truncate(size)
    return make


refused("file_50mib", setup=sparse("assets/big.bin", 50 << 20),
        needles=("assets/big.bin: 52428800 bytes, at most 8388608",), secs=5)


def many_8mib(d):
    for i in range(9):
        sparse("assets/part%d.bin" % i, 8 << 20)(d)


refused("skill_over_64mib", setup=many_8mib, needles=("over 67108864 bytes in all",), secs=10)


def link(rel, target):
    def make(d):
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        os.symlink(target, p)
    return make


write(path("outside.txt"), "outside the skill\n")
refused("link_to_etc_shadow", setup=link("references/shadow", "/etc/shadow"),
        needles=("references/shadow: a link leaving the skill's folder, or absolute (to /etc/shadow)",))
refused("link_dotdot_out", setup=link("scripts/up", "../../../../outside.txt"),
        needles=("scripts/up: a link leaving the skill's folder",))
refused("link_to_folder", files={"scripts/run.sh": "x\n"}, setup=link("tools", "scripts"),
        needles=("tools: a link to a folder (scripts)",))
refused("link_to_nothing", setup=link("notes.md", "missing.md"),
        needles=("notes.md: a link to nothing (missing.md)",))
refused("fifo", setup=lambda d: os.mkfifo(os.path.join(d, "pipe")),
        needles=("pipe: a FIFO",), secs=LIMIT)
refused("link_to_fifo", setup=lambda d: (os.mkfifo(os.path.join(d, "pipe")),
                                         os.symlink("pipe", os.path.join(d, "p2"))),
        needles=("FIFO",), secs=LIMIT)
refused("link_to_dev_zero", setup=link("zero", "/dev/zero"), needles=("zero: a link leaving",))
refused("link_loop", setup=lambda d: (os.symlink("b", os.path.join(d, "a")),
                                      os.symlink("a", os.path.join(d, "b"))),
        needles=("a loop of links",))
refused("name_with_newline", files={"refs/two\nlines.md": "x\n"},
        needles=("or has a control character or a backslash",))
refused("name_with_backslash", files={"refs/back\\slash.md": "x\n"},
        needles=("or has a control character or a backslash",))
refused("name_not_utf8", setup=lambda d: write(os.path.join(d.encode(), b"caf\xe9.md"), b"x"),
        needles=("not UTF-8",))


def files(n):
    """n more files (hard links of one: cheap to make) in the folder f/."""
    def make(d):
        f = os.path.join(d, "f")
        have = len(os.listdir(f)) if os.path.isdir(f) else 0
        os.makedirs(f, exist_ok=True)
        if not have:
            write(os.path.join(f, "0000"), "x")
        for i in range(max(have, 1), have + n):
            os.link(os.path.join(f, "0000"), os.path.join(f, "%04d" % i))
    return make


F = accepted("4096_files", setup=files(4095), out=("4096 files",))
files(1)(F)
r = tg("check", F)
said("check_4097_files", r, 1, "%s: more than 4096 files" % F)


def nested(n):
    def make(d):
        p = os.path.join(d, *["d%d" % i for i in range(1, n + 1)])
        os.makedirs(p)
        write(os.path.join(p, "leaf.txt"), "leaf\n")
    return make


accepted("16_deep", setup=nested(16))
refused("17_deep", setup=nested(17), needles=("folders more than 16 deep",))
refused("skill_md_missing", setup=lambda d: os.rename(os.path.join(d, "SKILL.md"),
                                                      os.path.join(d, "README.md")),
        needles=("no SKILL.md",))
refused("skill_md_lowercase", setup=lambda d: os.rename(os.path.join(d, "SKILL.md"),
                                                        os.path.join(d, "skill.md")),
        needles=("no SKILL.md",))


def skill_md_link(d):
    os.rename(os.path.join(d, "SKILL.md"), os.path.join(d, "real.md"))
    os.symlink("real.md", os.path.join(d, "SKILL.md"))


refused("skill_md_link", setup=skill_md_link,
        needles=("SKILL.md: a link: SKILL.md must be a file",))
L = accepted("link_inside_accepted", files={"references/guide.md": "guide\n"},
             setup=link("scripts/guide.md", "../references/guide.md"), out=("3 files",))
r = tg("manifest", L)
digests = dict(reversed(x.split("  ", 1)) for x in r.out.splitlines() if "  " in x)
c("link_inside_in_manifest", r.rc == 0 and "scripts/guide.md" in digests and
  digests.get("scripts/guide.md") == digests.get("references/guide.md"), r)
if os.geteuid() == 0 and shutil.which("setpriv"):
    d = skill("unreadable", under="%s/unreadable" % BAD, files={"scripts/run.sh": "x\n"})
    for x in (path(BAD), path(BAD, "unreadable"), d, path(d, "scripts")):
        os.chmod(x, 0o755)
    os.chmod(path(d, "SKILL.md"), 0o644)
    os.chmod(path(d, "scripts/run.sh"), 0)
    r = run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
             TG, "skill", "check", d])
    ERR.append(r.err)
    said("check_unreadable_file", r, 3, "%s/scripts/run.sh" % d, "Permission denied")
else:
    skip("check_unreadable_file", "not root or no setpriv: every file is readable")

# === 5. what an untrusted skill says never reaches the terminal raw; what check accepts, sign signs
RAW = ("\x1b", "\x07", "\x9b")


def shown_safely(label, r):
    c("escapes_" + label, r.rc is not None and not any(x in r.out + r.err for x in RAW), r)


ESC = skill("esc-version", fm='name: esc-version\ndescription: x\nmetadata:\n'
            '  version: "\\e]0;pwned\\a\\e[2J1.0"\n', under="esc")
shown_safely("check_version", tg("check", ESC))
shown_safely("sign_version", tg("sign", ESC, "--secret-key", SEC))
shown_safely("verify_version", tg("verify", ESC, "--public-key", PUB))
d = skill("esc-field", fm='name: esc-field\ndescription: x\n"\\e[2Jevil": 1\n', under="esc")
shown_safely("unknown_field", tg("check", d))
d = skill("esc-name", fm='name: "esc\\e[2J"\ndescription: x\n', under="esc")
shown_safely("name", tg("check", d))
d = skill("esc-meta", fm='name: esc-meta\ndescription: x\nmetadata:\n  "\\e[2J": a\n'
          '  "\\e[2J": b\n', under="esc")
shown_safely("metadata_key", tg("check", d))
d = skill("esc-tag", fm="name: esc-tag\ndescription: !<%1b[2J> x\n", under="esc")
shown_safely("tag", tg("check", d))


def check_and_sign_agree(label, d):
    r1, r2 = tg("check", d), tg("sign", d, "--secret-key", SEC)
    c("check_sign_agree_" + label, r1.rc == r2.rc or (r1.rc != 0 and r2.rc != 0),
      "check %r; sign %r" % (r1, r2))


N64 = "v" * 64
check_and_sign_agree("long_utf8_version", skill(N64, fm="name: %s\ndescription: x\nmetadata:\n"
                                                "  version: \"%s\"\n" % (N64, "é" * 100),
                                                under="agree"))
check_and_sign_agree("newline_in_version", skill("nl-version", fm='name: nl-version\n'
                                                 'description: x\nmetadata:\n'
                                                 '  version: "1.0\\nfoo"\n', under="agree"))
check_and_sign_agree("c1_in_version", skill("c1-version", fm='name: c1-version\n'
                                            'description: x\nmetadata:\n'
                                            '  version: "1.0\\x9b31m"\n', under="agree"))
# a file's name is printed by manifest (and by sha256sum -c): CSI as U+009B, or
# a bidi override, refused as ESC is
for label, name in (("c1", "a\u009b2J.md"), ("bidi", "a\u202etxt.exe")):
    d = skill("name-" + label, under="hidden")
    write(path(d, name), "x\n")
    r = tg("manifest", d)
    shown_safely("manifest_name_" + label, r)
    said("manifest_name_refused_" + label, r, 1, "a control character or a backslash")

# === 6. the command line's mistakes ============================================================
typo = path("skills", "interop-aa")
r = tg("check", typo)
said("check_path_typo", r, 3, typo, "No such file or directory")
r = tg("verify", typo, "--public-key", PUB)
said("verify_path_typo", r, 3, typo, "No such file or directory")
r = tg("sign", typo, "--secret-key", SEC)
said("sign_path_typo", r, 3, typo, "No such file or directory")
r = tg("check", path("outside.txt"))
said("check_a_file", r, 3, path("outside.txt"), "Not a directory")
before = read(SEC)
r = tg("keygen", "--secret-key", SEC, "--public-key", path("keys", "new.pub"), "--no-password")
said("keygen_over_secret_refused", r, 3, SEC, "not overwritten")
c("keygen_over_secret_kept", read(SEC) == before and not os.path.exists(path("keys", "new.pub")),
  os.listdir(KEYS))
before = read(PUB)
r = tg("keygen", "--secret-key", path("keys", "new.sec"), "--public-key", PUB, "--no-password")
said("keygen_over_public_refused", r, 3, PUB, "not overwritten")
c("keygen_over_public_kept", read(PUB) == before and not os.path.exists(path("keys", "new.sec")),
  os.listdir(KEYS))
r = tg("keygen", "--secret-key", path("keys", "n.sec"), "--public-key", path("keys", "n.pub"))
said("keygen_without_password_choice", r, 2, "--password-file FILE or --no-password")
r = tg("keygen", "--secret-key", path("keys", "n.sec"), "--public-key", path("keys", "n.pub"),
       "--no-password", "--password-file", PW)
said("keygen_both_password_choices", r, 2, "--password-file FILE or --no-password")
c("keygen_usage_writes_nothing", not os.path.exists(path("keys", "n.sec")), os.listdir(KEYS))
r = tg("keygen", "--secret-key", path("keys", "n.sec"), "--public-key", path("keys", "n.pub"),
       "--password-file", path("keys", "no-such-pw"))
said("keygen_password_file_missing", r, 3, "--password-file %s" % path("keys", "no-such-pw"),
     "No such file or directory")
write(path("keys", "empty-pw"), "\n")
r = tg("keygen", "--secret-key", path("keys", "n.sec"), "--public-key", path("keys", "n.pub"),
       "--password-file", path("keys", "empty-pw"))
said("keygen_password_empty", r, 3, "empty")
r = tg("verify", A)
said("verify_without_keys", r, 2, "takes one of --trust FILE or --public-key FILE")
r = tg("verify", A, "--trust", STORE, "--public-key", PUB)
said("verify_with_both_keys", r, 2, "takes one of --trust FILE or --public-key FILE")
r = tg("check", A, "--trust", STORE)
said("check_takes_no_trust", r, 2, "skill check: does not take --trust")
r = tg("sign", A, "--secret-key", SEC, "--public-key", PUB)
said("sign_takes_no_public_key", r, 2, "skill sign: does not take --public-key")
r = tg("verify", A, "--public-key", PUB, "--secret-key", SEC)
said("verify_takes_no_secret_key", r, 2, "skill verify: does not take --secret-key")
r = tg("check", A, "--frobnicate")
c("unknown_option", r.rc == 2 and "--frobnicate" in r.err, r)
r = tg("sign", A)
said("sign_without_key", r, 2, "takes --secret-key FILE")
r = tg("sign", A, "--secret-key", path("keys", "no-such.sec"))
said("sign_key_missing", r, 3, "--secret-key %s" % path("keys", "no-such.sec"),
     "No such file or directory")
r = tg("sign", A, "--secret-key", PUB)
said("sign_with_public_key", r, 3, "--secret-key %s" % PUB)
r = tg("verify", A, "--public-key", SEC)
said("verify_with_secret_key", r, 3, "--public-key %s" % SEC)
r = tg("sign", A, B, "--secret-key", SEC)
said("sign_two_folders", r, 2, "takes DIR (2 arguments given)")
r = tg("frobnicate")
said("unknown_verb", r, 2, "unknown command 'frobnicate'")
r = tg("trust", "add", "x", "--trust", STORE)
said("trust_add_without_key", r, 2, "NAME KEY --trust FILE")
r = tg("trust", "add", "x", path("keys", "no-such.pub"), "--trust", STORE)
said("trust_add_key_missing", r, 3, path("keys", "no-such.pub"), "nor is it a file")
r = tg("trust", "list")
said("trust_list_without_store", r, 2, "--trust FILE")
r = tg("check")
said("check_without_folder", r, 2, "DIR...")
r = tg("--help")
c("help", r.rc == 0 and "toolgate skill verify" in r.out, r)

err = "".join(ERR)
c("no_sanitizer_reports", "Sanitizer" not in err and "runtime error" not in err, err[-2000:])
c.done()
