/*
 * The gateway's counters, rendered for Prometheus (src/obs/metrics.h,
 * docs/METRICS.md). A few dozen series: a table searched under one lock,
 * which a call takes once, at its record.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "obs/metrics.h"

/* The counter families with labels, in the order they are rendered. */
enum fam {
	F_CALLS,      /* {tool, outcome} */
	F_ERRORS,     /* {tool} */
	F_TIMEOUTS,   /* {tool} */
	F_HELD,       /* {tool} */
	F_BLOCKED,    /* {reason} */
	F_VIOLATIONS, /* {kind} */
	F_ROLLBACKS,  /* {result} */
	F_REPLAYS,    /* {tool} */
	F_RATE,       /* {tool} */
	F_DESCRIPTIONS, /* {rule} */
	F_REDACTIONS, /* {rule} */
	F_AGENCY,     /* {kind} */
	F_ANOMALIES,  /* {rule} */
	F_COLLECTED,  /* {kind} */
	F_DEFINITIONS, /* {upstream, kind} */
	F_APPROVALS,  /* {outcome} */
	F_WEBHOOKS,   /* {webhook, outcome} */
	NFAM
};

static const struct {
	const char *name, *help, *l1, *l2;
} fams[NFAM] = {
	{ "toolgate_calls_total", "Tool calls by tool and outcome.", "tool", "outcome" },
	{ "toolgate_tool_errors_total", "Calls that ended in a tool error (tool_error, bad_output).",
	  "tool", NULL },
	{ "toolgate_tool_timeouts_total", "Calls whose sandbox hit its time limit.", "tool", NULL },
	{ "toolgate_calls_held_total", "Calls held for a person's approval (writes, anomalous reads).",
	  "tool", NULL },
	{ "toolgate_blocked_loads_total",
	  "Loads refused (a catalogue, a skill), by what and by reason.", "kind", "reason" },
	{ "toolgate_sandbox_violations_total",
	  "Runs the sandbox ended, and connections the egress proxy refused, by kind.", "kind", NULL },
	{ "toolgate_rollbacks_total", "Rollbacks of executed write calls by result.", "result",
	  NULL },
	{ "toolgate_idempotent_replays_total", "Write calls answered from their idempotency record.",
	  "tool", NULL },
	{ "toolgate_rate_limited_total", "Calls refused by a rate limit.", "tool", NULL },
	{ "toolgate_description_findings_total",
	  "Findings in what models read of the tools (descriptions, schemas), by rule.", "rule",
	  NULL },
	{ "toolgate_redactions_total",
	  "Tool results that had secrets redacted, by rule (once a result for each rule).", "rule",
	  NULL },
	{ "toolgate_excessive_agency_total",
	  "Attempts by callers to do more than they were granted, by kind.", "kind", NULL },
	{ "toolgate_anomalies_total",
	  "Calls whose arguments a parameter anomaly rule found something in, by rule.", "rule",
	  NULL },
	{ "toolgate_store_collected_total",
	  "Records the store's collection removed, by kind (failed: collections that failed).",
	  "kind", NULL },
	{ "toolgate_upstream_definition_changes_total",
	  "Upstream tools whose definition differs from its pin, by upstream and kind (changed, "
	  "added, removed).", "upstream", "kind" },
	{ "toolgate_approvals_total",
	  "Tickets decided since this gateway started, by outcome (approved, rejected, expired, "
	  "cancelled), whichever process decided them (read from the store's ticket events).",
	  "outcome", NULL },
	{ "toolgate_webhook_deliveries_total",
	  "Attempts to deliver a ticket's event to a webhook of the policy, by webhook and outcome "
	  "(delivered, failed, refused by the egress rules).", "webhook", "outcome" },
};

/* seconds from a ticket's making to a person's decision */
static const double decision_bounds[] = { 10, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400,
					  43200, 86400, 259200, 604800 };
#define ND (sizeof(decision_bounds) / sizeof(decision_bounds[0]))
static const char *const decision_outcomes[] = { "approved", "rejected" };

/* seconds */
static const double bounds[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
				 1, 2.5, 5, 10, 30, 60 };
