#!/bin/bash
# make bench-store: the store on PostgreSQL against SQLite (docs/STORE.md),
# with bench/store.c, on a cluster tests/pg/pg.sh makes for the run (initdb,
# a unix socket in its directory, no TCP; fsync on, PostgreSQL's default:
# durability is the point) and state directories under /tmp on the same
# disk. Every measurement gets a store of its own: a new state directory,
# or a new schema in the cluster (the URL's options=-csearch_path). Run
# interleaved, the two backends taking turns, so that the machine's drift
# hits both:
#
#   the floor   a 4 KiB fsync on the disk, a SELECT 1 round trip on the
#               socket and one INSERT committed by PostgreSQL (libpq)
#   gate        a held, approved and run write's eight store calls,
#               ROUNDS rounds of WRITES writes each way: p50 and p99 of each
#               call and of the whole, the median of the rounds, and what
#               PostgreSQL adds (issue 24's target: 2 ms at p50)
#   claims      fresh keys claimed for SECS seconds by 1, 4 and 16 callers
#               over 1, 2 and 4 replicas (processes, each its own opening;
#               SQLite's share one file): claims a second, PG/SQLite, and
#               the CPU the server, the replicas and the machine used
#
# docs/BENCHMARKS.md, "The store: PostgreSQL against SQLite", says what the
# figures mean.
# Usage: bench/store.sh BUILD-DIR [WRITES [SECS [ROUNDS]]]
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
writes=${2:-1000}
secs=${3:-3}
rounds=${4:-3}
bin=$build/bench/store

. tests/pg/pg.sh
work=$(mktemp -d /tmp/tg-bench-store-XXXXXX)
trap 'pg_stop; rm -rf "$work"' EXIT
if ! pg_start; then
	echo "bench/store.sh: no PostgreSQL cluster could be made (make deps installs" \
		"postgresql-15)${PG_DIR:+: see $PG_DIR/initdb.log and $PG_DIR/log}" >&2
	exit 1
fi
psql() { "$PG_BIN/psql" -X -q -At -v ON_ERROR_STOP=1 "$TG_TEST_PG" "$@"; }
fresh_sqlite() { mktemp -d "$work/sqlite-XXXXXX"; }
fresh_pg() {
	local s
	s=bench_$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
	psql -c "CREATE SCHEMA $s"
	echo "$TG_TEST_PG&options=-csearch_path%3D$s"
}
fresh() { if [ "$1" = pg ]; then fresh_pg; else fresh_sqlite; fi; }
# the backends' order for the i-th measurement: each goes first half the time
order() { if [ $(($1 % 2)) = 1 ]; then echo sqlite pg; else echo pg sqlite; fi; }
field() { sed -n "s/.*[ ]$1=\([^ %]*\).*/\1/p" "$2" | head -n 1; }

echo "bench/store.sh: $(date -u '+%Y-%m-%d %H:%M') UTC, $(uname -sr), $(nproc) CPUs" \
	"($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1)), load" \
	"$(cut -d' ' -f1-3 /proc/loadavg)"
echo "  PostgreSQL $(psql -c 'SHOW server_version'): fsync=$(psql -c 'SHOW fsync')" \
	"synchronous_commit=$(psql -c 'SHOW synchronous_commit')" \
	"wal_sync_method=$(psql -c 'SHOW wal_sync_method'), a unix socket;" \
	"SQLite $(dpkg-query -W -f '${Version}' libsqlite3-0 2>/dev/null || echo '?')," \
	"WAL, synchronous=FULL"
echo "  disk: $(df --output=source,fstype "$work" | tail -n 1 | tr -s ' ') (the cluster's" \
	"and the state directories', all under /tmp)"
echo "  command: bench/store.sh $build $writes $secs $rounds"

# ---- the floor --------------------------------------------------------------------
"$bin" fsync "$work" -n 1000 >"$work/floor"
"$bin" ping "$(fresh_pg)" -n 2000 >>"$work/floor"
echo
echo "the floor, µs                                   p50       p99"
while read -r what label; do
	printf '  %-40s %9s %9s\n' "$label" "$(field p50 <(grep "^$what " "$work/floor"))" \
		"$(field p99 <(grep "^$what " "$work/floor"))"
done <<EOF
fsync 4 KiB written and fsync'd (the disk)
ping SELECT 1 round trip (libpq, socket)
commit one INSERT committed (PostgreSQL)
EOF

# ---- gate ---------------------------------------------------------------------------
for r in $(seq "$rounds"); do
	for b in $(order "$r"); do
		"$bin" gate "$(fresh "$b")" -n "$writes" >"$work/gate-$b-$r"
	done
