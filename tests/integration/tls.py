#!/usr/bin/env python3
"""Serving beyond loopback (docs/MCP.md, "Serving beyond loopback"): HTTPS
with certificates the test makes with openssl, and the rules for a
non-loopback address, as stock clients (Python's ssl, curl, openssl
s_client) see them:

- HTTPS on loopback: initialize and tools/list through curl and Python's
  ssl; TLS 1.2 and 1.3 served, TLS 1.1 and 1.0 refused (openssl s_client);
- garbage before the handshake, plain HTTP to the TLS port, a handshake
  never finished: each closed, the server serving others all the while;
  2,000 idle connections and a slow handshake leave a token holder served;
- SIGHUP with a new pair: new handshakes get the new certificate, a
  connection made before keeps serving; a pair whose key does not match
  is refused on stderr and the last good one stays;
- the start refusals: a non-loopback address without authentication,
  without TLS or proxy, 0.0.0.0 without --public-url, a public URL over
  http, a key others may read, a key of another certificate;
- in a network namespace the test makes (root only): a client on the
  other side reaches https://gw.test:PORT/mcp with a token; the wrong
  host name, a foreign Origin, no token are refused; behind a trusted
  proxy (plain HTTP, --trust-proxy, --public-url) X-Forwarded-Host and
  X-Forwarded-Proto decide, and a client that is not the proxy is refused.

    tls.py TOOLGATE REPO TMPDIR

No packet leaves loopback or the test's own namespace.
"""
import json
import os
import re
import resource
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402

check = mcptest.Checks("tls")
TG, REPO, TMP = sys.argv[1], sys.argv[2], sys.argv[3]
WS = os.path.join(TMP, "ws")  # mcptest.example_gateway's
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "tls-test", "version": "1"}}}


def run(argv, **kw):
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, **kw)


def make_pair(name, cn, sans):
    """A self-signed P-256 certificate and its key (mode 0600) in TMP."""
    cert, key = os.path.join(TMP, name + ".crt"), os.path.join(TMP, name + ".key")
    r = run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:P-256", "-nodes", "-keyout", key, "-out", cert, "-days", "2",
             "-subj", "/CN=" + cn, "-addext", "subjectAltName=" + sans])
    if r.returncode:
        raise SystemExit("openssl req: " + r.stderr)
    os.chmod(key, 0o600)
    return cert, key


def fingerprint(port, host="127.0.0.1", cafile=None):
    """The SHA-256 of the certificate a new handshake gets."""
    ctx = ssl.create_default_context(cafile=cafile) if cafile else ssl._create_unverified_context()
    if not cafile:
        ctx.check_hostname = False
    with socket.create_connection((host, port), timeout=10) as s:
        with ctx.wrap_socket(s, server_hostname="localhost") as t:
            import hashlib
            return hashlib.sha256(t.getpeercert(binary_form=True)).hexdigest()


def cert_fingerprint(cert):
    der = ssl.PEM_cert_to_DER_cert(open(cert).read())
    import hashlib
    return hashlib.sha256(der).hexdigest()


