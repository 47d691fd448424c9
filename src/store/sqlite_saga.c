/*
 * The SQLite backend's rollbacks and sagas (docs/STORE.md, "Rollbacks";
 * docs/PIPELINE.md, "Sagas"): the rollback log, one live runner a call,
 * whose success moves the ticket in the same transaction; each plan's
 * log and its steps, claimed by one live opening, and the orphans of a
 * dead one taken over.
 *
 * Must never: run a compensation or a step (the gate does), or take a
 * saga or a rollback from an opening that lives (store_instance_alive).
 */
#include <pthread.h>
#include "util/sqlite.h"
#include <stdlib.h>
#include <string.h>

#include "store/sqlite_int.h"

/* ---- rollbacks -------------------------------------------------------------- */

int sq_rollback_begin(struct tg_store *st, const char *call_id, const char *who, int64_t now,
		      struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = store_exec(st, "BEGIN IMMEDIATE", err);
	/* one runner at a time: a rollback running in a live process (this
	 * one included) is not started again; a dead one's is resumed */
	if (rc == 0 && sqlite3_prepare_v2(sq_db(st), "SELECT runner FROM rollbacks WHERE call_id = ?1 "
					  "AND state = 'running'", -1, &s, NULL) != SQLITE_OK)
		rc = store_db_error(err, sq_db(st), "rollback");
	if (rc == 0) {
		char runner[33] = "";

		sqlite3_bind_text(s, 1, call_id, -1, SQLITE_STATIC);
		if (sqlite3_step(s) == SQLITE_ROW) {
			store_copy_text(runner, sizeof(runner), sqlite3_column_text(s, 0));
			if (runner[0] && (strcmp(runner, st->instance) == 0 ||
					  store_instance_alive(st, runner)))
				rc = tg_error_set(err, TG_ERR_INVALID, "call %s is being rolled back "
						  "by another process: wait for it", call_id);
		}
		sqlite3_finalize(s);
	}
	if (rc == 0 &&
	    sqlite3_prepare_v2(sq_db(st), "INSERT INTO rollbacks (call_id, state, requested_by, "
			       "attempts, detail, started, ended, runner) VALUES (?1, 'running', ?2, "
			       "1, NULL, ?3, NULL, ?4) ON CONFLICT (call_id) DO UPDATE SET state = "
			       "'running', requested_by = ?2, attempts = attempts + 1, started = ?3, "
			       "ended = NULL, runner = ?4", -1, &s, NULL) != SQLITE_OK)
		rc = store_db_error(err, sq_db(st), "rollback");
	else if (rc == 0) {
		sqlite3_bind_text(s, 1, call_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, who, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, now);
		sqlite3_bind_text(s, 4, st->instance, -1, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, sq_db(st), "rollback");
		sqlite3_finalize(s);
	}
	rc = store_end_tx(st, rc, err);
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_rollback_end(struct tg_store *st, const char *call_id, int ok, const char *detail,
		    size_t len, int64_t now, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = store_exec(st, "BEGIN IMMEDIATE", err);
	if (rc == 0)
		rc = sqlite3_prepare_v2(sq_db(st), "UPDATE rollbacks SET state = ?2, detail = ?3, "
					"ended = ?4 WHERE call_id = ?1 AND state = 'running' AND "
					"runner = ?5", -1, &s,
					NULL) == SQLITE_OK ? 0 : store_db_error(err, sq_db(st), "rollback");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, call_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, ok ? "succeeded" : "failed", -1, SQLITE_STATIC);
		if (detail)
			sqlite3_bind_text(s, 3, detail, (int)len, SQLITE_STATIC);
		sqlite3_bind_int64(s, 4, now);
		sqlite3_bind_text(s, 5, st->instance, -1, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, sq_db(st), "rollback");
		if (rc == 0 && sqlite3_changes(sq_db(st)) != 1)
			rc = tg_error_set(err, TG_ERR_INVALID, "rollback %.40s: not running here",
					  call_id);
		sqlite3_finalize(s);
	}
	if (rc == 0 && ok && (rc = store_ticket_move(st, call_id, TG_TICKET_EXECUTED,
						    TG_TICKET_COMPENSATED, NULL, NULL, 0,
					      err)) > 0)
		rc = tg_error_set(err, TG_ERR_INVALID, "call %.40s is no longer executed", call_id);
	rc = store_end_tx(st, rc, err);
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

