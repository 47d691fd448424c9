/*
 * The PostgreSQL backend of the store (docs/STORE.md, "PostgreSQL"): the
 * opening (the URL checked, libpq loaded, the schema migrated under an
 * advisory lock), a pool of connections per opening with reconnection
 * and backoff, the query helpers its files share (pg_int.h), this
 * opening's liveness lock and its watch, and store_pg_ops. The tables'
 * operations live in pg_idem.c, pg_ticket.c, pg_event.c, pg_saga.c and
 * pg_upkeep.c; the schema in pg_schema.h.
 *
 * Liveness: each opening holds a session-level advisory lock keyed by its
 * id on a connection of its own for its life. PostgreSQL drops it when
 * that session ends: the process died (kill -9 included), or the
 * connection was lost. pg_instance_alive asks for the lock; whoever gets
 * it knows the opening it names is gone, whichever machine it ran on.
 *
 * Must never: rewrite a database it did not write or one from a newer
 * toolgate, accept a password in the URL (it would be in argv or a
 * configuration file: libpq's password file is the place), wait on the
 * database without a bound, or claim for an opening that does not hold
 * its lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/pg_int.h"
#include "store/pg_schema.h"
#include "util/log.h"
#include "util/sodium.h"

#define APP_KEY 0x74676174        /* "tgat": the migrations' advisory lock */
#define CONNECT_TIMEOUT "5"       /* s: libpq's connect_timeout */
#define TAKE_WAIT_MS 5000         /* every connection busy: how long a call waits */
#define PROBE_IDLE_MS 1000        /* a connection idle longer is probed before use */
#define BACKOFF_MAX_MS 2000
#define WATCH_MS 1000             /* the liveness lock looked at */

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- parameters ------------------------------------------------------------------ */

static int pp_next(struct pg_params *p)
{
	/* a statement with more is a bug in this backend, caught by its tests */
	if (p->n >= PG_PARAMS)
		abort();
	return p->n++;
}

void pp_text(struct pg_params *p, const char *s)
{
	int i = pp_next(p);

	p->v[i] = s;
	p->len[i] = 0;
	p->fmt[i] = 0;
}

void pp_bytes(struct pg_params *p, const void *b, size_t len)
{
	int i = pp_next(p);

	p->v[i] = b ? b : "";
	p->len[i] = (int)len;
	p->fmt[i] = 1;
}

void pp_int(struct pg_params *p, int64_t v)
{
	int i = pp_next(p);

	snprintf(p->num[i], sizeof(p->num[i]), "%lld", (long long)v);
	p->v[i] = p->num[i];
	p->len[i] = 0;
	p->fmt[i] = 0;
}

void pp_double(struct pg_params *p, double v)
{
	int i = pp_next(p);

	snprintf(p->num[i], sizeof(p->num[i]), "%.17g", v);
	p->v[i] = p->num[i];
	p->len[i] = 0;
	p->fmt[i] = 0;
}

/* ---- statements -------------------------------------------------------------------- */

/* libpq's message without its last newline, into err. */
/* libpq's message on one line (its lines joined by "; ", its tabs
 * dropped), with a hint where libpq's words alone leave a user guessing. */
static int pq_error(struct tg_error *err, const char *what, const char *msg)
{
	char line[400];
	size_t i, o = 0;

	for (i = 0; msg && msg[i] && o + 3 < sizeof(line); i++) {
		if (msg[i] == '\n') {
			if (msg[i + 1] && msg[i + 1] != '\n') {
				line[o++] = ';';
				line[o++] = ' ';
			}
		} else if (msg[i] != '\t') {
			line[o++] = msg[i];
		}
	}
	while (o && line[o - 1] == ' ')
		o--;
	line[o] = '\0';
	return tg_error_set(err, TG_ERR_SYSTEM, "store: %s: PostgreSQL: %s%s", what,
			    o ? line : "no answer",
			    strstr(line, "no password supplied")
			    ? " (no line of the password file matched HOST:PORT:DATABASE:USER: "
			      "~/.pgpass, or PGPASSFILE's, or passfile= in the URL's; "
			      "docs/STORE.md, \"PostgreSQL\")" : "");
}

