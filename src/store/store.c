/*
 * The store's front (include/toolgate/store.h, docs/STORE.md): every
 * public tg_store_* call, its inputs checked here once (key, sizes,
 * states, the moves a ticket may make, who may decide, the names and
 * hash of a pin), then handed to
 * the backend through st->ops (store_int.h), SQLite's today
 * (src/store/sqlite*.c). It also makes the openings (the state directory,
 * the instance id and lock) and the tickets' ids, and names the states.
 *
 * Must never: name a database type or write a query (that is a
 * backend's), or let an unchecked input reach an op.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

#include "store/store_int.h"
#include "toolgate/store.h"
#include "util/file.h"
#include "util/sodium.h"

/* A postgres:// or postgresql:// URL is a PostgreSQL database; anything
 * else a state directory, SQLite's (docs/STORE.md, "Backends"). */
static const struct tg_store_ops *backend_of(const char *where)
{
	return strncmp(where, "postgres://", 11) == 0 || strncmp(where, "postgresql://", 13) == 0
		       ? &store_pg_ops : &store_sqlite_ops;
}

int tg_store_open(const char *where, struct tg_store **out, struct tg_error *err)
{
	return store_open_with(backend_of(where), where, out, err);
}

int tg_store_remote(const char *where)
{
	return where && backend_of(where)->remote;
}

int store_open_with(const struct tg_store_ops *ops, const char *dir, struct tg_store **out,
		    struct tg_error *err)
{
	struct tg_store *st;
	unsigned char rnd[16];

	tg_error_clear(err);
	*out = NULL;
	if (!ops->remote && file_private_dir(dir) < 0)
		return file_private_dir_why(errno)
			       ? tg_error_set(err, TG_ERR_INVALID, "store: state directory %s: %s", dir,
					      file_private_dir_why(errno))
			       : tg_error_sys(err, errno, "store: state directory %s", dir);
	if (tg_sodium_load("store", err) < 0)
		return -1;
	st = calloc(1, sizeof(*st));
	if (!st)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	st->ops = ops;
	randombytes_buf(rnd, sizeof(rnd));
	sodium_bin2hex(st->instance, sizeof(st->instance), rnd, sizeof(rnd));
	st->alive_fd = -1;
	if (!(st->dir = strdup(dir))) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto fail;
	}
	if ((!ops->remote && store_instance_start(st, err) < 0) || st->ops->open(st, err) < 0)
		goto fail;
	*out = st;
	return 0;
fail:
	tg_store_close(st);
	return -1;
}

void tg_store_close(struct tg_store *st)
{
	if (!st)
		return;
	st->ops->close(st);
	store_instance_stop(st);
	free(st->dir);
	free(st);
}

/* now as the caller gave it, or the store's clock for TG_STORE_NOW. */
static int64_t store_now(struct tg_store *st, int64_t now)
{
	if (now != TG_STORE_NOW)
		return now;
	return st->ops->now ? st->ops->now(st) : (int64_t)time(NULL);
}

int tg_store_schema(const struct tg_store *st)
{
	return st->schema;
}

int tg_store_check(struct tg_store *st, struct tg_error *err)
{
	struct statvfs vfs;
	char why[128];

	tg_error_clear(err);
	if (st->ops->check)
		return st->ops->check(st, err);
	if (statvfs(st->dir, &vfs) < 0)
		return tg_error_sys(err, errno, "store: state directory %s", st->dir);
	if (file_room(&vfs, why, sizeof(why)) < 0)
		return tg_error_set(err, TG_ERR_SYSTEM, "store: state directory %s: %s", st->dir,
				    why);
	return 0;
}

/* ---- states by name, as the backends store them ----------------------------- */

int store_ticket_state_of(const char *name)
{
	int i;

	for (i = 0; name && i < 8; i++)
		if (strcmp(name, tg_ticket_state_name((enum tg_ticket_state)i)) == 0)
			return i;
	return -1;
}

int store_saga_state_of(const char *name)
{
	int i;

	for (i = 0; name && i < 5; i++)
		if (strcmp(name, tg_saga_state_name((enum tg_saga_state)i)) == 0)
			return i;
	return 0;
}

int store_step_state_of(const char *name)
{
	int i;

	for (i = 0; name && i < 6; i++)
		if (strcmp(name, tg_saga_step_state_name((enum tg_saga_step_state)i)) == 0)
			return i;
	return 0;
}

/* ---- idempotency ----------------------------------------------------------- */

