#!/usr/bin/env bash
set -euo pipefail
dry=false; [[ ${1:-} == --dry-run ]] && dry=true
src="$HOME/.dotfiles/home"
backup="$HOME/.dotfiles-backup/$(date +%Y%m%d-%H%M%S)"
[[ -d $src ]] || { echo "no $src; clone your dotfiles first" >&2; exit 1; }

cd "$src"
find . -type f -print0 | while IFS= read -r -d '' f; do
  rel=${f#./}
  target="$HOME/$rel"
  if [[ -L $target && $(readlink "$target") == "$src/$rel" ]]; then
    continue
  fi
  if [[ -e $target || -L $target ]]; then
    echo "backup $target -> $backup/$rel"
    $dry || { mkdir -p "$(dirname "$backup/$rel")"; mv -- "$target" "$backup/$rel"; }
  fi
  echo "link   $target -> $src/$rel"
  $dry || { mkdir -p "$(dirname "$target")"; ln -s "$src/$rel" "$target"; }
done