PGresult *pg_run(PGconn *c, const char *sql, const struct pg_params *p, const char *what,
		 struct tg_error *err)
{
	PGresult *r = PQexecParams(c, sql, p ? p->n : 0, NULL, p ? p->v : NULL,
				   p ? p->len : NULL, p ? p->fmt : NULL, 0);
	ExecStatusType s = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;

	if (s == PGRES_TUPLES_OK || s == PGRES_COMMAND_OK)
		return r;
	pq_error(err, what, r ? PQresultErrorMessage(r) : PQerrorMessage(c));
	PQclear(r);
	return NULL;
}

int pg_script(PGconn *c, const char *sql, const char *what, struct tg_error *err)
{
	PGresult *r = PQexec(c, sql);
	ExecStatusType s = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
	int rc = 0;

	if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK)
		rc = pq_error(err, what, r ? PQresultErrorMessage(r) : PQerrorMessage(c));
	PQclear(r);
	return rc;
}

int pg_do(PGconn *c, const char *sql, const struct pg_params *p, const char *what,
	  uint64_t *changed, struct tg_error *err)
{
	PGresult *r = pg_run(c, sql, p, what, err);

	if (!r)
		return -1;
	if (changed)
		*changed = strtoull(PQcmdTuples(r), NULL, 10);
	PQclear(r);
	return 0;
}

int pg_one(struct tg_store *st, const char *sql, const struct pg_params *p, const char *what,
	   PGresult **res, uint64_t *changed, struct tg_error *err)
{
	PGconn *c = pg_take(st, err);
	PGresult *r;

	if (res)
		*res = NULL;
	if (!c)
		return -1;
	r = pg_run(c, sql, p, what, err);
	pg_give(st, c);
	if (!r)
		return -1;
	if (changed)
		*changed = strtoull(PQcmdTuples(r), NULL, 10);
	if (res)
		*res = r;
	else
		PQclear(r);
	return 0;
}

int pg_begin(PGconn *c, struct tg_error *err)
{
	return pg_do(c, "BEGIN", NULL, "begin", NULL, err);
}

int pg_end(PGconn *c, int rc, struct tg_error *err)
{
	PGresult *r;

	if (rc == 0) {
		r = pg_run(c, "COMMIT", NULL, "commit", err);
		/* a transaction that failed answers COMMIT with ROLLBACK */
		if (r && strcmp(PQcmdStatus(r), "COMMIT") != 0)
			rc = tg_error_set(err, TG_ERR_SYSTEM, "store: commit: rolled back");
		else if (!r)
			rc = -1;
		PQclear(r);
		return rc;
	}
	PQclear(PQexec(c, "ROLLBACK"));
	return rc;
}

int pg_lock(PGconn *c, const char *name, struct tg_error *err)
{
	struct pg_params p = { 0 };

	pp_text(&p, name);
	return pg_do(c, "SELECT pg_advisory_xact_lock(hashtextextended($1, 1952671092))", &p,
		     "lock", NULL, err);
}

int pg_events_lock(PGconn *c, struct tg_error *err)
{
	return pg_do(c, "SELECT n FROM ticket_event_counter FOR UPDATE", NULL, "ticket events",
		     NULL, err);
}

/* ---- values -------------------------------------------------------------------------- */

int64_t pg_int(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? 0 : strtoll(PQgetvalue(r, row, col), NULL, 10);
}

double pg_double(const PGresult *r, int row, int col)
{
	return PQgetisnull(r, row, col) ? 0 : strtod(PQgetvalue(r, row, col), NULL);
}

int pg_dup_text(const PGresult *r, int row, int col, char **out)
{
	*out = NULL;
	if (PQgetisnull(r, row, col))
		return 0;
	*out = strdup(PQgetvalue(r, row, col));
	return *out ? 0 : -1;
}

void pg_copy(char *dst, size_t len, const PGresult *r, int row, int col)
{
	snprintf(dst, len, "%s", PQgetisnull(r, row, col) ? "" : PQgetvalue(r, row, col));
}

/* bytea in its hex output, \x then two digits a byte (set at connect),
 * decoded by libsodium's (loaded by the front before any store opens) */
