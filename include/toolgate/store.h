/*
 * toolgate store: the gateway's durable state (docs/STORE.md), behind one
 * interface that names no database: idempotency records, token
 * revocations, approval tickets, rollback and saga logs, anomaly
 * baselines. A backend sits behind it (docs/STORE.md, "Backends"); today
 * SQLite in WAL mode, one file in the state directory.
 *
 * Durability: every write is one transaction, committed before the call
 * returns, with synchronous=FULL: a record the caller was told about
 * survives kill -9 of the gateway and a power cut, and a record is never
 * half-written (one transaction: SQLite's atomic commit today). The
 * schema is versioned (TG_STORE_SCHEMA; SQLite's PRAGMA user_version)
 * and migrated forward on open; a database written by a newer toolgate is
 * refused, never rewritten.
 *
 *     struct tg_store *st;
 *     tg_store_open("/var/lib/toolgate", &st, &err);
 *     switch (tg_store_idem_begin(st, &key, now, &rec, &err)) { ... }
 *     tg_store_close(st);
 *
 * Thread-safe: one store may serve every thread of the gateway.
 */
#ifndef TOOLGATE_STORE_H
#define TOOLGATE_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "toolgate/error.h"
#include "toolgate/version.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tg_store;

/* The schema version this toolgate writes. */
#define TG_STORE_SCHEMA 12

/* Where a call below takes "now" (unix seconds), TG_STORE_NOW says: the
 * store's clock. SQLite's is this host's; PostgreSQL's is the database's,
 * so that replicas whose clocks disagree judge a ticket's expiry, a key's
 * and a decision's time alike (docs/STORE.md, "Whose clock"). A gateway
 * passes it; a test passes the times it means. */
#define TG_STORE_NOW INT64_MIN

/* Open the store where says, migrating it to TG_STORE_SCHEMA: a
 * postgres:// or postgresql:// URL is a PostgreSQL database (libpq's URL,
 * without a password: libpq's password file holds that); anything else
 * is a state directory (created, mode 0700) with its SQLite database.
 * OUT *out. TG_ERR_INVALID for a database from a newer toolgate or not
 * toolgate's, or a URL with a password; TG_ERR_SYSTEM for the file
 * system or a database that cannot be reached. */
TG_API int tg_store_open(const char *where, struct tg_store **out, struct tg_error *err);
/* 1 if where names a store on the network (a PostgreSQL URL), which keeps
 * nothing in a state directory; 0 if a state directory. */
TG_API int tg_store_remote(const char *where);
TG_API void tg_store_close(struct tg_store *store);
/* The schema version of the open database. */
TG_API int tg_store_schema(const struct tg_store *store);
/* Whether the store can take writes, as far as looking tells (a
 * readiness probe's question, docs/MCP.md, "Health"): 0 when its state
 * directory's file system is mounted read-write with at least 1 MiB free
 * to this user, or its PostgreSQL database answers and this opening
 * holds its liveness lock there; else -1 and err (TG_ERR_SYSTEM: which
 * directory, and what it lacks; or why the database does not do). A statvfs: it writes nothing, so a write that fails
 * for another reason (an I/O error) is that call's error, not seen here. */
TG_API int tg_store_check(struct tg_store *store, struct tg_error *err);

/* ---- idempotency ----------------------------------------------------------- */

#define TG_IDEM_MAX_KEY 255        /* bytes of a caller's idempotency key */
#define TG_IDEM_MAX_RESULT (4u << 20) /* bytes of a stored result */

/* Whose key: a key is scoped by principal and tool (name, without the
 * version: a retry after an upgrade is the same call), and carries the
 * fingerprint of the arguments it was first used with (SHA-256 of their
 * canonical form, hex). */
struct tg_idem_key {
	const char *principal;
	const char *tool;
	const char *key;
	const char *fingerprint;
};

enum tg_idem_state {
	TG_IDEM_NEW = 1,   /* first use: the caller runs the call, then finishes it */
	TG_IDEM_RUNNING,   /* another call under this key has not finished */
	TG_IDEM_DONE,      /* finished: the stored result is the answer */
	TG_IDEM_MISMATCH,  /* the key was used with other arguments */
};

struct tg_idem_record {
	enum tg_idem_state state;
	char *result;                /* TG_IDEM_DONE: the stored result, malloc'd */
	size_t result_len;
	int64_t created;             /* unix seconds */
	int64_t expires;
};

