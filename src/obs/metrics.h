/*
 * The gateway's counters for Prometheus (docs/METRICS.md): what the record
 * stage sees, counted as it records it, and rendered in the text
 * exposition format. Labels come from bounded sets only: a tool of the
 * catalogue (a name the catalogue does not have counts as "unknown"), an
 * outcome, a reason; never a principal or an argument. At most
 * METRICS_SERIES series in all, histograms for an eighth as many tools:
 * beyond, "other".
 */
#ifndef TG_OBS_METRICS_H
#define TG_OBS_METRICS_H

#include <stddef.h>

#define METRICS_SERIES 2048

struct metrics;

struct metrics *metrics_new(void);
void metrics_free(struct metrics *m);

/* A call ended: its tool (NULL: not in the catalogue), outcome, the
 * reason the sandbox ended it (NULL: it did not), how long it took. */
void metrics_call(struct metrics *m, const char *tool, const char *outcome, const char *sandbox,
		  double seconds);
/* One more of family{label}: "sandbox_violations" (the kind). */
void metrics_count(struct metrics *m, const char *family, const char *label);
/* One more toolgate_blocked_loads_total{kind,reason}: kind "catalog" or
 * "skill", reason why it was refused. */
void metrics_blocked(struct metrics *m, const char *kind, const char *reason);
/* n more of family{label}; also "collected" (what the store's collection
 * removed, by kind). */
void metrics_add(struct metrics *m, const char *family, const char *label, unsigned long long n);

/* One more toolgate_upstream_definition_changes_total{upstream,kind}:
 * upstream a declared name, kind "changed", "added" or "removed". */
void metrics_definition_change(struct metrics *m, const char *upstream, const char *kind);

/* One more toolgate_webhook_deliveries_total{webhook,outcome}: webhook a
 * name of the policy's (at most TG_WEBHOOKS_MAX), outcome "delivered",
 * "failed" or "refused". */
void metrics_webhook(struct metrics *m, const char *webhook, const char *outcome);

/* A ticket was decided (docs/METRICS.md, "Tickets"): outcome approved,
 * rejected, expired or cancelled (any other is not counted), seconds
 * after it was made. One more toolgate_approvals_total{outcome}; a
 * person's decision (approved, rejected) is also observed in
 * toolgate_ticket_decision_seconds{outcome}. */
void metrics_decision(struct metrics *m, const char *outcome, double seconds);

/* The tickets pending for one tool, when rendered. */
struct metrics_pending {
	const char *tool;                       /* a catalogue's name, or "other" */
	unsigned long long n;
};

/* Gauges read when rendered. */
struct metrics_gauges {
	unsigned write_tools, write_tools_gated;
	unsigned warm_size, warm_ready, warm_refilling, warm_spent;
	unsigned long long warm_runs, cold_runs, warm_made, warm_failed;
	unsigned long long audit_records, audit_groups;
	int audit_ok;
	unsigned runs_active, runs_max;         /* command tools running, and at most */
	int traced;                             /* a tracer: the next counts */
	unsigned long long spans_exported, spans_dropped, trace_exports, trace_export_failures;
	int have_tickets;                       /* a store: the next counts */
	const struct metrics_pending *pending;  /* by tool, npending of them */
	size_t npending;
	double oldest_pending_s;                /* the oldest pending ticket's age, 0: none */
};
/* The exposition text (malloc'd), or NULL out of memory. */
char *metrics_render(struct metrics *m, const struct metrics_gauges *g);

#endif
