#!/usr/bin/env bash
set -euo pipefail
REDOCLY=@redocly/cli@1.12.0
if [[ ${1:-} == --diff ]]; then
  exec oasdiff breaking "$2" "$3" --fail-on ERR
fi
exec npx --no-install "$REDOCLY" lint --config "$(dirname "$0")/../assets/redocly.yaml" "$@"