/* Claim key at now (unix seconds) for ttl seconds: TG_IDEM_NEW (recorded
 * as running; finish or abandon it), or what the key already says. An
 * expired record counts as absent. -1 and err: a key that is empty,
 * longer than TG_IDEM_MAX_KEY or not printable ASCII (TG_ERR_INVALID), or
 * the store failed. Release rec with tg_idem_record_release. */
TG_API int tg_store_idem_begin(struct tg_store *store, const struct tg_idem_key *key,
			       int64_t now, int64_t ttl, struct tg_idem_record *rec,
			       struct tg_error *err);
/* The call under key ended: result (bytes, at most TG_IDEM_MAX_RESULT)
 * is what every retry gets, byte for byte. */
TG_API int tg_store_idem_finish(struct tg_store *store, const struct tg_idem_key *key,
				const char *result, size_t len, struct tg_error *err);
/* Take a finished key back to running, if its result is still expect
 * (len bytes): 0 taken (finish it again), 1 not (another retry took it,
 * or the result changed), -1 and err. How a held call's retry claims its
 * execution once approved, exactly once. */
TG_API int tg_store_idem_reclaim(struct tg_store *store, const struct tg_idem_key *key,
				 const char *expect, size_t len, struct tg_error *err);
/* A running key whose runner died (the gateway that claimed it was
 * killed: its instance lock, instances/ID.lock in the state directory, is
 * free) becomes this opening's: 0 taken, OUT *marker (malloc'd) the
 * result the key held while running (a held call's ticket marker), or
 * NULL; 1 not taken (its runner lives, or the key is not running); -1. */
TG_API int tg_store_idem_takeover(struct tg_store *store, const struct tg_idem_key *key,
				  char **marker, struct tg_error *err);
/* A finished key whose result is still expect (elen bytes) answers
 * result from now on, in one statement (no moment in between): 0, or 1
 * when its result is no longer expect. */
TG_API int tg_store_idem_replace(struct tg_store *store, const struct tg_idem_key *key,
				 const char *expect, size_t elen, const char *result, size_t len,
				 struct tg_error *err);
/* The call under key never ran (refused before executing): the key is
 * free again. */
TG_API int tg_store_idem_abandon(struct tg_store *store, const struct tg_idem_key *key,
				 struct tg_error *err);
TG_API void tg_idem_record_release(struct tg_idem_record *rec);

/* ---- token revocations ------------------------------------------------------ */

/* Token jti is revoked until expires (when it would have expired anyway). */
TG_API int tg_store_revoke(struct tg_store *store, const char *jti, int64_t expires,
			   struct tg_error *err);
/* 1 if jti is revoked at now, 0 if not, -1 and err. */
TG_API int tg_store_revoked(struct tg_store *store, const char *jti, int64_t now,
			    struct tg_error *err);

/* ---- approval tickets --------------------------------------------------------- */

/* A write call waiting for, or past, a person's decision (docs/PIPELINE.md). */
enum tg_ticket_state {
	TG_TICKET_ANY = -1,          /* a list's filter: every state */
	TG_TICKET_PENDING,
	TG_TICKET_APPROVED,
	TG_TICKET_REJECTED,          /* with a reason */
	TG_TICKET_EXPIRED,           /* nobody decided in time: fail closed */
	TG_TICKET_CANCELLED,
	TG_TICKET_EXECUTED,
	TG_TICKET_FAILED,
	TG_TICKET_COMPENSATED,       /* rolled back */
};

struct tg_ticket {
	char id[33];                 /* 128 random bits, hex */
	char principal[128];         /* who asked */
	char tool[160];              /* name@version */
	char args_sha256[65];        /* of the canonical arguments: other arguments, another ticket */
	char *preview;               /* the dry-run's, or NULL (malloc'd) */
	char *arguments;             /* the canonical arguments hashed, or NULL (malloc'd) */
	char *covers;                /* tools its approver must also approve (a plan's steps,
				      * space-separated names), or NULL (malloc'd) */
	char *findings;              /* why its arguments are anomalous (docs/ANOMALIES.md),
				      * JSON [{rule, at, why}], or NULL (malloc'd) */
	enum tg_ticket_state state;
	char *reason;                /* a rejection's (malloc'd), or NULL */
	char approver[128];          /* who decided */
	int64_t created, decided, expires;
};

