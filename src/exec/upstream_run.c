/*
 * The runner of one upstream (exec/upstream_run.h; docs/UPSTREAMS.md,
 * "The runner"): a stdio one's declared server run in the sandbox as a server run
 * (docs/SANDBOX.md, "Server runs"), spoken to by the upstream client
 * (src/upstream/client.h), restarted with backoff when it dies.
 *
 * One generation a start: a sandbox spec built from the declaration (tier,
 * argv, env, workdir, mounts checked against the gateway's directories as
 * a contract's are, egress through a proxy of its allowlist as a command
 * tool's, limits), the credentials read into its environment, a thread
 * in tg_sandbox_run, two pipes (the server's stdin, written by the
 * client; its stdout, written by the output function and read by the
 * client), a cancel pipe. A supervisor thread starts generations, waits
 * for the one up to end (the run ends, or the client breaks), tears it
 * down once no call holds it, and starts the next after a delay. The
 * server's notifications/tools/list_changed, on the client's dispatcher
 * thread, only raise a flag: the supervisor lists the tools again, one
 * listing at a time and at most one per UPSTREAM_RUN_RELIST_MS, so a
 * server that floods them neither blocks the client's queue nor makes
 * the runner spin. Its resources, templates and prompts are listed so too
 * (upstream_catalog.c), each request of them sent as a call is.
 *
 * per_call: the supervisor starts a server only to list the tools (again
 * after a list_changed), and stops it once listed; each call starts a
 * generation of its own (its mounts and credentials checked again, as at
 * every start), initializes it, calls, and ends it whatever happened, at
 * most UPSTREAM_RUN_PER_CALL_MAX at once.
 *
 * The server's environment is what the declaration gives, the
 * credentials and the sandbox's own defaults: the sandbox never passes
 * the caller's (src/sandbox/run.c, plan_env). Its stderr is logged a line
 * at a time, redacted, cut and rate-limited; so are its
 * notifications/message. A start that gets no answer in time says
 * whether the server wrote anything there (nothing: most often a
 * launcher fetching its package without a network). A writable mount
 * its user cannot write is logged once, when the runner is made. Its notifications/progress reach the hook of
 * the call whose token they carry (a call to that server), the others
 * are dropped.
 *
 * An http upstream's generation has no sandbox: its run is the bridge of
 * src/upstream/http.c (its own egress proxy, the credentials as headers)
 * between the client and the server's url, on the generation's thread,
 * ended by the same cancel pipe.
 *
 * Never: log a credential's value, keep one in a buffer of its own after
 * the spec has it, run the server outside the sandbox, log or hand on the
 * server's text unredacted, wait on the server in the client's callbacks,
 * or leave a thread, a descriptor or a run behind at upstream_run_free.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "exec/upstream_catalog.h"
#include "exec/upstream_relay.h"
#include "exec/upstream_run.h"
#include "exec/upstream_run_int.h"
#include "exec/upstream_secret.h"
#include "obs/shown.h"
#include "toolgate/egress.h"
#include "toolgate/redact.h"
#include "toolgate/sandbox.h"
#include "toolgate/version.h"
#include "upstream/client.h"
#include "upstream/http.h"
#include "upstream/secret.h"
#include "util/hidden.h"
#include "util/log.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* cond's wait until ms on the monotonic clock (the cond is made so). */
static void wait_until(struct upstream_run *r, uint64_t ms)
{
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000 };

	pthread_cond_timedwait(&r->cond, &r->lock, &ts);
}

static void cancel_run(struct gen *g)
{
	ssize_t w;

	do
		w = write(g->cancel_w, "x", 1);
	while (w < 0 && errno == EINTR);
}

/* ---- the sandbox spec ------------------------------------------------ */

static int build_mounts(const struct upstream_run *r, struct tg_sandbox_spec *spec,
			struct tg_error *err)
{
	const struct tg_upstream *u = r->u;
	size_t i;

	for (i = 0; i < u->nmounts; i++) {
		const struct tg_upstream_mount *m = &u->mounts[i];

		/* the checks a contract's mount gets, by what is there now */
		if ((r->opts.dirs &&
		     exec_dirs_check_bind(r->opts.dirs, m->host, 1, m->writable, err) < 0) ||
		    tg_sandbox_spec_add_bind(spec, m->host, m->inside, m->writable, err) < 0)
			return tg_error_wrap(err, "upstream %s: sandbox.mounts[%zu]", u->name, i);
	}
	return 0;
}

/* g's spec from the declaration (and its egress proxy). */
static int build_spec(struct gen *g, struct tg_error *err)
{
	const struct upstream_run *r = g->r;
	const struct tg_upstream *u = r->u;
	size_t i;
	int argc = 0;

	if (tg_sandbox_spec_new(u->tier, &g->spec, err) < 0)
		return tg_error_wrap(err, "upstream %s", u->name);
	while (u->argv[argc])
		argc++;
	if (tg_sandbox_spec_set_argv(g->spec, argc, u->argv, err) < 0 ||
	    (u->memory && tg_sandbox_spec_set_memory(g->spec, u->memory, err) < 0) ||
	    (u->millicpus && tg_sandbox_spec_set_cpus(g->spec, u->millicpus, err) < 0) ||
	    (u->pids && tg_sandbox_spec_set_pids(g->spec, u->pids, err) < 0) ||
	    (u->workdir && tg_sandbox_spec_set_workdir(g->spec, u->workdir, err) < 0))
		return tg_error_wrap(err, "upstream %s", u->name);
	for (i = 0; u->env && u->env[i]; i++)
		if (tg_sandbox_spec_add_env(g->spec, u->env[i], err) < 0)
			return tg_error_wrap(err, "upstream %s: env", u->name);
	if (build_mounts(r, g->spec, err) < 0 || upstream_add_credentials(r->u, r->opts.dirs, g->spec, err) < 0)
		return -1;
	/* no egress: no network at all (the sandbox's empty namespace) */
	if (u->egress && u->egress[0] &&
	    exec_egress_start(u->egress, u->name, "sandbox.egress", r->opts.egress_denied,
			      r->opts.egress_ctx, r->opts.principal, g->spec, &g->proxy, err) < 0)
		return tg_error_wrap(err, "upstream");
	tg_sandbox_spec_set_server(g->spec, 1);
	return 0;
}

/* ---- the run: its output --------------------------------------------- */

/* 1 when one more line of what (stderr's, its log messages) may go to
 * the log of upstream name now; the count of those that could not is
 * logged with the next that can. */
