#!/bin/bash
# make check: build, run every suite (the ASan+UBSan build and the
# fuzzers' made beside them), then every suite again against the ASan+UBSan
# build, then each fuzzer briefly. Ends with one summary line:
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

make_all() { # BUILD-DIR SAN LOG: make all there, its output in LOG
	make --no-print-directory -j"$jobs" BUILD="$1" SAN="$2" all >"$3" 2>&1
}

run_suites() { # BUILD-DIR: every suite against it
	local start=$SECONDS
	echo "== tests ($1)"
	tests/run.sh "$1" | tee "$log"
	echo "# time tests $1: $((SECONDS - start)) s"
	pass=$((pass + $(grep -c '^ok ' "$log")))
	fail=$((fail + $(grep -c '^not ok ' "$log")))
	skip=$((skip + $(grep -c '^skip ' "$log")))
}

build_failed() { # BUILD-DIR LOG
	cat "$2"
	echo "not ok - build $1"
	fail=$((fail + 1))
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

# The plain build, then its suites. They mostly wait (on processes,
# sockets, disks: some 40% of two processors), so the ASan+UBSan build and
# the fuzzers' build are made beside them at the lowest priority, where
# they take only what the suites leave.
builds=$(mktemp -d) beside=
trap 'rm -f "$log"; rm -rf "$builds"; [ -z "$beside" ] || kill -- -"$beside" 2>/dev/null' EXIT
start=$SECONDS
echo "== build (build)"
if make_all build 0 "$log"; then
	echo "# time build build: $((SECONDS - start)) s"
	# its own process group, so that an interrupted make check stops it
	setsid nice -n 19 bash -c 'make --no-print-directory -j"$1" BUILD=build-asan SAN=1 all \
		>"$2/asan.log" 2>&1; echo $? >"$2/asan.rc"
		make --no-print-directory -j"$1" fuzz >"$2/fuzz.log" 2>&1; echo $? >"$2/fuzz.rc"' \
		- "$jobs" "$builds" &
	beside=$!
	run_suites build
	start=$SECONDS
	wait "$beside"
	beside=
	echo "# time build build-asan and build-fuzz, beside the tests: $((SECONDS - start)) s more"
else
	build_failed build "$log"
	# no suites to run beside: the other builds in the foreground
	make_all build-asan 1 "$builds/asan.log"
	echo $? >"$builds/asan.rc"
	make --no-print-directory -j"$jobs" fuzz >"$builds/fuzz.log" 2>&1
	echo $? >"$builds/fuzz.rc"
fi
if [ "$(cat "$builds/asan.rc")" = 0 ]; then
	run_suites build-asan
else
	build_failed build-asan "$builds/asan.log"
fi

# The fuzzers: every parser entry point runs for a few seconds with
# ASan+UBSan (a minute each in make check-long), as many at once as there
# are processors, each on a copy of its seeds. Longer runs are `make fuzz`
# and then the binary by hand.
fuzz_one() { # FUZZER OUT-DIR: its output in OUT-DIR/NAME.log, its status in OUT-DIR/NAME.rc
	local name corpus rc
	name=$(basename "$1")
	corpus=$(mktemp -d)
	[ -d "tests/fuzz/seeds/$name" ] && cp "tests/fuzz/seeds/$name"/* "$corpus"/
	"$1" -max_total_time="$fuzz_seconds" -timeout=10 -artifact_prefix=build-fuzz/ "$corpus" \
		>"$2/$name.log" 2>&1
	rc=$?
	rm -rf "$corpus"
	echo "$rc" >"$2/$name.rc"
}
echo "== fuzz ($fuzz_seconds s each, $jobs at once)"
start=$SECONDS
if [ "$(cat "$builds/fuzz.rc")" = 0 ]; then
	out=$(mktemp -d)
	running=0
	for f in build-fuzz/fuzz_*; do
		fuzz_one "$f" "$out" &
		running=$((running + 1))
		if [ "$running" -ge "$jobs" ]; then
			wait -n
			running=$((running - 1))
		fi
	done
	wait
	for f in build-fuzz/fuzz_*; do
		name=$(basename "$f")
		if [ "$(cat "$out/$name.rc" 2>/dev/null)" = 0 ]; then
			echo "ok - fuzz/$name: $(grep -o 'Done [0-9]* runs' "$out/$name.log")"
			pass=$((pass + 1))
		else
			echo "not ok - fuzz/$name"
			tail -20 "$out/$name.log"
			fail=$((fail + 1))
		fi
	done
	rm -rf "$out"
	echo "# time fuzz: $((SECONDS - start)) s"
else
	cat "$builds/fuzz.log"
	echo "not ok - fuzz/build"
	fail=$((fail + 1))
fi
echo "# time all: $SECONDS s"
echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