TG_API const char *tg_ticket_state_name(enum tg_ticket_state state);

/* A tool's baseline of argument sizes and entropies (docs/ANOMALIES.md):
 * Welford's count, mean and sum of squared differences of each. */
struct tg_baseline {
	char tool[160];
	uint64_t size_n;
	double size_mean, size_m2;   /* of ln(bytes) */
	uint64_t entropy_n;
	double entropy_mean, entropy_m2; /* bits a byte */
};

/* The n baselines b, each replacing the one kept for its tool, in one
 * transaction. */
TG_API int tg_store_baselines_put(struct tg_store *store, const struct tg_baseline *b, size_t n,
				  struct tg_error *err);
/* fn on each baseline kept (a non-zero return stops, and is returned). */
TG_API int tg_store_baselines_each(struct tg_store *store,
				   int (*fn)(void *ctx, const struct tg_baseline *b), void *ctx,
				   struct tg_error *err);
/* A pending ticket for req's principal, tool, args_sha256, arguments and preview,
 * expiring ttl seconds after now: OUT *out (its id made here). */
TG_API int tg_store_ticket_create(struct tg_store *store, const struct tg_ticket *req,
				  int64_t now, int64_t ttl, struct tg_ticket *out,
				  struct tg_error *err);
/* Ticket id as it stands at now (a pending one past its expiry is then
 * expired). TG_ERR_INVALID: not an id, or no such ticket. */
TG_API int tg_store_ticket_get(struct tg_store *store, const char *id, int64_t now,
			       struct tg_ticket *ticket, struct tg_error *err);
/* approver's decision on pending ticket id: approve, or reject with a
 * reason. Refused (TG_ERR_INVALID, saying why): the requester itself, a
 * rejection without a reason, a ticket no longer pending. The caller
 * checks the approver's rights (an approve scope, docs/AUTH.md). */
TG_API int tg_store_ticket_decide(struct tg_store *store, const char *id, const char *approver,
				  int approve, const char *reason, int64_t now,
				  struct tg_error *err);
/* A move after the decision: approved to executed or failed, executed to
 * compensated, pending to cancelled; any other is refused. */
TG_API int tg_store_ticket_move(struct tg_store *store, const char *id, enum tg_ticket_state from,
				enum tg_ticket_state to, struct tg_error *err);
/* An approved call under key ended: result is the key's answer and ticket
 * moves from approved to `to` (executed or failed), in one transaction.
 * Refused (TG_ERR_INVALID) when this opening no longer holds the key. */
TG_API int tg_store_idem_finish_call(struct tg_store *store, const struct tg_idem_key *key,
				     const char *result, size_t len, const char *ticket,
				     enum tg_ticket_state to, struct tg_error *err);
/* What one principal may leave for people to decide: at most max_pending
 * tickets pending, and at most max_bytes held in its tickets that did not
 * run (pending, rejected, cancelled, expired: their arguments, previews
 * and findings, until the collection empties them). */
struct tg_queue_bounds {
	uint64_t max_pending, max_bytes;
};
/* A new write call under key (running, claimed by this opening) held for
 * approval: the pending ticket for req is made and the key's answer
 * becomes {"ticket":"ID"}, in one transaction (a crash leaves both or
 * neither: no ticket nobody will ever claim). With bounds (NULL: none),
 * req's principal's queue is looked at in the same transaction: 1 (no
 * ticket, the key still running) when the new ticket would take it past
 * them. OUT *out. */
TG_API int tg_store_idem_hold(struct tg_store *store, const struct tg_idem_key *key,
			      const struct tg_ticket *req, int64_t now, int64_t ttl,
			      const struct tg_queue_bounds *bounds, struct tg_ticket *out,
			      struct tg_error *err);
/* The tickets in state (TG_TICKET_ANY: all), oldest first, at most
 * 10,000: OUT *out, *n (release each, free the array). */
TG_API int tg_store_ticket_list(struct tg_store *store, enum tg_ticket_state state, int64_t now,
				struct tg_ticket **out, size_t *n, struct tg_error *err);
/* The newest ticket for tool and args_sha256, whatever its state, as
 * stored (a pending one past its expiry is expired by
 * tg_store_ticket_get: this takes no write lock): 0 and OUT *t, 1 when
 * there is none. */
