#!/usr/bin/env python3
"""checksrc.py: the house rules of the C sources checked by a program, in the
spirit of curl's scripts/checksrc.pl (`make checksrc`, and one line of `make
check`; tests/README.md). Over every .c and .h under the given directories
(default src/):

  banned           no sprintf, vsprintf, strcpy, strcat, atoi, atol, atoll,
                   gets (unbounded or unchecked; use snprintf, memcpy with a
                   known length, strtol/strtoul with an end pointer, fgets)
  file-length      no file over 1,500 lines
  function-length  no function over 150 lines (signature to closing brace)
  header-comment   every .c opens with a comment saying what it implements

Calls are found in code only: comments, string and character literals are
blanked first, so a word in a comment is not a call. Each problem is printed
as "FILE:LINE: RULE: what is wrong"; the exit status is 1 if there is any.

tools/checksrc-allow lists exceptions, one "RULE PATH" a line (# comments):
each is a debt with a reason, not a licence. An entry that no longer matches
anything is itself a problem, so the list only ever shrinks. scripts/tidy.sh
reads the same file for its rule, clang-tidy.

Usage: tools/checksrc.py [--allow FILE] [DIR-OR-FILE...]
"""
import os
import re
import sys

MAX_FILE_LINES = 1500
MAX_FUNCTION_LINES = 150
BANNED = {
    "sprintf": "snprintf with the buffer's size",
    "vsprintf": "vsnprintf with the buffer's size",
    "strcpy": "memcpy or snprintf with a known length",
    "strcat": "snprintf at an offset, or memcpy with known lengths",
    "atoi": "strtol with an end pointer and a range check",
    "atol": "strtol with an end pointer and a range check",
    "atoll": "strtoll with an end pointer and a range check",
    "gets": "fgets",
}
BANNED_RE = re.compile(r"(?<![\w.>])(" + "|".join(BANNED) + r")\s*\(")
RULES = ("banned", "file-length", "function-length", "header-comment")
# rules another program applies with the same allow-list (scripts/tidy.sh)
OTHER_RULES = ("clang-tidy",)


def blank(text, directives=True):
    """Comments, string and character literals (and preprocessor lines when
    directives) replaced by spaces, newlines kept, so lines still match."""
    out = list(text)
    i, n = 0, len(text)
    at_line_start = True
    while i < n:
        c = text[i]
        if directives and at_line_start and c == "#":
            # a preprocessor line, with its continuations
            while i < n and text[i] != "\n":
                if text[i] == "\\" and i + 1 < n and text[i + 1] == "\n":
                    out[i] = " "
                    i += 2
                    continue
                out[i] = " "
                i += 1
            continue
        if c == "\n":
            at_line_start = True
            i += 1
            continue
        if c in " \t":
            i += 1
            continue
        at_line_start = False
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for j in range(i, end):
                if out[j] != "\n":
                    out[j] = " "
            i = end
            continue
        if text.startswith("//", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
            continue
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            for k in range(i + 1, min(j, n)):
                if out[k] != "\n":
                    out[k] = " "
            i = j + 1
            continue
        i += 1
    return "".join(out)


def line_of(text, offset):
    return text.count("\n", 0, offset) + 1


def functions(code):
    """(name, first line, last line) of each function definition: a '{' at
    file level whose declaration ends with ')' and has no '='."""
    depth = 0
    decl_start = 0
    found = []
    start = None
    for i, c in enumerate(code):
        if c == "{":
            if depth == 0:
                decl = code[decl_start:i]
                s = decl.strip()
                m = re.search(r"(\w+)\s*\(", s)
                if s.endswith(")") and "=" not in s and m:
                    lead = len(decl) - len(decl.lstrip())
                    start = (m.group(1), decl_start + lead)
                else:
                    start = None
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                if start:
                    found.append((start[0], line_of(code, start[1]),
                                  line_of(code, i)))
                start = None
                decl_start = i + 1
            elif depth < 0:
                depth = 0
        elif c == ";" and depth == 0:
            decl_start = i + 1
    return found


def check_file(path, problems):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if lines > MAX_FILE_LINES:
        problems.append((path, lines, "file-length",
                         "%d lines, more than %d: split it along what it does"
                         % (lines, MAX_FILE_LINES)))
    if path.endswith(".c") and not text.lstrip().startswith("/*"):
        problems.append((path, 1, "header-comment",
                         "does not open with a comment saying what it implements"))
    code = blank(text, directives=False)
    for m in BANNED_RE.finditer(code):
        name = m.group(1)
        problems.append((path, line_of(code, m.start()), "banned",
                         "%s() is banned: use %s" % (name, BANNED[name])))
    code = blank(text)
    for name, first, last in functions(code):
        if last - first + 1 > MAX_FUNCTION_LINES:
            problems.append((path, first, "function-length",
                             "%s() is %d lines, more than %d: split it"
                             % (name, last - first + 1, MAX_FUNCTION_LINES)))


def read_allow(path):
    allow = []
    if not path or not os.path.exists(path):
        return allow
    with open(path, encoding="utf-8") as f:
        for no, raw in enumerate(f, 1):
            line = raw.split("#", 1)[0].split()
            if not line:
                continue
            allow.append((no, line[0], line[1] if len(line) > 1 else ""))
    return allow


def main(argv):
    allow_path = "tools/checksrc-allow"
    args = argv[1:]
    if len(args) >= 2 and args[0] == "--allow":
        allow_path, args = args[1], args[2:]
    roots = args or ["src"]
    files = []
    for root in roots:
        if os.path.isfile(root):
            files.append(root)
            continue
        for d, dirs, names in os.walk(root):
            dirs.sort()
            files += [os.path.join(d, n) for n in sorted(names)
                      if n.endswith((".c", ".h"))]
    problems = []
    for path in files:
        check_file(path, problems)

    allow = read_allow(allow_path)
    bad_allow = []
    used = set()
    for no, rule, path in allow:
        if rule not in RULES + OTHER_RULES or not path:
            bad_allow.append("%s:%d: not \"RULE PATH\" with RULE one of %s"
                             % (allow_path, no, ", ".join(RULES + OTHER_RULES)))
    kept = []
    for p in problems:
        hit = [a for a in allow if a[1] == p[2] and a[2] == p[0]]
        if hit:
            used.add(hit[0][0])
        else:
            kept.append(p)
    for no, rule, path in allow:
        if rule in RULES and path and no not in used:
            bad_allow.append("%s:%d: %s %s no longer applies: remove the entry"
                             % (allow_path, no, rule, path))

    for path, line, rule, what in kept:
        print("%s:%d: %s: %s" % (path, line, rule, what))
    for msg in bad_allow:
        print(msg)
    n = len(kept) + len(bad_allow)
    if n:
        print("checksrc: %d problem%s in %d files"
              % (n, "" if n == 1 else "s", len(files)))
        return 1
    print("checksrc: %d files, no problem (%d allowed by %s)"
          % (len(files), len(used), allow_path))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