int run_rate_take(struct rate *rt, const char *name, const char *what)
{
	uint64_t now = now_ms();

	rt->tokens += (double)(now - rt->last_ms) * UPSTREAM_RUN_LOG_RATE / 1000.0;
	if (rt->tokens > UPSTREAM_RUN_LOG_BURST)
		rt->tokens = UPSTREAM_RUN_LOG_BURST;
	rt->last_ms = now;
	if (rt->tokens < 1) {
		rt->dropped++;
		return 0;
	}
	rt->tokens -= 1;
	if (rt->dropped)
		tg_log(TG_LOG_INFO, "upstream %s: %lu %s not logged (over %d a second)", name,
		       rt->dropped, what, UPSTREAM_RUN_LOG_RATE);
	rt->dropped = 0;
	return 1;
}

/* A server's line (len bytes of buf, cut: there was more) to the log:
 * redacted whole (a secret across the cut is still one), then cut to
 * what tg_log takes in one line with the prefix and the mark. */
void run_log_text(const char *name, const char *buf, size_t len, int cut)
{
	char text[UPSTREAM_RUN_LOG_READ + 1];
	size_t n = 0;

	if (obs_shown(buf, len, text, sizeof(text)) == 0)
		n = strlen(text);
	tg_log(TG_LOG_INFO, "upstream %s: %.*s%s", name,
	       (int)(n > LOG_SHOWN ? LOG_SHOWN : strlen(text)), text,
	       cut || n > LOG_SHOWN ? " [cut]" : "");
}

/* One stderr line, cut, redacted, to the log within the rate. */
static void log_line(struct gen *g)
{
	struct lines *l = &g->log;

	if (run_rate_take(&l->rate, g->r->u->name, "lines of its stderr"))
		run_log_text(g->r->u->name, l->buf, l->len, l->cut);
}

static void stderr_bytes(struct gen *g, const char *buf, size_t len)
{
	struct lines *l = &g->log;
	size_t i;

	if (len)
		__atomic_store_n(&g->stderr_seen, 1, __ATOMIC_RELAXED);
	for (i = 0; i < len; i++) {
		if (buf[i] == '\n') {
			log_line(g);
			l->len = 0;
			l->cut = 0;
		} else if (l->len < sizeof(l->buf)) {
			l->buf[l->len++] = buf[i];
		} else {
			l->cut = 1;
		}
	}
}

/* stdout to the client's pipe. Never blocks past the run's cancel: a
 * client that stopped reading (broken) cannot hold up the supervision. */
static void stdout_bytes(struct gen *g, const char *buf, size_t len)
{
	size_t off = 0;

	while (off < len && g->out_w >= 0) {
		struct pollfd p[2] = { { g->out_w, POLLOUT, 0 }, { g->cancel_r, POLLIN, 0 } };
		ssize_t w;

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (p[1].revents)
			return; /* being stopped: the rest is nobody's */
		w = write(g->out_w, buf + off, len - off);
		if (w < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (w <= 0)
			return; /* the client is gone: EPIPE (SIGPIPE is blocked) */
		off += (size_t)w;
	}
}

static void on_output(int stream, const char *buf, size_t len, void *ctx)
{
	if (stream == 1)
		stdout_bytes(ctx, buf, len);
	else
		stderr_bytes(ctx, buf, len);
}

/* How the run ended, in words, into g->why (under the lock). */
static void describe_end(struct gen *g, const struct tg_sandbox_result *res,
			 const struct tg_error *e)
{
	if (!res)
		snprintf(g->why, sizeof(g->why), "the sandbox refused it: %.300s", e->msg);
	else if (res->reason != TG_REASON_OK && res->reason != TG_REASON_CANCELLED)
		snprintf(g->why, sizeof(g->why), "the sandbox ended it: %s%s%.300s",
			 tg_sandbox_reason_name(res->reason), res->message[0] ? ": " : "",
			 res->message);
	else if (res->reason == TG_REASON_CANCELLED && !g->why[0])
		snprintf(g->why, sizeof(g->why), "stopped by the gateway");
	else if (res->reason == TG_REASON_CANCELLED)
		; /* the gateway stopped it for a reason already said (its connection broke) */
	else if (res->exec_errno)
		snprintf(g->why, sizeof(g->why), "its command could not be run: %s",
			 strerror(res->exec_errno));
	else if (res->exited)
		snprintf(g->why, sizeof(g->why), "it exited with status %d", res->exit_code);
	else
		snprintf(g->why, sizeof(g->why), "it was killed by signal %d", res->signal);
}

static void *run_main(void *arg)
{
	struct gen *g = arg;
	struct tg_sandbox_result *res = NULL;
	struct tg_error e;
	sigset_t pipe;

	/* the client gone is EPIPE on stdout's pipe, never SIGPIPE */
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, NULL);
	memset(&e, 0, sizeof(e));
	if (tg_sandbox_run(g->spec, &res, &e) < 0)
		res = NULL;
	if (g->log.len)
		log_line(g);
	/* end of file to the client: it breaks, its waiters wake */
	close(g->out_w);
	g->out_w = -1;
	close(g->in_r);
	g->in_r = -1;
	pthread_mutex_lock(&g->r->lock);
	describe_end(g, res, &e);
	g->ended = 1;
	pthread_cond_broadcast(&g->r->cond);
	pthread_mutex_unlock(&g->r->lock);
	tg_sandbox_result_free(res);
	return NULL;
}

/* An http upstream's run: its bridge (src/upstream/http.c) carries the
 * client's messages until cancelled or broken. */
static void *http_main(void *arg)
{
	struct gen *g = arg;
	char why[256];

	upstream_http_run(g->http, g->cancel_r, why, sizeof(why));
	pthread_mutex_lock(&g->r->lock);
	if (strcmp(why, "stopped") != 0)
		/* why it broke says more than the client's EOF */
		snprintf(g->why, sizeof(g->why), "%s", why);
	else if (!g->why[0])
		snprintf(g->why, sizeof(g->why), "stopped by the gateway");
	g->ended = 1;
	pthread_cond_broadcast(&g->r->cond);
	pthread_mutex_unlock(&g->r->lock);
	return NULL;
}

/* tools (JSON text, taken) as the runner's listing, under the lock: 1
 * when it differs from the one before (its number goes up). */
static int listing_set_locked(struct upstream_run *r, char *tools)
{
	int changed = !r->tools || strcmp(r->tools, tools) != 0;

	if (changed)
		r->listing++;
	free(r->tools);
	r->tools = tools;
	return changed;
}

/* After list_changed: g's tools listed again and kept, the owner told
 * when they differ; a failure keeps the listing before and is logged.
 * On the supervisor, without the lock. */
