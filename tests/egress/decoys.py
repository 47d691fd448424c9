#!/usr/bin/env python3
"""Decoy services for the egress suite (tests/egress/run.sh), run inside
the decoys' network namespace that suite creates, so that nothing here is
reachable from anywhere else.

    decoys.py            the decoys
    decoys.py gateway    a service of the gateway's own host, on
                         192.0.2.1:80 in the gateway's namespace: no name
                         may lead to it ("HIT gateway ...")

Serves, on addresses the suite put on the namespace's loopback:

  203.0.113.10:80     "api": the allowed service (HTTP; /redirect answers
                      with a redirect to the metadata address)
  203.0.113.10:5432   "db": a line protocol that is not HTTP ("db: LINE")
  203.0.113.20:80     "other": a public service no rule names
  169.254.169.254:80  "metadata": the cloud metadata address
  10.255.0.9:80       "intranet": a private address
  203.0.113.53:53     DNS (UDP) for the names below

and prints "READY" once all listen, then "HIT NAME WHAT" for every request
any of them gets (the suite counts them: a decoy that no rule allows must
never be hit).

Names: api.test, other.test, meta.test (-> 169.254.169.254), intranet.test
(-> 10.255.0.9), multi.test (-> api and intranet), rebind.test (api and
metadata in turn, TTL 0: DNS rebinding), crowd.test (20 addresses),
self.test (-> 192.0.2.1, the gateway's own address), self6.test (only an
AAAA answer, ::ffff:192.0.2.1: the gateway's own address, IPv4-mapped).
"""
import socket
import socketserver
import struct
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

lock = threading.Lock()


def hit(name, what):
    with lock:
        print("HIT %s %s" % (name, what), flush=True)


def http_handler(name):
    class H(BaseHTTPRequestHandler):
        def do_GET(self):
            hit(name, self.path)
            if self.path == "/redirect":
                self.send_response(302)
                self.send_header("Location", "http://169.254.169.254/latest/meta-data/")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = ("service %s %s host=%s\n" % (name, self.path, self.headers.get("Host"))).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    return H


class LineHandler(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline(1024).decode(errors="replace").strip()
        hit("db", line)
        self.wfile.write(("db: %s\n" % line).encode())


class ThreadingTCP(socketserver.ThreadingTCPServer):
    allow_reuse_address = True
    daemon_threads = True


NAMES = {
    "api.test": ["203.0.113.10"],
    "other.test": ["203.0.113.20"],
    "meta.test": ["169.254.169.254"],
    "intranet.test": ["10.255.0.9"],
    "multi.test": ["203.0.113.10", "10.255.0.9"],
    "crowd.test": ["203.0.113.%d" % (100 + i) for i in range(20)],
    "self.test": ["192.0.2.1"],
}
NAMES6 = {
    "self6.test": ["::ffff:192.0.2.1"],
}
rebind_turn = [0]


def dns_answer(query):
    if len(query) < 12:
        return None
    qid, flags, qd = struct.unpack("!HHH", query[:6])
    if qd != 1:
        return None
    at, labels = 12, []
    while at < len(query) and query[at]:
        n = query[at]
        labels.append(query[at + 1:at + 1 + n].decode(errors="replace"))
        at += 1 + n
    at += 1
    if at + 4 > len(query):
        return None
    qtype = struct.unpack("!H", query[at:at + 2])[0]
    question = query[12:at + 4]
    name = ".".join(labels).lower()
    if name == "rebind.test":
        if qtype == 1:
            rebind_turn[0] += 1
        addrs = ["203.0.113.10" if rebind_turn[0] % 2 else "169.254.169.254"]
    else:
        addrs = NAMES.get(name)
    addrs6 = NAMES6.get(name)
    rcode = 0 if addrs is not None or addrs6 is not None else 3
    answers = b""
    count = 0
    if qtype == 1 and addrs:
        for a in addrs:
            answers += struct.pack("!HHHIH", 0xC00C, 1, 1, 0, 4) + socket.inet_aton(a)
            count += 1
    if qtype == 28 and addrs6:
        for a in addrs6:
            answers += struct.pack("!HHHIH", 0xC00C, 28, 1, 0, 16) + \
                socket.inet_pton(socket.AF_INET6, a)
            count += 1
    hit("dns", "%s %d -> %s" % (name, qtype, addrs if qtype == 1 else
                                 addrs6 if qtype == 28 else []))
    head = struct.pack("!HHHHHH", qid, 0x8180 | rcode, 1, count, 0, 0)
    return head + question + answers


def dns_main(sock):
    while True:
        query, peer = sock.recvfrom(512)
        reply = dns_answer(query)
        if reply:
            sock.sendto(reply, peer)


def gateway_main():
    server = ThreadingHTTPServer(("192.0.2.1", 80), http_handler("gateway"))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print("READY gateway", flush=True)
    sys.stdin.read()
    threading.Event().wait()


def main():
    if sys.argv[1:] == ["gateway"]:
        gateway_main()
        return
    servers = [
        ThreadingHTTPServer(("203.0.113.10", 80), http_handler("api")),
        ThreadingTCP(("203.0.113.10", 5432), LineHandler),
        ThreadingHTTPServer(("203.0.113.20", 80), http_handler("other")),
        ThreadingHTTPServer(("169.254.169.254", 80), http_handler("metadata")),
        ThreadingHTTPServer(("10.255.0.9", 80), http_handler("intranet")),
    ]
    dns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    dns.bind(("203.0.113.53", 53))
    for s in servers:
        s.daemon_threads = True
        threading.Thread(target=s.serve_forever, daemon=True).start()
    threading.Thread(target=dns_main, args=(dns,), daemon=True).start()
    print("READY", flush=True)
    sys.stdin.read()  # until the suite closes our stdin or kills us
    threading.Event().wait()


if __name__ == "__main__":
    main()
