/*
 * What the SQLite backend's files share (src/store/sqlite*.c): its state
 * behind st->be, the statement helpers, and the ops each file fills in
 * store_sqlite_ops (sqlite.c). Nothing outside the SQLite backend
 * includes it; the front (store.c) knows only store_int.h.
 */
#ifndef TG_STORE_SQLITE_INT_H
#define TG_STORE_SQLITE_INT_H

#include <pthread.h>
#include "util/sqlite.h"

#include "store/store_int.h"

/* One connection behind a mutex: one store serves every thread. */
struct sq_store {
	sqlite3 *db;
	pthread_mutex_t lock;
};

static inline sqlite3 *sq_db(const struct tg_store *st)
{
	return ((struct sq_store *)st->be)->db;
}

static inline pthread_mutex_t *sq_lock(const struct tg_store *st)
{
	return &((struct sq_store *)st->be)->lock;
}

/* ---- statement helpers (sqlite.c) ---- */

/* err says what failed and SQLite's message (TG_ERR_SYSTEM); -1. */
int store_db_error(struct tg_error *err, sqlite3 *db, const char *what);
/* sql run whole; -1 and err. */
int store_exec(struct tg_store *st, const char *sql, struct tg_error *err);
/* The end of a write transaction: committed if rc is 0, else rolled
 * back; rc, or -1 when the commit failed. */
int store_end_tx(struct tg_store *st, int rc, struct tg_error *err);
/* src (a column's text, or NULL: "") into dst of len bytes, cut. */
void store_copy_text(char *dst, size_t len, const unsigned char *src);
/* sql prepared into *s with ?1, ?2, ?3 bound to k's principal, tool and
 * key; -1 and err. */
int store_prepare_key(struct tg_store *st, const char *sql, sqlite3_stmt **s,
		      const struct tg_idem_key *k, struct tg_error *err);
/* The rows of SELECT sql (?1 bound to state_name, NULL: any) as an array
 * of elements of size bytes, each filled by fill (-1: out of memory) and,
 * on failure, released by release (the caller holds lock). */
int store_select_list(struct tg_store *st, const char *sql, const char *state_name, size_t size,
		      int (*fill)(sqlite3_stmt *, void *), void (*release)(void *), void **out,
		      size_t *n, const char *what, struct tg_error *err);

/* The running record of k, this opening's, becomes done with result (len
 * bytes) (the caller holds the write transaction): TG_ERR_INVALID when
 * this opening no longer holds it (sqlite_idem.c). */
int store_idem_settle(struct tg_store *st, const struct tg_idem_key *k, const char *result,
		      size_t len, struct tg_error *err);

/* ---- tickets, shared with the transactions of idempotency and
 * rollbacks (sqlite_ticket.c) ---- */

/* Move ticket id from state from to state to (the caller holds lock):
 * 0, 1 when it is not in from, -1. */
int store_ticket_move(struct tg_store *st, const char *id, enum tg_ticket_state from,
		      enum tg_ticket_state to, const char *approver, const char *reason,
		      int64_t now, struct tg_error *err);

/* ---- the ops, by file ---- */

/* sqlite_idem.c */
int sq_idem_begin(struct tg_store *st, const struct tg_idem_key *k, int64_t now, int64_t ttl,
		  struct tg_idem_record *rec, struct tg_error *err);
int sq_idem_finish(struct tg_store *st, const struct tg_idem_key *k, const char *result,
		   size_t len, struct tg_error *err);
int sq_idem_reclaim(struct tg_store *st, const struct tg_idem_key *k, const char *expect,
		    size_t len, struct tg_error *err);
int sq_idem_takeover(struct tg_store *st, const struct tg_idem_key *k, char **marker,
		     struct tg_error *err);
int sq_idem_replace(struct tg_store *st, const struct tg_idem_key *k, const char *expect,
		    size_t elen, const char *result, size_t len, struct tg_error *err);
int sq_idem_abandon(struct tg_store *st, const struct tg_idem_key *k, struct tg_error *err);
int sq_idem_finish_call(struct tg_store *st, const struct tg_idem_key *k, const char *result,
			size_t len, const char *ticket, enum tg_ticket_state to,
			struct tg_error *err);

/* sqlite_ticket.c */
int sq_ticket_insert(struct tg_store *st, const struct tg_ticket *t,
		     const struct tg_idem_key *hold, const struct tg_queue_bounds *bounds,
		     struct tg_error *err);
int sq_ticket_get(struct tg_store *st, const char *id, int64_t now, struct tg_ticket *t,
		  struct tg_error *err);
