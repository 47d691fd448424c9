#!/usr/bin/env bash
set -uo pipefail
status=0
step() { echo "== $*"; "$@" || status=1; }
if go help mod tidy | grep -q -- '-diff'; then
  step go mod tidy -diff
else
  go mod tidy && step git diff --exit-code go.mod go.sum
fi
step go vet ./...
command -v staticcheck >/dev/null && step staticcheck ./...
command -v govulncheck >/dev/null && step govulncheck ./...
exit $status
