/*
 * The upstreams the gate serves (docs/UPSTREAMS.md, "Serving"): a runner
 * for each declared server (started in the sandbox, or reached over HTTP) (src/exec/upstream_run.c), kept across reloads
 * that leave its declaration as it was, the tools each lists made into
 * contracts for the snapshots (snapshot.c), and stage 7 for those tools:
 * the call forwarded to the server, its answer made the call's output for
 * stages 8 and 9.
 *
 * An upstream's tool reaches here only through every stage before 7, as
 * any contract's: validated against the schema the server listed,
 * authorized, limited, checked for anomalies, held for approval when it
 * writes (the declaration's authority, never the server's hints), and run
 * once per idempotency key.
 *
 * A listing that lacks a tool the declaration names is served all the
 * same (a server may register a tool late), and each such tool logged as
 * a warning, once a listing.
 *
 * Never: forward a dry run to a tool that has no declared way to ask for
 * one (the server would do the write), or show the caller or the log a
 * server's text unredacted.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "exec/upstream_run.h"
#include "gate/gate_int.h"
#include "obs/metrics.h"
#include "obs/shown.h"
#include "toolgate/audit.h"
#include "toolgate/catalog.h"
#include "toolgate/scan.h"
#include "toolgate/upstream.h"
#include "util/log.h"

/* ---- the runners --------------------------------------------------------- */

static void egress_refused(void *ctx, const char *destination, const char *why)
{
	struct gate_upstream *e = ctx;
	char subject[200];

	snprintf(subject, sizeof(subject), "upstream %s", e->u->name);
	gate_record_egress_refusal(e->gate, "", subject, destination, why);
}

static void entry_free(struct tg_gate *g, struct gate_upstream *e)
{
	upstream_run_free(e->run);
	free(e->seen);
	gate_base_put(g, e->base);
	free(e);
}

/* A reference on e given back; the last ends its server. */
void gate_upstream_put(struct tg_gate *g, struct gate_upstream *e)
{
	int last;

	pthread_mutex_lock(&g->lock);
	last = --e->refs == 0;
	pthread_mutex_unlock(&g->lock);
	if (last)
		entry_free(g, e);
}

/* The upstream that serves k (its name, declared as when k was made),
 * with a reference; NULL when none is served so any more. */
static struct gate_upstream *entry_get(struct tg_gate *g, const struct tg_contract *k)
{
	struct gate_upstream *e = NULL;
	size_t i;

	pthread_mutex_lock(&g->lock);
	for (i = 0; i < g->nups && !e; i++)
		if (strcmp(g->ups[i]->u->name, k->upstream) == 0 &&
		    strcmp(g->ups[i]->u->sha256, k->upstream_declaration) == 0) {
			e = g->ups[i];
			e->refs++;
		}
	pthread_mutex_unlock(&g->lock);
	return e;
}

struct gate_upstream *gate_upstream_named(struct tg_gate *g, const char *name, size_t len)
{
	struct gate_upstream *e = NULL;
	size_t i;

	pthread_mutex_lock(&g->lock);
	for (i = 0; i < g->nups && !e; i++)
		if (strlen(g->ups[i]->u->name) == len && memcmp(g->ups[i]->u->name, name, len) == 0) {
			e = g->ups[i];
			e->refs++;
		}
	pthread_mutex_unlock(&g->lock);
	return e;
}

int gate_upstreams_hold(struct tg_gate *g, struct gate_upstream ***v, size_t *n)
{
	size_t i;

	pthread_mutex_lock(&g->lock);
	*n = g->nups;
	*v = calloc(g->nups + 1, sizeof(**v));
	for (i = 0; *v && i < g->nups; i++) {
		(*v)[i] = g->ups[i];
		g->ups[i]->refs++;
	}
	pthread_mutex_unlock(&g->lock);
	return *v ? 0 : -1;
}

void gate_upstreams_lists_changed(void *ctx, unsigned which)
{
	struct tg_gate *g = ctx;

	pthread_mutex_lock(&g->ups_lock);
	g->lists_pending |= which;
	pthread_mutex_unlock(&g->ups_lock);
	/* the gate's thread tells the hook, as for tools */
	gate_upstreams_changed(g);
}

void tg_gate_lists_changed(struct tg_gate *g, int *resources, int *prompts)
{
	unsigned which;

	pthread_mutex_lock(&g->ups_lock);
	which = g->lists_pending;
	g->lists_pending = 0;
	pthread_mutex_unlock(&g->ups_lock);
	*resources = (which & (1u << UPSTREAM_RUN_RESOURCES | 1u << UPSTREAM_RUN_TEMPLATES)) != 0;
	*prompts = (which & 1u << UPSTREAM_RUN_PROMPTS) != 0;
}

