/*
 * Stage 9, the evidence (docs/AUDIT.md, docs/TRACING.md, docs/METRICS.md):
 * every call's record in the audit log, its span and its metrics, and the
 * events and refusals the gate records besides. A record holds the
 * arguments' hash, never the arguments nor the result.
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

#include <jansson.h>

#include "gate/gate_int.h"
#include "obs/audit.h"
#include "obs/metrics.h"
#include "toolgate/audit.h"
#include "toolgate/egress.h"
#include "toolgate/trace.h"
#include "toolgate/sandbox.h"
#include "util/log.h"
#include "util/sodium.h"
#include "util/utf8.h"


/* Append one record (fields, released) to a; with wait, until it is
 * written and synced. 0, or -1 and err: the log failed (said on stderr once
 * by the log, and every call is refused from then on), or the record could
 * not be made. Without wait, the record is queued: for what acknowledges
 * nothing done (a refusal), so that a flood of them does not sync each. */
static int record(struct tg_audit *a, json_t *fields, int wait, struct tg_error *err)
{
	int rc;

	if (!a) {
		json_decref(fields);
		return 0;
	}
	if (!fields)
		return tg_error_set(err, TG_ERR_NOMEM, "a record could not be made (out of memory)");
	gate_redact_record(fields);
	rc = audit_record_object(a, fields, wait, err);
	json_decref(fields);
	if (rc < 0 && err->code != TG_ERR_SYSTEM)
		tg_log(TG_LOG_ERROR, "audit: %s", err->msg); /* a malformed record */
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

int gate_record_fields(struct tg_gate *g, json_t *fields, int wait, struct tg_error *err)
{
	return record(g->audit, fields, wait, err);
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
	if (strcmp(outcome, "load_refused") == 0)
		metrics_blocked(g->metrics, "catalog",
				detail && strstr(detail, DESCRIPTION_REFUSED) ? "description_injection"
									   : "invalid_contract");
	return tg_record_event(g->audit, principal, subject, outcome, detail);
}

int tg_gate_record_blocked(struct tg_gate *g, const char *kind, const char *reason,
			   const char *subject, const char *detail)
{
	metrics_blocked(g->metrics, kind, reason);
	return tg_record_event(g->audit, "", subject, "load_refused", detail);
}

/* Whether a refusal by principal ("" or NULL: none) is recorded: 1 with
 * how many of its bucket were not since the last that was, 0 when over
 * the bucket's rate (it is counted). egress: the buckets of egress
 * refusals, which use up neither auth, scope nor rate refusals' rate.
 * always: recorded whatever the rate, using up none of it (a run's one
 * summary of the refusals its proxy did not report one by one). */
static int refusal_admit(struct tg_gate *g, const char *principal, int egress, int always,
			 uint64_t *before)
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
	b = egress ? g->egress_refusals : g->refusals;
	b += principal && *principal ? 1 + h % (REFUSAL_BUCKETS - 1) : 0;
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
	keep = always || b->tokens >= 1.0;
	if (keep) {
		if (!always)
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
void gate_flush_refusals(struct tg_gate *g)
{
	struct tg_error err;
	uint64_t total = 0;
	size_t i;

	for (i = 0; i < REFUSAL_BUCKETS; i++)
		total += g->refusals[i].suppressed + g->egress_refusals[i].suppressed;
	if (g->audit && total)
		record(g->audit, json_pack("{s:s,s:s,s:s,s:I}", "kind", "event", "principal", "",
					   "outcome", "refusals_suppressed", "suppressed_before",
					   (json_int_t)total), 0, &err);
}

static int refusal_record(struct tg_gate *g, const char *principal, const char *subject,
			  const char *outcome, const char *detail, int always)
{
	int egress = strcmp(outcome, "egress_denied") == 0; /* by a tool's egress proxy */
	struct tg_error err;
	uint64_t before = 0;
	json_t *o;

	if (strcmp(outcome, "forbidden") == 0) /* a scope it was not granted */
		metrics_count(g->metrics, "excessive_agency", "out_of_scope");
	else if (egress)
		metrics_count(g->metrics, "sandbox_violations", "egress_denied");
	if (!g->audit || !refusal_admit(g, principal, egress, always, &before))
		return 0;
	o = event_fields(principal, subject, outcome, detail);
	if (o && before)
		json_object_set_new(o, "suppressed_before", json_integer((json_int_t)before));
	/* queued, not waited for: a refusal acknowledges nothing done */
	return record(g->audit, o, 0, &err);
}

int tg_gate_record_refusal(struct tg_gate *g, const char *principal, const char *subject,
			   const char *outcome, const char *detail)
{
	return refusal_record(g, principal, subject, outcome, detail, 0);
}

int gate_record_egress_refusal(struct tg_gate *g, const char *principal, const char *subject,
			       const char *destination, const char *why)
{
	char detail[700];

	snprintf(detail, sizeof(detail), "%.300s: %.380s", destination, why);
	return refusal_record(g, principal, subject, "egress_denied", detail,
			      strcmp(destination, TG_EGRESS_SUMMARY) == 0);
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

char *tg_gate_metrics(struct tg_gate *g)
{
	const struct tg_catalog *cat = tg_gate_acquire(g);
	struct tg_sandbox_pool_stats ws;
	struct metrics_pending pending[64];
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
	tg_gate_get_warm_stats(g, &ws);
	gg.warm_size = ws.size;
	gg.warm_ready = ws.ready;
	gg.warm_refilling = ws.refilling;
	gg.warm_spent = ws.spent;
	gg.warm_runs = ws.warm_runs;
	gg.cold_runs = ws.cold_runs;
	gg.warm_made = ws.made;
	gg.warm_failed = ws.failed;
	/* the decisions from the store's events, whoever took them; what is
	 * pending, by the catalogue's names */
	gate_ticket_gauges(g, cat, &gg, pending, sizeof(pending) / sizeof(pending[0]));
	gg.runs_active = gate_runs_active(&g->runs);
	gg.runs_max = g->runs.max;
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
	tg_gate_release(g, cat); /* after: the pending tickets' labels are its names */
	return text;
}

/* Readiness looks and never writes: a probe every few seconds must cost
 * the gateway nothing, and the writes that fail are the calls' own. */
int tg_gate_ready(struct tg_gate *g, char *why, size_t len)
{
	const struct tg_catalog *cat = tg_gate_acquire(g);
	struct tg_error err;
	int ready;

	tg_error_clear(&err);
	ready = cat && (!g->audit || tg_audit_check(g->audit, &err) == 0) &&
		(!g->store || tg_store_check(g->store, &err) == 0);
	if (cat)
		tg_gate_release(g, cat);
	snprintf(why, len, "%s", ready ? "ready" : cat ? err.msg : "no catalogue loaded");
	return ready;
}

/* A tool name as a record keeps it: a name the catalogue does not have
 * is the caller's, at most TOOL_NAME_RECORDED bytes of it (cut where a
 * UTF-8 character begins). */
json_t *gate_tool_name_json(const char *name, int *cut)
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
int gate_stage_record(struct tg_gate *g, struct call_state *st, const struct tg_error *cerr,
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
	if (!g->audit || audit_discards(g->audit))
		return 0;
	if (strcmp(st->outcome, "rate_limited") == 0 && !refusal_admit(g, who, 0, 0, &before))
		return 0;
	o = json_pack("{s:s,s:s,s:o,s:s,s:I}", "kind", "call", "principal", who, "tool",
		      st->k ? json_string(st->k->name)
			    : gate_tool_name_json(st->call->tool ? st->call->tool : "", &cut),
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
	if (st->run && st->run->step) {
		/* a plan's step: which plan (its id once it has one, its
		 * arguments' hash always: a preview runs before its ticket) */
		json_object_set_new(o, "plan_step", json_integer((json_int_t)st->run->step));
		if (st->run->plan)
			json_object_set_new(o, "plan", json_string(st->run->plan));
		if (st->run->plan_sha256)
			json_object_set_new(o, "plan_args_sha256", json_string(st->run->plan_sha256));
		if (st->run->undo)
			json_object_set_new(o, "compensation", json_true());
	}
	if (!st->fingerprint[0])
		gate_args_fingerprint(st);
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
	/* its idempotency key was the gate's, not the client's */
	if (st->key_derived)
		json_object_set_new(o, "key_derived", json_true());
	if (st->anomalies) {
		/* what the rules saw, without secrets: an excerpt may quote one */
		json_t *f = anomaly_findings_json(st->anomalies), *item;
		struct redaction t;
		size_t k;

		memset(&t, 0, sizeof(t));
		json_array_foreach(f, k, item) {
			gate_redact_member(item, "why", &t);
			gate_redact_member(item, "at", &t);
		}
		json_object_set_new(o, "anomalies", f);
		json_object_set_new(o, "anomalies_total",
				    json_integer((json_int_t)st->anomalies->total));
		/* a plan's step whose findings its approver saw runs, held no more */
		json_object_set_new(o, "anomaly_action",
				    json_string(st->run && st->run->approved &&
								st->anomalous == TG_ANOMALY_HOLD
							? "approved"
							: tg_anomaly_action_name(st->anomalous)));
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
void gate_span_begin(struct tg_gate *g, struct call_state *st)
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
void gate_span_finish(struct call_state *st, const struct tg_error *err)
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
		json_t *n = gate_tool_name_json(st->call->tool, &cut);

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
int gate_unrecorded(const struct call_state *st, const struct tg_error *rerr,
		      struct tg_error *err)
{
	return tg_error_set(err, TG_ERR_UNAVAILABLE, "%s, but its record could not be written "
			    "(%s): no answer without a record", st->ran ? "the call ran"
			    : "the call was answered", rerr->msg);
}
