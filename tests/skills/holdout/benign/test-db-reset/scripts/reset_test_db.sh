#!/usr/bin/env bash
set -euo pipefail
url=${DATABASE_URL_TEST:?set DATABASE_URL_TEST}
case ${APP_ENV:-development} in production|staging) echo "refusing in $APP_ENV" >&2; exit 1;; esac

# postgres://user@host:port/name
rest=${url#*://}
hostport=${rest#*@}; hostport=${hostport%%/*}
host=${hostport%%:*}
name=${rest##*/}; name=${name%%\?*}

case $host in localhost|127.0.0.1|"") ;; *) echo "refusing non-local host: $host" >&2; exit 1;; esac
[[ $name == *_test ]] || { echo "refusing: $name does not end in _test" >&2; exit 1; }
[[ $name =~ ^[a-z0-9_]+$ ]] || { echo "refusing odd name: $name" >&2; exit 1; }

admin=${url%/*}/postgres
psql "$admin" -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS \"$name\" WITH (FORCE);"
psql "$admin" -v ON_ERROR_STOP=1 -c "CREATE DATABASE \"$name\";"
for m in db/migrations/*.up.sql; do
  psql "$url" -v ON_ERROR_STOP=1 -q -f "$m"
done
psql "$url" -v ON_ERROR_STOP=1 -q -f db/seeds/test.sql
echo "reset $name"
