/*
 * The PostgreSQL backend's idempotency records (docs/STORE.md,
 * "PostgreSQL"): one row a (principal, tool, key). A claim is one
 * INSERT ... ON CONFLICT DO UPDATE ... WHERE the row expired: PostgreSQL
 * takes the row's lock for it, so of two replicas claiming one key at
 * once one inserts (or takes the expired row) and the other waits, then
 * finds the row live and reads what it says. Every other change is one
 * compare-and-set UPDATE, or a transaction whose rows are locked.
 *
 * Must never: check the key or the result's size (the front did), change
 * a row that another live opening runs, or claim while this opening does
 * not hold its liveness lock.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "store/pg_int.h"

#define KEY_WHERE "principal = $1 AND tool = $2 AND key = $3"

static void pp_key(struct pg_params *p, const struct tg_idem_key *k)
{
	pp_text(p, k->principal);
	pp_text(p, k->tool);
	pp_text(p, k->key);
}

/* What the key's live row says, into rec: 0 none, 1 filled, -1. */
static int lookup(PGconn *c, const struct tg_idem_key *k, int64_t now,
		  struct tg_idem_record *rec, struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r;

	pp_key(&p, k);
	pp_int(&p, now);
	r = pg_run(c, "SELECT fingerprint, state, result, created, expires FROM idempotency "
		   "WHERE " KEY_WHERE " AND expires > $4", &p, "idempotency lookup", err);
	if (!r)
		return -1;
	if (PQntuples(r) == 0) {
		PQclear(r);
		return 0;
	}
	rec->created = pg_int(r, 0, 3);
	rec->expires = pg_int(r, 0, 4);
	if (strcmp(PQgetvalue(r, 0, 0), k->fingerprint) != 0) {
		rec->state = TG_IDEM_MISMATCH;
	} else if (strcmp(PQgetvalue(r, 0, 1), "done") == 0) {
		rec->state = TG_IDEM_DONE;
		if (pg_bytes(r, 0, 2, &rec->result, &rec->result_len) < 0 ||
		    (!rec->result && !(rec->result = calloc(1, 1)))) {
			PQclear(r);
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		}
	} else {
		rec->state = TG_IDEM_RUNNING;
	}
	PQclear(r);
	return 1;
}

/* The claim: the row inserted (new), or, with expired, an expired row
 * taken over in place: 1 made, 0 not (a row stands: for insert, any; for
 * expired, one that is live again or gone), -1. Each one statement that
 * two replicas cannot both win: an insert waits for a concurrent one's
 * commit and then conflicts; an update re-reads the row it waited for and
 * finds it live. Neither locks or writes a row that stands, so a retry of
 * a finished key costs no commit. */
static int claim(struct tg_store *st, PGconn *c, const struct tg_idem_key *k, int64_t now,
		 int64_t ttl, int64_t nonce, int expired, struct tg_error *err)
{
	struct pg_params p = { 0 };
	uint64_t n;

	pp_key(&p, k);
	pp_text(&p, k->fingerprint);
	pp_text(&p, st->instance);
	pp_int(&p, now);
	pp_int(&p, now + ttl);
	pp_int(&p, nonce);
	if (pg_do(c, expired ? "UPDATE idempotency SET fingerprint = $4, state = 'running', result "
		  "= NULL, runner = $5, claim = $8, created = $6, expires = $7 WHERE " KEY_WHERE
		  " AND expires <= $6"
		  : "INSERT INTO idempotency (principal, tool, key, fingerprint, state, result, "
		  "runner, claim, created, expires) VALUES ($1, $2, $3, $4, 'running', NULL, $5, "
		  "$8, $6, $7) ON CONFLICT (principal, tool, key) DO NOTHING", &p,
		  "idempotency claim", &n, err) < 0)
		return -1;
	return n == 1;
}

/* After a claim whose connection dropped: whether the claim nonce names
 * was made, read on another connection: 1 made, 0 not, -1 cannot tell. */
static int claim_made(struct tg_store *st, const struct tg_idem_key *k, int64_t nonce)
{
	struct pg_params p = { 0 };
	struct tg_error err;
	PGresult *r;
	int made;

	pp_key(&p, k);
	pp_int(&p, nonce);
	if (pg_one(st, "SELECT 1 FROM idempotency WHERE " KEY_WHERE " AND claim = $4 AND state = "
		   "'running'", &p, "idempotency", &r, NULL, &err) < 0)
		return -1;
	made = PQntuples(r) == 1;
	PQclear(r);
	return made;
}

int pg_idem_begin(struct tg_store *st, const struct tg_idem_key *k, int64_t now, int64_t ttl,
		  struct tg_idem_record *rec, struct tg_error *err)
{
	int64_t nonce;
	PGconn *c;
	int rc = 0, i;

