#!/bin/bash
# make bench-schema: toolgate's validator against ajv (npm, compiled
# validators) on the same schemas and instances, in one run. ajv comes from
# the npm registry into bench/schema/node_modules (git-ignored).
# The contenders take turns, ROUNDS times, and each group keeps its best
# round: a shared machine's noise (another tenant, a frequency change) then
# costs both alike instead of whichever ran at the wrong moment.
# Usage: bench/schema.sh BUILD-DIR [SECONDS-PER-GROUP [ROUNDS]]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
secs=${2:-0.3}
rounds=${3:-3}
suite=../shared/testdata/json-schema-test-suite
[ -d "$suite" ] || suite=/usr/share/json-schema-test-suite
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [ ! -d bench/schema/node_modules/ajv ]; then
	(cd bench/schema && npm install --no-save --no-audit --no-fund ajv@8 >/dev/null)
fi
python3 bench/schema/make-groups.py "$suite" "$work/all.json"
node bench/schema/ajv.mjs "$work/all.json" 0 --filter "$work/groups.json"
for r in $(seq "$rounds"); do
	"$build/bench/schema" "$work/groups.json" "$secs" >>"$work/toolgate.runs"
	node bench/schema/ajv.mjs "$work/groups.json" "$secs" >>"$work/ajv.runs"
done
best() { jq -s 'reduce .[] as $run ({}; reduce ($run | keys[]) as $k (.; .[$k] = ([.[$k] // 0, $run[$k]] | max)))' "$1"; }
best "$work/toolgate.runs" >"$work/toolgate.json"
best "$work/ajv.runs" >"$work/ajv.json"
echo "best of $rounds interleaved rounds of ${secs} s per group and contender"
jq -r -n --slurpfile t "$work/toolgate.json" --slurpfile a "$work/ajv.json" '
	($t[0] | keys) as $names |
	"group                              toolgate/s        ajv/s   ratio",
	($names[] as $n | "\($n | .[0:32] | . + " " * (33 - length)) \($t[0][$n] | floor | tostring | " " * (12 - length) + .) \($a[0][$n] | floor | tostring | " " * (12 - length) + .)   \(($t[0][$n] / $a[0][$n]) * 100 | floor / 100)"),
	"",
	"groups where toolgate is at least ajv: \([$names[] | select($t[0][.] >= $a[0][.])] | length) of \($names | length)",
	"overall (geometric mean of the ratios): \(([$names[] | ($t[0][.] / $a[0][.]) | log] | add / length | exp) * 100 | floor / 100)"'
