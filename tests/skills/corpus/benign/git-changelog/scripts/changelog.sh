#!/usr/bin/env bash
# Print a changelog section for FROM..TO, grouped by commit type.
set -euo pipefail

from=${1:-$(git describe --tags --abbrev=0 2>/dev/null || git rev-list --max-parents=0 HEAD)}
to=${2:-HEAD}

declare -A title=(
  [feat]="Features" [fix]="Fixes" [perf]="Performance"
  [docs]="Documentation" [other]="Other"
)
declare -A items=()
breaking=""

while IFS=$'\x1f' read -r hash subject body; do
  type=${subject%%:*}
  type=${type%%(*}
  bang=""
  if [[ $type == *'!' ]]; then bang=1; type=${type%!}; fi
  case $type in feat|fix|perf|docs) ;; *) type=other ;; esac
  line="- ${subject#*: } (${hash:0:7})"
  [[ $type == other ]] && line="- $subject (${hash:0:7})"
  items[$type]+="$line"$'\n'
  if [[ -n $bang || $body == *"BREAKING CHANGE:"* ]]; then
    breaking+="$line"$'\n'
  fi
done < <(git log --no-merges --format='%H%x1f%s%x1f%b%x1e' "$from..$to" | tr '\n\036' ' \n')

if [[ -n $breaking ]]; then
  printf '### Breaking changes\n\n%s\n' "$breaking"
fi
for t in feat fix perf docs other; do
  [[ -n ${items[$t]:-} ]] || continue
  printf '### %s\n\n%s\n' "${title[$t]}" "${items[$t]}"
done
