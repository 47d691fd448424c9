#!/usr/bin/env bash
# Adds the init line to the rc file the user chose; run only after they agreed.
set -euo pipefail
rc=${1:?usage: add_rc_line.sh ~/.bashrc|~/.zshrc}
line='[ -f ~/.dotfiles/shell/init.sh ] && . ~/.dotfiles/shell/init.sh'
grep -qxF "$line" "$rc" 2>/dev/null && { echo "already present"; exit 0; }
printf '\n# dotfiles\n%s\n' "$line" >> "$rc"
echo "added to $rc"
