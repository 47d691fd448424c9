#!/usr/bin/env python3
"""What the egress suite (tests/egress/run.sh) runs inside the sandbox:
clients that speak to the proxy's listener at 127.0.0.1:3128 in ways curl
will not.

    client.py socks HOST PORT LINE   SOCKS5 CONNECT, the name resolved by the
                                     proxy; send LINE, print the answer
    client.py spellings HOST...      "GET http://HOST/" as written; print
                                     "HOST STATUS" for each
    client.py bypass                 try every way around the proxy; print
                                     "WHAT refused[: why]" or "WHAT open"
    client.py hostile                malformed and hostile requests; print
                                     "NAME STATUS" for each
    client.py tool                   a tool: {"url"} on stdin, GET it through
                                     http_proxy, print {"status", "body"}
    client.py hold N                 a tool: open N connections to the proxy
                                     and hold them, saying nothing; print
                                     how many were refused, then wait
"""
import json
import os
import socket
import struct
import sys
import time
import urllib.error
import urllib.request

PROXY = ("127.0.0.1", 3128)


def dial():
    s = socket.create_connection(PROXY, timeout=15)
    return s


def read_all(s):
    out = b""
    while True:
        try:
            b = s.recv(65536)
        except OSError:
            break
        if not b:
            break
        out += b
    return out


def status_of(reply):
    line = reply.split(b"\r\n", 1)[0].split()
    return line[1].decode() if len(line) > 1 else "none"


def socks(host, port, line):
    s = dial()
    s.sendall(b"\x05\x01\x00")
    assert s.recv(2) == b"\x05\x00"
    name = host.encode()
    s.sendall(b"\x05\x01\x00\x03" + bytes([len(name)]) + name + struct.pack("!H", int(port)))
    reply = s.recv(10)
    if reply[1] != 0:
        print("socks refused %d" % reply[1])
        return
    s.sendall(line.encode() + b"\n")
    sys.stdout.write(read_all(s).decode())


def spellings(hosts):
    for h in hosts:
        s = dial()
        s.sendall(("GET http://%s/latest/meta-data/ HTTP/1.1\r\nHost: x\r\n\r\n" % h).encode())
        print("%s %s" % (h, status_of(read_all(s))))


def attempt(what, fn):
    try:
        fn()
        print("%s open" % what)
    except OSError as e:
        print("%s refused: %s" % (what, e.strerror or e))


def bypass():
    def direct():
        socket.create_connection(("203.0.113.10", 80), timeout=3).close()

    def loopback():
        socket.create_connection(("127.0.0.1", 22), timeout=3).close()

    def bind():
        s = socket.socket()
        s.bind(("127.0.0.1", 8080))
        s.listen(1)

    def udp():
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.settimeout(2)
        s.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x03api\x04test\x00\x00\x01\x00\x01",
                 ("203.0.113.53", 53))
        s.recvfrom(512)

    for what, fn in (("direct 203.0.113.10:80", direct), ("loopback 127.0.0.1:22", loopback),
                     ("bind 127.0.0.1:8080", bind), ("udp 203.0.113.53:53", udp)):
        attempt(what, fn)
    # the lines above end "refused: why"; the suite matches the start
    sys.stdout.flush()


def hostile():
    s = dial()
    s.sendall(b"GET http://api.test/ HTTP/1.1\r\n" + b"X-Flood: " + b"a" * 20000 + b"\r\n\r\n")
    print("flood %s" % status_of(read_all(s)))
    s = dial()
    s.sendall(b"\x16\x03\x01 not a proxy request\r\n\r\n")
    print("garbage %s" % status_of(read_all(s)))
    s = dial()
    s.sendall(b"GET http://api.test/ HTTP/1.1\r\nX: \x00\r\n\r\n")
    print("nul %s" % status_of(read_all(s)))
    s = dial()
    s.sendall(b"\x05\x01\x00")
    s.recv(2)
    s.sendall(b"\x05\x02\x00\x01\xcb\x00\x71\x0a\x00\x50")
    print("socks-bind %d" % s.recv(10)[1])
    s = dial()
    s.sendall(b"GET http://api.test/ HTTP/1.1\r\n")  # and never the rest
    start = time.monotonic()
    print("slow %s" % status_of(read_all(s)))
    sys.stderr.write("slow client answered after %.1f s\n" % (time.monotonic() - start))


def tool():
    url = json.loads(sys.stdin.readline())["url"]
    try:
        with urllib.request.urlopen(url, timeout=15) as r:
            status, body = r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as e:
        status, body = e.code, e.read().decode(errors="replace")
    print(json.dumps({"status": status, "body": body, "proxy": os.environ.get("http_proxy")}))


def hold(n):
    held = [dial() for _ in range(int(n))]
    refused = 0
    time.sleep(0.3)
    for s in held:
        s.setblocking(False)
        try:
            refused += s.recv(64).startswith(b"HTTP/1.1 503")
        except OSError:
            pass
    print(json.dumps({"refused": refused}), flush=True)
    time.sleep(60)


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "socks":
        socks(*args)
    elif mode == "spellings":
        spellings(args)
    elif mode == "bypass":
        bypass()
    elif mode == "hostile":
        hostile()
    elif mode == "tool":
        tool()
    elif mode == "hold":
        hold(*args)
    else:
        sys.exit("unknown mode " + mode)