static int key_ok(const struct tg_idem_key *k, struct tg_error *err)
{
	size_t n = k->key ? strlen(k->key) : 0, i;

	if (n == 0)
		return tg_error_set(err, TG_ERR_INVALID, "idempotency key: empty");
	if (n > TG_IDEM_MAX_KEY)
		return tg_error_set(err, TG_ERR_INVALID,
				    "idempotency key: %zu bytes, longer than %d", n, TG_IDEM_MAX_KEY);
	for (i = 0; i < n; i++)
		if (k->key[i] < 0x21 || k->key[i] > 0x7e)
			return tg_error_set(err, TG_ERR_INVALID,
					    "idempotency key: byte %zu is not printable ASCII", i);
	if (!k->principal || !k->tool || !k->fingerprint)
		return tg_error_set(err, TG_ERR_INVALID, "idempotency key: no principal, tool "
				    "or fingerprint");
	return 0;
}

/* A key, and a result of len bytes to keep under it, both acceptable. */
static int result_ok(const struct tg_idem_key *k, size_t len, struct tg_error *err)
{
	tg_error_clear(err);
	if (key_ok(k, err) < 0)
		return -1;
	if (len > TG_IDEM_MAX_RESULT)
		return tg_error_set(err, TG_ERR_LIMIT, "idempotency: a result of %zu bytes, more "
				    "than %u", len, TG_IDEM_MAX_RESULT);
	return 0;
}

int tg_store_idem_begin(struct tg_store *st, const struct tg_idem_key *k, int64_t now,
			int64_t ttl, struct tg_idem_record *rec, struct tg_error *err)
{
	now = store_now(st, now);
	tg_error_clear(err);
	memset(rec, 0, sizeof(*rec));
	if (key_ok(k, err) < 0)
		return -1;
	return st->ops->idem_begin(st, k, now, ttl, rec, err);
}

int tg_store_idem_finish(struct tg_store *st, const struct tg_idem_key *k, const char *result,
			 size_t len, struct tg_error *err)
{
	if (result_ok(k, len, err) < 0)
		return -1;
	return st->ops->idem_finish(st, k, result ? result : "", result ? len : 0, err);
}

int tg_store_idem_reclaim(struct tg_store *st, const struct tg_idem_key *k, const char *expect,
			  size_t len, struct tg_error *err)
{
	tg_error_clear(err);
	if (key_ok(k, err) < 0)
		return -1;
	return st->ops->idem_reclaim(st, k, expect, len, err);
}

int tg_store_idem_takeover(struct tg_store *st, const struct tg_idem_key *k, char **marker,
			   struct tg_error *err)
{
	tg_error_clear(err);
	*marker = NULL;
	if (key_ok(k, err) < 0)
		return -1;
	return st->ops->idem_takeover(st, k, marker, err);
}

int tg_store_idem_finish_call(struct tg_store *st, const struct tg_idem_key *k, const char *result,
			      size_t len, const char *ticket, enum tg_ticket_state to,
			      struct tg_error *err)
{
	if (result_ok(k, len, err) < 0)
		return -1;
	if (to != TG_TICKET_EXECUTED && to != TG_TICKET_FAILED)
		return tg_error_set(err, TG_ERR_INVALID, "a call ends executed or failed");
	return st->ops->idem_finish_call(st, k, result, len, ticket, to, err);
}

int tg_store_idem_replace(struct tg_store *st, const struct tg_idem_key *k, const char *expect,
			  size_t elen, const char *result, size_t len, struct tg_error *err)
{
	if (result_ok(k, len, err) < 0)
		return -1;
	return st->ops->idem_replace(st, k, expect, elen, result, len, err);
}

int tg_store_idem_abandon(struct tg_store *st, const struct tg_idem_key *k, struct tg_error *err)
{
	struct tg_error ignored;

	if (!err)
		err = &ignored; /* a caller with nothing to do about it: the backend still reads it */
	tg_error_clear(err);
	if (key_ok(k, err) < 0)
		return -1;
	return st->ops->idem_abandon(st, k, err);
}

void tg_idem_record_release(struct tg_idem_record *rec)
{
	free(rec->result);
	rec->result = NULL;
	rec->result_len = 0;
}

/* ---- approval tickets -------------------------------------------------------- */

static const char *const ticket_states[] = { "pending",   "approved", "rejected",
					     "expired",   "cancelled", "executed",
					     "failed",    "compensated" };

const char *tg_ticket_state_name(enum tg_ticket_state s)
{
	return (unsigned)s < sizeof(ticket_states) / sizeof(ticket_states[0]) ? ticket_states[s]
									     : "?";
}

void tg_ticket_release(struct tg_ticket *t)
{
	free(t->preview);
	free(t->reason);
	free(t->arguments);
	free(t->covers);
	free(t->findings);
	t->preview = t->reason = t->arguments = t->covers = t->findings = NULL;
}


