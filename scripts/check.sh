#!/bin/bash
# make check: build, run every suite (the ASan+UBSan build and the
# fuzzers' made beside them), then every suite again against the ASan+UBSan
# build (each fuzzer run briefly beside them). Ends with one summary line:
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

# What runs beside the suites (they mostly wait on processes, sockets and
# disks: some 40% of two processors) runs at the lowest priority, for the
# processors and the disk (the suites' fsyncs wait behind a build's
# writes otherwise), in a session of its own, so that it takes only what
# they leave: nice alone counts only within a session where the kernel
# groups sessions (autogroup), hence its group's nice too; and so that an
# interrupted make check stops it (the EXIT trap kills the group).
lowest() { # COMMAND...: started in the background, its pid in $beside
	# ($0 there is this script's pid: a make check killed with SIGKILL
	# runs no trap, and the session's watch ends the session after it)
	setsid bash -c 'echo 19 >/proc/self/autogroup 2>/dev/null
		(while kill -0 "$0" 2>/dev/null; do sleep 2; done
		 kill -- -$$ 2>/dev/null) </dev/null >/dev/null 2>&1 &
		exec ionice -t -c 3 nice -n 19 "$@"' "$$" "$@" &
	beside=$!
}
done_beside() { # WHAT: wait for it, saying how much longer it took
	local start=$SECONDS
	wait "$beside"
	beside=
	echo "# time $1, beside the tests: $((SECONDS - start)) s more"
}
beside=
trap 'rm -f "$log"; rm -rf "$builds"; [ -z "$beside" ] || kill -- -"$beside" 2>/dev/null' EXIT
builds=$(mktemp -d)

# The plain build, then its suites, with the ASan+UBSan build and the
# fuzzers' made beside them. The fuzzers' build takes the generated files
# and toolgate-init's image from build-asan/ (the same bytes: neither is
# compiled with the sanitizers' flags), never from build/: a make there
# would run build/gen/init_cc's recipe beside the suites' own makes in
# build/ (tests/install: make install, make deb), the two writing one
# init_cc.new, and could relink what the suites run.
start=$SECONDS
echo "== build (build)"
if make_all build 0 "$log"; then
	echo "# time build build: $((SECONDS - start)) s"
	lowest bash -c 'make --no-print-directory -j"$1" BUILD=build-asan SAN=1 all \
		>"$2/asan.log" 2>&1; echo $? >"$2/asan.rc"
		make --no-print-directory -j"$1" BUILD=build-asan fuzz >"$2/fuzz.log" 2>&1
		echo $? >"$2/fuzz.rc"' \
		- "$jobs" "$builds"
	run_suites build
	done_beside "build build-asan and build-fuzz"
else
	build_failed build "$log"
	# no suites to run beside: the other builds in the foreground
	make_all build-asan 1 "$builds/asan.log"
	echo $? >"$builds/asan.rc"
	make --no-print-directory -j"$jobs" BUILD=build-asan fuzz >"$builds/fuzz.log" 2>&1
	echo $? >"$builds/fuzz.rc"
fi

# The ASan+UBSan build's suites, with the fuzzers beside them: every parser
# entry point for a few seconds with ASan+UBSan, as many at once as there
# are processors (make check-long: a minute each, after the suites, with
# the processors to themselves). Longer runs are `make fuzz` and then the
# binary by hand.
fuzzed=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$builds" "$fuzzed"; [ -z "$beside" ] || kill -- -"$beside" 2>/dev/null' EXIT
fuzz_built=$(cat "$builds/fuzz.rc")
if [ "$fuzz_built" = 0 ] && [ "$TOOLGATE_CHECK_LONG" != 1 ]; then
	lowest scripts/fuzz-brief.sh "$fuzz_seconds" "$jobs" "$fuzzed" 120
fi
if [ "$(cat "$builds/asan.rc")" = 0 ]; then
	run_suites build-asan
else
	build_failed build-asan "$builds/asan.log"
fi
echo "== fuzz ($fuzz_seconds s each, $jobs at once)"
if [ "$fuzz_built" = 0 ]; then
	if [ -n "$beside" ]; then
		done_beside fuzz
	else
		start=$SECONDS
		scripts/fuzz-brief.sh "$fuzz_seconds" "$jobs" "$fuzzed" 10
		echo "# time fuzz: $((SECONDS - start)) s"
	fi
	for f in build-fuzz/fuzz_*; do
		name=$(basename "$f")
		if [ "$(cat "$fuzzed/$name.rc" 2>/dev/null)" = 0 ]; then
			echo "ok - fuzz/$name: $(grep -o 'Done [0-9]* runs' "$fuzzed/$name.log")"
			pass=$((pass + 1))
		else
			echo "not ok - fuzz/$name"
			tail -20 "$fuzzed/$name.log"
			fail=$((fail + 1))
		fi
	done
else
	cat "$builds/fuzz.log"
	echo "not ok - fuzz/build"
	fail=$((fail + 1))
fi
echo "# time all: $SECONDS s"
echo
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