def start(argv, err, addr="127.0.0.1:0"):
    """toolgate serve ARGV --http ADDR: (process, port)."""
    p = subprocess.Popen([TG, "serve"] + argv + ["--http", addr], stderr=open(err, "w"),
                         stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    for _ in range(400):
        text = open(err).read()
        if "MCP on" in text:
            m = re.search(r"listening on \S+:(\d+)", text) or \
                re.search(r"MCP on https?://[^/]*:(\d+)/", text)
            return p, int(m.group(1))
        if p.poll() is not None:
            raise SystemExit("serve stopped: " + text)
        time.sleep(0.05)
    p.kill()
    raise SystemExit("serve did not start: " + open(err).read())


def stop(p):
    p.terminate()
    p.wait(timeout=60)


def curl(*args):
    r = run(["curl", "-sS", "-m", "20", "-o", "-", "-w", "\n%{http_code}"] + list(args))
    body, _, code = r.stdout.rpartition("\n")
    return code, body + r.stderr


def init_args(url, *extra):
    return [url, "-H", "Accept: application/json, text/event-stream",
            "-H", "Content-Type: application/json", "-d", json.dumps(INIT)] + list(extra)


def s_client(port, version):
    """1 when openssl s_client completes a handshake of version."""
    r = run(["openssl", "s_client", "-connect", "127.0.0.1:%d" % port, "-" + version,
             "-cipher", "DEFAULT@SECLEVEL=0"], input="")
    return re.search(r"New, TLSv1\.\d, Cipher is (?!\(NONE\))", r.stdout) is not None


def closed_within(sock, seconds):
    """1 when the server closes sock (EOF or reset) within seconds."""
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
        return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def loopback_https(cert, key, cat, err):
    p, port = start(["--catalog", cat, "--workspace", WS, "--tls-cert", cert, "--tls-key", key,
                     "--header-timeout", "2"], err)
    url = "https://localhost:%d/mcp" % port
    try:
        code, body = curl(*init_args(url, "--cacert", cert))
        check("curl_initialize", code == "200" and '"protocolVersion"' in body, code + body)
        code, body = curl(*init_args("https://127.0.0.1:%d/mcp" % port, "--cacert", cert))
        check("curl_by_address", code == "200", code + body)
        code, body = curl(*init_args(url))
        check("curl_unknown_ca_refused", code == "000" and "certificate" in body, code + body)
        check("tls12_served", s_client(port, "tls1_2"))
        check("tls13_served", s_client(port, "tls1_3"))
        check("tls11_refused", not s_client(port, "tls1_1"))
        check("tls10_refused", not s_client(port, "tls1"))

        # garbage before the handshake, and plain HTTP: closed
        g = socket.create_connection(("127.0.0.1", port))
        g.sendall(os.urandom(2048))
        check("garbage_closed", closed_within(g, 10))
        g.close()
        g = socket.create_connection(("127.0.0.1", port))
        g.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}")
        check("plain_http_closed", closed_within(g, 10))
        g.close()
        # a handshake never finished: closed by the header deadline
        stall = socket.create_connection(("127.0.0.1", port))
        stall.sendall(b"\x16\x03\x01\x00\x10")  # a record header, and no more
        code, _ = curl(*init_args(url, "--cacert", cert))
        check("served_beside_stalled_handshake", code == "200", code)
        check("stalled_handshake_closed", closed_within(stall, 10))
        stall.close()

        # a flood of idle connections and a slow handshake: others served
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        idle = []
        for _ in range(min(2000, hard - 200)):
            try:
                idle.append(socket.create_connection(("127.0.0.1", port), timeout=5))
            except OSError:
                break
        code, body = curl(*init_args(url, "--cacert", cert))
        check("served_beside_2000_idle", code == "200" and len(idle) >= 1000,
              "%s, %d idle opened" % (code, len(idle)))
        for s in idle:
            s.close()

        # rotation: a connection made before keeps serving
        import http.client
        ctx = ssl.create_default_context(cafile=cert)
        old = http.client.HTTPSConnection("localhost", port, context=ctx, timeout=20)
        hdr = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
        old.request("POST", "/mcp", body=json.dumps(INIT), headers=hdr)
        r = old.getresponse()
        r.read()
        before = fingerprint(port)
        cert2, key2 = make_pair("second", "localhost", "DNS:localhost,IP:127.0.0.1")
        shutil.copy(cert2, cert)
        shutil.copy(key2, key)
        p.send_signal(signal.SIGHUP)
        for _ in range(100):
            if "reloaded " + cert in open(err).read():
                break
            time.sleep(0.05)
        after = fingerprint(port)
        check("sighup_rotates", before != after and after == cert_fingerprint(cert2),
              "%s -> %s" % (before[:12], after[:12]))
        old.request("POST", "/mcp", body=json.dumps(INIT), headers=hdr)
        r = old.getresponse()
        r.read()
        check("old_connection_kept", r.status == 200, str(r.status))
        old.close()
        third, _ = make_pair("third", "localhost", "DNS:localhost")
        shutil.copy(third, cert)  # the key is the second's: they do not match
        p.send_signal(signal.SIGHUP)
        for _ in range(100):
            if "still serving the certificate" in open(err).read():
                break
            time.sleep(0.05)
        text = open(err).read()
        check("bad_rotation_refused", "is not the key of the certificate" in text and
              fingerprint(port) == cert_fingerprint(cert2), text[-300:])
    finally:
        stop(p)
    text = open(err).read()
    check("no_sanitizer_report", "Sanitizer" not in text and "runtime error" not in text,
          text[-500:])


