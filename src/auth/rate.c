/*
 * Rate limits (docs/AUTH.md): a token bucket per principal and tool. A
 * principal's "rate" in the policy, "N/s", "N/m" or "N/h", lets it call
 * each tool N times a window, in bursts of up to N; the bucket refills
 * continuously. Buckets live in a chained hash table under one mutex;
 * their number is bounded by the policy's principals times the tools
 * they call (at most MAX_BUCKETS: past that, an old bucket goes, found
 * by a bounded walk; forgetting a bucket only ever forgives).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/auth.h"

#define NSLOTS 4096
#define MAX_BUCKETS 65536
#define EVICT_SCAN 64   /* slots looked at to make room for a bucket */

struct bucket {
	char *key;                  /* "principal\ntool" */
	double tokens;
	uint64_t last_ms;           /* of the last refill */
	struct bucket *next;
};

struct tg_limiter {
	const struct tg_policy *policy;
	pthread_mutex_t lock;
	struct bucket *slots[NSLOTS];
	size_t n;
	size_t cursor;              /* where the next eviction looks */
	unsigned share;             /* the replicas the rate is divided among (1: one) */
};

int tg_limiter_new(const struct tg_policy *policy, struct tg_limiter **out, struct tg_error *err)
{
	struct tg_limiter *l = calloc(1, sizeof(*l));

	*out = NULL;
	if (!l)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	l->policy = policy;
	l->share = 1;
	pthread_mutex_init(&l->lock, NULL);
	*out = l;
	return 0;
}

void tg_limiter_free(struct tg_limiter *l)
{
	struct bucket *b, *next;
	size_t i;

	if (!l)
		return;
	for (i = 0; i < NSLOTS; i++)
		for (b = l->slots[i]; b; b = next) {
			next = b->next;
			free(b->key);
			free(b);
		}
	pthread_mutex_destroy(&l->lock);
	free(l);
}

static size_t hash(const char *s)
{
	size_t h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h % NSLOTS;
}

/* A bucket goes to make room (the caller holds lock): the least recently
 * used of the next EVICT_SCAN slots from a rotating cursor, so that
 * making room costs a bounded walk, not the whole table. A forgotten
 * bucket is a full one, so this never limits anyone more. */
static void evict_one(struct tg_limiter *l)
{
	struct bucket **oldest = NULL, **p, *b;
	size_t i;

	for (i = 0; i < NSLOTS && (i < EVICT_SCAN || !oldest); i++) {
		size_t slot = (l->cursor + i) % NSLOTS;

		for (p = &l->slots[slot]; *p; p = &(*p)->next)
			if (!oldest || (*p)->last_ms < (*oldest)->last_ms)
				oldest = p;
	}
	l->cursor = (l->cursor + i) % NSLOTS;
	if (!oldest)
		return;
	b = *oldest;
	*oldest = b->next;
	free(b->key);
	free(b);
	l->n--;
}

void tg_limiter_share(struct tg_limiter *l, unsigned replicas)
{
	__atomic_store_n(&l->share, replicas ? replicas : 1, __ATOMIC_RELAXED);
}

int tg_limiter_take(struct tg_limiter *l, const char *principal, const char *tool,
		    uint64_t now_ms, uint64_t *retry_ms)
{
	uint64_t per = tg_policy_rate(l->policy, principal, NULL), window_ms;
	unsigned share = __atomic_load_n(&l->share, __ATOMIC_RELAXED);
	struct bucket *b;
	double rate, cap;
	char key[400];
	size_t slot;
	int ok;

	*retry_ms = 0;
	if (!per)
		return 1; /* no limit for this principal */
	tg_policy_rate(l->policy, principal, &window_ms);
	/* this replica's part of the rate: per / share a window, in bursts of
	 * as many, never less than one call */
	cap = (double)per / (double)share;
	if (cap < 1.0)
		cap = 1.0;
	rate = (double)per / (double)share / (double)window_ms; /* tokens per millisecond */
	snprintf(key, sizeof(key), "%.127s\n%.250s", principal, tool);
	slot = hash(key);
	pthread_mutex_lock(&l->lock);
	for (b = l->slots[slot]; b && strcmp(b->key, key) != 0; b = b->next)
		;
	if (!b) {
		if (l->n >= MAX_BUCKETS)
			evict_one(l);
		b = calloc(1, sizeof(*b));
		if (b)
			b->key = strdup(key);
		if (!b || !b->key) {
			free(b);
			pthread_mutex_unlock(&l->lock);
			return 1; /* out of memory: fail open on a limit, never on authority */
		}
		b->tokens = cap;
		b->last_ms = now_ms;
		b->next = l->slots[slot];
		l->slots[slot] = b;
		l->n++;
	}
	if (now_ms > b->last_ms) {
		b->tokens += (double)(now_ms - b->last_ms) * rate;
		if (b->tokens > cap)
			b->tokens = cap; /* this replica's burst, not the whole rate's */
		b->last_ms = now_ms;
	}
	ok = b->tokens >= 1.0;
	if (ok)
		b->tokens -= 1.0;
	else
		*retry_ms = (uint64_t)((1.0 - b->tokens) / rate) + 1;
	pthread_mutex_unlock(&l->lock);
	return ok;
}
