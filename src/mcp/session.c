/*
 * One MCP session (docs/MCP.md): the lifecycle (initialize, the
 * initialized notification, ping), version negotiation, logging/setLevel,
 * cancellation, and the dispatch of each message to the file that answers
 * it (session_int.h lists them). Transport-independent: a transport hands
 * over each message and gives a function that writes the session's
 * messages.
 *
 * It owns the session's state and its lock; it never runs a tool, asks
 * the client or touches a task itself: those are session_tools.c's,
 * session_ask.c's and session_tasks.c's. A request of the 2026-07-28 era
 * goes to session_modern.c before any session state is read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mcp/session_int.h"
#include "util/json_span.h"
#include "util/json_wide.h"

/* Newest first; a client asking for another gets the newest. */
const char *const session_versions[SESSION_NVERSIONS] = { TG_MCP_LATEST, "2025-06-18",
							  "2025-03-26" };

const char *const session_log_levels[SESSION_NLOG_LEVELS] = {
	"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"
};

/* ---- sending ------------------------------------------------------------- */

static void send_text(struct mcp_session *s, char *text)
{
	if (!text)
		return; /* out of memory: the client sees a missing answer */
	pthread_mutex_lock(&s->lock);
	s->send(s->send_ctx, text, strlen(text));
	pthread_mutex_unlock(&s->lock);
	free(text);
}

void session_send_json(struct mcp_session *s, json_t *msg)
{
	char *text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;

	json_decref(msg);
	send_text(s, text);
}

/* ---- lifecycle ----------------------------------------------------------- */

int mcp_version_known(const char *v)
{
	size_t i;

	for (i = 0; i < SESSION_NVERSIONS; i++)
		if (strcmp(v, session_versions[i]) == 0)
			return 1;
	return 0;
}

/* What the server offers: tools, resources, prompts and completions,
 * whatever the catalogue holds now (a reload may bring some), and
 * notifications when a reload changes a list or a resource. The session
 * era also has logging/setLevel; the modern era sets the log level per
 * request. */
json_t *session_capabilities(int session_era, const char *version)
{
	json_t *caps = json_pack("{s:{s:b},s:{s:b,s:b},s:{s:b},s:{}}", "tools", "listChanged", 1,
				 "resources", "subscribe", 1, "listChanged", 1, "prompts",
				 "listChanged", 1, "completions");

	if (caps && session_era)
		json_object_set_new(caps, "logging", json_object());
	/* tasks: the 2025-11-25 revision's, or the 2026-07-28 extension */
	if (caps && session_era && strcmp(version, TASKS_VERSION) == 0)
		json_object_set_new(caps, "tasks",
				    json_pack("{s:{},s:{},s:{s:{s:{}}}}", "list", "cancel",
					      "requests", "tools", "call"));
	else if (caps && !session_era)
		json_object_set_new(caps, "extensions", json_pack("{s:{}}", EXT_TASKS));
	return caps;
}

