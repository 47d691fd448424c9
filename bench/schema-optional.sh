#!/bin/bash
# make bench-schema-optional: JSON Schema's optional tests (Debian's
# json-schema-test-suite, draft-07: formats asserted, bignum, content,
# ECMA-262 regexes) through toolgate and through ajv (npm, with
# ajv-formats, into the git-ignored bench/schema/node_modules), in one run,
# a line a file. Not a test: it asserts nothing; docs/SCHEMA.md has the
# latest table. Usage: bench/schema-optional.sh BUILD-DIR
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
suite=/usr/share/json-schema-test-suite/tests/draft7/optional
if [ ! -d bench/schema/node_modules/ajv-formats ]; then
	(cd bench/schema && npm install --no-save --no-audit --no-fund ajv@8 ajv-formats@3 >/dev/null)
fi
files=$(find "$suite" -name '*.json' | sort)
# shellcheck disable=SC2086
node bench/schema/optional.mjs $files >"${TMPDIR:-/tmp}/ajv-optional.$$"
printf '%-36s %16s %16s\n' file toolgate ajv
tp=0 tt=0 ap=0 at=0
while read -r f apass afail; do
	out=$("$build/toolgate" schema test --draft7 --format-assert "$f" 2>&1 | tail -n 1)
	if [[ $out =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
		tpass=${BASH_REMATCH[1]} tfail=${BASH_REMATCH[2]}
	else
		tpass=0 tfail=$((apass + afail)) # the file refused whole
	fi
	name=${f#"$suite"/}
	printf '%-36s %8s of %-5s %8s of %-5s\n' "$name" "$tpass" "$((tpass + tfail))" "$apass" "$((apass + afail))"
	tp=$((tp + tpass)) tt=$((tt + tpass + tfail)) ap=$((ap + apass)) at=$((at + apass + afail))
done <"${TMPDIR:-/tmp}/ajv-optional.$$"
rm -f "${TMPDIR:-/tmp}/ajv-optional.$$"
printf '%-36s %8s of %-5s %8s of %-5s\n' all "$tp" "$tt" "$ap" "$at"
