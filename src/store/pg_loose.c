/*
 * Claims the PostgreSQL backend could not let go of (docs/STORE.md,
 * "Claims left behind"): a key whose abandon failed because the database
 * was away, a claim whose connection dropped before its answer came and
 * whose read-back could not say it was made (the server may still commit
 * it after), and a call that ran whose result could not be kept. Either would stay `running` under this opening, which
 * lives, so every retry would be told the call runs, for as long as the
 * key lives (a day). Each is kept here and deleted by the liveness watch
 * (pg.c) once the database answers again: only a running row of this
 * opening's, and for a claim only the one its random number names, so
 * nothing a call runs, or another replica took, is touched.
 *
 * A result is made the key's as pg_idem_finish_call makes it, once the
 * database answers.
 *
 * Must never: delete a row another opening holds, or one a call of this
 * opening runs (the gate abandons only a key whose call never ran; a
 * claim that failed was never answered NEW), or keep a result on a key
 * that is not this opening's running one. Bounded: LOOSE_MAX kept.
 */
#include <stdlib.h>
#include <string.h>

#include "store/pg_int.h"
#include "util/log.h"

#define LOOSE_MAX 1024

struct pg_loose {
	struct pg_loose *next;
	int64_t nonce;          /* the claim's number; 0: an abandon, by fingerprint */
	char *principal, *tool, *key, *fingerprint;
	/* a finish to make (pg_loose_finish): the result, the ticket, its end */
	char *result, *ticket;
	size_t len;
	enum tg_ticket_state to;
};

static void loose_free(struct pg_loose *l)
{
	if (!l)
		return;
	free(l->principal);
	free(l->tool);
	free(l->key);
	free(l->fingerprint);
	free(l->result);
	free(l->ticket);
	free(l);
}

static struct pg_loose *loose_new(const struct tg_idem_key *k, int64_t nonce)
{
	struct pg_loose *l = calloc(1, sizeof(*l));

	if (!l)
		return NULL;
	l->nonce = nonce;
	l->principal = strdup(k->principal);
	l->tool = strdup(k->tool);
	l->key = strdup(k->key);
	l->fingerprint = strdup(k->fingerprint);
	if (l->principal && l->tool && l->key && l->fingerprint)
		return l;
	loose_free(l);
	return NULL;
}

/* l kept, in place of one of its key's kept before (the same finish again,
 * or a finish after an abandon cannot be: one kind a key). */
static void loose_keep(struct pg_store *q, struct pg_loose *l, const struct tg_idem_key *k)
{
	struct pg_loose **p, *old = NULL;

	pthread_mutex_lock(&q->lock);
	for (p = &q->loose; *p; p = &(*p)->next)
		if (strcmp((*p)->key, k->key) == 0 && strcmp((*p)->tool, k->tool) == 0 &&
		    strcmp((*p)->principal, k->principal) == 0) {
			old = *p;
			*p = old->next;
			q->nloose--;
			break;
		}
	if (q->nloose >= LOOSE_MAX) {
		pthread_mutex_unlock(&q->lock);
		loose_free(old);
		tg_log(TG_LOG_ERROR, "store: idempotency key %.64s is left running under this "
		       "gateway until it restarts or the key expires (too many keys left behind)",
		       k->key);
		loose_free(l);
		return;
	}
	l->next = q->loose;
	q->loose = l;
	q->nloose++;
	pthread_mutex_unlock(&q->lock);
	loose_free(old);
}

void pg_loose_finish(struct pg_store *q, const struct tg_idem_key *k, const char *result,
		     size_t len, const char *ticket, enum tg_ticket_state to)
{
	struct pg_loose *l = loose_new(k, 0);

	if (l) {
		l->result = malloc(len + 1);
		l->ticket = strdup(ticket);
		l->len = len;
		l->to = to;
	}
	if (!l || !l->result || !l->ticket) {
		loose_free(l);
		tg_log(TG_LOG_ERROR, "store: idempotency key %.64s: its result is not kept (out of "
		       "memory): it stays running under this gateway", k->key);
		return;
	}
	memcpy(l->result, result, len);
	l->result[len] = '\0';
	loose_keep(q, l, k);
}

void pg_loose_add(struct pg_store *q, const struct tg_idem_key *k, int64_t nonce)
{
	struct pg_loose *l = loose_new(k, nonce);

	if (l) {
		loose_keep(q, l, k);
		return;
	}
	pthread_mutex_lock(&q->lock);
	if (!l) {
		pthread_mutex_unlock(&q->lock);
		tg_log(TG_LOG_ERROR, "store: idempotency key %.64s is left running under this "
		       "gateway until it restarts or the key expires (out of memory)", k->key);
		return;
	}
	pthread_mutex_unlock(&q->lock);
}

/* A kept finish made on c, as pg_idem_finish_call makes it, in one
 * transaction: the key's result (only while this opening runs it) and the
 * ticket approved -> to. 0 made, or nothing left to make (the key is not
 * this opening's running one any more, or the ticket moved); -1 the
 * database did not answer (kept for the next sweep). */