static void relist(struct upstream_run *r, struct gen *g)
{
	char said[LOG_SHOWN + 1], *tools = NULL;
	struct tg_error err;
	json_t *list = NULL;
	int changed;

	if (upstream_client_list_tools(g->client, UPSTREAM_RUN_HANDSHAKE_MS, &list, &err) < 0 ||
	    !(tools = json_dumps(list, JSON_COMPACT))) {
		if (list)
			tg_error_set(&err, TG_ERR_NOMEM, "out of memory");
		json_decref(list);
		pthread_mutex_lock(&r->lock);
		r->stats.relists++;
		r->stats.relist_failures++;
		pthread_mutex_unlock(&r->lock);
		/* it may quote the server (an error it answered) */
		obs_shown(err.msg, strlen(err.msg), said, sizeof(said));
		tg_log(TG_LOG_INFO, "upstream %s: its tools changed, but listing them again "
		       "failed (%s): the tools listed before are kept", r->u->name, said);
		return;
	}
	json_decref(list);
	pthread_mutex_lock(&r->lock);
	r->stats.relists++;
	changed = listing_set_locked(r, tools);
	pthread_mutex_unlock(&r->lock);
	if (changed && r->opts.tools_changed)
		r->opts.tools_changed(r->opts.tools_ctx);
}

/* g's lists of which (bits) listed and kept, the owner told of those
 * that differ; one that fails keeps the one before. Without the lock. */
static void lists_refresh(struct upstream_run *r, struct gen *g, unsigned which)
{
	char *got[UPSTREAM_RUN_NLISTS];
	unsigned changed;

	upstream_catalog_fetch(g->client, r->u->name, which, UPSTREAM_RUN_HANDSHAKE_MS, got);
	pthread_mutex_lock(&r->lock);
	changed = upstream_catalog_keep(r->lists, got);
	pthread_mutex_unlock(&r->lock);
	if (changed && r->opts.lists_changed)
		r->opts.lists_changed(r->opts.tools_ctx, changed);
}

char *upstream_run_list(struct upstream_run *r, enum upstream_run_list which)
{
	char *t;

	pthread_mutex_lock(&r->lock);
	t = r->lists[which] ? strdup(r->lists[which]) : NULL;
	pthread_mutex_unlock(&r->lock);
	return t;
}

/* ---- generations ----------------------------------------------------- */

static void gen_free(struct gen *g)
{
	if (!g)
		return;
	if (g->running) {
		cancel_run(g);
		pthread_join(g->thread, NULL);
	}
	/* no call is in the client (the supervisor waited for them) */
	upstream_client_free(g->client);
	upstream_http_free(g->http);
	tg_egress_proxy_stop(g->proxy);
	tg_sandbox_spec_free(g->spec);
	if (g->in_r >= 0)
		close(g->in_r);
	if (g->out_w >= 0)
		close(g->out_w);
	if (g->cancel_r >= 0)
		close(g->cancel_r);
	if (g->cancel_w >= 0)
		close(g->cancel_w);
	free(g);
}

/* g's bridge to its http upstream, the client over it, and the run's
 * thread. -1 and err. */
static int gen_start_http(struct gen *g, struct tg_error *err)
{
	const struct upstream_run *r = g->r;
	struct upstream_http_options o = { .egress_denied = r->opts.egress_denied,
					   .egress_ctx = r->opts.egress_ctx,
					   .principal = r->opts.principal };
	struct upstream_client_ops ops = { .notification = run_on_notification,
					   .request = run_on_request, .ctx = g };
	struct upstream_http_header *h = NULL;
	int cin, cout, e;

	if (upstream_headers_read(r->u, r->opts.dirs, &h, err) < 0)
		return -1;
	o.headers = h;
	o.nheaders = h ? r->u->ncredentials : 0;
	e = upstream_http_new(r->u, &o, &cin, &cout, &g->http, err);
	upstream_headers_release(h, o.nheaders);
	if (e < 0)
		return -1;
	if (upstream_client_new(cin, cout, &ops, &g->client, err) < 0 ||
	    upstream_client_start(g->client, err) < 0)
		return tg_error_wrap(err, "upstream %s", r->u->name);
	e = pthread_create(&g->thread, NULL, http_main, g);
	if (e != 0)
		return tg_error_sys(err, e, "upstream %s: a thread", r->u->name);
	g->running = 1;
	return 0;
}

/* A generation with its run and client started (not yet initialized);
 * OUT *out. -1 and err. */
static int gen_start(struct upstream_run *r, struct gen **out, struct tg_error *err)
{
	struct gen *g = calloc(1, sizeof(*g));
	struct upstream_client_ops ops = { .notification = run_on_notification,
					   .request = run_on_request, .ctx = g };
	int in[2] = { -1, -1 }, outp[2] = { -1, -1 }, cancel[2], e;

	*out = NULL;
	if (!g)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	g->r = r;
	g->in_r = g->out_w = g->cancel_r = g->cancel_w = -1;
	g->log.rate.tokens = g->messages.tokens = g->refused.tokens = UPSTREAM_RUN_LOG_BURST;
	g->log.rate.last_ms = g->messages.last_ms = g->refused.last_ms = now_ms();
	if (pipe2(cancel, O_CLOEXEC) < 0) {
		tg_error_sys(err, errno, "upstream %s: a pipe", r->u->name);
		goto fail;
	}
	g->cancel_r = cancel[0];
	g->cancel_w = cancel[1];
	if (r->u->transport == TG_UPSTREAM_HTTP) {
		if (gen_start_http(g, err) < 0)
			goto fail;
		*out = g;
		return 0;
	}
	if (build_spec(g, err) < 0)
		goto fail;
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(outp, O_CLOEXEC) < 0) {
		tg_error_sys(err, errno, "upstream %s: a pipe", r->u->name);
		if (in[0] >= 0) {
			close(in[0]);
			close(in[1]);
		}
		goto fail;
	}
	g->in_r = in[0];
	g->out_w = outp[1];
	/* written a part at a time between polls of the cancel fd */
	if (fcntl(g->out_w, F_SETFL, O_NONBLOCK) < 0) {
		tg_error_sys(err, errno, "upstream %s: a pipe", r->u->name);
		close(outp[0]);
		close(in[1]);
		goto fail;
	}
	/* the client owns the other ends from here, whatever happens */
	if (upstream_client_new(outp[0], in[1], &ops, &g->client, err) < 0) {
		tg_error_wrap(err, "upstream %s", r->u->name);
		goto fail;
	}
	tg_sandbox_spec_set_stdin_fd(g->spec, g->in_r);
	tg_sandbox_spec_set_cancel_fd(g->spec, g->cancel_r);
	tg_sandbox_spec_set_output_fn(g->spec, on_output, g);
	if (upstream_client_start(g->client, err) < 0) {
		tg_error_wrap(err, "upstream %s", r->u->name);
		goto fail;
	}
	e = pthread_create(&g->thread, NULL, run_main, g);
	if (e != 0) {
		tg_error_sys(err, e, "upstream %s: a thread", r->u->name);
		goto fail;
	}
	g->running = 1;
	*out = g;
	return 0;