#define NB (sizeof(bounds) / sizeof(bounds[0]))

struct series {
	int fam;
	char *l1, *l2;
	unsigned long long n;
};

struct hist {
	char *tool;
	unsigned long long b[NB], count;
	double sum;
};

struct metrics {
	pthread_mutex_t lock;
	struct series s[METRICS_SERIES];
	size_t ns;
	struct hist h[METRICS_SERIES / 8];
	size_t nh;
	struct {
		unsigned long long b[ND], count;
		double sum;
	} decided[2];                 /* by decision_outcomes */
};

struct metrics *metrics_new(void)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (m)
		pthread_mutex_init(&m->lock, NULL);
	return m;
}

void metrics_free(struct metrics *m)
{
	size_t i;

	if (!m)
		return;
	for (i = 0; i < m->ns; i++) {
		free(m->s[i].l1);
		free(m->s[i].l2);
	}
	for (i = 0; i < m->nh; i++)
		free(m->h[i].tool);
	pthread_mutex_destroy(&m->lock);
	free(m);
}

static int same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* n more of fam{l1, l2} (a series of 0 shows), under the lock; past the
 * bound, l1 "other". */
static void bump_n(struct metrics *m, int fam, const char *l1, const char *l2,
		   unsigned long long n)
{
	size_t i;

	for (i = 0; i < m->ns; i++)
		if (m->s[i].fam == fam && same(m->s[i].l1, l1) && same(m->s[i].l2, l2)) {
			m->s[i].n += n;
			return;
		}
	if (m->ns >= METRICS_SERIES - NFAM * 4 && strcmp(l1, "other") != 0) {
		bump_n(m, fam, "other", l2 ? "other" : NULL, n);
		return;
	}
	if (m->ns == METRICS_SERIES)
		return;
	m->s[m->ns].fam = fam;
	m->s[m->ns].l1 = strdup(l1);
	m->s[m->ns].l2 = l2 ? strdup(l2) : NULL;
	if (!m->s[m->ns].l1 || (l2 && !m->s[m->ns].l2)) {
		free(m->s[m->ns].l1);
		free(m->s[m->ns].l2);
		return;
	}
	m->s[m->ns++].n = n;
}

static void bump(struct metrics *m, int fam, const char *l1, const char *l2)
{
	bump_n(m, fam, l1, l2, 1);
}

static void observe(struct metrics *m, const char *tool, double seconds)
{
	struct hist *h = NULL;
	size_t i;

	for (i = 0; i < m->nh && !h; i++)
		if (strcmp(m->h[i].tool, tool) == 0)
			h = &m->h[i];
	if (!h && m->nh < sizeof(m->h) / sizeof(m->h[0]) && (m->h[m->nh].tool = strdup(tool)))
		h = &m->h[m->nh++];
	if (!h)
		return;
	for (i = 0; i < NB; i++)
		h->b[i] += seconds <= bounds[i];
	h->count++;
	h->sum += seconds;
}

void metrics_call(struct metrics *m, const char *tool, const char *outcome, const char *sandbox,
		  double seconds)
{
	const char *t = tool ? tool : "unknown";

	if (!m)
		return;
	pthread_mutex_lock(&m->lock);
	bump(m, F_CALLS, t, outcome);
	if (strcmp(outcome, "tool_error") == 0 || strcmp(outcome, "bad_output") == 0)
		bump(m, F_ERRORS, t, NULL);
	if (sandbox && strcmp(sandbox, "timeout") == 0)
		bump(m, F_TIMEOUTS, t, NULL);
	/* what the sandbox stopped; not a cancel, nor a run it could not start */
	if (sandbox && strcmp(sandbox, "cancelled") != 0 && strcmp(sandbox, "setup_failed") != 0)
		bump(m, F_VIOLATIONS, sandbox, NULL);
	if (strcmp(outcome, "held") == 0)
		bump(m, F_HELD, t, NULL);
	if (strcmp(outcome, "replayed") == 0)
		bump(m, F_REPLAYS, t, NULL);
	if (strcmp(outcome, "rate_limited") == 0) {
		bump(m, F_RATE, t, NULL);
		bump(m, F_AGENCY, "rate_exceeded", NULL);
	}
	/* excessive agency: a caller reaching past what it was granted */
	if (strcmp(outcome, "forbidden") == 0)
		bump(m, F_AGENCY, "out_of_scope", NULL);
	else if (strcmp(outcome, "rejected") == 0)
		bump(m, F_AGENCY, "write_rejected", NULL);
	else if (!tool && strcmp(outcome, "protocol_error") == 0)
		bump(m, F_AGENCY, "unknown_tool", NULL);
	if (strcmp(outcome, "rolled_back") == 0)
		bump(m, F_ROLLBACKS, "succeeded", NULL);
	if (strcmp(outcome, "rollback_failed") == 0)
		bump(m, F_ROLLBACKS, "failed", NULL);
	if (tool)
		observe(m, tool, seconds);
	pthread_mutex_unlock(&m->lock);
}

