/*
 * What the gate serves, as snapshots (src/gate/gate_int.h): a catalogue
 * the gate was given (its base: tg_gate_new's, then each reload's) and
 * the tools its upstreams listed, made into one catalogue
 * (tg_catalog_derive) that calls and listings hold while they use it.
 *
 * A snapshot is made anew on a reload, and when an upstream's server lists
 * other tools (its runner tells the gate; a thread of the gate's, started
 * with the first upstream, makes the snapshot, so the runner never waits
 * on it). One is made at a time
 * (rebuild_lock). The snapshot it replaces is retired: its users finish
 * with it and the last frees it, and the base it borrows from lives as
 * long as a snapshot or an upstream of it does.
 *
 * Never: free a snapshot or a base while anything holds it, or call the
 * change hook with a lock of the gate's held (the hook's owner may be in a
 * reload, waiting for rebuild_lock).
 */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/upstream_run.h"
#include "gate/gate_int.h"
#include "toolgate/catalog.h"
#include "toolgate/gate.h"
#include "util/log.h"

#define PIN_POLL_MS 1000 /* a review ticket looked at while it waits */

static struct gate_base *base_new(const struct tg_catalog *catalog, struct tg_catalog *owned)
{
	struct gate_base *b = calloc(1, sizeof(*b));

	if (b) {
		b->catalog = catalog;
		b->owned = owned;
		b->refs = 1;
	}
	return b;
}

void gate_base_put(struct tg_gate *g, struct gate_base *b)
{
	int last;

	if (!b)
		return;
	pthread_mutex_lock(&g->lock);
	last = --b->refs == 0;
	pthread_mutex_unlock(&g->lock);
	if (last) {
		tg_catalog_free(b->owned);
		free(b);
	}
}

static void snapshot_free(struct tg_gate *g, struct snapshot *sn)
{
	tg_catalog_free(sn->owned);
	gate_held_free(sn->held, sn->nheld);
	gate_base_put(g, sn->base);
	gate_skillset_put(g, sn->skills);
	free(sn);
}

int gate_snapshots_init(struct tg_gate *g, const struct tg_catalog *catalog,
			struct tg_error *err)
{
	g->base = base_new(catalog, NULL);
	g->cur = calloc(1, sizeof(*g->cur));
	if (!g->base || !g->cur) {
		free(g->base);
		free(g->cur);
		g->base = NULL;
		g->cur = NULL;
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	/* the upstreams' tools come once their servers listed them */
	g->cur->catalog = catalog;
	g->cur->base = g->base;
	g->cur->refs = 1;
	g->base->refs++;
	return 0;
}

void gate_snapshots_release(struct tg_gate *g)
{
	struct snapshot *sn;

	while ((sn = g->cur)) {
		g->cur = sn->next;
		snapshot_free(g, sn);
	}
	gate_base_put(g, g->base);
	g->base = NULL;
}

const struct tg_catalog *tg_gate_acquire(struct tg_gate *g)
{
	const struct tg_catalog *c;

	pthread_mutex_lock(&g->lock);
	g->cur->refs++;
	c = g->cur->catalog;
	pthread_mutex_unlock(&g->lock);
	return c;
}

void tg_gate_release(struct tg_gate *g, const struct tg_catalog *catalog)
{
	struct snapshot **p, *sn = NULL;

	pthread_mutex_lock(&g->lock);
	for (p = &g->cur; *p; p = &(*p)->next)
		if ((*p)->catalog == catalog) {
			if (--(*p)->refs == 0) {
				sn = *p; /* retired, and its last user is done */
				*p = sn->next;
			}
			break;
		}
	pthread_mutex_unlock(&g->lock);
	if (sn)
		snapshot_free(g, sn);
}

const struct tg_catalog *tg_gate_catalog(const struct tg_gate *g)
{
	/* the base: only a reload changes it, the upstreams' listings do not */
	return g->base->catalog;
}

/* A snapshot of base, the tools the upstreams ups (n of them) list now
 * (under rebuild_lock) and the tools of the skills' set (NULL: none),
 * holding base and the set; NULL and err. A base that declares upstreams, or a gate with skills' tools,
 * gets a catalogue of its own in each snapshot, even one with none of
 * their tools: snapshots are released by their catalogue's address,
 * which two of them must never share (a base without upstreams has one
 * snapshot only, its reload's or the gate's first). */
static struct snapshot *snapshot_make(struct tg_gate *g, struct gate_base *base,
				      struct gate_upstream *const *ups, size_t nups,
				      struct gate_skillset *set, struct tg_error *err)
{
	struct snapshot *sn = calloc(1, sizeof(*sn));
	struct tg_contract **tools = NULL;
	size_t n = 0;

