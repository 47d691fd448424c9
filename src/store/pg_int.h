/*
 * What the PostgreSQL backend's files share (src/store/pg*.c): its state
 * behind st->be (a small pool of connections, and the connection that
 * holds this opening's liveness lock), the query helpers, and the ops
 * each file fills in store_pg_ops (pg.c). Nothing outside the backend
 * includes it; the front (store.c) knows only store_int.h.
 *
 * How an op is written here (docs/STORE.md, "PostgreSQL"):
 * - one statement where one will do, in autocommit: pg_one();
 * - a read-then-write in a transaction on one connection (pg_take,
 *   pg_begin, ..., pg_end, pg_give), where what SQLite's BEGIN IMMEDIATE
 *   made safe is made safe by the statement itself (a compare-and-set
 *   UPDATE ... WHERE state = ..., INSERT ... ON CONFLICT), by a row lock
 *   (SELECT ... FOR UPDATE) or by a named transaction lock (pg_lock);
 * - every text is a parameter, never spliced into the SQL.
 */
#ifndef TG_STORE_PG_INT_H
#define TG_STORE_PG_INT_H

#include <pthread.h>
#include <stdint.h>

#include "store/store_int.h"
#include "util/pq.h"

#define PG_POOL 4        /* connections an opening keeps for its ops */
#define PG_PARAMS 16     /* parameters a statement takes, at most */
#define PG_ROLES 4       /* roles an opening may lead (pg_lead.c) */

struct pg_store {
	char *conninfo;            /* as given (a postgres:// URL or key=value) */
	pthread_mutex_t lock;      /* the pool's */
	pthread_cond_t freed;      /* a connection was given back */
	PGconn *conns[PG_POOL];    /* NULL: not connected */
	unsigned char busy[PG_POOL];
	int64_t used[PG_POOL];     /* when each was last given back, ms (monotonic) */
	int64_t retry_at;          /* no new connection before, ms: the backoff */
	unsigned backoff;          /* ms, doubling to 5 s */
	char why[256];             /* the last connection's failure */
	/* liveness: this opening's advisory lock, held on a connection of its
	 * own for its life, looked after by the watch thread */
	PGconn *alive;
	int64_t lock_key;
	int locked;                /* held (read under lock) */
	int stop;
	/* the database's clock, read by the watch: its time, ms, and this
	 * host's monotonic clock when it was read (under lock; 0: not yet) */
	int64_t db_ms, db_mono;
	pthread_cond_t tick;
	pthread_t watch;
	int watching;
	/* the revocations as last read whole (pg_revoke.c), for a token's
	 * check while the database cannot be reached */
	pthread_mutex_t rv_lock;
	struct pg_revoked *rv;
	/* claims this opening could not let go of (pg_loose.c), under lock */
	struct pg_loose *loose;
	size_t nloose;
	char instance[33];         /* st->instance, for the watch */
	/* the roles asked for (pg_lead), and whether the liveness session
	 * holds each (under lock; "" names none) */
	struct {
		char name[32];
		int held;
	} roles[PG_ROLES];
	/* counted among the replicas serving calls (pg_replica_join): asked,
	 * and held by the liveness session (under lock) */
	int join, joined;
};

/* pg_lead.c: the roles asked for taken on c, the liveness connection
 * (fresh: a new one, which holds none yet); all let go (its session
 * lost). */
void pg_lead_refresh(struct pg_store *q, PGconn *c, int fresh);
void pg_lead_lost(struct pg_store *q);
int pg_lead(struct tg_store *st, const char *role, struct tg_error *err);
int pg_replica_join(struct tg_store *st, struct tg_error *err);
int pg_replicas(struct tg_store *st, unsigned *n, struct tg_error *err);

/* pg_loose.c: k, left running under this opening (an abandon that failed;
 * with nonce, a claim whose answer was lost), kept to be deleted; the
 * watch's sweep of them on c; the list freed. */
void pg_loose_add(struct pg_store *q, const struct tg_idem_key *k, int64_t nonce);
/* pg_loose.c: a finish pg_idem_finish_call could not make (the database
 * away), kept to be made by the watch once it answers. */
void pg_loose_finish(struct pg_store *q, const struct tg_idem_key *k, const char *result,
		     size_t len, const char *ticket, enum tg_ticket_state to);
