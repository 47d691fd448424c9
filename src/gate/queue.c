/*
 * The approvers' queue kept within bounds (docs/PIPELINE.md, "Bounds of
 * the queue"): a principal may have only so many write tickets awaiting
 * a decision, holding only so many bytes, each ticket at most so large;
 * and what expired (idempotency records, revocations, tickets past their
 * keeping) is collected by a thread of the gate's, every so often. The
 * bounds and the schedule come from the policy's "tickets".
 *
 * It never refuses what a person already decided: a ticket's approval is
 * answered whatever the queue holds; only a new ticket is refused.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "gate/gate_int.h"
#include "obs/metrics.h"
#include "util/log.h"

/* Its collections, done by a thread of the gate's until it is stopped. */
static void *collector(void *arg)
{
	struct tg_gate *g = arg;
	struct timespec when;

	pthread_mutex_lock(&g->queue_lock);
	while (!g->collector_stop) {
		struct tg_store_gc_stats gc;
		struct tg_error err;
		int64_t every = (int64_t)g->tickets.collect_every_s, keep = (int64_t)g->tickets.keep_s;

		clock_gettime(CLOCK_MONOTONIC, &when); /* queue_wake waits by it */
		when.tv_sec += every;
		while (!g->collector_stop &&
		       pthread_cond_timedwait(&g->queue_wake, &g->queue_lock, &when) != ETIMEDOUT)
			;
		if (g->collector_stop)
			break;
		pthread_mutex_unlock(&g->queue_lock);
		/* the store has its own lock: calls go on meanwhile */
		if (tg_store_gc(g->store, TG_STORE_NOW, keep, &gc, &err) == 0) {
			metrics_add(g->metrics, "collected", "idempotency", gc.idempotency);
			metrics_add(g->metrics, "collected", "revocations", gc.revocations);
			metrics_add(g->metrics, "collected", "tickets", gc.tickets);
			metrics_add(g->metrics, "collected", "ticket_contents", gc.emptied);
			metrics_add(g->metrics, "collected", "ticket_events", gc.events);
		} else {
			metrics_add(g->metrics, "collected", "failed", 1);
			tg_log(TG_LOG_ERROR, "collecting what expired: %s", err.msg);
		}
		pthread_mutex_lock(&g->queue_lock);
	}
	pthread_mutex_unlock(&g->queue_lock);
	return NULL;
}

int gate_thread_start(pthread_t *t, void *(*fn)(void *), void *arg)
{
	/* signals are the main thread's (serve's SIGHUP reloads): a thread
	 * of the library's takes none */
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(t, NULL, fn, arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

void gate_collector_stop(struct tg_gate *g)
{
	pthread_mutex_lock(&g->queue_lock);
	if (!g->collector_on) {
		pthread_mutex_unlock(&g->queue_lock);
		return;
	}
	g->collector_stop = 1;
	pthread_cond_broadcast(&g->queue_wake);
	pthread_mutex_unlock(&g->queue_lock);
	pthread_join(g->collector, NULL);
	g->collector_on = 0;
	g->collector_stop = 0;
}

int gate_collector_start(struct tg_gate *g, struct tg_error *err)
{
	int rc;

	if (!g->policy || !g->store || !g->tickets.collect_every_s)
		return 0;
	rc = gate_thread_start(&g->collector, collector, g);
	if (rc != 0)
		return tg_error_sys(err, rc, "the store's collector could not start");
	g->collector_on = 1;
	return 0;
}

int gate_queue_fits(struct tg_gate *g, struct call_state *st, size_t bytes)
{
	const struct tg_ticket_policy *tp = &g->tickets;

	if (bytes <= tp->max_bytes)
		return 0;
	metrics_count(g->metrics, "excessive_agency", "queue_full");
	return gate_answer(st, "refused", "too_large_to_hold", NULL, "%s@%s: its arguments and "
			   "preview come to %zu bytes, more than a ticket holds (%llu, the policy's "
			   "tickets.max_bytes): nobody could review it, so it was not held",
			   st->k->name, st->k->version_text, bytes,
			   (unsigned long long)tp->max_bytes);
}

int gate_queue_admit(struct tg_gate *g, struct call_state *st, size_t bytes, struct tg_error *err)
{
	const struct tg_ticket_policy *tp = &g->tickets;
	uint64_t n, held;

	if (gate_queue_fits(g, st, bytes))
		return 1;
	if (tg_store_tickets_pending(g->store, st->call->principal, TG_STORE_NOW, &n, &held,
				     err) < 0)
		return -1;
	if (n < tp->max_pending && held + bytes <= tp->max_pending_bytes)
		return 0;
	return gate_queue_full(g, st);
}

int gate_queue_full(struct tg_gate *g, struct call_state *st)
{
	const struct tg_ticket_policy *tp = &g->tickets;

	metrics_count(g->metrics, "excessive_agency", "queue_full");
	return gate_answer(st, "refused", "too_many_pending", NULL, "%s@%s: %s has as many "
			   "tickets awaiting a decision, or holds as many bytes in tickets that did "
			   "not run, as the policy's tickets allow (%llu, %llu bytes): it was not "
			   "held; retry once some are decided, or expired and collected",
			   st->k->name, st->k->version_text, st->call->principal,
			   (unsigned long long)tp->max_pending,
			   (unsigned long long)tp->max_pending_bytes);
}