void metrics_add(struct metrics *m, const char *family, const char *label, unsigned long long n)
{
	int fam = strcmp(family, "sandbox_violations") == 0     ? F_VIOLATIONS
		  : strcmp(family, "description_findings") == 0   ? F_DESCRIPTIONS
		  : strcmp(family, "redactions") == 0             ? F_REDACTIONS
		  : strcmp(family, "excessive_agency") == 0       ? F_AGENCY
		  : strcmp(family, "anomalies") == 0              ? F_ANOMALIES
		  : strcmp(family, "collected") == 0              ? F_COLLECTED
								  : -1;

	if (!m || fam < 0 || !label)
		return;
	pthread_mutex_lock(&m->lock);
	bump_n(m, fam, label, NULL, n);
	pthread_mutex_unlock(&m->lock);
}

void metrics_count(struct metrics *m, const char *family, const char *label)
{
	metrics_add(m, family, label, 1);
}

void metrics_blocked(struct metrics *m, const char *kind, const char *reason)
{
	if (!m || !kind || !reason)
		return;
	pthread_mutex_lock(&m->lock);
	bump(m, F_BLOCKED, kind, reason);
	pthread_mutex_unlock(&m->lock);
}

void metrics_decision(struct metrics *m, const char *outcome, double seconds)
{
	static const char *const outcomes[] = { "approved", "rejected", "expired", "cancelled" };
	size_t i, k;

	if (!m || !outcome)
		return;
	for (i = 0; i < 4 && strcmp(outcome, outcomes[i]) != 0; i++)
		;
	if (i == 4)
		return; /* bounded: no other label */
	pthread_mutex_lock(&m->lock);
	bump_n(m, F_APPROVALS, outcomes[i], NULL, 1);
	if (i < 2) {
		seconds = seconds > 0 ? seconds : 0;
		for (k = 0; k < ND; k++)
			m->decided[i].b[k] += seconds <= decision_bounds[k];
		m->decided[i].count++;
		m->decided[i].sum += seconds;
	}
	pthread_mutex_unlock(&m->lock);
}

void metrics_definition_change(struct metrics *m, const char *upstream, const char *kind)
{
	if (!m || !upstream || !kind)
		return;
	pthread_mutex_lock(&m->lock);
	bump_n(m, F_DEFINITIONS, upstream, kind, 1);
	pthread_mutex_unlock(&m->lock);
}

void metrics_webhook(struct metrics *m, const char *webhook, const char *outcome)
{
	if (!m || !webhook || !outcome)
		return;
	pthread_mutex_lock(&m->lock);
	bump_n(m, F_WEBHOOKS, webhook, outcome, 1);
	pthread_mutex_unlock(&m->lock);
}

/* ---- the text format ------------------------------------------------- */

struct out {
	char *p;
	size_t len, cap;
	int nomem;
};

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = o->nomem ? -1 : vsnprintf(o->p + o->len, o->cap - o->len, fmt, ap);
		va_end(ap);
		if (n < 0) {
			o->nomem = 1;
			return;
		}
		if ((size_t)n < o->cap - o->len) {
			o->len += (size_t)n;
			return;
		}
		{
			size_t ncap = o->cap * 2 + (size_t)n;
			char *np = realloc(o->p, ncap);

			if (!np) {
				o->nomem = 1;
				return;
			}
			o->p = np;
			o->cap = ncap;
		}
	}
}

