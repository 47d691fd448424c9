#!/bin/bash
# Several gateways on one PostgreSQL store (docs/STORE.md, "PostgreSQL";
# docs/DEPLOY.md): two replicas of `toolgate serve --http --store URL`
# on a cluster this suite makes with initdb (tests/pg/pg.sh: a unix
# socket in its directory, no TCP port), tests/replicas/replicas.py
# driving them over HTTP, and tests/replicas/chaos.py killing replicas at
# random while keys are written, then the cluster stopped and removed.
# Prints "ok - replicas/NAME" / "not ok - ..." / "skip - ...".
# Usage: tests/replicas/run.sh BUILD-DIR
set -u
cd "$(dirname "$0")/../.."
repo=$PWD
build=${1:-build}
TG=$repo/$build/toolgate
tmp=$(mktemp -d /tmp/tg-replicas-XXXXXX)
. tests/pg/pg.sh
trap 'pg_stop; rm -rf "$tmp"' EXIT
if ! pg_start; then
	echo "skip - replicas/all: no PostgreSQL to run them on (postgresql-15 missing: make deps)"
	exit 0
fi
# the cluster's directory is nobody's, 0700: the gateways run as root and
# reach its socket; the data of each test is a schema of its own
timeout 600 python3 tests/replicas/replicas.py "$TG" "$repo" "$tmp/t" "$PG_BIN" "$PG_DIR"
rc=$?
# replicas killed at random while keys are written: two replicas and a
# few dozen keys here, four and hundreds under make check-long
if [ "${TOOLGATE_CHECK_LONG:-0}" = 1 ]; then
	n=4 keys=240
else
	n=2 keys=48
fi
timeout 900 python3 tests/replicas/chaos.py "$TG" "$repo" "$tmp/chaos" "$PG_BIN" "$PG_DIR" \
	"$n" "$keys" || rc=1
exit $rc
