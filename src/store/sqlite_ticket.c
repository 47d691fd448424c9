/*
 * The SQLite backend's approval tickets (docs/STORE.md, "Approval
 * tickets"): the rows, their moves as compare-and-set updates (two
 * approvers cannot both decide), expiry on read (fail closed), the lists
 * and counts, and each principal's load on the approvers' queue. A new
 * held call's ticket and its key's answer are written in one transaction.
 *
 * Must never: decide who may move a ticket (the front and the caller
 * do), or make a ticket's id (the front does).
 */
#include <pthread.h>
#include "util/sqlite.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/sqlite_int.h"

/* Fill t from a row of SELECT TICKET_COLUMNS. */
#define TICKET_COLUMNS "id, principal, tool, args_sha256, preview, state, reason, approver, " \
	"created, decided, expires, arguments, covers, findings"

static int ticket_row(sqlite3_stmt *s, struct tg_ticket *t)
{
	const unsigned char *preview = sqlite3_column_text(s, 4), *reason = sqlite3_column_text(s, 6);
	const unsigned char *args = sqlite3_column_text(s, 11), *covers = sqlite3_column_text(s, 12);
	const unsigned char *findings = sqlite3_column_text(s, 13);

	memset(t, 0, sizeof(*t));
	store_copy_text(t->id, sizeof(t->id), sqlite3_column_text(s, 0));
	store_copy_text(t->principal, sizeof(t->principal), sqlite3_column_text(s, 1));
	store_copy_text(t->tool, sizeof(t->tool), sqlite3_column_text(s, 2));
	store_copy_text(t->args_sha256, sizeof(t->args_sha256), sqlite3_column_text(s, 3));
	t->state = (enum tg_ticket_state)store_ticket_state_of((const char *)sqlite3_column_text(s, 5));
	store_copy_text(t->approver, sizeof(t->approver), sqlite3_column_text(s, 7));
	t->created = sqlite3_column_int64(s, 8);
	t->decided = sqlite3_column_int64(s, 9);
	t->expires = sqlite3_column_int64(s, 10);
	t->preview = preview ? strdup((const char *)preview) : NULL;
	t->reason = reason ? strdup((const char *)reason) : NULL;
	t->arguments = args ? strdup((const char *)args) : NULL;
	t->covers = covers ? strdup((const char *)covers) : NULL;
	t->findings = findings ? strdup((const char *)findings) : NULL;
	return (preview && !t->preview) || (reason && !t->reason) || (args && !t->arguments) ||
	       (covers && !t->covers) || (findings && !t->findings) ? -1 : 0;
}

/* A pending ticket past its expiry is expired, fail closed (the caller
 * holds lock). */
static int expire_tickets(struct tg_store *st, int64_t now, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(sq_db(st), "UPDATE tickets SET state = 'expired', decided = ?1 WHERE "
			       "state = 'pending' AND expires <= ?1", -1, &s, NULL) != SQLITE_OK)
		return store_db_error(err, sq_db(st), "tickets");
	sqlite3_bind_int64(s, 1, now);
	rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, sq_db(st), "tickets");
	sqlite3_finalize(s);
	return rc;
}

/* principal's pending tickets at now, and the bytes its tickets that did
 * not run hold (the caller holds the lock). */
static int queue_load(struct tg_store *st, const char *principal, int64_t now, uint64_t *n,
		      uint64_t *bytes, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	*n = *bytes = 0;
	rc = sqlite3_prepare_v2(sq_db(st), "SELECT coalesce(sum(state = 'pending' AND expires > ?2), "
				"0), coalesce(sum(length(CAST(coalesce(arguments, '') AS BLOB)) + "
				"length(CAST(coalesce(preview, '') AS BLOB)) + length(CAST(coalesce("
				"findings, '') AS BLOB))), 0) FROM tickets WHERE principal = ?1 AND "
				"state IN ('pending', 'rejected', 'cancelled', 'expired')", -1, &s,
				NULL) == SQLITE_OK ? 0 : store_db_error(err, sq_db(st), "tickets");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, principal, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, now);
		if (sqlite3_step(s) == SQLITE_ROW) {
			*n = (uint64_t)sqlite3_column_int64(s, 0);
			*bytes = (uint64_t)sqlite3_column_int64(s, 1);
		} else {
			rc = store_db_error(err, sq_db(st), "tickets");
		}
		sqlite3_finalize(s);
	}
	return rc;
}

