/*
 * The PostgreSQL backend's ticket events (docs/STORE.md, "Ticket events",
 * "PostgreSQL"): the port of sqlite_event.c. The log a ticket's every
 * move leaves, read after a sequence number; the sweep that expires
 * pending tickets past their expiry; what is pending, by tool; each
 * webhook's cursor in the events. The rows are written by the trigger of
 * pg_schema.h, in the statement that moves the ticket, and numbered from
 * the one row of ticket_event_counter, whose lock makes them commit in the
 * order of their numbers: no path and no process moves a ticket without
 * its event, and a reader after number N never later finds one below it.
 *
 * Must never: write an event itself (the trigger does), or read without
 * a bound.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/pg_int.h"

static void event_row(const PGresult *r, int row, struct tg_ticket_event *e)
{
	const char *state = PQgetvalue(r, row, 3);
	int i;

	memset(e, 0, sizeof(*e));
	e->seq = (uint64_t)pg_int(r, row, 1);
	pg_copy(e->ticket, sizeof(e->ticket), r, row, 2);
	i = store_ticket_state_of(state);
	e->state = i < 0 ? TG_TICKET_ANY : (enum tg_ticket_state)i;
	pg_copy(e->tool, sizeof(e->tool), r, row, 4);
	pg_copy(e->principal, sizeof(e->principal), r, row, 5);
	pg_copy(e->approver, sizeof(e->approver), r, row, 6);
	e->created = pg_int(r, row, 7);
	e->decided = pg_int(r, row, 8);
	e->expires = pg_int(r, row, 9);
	e->at = pg_int(r, row, 10);
}

int pg_ticket_events(struct tg_store *st, uint64_t after, size_t max, struct tg_ticket_event *out,
		     size_t *n, uint64_t *last, struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r = NULL;
	int row;

	*n = 0;
	*last = 0;
	pp_int(&p, (int64_t)after);
	pp_int(&p, (int64_t)max);
	/* one statement, so one snapshot: the counter's number and the
	 * events it covers. The outer join gives the counter's row alone
	 * when no event follows after (or max is 0: only *last is read). */
	if (pg_one(st, "SELECT c.n, e.seq, e.ticket, e.state, e.tool, e.principal, e.approver, "
		   "e.created, e.decided, e.expires, e.at FROM ticket_event_counter c LEFT JOIN "
		   "LATERAL (SELECT * FROM ticket_events WHERE seq > $1 ORDER BY seq LIMIT $2) e "
		   "ON true ORDER BY e.seq", &p, "ticket events", &r, NULL, err) < 0)
		return -1;
	for (row = 0; row < PQntuples(r); row++) {
		if (row == 0)
			*last = (uint64_t)pg_int(r, 0, 0);
		if (!PQgetisnull(r, row, 1) && *n < max)
			event_row(r, row, &out[(*n)++]);
	}
	PQclear(r);
	return 0;
}

int pg_ticket_expire(struct tg_store *st, int64_t now, uint64_t *n, struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r = NULL;
	uint64_t changed = 0;
	PGconn *c;
	int rc, due;

	*n = 0;
	pp_int(&p, now);
	/* looked at before the events' lock is taken: readers sweep before
	 * they list, and most find nothing due */
	if (pg_one(st, "SELECT (EXISTS (SELECT 1 FROM tickets WHERE state = 'pending' AND "
		   "expires <= $1))::int", &p, "tickets", &r, NULL, err) < 0)
		return -1;
	due = PQntuples(r) == 1 && pg_int(r, 0, 0) != 0;
	PQclear(r);
	if (!due)
		return 0;
	c = pg_events_begin(st, err);
	if (!c)
		return -1;
	rc = pg_do(c, "UPDATE tickets SET state = 'expired', decided = $1 WHERE state = "
		   "'pending' AND expires <= $1", &p, "tickets", &changed, err);
	rc = pg_end(c, rc, err);
	pg_give(st, c);
	if (rc == 0)
		*n = changed;
	return rc;
}

int pg_ticket_pending_stats(struct tg_store *st, int64_t now, struct tg_ticket_pending *out,
			    size_t max, size_t *n, struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r = NULL;
	int row;

	*n = 0;
	pp_int(&p, now);
	pp_int(&p, (int64_t)max);
	/* the index tickets_state (state, created) serves it; COLLATE "C":
	 * tools of equal count in byte order, as SQLite orders them */
	if (pg_one(st, "SELECT tool, count(*), min(created) FROM tickets WHERE state = 'pending' "
		   "AND expires > $1 GROUP BY tool ORDER BY count(*) DESC, tool COLLATE \"C\" "
		   "LIMIT $2", &p, "tickets", &r, NULL, err) < 0)
		return -1;
	for (row = 0; row < PQntuples(r) && *n < max; row++) {
		pg_copy(out[*n].tool, sizeof(out[*n].tool), r, row, 0);
		out[*n].n = (uint64_t)pg_int(r, row, 1);
		out[*n].oldest = pg_int(r, row, 2);
		(*n)++;
	}
	PQclear(r);
	return 0;
}

int pg_webhook_cursor(struct tg_store *st, const char *name, uint64_t *seq, int *found,
		      struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r = NULL;

	pp_text(&p, name);
	if (pg_one(st, "SELECT seq FROM webhook_cursors WHERE name = $1", &p, "webhook cursors",
		   &r, NULL, err) < 0)
		return -1;
	if (PQntuples(r) == 1) {
		*seq = (uint64_t)pg_int(r, 0, 0);
		*found = 1;
	}
	PQclear(r);
	return 0;
}

int pg_webhook_cursor_set(struct tg_store *st, const char *name, uint64_t seq,
			  struct tg_error *err)
{
	struct pg_params p = { 0 };

	pp_text(&p, name);
	pp_int(&p, (int64_t)seq);
	return pg_one(st, "INSERT INTO webhook_cursors (name, seq) VALUES ($1, $2) ON CONFLICT "
		      "(name) DO UPDATE SET seq = greatest(webhook_cursors.seq, excluded.seq)", &p, "webhook cursors", NULL, NULL,
		      err);
}
