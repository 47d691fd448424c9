/*
 * The PostgreSQL backend's token revocations (docs/STORE.md, "PostgreSQL",
 * "Revocations while the database is away"): a revoked token's id kept
 * until it would have expired, asked on every token's check, so that a
 * token revoked through one replica is refused by every other at once.
 *
 * The whole list is also read once a second by the liveness watch (pg.c),
 * on its own connection, and kept. When the database cannot be reached, a
 * token is checked against that list for up to RV_GRACE_MS after it was
 * read: no token can be revoked while the database is away (a
 * revocation is a write to it), so the list still holds every
 * revocation made before it went, less at most the last second's.
 * Past the grace, or with no list, a check fails (fail closed): a
 * replica cut off from a database the others still reach must not go on
 * honouring tokens revoked through them.
 *
 * Must never: answer "not revoked" from a list older than RV_GRACE_MS,
 * or from no list.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/pg_int.h"

#define RV_GRACE_MS 60000      /* a list this old still answers while the database is away */
#define RV_MAX 100000          /* revocations kept in memory; more: no list */

struct pg_revoked {
	int64_t at;            /* when it was read, ms (monotonic) */
	size_t n;
	struct rv_row {
		char jti[65];
		int64_t expires;
	} rows[];              /* by jti */
};

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void pg_revoked_free(struct pg_revoked *rv)
{
	free(rv);
}

int pg_revoke(struct tg_store *st, const char *jti, int64_t expires, struct tg_error *err)
{
	struct pg_params p = { 0 };

	pp_text(&p, jti);
	pp_int(&p, expires);
	return pg_one(st, "INSERT INTO revocations (jti, expires) VALUES ($1, $2) ON CONFLICT "
		      "(jti) DO UPDATE SET expires = excluded.expires", &p, "revoke", NULL, NULL,
		      err);
}

static int by_jti(const void *a, const void *b)
{
	return strcmp(((const struct rv_row *)a)->jti, ((const struct rv_row *)b)->jti);
}

/* The list read whole (those not expired at now) on c and kept: 0, or -1
 * (the list kept is then the one before, aging towards its grace). The
 * liveness watch calls it every second on its own connection (pg.c), so
 * that the list a check falls back on is never more than about a second
 * behind the database when the database goes away, whether or not any
 * token was checked meanwhile. */
int pg_revoked_refresh(struct pg_store *q, PGconn *c, int64_t now)
{
	struct pg_params p = { 0 };
	struct pg_revoked *rv, *old;
	struct tg_error err;
	PGresult *r;
	int i, n;

	pp_int(&p, now);
	pp_int(&p, RV_MAX + 1);
	r = pg_run(c, "SELECT jti, expires FROM revocations WHERE expires > $1 LIMIT $2", &p,
		   "revocations", &err);
	if (!r)
		return -1;
	n = PQntuples(r);
	rv = n <= RV_MAX ? malloc(sizeof(*rv) + (size_t)n * sizeof(rv->rows[0])) : NULL;
	if (rv) {
		rv->at = mono_ms();
		rv->n = (size_t)n;
		for (i = 0; i < n; i++) {
			pg_copy(rv->rows[i].jti, sizeof(rv->rows[i].jti), r, i, 0);
			rv->rows[i].expires = pg_int(r, i, 1);
		}
		qsort(rv->rows, rv->n, sizeof(rv->rows[0]), by_jti);
	}
	PQclear(r);
	/* too many to keep: none kept, so a check without the database fails */
	pthread_mutex_lock(&q->rv_lock);
	old = q->rv;
	q->rv = rv;
	pthread_mutex_unlock(&q->rv_lock);
	pg_revoked_free(old);
	return 0;
}

/* jti looked up in the list kept: 1 revoked at now, 0 not, -1 no list
 * young enough. */
static int from_list(struct pg_store *q, const char *jti, int64_t now)
{
	struct rv_row key, *hit;
	int rc = -1;

	snprintf(key.jti, sizeof(key.jti), "%s", jti);
	pthread_mutex_lock(&q->rv_lock);
	if (q->rv && mono_ms() - q->rv->at <= RV_GRACE_MS) {
		hit = bsearch(&key, q->rv->rows, q->rv->n, sizeof(key), by_jti);
		rc = hit && hit->expires > now;
	}
	pthread_mutex_unlock(&q->rv_lock);
	return rc;
}

int pg_revoked(struct tg_store *st, const char *jti, int64_t now, struct tg_error *err)
{
	struct pg_store *q = pg_be(st);
	struct pg_params p = { 0 };
	PGresult *r;
	int rc;

	pp_text(&p, jti);
	pp_int(&p, now);
	if (pg_one(st, "SELECT 1 FROM revocations WHERE jti = $1 AND expires > $2", &p,
		   "revoked?", &r, NULL, err) == 0) {
		rc = PQntuples(r) > 0;
		PQclear(r);
		return rc;
	}
	if (err->code != TG_ERR_SYSTEM || (rc = from_list(q, jti, now)) < 0)
		return -1;
	tg_error_clear(err);
	return rc;
}
