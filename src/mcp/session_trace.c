/*
 * The server span of each MCP request and notification (docs/TRACING.md,
 * MCP semantic conventions): started when the dispatch takes a message,
 * ended with its answer, here or (a call answered later) with its job.
 *
 * It only describes: it never changes a request or its answer, and it
 * names a span only after a tool of the catalogue or a method MCP has,
 * never after what a client wrote.
 */
#include <stdio.h>
#include <string.h>

#include "mcp/session_int.h"
#include "toolgate/catalog.h"

/* The server span of the request this thread handles, from handle_one
 * until its answer; a job that answers later takes it (tools_job_new). */
__thread struct tg_span *session_request_span;

static int known_method(const char *m)
{
	static const char *const known[] = {
		"initialize", "ping", "tools/list", "tools/call", "resources/list",
		"resources/templates/list", "resources/read", "resources/subscribe",
		"resources/unsubscribe", "prompts/list", "prompts/get", "completion/complete",
		"logging/setLevel", "tasks/get", "tasks/list", "tasks/result", "tasks/cancel",
		"tasks/update", "subscriptions/listen", "notifications/initialized",
		"notifications/cancelled", "notifications/progress", "notifications/message",
		"notifications/roots/list_changed",
	};
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(m, known[i]) == 0)
			return 1;
	return 0;
}

/* The server span of a request or notification (MCP semantic
 * conventions): "METHOD TOOL" for a tool of the catalogue, else "METHOD";
 * the parent the client sent in _meta's traceparent, if any (one that
 * does not parse begins a new trace, as the W3C says). */
struct tg_span *session_span_start(struct mcp_session *s, const char *method, json_t *id,
				   json_t *params)
{
	struct tg_tracer *tr = tg_gate_tracer(s->mcp->gate);
	json_t *meta = json_object_get(params, "_meta");
	const char *tool = NULL, *version;
	struct tg_trace_ctx parent;
	struct tg_error err;
	struct tg_span *sp;
	char name[200], rid[80];

	if (!tr)
		return NULL;
	tg_trace_parse(json_string_value(json_object_get(meta, "traceparent")),
		       json_string_value(json_object_get(meta, "tracestate")), &parent, &err);
	if (strcmp(method, "tools/call") == 0) {
		const struct tg_catalog *cat = tg_gate_acquire(s->mcp->gate);
		const struct tg_contract *k;

		tool = json_string_value(json_object_get(params, "name"));
		/* a name the catalogue has: spans' names stay few */
		if (tool && tg_catalog_resolve(cat, tool, NULL, &k, &err) == 0)
			snprintf(name, sizeof(name), "%.64s %.120s", method, k->name);
		else
			snprintf(name, sizeof(name), "%.64s", method);
		tg_gate_release(s->mcp->gate, cat);
	} else {
		/* a method MCP has, or _OTHER: a client does not name spans */
		snprintf(name, sizeof(name), "%s", known_method(method) ? method : "_OTHER");
	}
	sp = tg_span_start(tr, name, TG_SPAN_SERVER, NULL, &parent);
	tg_span_set_str(sp, "mcp.method.name", method);
	if (json_is_integer(id)) {
		snprintf(rid, sizeof(rid), "%lld", (long long)json_integer_value(id));
		tg_span_set_str(sp, "jsonrpc.request.id", rid);
	} else if (json_is_string(id)) {
		tg_span_set_str(sp, "jsonrpc.request.id", json_string_value(id));
	}
	version = json_string_value(json_object_get(meta, META_VERSION));
	pthread_mutex_lock(&s->lock);
	tg_span_set_str(sp, "mcp.protocol.version", version ? version
							    : s->version[0] ? s->version : NULL);
	pthread_mutex_unlock(&s->lock);
	tg_span_set_str(sp, "mcp.session.id", s->session_id);
	tg_span_set_str(sp, "network.transport", s->transport);
	if (strcmp(s->transport, "tcp") == 0)
		tg_span_set_str(sp, "network.protocol.name", "http");
	if (tool) {
		tg_span_set_str(sp, "gen_ai.operation.name", "execute_tool");
		tg_span_set_str(sp, "gen_ai.tool.name", tool);
	}
	tg_span_set_str(sp, "toolgate.principal", s->principal);
	return sp;
}

/* End sp with the answer resp (NULL: none was sent): error.type the
 * JSON-RPC code, or tool_error for a tool's failure. */
void session_span_end(struct tg_span *sp, json_t *resp)
{
	json_t *e = json_object_get(resp, "error");

	if (!sp)
		return;
	if (json_is_object(e)) {
		char code[32];

		snprintf(code, sizeof(code), "%lld",
			 (long long)json_integer_value(json_object_get(e, "code")));
		tg_span_set_str(sp, "rpc.response.status_code", code);
		tg_span_error(sp, code, json_string_value(json_object_get(e, "message")));
	} else if (json_is_true(json_object_get(json_object_get(resp, "result"), "isError"))) {
		tg_span_error(sp, "tool_error", NULL);
	}
	tg_span_end(sp);
}
