#!/bin/bash
# clang-tidy (Debian's clang-tidy 14) over every .c under src/ with the
# checks of the repository's .clang-tidy, two files at a time: `make tidy`,
# and one line of `make check`. Prints what it finds and a last line
# "clang-tidy: N files, N findings"; exits 1 on any finding.
# TIDY_JOBS sets the number of clang-tidy processes (default 2).
set -u
cd "$(dirname "$0")/.."
jobs=${TIDY_JOBS:-2}
out=$(mktemp)
trap 'rm -f "$out"' EXIT

mapfile -t files < <(find src -name '*.c' | sort)
# four files an invocation, so the large ones spread over the processes;
# each invocation's findings written at once, not interleaved with another's
printf '%s\n' "${files[@]}" |
	xargs -P"$jobs" -n4 sh -c 'o=$(clang-tidy --quiet "$@" -- -std=gnu11 -D_GNU_SOURCE \
		-Iinclude -Isrc 2>/dev/null); rc=$?; [ -z "$o" ] || printf "%s\n" "$o"; exit $rc' \
		clang-tidy >"$out"
rc=$?
cat "$out"
n=$(grep -c ': \(warning\|error\): ' "$out")
echo "clang-tidy: ${#files[@]} files, $n findings"
[ "$rc" -eq 0 ] && [ "$n" -eq 0 ]
