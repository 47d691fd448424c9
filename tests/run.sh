#!/bin/bash
# Run every suite against one build directory. Each suite prints
# "ok - NAME", "not ok - NAME: why" or "skip - NAME: why" per test; a
# suite that exits non-zero without saying why (a crash) is a failure too.
# After each suite, "# suite NAME: N s", its wall time, for whoever looks
# for where make check's time goes.
# TOOLGATE_CHECK_LONG=1 (make check-long) runs the long fault-injection
# rounds at full length (tests/integration/run.sh); make check runs fewer.
# Usage: tests/run.sh BUILD-DIR
set -u
cd "$(dirname "$0")/.."
build=${1:-build}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
out=$(mktemp)
trap 'rm -f "$out"; pg_stop' EXIT
asan=0
if nm -u "$build/toolgate" 2>/dev/null | grep -q __asan_init; then asan=1; fi

suite() { # NAME COMMAND...
	local name=$1 rc start=$SECONDS
	shift
	"$@" </dev/null | tee "$out"
	rc=${PIPESTATUS[0]}
	if [ "$rc" -ne 0 ] && ! grep -q '^not ok ' "$out"; then
		echo "not ok - $name: the suite exited with status $rc"
	fi
	if ! grep -q -E '^(ok|skip) ' "$out"; then
		echo "not ok - $name: ran no test"
	fi
	echo "# suite $name: $((SECONDS - start)) s"
}

# The store's tests run on SQLite and again on a PostgreSQL of their own
# (tests/pg/pg.sh), stopped once they are done: the suites after them count
# the machine's processes
. tests/pg/pg.sh
if ! pg_start; then
	echo "# PostgreSQL: could not start one (postgresql-15 missing?): its tests skip"
	pg_stop
fi
suite unit "$build/tests/unit-tests"
pg_stop
suite replicas tests/replicas/run.sh "$build"
suite redact tests/redact/run.sh "$build"
suite man tests/man/run.sh "$build"
suite integration tests/integration/run.sh "$build"
suite security tests/security/run.sh "$build"
suite egress tests/egress/run.sh "$build"
suite schema-suite tests/schema/run.sh "$build"
suite mcp-interop tests/mcp/run.sh "$build"
suite mcp-conformance tests/conformance/run.sh "$build"
# The Inspector's eight requests (tools/list, one fs.read, one
# resources/read, one prompts/get, over stdio and HTTP) are well-formed
# shapes the integration suite sends as well, and more, under the
# sanitizers; what the Inspector adds is its reading of the answers, the
# same with either build. So it runs against the plain build only: under
# the sanitizers it would cost a node start per request for no C path of
# its own. The SDK clients (cancellation of a running call) and the
# conformance suite (the widest variety of requests) keep both passes.
if [ "$asan" = 1 ]; then
	echo "# suite mcp-inspector: against the plain build only (tests/run.sh says why)"
else
	suite mcp-inspector tests/inspector/run.sh "$build"
fi
# The console in a browser likewise: what a browser adds is its reading of
# the pages, the same with either build, at a browser's start a check. The
# console's C under the sanitizers is fuzz_console's (every request path,
# a session signed in) and the unit tests' (its sessions and sign-ins).
if [ "$asan" = 1 ]; then
	echo "# suite console: against the plain build only (tests/run.sh says why)"
else
	suite console tests/console/run.sh "$build"
fi
# The installed tree (make install into a temporary root, the example
# served from it, a program linked against it): against the plain build
# only. What it checks, the files, the pkg-config file, the completion,
# is the same with either build's, and a program linked against the
# sanitizers' library would need their flags too.
if [ "$asan" = 1 ]; then
	echo "# suite install: against the plain build only (tests/run.sh says why)"
else
	suite install tests/install/run.sh "$build"
fi
# A pure cgroup v2 kernel under QEMU, toolgate not root in a delegated
# cgroup (make check-long only; tests/cgroup2/run.sh says why): the plain
# build's package, as the install test.
if [ "$asan" = 1 ]; then
	echo "# suite cgroup2: against the plain build only (tests/run.sh says why)"
else
	suite cgroup2 tests/cgroup2/run.sh "$build"
fi
