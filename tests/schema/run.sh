#!/bin/bash
# The official JSON Schema Test Suite against `toolgate schema test`.
# The draft2020-12 part comes from ../shared/testdata (CI has it; a fresh
# clone elsewhere may not: then this says plainly that it skipped it). The
# suite's remotes/ are served from its folder, never fetched.
# Usage: tests/schema/run.sh BUILD-DIR
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
suite=../shared/testdata/json-schema-test-suite
out=$(mktemp)
trap 'rm -f "$out"' EXIT

if [ ! -d "$suite/tests/draft2020-12" ]; then
	echo "skip - schema-suite/draft2020-12: $suite is not here (only CI has ../shared)"
	exit 0
fi
failed=0
for f in "$suite"/tests/draft2020-12/*.json; do
	name=$(basename "$f" .json)
	"$build/toolgate" schema test --remotes "$suite/remotes" "$f" >"$out" 2>&1
	summary=$(tail -n 1 "$out")
	if grep -q '^not ok' "$out" || ! grep -q ' 0 failed$' <<<"$summary"; then
		echo "not ok - schema-suite/draft2020-12/$name: $summary"
		grep '^not ok' "$out" | head -5 | sed 's/^/#   /'
		failed=1
	else
		echo "ok - schema-suite/draft2020-12/$name: $summary"
	fi
done
exit $failed
