/*
 * The warm pool (docs/SANDBOX.md, "Warm pool"): sandboxes made ahead of
 * their calls, so that a call pays for its command, not for its sandbox.
 *
 * A pool keeps `size` sandboxes of one template ready: cloned into their
 * namespaces and cgroup, root filesystem built, every layer applied
 * (seccomp included), waiting for their command on a socket; or, for a
 * prestart pool, with the template's command already running and waiting
 * for its stdin (a language runtime that has done its imports). A call
 * whose spec matches the template takes one, sends its command and is
 * supervised exactly as a cold run is; the sandbox is then spent:
 * destroyed, never reused, so nothing crosses from one call to the next.
 * Threads of the pool's own (one per CPU, at most REFILLERS and at most
 * size) refill it, and destroy the spent ones, off the calls' path. A
 * call that does not match, or finds none ready, runs cold.
 *
 * A spent sandbox's cgroup serves the next one when nothing of its run is
 * left in it (cgroup.c, "Reuse"): its counters are taken as baselines.
 *
 * A refill thread is its ready sandboxes' parent: their PR_SET_PDEATHSIG
 * is tied to it, so they die with the pool (and with the process).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

#define POOL_MAX 64
#define READY_TIMEOUT_MS 10000
#define RETRY_MS 1000   /* after a sandbox could not be made */
#define REFILLERS 4

struct spent {
	struct run *run;
	struct spent *next;
};

struct tg_sandbox_pool {
	struct tg_sandbox_spec *tmpl;
	unsigned size;
	int prestart;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct run *ready[POOL_MAX];
	unsigned nready;
	struct spent *spent;           /* to destroy */
	unsigned nspent;
	struct sb_cgroup *cgs[POOL_MAX]; /* the spent ones' cgroups, for the next */
	unsigned ncgs;
	unsigned making;               /* being made now */
	pthread_t refiller[REFILLERS];
	unsigned nrefillers;
	int stopping;
	struct tg_sandbox_pool_stats stats; /* made, failed, warm and cold runs */
};

static void backoff(struct tg_sandbox_pool *p)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += RETRY_MS / 1000;
	while (!p->stopping && pthread_cond_timedwait(&p->wake, &p->lock, &ts) != ETIMEDOUT) {
	}
}