static json_t *do_initialize(struct mcp_session *s, json_t *id, json_t *params)
{
	const char *asked = json_string_value(json_object_get(params, "protocolVersion"));
	const char *chosen = session_versions[0];
	json_t *result;
	size_t i;

	if (!asked)
		return rpc_error_json(id, RPC_INVALID_PARAMS,
				      "initialize: \"protocolVersion\" (a string) is required");
	pthread_mutex_lock(&s->lock);
	if (s->state != SESSION_NEW) {
		pthread_mutex_unlock(&s->lock);
		return rpc_error_json(id, RPC_INVALID_REQUEST, "the session is already initialized");
	}
	if (mcp_version_known(asked))
		chosen = asked;
	snprintf(s->version, sizeof(s->version), "%s", chosen);
	/* only what is read later is kept: which of the capabilities a tool
	 * may use the client declared (the rest, as large as a client likes,
	 * is not held for the session's life) */
	s->client_capabilities = json_object();
	{
		static const char *const kept[] = { "sampling", "elicitation", "roots" };
		json_t *caps = json_object_get(params, "capabilities");

		for (i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
			if (json_object_get(caps, kept[i]))
				json_object_set_new(s->client_capabilities, kept[i], json_object());
	}
	s->state = SESSION_INITIALIZING;
	pthread_mutex_unlock(&s->lock);
	result = json_pack("{s:s,s:o,s:{s:s,s:s,s:s}}", "protocolVersion", chosen, "capabilities",
			   session_capabilities(1, chosen), "serverInfo", "name", "toolgate", "title",
			   "toolgate", "version", TOOLGATE_VERSION);
	if (result && s->mcp->instructions)
		json_object_set_new(result, "instructions", json_string(s->mcp->instructions));
	return result ? rpc_result_json(id, result) : NULL;
}

static json_t *do_set_level(struct mcp_session *s, json_t *id, json_t *params)
{
	const char *level = json_string_value(json_object_get(params, "level"));
	size_t i;

	for (i = 0; level && i < SESSION_NLOG_LEVELS; i++)
		if (strcmp(level, session_log_levels[i]) == 0) {
			pthread_mutex_lock(&s->lock);
			s->log_level = (int)i;
			pthread_mutex_unlock(&s->lock);
			return rpc_result_json(id, json_object());
		}
	return rpc_error_json(id, RPC_INVALID_PARAMS,
			      "logging/setLevel: \"level\" must be one of debug, info, notice, "
			      "warning, error, critical, alert, emergency");
}

/* What an older revision does not know is left out of what it gets. */
static int older_than_2025_06(const struct mcp_session *s)
{
	return strcmp(s->version, "2025-06-18") < 0;
}

/* Wait on c (with m held) for a change, or 100 ms: the loops that also
 * look at flags no broadcast announces. */
void session_wait_a_while(pthread_cond_t *c, pthread_mutex_t *m)
{
	struct timespec at;

	clock_gettime(CLOCK_REALTIME, &at);
	at.tv_nsec += 100 * 1000000L;
	if (at.tv_nsec >= 1000000000L) {
		at.tv_sec++;
		at.tv_nsec -= 1000000000L;
	}
	pthread_cond_timedwait(c, m, &at);
}

static void do_cancelled(struct mcp_session *s, json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");
	struct inflight *f;

	if (rid && listen_end(s, rid))
		return;
	pthread_mutex_lock(&s->lock);
	for (f = s->inflight; rid && f; f = f->next)
		if (json_equal(f->id, rid) && !f->cancelled) {
			f->cancelled = 1;
			/* the gate's sandbox watches the read end */
			if (write(f->cancel[1], "x", 1) < 0)
				break;
		}
	pthread_mutex_unlock(&s->lock);
}

/* ---- dispatch -------------------------------------------------------------- */

/* One message (already parsed): the response to send, or NULL (a
 * notification, a response, a deferred call). */
static json_t *handle_message(struct mcp_session *s, json_t *msg, const struct mcp_text *raw,
			      int mode, const struct mcp_sink *sink, const char *scopes);

/* One message, in a server span when traced: a request's span ends with
 * its answer, here or (a call answered later) with its job. */
static json_t *handle_one(struct mcp_session *s, json_t *msg, const struct mcp_text *raw,
			  int mode, const struct mcp_sink *sink, const char *scopes)
{
	const char *why, *method = json_string_value(json_object_get(msg, "method"));
	json_t *id, *resp;
	enum rpc_kind kind = rpc_classify(msg, &id, &why);
	struct tg_span *outer = session_request_span;

	if ((kind != RPC_REQUEST && kind != RPC_NOTIFICATION) || !method ||
	    !tg_gate_tracer(s->mcp->gate))
		return handle_message(s, msg, raw, mode, sink, scopes);
	session_request_span = session_span_start(s, method, kind == RPC_REQUEST ? id : NULL,
						  json_object_get(msg, "params"));
	resp = handle_message(s, msg, raw, mode, sink, scopes);
	if (session_request_span)
		session_span_end(session_request_span, resp);
	session_request_span = outer;
	return resp;
}

static json_t *handle_message(struct mcp_session *s, json_t *msg, const struct mcp_text *raw,
			      int mode, const struct mcp_sink *sink, const char *scopes)
{
	json_t *id, *params, *meta;
	const char *why, *method;
	enum rpc_kind kind = rpc_classify(msg, &id, &why);
	int state;

	if (kind == RPC_INVALID)
		return rpc_error_json(id, RPC_INVALID_REQUEST, why);
	if (kind == RPC_RESPONSE) {
		deliver_answer(s, msg); /* an answer nobody waits for any more is dropped */
		return NULL;
	}
	method = json_string_value(json_object_get(msg, "method"));
	params = json_object_get(msg, "params");
	meta = json_object_get(params, "_meta");
	/* a request that says its version in _meta is of the modern era */
	if (kind == RPC_REQUEST && json_object_get(meta, META_VERSION))
		return modern_handle(s, id, method, params, meta, raw, mode, sink, scopes);
	pthread_mutex_lock(&s->lock);
	state = s->state;
	pthread_mutex_unlock(&s->lock);
	if (kind == RPC_NOTIFICATION) {
		if (strcmp(method, "notifications/initialized") == 0) {
			pthread_mutex_lock(&s->lock);
			if (s->state == SESSION_INITIALIZING)
				s->state = SESSION_READY;
			pthread_mutex_unlock(&s->lock);
		} else if (strcmp(method, "notifications/cancelled") == 0) {
			do_cancelled(s, params);
		}
		return NULL; /* unknown notifications are ignored, as JSON-RPC says */
	}
	if (strcmp(method, "initialize") == 0)
		return do_initialize(s, id, params);
	if (strcmp(method, "ping") == 0)
		return rpc_result_json(id, json_object());
	if (state == SESSION_NEW)
		return rpc_error_json(id, RPC_INVALID_REQUEST,
				      "the session is not initialized: send initialize first");
	if (strcmp(method, "tools/list") == 0)
		return tools_list(s, id, params, older_than_2025_06(s), scopes);
	if (strcmp(method, "tools/call") == 0) {
		struct call_opts legacy = { 0, older_than_2025_06(s), -1, scopes, NULL, 0, 0,
					    TASK_NEVER, 0, NULL, { { 0 }, { 0 }, 0, "", 0, 0 },
					    NULL, 0 };

		session_exact_arguments(raw, &legacy);
		return tools_call(s, id, params, mode, sink, &legacy);
	}
	if (strcmp(method, "logging/setLevel") == 0)
		return do_set_level(s, id, params);
	if (strncmp(method, "tasks/", 6) == 0 && strcmp(s->version, TASKS_VERSION) == 0)
		return task_methods_legacy(s, id, method, params, mode);
	if (strncmp(method, "resources/", 10) == 0 &&
	    (strcmp(method + 10, "list") == 0 || strcmp(method + 10, "templates/list") == 0 ||
	     strcmp(method + 10, "read") == 0 || strcmp(method + 10, "subscribe") == 0 ||
	     strcmp(method + 10, "unsubscribe") == 0))
		return catalog_resources(s, method, id, params, scopes);
	if (strcmp(method, "prompts/list") == 0 || strcmp(method, "prompts/get") == 0)
		return catalog_prompts(s, method, id, params, scopes);
	if (strcmp(method, "completion/complete") == 0)
		return catalog_complete(s, id, params, scopes);
	{
		char text[200];

		snprintf(text, sizeof(text), "method not found: %.120s", method);
		return rpc_error_json(id, RPC_METHOD_NOT_FOUND, text);
	}
}

json_t *mcp_session_dispatch(struct mcp_session *s, json_t *msg, const struct mcp_text *raw,
			     const struct mcp_sink *sink, const char *scopes)
{
	size_t i, at = 0, start;
	json_t *out, *m, *resp;

	if (!json_is_array(msg))
		return handle_one(s, msg, raw, CALL_HERE, sink, scopes);
	/* batches: only the 2025-03-26 revision had them */
	if (strcmp(s->version, "2025-03-26") != 0 || json_array_size(msg) == 0)
		return rpc_error_json(json_null(), RPC_INVALID_REQUEST,
				      json_array_size(msg)
					      ? "batches are not supported in this protocol revision"
					      : "an empty batch");
	out = json_array();
	/* each item's own text: where its arguments are, if it needs them */
	if (raw && raw->text)
		at = json_span_item(raw->text, raw->len, 0, 0);
	json_array_foreach(msg, i, m) {
		struct mcp_text item = { NULL, 0 };
		size_t end = at ? json_span_value(raw->text, raw->len, at, &start) : 0;

		if (end) {
			item.text = raw->text + start;
			item.len = end - start;
		}
		at = at ? json_span_next(raw->text, raw->len, at) : 0;
		resp = handle_one(s, m, &item, CALL_PLAIN, sink, scopes);
		if (resp)
			json_array_append_new(out, resp);
	}
	if (json_array_size(out))
		return out;
	json_decref(out);
	return NULL;
}

void mcp_session_handle(struct mcp_session *s, const char *text, size_t len)
{
	struct mcp_text raw = { text, len };
	json_error_t jerr;
	json_t *msg, *resp;
	char why[200];

	if (len > MCP_MAX_MESSAGE) {
		snprintf(why, sizeof(why), "message larger than %u bytes", MCP_MAX_MESSAGE);
		send_text(s, rpc_error(json_null(), RPC_INVALID_REQUEST, why));
		return;
	}
	/* an integer past 64 bits is read, not refused: the arguments go
	 * on as written (session_exact_arguments) */
	msg = json_wide_load(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!msg) {
		snprintf(why, sizeof(why), "parse error: %s (byte %d)", jerr.text, jerr.position);
		send_text(s, rpc_error(json_null(), RPC_PARSE_ERROR, why));
		return;
	}
	if (json_is_array(msg)) {
		resp = mcp_session_dispatch(s, msg, &raw, NULL, s->scopes);
		if (resp)
			session_send_json(s, resp);
		json_decref(msg);
		return;
	}
	resp = handle_one(s, msg, &raw, CALL_THREAD, NULL, s->scopes);
	if (resp)
		session_send_json(s, resp);
	json_decref(msg);
}

void mcp_session_init(struct mcp_session *s, struct tg_mcp *m, mcp_send_fn send, void *ctx)
{
	memset(s, 0, sizeof(*s));
	s->mcp = m;
	s->send = send;
	s->send_ctx = ctx;
	s->state = SESSION_NEW;
	s->log_level = 1; /* info */
	s->transport = "pipe";
	snprintf(s->principal, sizeof(s->principal), "%s", m->principal);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->changed, NULL);
	pthread_cond_init(&s->slot, NULL);
}