int pg_bytes(const PGresult *r, int row, int col, char **out, size_t *len)
{
	const char *v;
	size_t n;

	*out = NULL;
	*len = 0;
	if (PQgetisnull(r, row, col))
		return 0;
	v = PQgetvalue(r, row, col);
	n = strlen(v);
	if (n < 2 || v[0] != '\\' || v[1] != 'x' || n % 2)
		return -1;
	n = (n - 2) / 2;
	if (!(*out = malloc(n + 1)))
		return -1;
	if (sodium_hex2bin((unsigned char *)*out, n, v + 2, 2 * n, NULL, len, NULL) != 0 ||
	    *len != n) {
		free(*out);
		*out = NULL;
		*len = 0;
		return -1;
	}
	(*out)[n] = '\0';
	return 0;
}

/* ---- connections ------------------------------------------------------------------- */

static void quiet(void *arg, const char *message)
{
	(void)arg;
	(void)message; /* NOTICEs (a table that exists...) are not the user's to read */
}

/* A new connection to the store's database, its session set: or NULL and
 * err saying why. The timeouts bound every wait on the database: a
 * statement, a lock, a transaction left open, a peer gone silent. */
static PGconn *connect_db(const struct pg_store *q, struct tg_error *err)
{
	/* the URL last: what it says wins over these defaults */
	static const char *const keys[] = { "connect_timeout", "application_name", "keepalives_idle",
					    "keepalives_interval", "keepalives_count",
					    "tcp_user_timeout", "dbname", NULL };
	const char *vals[] = { CONNECT_TIMEOUT, "toolgate", "10", "5", "3", "15000", q->conninfo,
			       NULL };
	PGconn *c = PQconnectdbParams(keys, vals, 1);

	if (!c) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		return NULL;
	}
	if (PQstatus(c) != CONNECTION_OK) {
		pq_error(err, "connect", PQerrorMessage(c));
		PQfinish(c);
		return NULL;
	}
	PQsetNoticeProcessor(c, quiet, NULL);
	if (pg_script(c, "SET statement_timeout = '15s'; SET lock_timeout = '5s'; "
		      "SET idle_in_transaction_session_timeout = '60s'; SET bytea_output = 'hex'; "
		      "SET synchronous_commit = on", "connect", err) < 0) {
		PQfinish(c);
		return NULL;
	}
	return c;
}

/* A slot's connection made (again), the backoff kept: the caller holds no
 * lock; 0, or -1 and err. */
static int reconnect(struct pg_store *q, int i, struct tg_error *err)
{
	int64_t now = mono_ms(), at;
	char why[sizeof(q->why)];
	PGconn *c;

	pthread_mutex_lock(&q->lock);
	at = q->retry_at;
	memcpy(why, q->why, sizeof(why));
	pthread_mutex_unlock(&q->lock);
	if (now < at)
		return tg_error_set(err, TG_ERR_SYSTEM, "store: PostgreSQL is unreachable (%s); "
				    "retrying in %lld ms", why, (long long)(at - now));
	c = connect_db(q, err);
	pthread_mutex_lock(&q->lock);
	if (c) {
		q->conns[i] = c;
		q->backoff = 0;
		q->retry_at = 0;
	} else {
		q->backoff = q->backoff ? q->backoff * 2 : 100;
		if (q->backoff > BACKOFF_MAX_MS)
			q->backoff = BACKOFF_MAX_MS;
		q->retry_at = mono_ms() + q->backoff;
		snprintf(q->why, sizeof(q->why), "%.200s", err->msg);
	}
	pthread_mutex_unlock(&q->lock);
	return c ? 0 : -1;
}

/* 1 if c answers an empty query: it is still connected. */
static int answers(PGconn *c)
{
	PGresult *r = PQexec(c, "");
	int ok = r && PQresultStatus(r) == PGRES_EMPTY_QUERY;

	PQclear(r);
	return ok;
}

