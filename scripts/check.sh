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

run_pass build 0
run_pass build-asan 1
echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
