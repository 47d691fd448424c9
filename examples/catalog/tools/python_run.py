#!/usr/bin/env python3
"""python.run: run a snippet of Python (code a model wrote) and return what
it printed. The snippet runs in this strict sandbox: no network, no host
files, a fresh throw-away /tmp, hard memory, CPU and time limits.

This is a zygote: the contract says "prestart", so with `serve --warm N`
the gateway starts this script in a fresh sandbox before any call comes.
It imports the standard library a snippet usually reaches for, then waits
for its arguments on stdin; the call's snippet then runs in a child forked
from this ready interpreter, and the sandbox is thrown away after the one
call, like any other.
"""
import atexit
import json
import os
import select
import signal
import sys
import threading
import time
import traceback
import types

# What snippets usually reach for, imported before the call arrives.
import base64  # noqa: F401
import bisect  # noqa: F401
import collections  # noqa: F401
import copy  # noqa: F401
import csv  # noqa: F401
import datetime  # noqa: F401
import decimal  # noqa: F401
import fractions  # noqa: F401
import functools  # noqa: F401
import hashlib  # noqa: F401
import heapq  # noqa: F401
import io
import itertools  # noqa: F401
import math  # noqa: F401
import operator  # noqa: F401
import random  # noqa: F401
import re  # noqa: F401
import statistics  # noqa: F401
import string  # noqa: F401
import textwrap  # noqa: F401
import uuid  # noqa: F401

TIMEOUT = 8.0
KEEP = {1: 20000, 2: 4000}   # the tail of stdout and stderr returned
READ_CAP = 4 << 20           # what is read of each before it is dropped


def child(code, fds):
    """In the forked child: the snippet as `python3 -I -c CODE` runs it."""
    in_r, out_w, err_w = fds
    os.dup2(in_r, 0)
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    os.closerange(3, 1 << 16)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), line_buffering=False)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), line_buffering=True)
    sys.argv = ["-c"]
    sys.path[:] = [p for p in sys.path if p and p != os.path.dirname(__file__)]
    # the snippet's own __main__ (pickle and typing look it up there)
    main_module = types.ModuleType("__main__")
    main_module.__builtins__ = __builtins__
    sys.modules["__main__"] = main_module
    status = 0
    try:
        exec(compile(code, "<string>", "exec"), main_module.__dict__)
    except SystemExit as e:
        if e.code is None:
            status = 0
        elif isinstance(e.code, int):
            status = e.code & 0xFF
        else:
            print(e.code, file=sys.stderr)
            status = 1
    except BaseException as e:
        # from the snippet's frame on, as python3 -c prints it
        traceback.print_exception(type(e), e, e.__traceback__.tb_next)
        status = 1
    # as an interpreter ends: its threads joined, then atexit
    try:
        threading._shutdown()
        atexit._run_exitfuncs()
    except BaseException:
        traceback.print_exc()
        status = status or 1
    for f in (sys.stdout, sys.stderr):
        try:
            f.flush()
        except Exception:
            status = status or 120
    os._exit(status)


def timed_out(pid):
    """The snippet ran too long: killed, and the tool's error."""
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    json.dump({"error": {"code": "timeout", "message": "the code ran longer than 8 s"}}, sys.stdout)
    sys.stdout.flush()
    os._exit(1)


def main():
    args = json.load(sys.stdin)
    code, feed = args["code"], args.get("stdin", "").encode()
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        child(code, (in_r, out_w, err_w))
    for fd in (in_r, out_w, err_w):
        os.close(fd)
    os.set_blocking(in_w, False)
    bufs = {out_r: bytearray(), err_r: bytearray()}
    open_fds = [out_r, err_r]
    deadline = time.monotonic() + TIMEOUT
    st = None
    while open_fds and st is None:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out(pid)
        wfds = [in_w] if in_w >= 0 else []
        r, w, _ = select.select(open_fds, wfds, [], min(left, 0.05))
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            # the snippet ended: what a process it left behind still
            # holds open is not waited for
            st = status
            for fd in open_fds:
                os.set_blocking(fd, False)
        if w:
            try:
                feed = feed[os.write(in_w, feed):]
            except BlockingIOError:
                pass
            except BrokenPipeError:
                feed = b""  # the snippet stopped reading
            if not feed:
                os.close(in_w)
                in_w = -1
        for fd in list(open_fds) if st is not None else r:
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except BlockingIOError:
                    break
                if not chunk:
                    open_fds.remove(fd)
                    break
                if len(bufs[fd]) < READ_CAP:
                    bufs[fd] += chunk
                if st is None:
                    break
    if in_w >= 0:
        os.close(in_w)
    while st is None:
        # its output closed, the snippet may still run: within the limit
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            st = status
        elif time.monotonic() > deadline:
            timed_out(pid)
        else:
            time.sleep(0.01)
    out = bufs[out_r].decode(errors="replace")
    err = bufs[err_r].decode(errors="replace")
    json.dump({"exit_code": os.waitstatus_to_exitcode(st), "stdout": out[-KEEP[1]:],
               "stderr": err[-KEEP[2]:]}, sys.stdout)
    # no interpreter teardown, module by module: the sandbox goes anyway
    sys.stdout.flush()
    os._exit(0)


main()
