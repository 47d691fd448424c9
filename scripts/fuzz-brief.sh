#!/bin/bash
# Every fuzzer of build-fuzz/ (make fuzz) for SECONDS each, JOBS at once,
# each on a fresh copy of its seeds (tests/fuzz/seeds/NAME), crashes kept
# in build-fuzz/: NAME.log (libFuzzer's output) and NAME.rc (its exit
# status) in OUT-DIR. An input that runs past TIMEOUT seconds of the
# clock is a hang (scripts/check.sh gives 120 where the fuzzers run at the
# lowest priority beside the suites, and may wait long for a processor;
# 10 where they have the processors to themselves). scripts/check.sh runs
# it and reads the verdicts.
# Usage: scripts/fuzz-brief.sh SECONDS JOBS OUT-DIR TIMEOUT
set -u
cd "$(dirname "$0")/.."
seconds=$1 jobs=$2 out=$3 timeout=$4

one() { # FUZZER
	local name corpus rc
	name=$(basename "$1")
	corpus=$(mktemp -d)
	[ -d "tests/fuzz/seeds/$name" ] && cp "tests/fuzz/seeds/$name"/* "$corpus"/
	"$1" -max_total_time="$seconds" -timeout="$timeout" -artifact_prefix=build-fuzz/ "$corpus" \
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