	if (!sn || gate_upstream_tools(g, ups, nups, &tools, &n, &sn->held, &sn->nheld) < 0) {
		free(sn);
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		return NULL;
	}
	if (gate_skill_tools_make(set, &tools, &n) < 0) {
		for (size_t i = 0; i < n; i++)
			tg_contract_free(tools[i]);
		free(tools);
		gate_held_free(sn->held, sn->nheld);
		free(sn);
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		return NULL;
	}
	if ((tg_catalog_upstream_count(base->catalog) || (set && set->ntools)) &&
	    tg_catalog_derive(base->catalog, tools, n, &sn->owned, err) < 0) {
		free(tools);
		gate_held_free(sn->held, sn->nheld);
		free(sn);
		return NULL;
	}
	free(tools);
	sn->catalog = sn->owned ? sn->owned : base->catalog;
	sn->refs = 1;
	pthread_mutex_lock(&g->lock);
	sn->base = base;
	base->refs++;
	if (set && set->ntools) {
		/* its tools mount the set's folder: it lives while they may run */
		sn->skills = set;
		set->refs++;
	}
	pthread_mutex_unlock(&g->lock);
	return sn;
}

/* sn made current (its reference the gate's); the one it replaces
 * retired, freed now if nothing holds it. Called under rebuild_lock, with
 * g->ups the upstreams sn was made of: those whose listing it holds are
 * served from now on, and whoever waits for one is woken. */
static void snapshot_install(struct tg_gate *g, struct snapshot *sn)
{
	struct snapshot *old;
	size_t i;

	pthread_mutex_lock(&g->lock);
	old = g->cur;
	sn->next = old;
	g->cur = sn;
	for (i = 0; i < g->nups; i++)
		g->ups[i]->served |= g->ups[i]->told != 0;
	pthread_cond_broadcast(&g->installed);
	if (--old->refs == 0) {
		sn->next = old->next;
		pthread_mutex_unlock(&g->lock);
		snapshot_free(g, old);
		return;
	}
	pthread_mutex_unlock(&g->lock);
}

/* set served from now on (under rebuild_lock), the one before given
 * back; what clients list of the skills told changed when it did, and
 * its pins written. */
static void skills_install(struct tg_gate *g, struct gate_skillset *set)
{
	struct gate_skillset *old;
	struct tg_error err;
	int differs;

	pthread_mutex_lock(&g->lock);
	old = g->skillset;
	g->skillset = set;
	pthread_mutex_unlock(&g->lock);
	differs = gate_skillset_differs(old, set);
	gate_skillset_put(g, old);
	if (differs) {
		/* the skills are resources and prompts (skills.c) */
		pthread_mutex_lock(&g->ups_lock);
		g->lists_pending |= 1u << UPSTREAM_RUN_RESOURCES | 1u << UPSTREAM_RUN_PROMPTS;
		pthread_mutex_unlock(&g->ups_lock);
	}
	/* served already: a pin not written is said, and written at the next
	 * reload or start, which refuses the same version changed only once
	 * it is */
	if (gate_skillset_pin(g, set, &err) < 0)
		tg_log(TG_LOG_ERROR, "skills: %s", err.msg);
}

int tg_gate_reload(struct tg_gate *g, struct tg_catalog *catalog, struct tg_error *err)
{
	struct gate_ups_plan plan;
	struct gate_base *base, *old;
	struct gate_skillset *set = NULL;
	struct snapshot *sn;

	tg_error_clear(err);
	if (exec_check_catalog(catalog, g->dirs, err) < 0 || gate_scan_descriptions(g, catalog, err) < 0)
		return -1;
	/* the skills read again, their tools checked against the new
	 * catalogue (a skill whose namespace it takes is refused) */
	if (gate_skillset_load(g, catalog, &set, err) < 0)
		return -1;
	base = base_new(catalog, NULL);
	if (!base) {
		gate_skillset_put(g, set);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	pthread_mutex_lock(&g->rebuild_lock);
	if (gate_upstreams_plan(g, base, &plan, err) < 0) {
		pthread_mutex_unlock(&g->rebuild_lock);
		free(base);
		gate_skillset_put(g, set);
		return -1;
	}
	sn = snapshot_make(g, base, plan.v, plan.n, set, err);
	if (!sn) {
		/* nothing changed: the runners made for it go, the catalogue
		 * stays the caller's */
		gate_upstreams_abort(g, &plan);
		pthread_mutex_unlock(&g->rebuild_lock);
		free(base);
		gate_skillset_put(g, set);
		return -1;
	}
	gate_upstreams_commit(g, &plan);
	/* taken: freed with the last snapshot or upstream of it */
	base->owned = catalog;
	pthread_mutex_lock(&g->lock);
	old = g->base;
	g->base = base;
	pthread_mutex_unlock(&g->lock);
	if (g->skills_dir)
		skills_install(g, set);
	snapshot_install(g, sn);
	pthread_mutex_unlock(&g->rebuild_lock);
	gate_base_put(g, old);
	/* the reload may have opened review tickets: the thread looks */
	pthread_mutex_lock(&g->ups_lock);
	pthread_cond_signal(&g->ups_wake);
	pthread_mutex_unlock(&g->ups_lock);
	return 0;
}

int gate_snapshot_skill_tools(struct tg_gate *g, struct tg_error *err)
{
	struct snapshot *sn;

	if (!g->skillset || !g->skillset->ntools)
		return 0;
	pthread_mutex_lock(&g->rebuild_lock);
	sn = snapshot_make(g, g->base, g->ups, g->nups, g->skillset, err);
	if (sn)
		snapshot_install(g, sn);
	pthread_mutex_unlock(&g->rebuild_lock);
	return sn ? 0 : -1;
}

/* The snapshot made anew for the upstreams' tools as they are now; the
 * change hook told (the MCP layer tells sessions what differs). */
static void rebuild(struct tg_gate *g)
{
	const struct tg_catalog *old, *now;
	struct snapshot *sn;
	struct tg_error err;

	pthread_mutex_lock(&g->rebuild_lock);
	if (!tg_catalog_upstream_count(g->base->catalog)) {
		/* a runner of a base before told it: nothing to serve anew */
		pthread_mutex_unlock(&g->rebuild_lock);
		return;
	}
	old = tg_gate_acquire(g);
	sn = snapshot_make(g, g->base, g->ups, g->nups, g->skillset, &err);
	if (sn)
		snapshot_install(g, sn);
	pthread_mutex_unlock(&g->rebuild_lock);
	if (!sn) {
		tg_log(TG_LOG_ERROR, "the upstreams' tools could not be served anew: %s", err.msg);
		tg_gate_release(g, old);
		return;
	}
	now = tg_gate_acquire(g);
	pthread_mutex_lock(&g->changed_lock);
	if (g->changed)
		g->changed(g->changed_ctx, old, now);
	pthread_mutex_unlock(&g->changed_lock);
	tg_gate_release(g, now);
	tg_gate_release(g, old);
}

/* 1 when a review ticket was decided (pins.c); *waiting whether one
 * still awaits a decision. */
static int decided(struct tg_gate *g, int *waiting)
{
	int due;

	pthread_mutex_lock(&g->rebuild_lock);
	due = gate_pins_due(g, waiting);
	pthread_mutex_unlock(&g->rebuild_lock);
	return due;
}

static void *rebuilder(void *arg)
{
	struct tg_gate *g = arg;
	struct timespec at;
	int waiting = 0;

	pthread_mutex_lock(&g->ups_lock);
	for (;;) {
		/* while a definition awaits review, its ticket is looked at
		 * every PIN_POLL_MS: the decision may come from another
		 * process (toolgate approvals, toolgate upstream accept) */
		while (!g->ups_dirty && !g->ups_stop) {
			if (!waiting) {
				pthread_cond_wait(&g->ups_wake, &g->ups_lock);
				waiting = 1; /* looked at after any wake */
				continue;
			}
			clock_gettime(CLOCK_MONOTONIC, &at);
			at.tv_nsec += PIN_POLL_MS * 1000000L;
			at.tv_sec += at.tv_nsec / 1000000000L;
			at.tv_nsec %= 1000000000L;
			if (pthread_cond_timedwait(&g->ups_wake, &g->ups_lock, &at) == 0)
				continue;
			pthread_mutex_unlock(&g->ups_lock);
			if (decided(g, &waiting))
				gate_upstreams_changed(g);
			pthread_mutex_lock(&g->ups_lock);
		}
		if (g->ups_stop)
			break;
		g->ups_dirty = 0;
		pthread_mutex_unlock(&g->ups_lock);
		rebuild(g);
		if (decided(g, &waiting))
			gate_upstreams_changed(g); /* decided while it was made */
		pthread_mutex_lock(&g->ups_lock);
	}
	pthread_mutex_unlock(&g->ups_lock);
	return NULL;
}

int gate_rebuilder_start(struct tg_gate *g, struct tg_error *err)
{
	sigset_t all, old;
	int e = 0;

	pthread_mutex_lock(&g->ups_lock);
	if (!g->ups_on) {
		/* the process's signals are its main thread's */
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		e = pthread_create(&g->ups_thread, NULL, rebuilder, g);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		g->ups_on = e == 0;
	}
	pthread_mutex_unlock(&g->ups_lock);
	return e ? tg_error_sys(err, e, "the upstreams' thread") : 0;
}

void gate_upstreams_changed(void *ctx)
{
	struct tg_gate *g = ctx;

	pthread_mutex_lock(&g->ups_lock);
	g->ups_dirty = 1;
	pthread_cond_signal(&g->ups_wake);
	pthread_mutex_unlock(&g->ups_lock);
}

void gate_rebuilder_stop(struct tg_gate *g)
{
	int on;

	pthread_mutex_lock(&g->ups_lock);
	g->ups_stop = 1;
	on = g->ups_on;
	pthread_cond_signal(&g->ups_wake);
	pthread_mutex_unlock(&g->ups_lock);
	if (on)
		pthread_join(g->ups_thread, NULL);
}

void tg_gate_on_change(struct tg_gate *g,
		       void (*fn)(void *ctx, const struct tg_catalog *old,
				  const struct tg_catalog *now),
		       void *ctx)
{
	pthread_mutex_lock(&g->changed_lock);
	g->changed = fn;
	g->changed_ctx = ctx;
	pthread_mutex_unlock(&g->changed_lock);
}
