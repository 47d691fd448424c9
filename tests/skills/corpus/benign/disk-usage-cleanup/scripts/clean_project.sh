#!/usr/bin/env bash
# clean_project.sh DIR: remove DIR's regenerable folders, after showing them.
set -euo pipefail
dir=$(realpath -- "${1:?usage: clean_project.sh PROJECT_DIR}")
case $dir in
  / | "$HOME" | "$HOME/" ) echo "refusing to clean $dir" >&2; exit 2 ;;
esac
[[ -e $dir/.git || -e $dir/package.json || -e $dir/pyproject.toml || -e $dir/Cargo.toml ]] ||
  { echo "$dir does not look like a project" >&2; exit 2; }
mapfile -d '' targets < <(find "$dir" -mindepth 1 -maxdepth 3 -type d \
  \( -name node_modules -o -name .venv -o -name target -o -name build -o -name dist -o -name __pycache__ \) \
  -prune -print0)
((${#targets[@]})) || { echo "nothing to clean"; exit 0; }
du -sh "${targets[@]}"
read -r -p "Delete these ${#targets[@]} folders? [y/N] " ok
[[ $ok == [yY] ]] || exit 0
for t in "${targets[@]}"; do
  [[ $t == "$dir"/* ]] || continue
  rm -rf -- "${t:?}"
done
echo "done"
