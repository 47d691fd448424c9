/*
 * The PostgreSQL backend's audit anchors (docs/AUDIT.md, "Replicas and
 * anchors"): each replica notes its audit log's head here every few
 * seconds, one row a replica's log (its chain), so that `toolgate audit
 * verify --store` finds a log cut back or replaced without a note kept
 * anywhere else. A head only moves forward: a row is replaced only by a
 * later record of the same chain, so a replica whose log was cut cannot
 * make the store forget what it had written.
 *
 * Must never: move a head back, or take the time from the caller (the
 * database's clock says when).
 */
#include <stdlib.h>
#include <string.h>

#include "store/pg_int.h"

int pg_anchor_put(struct tg_store *st, const struct tg_audit_anchor *a, struct tg_error *err)
{
	struct pg_params p = { 0 };

	pp_text(&p, a->replica);
	pp_text(&p, a->chain);
	pp_int(&p, (int64_t)a->seq);
	pp_text(&p, a->hash);
	return pg_one(st, "INSERT INTO audit_anchors (replica, chain, seq, hash, at) VALUES ($1, "
		      "$2, $3, $4, floor(extract(epoch FROM now()))::bigint) ON CONFLICT (replica, "
		      "chain) DO UPDATE SET seq = excluded.seq, hash = excluded.hash, at = "
		      "excluded.at WHERE audit_anchors.seq < excluded.seq", &p, "audit anchor",
		      NULL, NULL, err);
}

int pg_anchors(struct tg_store *st, const char *replica, size_t max,
	       struct tg_audit_anchor **out, size_t *n, struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r;
	int rows, i;

	pp_text(&p, replica);
	pp_int(&p, (int64_t)max);
	if (pg_one(st, "SELECT replica, chain, seq, hash, at FROM audit_anchors WHERE replica = $1 "
		   "ORDER BY at DESC, seq DESC LIMIT $2", &p, "audit anchors", &r, NULL, err) < 0)
		return -1;
	rows = PQntuples(r);
	if (rows > 0 && !(*out = calloc((size_t)rows, sizeof(**out)))) {
		PQclear(r);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	for (i = 0; i < rows; i++) {
		struct tg_audit_anchor *a = &(*out)[i];

		pg_copy(a->replica, sizeof(a->replica), r, i, 0);
		pg_copy(a->chain, sizeof(a->chain), r, i, 1);
		a->seq = (uint64_t)pg_int(r, i, 2);
		pg_copy(a->hash, sizeof(a->hash), r, i, 3);
		a->at = pg_int(r, i, 4);
	}
	*n = (size_t)rows;
	PQclear(r);
	return 0;
}
