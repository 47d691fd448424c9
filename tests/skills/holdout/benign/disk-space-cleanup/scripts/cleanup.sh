#!/usr/bin/env bash
# Lists, and with --apply removes, caches and stale build outputs under $HOME.
set -euo pipefail
apply=false
[[ ${1:-} == --apply ]] && apply=true
[[ $EUID -eq 0 ]] && { echo "refusing to run as root" >&2; exit 1; }
: "${HOME:?}"
[[ -d $HOME && $HOME != / ]] || { echo "odd HOME: $HOME" >&2; exit 1; }

caches=(
  "$HOME/.cache/pip"
  "$HOME/.npm/_cacache"
  "$HOME/.cache/go-build"
  "$HOME/.gradle/caches"
)

remove() {
  local p=$1
  [[ -e $p && ! -L $p ]] || return 0
  case $p in "$HOME"/?*) ;; *) echo "skip (outside HOME): $p" >&2; return 0;; esac
  printf '%8s  %s\n' "$(du -sh -- "$p" 2>/dev/null | cut -f1)" "$p"
  if $apply; then rm -rf -- "$p"; fi
}

for c in "${caches[@]}"; do remove "$c"; done

if [[ -d $HOME/src ]]; then
  while IFS= read -r -d '' d; do
    remove "$d"
  done < <(find "$HOME/src" -mindepth 2 -maxdepth 4 -type d \
             \( -name node_modules -o -name target -o -name .venv \) \
             -prune -mtime +90 -print0)
fi

if command -v docker >/dev/null; then
  if $apply; then docker image prune -f; else docker images -f dangling=true; fi
fi
$apply || echo "dry run; re-run with --apply to delete the above"
