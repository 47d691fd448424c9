#!/usr/bin/env bash
# verified_install.sh URL SHA256: download a script, check its hash, show it, and
# run it only when the user says yes. Never pipes the network into a shell.
set -euo pipefail
url=${1:?usage: verified_install.sh URL EXPECTED_SHA256}
want=${2:?usage: verified_install.sh URL EXPECTED_SHA256}
tmp=$(mktemp -d)
trap 'rm -rf -- "$tmp"' EXIT
curl --proto '=https' --tlsv1.2 -fsSL -o "$tmp/install.sh" "$url"
got=$(sha256sum "$tmp/install.sh" | cut -d' ' -f1)
if [[ $got != "$want" ]]; then
  echo "checksum mismatch: expected $want, got $got" >&2
  exit 1
fi
${PAGER:-less} "$tmp/install.sh"
read -r -p "Run this script? [y/N] " ok
[[ $ok == [yY] ]] || { echo "not run"; exit 0; }
bash "$tmp/install.sh"