static struct gate_upstream *entry_new(struct tg_gate *g, struct gate_base *base,
				       const struct tg_upstream *u, struct tg_error *err)
{
	struct upstream_run_options opts = { 0 };
	struct gate_upstream *e = calloc(1, sizeof(*e));

	if (!e) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		return NULL;
	}
	e->gate = g;
	e->u = u;
	e->refs = 1;
	e->made_ms = gate_now_ms();
	opts.dirs = g->dirs;
	opts.egress_denied = egress_refused;
	opts.egress_ctx = e;
	opts.tools_changed = gate_upstreams_changed;
	opts.lists_changed = gate_upstreams_lists_changed;
	opts.tools_ctx = g;
	if (upstream_run_new(u, &opts, &e->run, err) < 0) {
		free(e);
		return NULL;
	}
	pthread_mutex_lock(&g->lock);
	e->base = base;
	base->refs++;
	pthread_mutex_unlock(&g->lock);
	return e;
}

/* The entry of g->ups that serves u as it is declared now, or NULL. */
static struct gate_upstream *kept(struct tg_gate *g, const struct tg_upstream *u)
{
	size_t i;

	for (i = 0; i < g->nups; i++)
		if (strcmp(g->ups[i]->u->name, u->name) == 0 &&
		    strcmp(g->ups[i]->u->sha256, u->sha256) == 0)
			return g->ups[i];
	return NULL;
}

int gate_upstreams_plan(struct tg_gate *g, struct gate_base *base, struct gate_ups_plan *p,
			struct tg_error *err)
{
	size_t n = tg_catalog_upstream_count(base->catalog), i;
	struct gate_upstream *e;

	memset(p, 0, sizeof(*p));
	p->n = n;
	p->v = calloc(n + 1, sizeof(*p->v));
	p->made = calloc(n + 1, sizeof(*p->made));
	if (!p->v || !p->made) {
		gate_upstreams_abort(g, p);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	/* those made anew first: a refusal leaves everything as it was */
	for (i = 0; i < n; i++) {
		const struct tg_upstream *u = tg_catalog_upstream_at(base->catalog, i);

		if ((e = kept(g, u))) {
			p->v[i] = e;
			continue;
		}
		if (!(p->v[i] = entry_new(g, base, u, err))) {
			gate_upstreams_abort(g, p);
			return -1;
		}
		p->made[i] = 1;
	}
	if (n && gate_rebuilder_start(g, err) < 0) {
		gate_upstreams_abort(g, p);
		return -1;
	}
	return 0;
}

void gate_upstreams_abort(struct tg_gate *g, struct gate_ups_plan *p)
{
	size_t i;

	for (i = 0; p->v && p->made && i < p->n; i++)
		if (p->made[i] && p->v[i])
			entry_free(g, p->v[i]);
	free(p->v);
	free(p->made);
	memset(p, 0, sizeof(*p));
}

void gate_upstreams_commit(struct tg_gate *g, struct gate_ups_plan *p)
{
	struct gate_upstream **old;
	size_t nold, i, j;
	int stays;

	pthread_mutex_lock(&g->lock);
	old = g->ups;
	nold = g->nups;
	g->ups = p->v;
	g->nups = p->n;
	pthread_mutex_unlock(&g->lock);
	/* those no longer declared as they were: ended once no call uses them */
	for (j = 0; j < nold; j++) {
		for (i = 0, stays = 0; i < p->n && !stays; i++)
			stays = p->v[i] == old[j];
		if (!stays)
			gate_upstream_put(g, old[j]);
	}
	free(old);
	free(p->made);
	memset(p, 0, sizeof(*p));
}

void gate_upstreams_release(struct tg_gate *g)
{
	size_t i;

	for (i = 0; i < g->nups; i++)
		gate_upstream_put(g, g->ups[i]);
	free(g->ups);
	g->ups = NULL;
	g->nups = 0;
}

/* ---- their tools --------------------------------------------------------- */

/* What a listing of upstream e leads to, said once: the snapshots made
 * anew for other upstreams' listings, or a reload that kept e, make its
 * tools again but do not say it again (tell 0). */
struct telling {
	struct tg_gate *g;
	const struct gate_upstream *e;
	int tell;
};

/* A tool of the upstream not served, and why (its server's text shown
 * safe): logged and recorded. */
static void withdrawn(const struct telling *t, const char *why)
{
	char shown[600], subject[200];

	if (!t->tell)
		return;
	obs_shown(why, strlen(why), shown, sizeof(shown));
	snprintf(subject, sizeof(subject), "upstream %s", t->e->u->name);
	tg_log(TG_LOG_INFO, "%s: a tool is not served: %s", subject, shown);
	if (tg_record_event(t->g->audit, "", subject, "upstream_tool_withdrawn", shown) < 0)
		tg_log(TG_LOG_ERROR, "%s: its withdrawal could not be recorded", subject);
}

/* 1 if k's description or schemas speak to the model (docs/SCANNING.md):
 * each finding recorded and counted; withdrawn unless the gateway loads
 * such tools anyway (--descriptions). */
static int speaks(const struct telling *t, const struct tg_contract *k)
{
	struct tg_gate *g = t->g;
	struct tg_scan_finding f[16];
	char line[400], why[700];
	size_t n, i;

	if (g->descriptions == TG_DESCRIPTIONS_OFF)
		return 0;
	n = tg_scan_contract(k, f, 16);
	for (i = 0; t->tell && i < n && i < 16; i++) {
		tg_scan_describe(&f[i], line, sizeof(line));
		metrics_count(g->metrics, "description_findings", f[i].rule);
		snprintf(why, sizeof(why), "%s: %s%s", k->name, line,
			 g->descriptions == TG_DESCRIPTIONS_REFUSE ? ": " DESCRIPTION_REFUSED : "");
		if (g->descriptions == TG_DESCRIPTIONS_REFUSE)
			withdrawn(t, why);
		else if (tg_record_event(g->audit, "", k->name, "description_warning", line) < 0)
			tg_log(TG_LOG_ERROR, "%s: a description finding could not be recorded",
			       k->name);
	}
	return n && g->descriptions == TG_DESCRIPTIONS_REFUSE;
}


/* Where a snapshot's tools go: those served, and those held for review. */
struct made {
	struct tg_contract **v;
	size_t n, cap;
	struct gate_held *held;
	size_t nheld, hcap;
};

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	void *nv;

