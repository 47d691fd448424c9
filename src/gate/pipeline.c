/*
 * The pipeline (include/toolgate/gate.h, docs/PIPELINE.md): every tool
 * call, from any transport, through the same stages in the same order.
 *
 * Each stage is a function that takes the call's state and either lets it
 * go on or ends it, with a protocol error (the call itself is wrong) or
 * with a tool result marked as an error (the tool refused or failed).
 * Stages 4 to 6 (authorize, dedupe, approve) come with issue 5; until the
 * approval stage exists a write tool does not run at all (fail closed),
 * whatever its caller says.
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

#include "exec/exec.h"
#include "gate/anomaly_int.h"
#include "gate/gate_int.h"
#include "obs/metrics.h"
#include <sodium.h>

#include "toolgate/audit.h"
#include "toolgate/redact.h"
#include "toolgate/scan.h"
#include "toolgate/trace.h"
#include "toolgate/auth.h"
#include "toolgate/gate.h"
#include "toolgate/sandbox.h"
#include "toolgate/store.h"
#include "toolgate/schema.h"
#include "util/utf8.h"

#define MAX_SCHEMA_ERRORS 8        /* reported to the caller per call */

/* A catalogue the gate serves or served: calls and readers hold it while
 * they use it, so that a reload never frees one in use. */
struct snapshot {
	const struct tg_catalog *catalog;
	struct tg_catalog *owned;     /* freed with the snapshot; NULL: the caller's */
	unsigned refs;                /* the gate's while current, and each user's */
	struct snapshot *next;
};

/* refusals recorded: at most so many a second, in each bucket */
#define REFUSALS_PER_S 20.0
#define REFUSALS_BURST 100.0
/* a bucket for requests without a principal (401s), the others shared by
 * principals hashed: one principal's flood hides neither 401s nor, but
 * for a principal hashed with it, another principal's refusals */
#define REFUSAL_BUCKETS 64
/* what a catalogue refused for its descriptions says (and counts by) */
#define DESCRIPTION_REFUSED "a description speaks to the model, not its user"
/* an unknown tool's name in its record, at most */
#define TOOL_NAME_RECORDED 256

struct refusal_bucket {
	double tokens;          /* of REFUSALS_BURST, REFUSALS_PER_S added a second */
	struct timespec at;     /* when they were counted */
	uint64_t suppressed;    /* not recorded since the last that was */
	int used;
};

struct tg_gate {
	pthread_mutex_t lock;         /* the snapshots */
	struct snapshot *cur;         /* the current one, then retired ones in use */
	struct exec_dirs *dirs;       /* what command tools may be given */
	struct tg_audit *audit;       /* borrowed, or NULL */
	struct tg_tracer *tracer;     /* borrowed, or NULL */
	enum tg_descriptions descriptions;
	struct metrics *metrics;      /* the counters /metrics shows */
	pthread_mutex_t refusals_lock;
	struct refusal_bucket refusals[REFUSAL_BUCKETS];
	struct tg_store *store;       /* write calls' keys and tickets, or NULL */
	int64_t ticket_ttl;
	unsigned warm;                /* sandboxes kept ready per tool */
	pthread_mutex_t pools_lock;
	struct warm_pool *pools;
	unsigned warm_total;          /* sandboxes the pools keep, together */
	/* parameter anomalies (docs/ANOMALIES.md) */
	const struct tg_anomaly_config *anomaly_config; /* borrowed; NULL: the defaults */
	enum tg_anomaly_action anomaly_action;          /* the operator's, over the config's */
	struct anomaly_baselines *baselines;
};

/* A command tool's warm pool, made at its first call that could use one
 * (tool@version; a pool that could not be made stays NULL: cold). */
struct warm_pool {
	char key[300];
	struct tg_sandbox_pool *pool;
	unsigned refs;                /* the gate's list, and calls running in it */
	struct warm_pool *next;
};

#define MAX_WARM 128

static void warm_pool_free(struct warm_pool *w)
{
	if (w) {
		tg_sandbox_pool_free(w->pool);
		free(w);
	}
}

#define IDEM_TTL (24 * 3600)          /* an idempotency key is kept a day */

/* One call on its way through the stages. */
struct call_state {
	const struct tg_call *call;
	const struct tg_catalog *catalog; /* the call's snapshot */
	const struct tg_contract *k;
	const char *args;
	size_t args_len;
	struct exec_out out;
	const char *outcome;       /* for the record: ok, tool_error, ... */
	struct timespec start;
	/* a write call that runs: its key, claimed; its approved ticket */
	int claimed;
	char fingerprint[65];
	char *canonical;           /* the arguments hashed (malloc'd), or NULL */
	char ticket[33];           /* the call's id once approved */
	int dry;                   /* execute as a dry run */
	int resumed;               /* rerun after its gateway died running it */
	int ran;                   /* it reached execution: its record is waited for */
	struct redaction {         /* secrets taken out of its result (stage 8b) */
		uint64_t count;
		const char *rules[8];  /* distinct rules, static names */
		uint64_t per[8];
		size_t nrules;
	} redacted;
	struct tg_span *span;      /* execute_tool, or NULL: not traced */
	/* its arguments' anomalies (stage 4c): what they lead to, and them */
	enum tg_anomaly_action anomalous;  /* TG_ANOMALY_DEFAULT: none found */
	struct anomaly_report *anomalies;  /* malloc'd, or NULL */
	struct {                           /* found nothing: learnt once it ran */
		double size, entropy;
		int has_entropy, due;
	} usual;
	const char *key;           /* the idempotency key: the caller's, or made for a held read */
	char made_key[80];
};

static void flush_refusals(struct tg_gate *g);
static int scan_descriptions(struct tg_gate *g, const struct tg_catalog *catalog,
			     struct tg_error *err);

int tg_gate_new(const struct tg_catalog *catalog, const struct tg_gate_options *opts,
		struct tg_gate **out, struct tg_error *err)
{
	struct exec_dirs *dirs = NULL;
	struct tg_gate *g;

