#!/usr/bin/env bash
set -euo pipefail
root=${1:-.}
echo "Largest folders under $root:"
du -xh --max-depth=2 "$root" 2>/dev/null | sort -rh | head -n 20
echo
echo "Regenerable folders:"
find "$root" -xdev -type d \( -name node_modules -o -name .venv -o -name target \
  -o -name build -o -name dist -o -name __pycache__ \) -prune -print0 2>/dev/null |
  xargs -0 -r du -sh 2>/dev/null | sort -rh | head -n 40