	if (n < *cap)
		return 0;
	nv = realloc(*v, (*cap * 2 + 16) * size);
	if (!nv)
		return -1;
	*v = nv;
	*cap = *cap * 2 + 16;
	return 0;
}

/* Whether this upstream's tools placed so far (m's from and hfrom on:
 * another's are in another namespace), served or held, have k's exposed
 * name or its own. */
static int listed_twice(const struct made *m, size_t from, size_t hfrom,
			const struct tg_contract *k)
{
	size_t i;

	for (i = from; i < m->n; i++)
		if (strcmp(m->v[i]->name, k->name) == 0 ||
		    strcmp(m->v[i]->upstream_tool, k->upstream_tool) == 0)
			return 1;
	for (i = hfrom; i < m->nheld; i++)
		if (strcmp(m->held[i].k->name, k->name) == 0 ||
		    strcmp(m->held[i].k->upstream_tool, k->upstream_tool) == 0)
			return 1;
	return 0;
}

/* Tool k of upstream e's listing (its entry d, len bytes) judged and
 * placed: served, held or dropped; -1 out of memory. */
static int place(const struct telling *t, struct gate_pin_round *r, struct made *m, size_t from,
		 size_t hfrom, const char *d, size_t len, struct tg_contract *k)
{
	struct gate_held h;
	char why[600];
	int rc;

	if (listed_twice(m, from, hfrom, k)) {
		/* a rename onto the name of a tool the server also lists, or
		 * a tool listed twice */
		snprintf(why, sizeof(why), "%s: exposed as %s, the name of a tool this upstream "
			 "lists already (a tool listed twice, or a rename onto another's name)",
			 k->upstream_tool, k->name);
		withdrawn(t, why);
		tg_contract_free(k);
		return 0;
	}
	rc = gate_pins_judge(r, d, len, k, &h);
	if (rc == PIN_HOLD) {
		if (grow((void **)&m->held, &m->hcap, m->nheld, sizeof(*m->held)) < 0) {
			tg_contract_free(h.k);
			return -1;
		}
		m->held[m->nheld++] = h;
		return 0;
	}
	if (rc != PIN_SERVE)
		return rc < 0 ? -1 : 0;
	if (speaks(t, k)) {
		tg_contract_free(k);
		return 0;
	}
	if (grow((void **)&m->v, &m->cap, m->n, sizeof(*m->v)) < 0) {
		tg_contract_free(k);
		return -1;
	}
	m->v[m->n++] = k;
	return 0;
}