done
echo
echo "a write's gate work: the eight store calls of a write held, approved and run,"
echo "µs, the median of $rounds rounds of $writes writes each way (a fresh store each)"
mawk -v rounds="$rounds" '
function med(b, name, q,   i, j, t, a) {
	for (i = 1; i <= rounds; i++)
		a[i] = v[b, name, q, i] + 0
	for (i = 2; i <= rounds; i++)
		for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return a[int((rounds + 1) / 2)]
}
FNR == 1 {
	b = FILENAME ~ /gate-pg-/ ? "pg" : "sqlite"
	r = FILENAME; sub(/.*-/, "", r)
}
FNR > 2 && /^  / {
	name = substr($0, 3, 24); sub(/ +$/, "", name)
	if (!(name in seen)) { seen[name] = 1; names[++n] = name }
	v[b, name, 50, r] = $(NF - 1); v[b, name, 99, r] = $NF
}
/^total / { sub(/p50=/, "", $2); total[b] = total[b] " " $2 }
END {
	printf "  %-24s %9s %9s %11s %9s %12s\n", "", "SQLite", "", "PostgreSQL", "", "PG - SQLite"
	printf "  %-24s %9s %9s %11s %9s %12s\n", "", "p50", "p99", "p50", "p99", "p50"
	for (i = 1; i <= n; i++) {
		s = med("sqlite", names[i], 50); p = med("pg", names[i], 50)
		printf "  %-24s %9.1f %9.1f %11.1f %9.1f %+12.1f\n", names[i], s,
		       med("sqlite", names[i], 99), p, med("pg", names[i], 99), p - s
	}
	s = med("sqlite", "a write, all eight", 50); p = med("pg", "a write, all eight", 50)
	printf "PostgreSQL adds %.2f ms a write at p50 (%.2fx SQLite); the target, at most 2 ms: %s\n",
	       (p - s) / 1000, p / s, p - s <= 2000 ? "met" : sprintf("missed by %.2f ms", (p - s - 2000) / 1000)
	printf "  each round'\''s p50, µs: SQLite%s; PostgreSQL%s\n", total["sqlite"], total["pg"]
}' "$work"/gate-*

# ---- claims ------------------------------------------------------------------------
declare -A rate cpu
postmaster=$(head -n 1 "$PG_DIR/data/postmaster.pid")
i=0
for c in 1 4 16; do
	for r in 1 2 4; do
		[ "$c" -ge "$r" ] || continue
		i=$((i + 1))
		for b in $(order "$i"); do
			out=$work/claims-$b-$c-$r
			"$bin" claims "$(fresh "$b")" -r "$r" -c "$c" -t "$secs" -s "$postmaster" >"$out"
			rate[$b,$c,$r]=$(field rate "$out")
			cpu[$b,$c,$r]="$(field server "$out")% $(field replicas "$out")%"
			cpu[$b,$c,$r]+=" $(field others "$out")%"
			cpu[$b,$c,$r]+=" $(field busy "$out")% $(field irq "$out")%"
			cpu[$b,$c,$r]+=" $(field steal "$out")% $(field iowait "$out")%"
		done
	done
done
echo
echo "claims a second (tg_store_idem_begin of fresh keys, as fast as each caller can),"
echo "$secs s each, a fresh store each; replicas: processes, each its own opening"
printf '  %7s %8s %10s %11s %10s\n' callers replicas SQLite PostgreSQL PG/SQLite
for c in 1 4 16; do
	for r in 1 2 4; do
		[ "$c" -ge "$r" ] || continue
		printf '  %7s %8s %10s %11s %10s\n' "$c" "$r" "${rate[sqlite,$c,$r]}" "${rate[pg,$c,$r]}" \
			"$(mawk -v a="${rate[pg,$c,$r]}" -v b="${rate[sqlite,$c,$r]}" \
				'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')"
	done
done
echo "scaling, claims a second at 4 callers over 1, and at 16 over 4 (1 replica; 4 replicas):"
for b in sqlite pg; do
	mawk -v b="$b" -v a1="${rate[$b,1,1]}" -v a4="${rate[$b,4,1]}" -v a16="${rate[$b,16,1]}" \
		-v r4="${rate[$b,4,4]}" -v r16="${rate[$b,16,4]}" 'BEGIN {
		printf "  %-10s 1->4 %.2fx, 4->16 %.2fx; over 4 replicas 4->16 %.2fx\n",
		       b == "pg" ? "PostgreSQL" : "SQLite", a4 / a1, a16 / a4, r16 / r4 }'
done
echo "CPU while 16 callers claimed, % of the machine's $(nproc) CPUs (/proc; server: the cluster's"
echo "postmaster and its children, clients: the replicas' processes, others: the rest of busy,"
echo "other processes and the kernel's threads; busy, of it irq (and softirq) and steal, and"
echo "iowait: the whole machine's):"
printf '  %-10s %8s %8s %8s %8s %8s %8s %8s %8s\n' "" replicas server clients others busy irq steal \
	iowait
for b in sqlite pg; do
	for r in 1 2 4; do
		# shellcheck disable=SC2086
		printf '  %-10s %8s %8s %8s %8s %8s %8s %8s %8s\n' \
			"$([ "$b" = pg ] && echo PostgreSQL || echo SQLite)" \
			"$r" ${cpu[$b,16,$r]}
	done
done