void pg_loose_sweep(struct pg_store *q, PGconn *c);
/* pg_loose.c: k's kept entry dropped (its call settled it itself); k's
 * kept entry, if any, settled now on c, before this opening claims k again
 * (a kept abandon made later would delete the new claim's row): 0 none or
 * settled, -1 it could not be (the database away). */
void pg_loose_forget(struct pg_store *q, const struct tg_idem_key *k);
int pg_loose_settle_key(struct pg_store *q, PGconn *c, const struct tg_idem_key *k);
void pg_loose_free(struct pg_store *q);

/* pg_revoke.c: the set pg_store.rv points to, released. */
void pg_revoked_free(struct pg_revoked *rv);
/* pg_revoke.c: the revocations read whole on c (the watch's connection)
 * into pg_store.rv: 0, or -1 (the list kept is the one before). */
int pg_revoked_refresh(struct pg_store *q, PGconn *c, int64_t now);

static inline struct pg_store *pg_be(const struct tg_store *st)
{
	return st->be;
}

/* A statement's parameters, each text (NULL: SQL NULL), bytes or a
 * number, in order: $1, $2, ... */
struct pg_params {
	int n;
	const char *v[PG_PARAMS];
	int len[PG_PARAMS];
	int fmt[PG_PARAMS];
	char num[PG_PARAMS][24];
};

void pp_text(struct pg_params *p, const char *s);
void pp_bytes(struct pg_params *p, const void *b, size_t len);
void pp_int(struct pg_params *p, int64_t v);
void pp_double(struct pg_params *p, double v);

/* A connection of the pool, connected (again, with backoff, when it was
 * lost), waited for at most 5 s when all are busy: or NULL and err
 * (TG_ERR_SYSTEM, retryable: the database cannot be reached). */
PGconn *pg_take(struct tg_store *st, struct tg_error *err);
/* c given back; closed when it is broken or inside a transaction. */
void pg_give(struct tg_store *st, PGconn *c);

/* sql run on c with p (NULL: none): its result (rows or none), or NULL
 * and err: TG_ERR_SYSTEM with what and the server's message. The
 * result is the caller's to PQclear. */
PGresult *pg_run(PGconn *c, const char *sql, const struct pg_params *p, const char *what,
		 struct tg_error *err);
/* Statements without parameters, several at once (PQexecParams takes
 * one), on c: 0, or -1 and err. */
int pg_script(PGconn *c, const char *sql, const char *what, struct tg_error *err);
/* pg_run for a statement without rows: 0 and OUT *changed (NULL: not
 * asked) the rows it changed, or -1 and err. */
int pg_do(PGconn *c, const char *sql, const struct pg_params *p, const char *what,
	  uint64_t *changed, struct tg_error *err);
/* One statement in autocommit on a connection of the pool: OUT *res (NULL:
 * not wanted; else the caller's to PQclear) and *changed (NULL: not
 * asked). 0, or -1 and err. */
int pg_one(struct tg_store *st, const char *sql, const struct pg_params *p, const char *what,
	   PGresult **res, uint64_t *changed, struct tg_error *err);

/* What every claim for this opening starts with: pg_claim_ok, a
 * connection of the pool, BEGIN; or NULL and err (nothing taken). */
PGconn *pg_claim_begin(struct tg_store *st, struct tg_error *err);
/* BEGIN (READ COMMITTED) on c: 0, or -1 and err. */
int pg_begin(PGconn *c, struct tg_error *err);
/* The end of the transaction on c: committed when rc is 0, else rolled
 * back; rc, or -1 when the commit failed. */
int pg_end(PGconn *c, int rc, struct tg_error *err);
/* The transaction lock named name (held to its end): what makes a read
 * and the write it decides one step, as BEGIN IMMEDIATE does for SQLite.
 * 0, or -1 and err. */
int pg_lock(PGconn *c, const char *name, struct tg_error *err);

/* The row that numbers ticket events, locked to the end of the
 * transaction on c. Every transaction that moves or makes a ticket takes
 * it first, before any ticket's row: the trigger takes it anyway, and
 * taking it first keeps two transactions from waiting on each other (a
 * sweep over many tickets against one move). 0, or -1 and err. */
int pg_events_lock(PGconn *c, struct tg_error *err);