/* A declared tool the listing lacks, logged as a warning (ctx: e). */
static void absent_warning(const char *line, void *ctx)
{
	const struct gate_upstream *e = ctx;

	tg_log(TG_LOG_WARNING, "upstream %s: %s", e->u->name, line);
}

/* The tools e declares that list does not name, warned of: a misspelt
 * key of its declaration's tools defeats its hide or its authority
 * silently. Not refused: a server may register a tool late. */
static void absent_said(const struct gate_upstream *e, json_t *list)
{
	const char **names = calloc(json_array_size(list) + 1, sizeof(*names));
	json_t *def;
	size_t i;

	if (!names)
		return; /* a warning, not worth failing the listing for */
	json_array_foreach(list, i, def)
		names[i] = json_string_value(json_object_get(def, "name"));
	tg_upstream_check_listing(e->u, names, json_array_size(list), absent_warning,
				  (void *)e);
	free(names);
}

/* Upstream e's listing made into contracts, its tools placed in m. */
static int tools_of(struct tg_gate *g, struct gate_upstream *e, struct made *m)
{
	struct telling t = { g, e, 0 };
	struct gate_pin_round r;
	struct tg_contract *k;
	struct tg_error err;
	uint64_t listing = 0;
	json_t *list, *def;
	size_t i, from = m->n, hfrom = m->nheld;
	char *text;
	int rc;

	text = upstream_run_tools(e->run, &listing);
	if (!text)
		return listing ? -1 : 0; /* listed, and out of memory; or not listed yet */
	list = json_loads(text, 0, NULL);
	free(text);
	if (!list)
		return -1; /* the runner keeps what it parsed: out of memory */
	t.tell = listing != e->told;
	if (t.tell)
		absent_said(e, list);
	if (gate_pins_begin(g, e, &r) < 0) {
		json_decref(list);
		return -1;
	}
	json_array_foreach(list, i, def) {
		char *d = json_dumps(def, JSON_COMPACT);

		if (!d)
			goto nomem;
		rc = tg_catalog_upstream_tool(e->u, d, strlen(d), &k, &err);
		if (rc == 0)
			rc = place(&t, &r, m, from, hfrom, d, strlen(d), k);
		else if (rc < 0 && err.code != TG_ERR_NOMEM) {
			withdrawn(&t, err.msg);
			rc = 0;
		}
		free(d);
		if (rc < 0)
			goto nomem;
	}
	json_decref(list);
	gate_pins_end(&r);
	e->told = listing;
	return 0;
nomem:
	r.failed = 1;
	gate_pins_end(&r);
	json_decref(list);
	return -1;
}

void gate_held_free(struct gate_held *held, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		tg_contract_free(held[i].k);
	free(held);
}

int gate_upstream_tools(struct tg_gate *g, struct gate_upstream *const *ups, size_t nups,
			struct tg_contract ***tools, size_t *n, struct gate_held **held,
			size_t *nheld)
{
	struct made m = { 0 };
	size_t i, j;

	*tools = NULL;
	*n = 0;
	*held = NULL;
	*nheld = 0;
	for (j = 0; j < nups; j++)
		if (tools_of(g, ups[j], &m) < 0) {
			for (i = 0; i < m.n; i++)
				tg_contract_free(m.v[i]);
			free(m.v);
			gate_held_free(m.held, m.nheld);
			return -1;
		}
	*tools = m.v;
	*n = m.n;
	*held = m.held;
	*nheld = m.nheld;
	return 0;
}

/* ---- 7 execute ----------------------------------------------------------- */

/* The upstream's answer, an MCP tool result, as the call's output. */
static int result_out(struct call_state *st, const char *text)
{
	json_t *r = json_loads(text, 0, NULL), *content, *sc, *b;
	size_t i;
	int ok;

	content = json_object_get(r, "content");
	sc = json_object_get(r, "structuredContent");
	ok = json_is_object(r) && json_is_array(content) && (!sc || json_is_object(sc)) &&
	     (!json_object_get(r, "isError") || json_is_boolean(json_object_get(r, "isError")));
	json_array_foreach(content, i, b)
		ok &= json_is_object(b) && json_is_string(json_object_get(b, "type"));
	if (!ok) {
		json_decref(r);
		gate_refuse(st, "bad_output", "%s: upstream %s answered something that is not an "
			    "MCP tool result", st->k->name, st->k->upstream);
		return 1;
	}
	st->out.content = json_incref(content);
	st->out.structured = json_incref(sc);
	st->out.is_error = json_is_true(json_object_get(r, "isError"));
	json_decref(r);
	return 0;
}

