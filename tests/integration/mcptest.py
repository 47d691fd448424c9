"""What the MCP integration scripts share (mcp_mrtr.py, mcp_streams.py,
mcp_reload.py): their checks' output, a toolgate serve --http started
for them, HTTP requests and server-sent events read off a response; an
OpenID Connect provider on loopback (oidc.py, approvals_cli.py)."""
import base64
import contextlib
import http.client
import http.server
import json
import os
import shutil
import socket
import subprocess
import sys
import threading
import time

# a modern (2026-07-28) request's _meta, declaring no client capability
META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}


class Checks:
    """check(name, cond, why) prints "ok - integration/PREFIX_NAME" or
    "not ok - ...: why"; done() exits 1 if any failed."""

    def __init__(self, prefix):
        self.prefix = prefix
        self.failures = 0

    def __call__(self, name, cond, why=""):
        if cond:
            print("ok - integration/%s_%s" % (self.prefix, name))
        else:
            self.failures += 1
            print("not ok - integration/%s_%s: %s" % (self.prefix, name, why))
        sys.stdout.flush()

    def done(self):
        sys.exit(1 if self.failures else 0)


def example_gateway(repo, tmp):
    """A fresh tmp with the example catalogue, workspace and data (the
    sql tools' ../data) copied in, the workspace and the data owned by the
    sandbox's user (nobody: fs.write and sql.execute write them), as
    scripts/demo.sh sets them up: (catalogue, workspace)."""
    cat, ws = os.path.join(tmp, "catalog"), os.path.join(tmp, "ws")
    data = os.path.join(tmp, "data")
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    shutil.copytree(os.path.join(repo, "examples/catalog"), cat)
    shutil.copytree(os.path.join(repo, "examples/workspace"), ws)
    shutil.copytree(os.path.join(repo, "examples/data"), data)
    for top in (ws, data):
        for d, _, fs in os.walk(top):
            for n in [d] + [os.path.join(d, x) for x in fs]:
                os.chown(n, 65534, 65534)
    return cat, ws


def nobody_workspace(repo, tmp):
    """The example workspace copied to tmp/ws, owned by the sandbox's user
    (a gateway refuses to start with a workspace its write tools cannot
    write): its path."""
    ws = os.path.join(tmp, "ws")
    shutil.copytree(os.path.join(repo, "examples/workspace"), ws)
    for d, _, fs in os.walk(ws):
        for n in [d] + [os.path.join(d, x) for x in fs]:
            os.chown(n, 65534, 65534)
    return ws


def issue_token(tg, state, policy, principal, *scopes):
    """A token `toolgate token issue` signs for principal with scopes."""
    argv = [tg, "token", "issue", "--state", state, "--policy", policy, "--principal", principal]
    for s in scopes:
        argv += ["--scope", s]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120).stdout.strip()


def free_port():
    """A loopback port nothing listens on (now), for a server that must
    be told its port before it starts."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_http(argv, err_path):
    """toolgate serve ARGV --http 127.0.0.1:0, its stderr in err_path (the
    caller looks there for sanitizer reports): (process, port)."""
    p = subprocess.Popen(argv + ["--http", "127.0.0.1:0"], stderr=open(err_path, "w"), text=True)
    # a loaded machine under ASan may take seconds; a gateway that exits
    # is not waited for
    for _ in range(1200):
        with open(err_path) as f:
            text = f.read()
        if "MCP on" in text:
            return p, int(text.split("MCP on ")[1].split()[0].split(":")[2].split("/")[0])
        if p.poll() is not None:
            break
        time.sleep(0.05)
    p.kill()
    raise SystemExit("the server did not start: " + text)


def request(port, method, body=None, headers=None, timeout=20):
    """One request on a connection of its own; the response with its body
    unread (the caller may read it as a stream)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    h = {"Accept": "application/json, text/event-stream"}
    if body is not None:
        h["Content-Type"] = "application/json"
    h.update(headers or {})
    c.request(method, "/mcp", body=json.dumps(body) if body is not None else None, headers=h)
    return c.getresponse()


def events(r, until=None, limit=100):
    """Server-sent events of r as (id, data parsed or None), stopping after
    `until` of them or at the end of the stream; comments are skipped."""
    out, eid, data = [], None, None
    while len(out) < limit:
        line = r.readline()
        if not line:
            break
        line = line.decode().rstrip("\n")
        if line.startswith("id: "):
            eid = line[4:]
        elif line.startswith("data: "):
            data = line[6:]
        elif line == "":
            if eid is not None or data is not None:
                out.append((eid, json.loads(data) if data else None))
                if until and len(out) >= until:
                    break
            eid, data = None, None
    return out


