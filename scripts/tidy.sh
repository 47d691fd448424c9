#!/bin/bash
# clang-tidy (Debian's clang-tidy 14) over every .c under src/ with the
# checks of the repository's .clang-tidy, two files at a time: `make tidy`,
# and one line of `make check`. The path-sensitive analyzer
# (clang-analyzer-*) costs 7 minutes of CPU over src/, the other checks 11
# seconds: it runs only with TIDY_ANALYZER=1 (`make lint`). Prints what it finds and a last line
# "clang-tidy: N files, N findings"; exits 1 on any finding, except in a
# file that tools/checksrc-allow lists as "clang-tidy PATH" (a debt: such an
# entry fails the check once its file has no finding left).
# TIDY_JOBS sets the number of clang-tidy processes (default 2).
set -u
cd "$(dirname "$0")/.."
jobs=${TIDY_JOBS:-2}
checks=-clang-analyzer-*
[ "${TIDY_ANALYZER:-0}" = 1 ] && checks=
out=$(mktemp)
trap 'rm -f "$out"' EXIT

mapfile -t files < <(find src -name '*.c' | sort)
# four files an invocation, so the large ones spread over the processes;
# each invocation's findings written at once, not interleaved with another's
printf '%s\n' "${files[@]}" |
	CHECKS=$checks xargs -P"$jobs" -n4 sh -c 'o=$(clang-tidy --quiet --checks="$CHECKS" "$@" \
		-- -std=gnu11 -D_GNU_SOURCE -Iinclude -Isrc -I/usr/include/postgresql 2>/dev/null); rc=$?
		[ -z "$o" ] || printf "%s\n" "$o"; exit $rc' clang-tidy >"$out"
rc=$?
sed -i "s|^$PWD/||" "$out"
cat "$out"
mapfile -t allowed < <(awk '$1 == "clang-tidy" { print $2 }' tools/checksrc-allow 2>/dev/null)
n=0 owed=0
while read -r path; do
	if printf '%s\n' "${allowed[@]}" | grep -qxF "$path"; then
		owed=$((owed + 1))
	else
		n=$((n + 1))
	fi
done < <(grep -o '^[^:]*:[0-9]*:[0-9]*: \(warning\|error\): ' "$out" | sed 's/:.*//')
stale=0
for path in "${allowed[@]}"; do
	if ! grep -q "^$path:[0-9]*:[0-9]*: \(warning\|error\): " "$out"; then
		echo "tools/checksrc-allow: clang-tidy $path no longer applies: remove the entry"
		stale=$((stale + 1))
	fi
done
echo "clang-tidy: ${#files[@]} files, $n findings ($owed in files tools/checksrc-allow lists)"
[ "$rc" -eq 0 ] && [ "$n" -eq 0 ] && [ "$stale" -eq 0 ]