static int finish(struct pg_store *q, PGconn *c, const struct pg_loose *l)
{
	struct pg_params p = { 0 };
	struct tg_error err;
	uint64_t n = 0;
	int rc;

	if (pg_script(c, "BEGIN; SELECT n FROM ticket_event_counter FOR UPDATE", "ticket events",
		      &err) < 0) {
		pg_end(c, -1, &err);
		return -1;
	}
	pp_text(&p, l->principal);
	pp_text(&p, l->tool);
	pp_text(&p, l->key);
	pp_text(&p, l->fingerprint);
	pp_bytes(&p, l->result, l->len);
	pp_text(&p, q->instance);
	rc = pg_do(c, "UPDATE idempotency SET state = 'done', result = $5 WHERE principal = $1 AND "
		   "tool = $2 AND key = $3 AND fingerprint = $4 AND state = 'running' AND runner = "
		   "$6", &p, "idempotency", &n, &err);
	if (rc == 0 && n == 1)
		rc = pg_ticket_move_on(c, l->ticket, TG_TICKET_APPROVED, l->to, NULL, NULL, 0, &err);
	if (rc != 0 || n != 1) {
		pg_end(c, rc < 0 ? -1 : 1, &err);
		return rc < 0 ? -1 : 0;
	}
	if (pg_end(c, 0, &err) < 0)
		return -1;
	tg_log(TG_LOG_INFO, "store: idempotency key %.64s: its result kept, once the database "
	       "answered again", l->key);
	return 0;
}

/* One left-behind claim deleted on c: 0 done (deleted, or nothing of it
 * left), -1 the database did not answer (kept for the next sweep). */
static int let_go(struct pg_store *q, PGconn *c, const struct pg_loose *l)
{
	struct pg_params p = { 0 };
	struct tg_error err;

	if (l->result)
		return finish(q, c, l);
	pp_text(&p, l->principal);
	pp_text(&p, l->tool);
	pp_text(&p, l->key);
	pp_text(&p, q->instance);
	if (l->nonce) {
		pp_int(&p, l->nonce);
		return pg_do(c, "DELETE FROM idempotency WHERE principal = $1 AND tool = $2 AND key = "
			     "$3 AND runner = $4 AND claim = $5 AND state = 'running'", &p,
			     "idempotency", NULL, &err);
	}
	pp_text(&p, l->fingerprint);
	return pg_do(c, "DELETE FROM idempotency WHERE principal = $1 AND tool = $2 AND key = $3 "
		     "AND runner = $4 AND fingerprint = $5 AND state = 'running'", &p, "idempotency",
		     NULL, &err);
}

void pg_loose_sweep(struct pg_store *q, PGconn *c)
{
	struct pg_loose *list, *l, *keep = NULL;
	size_t kept = 0;

	pthread_mutex_lock(&q->lock);
	list = q->loose;
	q->loose = NULL;
	q->nloose = 0;
	pthread_mutex_unlock(&q->lock);
	while ((l = list)) {
		list = l->next;
		if (let_go(q, c, l) == 0) {
			loose_free(l);
			continue;
		}
		l->next = keep;
		keep = l;
		kept++;
	}
	if (!keep)
		return;
	pthread_mutex_lock(&q->lock);
	for (l = keep; l->next; l = l->next)
		;
	l->next = q->loose;
	q->loose = keep;
	q->nloose += kept;
	pthread_mutex_unlock(&q->lock);
}

/* k's kept entry taken out (its call settled it another way), or NULL. */
static struct pg_loose *loose_take(struct pg_store *q, const struct tg_idem_key *k)
{
	struct pg_loose **p, *l = NULL;

	pthread_mutex_lock(&q->lock);
	for (p = &q->loose; *p; p = &(*p)->next)
		if (strcmp((*p)->key, k->key) == 0 && strcmp((*p)->tool, k->tool) == 0 &&
		    strcmp((*p)->principal, k->principal) == 0) {
			l = *p;
			*p = l->next;
			q->nloose--;
			break;
		}
	pthread_mutex_unlock(&q->lock);
	return l;
}

void pg_loose_forget(struct pg_store *q, const struct tg_idem_key *k)
{
	loose_free(loose_take(q, k));
}

int pg_loose_settle_key(struct pg_store *q, PGconn *c, const struct tg_idem_key *k)
{
	struct pg_loose *l;

	if (!__atomic_load_n(&q->nloose, __ATOMIC_RELAXED) || !(l = loose_take(q, k)))
		return 0;
	if (let_go(q, c, l) == 0) {
		loose_free(l);
		return 0;
	}
	loose_keep(q, l, k);
	return -1;
}

void pg_loose_free(struct pg_store *q)
{
	struct pg_loose *l;

	while ((l = q->loose)) {
		q->loose = l->next;
		loose_free(l);
	}
	q->nloose = 0;
}
