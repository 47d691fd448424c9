/*
 * The store's backend seam (docs/STORE.md, "Backends"): what the front,
 * src/store/store.c, asks of a backend, in one table of operations, in
 * the shape of OpenSSH's ssh-sandbox.h or crun's custom handlers. The
 * front checks every input, makes ids, and owns the openings' liveness
 * (src/store/instance.c); a backend keeps the tables and makes each op
 * atomic. Nothing here names SQLite: a PostgreSQL backend is a new file
 * that fills a struct tg_store_ops. Nothing outside src/store/ includes it.
 *
 * Every op: 0 on success, -1 with err filled (TG_ERR_SYSTEM for the
 * database, TG_ERR_NOMEM, TG_ERR_INVALID for a refused move), and 1 where
 * its comment gives it a meaning. Ops are called from any thread at once;
 * the backend serialises what it must. Inputs reach an op already checked
 * (the front's key_ok, size limits, allowed moves).
 */
#ifndef TG_STORE_INT_H
#define TG_STORE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "toolgate/store.h"

struct tg_store_ops;

struct tg_store {
	const struct tg_store_ops *ops;
	void *be;             /* the backend's own state, made by ops->open */
	int schema;           /* set by ops->open: the schema of the open database */
	char instance[33];    /* this opening's id: who claimed a running key */
	char *dir;            /* the state directory, or a remote backend's URL */
	int alive_fd;         /* instances/ID.lock, locked while this opening lives
			       * (a backend on a directory; -1 for a remote one) */
};

struct tg_store_ops {
	const char *name;     /* "sqlite", "postgres" */
	/* 0: st->dir is a state directory, which the front makes private and
	 * where it keeps the openings' liveness (instance.c). 1: st->dir is
	 * the URL of a database on the network; the backend keeps its
	 * openings' liveness itself, as each op's comment below says
	 * store_instance_alive does */
	int remote;

	/* ---- lifecycle ---- */
	/* Open st->dir's database (st->instance and st->dir are set), migrate
	 * it forward to TG_STORE_SCHEMA, one atomic step a version, and set
	 * st->be and st->schema. TG_ERR_INVALID: a database from a newer
	 * toolgate, or not toolgate's (refused, never rewritten). On failure
	 * the front calls close. */
	int (*open)(struct tg_store *st, struct tg_error *err);
	/* Release st->be (NULL when open failed early). Cannot fail. */
	void (*close)(struct tg_store *st);
	/* The store's clock, unix seconds, for TG_STORE_NOW: NULL for this
	 * host's (time()). Cannot fail: a clock not read yet is the host's. */
	int64_t (*now)(struct tg_store *st);
	/* A remote backend's readiness (tg_store_check): 0 when its database
	 * answers and this opening may claim; NULL for one on a directory,
	 * whose room on the disk the front looks at. */
	int (*check)(struct tg_store *st, struct tg_error *err);

	/* ---- idempotency: (principal, tool, key) is one record ---- */
	/* Read and, when absent or expired, claim for st->instance as running
	 * with expiry now + ttl, in one atomic step (two gateways on one
	 * database never both get TG_IDEM_NEW). OUT *rec (result malloc'd for
	 * TG_IDEM_DONE; released on failure). */
	int (*idem_begin)(struct tg_store *st, const struct tg_idem_key *key, int64_t now,
			  int64_t ttl, struct tg_idem_record *rec, struct tg_error *err);
	/* The running record of key with its fingerprint becomes done with
	 * result (len bytes, stored byte for byte). TG_ERR_INVALID when no
	 * such running record. */
	int (*idem_finish)(struct tg_store *st, const struct tg_idem_key *key, const char *result,
			   size_t len, struct tg_error *err);
	/* A done record whose result is expect (len bytes) goes back to
	 * running, claimed by st->instance: 0, or 1 when it is not so. */
	int (*idem_reclaim)(struct tg_store *st, const struct tg_idem_key *key, const char *expect,
			    size_t len, struct tg_error *err);
	/* A running record whose runner is dead (store_instance_alive) is
	 * claimed for st->instance: 0 and OUT *marker (its result, malloc'd,
	 * or NULL); 1 not taken (*marker NULL). */
	int (*idem_takeover)(struct tg_store *st, const struct tg_idem_key *key, char **marker,
			     struct tg_error *err);
	/* A done record whose result is expect answers result: 0, or 1. */
	int (*idem_replace)(struct tg_store *st, const struct tg_idem_key *key, const char *expect,
			    size_t elen, const char *result, size_t len, struct tg_error *err);
	/* The running record of key is deleted. TG_ERR_INVALID when none. */
	int (*idem_abandon)(struct tg_store *st, const struct tg_idem_key *key,
			    struct tg_error *err);
	/* In one transaction: the record, running and st->instance's, becomes
	 * done with result, and ticket moves approved -> to. TG_ERR_INVALID
	 * when either does not hold (nothing changed). */
	int (*idem_finish_call)(struct tg_store *st, const struct tg_idem_key *key,
				const char *result, size_t len, const char *ticket,
				enum tg_ticket_state to, struct tg_error *err);

