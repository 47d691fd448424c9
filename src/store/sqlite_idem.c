/*
 * The SQLite backend's idempotency records (docs/STORE.md, "Idempotency
 * records"): one row a (principal, tool, key), claimed, finished,
 * reclaimed, taken over and abandoned, each in one statement or one
 * BEGIN IMMEDIATE transaction, so that two gateways on one file never
 * both claim a key.
 *
 * Must never: check the key or the result's size (the front did), or
 * change a row that another live opening runs.
 */
#include <pthread.h>
#include "util/sqlite.h"
#include <stdlib.h>
#include <string.h>

#include "store/sqlite_int.h"


/* What the key's live record says (the caller holds the write
 * transaction): 0 none, 1 filled in rec, -1 error. */
static int idem_lookup(struct tg_store *st, const struct tg_idem_key *k, int64_t now,
		       struct tg_idem_record *rec, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc, found = 0;

	if (store_prepare_key(st, "SELECT fingerprint, state, result, created, expires FROM "
			      "idempotency WHERE principal = ?1 AND tool = ?2 AND key = ?3 AND "
			      "expires > ?4", &s, k, err) < 0)
		return -1;
	sqlite3_bind_int64(s, 4, now);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		const char *fp = (const char *)sqlite3_column_text(s, 0);
		const char *state = (const char *)sqlite3_column_text(s, 1);

		found = 1;
		rec->created = sqlite3_column_int64(s, 3);
		rec->expires = sqlite3_column_int64(s, 4);
		if (!fp || strcmp(fp, k->fingerprint) != 0) {
			rec->state = TG_IDEM_MISMATCH;
		} else if (state && strcmp(state, "done") == 0) {
			int n = sqlite3_column_bytes(s, 2);
			const void *b = sqlite3_column_blob(s, 2);

			rec->state = TG_IDEM_DONE;
			rec->result = malloc((size_t)n + 1);
			if (!rec->result) {
				sqlite3_finalize(s);
				return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			}
			if (n)
				memcpy(rec->result, b, (size_t)n);
			rec->result[n] = '\0';
			rec->result_len = (size_t)n;
		} else {
			rec->state = TG_IDEM_RUNNING;
		}
	} else if (rc != SQLITE_DONE) {
		found = store_db_error(err, sq_db(st), "idempotency lookup");
	}
	sqlite3_finalize(s);
	return found;
}

