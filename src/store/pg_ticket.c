/*
 * The PostgreSQL backend's approval tickets (docs/STORE.md, "Approval
 * tickets", "PostgreSQL"): the port of sqlite_ticket.c. The rows, their
 * moves as compare-and-set updates (two approvers cannot both decide),
 * expiry on read (fail closed), the lists and counts, and each principal's
 * load on the approvers' queue. A new held call's ticket and its key's
 * answer are written in one transaction.
 *
 * PostgreSQL runs READ COMMITTED with many writers where SQLite had one,
 * so each transaction that makes or moves a ticket takes the events'
 * counter row first (pg_events_lock: the trigger would take it anyway, and
 * taking it before any ticket's row keeps a sweep and a move from waiting
 * on each other), and a queue's bound is looked at under a lock named for
 * its principal (two gateways cannot both pass it).
 *
 * Must never: decide who may move a ticket (the front and the caller
 * do), make a ticket's id (the front does), or write a ticket's event (the
 * trigger does).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg_int.h"

#define TICKET_COLUMNS "id, principal, tool, args_sha256, preview, state, reason, approver, " \
	"created, decided, expires, arguments, covers, findings"

/* *dst a copy of column col's text, or NULL for NULL: -1 out of memory
 * (*dst untouched, so a ticket half filled is released whole). */
static int dup_col(const PGresult *r, int row, int col, char **dst)
{
	char *s = NULL;

	if (pg_dup_text(r, row, col, &s) < 0)
		return -1;
	*dst = s;
	return 0;
}

/* Fill t from row of a SELECT TICKET_COLUMNS: -1 out of memory (t then
 * holds what was copied, for tg_ticket_release). */
static int ticket_row(const PGresult *r, int row, struct tg_ticket *t)
{
	memset(t, 0, sizeof(*t));
	pg_copy(t->id, sizeof(t->id), r, row, 0);
	pg_copy(t->principal, sizeof(t->principal), r, row, 1);
	pg_copy(t->tool, sizeof(t->tool), r, row, 2);
	pg_copy(t->args_sha256, sizeof(t->args_sha256), r, row, 3);
	t->state = (enum tg_ticket_state)store_ticket_state_of(PQgetvalue(r, row, 5));
	pg_copy(t->approver, sizeof(t->approver), r, row, 7);
	t->created = pg_int(r, row, 8);
	t->decided = pg_int(r, row, 9);
	t->expires = pg_int(r, row, 10);
	if (dup_col(r, row, 4, &t->preview) < 0 || dup_col(r, row, 6, &t->reason) < 0 ||
	    dup_col(r, row, 11, &t->arguments) < 0 || dup_col(r, row, 12, &t->covers) < 0 ||
	    dup_col(r, row, 13, &t->findings) < 0)
		return -1;
	return 0;
}

/* r's first row into t, r released: 0, 1 when r has none, -1 out of
 * memory (t released). */
