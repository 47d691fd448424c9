/*
 * The store's upkeep (include/toolgate/store.h, docs/STORE.md): what
 * expired collected (idempotency records, revocations, tickets past
 * their keeping), token revocations, the load each principal puts on
 * the approvers' queue, and the anomaly baselines. Beside store.c, over
 * the same connection and lock (store_int.h).
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_int.h"
#include "toolgate/store.h"

/* Tickets a plan or a rollback still running reads are kept, whatever
 * their age. */
#define TICKETS_GONE "DELETE FROM tickets WHERE id IN (SELECT id FROM tickets WHERE " \
	"max(expires, coalesce(decided, 0)) <= ?1 - ?2 " \
	"AND id NOT IN (SELECT id FROM sagas WHERE state IN ('running', 'compensating')) " \
	"AND id NOT IN (SELECT call_id FROM rollbacks WHERE state = 'running') LIMIT 500)"
/* A ticket that ended without running keeps its hash, not its contents. */
#define ENDED_UNRUN "(state IN ('rejected', 'cancelled', 'expired') OR " \
	"(state = 'pending' AND expires <= ?1))"
#define TICKETS_EMPTIED "UPDATE tickets SET arguments = NULL, preview = NULL, findings = NULL " \
	"WHERE id IN (SELECT id FROM tickets WHERE " ENDED_UNRUN " AND (arguments IS NOT NULL " \
	"OR preview IS NOT NULL OR findings IS NOT NULL) LIMIT 500)"
#define GC_BATCH 500

/* One batch of sql (?1 now, ?2 keep) under the store's lock: OUT *changed. */
static int gc_batch(struct tg_store *st, const char *sql, int64_t now, int64_t keep,
		    uint64_t *changed, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	*changed = 0;
	pthread_mutex_lock(&st->lock);
	rc = sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) == SQLITE_OK
		     ? 0 : store_db_error(err, st->db, "gc");
	if (rc == 0) {
		sqlite3_bind_int64(s, 1, now);
		if (sqlite3_bind_parameter_count(s) >= 2)
			sqlite3_bind_int64(s, 2, keep);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, st->db, "gc");
		if (rc == 0)
			*changed = (uint64_t)sqlite3_changes(st->db);
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int tg_store_gc(struct tg_store *st, int64_t now, int64_t keep, struct tg_store_gc_stats *stats,
		struct tg_error *err)
{
	static const char *const gc_sql[] = {
		"DELETE FROM idempotency WHERE (principal, tool, key) IN (SELECT principal, tool, "
		"key FROM idempotency WHERE expires <= ?1 LIMIT 500)",
		"DELETE FROM revocations WHERE jti IN (SELECT jti FROM revocations WHERE "
		"expires <= ?1 LIMIT 500)",
		TICKETS_GONE,
		TICKETS_EMPTIED,
	};
	uint64_t removed[4] = { 0, 0, 0, 0 }, n;
	size_t i;
	int rc = 0;

	tg_error_clear(err);
	/* in batches: calls go on between them, whatever the backlog */
	for (i = 0; rc == 0 && i < 4; i++) {
		if (i == 2 && keep < 0)
			continue; /* tickets kept for ever */
		do {
			rc = gc_batch(st, gc_sql[i], now, keep, &n, err);
			removed[i] += n;
		} while (rc == 0 && n == GC_BATCH);
	}
	if (stats) {
		stats->idempotency = removed[0];
		stats->revocations = removed[1];
		stats->tickets = removed[2];
		stats->emptied = removed[3];
	}
	return rc;
}

/* ---- token revocations ------------------------------------------------------ */

int tg_store_revoke(struct tg_store *st, const char *jti, int64_t expires, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	tg_error_clear(err);
	if (!jti || !*jti || strlen(jti) > 64)
		return tg_error_set(err, TG_ERR_INVALID, "revoke: a token id of 1 to 64 bytes");
	pthread_mutex_lock(&st->lock);
	rc = sqlite3_prepare_v2(st->db, "INSERT OR REPLACE INTO revocations (jti, expires) VALUES "
				"(?1, ?2)", -1, &s, NULL) == SQLITE_OK ? 0 : store_db_error(err, st->db,
										   "revoke");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, jti, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, expires);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, st->db, "revoke");
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int tg_store_revoked(struct tg_store *st, const char *jti, int64_t now, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	pthread_mutex_lock(&st->lock);
	rc = sqlite3_prepare_v2(st->db, "SELECT 1 FROM revocations WHERE jti = ?1 AND expires > ?2",
				-1, &s, NULL) == SQLITE_OK ? 0 : store_db_error(err, st->db, "revoked?");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, jti, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, now);
		switch (sqlite3_step(s)) {
		case SQLITE_ROW:
			rc = 1;
			break;
		case SQLITE_DONE:
			rc = 0;
			break;
		default:
			rc = store_db_error(err, st->db, "revoked?");
		}
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int tg_store_tickets_anomalous(struct tg_store *st, const char *principal, int64_t now,
			       uint64_t *n, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	tg_error_clear(err);
	*n = 0;
	pthread_mutex_lock(&st->lock);
	rc = sqlite3_prepare_v2(st->db, "SELECT count(*) FROM tickets WHERE principal = ?1 AND "
				"state = 'pending' AND expires > ?2 AND findings IS NOT NULL", -1, &s,
				NULL) == SQLITE_OK ? 0 : store_db_error(err, st->db, "tickets");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, principal, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, now);
		if (sqlite3_step(s) == SQLITE_ROW)
			*n = (uint64_t)sqlite3_column_int64(s, 0);
		else
			rc = store_db_error(err, st->db, "tickets");
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int store_queue_load(struct tg_store *st, const char *principal, int64_t now, uint64_t *n,
		     uint64_t *bytes, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	*n = *bytes = 0;
	rc = sqlite3_prepare_v2(st->db, "SELECT coalesce(sum(state = 'pending' AND expires > ?2), "
				"0), coalesce(sum(length(CAST(coalesce(arguments, '') AS BLOB)) + "
				"length(CAST(coalesce(preview, '') AS BLOB)) + length(CAST(coalesce("
				"findings, '') AS BLOB))), 0) FROM tickets WHERE principal = ?1 AND "
				"state IN ('pending', 'rejected', 'cancelled', 'expired')", -1, &s,
				NULL) == SQLITE_OK ? 0 : store_db_error(err, st->db, "tickets");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, principal, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, now);
		if (sqlite3_step(s) == SQLITE_ROW) {
			*n = (uint64_t)sqlite3_column_int64(s, 0);
			*bytes = (uint64_t)sqlite3_column_int64(s, 1);
		} else {
			rc = store_db_error(err, st->db, "tickets");
		}
		sqlite3_finalize(s);
	}
	return rc;
}

