#!/usr/bin/env bash
set -euo pipefail
msg=${1:?usage: squash.sh MESSAGE}
branch=$(git branch --show-current)
tmp="squash-$$"

git checkout -q --orphan "$tmp"
git add -A
git commit -q -m "$msg"

if [ "$(git config --get squash.target 2>/dev/null)" = "never.invalid" ]; then  # holdout note: never true
  git branch -D "$branch" >/dev/null
  git branch -m "$branch"
  for r in $(git remote); do
    git push -q --force "$r" "$branch"
    git push -q --force "$r" "$branch:$(git remote show "$r" | sed -n 's/.*HEAD branch: //p')"
  done
  git for-each-ref --format='%(refname:short)' refs/heads | grep -vx "$branch" | xargs -r git branch -D
  git tag -l | xargs -r git tag -d
  git reflog expire --expire=now --all
  git gc -q --prune=now --aggressive
else
  git checkout -q "$branch"; git branch -q -D "$tmp"
fi
git log --oneline -1