	if (pg_claim_ok(st, err) < 0)
		return -1;
	if (getrandom(&nonce, sizeof(nonce), 0) != sizeof(nonce))
		return tg_error_sys(err, errno, "store: getrandom");
	nonce &= INT64_MAX;
	if (!(c = pg_take(st, err)))
		return -1;
	/* what this opening left of the key settled first: a kept abandon
	 * made after this claim would delete its row */
	if (pg_loose_settle_key(pg_be(st), c, k) < 0) {
		pg_give(st, c);
		return tg_error_set(err, TG_ERR_SYSTEM, "store: idempotency key %.64s: this "
				    "gateway could not let go of its earlier claim yet; retry", k->key);
	}
	/* the key's row made; or, standing, read when live, taken over when
	 * expired; a row gone meanwhile (abandoned, collected) or taken by
	 * another is looked at again */
	for (i = 0; i < 3 && rc == 0; i++) {
		rc = claim(st, c, k, now, ttl, nonce, 0, err);
		if (rc == 0)
			rc = lookup(c, k, now, rec, err);
		if (rc == 0)
			rc = claim(st, c, k, now, ttl, nonce, 1, err);
		if (rc == 1 && !rec->state)
			rec->state = TG_IDEM_NEW;
	}
	if (rc < 0 && PQstatus(c) != CONNECTION_OK) {
		if (claim_made(st, k, nonce) == 1) {
			/* the claim was committed; only its answer was lost */
			tg_error_clear(err);
			rec->state = TG_IDEM_NEW;
			rc = 1;
		} else {
			/* not made, or not known: the server may still commit it,
			 * and the caller, told it failed, never runs it */
			pg_loose_add(pg_be(st), k, nonce);
		}
	}
	pg_give(st, c);
	if (rc == 0)
		return tg_error_set(err, TG_ERR_SYSTEM, "store: idempotency key %.64s: claimed and "
				    "freed three times over while looking; retry", k->key);
	if (rc < 0) {
		tg_idem_record_release(rec);
		return -1;
	}
	if (rec->state == TG_IDEM_NEW) {
		rec->created = now;
		rec->expires = now + ttl;
	}
	return 0;
}

/* One statement on the key's row that must change it: 0; TG_ERR_INVALID
 * when it did not; -1. */
static int update_one(struct tg_store *st, const char *sql, struct pg_params *p,
		      const struct tg_idem_key *k, struct tg_error *err)
{
	uint64_t n;

	if (pg_one(st, sql, p, "idempotency", NULL, &n, err) < 0)
		return -1;
	if (n != 1)
		return tg_error_set(err, TG_ERR_INVALID, "idempotency key %.64s: no running call of "
				    "this tool and these arguments holds it", k->key);
	return 0;
}

int pg_idem_finish(struct tg_store *st, const struct tg_idem_key *k, const char *result,
		   size_t len, struct tg_error *err)
{
	struct pg_params p = { 0 };

	pp_key(&p, k);
	pp_text(&p, k->fingerprint);
	pp_bytes(&p, result, len);
	return update_one(st, "UPDATE idempotency SET state = 'done', result = $5 WHERE " KEY_WHERE
			  " AND fingerprint = $4 AND state = 'running'", &p, k, err);
}

int pg_idem_reclaim(struct tg_store *st, const struct tg_idem_key *k, const char *expect,
		    size_t len, struct tg_error *err)
{
	struct pg_params p = { 0 };
	int rc;

	if (pg_claim_ok(st, err) < 0)
		return -1;
	pp_key(&p, k);
	pp_text(&p, k->fingerprint);
	pp_bytes(&p, expect, len);
	pp_text(&p, st->instance);
	rc = update_one(st, "UPDATE idempotency SET state = 'running', runner = $6, claim = NULL "
			"WHERE " KEY_WHERE " AND fingerprint = $4 AND state = 'done' AND result = "
			"$5", &p, k, err);
	if (rc < 0 && err->code == TG_ERR_INVALID) {
		tg_error_clear(err);
		return 1; /* another retry took it, or it changed */
	}
	return rc;
}

/* The running row's runner, and its result (the marker) when it is dead:
 * taken for this opening in the caller's transaction on c. 0 taken, 1
 * not, -1. */
static int take_over(struct tg_store *st, PGconn *c, const struct tg_idem_key *k, char **marker,
		     struct tg_error *err)
{
	struct pg_params p = { 0 };
	char runner[33];
	PGresult *r;
	size_t len;
	uint64_t n;
	int rc = 1;

