#!/bin/bash
# The official JSON Schema Test Suite against `toolgate schema test`:
#  - draft7 from Debian's json-schema-test-suite package (the project's
#    scripts install it; that package stops at draft7), always;
#  - the optional tests of draft 2020-12 and draft7 from the copy of the
#    suite Debian's libtest-json-schema-acceptance-perl carries, always;
#  - draft2020-12 and the newer draft7 from ../shared/testdata, where that
#    folder exists (CI has it; a fresh clone elsewhere may not: then this
#    says plainly that it skipped that part).
# Each suite's remotes/ is served from its own folder, never fetched.
# Usage: tests/schema/run.sh BUILD-DIR
set -u
cd "$(dirname "$0")/../.."
build=${1:-build}
shared=../shared/testdata/json-schema-test-suite
debian=/usr/share/json-schema-test-suite
out=$(mktemp)
trap 'rm -f "$out"' EXIT
failed=0

run_part() { # LABEL SUITE-DIR DRAFT-DIR [--draft7]
	local label=$1 suite=$2 dir=$3 f name summary
	shift 3
	for f in "$suite/tests/$dir"/*.json; do
		name=$(basename "$f" .json)
		"$build/toolgate" schema test "$@" --remotes "$suite/remotes" "$f" >"$out" 2>&1
		summary=$(tail -n 1 "$out")
		if grep -q '^not ok' "$out" || ! grep -q ' 0 failed$' <<<"$summary"; then
			echo "not ok - schema-suite/$label/$name: $summary"
			grep '^not ok' "$out" | head -5 | sed 's/^/#   /'
			failed=1
		else
			echo "ok - schema-suite/$label/$name: $summary"
		fi
	done
}

# "format" as an assertion: every format file of the suite (docs/SCHEMA.md),
# and the other optional files: exact big numbers, content (asserted with
# format in draft-07), ECMA-262's regex dialect, floats ending in .0
formats="date-time date time email hostname ipv4 ipv6 uri uri-reference json-pointer
	 relative-json-pointer regex idn-email idn-hostname iri iri-reference uri-template"

if [ -d "$debian/tests/draft7" ]; then
	run_part debian-draft7 "$debian" draft7 --draft7
	for fmt in $formats ../bignum ../content ../ecmascript-regex ../zeroTerminatedFloats; do
		f="$debian/tests/draft7/optional/format/$fmt.json"
		[ -f "$f" ] || continue
		summary=$("$build/toolgate" schema test --draft7 --format-assert "$f" 2>&1 | tail -n 1)
		if grep -q ' 0 failed$' <<<"$summary"; then
			echo "ok - schema-suite/debian-draft7/format/${fmt#../}: $summary"
		else
			echo "not ok - schema-suite/debian-draft7/format/${fmt#../}: $summary"
			failed=1
		fi
	done
else
	echo "not ok - schema-suite/debian-draft7: $debian is missing (scripts/install-deps.sh installs it)"
	failed=1
fi
# The optional tests of draft 2020-12 and newer ones of draft7, with
# "format" asserted: Debian's libtest-json-schema-acceptance-perl carries
# a copy of the suite with its optional/ folders (only the files are
# used). cross-draft.json is the one left (docs/SCHEMA.md): a $ref into a
# document of another draft is read in the referring schema's draft.
acceptance=/usr/share/perl5/auto/share/dist/Test-JSON-Schema-Acceptance
if [ -d "$acceptance/tests/draft2020-12/optional" ]; then
	for part in draft2020-12 draft7; do
		draft=
		[ "$part" = draft7 ] && draft=--draft7
		while read -r f; do
			name=${f#"$acceptance/tests/$part/optional/"}
			if [ "$name" = cross-draft.json ]; then
				echo "skip - schema-suite/optional-$part/$name: other drafts' documents are read in the referring schema's draft (docs/SCHEMA.md)"
				continue
			fi
			summary=$("$build/toolgate" schema test $draft --format-assert \
				--remotes "$acceptance/remotes" "$f" 2>&1 | tail -n 1)
			if grep -q ' 0 failed$' <<<"$summary"; then
				echo "ok - schema-suite/optional-$part/$name: $summary"
			else
				echo "not ok - schema-suite/optional-$part/$name: $summary"
				failed=1
			fi
		done < <(find "$acceptance/tests/$part/optional" -name '*.json' | sort)
	done
else
	echo "not ok - schema-suite/optional: $acceptance is missing (scripts/install-deps.sh installs libtest-json-schema-acceptance-perl)"
	failed=1
fi
# ECMA-262's reading of "pattern" and of the "regex" format, as the
# project's own cases say it (tests/schema/ecma262.json, after the
# optional ecmascript-regex tests of newer suites: \s, \d, \w, '.', \c,
# \u, \p{...}, lookbehind, named groups, and what ECMA-262 lacks)
# and the formats' and draft-07 content's edge cases (NUL bytes, A-labels,
# JSON content that is not base64's fault) as second readers found them
for own in ecma262 formats content-draft7; do
	draft=
	[ "$own" = content-draft7 ] && draft=--draft7
	summary=$("$build/toolgate" schema test $draft --format-assert "tests/schema/$own.json" 2>&1 | tail -n 1)
	if grep -q ' 0 failed$' <<<"$summary"; then
		echo "ok - schema-suite/$own: $summary"
	else
		echo "not ok - schema-suite/$own: $summary"
		failed=1
	fi
done
if [ -d "$shared/tests/draft2020-12" ]; then
	run_part draft2020-12 "$shared" draft2020-12
	run_part draft7 "$shared" draft7 --draft7
else
	echo "skip - schema-suite/draft2020-12: $shared is not here (only CI has ../shared)"
	echo "skip - schema-suite/draft7: $shared is not here (only CI has ../shared)"
fi
exit $failed
