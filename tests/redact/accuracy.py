#!/usr/bin/env python3
"""Recall and false positives of `toolgate redact` on the generated corpora
(tests/redact/corpus.py; docs/REDACTION.md, "Accuracy").

A true secret counts as found when findings cover every byte of it (a
redaction that leaves part of it out does not count); a look-alike item
counts as flagged when any finding touches it. Prints the figures per kind,
then TAP lines: recall >= 95%, flagged look-alikes <= 1%.

Usage: accuracy.py BUILD-DIR [WORKDIR]
"""
import collections
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402


def findings(build, path):
    out = subprocess.run([os.path.join(build, "toolgate"), "redact", "--json", path],
                         check=True, capture_output=True).stdout
    doc = json.loads(out)
    return [(f["offset"], f["length"], f["rule"]) for f in doc["findings"]]


def covered(spans, start, length):
    """Whether the sorted, disjoint spans cover [start, start+length)."""
    at = start
    for s, n, _ in spans:
        if s <= at < s + n:
            at = s + n
        if at >= start + length:
            return True
    return at >= start + length


def touching(spans, start, length):
    return [rule for s, n, rule in spans if s < start + length and s + n > start]


def main():
    build = sys.argv[1]
    work = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp(prefix="tg-redact-")
    tpath, lpath = os.path.join(work, "true.txt"), os.path.join(work, "lookalike.txt")
    corpus.write(corpus.true_items(), tpath, True)
    corpus.write(corpus.lookalike_items(), lpath, False)

    spans = sorted(findings(build, tpath))
    per = collections.defaultdict(lambda: [0, 0, collections.Counter()])
    for item in json.load(open(tpath + ".spans.json")):
        for s, n in item["secrets"]:
            p = per[item["kind"]]
            p[0] += 1
            if covered(spans, s, n):
                p[1] += 1
                p[2].update(set(touching(spans, s, n)))
    total = sum(p[0] for p in per.values())
    found = sum(p[1] for p in per.values())
    print("# true secrets: %d, found %d (%.1f%%)" % (total, found, 100.0 * found / total))
    print("# %-24s %6s %6s %7s  %s" % ("kind", "items", "found", "recall", "rules that found them"))
    for kind in sorted(per):
        p = per[kind]
        print("# %-24s %6d %6d %6.1f%%  %s" % (kind, p[0], p[1], 100.0 * p[1] / p[0],
                                                ", ".join("%s %d" % kv for kv in p[2].most_common())))

    spans = sorted(findings(build, lpath))
    per = collections.defaultdict(lambda: [0, 0, collections.Counter()])
    for item in json.load(open(lpath + ".spans.json")):
        p = per[item["kind"]]
        p[0] += 1
        hit = touching(spans, item["start"], item["length"])
        if hit:
            p[1] += 1
            p[2].update(hit)
    ltotal = sum(p[0] for p in per.values())
    flagged = sum(p[1] for p in per.values())
    print("# look-alikes: %d, flagged %d (%.2f%%)" % (ltotal, flagged, 100.0 * flagged / ltotal))
    print("# %-24s %6s %6s %7s  %s" % ("kind", "items", "flagged", "share", "rules that flagged them"))
    for kind in sorted(per):
        p = per[kind]
        print("# %-24s %6d %6d %6.1f%%  %s" % (kind, p[0], p[1], 100.0 * p[1] / p[0],
                                                ", ".join("%s %d" % kv for kv in p[2].most_common())))
    ok_r = total >= 1000 and found * 100 >= total * 95
    ok_f = ltotal >= 1000 and flagged * 100 <= ltotal
    print("%s - redact/recall: %d of %d true secrets (%.1f%%, at least 95%%)" %
          ("ok" if ok_r else "not ok", found, total, 100.0 * found / total))
    print("%s - redact/false-positives: %d of %d look-alikes flagged (%.2f%%, at most 1%%)" %
          ("ok" if ok_f else "not ok", flagged, ltotal, 100.0 * flagged / ltotal))
    return 0 if ok_r and ok_f else 1


if __name__ == "__main__":
    sys.exit(main())
