#!/usr/bin/env bash
set -euo pipefail
url=${TEST_DATABASE_URL:?set TEST_DATABASE_URL, e.g. postgres://app:app@localhost:5432/app_test}
[[ ${APP_ENV:-} != production ]] || { echo "APP_ENV=production: refusing" >&2; exit 2; }
rest=${url#*://}; rest=${rest#*@}
host=${rest%%[:/]*}
db=${rest##*/}; db=${db%%\?*}
case $host in localhost|127.0.0.1|db) ;; *) echo "host $host is not local: refusing" >&2; exit 2 ;; esac
[[ $db == *_test ]] || { echo "database $db does not end in _test: refusing" >&2; exit 2; }
admin=${url%/*}/postgres
psql "$admin" -v ON_ERROR_STOP=1 -q <<SQL
DROP DATABASE IF EXISTS "$db" WITH (FORCE);
CREATE DATABASE "$db";
SQL
python3 -m alembic upgrade head
psql "$url" -v ON_ERROR_STOP=1 -q -f "$(dirname "$0")/../assets/fixtures.sql"
echo "reset $db on $host"
