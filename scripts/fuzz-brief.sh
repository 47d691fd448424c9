#!/bin/bash
# Every fuzzer of build-fuzz/ (make fuzz) for SECONDS each, JOBS at once,
# each on a fresh copy of its seeds (tests/fuzz/seeds/NAME), crashes kept
# in build-fuzz/: NAME.log (libFuzzer's output) and NAME.rc (its exit
# status) in OUT-DIR. scripts/check.sh runs it and reads the verdicts.
# Usage: scripts/fuzz-brief.sh SECONDS JOBS OUT-DIR
set -u
cd "$(dirname "$0")/.."
seconds=$1 jobs=$2 out=$3

one() { # FUZZER
	local name corpus rc
	name=$(basename "$1")
	corpus=$(mktemp -d)
	[ -d "tests/fuzz/seeds/$name" ] && cp "tests/fuzz/seeds/$name"/* "$corpus"/
	"$1" -max_total_time="$seconds" -timeout=10 -artifact_prefix=build-fuzz/ "$corpus" \
		>"$out/$name.log" 2>&1
	rc=$?
	rm -rf "$corpus"
	echo "$rc" >"$out/$name.rc"
}

running=0
for f in build-fuzz/fuzz_*; do
	one "$f" &
	running=$((running + 1))
	if [ "$running" -ge "$jobs" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait
