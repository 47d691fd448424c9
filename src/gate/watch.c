/*
 * The tickets' watch (include/toolgate/gate.h, tg_gate_ticket_events_wait;
 * docs/STORE.md, "Ticket events"): a thread of the gate's, while it has a
 * store, that sweeps the pending tickets past their expiry to expired at
 * most every second, and reads the number of the latest ticket event
 * every WATCH_POLL_MS: decisions come from other processes too
 * (`toolgate approvals`), so the events in the store, not this process's
 * memory, are what it goes by. Readers (the console's live list) wait on
 * it, woken when the number passes theirs. The decisions among the events
 * are counted in the metrics (docs/METRICS.md, "Tickets"), and what is
 * pending is read for them when they are rendered (gate_ticket_gauges).
 *
 * With a store that several gateways share (PostgreSQL's), it divides the
 * rate limits among the replicas serving calls, counted every second.
 *
 * With an audit log of a named replica (tg_audit_set_replica) and a store
 * that keeps anchors (PostgreSQL's), it also notes the log's head in the
 * store every ANCHOR_EVERY_MS and once more when it stops (docs/AUDIT.md,
 * "Replicas and anchors").
 *
 * It never holds its lock across the store, and never runs on a call's
 * path: a call writes its ticket and goes on.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gate/gate_int.h"
#include "obs/audit.h"
#include "obs/metrics.h"
#include "util/log.h"

#define WATCH_POLL_MS 250
#define SWEEP_EVERY_MS 1000
#define WAIT_MAX_MS 60000u
#define ANCHOR_EVERY_MS 2000

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void deadline(struct timespec *when, unsigned ms)
{
	clock_gettime(CLOCK_MONOTONIC, when);
	when->tv_sec += ms / 1000;
	when->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (when->tv_nsec >= 1000000000L) {
		when->tv_sec++;
		when->tv_nsec -= 1000000000L;
	}
}

/* The decisions among n events counted: outcome and seconds waited. */
static void watch_count(struct tg_gate *g, const struct tg_ticket_event *ev, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct tg_ticket_event *e = &ev[i];
		int64_t when = e->decided ? e->decided : e->at; /* a cancel keeps none */

		if (e->state == TG_TICKET_APPROVED || e->state == TG_TICKET_REJECTED ||
		    e->state == TG_TICKET_EXPIRED || e->state == TG_TICKET_CANCELLED)
			metrics_decision(g->metrics, tg_ticket_state_name(e->state),
					 (double)(when - e->created));
	}
}

/* The events after the watch's cursor, read and counted (under
 * watch_read_lock: the watch and a scrape both catch up); OUT *last the
 * latest number given. A failure is logged once a minute at most. */
static void watch_read(struct tg_gate *g, uint64_t *last)
{
	struct tg_ticket_event ev[64];
	struct tg_error err;
	size_t n;

	pthread_mutex_lock(&g->watch_read_lock);
	for (;;) {
		if (tg_store_ticket_events(g->store, g->watch_cursor, 64, ev, &n, last, &err) < 0) {
			uint64_t now = mono_ms();

			if (now - g->watch_logged >= 60000) {
				g->watch_logged = now;
				tg_log(TG_LOG_ERROR, "reading the tickets' events: %s", err.msg);
			}
			break;
		}
		watch_count(g, ev, n);
		if (n)
			g->watch_cursor = ev[n - 1].seq;
		if (n < 64 || g->watch_cursor >= *last) {
			/* events collected under the cursor: start after the last */
			if (g->watch_cursor < *last && !n)
				g->watch_cursor = *last;
			break;
		}
	}
	pthread_mutex_unlock(&g->watch_read_lock);
}

#define PENDING_TOOLS 64 /* series of toolgate_tickets_pending, "other" past them */

void gate_ticket_gauges(struct tg_gate *g, const struct tg_catalog *cat,
			struct metrics_gauges *gg, struct metrics_pending *pend, size_t max)
{
	struct tg_ticket_pending p[256];
	int64_t now = (int64_t)time(NULL), oldest = 0;
	struct tg_error err;
	uint64_t last;
	size_t n, i, k;

	if (!g->store || !g->watch_on)
		return;
	/* the decisions up to now, whoever took them */
	watch_read(g, &last);
	if (tg_store_ticket_pending_stats(g->store, now, p, 256, &n, &err) < 0)
		return;
	gg->have_tickets = 1;
	gg->pending = pend;
	gg->npending = 0;
	for (i = 0; i < n; i++) {
		const char *name = "other";
		size_t len = strcspn(p[i].tool, "@");

		if (!oldest || p[i].oldest < oldest)
			oldest = p[i].oldest;
		/* a label from the catalogue's names only: bounded */
		for (k = 0; cat && k < tg_catalog_count(cat); k++) {
			const char *c = tg_catalog_at(cat, k)->name;

			if (strlen(c) == len && memcmp(c, p[i].tool, len) == 0) {
				name = c;
				break;
			}
		}
		for (k = 0; k < gg->npending && strcmp(pend[k].tool, name) != 0; k++)
			;
		if (k == gg->npending && k + 1 >= max)
			for (k = 0; k < gg->npending && strcmp(pend[k].tool, "other") != 0; k++)
				;
		if (k == gg->npending) {
			pend[k].tool = k + 1 >= max ? "other" : name;
			pend[k].n = 0;
			gg->npending++;
		}
		pend[k].n += p[i].n;
	}
	gg->oldest_pending_s = oldest && now > oldest ? (double)(now - oldest) : 0;
}

/* 1 if the log whose chain is chain reaches the head the store keeps of
 * it (or the store keeps none), 0 if not (said: it is not anchored from
 * now on, so the store keeps what shows the loss), -1 cannot tell yet. */
static int anchor_continues(struct tg_gate *g, const char *replica, const char *chain)
{
	struct tg_audit_anchor *an = NULL;
	struct tg_error err;
	size_t n = 0, i;
	int held;

	if (tg_store_anchors(g->store, replica, 64, &an, &n, &err) < 0)
		return err.code == TG_ERR_UNAVAILABLE ? 1 : -1;
	for (i = 0; i < n && strcmp(an[i].chain, chain) != 0; i++)
		;
	if (i == n) {
		free(an);
		return 1;
	}
	held = audit_holds(g->audit, an[i].seq, an[i].hash, &err);
	if (held == 0)
		tg_log(TG_LOG_ERROR, "the audit log of replica %s does not hold record %llu as the "
		       "store anchored it: it was cut back or rewritten while the gateway was "
		       "stopped; its head is not anchored from now on, so the store keeps what "
		       "shows it (toolgate audit verify --store)", replica,
		       (unsigned long long)an[i].seq);
	free(an);
	return held;
}

/* The audit log's head noted in the store, when it moved since the last
 * note (the watch thread's, and gate_watch_stop's once the thread ended). */
static void watch_anchor(struct tg_gate *g)
{
	struct tg_audit_anchor an;
	struct tg_audit_stats s;
	struct tg_error err;
	const char *replica = g->audit ? audit_replica(g->audit) : "";
	uint64_t now;

	if (!replica[0] || g->anchor_off)
		return;
	tg_audit_get_stats(g->audit, &s);
	memset(&an, 0, sizeof(an));
	if (s.last_seq == 0 || s.last_seq == g->anchored || tg_audit_chain(g->audit, an.chain))
		return;
	/* once a run, before its first note: the store moves a head forward
	 * by its number alone, so a log cut back or rewritten while the
	 * gateway was stopped, then grown past the old head, would replace
	 * the anchor that shows it. Within a run the log itself refuses a
	 * file changed under it (fail closed). */
	if (!g->anchor_checked) {
		int c = anchor_continues(g, replica, an.chain);

		if (c < 0)
			return; /* cannot tell yet: asked again at the next look */
		g->anchor_checked = 1;
		if (c == 0) {
			g->anchor_off = 1;
			return;
		}
	}
	snprintf(an.replica, sizeof(an.replica), "%s", replica);
	an.seq = s.last_seq;
	memcpy(an.hash, s.last_hash, sizeof(an.hash));
	if (tg_store_anchor_put(g->store, &an, &err) == 0) {
		g->anchored = s.last_seq;
		return;
	}
	if (err.code == TG_ERR_UNAVAILABLE) {
		g->anchor_off = 1; /* a store without anchors: said once */
		tg_log(TG_LOG_WARNING, "the audit log of replica %s is not anchored: %s", replica,
		       err.msg);
		return;
	}
	now = mono_ms();
	if (now - g->anchor_logged >= 60000) {
		g->anchor_logged = now;
		tg_log(TG_LOG_ERROR, "anchoring the audit log's head %llu: %s",
		       (unsigned long long)s.last_seq, err.msg);
	}
}

/* The rates divided among the replicas that serve calls on the store now
 * (docs/AUTH.md, "Rate limits"); a count that cannot be read keeps the
 * last one. */
static void watch_share(struct tg_gate *g)
{
	struct tg_error err;
	unsigned n;

	if (!g->limiter || g->share_off)
		return;
	if (tg_store_replicas(g->store, &n, &err) == 0)
		tg_limiter_share(g->limiter, n);
	else if (err.code == TG_ERR_UNAVAILABLE)
		g->share_off = 1;
}

static void *watcher(void *arg)
{
	struct tg_gate *g = arg;
	uint64_t swept = 0, anchored = 0, last;
	struct timespec when;

	pthread_mutex_lock(&g->watch_lock);
	while (!g->watch_stop) {
		uint64_t now = mono_ms();

		pthread_mutex_unlock(&g->watch_lock);
		if (now - swept >= SWEEP_EVERY_MS) {
			struct tg_error err;
			uint64_t n;

			swept = now;
			watch_share(g);
			if (tg_store_ticket_expire(g->store, TG_STORE_NOW, &n, &err) < 0 &&
			    now - g->sweep_logged >= 60000) {
				g->sweep_logged = now;
				tg_log(TG_LOG_ERROR, "expiring the tickets past their time: %s", err.msg);
			}
		}
		if (now - anchored >= ANCHOR_EVERY_MS) {
			anchored = now;
			watch_anchor(g);
		}
		last = 0;
		watch_read(g, &last);
		pthread_mutex_lock(&g->watch_lock);
		if (last > g->watch_seq) {
			g->watch_seq = last;
			pthread_cond_broadcast(&g->watch_seen);
		}
		deadline(&when, WATCH_POLL_MS);
		while (!g->watch_stop &&
		       pthread_cond_timedwait(&g->watch_wake, &g->watch_lock, &when) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&g->watch_lock);
	return NULL;
}

int gate_watch_start(struct tg_gate *g, struct tg_error *err)
{
	uint64_t last = 0;
	size_t n;
	int rc;

	if (!g->store)
		return 0;
	/* counted from now on: what happened before this gateway is history */
	if (tg_store_ticket_events(g->store, 0, 0, NULL, &n, &last, err) < 0)
		return tg_error_wrap(err, "the tickets' events");
	g->watch_seq = g->watch_cursor = last;
	rc = gate_thread_start(&g->watcher, watcher, g);
	if (rc != 0)
		return tg_error_sys(err, rc, "the tickets' watch could not start");
	g->watch_on = 1;
	return 0;
}

void gate_watch_stop(struct tg_gate *g)
{
	pthread_mutex_lock(&g->watch_lock);
	if (!g->watch_on) {
		pthread_mutex_unlock(&g->watch_lock);
		return;
	}
	g->watch_stop = 1;
	pthread_cond_broadcast(&g->watch_wake);
	pthread_cond_broadcast(&g->watch_seen);
	pthread_mutex_unlock(&g->watch_lock);
	pthread_join(g->watcher, NULL);
	g->watch_on = 0;
	watch_anchor(g); /* the head as it stands at the end */
}

uint64_t tg_gate_ticket_events_wait(struct tg_gate *g, uint64_t after, unsigned timeout_ms)
{
	struct timespec when;
	uint64_t seq;

	if (!g || !g->store)
		return 0;
	deadline(&when, timeout_ms < WAIT_MAX_MS ? timeout_ms : WAIT_MAX_MS);
	pthread_mutex_lock(&g->watch_lock);
	while (g->watch_on && !g->watch_stop && g->watch_seq <= after &&
	       pthread_cond_timedwait(&g->watch_seen, &g->watch_lock, &when) != ETIMEDOUT)
		;
	seq = g->watch_seq;
	pthread_mutex_unlock(&g->watch_lock);
	return seq;
}
