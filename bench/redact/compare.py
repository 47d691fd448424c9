#!/usr/bin/env python3
"""bench/redact.sh's second half: throughput of `toolgate`'s redactor and of
secretlint on the same corpus file, and what each found there.

Three rounds, the two in turn, the medians. Throughput is bytes over CPU seconds (user + system, the process and its
threads): a figure per core, which a busy machine does not bend. For
secretlint, a run on an empty file is subtracted (node's start-up and rule
loading), and the raw figure printed too. Recall and false positives use
the corpus's spans file (tests/redact/corpus.py bench): a true secret is
found when findings cover all its bytes; a look-alike (or a stretch of
ordinary text) is flagged when a finding touches it.

Usage: compare.py BUILD-DIR CORPUS SECRETLINT-DIR
"""
import collections
import json
import os
import subprocess
import sys
import tempfile
import time


def run_timed(argv, cwd=None):
    """(stdout, cpu seconds, wall seconds) of argv."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    return out, ru.ru_utime + ru.ru_stime, wall


def secretlint(sl_dir, path):
    """(spans, cpu, wall) of one secretlint run over path."""
    work = tempfile.mkdtemp(prefix="tg-sl-")
    rc = os.path.join(work, ".secretlintrc.json")
    out = os.path.join(work, "out.json")
    with open(rc, "w") as f:
        json.dump({"rules": [{"id": "@secretlint/secretlint-rule-preset-recommend"}]}, f)
    _, cpu, wall = run_timed([os.path.join(os.path.abspath(sl_dir), "node_modules/.bin/secretlint"), "--secretlintrc", rc,
                              "--format", "json", "--output", out, os.path.abspath(path)], cwd=work)
    spans = []
    if os.path.exists(out) and os.path.getsize(out):
        for f in json.load(open(out)):
            for m in f["messages"]:
                spans.append((m["range"][0], m["range"][1] - m["range"][0], m["ruleId"].split("/")[-1]))
    return sorted(spans), cpu, wall


def toolgate(build, path):
    out = subprocess.run([os.path.join(build, "toolgate"), "redact", "--json", path],
                         check=True, capture_output=True).stdout
    return sorted((f["offset"], f["length"], f["rule"]) for f in json.loads(out)["findings"])


def covered(spans, idx, start, length):
    at = start
    for s, n, _ in spans[max(0, idx - 4):]:
        if s > at:
            break
        if s <= at < s + n:
            at = s + n
        if at >= start + length:
            return True
    return at >= start + length


def score(spans, meta):
    import bisect
    starts = [s for s, _, _ in spans]
    found = total = 0
    flagged = collections.Counter()
    items = collections.Counter()
    for it in meta:
        if it["secrets"]:
            for s, n in it["secrets"]:
                total += 1
                i = bisect.bisect_right(starts, s)
                found += covered(spans, i, s, n)
            continue
        cls = "ordinary text" if it["kind"] == "filler" else "look-alikes"
        items[cls] += 1
        a, b = it["start"], it["start"] + it["length"]
        i = bisect.bisect_left(starts, a)
        touch = (i < len(spans) and spans[i][0] < b) or (i > 0 and spans[i - 1][0] + spans[i - 1][1] > a)
        flagged[cls] += bool(touch)
    return found, total, flagged, items


def main():
    build, corpus, sl_dir = sys.argv[1], sys.argv[2], sys.argv[3]
    size = os.path.getsize(corpus)
    meta = json.load(open(corpus + ".spans.json"))
    empty = os.path.join(tempfile.mkdtemp(prefix="tg-sl-"), "empty.txt")
    open(empty, "w").close()
    _, cpu0, wall0 = secretlint(sl_dir, empty)
    # three rounds, toolgate and secretlint in turn (the machine drifts)
    one, stream, cpus, walls = [], [], [], []
    for _ in range(3):
        tg = json.loads(subprocess.run([os.path.join(build, "bench", "redact"), corpus, "1"], check=True,
                                       capture_output=True).stdout)
        one.append(tg["one_call_mbps"])
        stream.append(tg["stream_mbps"])
        sl_spans, cpu, wall = secretlint(sl_dir, corpus)
        cpus.append(cpu)
        walls.append(wall)
    med = lambda v: sorted(v)[len(v) // 2]
    tg = {"one_call_mbps": med(one), "stream_mbps": med(stream)}
    cpu, wall = med(cpus), med(walls)
    sl_mbps = size / 1e6 / max(cpu - cpu0, 1e-9)
    print("corpus: %s, %.1f MB, %d true secrets" % (corpus, size / 1e6,
                                                   sum(len(i["secrets"]) for i in meta)))
    print("%-34s %10s" % ("", "MB/s a core"))
    print("%-34s %10.1f" % ("toolgate tg_redact (one call)", tg["one_call_mbps"]))
    print("%-34s %10.1f" % ("toolgate stream (64 KiB writes)", tg["stream_mbps"]))
    print("%-34s %10.1f" % ("secretlint (start-up subtracted)", sl_mbps))
    print("%-34s %10.1f   (%.1f s CPU, %.1f s wall; start-up %.1f s CPU)" %
          ("secretlint (whole run)", size / 1e6 / cpu, cpu, wall, cpu0))
    print("ratio toolgate/secretlint: %.0fx" % (tg["one_call_mbps"] / sl_mbps))
    print()
    print("%-12s %8s %10s %14s %14s" % ("", "findings", "recall", "look-alikes", "ordinary text"))
    for name, spans in (("toolgate", toolgate(build, corpus)), ("secretlint", sl_spans)):
        found, total, flagged, items = score(spans, meta)
        print("%-12s %8d %9.1f%% %13.2f%% %13.2f%%" % (
            name, len(spans), 100.0 * found / total,
            100.0 * flagged["look-alikes"] / max(items["look-alikes"], 1),
            100.0 * flagged["ordinary text"] / max(items["ordinary text"], 1)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