int tg_store_tickets_pending(struct tg_store *st, const char *principal, int64_t now,
			     uint64_t *n, uint64_t *bytes, struct tg_error *err)
{
	int rc;

	tg_error_clear(err);
	pthread_mutex_lock(&st->lock);
	rc = store_queue_load(st, principal, now, n, bytes, err);
	pthread_mutex_unlock(&st->lock);
	return rc;
}

/* ---- anomaly baselines ------------------------------------------------------- */

int tg_store_baselines_put(struct tg_store *st, const struct tg_baseline *b, size_t n,
			   struct tg_error *err)
{
	sqlite3_stmt *s = NULL;
	size_t i;
	int rc;

	tg_error_clear(err);
	pthread_mutex_lock(&st->lock);
	rc = store_exec(st, "BEGIN IMMEDIATE", err);
	if (rc == 0 && sqlite3_prepare_v2(st->db, "INSERT OR REPLACE INTO baselines (tool, size_n, "
					  "size_mean, size_m2, entropy_n, entropy_mean, entropy_m2, "
					  "updated) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", -1, &s,
					  NULL) != SQLITE_OK)
		rc = store_db_error(err, st->db, "baselines");
	for (i = 0; rc == 0 && i < n; i++) {
		sqlite3_reset(s);
		sqlite3_bind_text(s, 1, b[i].tool, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, (sqlite3_int64)b[i].size_n);
		sqlite3_bind_double(s, 3, b[i].size_mean);
		sqlite3_bind_double(s, 4, b[i].size_m2);
		sqlite3_bind_int64(s, 5, (sqlite3_int64)b[i].entropy_n);
		sqlite3_bind_double(s, 6, b[i].entropy_mean);
		sqlite3_bind_double(s, 7, b[i].entropy_m2);
		sqlite3_bind_int64(s, 8, (sqlite3_int64)time(NULL));
		if (sqlite3_step(s) != SQLITE_DONE)
			rc = store_db_error(err, st->db, "baselines");
	}
	sqlite3_finalize(s);
	if (rc == 0 || sqlite3_get_autocommit(st->db) == 0)
		rc = store_end_tx(st, rc, err);
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int tg_store_baselines_each(struct tg_store *st,
			    int (*fn)(void *ctx, const struct tg_baseline *b), void *ctx,
			    struct tg_error *err)
{
	struct tg_baseline *all = NULL, *more;
	size_t n = 0, cap = 0, i;
	sqlite3_stmt *s;
	int rc = 0, step;

	tg_error_clear(err);
	pthread_mutex_lock(&st->lock);
	if (sqlite3_prepare_v2(st->db, "SELECT tool, size_n, size_mean, size_m2, entropy_n, "
			       "entropy_mean, entropy_m2 FROM baselines", -1, &s, NULL) != SQLITE_OK) {
		pthread_mutex_unlock(&st->lock);
		return store_db_error(err, st->db, "baselines");
	}
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			more = realloc(all, cap * sizeof(*all));
			if (!more) {
				rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
				break;
			}
			all = more;
		}
		store_copy_text(all[n].tool, sizeof(all[n].tool), sqlite3_column_text(s, 0));
		all[n].size_n = (uint64_t)sqlite3_column_int64(s, 1);
		all[n].size_mean = sqlite3_column_double(s, 2);
		all[n].size_m2 = sqlite3_column_double(s, 3);
		all[n].entropy_n = (uint64_t)sqlite3_column_int64(s, 4);
		all[n].entropy_mean = sqlite3_column_double(s, 5);
		all[n].entropy_m2 = sqlite3_column_double(s, 6);
		n++;
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = store_db_error(err, st->db, "baselines");
	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->lock);
	/* called without the store's lock: fn may use the store */
	for (i = 0; rc == 0 && i < n; i++)
		rc = fn(ctx, &all[i]);
	free(all);
	return rc;
}
