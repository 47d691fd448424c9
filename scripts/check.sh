#!/bin/bash
# make check: build, run every suite, then build with ASan+UBSan and run
# every suite again, then each fuzzer briefly. Ends with one summary line:
# "N passed, N failed". "# time NAME: N s" lines say where the time went
# (and tests/run.sh's "# suite NAME: N s" lines, suite by suite).
# make check-long sets TOOLGATE_CHECK_LONG=1: the same suites with their
# long fault-injection rounds at full length, and each fuzzer a minute.
set -u
cd "$(dirname "$0")/.."
export TOOLGATE_CHECK_LONG=${TOOLGATE_CHECK_LONG:-0}
fuzz_seconds=3
[ "$TOOLGATE_CHECK_LONG" = 1 ] && fuzz_seconds=60

jobs=$(nproc 2>/dev/null || echo 2)
pass=0 fail=0 skip=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run_pass() { # BUILD-DIR SAN
	local build=$1 san=$2 start=$SECONDS
	echo "== build ($build)"
	if ! make --no-print-directory -j"$jobs" BUILD="$build" SAN="$san" all >"$log" 2>&1; then
		cat "$log"
		echo "not ok - build $build"
		fail=$((fail + 1))
		return
	fi
	echo "# time build $build: $((SECONDS - start)) s"
	start=$SECONDS
	echo "== tests ($build)"
	tests/run.sh "$build" | tee "$log"
	echo "# time tests $build: $((SECONDS - start)) s"
	pass=$((pass + $(grep -c '^ok ' "$log")))
	fail=$((fail + $(grep -c '^not ok ' "$log")))
	skip=$((skip + $(grep -c '^skip ' "$log")))
}

# The habits a program checks (tests/README.md): banned calls, length
# ceilings and header comments (tools/checksrc.py), then clang-tidy.
habit() { # NAME COMMAND...
	local name=$1 last
	shift
	if nice "$@" >"$log" 2>&1; then
		last=$(tail -1 "$log")
		echo "ok - $name: ${last#"$name: "}"
		pass=$((pass + 1))
	else
		last=$(tail -1 "$log")
		echo "not ok - $name: ${last#"$name: "}"
		head -n -1 "$log"
		fail=$((fail + 1))
	fi
}
habit checksrc tools/checksrc.py
habit clang-tidy scripts/tidy.sh

run_pass build 0
run_pass build-asan 1

# The fuzzers: every parser entry point runs for a few seconds with
# ASan+UBSan (a minute each in make check-long). Longer runs are
# `make fuzz` and then the binary by hand.
echo "== fuzz ($fuzz_seconds s each)"
start=$SECONDS
if make --no-print-directory -j"$jobs" fuzz >"$log" 2>&1; then
	echo "# time build build-fuzz: $((SECONDS - start)) s"
	start=$SECONDS
	for f in build-fuzz/fuzz_*; do
		name=$(basename "$f")
		corpus=$(mktemp -d)
		[ -d "tests/fuzz/seeds/$name" ] && cp "tests/fuzz/seeds/$name"/* "$corpus"/
		if "$f" -max_total_time="$fuzz_seconds" -timeout=10 -artifact_prefix=build-fuzz/ "$corpus" >"$log" 2>&1; then
			echo "ok - fuzz/$name: $(grep -o 'Done [0-9]* runs' "$log")"
			pass=$((pass + 1))
		else
			echo "not ok - fuzz/$name"
			tail -20 "$log"
			fail=$((fail + 1))
		fi
		rm -rf "$corpus"
	done
	echo "# time fuzz: $((SECONDS - start)) s"
else
	cat "$log"
	echo "not ok - fuzz/build"
	fail=$((fail + 1))
fi
echo "# time all: $SECONDS s"
echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