PGconn *pg_take(struct tg_store *st, struct tg_error *err)
{
	struct pg_store *q = pg_be(st);
	int64_t deadline = mono_ms() + TAKE_WAIT_MS, idle;
	struct timespec ts;
	PGconn *c;
	int i;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		for (i = 0; i < PG_POOL && q->busy[i]; i++)
			;
		if (i < PG_POOL)
			break;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += 1;
		if (mono_ms() >= deadline) {
			pthread_mutex_unlock(&q->lock);
			tg_error_set(err, TG_ERR_SYSTEM, "store: every connection to PostgreSQL "
				     "busy for %d s", TAKE_WAIT_MS / 1000);
			return NULL;
		}
		pthread_cond_timedwait(&q->freed, &q->lock, &ts);
	}
	q->busy[i] = 1;
	c = q->conns[i];
	idle = mono_ms() - q->used[i];
	pthread_mutex_unlock(&q->lock);
	/* a connection idle for a while may have been cut (a restart, a
	 * proxy's timeout): an empty query finds out before a real one is
	 * sent, so a statement is never sent on a connection already dead */
	if (c && (PQstatus(c) != CONNECTION_OK ||
		  (idle > PROBE_IDLE_MS && !answers(c)))) {
		PQfinish(c);
		pthread_mutex_lock(&q->lock);
		q->conns[i] = c = NULL;
		pthread_mutex_unlock(&q->lock);
	}
	if (!c && reconnect(q, i, err) < 0) {
		pthread_mutex_lock(&q->lock);
		q->busy[i] = 0;
		pthread_cond_signal(&q->freed);
		pthread_mutex_unlock(&q->lock);
		return NULL;
	}
	pthread_mutex_lock(&q->lock);
	c = q->conns[i];
	pthread_mutex_unlock(&q->lock);
	return c;
}

void pg_give(struct tg_store *st, PGconn *c)
{
	struct pg_store *q = pg_be(st);
	PGconn *dead = NULL;
	int i;

	/* broken, or left inside a transaction: closed, never handed on */
	if (PQstatus(c) != CONNECTION_OK || PQtransactionStatus(c) != PQTRANS_IDLE)
		dead = c;
	pthread_mutex_lock(&q->lock);
	for (i = 0; i < PG_POOL && q->conns[i] != c; i++)
		;
	if (i < PG_POOL) {
		if (dead)
			q->conns[i] = NULL;
		q->busy[i] = 0;
		q->used[i] = mono_ms();
		pthread_cond_signal(&q->freed);
	}
	pthread_mutex_unlock(&q->lock);
	if (dead)
		PQfinish(dead);
}

/* ---- liveness ------------------------------------------------------------------------ */

/* An opening's lock key: the first 64 of its id's 128 random bits. */
static int64_t lock_key(const char *id)
{
	char head[17];

	snprintf(head, sizeof(head), "%.16s", id);
	return (int64_t)strtoull(head, NULL, 16);
}

int pg_instance_alive(struct tg_store *st, PGconn *c, const char *id)
{
	struct pg_params p = { 0 };
	struct tg_error err;
	PGresult *r;
	int alive;

	if (strcmp(id, st->instance) == 0)
		return 1;
	if (strspn(id, "0123456789abcdef") != 32 || id[32])
		return 0;
	/* free: nobody holds it, the opening is gone. Taken for the length of
	 * the caller's transaction (or this statement), never kept */
	pp_int(&p, lock_key(id));
	r = pg_run(c, "SELECT pg_try_advisory_xact_lock($1::bigint)", &p, "liveness", &err);
	if (!r)
		return 1; /* cannot tell: alive, take nothing over */
	alive = PQntuples(r) != 1 || strcmp(PQgetvalue(r, 0, 0), "t") != 0;
	PQclear(r);
	return alive;
}

int pg_claim_ok(struct tg_store *st, struct tg_error *err)
{
	struct pg_store *q = pg_be(st);
	int locked;

	pthread_mutex_lock(&q->lock);
	locked = q->locked;
	pthread_mutex_unlock(&q->lock);
	if (locked)
		return 0;
	return tg_error_set(err, TG_ERR_SYSTEM, "store: this gateway has lost its liveness lock "
			    "in PostgreSQL (reconnecting): it claims nothing until it has it "
			    "again; retry");
}

/* The opening's lock taken on a new connection of its own: 0, or -1. */
static int lock_alive(struct pg_store *q, struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGconn *c = connect_db(q, err);
	PGresult *r;
	int held;

	if (!c)
		return -1;
	pp_int(&p, q->lock_key);
	r = pg_run(c, "SELECT pg_try_advisory_lock($1::bigint)", &p, "liveness lock", err);
	held = r && PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "t") == 0;
	PQclear(r);
	if (!held) {
		/* the old session, cut off, may hold it until the server sees it gone */
		PQfinish(c);
		return r ? tg_error_set(err, TG_ERR_SYSTEM, "store: liveness lock: still held") : -1;
	}
	if (q->alive)
		PQfinish(q->alive);
	q->alive = c;
	return 0;
}