int sq_ticket_move(struct tg_store *st, const char *id, enum tg_ticket_state from,
		   enum tg_ticket_state to, const char *approver, const char *reason, int64_t now,
		   struct tg_error *err);
int sq_tickets_of(struct tg_store *st, const char *principal, uint64_t *n, struct tg_error *err);
int sq_ticket_find(struct tg_store *st, const char *tool, const char *args_sha256, int64_t now,
		   struct tg_ticket *t, struct tg_error *err);
int sq_ticket_supersede(struct tg_store *st, const char *tool, const char *args_sha256,
			size_t *n, struct tg_error *err);
int sq_ticket_list(struct tg_store *st, int state, int64_t now, struct tg_ticket **out,
		   size_t *n, struct tg_error *err);
int sq_ticket_counts(struct tg_store *st, int64_t now, uint64_t counts[8],
		     struct tg_error *err);
int sq_tickets_pending(struct tg_store *st, const char *principal, int64_t now, uint64_t *n,
		       uint64_t *bytes, struct tg_error *err);
int sq_tickets_anomalous(struct tg_store *st, const char *principal, int64_t now, uint64_t *n,
			 struct tg_error *err);

/* sqlite_event.c: ticket events, the expiry sweep, what is pending */
int sq_ticket_events(struct tg_store *st, uint64_t after, size_t max, struct tg_ticket_event *out,
		     size_t *n, uint64_t *last, struct tg_error *err);
int sq_ticket_expire(struct tg_store *st, int64_t now, uint64_t *n, struct tg_error *err);
int sq_webhook_cursor(struct tg_store *st, const char *name, uint64_t *seq, int *found,
		      struct tg_error *err);
int sq_webhook_cursor_set(struct tg_store *st, const char *name, uint64_t seq,
			  struct tg_error *err);
int sq_ticket_pending_stats(struct tg_store *st, int64_t now, struct tg_ticket_pending *out,
			    size_t max, size_t *n, struct tg_error *err);

/* sqlite_saga.c: rollbacks and sagas */
int sq_rollback_begin(struct tg_store *st, const char *call_id, const char *who, int64_t now,
		      struct tg_error *err);
int sq_rollback_end(struct tg_store *st, const char *call_id, int ok, const char *detail,
		    size_t len, int64_t now, struct tg_error *err);
int sq_rollback_list(struct tg_store *st, int state, struct tg_rollback **out, size_t *n,
		     struct tg_error *err);
int sq_saga_begin(struct tg_store *st, const char *id, const struct tg_saga_step *steps,
		  size_t n, int64_t now, struct tg_error *err);
int sq_saga_take(struct tg_store *st, const char *id, struct tg_error *err);
int sq_saga_get(struct tg_store *st, const char *id, struct tg_saga *saga,
		struct tg_error *err);
int sq_saga_step(struct tg_store *st, const char *id, size_t step,
		 enum tg_saga_step_state state, const char *result, struct tg_error *err);
int sq_saga_set(struct tg_store *st, const char *id, enum tg_saga_state state, int64_t now,
		struct tg_error *err);
int sq_saga_orphans(struct tg_store *st, char (**ids)[33], size_t *n, struct tg_error *err);

/* sqlite_upkeep.c: revocations, baselines, the collection */
int sq_revoke(struct tg_store *st, const char *jti, int64_t expires, struct tg_error *err);
int sq_revoked(struct tg_store *st, const char *jti, int64_t now, struct tg_error *err);
int sq_baselines_put(struct tg_store *st, const struct tg_baseline *b, size_t n,
		     struct tg_error *err);
int sq_baselines_load(struct tg_store *st, struct tg_baseline **out, size_t *n,
		      struct tg_error *err);
int sq_gc(struct tg_store *st, int64_t now, int64_t keep, struct tg_store_gc_stats *stats,
	  struct tg_error *err);

/* sqlite_pin.c: upstream pins */
int sq_pin_get(struct tg_store *st, const char *upstream, const char *tool, struct tg_pin *pin,
	       struct tg_error *err);
int sq_pin_set(struct tg_store *st, const struct tg_pin *pin, struct tg_error *err);
int sq_pin_delete(struct tg_store *st, const char *upstream, const char *tool,
		  struct tg_error *err);
int sq_pin_list(struct tg_store *st, const char *upstream, struct tg_pin **out, size_t *n,
		struct tg_error *err);
int sq_skill_pin_get(struct tg_store *st, const char *name, struct tg_skill_pin *pin,
		     struct tg_error *err);
int sq_skill_pin_set(struct tg_store *st, const struct tg_skill_pin *pin, struct tg_error *err);

#endif