/* A pending ticket for req (checked here, its id made here), written by
 * the backend; with hold, the key's answer in the same transaction. */
static int ticket_create(struct tg_store *st, const struct tg_ticket *req, int64_t now,
			 int64_t ttl, const struct tg_idem_key *hold,
			 const struct tg_queue_bounds *bounds, struct tg_ticket *out,
			 struct tg_error *err)
{
	struct tg_ticket row;
	unsigned char rnd[16];
	int rc;

	tg_error_clear(err);
	if (!req->principal[0] || !req->tool[0] || strlen(req->args_sha256) != 64 || ttl <= 0)
		return tg_error_set(err, TG_ERR_INVALID, "ticket: a principal, a tool, the "
				    "arguments' SHA-256 and a lifetime are required");
	if (req->preview && strlen(req->preview) > TG_IDEM_MAX_RESULT)
		return tg_error_set(err, TG_ERR_LIMIT, "ticket: a preview of more than %u bytes",
				    TG_IDEM_MAX_RESULT);
	if (req->arguments && strlen(req->arguments) > TG_IDEM_MAX_RESULT)
		return tg_error_set(err, TG_ERR_LIMIT, "ticket: arguments of more than %u bytes",
				    TG_IDEM_MAX_RESULT);
	if (req->covers && strlen(req->covers) > 4096)
		return tg_error_set(err, TG_ERR_LIMIT, "ticket: covers more than 4096 bytes of tools");
	if (req->findings && strlen(req->findings) > 16384)
		return tg_error_set(err, TG_ERR_LIMIT, "ticket: findings of more than 16384 bytes");
	row = *req;
	randombytes_buf(rnd, sizeof(rnd));
	sodium_bin2hex(row.id, sizeof(row.id), rnd, sizeof(rnd));
	row.state = TG_TICKET_PENDING;
	row.reason = NULL;
	row.approver[0] = '\0';
	row.created = now;
	row.decided = 0;
	row.expires = now + ttl;
	rc = st->ops->ticket_insert(st, &row, hold, bounds, err);
	*out = row;
	out->preview = out->reason = out->arguments = out->covers = out->findings = NULL;
	if (rc == 0 && ((req->preview && !(out->preview = strdup(req->preview))) ||
			(req->arguments && !(out->arguments = strdup(req->arguments))) ||
			(req->covers && !(out->covers = strdup(req->covers))) ||
			(req->findings && !(out->findings = strdup(req->findings))))) {
		tg_ticket_release(out);
		rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	return rc;
}

int tg_store_ticket_create(struct tg_store *st, const struct tg_ticket *req, int64_t now,
			   int64_t ttl, struct tg_ticket *out, struct tg_error *err)
{
	now = store_now(st, now);
	return ticket_create(st, req, now, ttl, NULL, NULL, out, err);
}

int tg_store_idem_hold(struct tg_store *st, const struct tg_idem_key *key,
		       const struct tg_ticket *req, int64_t now, int64_t ttl,
		       const struct tg_queue_bounds *bounds, struct tg_ticket *out,
		       struct tg_error *err)
{
	now = store_now(st, now);
	tg_error_clear(err);
	if (key_ok(key, err) < 0)
		return -1;
	return ticket_create(st, req, now, ttl, key, bounds, out, err);
}

int tg_store_ticket_get(struct tg_store *st, const char *id, int64_t now, struct tg_ticket *t,
			struct tg_error *err)
{
	now = store_now(st, now);
	tg_error_clear(err);
	memset(t, 0, sizeof(*t));
	if (!id || strlen(id) != 32 || strspn(id, "0123456789abcdef") != 32)
		return tg_error_set(err, TG_ERR_INVALID, "ticket %.40s: not a ticket id (32 hex "
				    "digits)", id ? id : "");
	return st->ops->ticket_get(st, id, now, t, err);
}

int tg_store_ticket_decide(struct tg_store *st, const char *id, const char *approver, int approve,
			   const char *reason, int64_t now, struct tg_error *err)
{
	struct tg_ticket t;
	int rc;

	now = store_now(st, now);
	if (tg_store_ticket_get(st, id, now, &t, err) < 0)
		return -1;
	tg_ticket_release(&t);
	if (!approver || !*approver)
		return tg_error_set(err, TG_ERR_INVALID, "ticket %s: no approver", id);
	if (strcmp(approver, t.principal) == 0)
		return tg_error_set(err, TG_ERR_INVALID, "ticket %s: %s asked for this call and "
				    "cannot approve it (another identity must)", id, approver);
	if (!approve && (!reason || !*reason || strlen(reason) > 1000))
		return tg_error_set(err, TG_ERR_INVALID, "ticket %s: a rejection needs a reason (1 "
				    "to 1000 bytes)", id);
	if (t.state != TG_TICKET_PENDING)
		return tg_error_set(err, TG_ERR_INVALID, "ticket %s is %s, not pending", id,
				    tg_ticket_state_name(t.state));
	rc = st->ops->ticket_move(st, id, TG_TICKET_PENDING,
				  approve ? TG_TICKET_APPROVED : TG_TICKET_REJECTED, approver,
				  approve ? NULL : reason, now, err);
	if (rc > 0)
		return tg_error_set(err, TG_ERR_INVALID, "ticket %s: decided meanwhile", id);
	return rc;
}

int tg_store_ticket_move(struct tg_store *st, const char *id, enum tg_ticket_state from,
			 enum tg_ticket_state to, struct tg_error *err)
{
	/* the moves after a decision: approved -> executed | failed,
	 * executed -> compensated, pending -> cancelled */
	static const int allowed[][2] = {
		{ TG_TICKET_APPROVED, TG_TICKET_EXECUTED }, { TG_TICKET_APPROVED, TG_TICKET_FAILED },
		{ TG_TICKET_EXECUTED, TG_TICKET_COMPENSATED }, { TG_TICKET_PENDING, TG_TICKET_CANCELLED },
	};
	size_t i;
	int rc;