TG_API int tg_store_ticket_find(struct tg_store *store, const char *tool,
				const char *args_sha256, int64_t now, struct tg_ticket *t,
				struct tg_error *err);
/* How many tickets principal asked for, in any state (OUT *n). */
TG_API int tg_store_tickets_of(struct tg_store *store, const char *principal, uint64_t *n,
			       struct tg_error *err);
/* Every ticket of tool pending for other arguments than args_sha256
 * cancelled: OUT *n how many. */
TG_API int tg_store_ticket_supersede(struct tg_store *store, const char *tool,
				     const char *args_sha256, size_t *n, struct tg_error *err);
TG_API void tg_ticket_release(struct tg_ticket *ticket);
/* How many of principal's tickets are pending at now and carry findings
 * (anomalous calls awaiting review): OUT *n. */
TG_API int tg_store_tickets_anomalous(struct tg_store *store, const char *principal, int64_t now,
				      uint64_t *n, struct tg_error *err);
/* How many of principal's tickets are pending at now (OUT *n), and the
 * bytes its tickets that did not run still hold (arguments, previews,
 * findings: OUT *bytes): what it puts on the approvers' queue. */
TG_API int tg_store_tickets_pending(struct tg_store *store, const char *principal, int64_t now,
				    uint64_t *n, uint64_t *bytes, struct tg_error *err);
/* How many tickets are in each state (indexed by enum tg_ticket_state) at
 * now, whoever decided them (the admin API, toolgate approvals). */
TG_API int tg_store_ticket_counts(struct tg_store *store, int64_t now, uint64_t counts[8],
				  struct tg_error *err);

/* ---- ticket events ----------------------------------------------------------- */

/* Every move of a ticket (docs/STORE.md, "Ticket events"): made
 * (state pending), approved, rejected, cancelled, expired, executed,
 * failed, compensated. Written in the transaction that moves the ticket,
 * by whichever process moves it (serve, toolgate approvals), so the
 * events are what every process reads to learn of another's decisions.
 * Numbered 1, 2, ... in the order they were committed; a number is never
 * given twice, even once its event is collected (with the tickets, keep
 * seconds after it was written: tg_store_gc). */
struct tg_ticket_event {
	uint64_t seq;
	char ticket[33];
	enum tg_ticket_state state;  /* the state it moved to: TG_TICKET_PENDING is its making */
	char tool[160];              /* name@version */
	char principal[128];         /* who asked */
	char approver[128];          /* who decided, or "" */
	int64_t created, decided, expires; /* the ticket's, as the move left them (decided 0: not) */
	int64_t at;                  /* when the move was written: unix seconds, the store's clock */
};

#define TG_TICKET_EVENTS_MAX 1000 /* events one read gives, at most */

/* The events after sequence number after, oldest first: at most max
 * (at most TG_TICKET_EVENTS_MAX; 0 reads only *last) into out, which
 * holds max: OUT *n. OUT *last: the highest number ever given (0: none),
 * read with them, so that *n < max and the last event read is *last
 * means the reader is up to date; a reader starting now starts after
 * *last. TG_ERR_INVALID for a max past the bound. */
TG_API int tg_store_ticket_events(struct tg_store *store, uint64_t after, size_t max,
				  struct tg_ticket_event *out, size_t *n, uint64_t *last,
				  struct tg_error *err);
/* The sweep: every pending ticket past its expiry at now moves to
 * expired, each with its event, in one transaction. OUT *n how many (may
 * be NULL). Readers expire what they read too (fail closed whoever
 * looks first); the sweep makes the event come without a reader. */
TG_API int tg_store_ticket_expire(struct tg_store *store, int64_t now, uint64_t *n,
				  struct tg_error *err);

/* ---- webhook cursors ----------------------------------------------------------- */

/* Where each webhook of the policy is in the ticket events (docs/NOTIFY.md):
 * the number of the last event it was told of or passed over, kept so that
 * a restarted gateway resumes there. name: 1 to 64 of A-Z a-z 0-9 . _ -.
 * tg_store_webhook_cursor: OUT *seq and *found (0: none kept, *seq 0).
 * tg_store_webhook_cursor_set: made or replaced. */
TG_API int tg_store_webhook_cursor(struct tg_store *store, const char *name, uint64_t *seq,
				   int *found, struct tg_error *err);
TG_API int tg_store_webhook_cursor_set(struct tg_store *store, const char *name, uint64_t seq,
				       struct tg_error *err);

