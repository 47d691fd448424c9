#!/bin/bash
# Run every suite against one build directory. Each suite prints
# "ok - NAME", "not ok - NAME: why" or "skip - NAME: why" per test; a
# suite that exits non-zero without saying why (a crash) is a failure too.
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

suite() { # NAME COMMAND...
	local name=$1 rc
	shift
	"$@" </dev/null | tee "$out"
	rc=${PIPESTATUS[0]}
	if [ "$rc" -ne 0 ] && ! grep -q '^not ok ' "$out"; then
		echo "not ok - $name: the suite exited with status $rc"
	fi
	if ! grep -q -E '^(ok|skip) ' "$out"; then
		echo "not ok - $name: ran no test"
	fi
}

suite unit "$build/tests/unit-tests"
suite redact tests/redact/run.sh "$build"
suite integration tests/integration/run.sh "$build"
suite security tests/security/run.sh "$build"
suite egress tests/egress/run.sh "$build"
suite schema-suite tests/schema/run.sh "$build"
suite mcp-interop tests/mcp/run.sh "$build"
suite mcp-conformance tests/conformance/run.sh "$build"
suite mcp-inspector tests/inspector/run.sh "$build"