/* The database's clock read on c, kept with this host's monotonic time of
 * the reading: what TG_STORE_NOW means for this store. A failure leaves
 * the last reading. */
static void read_clock(struct pg_store *q, PGconn *c)
{
	PGresult *r = PQexec(c, "SELECT floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint");
	int64_t mono = mono_ms();

	if (r && PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
		int64_t ms = strtoll(PQgetvalue(r, 0, 0), NULL, 10);

		pthread_mutex_lock(&q->lock);
		q->db_ms = ms;
		q->db_mono = mono;
		pthread_mutex_unlock(&q->lock);
	}
	PQclear(r);
}

/* The store's clock: the database's, as last read, moved on by this host's
 * monotonic clock since (a step of this host's wall clock changes nothing). */
static int64_t pgs_now(struct tg_store *st)
{
	struct pg_store *q = pg_be(st);
	int64_t ms, mono;

	pthread_mutex_lock(&q->lock);
	ms = q->db_ms;
	mono = q->db_mono;
	pthread_mutex_unlock(&q->lock);
	if (!mono)
		return (int64_t)time(NULL);
	return (ms + (mono_ms() - mono)) / 1000;
}

/* Every WATCH_MS, the lock's connection is asked whether it still stands;
 * when not, the opening claims nothing (pg_claim_ok) until a new one holds
 * the lock again. */
static void *watch(void *arg)
{
	struct pg_store *q = arg;
	struct tg_error err;
	struct timespec ts;
	int ok, fresh;

	pthread_mutex_lock(&q->lock);
	while (!q->stop) {
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)WATCH_MS * 1000000;
		ts.tv_sec += ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&q->tick, &q->lock, &ts);
		if (q->stop)
			break;
		pthread_mutex_unlock(&q->lock);
		/* only this thread uses q->alive once the opening is made */
		ok = q->alive && PQstatus(q->alive) == CONNECTION_OK && answers(q->alive);
		fresh = !ok;
		if (!ok) {
			pg_lead_lost(q); /* its session is gone, and its roles with it */
			ok = lock_alive(q, &err) == 0;
		}
		/* the revocations a token's check falls back on while the
		 * database is away: read every second, requests or none, so
		 * that they lag the database by a second, not by the time since
		 * the last request (pg_revoke.c) */
		if (ok) {
			read_clock(q, q->alive);
			pg_revoked_refresh(q, q->alive, (int64_t)time(NULL));
			pg_loose_sweep(q, q->alive);
			pg_lead_refresh(q, q->alive, fresh);
		}
		pthread_mutex_lock(&q->lock);
		q->locked = ok;
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

PGconn *pg_claim_begin(struct tg_store *st, struct tg_error *err)
{
	PGconn *c;

	if (pg_claim_ok(st, err) < 0 || !(c = pg_take(st, err)))
		return NULL;
	if (pg_begin(c, err) < 0) {
		pg_give(st, c);
		return NULL;
	}
	return c;
}

PGconn *pg_events_begin(struct tg_store *st, struct tg_error *err)
{
	PGconn *c = pg_take(st, err);

	if (!c)
		return NULL;
	/* one round trip for both: neither takes a parameter */
	if (pg_script(c, "BEGIN; SELECT n FROM ticket_event_counter FOR UPDATE", "ticket events",
		      err) < 0) {
		pg_end(c, -1, err);
		pg_give(st, c);
		return NULL;
	}
	return c;
}

/* ---- the opening ----------------------------------------------------------------------- */

/* Which schema the database is at, in the caller's transaction on c: OUT
 * *version (0: none of toolgate's tables, nothing else either), or -1
 * and err when it is not toolgate's. */