/* What every transaction that makes or moves a ticket starts with: a
 * connection of the pool, BEGIN, pg_events_lock; or NULL and err
 * (nothing taken). */
PGconn *pg_events_begin(struct tg_store *st, struct tg_error *err);

/* A column's value: a number (0 for NULL), a copy of its text (NULL for
 * NULL; -1 from pg_dup_text when out of memory), its text cut into dst, a
 * bytea decoded (OUT *out malloc'd and NUL-ended, *len: 0, or -1 out of
 * memory; *out NULL for NULL). */
int64_t pg_int(const PGresult *r, int row, int col);
double pg_double(const PGresult *r, int row, int col);
int pg_dup_text(const PGresult *r, int row, int col, char **out);
void pg_copy(char *dst, size_t len, const PGresult *r, int row, int col);
int pg_bytes(const PGresult *r, int row, int col, char **out, size_t *len);

/* Whether the opening id is alive: 1 (its lock is held, it is this one,
 * or it cannot be told), 0 dead. On c, inside the caller's transaction
 * or not. */
int pg_instance_alive(struct tg_store *st, PGconn *c, const char *id);
/* 0 when this opening holds its liveness lock, else -1 and err
 * (retryable): what every claim asks first, so that nothing is claimed
 * for an opening the others may think dead. */
int pg_claim_ok(struct tg_store *st, struct tg_error *err);

/* ---- shared with the transactions of idempotency and rollbacks ---- */

/* pg_idem.c: the running record of k, this opening's, becomes done with
 * result (inside the caller's transaction on c): TG_ERR_INVALID when this
 * opening no longer holds it. */
int pg_idem_settle(struct tg_store *st, PGconn *c, const struct tg_idem_key *k,
		   const char *result, size_t len, struct tg_error *err);
/* pg_ticket.c: ticket id from -> to on c: 0, 1 when it is not in from, -1. */
int pg_ticket_move_on(PGconn *c, const char *id, enum tg_ticket_state from,
		      enum tg_ticket_state to, const char *approver, const char *reason,
		      int64_t now, struct tg_error *err);

/* ---- the ops, by file ---- */

/* pg_idem.c */
int pg_idem_begin(struct tg_store *st, const struct tg_idem_key *k, int64_t now, int64_t ttl,
		  struct tg_idem_record *rec, struct tg_error *err);
int pg_idem_finish(struct tg_store *st, const struct tg_idem_key *k, const char *result,
		   size_t len, struct tg_error *err);
int pg_idem_reclaim(struct tg_store *st, const struct tg_idem_key *k, const char *expect,
		    size_t len, struct tg_error *err);
int pg_idem_takeover(struct tg_store *st, const struct tg_idem_key *k, char **marker,
		     struct tg_error *err);
int pg_idem_replace(struct tg_store *st, const struct tg_idem_key *k, const char *expect,
		    size_t elen, const char *result, size_t len, struct tg_error *err);
int pg_idem_abandon(struct tg_store *st, const struct tg_idem_key *k, struct tg_error *err);
int pg_idem_finish_call(struct tg_store *st, const struct tg_idem_key *k, const char *result,
			size_t len, const char *ticket, enum tg_ticket_state to,
			struct tg_error *err);

/* pg_ticket.c */
int pg_ticket_insert(struct tg_store *st, const struct tg_ticket *t,
		     const struct tg_idem_key *hold, const struct tg_queue_bounds *bounds,
		     struct tg_error *err);
int pg_ticket_get(struct tg_store *st, const char *id, int64_t now, struct tg_ticket *t,
		  struct tg_error *err);
int pg_ticket_move(struct tg_store *st, const char *id, enum tg_ticket_state from,
		   enum tg_ticket_state to, const char *approver, const char *reason, int64_t now,
		   struct tg_error *err);
int pg_tickets_of(struct tg_store *st, const char *principal, uint64_t *n, struct tg_error *err);
int pg_ticket_find(struct tg_store *st, const char *tool, const char *args_sha256, int64_t now,
		   struct tg_ticket *t, struct tg_error *err);
int pg_ticket_supersede(struct tg_store *st, const char *tool, const char *args_sha256,
			size_t *n, struct tg_error *err);