int sq_idem_begin(struct tg_store *st, const struct tg_idem_key *k, int64_t now,
		  int64_t ttl, struct tg_idem_record *rec, struct tg_error *err)
{
	sqlite3_stmt *s = NULL;
	int rc = -1, found;

	pthread_mutex_lock(sq_lock(st));
	/* read and claim in one write transaction: two gateways on one
	 * file cannot both see the key free */
	if (store_exec(st, "BEGIN IMMEDIATE", err) < 0)
		goto out;
	found = idem_lookup(st, k, now, rec, err);
	if (found != 0) {
		rc = found < 0 ? -1 : 0;
		goto end;
	}
	if (store_prepare_key(st, "INSERT OR REPLACE INTO idempotency (principal, tool, key, "
			      "fingerprint, state, result, runner, created, expires) VALUES (?1, ?2, "
			      "?3, ?4, 'running', NULL, ?5, ?6, ?7)", &s, k, err) < 0)
		goto end;
	sqlite3_bind_text(s, 4, k->fingerprint, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 5, st->instance, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 6, now);
	sqlite3_bind_int64(s, 7, now + ttl);
	if (sqlite3_step(s) != SQLITE_DONE) {
		store_db_error(err, sq_db(st), "idempotency claim");
		goto end;
	}
	rec->state = TG_IDEM_NEW;
	rec->created = now;
	rec->expires = now + ttl;
	rc = 0;
end:
	sqlite3_finalize(s);
	if (rc == 0 && store_exec(st, "COMMIT", err) < 0)
		rc = -1;
	if (rc < 0) {
		sqlite3_exec(sq_db(st), "ROLLBACK", NULL, NULL, NULL);
		tg_idem_record_release(rec);
	}
out:
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

/* One statement on the key's row; 0, or -1 and err. */
static int idem_update(struct tg_store *st, const char *sql, const struct tg_idem_key *k,
		       const char *blob, size_t len, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = store_prepare_key(st, sql, &s, k, err);
	if (rc == 0) {
		sqlite3_bind_text(s, 4, k->fingerprint, -1, SQLITE_STATIC);
		if (blob)
			sqlite3_bind_blob(s, 5, blob, (int)len, SQLITE_STATIC);
		if (sqlite3_bind_parameter_count(s) >= 6)
			sqlite3_bind_text(s, 6, st->instance, -1, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, sq_db(st), "idempotency");
		if (rc == 0 && sqlite3_changes(sq_db(st)) != 1)
			rc = tg_error_set(err, TG_ERR_INVALID,
					  "idempotency key %.64s: no running call of this tool and "
					  "these arguments holds it", k->key);
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_idem_finish(struct tg_store *st, const struct tg_idem_key *k, const char *result,
		   size_t len, struct tg_error *err)
{
	return idem_update(st, "UPDATE idempotency SET state = 'done', result = ?5 WHERE "
			   "principal = ?1 AND tool = ?2 AND key = ?3 AND fingerprint = ?4 AND "
			   "state = 'running'", k, result, len, err);
}

int sq_idem_reclaim(struct tg_store *st, const struct tg_idem_key *k, const char *expect,
		    size_t len, struct tg_error *err)
{
	int rc;

	rc = idem_update(st, "UPDATE idempotency SET state = 'running', runner = ?6 WHERE "
			 "principal = ?1 AND tool = ?2 AND key = ?3 AND fingerprint = ?4 AND "
			 "state = 'done' AND result = ?5", k, expect, len, err);
	if (rc < 0 && err->code == TG_ERR_INVALID) {
		tg_error_clear(err);
		return 1; /* another retry took it, or it changed */
	}
	return rc;
}

int sq_idem_takeover(struct tg_store *st, const struct tg_idem_key *k, char **marker,
		     struct tg_error *err)
{
	sqlite3_stmt *s = NULL;
	char runner[33] = "";
	int rc = 1, step;

	pthread_mutex_lock(sq_lock(st));
	if (store_exec(st, "BEGIN IMMEDIATE", err) < 0) {
		pthread_mutex_unlock(sq_lock(st));
		return -1;
	}
	if (store_prepare_key(st, "SELECT runner, result FROM idempotency WHERE principal = ?1 AND "
			      "tool = ?2 AND key = ?3 AND fingerprint = ?4 AND state = 'running'", &s,
			      k, err) < 0) {
		rc = -1;
		goto end;
	}
	sqlite3_bind_text(s, 4, k->fingerprint, -1, SQLITE_STATIC);
	step = sqlite3_step(s);
	if (step == SQLITE_ROW) {
		const void *b = sqlite3_column_blob(s, 1);
		int n = sqlite3_column_bytes(s, 1);

		store_copy_text(runner, sizeof(runner), sqlite3_column_text(s, 0));
		if (b && n > 0 && (*marker = malloc((size_t)n + 1))) {
			memcpy(*marker, b, (size_t)n);
			(*marker)[n] = '\0';
		} else if (b && n > 0) {
			rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		}
	} else if (step != SQLITE_DONE) {
		rc = store_db_error(err, sq_db(st), "idempotency");
	}
	sqlite3_finalize(s);
	s = NULL;
	/* the runner is gone: its lock is free (it died holding the key) */
	if (rc == 1 && runner[0] && !store_instance_alive(st, runner)) {
		if (store_prepare_key(st, "UPDATE idempotency SET runner = ?5 WHERE principal = ?1 "
				      "AND tool = ?2 AND key = ?3 AND state = 'running' AND runner = "
				      "?4", &s, k, err) < 0) {
			rc = -1;
			goto end;
		}
		sqlite3_bind_text(s, 4, runner, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 5, st->instance, -1, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE && sqlite3_changes(sq_db(st)) == 1 ? 0
		     : store_db_error(err, sq_db(st), "idempotency takeover");
	}
end:
	sqlite3_finalize(s);
	if (rc >= 0 && store_exec(st, "COMMIT", err) < 0)
		rc = -1;
	if (rc < 0)
		sqlite3_exec(sq_db(st), "ROLLBACK", NULL, NULL, NULL);
	if (rc != 0) {
		free(*marker);
		*marker = NULL;
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int store_idem_settle(struct tg_store *st, const struct tg_idem_key *k, const char *result,
		      size_t len, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if (store_prepare_key(st, "UPDATE idempotency SET state = 'done', result = ?5 WHERE "
			      "principal = ?1 AND tool = ?2 AND key = ?3 AND fingerprint = ?4 AND "
			      "state = 'running' AND runner = ?6", &s, k, err) < 0)
		return -1;
	sqlite3_bind_text(s, 4, k->fingerprint, -1, SQLITE_STATIC);
	sqlite3_bind_blob(s, 5, result, (int)len, SQLITE_STATIC);
	sqlite3_bind_text(s, 6, st->instance, -1, SQLITE_STATIC);
	rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, sq_db(st), "idempotency");
	if (rc == 0 && sqlite3_changes(sq_db(st)) != 1)
		rc = tg_error_set(err, TG_ERR_INVALID, "idempotency key %.64s: this gateway no "
				  "longer holds it", k->key);
	sqlite3_finalize(s);
	return rc;
}

int sq_idem_finish_call(struct tg_store *st, const struct tg_idem_key *k, const char *result,
			size_t len, const char *ticket, enum tg_ticket_state to,
			struct tg_error *err)
{
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = store_exec(st, "BEGIN IMMEDIATE", err);
	if (rc == 0)
		rc = store_idem_settle(st, k, result, len, err);
	/* the key's answer and the ticket's outcome: one commit, never one
	 * without the other */
	if (rc == 0 && (rc = store_ticket_move(st, ticket, TG_TICKET_APPROVED, to, NULL, NULL, 0,
					       err)) > 0)
		rc = tg_error_set(err, TG_ERR_INVALID, "ticket %.40s is no longer approved", ticket);
	rc = store_end_tx(st, rc, err);
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_idem_replace(struct tg_store *st, const struct tg_idem_key *k, const char *expect,
		    size_t elen, const char *result, size_t len, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = store_prepare_key(st, "UPDATE idempotency SET result = ?5 WHERE principal = ?1 AND "
			       "tool = ?2 AND key = ?3 AND fingerprint = ?4 AND state = 'done' AND "
			       "result = ?6", &s, k, err);
	if (rc == 0) {
		sqlite3_bind_text(s, 4, k->fingerprint, -1, SQLITE_STATIC);
		sqlite3_bind_blob(s, 5, result, (int)len, SQLITE_STATIC);
		sqlite3_bind_blob(s, 6, expect, (int)elen, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE ? (sqlite3_changes(sq_db(st)) == 1 ? 0 : 1)
						    : store_db_error(err, sq_db(st), "idempotency");
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_idem_abandon(struct tg_store *st, const struct tg_idem_key *k, struct tg_error *err)
{
	return idem_update(st, "DELETE FROM idempotency WHERE principal = ?1 AND tool = ?2 AND "
			   "key = ?3 AND fingerprint = ?4 AND state = 'running'", k, NULL, 0, err);
}