/* The tickets of one tool (name@version) pending at now, and since when
 * the oldest of them waits. */
struct tg_ticket_pending {
	char tool[160];
	uint64_t n;
	int64_t oldest;              /* its created, unix seconds */
};
/* The tools with tickets pending at now, most first, at most max into
 * out (which holds max): OUT *n. */
TG_API int tg_store_ticket_pending_stats(struct tg_store *store, int64_t now,
					 struct tg_ticket_pending *out, size_t max, size_t *n,
					 struct tg_error *err);

/* ---- rollbacks -------------------------------------------------------------- */

/* Undoing an executed write call (its ticket id is the call's id) with
 * its contract's compensation. Each attempt is logged before it runs, so
 * a rollback a crash interrupted is found again (state running) and
 * resumed; the compensation is idempotent by the call id. */
enum tg_rollback_state {
	TG_ROLLBACK_ANY = -1,        /* a list's filter: every state */
	TG_ROLLBACK_RUNNING,
	TG_ROLLBACK_SUCCEEDED,       /* the ticket is compensated */
	TG_ROLLBACK_FAILED,          /* detail says why; may be tried again */
};

struct tg_rollback {
	char call_id[33];
	enum tg_rollback_state state;
	char requested_by[128];
	int attempts;
	char *detail;                /* the last attempt's outcome (malloc'd), or NULL */
	int64_t started, ended;      /* the last attempt's; ended 0 while running */
};

#define TG_ROLLBACK_MAX_DETAIL (64u << 10)

TG_API const char *tg_rollback_state_name(enum tg_rollback_state state);
/* who starts (or retries, or resumes) the rollback of call_id at now: 0,
 * logged as running; 1 when it already succeeded (nothing to do). -1 and
 * err (TG_ERR_INVALID, saying why): no such ticket, or one that never
 * executed. */
TG_API int tg_store_rollback_begin(struct tg_store *store, const char *call_id, const char *who,
				   int64_t now, struct tg_error *err);
/* The attempt ended: ok moves the ticket from executed to compensated in
 * the same transaction; detail (at most TG_ROLLBACK_MAX_DETAIL bytes,
 * longer is cut) says what the compensation answered. */
TG_API int tg_store_rollback_end(struct tg_store *store, const char *call_id, int ok,
				 const char *detail, int64_t now, struct tg_error *err);
/* The rollbacks in state (TG_ROLLBACK_ANY: all), oldest first, at most
 * 10,000: OUT *out, *n (release each, free the array). */
TG_API int tg_store_rollback_list(struct tg_store *store, enum tg_rollback_state state,
				  struct tg_rollback **out, size_t *n, struct tg_error *err);
TG_API void tg_rollback_release(struct tg_rollback *r);

/* ---- sagas ------------------------------------------------------------------- */

/* A multi-step plan run as one approved call (docs/PIPELINE.md, "Sagas"):
 * each step's state is logged before and after it runs, so that a crash
 * anywhere leaves the log saying what ran and what was undone. */
enum tg_saga_state {
	TG_SAGA_RUNNING,             /* steps running forward */
	TG_SAGA_DONE,                /* every step done */
	TG_SAGA_COMPENSATING,        /* a step failed (or a rollback): undoing, newest first */
	TG_SAGA_COMPENSATED,         /* every step that ran is undone */
	TG_SAGA_FAILED,              /* a compensation failed: a person must look */
};

enum tg_saga_step_state {
	TG_STEP_PENDING,
	TG_STEP_RUNNING,
	TG_STEP_DONE,
	TG_STEP_FAILED,
	TG_STEP_COMPENSATED,
	TG_STEP_COMPENSATION_FAILED,
};

#define TG_SAGA_MAX_STEPS 16

struct tg_saga_step {
	char tool[160];              /* name@version */
	char call_id[33];            /* the step's own call id */
	enum tg_saga_step_state state;
	char *arguments;             /* JSON text (malloc'd) */
	char *result;                /* the last run's or compensation's, or NULL (malloc'd) */
};

struct tg_saga {
	char id[33];                 /* the plan's call id (its ticket) */
	enum tg_saga_state state;
	size_t n;
	struct tg_saga_step *steps;  /* malloc'd */
};

