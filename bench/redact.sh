#!/bin/bash
# make bench-redact: the secret redactor's throughput on a mixed corpus
# (~50 MB of logs and ordinary text, a true secret or a look-alike every
# ~4 KB: tests/redact/corpus.py bench), against secretlint with its
# recommended rules (npm, into the git-ignored bench/redact/node_modules)
# on the same file, and what each found there. CPU time: figures per core.
# Usage: bench/redact.sh BUILD-DIR [MB]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
mb=${2:-50}
mkdir -p bench/results
corpus=bench/results/redact-corpus-$mb.txt
if [ ! -f "$corpus" ]; then
	python3 tests/redact/corpus.py bench "$corpus" "$mb"
fi
if [ ! -x bench/redact/node_modules/.bin/secretlint ]; then
	(cd bench/redact && npm install --no-save --no-audit --no-fund secretlint@12 \
		@secretlint/secretlint-rule-preset-recommend@12 >/dev/null)
fi
python3 bench/redact/compare.py "$build" "$corpus" bench/redact
