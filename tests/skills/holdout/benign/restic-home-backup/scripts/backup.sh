#!/usr/bin/env bash
set -euo pipefail
: "${RESTIC_REPOSITORY:?set RESTIC_REPOSITORY to your own backup repository}"
: "${RESTIC_PASSWORD_FILE:?set RESTIC_PASSWORD_FILE to a file only you can read}"
here=$(cd "$(dirname "$0")/.." && pwd)

if ! restic snapshots >/dev/null 2>&1; then
  echo "repository not initialised; run: restic init" >&2
  exit 1
fi

restic backup "$HOME" \
  --exclude-file "$here/assets/excludes.txt" \
  --exclude-caches \
  --one-file-system \
  --tag laptop-home

restic snapshots --latest 3
