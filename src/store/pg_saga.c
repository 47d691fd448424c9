/*
 * The PostgreSQL backend's rollbacks and sagas (docs/STORE.md, "Rollbacks",
 * "PostgreSQL"; docs/PIPELINE.md, "Sagas"): the port of sqlite_saga.c. The
 * rollback log, one live runner a call, whose success moves the ticket in
 * the same transaction; each plan's log and its steps, claimed by one live
 * opening, and the orphans of a dead one taken over.
 *
 * PostgreSQL runs READ COMMITTED with many writers where SQLite had one
 * (BEGIN IMMEDIATE), so every look at a runner that decides a claim locks
 * the row it looks at (SELECT ... FOR UPDATE) to the end of the claim's
 * transaction, and a claim of a row that may not exist yet is a
 * compare-and-set against the runner that was seen. Every claim asks
 * pg_claim_ok first: an opening that does not hold its liveness lock may
 * look dead to the others, and must take nothing.
 *
 * Must never: run a compensation or a step (the gate does), or take a
 * saga or a rollback from an opening that lives (pg_instance_alive).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg_int.h"

#define TEXT_OF(x) #x
#define NUMBER(x) TEXT_OF(x)

/* ---- rollbacks -------------------------------------------------------------- */

/* The attempt logged running for st->instance unless the rollback runs
 * elsewhere. The DO UPDATE claims the row only when it is not running or
 * still has the runner that was seen ($5): a rollback begun by another
 * opening between the look and the write (no row to lock yet) fails it. */
#define ROLLBACK_CLAIM "INSERT INTO rollbacks (call_id, state, requested_by, attempts, detail, " \
	"started, ended, runner) VALUES ($1, 'running', $2, 1, NULL, $3, NULL, $4) " \
	"ON CONFLICT (call_id) DO UPDATE SET state = 'running', requested_by = $2, " \
	"attempts = rollbacks.attempts + 1, started = $3, ended = NULL, runner = $4 " \
	"WHERE rollbacks.state <> 'running' OR coalesce(rollbacks.runner, '') = $5"

int pg_rollback_begin(struct tg_store *st, const char *call_id, const char *who, int64_t now,
		      struct tg_error *err)
{
	struct pg_params p = { 0 };
	char runner[33] = "";
	uint64_t changed = 0;
	PGresult *r;
	PGconn *c;
	int rc;

	c = pg_claim_begin(st, err);
	if (!c)
		return -1;
	/* one runner at a time: a rollback running in a live process (this
	 * one included) is not started again; a dead one's is resumed. The
	 * lock waits out an attempt ending meanwhile, as SQLite's writer did */
	pp_text(&p, call_id);
	r = pg_run(c, "SELECT runner FROM rollbacks WHERE call_id = $1 AND state = "
		   "'running' FOR UPDATE", &p, "rollback", err);
	rc = r ? 0 : -1;
	if (r && PQntuples(r) == 1)
		pg_copy(runner, sizeof(runner), r, 0, 0);
	PQclear(r);
	if (rc == 0 && runner[0] && pg_instance_alive(st, c, runner))
		rc = tg_error_set(err, TG_ERR_INVALID, "call %s is being rolled back by another "
				  "process: wait for it", call_id);
	if (rc == 0) {
		p = (struct pg_params){ 0 };
		pp_text(&p, call_id);
		pp_text(&p, who);
		pp_int(&p, now);
		pp_text(&p, st->instance);
		pp_text(&p, runner);
		rc = pg_do(c, ROLLBACK_CLAIM, &p, "rollback", &changed, err);
	}
	if (rc == 0 && changed != 1)
		rc = tg_error_set(err, TG_ERR_INVALID, "call %s is being rolled back by another "
				  "process: wait for it", call_id);
	rc = pg_end(c, rc, err);
	pg_give(st, c);
	return rc;
}

/* detail's first len bytes as a string of their own, when the front cut
 * it (OUT *cut, malloc'd; NULL when detail is whole, or NULL): -1 out of
 * memory. A cut inside a UTF-8 character is moved back to its start:
 * PostgreSQL refuses a text that is not valid in its encoding, where
 * SQLite kept the bytes, and the log must not fail for the log's cut. */
static int detail_cut(const char *detail, size_t len, char **cut)
{
	int k;

	*cut = NULL;
	if (!detail || detail[len] == '\0')
		return 0;
	for (k = 0; k < 3 && len > 0 && ((unsigned char)detail[len] & 0xc0) == 0x80; k++)
		len--;
	*cut = strndup(detail, len);
	return *cut ? 0 : -1;
}