/* 1 if req's principal's queue has no room for req's ticket within
 * bounds (the caller holds the write transaction), 0 if it has, -1. */
static int queue_full(struct tg_store *st, const struct tg_ticket *req, int64_t now,
		      const struct tg_queue_bounds *bounds, struct tg_error *err)
{
	uint64_t n, bytes, add = (req->arguments ? strlen(req->arguments) : 0) +
				 (req->preview ? strlen(req->preview) : 0) +
				 (req->findings ? strlen(req->findings) : 0);

	if (queue_load(st, req->principal, now, &n, &bytes, err) < 0)
		return -1;
	return n >= bounds->max_pending || bytes + add > bounds->max_bytes;
}

/* A pending ticket t; with hold, the key (running, this opening's) then
 * answers {"ticket": ID}: both in one transaction. */
int sq_ticket_insert(struct tg_store *st, const struct tg_ticket *t,
		     const struct tg_idem_key *hold, const struct tg_queue_bounds *bounds,
		     struct tg_error *err)
{
	char marker[64];
	sqlite3_stmt *s;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	if (hold && store_exec(st, "BEGIN IMMEDIATE", err) < 0) {
		pthread_mutex_unlock(sq_lock(st));
		return -1;
	}
	/* the principal's queue, looked at where nobody else can add to it */
	rc = hold && bounds ? queue_full(st, t, t->created, bounds, err) : 0;
	if (rc != 0) {
		sqlite3_exec(sq_db(st), "ROLLBACK", NULL, NULL, NULL);
		pthread_mutex_unlock(sq_lock(st));
		return rc;
	}
	rc = sqlite3_prepare_v2(sq_db(st), "INSERT INTO tickets (" TICKET_COLUMNS ") VALUES (?1, "
				"?2, ?3, ?4, ?5, 'pending', NULL, NULL, ?6, NULL, ?7, ?8, ?9, ?10)", -1,
				&s, NULL) == SQLITE_OK ? 0 : store_db_error(err, sq_db(st), "ticket");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, t->id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, t->principal, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, t->tool, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 4, t->args_sha256, -1, SQLITE_STATIC);
		if (t->preview)
			sqlite3_bind_text(s, 5, t->preview, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 6, t->created);
		sqlite3_bind_int64(s, 7, t->expires);
		if (t->arguments)
			sqlite3_bind_text(s, 8, t->arguments, -1, SQLITE_STATIC);
		if (t->covers)
			sqlite3_bind_text(s, 9, t->covers, -1, SQLITE_STATIC);
		if (t->findings)
			sqlite3_bind_text(s, 10, t->findings, -1, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, sq_db(st), "ticket");
		sqlite3_finalize(s);
	}
	if (hold) {
		snprintf(marker, sizeof(marker), "{\"ticket\":\"%s\"}", t->id);
		if (rc == 0)
			rc = store_idem_settle(st, hold, marker, strlen(marker), err);
		rc = store_end_tx(st, rc, err);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

/* Ticket id as stored, into t (the caller holds lock). */
static int ticket_read(struct tg_store *st, const char *id, struct tg_ticket *t,
		       struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	memset(t, 0, sizeof(*t));
	if (sqlite3_prepare_v2(sq_db(st), "SELECT " TICKET_COLUMNS " FROM tickets WHERE id = ?1", -1,
			       &s, NULL) != SQLITE_OK)
		return store_db_error(err, sq_db(st), "ticket");
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	switch (sqlite3_step(s)) {
	case SQLITE_ROW:
		rc = ticket_row(s, t) < 0 ? tg_error_set(err, TG_ERR_NOMEM, "out of memory") : 0;
		break;
	case SQLITE_DONE:
		rc = tg_error_set(err, TG_ERR_INVALID, "ticket %s: no such ticket", id);
		break;
	default:
		rc = store_db_error(err, sq_db(st), "ticket");
	}
	sqlite3_finalize(s);
	if (rc < 0)
		tg_ticket_release(t);
	return rc;
}

int sq_ticket_get(struct tg_store *st, const char *id, int64_t now, struct tg_ticket *t,
		  struct tg_error *err)
{
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = ticket_read(st, id, t, err);
	/* read, and written only when it expires now: an approval wait
	 * looks at its ticket every 100 ms, and must not take the write lock
	 * each time */
	if (rc == 0 && t->state == TG_TICKET_PENDING && t->expires <= now) {
		rc = store_ticket_move(st, id, TG_TICKET_PENDING, TG_TICKET_EXPIRED, NULL, NULL, now,
				       err);
		tg_ticket_release(t);
		if (rc >= 0)
			rc = ticket_read(st, id, t, err); /* expired, or decided meanwhile */
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int store_ticket_move(struct tg_store *st, const char *id, enum tg_ticket_state from,
		      enum tg_ticket_state to, const char *approver, const char *reason,
		      int64_t now, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(sq_db(st), "UPDATE tickets SET state = ?2, approver = coalesce(?3, "
			       "approver), reason = coalesce(?4, reason), decided = coalesce(?5, "
			       "decided) WHERE id = ?1 AND state = ?6", -1, &s, NULL) != SQLITE_OK)
		return store_db_error(err, sq_db(st), "ticket");
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, tg_ticket_state_name(to), -1, SQLITE_STATIC);
	if (approver)
		sqlite3_bind_text(s, 3, approver, -1, SQLITE_STATIC);
	if (reason)
		sqlite3_bind_text(s, 4, reason, -1, SQLITE_STATIC);
	if (now)
		sqlite3_bind_int64(s, 5, now);
	sqlite3_bind_text(s, 6, tg_ticket_state_name(from), -1, SQLITE_STATIC);
	rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, sq_db(st), "ticket");
	if (rc == 0 && sqlite3_changes(sq_db(st)) != 1)
		rc = 1; /* not in state from */
	sqlite3_finalize(s);
	return rc;
}

