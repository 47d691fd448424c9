#!/bin/bash
# Run every suite against one build directory. Each suite prints
# "ok - NAME", "not ok - NAME: why" or "skip - NAME: why" per test.
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

"$build/tests/unit-tests" || true
tests/integration/run.sh "$build" || true
if [ -x tests/security/run.sh ]; then
	tests/security/run.sh "$build" || true
fi