int pg_ticket_list(struct tg_store *st, int state, int64_t now, struct tg_ticket **out,
		   size_t *n, struct tg_error *err);
int pg_ticket_counts(struct tg_store *st, int64_t now, uint64_t counts[8],
		     struct tg_error *err);
int pg_tickets_pending(struct tg_store *st, const char *principal, int64_t now, uint64_t *n,
		       uint64_t *bytes, struct tg_error *err);
int pg_tickets_anomalous(struct tg_store *st, const char *principal, int64_t now, uint64_t *n,
			 struct tg_error *err);

/* pg_event.c: ticket events, the expiry sweep, what is pending */
int pg_ticket_events(struct tg_store *st, uint64_t after, size_t max, struct tg_ticket_event *out,
		     size_t *n, uint64_t *last, struct tg_error *err);
int pg_ticket_expire(struct tg_store *st, int64_t now, uint64_t *n, struct tg_error *err);
int pg_webhook_cursor(struct tg_store *st, const char *name, uint64_t *seq, int *found,
		      struct tg_error *err);
int pg_webhook_cursor_set(struct tg_store *st, const char *name, uint64_t seq,
			  struct tg_error *err);
int pg_ticket_pending_stats(struct tg_store *st, int64_t now, struct tg_ticket_pending *out,
			    size_t max, size_t *n, struct tg_error *err);

/* pg_saga.c: rollbacks and sagas */
int pg_rollback_begin(struct tg_store *st, const char *call_id, const char *who, int64_t now,
		      struct tg_error *err);
int pg_rollback_end(struct tg_store *st, const char *call_id, int ok, const char *detail,
		    size_t len, int64_t now, struct tg_error *err);
int pg_rollback_list(struct tg_store *st, int state, struct tg_rollback **out, size_t *n,
		     struct tg_error *err);
int pg_saga_begin(struct tg_store *st, const char *id, const struct tg_saga_step *steps,
		  size_t n, int64_t now, struct tg_error *err);
int pg_saga_take(struct tg_store *st, const char *id, struct tg_error *err);
int pg_saga_get(struct tg_store *st, const char *id, struct tg_saga *saga,
		struct tg_error *err);
int pg_saga_step(struct tg_store *st, const char *id, size_t step,
		 enum tg_saga_step_state state, const char *result, struct tg_error *err);
int pg_saga_set(struct tg_store *st, const char *id, enum tg_saga_state state, int64_t now,
		struct tg_error *err);
int pg_saga_orphans(struct tg_store *st, char (**ids)[33], size_t *n, struct tg_error *err);

/* pg_anchor.c: the replicas' audit anchors */
int pg_anchor_put(struct tg_store *st, const struct tg_audit_anchor *a, struct tg_error *err);
int pg_anchors(struct tg_store *st, const char *replica, size_t max,
	       struct tg_audit_anchor **out, size_t *n, struct tg_error *err);

/* pg_revoke.c: revocations */
int pg_revoke(struct tg_store *st, const char *jti, int64_t expires, struct tg_error *err);
int pg_revoked(struct tg_store *st, const char *jti, int64_t now, struct tg_error *err);

/* pg_upkeep.c: baselines, the collection, upstream and skill pins */
int pg_baselines_put(struct tg_store *st, const struct tg_baseline *b, size_t n,
		     struct tg_error *err);
int pg_baselines_load(struct tg_store *st, struct tg_baseline **out, size_t *n,
		      struct tg_error *err);
int pg_gc(struct tg_store *st, int64_t now, int64_t keep, struct tg_store_gc_stats *stats,
	  struct tg_error *err);
int pg_pin_get(struct tg_store *st, const char *upstream, const char *tool, struct tg_pin *pin,
	       struct tg_error *err);
int pg_pin_set(struct tg_store *st, const struct tg_pin *pin, struct tg_error *err);
int pg_pin_delete(struct tg_store *st, const char *upstream, const char *tool,
		  struct tg_error *err);
int pg_pin_list(struct tg_store *st, const char *upstream, struct tg_pin **out, size_t *n,
		struct tg_error *err);
int pg_skill_pin_get(struct tg_store *st, const char *name, struct tg_skill_pin *pin,
		     struct tg_error *err);
int pg_skill_pin_set(struct tg_store *st, const struct tg_skill_pin *pin, struct tg_error *err);

#endif
