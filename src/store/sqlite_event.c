/*
 * The SQLite backend's ticket events (docs/STORE.md, "Ticket events"):
 * the log a ticket's every move leaves, read after a sequence number;
 * the sweep that expires pending tickets past their expiry; what is
 * pending, by tool; each webhook's cursor in the events (migration 11). The rows are written by the triggers of migration 10
 * (sqlite.c), in the statement that moves the ticket, so no path and no
 * process can move one without its event.
 *
 * Must never: write an event itself (the triggers do), or read without
 * a bound.
 */
#include <pthread.h>
#include "util/sqlite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite_int.h"

/* The highest sequence number ever given (0: none), the caller holding
 * lock: sqlite_sequence keeps it once its rows are collected. */
static int last_seq(struct tg_store *st, uint64_t *last, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	*last = 0;
	if (sqlite3_prepare_v2(sq_db(st), "SELECT seq FROM sqlite_sequence WHERE name = "
			       "'ticket_events'", -1, &s, NULL) != SQLITE_OK)
		return store_db_error(err, sq_db(st), "ticket events");
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*last = (uint64_t)sqlite3_column_int64(s, 0);
	rc = rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : store_db_error(err, sq_db(st),
									 "ticket events");
	sqlite3_finalize(s);
	return rc;
}

static void event_row(sqlite3_stmt *s, struct tg_ticket_event *e)
{
	const char *state = (const char *)sqlite3_column_text(s, 2);
	int i;

	memset(e, 0, sizeof(*e));
	e->seq = (uint64_t)sqlite3_column_int64(s, 0);
	store_copy_text(e->ticket, sizeof(e->ticket), sqlite3_column_text(s, 1));
	i = store_ticket_state_of(state);
	e->state = i < 0 ? TG_TICKET_ANY : (enum tg_ticket_state)i;
	store_copy_text(e->tool, sizeof(e->tool), sqlite3_column_text(s, 3));
	store_copy_text(e->principal, sizeof(e->principal), sqlite3_column_text(s, 4));
	store_copy_text(e->approver, sizeof(e->approver), sqlite3_column_text(s, 5));
	e->created = sqlite3_column_int64(s, 6);
	e->decided = sqlite3_column_int64(s, 7);
	e->expires = sqlite3_column_int64(s, 8);
	e->at = sqlite3_column_int64(s, 9);
}

int sq_ticket_events(struct tg_store *st, uint64_t after, size_t max, struct tg_ticket_event *out,
		     size_t *n, uint64_t *last, struct tg_error *err)
{
	sqlite3_stmt *s = NULL;
	int rc, step = SQLITE_DONE;

	*n = 0;
	pthread_mutex_lock(sq_lock(st));
	/* one read transaction: the events and the last number of one state */
	rc = store_exec(st, "BEGIN", err);
	if (rc == 0)
		rc = last_seq(st, last, err);
	if (rc == 0 && max && sqlite3_prepare_v2(sq_db(st), "SELECT seq, ticket, state, tool, "
						 "principal, approver, created, decided, expires, "
						 "at FROM ticket_events WHERE seq > ?1 ORDER BY seq "
						 "LIMIT ?2", -1, &s, NULL) != SQLITE_OK)
		rc = store_db_error(err, sq_db(st), "ticket events");
	if (rc == 0 && s) {
		sqlite3_bind_int64(s, 1, (sqlite3_int64)after);
		sqlite3_bind_int64(s, 2, (sqlite3_int64)max);
		while (*n < max && (step = sqlite3_step(s)) == SQLITE_ROW)
			event_row(s, &out[(*n)++]);
		if (*n < max && step != SQLITE_DONE)
			rc = store_db_error(err, sq_db(st), "ticket events");
	}
	sqlite3_finalize(s);
	if (sqlite3_get_autocommit(sq_db(st)) == 0)
		sqlite3_exec(sq_db(st), "COMMIT", NULL, NULL, NULL);
	pthread_mutex_unlock(sq_lock(st));
	if (rc < 0)
		*n = 0;
	return rc;
}

int sq_ticket_expire(struct tg_store *st, int64_t now, uint64_t *n, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	*n = 0;
	pthread_mutex_lock(sq_lock(st));
	rc = sqlite3_prepare_v2(sq_db(st), "UPDATE tickets SET state = 'expired', decided = ?1 WHERE "
				"state = 'pending' AND expires <= ?1", -1, &s, NULL) == SQLITE_OK
		     ? 0 : store_db_error(err, sq_db(st), "tickets");
	if (rc == 0) {
		sqlite3_bind_int64(s, 1, now);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, sq_db(st), "tickets");
		if (rc == 0)
			*n = (uint64_t)sqlite3_changes(sq_db(st));
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_ticket_pending_stats(struct tg_store *st, int64_t now, struct tg_ticket_pending *out,
			    size_t max, size_t *n, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc, step = SQLITE_DONE;

	*n = 0;
	pthread_mutex_lock(sq_lock(st));
	/* the index tickets_state (state, created) serves it */
	rc = sqlite3_prepare_v2(sq_db(st), "SELECT tool, count(*), min(created) FROM tickets WHERE "
				"state = 'pending' AND expires > ?1 GROUP BY tool ORDER BY count(*) "
				"DESC, tool LIMIT ?2", -1, &s, NULL) == SQLITE_OK
		     ? 0 : store_db_error(err, sq_db(st), "tickets");
	if (rc == 0) {
		sqlite3_bind_int64(s, 1, now);
		sqlite3_bind_int64(s, 2, (sqlite3_int64)max);
		while (*n < max && (step = sqlite3_step(s)) == SQLITE_ROW) {
			store_copy_text(out[*n].tool, sizeof(out[*n].tool), sqlite3_column_text(s, 0));
			out[*n].n = (uint64_t)sqlite3_column_int64(s, 1);
			out[*n].oldest = sqlite3_column_int64(s, 2);
			(*n)++;
		}
		if (*n < max && step != SQLITE_DONE)
			rc = store_db_error(err, sq_db(st), "tickets");
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_webhook_cursor(struct tg_store *st, const char *name, uint64_t *seq, int *found,
		      struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc, step;

	pthread_mutex_lock(sq_lock(st));
	rc = sqlite3_prepare_v2(sq_db(st), "SELECT seq FROM webhook_cursors WHERE name = ?1", -1,
				&s, NULL) == SQLITE_OK ? 0 : store_db_error(err, sq_db(st),
									 "webhook cursors");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
		step = sqlite3_step(s);
		if (step == SQLITE_ROW) {
			*seq = (uint64_t)sqlite3_column_int64(s, 0);
			*found = 1;
		} else if (step != SQLITE_DONE) {
			rc = store_db_error(err, sq_db(st), "webhook cursors");
		}
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_webhook_cursor_set(struct tg_store *st, const char *name, uint64_t seq,
			  struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = sqlite3_prepare_v2(sq_db(st), "INSERT INTO webhook_cursors (name, seq) VALUES (?1, ?2) "
				"ON CONFLICT (name) DO UPDATE SET seq = excluded.seq", -1, &s,
				NULL) == SQLITE_OK ? 0 : store_db_error(err, sq_db(st),
									"webhook cursors");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, (sqlite3_int64)seq);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, sq_db(st),
									 "webhook cursors");
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}