	/* ---- approval tickets ---- */
	/* Insert t (id, principal, tool, args_sha256, created, expires and the
	 * optional texts set by the front; pending). With hold, in the same
	 * transaction: bounds (NULL: none) checked against t->principal's
	 * queue (1, nothing written, when t would pass them), then hold's
	 * running record of st->instance answers {"ticket":"ID"}
	 * (TG_ERR_INVALID when this opening no longer holds it). */
	int (*ticket_insert)(struct tg_store *st, const struct tg_ticket *t,
			     const struct tg_idem_key *hold, const struct tg_queue_bounds *bounds,
			     struct tg_error *err);
	/* Ticket id as it stands at now: a pending one past its expiry is
	 * moved to expired first. OUT *t; TG_ERR_INVALID for no such ticket. */
	int (*ticket_get)(struct tg_store *st, const char *id, int64_t now, struct tg_ticket *t,
			  struct tg_error *err);
	/* Ticket id from -> to, atomically; approver and reason (NULL: kept),
	 * decided = now (0: kept). 1 when it is not in from (nothing
	 * changed): the compare-and-set that stops two approvers. */
	int (*ticket_move)(struct tg_store *st, const char *id, enum tg_ticket_state from,
			   enum tg_ticket_state to, const char *approver, const char *reason,
			   int64_t now, struct tg_error *err);
	/* Pending tickets past expiry expired, then those in state (-1: all),
	 * oldest first, at most 10,000. OUT *out, *n. */
	int (*ticket_list)(struct tg_store *st, int state, int64_t now, struct tg_ticket **out,
			   size_t *n, struct tg_error *err);
	/* The newest ticket for tool and args_sha256: 0 and OUT *t, 1 none. */
	int (*ticket_find)(struct tg_store *st, const char *tool, const char *args_sha256,
			   int64_t now, struct tg_ticket *t, struct tg_error *err);
	/* tool's tickets pending for other arguments cancelled: OUT *n. */
	int (*ticket_supersede)(struct tg_store *st, const char *tool, const char *args_sha256,
				size_t *n, struct tg_error *err);
	/* How many tickets principal asked for, in any state. */
	int (*tickets_of)(struct tg_store *st, const char *principal, uint64_t *n,
			  struct tg_error *err);
	/* Pending tickets past expiry expired, then the count in each state. */
	int (*ticket_counts)(struct tg_store *st, int64_t now, uint64_t counts[8],
			     struct tg_error *err);
	/* principal's pending tickets at now, and the bytes its tickets that
	 * did not run hold (arguments, previews, findings). */
	int (*tickets_pending)(struct tg_store *st, const char *principal, int64_t now,
			       uint64_t *n, uint64_t *bytes, struct tg_error *err);
	/* principal's pending tickets at now that carry findings. */
	int (*tickets_anomalous)(struct tg_store *st, const char *principal, int64_t now,
				 uint64_t *n, struct tg_error *err);

