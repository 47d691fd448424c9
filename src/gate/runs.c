/*
 * The gateway's sandboxes shared (docs/PIPELINE.md, "Sandboxes at
 * once"): at most max_runs command tools run at once, from any transport
 * (a session's calls, stateless requests, tasks, a plan's steps, dry
 * runs and previews), and at most per_principal of them for one
 * principal, so that no caller, however many requests it sends, takes
 * every sandbox. A call past its share waits for a place, as long as its
 * caller does not give up and at most RUNS_WAIT_MS; then it is answered
 * busy, retryable. It never decides what runs, only when.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gate/gate_int.h"

#define RUNS_WAIT_MS 10000   /* how long a call waits for a place */
#define RUNS_SLICE_MS 100    /* how often a waiting call looks at its cancellation */

/* principal's count of running sandboxes (the caller holds the lock):
 * its entry, made if new and make; NULL if none (or the table is full,
 * which it cannot be: at most max_runs principals run at once). */
static struct gate_runner *runner(struct gate_runs *r, const char *principal, int make)
{
	size_t i, free_at = r->max;

	for (i = 0; i < r->max; i++) {
		/* a name past the entry's size counts by its beginning: the
		 * transports allow at most 127 bytes anyway */
		if (r->by[i].n && strncmp(r->by[i].principal, principal,
					  sizeof(r->by[i].principal) - 1) == 0)
			return &r->by[i];
		if (!r->by[i].n && free_at == r->max)
			free_at = i;
	}
	if (!make || free_at == r->max)
		return NULL;
	snprintf(r->by[free_at].principal, sizeof(r->by[free_at].principal), "%s", principal);
	return &r->by[free_at];
}

int gate_runs_init(struct gate_runs *r, unsigned max, unsigned per_principal)
{
	memset(r, 0, sizeof(*r));
	r->max = max ? max : GATE_RUNS_DEFAULT;
	r->per_principal = per_principal ? per_principal : (r->max + 3) / 4;
	if (r->per_principal > r->max)
		r->per_principal = r->max;
	r->by = calloc(r->max, sizeof(*r->by));
	if (!r->by)
		return -1;
	pthread_mutex_init(&r->lock, NULL);
	{
		/* waits by the monotonic clock: a clock set back moves none */
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&r->freed, &ca);
		pthread_condattr_destroy(&ca);
	}
	return 0;
}

void gate_runs_release(struct gate_runs *r)
{
	if (!r->by)
		return;
	pthread_cond_destroy(&r->freed);
	pthread_mutex_destroy(&r->lock);
	free(r->by);
	r->by = NULL;
}

/* ms from now on the monotonic clock, into *t. */
static void after_ms(struct timespec *t, long ms)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += ms / 1000;
	t->tv_nsec += (ms % 1000) * 1000000L;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

static int passed(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return now.tv_sec > t->tv_sec || (now.tv_sec == t->tv_sec && now.tv_nsec >= t->tv_nsec);
}

int gate_runs_take(struct gate_runs *r, const char *principal, int cancel_fd, int forever)
{
	struct timespec deadline, slice;

	after_ms(&deadline, RUNS_WAIT_MS);
	pthread_mutex_lock(&r->lock);
	for (;;) {
		struct gate_runner *p = runner(r, principal, 0);

		if (r->total < r->max && (!p || p->n < r->per_principal)) {
			p = runner(r, principal, 1);
			p->n++;
			r->total++;
			pthread_mutex_unlock(&r->lock);
			return 0;
		}
		if (!forever && passed(&deadline))
			break;
		pthread_mutex_unlock(&r->lock);
		/* the caller that gives up stops waiting */
		if (gate_cancelled_within(cancel_fd, 0))
			return 2;
		pthread_mutex_lock(&r->lock);
		/* woken by a place given back, or a slice later to look at the
		 * cancellation; the deadline is the clock's, whatever wakes it */
		after_ms(&slice, RUNS_SLICE_MS);
		pthread_cond_timedwait(&r->freed, &r->lock, &slice);
	}
	pthread_mutex_unlock(&r->lock);
	return 1;
}

void gate_runs_give(struct gate_runs *r, const char *principal)
{
	struct gate_runner *p;

	pthread_mutex_lock(&r->lock);
	p = runner(r, principal, 0);
	if (p && p->n) {
		p->n--;
		r->total--;
	}
	pthread_cond_broadcast(&r->freed);
	pthread_mutex_unlock(&r->lock);
}

unsigned gate_runs_active(struct gate_runs *r)
{
	unsigned n;

	pthread_mutex_lock(&r->lock);
	n = r->total;
	pthread_mutex_unlock(&r->lock);
	return n;
}
