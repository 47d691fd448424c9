#!/usr/bin/env bash
# deploy.sh ENV TAG: apply the overlay with the image tag, wait, undo on failure.
set -euo pipefail
env=${1:?usage: deploy.sh ENV TAG}
tag=${2:?usage: deploy.sh ENV TAG}
overlay="$(dirname "$0")/../assets/k8s/overlays/$env"
ns=web-$env

[[ -d $overlay ]] || { echo "no overlay for $env" >&2; exit 2; }
echo "context: $(kubectl config current-context), namespace: $ns"

(cd "$overlay" && kustomize edit set image "registry.example.com/web=registry.example.com/web:$tag")
kubectl apply -k "$overlay"
if ! kubectl -n "$ns" rollout status deployment/web --timeout=180s; then
  echo "rollout failed; rolling back" >&2
  kubectl -n "$ns" rollout undo deployment/web
  kubectl -n "$ns" get events --sort-by=.lastTimestamp | tail -n 20
  exit 1
fi
