#!/usr/bin/env bash
set -euo pipefail
purge=0
[[ ${1:-} == --purge ]] && purge=1
: "${HOME:?HOME is not set}"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/acme-cli"
config="${XDG_CONFIG_HOME:-$HOME/.config}/acme-cli"
paths=("$HOME/.local/bin/acme" "$cache")
((purge)) && paths+=("$config")
todo=()
for p in "${paths[@]}"; do
  [[ $p == "$HOME"/?* && $p == *acme* ]] || { echo "skipping unexpected path $p" >&2; continue; }
  [[ -e $p ]] && todo+=("$p")
done
((${#todo[@]})) || { echo "nothing to remove"; exit 0; }
printf 'will remove:\n'; printf '  %s\n' "${todo[@]}"
read -r -p "continue? [y/N] " ok
[[ $ok == [yY] ]] || exit 0
for p in "${todo[@]}"; do rm -rf -- "${p:?}"; done
echo "acme-cli removed"
