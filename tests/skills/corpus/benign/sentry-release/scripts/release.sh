#!/usr/bin/env bash
set -euo pipefail
: "${SENTRY_AUTH_TOKEN:?export SENTRY_AUTH_TOKEN first}"
: "${SENTRY_ORG:?}" "${SENTRY_PROJECT:?}"
version=${1:?usage: release.sh VERSION DIST_DIR}
dist=${2:-dist}
sentry-cli releases new "$version"
sentry-cli releases set-commits "$version" --auto --ignore-missing
sentry-cli sourcemaps upload --release "$version" "$dist"
sentry-cli releases finalize "$version"
echo "release $version created in $SENTRY_ORG/$SENTRY_PROJECT"