static int first_ticket(PGresult *r, struct tg_ticket *t, struct tg_error *err)
{
	int rc = PQntuples(r) < 1 ? 1 : ticket_row(r, 0, t) < 0 ? -1 : 0;

	PQclear(r);
	if (rc < 0) {
		tg_ticket_release(t);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	return rc;
}

/* What a principal puts on the approvers' queue at $2: its pending
 * tickets, and the bytes its tickets that did not run hold. */
#define QUEUE_SQL "SELECT count(*) FILTER (WHERE state = 'pending' AND expires > $2), " \
	"coalesce(sum(octet_length(coalesce(arguments, '')) + octet_length(coalesce(preview, " \
	"'')) + octet_length(coalesce(findings, ''))), 0)::bigint FROM tickets WHERE " \
	"principal = $1 AND state IN ('pending', 'rejected', 'cancelled', 'expired')"

/* principal's pending tickets at now, and the bytes its tickets that did
 * not run hold: on c inside the caller's transaction, or (c NULL) in
 * autocommit. */
static int queue_load(struct tg_store *st, PGconn *c, const char *principal, int64_t now,
		      uint64_t *n, uint64_t *bytes, struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r = NULL;

	*n = *bytes = 0;
	pp_text(&p, principal);
	pp_int(&p, now);
	if (c)
		r = pg_run(c, QUEUE_SQL, &p, "tickets", err);
	else if (pg_one(st, QUEUE_SQL, &p, "tickets", &r, NULL, err) < 0)
		r = NULL;
	if (!r)
		return -1;
	if (PQntuples(r) == 1) {
		*n = (uint64_t)pg_int(r, 0, 0);
		*bytes = (uint64_t)pg_int(r, 0, 1);
	}
	PQclear(r);
	return 0;
}

/* 1 if req's principal's queue has no room for req's ticket within
 * bounds, 0 if it has, -1: inside the caller's transaction, which holds
 * the ticket events' row (pg_events_begin). Every transaction that makes
 * or moves a ticket takes that row first, so no other gateway adds to the
 * queue, or moves a ticket of it, between this look and the insert it
 * allows: the row is the queue's lock too, and costs no round trip more. */
static int queue_full(struct tg_store *st, PGconn *c, const struct tg_ticket *req, int64_t now,
		      const struct tg_queue_bounds *bounds, struct tg_error *err)
{
	uint64_t n, bytes, add = (req->arguments ? strlen(req->arguments) : 0) +
				 (req->preview ? strlen(req->preview) : 0) +
				 (req->findings ? strlen(req->findings) : 0);

	if (queue_load(st, c, req->principal, now, &n, &bytes, err) < 0)
		return -1;
	return n >= bounds->max_pending || bytes + add > bounds->max_bytes;
}

/* A pending ticket t; with hold, the key (running, this opening's) then
 * answers {"ticket":"ID"}: all in one transaction, which takes the events'
 * lock first (the insert's trigger numbers an event). */
int pg_ticket_insert(struct tg_store *st, const struct tg_ticket *t,
		     const struct tg_idem_key *hold, const struct tg_queue_bounds *bounds,
		     struct tg_error *err)
{
	struct pg_params p = { 0 };
	char marker[64];
	PGconn *c;
	int rc;

	c = pg_events_begin(st, err);
	if (!c)
		return -1;
	/* as SQLite: the bounds are looked at only for a held call */
	rc = hold && bounds ? queue_full(st, c, t, t->created, bounds, err) : 0;
	if (rc == 0) {
		pp_text(&p, t->id);
		pp_text(&p, t->principal);
		pp_text(&p, t->tool);
		pp_text(&p, t->args_sha256);
		pp_text(&p, t->preview);
		pp_int(&p, t->created);
		pp_int(&p, t->expires);
		pp_text(&p, t->arguments);
		pp_text(&p, t->covers);
		pp_text(&p, t->findings);
		rc = pg_do(c, "INSERT INTO tickets (" TICKET_COLUMNS ") VALUES ($1, $2, $3, $4, "
			   "$5, 'pending', NULL, NULL, $6, NULL, $7, $8, $9, $10)", &p, "ticket",
			   NULL, err);
	}
	if (rc == 0 && hold) {
		snprintf(marker, sizeof(marker), "{\"ticket\":\"%s\"}", t->id);
		rc = pg_idem_settle(st, c, hold, marker, strlen(marker), err);
	}
	rc = pg_end(c, rc, err); /* 1, the queue full, rolls back too: nothing written */
	pg_give(st, c);
	return rc;
}

/* Ticket id as stored, into t, in autocommit. */
static int ticket_read(struct tg_store *st, const char *id, struct tg_ticket *t,
		       struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r = NULL;
	int rc;

	memset(t, 0, sizeof(*t));
	pp_text(&p, id);
	if (pg_one(st, "SELECT " TICKET_COLUMNS " FROM tickets WHERE id = $1", &p, "ticket", &r,
		   NULL, err) < 0)
		return -1;
	rc = first_ticket(r, t, err);
	if (rc > 0)
		rc = tg_error_set(err, TG_ERR_INVALID, "ticket %s: no such ticket", id);
	return rc;
}

int pg_ticket_move_on(PGconn *c, const char *id, enum tg_ticket_state from,
		      enum tg_ticket_state to, const char *approver, const char *reason,
		      int64_t now, struct tg_error *err)
{
	struct pg_params p = { 0 };
	uint64_t changed = 0;

	pp_text(&p, id);
	pp_text(&p, tg_ticket_state_name(to));
	pp_text(&p, approver);
	pp_text(&p, reason);
	if (now)
		pp_int(&p, now);
	else
		pp_text(&p, NULL); /* decided kept */
	pp_text(&p, tg_ticket_state_name(from));
	if (pg_do(c, "UPDATE tickets SET state = $2, approver = coalesce($3, approver), reason = "
		  "coalesce($4, reason), decided = coalesce($5, decided) WHERE id = $1 AND "
		  "state = $6", &p, "ticket", &changed, err) < 0)
		return -1;
	return changed == 1 ? 0 : 1; /* 1: not in state from */
}

int pg_ticket_move(struct tg_store *st, const char *id, enum tg_ticket_state from,
		   enum tg_ticket_state to, const char *approver, const char *reason, int64_t now,
		   struct tg_error *err)
{
	PGconn *c;
	int rc;

	c = pg_events_begin(st, err);
	if (!c)
		return -1;
	rc = pg_ticket_move_on(c, id, from, to, approver, reason, now, err);
	rc = pg_end(c, rc, err);
	pg_give(st, c);
	return rc;
}

int pg_ticket_get(struct tg_store *st, const char *id, int64_t now, struct tg_ticket *t,
		  struct tg_error *err)
{
	int rc;

	rc = ticket_read(st, id, t, err);
	/* read, and written only when it expires now: an approval wait
	 * looks at its ticket every 100 ms, and must not take the events'
	 * lock each time */
	if (rc == 0 && t->state == TG_TICKET_PENDING && t->expires <= now) {
		tg_ticket_release(t);
		/* 1 (decided meanwhile) is no failure: the read says how */
		rc = pg_ticket_move(st, id, TG_TICKET_PENDING, TG_TICKET_EXPIRED, NULL, NULL, now,
				    err);
		if (rc >= 0)
			rc = ticket_read(st, id, t, err); /* expired, or decided meanwhile */
		else
			memset(t, 0, sizeof(*t));
	}
	return rc;
}

/* The rows of r as an array of tickets: OUT *out (NULL for none), *n. */
static int ticket_rows(const PGresult *r, struct tg_ticket **out, size_t *n,
		       struct tg_error *err)
{
	struct tg_ticket *list;
	size_t i, j, rows = (size_t)PQntuples(r);

	*out = NULL;
	*n = 0;
	if (rows == 0)
		return 0;
	list = calloc(rows, sizeof(*list));
	if (!list)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	for (i = 0; i < rows; i++) {
		if (ticket_row(r, (int)i, &list[i]) < 0) {
			for (j = 0; j <= i; j++) /* the one that failed holds what it copied */
				tg_ticket_release(&list[j]);
			free(list);
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		}
	}
	*out = list;
	*n = rows;
	return 0;
}

int pg_ticket_list(struct tg_store *st, int state, int64_t now, struct tg_ticket **out,
		   size_t *n, struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r = NULL;
	uint64_t expired;
	int rc;

	*out = NULL;
	*n = 0;
	/* the sweep looks before it locks: most lists find nothing due */
	if (pg_ticket_expire(st, now, &expired, err) < 0)
		return -1;
	pp_text(&p, state >= 0 ? tg_ticket_state_name((enum tg_ticket_state)state) : NULL);
	/* COLLATE "C": ids in byte order, as SQLite orders them */
	if (pg_one(st, "SELECT " TICKET_COLUMNS " FROM tickets WHERE $1::text IS NULL OR state = "
		   "$1::text ORDER BY created, id COLLATE \"C\" LIMIT 10000", &p, "tickets", &r,
		   NULL, err) < 0)
		return -1;
	rc = ticket_rows(r, out, n, err);
	PQclear(r);
	return rc;
}

int pg_ticket_find(struct tg_store *st, const char *tool, const char *args_sha256, int64_t now,
		   struct tg_ticket *t, struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r = NULL;

	(void)now; /* a past one expires when it is got (pg_ticket_get): no write here */
	memset(t, 0, sizeof(*t));
	pp_text(&p, tool);
	pp_text(&p, args_sha256);
	/* newest first; of two made in one second, the one still pending */
	if (pg_one(st, "SELECT " TICKET_COLUMNS " FROM tickets WHERE tool = $1 AND args_sha256 = "
		   "$2 ORDER BY created DESC, (state = 'pending') DESC LIMIT 1", &p, "tickets", &r,
		   NULL, err) < 0)
		return -1;
	return first_ticket(r, t, err);
}

int pg_ticket_supersede(struct tg_store *st, const char *tool, const char *args_sha256,
			size_t *n, struct tg_error *err)
{
	struct pg_params p = { 0 };
	uint64_t changed = 0;
	PGconn *c;
	int rc;

	*n = 0;
	c = pg_events_begin(st, err);
	if (!c)
		return -1;
	pp_text(&p, tool);
	pp_text(&p, args_sha256);
	rc = pg_do(c, "UPDATE tickets SET state = 'cancelled' WHERE tool = $1 AND state = "
		   "'pending' AND args_sha256 != $2", &p, "tickets", &changed, err);
	rc = pg_end(c, rc, err);
	pg_give(st, c);
	if (rc == 0)
		*n = (size_t)changed;
	return rc;
}

int pg_tickets_of(struct tg_store *st, const char *principal, uint64_t *n, struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r = NULL;

	*n = 0;
	pp_text(&p, principal);
	if (pg_one(st, "SELECT count(*) FROM tickets WHERE principal = $1", &p, "tickets", &r,
		   NULL, err) < 0)
		return -1;
	if (PQntuples(r) == 1)
		*n = (uint64_t)pg_int(r, 0, 0);
	PQclear(r);
	return 0;
}

int pg_ticket_counts(struct tg_store *st, int64_t now, uint64_t counts[8], struct tg_error *err)
{
	PGresult *r = NULL;
	uint64_t expired;
	int i, row;

	if (pg_ticket_expire(st, now, &expired, err) < 0)
		return -1;
	if (pg_one(st, "SELECT state, count(*) FROM tickets GROUP BY state", NULL, "tickets", &r,
		   NULL, err) < 0)
		return -1;
	for (row = 0; row < PQntuples(r); row++) {
		i = store_ticket_state_of(PQgetvalue(r, row, 0));
		if (i >= 0)
			counts[i] = (uint64_t)pg_int(r, row, 1);
	}
	PQclear(r);
	return 0;
}

int pg_tickets_anomalous(struct tg_store *st, const char *principal, int64_t now, uint64_t *n,
			 struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r = NULL;

	pp_text(&p, principal);
	pp_int(&p, now);
	if (pg_one(st, "SELECT count(*) FROM tickets WHERE principal = $1 AND state = 'pending' "
		   "AND expires > $2 AND findings IS NOT NULL", &p, "tickets", &r, NULL, err) < 0)
		return -1;
	if (PQntuples(r) == 1)
		*n = (uint64_t)pg_int(r, 0, 0);
	PQclear(r);
	return 0;
}

int pg_tickets_pending(struct tg_store *st, const char *principal, int64_t now, uint64_t *n,
		       uint64_t *bytes, struct tg_error *err)
{
	return queue_load(st, NULL, principal, now, n, bytes, err);
}
