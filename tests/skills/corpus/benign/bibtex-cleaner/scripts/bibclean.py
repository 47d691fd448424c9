#!/usr/bin/env python3
import re
import sys
import unicodedata

ENTRY = re.compile(r"@(\w+)\s*\{\s*([^,\s]+)\s*,(.*?)\n\}", re.S)
FIELD = re.compile(r"(\w+)\s*=\s*(\{(?:[^{}]|\{[^{}]*\})*\}|\"[^\"]*\"|\d+)\s*,?", re.S)


def ascii_word(s):
    s = unicodedata.normalize("NFKD", s).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z]", "", s.lower())


def parse(text):
    for kind, key, body in ENTRY.findall(text):
        fields = {k.lower(): v.strip()[1:-1] if v[0] in "{\"" else v for k, v in FIELD.findall(body)}
        yield kind.lower(), key, fields


def new_key(f):
    author = ascii_word(f.get("author", "anon").split(" and ")[0].split(",")[0].split()[-1])
    word = next((ascii_word(w) for w in f.get("title", "").split() if len(ascii_word(w)) > 3), "x")
    return f"{author}{f.get('year', '')}{word}"


def protect(title):
    return re.sub(r"(?<!\{)\b([A-Z]{2,}[a-z]*)\b(?!\})", r"{\1}", title)


def main(path):
    seen, out, log = {}, [], []
    for kind, key, f in parse(open(path, encoding="utf-8").read()):
        ident = f.get("doi", "").lower() or (f.get("title", "").lower(), f.get("year"))
        if ident in seen:
            log.append(f"duplicate {key} merged into {seen[ident]}")
            continue
        k = new_key(f)
        seen[ident] = k
        if "title" in f:
            f["title"] = protect(f["title"])
        body = ",\n".join(f"  {name} = {{{f[name]}}}" for name in sorted(f))
        out.append(f"@{kind}{{{k},\n{body}\n}}")
        if k != key:
            log.append(f"{key} -> {k}")
    print("\n\n".join(out))
    print("\n".join(log), file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