/* The call's arguments, with the declared dry-run argument set when the
 * call is a dry run; malloc'd, or NULL. */
static char *arguments(const struct call_state *st)
{
	json_t *a;
	char *text;

	if (!st->dry)
		return strndup(st->args, st->args_len);
	a = json_loadb(st->args, st->args_len, 0, NULL);
	if (!json_is_object(a) ||
	    json_object_set_new(a, st->k->dry_run_argument, json_true()) < 0) {
		json_decref(a);
		return NULL;
	}
	text = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return text;
}

/* The runner's failure as the call's answer (1): a tool error with a
 * code, the runner's message (the server's text in it already shown safe). */
static int failed(struct call_state *st, const struct tg_error *cerr)
{
	const char *code = "upstream_error", *outcome = "upstream_error";
	int retryable = 0;

	if (st->call->input_required && *st->call->input_required) {
		/* stopped to ask the client first (MRTR), as a command tool
		 * is: the question is the call's answer, not this failure */
		code = outcome = "input_required";
	} else if (gate_cancelled_within(st->call->cancel_fd, 0)) {
		code = outcome = "cancelled";
	} else if (cerr->code == TG_ERR_UNAVAILABLE) {
		code = outcome = "upstream_unavailable";
		retryable = 1;
	} else if (cerr->code == TG_ERR_LIMIT) {
		code = outcome = "upstream_timeout";
		retryable = 1;
	}
	/* a write's retries under its key replay this answer: not retryable */
	retryable &= st->k->authority == TG_AUTHORITY_READ;
	gate_refuse(st, outcome, "%s: %s", st->k->name, cerr->msg);
	st->out.structured = json_pack("{s:{s:s,s:s,s:b}}", "error", "code", code, "message",
				       cerr->msg, "retryable", retryable);
	return 1;
}

/* The server's requests to the caller's client (the relay), passed on as
 * a command tool's are, redacted (gate_ask_through). Once the caller
 * stopped the call to ask its client first (MRTR), whatever the hook
 * answered is not the client's: the server is told nothing ("") and the
 * call ends with the stop. */
static char *ask_client(void *ctx, const char *request, const volatile int *stop)
{
	const struct notify_redacting *n = ctx;
	char *answer = gate_ask_through(ctx, request, stop);

	if (n->call->input_required && *n->call->input_required) {
		free(answer);
		return strdup("");
	}
	return answer;
}

int gate_execute_upstream(struct tg_gate *g, struct call_state *st, struct tg_error *err)
{
	const struct tg_contract *k = st->k;
	struct upstream_run_call_hooks hooks = { 0 };
	struct notify_redacting nr = { st->call };
	struct gate_upstream *e;
	struct tg_error cerr;
	char *args, *result = NULL;
	int rc;

	/* a dry run only where the server was declared to take one */
	if (st->dry && !k->dry_run_argument)
		return gate_refuse(st, "refused", "%s cannot show what it would do: its upstream "
				   "declares no dry_run", k->name);
	e = entry_get(g, k);
	if (!e)
		return gate_refuse(st, "upstream_unavailable", "%s: upstream %s is no longer "
				   "served as it was declared when the call began (a reload changed "
				   "it): call again", k->name, k->upstream);
	args = arguments(st);
	if (!args) {
		gate_upstream_put(g, e);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	st->ran = 1;
	/* its progress to the caller, redacted, as a command tool's */
	hooks.notify = st->call->notify ? gate_notify_redacted : NULL;
	/* its server's requests to the caller's client, those its
	 * declaration's relay allows: redacted, as a command tool's */
	hooks.ask = st->call->ask ? ask_client : NULL;
	hooks.ctx = &nr;
	rc = upstream_run_call_ex(e->run, k->upstream_tool, args,
				  k->call_timeout_ms > 0 && k->call_timeout_ms < 86400000
				  ? (int)k->call_timeout_ms : 0,
				  st->call->cancel_fd, &hooks, &result, &cerr);
	free(args);
	gate_upstream_put(g, e);
	if (rc < 0)
		return failed(st, &cerr);
	rc = result_out(st, result);
	free(result);
	return rc;
}