fail:
	gen_free(g);
	return -1;
}

/* g's start failed, err saying how: its run ended and g freed; a run
 * that ended of itself says why better than the client's EOF. */
static void gen_failed(struct gen *g, struct tg_error *err)
{
	cancel_run(g);
	pthread_join(g->thread, NULL);
	g->running = 0;
	if (g->why[0] && strcmp(g->why, "stopped by the gateway") != 0)
		tg_error_set(err, TG_ERR_UNAVAILABLE, "%s", g->why);
	gen_free(g);
}

/* g's handshake or listing failed, err saying how: as gen_failed, and a
 * stdio server that did not answer in time and wrote nothing on stderr
 * either is said to have (most often one fetching its package, npx or
 * uvx, in a sandbox without a network: its silence is the clue, and
 * tg_upstream_lint names the launchers). */
static void gen_up_failed(struct gen *g, struct tg_error *err)
{
	int silent = g->r->u->transport == TG_UPSTREAM_STDIO &&
		     !__atomic_load_n(&g->stderr_seen, __ATOMIC_RELAXED);
	size_t n;

	gen_failed(g, err);
	/* a timeout, not another limit (pages, tools, bytes) */
	if (!silent || err->code != TG_ERR_LIMIT || !strstr(err->msg, "no answer within"))
		return;
	n = strlen(err->msg);
	snprintf(err->msg + n, sizeof(err->msg) - n, "; the server wrote nothing on stderr");
}

/* Start a generation and make it up: the handshake, tools/list. The tools
 * into *tools (JSON text). OUT *out, or NULL and why in err. */
static int gen_up(struct upstream_run *r, struct gen **out, char **tools, struct tg_error *err)
{
	struct gen *g;
	json_t *list = NULL;

	*out = NULL;
	*tools = NULL;
	if (gen_start(r, &g, err) < 0)
		return -1;
	pthread_mutex_lock(&r->lock);
	g->listing = r->u->per_call;
	r->starts++;
	r->starting = g;
	if (r->stop)
		cancel_run(g);
	pthread_mutex_unlock(&r->lock);
	if (run_handshake(r, g, UPSTREAM_RUN_HANDSHAKE_MS, err) < 0 ||
	    upstream_client_list_tools(g->client, UPSTREAM_RUN_HANDSHAKE_MS, &list, err) < 0 ||
	    !(*tools = json_dumps(list, JSON_COMPACT))) {
		if (!*tools && list)
			tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		json_decref(list);
		pthread_mutex_lock(&r->lock);
		r->starting = NULL;
		pthread_mutex_unlock(&r->lock);
		gen_up_failed(g, err);
		return -1;
	}
	json_decref(list);
	*out = g;
	return 0;
}

/* Wait for g, up, to go down (or the runner to stop), listing its tools
 * again when it says they changed; then take it out of service and free
 * it once no call holds it. */
static void gen_watch(struct upstream_run *r, struct gen *g)
{
	char broke[256];
	uint64_t now;

	pthread_mutex_lock(&r->lock);
	while (!r->stop && !g->ended && !upstream_client_broken(g->client, broke, sizeof(broke))) {
		pthread_mutex_unlock(&r->lock);
		run_listen(r, g);
		pthread_mutex_lock(&r->lock);
		now = now_ms();
		if ((r->relist || r->relist_lists) && now >= r->relist_at) {
			int tools = r->relist;
			unsigned which = r->relist_lists;

			r->relist = 0;
			r->relist_lists = 0;
			pthread_mutex_unlock(&r->lock);
			if (tools)
				relist(r, g);
			if (which)
				lists_refresh(r, g, which);
			pthread_mutex_lock(&r->lock);
			/* from its end: a slow server is listed no more often */
			r->relist_at = now_ms() + UPSTREAM_RUN_RELIST_MS;
			continue;
		}
		wait_until(r, (r->relist || r->relist_lists) && r->relist_at < now + 200
				      ? r->relist_at : now + 200);
	}
	r->cur = NULL;
	if (!g->ended && !r->stop)
		snprintf(g->why, sizeof(g->why), "its connection broke: %s", broke);
	pthread_mutex_unlock(&r->lock);
	/* the run ends, the client breaks: every call in it returns */
	cancel_run(g);
	pthread_join(g->thread, NULL);
	g->running = 0;
	pthread_mutex_lock(&r->lock);
	if (!r->stop)
		snprintf(r->why, sizeof(r->why), "%s", g->why);
	while (g->refs)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
	gen_free(g);
}

/* per_call, the listing's server up and listed: kept
 * UPSTREAM_RUN_RELIST_MS more, and listed again on it, once, when it
 * says its lists changed meanwhile (tools it registers once it knows its
 * client, or loads late); then stopped and freed. */
static void percall_listed_end(struct upstream_run *r, struct gen *g)
{
	uint64_t until = now_ms() + UPSTREAM_RUN_RELIST_MS;
	unsigned changed;
	int slot;

	pthread_mutex_lock(&r->lock);
	/* kept as one of the servers per_call bounds: when the calls'
	 * servers fill them, it is stopped at once */
	slot = r->percall < UPSTREAM_RUN_PER_CALL_MAX;
	r->percall += (unsigned)slot;
	while (slot && !r->stop && !g->self_changed && now_ms() < until)
		wait_until(r, until);
	changed = r->stop ? 0 : g->self_changed;
	pthread_mutex_unlock(&r->lock);
	if (changed & RUN_SELF_TOOLS)
		relist(r, g);
	if (changed & RUN_SELF_LISTS)
		lists_refresh(r, g, (1u << UPSTREAM_RUN_NLISTS) - 1);
	/* its slot given back once it is gone */
	gen_free(g);
	pthread_mutex_lock(&r->lock);
	r->percall -= (unsigned)slot;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/* per_call, the tools listed: wait for the runner to stop, or a call's
 * server to say its tools changed (then the supervisor lists them again,
 * not before r->relist_at). */
static void listed_wait(struct upstream_run *r)
{
	uint64_t now;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		now = now_ms();
		if (r->stop || ((r->relist || r->relist_lists) && now >= r->relist_at))
			break;
		wait_until(r, r->relist || r->relist_lists ? r->relist_at : now + 1000);
	}
	r->relist = 0;
	r->relist_lists = 0; /* a start lists them all */
	pthread_mutex_unlock(&r->lock);
}

