/*
 * The SQLite backend's upkeep (docs/STORE.md): token revocations, the
 * anomaly baselines (docs/ANOMALIES.md), and the collection of what
 * expired (idempotency records, revocations, tickets and their events
 * past their keeping),
 * in batches so that calls go on between them.
 *
 * Must never: collect a ticket a running plan or rollback still reads, or
 * hold the store's lock across a whole collection.
 */
#include <pthread.h>
#include "util/sqlite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/sqlite_int.h"

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
/* A ticket's events go keep after they were written, whatever became of
 * the ticket: a reader that far behind has lost them anyway. */
#define EVENTS_GONE "DELETE FROM ticket_events WHERE seq IN (SELECT seq FROM ticket_events " \
	"WHERE at <= ?1 - ?2 ORDER BY seq LIMIT 500)"
#define GC_BATCH 500

/* One batch of sql (?1 now, ?2 keep) under the store's lock: OUT *changed. */
static int gc_batch(struct tg_store *st, const char *sql, int64_t now, int64_t keep,
		    uint64_t *changed, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	*changed = 0;
	pthread_mutex_lock(sq_lock(st));
	rc = sqlite3_prepare_v2(sq_db(st), sql, -1, &s, NULL) == SQLITE_OK
		     ? 0 : store_db_error(err, sq_db(st), "gc");
	if (rc == 0) {
		sqlite3_bind_int64(s, 1, now);
		if (sqlite3_bind_parameter_count(s) >= 2)
			sqlite3_bind_int64(s, 2, keep);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, sq_db(st), "gc");
		if (rc == 0)
			*changed = (uint64_t)sqlite3_changes(sq_db(st));
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_gc(struct tg_store *st, int64_t now, int64_t keep, struct tg_store_gc_stats *stats,
	  struct tg_error *err)
{
	static const char *const gc_sql[] = {
		"DELETE FROM idempotency WHERE (principal, tool, key) IN (SELECT principal, tool, "
		"key FROM idempotency WHERE expires <= ?1 LIMIT 500)",
		"DELETE FROM revocations WHERE jti IN (SELECT jti FROM revocations WHERE "
		"expires <= ?1 LIMIT 500)",
		TICKETS_GONE,
		TICKETS_EMPTIED,
		EVENTS_GONE,
	};
	uint64_t removed[5] = { 0, 0, 0, 0, 0 }, n;
	size_t i;
	int rc = 0;

	/* in batches: calls go on between them, whatever the backlog */
	for (i = 0; rc == 0 && i < 5; i++) {
		if ((i == 2 || i == 4) && keep < 0)
			continue; /* tickets and their events kept for ever */
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
		stats->events = removed[4];
	}
	return rc;
}

/* ---- token revocations ------------------------------------------------------ */

int sq_revoke(struct tg_store *st, const char *jti, int64_t expires, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = sqlite3_prepare_v2(sq_db(st), "INSERT OR REPLACE INTO revocations (jti, expires) VALUES "
				"(?1, ?2)", -1, &s, NULL) == SQLITE_OK ? 0 : store_db_error(err, sq_db(st),
										   "revoke");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, jti, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, expires);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, sq_db(st), "revoke");
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_revoked(struct tg_store *st, const char *jti, int64_t now, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = sqlite3_prepare_v2(sq_db(st), "SELECT 1 FROM revocations WHERE jti = ?1 AND expires > ?2",
				-1, &s, NULL) == SQLITE_OK ? 0 : store_db_error(err, sq_db(st), "revoked?");
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
			rc = store_db_error(err, sq_db(st), "revoked?");
		}
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

/* ---- anomaly baselines ------------------------------------------------------- */

int sq_baselines_put(struct tg_store *st, const struct tg_baseline *b, size_t n,
		     struct tg_error *err)
{
	sqlite3_stmt *s = NULL;
	size_t i;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = store_exec(st, "BEGIN IMMEDIATE", err);
	if (rc == 0 && sqlite3_prepare_v2(sq_db(st), "INSERT OR REPLACE INTO baselines (tool, size_n, "
					  "size_mean, size_m2, entropy_n, entropy_mean, entropy_m2, "
					  "updated) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", -1, &s,
					  NULL) != SQLITE_OK)
		rc = store_db_error(err, sq_db(st), "baselines");
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
			rc = store_db_error(err, sq_db(st), "baselines");
	}
	sqlite3_finalize(s);
	if (rc == 0 || sqlite3_get_autocommit(sq_db(st)) == 0)
		rc = store_end_tx(st, rc, err);
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_baselines_load(struct tg_store *st, struct tg_baseline **out, size_t *n,
		      struct tg_error *err)
{
	struct tg_baseline *all = NULL, *more;
	size_t cap = 0;
	sqlite3_stmt *s;
	int rc = 0, step;

	*out = NULL;
	*n = 0;
	pthread_mutex_lock(sq_lock(st));
	if (sqlite3_prepare_v2(sq_db(st), "SELECT tool, size_n, size_mean, size_m2, entropy_n, "
			       "entropy_mean, entropy_m2 FROM baselines", -1, &s, NULL) != SQLITE_OK) {
		pthread_mutex_unlock(sq_lock(st));
		return store_db_error(err, sq_db(st), "baselines");
	}
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		struct tg_baseline *b;

		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			more = realloc(all, cap * sizeof(*all));
			if (!more) {
				rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
				break;
			}
			all = more;
		}
		b = &all[(*n)++];
		store_copy_text(b->tool, sizeof(b->tool), sqlite3_column_text(s, 0));
		b->size_n = (uint64_t)sqlite3_column_int64(s, 1);
		b->size_mean = sqlite3_column_double(s, 2);
		b->size_m2 = sqlite3_column_double(s, 3);
		b->entropy_n = (uint64_t)sqlite3_column_int64(s, 4);
		b->entropy_mean = sqlite3_column_double(s, 5);
		b->entropy_m2 = sqlite3_column_double(s, 6);
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = store_db_error(err, sq_db(st), "baselines");
	sqlite3_finalize(s);
	pthread_mutex_unlock(sq_lock(st));
	if (rc < 0) {
		free(all);
		*n = 0;
		return -1;
	}
	*out = all;
	return 0;
}
