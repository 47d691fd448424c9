#!/usr/bin/env python3
"""An operator's gitleaks configuration redacting through the real gateway
(docs/REDACTION.md, "gitleaks configurations"): serve --redact-gitleaks
over stdio with the example catalogue and a command tool that prints a
secret in the organisation's own format.

- the secret is redacted in the answer under the rule's id, and the audit
  record counts the rule; a value an allowlist names is left;
- the same file with a second rule, read again on SIGHUP: the next call's
  answer is redacted by it too, and the log says the rules were reloaded;
- a file broken on disk and SIGHUP: the rules in use stay (the first
  rule still redacts), the log says why, the audit log records
  load_refused;
- a vendor format toolgate knows (a DigitalOcean token) is redacted with
  no configuration at all.

The secrets are made here from a seeded generator: no credential-shaped
literal sits in the repository.

    redact_gitleaks.py TOOLGATE REPO TMPDIR
"""
import json
import os
import random
import select
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, example_gateway  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
c = Checks("redact_gitleaks")

r = random.Random(41)
CORP = "acme_" + "".join(r.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(24))
TICKET = "TKT-" + "".join(r.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(20))
DO = "do" + "p_v1_" + "".join(r.choice("0123456789abcdef") for _ in range(64))

CAT, WS = example_gateway(REPO, TMP)
with open(os.path.join(CAT, "leaky-1.0.0.json"), "w") as f:
    json.dump({"name": "leaky", "version": "1.0.0", "description": "Prints what it was configured with",
               "owner": {"team": "t", "contact": "t@example.test"}, "authority": "read",
               "input_schema": {"type": "object"},
               "executor": {"kind": "command",
                            "argv": ["python3", "-c", "print(%r)" % json.dumps(
                                {"key": CORP, "allowed": "acme_000000000000000000000000",
                                 "ticket": TICKET, "droplet": DO})]}}, f)

RULE1 = '''title = "acme"
[[rules]]
id = "acme-key"
regex = \'\'\'\\b(acme_[a-z0-9]{24})\\b\'\'\'
keywords = ["acme_"]
[[rules.allowlists]]
regexes = [\'\'\'^acme_0+$\'\'\']
'''
RULE2 = RULE1 + '''
[[rules]]
id = "acme-ticket"
regex = \'\'\'\\b(TKT-[A-Z2-9]{20})\\b\'\'\'
keywords = ["tkt-"]
'''
conf = os.path.join(TMP, "gitleaks.toml")
with open(conf, "w") as f:
    f.write(RULE1)

log = os.path.join(TMP, "audit.log")
err = open(os.path.join(TMP, "serve.err"), "w+")
p = subprocess.Popen([TG, "serve", "--catalog", CAT, "--workspace", WS, "--stdio", "--audit", log,
                      "--redact-gitleaks", conf],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, text=True, bufsize=1)


def send(m):
    p.stdin.write(json.dumps(m) + "\n")
    p.stdin.flush()


def answer(i, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        ready, _, _ = select.select([p.stdout], [], [], 1)
        if not ready:
            continue
        line = p.stdout.readline()
        if not line:
            return None
        try:
            m = json.loads(line)
        except ValueError:
            continue
        if m.get("id") == i:
            return m
    return None


def call(i):
    send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "leaky", "arguments": {}}})
    m = answer(i)
    return json.dumps(m) if m else ""


def stderr_text():
    err.flush()
    err.seek(0)
    return err.read()


send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
      "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})
answer(1)
send({"jsonrpc": "2.0", "method": "notifications/initialized"})

out = call(2)
c("secret_redacted_by_the_operators_rule", CORP not in out and "[REDACTED:acme-key]" in out, out[-600:])
c("allowlisted_value_left", "acme_000000000000000000000000" in out, out[-600:])
c("ticket_shown_before_its_rule", TICKET in out, out[-600:])
c("vendor_format_redacted_without_configuration", DO not in out and "[REDACTED:digitalocean_token]" in out,
  out[-600:])

with open(conf, "w") as f:
    f.write(RULE2)
p.send_signal(signal.SIGHUP)
deadline = time.time() + 30
while time.time() < deadline and stderr_text().count("redaction rules beside") < 2:
    time.sleep(0.2)
out = call(3)
c("reload_adds_a_rule", TICKET not in out and "[REDACTED:acme-ticket]" in out and CORP not in out, out[-600:])
c("reload_said", "reloaded %s: 2 redaction rules" % conf in stderr_text(), stderr_text()[-800:])

with open(conf, "w") as f:
    f.write(RULE2 + "\n[[rules]]\nid = \"broken\"\nregex = '''a(?=b)'''\n")
p.send_signal(signal.SIGHUP)
deadline = time.time() + 30
while time.time() < deadline and "still redacting with the rules as they were" not in stderr_text():
    time.sleep(0.2)
out = call(4)
c("broken_file_keeps_the_rules", CORP not in out and TICKET not in out and "[REDACTED:acme-ticket]" in out,
  out[-600:])
c("broken_file_said", "a lookahead" in stderr_text() and "still redacting" in stderr_text(),
  stderr_text()[-800:])

p.stdin.close()
p.wait(timeout=60)
records = [json.loads(line) for line in open(log) if line.strip()]
calls = [x for x in records if x.get("kind") == "call"]
c("record_counts_the_rule", any((x.get("redacted") or {}).get("acme-key") for x in calls),
  json.dumps(calls)[-800:])
c("reload_refusal_recorded", any(x.get("outcome") == "load_refused" and x.get("subject") == conf
                                 for x in records), json.dumps(records[-3:]))
c("no_sanitizer_reports", "Sanitizer" not in stderr_text() and "runtime error:" not in stderr_text(),
  stderr_text()[-2000:])
c.done()