	tg_error_clear(err);
	*out = NULL;
	if (exec_dirs_new(opts ? opts->workspace : NULL, opts ? opts->tools_dir : NULL,
			  opts ? opts->state_dir : NULL, &dirs, err) < 0 ||
	    exec_check_catalog(catalog, dirs, err) < 0) {
		exec_dirs_free(dirs);
		return -1;
	}
	/* what a killed gateway's overlay dry runs left behind */
	exec_overlay_sweep();
	g = calloc(1, sizeof(*g));
	if (g)
		g->cur = calloc(1, sizeof(*g->cur));
	if (!g || !g->cur) {
		free(g);
		exec_dirs_free(dirs);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	g->dirs = dirs;
	g->cur->catalog = catalog;
	g->cur->refs = 1;
	pthread_mutex_init(&g->lock, NULL);
	g->audit = opts ? opts->audit : NULL;
	g->tracer = opts ? opts->tracer : NULL;
	g->descriptions = opts ? opts->descriptions : TG_DESCRIPTIONS_REFUSE;
	g->metrics = metrics_new();
	pthread_mutex_init(&g->refusals_lock, NULL);
	pthread_mutex_init(&g->pools_lock, NULL);
	g->warm = opts ? opts->warm : 0;
	g->anomaly_action = opts ? opts->anomalies : TG_ANOMALY_DEFAULT;
	g->baselines = anomaly_baselines_new();
	if (!g->baselines) {
		tg_gate_free(g);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	if (scan_descriptions(g, catalog, err) < 0) {
		tg_gate_free(g);
		return -1;
	}
	*out = g;
	return 0;
}

/* What the model reads of each tool, scanned (docs/SCANNING.md): each
 * finding recorded and counted; with the refuse policy (the default) a
 * finding refuses the catalogue, naming the first. -1 and err too when a
 * finding could not be recorded: nothing is loaded unrecorded. */
static int scan_descriptions(struct tg_gate *g, const struct tg_catalog *catalog,
			     struct tg_error *err)
{
	const char *outcome = g->descriptions == TG_DESCRIPTIONS_REFUSE ? "description_refused"
									 : "description_warning";
	size_t i, k, n, total = 0;
	char first[700] = "";

	if (g->descriptions == TG_DESCRIPTIONS_OFF)
		return 0;
	for (i = 0; i < tg_catalog_count(catalog); i++) {
		const struct tg_contract *c = tg_catalog_at(catalog, i);
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

static void snapshot_free(struct snapshot *sn)
{
	tg_catalog_free(sn->owned);
	free(sn);
}

void tg_gate_free(struct tg_gate *g)
{
	struct snapshot *sn;

	if (!g)
		return;
	flush_refusals(g);
	/* nothing uses the gate any more: every snapshot goes */
	while ((sn = g->cur)) {
		g->cur = sn->next;
		snapshot_free(sn);
	}
	while (g->pools) {
		struct warm_pool *w = g->pools;

		g->pools = w->next;
		warm_pool_free(w);
	}
	pthread_mutex_destroy(&g->pools_lock);
	pthread_mutex_destroy(&g->refusals_lock);
	anomaly_baselines_free(g->baselines, g->store);
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
static int refuse(struct call_state *st, const char *outcome, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(struct call_state *st, const char *outcome, const char *fmt, ...)
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

/* 2 resolve: name[@version] to a contract, refusing a retired one. */
static int stage_resolve(struct call_state *st, struct tg_error *err)
{
	if (!st->call->tool)
		return tg_error_set(err, TG_ERR_INVALID, "the call names no tool");
	return tg_catalog_resolve(st->catalog, st->call->tool, st->call->today, &st->k, err);
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
		return refuse(st, "invalid_arguments", "arguments larger than %u bytes",
			      TG_MAX_ARGUMENTS);
	rc = tg_schema_validate(st->k->input_schema, st->args, st->args_len, &errors, &verr);
	if (rc < 0)
		return refuse(st, "invalid_arguments", "arguments: %s", verr.msg);
	if (rc == 1)
		return 0;
	o = (size_t)snprintf(text, sizeof(text), "arguments do not match the input schema of %s@%s:",
			     st->k->name, st->k->version_text);
	for (i = 0; i < errors.n && o < sizeof(text); i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "\n%s: %s (%s)",
				      ev[i].instance_location[0] ? ev[i].instance_location : "/",
				      ev[i].message, ev[i].keyword_location);
	return refuse(st, "invalid_arguments", "%s", text);
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
 * TOOL:write for a write tool (docs/AUTH.md). */
static int stage_authorize(struct call_state *st)
{
	int write = st->k->authority == TG_AUTHORITY_WRITE;

	if (!st->call->scopes || tg_scopes_allow_call(st->call->scopes, st->k->name, write))
		return 0;
	return refuse(st, "forbidden", "%s@%s: the caller may not call it (it needs the scope "
		      "%s:%s)", st->k->name, st->k->version_text, st->k->name, write ? "write" : "read");
}

/* 4b limit: the principal's rate for this tool (a token bucket). A
 * limited call is a retryable tool error that says when. */
static int stage_limit(struct call_state *st)
{
	struct timespec now;
	uint64_t retry_ms, now_ms;
	int rc;

	if (!st->call->limiter)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	now_ms = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
	if (tg_limiter_take(st->call->limiter, st->call->principal, st->k->name, now_ms, &retry_ms))
		return 0;
	rc = refuse(st, "rate_limited", "%s@%s: rate limited: %s has called it as often as its "
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
	unsigned rules;
	size_t i;

	action = tg_anomaly_config_tool(g->anomaly_config, st->k->name, &rules);
	if (g->anomaly_action != TG_ANOMALY_DEFAULT)
		action = g->anomaly_action;
	if (action == TG_ANOMALY_OFF)
		return 0;
	st->anomalies = malloc(sizeof(*st->anomalies));
	if (!st->anomalies)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (anomaly_look(st->k, g->anomaly_config, g->baselines, rules, st->args, st->args_len,
			 st->anomalies, &jerr) < 0) {
		free(st->anomalies);
		st->anomalies = NULL;
		return refuse(st, "invalid_arguments", "%s@%s: its arguments cannot be looked at "
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

/* ---- 5-6 dedupe, approve: the write path (docs/PIPELINE.md) ------------------- */

/* SHA-256 of the arguments' canonical form (sorted keys), hex; the form
 * kept for the ticket. Arguments the validator took that jansson cannot
 * hold (an integer past 64 bits, a NUL in a name) are hashed as sent. */
static int args_fingerprint(struct call_state *st)
{
	json_t *a = json_loadb(st->args, st->args_len, JSON_ALLOW_NUL, NULL);
	char *text = a ? json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS)
		       : strndup(st->args, st->args_len);
	unsigned char h[crypto_hash_sha256_BYTES];

	json_decref(a);
	if (!text)
		return -1;
	crypto_hash_sha256(h, (const unsigned char *)text, strlen(text));
	sodium_bin2hex(st->fingerprint, sizeof(st->fingerprint), h, sizeof(h));
	free(st->canonical);
	st->canonical = text;
	return 0;
}

static struct tg_idem_key idem_key(const struct call_state *st)
{
	struct tg_idem_key k = { st->call->principal, st->k->name, st->key, st->fingerprint };

	return k;
}

/* A write call's answer that is not its run: a retryable tool error with
 * a code (awaiting_approval, running, ...), the ticket when there is one. */
static int answer(struct call_state *st, const char *outcome, const char *code, const char *ticket,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));

static int answer(struct call_state *st, const char *outcome, const char *code, const char *ticket,
		  const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	refuse(st, outcome, "%s", text);
	st->out.structured = json_pack("{s:{s:s,s:s,s:b}}", "error", "code", code, "message", text,
				       "retryable", strcmp(code, "rejected") != 0 &&
						    strcmp(code, "expired") != 0 &&
						    strcmp(code, "cancelled") != 0 &&
						    strcmp(code, "key_reused") != 0 &&
						    strcmp(code, "anomalous_arguments") != 0);
	if (st->out.structured && ticket)
		json_object_set_new(json_object_get(st->out.structured, "error"), "ticket",
				    json_string(ticket));
	return 1;
}

/* A result as the key keeps it, to replay byte for byte. */
static char *result_text(const struct exec_out *o)
{
	json_t *j = json_pack("{s:O,s:b}", "content", o->content, "isError", o->is_error);
	char *text;

	if (j && o->structured)
		json_object_set(j, "structured", o->structured);
	/* an overlay dry run's preview: what it would change */
	if (j && o->changes)
		json_object_set(j, "changes", o->changes);
	if (j && o->changes_truncated)
		json_object_set_new(j, "changes_truncated", json_true());
	/* in the order it was made: a replay answers byte for byte */
	text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	json_decref(j);
	return text;
}

static int replay(struct call_state *st, const char *text)
{
	json_t *j = json_loads(text, 0, NULL);

	exec_out_release(&st->out);
	if (!j)
		return -1;
	st->out.content = json_incref(json_object_get(j, "content"));
	st->out.structured = json_incref(json_object_get(j, "structured"));
	st->out.is_error = json_is_true(json_object_get(j, "isError"));
	json_decref(j);
	st->outcome = "replayed";
	return 1;
}

static int ticket_answer(struct tg_gate *g, struct call_state *st, const struct tg_idem_key *kp,
			 const char *marker, const char *id, const struct tg_ticket *tp,
			 struct tg_error *err);

/* 1 if the caller gave up on the call: its cancel fd is readable (after
 * waiting up to ms for it). */
static int cancelled_within(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };

	if (fd < 0) {
		if (ms > 0)
			poll(NULL, 0, ms);
		return 0;
	}
	return poll(&p, 1, ms) == 1 && (p.revents & POLLIN);
}

/* Wait, within the call's budget, for a person to decide ticket id (the
 * decision may come from another process: the store is looked at every
 * 100 ms); OUT *t as it stands at the end. The caller hears progress, if
 * it asked for it, while it waits. */
static int wait_decision(struct tg_gate *g, struct call_state *st, const char *id,
			 unsigned budget, int forever, struct tg_ticket *t, struct tg_error *err);

static int await_decision(struct tg_gate *g, struct call_state *st, const char *id,
			  struct tg_ticket *t, struct tg_error *err)
{
	unsigned budget = st->call->approval_wait_ms;
	int forever = budget == TG_APPROVAL_WAIT_DECIDED, rc;
	struct tg_span *span;

	if (budget > TG_MAX_APPROVAL_WAIT_MS)
		budget = TG_MAX_APPROVAL_WAIT_MS;
	span = tg_span_start(g->tracer, "approval wait", TG_SPAN_INTERNAL, st->span, NULL);
	tg_span_set_str(span, "toolgate.ticket", id);
	rc = wait_decision(g, st, id, budget, forever, t, err);
	tg_span_set_str(span, "toolgate.ticket.state", rc == 0 ? tg_ticket_state_name(t->state)
								: "unknown");
	if (rc < 0)
		tg_span_error(span, "store", err->msg);
	tg_span_end(span);
	return rc;
}

static int wait_decision(struct tg_gate *g, struct call_state *st, const char *id,
			 unsigned budget, int forever, struct tg_ticket *t, struct tg_error *err)
{
	unsigned waited = 0;
	char event[160];

	if (st->call->notify) {
		snprintf(event, sizeof(event), "{\"progress\":{\"progress\":0,\"message\":"
			 "\"awaiting approval: ticket %s\"}}", id);
		st->call->notify(st->call->notify_ctx, event);
	}
	for (;;) {
		if (tg_store_ticket_get(g->store, id, (int64_t)time(NULL), t, err) < 0)
			return -1;
		if (t->state != TG_TICKET_PENDING || (!forever && waited >= budget))
			return 0;
		if (cancelled_within(st->call->cancel_fd, 100)) {
			/* the caller withdrew its request: nobody may approve it now */
			if (!st->call->withdraw || !*st->call->withdraw ||
			    tg_store_ticket_move(g->store, id, TG_TICKET_PENDING,
						 TG_TICKET_CANCELLED, NULL) < 0)
				return 0;
			tg_ticket_release(t);
			return tg_store_ticket_get(g->store, id, (int64_t)time(NULL), t, err);
		}
		tg_ticket_release(t);
		waited += 100;
	}
}

/* 1 if ticket t was made for the very tool@version the call resolved to. */
static int same_tool(const struct call_state *st, const struct tg_ticket *t)
{
	size_t n = strlen(st->k->name);

	return strncmp(t->tool, st->k->name, n) == 0 && t->tool[n] == '@' &&
	       strcmp(t->tool + n + 1, st->k->version_text) == 0;
}

/* The key's result is a ticket (held for approval): what it says now. */
static int ticket_step(struct tg_gate *g, struct call_state *st, const char *marker,
		       const char *id, struct tg_error *err)
{
	struct tg_idem_key key = idem_key(st);
	struct tg_ticket t;
	int rc;

	if (tg_store_ticket_get(g->store, id, (int64_t)time(NULL), &t, err) < 0)
		return -1;
	if (t.state == TG_TICKET_PENDING && st->call->approval_wait_ms) {
		tg_ticket_release(&t);
		if (await_decision(g, st, id, &t, err) < 0)
			return -1;
	}
	rc = ticket_answer(g, st, &key, marker, id, &t, err);
	tg_ticket_release(&t);
	return rc;
}

/* ticket_step's answer for ticket t, in the state it is. */
static int ticket_answer(struct tg_gate *g, struct call_state *st, const struct tg_idem_key *kp,
			 const char *marker, const char *id, const struct tg_ticket *tp,
			 struct tg_error *err)
{
	struct tg_idem_key key = *kp;
	struct tg_ticket t = *tp;
	char *final;
	int rc;

	switch (t.state) {
	case TG_TICKET_PENDING:
		return answer(st, "held", "awaiting_approval", id, "%s@%s awaits approval: ticket %s "
			      "(toolgate approvals show %s); call again with the same idempotency key "
			      "once it is decided", st->k->name, st->k->version_text, id, id);
	case TG_TICKET_APPROVED:
		/* what was approved is exactly this version: a retry that now
		 * resolves to another (a reload, another pin) does not run */
		if (!same_tool(st, &t))
			return answer(st, "refused", "version_changed", id, "ticket %s approved %s; "
				      "this call resolves to %s@%s, which nobody approved: call %s with "
				      "the same key, or make a new call", id, t.tool, st->k->name,
				      st->k->version_text, t.tool);
		/* exactly one retry runs it: the one that takes the key back */
		rc = tg_store_idem_reclaim(g->store, &key, marker, strlen(marker), err);
		if (rc < 0)
			return -1;
		if (rc > 0)
			return answer(st, "refused", "running", id, "%s@%s: the approved call under "
				      "this idempotency key is running; retry when it ends",
				      st->k->name, st->k->version_text);
		st->claimed = 1;
		snprintf(st->ticket, sizeof(st->ticket), "%s", id);
		return 0;
	default:
		/* decided against, or never: final, and kept as the key's answer */
		if (t.state == TG_TICKET_REJECTED)
			answer(st, "rejected", "rejected", id, "%s@%s was rejected by %s: %s",
			       st->k->name, st->k->version_text, t.approver, t.reason ? t.reason : "");
		else if (t.state == TG_TICKET_CANCELLED)
			answer(st, "cancelled", "cancelled", id, "%s@%s: ticket %s was withdrawn "
			       "before anyone decided; the call did not run (a new call needs a new "
			       "idempotency key)", st->k->name, st->k->version_text, id);
		else
			answer(st, "expired", "expired", id, "%s@%s: ticket %s is %s; the call did not "
			       "run (a new call needs a new idempotency key)", st->k->name,
			       st->k->version_text, id, tg_ticket_state_name(t.state));
		final = result_text(&st->out);
		if (final)
			tg_store_idem_replace(g->store, &key, marker, strlen(marker), final,
					      strlen(final), err);
		free(final);
		return 1;
	}
}

static int stage_execute(struct tg_gate *g, struct call_state *st, struct tg_error *err);
static int stage_check(struct call_state *st);
static int stage_check_redact(struct tg_gate *g, struct call_state *st);

/* The dry run of a new write call, as its ticket keeps it: 0 and OUT
 * *text (JSON {content, isError, structured?}, malloc'd); 1 when the dry
 * run says the call would fail (st->out is its answer, and the call ends
 * there); -1 and err. */
static int preview(struct tg_gate *g, struct call_state *st, char **text, struct tg_error *err)
{
	int rc;

	*text = NULL;
	st->dry = 1;
	rc = stage_execute(g, st, err);
	if (rc == 0)
		rc = stage_check_redact(g, st);
	st->dry = 0;
	if (rc != 0)
		return rc;
	if (st->out.is_error) {
		st->outcome = "dry_run_failed";
		return 1;
	}
	*text = result_text(&st->out);
	exec_out_release(&st->out);
	if (!*text)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (strlen(*text) > TG_IDEM_MAX_RESULT) {
		free(*text);
		*text = NULL;
		return refuse(st, "refused", "%s@%s: its dry run printed more than %u bytes: too "
			      "much to show an approver", st->k->name, st->k->version_text,
			      TG_IDEM_MAX_RESULT);
	}
	return 0;
}

/* A call under this key is running: still, or its gateway died running it
 * (kill -9, a power cut). Then this one takes the key over: an approved
 * call of a resumable tool runs again under its call id (the tool replays
 * what it did); one of a tool that is not ends failed, as its effect is
 * unknown; 2 when the dead gateway had not made the ticket yet (the call
 * starts afresh). */
static int takeover(struct tg_gate *g, struct call_state *st, const struct tg_idem_key *key,
		    struct tg_error *err)
{
	char *marker = NULL, *final;
	const char *id;
	struct tg_ticket t;
	json_t *j;
	int rc;

	rc = tg_store_idem_takeover(g->store, key, &marker, err);
	if (rc < 0)
		return -1;
	if (rc == 1)
		return answer(st, "refused", "running", NULL, "%s: a call under idempotency key "
			      "%.64s is running; retry when it ends", st->k->name, st->key);
	j = marker ? json_loads(marker, 0, NULL) : NULL;
	id = json_string_value(json_object_get(j, "ticket"));
	if (!id) {
		json_decref(j);
		free(marker);
		return 2;
	}
	snprintf(st->ticket, sizeof(st->ticket), "%s", id);
	json_decref(j);
	free(marker);
	if (tg_store_ticket_get(g->store, st->ticket, (int64_t)time(NULL), &t, err) < 0)
		return -1;
	tg_ticket_release(&t);
	st->claimed = 1;
	/* a read changes nothing: running it again is safe */
	if (t.state == TG_TICKET_APPROVED && same_tool(st, &t) &&
	    (st->k->resumable || st->k->authority != TG_AUTHORITY_WRITE)) {
		st->resumed = 1;
		return 0;
	}
	/* not resumable: whether it took effect is for a person to find out */
	answer(st, "interrupted", "interrupted", st->ticket, "%s@%s: the gateway stopped while "
	       "the approved call %s ran; whether it took effect is unknown (the tool cannot "
	       "rerun it safely), so it is marked failed: check before calling again with a new "
	       "idempotency key", st->k->name, st->k->version_text, st->ticket);
	final = result_text(&st->out);
	if (!final || tg_store_idem_finish_call(g->store, key, final, strlen(final), st->ticket,
						TG_TICKET_FAILED, err) < 0)
		fprintf(stderr, "toolgate: write %s: interrupted call %s: %s\n", st->k->name,
			st->ticket, final ? err->msg : "out of memory");
	free(final);
	st->claimed = 0;
	return 1;
}

/* 5 dedupe and 6 approve, for a write tool, and a read held for its
 * anomalies: the call runs (0, its key claimed) only once a person
 * approved these exact arguments; before that, and on every retry under
 * the same key, it is answered (1). A write's dry run (a tool that
 * supports one) runs at once: it changes nothing. */
static int hold_read(struct tg_gate *g, struct call_state *st, struct tg_error *err);
static int held(struct tg_gate *g, struct call_state *st, int64_t ttl, struct tg_error *err);

static int stage_write(struct tg_gate *g, struct call_state *st, struct tg_error *err)
{
	if (st->call->dry_run && st->k->authority == TG_AUTHORITY_WRITE) {
		if (st->k->dry_run < 1)
			return answer(st, "refused", "dry_run_unsupported", NULL, "%s@%s cannot show "
				      "what it would do: its contract says dry_run unsupported",
				      st->k->name, st->k->version_text);
		st->dry = 1;
		return 0;
	}
	if (st->k->authority != TG_AUTHORITY_WRITE && st->anomalous != TG_ANOMALY_HOLD)
		return 0; /* a read changes nothing: its dry run is the call */
	if (st->k->authority != TG_AUTHORITY_WRITE)
		return hold_read(g, st, err);
	if (!g->store)
		return refuse(st, "refused",
			      "%s@%s is a write tool: write tools run only through the approval "
			      "gate, which needs a policy and a state directory (serve --policy "
			      "--state)", st->k->name, st->k->version_text);
	if (!st->call->idempotency_key)
		return refuse(st, "refused", "%s@%s is a write tool: it needs an idempotency key "
			      "(_meta[\"dev.toolgate/idempotencyKey\"], or the HTTP Idempotency-Key "
			      "header)", st->k->name, st->k->version_text);
	st->key = st->call->idempotency_key;
	return held(g, st, IDEM_TTL, err);
}

/* A read whose arguments are anomalous, held as a write is: under the
 * caller's idempotency key, or one made of its arguments' hash, so that
 * the same call again finds its ticket. Its result is kept for a retry
 * until an hour after the ticket would have expired, no longer: a read's
 * answer goes stale. */
/* The first of the call's findings, for its answer: "RULE at /AT: WHY". */
static const char *first_finding(const struct call_state *st, char *out, size_t len)
{
	const struct tg_anomaly_finding *f = &st->anomalies->f[0];

	snprintf(out, len, "%s at %s: %s", tg_anomaly_rule_name(f->rule), f->at[0] ? f->at : "/",
		 f->why);
	return out;
}

static int hold_read(struct tg_gate *g, struct call_state *st, struct tg_error *err)
{
	char first[320];

	if (!g->store)
		return answer(st, "anomalous", "anomalous_arguments", NULL, "%s@%s: its arguments "
			      "are anomalous (%s) and such a call is held for a person's review, "
			      "which needs a policy and a state directory (serve --policy --state); "
			      "it did not run", st->k->name, st->k->version_text,
			      first_finding(st, first, sizeof(first)));
	if (st->call->idempotency_key) {
		st->key = st->call->idempotency_key;
		return held(g, st, IDEM_TTL, err);
	}
	if (args_fingerprint(st) < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	snprintf(st->made_key, sizeof(st->made_key), "anomalous:%.32s", st->fingerprint);
	st->key = st->made_key;
	return held(g, st, g->ticket_ttl + 3600, err);
}

/* The call under its key st->key (kept ttl seconds): held for a ticket,
 * or answered as the ticket stands. */
static int held(struct tg_gate *g, struct call_state *st, int64_t ttl, struct tg_error *err)
{
	struct tg_idem_record rec;
	struct tg_idem_key key;
	struct tg_ticket req, t;
	int rc;

	if (!st->fingerprint[0] && args_fingerprint(st) < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	key = idem_key(st);
	if (tg_store_idem_begin(g->store, &key, (int64_t)time(NULL), ttl, &rec, err) < 0)
		return err->code == TG_ERR_INVALID ? refuse(st, "refused", "%s", err->msg) : -1;
	if (rec.state == TG_IDEM_MISMATCH) {
		tg_idem_record_release(&rec);
		return answer(st, "refused", "key_reused", NULL, "idempotency key %.64s was used with "
			      "other arguments of %s: a new call needs a new key", st->key,
			      st->k->name);
	}
	if (rec.state == TG_IDEM_RUNNING) {
		tg_idem_record_release(&rec);
		rc = takeover(g, st, &key, err);
		if (rc != 2)
			return rc;
		/* the dead gateway was still making the ticket: start afresh */
	} else if (rec.state == TG_IDEM_DONE) {
		json_t *j = json_loadb(rec.result, rec.result_len, 0, NULL);
		const char *id = json_string_value(json_object_get(j, "ticket"));

		rc = id ? ticket_step(g, st, rec.result, id, err) : replay(st, rec.result);
		json_decref(j);
		tg_idem_record_release(&rec);
		return rc;
	}
	/* new: an anomalous read's principal may have only so many awaiting
	 * review (its read scope must not fill the approvers' queue) */
	if (st->k->authority != TG_AUTHORITY_WRITE) {
		uint64_t pending, cap = tg_anomaly_config_max_pending(g->anomaly_config);

		if (tg_store_tickets_anomalous(g->store, st->call->principal, (int64_t)time(NULL),
					       &pending, err) < 0) {
			tg_store_idem_abandon(g->store, &key, NULL);
			return -1;
		}
		if (pending >= cap) {
			tg_store_idem_abandon(g->store, &key, NULL);
			char first[320];

			return answer(st, "anomalous", "too_many_pending", NULL, "%s@%s: its "
				      "arguments are anomalous (%s), and %llu anomalous calls of %s "
				      "already await review (at most %llu): it did not run, and was not "
				      "held", st->k->name, st->k->version_text,
				      first_finding(st, first, sizeof(first)),
				      (unsigned long long)pending, st->call->principal,
				      (unsigned long long)cap);
		}
	}
	/* new: the dry run's preview, for the approver and the caller */
	memset(&req, 0, sizeof(req));
	if (st->k->authority == TG_AUTHORITY_WRITE && st->k->dry_run >= 1) {
		rc = preview(g, st, &req.preview, err);
		if (rc != 0) {
			/* it would fail, or could not be shown: no ticket, and the
			 * key is free again */
			tg_store_idem_abandon(g->store, &key, NULL);
			return rc;
		}
	}
	/* a ticket for these exact arguments, the key holding it */
	snprintf(req.principal, sizeof(req.principal), "%s", st->call->principal);
	snprintf(req.tool, sizeof(req.tool), "%s@%s", st->k->name, st->k->version_text);
	memcpy(req.args_sha256, st->fingerprint, sizeof(req.args_sha256));
	req.arguments = st->canonical;
	if (st->anomalies) {
		json_t *f = anomaly_findings_json(st->anomalies);

		req.findings = f ? json_dumps(f, JSON_COMPACT) : NULL;
		json_decref(f);
		if (!req.findings) {
			free(req.preview);
			tg_store_idem_abandon(g->store, &key, NULL);
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		}
	}
	/* a plan's approver approves each of its steps' tools too */
	if (st->k->executor == TG_EXEC_BUILTIN && strcmp(st->k->builtin, "saga") == 0)
		req.covers = saga_covers(st->args, st->args_len);
	else if (st->k->executor == TG_EXEC_BUILTIN && strcmp(st->k->builtin, "saga.undo") == 0)
		req.covers = saga_undo_covers(g, st->args, st->args_len);
	rc = tg_store_idem_hold(g->store, &key, &req, (int64_t)time(NULL), g->ticket_ttl, &t, err);
	free(req.covers);
	free(req.findings);
	if (rc < 0) {
		free(req.preview);
		tg_store_idem_abandon(g->store, &key, NULL);
		return -1;
	}
	tg_ticket_release(&t);
	if (st->call->approval_wait_ms) {
		/* decided within the caller's budget: answered as its retry
		 * would be (run once approved, the rejection, ...) */
		char marker[64];

		snprintf(marker, sizeof(marker), "{\"ticket\":\"%s\"}", t.id);
		rc = ticket_step(g, st, marker, t.id, err);
		if (rc <= 0) {
			free(req.preview);
			return rc;
		}
	} else {
		answer(st, "held", "awaiting_approval", t.id, "%s@%s awaits approval: ticket %s "
		       "(toolgate approvals show %s); call again with the same idempotency key "
		       "once it is decided", st->k->name, st->k->version_text, t.id, t.id);
	}
	if (req.preview && st->out.structured && strcmp(st->outcome, "held") == 0)
		json_object_set_new(json_object_get(st->out.structured, "error"), "preview",
				    json_loads(req.preview, 0, NULL));
	free(req.preview);
	return 1;
}

/* After a claimed write ran: its result is the key's for every retry,
 * its ticket executed or failed. */
static void write_done(struct tg_gate *g, struct call_state *st)
{
	struct tg_idem_key key = idem_key(st);
	struct tg_error err;
	char *final = result_text(&st->out);

	if (!final || tg_store_idem_finish_call(g->store, &key, final, strlen(final), st->ticket,
						st->out.is_error ? TG_TICKET_FAILED
								 : TG_TICKET_EXECUTED, &err) < 0)
		fprintf(stderr, "toolgate: write %s: its result was not kept: %s\n", st->k->name,
			final ? err.msg : "out of memory");
	free(final);
}



/* s appended to the text buf[0, *len) of *cap bytes; -1 out of memory. */
static int append(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t l = strlen(s);
	char *grown;

	if (*len + l + 1 > *cap) {
		*cap = (*len + l + 1) * 2;
		grown = realloc(*buf, *cap);
		if (!grown)
			return -1;
		*buf = grown;
	}
	memcpy(*buf + *len, s, l + 1);
	*len += l;
	return 0;
}

/* An overlay dry run's changes, as a text block after the tool's own
 * content: what the caller (and the approver, in the preview) reads. */
static int overlay_summary(struct call_state *st)
{
	size_t i, n = json_array_size(st->out.changes), len = 0, cap = 0;
	char line[400], size[96], *text = NULL;
	json_t *c, *a, *b;
	int rc;

	snprintf(line, sizeof(line), "toolgate ran this dry run on an overlay: nothing was "
		 "written. It would change %zu path%s%s%s\n", n, n == 1 ? "" : "s",
		 st->out.changes_truncated ? " (and more, not listed)" : "", n ? ":" : ".");
	rc = append(&text, &len, &cap, line);
	json_array_foreach(st->out.changes, i, c) {
		b = json_object_get(c, "before_bytes");
		a = json_object_get(c, "after_bytes");
		size[0] = 0;
		if (b && a)
			snprintf(size, sizeof(size), " (%lld -> %lld bytes)",
				 (long long)json_integer_value(b), (long long)json_integer_value(a));
		else if (a)
			snprintf(size, sizeof(size), " (%lld bytes)", (long long)json_integer_value(a));
		/* the path whole: made safe by the walk (no control character) */
		snprintf(line, sizeof(line), "%s %s ",
			 json_string_value(json_object_get(c, "change")),
			 json_string_value(json_object_get(c, "kind")));
		if (rc == 0)
			rc = append(&text, &len, &cap, line);
		if (rc == 0)
			rc = append(&text, &len, &cap, json_string_value(json_object_get(c, "path")));
		snprintf(line, sizeof(line), "%s\n", size);
		if (rc == 0)
			rc = append(&text, &len, &cap, line);
		if (rc == 0 && json_is_string(json_object_get(c, "diff")))
			rc = append(&text, &len, &cap, json_string_value(json_object_get(c, "diff")));
	}
	if (rc == 0 && json_array_append_new(st->out.content, exec_text(text)) < 0)
		rc = -1;
	free(text);
	return rc;
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

void tg_gate_warm_stats(struct tg_gate *g, struct tg_sandbox_pool_stats *sum)
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

/* 8b redact: secrets in what the tool returned become [REDACTED:<rule>]
 * (docs/REDACTION.md) before anyone sees it: the caller, the
 * idempotency record a retry is answered from, the ticket's preview an
 * approver reads. Text content and every string of the structured
 * result; binary content (an image's, audio's base64 data, a resource's
 * blob) is not text and stays as it is. Counted by rule, for the record
 * and the metrics; never the secret itself. */
static void tally(struct redaction *t, const char *rule)
{
	size_t i;

	for (i = 0; i < t->nrules && strcmp(t->rules[i], rule) != 0; i++) {
	}
	if (i == t->nrules) {
		if (t->nrules == 8)
			i = 7; /* a ninth rule counts with the eighth: the total stays right */
		else
			t->rules[t->nrules++] = rule;
	}
	t->per[i]++;
}

/* s (n bytes) without its secrets, a new string; NULL when it had none. */
static json_t *redact_text(const char *s, size_t n, struct redaction *t)
{
	struct tg_redact_out o;
	struct tg_error err;
	json_t *v = NULL;
	size_t i;

	if (tg_redact(s, n, &o, &err) < 0) {
		/* out of memory: nothing of it shown rather than all of it */
		tg_redact_out_release(&o);
		tally(t, "not_redacted");
		t->count++;
		return json_string("[REDACTED:out_of_memory]");
	}
	if (o.total) {
		for (i = 0; i < o.nfindings; i++)
			tally(t, o.findings[i].rule);
		t->count += o.total;
		v = json_stringn(o.text, o.len);
		if (!v) /* a marker cut a character: not UTF-8 any more */
			v = json_string("[REDACTED:not_utf8]");
	}
	tg_redact_out_release(&o);
	return v;
}

/* Every string of v (v itself, when it is one), in place. */
static void redact_json(json_t *v, struct redaction *t)
{
	const char *key;
	json_t *item, *r;
	size_t i;

	if (json_is_string(v)) {
		r = redact_text(json_string_value(v), json_string_length(v), t);
		if (r)
			json_string_setn(v, json_string_value(r), json_string_length(r));
		json_decref(r);
	} else if (json_is_object(v)) {
		json_object_foreach(v, key, item)
			redact_json(item, t);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, item)
			redact_json(item, t);
	}
}

/* The string at o[key], in place (anything else there is left alone). */
static void redact_member(json_t *o, const char *key, struct redaction *t)
{
	json_t *v = json_object_get(o, key);

	if (json_is_string(v))
		redact_json(v, t);
}

static void stage_redact(struct tg_gate *g, struct call_state *st)
{
	struct redaction *t = &st->redacted;
	uint64_t before = t->count, per[8];
	json_t *item;
	size_t i, k;

	memcpy(per, t->per, sizeof(per));
	json_array_foreach(st->out.content, i, item) {
		const char *type = json_string_value(json_object_get(item, "type"));

		if (type && strcmp(type, "text") == 0)
			redact_member(item, "text", t);
		else if (type && strcmp(type, "resource") == 0)
			redact_member(json_object_get(item, "resource"), "text", t);
	}
	if (st->out.structured)
		redact_json(st->out.structured, t);
	if (t->count == before)
		return;
	for (k = 0; k < t->nrules; k++)
		if (t->per[k] > per[k])
			metrics_count(g->metrics, "redactions", t->rules[k]);
}

/* What a running tool reports (progress, its log lines), without secrets:
 * the log is a tool's output too. */
struct notify_redacting {
	const struct tg_call *call;
};

static void notify_redacted(void *ctx, const char *event)
{
	const struct notify_redacting *n = ctx;
	struct redaction t;
	json_t *e = json_loads(event, 0, NULL);
	char *text;

	memset(&t, 0, sizeof(t));
	if (!e) /* not JSON: not passed on, secrets or not */
		return;
	redact_json(e, &t);
	text = t.count ? json_dumps(e, JSON_COMPACT) : NULL;
	json_decref(e);
	n->call->notify(n->call->notify_ctx, text ? text : event);
	free(text);
}

/* The tool's requests to the client share the notifier's context: passed
 * on as they are, with the caller's. */
static char *ask_through(void *ctx, const char *request, const volatile int *stop)
{
	const struct notify_redacting *n = ctx;

	return n->call->ask(n->call->notify_ctx, request, stop);
}

static int stage_check_redact(struct tg_gate *g, struct call_state *st)
{
	int rc = stage_check(st);

	if (rc >= 0)
		stage_redact(g, st);
	return rc;
}

/* A record's free text (an error, a person's reason, a subject), without
 * secrets: a tool's message may quote what it was given. */
static void redact_record(json_t *fields)
{
	static const char *const keys[] = { "error", "reason", "subject" };
	struct redaction t;
	size_t i;

	memset(&t, 0, sizeof(t));
	for (i = 0; fields && i < sizeof(keys) / sizeof(keys[0]); i++)
		redact_member(fields, keys[i], &t);
}

struct egress_ctx {
	struct tg_gate *g;
	const struct call_state *st;
};

/* A connection the tool's allowlist refused: recorded with the principal
 * and the tool (the proxy's thread). */
static void egress_denied(void *ctx, const char *destination, const char *why)
{
	const struct egress_ctx *e = ctx;
	char subject[400], detail[700];

	snprintf(subject, sizeof(subject), "%s@%s", e->st->k->name, e->st->k->version_text);
	snprintf(detail, sizeof(detail), "%.300s: %.380s", destination, why);
	tg_gate_record_event(e->g, e->st->call->principal, subject, "egress_denied", detail);
}

/* 7 execute. */
static int stage_execute(struct tg_gate *g, struct call_state *st, struct tg_error *err)
{
	struct egress_ctx ectx = { g, st };
	struct notify_redacting nr = { st->call };
	struct exec_env env = { g->dirs, st->call->cancel_fd,
				st->call->notify ? notify_redacted : NULL, &nr,
				st->call->ask ? ask_through : NULL, st->dry,
				st->ticket[0] ? st->ticket : NULL, egress_denied, &ectx,
				gate_sandbox, g };
	int rc;

	/* nothing runs unrecorded: a plan's steps, a compensation and a
	 * dry run come here too */
	if (g->audit && tg_audit_ok(g->audit, err) < 0) {
		err->code = TG_ERR_UNAVAILABLE;
		return -1;
	}
	st->ran = 1;
	if (st->k->executor == TG_EXEC_BUILTIN && (strcmp(st->k->builtin, "saga") == 0 ||
						   strcmp(st->k->builtin, "saga.undo") == 0)) {
		/* a plan of steps, run (or undone) by the gate itself */
		struct gate_run_env run = { st->catalog, st->call, st->dry,
					    st->ticket[0] ? st->ticket : NULL };

		rc = strcmp(st->k->builtin, "saga") == 0
			     ? saga_execute(g, &run, st->args, st->args_len, &st->out, err)
			     : saga_undo(g, &run, st->args, st->args_len, &st->out, err);
	} else if (st->k->executor == TG_EXEC_BUILTIN) {
		json_t *args = json_loadb(st->args, st->args_len, JSON_DECODE_ANY, NULL);

		if (!args)
			return tg_error_set(err, TG_ERR_INVALID, "arguments: not JSON");
		rc = exec_builtin(st->k, args, st->dry, &st->out, err);
		json_decref(args);
	} else {
		struct tg_span *span = tg_span_start(g->tracer, "sandbox", TG_SPAN_INTERNAL, st->span,
						     NULL);

		rc = exec_command(st->k, st->args, st->args_len, &env, &st->out, err);
		tg_span_set_bool(span, "toolgate.dry_run", st->dry);
		if (rc < 0)
			tg_span_error(span, "sandbox_failed", err->msg);
		else if (st->out.sandbox)
			tg_span_error(span, st->out.sandbox, NULL);
		tg_span_end(span);
	}
	if (rc < 0)
		return rc;
	if (st->out.changes && overlay_summary(st) < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	st->outcome = st->out.is_error ? "tool_error" : st->dry ? "dry_run" : "ok";
	if (st->call->input_required && *st->call->input_required)
		st->outcome = "input_required";
	else if (st->out.is_error && cancelled_within(st->call->cancel_fd, 0))
		st->outcome = "cancelled";
	return 0;
}

/* 8 check: a successful result against the output schema. */
static int stage_check(struct call_state *st)
{
	struct tg_schema_error ev[MAX_SCHEMA_ERRORS];
	struct tg_schema_errors errors = { ev, MAX_SCHEMA_ERRORS, 0 };
	struct tg_error verr;
	char *text;
	int rc;

	if (st->out.is_error || !st->k->output_schema)
		return 0;
	if (!st->out.structured)
		return refuse(st, "bad_output", "%s@%s returned no structured result, and its "
			      "contract promises one", st->k->name, st->k->version_text);
	text = json_dumps(st->out.structured, JSON_COMPACT);
	rc = text ? tg_schema_validate(st->k->output_schema, text, strlen(text), &errors, &verr)
		  : -1;
	free(text);
	if (rc == 1)
		return 0;
	return refuse(st, "bad_output", "%s@%s returned a result that does not match its output "
		      "schema%s%s%s%s", st->k->name, st->k->version_text,
		      rc == 0 && errors.n ? ": " : "", rc == 0 && errors.n ? ev[0].instance_location : "",
		      rc == 0 && errors.n ? " " : "", rc == 0 && errors.n ? ev[0].message : "");
}

/* Append one record (fields, released) to a; with wait, until it is
 * written and synced. 0, or -1 and err: the log failed (said on stderr once
 * by the log, and every call is refused from then on), or the record could
 * not be made. Without wait, the record is queued: for what acknowledges
 * nothing done (a refusal), so that a flood of them does not sync each. */
static int record(struct tg_audit *a, json_t *fields, int wait, struct tg_error *err)
{
	char *text;
	int64_t t;
	int rc = 0;

	redact_record(fields);
	text = fields ? json_dumps(fields, JSON_COMPACT) : NULL;
	json_decref(fields);
	if (!a) {
		free(text);
		return 0;
	}
	if (!text)
		return tg_error_set(err, TG_ERR_NOMEM, "a record could not be made (out of memory)");
	t = tg_audit_append(a, text, err);
	if (t < 0)
		rc = -1;
	else if (wait)
		rc = tg_audit_wait(a, t, err);
	if (rc < 0 && err->code != TG_ERR_SYSTEM)
		fprintf(stderr, "toolgate: audit: %s\n", err->msg); /* a malformed record */
	free(text);
	return rc;
}

static json_t *event_fields(const char *principal, const char *subject, const char *outcome,
			    const char *detail)
{
	json_t *o = json_pack("{s:s,s:s?,s:s?,s:s?}", "kind", "event", "principal", principal,
			      "subject", subject, "outcome", outcome);

	if (o && detail)
		json_object_set_new(o, "error", json_string(detail));
	return o;
}

int tg_record_event(struct tg_audit *a, const char *principal, const char *subject,
		    const char *outcome, const char *detail)
{
	struct tg_error err;

	return a ? record(a, event_fields(principal, subject, outcome, detail), 1, &err) : 0;
}

struct tg_tracer *tg_gate_tracer(struct tg_gate *g)
{
	return g->tracer;
}

int gate_audit_ok(struct tg_gate *g, struct tg_error *err)
{
	return g->audit ? tg_audit_ok(g->audit, err) : 0;
}

int tg_gate_record_event(struct tg_gate *g, const char *principal, const char *subject,
			 const char *outcome, const char *detail)
{
	if (strcmp(outcome, "egress_denied") == 0)
		metrics_count(g->metrics, "sandbox_violations", "egress_denied");
	else if (strcmp(outcome, "load_refused") == 0)
		metrics_count(g->metrics, "blocked_loads",
			      detail && strstr(detail, DESCRIPTION_REFUSED) ? "description_injection"
									 : "invalid_contract");
	return tg_record_event(g->audit, principal, subject, outcome, detail);
}

/* Whether a refusal by principal ("" or NULL: none) is recorded: 1 with
 * how many of its bucket were not since the last that was, 0 when over
 * the bucket's rate (it is counted). */
static int refusal_admit(struct tg_gate *g, const char *principal, uint64_t *before)
{
	struct refusal_bucket *b;
	struct timespec now;
	unsigned h = 5381;
	const char *p;
	int keep;

	for (p = principal ? principal : ""; *p; p++)
		h = h * 33 + (unsigned char)*p;
	clock_gettime(CLOCK_MONOTONIC, &now);
	pthread_mutex_lock(&g->refusals_lock);
	b = &g->refusals[principal && *principal ? 1 + h % (REFUSAL_BUCKETS - 1) : 0];
	if (!b->used) {
		b->used = 1;
		b->tokens = REFUSALS_BURST;
	} else {
		b->tokens += ((double)(now.tv_sec - b->at.tv_sec) +
			      (double)(now.tv_nsec - b->at.tv_nsec) / 1e9) * REFUSALS_PER_S;
		if (b->tokens > REFUSALS_BURST)
			b->tokens = REFUSALS_BURST;
	}
	b->at = now;
	keep = b->tokens >= 1.0;
	if (keep) {
		b->tokens -= 1.0;
		*before = b->suppressed;
		b->suppressed = 0;
	} else {
		b->suppressed++;
	}
	pthread_mutex_unlock(&g->refusals_lock);
	return keep;
}

/* At the end: the refusals counted but not recorded, so that none is lost. */
static void flush_refusals(struct tg_gate *g)
{
	struct tg_error err;
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < REFUSAL_BUCKETS; i++)
		total += g->refusals[i].suppressed;
	if (g->audit && total)
		record(g->audit, json_pack("{s:s,s:s,s:s,s:I}", "kind", "event", "principal", "",
					   "outcome", "refusals_suppressed", "suppressed_before",
					   (json_int_t)total), 0, &err);
}

int tg_gate_record_refusal(struct tg_gate *g, const char *principal, const char *subject,
			   const char *outcome, const char *detail)
{
	struct tg_error err;
	uint64_t before = 0;
	json_t *o;

	if (strcmp(outcome, "forbidden") == 0) /* a scope it was not granted */
		metrics_count(g->metrics, "excessive_agency", "out_of_scope");
	if (!g->audit || !refusal_admit(g, principal, &before))
		return 0;
	o = event_fields(principal, subject, outcome, detail);
	if (o && before)
		json_object_set_new(o, "suppressed_before", json_integer((json_int_t)before));
	/* queued, not waited for: a refusal acknowledges nothing done */
	return record(g->audit, o, 0, &err);
}

int tg_record_decision(struct tg_audit *a, const char *who, const struct tg_ticket *t,
		       const char *outcome, const char *reason)
{
	struct tg_error err;
	json_t *o;

	if (!a)
		return 0;
	o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:s}", "kind", "decision", "principal", who,
		      "subject", t->id, "outcome", outcome, "tool", t->tool, "requester",
		      t->principal, "args_sha256", t->args_sha256);
	if (o && reason)
		json_object_set_new(o, "reason", json_string(reason));
	return record(a, o, 1, &err);
}

int tg_gate_record_decision(struct tg_gate *g, const char *who, const struct tg_ticket *t,
			    const char *outcome, const char *reason)
{
	return tg_record_decision(g->audit, who, t, outcome, reason);
}

char *tg_gate_metrics(struct tg_gate *g)
{
	const struct tg_catalog *cat = tg_gate_acquire(g);
	struct tg_sandbox_pool_stats ws;
	struct metrics_gauges gg;
	size_t i;
	char *text;

	memset(&gg, 0, sizeof(gg));
	for (i = 0; i < tg_catalog_count(cat); i++)
		if (tg_catalog_at(cat, i)->authority == TG_AUTHORITY_WRITE)
			gg.write_tools++;
	/* every write call waits for a person, or is refused without a
	 * store: none runs around the gate (stage_write) */
	gg.write_tools_gated = gg.write_tools;
	tg_gate_release(g, cat);
	tg_gate_warm_stats(g, &ws);
	gg.warm_size = ws.size;
	gg.warm_ready = ws.ready;
	gg.warm_refilling = ws.refilling;
	gg.warm_spent = ws.spent;
	gg.warm_runs = ws.warm_runs;
	gg.cold_runs = ws.cold_runs;
	gg.warm_made = ws.made;
	gg.warm_failed = ws.failed;
	if (g->store) {
		uint64_t n[8];
		struct tg_error err;

		/* approved: every ticket a person let through, whatever came of it */
		if (tg_store_ticket_counts(g->store, (int64_t)time(NULL), n, &err) == 0) {
			gg.have_tickets = 1;
			gg.approved = n[TG_TICKET_APPROVED] + n[TG_TICKET_EXECUTED] +
				      n[TG_TICKET_FAILED] + n[TG_TICKET_COMPENSATED];
			gg.rejected = n[TG_TICKET_REJECTED];
			gg.expired = n[TG_TICKET_EXPIRED];
			gg.cancelled = n[TG_TICKET_CANCELLED];
		}
	}
	if (g->audit) {
		struct tg_audit_stats as;
		struct tg_error err;

		tg_audit_get_stats(g->audit, &as);
		gg.audit_records = as.records;
		gg.audit_groups = as.groups;
		gg.audit_ok = tg_audit_ok(g->audit, &err) == 0;
	}
	if (g->tracer) {
		struct tg_tracer_stats ts;

		tg_tracer_get_stats(g->tracer, &ts);
		gg.traced = 1;
		gg.spans_exported = ts.exported;
		gg.spans_dropped = ts.dropped;
		gg.trace_exports = ts.exports;
		gg.trace_export_failures = ts.export_failures;
	}
	text = g->metrics ? metrics_render(g->metrics, &gg) : NULL;
	return text;
}

/* A tool name as a record keeps it: a name the catalogue does not have
 * is the caller's, at most TOOL_NAME_RECORDED bytes of it (cut where a
 * UTF-8 character begins). */
static json_t *tool_name_json(const char *name, int *cut)
{
	size_t n = strlen(name);

	*cut = n > TOOL_NAME_RECORDED;
	if (!*cut)
		return json_string(name);
	return json_stringn(name, utf8_cut(name, n, TOOL_NAME_RECORDED));
}

/* 9 record: the call's record in the audit log (docs/AUDIT.md), written
 * and synced before the caller hears the answer when the call ran; a
 * call refused before it ran is queued (it acknowledges nothing done), and
 * one refused for its rate is recorded as other refusals are, at most 20
 * a second for its principal. Its arguments as their SHA-256 (the hash a
 * ticket shows its approver), never themselves, nor the result: they may
 * carry secrets. */
static int stage_record(struct tg_gate *g, struct call_state *st, const struct tg_error *cerr,
			struct tg_error *err)
{
	const char *who = st->call->principal ? st->call->principal : "";
	struct timespec now;
	uint64_t before = 0;
	json_t *o;
	long long us;
	int cut = 0;

	clock_gettime(CLOCK_MONOTONIC, &now);
	us = (now.tv_sec - st->start.tv_sec) * 1000000LL + (now.tv_nsec - st->start.tv_nsec) / 1000;
	metrics_call(g->metrics, st->k ? st->k->name : NULL, st->outcome, st->out.sandbox,
		     (double)us / 1e6);
	if (!g->audit)
		return 0;
	if (strcmp(st->outcome, "rate_limited") == 0 && !refusal_admit(g, who, &before))
		return 0;
	o = json_pack("{s:s,s:s,s:o,s:s,s:I}", "kind", "call", "principal", who, "tool",
		      st->k ? json_string(st->k->name)
			    : tool_name_json(st->call->tool ? st->call->tool : "", &cut),
		      "outcome", st->outcome, "duration_us", (json_int_t)us);
	if (!o)
		return record(g->audit, NULL, 1, err);
	if (cut)
		json_object_set_new(o, "tool_truncated", json_true());
	if (before)
		json_object_set_new(o, "suppressed_before", json_integer((json_int_t)before));
	if (st->k)
		json_object_set_new(o, "version", json_string(st->k->version_text));
	if (st->ticket[0])
		json_object_set_new(o, "call_id", json_string(st->ticket));
	if (!st->fingerprint[0])
		args_fingerprint(st);
	if (st->fingerprint[0])
		json_object_set_new(o, "args_sha256", json_string(st->fingerprint));
	if (st->out.sandbox)
		json_object_set_new(o, "sandbox", json_string(st->out.sandbox));
	if (st->redacted.count) {
		/* what was taken out of its result, by rule: never the secret */
		json_t *by = json_object();
		size_t k;

		for (k = 0; by && k < st->redacted.nrules; k++)
			json_object_set_new(by, st->redacted.rules[k],
					    json_integer((json_int_t)st->redacted.per[k]));
		json_object_set_new(o, "redacted", by);
	}
	if (st->resumed)
		json_object_set_new(o, "resumed", json_true());
	if (st->anomalies) {
		/* what the rules saw, without secrets: an excerpt may quote one */
		json_t *f = anomaly_findings_json(st->anomalies), *item;
		struct redaction t;
		size_t k;

		memset(&t, 0, sizeof(t));
		json_array_foreach(f, k, item) {
			redact_member(item, "why", &t);
			redact_member(item, "at", &t);
		}
		json_object_set_new(o, "anomalies", f);
		json_object_set_new(o, "anomalies_total",
				    json_integer((json_int_t)st->anomalies->total));
		json_object_set_new(o, "anomaly_action",
				    json_string(tg_anomaly_action_name(st->anomalous)));
	}
	if (st->span) {
		/* the record and the trace find each other */
		char tid[33], sid[17];

		tg_span_ids(st->span, tid, sid);
		json_object_set_new(o, "trace_id", json_string(tid));
		json_object_set_new(o, "span_id", json_string(sid));
	}
	if (cerr && cerr->code != TG_OK)
		json_object_set_new(o, "error", json_string(cerr->msg));
	/* waited for when it ran, or when it changed what the store holds
	 * (a ticket made, a key claimed): nothing acknowledged goes unsynced */
	return record(g->audit, o, st->ran || st->ticket[0] || st->claimed, err);
}

/* The call's execute_tool span (GenAI semantic conventions), begun: a
 * child of the MCP request's span when the call came with one. */
static void span_begin(struct tg_gate *g, struct call_state *st)
{
	st->span = tg_span_start(g->tracer, "execute_tool", TG_SPAN_INTERNAL, NULL,
				 st->call->trace);
	tg_span_set_str(st->span, "gen_ai.operation.name", "execute_tool");
}

/* Outcomes that are no failure of the call: done, shown, held for a
 * person, answered again, or stopped to ask the client. */
static int outcome_ok(const char *o)
{
	return strcmp(o, "ok") == 0 || strcmp(o, "dry_run") == 0 || strcmp(o, "held") == 0 ||
	       strcmp(o, "replayed") == 0 || strcmp(o, "input_required") == 0 ||
	       strcmp(o, "rolled_back") == 0;
}

/* Its end: the tool, the call's id, the outcome; error.type the outcome
 * when it is a failure (tool_error for a tool's own). */
static void span_finish(struct call_state *st, const struct tg_error *err)
{
	char tid[33], sid[17], name[160];
	int cut = 0;

	if (!st->span)
		return;
	tg_span_ids(st->span, tid, sid);
	if (st->k) {
		snprintf(name, sizeof(name), "execute_tool %.120s", st->k->name);
		tg_span_set_name(st->span, name);
		tg_span_set_str(st->span, "gen_ai.tool.name", st->k->name);
		tg_span_set_str(st->span, "toolgate.tool.version", st->k->version_text);
	} else if (st->call->tool) {
		json_t *n = tool_name_json(st->call->tool, &cut);

		tg_span_set_str(st->span, "gen_ai.tool.name", json_string_value(n));
		json_decref(n);
	}
	/* a write's call id (the one a rollback takes), else the span's */
	tg_span_set_str(st->span, "gen_ai.tool.call.id", st->ticket[0] ? st->ticket : sid);
	tg_span_set_str(st->span, "toolgate.principal", st->call->principal);
	tg_span_set_str(st->span, "toolgate.outcome", st->outcome);
	if (st->out.sandbox)
		tg_span_set_str(st->span, "toolgate.sandbox", st->out.sandbox);
	if (!outcome_ok(st->outcome))
		tg_span_error(st->span, st->outcome,
			      err && err->code != TG_OK ? err->msg : NULL);
	tg_span_end(st->span);
	st->span = NULL;
}

/* A call's answer is not given without its record: why it could not be
 * written in rerr. */
static int unrecorded(const struct call_state *st, const struct tg_error *rerr,
		      struct tg_error *err)
{
	return tg_error_set(err, TG_ERR_UNAVAILABLE, "%s, but its record could not be written "
			    "(%s): no answer without a record", st->ran ? "the call ran"
			    : "the call was answered", rerr->msg);
}

/* What the tool produced, as the caller gets it (o released). */
static int call_result(struct exec_out *o, struct tg_call_result *r, struct tg_error *err)
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
	span_begin(g, &st);
	rc = stage_identify(&st, err);
	if (rc == 0)
		rc = stage_resolve(&st, err);
	if (rc == 0)
		rc = stage_validate_traced(g, &st);
	if (rc == 0)
		rc = stage_authorize(&st);
	if (rc == 0)
		rc = stage_limit(&st);
	if (rc == 0)
		rc = stage_anomalies(g, &st, err);
	if (rc == 0)
		rc = stage_write(g, &st, err);
	if (rc == 0)
		rc = stage_execute(g, &st, err);
	if (rc == 0)
		rc = stage_check_redact(g, &st);
	if (st.claimed && rc < 0) {
		/* it could not run (the sandbox did not start, the store
		 * failed): the key's answer says so, rather than "running" for
		 * a day; the caller gets the error */
		refuse(&st, "error", "%s@%s could not run: %s", st.k->name, st.k->version_text,
		       err->msg);
	}
	if (st.claimed)
		write_done(g, &st);
	if (st.usual.due && st.ran) {
		anomaly_learn(g->baselines, st.k->name, st.usual.size, st.usual.entropy,
			      st.usual.has_entropy);
		anomaly_baselines_save(g->baselines, g->store, 10);
	}
	if (stage_record(g, &st, rc < 0 ? err : NULL, &rerr) < 0 && rc >= 0)
		rc = unrecorded(&st, &rerr, err);
	span_finish(&st, rc < 0 ? err : NULL);
	if (rc >= 0 && st.k)
		snprintf(r->tool, sizeof(r->tool), "%s@%s", st.k->name, st.k->version_text);
	st.k = NULL;
	free(st.canonical);
	free(st.anomalies);
	tg_gate_release(g, st.catalog);
	if (rc < 0) {
		exec_out_release(&st.out);
		return -1;
	}
	return call_result(&st.out, r, err);
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
		snapshot_free(sn);
}

int tg_gate_reload(struct tg_gate *g, struct tg_catalog *catalog, struct tg_error *err)
{
	struct snapshot *sn, *old;

	tg_error_clear(err);
	if (exec_check_catalog(catalog, g->dirs, err) < 0 || scan_descriptions(g, catalog, err) < 0)
		return -1;
	sn = calloc(1, sizeof(*sn));
	if (!sn)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	sn->catalog = catalog;
	sn->owned = catalog;
	sn->refs = 1;
	pthread_mutex_lock(&g->lock);
	old = g->cur;
	sn->next = old;
	g->cur = sn;
	/* the old one is retired: its users finish with it, the last frees it */
	if (--old->refs == 0) {
		sn->next = old->next;
		pthread_mutex_unlock(&g->lock);
		snapshot_free(old);
		return 0;
	}
	pthread_mutex_unlock(&g->lock);
	return 0;
}

const struct tg_catalog *tg_gate_catalog(const struct tg_gate *g)
{
	return g->cur->catalog;
}

char *tg_gate_tools_json(struct tg_gate *g, const char *today, struct tg_error *err)
{
	const struct tg_catalog *cat = tg_gate_acquire(g);
	char *text = tg_gate_tools_json_of(cat, today, err);

	tg_gate_release(g, cat);
	return text;
}

char *tg_gate_tools_json_of(const struct tg_catalog *cat, const char *today,
			    struct tg_error *err)
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
		char *def;
		json_t *d;

		if (prev && strcmp(prev, k->name) == 0)
			continue;
		prev = k->name;
		if (tg_catalog_resolve(cat, k->name, today, &best, &rerr) < 0)
			continue; /* retired */
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

void tg_gate_set_store(struct tg_gate *g, struct tg_store *store, int64_t ticket_ttl)
{
	/* the baselines learnt are the old store's; the new one's are added */
	if (g->store && g->store != store)
		anomaly_baselines_save(g->baselines, g->store, 0);
	g->store = store;
	g->ticket_ttl = ticket_ttl > 0 ? ticket_ttl : 3600;
	anomaly_baselines_load(g->baselines, store);
}

void tg_gate_set_anomalies(struct tg_gate *g, const struct tg_anomaly_config *config)
{
	g->anomaly_config = config;
}

/* ---- rollback (docs/PIPELINE.md, "Rollback") ------------------------------- */

/* Stages 3, 7 and 8 for a call the gate makes itself (a compensation, a
 * plan's step): the caller decided it may run. */
static int run_stages(struct tg_gate *g, struct call_state *st, struct tg_error *err)
{
	int rc = stage_validate_traced(g, st);

	if (rc == 0)
		rc = stage_execute(g, st, err);
	if (rc == 0)
		rc = stage_check_redact(g, st);
	return rc;
}

/* The compensation's arguments: mapping (the contract's, JSON) with each
 * "${call_id}" and "${arguments.NAME}" replaced; a copy (NULL and err when
 * an argument named is missing). */
static json_t *map_arguments(const json_t *mapping, const char *call_id, const json_t *args,
			     struct tg_error *err)
{
	const char *s = json_string_value(mapping), *key;
	json_t *out, *item, *v;
	size_t i;

	if (s && strcmp(s, "${call_id}") == 0)
		return json_string(call_id);
	if (s && strncmp(s, "${arguments.", 12) == 0) {
		char name[256];

		snprintf(name, sizeof(name), "%.*s", (int)(strlen(s) - 13), s + 12);
		v = json_object_get(args, name);
		if (!v)
			tg_error_set(err, TG_ERR_INVALID, "compensation.arguments: the call had no "
				     "argument %s", name);
		return v ? json_deep_copy(v) : NULL;
	}
	if (json_is_object(mapping)) {
		out = json_object();
		json_object_foreach((json_t *)mapping, key, item) {
			v = out ? map_arguments(item, call_id, args, err) : NULL;
			if (!v || json_object_set_new(out, key, v) < 0) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	}
	if (json_is_array(mapping)) {
		out = json_array();
		json_array_foreach(mapping, i, item) {
			v = out ? map_arguments(item, call_id, args, err) : NULL;
			if (!v || json_array_append_new(out, v) < 0) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	}
	return json_deep_copy(mapping);
}

int gate_compensation(const struct tg_catalog *cat, const struct tg_contract *k,
		      const char *call_id, const char *call_args, const struct tg_contract **undo,
		      char **args, struct tg_error *err)
{
	json_t *mapping, *given, *mapped;

	*args = NULL;
	if (k->irreversible)
		return tg_error_set(err, TG_ERR_INVALID, "call %s: %s@%s is irreversible (%s): "
				    "nothing undoes it", call_id, k->name, k->version_text,
				    k->irreversible);
	if (!k->compensation_tool)
		return tg_error_set(err, TG_ERR_INVALID, "call %s: %s@%s names no compensation",
				    call_id, k->name, k->version_text);
	if (tg_catalog_resolve(cat, k->compensation_tool, "0000-01-01", undo, err) < 0)
		return tg_error_wrap(err, "call %s: its compensation", call_id);
	mapping = k->compensation_args ? json_loads(k->compensation_args, 0, NULL)
				       : json_pack("{s:s}", "call_id", "${call_id}");
	given = call_args ? json_loads(call_args, 0, NULL) : json_object();
	mapped = mapping && given ? map_arguments(mapping, call_id, given, err) : NULL;
	json_decref(mapping);
	json_decref(given);
	if (!mapped)
		return err->code != TG_OK ? tg_error_wrap(err, "call %s", call_id)
					  : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	*args = json_dumps(mapped, JSON_COMPACT);
	json_decref(mapped);
	return *args ? 0 : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
}

/* The compensation of ticket t's call, resolved; OUT *undo and *args
 * (JSON text, malloc'd). */
static int compensation_of(const struct tg_catalog *cat, const struct tg_ticket *t,
			   const struct tg_contract **undo, char **args, struct tg_error *err)
{
	const struct tg_contract *k;

	*args = NULL;
	if (tg_catalog_resolve(cat, t->tool, "0000-01-01", &k, err) < 0)
		return tg_error_wrap(err, "call %s", t->id);
	return gate_compensation(cat, k, t->id, t->arguments, undo, args, err);
}

/* Run the compensation of call t (validated, not gated: the person who
 * asked for the rollback decided it); its result in r. */
static int run_compensation(struct tg_gate *g, const struct tg_catalog *cat,
			    const struct tg_ticket *t, const char *who, int dry_run,
			    struct tg_call_result *r, struct tg_error *err)
{
	struct tg_call call;
	struct call_state st;
	struct tg_error rerr;
	char *args = NULL;
	int rc;

	memset(&call, 0, sizeof(call));
	memset(&st, 0, sizeof(st));
	clock_gettime(CLOCK_MONOTONIC, &st.start);
	call.principal = who;
	call.cancel_fd = -1;
	st.call = &call;
	st.catalog = cat;
	st.outcome = "protocol_error";
	st.dry = dry_run;
	snprintf(st.ticket, sizeof(st.ticket), "%s", t->id); /* the undo keys on the call's id */
	if (compensation_of(cat, t, &st.k, &args, err) < 0)
		return -1;
	call.tool = st.k->name;
	span_begin(g, &st);
	st.args = args;
	st.args_len = strlen(args);
	rc = dry_run && st.k->dry_run < 1
		     ? refuse(&st, "refused", "%s@%s cannot show what it would do: its contract "
			      "says dry_run unsupported", st.k->name, st.k->version_text)
		     : run_stages(g, &st, err);
	if (rc >= 0 && !dry_run)
		st.outcome = st.out.is_error ? "rollback_failed" : "rolled_back";
	if (stage_record(g, &st, rc < 0 ? err : NULL, &rerr) < 0 && rc >= 0)
		rc = unrecorded(&st, &rerr, err);
	span_finish(&st, rc < 0 ? err : NULL);
	free(st.canonical);
	free(args);
	if (rc < 0) {
		exec_out_release(&st.out);
		return -1;
	}
	snprintf(r->tool, sizeof(r->tool), "%s@%s", st.k->name, st.k->version_text);
	return call_result(&st.out, r, err);
}

int tg_gate_rollback(struct tg_gate *g, const char *call_id, const char *who, int dry_run,
		     struct tg_call_result *r, struct tg_error *err)
{
	const struct tg_catalog *cat;
	struct tg_ticket t;
	struct tg_error lerr;
	int rc;

	tg_error_clear(err);
	memset(r, 0, sizeof(*r));
	if (!g->store)
		return tg_error_set(err, TG_ERR_INVALID, "rollback: no state directory");
	if (g->audit && tg_audit_ok(g->audit, err) < 0) {
		err->code = TG_ERR_UNAVAILABLE;
		return -1;
	}
	if (tg_store_ticket_get(g->store, call_id, (int64_t)time(NULL), &t, err) < 0)
		return -1;
	if (t.state == TG_TICKET_COMPENSATED) {
		tg_ticket_release(&t);
		return 1;
	}
	if (t.state != TG_TICKET_EXECUTED) {
		tg_error_set(err, TG_ERR_INVALID, "call %s is %s: only an executed call can be "
			     "rolled back", call_id, tg_ticket_state_name(t.state));
		tg_ticket_release(&t);
		return -1;
	}
	cat = tg_gate_acquire(g);
	rc = dry_run ? 0 : tg_store_rollback_begin(g->store, call_id, who, (int64_t)time(NULL), err);
	if (rc == 0) {
		rc = run_compensation(g, cat, &t, who, dry_run, r, err);
		/* logged either way: a compensation that could not even start
		 * failed as surely as one that ran and failed */
		if (!dry_run &&
		    tg_store_rollback_end(g->store, call_id, rc == 0 && !r->is_error,
					  rc == 0 ? (r->structured_json ? r->structured_json
									: r->content_json)
						  : err->msg, (int64_t)time(NULL), &lerr) < 0) {
			tg_call_result_release(r);
			if (rc == 0)
				*err = lerr;
			rc = -1;
		}
	}
	tg_gate_release(g, cat);
	tg_ticket_release(&t);
	return rc;
}

int tg_gate_resume_rollbacks(struct tg_gate *g, size_t *resumed, size_t *failed,
			     struct tg_error *err)
{
	struct tg_rollback *list;
	struct tg_call_result r;
	struct tg_error rerr;
	size_t n, i;

	*resumed = *failed = 0;
	if (!g->store)
		return 0;
	if (tg_store_rollback_list(g->store, TG_ROLLBACK_RUNNING, &list, &n, err) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		int rc = tg_gate_rollback(g, list[i].call_id, list[i].requested_by, 0, &r, &rerr);

		/* one that cannot even start (its call is not executed, its
		 * tool is gone) ends as failed, not running for ever */
		if (rc < 0)
			tg_store_rollback_end(g->store, list[i].call_id, 0, rerr.msg,
					      (int64_t)time(NULL), &rerr);
		(*resumed)++;
		if (rc < 0 || (rc == 0 && r.is_error))
			(*failed)++;
		if (rc == 0)
			tg_call_result_release(&r);
		tg_rollback_release(&list[i]);
	}
	free(list);
	return 0;
}

struct tg_store *tg_gate_store(const struct tg_gate *g)
{
	return g->store;
}

int gate_run(struct tg_gate *g, const struct gate_run_env *run, const struct tg_contract *k,
	     const char *args, struct exec_out *out, struct tg_error *err)
{
	struct call_state st;
	int rc;

	memset(&st, 0, sizeof(st));
	memset(out, 0, sizeof(*out));
	clock_gettime(CLOCK_MONOTONIC, &st.start);
	st.call = run->call;
	st.catalog = run->catalog;
	st.k = k;
	st.args = args;
	st.args_len = strlen(args);
	st.dry = run->dry_run;
	st.outcome = "protocol_error";
	if (run->call_id)
		snprintf(st.ticket, sizeof(st.ticket), "%s", run->call_id);
	span_begin(g, &st); /* a plan's step: a sibling of the plan's span */
	rc = run_stages(g, &st, err);
	span_finish(&st, rc < 0 ? err : NULL);
	if (rc < 0) {
		exec_out_release(&st.out);
		return -1;
	}
	*out = st.out;
	return 0;
}