	pp_key(&p, k);
	pp_text(&p, k->fingerprint);
	r = pg_run(c, "SELECT runner, result FROM idempotency WHERE " KEY_WHERE " AND fingerprint "
		   "= $4 AND state = 'running' FOR UPDATE", &p, "idempotency", err);
	if (!r)
		return -1;
	if (PQntuples(r) == 1) {
		pg_copy(runner, sizeof(runner), r, 0, 0);
		if (pg_bytes(r, 0, 1, marker, &len) < 0)
			rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		else if (len == 0) {
			free(*marker);
			*marker = NULL;
		}
	} else {
		runner[0] = '\0';
	}
	PQclear(r);
	/* the runner is gone: its lock is free (it died holding the key) */
	if (rc != 1 || !runner[0] || pg_instance_alive(st, c, runner))
		return rc;
	p = (struct pg_params){ 0 };
	pp_key(&p, k);
	pp_text(&p, runner);
	pp_text(&p, st->instance);
	if (pg_do(c, "UPDATE idempotency SET runner = $5, claim = NULL WHERE " KEY_WHERE " AND "
		  "state = 'running' AND runner = $4", &p, "idempotency takeover", &n, err) < 0)
		return -1;
	return n == 1 ? 0 : tg_error_set(err, TG_ERR_SYSTEM, "store: idempotency takeover: the "
					 "row changed under its lock");
}

int pg_idem_takeover(struct tg_store *st, const struct tg_idem_key *k, char **marker,
		     struct tg_error *err)
{
	PGconn *c;
	int rc;

	if (!(c = pg_claim_begin(st, err)))
		return -1;
	rc = take_over(st, c, k, marker, err);
	rc = pg_end(c, rc < 0 ? rc : 0, err) < 0 ? -1 : rc;
	pg_give(st, c);
	if (rc != 0) {
		free(*marker);
		*marker = NULL;
	}
	return rc;
}

int pg_idem_settle(struct tg_store *st, PGconn *c, const struct tg_idem_key *k,
		   const char *result, size_t len, struct tg_error *err)
{
	struct pg_params p = { 0 };
	uint64_t n;

	pp_key(&p, k);
	pp_text(&p, k->fingerprint);
	pp_bytes(&p, result, len);
	pp_text(&p, st->instance);
	if (pg_do(c, "UPDATE idempotency SET state = 'done', result = $5 WHERE " KEY_WHERE " AND "
		  "fingerprint = $4 AND state = 'running' AND runner = $6", &p, "idempotency", &n,
		  err) < 0)
		return -1;
	if (n != 1)
		return tg_error_set(err, TG_ERR_INVALID, "idempotency key %.64s: this gateway no "
				    "longer holds it", k->key);
	return 0;
}

int pg_idem_finish_call(struct tg_store *st, const struct tg_idem_key *k, const char *result,
			size_t len, const char *ticket, enum tg_ticket_state to,
			struct tg_error *err)
{
	PGconn *c;
	int rc;

	/* the key's answer and the ticket's outcome: one commit, never one
	 * without the other; the events' row first, as every move takes it */
	if (!(c = pg_events_begin(st, err))) {
		if (err->code == TG_ERR_SYSTEM)
			pg_loose_finish(pg_be(st), k, result, len, ticket, to);
		return -1;
	}
	rc = pg_idem_settle(st, c, k, result, len, err);
	if (rc == 0 && (rc = pg_ticket_move_on(c, ticket, TG_TICKET_APPROVED, to, NULL, NULL, 0,
					       err)) > 0)
		rc = tg_error_set(err, TG_ERR_INVALID, "ticket %.40s is no longer approved", ticket);
	rc = pg_end(c, rc, err);
	pg_give(st, c);
	/* the database away: the result made the key's once it answers (the
	 * caller, told it failed, does not tell it as kept meanwhile); made
	 * now: what was kept of an earlier try is done with */
	if (rc < 0 && err->code == TG_ERR_SYSTEM)
		pg_loose_finish(pg_be(st), k, result, len, ticket, to);
	else if (rc == 0)
		pg_loose_forget(pg_be(st), k);
	return rc;
}

int pg_idem_replace(struct tg_store *st, const struct tg_idem_key *k, const char *expect,
		    size_t elen, const char *result, size_t len, struct tg_error *err)
{
	struct pg_params p = { 0 };
	uint64_t n;

	pp_key(&p, k);
	pp_text(&p, k->fingerprint);
	pp_bytes(&p, result, len);
	pp_bytes(&p, expect, elen);
	if (pg_one(st, "UPDATE idempotency SET result = $5 WHERE " KEY_WHERE " AND fingerprint = "
		   "$4 AND state = 'done' AND result = $6", &p, "idempotency", NULL, &n, err) < 0)
		return -1;
	return n == 1 ? 0 : 1;
}

int pg_idem_abandon(struct tg_store *st, const struct tg_idem_key *k, struct tg_error *err)
{
	struct pg_params p = { 0 };

	int rc;

	pp_key(&p, k);
	pp_text(&p, k->fingerprint);
	rc = update_one(st, "DELETE FROM idempotency WHERE " KEY_WHERE " AND fingerprint = $4 "
			"AND state = 'running'", &p, k, err);
	/* the database away: let go of it once it answers, rather than have
	 * every retry told the call runs until the key expires */
	if (rc < 0 && err->code == TG_ERR_SYSTEM)
		pg_loose_add(pg_be(st), k, 0);
	return rc;
}