static void *supervise(void *arg)
{
	struct upstream_run *r = arg;
	unsigned delay = UPSTREAM_RUN_BACKOFF_MIN_MS;
	struct tg_error err;
	uint64_t up_at, wake;
	int changed, relisting = 0;
	struct gen *g;
	char *tools;

	for (;;) {
		pthread_mutex_lock(&r->lock);
		if (r->stop) {
			pthread_mutex_unlock(&r->lock);
			return NULL;
		}
		pthread_mutex_unlock(&r->lock);
		if (gen_up(r, &g, &tools, &err) == 0) {
			/* listed whole before it is up: per_call's server ends then */
			lists_refresh(r, g, (1u << UPSTREAM_RUN_NLISTS) - 1);
			up_at = now_ms();
			pthread_mutex_lock(&r->lock);
			r->starting = NULL;
			changed = listing_set_locked(r, tools);
			if (!r->u->per_call)
				r->cur = g;
			r->why[0] = '\0';
			r->relist_at = up_at + UPSTREAM_RUN_RELIST_MS;
			pthread_cond_broadcast(&r->cond);
			pthread_mutex_unlock(&r->lock);
			if (changed && r->opts.tools_changed)
				r->opts.tools_changed(r->opts.tools_ctx);
			if (r->u->per_call) {
				/* listed: each call starts a server of its own */
				percall_listed_end(r, g);
				pthread_mutex_lock(&r->lock);
				r->stats.relists += (unsigned)relisting;
				pthread_mutex_unlock(&r->lock);
				listed_wait(r);
				relisting = 1;
				delay = UPSTREAM_RUN_BACKOFF_MIN_MS;
				continue;
			}
			gen_watch(r, g);
			if (now_ms() - up_at >= UPSTREAM_RUN_STABLE_MS)
				delay = UPSTREAM_RUN_BACKOFF_MIN_MS;
		} else {
			pthread_mutex_lock(&r->lock);
			/* it may quote the server (an error it answered
			 * initialize with): shown as the log may show it */
			if (!r->stop)
				obs_shown(err.msg, strlen(err.msg), r->why, sizeof(r->why));
			/* per_call: the listing before stays */
			r->stats.relists += (unsigned)relisting;
			r->stats.relist_failures += (unsigned)relisting;
			pthread_mutex_unlock(&r->lock);
		}
		pthread_mutex_lock(&r->lock);
		/* fail_fast: its waiter is told why, and stops it */
		if (!r->stop && !r->opts.fail_fast && r->u->per_call)
			tg_log(TG_LOG_INFO, "upstream %s: listing its tools failed (%s): trying "
			       "again in %u ms", r->u->name, r->why, delay);
		else if (!r->stop && !r->opts.fail_fast)
			tg_log(TG_LOG_INFO, "upstream %s: the server is down (%s): restarting in "
			       "%u ms", r->u->name, r->why, delay);
		pthread_cond_broadcast(&r->cond);
		wake = now_ms() + delay;
		while (!r->stop && now_ms() < wake)
			wait_until(r, wake);
		pthread_mutex_unlock(&r->lock);
		delay = delay * 2 > UPSTREAM_RUN_BACKOFF_MAX_MS ? UPSTREAM_RUN_BACKOFF_MAX_MS
								: delay * 2;
	}
}

/* ---- the runner ------------------------------------------------------ */

/* What tg_upstream_check_mounts finds, logged as a warning (ctx: the
 * upstream's name). */
static void mount_warning(const char *line, void *ctx)
{
	tg_log(TG_LOG_WARNING, "upstream %s: %s", (const char *)ctx, line);
}

int upstream_run_new(const struct tg_upstream *u, const struct upstream_run_options *opts,
		     struct upstream_run **out, struct tg_error *err)
{
	struct upstream_run *r;
	pthread_condattr_t ca;
	struct gen *probe;
	int e;