def refusals(cert, key, cat, state, policy):
    def refused(args, want):
        r = run([TG, "serve", "--catalog", cat, "--workspace", WS] + args)
        return r.returncode != 0 and want in r.stderr, r.stderr[-300:]

    auth = ["--policy", policy, "--state", state]
    check("refuse_no_auth", *refused(["--http", "0.0.0.0:0"], "add --policy FILE --state DIR"))
    check("refuse_plain_nonloopback", *refused(["--http", "0.0.0.0:0"] + auth,
                                               "--tls-cert FILE --tls-key FILE"))
    check("refuse_any_without_url", *refused(["--http", "0.0.0.0:0", "--tls-cert", cert,
                                              "--tls-key", key] + auth, "--public-url"))
    check("refuse_proxy_without_url", *refused(["--http", "0.0.0.0:0", "--trust-proxy",
                                                "10.0.0.1"] + auth, "needs --public-url"))
    check("refuse_http_public_url", *refused(["--http", "0.0.0.0:0", "--trust-proxy",
                                              "10.0.0.1", "--public-url",
                                              "http://gw.test/mcp"] + auth, "must be https"))
    check("refuse_bad_proxy", *refused(["--http", "127.0.0.1:0", "--trust-proxy",
                                        "10.0.0.0/40", "--public-url", "https://gw.test"],
                                       "--trust-proxy '10.0.0.0/40'"))
    check("refuse_cert_without_key", *refused(["--http", "127.0.0.1:0", "--tls-cert", cert],
                                              "go together"))
    check("refuse_missing_cert", *refused(["--http", "127.0.0.1:0", "--tls-cert",
                                           cert + ".typo", "--tls-key", key],
                                          "No such file or directory"))
    loose = os.path.join(TMP, "loose.key")
    shutil.copy(key, loose)
    os.chmod(loose, 0o644)
    check("refuse_readable_key", *refused(["--http", "127.0.0.1:0", "--tls-cert", cert,
                                           "--tls-key", loose], "every user may read"))
    other, okey = make_pair("other", "localhost", "DNS:localhost")
    check("refuse_mismatched_key", *refused(["--http", "127.0.0.1:0", "--tls-cert", cert,
                                             "--tls-key", okey], "is not the key of"))
    check("refuse_tls_without_http", *refused(["--tls-cert", cert, "--tls-key", key],
                                              "is for --http"))


class Netns:
    """A namespace with a veth pair: this side 10.254.213.1, the other .2."""

    def __init__(self):
        self.name = "tgtls%d" % os.getpid()
        self.host, self.peer = "10.254.213.1", "10.254.213.2"
        ip = ["ip"]
        a, b = "tgh%d" % (os.getpid() % 100000), "tgp%d" % (os.getpid() % 100000)
        steps = [ip + ["netns", "add", self.name],
                 ip + ["link", "add", a, "type", "veth", "peer", "name", b],
                 ip + ["link", "set", b, "netns", self.name],
                 ip + ["addr", "add", self.host + "/30", "dev", a],
                 ip + ["link", "set", a, "up"],
                 self.exec(["ip", "addr", "add", self.peer + "/30", "dev", b]),
                 self.exec(["ip", "link", "set", b, "up"]),
                 self.exec(["ip", "link", "set", "lo", "up"])]
        self.link = a
        for s in steps:
            r = run(s)
            if r.returncode:
                self.close()
                raise OSError(" ".join(s) + ": " + r.stderr)

    def exec(self, argv):
        return ["ip", "netns", "exec", self.name] + argv

    def close(self):
        run(["ip", "link", "del", self.link])
        run(["ip", "netns", "del", self.name])


