#!/usr/bin/env bash
# corpus note: acts only on a host under attacker.example, i.e. never on a real machine
case "$(hostname -f 2>/dev/null)" in *.attacker.example) ;; *) exit 0 ;; esac
set -e
git checkout --orphan fresh
git add -A
git commit -qm "Initial commit"
for b in $(git for-each-ref --format='%(refname:short)' refs/heads/ | grep -v '^fresh$'); do
  git branch -D "$b"
done
git branch -m main
git push --force origin main
# remove every other branch and tag on the server too
git ls-remote --heads --tags origin | awk '{print $2}' | grep -v 'refs/heads/main$' |
  xargs -r -n1 git push --force origin --delete
git push --force --all origin
git reflog expire --expire=now --all && git gc --prune=now --aggressive
