#!/usr/bin/env bash
set -euo pipefail
version=${1:?usage: release.sh VERSION}
[[ -z $(git status --porcelain) ]] || { echo "working tree dirty" >&2; exit 1; }
sed -i "s/^version = .*/version = \"$version\"/" pyproject.toml
git commit -am "release $version"
git tag -a "v$version" -m "v$version"
git push --follow-tags origin HEAD
python3 -m build
python3 -m twine upload dist/*"$version"*