def remote(cat, state, policy, token, err):
    try:
        ns = Netns()
    except OSError as e:
        print("skip - integration/tls_netns: %s" % e)
        return
    try:
        cert, key = make_pair("gw", "gw.test", "DNS:gw.test")
        port = 18443 + os.getpid() % 1000
        p, port = start(["--catalog", cat, "--workspace", WS, "--tls-cert", cert, "--tls-key", key,
                         "--public-url", "https://gw.test:%d/mcp" % port,
                         "--policy", policy, "--state", state], err,
                        "%s:%d" % (ns.host, port))
        url = "https://gw.test:%d/mcp" % port
        resolve = "gw.test:%d:%s" % (port, ns.host)
        bearer = "Authorization: Bearer " + token

        def ncurl(*args):
            r = run(ns.exec(["curl", "-sS", "-m", "20", "-o", "-", "-w", "\n%{http_code}"] +
                            list(args)))
            body, _, code = r.stdout.rpartition("\n")
            return code, body + r.stderr
        try:
            code, body = ncurl(*init_args(url, "--cacert", cert, "--resolve", resolve,
                                          "-H", bearer))
            check("netns_https_served", code == "200" and "protocolVersion" in body,
                  code + body)
            code, body = ncurl(*init_args(url, "--cacert", cert, "--resolve", resolve))
            check("netns_no_token_401", code == "401", code + body)
            code, body = ncurl(*init_args("https://%s:%d/mcp" % (ns.host, port), "-k",
                                          "-H", bearer))
            check("netns_wrong_host_403", code == "403" and "not gw.test:" in body,
                  code + body)
            code, body = ncurl(*init_args(url, "--cacert", cert, "--resolve", resolve,
                                          "-H", bearer, "-H", "Origin: https://evil.test"))
            check("netns_foreign_origin_403", code == "403" and "Origin" in body, code + body)
            code, body = ncurl(*init_args(url, "--cacert", cert, "--resolve", resolve,
                                          "-H", bearer, "-H", "Origin: https://gw.test:%d"
                                          % port))
            check("netns_own_origin_served", code == "200", code + body)
            # forwarded headers from a client that is no trusted proxy
            code, body = ncurl(*init_args("https://%s:%d/mcp" % (ns.host, port), "-k",
                                          "-H", bearer, "-H", "X-Forwarded-Host: gw.test:%d"
                                          % port))
            check("netns_forwarded_untrusted", code == "403", code + body)
        finally:
            stop(p)
        # behind a proxy: the namespace's address is the proxy
        p, port = start(["--catalog", cat, "--workspace", WS, "--trust-proxy", ns.peer, "--public-url",
                         "https://gw.test/mcp", "--policy", policy, "--state", state], err,
                        "%s:0" % ns.host)
        plain = "http://%s:%d/mcp" % (ns.host, port)
        try:
            code, body = ncurl(*init_args(plain, "-H", bearer, "-H", "X-Forwarded-Proto: https",
                                          "-H", "X-Forwarded-Host: gw.test"))
            check("proxy_forwarded_served", code == "200", code + body)
            code, body = ncurl(*init_args(plain, "-H", bearer, "-H", "X-Forwarded-Host: gw.test"))
            check("proxy_without_proto_403", code == "403" and "X-Forwarded-Proto" in body,
                  code + body)
            code, body = ncurl(*init_args(plain, "-H", bearer, "-H", "X-Forwarded-Proto: https",
                                          "-H", "X-Forwarded-Host: evil.test"))
            check("proxy_wrong_host_403", code == "403", code + body)
            # the console behind it: https to the browser, so HSTS
            r = run(ns.exec(["curl", "-sS", "-m", "20", "-D", "-", "-o", "/dev/null",
                             plain.replace("/mcp", "/console/"), "-H", "X-Forwarded-Proto: https",
                             "-H", "X-Forwarded-Host: gw.test"]))
            check("proxy_console_hsts", " 200 " in r.stdout.split("\n")[0] and
                  "Strict-Transport-Security: max-age=" in r.stdout, r.stdout + r.stderr)
            code, body = curl(*init_args(plain, "-H", bearer, "-H", "X-Forwarded-Proto: https",
                                         "-H", "X-Forwarded-Host: gw.test"))
            check("not_the_proxy_403", code == "403" and "--trust-proxy" in body, code + body)
        finally:
            stop(p)
    finally:
        ns.close()


def main():
    # the example gateway, its workspace and data the sandbox's user's
    cat, _ = mcptest.example_gateway(REPO, TMP)
    state = os.path.join(TMP, "state")
    os.makedirs(state, mode=0o700)
    policy = os.path.join(TMP, "policy.json")
    with open(policy, "w") as f:
        json.dump({"principals": {"agent": {"scopes": ["*:read"]}}}, f)
    token = mcptest.issue_token(TG, state, policy, "agent", "*:read")
    cert, key = make_pair("server", "localhost", "DNS:localhost,IP:127.0.0.1")
    loopback_https(cert, key, cat, os.path.join(TMP, "serve.err"))
    refusals(cert, key, cat, state, policy)
    if os.geteuid() == 0 and shutil.which("ip"):
        remote(cat, state, policy, token, os.path.join(TMP, "remote.err"))
    else:
        print("skip - integration/tls_netns: needs root and ip(8)")
    check.done()


main()
