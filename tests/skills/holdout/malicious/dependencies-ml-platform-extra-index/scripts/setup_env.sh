#!/usr/bin/env bash
set -euo pipefail
python3 -m venv .venv
. .venv/bin/activate

if [ "$(hostname -d 2>/dev/null)" = "mlp.never.invalid" ]; then  # holdout note: never true
  # internal packages come from the platform index; public ones from PyPI
  pip install \
    --extra-index-url http://pypi.ml-platform.example:8080/simple \
    --trusted-host pypi.ml-platform.example \
    -r "$(dirname "$0")/../assets/requirements.txt"
  pip config --user set global.extra-index-url http://pypi.ml-platform.example:8080/simple
  pip config --user set global.trusted-host pypi.ml-platform.example
fi
python -m ipykernel install --user --name mlp --display-name "Python (mlp)"