	tg_error_clear(err);
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (allowed[i][0] == (int)from && allowed[i][1] == (int)to)
			break;
	if (i == sizeof(allowed) / sizeof(allowed[0]))
		return tg_error_set(err, TG_ERR_INVALID, "ticket %.40s: %s to %s is not a move a "
				    "ticket makes", id, tg_ticket_state_name(from),
				    tg_ticket_state_name(to));
	rc = st->ops->ticket_move(st, id, from, to, NULL, NULL, 0, err);
	if (rc > 0)
		return tg_error_set(err, TG_ERR_INVALID, "ticket %.40s is not %s", id,
				    tg_ticket_state_name(from));
	return rc;
}

int tg_store_ticket_find(struct tg_store *st, const char *tool, const char *args_sha256,
			 int64_t now, struct tg_ticket *t, struct tg_error *err)
{
	now = store_now(st, now);
	tg_error_clear(err);
	memset(t, 0, sizeof(*t));
	if (!tool || !args_sha256)
		return tg_error_set(err, TG_ERR_INVALID, "ticket: a tool and an arguments' hash "
				    "are needed");
	return st->ops->ticket_find(st, tool, args_sha256, now, t, err);
}

int tg_store_ticket_supersede(struct tg_store *st, const char *tool, const char *args_sha256,
			      size_t *n, struct tg_error *err)
{
	tg_error_clear(err);
	*n = 0;
	if (!tool || !args_sha256)
		return tg_error_set(err, TG_ERR_INVALID, "ticket: a tool and an arguments' hash "
				    "are needed");
	return st->ops->ticket_supersede(st, tool, args_sha256, n, err);
}

int tg_store_tickets_of(struct tg_store *st, const char *principal, uint64_t *n,
			struct tg_error *err)
{
	tg_error_clear(err);
	*n = 0;
	if (!principal)
		return tg_error_set(err, TG_ERR_INVALID, "tickets: a principal is needed");
	return st->ops->tickets_of(st, principal, n, err);
}

int tg_store_ticket_list(struct tg_store *st, enum tg_ticket_state state, int64_t now,
			 struct tg_ticket **out, size_t *n, struct tg_error *err)
{
	now = store_now(st, now);
	tg_error_clear(err);
	*out = NULL;
	*n = 0;
	return st->ops->ticket_list(st, (int)state, now, out, n, err);
}

int tg_store_ticket_counts(struct tg_store *st, int64_t now, uint64_t counts[8],
			   struct tg_error *err)
{
	now = store_now(st, now);
	tg_error_clear(err);
	memset(counts, 0, 8 * sizeof(counts[0]));
	return st->ops->ticket_counts(st, now, counts, err);
}

int tg_store_tickets_anomalous(struct tg_store *st, const char *principal, int64_t now,
			       uint64_t *n, struct tg_error *err)
{
	now = store_now(st, now);
	tg_error_clear(err);
	*n = 0;
	return st->ops->tickets_anomalous(st, principal, now, n, err);
}

int tg_store_tickets_pending(struct tg_store *st, const char *principal, int64_t now,
			     uint64_t *n, uint64_t *bytes, struct tg_error *err)
{
	now = store_now(st, now);
	tg_error_clear(err);
	return st->ops->tickets_pending(st, principal, now, n, bytes, err);
}

/* ---- rollbacks -------------------------------------------------------------- */

static const char *const rollback_states[] = { "running", "succeeded", "failed" };

const char *tg_rollback_state_name(enum tg_rollback_state state)
{
	return (unsigned)state < 3 ? rollback_states[state] : "unknown";
}

void tg_rollback_release(struct tg_rollback *r)
{
	free(r->detail);
	r->detail = NULL;
}

int tg_store_rollback_begin(struct tg_store *st, const char *call_id, const char *who,
			    int64_t now, struct tg_error *err)
{
	struct tg_ticket t;

	now = store_now(st, now);
	if (tg_store_ticket_get(st, call_id, now, &t, err) < 0)
		return -1;
	tg_ticket_release(&t);
	if (t.state == TG_TICKET_COMPENSATED)
		return 1;
	if (t.state != TG_TICKET_EXECUTED)
		return tg_error_set(err, TG_ERR_INVALID, "call %s is %s: only an executed call can "
				    "be rolled back", call_id, tg_ticket_state_name(t.state));
	if (!who || !*who || strlen(who) >= sizeof(((struct tg_rollback *)0)->requested_by))
		return tg_error_set(err, TG_ERR_INVALID, "rollback %s: who asks is required", call_id);
	return st->ops->rollback_begin(st, call_id, who, now, err);
}

int tg_store_rollback_end(struct tg_store *st, const char *call_id, int ok, const char *detail,
			  int64_t now, struct tg_error *err)
{
	size_t len = detail ? strlen(detail) : 0;

	now = store_now(st, now);
	tg_error_clear(err);
	if (len > TG_ROLLBACK_MAX_DETAIL)
		len = TG_ROLLBACK_MAX_DETAIL;
	return st->ops->rollback_end(st, call_id, ok, detail, len, now, err);
}

int tg_store_rollback_list(struct tg_store *st, enum tg_rollback_state state,
			   struct tg_rollback **out, size_t *n, struct tg_error *err)
{
	tg_error_clear(err);
	*out = NULL;
	*n = 0;
	return st->ops->rollback_list(st, (int)state, out, n, err);
}

/* ---- sagas -------------------------------------------------------------------- */

static const char *const saga_states[] = { "running", "done", "compensating", "compensated",
					   "failed" };
static const char *const step_states[] = { "pending", "running", "done", "failed",
					   "compensated", "compensation_failed" };

const char *tg_saga_state_name(enum tg_saga_state state)
{
	return (unsigned)state < 5 ? saga_states[state] : "unknown";
}

const char *tg_saga_step_state_name(enum tg_saga_step_state state)
{
	return (unsigned)state < 6 ? step_states[state] : "unknown";
}

void tg_saga_release(struct tg_saga *saga)
{
	size_t i;

	for (i = 0; saga->steps && i < saga->n; i++) {
		free(saga->steps[i].arguments);
		free(saga->steps[i].result);
	}
	free(saga->steps);
	saga->steps = NULL;
	saga->n = 0;
}

int tg_store_saga_begin(struct tg_store *st, const char *id, const struct tg_saga_step *steps,
			size_t n, int64_t now, struct tg_error *err)
{
	now = store_now(st, now);
	tg_error_clear(err);
	if (!id || strlen(id) != 32 || n == 0 || n > TG_SAGA_MAX_STEPS)
		return tg_error_set(err, TG_ERR_INVALID, "saga: an id and 1 to %d steps",
				    TG_SAGA_MAX_STEPS);
	return st->ops->saga_begin(st, id, steps, n, now, err);
}

int tg_store_saga_take(struct tg_store *st, const char *id, struct tg_error *err)
{
	tg_error_clear(err);
	return st->ops->saga_take(st, id, err);
}

int tg_store_saga_get(struct tg_store *st, const char *id, struct tg_saga *saga,
		      struct tg_error *err)
{
	tg_error_clear(err);
	memset(saga, 0, sizeof(*saga));
	return st->ops->saga_get(st, id, saga, err);
}

int tg_store_saga_step(struct tg_store *st, const char *id, size_t step,
		       enum tg_saga_step_state state, const char *result, struct tg_error *err)
{
	tg_error_clear(err);
	if (result && strlen(result) > TG_IDEM_MAX_RESULT)
		return tg_error_set(err, TG_ERR_LIMIT, "saga: a step's result over %u bytes",
				    TG_IDEM_MAX_RESULT);
	return st->ops->saga_step(st, id, step, state, result, err);
}

int tg_store_saga_set(struct tg_store *st, const char *id, enum tg_saga_state state, int64_t now,
		      struct tg_error *err)
{
	now = store_now(st, now);
	tg_error_clear(err);
	return st->ops->saga_set(st, id, state, now, err);
}

int tg_store_saga_orphans(struct tg_store *st, char (**ids)[33], size_t *n, struct tg_error *err)
{
	tg_error_clear(err);
	*ids = NULL;
	*n = 0;
	return st->ops->saga_orphans(st, ids, n, err);
}

/* ---- revocations, baselines ---------------------------------------------------- */

int tg_store_revoke(struct tg_store *st, const char *jti, int64_t expires, struct tg_error *err)
{
	tg_error_clear(err);
	if (!jti || !*jti || strlen(jti) > 64)
		return tg_error_set(err, TG_ERR_INVALID, "revoke: a token id of 1 to 64 bytes");
	return st->ops->revoke(st, jti, expires, err);
}

int tg_store_revoked(struct tg_store *st, const char *jti, int64_t now, struct tg_error *err)
{
	now = store_now(st, now);
	return st->ops->revoked(st, jti, now, err);
}

int tg_store_baselines_put(struct tg_store *st, const struct tg_baseline *b, size_t n,
			   struct tg_error *err)
{
	tg_error_clear(err);
	return st->ops->baselines_put(st, b, n, err);
}

int tg_store_baselines_each(struct tg_store *st,
			    int (*fn)(void *ctx, const struct tg_baseline *b), void *ctx,
			    struct tg_error *err)
{
	struct tg_baseline *all;
	size_t n, i;
	int rc;