	/* Pending tickets past expiry at now moved to expired (their events
	 * written with them): OUT *n how many. */
	int (*ticket_expire)(struct tg_store *st, int64_t now, uint64_t *n, struct tg_error *err);
	/* At most max events after seq after, by seq, into out (OUT *n), and
	 * OUT *last the highest seq ever given, read in one snapshot. */
	int (*ticket_events)(struct tg_store *st, uint64_t after, size_t max,
			     struct tg_ticket_event *out, size_t *n, uint64_t *last,
			     struct tg_error *err);
	/* A webhook's cursor: the last event number it was told of or
	 * passed over (OUT *found 0: none kept); set, made or replaced. */
	int (*webhook_cursor)(struct tg_store *st, const char *name, uint64_t *seq, int *found,
			      struct tg_error *err);
	int (*webhook_cursor_set)(struct tg_store *st, const char *name, uint64_t seq,
				  struct tg_error *err);
	/* The tickets pending at now by tool, most first, at most max. */
	int (*ticket_pending_stats)(struct tg_store *st, int64_t now,
				    struct tg_ticket_pending *out, size_t max, size_t *n,
				    struct tg_error *err);

	/* ---- rollbacks ---- */
	/* Log an attempt of call_id's rollback as running, by who, for
	 * st->instance (attempts + 1). TG_ERR_INVALID when a live opening
	 * runs it. */
	int (*rollback_begin)(struct tg_store *st, const char *call_id, const char *who,
			      int64_t now, struct tg_error *err);
	/* The attempt st->instance runs ended (detail: len bytes, or NULL);
	 * ok also moves the ticket executed -> compensated, in one
	 * transaction. TG_ERR_INVALID when either does not hold. */
	int (*rollback_end)(struct tg_store *st, const char *call_id, int ok, const char *detail,
			    size_t len, int64_t now, struct tg_error *err);
	int (*rollback_list)(struct tg_store *st, int state, struct tg_rollback **out, size_t *n,
			     struct tg_error *err);

	/* ---- sagas ---- */
	/* Log saga id with its n steps pending unless logged (then kept), and
	 * claim it for st->instance: 0, or 1 when a live opening runs it. */
	int (*saga_begin)(struct tg_store *st, const char *id, const struct tg_saga_step *steps,
			  size_t n, int64_t now, struct tg_error *err);
	int (*saga_take)(struct tg_store *st, const char *id, struct tg_error *err);
	/* 0 and OUT *saga, or 1 when none (released on -1). */
	int (*saga_get)(struct tg_store *st, const char *id, struct tg_saga *saga,
			struct tg_error *err);
	/* TG_ERR_SYSTEM when no such step. */
	int (*saga_step)(struct tg_store *st, const char *id, size_t step,
			 enum tg_saga_step_state state, const char *result, struct tg_error *err);
	int (*saga_set)(struct tg_store *st, const char *id, enum tg_saga_state state, int64_t now,
			struct tg_error *err);
	/* Sagas running or compensating whose runner is dead, each claimed
	 * for st->instance in the same transaction. OUT *ids (malloc'd), *n. */
	int (*saga_orphans)(struct tg_store *st, char (**ids)[33], size_t *n, struct tg_error *err);

	/* ---- revocations, baselines, collection ---- */
	int (*revoke)(struct tg_store *st, const char *jti, int64_t expires, struct tg_error *err);
	/* 1 revoked at now, 0 not. */
	int (*revoked)(struct tg_store *st, const char *jti, int64_t now, struct tg_error *err);
	/* The n baselines, each replacing its tool's, in one transaction. */
	int (*baselines_put)(struct tg_store *st, const struct tg_baseline *b, size_t n,
			     struct tg_error *err);
	/* Every baseline kept: OUT *out (malloc'd, or NULL), *n. */
	int (*baselines_load)(struct tg_store *st, struct tg_baseline **out, size_t *n,
			      struct tg_error *err);

