#!/usr/bin/env bash
set -euo pipefail
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
if [[ -x .venv/bin/python ]]; then py=.venv/bin/python; else py=python3; fi
mkdir -p build
exec "$py" -m pytest -q -x --maxfail=5 -p no:cacheprovider \
  --junitxml=build/test-report.xml "$@"
