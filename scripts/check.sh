#!/bin/bash
# make check: build, run every suite, then build with ASan+UBSan and run
# every suite again. Ends with one summary line: "N passed, N failed".
set -u
cd "$(dirname "$0")/.."

jobs=$(nproc 2>/dev/null || echo 2)
pass=0 fail=0 skip=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run_pass() { # BUILD-DIR SAN
	local build=$1 san=$2
	echo "== build ($build)"
	if ! make --no-print-directory -j"$jobs" BUILD="$build" SAN="$san" all >"$log" 2>&1; then
		cat "$log"
		echo "not ok - build $build"
		fail=$((fail + 1))
		return
	fi
	echo "== tests ($build)"
	tests/run.sh "$build" | tee "$log"
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

# The fuzzers, briefly: every parser entry point runs for a few seconds
# with ASan+UBSan. Long runs are `make fuzz` and then the binary by hand.
echo "== fuzz (smoke)"
if make --no-print-directory fuzz >"$log" 2>&1; then
	for f in build-fuzz/fuzz_*; do
		name=$(basename "$f")
		corpus=$(mktemp -d)
		[ -d "tests/fuzz/seeds/$name" ] && cp "tests/fuzz/seeds/$name"/* "$corpus"/
		if "$f" -max_total_time=8 -timeout=10 -artifact_prefix=build-fuzz/ "$corpus" >"$log" 2>&1; then
			echo "ok - fuzz/$name: $(grep -o 'Done [0-9]* runs' "$log")"
			pass=$((pass + 1))
		else
			echo "not ok - fuzz/$name"
			tail -20 "$log"
			fail=$((fail + 1))
		fi
		rm -rf "$corpus"
	done
else
	cat "$log"
	echo "not ok - fuzz/build"
	fail=$((fail + 1))
fi
echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
