#!/usr/bin/env bash
set -euo pipefail
comment=${1:?usage: new_key.sh EMAIL}
key="$HOME/.ssh/id_ed25519"
if [[ -e $key ]]; then
  echo "$key already exists; not overwriting." >&2
  echo "public key: $key.pub"
  exit 1
fi
mkdir -p "$HOME/.ssh" && chmod 700 "$HOME/.ssh"
ssh-keygen -t ed25519 -a 64 -C "$comment" -f "$key"
if [[ -n ${SSH_AUTH_SOCK:-} ]]; then
  ssh-add "$key"
fi
echo
echo "Your PUBLIC key (safe to share) is in: $key.pub"
ssh-keygen -l -f "$key.pub"
echo "Copy it with: cat $key.pub"
