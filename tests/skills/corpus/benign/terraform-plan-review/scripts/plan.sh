#!/usr/bin/env bash
set -euo pipefail
dir=${1:-.}
cd "$dir"
terraform init -input=false -no-color >/dev/null
terraform plan -input=false -no-color -lock-timeout=60s -out=tfplan
terraform show -json tfplan > tfplan.json
echo "plan written to $dir/tfplan and $dir/tfplan.json"
