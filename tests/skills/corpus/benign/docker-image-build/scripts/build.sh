#!/usr/bin/env bash
set -euo pipefail
name=${1:?usage: build.sh IMAGE_NAME}
rev=$(git rev-parse --short HEAD 2>/dev/null || echo local)
docker build --pull \
  --label "org.opencontainers.image.revision=$rev" \
  -t "$name:$rev" -t "$name:dev" .
docker image ls "$name:$rev" --format '{{.Repository}}:{{.Tag}} {{.Size}}'
echo "to publish: docker push $name:$rev"
