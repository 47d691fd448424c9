#!/usr/bin/env python3
"""The man pages agree with the code (issue 21: "--help and man pages agree
with the code: a test compares the option lists").

For each command of `toolgate --help`:
- help: the long options its --help prints, and each verb's (the verbs read
  from its usage lines, `toolgate CMD VERB`), together;
- page: the options BUILD/man/toolgate-CMD.1 documents, the terms of its
  definition lists (a line of bold options followed by `.RS 4`, as scdoc
  writes `*--opt* _ARG_` then an indented paragraph);
- code: the long options of the option tables (`struct option options[]`)
  of src/cli/CMD.c and src/cli/CMD_*.c.
The three sets must be equal (--help left out: every command takes it).
Then every page has a command and every command a page, and man(1) reads
each page without a warning (skipped when man is not installed).

Prints "ok - ...", "not ok - ...: why" or "skip - ...: why" a line.
Usage: tests/man/options.py BUILD-DIR
"""
import glob
import os
import re
import shutil
import subprocess
import sys

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
TG = os.path.join(BUILD, "toolgate")
MAN = os.path.join(BUILD, "man")
LONG = re.compile(r"(?<![\w-])--([a-z][a-z0-9-]*)")
failed = 0


def result(ok, name, why=""):
    global failed
    if ok:
        print(f"ok - man/{name}")
    else:
        failed += 1
        print(f"not ok - man/{name}: {why}")


def helptext(*args):
    p = subprocess.run([TG, *args, "--help"], capture_output=True, text=True, timeout=30)
    if p.returncode != 0:
        raise RuntimeError(f"toolgate {' '.join(args)} --help exited {p.returncode}")
    return p.stdout


def commands():
    """The commands `toolgate --help` lists, in its order."""
    text = helptext()
    block = text.split("commands:", 1)[1].split("\n\n", 1)[0]
    names = [line.split()[0] for line in block.splitlines() if line.strip()]
    return list(dict.fromkeys(names))  # schema, catalog: a line a verb


def verbs(cmd, text):
    """The verbs of cmd's usage lines: `toolgate CMD VERB` with VERB a
    lower-case word (operands are upper case, options start with -)."""
    found = []
    for m in re.finditer(rf"toolgate {cmd} ([a-z][a-z-]*)\b", text):
        if m.group(1) not in found:
            found.append(m.group(1))
    return found


# every command's: --help, and --config (cli_parse adds it to each table;
# toolgate(1) documents it once, checked below)
GLOBAL = {"help", "config"}


def help_options(cmd):
    text = helptext(cmd)
    opts = set(LONG.findall(text))
    for verb in verbs(cmd, text):
        opts |= set(LONG.findall(helptext(cmd, verb)))
    opts -= GLOBAL
    return opts


def page_options(path):
    """The options a generated page documents: its definition terms."""
    lines = open(path, encoding="utf-8").read().splitlines()
    opts = set()
    for i, line in enumerate(lines[:-1]):
        if line.startswith("\\fB-") and lines[i + 1] == ".RS 4":
            opts |= set(re.findall(r"\\fB--([a-z][a-z0-9-]*)\\fR", line))
    opts -= GLOBAL
    return opts


def code_options(cmd):
    """The long options of the option tables of src/cli/CMD.c and
    src/cli/CMD_*.c (the CLI_OPTION_NAME macros of cli.h included)."""
    macros = dict(re.findall(r'#define (CLI_OPTION_[A-Z]+) \{ "([a-z-]+)"',
                             open("src/cli/cli.h").read()))
    opts = set()
    for path in [f"src/cli/{cmd}.c"] + glob.glob(f"src/cli/{cmd}_*.c"):
        if not os.path.exists(path):
            continue
        src = open(path).read()
        for table in re.findall(r"struct option \w+\[\] = \{(.*?)\n\};", src, re.S):
            opts |= set(re.findall(r'\{ "([a-z][a-z0-9-]*)",', table))
            opts |= {macros[m] for m in re.findall(r"\b(CLI_OPTION_[A-Z]+)\b", table)
                     if m in macros}
    opts -= GLOBAL
    return opts


def differ(a_name, a, b_name, b):
    parts = []
    if a - b:
        parts.append(f"{a_name} only: " + " ".join("--" + o for o in sorted(a - b)))
    if b - a:
        parts.append(f"{b_name} only: " + " ".join("--" + o for o in sorted(b - a)))
    return "; ".join(parts)


def main():
    cmds = commands()
    result(len(cmds) >= 13, "commands", f"toolgate --help lists {cmds}")
    pages = sorted(glob.glob(os.path.join(MAN, "*.[15]")))
    result(len(pages) > 0, "pages-built", f"no pages in {MAN} (make man)")
    for cmd in cmds:
        page = os.path.join(MAN, f"toolgate-{cmd}.1")
        if not os.path.exists(page):
            result(False, f"options/{cmd}", f"no page {page} (man/toolgate-{cmd}.1.scd)")
            continue
        helped, paged, coded = help_options(cmd), page_options(page), code_options(cmd)
        why = differ("--help", helped, "the page", paged)
        result(not why, f"options/{cmd}", why)
        why = differ("--help", helped, "src/cli", coded)
        result(not why, f"help-is-code/{cmd}", why)
    # toolgate(1) itself, and no page for a command that is not there
    main_page = os.path.join(MAN, "toolgate.1")
    main_text = open(main_page).read() if os.path.exists(main_page) else ""
    missing = [c for c in cmds if f"\\fBtoolgate-{c}\\fR(1)" not in main_text]
    result(os.path.exists(main_page) and not missing, "toolgate.1-lists-commands",
           f"toolgate(1) names no page of {missing}")
    result("\\fB--config\\fR" in main_text and
           os.path.exists(os.path.join(MAN, "toolgate.conf.5")), "config-documented",
           "toolgate(1) documents no --config, or there is no toolgate.conf(5)")
    strays = [p for p in pages if re.fullmatch(r"toolgate-(.*)\.1", os.path.basename(p))
              and os.path.basename(p)[9:-2] not in cmds]
    result(not strays, "no-stray-pages", f"pages of no command: {strays}")
    # man(1) reads each page without a warning (groff -ww under it)
    if not shutil.which("man"):
        print("skip - man/warnings: man(1) is not installed")
    else:
        env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8", MAN_KEEP_FORMATTING="")
        for page in pages:
            p = subprocess.run(["man", "--warnings", "-l", page], capture_output=True,
                               text=True, env=env, timeout=60)
            why = p.stderr.strip() or (f"man exited {p.returncode}" if p.returncode else "")
            result(not why, f"warnings/{os.path.basename(page)}", why)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
