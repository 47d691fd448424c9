/*
 * Unit tests: the gateway's counters (src/obs/metrics.c). What is counted
 * from a call's record, the text format (help and type before each family,
 * cumulative buckets, escaped label values), and the bound on series: a
 * caller cannot grow them without limit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "obs/metrics.h"
#include "unit.h"

static int has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	const char *p = text;

	while ((p = strstr(p, line))) {
		if ((p == text || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return 1;
		p += n;
	}
	fprintf(stderr, "missing: %s\n", line);
	return 0;
}

static int counted(void)
{
	struct metrics *m = metrics_new();
	struct metrics_gauges g;
	char *text;

	CHECK(m);
	memset(&g, 0, sizeof(g));
	metrics_call(m, "sql.query", "ok", NULL, 0.003);
	metrics_call(m, "sql.query", "ok", NULL, 0.2);
	metrics_call(m, "sql.query", "tool_error", "timeout", 10.5);
	metrics_call(m, NULL, "invalid_arguments", NULL, 0.0001);
	metrics_call(m, "fs.write", "held", NULL, 0.01);
	metrics_call(m, "fs.undo", "rolled_back", NULL, 0.01);
	metrics_call(m, "fs.write", "replayed", NULL, 0.001);
	metrics_call(m, "fs.write", "tool_error", "cancelled", 0.001);
	metrics_call(m, "fs.write", "tool_error", "setup_failed", 0.001);
	metrics_call(m, "fs.write", "forbidden", NULL, 0.001);
	metrics_call(m, "fs.write", "rejected", NULL, 0.001);
	metrics_call(m, "fs.write", "rate_limited", NULL, 0.001);
	metrics_call(m, NULL, "protocol_error", NULL, 0.001);
	metrics_call(m, NULL, "protocol_error", NULL, 0.001);
	metrics_count(m, "sandbox_violations", "egress_denied");
	metrics_blocked(m, "catalog", "invalid_contract");
	metrics_count(m, "nothing_of_ours", "x");
	metrics_blocked(m, "skill", "a \"quoted\\\" reason\nsecond line");
	g.write_tools = 3;
	g.write_tools_gated = 3;
	g.audit_ok = 1;
	g.have_tickets = 1;
	metrics_decision(m, "approved", 5);
	metrics_decision(m, "approved", 4000);
	metrics_decision(m, "expired", 3600);
	metrics_decision(m, "reconsidered", 1); /* not a label of ours */
	{
		static const struct metrics_pending pend[] = { { "sql.execute", 3 }, { "other", 1 } };

		g.pending = pend;
		g.npending = 2;
		g.oldest_pending_s = 42;
	}
	text = metrics_render(m, &g);
	CHECK(text);
	CHECK(has_line(text, "# TYPE toolgate_calls_total counter"));
	CHECK(has_line(text, "toolgate_calls_total{tool=\"sql.query\",outcome=\"ok\"} 2"));
	CHECK(has_line(text, "toolgate_calls_total{tool=\"unknown\",outcome=\"invalid_arguments\"} 1"));
	CHECK(has_line(text, "toolgate_tool_errors_total{tool=\"sql.query\"} 1"));
	CHECK(has_line(text, "toolgate_tool_timeouts_total{tool=\"sql.query\"} 1"));
	CHECK(has_line(text, "toolgate_sandbox_violations_total{kind=\"timeout\"} 1"));
	CHECK(has_line(text, "toolgate_sandbox_violations_total{kind=\"egress_denied\"} 1"));
	CHECK(has_line(text, "toolgate_blocked_loads_total{kind=\"catalog\","
			     "reason=\"invalid_contract\"} 1"));
	CHECK(has_line(text, "toolgate_calls_held_total{tool=\"fs.write\"} 1"));
	CHECK(has_line(text, "toolgate_excessive_agency_total{kind=\"out_of_scope\"} 1"));
	CHECK(has_line(text, "toolgate_excessive_agency_total{kind=\"write_rejected\"} 1"));
	CHECK(has_line(text, "toolgate_excessive_agency_total{kind=\"rate_exceeded\"} 1"));
	CHECK(has_line(text, "toolgate_excessive_agency_total{kind=\"unknown_tool\"} 2"));
	CHECK(has_line(text, "toolgate_rollbacks_total{result=\"succeeded\"} 1"));
	CHECK(has_line(text, "toolgate_idempotent_replays_total{tool=\"fs.write\"} 1"));
	CHECK(has_line(text, "toolgate_approvals_total{outcome=\"approved\"} 2"));
	CHECK(has_line(text, "toolgate_approvals_total{outcome=\"expired\"} 1"));
	CHECK(!strstr(text, "reconsidered"));
	CHECK(has_line(text, "toolgate_ticket_decision_seconds_bucket{outcome=\"approved\","
			     "le=\"10\"} 1"));
	CHECK(has_line(text, "toolgate_ticket_decision_seconds_bucket{outcome=\"approved\","
			     "le=\"3600\"} 1"));
	CHECK(has_line(text, "toolgate_ticket_decision_seconds_bucket{outcome=\"approved\","
			     "le=\"7200\"} 2"));
	CHECK(has_line(text, "toolgate_ticket_decision_seconds_count{outcome=\"approved\"} 2"));
	CHECK(has_line(text, "toolgate_ticket_decision_seconds_count{outcome=\"rejected\"} 0"));
	CHECK(has_line(text, "toolgate_tickets_pending{tool=\"sql.execute\"} 3"));
	CHECK(has_line(text, "toolgate_tickets_pending_oldest_seconds 42"));
	/* buckets are cumulative; +Inf is the count; a name not in the
	 * catalogue has no histogram of its own */
	CHECK(has_line(text, "toolgate_call_duration_seconds_bucket{tool=\"sql.query\",le=\"0.005\"} 1"));
	CHECK(has_line(text, "toolgate_call_duration_seconds_bucket{tool=\"sql.query\",le=\"0.25\"} 2"));
	CHECK(has_line(text, "toolgate_call_duration_seconds_bucket{tool=\"sql.query\",le=\"10\"} 2"));
	CHECK(has_line(text, "toolgate_call_duration_seconds_bucket{tool=\"sql.query\",le=\"+Inf\"} 3"));
	CHECK(has_line(text, "toolgate_call_duration_seconds_count{tool=\"sql.query\"} 3"));
	CHECK(!strstr(text, "duration_seconds_count{tool=\"unknown\""));
	CHECK(has_line(text, "toolgate_write_tools_gated_ratio 1"));
	CHECK(has_line(text, "toolgate_audit_up 1"));
	CHECK(!strstr(text, "nothing_of_ours"));
	CHECK(!strstr(text, "kind=\"cancelled\"") && !strstr(text, "kind=\"setup_failed\""));
	CHECK(has_line(text, "toolgate_blocked_loads_total{kind=\"skill\",reason=\"a \\\"quoted"
			     "\\\\\\\" reason\\nsecond line\"} 1"));
	free(text);
	metrics_free(m);
	return 0;
}

/* Thousands of distinct names cannot make thousands of series. */
static int bounded(void)
{
	struct metrics *m = metrics_new();
	struct metrics_gauges g;
	char name[32], *text, *p;
	int i, lines = 0;

	CHECK(m);
	memset(&g, 0, sizeof(g));
	for (i = 0; i < 5000; i++) {
		snprintf(name, sizeof(name), "tool.%d", i);
		metrics_call(m, name, "ok", NULL, 0.01);
	}
	text = metrics_render(m, &g);
	CHECK(text);
	for (p = text; (p = strstr(p, "toolgate_calls_total{")); p++)
		lines++;
	CHECK(lines < METRICS_SERIES);
	CHECK(strstr(text, "toolgate_calls_total{tool=\"other\",outcome=\"other\"}"));
	free(text);
	metrics_free(m);
	return 0;
}

const struct unit_test metrics_tests[] = {
	{ "metrics/counted", counted },
	{ "metrics/bounded", bounded },
	UNIT_TESTS_END,
};