	*out = NULL;
	if ((u->transport != TG_UPSTREAM_STDIO || !u->argv) &&
	    (u->transport != TG_UPSTREAM_HTTP || !u->url || !u->url_rule))
		return tg_error_set(err, TG_ERR_INVALID, "upstream %s: neither a stdio nor an "
				    "http upstream", u->name);
	r = calloc(1, sizeof(*r));
	if (!r)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	r->u = u;
	if (opts)
		r->opts = *opts;
	pthread_mutex_init(&r->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&r->cond, &ca);
	pthread_condattr_destroy(&ca);
	snprintf(r->why, sizeof(r->why), "starting");
	/* what is refused is said now, not in a restart loop's log */
	probe = calloc(1, sizeof(*probe));
	if (!probe) {
		upstream_run_free(r);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	probe->r = r;
	probe->in_r = probe->out_w = probe->cancel_r = probe->cancel_w = -1;
	if (u->transport == TG_UPSTREAM_HTTP) {
		struct upstream_http_header *h = NULL;

		/* its credentials: the files read and checked, then wiped */
		e = upstream_headers_read(r->u, r->opts.dirs, &h, err);
		upstream_headers_release(h, h ? u->ncredentials : 0);
	} else {
		e = build_spec(probe, err);
	}
	gen_free(probe);
	if (e < 0) {
		upstream_run_free(r);
		return -1;
	}
	/* bound all the same: the server may never write there */
	if (!r->opts.fail_fast)
		tg_upstream_check_mounts(u, mount_warning, u->name);
	e = pthread_create(&r->supervisor, NULL, supervise, r);
	if (e != 0) {
		upstream_run_free(r);
		return tg_error_sys(err, e, "upstream %s: a thread", u->name);
	}
	r->supervising = 1;
	*out = r;
	return 0;
}

void upstream_run_free(struct upstream_run *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = 1;
	if (r->starting)
		cancel_run(r->starting);
	/* a listing again in progress returns at once */
	if (r->cur)
		cancel_run(r->cur);
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	if (r->supervising)
		pthread_join(r->supervisor, NULL);
	free(r->tools);
	upstream_catalog_keep(r->lists, NULL);
	pthread_cond_destroy(&r->cond);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

/* One wait of a caller for the runner, the lock held: -1 and err once
 * deadline (ms) has passed (busy: the number of per_call servers was the
 * reason) or cancel_fd is readable, else 0 after at most 100 ms. */
static int wait_slice(struct upstream_run *r, uint64_t deadline, int cancel_fd, int busy,
		      struct tg_error *err)
{
	struct pollfd p = { cancel_fd, POLLIN, 0 };

	/* why is "starting" until a start fails, "" while up */
	if (r->opts.fail_fast && !busy && r->why[0] && strcmp(r->why, "starting") != 0)
		return tg_error_set(err, TG_ERR_UNAVAILABLE, "upstream %s: the server is down: %s",
				    r->u->name, r->why);
	if (now_ms() >= deadline) {
		if (busy)
			return tg_error_set(err, TG_ERR_LIMIT, "upstream %s: %u calls already have "
					    "a server of their own (per_call)", r->u->name,
					    UPSTREAM_RUN_PER_CALL_MAX);
		if (r->starts == 0 || strcmp(r->why, "starting") == 0)
			return tg_error_set(err, TG_ERR_LIMIT, "upstream %s: still starting",
					    r->u->name);
		return tg_error_set(err, TG_ERR_UNAVAILABLE, "upstream %s: the server is down: %s",
				    r->u->name, r->why);
	}
	if (cancel_fd >= 0 && poll(&p, 1, 0) > 0)
		return tg_error_set(err, TG_ERR_INVALID, "upstream %s: cancelled", r->u->name);
	wait_until(r, deadline < now_ms() + 100 ? deadline : now_ms() + 100);
	return 0;
}

/* The generation up, with a reference, waiting until deadline (ms) or
 * cancel_fd; NULL and err. Called and returns with the lock held. */
static struct gen *gen_get(struct upstream_run *r, uint64_t deadline, int cancel_fd,
			   struct tg_error *err)
{
	/* a server whose run has ended is not served, though the supervisor
	 * may not have noticed yet: the call waits for the next one */
	while ((!r->cur || r->cur->ended) && !r->stop)
		if (wait_slice(r, deadline, cancel_fd, 0, err) < 0)
			return NULL;
	if (r->stop) {
		tg_error_set(err, TG_ERR_UNAVAILABLE, "upstream %s: stopped", r->u->name);
		return NULL;
	}
	r->cur->refs++;
	return r->cur;
}

/* per_call: a server of the call's own, started and initialized by
 * deadline, once fewer than UPSTREAM_RUN_PER_CALL_MAX run; NULL and err.
 * percall_end ends it. */
static struct gen *percall_up(struct upstream_run *r, const char *tool, uint64_t deadline,
			      int cancel_fd, struct tg_error *err)
{
	char said[sizeof(err->msg)];
	struct gen *g = NULL;
	uint64_t left;

	pthread_mutex_lock(&r->lock);
	while (r->percall >= UPSTREAM_RUN_PER_CALL_MAX && !r->stop)
		if (wait_slice(r, deadline, cancel_fd, 1, err) < 0)
			goto out;
	if (r->stop) {
		tg_error_set(err, TG_ERR_UNAVAILABLE, "upstream %s: stopped", r->u->name);
		goto out;
	}
	r->percall++;
	r->starts++;
	pthread_mutex_unlock(&r->lock);
	if (gen_start(r, &g, err) < 0) {
		/* a refusal names the upstream already */
		pthread_mutex_lock(&r->lock);
		r->percall--;
		pthread_cond_broadcast(&r->cond);
		goto out;
	}
	left = deadline > now_ms() ? deadline - now_ms() : 1;
	if (left > UPSTREAM_RUN_HANDSHAKE_MS)
		left = UPSTREAM_RUN_HANDSHAKE_MS;
	if (run_handshake(r, g, (int)left, err) == 0)
		return g;
	gen_up_failed(g, err);
	g = NULL;
	/* it may quote the server (an error it answered initialize with) */
	obs_shown(err->msg, strlen(err->msg), said, sizeof(said));
	tg_error_set(err, TG_ERR_UNAVAILABLE, "upstream %s: %s: its server did not start: %s",
		     r->u->name, tool, said);
	pthread_mutex_lock(&r->lock);
	r->percall--;
	pthread_cond_broadcast(&r->cond);
out:
	pthread_mutex_unlock(&r->lock);
	return g;
}

/* per_call: the call's server ended, whatever happened: no process,
 * thread or descriptor of it left. */
static void percall_end(struct upstream_run *r, struct gen *g)
{
	gen_free(g);
	pthread_mutex_lock(&r->lock);
	r->percall--;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

int upstream_run_wait(struct upstream_run *r, int timeout_ms, struct tg_error *err)
{
	uint64_t deadline = now_ms() + (uint64_t)(timeout_ms > 0 ? timeout_ms : 0);
	struct gen *g = NULL;
	int rc = 0;

	pthread_mutex_lock(&r->lock);
	if (r->u->per_call) {
		/* up: the tools listed; each call starts its own server */
		while (!r->tools && !r->stop && rc == 0)
			rc = wait_slice(r, deadline, -1, 0, err);
		if (rc == 0 && r->stop)
			rc = tg_error_set(err, TG_ERR_UNAVAILABLE, "upstream %s: stopped",
					  r->u->name);
	} else if ((g = gen_get(r, deadline, -1, err)) != NULL) {
		g->refs--;
		pthread_cond_broadcast(&r->cond);
	} else {
		rc = -1;
	}
	pthread_mutex_unlock(&r->lock);
	return rc;
}

char *upstream_run_tools(struct upstream_run *r, uint64_t *listing)
{
	char *t;

	pthread_mutex_lock(&r->lock);
	t = r->tools ? strdup(r->tools) : NULL;
	if (listing)
		*listing = r->listing;
	pthread_mutex_unlock(&r->lock);
	return t;
}

int upstream_run_first_listing(struct upstream_run *r, char *why, size_t size)
{
	int state;

	pthread_mutex_lock(&r->lock);
	/* why is "starting" until a start fails: then the failure, kept
	 * through the backoff and the next start, until one lists */
	state = r->tools ? 1 : r->stop || (r->why[0] && strcmp(r->why, "starting") != 0) ? -1 : 0;
	if (state < 0)
		snprintf(why, size, "%s", r->stop ? "stopped" : r->why);
	pthread_mutex_unlock(&r->lock);
	return state;
}

unsigned upstream_run_starts(struct upstream_run *r)
{
	unsigned n;

	pthread_mutex_lock(&r->lock);
	n = r->starts;
	pthread_mutex_unlock(&r->lock);
	return n;
}

void upstream_run_get_stats(struct upstream_run *r, struct upstream_run_stats *s)
{
	pthread_mutex_lock(&r->lock);
	*s = r->stats;
	pthread_mutex_unlock(&r->lock);
}

/* A call's canceller: cancel_fd readable cancels request id. */
struct canceller {
	struct upstream_client *c;
	int64_t id;
	int cancel_fd, done[2];
	pthread_t t;
};

#define CANCEL_WATCH_AFTER_MS 20 /* a call's cancellation watched from then on */

static void *cancel_main(void *arg)
{
	struct canceller *k = arg;
	struct pollfd p[2] = { { k->cancel_fd, POLLIN, 0 }, { k->done[0], POLLIN, 0 } };

	while (poll(p, 2, -1) < 0 && errno == EINTR)
		;
	if (p[0].revents && !p[1].revents)
		upstream_client_cancel(k->c, k->id, "cancelled by the caller");
	return NULL;
}

/* A call known to g's callbacks: its progress hooks under a token of its
 * own, its relay for its server's requests when it has an ask hook and
 * the declaration relays anything. 0, or -1 and err. */
static int reg_add(struct upstream_run *r, struct gen *g, struct call_reg *c,
		   const struct upstream_run_call_hooks *hooks, struct tg_error *err)
{
	memset(c, 0, sizeof(*c));
	c->g = g;
	/* before the call is sent: what was read by now is not its */
	c->seq = upstream_client_read_seq(g->client);
	g->heed = 1;
	c->hooks = hooks;
	c->progress = hooks && hooks->notify;
	if (hooks && hooks->ask && r->u->relay &&
	    !(c->relay = upstream_relay_new(g->client, hooks->ask, hooks->ctx)))
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	pthread_mutex_lock(&r->lock);
	snprintf(c->token, sizeof(c->token), "toolgate-%llu", (unsigned long long)++r->tokens);
	c->next = r->calls;
	r->calls = c;
	pthread_mutex_unlock(&r->lock);
	return 0;
}

/* The call's progress sent before its answer delivered, then its hooks
 * forgotten, its relay ended: none runs once this returns. abandoned
 * (NULL: the server answered, or was never sent the call): why the call
 * ended without the server's answer; a long-lived server that may relay
 * is then unattributable (relay_to_call) until it restarts. */
static void reg_remove(struct upstream_run *r, struct call_reg *c, const char *abandoned)
{
	struct call_reg **pp;

	/* the reader queued them before it woke the call: a bounded wait */
	if (c->progress)
		upstream_client_flush(c->g->client, UPSTREAM_RUN_FLUSH_MS);
	pthread_mutex_lock(&r->lock);
	for (pp = &r->calls; *pp && *pp != c; pp = &(*pp)->next)
		;
	if (*pp)
		*pp = c->next;
	/* per_call: the server ends with the call, nobody else's */
	if (abandoned && r->u->relay && !r->u->per_call && !c->g->unattributable[0])
		snprintf(c->g->unattributable, sizeof(c->g->unattributable),
			 "a call ended without the server's answer (%.100s)", abandoned);
	while (c->busy)
		pthread_cond_wait(&r->cond, &r->lock);
	pthread_mutex_unlock(&r->lock);
	/* no request is pushed to it now: its thread joined, what waits
	 * answered, while the client is still the call's */
	upstream_relay_free(c->relay);
}

/* Send tools/call (with extra's members: a retry's inputResponses and
 * requestState; borrowed, may be NULL) and wait for it, cancel_fd
 * watched by a thread of its own meanwhile. 0, 1 or -1 as
 * upstream_client_wait; *sent 1 once the server was sent the call. */
static int call_wait(struct gen *g, const char *tool, json_t *args, json_t *extra,
		     const char *token, int timeout_ms, int cancel_fd, json_t **res, int *sent,
		     struct tg_error *err)
{
	struct canceller k = { .c = g->client, .cancel_fd = cancel_fd, .done = { -1, -1 } };
	json_t *params;
	ssize_t w;
	int rc, e;

	*res = NULL;
	params = json_pack("{s:s,s:O}", "name", tool, "arguments", args);
	if (params && extra && json_object_update(params, extra) < 0) {
		json_decref(params);
		params = NULL;
	}
	/* MCP "Progress": the token the server's progress will carry */
	if (params && token &&
	    json_object_set_new(params, "_meta", json_pack("{s:s}", "progressToken", token)) < 0) {
		json_decref(params);
		params = NULL;
	}
	k.id = params ? upstream_client_send(g->client, "tools/call", params, err)
		      : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	json_decref(params);
	*sent = k.id >= 0;
	/* most calls are answered within CANCEL_WATCH_AFTER_MS: watched for
	 * their caller's cancellation only past it (the descriptor stays
	 * readable: a cancellation meanwhile is seen at once) */
	if (k.id >= 0 && cancel_fd >= 0 &&
	    upstream_client_settled(g->client, k.id, CANCEL_WATCH_AFTER_MS))
		cancel_fd = -1;
	e = 0;
	if (k.id >= 0 && cancel_fd >= 0 && pipe2(k.done, O_CLOEXEC) < 0)
		e = errno;
	else if (k.id >= 0 && cancel_fd >= 0)
		e = pthread_create(&k.t, NULL, cancel_main, &k);
	if (e != 0) {
		/* answered or not, it is forgotten */
		upstream_client_cancel(g->client, k.id, "the gateway could not watch the call");
		rc = upstream_client_wait(g->client, k.id, timeout_ms, res, err);
		json_decref(*res);
		*res = NULL;
		rc = tg_error_sys(err, e, "a pipe and a thread to watch the call's cancel fd");
	} else if (k.id >= 0) {
		rc = upstream_client_wait(g->client, k.id, timeout_ms, res, err);
		if (cancel_fd >= 0) {
			do
				w = write(k.done[1], "x", 1);
			while (w < 0 && errno == EINTR);
			pthread_join(k.t, NULL);
		}
	} else {
		rc = -1;
	}
	if (k.done[0] >= 0) {
		close(k.done[0]);
		close(k.done[1]);
	}
	return rc;
}

int upstream_run_call(struct upstream_run *r, const char *tool, const char *args_json,
		      int timeout_ms, int cancel_fd, char **result_json, struct tg_error *err)
{
	return upstream_run_call_ex(r, tool, args_json, timeout_ms, cancel_fd, NULL, result_json,
				    err);
}

/* A call's timeout: timeout_ms, or else the declaration's, or else
 * UPSTREAM_RUN_CALL_MS. */
static int call_timeout(const struct upstream_run *r, int timeout_ms)
{
	if (timeout_ms > 0)
		return timeout_ms;
	return !r->u->timeout_ms ? UPSTREAM_RUN_CALL_MS
	       : r->u->timeout_ms > INT_MAX ? INT_MAX : (int)r->u->timeout_ms;
}

/* The server a request (of tool, or a method) goes to, with a reference:
 * the one up, or per_call one of its own; NULL and err. settle gives it
 * back. */
static struct gen *acquire(struct upstream_run *r, const char *what, uint64_t deadline,
			   int cancel_fd, struct tg_error *err)
{
	struct gen *g;

	if (r->u->per_call)
		return percall_up(r, what, deadline, cancel_fd, err);
	pthread_mutex_lock(&r->lock);
	g = gen_get(r, deadline, cancel_fd, err);
	pthread_mutex_unlock(&r->lock);
	return g;
}

/* A request's end on g (rc as upstream_client_wait; err its error): the
 * error said as the caller sees it, g given back. 0, or -1 and err. */
static int settle(struct upstream_run *r, struct gen *g, const char *what, int rc,
		  struct tg_error *err)
{
	uint64_t deadline;

	if (rc < 0 && err->code == TG_ERR_UNAVAILABLE) {
		char broke[sizeof(err->msg)];

		/* the connection broke: the run's end, when it comes soon,
		 * says why better than the client's EOF */
		snprintf(broke, sizeof(broke), "%s", err->msg);
		pthread_mutex_lock(&r->lock);
		deadline = now_ms() + 2000;
		while (!g->ended && now_ms() < deadline)
			wait_until(r, deadline);
		tg_error_set(err, TG_ERR_UNAVAILABLE, "upstream %s: %s: the server died: %s",
			     r->u->name, what, g->ended ? g->why : broke);
		pthread_mutex_unlock(&r->lock);
	} else if (rc != 0) {
		/* a timeout, a cancel, its JSON-RPC error: the server's words,
		 * shown as the log may show them */
		char said[sizeof(err->msg)];

		obs_shown(err->msg, strlen(err->msg), said, sizeof(said));
		snprintf(err->msg, sizeof(err->msg), "%s", said);
		tg_error_wrap(err, "upstream %s: %s", r->u->name, what);
	}
	if (r->u->per_call) {
		percall_end(r, g);
		return rc == 0 ? 0 : -1;
	}
	pthread_mutex_lock(&r->lock);
	g->refs--;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return rc == 0 ? 0 : -1;
}

/* The call sent, and in the 2026-07-28 era sent again with its client's
 * answers for as long as the server answers input_required (at most
 * UPSTREAM_MODERN_ROUNDS rounds): 0, 1 or -1 as upstream_client_wait, *res
 * the last answer; *sent as call_wait's, of the last round. */
static int call_rounds(struct upstream_run *r, struct gen *g, struct call_reg *reg,
		       const char *tool, json_t *args, const struct upstream_run_call_hooks *hooks,
		       uint64_t deadline, int cancel_fd, json_t **res, int *sent,
		       struct tg_error *err)
{
	json_t *retry = NULL;
	unsigned round;
	uint64_t left;
	int rc;

	for (round = 0;; round++) {
		left = deadline > now_ms() ? deadline - now_ms() : 1;
		rc = call_wait(g, tool, args, retry, reg->progress ? reg->token : NULL, (int)left,
			       cancel_fd, res, sent, err);
		json_decref(retry);
		retry = NULL;
		if (rc != 0 || !upstream_client_modern(g->client))
			return rc;
		/* answered: whatever ends the call now, the server is owed
		 * nothing (no request of its can still come for it) */
		*sent = 0;
		rc = run_result_type(*res, "tools/call", err);
		if (rc == 1 && round + 1 == UPSTREAM_MODERN_ROUNDS)
			rc = tg_error_set(err, TG_ERR_INVALID, "tools/call: the server still asks "
					  "for input after %u rounds", UPSTREAM_MODERN_ROUNDS);
		if (rc == 1)
			rc = run_input_required(r, *res, hooks, deadline, cancel_fd, &retry, err);
		else if (rc == 0)
			return 0;
		if (rc < 0) {
			json_decref(*res);
			*res = NULL;
			return -1;
		}
		json_decref(*res);
		*res = NULL;
	}
}

int upstream_run_call_ex(struct upstream_run *r, const char *tool, const char *args_json,
			 int timeout_ms, int cancel_fd, const struct upstream_run_call_hooks *hooks,
			 char **result_json, struct tg_error *err)
{
	uint64_t deadline;
	json_t *args, *res = NULL;
	struct call_reg reg;
	struct gen *g;
	int rc, sent = 0;

	*result_json = NULL;
	deadline = now_ms() + (uint64_t)call_timeout(r, timeout_ms);
	args = args_json ? json_loads(args_json, JSON_REJECT_DUPLICATES, NULL) : json_object();
	if (!json_is_object(args)) {
		json_decref(args);
		return tg_error_set(err, TG_ERR_INVALID, "upstream %s: %s: the arguments are not "
				    "a JSON object", r->u->name, tool);
	}
	g = acquire(r, tool, deadline, cancel_fd, err);
	if (!g) {
		json_decref(args);
		return -1;
	}
	rc = reg_add(r, g, &reg, hooks, err);
	if (rc == 0) {
		rc = call_rounds(r, g, &reg, tool, args, hooks, deadline, cancel_fd, &res, &sent,
				 err);
		/* sent and not answered: timed out, cancelled, stopped to ask
		 * (MRTR), its connection broken */
		reg_remove(r, &reg, rc < 0 && sent ? err->msg : NULL);
	}
	json_decref(args);
	if (rc == 0 && !(*result_json = json_dumps(res, JSON_COMPACT)))
		rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	json_decref(res);
	return settle(r, g, tool, rc, err);
}

int upstream_run_request(struct upstream_run *r, const char *capability, const char *method,
			 const char *params_json, int timeout_ms, char **result_json,
			 struct tg_error *err)
{
	uint64_t deadline = now_ms() + (uint64_t)call_timeout(r, timeout_ms), left;
	json_t *params, *res = NULL;
	struct gen *g;
	int rc;

	*result_json = NULL;
	params = json_loads(params_json, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_object(params)) {
		json_decref(params);
		return tg_error_set(err, TG_ERR_INVALID, "upstream %s: %s: the params are not a "
				    "JSON object", r->u->name, method);
	}
	g = acquire(r, method, deadline, -1, err);
	if (!g) {
		json_decref(params);
		return -1;
	}
	g->heed = 1;
	left = deadline > now_ms() ? deadline - now_ms() : 1;
	if (!upstream_catalog_declares(g->client, capability))
		rc = tg_error_set(err, TG_ERR_INVALID, "its server declares no %s capability",
				  capability);
	else
		rc = upstream_client_request(g->client, method, params, (int)left, &res, err);
	json_decref(params);
	if (rc == 0 && !json_is_object(res))
		rc = tg_error_set(err, TG_ERR_INVALID, "the result is not an object");
	/* a read or a prompt has no caller's client to ask */
	if (rc == 0 && upstream_client_modern(g->client) &&
	    (rc = run_result_type(res, method, err)) == 1)
		rc = tg_error_set(err, TG_ERR_INVALID, "the server asks its client for input "
				  "(input_required), which toolgate relays only for tools/call");
	if (rc == 0 && !(*result_json = json_dumps(res, JSON_COMPACT)))
		rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	json_decref(res);
	return settle(r, g, method, rc, err);
}