static void *refill_main(void *arg)
{
	struct tg_sandbox_pool *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->stopping) {
		struct spent *s = p->spent;
		struct sb_cgroup *cg;
		struct tg_error err;
		struct run *r;

		if (s) {
			/* the spent first: their cgroups and namespaces go */
			p->spent = NULL;
			p->nspent = 0;
			pthread_mutex_unlock(&p->lock);
			while (s) {
				struct spent *next = s->next;
				cg = run_discard(s->run, 1);
				free(s);
				s = next;
				pthread_mutex_lock(&p->lock);
				if (cg && p->ncgs < p->size && !p->stopping) {
					p->cgs[p->ncgs++] = cg;
					cg = NULL;
				}
				pthread_mutex_unlock(&p->lock);
				cgroup_destroy(cg);
			}
			pthread_mutex_lock(&p->lock);
			continue;
		}
		if (p->nready + p->making >= p->size) {
			pthread_cond_wait(&p->wake, &p->lock);
			continue;
		}
		p->making++;
		cg = p->ncgs ? p->cgs[--p->ncgs] : NULL;
		pthread_mutex_unlock(&p->lock);
		if (cg && cgroup_reuse(cg) < 0) {
			cgroup_destroy(cg); /* a new one, then */
			cg = NULL;
		}
		tg_error_clear(&err);
		r = run_prepare(p->tmpl, p->prestart, cg, &err);
		if (r && run_wait_ready(r, READY_TIMEOUT_MS, &err) < 0) {
			run_discard(r, 0);
			r = NULL;
		}
		pthread_mutex_lock(&p->lock);
		p->making--;
		if (!r) {
			p->stats.failed++;
			snprintf(p->stats.last_error, sizeof(p->stats.last_error), "%.250s", err.msg);
			backoff(p);
			continue;
		}
		p->stats.made++;
		p->stats.cgroups_reused += cg != NULL;
		p->ready[p->nready++] = r;
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

int tg_sandbox_pool_new(const struct tg_sandbox_spec *tmpl, unsigned size, int prestart,
			struct tg_sandbox_pool **out, struct tg_error *err)
{
	struct tg_sandbox_pool *p;
	unsigned want;
	long cpus;
	int i, e;

	*out = NULL;
	if (size == 0 || size > POOL_MAX)
		return tg_error_set(err, TG_ERR_INVALID, "warm pool: a size from 1 to %d", POOL_MAX);
	if (prestart && (!tmpl->argv || tmpl->egress))
		return tg_error_set(err, TG_ERR_INVALID, "warm pool: a prestart pool needs a "
				    "command, and no egress");
	for (i = 0; i < tmpl->nbinds; i++)
		if (tmpl->binds[i].upper)
			return tg_error_set(err, TG_ERR_INVALID, "warm pool: no overlay binds");
	p = calloc(1, sizeof(*p));
	if (!p)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	p->tmpl = spec_dup(tmpl);
	p->size = size;
	p->prestart = prestart;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	want = cpus < 1 ? 1 : cpus > REFILLERS ? REFILLERS : (unsigned)cpus;
	if (want > size)
		want = size;
	/* fewer refillers than wanted still make a pool; none, no pool */
	e = 0;
	while (p->tmpl && p->nrefillers < want &&
	       !(e = pthread_create(&p->refiller[p->nrefillers], NULL, refill_main, p)))
		p->nrefillers++;
	if (!p->nrefillers) {
		tg_sandbox_spec_free(p->tmpl);
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->lock);
		free(p);
		/* pthread_create returns its error, EAGAIN for no thread; none
		 * tried: the template's copy failed */
		return e ? tg_error_sys(err, e, "warm pool: its refill thread")
			 : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	*out = p;
	return 0;
}

void tg_sandbox_pool_free(struct tg_sandbox_pool *p)
{
	struct spent *s;
	unsigned i;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stopping = 1;
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	for (i = 0; i < p->nrefillers; i++)
		pthread_join(p->refiller[i], NULL);
	for (i = 0; i < p->nready; i++)
		run_discard(p->ready[i], 0);
	while ((s = p->spent)) {
		p->spent = s->next;
		run_discard(s->run, 0);
		free(s);
	}
	for (i = 0; i < p->ncgs; i++)
		cgroup_destroy(p->cgs[i]);
	tg_sandbox_spec_free(p->tmpl);
	pthread_cond_destroy(&p->wake);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* r to destroy, by a refill thread (at once, when out of memory). */
static void spend_locked(struct tg_sandbox_pool *p, struct run *r)
{
	struct spent *s = malloc(sizeof(*s));

	if (!s) {
		run_discard(r, 0);
		return;
	}
	s->run = r;
	s->next = p->spent;
	p->spent = s;
	p->nspent++;
	pthread_cond_broadcast(&p->wake);
}

int tg_sandbox_pool_run(struct tg_sandbox_pool *p, const struct tg_sandbox_spec *spec,
			struct tg_sandbox_result **out, struct tg_error *err)
{
	struct run *r = NULL;
	int rc;

	*out = NULL;
	if (!p)
		return tg_sandbox_run(spec, out, err);
	if (!spec || !spec->argv)
		return tg_error_set(err, TG_ERR_INVALID, "no command given");
	if (spec_pool_match(p->tmpl, spec, p->prestart)) {
		pthread_mutex_lock(&p->lock);
		while (!r && p->nready) {
			/* the refill waits for this call's end: on a small machine
			 * making a sandbox beside it slows it down (the kernel's
			 * mount and namespace work contends with its exec) */
			r = p->ready[--p->nready];
				if (!run_usable(r)) {
				/* died waiting, or stale: destroyed, never used */
				spend_locked(p, r);
				p->stats.failed++;
				snprintf(p->stats.last_error, sizeof(p->stats.last_error),
					 "a ready sandbox ended or its binds changed before a call");
				r = NULL;
			}
		}
		if (r)
			p->stats.warm_runs++;
		pthread_mutex_unlock(&p->lock);
	}
	if (!r) {
		pthread_mutex_lock(&p->lock);
		p->stats.cold_runs++;
		pthread_mutex_unlock(&p->lock);
		return tg_sandbox_run(spec, out, err);
	}
	rc = run_start(r, spec, out, err);
	/* spent: destroyed by the refill thread, off this call's path */
	pthread_mutex_lock(&p->lock);
	spend_locked(p, r);
	pthread_mutex_unlock(&p->lock);
	return rc;
}

int tg_sandbox_pool_matches(const struct tg_sandbox_pool *p, const struct tg_sandbox_spec *spec)
{
	return spec_pool_match(p->tmpl, spec, p->prestart);
}

void tg_sandbox_pool_get_stats(struct tg_sandbox_pool *p, struct tg_sandbox_pool_stats *st)
{
	pthread_mutex_lock(&p->lock);
	*st = p->stats; /* the counts; the state as it stands now: */
	st->size = p->size;
	st->ready = p->nready;
	st->refilling = p->making;
	st->spent = p->nspent;
	pthread_mutex_unlock(&p->lock);
}
