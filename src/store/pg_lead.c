/*
 * Work one replica of a shared store does for all (docs/STORE.md,
 * "Leading"): the webhooks' delivery, say, which every replica would
 * otherwise make, each receiver getting each event once a replica. A role
 * is a session-level advisory lock, keyed by its name, taken by the
 * liveness watch (pg.c) on the connection that holds the opening's
 * liveness lock: the opening leads while that session lives, and the
 * role passes to another replica's watch within a second of its end (a
 * process killed, a connection lost). A role asked for is taken at the
 * watch's next look; an opening holds at most PG_ROLES.
 *
 * Must never: say this opening leads once its session may have ended (a
 * new liveness connection holds no role until it takes it again).
 */
#include <stdio.h>
#include <string.h>

#include "store/pg_int.h"

int pg_lead(struct tg_store *st, const char *role, struct tg_error *err)
{
	struct pg_store *q = pg_be(st);
	int i, held = -1;

	pthread_mutex_lock(&q->lock);
	for (i = 0; i < PG_ROLES && q->roles[i].name[0]; i++)
		if (strcmp(q->roles[i].name, role) == 0)
			break;
	if (i < PG_ROLES && !q->roles[i].name[0])
		snprintf(q->roles[i].name, sizeof(q->roles[i].name), "%s", role); /* wanted */
	if (i < PG_ROLES)
		held = q->roles[i].held;
	pthread_mutex_unlock(&q->lock);
	if (held < 0)
		return tg_error_set(err, TG_ERR_LIMIT, "store: more than %d roles to lead", PG_ROLES);
	return held;
}

/* ---- the replicas serving calls ----
 * Each serving opening holds a transaction-less advisory lock of the
 * two-integer kind, (REPLICA_CLASS, a number of its own), on its liveness
 * session; the replicas are those locks, counted in pg_locks. A number
 * another holds is passed over for the next. */
#define REPLICA_CLASS 1952671092 /* "tgat" */

int pg_replica_join(struct tg_store *st, struct tg_error *err)
{
	struct pg_store *q = pg_be(st);

	(void)err;
	pthread_mutex_lock(&q->lock);
	q->join = 1; /* the watch takes its number at its next look */
	pthread_mutex_unlock(&q->lock);
	return 0;
}

int pg_replicas(struct tg_store *st, unsigned *n, struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r;

	*n = 0;
	pp_int(&p, REPLICA_CLASS);
	if (pg_one(st, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND "
		   "objsubid = 2 AND classid = $1::bigint::oid AND database = (SELECT oid FROM "
		   "pg_database WHERE datname = current_database())", &p, "replicas", &r, NULL,
		   err) < 0)
		return -1;
	*n = (unsigned)pg_int(r, 0, 0);
	PQclear(r);
	return 0;
}

/* This opening's number taken on c when it joined and holds none: tried
 * from its lock key on, a few at a time. */
static void replica_take(struct pg_store *q, PGconn *c)
{
	int join, joined, i;

	pthread_mutex_lock(&q->lock);
	join = q->join;
	joined = q->joined;
	pthread_mutex_unlock(&q->lock);
	for (i = 0; join && !joined && i < 16; i++) {
		struct pg_params p = { 0 };
		struct tg_error err;
		PGresult *r;

		pp_int(&p, REPLICA_CLASS);
		pp_int(&p, (q->lock_key + i) & 0x7fffffff);
		r = pg_run(c, "SELECT pg_try_advisory_lock($1::int, $2::int)", &p, "replica", &err);
		joined = r && PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "t") == 0;
		PQclear(r);
	}
	pthread_mutex_lock(&q->lock);
	q->joined = joined;
	pthread_mutex_unlock(&q->lock);
}

void pg_lead_refresh(struct pg_store *q, PGconn *c, int fresh)
{
	char names[PG_ROLES][32];
	int held[PG_ROLES], i;

	pthread_mutex_lock(&q->lock);
	for (i = 0; i < PG_ROLES; i++) {
		if (fresh)
			q->roles[i].held = 0; /* a new session holds nothing yet */
		memcpy(names[i], q->roles[i].name, sizeof(names[i]));
		held[i] = q->roles[i].held;
	}
	if (fresh)
		q->joined = 0;
	pthread_mutex_unlock(&q->lock);
	replica_take(q, c);
	for (i = 0; i < PG_ROLES && names[i][0]; i++) {
		struct pg_params p = { 0 };
		struct tg_error err;
		char key[48];
		PGresult *r;

		if (held[i])
			continue;
		snprintf(key, sizeof(key), "toolgate role %.31s", names[i]);
		pp_text(&p, key);
		r = pg_run(c, "SELECT pg_try_advisory_lock(hashtextextended($1, 1952671092))", &p,
			   "role", &err);
		held[i] = r && PQntuples(r) == 1 && strcmp(PQgetvalue(r, 0, 0), "t") == 0;
		PQclear(r);
		if (!held[i])
			continue;
		pthread_mutex_lock(&q->lock);
		q->roles[i].held = 1;
		pthread_mutex_unlock(&q->lock);
	}
}

void pg_lead_lost(struct pg_store *q)
{
	int i;

	pthread_mutex_lock(&q->lock);
	for (i = 0; i < PG_ROLES; i++)
		q->roles[i].held = 0;
	q->joined = 0;
	pthread_mutex_unlock(&q->lock);
}