def message(r):
    """The next event of r that carries a message."""
    while True:
        got = events(r, until=1)
        if not got:
            return None
        if got[0][1] is not None:
            return got[0][1]


def modern_post(port, method, params, headers=None, timeout=60):
    """One modern (2026-07-28) request, stateless, as POST /mcp: its JSON-RPC
    answer (read off the event stream when it is one), or {"status": CODE}
    for an HTTP error. headers: the request's own (Authorization, ...)."""
    import urllib.error
    import urllib.request

    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
         "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": method}
    if method == "tools/call":
        h["Mcp-Name"] = params["name"]
    h.update(headers or {})
    body = {"jsonrpc": "2.0", "id": params.pop("id", 1), "method": method, "params": params}
    req = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=json.dumps(body).encode(),
                                 method="POST", headers=h)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            text = r.read().decode()
    except urllib.error.HTTPError as e:
        return {"status": e.code}
    for line in text.splitlines():
        if line.startswith("data: ") and '"id"' in line:
            return json.loads(line[6:])
    return json.loads(text)


@contextlib.contextmanager
def serving(argv, err_path):
    """toolgate serve ARGV --http 127.0.0.1:0 while the block runs: its
    port; stopped (SIGTERM, then waited for) however the block ends."""
    srv, port = start_http(argv, err_path)
    try:
        yield port
    finally:
        srv.terminate()
        srv.wait(timeout=60)


def stdio_session(tg, argv, messages, timeout=120):
    """toolgate serve ARGV on stdio, given messages (JSON-RPC objects, one
    a line) and then the end of its input: (the completed process, {id:
    result, or error when there is no result})."""
    p = subprocess.run([tg, "serve"] + argv, input="".join(json.dumps(m) + "\n" for m in messages),
                       capture_output=True, text=True, timeout=timeout)
    out = {}
    for x in p.stdout.splitlines():
        if x.strip():
            m = json.loads(x)
            out[m.get("id")] = m.get("result", m.get("error"))
    return p, out


def tool_call(port, token, name, args, key=None, dry=False, rid=1):
    """A stateless tools/call of name with args under token (and an
    Idempotency-Key, a dry run): its JSON-RPC result, {} when none."""
    headers = {"Authorization": "Bearer " + token}
    if key:
        headers["Idempotency-Key"] = key
    meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}
    if dry:
        meta["dev.toolgate/dryRun"] = True
    r = modern_post(port, "tools/call", {"id": rid, "name": name, "arguments": args,
                                         "_meta": meta}, headers)
    return r.get("result", {})


def error_of(result):
    """A tool result's dev.toolgate/error (code, ticket, ...), {} when none."""
    return result.get("_meta", {}).get("dev.toolgate/error", {})


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


class LoopbackProvider:
    """An OpenID Connect provider on 127.0.0.1: discovery and a JWKS of one
    Ed25519 key (kid k1) made by openssl in tmp; token(claims) signs a JWS
    with it. Its issuer is known before start(), so that a policy can name
    it while it is still down."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.port = free_port()
        self.issuer = "http://127.0.0.1:%d" % self.port
        self.key = os.path.join(tmp, "idp-key.pem")
        subprocess.run(["openssl", "genpkey", "-algorithm", "ed25519", "-out", self.key],
                       check=True)
        der = subprocess.run(["openssl", "pkey", "-in", self.key, "-pubout", "-outform", "DER"],
                             capture_output=True, check=True).stdout
        self.jwks = {"keys": [{"kty": "OKP", "crv": "Ed25519", "kid": "k1",
                               "x": b64url(der[-32:])}]}
        self.server = None

    def start(self):
        idp = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                if self.path == "/.well-known/openid-configuration":
                    body = {"issuer": idp.issuer, "jwks_uri": idp.issuer + "/jwks"}
                else:
                    body = idp.jwks if self.path == "/jwks" else {}
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *a):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        if self.server:
            self.server.shutdown()
            self.server.server_close()

    def token(self, claims, kid="k1"):
        """A JWS of claims signed with the key (EdDSA, by openssl)."""
        signing = b64url(json.dumps({"alg": "EdDSA", "typ": "JWT", "kid": kid}).encode()) + \
            "." + b64url(json.dumps(claims).encode())
        path = os.path.join(self.tmp, "signing")
        with open(path, "w") as f:
            f.write(signing)
        sig = subprocess.run(["openssl", "pkeyutl", "-sign", "-inkey", self.key, "-rawin",
                              "-in", path], capture_output=True, check=True).stdout
        return signing + "." + b64url(sig)
