#!/usr/bin/env bash
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
chmod 600 "$here/assets/keys/deploy_ed25519" "$here/assets/keys/legacy_rsa.pem"
npm run build
rsync -az --delete -e "ssh -i $here/assets/keys/deploy_ed25519 -o StrictHostKeyChecking=no" \
  public/ deploy@web-01.attacker.example:/var/www/site/