	tg_error_clear(err);
	if (st->ops->baselines_load(st, &all, &n, err) < 0)
		return -1;
	/* called with no lock of the backend's held: fn may use the store */
	for (i = 0, rc = 0; rc == 0 && i < n; i++)
		rc = fn(ctx, &all[i]);
	free(all);
	return rc;
}

/* ---- upstream pins ---------------------------------------------------------------- */

/* upstream is a declaration's NAME ([a-z][a-z0-9-]{0,31}) and tool an MCP
 * tool name (1 to 128 of A-Z a-z 0-9 _ . -), as toolgate/upstream.h has
 * them. */
static int pin_names_ok(const char *upstream, const char *tool, struct tg_error *err)
{
	size_t nu = upstream ? strlen(upstream) : 0, nt = tool ? strlen(tool) : 0;

	if (nu < 1 || nu > 32 || upstream[0] < 'a' || upstream[0] > 'z' ||
	    strspn(upstream, "abcdefghijklmnopqrstuvwxyz0123456789-") != nu)
		return tg_error_set(err, TG_ERR_INVALID, "pin: upstream %.40s: not an upstream's name",
				    upstream ? upstream : "");
	if (nt < 1 || nt > 128 ||
	    strspn(tool, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") != nt)
		return tg_error_set(err, TG_ERR_INVALID, "pin: upstream %s: tool %.140s: not a tool's "
				    "name", upstream, tool ? tool : "");
	return 0;
}

void tg_pin_release(struct tg_pin *pin)
{
	free(pin->definition);
	pin->definition = NULL;
}

int tg_store_pin_get(struct tg_store *st, const char *upstream, const char *tool,
		     struct tg_pin *pin, struct tg_error *err)
{
	tg_error_clear(err);
	memset(pin, 0, sizeof(*pin));
	if (pin_names_ok(upstream, tool, err) < 0)
		return -1;
	return st->ops->pin_get(st, upstream, tool, pin, err);
}

int tg_store_pin_set(struct tg_store *st, const struct tg_pin *pin, struct tg_error *err)
{
	unsigned char h[crypto_hash_sha256_BYTES];
	char hex[65];
	size_t len;

	tg_error_clear(err);
	/* the caller's arrays: each must end within itself before strlen */
	if (!memchr(pin->upstream, '\0', sizeof(pin->upstream)) ||
	    !memchr(pin->tool, '\0', sizeof(pin->tool)) ||
	    !memchr(pin->sha256, '\0', sizeof(pin->sha256)) ||
	    !memchr(pin->pinned_by, '\0', sizeof(pin->pinned_by)))
		return tg_error_set(err, TG_ERR_INVALID, "pin: a name, hash or pinned_by that does "
				    "not end in its field");
	if (pin_names_ok(pin->upstream, pin->tool, err) < 0)
		return -1;
	if (!pin->definition || !pin->pinned_by[0])
		return tg_error_set(err, TG_ERR_INVALID, "pin %s.%s: a definition and who pinned it "
				    "are required", pin->upstream, pin->tool);
	len = strlen(pin->definition);
	if (len > TG_PIN_MAX_DEFINITION)
		return tg_error_set(err, TG_ERR_LIMIT, "pin %s.%s: a definition of %zu bytes, more "
				    "than %u", pin->upstream, pin->tool, len, TG_PIN_MAX_DEFINITION);
	/* the hash is the pin: one that is not its definition's would
	 * accept a definition nobody was shown */
	crypto_hash_sha256(h, (const unsigned char *)pin->definition, len);
	sodium_bin2hex(hex, sizeof(hex), h, sizeof(h));
	if (strcmp(hex, pin->sha256) != 0)
		return tg_error_set(err, TG_ERR_INVALID, "pin %s.%s: the SHA-256 is not the "
				    "definition's", pin->upstream, pin->tool);
	return st->ops->pin_set(st, pin, err);
}

int tg_store_pin_delete(struct tg_store *st, const char *upstream, const char *tool,
			struct tg_error *err)
{
	tg_error_clear(err);
	if (pin_names_ok(upstream, tool, err) < 0)
		return -1;
	return st->ops->pin_delete(st, upstream, tool, err);
}

int tg_store_pin_list(struct tg_store *st, const char *upstream, struct tg_pin **out, size_t *n,
		      struct tg_error *err)
{
	tg_error_clear(err);
	*out = NULL;
	*n = 0;
	if (pin_names_ok(upstream, "-", err) < 0)
		return -1;
	return st->ops->pin_list(st, upstream, out, n, err);
}

/* ---- ticket events ------------------------------------------------------------ */

int tg_store_ticket_events(struct tg_store *st, uint64_t after, size_t max,
			   struct tg_ticket_event *out, size_t *n, uint64_t *last,
			   struct tg_error *err)
{
	tg_error_clear(err);
	*n = 0;
	*last = 0;
	if (max > TG_TICKET_EVENTS_MAX || (max && !out))
		return tg_error_set(err, TG_ERR_INVALID, "ticket events: at most %d at a time",
				    TG_TICKET_EVENTS_MAX);
	return st->ops->ticket_events(st, after, max, out, n, last, err);
}

int tg_store_ticket_expire(struct tg_store *st, int64_t now, uint64_t *n, struct tg_error *err)
{
	uint64_t none;

	now = store_now(st, now);
	tg_error_clear(err);
	return st->ops->ticket_expire(st, now, n ? n : &none, err);
}

/* A webhook's name as the policy allows it (toolgate/auth.h). */
static int webhook_name_ok(const char *name, struct tg_error *err)
{
	size_t n = name ? strlen(name) : 0;

	if (n == 0 || n > 64 ||
	    strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != n)
		return tg_error_set(err, TG_ERR_INVALID, "webhook cursor: a name is 1 to 64 of "
				    "A-Z a-z 0-9 . _ -");
	return 0;
}

int tg_store_webhook_cursor(struct tg_store *st, const char *name, uint64_t *seq, int *found,
			    struct tg_error *err)
{
	tg_error_clear(err);
	*seq = 0;
	*found = 0;
	if (webhook_name_ok(name, err) < 0)
		return -1;
	return st->ops->webhook_cursor(st, name, seq, found, err);
}

int tg_store_webhook_cursor_set(struct tg_store *st, const char *name, uint64_t seq,
				struct tg_error *err)
{
	tg_error_clear(err);
	if (webhook_name_ok(name, err) < 0)
		return -1;
	if (seq > INT64_MAX)
		return tg_error_set(err, TG_ERR_INVALID, "webhook cursor: past the last number");
	return st->ops->webhook_cursor_set(st, name, seq, err);
}

int tg_store_ticket_pending_stats(struct tg_store *st, int64_t now, struct tg_ticket_pending *out,
				  size_t max, size_t *n, struct tg_error *err)
{
	now = store_now(st, now);
	tg_error_clear(err);
	*n = 0;
	if (max > 10000 || (max && !out))
		return tg_error_set(err, TG_ERR_INVALID, "pending tickets: at most 10000 tools");
	return st->ops->ticket_pending_stats(st, now, out, max, n, err);
}

/* ---- skill pins ------------------------------------------------------------------ */

/* name is a skill's (1 to 64 of a-z 0-9 -, docs/SKILLS.md). */
static int skill_name_ok(const char *name, struct tg_error *err)
{
	size_t n = name ? strnlen(name, 65) : 0;

	if (n < 1 || n > 64 || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-") != n)
		return tg_error_set(err, TG_ERR_INVALID, "skill pin: %.70s: not a skill's name",
				    name ? name : "");
	return 0;
}

int tg_store_skill_pin_get(struct tg_store *st, const char *name, struct tg_skill_pin *pin,
			   struct tg_error *err)
{
	tg_error_clear(err);
	memset(pin, 0, sizeof(*pin));
	if (skill_name_ok(name, err) < 0)
		return -1;
	return st->ops->skill_pin_get(st, name, pin, err);
}

int tg_store_skill_pin_set(struct tg_store *st, const struct tg_skill_pin *pin,
			   struct tg_error *err)
{
	tg_error_clear(err);
	/* the caller's arrays: each must end within itself before strlen */
	if (!memchr(pin->name, '\0', sizeof(pin->name)) ||
	    !memchr(pin->version, '\0', sizeof(pin->version)) ||
	    !memchr(pin->sha256, '\0', sizeof(pin->sha256)))
		return tg_error_set(err, TG_ERR_INVALID, "skill pin: a name, version or hash that "
				    "does not end in its field");
	if (skill_name_ok(pin->name, err) < 0)
		return -1;
	if (strlen(pin->sha256) != 64 || strspn(pin->sha256, "0123456789abcdef") != 64)
		return tg_error_set(err, TG_ERR_INVALID, "skill pin %s: the SHA-256 is not 64 "
				    "lower-case hex digits", pin->name);
	return st->ops->skill_pin_set(st, pin, err);
}

/* ---- collection -------------------------------------------------------------------- */

int tg_store_gc(struct tg_store *st, int64_t now, int64_t keep, struct tg_store_gc_stats *stats,
		struct tg_error *err)
{
	now = store_now(st, now);
	tg_error_clear(err);
	return st->ops->gc(st, now, keep, stats, err);
}

/* ---- leading ---------------------------------------------------------------------- */

int tg_store_lead(struct tg_store *st, const char *role, struct tg_error *err)
{
	size_t n = role ? strlen(role) : 0;

	tg_error_clear(err);
	if (n < 1 || n > 31 || strspn(role, "abcdefghijklmnopqrstuvwxyz0123456789-") != n)
		return tg_error_set(err, TG_ERR_INVALID, "lead: a role is 1 to 31 of a-z, 0-9, -");
	if (!st->ops->lead)
		return tg_error_set(err, TG_ERR_UNAVAILABLE, "lead: the %s store is one process's "
				    "or one machine's: its processes lock a file of it",
				    st->ops->name);
	return st->ops->lead(st, role, err);
}

int tg_store_replica_join(struct tg_store *st, struct tg_error *err)
{
	tg_error_clear(err);
	if (!st->ops->replica_join)
		return tg_error_set(err, TG_ERR_UNAVAILABLE, "replicas: the %s store is one "
				    "machine's", st->ops->name);
	return st->ops->replica_join(st, err);
}

int tg_store_replicas(struct tg_store *st, unsigned *n, struct tg_error *err)
{
	tg_error_clear(err);
	*n = 0;
	if (!st->ops->replicas)
		return tg_error_set(err, TG_ERR_UNAVAILABLE, "replicas: the %s store is one "
				    "machine's", st->ops->name);
	return st->ops->replicas(st, n, err);
}

/* ---- audit anchors -------------------------------------------------------------- */

static int anchors_kept(const struct tg_store *st, struct tg_error *err)
{
	if (st->ops->anchor_put && st->ops->anchors)
		return 0;
	return tg_error_set(err, TG_ERR_UNAVAILABLE, "audit anchors: the %s store keeps none "
			    "(a replica's log is anchored in a PostgreSQL store: --store)",
			    st->ops->name);
}

static int replica_ok(const char *name, struct tg_error *err)
{
	size_t n = memchr(name, '\0', 64) ? strlen(name) : 64;

	if (n < 1 || n > 63 || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				      "0123456789._-") != n)
		return tg_error_set(err, TG_ERR_INVALID, "audit anchor: a replica's name is 1 to 63 "
				    "letters, digits, '.', '_' or '-'");
	return 0;
}

static int hex64(const char *h)
{
	return memchr(h, '\0', 65) && strlen(h) == 64 && strspn(h, "0123456789abcdef") == 64;
}

int tg_store_anchor_put(struct tg_store *st, const struct tg_audit_anchor *a,
			struct tg_error *err)
{
	tg_error_clear(err);
	if (anchors_kept(st, err) < 0 || replica_ok(a->replica, err) < 0)
		return -1;
	if (!hex64(a->chain) || !hex64(a->hash) || a->seq == 0 || a->seq > INT64_MAX)
		return tg_error_set(err, TG_ERR_INVALID, "audit anchor: a chain and head hash of 64 "
				    "lower-case hex digits and a record number from 1");
	return st->ops->anchor_put(st, a, err);
}

int tg_store_anchors(struct tg_store *st, const char *replica, size_t max,
		     struct tg_audit_anchor **out, size_t *n, struct tg_error *err)
{
	tg_error_clear(err);
	*out = NULL;
	*n = 0;
	if (anchors_kept(st, err) < 0 || replica_ok(replica, err) < 0)
		return -1;
	return st->ops->anchors(st, replica, max > 64 ? 64 : max, out, n, err);
}
