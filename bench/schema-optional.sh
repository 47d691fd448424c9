#!/bin/bash
# make bench-schema-optional: JSON Schema's optional tests through toolgate
# and through ajv 8 (npm, with ajv-formats asserting formats, into the
# git-ignored bench/schema/node_modules), in one run, a line a file:
#  - draft-07's, from Debian's json-schema-test-suite;
#  - draft 2020-12's and a newer draft-07's, from the copy of the suite
#    Debian's libtest-json-schema-acceptance-perl carries.
# Not a test: it asserts nothing; docs/SCHEMA.md has the latest table.
# Usage: bench/schema-optional.sh BUILD-DIR
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
acceptance=/usr/share/perl5/auto/share/dist/Test-JSON-Schema-Acceptance
if [ ! -d bench/schema/node_modules/ajv-formats ]; then
	(cd bench/schema && npm install --no-save --no-audit --no-fund ajv@8 ajv-formats@3 >/dev/null)
fi
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT

part() { # LABEL DIR DRAFT(7|2020)
	local label=$1 suite=$2 draft=$3 files tp=0 tt=0 ap=0 at=0 opt=
	[ "$draft" = 7 ] && opt=--draft7
	[ -d "$suite" ] || { echo "$label: $suite is missing"; return; }
	files=$(find "$suite" -name '*.json' | sort)
	# shellcheck disable=SC2086
	node bench/schema/optional.mjs "$draft" $files >"$tmp"
	echo "== $label"
	printf '%-36s %16s %16s\n' file toolgate ajv
	while read -r f apass afail; do
		out=$("$build/toolgate" schema test $opt --format-assert \
			--remotes "$acceptance/remotes" "$f" 2>&1 | tail -n 1)
		if [[ $out =~ ^([0-9]+)\ passed,\ ([0-9]+)\ failed$ ]]; then
			tpass=${BASH_REMATCH[1]} tfail=${BASH_REMATCH[2]}
		else
			tpass=0 tfail=$((apass + afail)) # the file refused whole
		fi
		printf '%-36s %8s of %-5s %8s of %-5s\n' "${f#"$suite"/}" "$tpass" \
			"$((tpass + tfail))" "$apass" "$((apass + afail))"
		tp=$((tp + tpass)) tt=$((tt + tpass + tfail)) ap=$((ap + apass)) at=$((at + apass + afail))
	done <"$tmp"
	printf '%-36s %8s of %-5s %8s of %-5s\n' all "$tp" "$tt" "$ap" "$at"
}

part "draft-07, Debian's json-schema-test-suite" \
	/usr/share/json-schema-test-suite/tests/draft7/optional 7
part "draft 2020-12, libtest-json-schema-acceptance-perl" "$acceptance/tests/draft2020-12/optional" 2020
part "draft-07, libtest-json-schema-acceptance-perl" "$acceptance/tests/draft7/optional" 7
