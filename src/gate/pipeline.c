/*
 * The pipeline (include/toolgate/gate.h, docs/PIPELINE.md): every tool
 * call, from any transport, through the same stages in the same order.
 *
 * Each stage is a function that takes the call's state and either lets it
 * go on or ends it, with a protocol error (the call itself is wrong) or
 * with a tool result marked as an error (the tool refused or failed).
 * This file holds the gate's life (catalogue snapshots, warm pools), the
 * stages up to 4c, stage 7 and tg_gate_call; the write path (5-6) is in
 * write.c, the output check (8) in output.c, the evidence (9) in
 * record.c, rollback in rollback.c and plans in saga.c.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "auth/anomaly.h"
#include "exec/exec.h"
#include "gate/gate_int.h"
#include "obs/metrics.h"
#include "util/pcre2.h"
#include "util/sodium.h"

#include "toolgate/audit.h"
#include "toolgate/redact.h"
#include "toolgate/scan.h"
#include "toolgate/trace.h"
#include "toolgate/auth.h"
#include "toolgate/gate.h"
#include "toolgate/sandbox.h"
#include "toolgate/store.h"
#include "toolgate/schema.h"
#include "util/json_wide.h"
#include "util/utf8.h"

#define MAX_SCHEMA_ERRORS 8        /* reported to the caller per call */

#define MAX_WARM 128

static void warm_pool_free(struct warm_pool *w)
{
	if (w) {
		tg_sandbox_pool_free(w->pool);
		free(w);
	}
}


int64_t gate_ticket_ttl(const struct tg_gate *g, const char *tool)
{
	return g->policy ? (int64_t)tg_policy_ticket_lifetime(g->policy, tool) : g->ticket_ttl;
}

/* The store write calls use, and the baselines it holds. */
static void gate_set_store(struct tg_gate *g, struct tg_store *store, int64_t ticket_ttl)
{
	g->store = store;
	g->ticket_ttl = ticket_ttl > 0 ? ticket_ttl : 3600;
	anomaly_baselines_load(g->baselines, store);
}

int tg_gate_new(const struct tg_catalog *catalog, const struct tg_gate_options *opts,
		struct tg_gate **out, struct tg_error *err)
{
	struct exec_dirs_options dirs_opts = { 0 };
	struct exec_dirs *dirs = NULL;
	struct gate_ups_plan plan;
	struct tg_gate *g;