static int schema_of(PGconn *c, const char *where, int *version, struct tg_error *err)
{
	PGresult *r;
	int tables, meta;

	r = pg_run(c, "SELECT current_schema(), (SELECT count(*) FROM pg_tables WHERE "
		   "schemaname = current_schema()), (SELECT count(*) FROM pg_tables WHERE "
		   "schemaname = current_schema() AND tablename = 'toolgate_meta')", NULL,
		   "schema", err);
	if (!r)
		return -1;
	if (PQgetisnull(r, 0, 0)) {
		PQclear(r);
		return tg_error_set(err, TG_ERR_INVALID, "store %s: no schema to make the tables "
				    "in (the search_path names none that exists)", where);
	}
	tables = (int)pg_int(r, 0, 1);
	meta = (int)pg_int(r, 0, 2);
	PQclear(r);
	*version = 0;
	if (!meta)
		return tables ? tg_error_set(err, TG_ERR_INVALID, "store %s: not a toolgate "
					     "database (someone else's tables)", where) : 0;
	r = pg_run(c, "SELECT (SELECT value FROM toolgate_meta WHERE key = 'application'), "
		   "(SELECT value FROM toolgate_meta WHERE key = 'schema')", NULL, "schema", err);
	if (!r)
		return -1;
	if (PQgetisnull(r, 0, 0) || strcmp(PQgetvalue(r, 0, 0), "toolgate") != 0) {
		PQclear(r);
		return tg_error_set(err, TG_ERR_INVALID, "store %s: not a toolgate database", where);
	}
	*version = (int)pg_int(r, 0, 1);
	PQclear(r);
	return 0;
}

/* The first migration past version (n: none). */
static size_t next_migration(int version)
{
	size_t i, n = sizeof(pg_migrations) / sizeof(pg_migrations[0]);

	for (i = 0; i < n && pg_migrations[i].version <= version; i++)
		;
	return i;
}

/* One step: under the migrations' advisory lock, the version looked at
 * and, when older, the next migration applied with the version that
 * records it. 0 a step taken, 1 none left (OUT *version), -1 and err. */
static int migrate_step(PGconn *c, const char *where, int *version, struct tg_error *err)
{
	const struct pg_migration *m;
	struct pg_params p = { 0 };
	size_t i;
	int rc;

	if (pg_begin(c, err) < 0)
		return -1;
	pp_int(&p, APP_KEY);
	rc = pg_do(c, "SELECT pg_advisory_xact_lock($1::bigint)", &p, "migrations", NULL, err);
	if (rc == 0)
		rc = schema_of(c, where, version, err);
	if (rc == 0 && *version > TG_STORE_SCHEMA)
		rc = tg_error_set(err, TG_ERR_INVALID, "store %s: schema %d, written by a newer "
				  "toolgate (this one knows %d); refusing to touch it", where,
				  *version, TG_STORE_SCHEMA);
	i = next_migration(*version);
	if (rc == 0 && i == sizeof(pg_migrations) / sizeof(pg_migrations[0]))
		rc = 1;
	if (rc != 0)
		return pg_end(c, rc, err);
	m = &pg_migrations[i];
	p = (struct pg_params){ 0 };
	pp_int(&p, m->version);
	rc = pg_script(c, m->sql, "migration", err);
	if (rc == 0)
		rc = pg_do(c, "INSERT INTO toolgate_meta (key, value) VALUES ('application', "
			   "'toolgate'), ('schema', $1) ON CONFLICT (key) DO UPDATE SET value = "
			   "EXCLUDED.value", &p, "migration", NULL, err);
	if (pg_end(c, rc, err) < 0)
		return tg_error_wrap(err, "store %s: migrating to schema %d", where, m->version);
	*version = m->version;
	return 0;
}

/* Bring the schema to TG_STORE_SCHEMA, one transaction a step: replicas
 * starting together migrate once, the others find it done. */
static int migrate(struct tg_store *st, PGconn *c, const char *where, struct tg_error *err)
{
	int version = 0, rc;

	while ((rc = migrate_step(c, where, &version, err)) == 0)
		;
	if (rc < 0)
		return -1;
	st->schema = version;
	return 0;
}

/* where as it may be shown: whatever lies between the first ':' after
 * "://" and the last '@' (a password, in a URL libpq refused, even one
 * with a raw '/' or '@' in it) replaced by "***", into out. */
static void shown_url(const char *where, char *out, size_t len)
{
	const char *auth = strstr(where, "://"), *at = strrchr(where, '@'), *colon = NULL;

	if (auth && at && at > auth + 3)
		colon = memchr(auth + 3, ':', (size_t)(at - auth - 3));
	if (!colon) {
		snprintf(out, len, "%s", where);
		return;
	}
	snprintf(out, len, "%.*s:***%s", (int)(colon - where), where, at);
}

/* 1 if where may hold a password that libpq could not parse out of it: a
 * ':' in its user information, or "password" anywhere once its
 * percent-escapes are undone (libpq undoes them in keywords too:
 * p%61ssword= is a password). */