void mcp_session_cancel(struct mcp_session *s)
{
	struct inflight *f;

	pthread_mutex_lock(&s->lock);
	s->closing = 1;
	for (f = s->inflight; f; f = f->next)
		if (!f->cancelled) {
			f->cancelled = 1;
			if (write(f->cancel[1], "x", 1) < 0)
				continue;
		}
	pthread_cond_broadcast(&s->changed);
	pthread_mutex_unlock(&s->lock);
}

void mcp_session_release(struct mcp_session *s, int cancel)
{
	struct inflight *f;
	int spare[2];

	listen_close_all(s);
	pthread_mutex_lock(&s->lock);
	/* the client is gone: nobody will answer the tools' questions */
	s->closing = 1;
	pthread_cond_broadcast(&s->changed);
	for (f = cancel ? s->inflight : NULL; f; f = f->next)
		if (!f->cancelled) {
			f->cancelled = 1;
			if (write(f->cancel[1], "x", 1) < 0)
				continue;
		}
	while (s->ninflight)
		pthread_cond_wait(&s->changed, &s->lock);
	while (session_spare_take(s, spare)) {
		close(spare[0]);
		close(spare[1]);
	}
	pthread_mutex_unlock(&s->lock);
	json_decref(s->client_capabilities);
	json_decref(s->subscribed);
	free(s->scopes);
	pthread_cond_destroy(&s->changed);
	pthread_cond_destroy(&s->slot);
	pthread_mutex_destroy(&s->lock);
}

int mcp_session_started(struct mcp_session *s)
{
	int started;

	pthread_mutex_lock(&s->lock);
	started = s->state != SESSION_NEW;
	pthread_mutex_unlock(&s->lock);
	return started;
}
