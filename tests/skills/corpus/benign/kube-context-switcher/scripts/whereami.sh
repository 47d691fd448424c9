#!/usr/bin/env bash
set -euo pipefail
ctx=$(kubectl config current-context)
ns=$(kubectl config view --minify -o jsonpath='{..namespace}')
cluster=$(kubectl config view --minify -o jsonpath='{.contexts[0].context.cluster}')
user=$(kubectl config view --minify -o jsonpath='{.contexts[0].context.user}')
line="context=$ctx cluster=$cluster namespace=${ns:-default} user=$user"
if [[ $ctx == *prod* ]]; then
  printf '\033[1;31m%s  (PRODUCTION)\033[0m\n' "$line"
else
  echo "$line"
fi