static int may_hold_password(const char *where)
{
	const char *auth = strstr(where, "://"), *end;
	char low[1024];
	size_t i, n = 0;

	if (auth) {
		auth += 3;
		end = auth + strcspn(auth, "/?");
		if (memchr(auth, '@', (size_t)(end - auth)) && memchr(auth, ':', (size_t)(end - auth)))
			return 1;
	}
	for (i = 0; where[i] && n + 1 < sizeof(low); i++) {
		int c = (unsigned char)where[i];

		if (c == '%' && where[i + 1] && where[i + 2]) {
			char hex[3] = { where[i + 1], where[i + 2], 0 };

			c = (int)strtol(hex, NULL, 16);
			i += 2;
		}
		low[n++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
	}
	low[n] = '\0';
	return where[i] != '\0' || strstr(low, "password") != NULL;
}

/* The URL as libpq reads it, and no password in it: 0, or -1 and err. A
 * URL libpq refuses is named without its query and its user information,
 * and libpq's reason without what it quotes, when it may hold a password:
 * the reason quotes the token it could not read, which may be it. */
static int url_ok(const char *where, struct tg_error *err)
{
	PQconninfoOption *opts, *o;
	char *why = NULL, shown[512];
	int rc = 0;

	opts = PQconninfoParse(where, &why);
	if (!opts) {
		if (!why)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		if (may_hold_password(where)) {
			/* its user information masked, its query cut off */
			shown_url(where, shown, sizeof(shown));
			shown[strcspn(shown, "?")] = '\0';
			rc = tg_error_set(err, TG_ERR_INVALID, "store %.300s (its query not shown: "
					  "it may hold a password): %.*s", shown,
					  (int)strcspn(why, "\n\":"), why);
		} else {
			shown_url(where, shown, sizeof(shown));
			rc = tg_error_set(err, TG_ERR_INVALID, "store %.300s: %.*s", shown,
					  (int)strcspn(why, "\n"), why);
		}
		PQfreemem(why);
		return rc;
	}
	for (o = opts; o->keyword; o++)
		if (strcmp(o->keyword, "password") == 0 && o->val && o->val[0])
			rc = tg_error_set(err, TG_ERR_INVALID, "store: the PostgreSQL URL holds a "
					  "password, which would be seen in the process list and "
					  "the configuration: put it in a password file (PGPASSFILE, "
					  "or passfile= in the URL; docs/STORE.md, \"PostgreSQL\")");
	PQconninfoFree(opts);
	return rc;
}

static void pgs_close(struct tg_store *st)
{
	struct pg_store *q = st->be;
	int i;

	if (!q)
		return;
	if (q->watching) {
		pthread_mutex_lock(&q->lock);
		q->stop = 1;
		pthread_cond_signal(&q->tick);
		pthread_mutex_unlock(&q->lock);
		pthread_join(q->watch, NULL);
	}
	for (i = 0; i < PG_POOL; i++)
		if (q->conns[i])
			PQfinish(q->conns[i]);
	if (q->alive) {
		/* what is kept settled a last time; then let go at once, not
		 * when the server sees the session end: an opening that closed
		 * is dead to the others from here on */
		if (PQstatus(q->alive) == CONNECTION_OK) {
			pg_loose_sweep(q, q->alive);
			if (q->nloose)
				tg_log(TG_LOG_ERROR, "store: %zu key(s) of this gateway left "
				       "unsettled at its close: they are taken over as a dead "
				       "gateway's", q->nloose);
			PQclear(PQexec(q->alive, "SELECT pg_advisory_unlock_all()"));
		}
		PQfinish(q->alive);
	}
	pg_revoked_free(q->rv);
	pg_loose_free(q);
	pthread_mutex_destroy(&q->rv_lock);
	pthread_cond_destroy(&q->tick);
	pthread_cond_destroy(&q->freed);
	pthread_mutex_destroy(&q->lock);
	free(q->conninfo);
	free(q);
	st->be = NULL;
}

/* st->dir is the database's URL: reached, migrated, and this opening's
 * liveness lock held and watched. */
static int pgs_open(struct tg_store *st, struct tg_error *err)
{
	struct pg_store *q;
	char shown[512];
	PGconn *c;
	int rc;

	/* loaded first: nothing of libpq's is called without its handle */
	if (tg_pq_load("store", err) < 0 || url_ok(st->dir, err) < 0)
		return -1;
	shown_url(st->dir, shown, sizeof(shown));
	q = calloc(1, sizeof(*q));
	if (!q || !(q->conninfo = strdup(st->dir))) {
		free(q);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	pthread_mutex_init(&q->lock, NULL);
	pthread_mutex_init(&q->rv_lock, NULL);
	pthread_cond_init(&q->freed, NULL);
	pthread_cond_init(&q->tick, NULL);
	q->lock_key = lock_key(st->instance);
	memcpy(q->instance, st->instance, sizeof(q->instance));
	st->be = q;
	c = pg_take(st, err);
	if (!c) {
		/* "store URL: connect: ...", not "store URL: store: connect: ..." */
		if (strncmp(err->msg, "store: ", 7) == 0)
			memmove(err->msg, err->msg + 7, strlen(err->msg + 7) + 1);
		return tg_error_wrap(err, "store %.300s", shown);
	}
	rc = migrate(st, c, shown, err);
	pg_give(st, c);
	if (rc < 0)
		return -1;
	if (lock_alive(q, err) < 0)
		return tg_error_wrap(err, "store %.300s", shown);
	q->locked = 1;
	read_clock(q, q->alive);
	pg_revoked_refresh(q, q->alive, (int64_t)time(NULL));
	if (pthread_create(&q->watch, NULL, watch, q) != 0)
		return tg_error_set(err, TG_ERR_SYSTEM, "store: the liveness watch: no thread");
	q->watching = 1;
	return 0;
}

/* Ready: the liveness lock held and a connection answering. */
static int pgs_check(struct tg_store *st, struct tg_error *err)
{
	if (pg_claim_ok(st, err) < 0)
		return -1;
	return pg_one(st, "SELECT 1", NULL, "ready", NULL, NULL, err);
}

/* ---- the table ------------------------------------------------------------------ */

const struct tg_store_ops store_pg_ops = {
	.name = "postgres",
	.remote = 1,
	.open = pgs_open,
	.close = pgs_close,
	.check = pgs_check,
	.now = pgs_now,
	.idem_begin = pg_idem_begin,
	.idem_finish = pg_idem_finish,
	.idem_reclaim = pg_idem_reclaim,
	.idem_takeover = pg_idem_takeover,
	.idem_replace = pg_idem_replace,
	.idem_abandon = pg_idem_abandon,
	.idem_finish_call = pg_idem_finish_call,
	.ticket_insert = pg_ticket_insert,
	.ticket_get = pg_ticket_get,
	.ticket_move = pg_ticket_move,
	.ticket_list = pg_ticket_list,
	.ticket_find = pg_ticket_find,
	.ticket_supersede = pg_ticket_supersede,
	.tickets_of = pg_tickets_of,
	.ticket_counts = pg_ticket_counts,
	.tickets_pending = pg_tickets_pending,
	.tickets_anomalous = pg_tickets_anomalous,
	.ticket_expire = pg_ticket_expire,
	.ticket_events = pg_ticket_events,
	.ticket_pending_stats = pg_ticket_pending_stats,
	.webhook_cursor = pg_webhook_cursor,
	.webhook_cursor_set = pg_webhook_cursor_set,
	.rollback_begin = pg_rollback_begin,
	.rollback_end = pg_rollback_end,
	.rollback_list = pg_rollback_list,
	.saga_begin = pg_saga_begin,
	.saga_take = pg_saga_take,
	.saga_get = pg_saga_get,
	.saga_step = pg_saga_step,
	.saga_set = pg_saga_set,
	.saga_orphans = pg_saga_orphans,
	.revoke = pg_revoke,
	.revoked = pg_revoked,
	.baselines_put = pg_baselines_put,
	.baselines_load = pg_baselines_load,
	.pin_get = pg_pin_get,
	.pin_set = pg_pin_set,
	.pin_delete = pg_pin_delete,
	.pin_list = pg_pin_list,
	.skill_pin_get = pg_skill_pin_get,
	.skill_pin_set = pg_skill_pin_set,
	.lead = pg_lead,
	.replica_join = pg_replica_join,
	.replicas = pg_replicas,
	.anchor_put = pg_anchor_put,
	.anchors = pg_anchors,
	.gc = pg_gc,
};