/* A label value escaped as the format wants (\, " and newline). */
static void put_label(struct out *o, const char *name, const char *v)
{
	char buf[512];
	size_t n = 0;
	const char *c;

	for (c = v; *c && n < sizeof(buf) - 3; c++) {
		if (*c == '\\' || *c == '"' || *c == '\n')
			buf[n++] = '\\';
		buf[n++] = *c == '\n' ? 'n' : *c;
	}
	buf[n] = '\0';
	put(o, "%s=\"%s\"", name, buf);
}

static void gauge(struct out *o, const char *name, const char *help, double v)
{
	put(o, "# HELP %s %s\n# TYPE %s gauge\n%s %.17g\n", name, help, name, name, v);
}

static void counter(struct out *o, const char *name, const char *help, unsigned long long v)
{
	put(o, "# HELP %s %s\n# TYPE %s counter\n%s %llu\n", name, help, name, name, v);
}

/* toolgate_ticket_decision_seconds (the caller holds m's lock). */
static void render_decisions(struct out *o, struct metrics *m)
{
	size_t i, k;

	put(o, "# HELP toolgate_ticket_decision_seconds How long tickets waited for a person's "
	       "decision, by outcome (approved, rejected).\n"
	       "# TYPE toolgate_ticket_decision_seconds histogram\n");
	for (i = 0; i < 2; i++) {
		const char *l = decision_outcomes[i];

		for (k = 0; k < ND; k++)
			put(o, "toolgate_ticket_decision_seconds_bucket{outcome=\"%s\",le=\"%g\"} "
			       "%llu\n", l, decision_bounds[k], m->decided[i].b[k]);
		put(o, "toolgate_ticket_decision_seconds_bucket{outcome=\"%s\",le=\"+Inf\"} %llu\n"
		       "toolgate_ticket_decision_seconds_sum{outcome=\"%s\"} %.9g\n"
		       "toolgate_ticket_decision_seconds_count{outcome=\"%s\"} %llu\n", l,
		    m->decided[i].count, l, m->decided[i].sum, l, m->decided[i].count);
	}
}

/* toolgate_tickets_pending{tool} and the oldest one's age. */
static void render_pending(struct out *o, const struct metrics_gauges *g)
{
	size_t i;

	put(o, "# HELP toolgate_tickets_pending Tickets awaiting a person's decision, by tool.\n"
	       "# TYPE toolgate_tickets_pending gauge\n");
	for (i = 0; i < g->npending; i++) {
		put(o, "toolgate_tickets_pending{");
		put_label(o, "tool", g->pending[i].tool);
		put(o, "} %llu\n", g->pending[i].n);
	}
	gauge(o, "toolgate_tickets_pending_oldest_seconds", "How long the oldest ticket still "
	      "awaiting a decision has waited (0: none waits).", g->oldest_pending_s);
}