static int fill_rollback(sqlite3_stmt *s, void *p)
{
	const unsigned char *detail = sqlite3_column_text(s, 4);
	const char *name = (const char *)sqlite3_column_text(s, 1);
	struct tg_rollback *r = p;

	memset(r, 0, sizeof(*r));
	store_copy_text(r->call_id, sizeof(r->call_id), sqlite3_column_text(s, 0));
	r->state = name && strcmp(name, "succeeded") == 0 ? TG_ROLLBACK_SUCCEEDED
		 : name && strcmp(name, "failed") == 0 ? TG_ROLLBACK_FAILED
		 : TG_ROLLBACK_RUNNING;
	store_copy_text(r->requested_by, sizeof(r->requested_by), sqlite3_column_text(s, 2));
	r->attempts = sqlite3_column_int(s, 3);
	r->started = sqlite3_column_int64(s, 5);
	r->ended = sqlite3_column_int64(s, 6);
	return detail && !(r->detail = strdup((const char *)detail)) ? -1 : 0;
}

static void release_rollback(void *r)
{
	tg_rollback_release(r);
}

int sq_rollback_list(struct tg_store *st, int state, struct tg_rollback **out, size_t *n,
		     struct tg_error *err)
{
	void *list = NULL;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = store_select_list(st, "SELECT call_id, state, requested_by, attempts, detail, "
			       "started, ended FROM rollbacks WHERE ?1 IS NULL OR state = ?1 ORDER "
			       "BY started, call_id LIMIT 10000",
			       state >= 0 ? tg_rollback_state_name((enum tg_rollback_state)state)
					  : NULL, sizeof(**out), fill_rollback, release_rollback, &list,
			       n, "rollbacks", err);
	pthread_mutex_unlock(sq_lock(st));
	*out = list;
	return rc;
}

/* ---- sagas -------------------------------------------------------------------- */

/* Whether this opening may run saga id: 0 (absent, or its runner is
 * this opening or dead), 1 (a live one runs it); the caller holds lock,
 * in a write transaction. */
static int saga_claim(struct tg_store *st, const char *id, struct tg_error *err)
{
	char runner[33] = "";
	sqlite3_stmt *s;
	int rc = 0;

	if (sqlite3_prepare_v2(sq_db(st), "SELECT runner FROM sagas WHERE id = ?1", -1, &s, NULL) !=
	    SQLITE_OK)
		return store_db_error(err, sq_db(st), "saga");
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW) {
		store_copy_text(runner, sizeof(runner), sqlite3_column_text(s, 0));
		rc = strcmp(runner, st->instance) != 0 && store_instance_alive(st, runner);
	}
	sqlite3_finalize(s);
	return rc;
}

