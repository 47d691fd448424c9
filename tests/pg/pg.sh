# A PostgreSQL of the tests' own (sourced; docs/STORE.md, "PostgreSQL"):
# pg_start makes a cluster with initdb in a new directory under /tmp, as
# nobody when run as root (initdb refuses root), listening only on a unix
# socket in that directory (no TCP port at all), and exports TG_TEST_PG,
# the URL the tests give toolgate; pg_stop stops it and removes the
# directory. Debian's postgresql-15 (make deps installs it); without it
# pg_start fails and the tests that need it skip.
PG_BIN=${PG_BIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)}
PG_DIR=

pg_as() {
	if [ "$(id -u)" = 0 ]; then runuser -u nobody -- "$@"; else "$@"; fi
}

pg_start() {
	[ -n "$PG_BIN" ] && [ -x "$PG_BIN/initdb" ] || return 1
	PG_DIR=$(mktemp -d /tmp/tg-pg-XXXXXX) || return 1
	if [ "$(id -u)" = 0 ]; then chown nobody "$PG_DIR"; fi
	chmod 700 "$PG_DIR"
	pg_as "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U toolgate --no-sync -E UTF8 \
		--no-instructions >"$PG_DIR/initdb.log" 2>&1 || return 1
	pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -w -t 30 -l "$PG_DIR/log" \
		-o "-c listen_addresses='' -k $PG_DIR -c max_connections=300" start \
		>/dev/null 2>&1 || return 1
	export TG_TEST_PG="postgresql:///postgres?host=$PG_DIR&user=toolgate"
}

pg_stop() {
	[ -n "$PG_DIR" ] || return 0
	pg_as "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -w stop -m fast >/dev/null 2>&1
	rm -rf "$PG_DIR"
	PG_DIR=
	unset TG_TEST_PG
}