TG_API const char *tg_saga_state_name(enum tg_saga_state state);
TG_API const char *tg_saga_step_state_name(enum tg_saga_step_state state);
/* The log of saga id with its n steps (tool, call_id, arguments), all
 * pending, unless it exists (then left as it is), taken by this opening
 * to run: 0; 1 when another live opening runs it (nothing changed). */
TG_API int tg_store_saga_begin(struct tg_store *store, const char *id,
			       const struct tg_saga_step *steps, size_t n, int64_t now,
			       struct tg_error *err);
/* Take saga id to run it (an undo): 0, or 1 when another live opening
 * runs it. */
TG_API int tg_store_saga_take(struct tg_store *store, const char *id, struct tg_error *err);
/* Saga id as logged: 0 and OUT *saga (tg_saga_release); 1 if there is none. */
TG_API int tg_store_saga_get(struct tg_store *store, const char *id, struct tg_saga *saga,
			     struct tg_error *err);
/* Step `step` of saga id moves to state, with result (NULL: kept). */
TG_API int tg_store_saga_step(struct tg_store *store, const char *id, size_t step,
			      enum tg_saga_step_state state, const char *result,
			      struct tg_error *err);
/* Saga id moves to state. */
TG_API int tg_store_saga_set(struct tg_store *store, const char *id, enum tg_saga_state state,
			     int64_t now, struct tg_error *err);
/* The sagas a dead gateway left running or compensating, taken over by
 * this opening: OUT *ids (an array of *n ids, free it). */
TG_API int tg_store_saga_orphans(struct tg_store *store, char (**ids)[33], size_t *n,
				 struct tg_error *err);
TG_API void tg_saga_release(struct tg_saga *saga);

/* ---- upstream pins ------------------------------------------------------------ */

/* The definition of an upstream's tool as it was accepted
 * (docs/UPSTREAMS.md, "Pins"): its canonical text, kept so that what
 * changed can be shown, and that text's SHA-256. One a tool. */
#define TG_PIN_MAX_DEFINITION (1u << 20) /* bytes, as TG_UPSTREAM_MAX_DEFINITION */
#define TG_PIN_MAX_TOOLS 1024            /* pins of one upstream, as TG_UPSTREAM_MAX_LISTED */

struct tg_pin {
	char upstream[33];           /* the declaration's NAME: [a-z][a-z0-9-]{0,31} */
	char tool[129];              /* the upstream's own name: 1 to 128 of A-Z a-z 0-9 _ . - */
	char sha256[65];             /* of definition, lower-case hex */
	char *definition;            /* the canonical definition (malloc'd) */
	int64_t pinned_at;           /* when, as the caller counts time (seconds) */
	char pinned_by[128];         /* who accepted it: 1 to 127 bytes */
};

/* upstream's pin of tool: 0 and OUT *pin, 1 when there is none (*pin
 * cleared). TG_ERR_INVALID for a name outside its form. */
TG_API int tg_store_pin_get(struct tg_store *store, const char *upstream, const char *tool,
			    struct tg_pin *pin, struct tg_error *err);
/* pin kept, replacing the one of its upstream and tool. TG_ERR_INVALID
 * for a name outside its form, no pinned_by, or a sha256 that is not
 * the definition's; TG_ERR_LIMIT for a definition past
 * TG_PIN_MAX_DEFINITION or a new pin past TG_PIN_MAX_TOOLS for its
 * upstream. */
TG_API int tg_store_pin_set(struct tg_store *store, const struct tg_pin *pin,
			    struct tg_error *err);
/* upstream's pin of tool deleted: 0, or 1 when there was none. */
TG_API int tg_store_pin_delete(struct tg_store *store, const char *upstream, const char *tool,
			       struct tg_error *err);
/* upstream's pins, by tool name: OUT *out (release each, free the
 * array; NULL when none), *n. */
TG_API int tg_store_pin_list(struct tg_store *store, const char *upstream, struct tg_pin **out,
			     size_t *n, struct tg_error *err);
TG_API void tg_pin_release(struct tg_pin *pin);

/* ---- skill pins ------------------------------------------------------------------ */

/* The skill serve last served under a name (docs/SKILLS.md, "Pinned"):
 * its metadata.version and its manifest's digest, so that other files
 * under the same version are refused at the next start. One a name. */
#define TG_SKILL_PIN_MAX 4096 /* names pinned */