	/* ---- upstream pins: (upstream, tool) is one pin ---- */
	/* 0 and OUT *pin, or 1 when none. */
	int (*pin_get)(struct tg_store *st, const char *upstream, const char *tool,
		       struct tg_pin *pin, struct tg_error *err);
	/* Insert or replace, in one transaction with the count: TG_ERR_LIMIT
	 * when it would be its upstream's pin past TG_PIN_MAX_TOOLS. */
	int (*pin_set)(struct tg_store *st, const struct tg_pin *pin, struct tg_error *err);
	/* 0, or 1 when none. */
	int (*pin_delete)(struct tg_store *st, const char *upstream, const char *tool,
			  struct tg_error *err);
	/* By tool name, at most TG_PIN_MAX_TOOLS. OUT *out (malloc'd), *n. */
	int (*pin_list)(struct tg_store *st, const char *upstream, struct tg_pin **out, size_t *n,
			struct tg_error *err);

	/* ---- skill pins: a name is one pin ---- */
	/* 0 and OUT *pin, or 1 when none. */
	int (*skill_pin_get)(struct tg_store *st, const char *name, struct tg_skill_pin *pin,
			     struct tg_error *err);
	/* Insert or replace, in one transaction with the count: TG_ERR_LIMIT
	 * for a new name past TG_SKILL_PIN_MAX. */
	int (*skill_pin_set)(struct tg_store *st, const struct tg_skill_pin *pin,
			     struct tg_error *err);

	/* ---- leading, for a store replicas share: NULL for one on a
	 * directory, whose processes lock a file of it themselves ---- */
	/* 1 when this opening leads role among the store's openings, 0 when
	 * not (yet: asked for, it is taken within a second if free). */
	int (*lead)(struct tg_store *st, const char *role, struct tg_error *err);
	/* This opening counted among the replicas serving calls, and how
	 * many are (tg_store_replicas). */
	int (*replica_join)(struct tg_store *st, struct tg_error *err);
	int (*replicas)(struct tg_store *st, unsigned *n, struct tg_error *err);

	/* ---- audit anchors: NULL for a backend that keeps none ---- */
	/* a kept unless the store has a later head of its replica's chain. */
	int (*anchor_put)(struct tg_store *st, const struct tg_audit_anchor *a,
			  struct tg_error *err);
	/* replica's, latest first, at most max. OUT *out (malloc'd), *n. */
	int (*anchors)(struct tg_store *st, const char *replica, size_t max,
		       struct tg_audit_anchor **out, size_t *n, struct tg_error *err);

	/* tg_store_gc's collection, in batches that let other calls in. */
	int (*gc)(struct tg_store *st, int64_t now, int64_t keep, struct tg_store_gc_stats *stats,
		  struct tg_error *err);
};

/* The backends: SQLite in src/store/sqlite*.c, PostgreSQL in
 * src/store/pg*.c. */
extern const struct tg_store_ops store_sqlite_ops;
extern const struct tg_store_ops store_pg_ops;

/* A state as a backend stores it, its name (tg_ticket_state_name, ...),
 * back to its enum: a ticket's, or -1; a saga's or a step's, or 0 (store.c). */
int store_ticket_state_of(const char *name);
int store_saga_state_of(const char *name);
int store_step_state_of(const char *name);

/* tg_store_open with the backend ops (tg_store_open: the first of the
 * front's backends[]); what a test of the seam opens a stand-in with. */
int store_open_with(const struct tg_store_ops *ops, const char *dir, struct tg_store **out,
		    struct tg_error *err);

/* ---- the openings' liveness (src/store/instance.c) ---- */

/* This opening's lock, instances/ID.lock under st->dir, taken; the files
 * of dead openings swept. */
int store_instance_start(struct tg_store *st, struct tg_error *err);
/* The lock let go and its file removed. */
void store_instance_stop(struct tg_store *st);
/* 1 if the opening id is alive (its lock is held, or it is this one), 0
 * if not (its file is then removed). What a backend asks before taking
 * over a running key, saga or rollback. */
int store_instance_alive(const struct tg_store *st, const char *id);

#endif