char *metrics_render(struct metrics *m, const struct metrics_gauges *g)
{
	struct out o = { malloc(8192), 0, 8192, 0 };
	size_t f, i, k;

	if (!o.p)
		return NULL;
	o.p[0] = '\0';
	pthread_mutex_lock(&m->lock);
	for (f = 0; f < NFAM; f++) {
		put(&o, "# HELP %s %s\n# TYPE %s counter\n", fams[f].name, fams[f].help,
		    fams[f].name);
		for (i = 0; i < m->ns; i++) {
			if (m->s[i].fam != (int)f)
				continue;
			put(&o, "%s{", fams[f].name);
			put_label(&o, fams[f].l1, m->s[i].l1);
			if (fams[f].l2) {
				put(&o, ",");
				put_label(&o, fams[f].l2, m->s[i].l2);
			}
			put(&o, "} %llu\n", m->s[i].n);
		}
	}
	put(&o, "# HELP toolgate_call_duration_seconds How long calls took, from arrival to "
		"their record, by tool.\n# TYPE toolgate_call_duration_seconds histogram\n");
	for (i = 0; i < m->nh; i++) {
		for (k = 0; k < NB; k++) {
			put(&o, "toolgate_call_duration_seconds_bucket{");
			put_label(&o, "tool", m->h[i].tool);
			put(&o, ",le=\"%g\"} %llu\n", bounds[k], m->h[i].b[k]);
		}
		put(&o, "toolgate_call_duration_seconds_bucket{");
		put_label(&o, "tool", m->h[i].tool);
		put(&o, ",le=\"+Inf\"} %llu\ntoolgate_call_duration_seconds_sum{", m->h[i].count);
		put_label(&o, "tool", m->h[i].tool);
		put(&o, "} %.9g\ntoolgate_call_duration_seconds_count{", m->h[i].sum);
		put_label(&o, "tool", m->h[i].tool);
		put(&o, "} %llu\n", m->h[i].count);
	}
	if (g->have_tickets)
		render_decisions(&o, m);
	pthread_mutex_unlock(&m->lock);
	if (g->have_tickets)
		render_pending(&o, g);
	gauge(&o, "toolgate_write_tools", "Write tools in the catalogue.", g->write_tools);
	gauge(&o, "toolgate_write_tools_gated",
	      "Write tools whose calls go through the approval gate.", g->write_tools_gated);
	gauge(&o, "toolgate_write_tools_gated_ratio",
	      "Share of write tools behind approval (1 when there is none).",
	      g->write_tools ? (double)g->write_tools_gated / g->write_tools : 1.0);
	put(&o, "# HELP toolgate_warm_sandboxes Warm sandboxes by state (serve --warm).\n"
		"# TYPE toolgate_warm_sandboxes gauge\n"
		"toolgate_warm_sandboxes{state=\"ready\"} %u\n"
		"toolgate_warm_sandboxes{state=\"being_made\"} %u\n"
		"toolgate_warm_sandboxes{state=\"spent\"} %u\n",
	    g->warm_ready, g->warm_refilling, g->warm_spent);
	gauge(&o, "toolgate_warm_sandboxes_wanted", "Warm sandboxes the pools keep ready, together.",
	      g->warm_size);
	put(&o, "# HELP toolgate_warm_pool_runs_total Runs of tools that have a warm pool, by "
		"whether a ready sandbox served them.\n"
		"# TYPE toolgate_warm_pool_runs_total counter\n"
		"toolgate_warm_pool_runs_total{start=\"warm\"} %llu\n"
		"toolgate_warm_pool_runs_total{start=\"cold\"} %llu\n",
	    g->warm_runs, g->cold_runs);
	counter(&o, "toolgate_warm_sandboxes_made_total", "Warm sandboxes made ready.", g->warm_made);
	counter(&o, "toolgate_warm_sandboxes_failed_total", "Warm sandboxes that could not be made.",
		g->warm_failed);
	counter(&o, "toolgate_audit_records_total", "Records this process wrote to the audit log.",
		g->audit_records);
	counter(&o, "toolgate_audit_groups_total",
		"Writes (each with its sync) that took the records.", g->audit_groups);
	gauge(&o, "toolgate_audit_up", "1 while the audit log writes; 0 once it failed (calls "
	      "are refused).", g->audit_ok);
	gauge(&o, "toolgate_sandboxes_running", "Command tools running now, from every transport.",
	      g->runs_active);
	gauge(&o, "toolgate_sandboxes_max", "Command tools that may run at once (a quarter of "
	      "them one principal's, unless configured).", g->runs_max);
	if (g->traced) {
		put(&o, "# HELP toolgate_trace_spans_total Spans ended, by whether the collector "
			"took them or they were dropped (queue full, export refused).\n"
			"# TYPE toolgate_trace_spans_total counter\n"
			"toolgate_trace_spans_total{result=\"exported\"} %llu\n"
			"toolgate_trace_spans_total{result=\"dropped\"} %llu\n",
		    g->spans_exported, g->spans_dropped);
		counter(&o, "toolgate_trace_exports_total", "OTLP export requests made.",
			g->trace_exports);
		counter(&o, "toolgate_trace_export_failures_total",
			"OTLP export requests the collector refused or did not answer.",
			g->trace_export_failures);
	}
	if (o.nomem) {
		free(o.p);
		return NULL;
	}
	return o.p;
}