struct tg_skill_pin {
	char name[65];      /* the skill's name: 1 to 64 of a-z 0-9 - */
	char version[256];  /* its metadata.version, "" when it has none */
	char sha256[65];    /* its manifest's, lower-case hex */
	int64_t pinned_at;  /* when, as the caller counts time (seconds) */
};

/* name's pin: 0 and OUT *pin, 1 when there is none (*pin cleared).
 * TG_ERR_INVALID for a name outside its form. */
TG_API int tg_store_skill_pin_get(struct tg_store *store, const char *name,
				  struct tg_skill_pin *pin, struct tg_error *err);
/* pin kept, replacing its name's. TG_ERR_INVALID for a name, version or
 * sha256 outside its form; TG_ERR_LIMIT for a new name past
 * TG_SKILL_PIN_MAX. */
TG_API int tg_store_skill_pin_set(struct tg_store *store, const struct tg_skill_pin *pin,
				  struct tg_error *err);

/* ---- leading (docs/STORE.md, "Leading") --------------------------------------------- */

/* Whether this opening leads role (1 to 31 letters, digits or '-': the
 * work one replica does for all, "webhooks") among the openings of a
 * store that replicas share: 1 it does, 0 another does or it is not
 * taken yet (asked again, it is within a second when free). A store on a
 * directory: TG_ERR_UNAVAILABLE (its processes lock a file of their own). */
TG_API int tg_store_lead(struct tg_store *store, const char *role, struct tg_error *err);

/* This opening is a gateway serving calls, counted by tg_store_replicas
 * (a gateway's, not a command's such as `toolgate approvals`); it is
 * counted from the next second on, while it lives. 0; TG_ERR_UNAVAILABLE
 * for a store on a directory. */
TG_API int tg_store_replica_join(struct tg_store *store, struct tg_error *err);
/* How many gateways serve calls on this store now (the rate limits are
 * divided among them: docs/AUTH.md, "Rate limits"): OUT *n; TG_ERR_UNAVAILABLE
 * for a store on a directory. */
TG_API int tg_store_replicas(struct tg_store *store, unsigned *n, struct tg_error *err);

/* ---- audit anchors (docs/AUDIT.md, "Replicas and anchors") ------------------------ */

/* A replica's audit log's head, as the replica noted it in the store. */
struct tg_audit_anchor {
	char replica[64];   /* the replica's name (tg_audit_set_replica) */
	char chain[65];     /* its log's first record's hash: which log */
	uint64_t seq;       /* the head: its last record's number and hash */
	char hash[65];
	int64_t at;         /* when it was noted, unix seconds by the store's clock */
};
/* a's head kept (a->at is the store's), unless the store holds a later one
 * of that replica's chain: 0. TG_ERR_INVALID for a name or hash outside its
 * form; TG_ERR_UNAVAILABLE for a store that keeps no anchors (SQLite's: a
 * replica's log is anchored in a shared store, PostgreSQL). */
TG_API int tg_store_anchor_put(struct tg_store *store, const struct tg_audit_anchor *a,
			       struct tg_error *err);
/* replica's anchors, its latest first, at most max (at most 64): OUT *out
 * (malloc'd, or NULL) and *n. TG_ERR_UNAVAILABLE as tg_store_anchor_put. */
TG_API int tg_store_anchors(struct tg_store *store, const char *replica, size_t max,
			    struct tg_audit_anchor **out, size_t *n, struct tg_error *err);

/* ---- collection ----------------------------------------------------------------- */

/* What one collection removed. */
struct tg_store_gc_stats {
	uint64_t idempotency, revocations, tickets, emptied, events;
};
/* Delete what expired before now: idempotency records and revocations
 * past their expiry, tickets whose decision or expiry, the later, is
 * keep seconds or more before now (keep < 0: tickets are kept), and
 * ticket events written keep seconds or more before now, except
 * those a plan or a rollback still running reads. A deleted ticket's
 * call can no longer be rolled back. Tickets that ended without running
 * (rejected, cancelled, expired) are emptied at once: their arguments,
 * preview and findings go, their hash and states stay (emptied). Done in
 * batches, the store's lock let go between them. OUT *stats (may be
 * NULL). */
TG_API int tg_store_gc(struct tg_store *store, int64_t now, int64_t keep,
		       struct tg_store_gc_stats *stats, struct tg_error *err);

#ifdef __cplusplus
}
#endif
#endif
