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
  prints           no part of the library (src/ but src/cli/) writes to
                   stdout or stderr (printf, puts, perror, fprintf(stderr..)):
                   its messages go to the caller's sink (util/log.h)
  public-header    a header of include/toolgate/ names no jansson type
                   (json_t, jansson.h): what a program that embeds the
                   library sees is the library's own
  layers           a part of src/ includes only the headers of the parts it
                   may call (docs/ARCHITECTURE.md, "The parts"), public
                   (include/toolgate/) or its own, and never another part's
                   private *_int.h

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
RULES = ("banned", "file-length", "function-length", "header-comment", "prints",
         "public-header", "layers")
JANSSON_RE = re.compile(r"\bjson_\w*t\b|jansson\.h")
PRINTS_RE = re.compile(r"(?<![\w.>])(printf|puts|perror|putchar)\s*\(|\b(stderr|stdout)\b")
# docs/ARCHITECTURE.md's table: the parts each part of src/ may include
# (itself always), and the part each public header belongs to
MAY_INCLUDE = {
    "util": set(),
    "sandbox": {"util"},
    "schema": {"util"},
    "catalog": {"util", "schema", "sandbox", "upstream"},
    "auth": {"util", "store", "catalog", "sandbox", "obs"},
    "exec": {"util", "sandbox", "catalog", "upstream", "obs"},
    "store": {"util"},
    "obs": {"util"},
    "upstream": {"util", "schema", "sandbox", "obs"},
    "skills": {"util", "obs"},
    "gate": {"util", "sandbox", "schema", "catalog", "auth", "exec", "store", "obs", "upstream",
             "skills"},
    "mcp": {"util", "gate", "catalog", "obs"},
    "cli": {"util", "sandbox", "schema", "catalog", "auth", "exec", "store", "obs", "gate",
            "mcp", "upstream", "skills"},
}
PUBLIC_PART = {
    "error.h": "util", "sandbox.h": "sandbox", "egress.h": "sandbox", "schema.h": "schema",
    "catalog.h": "catalog", "contract.h": "catalog", "scan.h": "catalog", "auth.h": "auth",
    "anomaly.h": "auth", "store.h": "store", "audit.h": "obs", "redact.h": "obs",
    "trace.h": "obs", "version.h": "util", "gate.h": "gate", "mcp.h": "mcp",
    "upstream.h": "upstream", "skill.h": "skills", "sign.h": "skills",
}
INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
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


def check_layers(path, text, problems):
    """Each #include "..." of a file under src/PART/ against MAY_INCLUDE."""
    parts = os.path.normpath(path).split(os.sep)
    if "src" not in parts:
        return
    i = parts.index("src")
    if i + 2 >= len(parts) or parts[i + 1] not in MAY_INCLUDE:
        return
    me = parts[i + 1]
    for m in INCLUDE_RE.finditer(text):
        inc = m.group(1)
        if inc.startswith("toolgate/"):
            owner = PUBLIC_PART.get(inc[len("toolgate/"):])
            if owner is None:
                problems.append((path, line_of(text, m.start()), "layers",
                                 "%s: a public header checksrc does not know: add it to "
                                 "PUBLIC_PART" % inc))
                continue
        elif "/" in inc:
            owner = inc.split("/", 1)[0]
            if me == "cli" and owner not in ("cli", "util"):
                problems.append((path, line_of(text, m.start()), "layers",
                                 "%s: the CLI uses the library through its public headers "
                                 "(include/toolgate/) only" % inc))
                continue
            if owner != me and inc.endswith("_int.h"):
                problems.append((path, line_of(text, m.start()), "layers",
                                 "%s is the private header of src/%s/: only its own part "
                                 "includes it" % (inc, owner)))
                continue
        else:
            continue
        if owner != me and owner not in MAY_INCLUDE[me]:
            problems.append((path, line_of(text, m.start()), "layers",
                             "src/%s/ may not include %s (src/%s/ is not a part it may "
                             "call: docs/ARCHITECTURE.md)" % (me, inc, owner)))


def check_file(path, problems):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    check_layers(path, text, problems)
    if os.sep + "toolgate" + os.sep in os.path.normpath(path) and "include" in path:
        code = blank(text, directives=False)
        for m in JANSSON_RE.finditer(blank(text)):
            problems.append((path, line_of(code, m.start()), "public-header",
                             "%s: no jansson type in a public header" % m.group(0)))
        for m in re.finditer(r"#\s*include\s*<jansson\.h>", text):
            problems.append((path, line_of(text, m.start()), "public-header",
                             "jansson.h: no jansson type in a public header"))
    lines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
    if lines > MAX_FILE_LINES:
        problems.append((path, lines, "file-length",
                         "%d lines, more than %d: split it along what it does"
                         % (lines, MAX_FILE_LINES)))
    if path.endswith(".c") and not text.lstrip().startswith("/*"):
        problems.append((path, 1, "header-comment",
                         "does not open with a comment saying what it implements"))
    code = blank(text, directives=False)
    parts = os.path.normpath(path).split(os.sep)
    if "src" in parts and "cli" not in parts:
        for m in PRINTS_RE.finditer(code):
            problems.append((path, line_of(code, m.start()), "prints",
                             "%s: the library writes nowhere itself: tg_log (util/log.h) "
                             "hands a message to the caller's sink"
                             % (m.group(1) or m.group(2))))
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
    roots = args or ["src", "include"]
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