int pg_rollback_end(struct tg_store *st, const char *call_id, int ok, const char *detail,
		    size_t len, int64_t now, struct tg_error *err)
{
	struct pg_params p = { 0 };
	uint64_t changed = 0;
	char *cut;
	PGconn *c;
	int rc;

	if (detail_cut(detail, len, &cut) < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	c = pg_take(st, err);
	if (!c) {
		free(cut);
		return -1;
	}
	rc = pg_begin(c, err);
	/* the ticket moves below: the events' lock before any row */
	if (rc == 0 && ok)
		rc = pg_events_lock(c, err);
	if (rc == 0) {
		pp_text(&p, call_id);
		pp_text(&p, ok ? "succeeded" : "failed");
		pp_text(&p, cut ? cut : detail);
		pp_int(&p, now);
		pp_text(&p, st->instance);
		rc = pg_do(c, "UPDATE rollbacks SET state = $2, detail = $3, ended = $4 WHERE "
			   "call_id = $1 AND state = 'running' AND runner = $5", &p, "rollback",
			   &changed, err);
		if (rc == 0 && changed != 1)
			rc = tg_error_set(err, TG_ERR_INVALID, "rollback %.40s: not running here",
					  call_id);
	}
	if (rc == 0 && ok && (rc = pg_ticket_move_on(c, call_id, TG_TICKET_EXECUTED,
						     TG_TICKET_COMPENSATED, NULL, NULL, 0,
						     err)) > 0)
		rc = tg_error_set(err, TG_ERR_INVALID, "call %.40s is no longer executed", call_id);
	rc = pg_end(c, rc, err);
	pg_give(st, c);
	free(cut);
	return rc;
}

/* Row i of the rollbacks' SELECT into r: -1 out of memory. */
static int rollback_row(const PGresult *res, int i, struct tg_rollback *r)
{
	const char *name = PQgetvalue(res, i, 1);

	memset(r, 0, sizeof(*r));
	pg_copy(r->call_id, sizeof(r->call_id), res, i, 0);
	r->state = strcmp(name, "succeeded") == 0 ? TG_ROLLBACK_SUCCEEDED
		 : strcmp(name, "failed") == 0 ? TG_ROLLBACK_FAILED
		 : TG_ROLLBACK_RUNNING;
	pg_copy(r->requested_by, sizeof(r->requested_by), res, i, 2);
	r->attempts = (int)pg_int(res, i, 3);
	r->started = pg_int(res, i, 5);
	r->ended = pg_int(res, i, 6);
	return pg_dup_text(res, i, 4, &r->detail);
}

int pg_rollback_list(struct tg_store *st, int state, struct tg_rollback **out, size_t *n,
		     struct tg_error *err)
{
	struct pg_params p = { 0 };
	struct tg_rollback *list = NULL;
	PGresult *r;
	int rows, i, rc = 0;

	*out = NULL;
	*n = 0;
	pp_text(&p, state >= 0 ? tg_rollback_state_name((enum tg_rollback_state)state) : NULL);
	/* COLLATE "C": the order of SQLite's BINARY, whatever the database's */
	if (pg_one(st, "SELECT call_id, state, requested_by, attempts, detail, started, ended "
		   "FROM rollbacks WHERE $1::text IS NULL OR state = $1 ORDER BY started, "
		   "call_id COLLATE \"C\" LIMIT 10000", &p, "rollbacks", &r, NULL, err) < 0)
		return -1;
	rows = PQntuples(r);
	if (rows > 0 && !(list = calloc((size_t)rows, sizeof(*list)))) {
		PQclear(r);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	for (i = 0; rc == 0 && i < rows; i++) {
		if (rollback_row(r, i, &list[i]) < 0)
			rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		else
			(*n)++;
	}
	PQclear(r);
	if (rc < 0) {
		while (*n)
			tg_rollback_release(&list[--*n]);
		free(list);
		return -1;
	}
	*out = list;
	return 0;
}

/* ---- sagas -------------------------------------------------------------------- */

/* Whether this opening may run saga id, on c inside the caller's
 * transaction: 0 (absent, or its runner is this opening or dead), 1 (a
 * live one runs it), -1. The row stays locked to the end of the
 * transaction, so nobody claims it between this look and the claim. */
static int saga_claim(struct tg_store *st, PGconn *c, const char *id, struct tg_error *err)
{
	struct pg_params p = { 0 };
	char runner[33] = "";
	PGresult *r;
	int rc = 0;

	pp_text(&p, id);
	r = pg_run(c, "SELECT runner FROM sagas WHERE id = $1 FOR UPDATE", &p, "saga", err);
	if (!r)
		return -1;
	if (PQntuples(r) == 1) {
		pg_copy(runner, sizeof(runner), r, 0, 0);
		rc = strcmp(runner, st->instance) != 0 && pg_instance_alive(st, c, runner);
	}
	PQclear(r);
	return rc;
}

/* Saga id's runner becomes st->instance (its row locked by saga_claim). */
static int saga_own(struct tg_store *st, PGconn *c, const char *id, struct tg_error *err)
{
	struct pg_params p = { 0 };

	pp_text(&p, id);
	pp_text(&p, st->instance);
	return pg_do(c, "UPDATE sagas SET runner = $2 WHERE id = $1", &p, "saga", NULL, err);
}

int pg_saga_take(struct tg_store *st, const char *id, struct tg_error *err)
{
	PGconn *c;
	int rc;

	c = pg_claim_begin(st, err);
	if (!c)
		return -1;
	rc = saga_claim(st, c, id, err);
	if (rc == 0)
		rc = saga_own(st, c, id, err);
	rc = pg_end(c, rc, err); /* 1, a live runner: nothing was written */
	pg_give(st, c);
	return rc;
}

/* The saga's steps, pending, each unless logged (then kept), on c. */
static int saga_steps_put(PGconn *c, const char *id, const struct tg_saga_step *steps, size_t n,
			  struct tg_error *err)
{
	size_t i;

	for (i = 0; i < n; i++) {
		struct pg_params p = { 0 };

		pp_text(&p, id);
		pp_int(&p, (int64_t)i);
		pp_text(&p, steps[i].tool);
		pp_text(&p, steps[i].call_id);
		pp_text(&p, steps[i].arguments ? steps[i].arguments : "{}");
		if (pg_do(c, "INSERT INTO saga_steps (saga_id, n, tool, call_id, state, arguments) "
			  "VALUES ($1, $2, $3, $4, 'pending', $5) ON CONFLICT (saga_id, n) DO "
			  "NOTHING", &p, "saga", NULL, err) < 0)
			return -1;
	}
	return 0;
}

int pg_saga_begin(struct tg_store *st, const char *id, const struct tg_saga_step *steps,
		  size_t n, int64_t now, struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGconn *c;
	int rc;

	c = pg_claim_begin(st, err);
	if (!c)
		return -1;
	/* the row made first when absent (ours then), so that there is always
	 * a row for saga_claim to lock: two openings beginning one new saga
	 * meet on it, the second waiting for the first and then judging its
	 * runner as SQLite's second writer would */
	pp_text(&p, id);
	pp_text(&p, st->instance);
	pp_int(&p, now);
	rc = pg_do(c, "INSERT INTO sagas (id, state, runner, created, updated) VALUES ($1, "
		   "'running', $2, $3, $3) ON CONFLICT (id) DO NOTHING", &p, "saga", NULL,
		   err);
	if (rc == 0)
		rc = saga_claim(st, c, id, err);
	if (rc == 0)
		rc = saga_own(st, c, id, err);
	if (rc == 0)
		rc = saga_steps_put(c, id, steps, n, err);
	rc = pg_end(c, rc, err); /* 1, a live runner: rolled back, nothing written */
	pg_give(st, c);
	return rc;
}

/* Row i of saga_get's SELECT, a step, into s: -1 out of memory. */
static int step_row(const PGresult *r, int i, struct tg_saga_step *s)
{
	pg_copy(s->tool, sizeof(s->tool), r, i, 2);
	pg_copy(s->call_id, sizeof(s->call_id), r, i, 3);
	s->state = (enum tg_saga_step_state)store_step_state_of(PQgetvalue(r, i, 4));
	if (pg_dup_text(r, i, 5, &s->arguments) < 0 || pg_dup_text(r, i, 6, &s->result) < 0)
		return -1;
	return 0;
}

int pg_saga_get(struct tg_store *st, const char *id, struct tg_saga *saga,
		struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r;
	int rows, i, rc = 0;

	/* the saga and its steps in one statement: one snapshot, where
	 * SQLite's two reads were kept together by its lock */
	pp_text(&p, id);
	if (pg_one(st, "SELECT s.state, t.n, t.tool, t.call_id, t.state, t.arguments, t.result "
		   "FROM sagas s LEFT JOIN saga_steps t ON t.saga_id = s.id WHERE s.id = $1 "
		   "ORDER BY t.n LIMIT " NUMBER(TG_SAGA_MAX_STEPS), &p, "saga", &r, NULL,
		   err) < 0)
		return -1;
	rows = PQntuples(r);
	if (rows == 0) {
		PQclear(r);
		return 1;
	}
	snprintf(saga->id, sizeof(saga->id), "%s", id);
	saga->state = (enum tg_saga_state)store_saga_state_of(PQgetvalue(r, 0, 0));
	saga->steps = calloc(TG_SAGA_MAX_STEPS, sizeof(*saga->steps));
	if (!saga->steps) {
		PQclear(r);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	/* a saga without steps is one row joined to none (t.n NULL) */
	for (i = 0; rc == 0 && i < rows && saga->n < TG_SAGA_MAX_STEPS; i++) {
		if (PQgetisnull(r, i, 1))
			break;
		if (step_row(r, i, &saga->steps[saga->n++]) < 0)
			rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	PQclear(r);
	if (rc < 0)
		tg_saga_release(saga);
	return rc;
}

int pg_saga_step(struct tg_store *st, const char *id, size_t step,
		 enum tg_saga_step_state state, const char *result, struct tg_error *err)
{
	struct pg_params p = { 0 };
	uint64_t changed = 0;

	pp_text(&p, id);
	pp_int(&p, (int64_t)step);
	pp_text(&p, tg_saga_step_state_name(state));
	pp_text(&p, result);
	pp_text(&p, st->instance);
	/* only while this opening runs the saga: its liveness lock can be lost
	 * while it lives (a connection cut), and another replica may have
	 * taken the saga over meanwhile; its next step then stops here */
	if (pg_one(st, "UPDATE saga_steps SET state = $3, result = coalesce($4, result) WHERE "
		   "saga_id = $1 AND n = $2 AND EXISTS (SELECT 1 FROM sagas WHERE id = $1 AND "
		   "runner = $5)", &p, "saga step", NULL, &changed, err) < 0)
		return -1;
	if (changed != 1)
		return tg_error_set(err, TG_ERR_SYSTEM, "store: saga step: saga %.40s has no "
				    "step %zu, or this gateway no longer runs it (taken over)", id,
				    step);
	return 0;
}

int pg_saga_set(struct tg_store *st, const char *id, enum tg_saga_state state, int64_t now,
		struct tg_error *err)
{
	struct pg_params p = { 0 };
	uint64_t changed = 0;

	pp_text(&p, id);
	pp_text(&p, tg_saga_state_name(state));
	pp_int(&p, now);
	pp_text(&p, st->instance);
	if (pg_one(st, "UPDATE sagas SET state = $2, updated = $3 WHERE id = $1 AND runner = $4",
		   &p, "saga", NULL, &changed, err) < 0)
		return -1;
	if (changed != 1)
		return tg_error_set(err, TG_ERR_SYSTEM, "store: saga: no saga %.40s, or this "
				    "gateway no longer runs it (taken over)", id);
	return 0;
}

/* Saga id (its row locked, its runner dead) claimed for st->instance, on
 * c: 0, or 1 when its runner is no longer the one judged dead. */
static int orphan_claim(struct tg_store *st, PGconn *c, const char *id, const char *runner,
			struct tg_error *err)
{
	struct pg_params p = { 0 };
	uint64_t changed = 0;

	pp_text(&p, id);
	pp_text(&p, st->instance);
	pp_text(&p, runner);
	if (pg_do(c, "UPDATE sagas SET runner = $2 WHERE id = $1 AND runner = $3", &p, "sagas",
		  &changed, err) < 0)
		return -1;
	return changed == 1 ? 0 : 1;
}

int pg_saga_orphans(struct tg_store *st, char (**ids)[33], size_t *n, struct tg_error *err)
{
	char (*list)[33] = NULL, (*bigger)[33], runner[33], id[33];
	PGresult *r = NULL;
	size_t cap = 0;
	int rows = 0, i, rc, claim;
	PGconn *c;

	*ids = NULL;
	*n = 0;
	c = pg_claim_begin(st, err);
	if (!c)
		return -1;
	rc = 0;
	/* every candidate locked until the claims commit, in one order (two
	 * openings sweeping at once then wait rather than deadlock); a row
	 * another transaction holds is waited for, not skipped, so that an
	 * orphan is not missed because someone looked at it and let it be */
	if (rc == 0 && !(r = pg_run(c, "SELECT id, runner FROM sagas WHERE state IN ('running', "
				    "'compensating') ORDER BY created, id LIMIT 10000 FOR UPDATE",
				    NULL, "sagas", err)))
		rc = -1;
	if (r)
		rows = PQntuples(r);
	/* a failure ends the scan, and says so (the transaction is rolled
	 * back: nothing claimed); the sagas are found at the next start */
	for (i = 0; rc == 0 && i < rows; i++) {
		pg_copy(runner, sizeof(runner), r, i, 1);
		if (pg_instance_alive(st, c, runner))
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
		pg_copy(id, sizeof(id), r, i, 0);
		claim = orphan_claim(st, c, id, runner, err);
		if (claim < 0)
			rc = -1;
		else if (claim == 0)
			memcpy(list[(*n)++], id, sizeof(id));
	}
	PQclear(r);
	rc = pg_end(c, rc, err);
	pg_give(st, c);
	if (rc < 0) {
		free(list);
		*n = 0;
		return -1;
	}
	*ids = list;
	return 0;
}