	tg_error_clear(err);
	*out = NULL;
	/* what every call's pipeline may use (redaction's vendor rules are
	 * compiled at their first match): loaded here, so a library missing
	 * is the gate's error at start, never one in the middle of a call */
	if (tg_sodium_load("gate", err) < 0 || tg_pcre2_load("gate", err) < 0)
		return -1;
	if (opts) {
		dirs_opts.workspace = opts->workspace;
		dirs_opts.tools_dir = opts->tools_dir;
		dirs_opts.tools_copy = opts->tools_copy;
		dirs_opts.state_dir = opts->state_dir;
		dirs_opts.own_files = opts->own_files;
	}
	if (exec_dirs_new(&dirs_opts, &dirs, err) < 0 ||
	    exec_check_catalog(catalog, dirs, err) < 0) {
		exec_dirs_free(dirs);
		return -1;
	}
	/* what a killed gateway's overlay dry runs left behind */
	exec_overlay_sweep();
	g = calloc(1, sizeof(*g));
	if (!g) {
		exec_dirs_free(dirs);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	pthread_mutex_init(&g->lock, NULL);
	if (gate_snapshots_init(g, catalog, err) < 0) {
		pthread_mutex_destroy(&g->lock);
		free(g);
		exec_dirs_free(dirs);
		return -1;
	}
	if (gate_runs_init(&g->runs, opts ? opts->max_runs : 0,
			   opts ? opts->max_runs_per_principal : 0) < 0) {
		gate_snapshots_release(g);
		pthread_mutex_destroy(&g->lock);
		free(g);
		exec_dirs_free(dirs);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	g->dirs = dirs;
	pthread_mutex_init(&g->rebuild_lock, NULL);
	pthread_mutex_init(&g->changed_lock, NULL);
	pthread_mutex_init(&g->ups_lock, NULL);
	g->audit = opts ? opts->audit : NULL;
	g->tracer = opts ? opts->tracer : NULL;
	g->descriptions = opts ? opts->descriptions : TG_DESCRIPTIONS_REFUSE;
	g->metrics = metrics_new();
	pthread_mutex_init(&g->refusals_lock, NULL);
	pthread_mutex_init(&g->pools_lock, NULL);
	pthread_mutex_init(&g->queue_lock, NULL);
	pthread_mutex_init(&g->watch_lock, NULL);
	pthread_mutex_init(&g->watch_read_lock, NULL);
	pthread_mutex_init(&g->notify_lock, NULL);
	{
		/* the collector's waits are by the monotonic clock: a clock
		 * set back or forth moves no collection */
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&g->queue_wake, &ca);
		/* and the tickets' watch, and its readers' */
		pthread_cond_init(&g->watch_wake, &ca);
		pthread_cond_init(&g->watch_seen, &ca);
		/* and the webhooks' backoffs */
		pthread_cond_init(&g->notify_wake, &ca);
		/* and the upstreams' thread's, which looks at review tickets */
		pthread_cond_init(&g->ups_wake, &ca);
		/* and those of calls and listings waiting for an upstream */
		pthread_cond_init(&g->installed, &ca);
		pthread_condattr_destroy(&ca);
	}
	tg_ticket_policy_defaults(&g->tickets);
	g->warm = opts ? opts->warm : 0;
	g->anomaly_action = opts ? opts->anomalies : TG_ANOMALY_DEFAULT;
	g->baselines = anomaly_baselines_new();
	if (!g->baselines) {
		tg_gate_free(g);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	/* the composition the caller made: the store, then the policy over
	 * it, then the collection on both */
	gate_set_store(g, opts ? opts->store : NULL, opts ? opts->ticket_ttl : 0);
	if (opts && opts->policy)
		g->tickets = *tg_policy_tickets(opts->policy);
	if (gate_identity_init(g, opts, err) < 0 || gate_scan_descriptions(g, catalog, err) < 0 ||
	    gate_skills_init(g, opts, err) < 0 || gate_snapshot_skill_tools(g, err) < 0 ||
	    gate_collector_start(g, err) < 0 || gate_watch_start(g, err) < 0 ||
	    gate_notify_start(g, err) < 0) {
		tg_gate_free(g);
		return -1;
	}
	/* the declared servers start now; their tools are served once listed */
	pthread_mutex_lock(&g->rebuild_lock);
	if (gate_upstreams_plan(g, g->base, &plan, err) < 0) {
		pthread_mutex_unlock(&g->rebuild_lock);
		tg_gate_free(g);
		return -1;
	}
	gate_upstreams_commit(g, &plan);
	pthread_mutex_unlock(&g->rebuild_lock);
	*out = g;
	return 0;
}

/* What the model reads of each tool, scanned (docs/SCANNING.md): each
 * finding recorded and counted; with the refuse policy (the default) a
 * finding refuses the catalogue, naming the first. -1 and err too when a
 * finding could not be recorded: nothing is loaded unrecorded. */
int gate_scan_descriptions(struct tg_gate *g, const struct tg_catalog *catalog,
			   struct tg_error *err)
{
	return gate_scan_tools(g, catalog, NULL, 0, err);
}

int gate_scan_tools(struct tg_gate *g, const struct tg_catalog *catalog,
		    struct tg_contract *const *v, size_t nv, struct tg_error *err)
{
	const char *outcome = g->descriptions == TG_DESCRIPTIONS_REFUSE ? "description_refused"
									 : "description_warning";
	size_t i, k, n, total = 0;
	char first[700] = "";

	if (g->descriptions == TG_DESCRIPTIONS_OFF)
		return 0;
	for (i = 0; i < (catalog ? tg_catalog_count(catalog) : nv); i++) {
		const struct tg_contract *c = catalog ? tg_catalog_at(catalog, i) : v[i];
		struct tg_scan_finding f[16];
		char subject[256], line[400];

		n = tg_scan_contract(c, f, 16);
		snprintf(subject, sizeof(subject), "%s@%s", c->name, c->version_text);
		for (k = 0; k < n && k < 16; k++) {
			tg_scan_describe(&f[k], line, sizeof(line));
			metrics_count(g->metrics, "description_findings", f[k].rule);
			if (tg_record_event(g->audit, "", subject, outcome, line) < 0)
				return tg_error_set(err, TG_ERR_UNAVAILABLE, "%s: a description "
						    "finding could not be recorded", subject);
			if (!first[0])
				snprintf(first, sizeof(first), "%s: %s: %s", c->file, subject, line);
		}
		total += n;
	}
	if (!total || g->descriptions != TG_DESCRIPTIONS_REFUSE)
		return 0;
	return tg_error_set(err, TG_ERR_INVALID, "%s%s; " DESCRIPTION_REFUSED ": fix it (toolgate catalog lint lists every finding), or "
			    "load it anyway with --descriptions warn", first,
			    total > 1 ? " (and more)" : "");
}

void tg_gate_free(struct tg_gate *g)
{
	if (!g)
		return;
	/* the webhooks first: they wait on the watch */
	gate_notify_stop(g);
	gate_collector_stop(g);
	gate_watch_stop(g);
	gate_rebuilder_stop(g);
	/* nothing uses the gate any more: every server ends, every
	 * snapshot goes */
	gate_upstreams_release(g);
	gate_pins_release(g);
	gate_flush_refusals(g);
	gate_snapshots_release(g);
	while (g->pools) {
		struct warm_pool *w = g->pools;

		g->pools = w->next;
		warm_pool_free(w);
	}
	pthread_mutex_destroy(&g->pools_lock);
	gate_runs_release(&g->runs);
	pthread_cond_destroy(&g->queue_wake);
	pthread_mutex_destroy(&g->queue_lock);
	pthread_cond_destroy(&g->watch_wake);
	pthread_cond_destroy(&g->watch_seen);
	pthread_mutex_destroy(&g->watch_lock);
	pthread_mutex_destroy(&g->watch_read_lock);
	pthread_cond_destroy(&g->notify_wake);
	pthread_mutex_destroy(&g->notify_lock);
	pthread_mutex_destroy(&g->refusals_lock);
	anomaly_baselines_free(g->baselines, g->store);
	gate_identity_release(g);
	gate_skills_release(g);
	pthread_cond_destroy(&g->ups_wake);
	pthread_cond_destroy(&g->installed);
	pthread_mutex_destroy(&g->ups_lock);
	pthread_mutex_destroy(&g->changed_lock);
	pthread_mutex_destroy(&g->rebuild_lock);
	pthread_mutex_destroy(&g->lock);
	metrics_free(g->metrics);
	exec_dirs_free(g->dirs);
	free(g);
}

void tg_call_result_release(struct tg_call_result *r)
{
	free(r->content_json);
	free(r->structured_json);
	r->content_json = r->structured_json = NULL;
}

/* ---- stages ---------------------------------------------------------- */

/* A tool result marked as an error, ending the call. */

int gate_refuse(struct call_state *st, const char *outcome, const char *fmt, ...)
{
	char text[2048];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	exec_out_release(&st->out);
	st->out.is_error = 1;
	st->out.content = json_pack("[o]", exec_text(text));
	st->outcome = outcome;
	return 1;
}

/* 1 identify: the transport authenticated the principal; a call without
 * one does not go further. */
static int stage_identify(struct call_state *st, struct tg_error *err)
{
	if (!st->call->principal || !st->call->principal[0])
		return tg_error_set(err, TG_ERR_INVALID, "the call has no principal");
	return 0;
}

/* The call's name[@version] in its snapshot: a contract, refusing a
 * retired one. An upstream's tool held for review (pins.c) resolves too,
 * to be refused with its ticket once the caller is known to be allowed to
 * call it. */
static int resolve_in(struct tg_gate *g, struct call_state *st, struct tg_error *err)
{
	if (tg_catalog_resolve(st->catalog, st->call->tool, st->call->today, &st->k, err) == 0)
		return 0;
	if (err->code != TG_ERR_INVALID || !(st->held = gate_held_find(g, st->catalog,
								       st->call->tool)))
		return -1;
	tg_error_clear(err);
	st->k = st->held->k;
	return 0;
}

#define DID_YOU_MEAN_MAX 3 /* tools named by a hint; more: none is */

/* A name that no tool has, but that some served tools end with after a
 * dot (echo for everything.echo: the upstream's own name, its namespace
 * forgotten): "(did you mean A, B or C?)" added to err, when they are at
 * most DID_YOU_MEAN_MAX. Only tools the caller's scopes let it call: a
 * hint never names a tool tools/list does not show it. */
static void did_you_mean(const struct tg_gate *g, const struct call_state *st,
			 struct tg_error *err)
{
	const struct tg_catalog *cat = st->catalog;
	const char *ref = st->call->tool, *at = strchr(ref, '@'), *hit[DID_YOU_MEAN_MAX];
	size_t len = at ? (size_t)(at - ref) : strlen(ref), n = 0, i, o, nl;
	const char *prev = NULL;
	char hint[512], need[200];

	if (!len || err->code != TG_ERR_INVALID || !strstr(err->msg, "no such tool"))
		return;
	for (i = 0; i < tg_catalog_count(cat); i++) {
		const struct tg_contract *k = tg_catalog_at(cat, i), *best;
		struct tg_error rerr;

		nl = strlen(k->name);
		if ((prev && strcmp(prev, k->name) == 0) || nl <= len + 1 ||
		    k->name[nl - len - 1] != '.' || memcmp(k->name + nl - len, ref, len) != 0)
			continue;
		prev = k->name;
		if (tg_catalog_resolve(cat, k->name, st->call->today, &best, &rerr) < 0)
			continue; /* retired */
		if (gate_scope_missing(g, best, st->call->scopes, need, sizeof(need)))
			continue; /* not the caller's to know of */
		if (n == DID_YOU_MEAN_MAX)
			return;
		hit[n++] = k->name;
	}
	if (!n)
		return;
	o = (size_t)snprintf(hint, sizeof(hint), " (did you mean %s", hit[0]);
	for (i = 1; i < n && o < sizeof(hint); i++)
		o += (size_t)snprintf(hint + o, sizeof(hint) - o, "%s%s", i + 1 == n ? " or " : ", ",
				      hit[i]);
	o = strlen(err->msg);
	snprintf(err->msg + o, sizeof(err->msg) - o, "%s?)", hint);
}

/* 2 resolve (resolve_in); a name under an upstream still starting waits
 * for its first listing (upstream_start.c): 0, 1 answered, or -1 and err,
 * an unknown name's with the served tools it may have meant. */
static int stage_resolve(struct tg_gate *g, struct call_state *st, struct tg_error *err)
{
	int rc;

	if (!st->call->tool)
		return tg_error_set(err, TG_ERR_INVALID, "the call names no tool");
	rc = resolve_in(g, st, err);
	if (rc == 0 || err->code != TG_ERR_INVALID)
		return rc;
	/* under an upstream whose server has not listed its tools yet: its
	 * first listing is waited for, or the call told why it is not */
	rc = gate_resolve_starting(g, st);
	if (rc > 0) {
		tg_error_clear(err);
		return 1;
	}
	if (rc == 0 && resolve_in(g, st, err) == 0)
		return 0;
	did_you_mean(g, st, err);
	return -1;
}

/* 4a' a tool held for review: refused, naming its ticket. */
static int stage_held(struct call_state *st)
{
	const struct gate_held *h = st->held;
	const char *t = h && h->ticket[0] ? h->ticket : NULL;
	char accept[300] = "";

	if (!h)
		return 0;
	if (t && !h->rejected)
		snprintf(accept, sizeof(accept), " (ticket %s: toolgate approvals show %s); a "
			 "person with the scope %s:approve accepts it", t, t, st->k->name);
	return gate_answer(st, "refused", "definition_awaits_review", t, "%s: upstream %s lists "
			   "it, but %s%s", st->k->name, st->k->upstream, h->why, accept);
}

/* Where the gate hands the arguments on as jansson values (an upstream
 * server's tool, a plan's steps, a compensation's mapping), a number
 * jansson would round or refuse (util/json_wide.h) is refused, never
 * rounded; a command tool gets the arguments as written. */
static int exact_enough(struct call_state *st)
{
	const char *who;

	if (st->k->executor == TG_EXEC_UPSTREAM)
		who = "an upstream server's tool, which gets";
	else if (st->k->executor == TG_EXEC_PLAN || st->k->executor == TG_EXEC_PLAN_UNDO)
		who = "a plan, whose steps get";
	else if (st->k->compensation_tool)
		who = "a tool whose compensation gets";
	else
		return 0;
	if (!json_wide_has_long(st->args, st->args_len))
		return 0;
	return gate_refuse(st, "invalid_arguments", "%s@%s: a number of the arguments has more "
			   "than 17 significant digits or is an integer past 64 bits, and %s "
			   "is %s its arguments as doubles: refused rather than rounded",
			   st->k->name, st->k->version_text, st->k->name, who);
}

/* 3 validate: the arguments against the input schema. A mismatch is a
 * tool result with isError (MCP: the model can read it and correct its
 * call), listing where and why. */
static int stage_validate(struct call_state *st)
{
	struct tg_schema_error ev[MAX_SCHEMA_ERRORS];
	struct tg_schema_errors errors = { ev, MAX_SCHEMA_ERRORS, 0 };
	struct tg_error verr;
	char text[2048];
	size_t i, o;
	int rc;

	if (st->args_len > TG_MAX_ARGUMENTS)
		return gate_refuse(st, "invalid_arguments", "arguments larger than %u bytes",
			      TG_MAX_ARGUMENTS);
	rc = tg_schema_validate(st->k->input_schema, st->args, st->args_len, &errors, &verr);
	if (rc < 0)
		return gate_refuse(st, "invalid_arguments", "arguments: %s", verr.msg);
	if (rc == 1)
		return exact_enough(st);
	o = (size_t)snprintf(text, sizeof(text), "arguments do not match the input schema of %s@%s:",
			     st->k->name, st->k->version_text);
	for (i = 0; i < errors.n && o < sizeof(text); i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "\n%s: %s (%s)",
				      ev[i].instance_location[0] ? ev[i].instance_location : "/",
				      ev[i].message, ev[i].keyword_location);
	return gate_refuse(st, "invalid_arguments", "%s", text);
}

/* Stage 3 in a span of its own, under the call's. */
static int stage_validate_traced(struct tg_gate *g, struct call_state *st)
{
	struct tg_span *span = tg_span_start(g->tracer, "validate", TG_SPAN_INTERNAL, st->span,
					     NULL);
	int rc = stage_validate(st);

	if (rc != 0)
		tg_span_error(span, st->outcome, NULL);
	tg_span_end(span);
	return rc;
}

/* 4 authorize: with scopes (the caller's token's, or its principal's in
 * the policy), one must allow this tool: TOOL:read for a read tool,
 * TOOL:write for a write tool (docs/AUTH.md). tg_gate_authorize asks the
 * same (identity.c). */
static int stage_authorize(struct tg_gate *g, struct call_state *st)
{
	char need[200];

	if (!gate_scope_missing(g, st->k, st->call->scopes, need, sizeof(need)))
		return 0;
	return gate_refuse(st, "forbidden", "%s@%s: the caller may not call it (it needs the scope "
			   "%s)", st->k->name, st->k->version_text, need);
}

/* 4b limit: the principal's rate for this tool (a token bucket). A
 * limited call is a retryable tool error that says when. */
static int stage_limit(struct tg_gate *g, struct call_state *st)
{
	struct timespec now;
	uint64_t retry_ms, now_ms;
	int rc;

	/* the gate's own calls (a plan driven on after a crash) were
	 * approved, and are no principal's */
	if (!g->limiter || st->call->scopes == gate_own_scopes)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	now_ms = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
	if (tg_limiter_take(g->limiter, st->call->principal, st->k->name, now_ms, &retry_ms))
		return 0;
	rc = gate_refuse(st, "rate_limited", "%s@%s: rate limited: %s has called it as often as its "
		    "rate allows; retry in %.1f s", st->k->name, st->k->version_text,
		    st->call->principal, (double)retry_ms / 1000.0);
	st->out.structured = json_pack("{s:{s:s,s:s,s:b,s:I}}", "error", "code", "rate_limited",
				       "message", "rate limited", "retryable", 1, "retry_after_ms",
				       (json_int_t)retry_ms);
	return rc;
}

/* 4c anomalies (docs/ANOMALIES.md): the arguments looked at for what a
 * caller seldom means and an attacker often does. A finding holds the
 * call for review (stage 6 makes its ticket, a read's too), or with warn
 * lets it run; either way it is recorded and counted. */
static int stage_anomalies(struct tg_gate *g, struct call_state *st, struct tg_error *err)
{
	enum tg_anomaly_action action;
	json_error_t jerr;
	char *own;
	unsigned rules;
	size_t i;
	int rc;

	action = tg_anomaly_config_tool(g->anomaly_config, st->k->name, &rules);
	if (g->anomaly_action != TG_ANOMALY_DEFAULT)
		action = g->anomaly_action;
	if (action == TG_ANOMALY_OFF)
		return 0;
	st->anomalies = malloc(sizeof(*st->anomalies));
	if (!st->anomalies)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	/* a plan's steps' arguments are each looked at as a call of their
	 * tool, with its schema (gate_run): the plan itself by the rest */
	own = st->k->executor == TG_EXEC_PLAN ? saga_without_arguments(st->args, st->args_len)
					      : NULL;
	rc = anomaly_look(st->k, g->anomaly_config, g->baselines, rules, own ? own : st->args,
			  own ? strlen(own) : st->args_len, st->anomalies, &jerr);
	free(own);
	if (rc < 0) {
		free(st->anomalies);
		st->anomalies = NULL;
		return gate_refuse(st, "invalid_arguments", "%s@%s: its arguments cannot be looked at "
			      "for anomalies (%s), so the call does not run", st->k->name,
			      st->k->version_text, jerr.text);
	}
	if (!st->anomalies->total) {
		st->usual.size = st->anomalies->size;
		st->usual.entropy = st->anomalies->entropy;
		st->usual.has_entropy = st->anomalies->has_entropy;
		st->usual.due = 1;
		free(st->anomalies);
		st->anomalies = NULL;
		return 0;
	}
	st->anomalous = action;
	metrics_count(g->metrics, "excessive_agency", "anomalous_arguments");
	for (i = 0; i < TG_ANOMALY_RULES; i++)
		if (st->anomalies->rules & TG_ANOMALY_BIT(i))
			metrics_count(g->metrics, "anomalies", tg_anomaly_rule_name(i));
	tg_span_set_int(st->span, "toolgate.anomalies", (int64_t)st->anomalies->total);
	return 0;
}





/* A command tool's sandbox: warm from its pool when the gate keeps them
 * and the run is like any other of the tool (exec_env.sandbox). A tool's
 * pool is made at its first such call, from that call's spec; a call
 * whose spec no longer matches it (a reload changed the contract under
 * the same version) retires it for a new one, freed when its last call
 * ends. At most MAX_WARM sandboxes wait in all, each holding a few of the
 * gateway's descriptors: beyond that, tools run cold. */
static int gate_sandbox(void *ctx, const struct tg_contract *k, const struct tg_sandbox_spec *spec,
			int poolable, struct tg_sandbox_result **out, struct tg_error *err)
{
	struct tg_gate *g = ctx;
	struct warm_pool *w, *old = NULL, *gone = NULL;
	char key[300];
	int rc;

	if (!g->warm || !poolable)
		return tg_sandbox_run(spec, out, err);
	snprintf(key, sizeof(key), "%.200s@%.80s", k->name, k->version_text);
	pthread_mutex_lock(&g->pools_lock);
	for (w = g->pools; w && strcmp(w->key, key) != 0; w = w->next)
		;
	if (w && w->pool && !tg_sandbox_pool_matches(w->pool, spec)) {
		old = w; /* retired: out of the list, freed by its last call */
		w = NULL;
	}
	if (!w && (w = calloc(1, sizeof(*w)))) {
		struct tg_error perr;

		/* this call runs cold; the pool is ready for the next */
		snprintf(w->key, sizeof(w->key), "%s", key);
		if (g->warm_total + g->warm <= MAX_WARM &&
		    tg_sandbox_pool_new(spec, g->warm, k->prestart, &w->pool, &perr) == 0)
			g->warm_total += g->warm;
		w->next = g->pools;
		g->pools = w;
		w->refs = 1; /* the list's */
		if (old) {
			struct warm_pool **pp;

			for (pp = &w->next; *pp != old; pp = &(*pp)->next)
				;
			*pp = old->next;
			old->next = NULL;
			if (old->pool)
				g->warm_total -= g->warm;
			if (--old->refs == 0)
				gone = old;
		}
		pthread_mutex_unlock(&g->pools_lock);
		warm_pool_free(gone);
		return tg_sandbox_run(spec, out, err);
	}
	if (w)
		w->refs++;
	pthread_mutex_unlock(&g->pools_lock);
	rc = tg_sandbox_pool_run(w ? w->pool : NULL, spec, out, err);
	pthread_mutex_lock(&g->pools_lock);
	if (w && --w->refs == 0)
		gone = w;
	pthread_mutex_unlock(&g->pools_lock);
	warm_pool_free(gone);
	return rc;
}

void tg_gate_get_warm_stats(struct tg_gate *g, struct tg_sandbox_pool_stats *sum)
{
	struct warm_pool *w;

	memset(sum, 0, sizeof(*sum));
	pthread_mutex_lock(&g->pools_lock);
	for (w = g->pools; w; w = w->next) {
		struct tg_sandbox_pool_stats st;

		if (!w->pool)
			continue;
		tg_sandbox_pool_get_stats(w->pool, &st);
		sum->size += st.size;
		sum->ready += st.ready;
		sum->refilling += st.refilling;
		sum->spent += st.spent;
		sum->made += st.made;
		sum->cgroups_reused += st.cgroups_reused;
		sum->failed += st.failed;
		sum->warm_runs += st.warm_runs;
		sum->cold_runs += st.cold_runs;
		if (st.last_error[0])
			memcpy(sum->last_error, st.last_error, sizeof(sum->last_error));
	}
	pthread_mutex_unlock(&g->pools_lock);
}


struct egress_ctx {
	struct tg_gate *g;
	const struct call_state *st;
};

/* A connection the tool's allowlist refused: recorded with the principal
 * and the tool, queued (the proxy's or the run's supervision thread). */
static void egress_denied(void *ctx, const char *destination, const char *why)
{
	const struct egress_ctx *e = ctx;
	char subject[400];

	snprintf(subject, sizeof(subject), "%s@%s", e->st->k->name, e->st->k->version_text);
	gate_record_egress_refusal(e->g, e->st->call->principal, subject, destination, why);
}

/* A call that got no place among the sandboxes: busy (retryable), or
 * cancelled when its caller gave up waiting; its answer in st. */
static void busy(struct tg_gate *g, struct call_state *st, int cancelled)
{
	if (cancelled) {
		gate_refuse(st, "cancelled", "%s@%s: cancelled while it waited for a sandbox",
			    st->k->name, st->k->version_text);
		return;
	}
	gate_refuse(st, "busy", "%s@%s: the gateway runs as many sandboxes as it allows %s (%u at "
		    "once, %u of them one principal's); retry shortly", st->k->name,
		    st->k->version_text, st->call->principal, g->runs.max, g->runs.per_principal);
	st->out.structured = json_pack("{s:{s:s,s:s,s:b}}", "error", "code", "busy", "message",
				       "the gateway's sandboxes are busy", "retryable", 1);
}

/* A plan of steps, run (or undone) by the gate itself (saga.c). */
static int execute_plan(struct tg_gate *g, struct call_state *st, struct tg_error *err)
{
	struct gate_run_env run = { st->catalog, st->call, st->dry,
				    st->ticket[0] ? st->ticket : NULL,
				    st->ticket[0] ? st->ticket : NULL, NULL, 0, 0, 0 };

	st->ran = 1;
	/* its steps' records name it: by its id once it has one, by its
	 * arguments' hash always */
	if (!st->fingerprint[0] && gate_args_fingerprint(st) < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	run.plan_sha256 = st->fingerprint;
	if (st->k->executor == TG_EXEC_PLAN)
		return saga_execute(g, &run, st->args, st->args_len, &st->out, err);
	return saga_undo(g, &run, st->args, st->args_len, &st->out, err);
}

static int execute_builtin(struct call_state *st, struct tg_error *err)
{
	json_t *args;
	int rc;

	st->ran = 1;
	args = json_wide_load(st->args, st->args_len, JSON_DECODE_ANY, NULL);
	if (!args)
		return tg_error_set(err, TG_ERR_INVALID, "arguments: not JSON");
	rc = exec_builtin(st->k, args, st->args, st->args_len, st->dry, &st->out, err);
	json_decref(args);
	return rc;
}

/* A command tool in its sandbox: 0 when it ran, 1 when it got no place
 * among the sandboxes (answered busy or cancelled in st), or -1. */
static int execute_command(struct tg_gate *g, struct call_state *st, struct tg_error *err)
{
	struct egress_ctx ectx = { g, st };
	struct notify_redacting nr = { st->call };
	struct exec_env env = { g->dirs, st->call->cancel_fd,
				st->call->notify ? gate_notify_redacted : NULL, &nr,
				st->call->ask ? gate_ask_through : NULL, st->dry,
				st->ticket[0] ? st->ticket : NULL, egress_denied, &ectx,
				gate_sandbox, g, st->call->principal };
	struct tg_span *span;
	int rc;

	span = tg_span_start(g->tracer, "sandbox", TG_SPAN_INTERNAL, st->span, NULL);
	/* a place among the gateway's sandboxes, the principal's share; what
	 * a person approved (a claimed write, a plan's steps, an undoing)
	 * waits for one as long as it takes: busy would use up the approval,
	 * or leave a plan half done */
	rc = gate_runs_take(&g->runs, st->call->principal, st->call->cancel_fd,
			    st->claimed || (st->run && (st->run->approved || st->run->undo)));
	if (rc != 0) {
		tg_span_end(span);
		busy(g, st, rc == 2);
		return 1;
	}
	st->ran = 1; /* a command tool ran once it has its sandbox's place */
	rc = exec_command(st->k, st->args, st->args_len, &env, &st->out, err);
	gate_runs_give(&g->runs, st->call->principal);
	tg_span_set_bool(span, "toolgate.dry_run", st->dry);
	if (rc < 0)
		tg_span_error(span, "sandbox_failed", err->msg);
	else if (st->out.sandbox)
		tg_span_error(span, st->out.sandbox, NULL);
	tg_span_end(span);
	return rc;
}

/* 7 execute: by the contract's executor kind. */
int gate_stage_execute(struct tg_gate *g, struct call_state *st, struct tg_error *err)
{
	int rc = -1; /* the loader gives every contract one of the kinds below */

	/* nothing runs unrecorded: a plan's steps, a compensation and a
	 * dry run come here too */
	if (g->audit && tg_audit_ok(g->audit, err) < 0) {
		err->code = TG_ERR_UNAVAILABLE;
		return -1;
	}
	switch (st->k->executor) {
	case TG_EXEC_PLAN:
	case TG_EXEC_PLAN_UNDO:
		rc = execute_plan(g, st, err);
		break;
	case TG_EXEC_BUILTIN:
		rc = execute_builtin(st, err);
		break;
	case TG_EXEC_COMMAND:
		rc = execute_command(g, st, err);
		if (rc == 1) /* answered without running */
			return 0;
		break;
	case TG_EXEC_UPSTREAM:
		rc = gate_execute_upstream(g, st, err);
		if (rc == 1) /* answered: the upstream failed, its outcome said */
			return 0;
		break;
	}
	if (rc < 0)
		return rc;
	if (st->out.changes && gate_overlay_summary(st) < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	st->outcome = st->out.is_error ? "tool_error" : st->dry ? "dry_run" : "ok";
	if (st->call->input_required && *st->call->input_required)
		st->outcome = "input_required";
	else if (st->out.is_error && gate_cancelled_within(st->call->cancel_fd, 0))
		st->outcome = "cancelled";
	return 0;
}


/* What the tool produced, as the caller gets it (o released). */
int gate_call_result(struct exec_out *o, struct tg_call_result *r, struct tg_error *err)
{
	int nomem;

	r->is_error = o->is_error;
	r->content_json = o->content ? json_dumps(o->content, JSON_COMPACT) : NULL;
	if (o->structured)
		r->structured_json = json_dumps(o->structured, JSON_COMPACT);
	nomem = !r->content_json || (o->structured && !r->structured_json);
	exec_out_release(o);
	if (nomem) {
		tg_call_result_release(r);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	return 0;
}

/* A call whose arguments raised nothing and that ran: learnt for the
 * size and entropy baselines (docs/ANOMALIES.md). */
static void learn(struct tg_gate *g, const struct call_state *st)
{
	if (!st->usual.due || !st->ran)
		return;
	anomaly_learn(g->baselines, st->k->name, st->usual.size, st->usual.entropy,
		      st->usual.has_entropy);
	anomaly_baselines_save(g->baselines, g->store, 10);
}

int tg_gate_call(struct tg_gate *g, const struct tg_call *call, struct tg_call_result *r,
		 struct tg_error *err)
{
	struct call_state st;
	struct tg_error rerr;
	int rc;

	tg_error_clear(err);
	memset(r, 0, sizeof(*r));
	memset(&st, 0, sizeof(st));
	clock_gettime(CLOCK_MONOTONIC, &st.start);
	st.call = call;
	st.args = call->arguments ? call->arguments : "{}";
	st.args_len = call->arguments ? call->arguments_len : 2;
	st.outcome = "protocol_error";
	/* nothing runs unrecorded: a log that failed refuses every call */
	if (g->audit && tg_audit_ok(g->audit, err) < 0) {
		err->code = TG_ERR_UNAVAILABLE;
		return -1;
	}
	st.catalog = tg_gate_acquire(g); /* a reload meanwhile does not touch it */
	gate_span_begin(g, &st);
	rc = stage_identify(&st, err);
	if (rc == 0)
		rc = stage_resolve(g, &st, err);
	if (rc == 0 && st.held)
		rc = stage_authorize(g, &st);
	if (rc == 0)
		rc = stage_held(&st);
	if (rc == 0)
		rc = stage_validate_traced(g, &st);
	if (rc == 0)
		rc = stage_authorize(g, &st);
	if (rc == 0)
		rc = stage_limit(g, &st);
	if (rc == 0)
		rc = stage_anomalies(g, &st, err);
	if (rc == 0)
		rc = gate_stage_write(g, &st, err);
	/* the store (or a dry run's sandbox) failed before the call was
	 * claimed to run: nothing ran and nothing is held, so the caller is
	 * told to retry (docs/PIPELINE.md, "Write calls"), rather than
	 * given a protocol error */
	if (rc < 0 && err->code == TG_ERR_SYSTEM && st.k && !st.claimed)
		rc = gate_answer(&st, "unavailable", "unavailable", NULL, "%s@%s did not run: %s; "
				 "retry", st.k->name, st.k->version_text, err->msg);
	if (rc == 0)
		rc = gate_stage_execute(g, &st, err);
	if (rc == 0)
		rc = gate_stage_check_redact(g, &st);
	if (st.claimed && rc < 0) {
		/* it could not run (the sandbox did not start, the store
		 * failed): the key's answer says so, rather than "running" for
		 * a day; the caller gets the error */
		gate_refuse(&st, "error", "%s@%s could not run: %s", st.k->name, st.k->version_text,
		       err->msg);
	}
	if (st.claimed)
		gate_write_done(g, &st);
	learn(g, &st);
	if (gate_stage_record(g, &st, rc < 0 ? err : NULL, &rerr) < 0 && rc >= 0)
		rc = gate_unrecorded(&st, &rerr, err);
	gate_span_finish(&st, rc < 0 ? err : NULL);
	if (rc >= 0 && st.k)
		snprintf(r->tool, sizeof(r->tool), "%s@%s", st.k->name, st.k->version_text);
	if (rc >= 0 && st.key_derived)
		snprintf(r->derived_key, sizeof(r->derived_key), "%s", st.made_key);
	st.k = NULL;
	free(st.canonical);
	free(st.anomalies);
	tg_gate_release(g, st.catalog);
	if (rc < 0) {
		exec_out_release(&st.out);
		return -1;
	}
	return gate_call_result(&st.out, r, err);
}

static char *tools_json(const struct tg_gate *g, const char *scopes,
			const struct tg_catalog *cat, const char *today, struct tg_error *err);

char *tg_gate_tools_json(struct tg_gate *g, const char *today, struct tg_error *err)
{
	const struct tg_catalog *cat = tg_gate_acquire(g);
	char *text = tools_json(NULL, NULL, cat, today, err);

	tg_gate_release(g, cat);
	return text;
}

char *tg_gate_tools_json_for(struct tg_gate *g, const char *scopes, const char *today,
			     struct tg_error *err)
{
	const struct tg_catalog *cat = tg_gate_acquire(g);
	/* without a policy nothing is checked: every tool is listed */
	char *text = tools_json(g->policy ? g : NULL, scopes, cat, today, err);

	tg_gate_release(g, cat);
	return text;
}

char *tg_gate_tools_json_of(const struct tg_catalog *cat, const char *today,
			    struct tg_error *err)
{
	return tools_json(NULL, NULL, cat, today, err);
}

/* The tools of cat as MCP lists them; with g, only those scopes allow
 * (the authorize stage's own decision, gate_scope_missing): a caller is
 * not shown what it may not call. */
static char *tools_json(const struct tg_gate *g, const char *scopes,
			const struct tg_catalog *cat, const char *today, struct tg_error *err)
{
	json_t *list = json_array();
	const char *prev = NULL;
	char *text = NULL;
	size_t i;

	tg_error_clear(err);
	if (!list)
		goto nomem;
	/* the catalogue is sorted by name: each name once */
	for (i = 0; i < tg_catalog_count(cat); i++) {
		const struct tg_contract *k = tg_catalog_at(cat, i), *best;
		struct tg_error rerr;
		char *def, need[200];
		json_t *d;

		if (prev && strcmp(prev, k->name) == 0)
			continue;
		prev = k->name;
		if (tg_catalog_resolve(cat, k->name, today, &best, &rerr) < 0)
			continue; /* retired */
		if (g && gate_scope_missing(g, best, scopes, need, sizeof(need)))
			continue;
		def = tg_catalog_mcp_tool(best, NULL, err);
		d = def ? json_loads(def, 0, NULL) : NULL;
		free(def);
		if (!d || json_array_append_new(list, d) < 0)
			goto nomem;
	}
	text = json_dumps(list, JSON_COMPACT);
	if (!text)
		goto nomem;
	json_decref(list);
	return text;
nomem:
	json_decref(list);
	tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return NULL;
}

/* ---- rollback (docs/PIPELINE.md, "Rollback") ------------------------------- */

/* Stages 3, 7 and 8 for a call the gate makes itself (a compensation, a
 * plan's step): the caller decided it may run. */
int gate_run_stages(struct tg_gate *g, struct call_state *st, struct tg_error *err)
{
	int rc = stage_validate_traced(g, st);

	if (rc == 0)
		rc = gate_stage_execute(g, st, err);
	if (rc == 0)
		rc = gate_stage_check_redact(g, st);
	return rc;
}


struct tg_store *tg_gate_store(const struct tg_gate *g)
{
	return g->store;
}

/* A step of a plan that would be held for its anomalies, not run: its
 * answer names them, for the plan's preview and its ticket. */
static int step_held(struct call_state *st)
{
	char first[320];
	json_t *f;

	gate_refuse(st, "anomalous", "%s@%s: its arguments are anomalous (%s): as a step of a "
		    "plan, it runs only once a person approved the plan", st->k->name,
		    st->k->version_text, gate_first_finding(st, first, sizeof(first)));
	f = anomaly_findings_json(st->anomalies);
	st->out.structured = json_pack("{s:{s:s,s:s,s:b,s:o?}}", "error", "code",
				       "anomalous_arguments", "message", first, "retryable", 0,
				       "anomalies", f);
	st->out.held = 1;
	return 1;
}

int gate_run(struct tg_gate *g, const struct gate_run_env *run, const struct tg_contract *k,
	     const char *args, struct exec_out *out, struct tg_error *err)
{
	struct call_state st;
	struct tg_error rerr;
	int rc;

	memset(&st, 0, sizeof(st));
	memset(out, 0, sizeof(*out));
	clock_gettime(CLOCK_MONOTONIC, &st.start);
	st.call = run->call;
	st.run = run;
	st.catalog = run->catalog;
	st.k = k;
	st.args = args;
	st.args_len = strlen(args);
	st.dry = run->dry_run;
	st.outcome = "protocol_error";
	if (run->call_id)
		snprintf(st.ticket, sizeof(st.ticket), "%s", run->call_id);
	gate_span_begin(g, &st); /* a plan's step: a sibling of the plan's span */
	/* a step is a call: the stages a direct call takes, but the approval
	 * (its plan's); a compensation is the gate's own undoing, and is
	 * neither limited nor held */
	rc = stage_validate_traced(g, &st);
	if (rc == 0 && !run->undo)
		rc = stage_authorize(g, &st);
	if (rc == 0 && !run->undo)
		rc = stage_limit(g, &st);
	if (rc == 0 && !run->undo)
		rc = stage_anomalies(g, &st, err);
	if (rc == 0 && st.anomalous == TG_ANOMALY_HOLD && !run->approved)
		rc = step_held(&st);
	if (rc == 0)
		rc = gate_stage_execute(g, &st, err);
	if (rc == 0)
		rc = gate_stage_check_redact(g, &st);
	learn(g, &st);
	if (gate_stage_record(g, &st, rc < 0 ? err : NULL, &rerr) < 0 && rc >= 0)
		rc = gate_unrecorded(&st, &rerr, err);
	gate_span_finish(&st, rc < 0 ? err : NULL);
	free(st.canonical);
	free(st.anomalies);
	if (rc < 0) {
		exec_out_release(&st.out);
		return -1;
	}
	*out = st.out;
	return 0;
}
