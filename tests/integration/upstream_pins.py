#!/usr/bin/env python3
"""Pins end to end (docs/UPSTREAMS.md, "Pins" and "Commands"), as an operator
meets them: `toolgate serve --http` with a policy, fronting
tests/upstream/fake_server.py (mode runner) in its sandbox, whose tool
`change` rewrites echo's description and sends list_changed, as a rug pull
would:

- the first listing is served and pinned, a call made as the gateway
  starts waiting for it (docs/UPSTREAMS.md, "While it starts");
- the changed definition is held: a call of it is refused with
  definition_awaits_review and a ticket; `toolgate approvals list` and
  `show` show the ticket, its preview saying what changed;
- `toolgate upstream accept` refuses a principal without the approve scope
  and a misspelt upstream (naming the upstreams that have definitions
  awaiting review), then accepts with alice's token; the gateway serves the
  new definition within seconds, and `upstream show --state` names alice
  as its pin's author.

    upstream_pins.py TOOLGATE REPO TMPDIR
"""
import json
import os
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mcptest import Checks, error_of, issue_token, serving, tool_call  # noqa: E402

TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
c = Checks("upstream_pins")

shutil.rmtree(TMP, ignore_errors=True)
CAT, SRV, STATE = (os.path.join(TMP, d) for d in ("cat", "srv", "state"))
for d in (os.path.join(CAT, "upstreams"), SRV):
    os.makedirs(d)
for d in (TMP, SRV):
    os.chmod(d, 0o755)  # the sandbox's user reads the server's files
shutil.copy(os.path.join(REPO, "tests/upstream/fake_server.py"), SRV)
with open(os.path.join(CAT, "upstreams", "fake.json"), "w") as f:
    json.dump({"transport": "stdio",
               "argv": ["/usr/bin/python3", "/srv/fake/fake_server.py", "runner"],
               "sandbox": {"mounts": [{"host": SRV, "inside": "/srv/fake"}]},
               "tools": {"echo": {"authority": "read"}, "change": {"authority": "read"}}}, f)
POLICY = os.path.join(TMP, "policy.json")
with open(POLICY, "w") as f:
    json.dump({"principals": {"agent": {"scopes": ["fake.*:read"]},
                              "alice": {"scopes": ["fake.*:approve"]}}}, f)
AGENT = issue_token(TG, STATE, POLICY, "agent", "fake.*:read")
ALICE = issue_token(TG, STATE, POLICY, "alice", "fake.*:approve")
ERR = os.path.join(TMP, "serve.err")


def until(what, tries=300):
    """what() once it is truthy (tried every 50 ms), else None."""
    for _ in range(tries):
        got = what()
        if got:
            return got
        time.sleep(0.05)
    return None


def text_of(result):
    return " ".join(b.get("text", "") for b in result.get("content", []))


def cli(*args, stdin=None):
    r = subprocess.run([TG] + list(args), capture_output=True, text=True, timeout=60,
                       input=stdin if stdin is not None else "")
    return r.returncode, r.stdout, r.stderr


with serving([TG, "serve", "--catalog", CAT, "--policy", POLICY, "--state", STATE], ERR) as port:
    # at once, as the server starts: the call waits for its first listing
    first = tool_call(port, AGENT, "fake.echo", {"text": "hi"})
    c("first_listing_served", "hi" in text_of(first) and not first.get("isError"), str(first))
    r = tool_call(port, AGENT, "fake.change", {"description": "Echoes, politely."})
    c("changed", not r.get("isError"), str(r))
    held = until(lambda: (lambda r: r if error_of(r).get("code") == "definition_awaits_review"
                          else None)(tool_call(port, AGENT, "fake.echo", {"text": "hi"})))
    ticket = error_of(held or {}).get("ticket", "")
    c("held_with_ticket", held is not None and len(ticket) == 32 and "approve" in text_of(held),
      str(held))

    rc, out, err = cli("approvals", "list", "--json", "--state", STATE)
    c("approvals_list", rc == 0 and any(
        t.get("id") == ticket and t.get("tool") == "fake.echo@definition" and
        t.get("principal") == "upstream fake" for t in json.loads(out or "{}").get("tickets", [])),
      out + err)
    rc, out, err = cli("approvals", "show", ticket, "--state", STATE)
    c("approvals_show_preview", rc == 0 and "Echoes, politely." in out and
      "Echoes its arguments." in out, out + err)
    # both definitions whole in the preview, for the console to lay side by side
    rc, out, err = cli("approvals", "show", ticket, "--json", "--state", STATE)
    st = (json.loads(out or "{}").get("preview") or {}).get("structured", {})
    c("preview_has_both_definitions", rc == 0 and st.get("change") == "changed" and
      "Echoes its arguments." in json.dumps(st.get("old")) and
      "Echoes, politely." in json.dumps(st.get("new")), out + err)

    rc, out, err = cli("upstream", "accept", "fake", "--state", STATE, "--policy", POLICY,
                       "--token", AGENT)
    c("accept_needs_approve_scope", rc == 1 and "fake.echo:approve" in err, "rc=%d %s" % (rc, err))
    rc, out, err = cli("upstream", "accept", "fkae", "--state", STATE, "--policy", POLICY,
                       "--token", ALICE)
    c("accept_typo", rc == 1 and "fkae" in err and "awaiting review: fake" in err,
      "rc=%d %s" % (rc, err))
    # the token on stdin, never on the command line (docs/CLI.md)
    rc, out, err = cli("upstream", "accept", "fake", "--state", STATE, "--policy", POLICY,
                       "--token", "-", stdin=ALICE + "\n")
    c("accept", rc == 0 and ticket in out and "fake.echo" in out and "alice" in out,
      "rc=%d %s %s" % (rc, out, err))
    served = until(lambda: (lambda r: r if "again" in text_of(r) else None)(
        tool_call(port, AGENT, "fake.echo", {"text": "again"})))
    c("served_once_accepted", served is not None and not served.get("isError"), str(served))
    rc, out, err = cli("upstream", "accept", "fake", "--state", STATE, "--policy", POLICY,
                       "--token", ALICE)
    c("accept_nothing_left", rc == 1 and "awaits review" in err, "rc=%d %s" % (rc, err))

rc, out, err = cli("upstream", "show", "fake", "--catalog", CAT, "--state", STATE)
c("pin_by_alice", rc == 0 and any(x.split()[:2] == ["pinned:", "echo"] and x.endswith("by alice")
                                  for x in out.splitlines()), out + err)
with open(ERR) as f:
    log = f.read()
c("logged", "upstream_definition_changed" in log or "definition changed" in log, log[-2000:])
c("no_sanitizer_reports", "ERROR: AddressSanitizer" not in log and "runtime error" not in log,
  log[-2000:])
c.done()
