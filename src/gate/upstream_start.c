/*
 * Upstreams still starting (docs/UPSTREAMS.md, "Serving"): `serve` does
 * not wait for its upstreams' servers, so a call or a listing made just
 * after it started may come before an upstream's first listing. A call
 * of NAME.x, NAME a declared upstream whose tools are not served yet,
 * waits for that listing (GATE_START_CALL_WAIT_MS at most) and is then
 * resolved again; one whose server failed to start is answered at once,
 * upstream_unavailable and retryable, naming the upstream and why, rather
 * than "no such tool". A listing waits for the upstreams still making
 * their first listing, until GATE_START_LIST_WAIT_MS after each was
 * started, so a client that lists the tools once as it connects sees them.
 *
 * Never: wait on an upstream whose start failed (its reason is the
 * answer), wait past those bounds, or hold a lock of the gate's while
 * asking a runner (the runner tells the gate without its own).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/upstream_run.h"
#include "gate/gate_int.h"
#include "toolgate/gate.h"
#include "toolgate/upstream.h"

#define GATE_START_CALL_WAIT_MS 10000 /* a call, for its upstream's first listing */
#define GATE_START_LIST_WAIT_MS TG_GATE_LIST_WAIT_MS
#define GATE_START_SLICE_MS 100       /* a runner's failure wakes nobody: looked at so often */

uint64_t gate_now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000 + (uint64_t)t.tv_nsec / 1000000;
}

/* Wait on g->installed (its lock held) until deadline, or for a slice. */
static void wait_installed(struct tg_gate *g, uint64_t deadline)
{
	uint64_t now = gate_now_ms(), until;
	struct timespec at;

	until = deadline < now + GATE_START_SLICE_MS ? deadline : now + GATE_START_SLICE_MS;
	if (until <= now)
		return;
	clock_gettime(CLOCK_MONOTONIC, &at);
	at.tv_sec += (time_t)((until - now) / 1000);
	at.tv_nsec += (long)((until - now) % 1000) * 1000000L;
	at.tv_sec += at.tv_nsec / 1000000000L;
	at.tv_nsec %= 1000000000L;
	pthread_cond_timedwait(&g->installed, &g->lock, &at);
}

static int served(struct tg_gate *g, struct gate_upstream *e)
{
	int s;

	pthread_mutex_lock(&g->lock);
	s = e->served;
	pthread_mutex_unlock(&g->lock);
	return s;
}

/* Where e's first listing stands for those who wait: 1 served, 0 on its
 * way (its server starting, or listed and the snapshot being made), -1
 * its start failed (why says why). */
static int standing(struct tg_gate *g, struct gate_upstream *e, char *why, size_t size)
{
	if (served(g, e))
		return 1;
	return upstream_run_first_listing(e->run, why, size) < 0 ? -1 : 0;
}

/* The call's answer while its upstream has not listed its tools. */
static int unlisted(struct call_state *st, const struct gate_upstream *e, const char *why)
{
	return gate_answer(st, "upstream_unavailable", "upstream_unavailable", NULL,
			   "%.140s: upstream %s has not listed its tools yet: %s%s%s: call again",
			   st->call->tool, e->u->name, why ? "the server is down (" : "still starting",
			   why ? why : "", why ? ")" : "");
}

/* 1 if the caller's scopes would let it call name (name[@version]) of
 * upstream u, by the authority u declares for it (a tool not declared is
 * a write): only such a caller waits and is told why the server is not
 * there; any other learns nothing of u, as before its tools are listed. */
static int may_call(const struct tg_gate *g, const struct call_state *st,
		    const struct tg_upstream *u, const char *name)
{
	int write = 1;
	char bare[160], need[200];
	size_t i, n = strcspn(name, "@");

	if (n >= sizeof(bare))
		return 0; /* longer than any name a listing serves */
	snprintf(bare, sizeof(bare), "%.*s", (int)n, name);
	for (i = 0; i < u->ntools; i++)
		if (u->tools[i].exposed && strcmp(u->tools[i].exposed, bare) == 0) {
			if (u->tools[i].hide)
				return 0; /* never callable: nothing to wait for */
			write = u->tools[i].authority == TG_UPSTREAM_WRITE;
		}
	return !gate_scope_missing_for(g, bare, write, st->call->scopes, need, sizeof(need));
}

int gate_resolve_starting(struct tg_gate *g, struct call_state *st)
{
	const char *name = st->call->tool, *dot = strchr(name, '.');
	const struct tg_catalog *cur;
	struct gate_upstream *e;
	uint64_t deadline;
	char why[512];
	int rc;

	if (!dot || !(e = gate_upstream_named(g, name, (size_t)(dot - name))))
		return -1;
	if (!may_call(g, st, e->u, name)) {
		gate_upstream_put(g, e);
		return -1;
	}
	/* the call's timeout when the declaration gives a shorter one; a
	 * call that cannot be cancelled (in a batch) never waits, as no call
	 * of a batch does */
	deadline = st->call->cancel_fd < 0 ? 0
		   : gate_now_ms() + (e->u->timeout_ms && e->u->timeout_ms < GATE_START_CALL_WAIT_MS
				      ? e->u->timeout_ms : GATE_START_CALL_WAIT_MS);
	while ((rc = standing(g, e, why, sizeof(why))) == 0) {
		struct gate_upstream *now = gate_upstream_named(g, name, (size_t)(dot - name));

		if (now != e) {
			/* a reload replaced or removed it meanwhile: the new
			 * declaration's, if any, is waited for instead */
			gate_upstream_put(g, e);
			if (!now || !may_call(g, st, now->u, name)) {
				if (now)
					gate_upstream_put(g, now);
				return -1;
			}
			e = now;
			continue;
		}
		gate_upstream_put(g, now);
		if (gate_cancelled_within(st->call->cancel_fd, 0)) {
			rc = gate_answer(st, "cancelled", "cancelled", NULL, "%.140s: cancelled while "
					 "upstream %s was starting", name, e->u->name);
			gate_upstream_put(g, e);
			return rc;
		}
		if (gate_now_ms() >= deadline) {
			rc = unlisted(st, e, NULL);
			gate_upstream_put(g, e);
			return rc;
		}
		pthread_mutex_lock(&g->lock);
		if (!e->served)
			wait_installed(g, deadline);
		pthread_mutex_unlock(&g->lock);
	}
	if (rc < 0) {
		rc = unlisted(st, e, why);
		gate_upstream_put(g, e);
		return rc;
	}
	gate_upstream_put(g, e);
	/* its tools are in the current snapshot: the call's becomes it */
	cur = tg_gate_acquire(g);
	if (cur == st->catalog) {
		tg_gate_release(g, cur);
		return -1;
	}
	tg_gate_release(g, st->catalog);
	st->catalog = cur;
	return 0;
}

void tg_gate_await_upstreams(struct tg_gate *g)
{
	struct gate_upstream **v;
	uint64_t until, now;
	char why[512];
	size_t n, i;

	for (;;) {
		if (gate_upstreams_hold(g, &v, &n) < 0)
			return;
		now = gate_now_ms();
		until = 0;
		for (i = 0; i < n; i++) {
			uint64_t end = v[i]->made_ms + GATE_START_LIST_WAIT_MS;

			if (now < end && end > until && standing(g, v[i], why, sizeof(why)) == 0)
				until = end;
		}
		for (i = 0; i < n; i++)
			gate_upstream_put(g, v[i]);
		free(v);
		if (!until)
			return;
		pthread_mutex_lock(&g->lock);
		wait_installed(g, until);
		pthread_mutex_unlock(&g->lock);
	}
}