int sq_ticket_move(struct tg_store *st, const char *id, enum tg_ticket_state from,
		   enum tg_ticket_state to, const char *approver, const char *reason, int64_t now,
		   struct tg_error *err)
{
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = store_ticket_move(st, id, from, to, approver, reason, now, err);
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

static int fill_ticket(sqlite3_stmt *s, void *t)
{
	return ticket_row(s, t);
}

static void release_ticket(void *t)
{
	tg_ticket_release(t);
}

int sq_ticket_list(struct tg_store *st, int state, int64_t now, struct tg_ticket **out,
		   size_t *n, struct tg_error *err)
{
	void *list = NULL;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = expire_tickets(st, now, err);
	if (rc == 0)
		rc = store_select_list(st, "SELECT " TICKET_COLUMNS " FROM tickets WHERE ?1 IS NULL "
				       "OR state = ?1 ORDER BY created, id LIMIT 10000",
				       state >= 0 ? tg_ticket_state_name((enum tg_ticket_state)state)
						  : NULL, sizeof(**out), fill_ticket, release_ticket,
				       &list, n, "tickets", err);
	pthread_mutex_unlock(sq_lock(st));
	*out = list;
	return rc;
}

int sq_ticket_find(struct tg_store *st, const char *tool, const char *args_sha256, int64_t now,
		   struct tg_ticket *t, struct tg_error *err)
{
	sqlite3_stmt *s = NULL;
	int rc;