int sq_saga_take(struct tg_store *st, const char *id, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = store_exec(st, "BEGIN IMMEDIATE", err);
	if (rc == 0)
		rc = saga_claim(st, id, err);
	if (rc == 0) {
		rc = sqlite3_prepare_v2(sq_db(st), "UPDATE sagas SET runner = ?2 WHERE id = ?1", -1, &s,
					NULL) == SQLITE_OK ? 0 : store_db_error(err, sq_db(st), "saga");
		if (rc == 0) {
			sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
			sqlite3_bind_text(s, 2, st->instance, -1, SQLITE_STATIC);
			rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, sq_db(st), "saga");
			sqlite3_finalize(s);
		}
	}
	if (rc == 1) {
		store_exec(st, "COMMIT", err);
	} else {
		rc = store_end_tx(st, rc, err);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_saga_begin(struct tg_store *st, const char *id, const struct tg_saga_step *steps,
		  size_t n, int64_t now, struct tg_error *err)
{
	sqlite3_stmt *s = NULL;
	size_t i;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = store_exec(st, "BEGIN IMMEDIATE", err);
	if (rc == 0)
		rc = saga_claim(st, id, err);
	if (rc == 0 && sqlite3_prepare_v2(sq_db(st), "INSERT INTO sagas (id, state, runner, created, "
					  "updated) VALUES (?1, 'running', ?2, ?3, ?3) ON CONFLICT "
					  "(id) DO UPDATE SET runner = ?2", -1, &s, NULL) != SQLITE_OK)
		rc = store_db_error(err, sq_db(st), "saga");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, st->instance, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, now);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, sq_db(st), "saga");
		sqlite3_finalize(s);
		s = NULL;
	}
	if (rc == 0 && sqlite3_prepare_v2(sq_db(st), "INSERT OR IGNORE INTO saga_steps (saga_id, n, "
					  "tool, call_id, state, arguments) VALUES (?1, ?2, ?3, ?4, "
					  "'pending', ?5)", -1, &s, NULL) != SQLITE_OK)
		rc = store_db_error(err, sq_db(st), "saga");
	for (i = 0; rc == 0 && i < n; i++) {
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, (sqlite3_int64)i);
		sqlite3_bind_text(s, 3, steps[i].tool, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 4, steps[i].call_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 5, steps[i].arguments ? steps[i].arguments : "{}", -1,
				  SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, sq_db(st), "saga");
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	rc = store_end_tx(st, rc, err);
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_saga_get(struct tg_store *st, const char *id, struct tg_saga *saga,
		struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc = 1, step;

	pthread_mutex_lock(sq_lock(st));
	if (sqlite3_prepare_v2(sq_db(st), "SELECT state FROM sagas WHERE id = ?1", -1, &s, NULL) !=
	    SQLITE_OK) {
		rc = store_db_error(err, sq_db(st), "saga");
		goto out;
	}
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	step = sqlite3_step(s);
	if (step == SQLITE_ROW) {
		store_copy_text(saga->id, sizeof(saga->id), (const unsigned char *)id);
		saga->state = (enum tg_saga_state)store_saga_state_of((const char *)
								sqlite3_column_text(s, 0));
		rc = 0;
	} else if (step != SQLITE_DONE) {
		rc = store_db_error(err, sq_db(st), "saga");
	}
	sqlite3_finalize(s);
	if (rc != 0)
		goto out;
	saga->steps = calloc(TG_SAGA_MAX_STEPS, sizeof(*saga->steps));
	if (!saga->steps || sqlite3_prepare_v2(sq_db(st), "SELECT n, tool, call_id, state, "
					       "arguments, result FROM saga_steps WHERE saga_id = "
					       "?1 ORDER BY n", -1, &s, NULL) != SQLITE_OK) {
		rc = saga->steps ? store_db_error(err, sq_db(st), "saga")
				 : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	while ((step = sqlite3_step(s)) == SQLITE_ROW && saga->n < TG_SAGA_MAX_STEPS) {
		struct tg_saga_step *p = &saga->steps[saga->n++];
		const unsigned char *a = sqlite3_column_text(s, 4), *r = sqlite3_column_text(s, 5);

		store_copy_text(p->tool, sizeof(p->tool), sqlite3_column_text(s, 1));
		store_copy_text(p->call_id, sizeof(p->call_id), sqlite3_column_text(s, 2));
		p->state = (enum tg_saga_step_state)store_step_state_of((const char *)
								sqlite3_column_text(s, 3));
		p->arguments = a ? strdup((const char *)a) : NULL;
		p->result = r ? strdup((const char *)r) : NULL;
		if ((a && !p->arguments) || (r && !p->result)) {
			rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			break;
		}
	}
	if (rc == 0 && step != SQLITE_DONE && step != SQLITE_ROW)
		rc = store_db_error(err, sq_db(st), "saga");
	sqlite3_finalize(s);
out:
	pthread_mutex_unlock(sq_lock(st));
	if (rc < 0)
		tg_saga_release(saga);
	return rc;
}

int sq_saga_step(struct tg_store *st, const char *id, size_t step,
		 enum tg_saga_step_state state, const char *result, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = sqlite3_prepare_v2(sq_db(st), "UPDATE saga_steps SET state = ?3, result = coalesce(?4, "
				"result) WHERE saga_id = ?1 AND n = ?2", -1, &s, NULL) == SQLITE_OK
		     ? 0 : store_db_error(err, sq_db(st), "saga");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, (sqlite3_int64)step);
		sqlite3_bind_text(s, 3, tg_saga_step_state_name(state), -1, SQLITE_STATIC);
		if (result)
			sqlite3_bind_blob(s, 4, result, (int)strlen(result), SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE && sqlite3_changes(sq_db(st)) == 1
			     ? 0 : store_db_error(err, sq_db(st), "saga step");
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_saga_set(struct tg_store *st, const char *id, enum tg_saga_state state, int64_t now,
		struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = sqlite3_prepare_v2(sq_db(st), "UPDATE sagas SET state = ?2, updated = ?3 WHERE id = ?1",
				-1, &s, NULL) == SQLITE_OK ? 0 : store_db_error(err, sq_db(st), "saga");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, tg_saga_state_name(state), -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, now);
		rc = sqlite3_step(s) == SQLITE_DONE && sqlite3_changes(sq_db(st)) == 1
			     ? 0 : store_db_error(err, sq_db(st), "saga");
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_saga_orphans(struct tg_store *st, char (**ids)[33], size_t *n, struct tg_error *err)
{
	char (*list)[33] = NULL, (*bigger)[33], runner[33];
	sqlite3_stmt *s = NULL, *claim = NULL;
	size_t cap = 0;
	int rc, step = SQLITE_DONE;

	pthread_mutex_lock(sq_lock(st));
	rc = store_exec(st, "BEGIN IMMEDIATE", err);
	if (rc == 0 && (sqlite3_prepare_v2(sq_db(st), "SELECT id, runner FROM sagas WHERE state IN "
					   "('running', 'compensating') LIMIT 10000", -1, &s,
					   NULL) != SQLITE_OK ||
			sqlite3_prepare_v2(sq_db(st), "UPDATE sagas SET runner = ?2 WHERE id = ?1", -1,
					   &claim, NULL) != SQLITE_OK))
		rc = store_db_error(err, sq_db(st), "sagas");
	/* a failed step ends the scan, and says so (the transaction is
	 * rolled back: nothing claimed); the sagas are found at the next start */
	while (rc == 0 && (step = sqlite3_step(s)) == SQLITE_ROW) {
		store_copy_text(runner, sizeof(runner), sqlite3_column_text(s, 1));
		if (store_instance_alive(st, runner))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			bigger = realloc(list, cap * sizeof(*list));
			if (!bigger) {
				rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
				break;
			}
			list = bigger;
		}
		store_copy_text(list[*n], sizeof(list[*n]), sqlite3_column_text(s, 0));
		sqlite3_bind_text(claim, 1, list[*n], -1, SQLITE_STATIC);
		sqlite3_bind_text(claim, 2, st->instance, -1, SQLITE_STATIC);
		if (sqlite3_step(claim) != SQLITE_DONE)
			rc = store_db_error(err, sq_db(st), "sagas");
		sqlite3_reset(claim);
		(*n)++;
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = store_db_error(err, sq_db(st), "sagas");
	sqlite3_finalize(s);
	sqlite3_finalize(claim);
	rc = store_end_tx(st, rc, err);
	pthread_mutex_unlock(sq_lock(st));
	if (rc < 0) {
		free(list);
		*n = 0;
		return -1;
	}
	*ids = list;
	return 0;
}
