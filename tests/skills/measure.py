#!/usr/bin/env python3
"""The scanner measured on the corpus the project writes
(tests/skills/corpus/README.md): every malicious skill must have a finding
of its own family at or above the threshold (high), at most 2% of the
benign ones any finding at or above it, and every well-formed skill of
both must load. Prints the figures docs/SKILLS.md reports ("Measured"), a
line a miss and a false positive, and TAP-like results.

A held-out corpus (tests/skills/holdout, written after the rules were
tuned, never used to tune them) is measured with --report-only: its
figures are printed, not judged, so that nobody tunes the rules to it.

Usage: tests/skills/measure.py TOOLGATE REPO [CORPUS-DIR] [--report-only]
"""
import json
import os
import subprocess
import sys

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
TG, REPO = ARGS[0], ARGS[1]
REPORT_ONLY = "--report-only" in sys.argv
CORPUS = ARGS[2] if len(ARGS) > 2 else os.path.join(REPO, "tests", "skills", "corpus")
NAME = os.path.basename(os.path.normpath(CORPUS))
ORDER = {"low": 1, "medium": 2, "high": 3, "critical": 4}
THRESHOLD = "high"
failed = 0


def result(ok, name, why=""):
    global failed
    if REPORT_ONLY:
        print("# %s: %s%s" % (name, "yes" if ok else "no", "" if ok else " (" + why + ")"))
    elif ok:
        print("ok - skills-%s/%s" % (NAME, name))
    else:
        failed += 1
        print("not ok - skills-%s/%s: %s" % (NAME, name, why))


def scan(dirs):
    """{dir: [(rule, severity, uri, line)]} from one SARIF run, a skill
    that does not load with the one finding ("refused", "critical", why);
    and what was said on stderr."""
    p = subprocess.run([TG, "skill", "scan", "--sarif", "--threshold", "critical"] + dirs,
                       capture_output=True, text=True, timeout=300)
    if p.returncode not in (0, 1) or not p.stdout.strip():
        raise SystemExit("toolgate skill scan failed (%d): %s" % (p.returncode, p.stderr))
    out = {d: [] for d in dirs}
    for line in p.stderr.splitlines():
        for d in dirs:
            if line.startswith("toolgate skill scan: " + d.rstrip("/") + "/"):
                out[d].append(("refused", "critical", line, 0))
    for r in json.loads(p.stdout)["runs"][0]["results"]:
        uri = r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        d = next(d for d in dirs if uri.startswith(d.rstrip("/") + "/"))
        out[d].append((r["ruleId"], r["properties"]["severity"], uri,
                       r["locations"][0]["physicalLocation"]["region"]["startLine"]))
    return out, p.stderr


def flagged(findings, family=None):
    return [f for f in findings if ORDER[f[1]] >= ORDER[THRESHOLD] and
            (family is None or f[0].split("/")[0] == family or f[0] == "refused")]


def main():
    CORPUS_ABS = os.path.abspath(CORPUS)
    os.chdir(REPO)
    rel = os.path.relpath(CORPUS_ABS)
    benign = sorted(os.path.join(rel, "benign", d) for d in os.listdir(os.path.join(rel, "benign"))
                    if os.path.isdir(os.path.join(rel, "benign", d)))
    families = {}
    with open(os.path.join(rel, "malicious", "FAMILIES")) as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                folder, fam = line.split()
                families[os.path.join(rel, "malicious", folder)] = fam
    bad, berr = scan(benign)
    mal, merr = scan(sorted(families))
    result(not berr, "every_benign_skill_loads", berr[:400])

    fp = [d for d in benign if flagged(bad[d])]
    rate = 100.0 * len(fp) / len(benign)
    for d in fp:
        print("# false positive: %s: %s" % (d, "; ".join("%s %s %s:%d" % f for f in flagged(bad[d])[:3])))
    misses, wrong_family, per = [], [], {}
    for d, fam in families.items():
        got = flagged(mal[d])
        per.setdefault(fam, [0, 0])[1] += 1
        if got:
            per[fam][0] += 1
        else:
            misses.append(d)
        if got and not flagged(mal[d], fam):
            wrong_family.append("%s (%s: found %s)" % (d, fam, ",".join(sorted({f[0] for f in got}))))
    for d in misses:
        print("# missed: %s (%s): %s" % (d, families[d], "; ".join("%s %s" % f[:2] for f in mal[d][:3]) or "nothing"))
    for w in wrong_family:
        print("# flagged, not by its family's rules: %s" % w)
    caught = len(families) - len(misses)
    print("# %s" % rel)
    print("# benign: %d skills, %d flagged at or above %s (%.1f%%)" % (len(benign), len(fp), THRESHOLD, rate))
    print("# malicious: %d skills, %d flagged at or above %s (recall %.1f%%); by their own family's rules: %d"
          % (len(families), caught, THRESHOLD, 100.0 * caught / len(families),
             caught - len(wrong_family)))
    for fam in sorted(per):
        print("#   %-16s %d of %d" % (fam, per[fam][0], per[fam][1]))
    result(not misses, "every_malicious_skill_flagged", "%d missed" % len(misses))
    result(rate <= 2.0, "benign_flagged_at_most_2_percent", "%.1f%%" % rate)
    print("skills_corpus_ran_to_the_end")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