	(void)now; /* a past one expires when it is got (sq_ticket_get): no write here */
	memset(t, 0, sizeof(*t));
	rc = 0;
	pthread_mutex_lock(sq_lock(st));
	/* newest first; of two made in one second, the one still pending */
	if (sqlite3_prepare_v2(sq_db(st), "SELECT " TICKET_COLUMNS " FROM tickets WHERE "
					  "tool = ?1 AND args_sha256 = ?2 ORDER BY created DESC, "
					  "state = 'pending' DESC LIMIT 1", -1, &s,
					  NULL) != SQLITE_OK)
		rc = store_db_error(err, sq_db(st), "tickets");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, tool, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, args_sha256, -1, SQLITE_STATIC);
		switch (sqlite3_step(s)) {
		case SQLITE_ROW:
			rc = ticket_row(s, t) < 0 ? tg_error_set(err, TG_ERR_NOMEM, "out of memory")
						  : 0;
			break;
		case SQLITE_DONE:
			rc = 1;
			break;
		default:
			rc = store_db_error(err, sq_db(st), "tickets");
		}
	}
	sqlite3_finalize(s);
	pthread_mutex_unlock(sq_lock(st));
	if (rc < 0)
		tg_ticket_release(t);
	return rc;
}

int sq_ticket_supersede(struct tg_store *st, const char *tool, const char *args_sha256,
			size_t *n, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	*n = 0;
	pthread_mutex_lock(sq_lock(st));
	if (sqlite3_prepare_v2(sq_db(st), "UPDATE tickets SET state = 'cancelled' WHERE tool = ?1 "
			       "AND state = 'pending' AND args_sha256 != ?2", -1, &s,
			       NULL) != SQLITE_OK) {
		rc = store_db_error(err, sq_db(st), "tickets");
	} else {
		sqlite3_bind_text(s, 1, tool, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, args_sha256, -1, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, sq_db(st), "tickets");
		if (rc == 0)
			*n = (size_t)sqlite3_changes(sq_db(st));
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_tickets_of(struct tg_store *st, const char *principal, uint64_t *n, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	*n = 0;
	pthread_mutex_lock(sq_lock(st));
	if (sqlite3_prepare_v2(sq_db(st), "SELECT count(*) FROM tickets WHERE principal = ?1", -1,
			       &s, NULL) != SQLITE_OK) {
		rc = store_db_error(err, sq_db(st), "tickets");
	} else {
		sqlite3_bind_text(s, 1, principal, -1, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_ROW ? 0 : store_db_error(err, sq_db(st), "tickets");
		if (rc == 0)
			*n = (uint64_t)sqlite3_column_int64(s, 0);
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_ticket_counts(struct tg_store *st, int64_t now, uint64_t counts[8], struct tg_error *err)
{
	sqlite3_stmt *s = NULL;
	int rc, i;

	pthread_mutex_lock(sq_lock(st));
	rc = expire_tickets(st, now, err);
	if (rc == 0 && sqlite3_prepare_v2(sq_db(st), "SELECT state, count(*) FROM tickets GROUP BY "
					  "state", -1, &s, NULL) != SQLITE_OK)
		rc = store_db_error(err, sq_db(st), "tickets");
	while (rc == 0 && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		i = store_ticket_state_of((const char *)sqlite3_column_text(s, 0));
		if (i >= 0)
			counts[i] = (uint64_t)sqlite3_column_int64(s, 1);
		rc = 0;
	}
	if (rc == SQLITE_DONE)
		rc = 0;
	else if (rc > 0)
		rc = store_db_error(err, sq_db(st), "tickets");
	sqlite3_finalize(s);
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_tickets_anomalous(struct tg_store *st, const char *principal, int64_t now, uint64_t *n,
			 struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = sqlite3_prepare_v2(sq_db(st), "SELECT count(*) FROM tickets WHERE principal = ?1 AND "
				"state = 'pending' AND expires > ?2 AND findings IS NOT NULL", -1, &s,
				NULL) == SQLITE_OK ? 0 : store_db_error(err, sq_db(st), "tickets");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, principal, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, now);
		if (sqlite3_step(s) == SQLITE_ROW)
			*n = (uint64_t)sqlite3_column_int64(s, 0);
		else
			rc = store_db_error(err, sq_db(st), "tickets");
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_tickets_pending(struct tg_store *st, const char *principal, int64_t now, uint64_t *n,
		       uint64_t *bytes, struct tg_error *err)
{
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = queue_load(st, principal, now, n, bytes, err);
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}
