/*
 * One MCP session (docs/MCP.md): the lifecycle (initialize, the
 * initialized notification, ping), version negotiation, tools/list with
 * cursor pagination, tools/call through the gate, logging/setLevel and
 * cancellation. Transport-independent: a transport hands over each message
 * and gives a function that writes the session's messages.
 *
 * A tools/call runs on a thread of its own (at most max_inflight at once;
 * past that the session reads no further until one ends), so that pings
 * and cancellations are answered while a tool runs. A cancelled call's
 * sandbox is killed through its cancel pipe and, as the specification
 * asks, the request gets no response.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mcp/mcp_int.h"
#include "toolgate/catalog.h"

enum { SESSION_NEW, SESSION_INITIALIZING, SESSION_READY };

/* How a tools/call runs (do_tools_call). */
enum { CALL_PLAIN, CALL_HERE, CALL_THREAD };

/* Whether a tools/call becomes an MCP task (docs/MCP.md): never; when it
 * outlasts TASK_AFTER_MS (the 2026-07-28 extension, server-directed); at
 * once (2025-11-25: the client asked for one). */
enum { TASK_NEVER, TASK_MAYBE, TASK_NOW };

#define EXT_TASKS "io.modelcontextprotocol/tasks"
#define META_RELATED_TASK "io.modelcontextprotocol/related-task"
#define TASKS_VERSION "2025-11-25" /* the session revision with tasks */

/* Newest first; a client asking for another gets the newest. */
static const char *const versions[] = { TG_MCP_LATEST, "2025-06-18", "2025-03-26" };

static const char *const log_levels[] = { "debug",    "info",  "notice", "warning",
					  "error",    "critical", "alert", "emergency" };

#define PAGE_SIZE 50 /* tools per tools/list page */

struct inflight {
	json_t *id;
	int cancel[2];                 /* the gate's cancel fd: [0] read, [1] written */
	int cancelled;
	struct inflight *next;
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

static void send_json(struct mcp_session *s, json_t *msg)
{
	char *text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;

	json_decref(msg);
	send_text(s, text);
}

/* ---- lifecycle ----------------------------------------------------------- */

int mcp_version_known(const char *v)
{
	size_t i;

	for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++)
		if (strcmp(v, versions[i]) == 0)
			return 1;
	return 0;
}

/* What the server offers: tools, resources, prompts and completions,
 * whatever the catalogue holds now (a reload may bring some), and
 * notifications when a reload changes a list or a resource. The session
 * era also has logging/setLevel; the modern era sets the log level per
 * request. */
static json_t *server_capabilities(int session_era, const char *version)
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
	const char *chosen = versions[0];
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
			   server_capabilities(1, chosen), "serverInfo", "name", "toolgate", "title",
			   "toolgate", "version", TOOLGATE_VERSION);
	if (result && s->mcp->instructions)
		json_object_set_new(result, "instructions", json_string(s->mcp->instructions));
	return result ? rpc_result_json(id, result) : NULL;
}

static json_t *do_set_level(struct mcp_session *s, json_t *id, json_t *params)
{
	const char *level = json_string_value(json_object_get(params, "level"));
	size_t i;

	for (i = 0; level && i < sizeof(log_levels) / sizeof(log_levels[0]); i++)
		if (strcmp(level, log_levels[i]) == 0) {
			pthread_mutex_lock(&s->lock);
			s->log_level = (int)i;
			pthread_mutex_unlock(&s->lock);
			return rpc_result_json(id, json_object());
		}
	return rpc_error_json(id, RPC_INVALID_PARAMS,
			      "logging/setLevel: \"level\" must be one of debug, info, notice, "
			      "warning, error, critical, alert, emergency");
}

/* ---- tools ---------------------------------------------------------------- */

/* What an older revision does not know is left out of what it gets. */
static int older_than_2025_06(const struct mcp_session *s)
{
	return strcmp(s->version, "2025-06-18") < 0;
}

static json_t *do_tools_list(struct mcp_session *s, json_t *id, json_t *params, int old_shapes)
{
	json_t *cursor = json_object_get(params, "cursor"), *all, *page, *result, *t;
	struct tg_error err;
	char *text, next[32];
	size_t start = 0, i;

	if (cursor) {
		const char *c = json_string_value(cursor);
		char *end;

		/* the cursor is opaque to clients; here "t" and an offset */
		if (!c || c[0] != 't' || !c[1] ||
		    (errno = 0, start = strtoul(c + 1, &end, 10), *end || errno))
			return rpc_error_json(id, RPC_INVALID_PARAMS, "tools/list: invalid cursor");
	}
	text = tg_gate_tools_json(s->mcp->gate, NULL, &err);
	all = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	if (!all)
		return rpc_error_json(id, RPC_INTERNAL_ERROR, "tools/list: out of memory");
	if (start > json_array_size(all)) {
		json_decref(all);
		return rpc_error_json(id, RPC_INVALID_PARAMS, "tools/list: invalid cursor");
	}
	page = json_array();
	for (i = start; page && i < json_array_size(all) && i < start + PAGE_SIZE; i++) {
		t = json_array_get(all, i);
		if (old_shapes) {
			json_object_del(t, "outputSchema");
			json_object_del(t, "title");
		}
		json_array_append(page, t);
	}
	result = json_pack("{s:o}", "tools", page);
	if (result && i < json_array_size(all)) {
		snprintf(next, sizeof(next), "t%zu", i);
		json_object_set_new(result, "nextCursor", json_string(next));
	}
	json_decref(all);
	return result ? rpc_result_json(id, result) : NULL;
}

struct call_job {
	struct call_opts opts;
	struct mcp_session *s;
	struct inflight *f;            /* NULL: run in the reader's thread */
	json_t *id;
	char *name;
	char *args;                    /* JSON text, or NULL */
	json_t *token;                 /* _meta.progressToken, or NULL */
	char *scopes;                  /* opts.scopes, copied: the request may go first */
	char *idem_key;                /* opts.idem_key, copied */
	struct mrtr *mrtr;             /* a modern call's questions, or NULL */
	json_t *caps;                  /* a modern call's clientCapabilities, or NULL */
	struct mcp_sink sink;
	int has_sink;
	struct mcp_task *wait_for;     /* tasks/result: the task whose end it awaits */
	struct tg_span *span;          /* the request's server span, ended with its answer */
};

/* ---- the modern era (2026-07-28) ------------------------------------------ */

#define MODERN MCP_MODERN
#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define META_LOG "io.modelcontextprotocol/logLevel"
#define META_IDEMPOTENCY "dev.toolgate/idempotencyKey" /* a write call's (docs/PIPELINE.md) */
#define META_DRY_RUN "dev.toolgate/dryRun"         /* show, do not do (docs/PIPELINE.md) */
#define META_WAIT "dev.toolgate/approvalWait"      /* ms a held call waits for its decision */
#define CACHE_TTL_MS 60000 /* the catalogue does not change while served */

#define META_SERVER_INFO "io.modelcontextprotocol/serverInfo"

/* Who answers, as a modern result's _meta says it. */
static json_t *server_info(void)
{
	return json_pack("{s:s,s:s}", "name", "toolgate", "version", TOOLGATE_VERSION);
}

/* What every modern result carries: its type, the server's identity and,
 * for what a client may cache, how long and for whom. */
static void modern_result(json_t *result, int cacheable)
{
	json_t *meta = json_object_get(result, "_meta");

	if (!json_object_get(result, "resultType"))
		json_object_set_new(result, "resultType", json_string("complete"));
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(result, "_meta", meta);
	}
	json_object_set_new(meta, META_SERVER_INFO, server_info());
	if (cacheable) {
		json_object_set_new(result, "ttlMs", json_integer(CACHE_TTL_MS));
		/* what a principal may see will depend on it (issue 5) */
		json_object_set_new(result, "cacheScope", json_string("private"));
	}
}

/* A call's reports on their way out: progress against the request's
 * token (increasing only, as the specification requires), log messages
 * at or above the session's level. */
struct reporter {
	struct mcp_session *s;
	int log_at;                    /* as in struct call_opts */
	struct mcp_sink sink;
	json_t *token;                 /* the request's progressToken, or NULL */
	double last;                   /* the last progress sent */
	int sent;
	struct mrtr *mrtr;             /* a modern call's questions, or NULL */
	int cancel_w;                  /* stops the run; -1: none */
	volatile int suspended;        /* the run was stopped to ask the client */
	struct mcp_task *task;         /* the task the call runs for, or NULL */
};

static void session_sink_send(void *ctx, json_t *msg)
{
	send_json(ctx, msg);
}

/* A task's progress message is its statusMessage (an approval it awaits,
 * say), whether or not the client asked for progress. */
static void task_progress(struct reporter *r, const char *text)
{
	struct mcp_tasks *ts = &r->s->mcp->tasks;
	struct mcp_task *t = r->task;

	pthread_mutex_lock(&ts->lock);
	if (!mcp_task_terminal(t->status)) {
		mcp_task_set_message_locked(t, text);
		t->updated_ms = mcp_now_ms();
	}
	pthread_mutex_unlock(&ts->lock);
}

static void tool_event(void *ctx, const char *event)
{
	struct reporter *r = ctx;
	json_t *e = json_loads(event, 0, NULL), *p, *l, *msg = NULL;
	size_t i;

	p = json_object_get(e, "progress");
	if (p && r->task && json_is_string(json_object_get(p, "message")))
		task_progress(r, json_string_value(json_object_get(p, "message")));
	if (p && r->token) {
		json_t *v = json_object_get(p, "progress");

		if (json_is_number(v) && (!r->sent || json_number_value(v) > r->last)) {
			msg = json_pack("{s:s,s:s,s:{s:O,s:O}}", "jsonrpc", "2.0", "method",
					"notifications/progress", "params", "progressToken", r->token,
					"progress", v);
			if (msg && json_is_number(json_object_get(p, "total")))
				json_object_set(json_object_get(msg, "params"), "total",
						json_object_get(p, "total"));
			if (msg && json_is_string(json_object_get(p, "message")))
				json_object_set(json_object_get(msg, "params"), "message",
						json_object_get(p, "message"));
			r->last = json_number_value(v);
			r->sent = 1;
		}
	} else if ((l = json_object_get(e, "log"))) {
		const char *level = json_string_value(json_object_get(l, "level"));
		int at;

		for (i = 0; level && i < sizeof(log_levels) / sizeof(log_levels[0]); i++)
			if (strcmp(level, log_levels[i]) == 0)
				break;
		pthread_mutex_lock(&r->s->lock);
		at = r->log_at >= 0 ? r->log_at : r->s->log_level;
		pthread_mutex_unlock(&r->s->lock);
		if (level && i < sizeof(log_levels) / sizeof(log_levels[0]) && (int)i >= at &&
		    json_object_get(l, "data")) {
			msg = json_pack("{s:s,s:s,s:{s:s,s:O}}", "jsonrpc", "2.0", "method",
					"notifications/message", "params", "level", level, "data",
					json_object_get(l, "data"));
			if (msg && json_is_string(json_object_get(l, "logger")))
				json_object_set(json_object_get(msg, "params"), "logger",
						json_object_get(l, "logger"));
		}
	}
	json_decref(e);
	if (msg)
		r->sink.send(r->sink.ctx, msg);
}

/* Wait on c (with m held) for a change, or 100 ms: the loops that also
 * look at flags no broadcast announces. */
static void wait_a_while(pthread_cond_t *c, pthread_mutex_t *m)
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

/* ---- requests to the client ------------------------------------------------ */

struct pending {
	json_t *id;
	json_t *answer;                /* the client's response message, once it came */
	struct pending *next;
};

/* The capability a request to the client needs, or NULL when it is not
 * one a tool may make. */
static const char *needed_capability(const char *method)
{
	if (strcmp(method, "sampling/createMessage") == 0)
		return "sampling";
	if (strcmp(method, "elicitation/create") == 0)
		return "elicitation";
	if (strcmp(method, "roots/list") == 0)
		return "roots";
	return NULL;
}

static char *ask_error(int code, const char *message)
{
	json_t *e = json_pack("{s:{s:i,s:s}}", "error", "code", code, "message", message);
	char *text = e ? json_dumps(e, JSON_COMPACT) : NULL;

	json_decref(e);
	return text;
}

/* An interactive tool's request, sent to the client on the call's sink;
 * waits for the answer (handle_one routes responses here), the end of the
 * call (*stop) or of the session. */
static char *tool_ask(void *ctx, const char *request, const volatile int *stop)
{
	struct reporter *r = ctx;
	struct mcp_session *s = r->s;
	json_t *req = json_loads(request, 0, NULL), *inner = json_object_get(req, "request"), *msg;
	const char *method = json_string_value(json_object_get(inner, "method"));
	const char *cap = method ? needed_capability(method) : NULL;
	struct pending p = { NULL, NULL, NULL }, **q;
	char id[48], *text = NULL;

	if (!cap) {
		json_decref(req);
		return ask_error(RPC_METHOD_NOT_FOUND, "a tool may ask for sampling/createMessage, "
				 "elicitation/create or roots/list");
	}
	pthread_mutex_lock(&s->lock);
	if (!json_object_get(s->client_capabilities, cap)) {
		pthread_mutex_unlock(&s->lock);
		json_decref(req);
		return ask_error(RPC_INVALID_REQUEST, "the client did not declare that capability");
	}
	snprintf(id, sizeof(id), "toolgate-%lu", ++s->next_request);
	p.id = json_string(id);
	p.next = s->pending;
	s->pending = &p;
	pthread_mutex_unlock(&s->lock);
	msg = json_pack("{s:s,s:O,s:s}", "jsonrpc", "2.0", "id", p.id, "method", method);
	if (msg && json_is_object(json_object_get(inner, "params")))
		json_object_set(msg, "params", json_object_get(inner, "params"));
	json_decref(req);
	if (msg)
		r->sink.send(r->sink.ctx, msg);
	pthread_mutex_lock(&s->lock);
	while (!p.answer && !*stop && !s->closing)
		wait_a_while(&s->changed, &s->lock);
	for (q = &s->pending; *q; q = &(*q)->next)
		if (*q == &p) {
			*q = p.next;
			break;
		}
	pthread_mutex_unlock(&s->lock);
	if (p.answer) {
		json_t *out = json_object_get(p.answer, "result")
				      ? json_pack("{s:O}", "result", json_object_get(p.answer, "result"))
				      : json_pack("{s:O}", "error", json_object_get(p.answer, "error"));

		text = out ? json_dumps(out, JSON_COMPACT) : NULL;
		json_decref(out);
	} else {
		text = ask_error(RPC_INTERNAL_ERROR, "no answer from the client");
	}
	json_decref(p.answer);
	json_decref(p.id);
	return text;
}

/* An interactive tool's request in the modern era (MRTR, mrtr.c): the
 * answer when the call's requestState and inputResponses hold it; else
 * the run is stopped, and the call answers with what to ask. */
static char *tool_ask_modern(void *ctx, const char *request, const volatile int *stop)
{
	struct reporter *r = ctx;
	json_t *req = json_loads(request, 0, NULL), *inner = json_object_get(req, "request");
	const char *method = json_string_value(json_object_get(inner, "method"));
	char *text = NULL;
	int stop_run = 0;

	(void)stop;
	if (!method || !needed_capability(method)) {
		json_decref(req);
		return ask_error(RPC_METHOD_NOT_FOUND, "a tool may ask for sampling/createMessage, "
				 "elicitation/create or roots/list");
	}
	text = mrtr_ask(r->mrtr, method, json_object_get(inner, "params"),
			json_string_value(json_object_get(req, "key")),
			json_is_true(json_object_get(req, "more")), &stop_run);
	json_decref(req);
	if (text || !stop_run)
		return text ? text : ask_error(RPC_INTERNAL_ERROR, "out of memory");
	r->suspended = 1;
	if (r->cancel_w >= 0 && write(r->cancel_w, "x", 1) < 0)
		r->suspended = 1; /* the pipe holds a byte already: the run ends anyway */
	return ask_error(RPC_INTERNAL_ERROR, "input required: the call ends, and the client "
			 "calls again with the answer");
}

/* A question's key as a tool names it: 1 to 64 of A-Z a-z 0-9 _ . - */
static int key_valid(const char *k)
{
	size_t n = k ? strspn(k, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			      "0123456789_.-") : 0;

	return n > 0 && n <= 64 && !k[n];
}

/* 1 once every question the tool waits on has its answer. */
static int breath_answered(const struct mcp_task *t)
{
	json_t *k;
	size_t i;

	json_array_foreach(t->breath, i, k)
		if (!json_object_get(t->answers, json_string_value(k)))
			return 0;
	return 1;
}

/* An interactive tool's question in a call that runs as a task. Before
 * the call became one (a modern call's first TASK_AFTER_MS), it is asked
 * by MRTR, and the call stays a request. After, the task moves to
 * input_required with the question in its inputRequests, and the run
 * waits for tasks/update to answer it (or for the task's end). Questions
 * asked together ("more") are answered together: one line each, in the
 * order they were asked. */
static char *task_ask(void *ctx, const char *request, const volatile int *stop)
{
	struct reporter *r = ctx;
	struct mcp_task *t = r->task;
	struct mcp_tasks *ts = &r->s->mcp->tasks;
	json_t *req, *inner, *params, *k, *refusal = NULL;
	const char *method, *key, *cap;
	char made[24], *text = NULL, *line;
	size_t i, len = 0;
	int more;

	pthread_mutex_lock(&ts->lock);
	if (!t->listed) {
		/* not a task yet: no task is made while the run stops to ask,
		 * nor while a question of the same breath waits for the rest */
		t->asking = 1;
		pthread_mutex_unlock(&ts->lock);
		text = tool_ask_modern(ctx, request, stop);
		pthread_mutex_lock(&ts->lock);
		t->asking = r->suspended || (text && !*text);
		pthread_cond_broadcast(&ts->changed);
		pthread_mutex_unlock(&ts->lock);
		return text;
	}
	pthread_mutex_unlock(&ts->lock);
	req = json_loads(request, 0, NULL);
	inner = json_object_get(req, "request");
	method = json_string_value(json_object_get(inner, "method"));
	cap = method ? needed_capability(method) : NULL;
	key = json_string_value(json_object_get(req, "key"));
	more = json_is_true(json_object_get(req, "more"));
	params = json_object_get(inner, "params");
	pthread_mutex_lock(&ts->lock);
	/* a question that cannot be asked is answered with an error, in its
	 * place among the breath's answers (the tool reads them in order) */
	if (!cap)
		refusal = json_pack("{s:{s:i,s:s}}", "error", "code", RPC_METHOD_NOT_FOUND, "message",
				    "a tool may ask for sampling/createMessage, "
				    "elicitation/create or roots/list");
	else if (!t->modern)
		refusal = json_pack("{s:{s:i,s:s}}", "error", "code", RPC_INVALID_REQUEST, "message",
				    "a task of the 2025-11-25 revision cannot ask its client: call "
				    "the tool without a task, or in 2026-07-28");
	else if (!json_object_get(t->caps, cap)) {
		t->missing = cap;
		refusal = json_pack("{s:{s:i,s:s}}", "error", "code", RPC_MISSING_CLIENT_CAPABILITY,
				    "message", "the client did not declare that capability");
	} else if (json_object_size(t->asked) >= TASK_MAX_QUESTIONS)
		refusal = json_pack("{s:{s:i,s:s}}", "error", "code", RPC_INVALID_REQUEST, "message",
				    "more than 16 questions at once");
	if (json_array_size(t->breath) >= 4 * TASK_MAX_QUESTIONS) {
		/* a tool asking without end: it is answered, out of turn */
		pthread_mutex_unlock(&ts->lock);
		json_decref(req);
		json_decref(refusal);
		return ask_error(RPC_INVALID_REQUEST, "more than 64 questions in one breath");
	}
	if (refusal || !key_valid(key) || json_object_get(t->asked, key) ||
	    json_object_get(t->answers, key)) {
		snprintf(made, sizeof(made), "input-%u", ++t->next_key);
		key = made;
	}
	if (refusal)
		json_object_set_new(t->answers, key, refusal); /* answered, never listed */
	else
		json_object_set_new(t->asked, key,
				    json_pack("{s:s,s:o}", "method", method, "params",
					      json_is_object(params) ? json_incref(params)
								     : json_object()));
	json_array_append_new(t->breath, json_string(key));
	json_decref(req);
	if (more) {
		pthread_mutex_unlock(&ts->lock);
		return strdup(""); /* answered with the last of the breath */
	}
	if (!mcp_task_terminal(t->status) && !breath_answered(t))
		mcp_task_set_locked(ts, t, TASK_INPUT_REQUIRED);
	while (!*stop && !ts->stopping && !mcp_task_terminal(t->status) && !breath_answered(t))
		wait_a_while(&ts->changed, &ts->lock);
	if (breath_answered(t)) {
		/* one line per question, in the order asked */
		json_array_foreach(t->breath, i, k) {
			line = json_dumps(json_object_get(t->answers, json_string_value(k)),
					  JSON_COMPACT);
			if (line) {
				char *grown = realloc(text, len + strlen(line) + 2);

				if (grown) {
					text = grown;
					len += (size_t)sprintf(text + len, "%s%s", len ? "\n" : "",
							       line);
				}
				free(line);
			}
			json_object_del(t->answers, json_string_value(k));
		}
		if (t->status == TASK_INPUT_REQUIRED)
			mcp_task_set_locked(ts, t, TASK_WORKING);
	} else {
		json_array_foreach(t->breath, i, k) {
			json_object_del(t->asked, json_string_value(k));
			json_object_del(t->answers, json_string_value(k));
		}
	}
	json_array_clear(t->breath);
	pthread_mutex_unlock(&ts->lock);
	return text ? text : ask_error(RPC_INTERNAL_ERROR, "no answer from the client");
}

/* A response from the client: to the request of ours that waits for it. */
static void deliver_answer(struct mcp_session *s, json_t *msg)
{
	json_t *id = json_object_get(msg, "id");
	struct pending *p;

	pthread_mutex_lock(&s->lock);
	for (p = s->pending; p; p = p->next)
		if (json_equal(p->id, id) && !p->answer) {
			p->answer = json_incref(msg);
			pthread_cond_broadcast(&s->changed);
			break;
		}
	pthread_mutex_unlock(&s->lock);
}

/* ---- traces (docs/TRACING.md) ------------------------------------------------ */

/* The server span of the request this thread handles, from handle_one
 * until its answer; a job that answers later takes it (job_new). */
static __thread struct tg_span *request_span;

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
static struct tg_span *server_span(struct mcp_session *s, const char *method, json_t *id,
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
static void server_span_end(struct tg_span *sp, json_t *resp)
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

/* Run a tools/call through the gate; its response. f: the call's
 * cancellation (NULL in a batch); mrtr: a modern call's questions. */
static json_t *call_response(struct mcp_session *s, json_t *id, const char *name,
			     const char *args, struct inflight *f, struct mrtr *mrtr,
			     json_t *token, const struct mcp_sink *sink,
			     const struct call_opts *opts)
{
	struct reporter rep = { s, opts->log_at, { session_sink_send, s }, token, 0, 0,
				mrtr, f ? f->cancel[1] : -1, 0, opts->run_of };
	struct tg_call call = { s->principal, name, args, args ? strlen(args) : 0,
				f ? f->cancel[0] : -1, NULL, tool_event, &rep,
				opts->run_of ? task_ask : mrtr ? tool_ask_modern : tool_ask,
				&rep.suspended, opts->scopes, s->mcp->limiter, opts->idem_key,
				opts->dry_run, opts->approval_wait_ms,
				opts->run_of ? &opts->run_of->withdraw : NULL, NULL };
	struct tg_call_result r;
	struct tg_error err;
	struct tg_trace_ctx here;
	json_t *result, *content, *structured = NULL;

	if (sink)
		rep.sink = *sink;
	/* the execute_tool span's parent: the request's span */
	if (opts->trace.valid) {
		call.trace = &opts->trace;
	} else if (request_span) {
		tg_span_context(request_span, &here);
		call.trace = &here;
	}
	/* with a policy, a call always goes with scopes: none given is none
	 * held, and the authorize stage refuses (fail closed) */
	if (s->mcp->policy && !call.scopes)
		call.scopes = "";
	/* a call in a batch cannot be cancelled nor asked about, so its tool
	 * may not ask the client: it gets an error at once, rather than
	 * waiting for an answer that has no way back */
	if (!f || (opts->modern && !mrtr && !opts->run_of))
		call.ask = NULL;
	if (tg_gate_call(s->mcp->gate, &call, &r, &err) < 0) {
		/* the call itself is wrong: unknown or retired tool */
		return rpc_error_json(id, err.code == TG_ERR_INVALID || err.code == TG_ERR_UNAVAILABLE
						  ? RPC_INVALID_PARAMS : RPC_INTERNAL_ERROR,
				      err.msg);
	}
	if (mrtr && !rep.suspended && r.is_error &&
	    (result = mrtr_missing_capability(mrtr, id)) != NULL) {
		/* it failed for want of what the client could not be asked */
		tg_call_result_release(&r);
		return result;
	}
	if (rep.suspended) {
		/* stopped to ask: what to ask, not the run's end, is the answer */
		tg_call_result_release(&r);
		result = mrtr_response(mrtr, id);
		if (json_is_object(json_object_get(result, "result"))) {
			modern_result(json_object_get(result, "result"), 0);
			json_object_set_new(json_object_get(result, "result"), "resultType",
					    json_string("input_required"));
		}
		return result ? result : rpc_error_json(id, RPC_INTERNAL_ERROR, "out of memory");
	}
	content = json_loads(r.content_json, 0, NULL);
	if (r.structured_json && !opts->old_shapes)
		structured = json_loads(r.structured_json, 0, NULL);
	result = content ? json_pack("{s:o,s:b}", "content", content, "isError", r.is_error) : NULL;
	/* A failed call's typed error ({"error": {code, message, retryable}})
	 * goes in _meta: clients check structuredContent against the tool's
	 * output schema, which describes success. */
	if (result && structured && r.is_error)
		json_object_set_new(result, "_meta",
				    json_pack("{s:O}", "dev.toolgate/error",
					      json_object_get(structured, "error")
						      ? json_object_get(structured, "error")
						      : structured));
	else if (result && structured)
		json_object_set_new(result, "structuredContent", json_incref(structured));
	json_decref(structured);
	tg_call_result_release(&r);
	if (result && opts->modern)
		modern_result(result, 0);
	return result ? rpc_result_json(id, result)
		      : rpc_error_json(id, RPC_INTERNAL_ERROR, "tools/call: out of memory");
}

static void inflight_remove(struct mcp_session *s, struct inflight *f)
{
	struct inflight **p;

	for (p = &s->inflight; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			break;
		}
	s->ninflight--;
	pthread_cond_broadcast(&s->changed);
}

static void job_free(struct call_job *j)
{
	close(j->f->cancel[0]);
	close(j->f->cancel[1]);
	json_decref(j->f->id);
	free(j->f);
	json_decref(j->id);
	json_decref(j->token);
	free(j->scopes);
	free(j->idem_key);
	mrtr_free(j->mrtr);
	json_decref(j->caps);
	if (j->wait_for)
		mcp_task_put(&j->s->mcp->tasks, j->wait_for);
	server_span_end(j->span, NULL); /* not answered */
	free(j->name);
	free(j->args);
	free(j);
}

/* ---- tools/call as a task ----------------------------------------------------- */

/* A task's session has no client: nothing is sent on it. */
static void drop_message(void *ctx, const char *text, size_t len)
{
	(void)ctx;
	(void)text;
	(void)len;
}

/* What a task's run reports (progress, log messages): to the request
 * while it waits for the answer; dropped once the call is a task (whose
 * statusMessage has the progress message, task_progress). */
static void task_sink_send(void *ctx, json_t *msg)
{
	struct mcp_task *t = ctx;

	pthread_mutex_lock(&t->sink_lock);
	if (t->sink.send)
		t->sink.send(t->sink.ctx, msg);
	else
		json_decref(msg);
	pthread_mutex_unlock(&t->sink_lock);
}

/* A task's record line (docs/PIPELINE.md, "The record"): subject
 * "task ID", outcome "task_" and what happened, detail the tool. */
static void task_record(struct tg_mcp *m, const char *principal, const char *id,
			const char *what, const char *tool)
{
	char subject[48], outcome[40];

	snprintf(subject, sizeof(subject), "task %s", id);
	snprintf(outcome, sizeof(outcome), "task_%s", what);
	tg_gate_record_event(m->gate, principal, subject, outcome, tool);
}

static const char *const task_status_names[] = { "working", "input_required", "completed",
						 "failed", "cancelled" };

/* A task's run: the call, through the gate, on the task's own session;
 * its answer is the task's end, or the waiting request's. */
static void *task_runner(void *arg)
{
	struct mcp_task *t = arg;
	struct mcp_tasks *ts = &t->s.mcp->tasks;
	struct inflight f = { NULL, { t->cancel[0], t->cancel[1] }, 0, NULL };
	struct mcp_sink sink = { task_sink_send, t };
	json_t *resp = call_response(&t->s, t->req_id, t->name, t->args, &f, t->mrtr, t->token,
				     &sink, &t->opts);
	struct tg_mcp *m = t->s.mcp;
	char id[33], principal[MCP_MAX_PRINCIPAL], *tool = NULL;
	const char *ended = NULL;

	mcp_session_release(&t->s, 0);
	pthread_mutex_lock(&ts->lock);
	/* failed for want of what the client could not be asked: -32021,
	 * as the call would have answered without a task */
	if (t->missing && json_is_true(json_object_get(json_object_get(resp, "result"), "isError"))) {
		json_t *e = json_pack("{s:i,s:s,s:{s:{s:{}}}}", "code", RPC_MISSING_CLIENT_CAPABILITY,
				      "message", "Missing required client capability", "data",
				      "requiredCapabilities", t->missing);

		if (e) {
			json_decref(resp);
			resp = json_pack("{s:o}", "error", e);
		}
	}
	if (t->listed) {
		/* a cancelled task's line was written when it was cancelled */
		if (t->status != TASK_CANCELLED)
			tool = strdup(t->name);
		mcp_task_settle_locked(t, resp);
		ended = task_status_names[t->status];
		memcpy(id, t->id, sizeof(id));
		memcpy(principal, t->principal, sizeof(principal));
	} else {
		t->sync_resp = resp;
	}
	t->done = 1;
	pthread_cond_broadcast(&ts->changed);
	mcp_task_put_locked(t);
	pthread_mutex_unlock(&ts->lock);
	if (tool)
		task_record(m, principal, id, ended, tool);
	free(tool);
	/* the last: once no run is counted, the server may go */
	pthread_mutex_lock(&ts->lock);
	ts->running--;
	pthread_cond_broadcast(&ts->changed);
	pthread_mutex_unlock(&ts->lock);
	return NULL;
}

/* 1 if the request was cancelled (its cancel pipe is readable). */
static int request_cancelled(const struct inflight *f)
{
	struct pollfd p = { f ? f->cancel[0] : -1, POLLIN, 0 };

	return f && poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* The CreateTaskResult for t (with ts->lock held). */
static json_t *create_task_result(struct mcp_task *t, json_t *id)
{
	json_t *task = mcp_task_json_locked(t, 0), *result;

	if (!task)
		return rpc_error_json(id, RPC_INTERNAL_ERROR, "tools/call: out of memory");
	if (t->modern) {
		/* flat: the task's fields and resultType "task" */
		modern_result(task, 0);
		json_object_set_new(task, "resultType", json_string("task"));
		return rpc_result_json(id, task);
	}
	result = json_pack("{s:o,s:{s:s}}", "task", task, "_meta",
			   "io.modelcontextprotocol/model-immediate-response",
			   "The call runs as a task; its result comes when it ends.");
	return result ? rpc_result_json(id, result)
		      : rpc_error_json(id, RPC_INTERNAL_ERROR, "tools/call: out of memory");
}

/* Job j's call as a task (j->opts.task): TASK_NOW answers with the task
 * at once; TASK_MAYBE waits up to TASK_AFTER_MS for the run and answers
 * as a request would when it ended (or stopped to ask by MRTR), else
 * makes the call a task and answers with that. The run is the task's
 * from the start, so that nothing of it depends on the request's life. */
static json_t *task_call(struct mcp_session *s, struct call_job *j)
{
	struct mcp_tasks *ts = &s->mcp->tasks;
	struct mcp_task *t = mcp_task_new(s->principal, j->opts.modern, j->opts.task_ttl_ms);
	pthread_attr_t attr;
	pthread_t th;
	int64_t until;
	json_t *resp = NULL;
	int gave_up = 0;

	if (!t)
		return rpc_error_json(j->id, RPC_INTERNAL_ERROR, "tools/call: out of memory");
	pthread_mutex_lock(&ts->lock);
	if (mcp_task_add_locked(ts, t) < 0) {
		int stopping = ts->stopping;

		pthread_mutex_unlock(&ts->lock);
		mcp_task_put(ts, t);
		return rpc_error_json(j->id, RPC_INVALID_REQUEST,
				      stopping ? "tools/call: the server is stopping"
					       : "tools/call: 32 of this principal's tasks are "
						 "unfinished; wait for one, or cancel one");
	}
	pthread_mutex_unlock(&ts->lock);
	/* the run takes what the job had */
	t->name = j->name;
	t->args = j->args;
	t->scopes = j->scopes;
	t->idem_key = j->idem_key;
	t->mrtr = j->mrtr;
	t->caps = j->caps;
	j->name = j->args = j->scopes = j->idem_key = NULL;
	j->mrtr = NULL;
	j->caps = NULL;
	t->req_id = json_incref(j->id);
	t->token = json_incref(j->token);
	t->opts = j->opts;
	if (t->opts.scopes)
		t->opts.scopes = t->scopes ? t->scopes : ""; /* out of memory: none held */
	if (t->opts.idem_key)
		t->opts.idem_key = t->idem_key ? t->idem_key : "";
	t->opts.run_of = t;
	/* a task waits for its approval as long as the ticket lives; its
	 * cancellation withdraws the request */
	t->opts.approval_wait_ms = TG_APPROVAL_WAIT_DECIDED;
	if (j->has_sink)
		t->sink = j->sink;
	else
		t->sink = (struct mcp_sink){ session_sink_send, s };
	mcp_session_init(&t->s, s->mcp, drop_message, NULL);
	snprintf(t->s.principal, sizeof(t->s.principal), "%s", s->principal);
	pthread_mutex_lock(&s->lock);
	t->s.log_level = s->log_level;
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_lock(&ts->lock);
	t->refs++; /* the run's */
	ts->running++;
	pthread_mutex_unlock(&ts->lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (!t->name || pthread_create(&th, &attr, task_runner, t) != 0) {
		pthread_attr_destroy(&attr);
		mcp_session_release(&t->s, 0);
		pthread_mutex_lock(&ts->lock);
		ts->running--;
		t->refs--;
		t->done = 1;
		mcp_task_settle_locked(t, NULL);
		mcp_task_drop_locked(ts, t);
		pthread_cond_broadcast(&ts->changed);
		pthread_mutex_unlock(&ts->lock);
		mcp_task_put(ts, t);
		return rpc_error_json(j->id, RPC_INTERNAL_ERROR, "tools/call: out of resources");
	}
	pthread_attr_destroy(&attr);
	if (j->opts.task == TASK_NOW) {
		/* 2025-11-25: a task from the start; the run reports to nobody */
		task_record(s->mcp, s->principal, t->id, "created", t->name);
		pthread_mutex_lock(&t->sink_lock);
		t->sink.send = NULL;
		pthread_mutex_unlock(&t->sink_lock);
		pthread_mutex_lock(&ts->lock);
		mcp_task_list_locked(ts, t);
		pthread_mutex_unlock(&ts->lock);
	}
	until = mcp_now_ms() + TASK_AFTER_MS;
	pthread_mutex_lock(&ts->lock);
	for (;;) {
		struct timespec at;
		int64_t now = mcp_now_ms(), next;

		if (t->listed && !gave_up) {
			/* a task (now, or since a moment): the client follows it */
			resp = create_task_result(t, j->id);
			break;
		}
		if (t->done) {
			/* answered as a request: no task was ever known */
			resp = t->sync_resp;
			t->sync_resp = NULL;
			mcp_task_drop_locked(ts, t);
			break;
		}
		if (!gave_up && (request_cancelled(j->f) || ts->stopping)) {
			/* the request went before its call became a task (a client's
			 * cancel withdraws a pending approval; the server's stop not) */
			gave_up = 1;
			t->withdraw = !ts->stopping;
			if (write(t->cancel[1], "x", 1) < 0) {
				/* only a closed pipe fails, and the run's is open */
			}
		}
		if (!gave_up && !t->asking && now >= until) {
			pthread_mutex_lock(&t->sink_lock);
			t->sink.send = NULL; /* the request answers now: nothing more goes there */
			pthread_mutex_unlock(&t->sink_lock);
			mcp_task_list_locked(ts, t);
			pthread_mutex_unlock(&ts->lock);
			task_record(s->mcp, s->principal, t->id, "created", t->name);
			pthread_mutex_lock(&ts->lock);
			continue;
		}
		next = now + 50 < until || gave_up ? now + 50 : until;
		at.tv_sec = (time_t)(next / 1000);
		at.tv_nsec = (long)(next % 1000) * 1000000L;
		pthread_cond_timedwait(&ts->changed, &ts->lock, &at);
	}
	mcp_task_put_locked(t);
	pthread_mutex_unlock(&ts->lock);
	return resp;
}

static json_t *job_answer(struct call_job *j);

static void *call_thread(void *arg)
{
	struct call_job *j = arg;
	struct mcp_session *s = j->s;
	json_t *resp = job_answer(j);
	int cancelled;

	pthread_mutex_lock(&s->lock);
	cancelled = j->f->cancelled;
	pthread_mutex_unlock(&s->lock);
	/* before the call leaves the session's in-flight list: once it has,
	 * the session (and the tracer) may be gone */
	server_span_end(j->span, cancelled ? NULL : resp);
	j->span = NULL;
	if (j->wait_for) {
		mcp_task_put(&s->mcp->tasks, j->wait_for);
		j->wait_for = NULL;
	}
	/* a cancelled request gets no response */
	if (cancelled)
		json_decref(resp);
	else
		send_json(s, resp);
	pthread_mutex_lock(&s->lock);
	inflight_remove(s, j->f);
	pthread_mutex_unlock(&s->lock);
	job_free(j);
	return NULL;
}

/* A job for request id: its cancel pipe made; NULL out of resources. */
static struct call_job *job_new(struct mcp_session *s, json_t *id)
{
	struct call_job *j = calloc(1, sizeof(*j));

	if (j)
		j->f = calloc(1, sizeof(*j->f));
	if (!j || !j->f || pipe2(j->f->cancel, O_CLOEXEC) < 0) {
		if (j)
			free(j->f);
		free(j);
		return NULL;
	}
	j->s = s;
	j->id = json_incref(id);
	j->f->id = json_incref(id);
	j->span = request_span; /* it ends with the job's answer */
	request_span = NULL;
	return j;
}

static json_t *task_result(struct mcp_session *s, json_t *id, struct mcp_task *t,
			   const struct inflight *f);

/* What job j answers: a task's result it waits for, a call as a task, or
 * a call. */
static json_t *job_answer(struct call_job *j)
{
	if (j->wait_for)
		return task_result(j->s, j->id, j->wait_for, j->f);
	if (j->opts.task != TASK_NEVER)
		return task_call(j->s, j);
	return call_response(j->s, j->id, j->name, j->args, j->f, j->mrtr, j->token,
			     j->has_sink ? &j->sink : NULL, &j->opts);
}

/* Run job j (taken) as mode says: in flight, cancellable, in this thread
 * (CALL_HERE: its answer returned) or on one of its own (CALL_THREAD: the
 * answer is sent from there, NULL returned). */
static json_t *job_start(struct mcp_session *s, struct call_job *j, int mode)
{
	pthread_attr_t attr;
	pthread_t t;
	json_t *resp;

	pthread_mutex_lock(&s->lock);
	/* backpressure: past max_inflight, the reader waits for a slot */
	while (s->ninflight >= s->mcp->max_inflight)
		pthread_cond_wait(&s->changed, &s->lock);
	j->f->next = s->inflight;
	s->inflight = j->f;
	s->ninflight++;
	pthread_mutex_unlock(&s->lock);
	if (mode == CALL_HERE) {
		resp = job_answer(j);
		pthread_mutex_lock(&s->lock);
		if (j->f->cancelled) { /* a cancelled request gets no response */
			json_decref(resp);
			resp = NULL;
		}
		inflight_remove(s, j->f);
		pthread_mutex_unlock(&s->lock);
		if (resp) {
			server_span_end(j->span, resp);
			j->span = NULL;
		}
		job_free(j);
		return resp;
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, call_thread, j) != 0) {
		pthread_attr_destroy(&attr);
		pthread_mutex_lock(&s->lock);
		inflight_remove(s, j->f);
		pthread_mutex_unlock(&s->lock);
		resp = rpc_error_json(j->id, RPC_INTERNAL_ERROR, "out of resources");
		job_free(j);
		return resp;
	}
	pthread_attr_destroy(&attr);
	return NULL;
}

/* The tool's execution.taskSupport; forbidden for a tool the catalogue
 * does not have (the call answers that). */
static enum tg_task_support tool_tasks(struct mcp_session *s, const char *name)
{
	const struct tg_catalog *cat = tg_gate_acquire(s->mcp->gate);
	const struct tg_contract *k;
	enum tg_task_support v = TG_TASKS_FORBIDDEN;
	struct tg_error err;

	if (tg_catalog_resolve(cat, name, NULL, &k, &err) == 0)
		v = k->tasks;
	tg_gate_release(s->mcp->gate, cat);
	return v;
}

/* -32021: the call needs the client to take a task (2026-07-28). */
static json_t *tasks_needed(json_t *id, const char *message)
{
	return json_pack("{s:s,s:O,s:{s:i,s:s,s:{s:{s:{s:{}}}}}}", "jsonrpc", "2.0", "id", id,
			 "error", "code", RPC_MISSING_CLIENT_CAPABILITY, "message", message, "data",
			 "requiredCapabilities", "extensions", EXT_TASKS);
}

/* Whether tools/call params of tool name runs as a task (OUT opts->task,
 * ->task_ttl_ms): NULL, or the error that refuses it. The 2026-07-28
 * extension: the server decides, for a client that declared it in the
 * request; a 2025-11-25 session: the client asks with params.task. */
static json_t *task_mode(struct mcp_session *s, json_t *id, const char *name, json_t *params,
			 struct call_opts *opts)
{
	json_t *task = json_object_get(params, "task"), *ttl = json_object_get(task, "ttl");
	json_t *caps = json_object_get(json_object_get(params, "_meta"), META_CAPS);
	enum tg_task_support support;
	char text[240];

	opts->task = TASK_NEVER;
	if (!opts->modern && strcmp(s->version, TASKS_VERSION) != 0)
		return NULL; /* no tasks in that revision: params.task is ignored */
	support = tool_tasks(s, name);
	if (opts->modern) {
		/* a legacy client's params.task is tolerated, and decides nothing */
		int declared = json_object_get(json_object_get(caps, "extensions"), EXT_TASKS) != NULL;

		if (support == TG_TASKS_REQUIRED && !declared)
			return tasks_needed(id, "Missing required client capability: this tool runs "
					    "only as a task (io.modelcontextprotocol/tasks)");
		if (support != TG_TASKS_FORBIDDEN && declared)
			opts->task = TASK_MAYBE;
		return NULL;
	}
	if (task && (!json_is_object(task) ||
		     (ttl && !json_is_null(ttl) && (!json_is_integer(ttl) || json_integer_value(ttl) < 0))))
		return rpc_error_json(id, RPC_INVALID_PARAMS, "tools/call: \"task\" is an object; "
				      "its ttl, when given, milliseconds");
	if (task && support == TG_TASKS_FORBIDDEN) {
		snprintf(text, sizeof(text), "tools/call: %.120s does not run as a task (its "
			 "execution.taskSupport is forbidden)", name);
		return rpc_error_json(id, RPC_METHOD_NOT_FOUND, text);
	}
	if (!task && support == TG_TASKS_REQUIRED) {
		snprintf(text, sizeof(text), "tools/call: %.120s runs only as a task (its "
			 "execution.taskSupport is required): call it with params.task", name);
		return rpc_error_json(id, RPC_METHOD_NOT_FOUND, text);
	}
	if (task) {
		opts->task = TASK_NOW;
		opts->task_ttl_ms = json_is_integer(ttl) ? json_integer_value(ttl) : 0;
	}
	return NULL;
}

/* tools/call: checked here, then run as mode says: CALL_THREAD on a
 * thread of its own (the answer is sent from there: NULL returned),
 * CALL_HERE in this thread, cancellable (HTTP: the answer goes back on
 * the request that asked), CALL_PLAIN in this thread (a batch). */
static json_t *do_tools_call(struct mcp_session *s, json_t *id, json_t *params, int mode,
			     const struct mcp_sink *sink, const struct call_opts *given)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *token = json_object_get(json_object_get(params, "_meta"), "progressToken");
	json_t *idem = json_object_get(json_object_get(params, "_meta"), META_IDEMPOTENCY);
	json_t *dry = json_object_get(json_object_get(params, "_meta"), META_DRY_RUN);
	json_t *wait = json_object_get(json_object_get(params, "_meta"), META_WAIT);
	json_t *caps = json_object_get(json_object_get(params, "_meta"), META_CAPS);
	struct call_opts with_key = *given, *opts = &with_key;
	json_t *args = json_object_get(params, "arguments"), *refused;
	struct call_job *j;
	char *text;

	if (!name)
		return rpc_error_json(id, RPC_INVALID_PARAMS, "tools/call: \"name\" is required");
	if (idem && !json_is_string(idem))
		return rpc_error_json(id, RPC_INVALID_PARAMS, "tools/call: _meta[\"" META_IDEMPOTENCY
				      "\"] must be a string");
	with_key.idem_key = json_string_value(idem);
	if (dry && !json_is_boolean(dry))
		return rpc_error_json(id, RPC_INVALID_PARAMS, "tools/call: _meta[\"" META_DRY_RUN
				      "\"] must be true or false");
	with_key.dry_run = json_is_true(dry);
	if (wait && (!json_is_integer(wait) || json_integer_value(wait) < 0 ||
		     json_integer_value(wait) > TG_MAX_APPROVAL_WAIT_MS))
		return rpc_error_json(id, RPC_INVALID_PARAMS, "tools/call: _meta[\"" META_WAIT
				      "\"] is milliseconds, 0 to 120000");
	with_key.approval_wait_ms = wait ? (unsigned)json_integer_value(wait) : 0;
	/* a batch's calls run one after the other: none may stall the rest */
	if (mode == CALL_PLAIN)
		with_key.approval_wait_ms = 0;
	if (args && !json_is_object(args))
		return rpc_error_json(id, RPC_INVALID_PARAMS,
				      "tools/call: \"arguments\" must be an object");
	if (token && !json_is_string(token) && !json_is_integer(token))
		token = NULL; /* the specification: a string or an integer */
	/* it is copied into every progress notification: bounded */
	if (token && json_is_string(token) && json_string_length(token) > 256)
		return rpc_error_json(id, RPC_INVALID_PARAMS,
				      "tools/call: _meta.progressToken longer than 256 bytes");
	/* a batch (2025-03-26) has no tasks */
	if (mode != CALL_PLAIN && (refused = task_mode(s, id, name, params, &with_key)))
		return refused;
	text = args ? json_dumps(args, JSON_COMPACT) : NULL;
	if (args && !text)
		return rpc_error_json(id, RPC_INTERNAL_ERROR, "tools/call: out of memory");
	if (mode == CALL_PLAIN) {
		json_t *resp = call_response(s, id, name, text, NULL, NULL, token, sink, opts);

		free(text);
		return resp;
	}
	j = job_new(s, id);
	if (!j) {
		free(text);
		return rpc_error_json(id, RPC_INTERNAL_ERROR, "tools/call: out of resources");
	}
	j->args = text;
	if (opts->modern) {
		/* its questions to the client go by MRTR: a retry's requestState
		 * and inputResponses are checked before anything runs */
		char why[160];

		if (mrtr_open(s->mcp, s->principal, name, params, caps, &j->mrtr, why,
			      sizeof(why)) < 0) {
			job_free(j);
			return rpc_error_json(id, RPC_INVALID_PARAMS, why);
		}
		j->caps = json_incref(caps);
	}
	j->name = strdup(name);
	j->token = json_incref(token);
	j->opts = *opts;
	tg_span_context(j->span, &j->opts.trace);
	if (opts->scopes) {
		j->scopes = strdup(opts->scopes);
		j->opts.scopes = j->scopes ? j->scopes : ""; /* out of memory: no scope, refused */
	}
	if (opts->idem_key) {
		j->idem_key = strdup(opts->idem_key);
		j->opts.idem_key = j->idem_key ? j->idem_key : ""; /* an empty key is refused */
	}
	if (sink) {
		j->sink = *sink;
		j->has_sink = 1;
	}
	if (!j->name) {
		job_free(j);
		return rpc_error_json(id, RPC_INTERNAL_ERROR, "tools/call: out of memory");
	}
	return job_start(s, j, mode);
}

/* ---- tasks/get, tasks/update, tasks/result, tasks/list, tasks/cancel ---------- */

/* tasks/result (2025-11-25): what the call would have answered, once
 * task t ended (waiting for that while the request lives). */
static json_t *task_result(struct mcp_session *s, json_t *id, struct mcp_task *t,
			   const struct inflight *f)
{
	struct mcp_tasks *ts = &s->mcp->tasks;
	json_t *resp = NULL, *r;

	pthread_mutex_lock(&ts->lock);
	while (!mcp_task_terminal(t->status) && !ts->stopping && !request_cancelled(f))
		wait_a_while(&ts->changed, &ts->lock);
	if (t->status == TASK_CANCELLED) {
		resp = rpc_error_json(id, RPC_INVALID_REQUEST, "tasks/result: the task was cancelled");
	} else if (t->result) {
		r = json_deep_copy(t->result);
		if (r) {
			if (!json_is_object(json_object_get(r, "_meta")))
				json_object_set_new(r, "_meta", json_object());
			json_object_set_new(json_object_get(r, "_meta"), META_RELATED_TASK,
					    json_pack("{s:s}", "taskId", t->id));
		}
		resp = r ? rpc_result_json(id, r) : NULL;
	} else if (t->error) {
		resp = json_pack("{s:s,s:O,s:O}", "jsonrpc", "2.0", "id", id, "error", t->error);
	} else if (mcp_task_terminal(t->status)) {
		resp = rpc_error_json(id, RPC_INTERNAL_ERROR, "tasks/result: the task has no result");
	}
	pthread_mutex_unlock(&ts->lock);
	return resp; /* NULL: the request was cancelled, or the server stops */
}

/* The task params.taskId names, the principal's: OUT *t (a reference),
 * or the -32602 that answers. */
static json_t *find_task(struct mcp_session *s, json_t *id, const char *method, json_t *params,
			 struct mcp_task **t)
{
	const char *tid = json_string_value(json_object_get(params, "taskId"));
	char text[200];

	*t = NULL;
	if (!tid) {
		snprintf(text, sizeof(text), "%s: \"taskId\" (a string) is required", method);
		return rpc_error_json(id, RPC_INVALID_PARAMS, text);
	}
	*t = mcp_task_find(&s->mcp->tasks, s->principal, tid);
	if (*t)
		return NULL;
	/* another principal's task is no task of this one's */
	snprintf(text, sizeof(text), "%s: Task not found: %.64s (unknown, expired, or not "
		 "this principal's)", method, tid);
	return rpc_error_json(id, RPC_INVALID_PARAMS, text);
}

/* The 2025-11-25 revision's tasks methods (a session of that revision). */
static json_t *do_tasks_legacy(struct mcp_session *s, json_t *id, const char *method,
			       json_t *params, int mode)
{
	struct mcp_tasks *ts = &s->mcp->tasks;
	enum mcp_task_status before;
	struct mcp_task *t;
	struct call_job *j;
	json_t *resp, *r;
	char text[200];
	int bad;

	if (strcmp(method, "tasks/list") == 0) {
		json_t *cursor = json_object_get(params, "cursor");

		if (cursor && !json_is_string(cursor))
			return rpc_error_json(id, RPC_INVALID_PARAMS, "tasks/list: invalid cursor");
		r = mcp_tasks_page(ts, s->principal, json_string_value(cursor), &bad);
		return r ? rpc_result_json(id, r)
			 : rpc_error_json(id, bad ? RPC_INVALID_PARAMS : RPC_INTERNAL_ERROR,
					  bad ? "tasks/list: invalid cursor" : "out of memory");
	}
	if (strcmp(method, "tasks/get") != 0 && strcmp(method, "tasks/result") != 0 &&
	    strcmp(method, "tasks/cancel") != 0) {
		snprintf(text, sizeof(text), "method not found: %.120s", method);
		return rpc_error_json(id, RPC_METHOD_NOT_FOUND, text);
	}
	if ((resp = find_task(s, id, method, params, &t)))
		return resp;
	if (strcmp(method, "tasks/result") == 0) {
		/* it waits for the task's end: in flight, cancellable */
		j = mode == CALL_PLAIN ? NULL : job_new(s, id);
		if (!j) {
			mcp_task_put(ts, t);
			return rpc_error_json(id, RPC_INTERNAL_ERROR, "tasks/result: out of resources");
		}
		j->wait_for = t;
		return job_start(s, j, mode);
	}
	if (strcmp(method, "tasks/cancel") == 0) {
		before = mcp_task_cancel(ts, t);
		if (!mcp_task_terminal(before))
			task_record(s->mcp, s->principal, t->id, "cancelled", NULL);
		if (mcp_task_terminal(before)) {
			mcp_task_put(ts, t);
			snprintf(text, sizeof(text), "Cannot cancel task: already in terminal status "
				 "'%s'", task_status_names[before]);
			return rpc_error_json(id, RPC_INVALID_PARAMS, text);
		}
	}
	pthread_mutex_lock(&ts->lock);
	r = mcp_task_json_locked(t, 0);
	pthread_mutex_unlock(&ts->lock);
	mcp_task_put(ts, t);
	return r ? rpc_result_json(id, r) : rpc_error_json(id, RPC_INTERNAL_ERROR, "out of memory");
}

/* The 2026-07-28 tasks extension's methods: tasks/get (the task, its
 * result, error or inputRequests inline), tasks/update (answers),
 * tasks/cancel (an acknowledgment). Only for a request that declares the
 * extension. */
static json_t *do_tasks_modern(struct mcp_session *s, json_t *id, const char *method,
			       json_t *params, json_t *caps)
{
	struct mcp_tasks *ts = &s->mcp->tasks;
	json_t *resp, *r = NULL, *answers;
	struct mcp_task *t;
	char why[160];

	if (!json_object_get(json_object_get(caps, "extensions"), EXT_TASKS))
		return tasks_needed(id, "Missing required client capability: tasks methods need "
				    "the io.modelcontextprotocol/tasks extension");
	if ((resp = find_task(s, id, method, params, &t)))
		return resp;
	if (strcmp(method, "tasks/get") == 0) {
		pthread_mutex_lock(&ts->lock);
		r = mcp_task_json_locked(t, 1);
		pthread_mutex_unlock(&ts->lock);
	} else if (strcmp(method, "tasks/update") == 0) {
		answers = json_object_get(params, "inputResponses");
		if (!json_is_object(answers)) {
			mcp_task_put(ts, t);
			return rpc_error_json(id, RPC_INVALID_PARAMS, "tasks/update: "
					      "\"inputResponses\" (an object) is required");
		}
		if (mcp_task_answer(ts, t, answers, why, sizeof(why)) < 0) {
			mcp_task_put(ts, t);
			return rpc_error_json(id, RPC_INVALID_PARAMS, why);
		}
		r = json_object();
	} else {
		/* cancelling a finished task changes nothing, and is acknowledged */
		if (!mcp_task_terminal(mcp_task_cancel(ts, t)))
			task_record(s->mcp, s->principal, t->id, "cancelled", NULL);
		r = json_object();
	}
	mcp_task_put(ts, t);
	if (!r)
		return rpc_error_json(id, RPC_INTERNAL_ERROR, "out of memory");
	modern_result(r, 0);
	return rpc_result_json(id, r);
}

static int end_listener(struct mcp_session *s, json_t *rid);

static void do_cancelled(struct mcp_session *s, json_t *params)
{
	json_t *rid = json_object_get(params, "requestId");
	struct inflight *f;

	if (rid && end_listener(s, rid))
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

/* ---- subscriptions/listen (2026-07-28) ---------------------------------------- */

#define META_SUBSCRIPTION "io.modelcontextprotocol/subscriptionId"
#define MAX_LISTENERS 16        /* open subscriptions of one stdio client */
#define MAX_WATCHED 256         /* resourceSubscriptions of one request */

struct listener {
	json_t *id;                    /* the listen request's: the subscription's */
	json_t *filter;                /* what was acknowledged */
	struct listener *next;
};

/* The subset of a notifications filter the server honors: each type the
 * server's capabilities promise (a reload can change any of them). NULL
 * and *why for a malformed filter. */
static json_t *honored_filter(json_t *filter, const char **why)
{
	static const struct {
		const char *field, *cap, *feature;
	} kinds[] = {
		{ "toolsListChanged", "tools", "listChanged" },
		{ "promptsListChanged", "prompts", "listChanged" },
		{ "resourcesListChanged", "resources", "listChanged" },
	};
	json_t *caps, *out, *uris, *u;
	size_t i;

	if (filter && !json_is_object(filter)) {
		*why = "subscriptions/listen: \"notifications\" must be an object";
		return NULL;
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (json_object_get(filter, kinds[i].field) &&
		    !json_is_boolean(json_object_get(filter, kinds[i].field))) {
			*why = "subscriptions/listen: the *ListChanged fields are true or false";
			return NULL;
		}
	uris = json_object_get(filter, "resourceSubscriptions");
	if (uris && (!json_is_array(uris) || json_array_size(uris) > MAX_WATCHED)) {
		*why = "subscriptions/listen: \"resourceSubscriptions\" must be an array of at "
		       "most 256 URIs";
		return NULL;
	}
	json_array_foreach(uris, i, u)
		if (!json_is_string(u) || json_string_length(u) > 4096) {
			*why = "subscriptions/listen: a resource subscription is a URI (a string "
			       "of at most 4096 bytes)";
			return NULL;
		}
	caps = server_capabilities(0, MCP_MODERN);
	out = json_object();
	for (i = 0; out && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (json_is_true(json_object_get(filter, kinds[i].field)) &&
		    json_is_true(json_object_get(json_object_get(caps, kinds[i].cap),
						 kinds[i].feature)))
			json_object_set_new(out, kinds[i].field, json_true());
	if (out && json_array_size(uris) &&
	    json_is_true(json_object_get(json_object_get(caps, "resources"), "subscribe")))
		json_object_set(out, "resourceSubscriptions", uris);
	json_decref(caps);
	if (!out)
		*why = "out of memory";
	return out;
}

/* subscriptions/listen: the acknowledgment goes first, on the request's
 * own stream: over HTTP the sink, which the transport keeps open as the
 * subscription's stream (NULL returned: no response yet); on stdio the
 * session's channel, the subscription kept until the client cancels it
 * or the session ends (then it gets its completion result). */
static json_t *do_listen(struct mcp_session *s, json_t *id, json_t *params,
			 const struct mcp_sink *sink)
{
	const char *why = NULL;
	json_t *filter = honored_filter(json_object_get(params, "notifications"), &why), *ack;
	struct listener *l;
	unsigned n = 0;

	if (!filter)
		return rpc_error_json(id, RPC_INVALID_PARAMS, why);
	ack = json_pack("{s:s,s:s,s:{s:{s:O},s:O}}", "jsonrpc", "2.0", "method",
			"notifications/subscriptions/acknowledged", "params", "_meta",
			META_SUBSCRIPTION, id, "notifications", filter);
	if (!ack) {
		json_decref(filter);
		return rpc_error_json(id, RPC_INTERNAL_ERROR, "out of memory");
	}
	if (sink) {
		json_decref(filter);
		sink->send(sink->ctx, ack);
		return NULL;
	}
	pthread_mutex_lock(&s->lock);
	for (l = s->listeners; l; l = l->next, n++)
		if (json_equal(l->id, id))
			break;
	if (l || n >= MAX_LISTENERS) {
		pthread_mutex_unlock(&s->lock);
		json_decref(filter);
		json_decref(ack);
		return rpc_error_json(id, RPC_INVALID_REQUEST,
				      l ? "subscriptions/listen: that id names an open subscription"
					: "subscriptions/listen: at most 16 open subscriptions");
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		pthread_mutex_unlock(&s->lock);
		json_decref(filter);
		json_decref(ack);
		return rpc_error_json(id, RPC_INTERNAL_ERROR, "out of memory");
	}
	l->id = json_incref(id);
	l->filter = filter;
	l->next = s->listeners;
	s->listeners = l;
	pthread_mutex_unlock(&s->lock);
	send_json(s, ack);
	return NULL;
}

json_t *mcp_listen_complete(json_t *id)
{
	json_t *r = json_pack("{s:{s:O}}", "_meta", META_SUBSCRIPTION, id);

	if (r)
		modern_result(r, 0); /* resultType "complete", who answers */
	return r ? rpc_result_json(id, r) : NULL;
}

static json_t *notification(const char *method, const char *uri, json_t *sub_id)
{
	json_t *n = json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method", method);
	json_t *params = json_object();

	if (uri)
		json_object_set_new(params, "uri", json_string(uri));
	if (sub_id)
		json_object_set_new(params, "_meta", json_pack("{s:O}", META_SUBSCRIPTION, sub_id));
	if (n && json_object_size(params))
		json_object_set(n, "params", params);
	json_decref(params);
	return n;
}

static int listed(json_t *array, const char *s)
{
	json_t *v;
	size_t i;

	json_array_foreach(array, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return 1;
	return 0;
}

json_t *mcp_change_notifications(const struct mcp_change *c, json_t *filter, json_t *sub_id)
{
	static const struct {
		const char *field, *method;
	} lists[] = {
		{ "toolsListChanged", "notifications/tools/list_changed" },
		{ "promptsListChanged", "notifications/prompts/list_changed" },
		{ "resourcesListChanged", "notifications/resources/list_changed" },
	};
	const int changed[] = { c->tools, c->prompts, c->resources };
	json_t *out = json_array(), *u;
	size_t i;

	for (i = 0; out && i < sizeof(lists) / sizeof(lists[0]); i++)
		if (changed[i] && (!filter || json_is_true(json_object_get(filter, lists[i].field))))
			json_array_append_new(out, notification(lists[i].method, NULL, sub_id));
	json_array_foreach(c->updated, i, u)
		if (out && listed(filter ? json_object_get(filter, "resourceSubscriptions") : NULL,
				  json_string_value(u)))
			json_array_append_new(out, notification("notifications/resources/updated",
								json_string_value(u), sub_id));
	return out;
}

void mcp_session_changed(struct mcp_session *s, const struct mcp_change *c)
{
	json_t *all = json_array(), *part, *n, *u;
	struct listener *l;
	size_t i;

	pthread_mutex_lock(&s->lock);
	if (all && s->state == SESSION_READY) {
		/* the session era: every list change, updates it subscribed to */
		part = mcp_change_notifications(c, NULL, NULL);
		json_array_extend(all, part);
		json_decref(part);
		json_array_foreach(c->updated, i, u)
			if (listed(s->subscribed, json_string_value(u)))
				json_array_append_new(all, notification("notifications/resources/updated",
									json_string_value(u), NULL));
	}
	for (l = s->listeners; all && l; l = l->next) {
		part = mcp_change_notifications(c, l->filter, l->id);
		json_array_extend(all, part);
		json_decref(part);
	}
	pthread_mutex_unlock(&s->lock);
	json_array_foreach(all, i, n)
		send_json(s, json_incref(n));
	json_decref(all);
}

/* A cancelled subscription ends without a response; 1 if rid named one. */
static int end_listener(struct mcp_session *s, json_t *rid)
{
	struct listener **p, *l = NULL;

	pthread_mutex_lock(&s->lock);
	for (p = &s->listeners; *p; p = &(*p)->next)
		if (json_equal((*p)->id, rid)) {
			l = *p;
			*p = l->next;
			break;
		}
	pthread_mutex_unlock(&s->lock);
	if (!l)
		return 0;
	json_decref(l->id);
	json_decref(l->filter);
	free(l);
	return 1;
}

/* ---- resources, prompts, completion ------------------------------------------ */

#define RPC_RESOURCE_NOT_FOUND (-32002) /* MCP's code for resources/read */

/* A catalogue answer (JSON text) as the result member key, or the error. */
static json_t *catalog_answer(json_t *id, char *text, const char *key, int code,
			      const struct tg_error *err)
{
	json_t *v = text ? json_loads(text, 0, NULL) : NULL;

	free(text);
	if (!v)
		return rpc_error_json(id, err->code == TG_ERR_NOMEM ? RPC_INTERNAL_ERROR : code,
				      err->msg);
	if (!key)
		return rpc_result_json(id, v);
	return rpc_result_json(id, json_pack("{s:o}", key, v));
}

#define MAX_SUBSCRIBED 256 /* resources/subscribe URIs of one session */

/* resources/subscribe and unsubscribe (the session era): the URIs whose
 * updates a reload reports to this session. Any URI may be watched: a
 * reload may bring the resource. */
static json_t *subscribe(struct mcp_session *s, json_t *id, const char *uri, int on)
{
	json_t *u;
	size_t i;
	int err = 0;

	if (strlen(uri) > 4096)
		return rpc_error_json(id, RPC_INVALID_PARAMS, "\"uri\": longer than 4096 bytes");
	pthread_mutex_lock(&s->lock);
	if (!s->subscribed)
		s->subscribed = json_array();
	json_array_foreach(s->subscribed, i, u)
		if (strcmp(json_string_value(u), uri) == 0)
			break;
	if (!on && i < json_array_size(s->subscribed))
		json_array_remove(s->subscribed, i);
	else if (on && i == json_array_size(s->subscribed))
		err = json_array_size(s->subscribed) >= MAX_SUBSCRIBED ||
		      json_array_append_new(s->subscribed, json_string(uri)) < 0;
	pthread_mutex_unlock(&s->lock);
	return err ? rpc_error_json(id, RPC_INVALID_PARAMS,
				    "resources/subscribe: at most 256 subscriptions a session")
		   : rpc_result_json(id, json_object());
}

static json_t *resources_of(struct mcp_session *s, const struct tg_catalog *cat,
			    const char *method, json_t *id, json_t *params)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));
	struct tg_error err;

	if (strcmp(method, "resources/list") == 0 || strcmp(method, "resources/templates/list") == 0) {
		int templates = method[10] == 't';

		/* one page: a cursor never came from here */
		if (json_object_get(params, "cursor"))
			return rpc_error_json(id, RPC_INVALID_PARAMS, "invalid cursor");
		return catalog_answer(id, tg_catalog_resources_json(cat, templates, &err),
				      templates ? "resourceTemplates" : "resources",
				      RPC_INTERNAL_ERROR, &err);
	}
	if (!uri)
		return rpc_error_json(id, RPC_INVALID_PARAMS, "\"uri\" (a string) is required");
	if (strcmp(method, "resources/read") == 0)
		return catalog_answer(id, tg_catalog_resource_read(cat, uri, &err), "contents",
				      RPC_RESOURCE_NOT_FOUND, &err);
	return subscribe(s, id, uri, strcmp(method, "resources/subscribe") == 0);
}

static json_t *do_resources(struct mcp_session *s, const char *method, json_t *id,
			    json_t *params)
{
	const struct tg_catalog *cat = tg_gate_acquire(s->mcp->gate);
	json_t *resp = resources_of(s, cat, method, id, params);

	tg_gate_release(s->mcp->gate, cat);
	return resp;
}

static json_t *prompts_of(const struct tg_catalog *cat, const char *method, json_t *id,
			  json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	struct tg_error err;
	char *text;

	if (strcmp(method, "prompts/list") == 0) {
		if (json_object_get(params, "cursor"))
			return rpc_error_json(id, RPC_INVALID_PARAMS, "invalid cursor");
		return catalog_answer(id, tg_catalog_prompts_json(cat, &err), "prompts",
				      RPC_INTERNAL_ERROR, &err);
	}
	if (!name)
		return rpc_error_json(id, RPC_INVALID_PARAMS, "\"name\" (a string) is required");
	if (args && !json_is_object(args))
		return rpc_error_json(id, RPC_INVALID_PARAMS, "\"arguments\" must be an object");
	text = args ? json_dumps(args, JSON_COMPACT) : NULL;
	{
		json_t *resp = catalog_answer(id, tg_catalog_prompt_get(cat, name, text, &err), NULL,
					      RPC_INVALID_PARAMS, &err);

		free(text);
		return resp;
	}
}

static json_t *do_prompts(struct mcp_session *s, const char *method, json_t *id, json_t *params)
{
	const struct tg_catalog *cat = tg_gate_acquire(s->mcp->gate);
	json_t *resp = prompts_of(cat, method, id, params);

	tg_gate_release(s->mcp->gate, cat);
	return resp;
}

static json_t *complete_of(const struct tg_catalog *cat, json_t *id, json_t *params)
{
	json_t *ref = json_object_get(params, "ref"), *arg = json_object_get(params, "argument");
	const char *type = json_string_value(json_object_get(ref, "type"));
	const char *aname = json_string_value(json_object_get(arg, "name"));
	const char *value = json_string_value(json_object_get(arg, "value"));
	struct tg_error err;

	if (!type || !aname || !value ||
	    (strcmp(type, "ref/prompt") && strcmp(type, "ref/resource")))
		return rpc_error_json(id, RPC_INVALID_PARAMS,
				      "completion/complete: ref {type: ref/prompt or ref/resource} "
				      "and argument {name, value} are required");
	/* resource templates list no completions: an empty answer */
	return catalog_answer(id,
			      tg_catalog_complete(cat,
						  strcmp(type, "ref/prompt") == 0
							  ? json_string_value(json_object_get(ref, "name"))
							  : NULL,
						  aname, value, &err),
			      "completion", RPC_INVALID_PARAMS, &err);
}

static json_t *do_complete(struct mcp_session *s, json_t *id, json_t *params)
{
	const struct tg_catalog *cat = tg_gate_acquire(s->mcp->gate);
	json_t *resp = complete_of(cat, id, params);

	tg_gate_release(s->mcp->gate, cat);
	return resp;
}

/* The elicitation answer's fields as prompt arguments (strings). */
static json_t *elicited_arguments(json_t *given, json_t *content)
{
	json_t *args = json_is_object(given) ? json_deep_copy(given) : json_object(), *v;
	const char *k;

	json_object_foreach(content, k, v) {
		char *text = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY);

		if (args && !json_object_get(args, k))
			json_object_set_new(args, k, json_string(text ? text : json_string_value(v)));
		free(text);
	}
	return args;
}

/* prompts/get in the modern era: a prompt that asks its user first
 * (docs/contracts.md, "elicit") does it by MRTR, unless the arguments
 * hold every field already. */
static json_t *prompt_get_modern(struct mcp_session *s, json_t *id, json_t *params, json_t *caps)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments"), *elicit, *props, *ask, *v, *resp = NULL;
	const struct tg_catalog *cat;
	struct mrtr *r = NULL;
	char tool[160], why[160], *text;
	const char *k;
	int stop = 0, given = 1;

	if (!name)
		return do_prompts(s, "prompts/get", id, params);
	cat = tg_gate_acquire(s->mcp->gate);
	text = tg_catalog_prompt_elicit(cat, name);
	tg_gate_release(s->mcp->gate, cat);
	elicit = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	props = json_object_get(json_object_get(elicit, "requestedSchema"), "properties");
	json_object_foreach(props, k, v)
		given &= json_is_string(json_object_get(args, k));
	if (!elicit || given) {
		json_decref(elicit);
		return do_prompts(s, "prompts/get", id, params);
	}
	snprintf(tool, sizeof(tool), "prompt:%.140s", name);
	if (mrtr_open(s->mcp, s->principal, tool, params, caps, &r, why, sizeof(why)) < 0) {
		json_decref(elicit);
		return rpc_error_json(id, RPC_INVALID_PARAMS, why);
	}
	ask = json_pack("{s:O,s:O}", "message", json_object_get(elicit, "message"),
			"requestedSchema", json_object_get(elicit, "requestedSchema"));
	text = ask ? mrtr_ask(r, "elicitation/create", ask,
			      json_string_value(json_object_get(elicit, "key")), 0, &stop)
		   : NULL;
	json_decref(ask);
	json_decref(elicit);
	if (stop) {
		resp = mrtr_response(r, id); /* ask the user, then again */
	} else if (text) {
		json_t *answer = json_loads(text, 0, NULL), *result = json_object_get(answer, "result");

		if (!result)
			resp = mrtr_missing_capability(r, id);
		else if (!json_is_string(json_object_get(result, "action")) ||
			 strcmp(json_string_value(json_object_get(result, "action")), "accept") != 0)
			resp = rpc_error_json(id, RPC_INVALID_PARAMS,
					      "prompts/get: the user did not give what the prompt asks");
		else {
			json_t *p2 = json_deep_copy(params);

			if (p2)
				json_object_set_new(p2, "arguments",
						    elicited_arguments(args, json_object_get(result,
											     "content")));
			resp = p2 ? do_prompts(s, "prompts/get", id, p2) : NULL;
			json_decref(p2);
		}
		json_decref(answer);
	}
	free(text);
	mrtr_free(r);
	return resp ? resp : rpc_error_json(id, RPC_INTERNAL_ERROR, "out of memory");
}

/* ---- dispatch -------------------------------------------------------------- */

/* A request of the modern, stateless era: everything it needs is in its
 * own _meta (docs/MCP.md). No session state is read or written, but the
 * session's principal, calls in flight and sink. */
static json_t *handle_modern(struct mcp_session *s, json_t *id, const char *method,
			     json_t *params, json_t *meta, int mode, const struct mcp_sink *sink,
			     const char *scopes)
{
	const char *version = json_string_value(json_object_get(meta, META_VERSION));
	const char *level = json_string_value(json_object_get(meta, META_LOG));
	json_t *resp = NULL, *r;
	size_t i;
	int cacheable = 0;

	if (!version || strcmp(version, MODERN) != 0) {
		json_t *e = json_pack("{s:s,s:O,s:{s:i,s:s,s:{s:[s,s,s,s],s:O}}}", "jsonrpc", "2.0",
				      "id", id, "error", "code", RPC_UNSUPPORTED_VERSION, "message",
				      "Unsupported protocol version", "data", "supported", MODERN,
				      versions[0], versions[1], versions[2], "requested",
				      json_object_get(meta, META_VERSION));
		return e;
	}
	if (!json_is_object(json_object_get(meta, META_CAPS)))
		return rpc_error_json(id, RPC_INVALID_PARAMS,
				      "_meta: " META_CAPS " (an object) is required");
	if (strcmp(method, "server/discover") == 0) {
		r = json_pack("{s:[s,s,s,s],s:o,s:{s:s,s:s,s:s}}", "supportedVersions", MODERN,
			      versions[0], versions[1], versions[2], "capabilities",
			      server_capabilities(0, MODERN), "serverInfo", "name", "toolgate", "title",
			      "toolgate", "version", TOOLGATE_VERSION);
		if (r && s->mcp->instructions)
			json_object_set_new(r, "instructions", json_string(s->mcp->instructions));
		if (r)
			modern_result(r, 1);
		return r ? rpc_result_json(id, r) : NULL;
	}
	if (strcmp(method, "tools/call") == 0) {
		struct call_opts opts = { 1, 0, 99, scopes, NULL, 0, 0, TASK_NEVER, 0, NULL, { { 0 }, { 0 }, 0, "", 0, 0 } };

		/* log messages only when the request asks for them */
		for (i = 0; level && i < sizeof(log_levels) / sizeof(log_levels[0]); i++)
			if (strcmp(level, log_levels[i]) == 0)
				opts.log_at = (int)i;
		return do_tools_call(s, id, params, mode, sink, &opts);
	}
	if (strcmp(method, "tools/list") == 0) {
		resp = do_tools_list(s, id, params, 0);
		cacheable = 1;
	} else if (strcmp(method, "resources/list") == 0 ||
		   strcmp(method, "resources/templates/list") == 0 ||
		   strcmp(method, "resources/read") == 0) {
		resp = do_resources(s, method, id, params);
		cacheable = 1;
		/* resource not found: -32602 in this revision, no more -32002 */
		r = json_object_get(resp, "error");
		if (json_integer_value(json_object_get(r, "code")) == RPC_RESOURCE_NOT_FOUND)
			json_object_set_new(r, "code", json_integer(RPC_INVALID_PARAMS));
	} else if (strcmp(method, "prompts/get") == 0) {
		resp = prompt_get_modern(s, id, params, json_object_get(meta, META_CAPS));
	} else if (strcmp(method, "prompts/list") == 0) {
		resp = do_prompts(s, method, id, params);
		cacheable = strcmp(method, "prompts/list") == 0;
	} else if (strcmp(method, "completion/complete") == 0) {
		resp = do_complete(s, id, params);
	} else if (strcmp(method, "subscriptions/listen") == 0) {
		return do_listen(s, id, params, sink);
	} else if (strcmp(method, "tasks/get") == 0 || strcmp(method, "tasks/update") == 0 ||
		   strcmp(method, "tasks/cancel") == 0) {
		/* tasks/result and tasks/list are gone in this revision */
		return do_tasks_modern(s, id, method, params, json_object_get(meta, META_CAPS));
	} else {
		/* ping, logging/setLevel, resources/subscribe... are gone in
		 * this revision */
		char text[200];

		snprintf(text, sizeof(text), "method not found: %.120s", method);
		return rpc_error_json(id, RPC_METHOD_NOT_FOUND, text);
	}
	r = json_object_get(resp, "result");
	if (json_is_object(r))
		modern_result(r, cacheable);
	return resp;
}

/* The modern era's error codes, which HTTP answers with 400 or 404. */
int mcp_modern_status(json_t *resp)
{
	json_int_t code = json_integer_value(json_object_get(json_object_get(resp, "error"), "code"));

	if (code == RPC_UNSUPPORTED_VERSION || code == RPC_MISSING_CLIENT_CAPABILITY ||
	    code == RPC_HEADER_MISMATCH)
		return 400;
	if (code == RPC_METHOD_NOT_FOUND)
		return 404;
	return 200;
}

/* One message (already parsed): the response to send, or NULL (a
 * notification, a response, a deferred call). */
static json_t *handle_message(struct mcp_session *s, json_t *msg, int mode,
			      const struct mcp_sink *sink, const char *scopes);

/* One message, in a server span when traced: a request's span ends with
 * its answer, here or (a call answered later) with its job. */
static json_t *handle_one(struct mcp_session *s, json_t *msg, int mode,
			  const struct mcp_sink *sink, const char *scopes)
{
	const char *why, *method = json_string_value(json_object_get(msg, "method"));
	json_t *id, *resp;
	enum rpc_kind kind = rpc_classify(msg, &id, &why);
	struct tg_span *outer = request_span;

	if ((kind != RPC_REQUEST && kind != RPC_NOTIFICATION) || !method ||
	    !tg_gate_tracer(s->mcp->gate))
		return handle_message(s, msg, mode, sink, scopes);
	request_span = server_span(s, method, kind == RPC_REQUEST ? id : NULL,
				   json_object_get(msg, "params"));
	resp = handle_message(s, msg, mode, sink, scopes);
	if (request_span)
		server_span_end(request_span, resp);
	request_span = outer;
	return resp;
}

static json_t *handle_message(struct mcp_session *s, json_t *msg, int mode,
			      const struct mcp_sink *sink, const char *scopes)
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
		return handle_modern(s, id, method, params, meta, mode, sink, scopes);
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
		return do_tools_list(s, id, params, older_than_2025_06(s));
	if (strcmp(method, "tools/call") == 0) {
		struct call_opts legacy = { 0, older_than_2025_06(s), -1, scopes, NULL, 0, 0,
					    TASK_NEVER, 0, NULL, { { 0 }, { 0 }, 0, "", 0, 0 } };

		return do_tools_call(s, id, params, mode, sink, &legacy);
	}
	if (strcmp(method, "logging/setLevel") == 0)
		return do_set_level(s, id, params);
	if (strncmp(method, "tasks/", 6) == 0 && strcmp(s->version, TASKS_VERSION) == 0)
		return do_tasks_legacy(s, id, method, params, mode);
	if (strncmp(method, "resources/", 10) == 0 &&
	    (strcmp(method + 10, "list") == 0 || strcmp(method + 10, "templates/list") == 0 ||
	     strcmp(method + 10, "read") == 0 || strcmp(method + 10, "subscribe") == 0 ||
	     strcmp(method + 10, "unsubscribe") == 0))
		return do_resources(s, method, id, params);
	if (strcmp(method, "prompts/list") == 0 || strcmp(method, "prompts/get") == 0)
		return do_prompts(s, method, id, params);
	if (strcmp(method, "completion/complete") == 0)
		return do_complete(s, id, params);
	{
		char text[200];

		snprintf(text, sizeof(text), "method not found: %.120s", method);
		return rpc_error_json(id, RPC_METHOD_NOT_FOUND, text);
	}
}

json_t *mcp_session_dispatch(struct mcp_session *s, json_t *msg, const struct mcp_sink *sink,
			     const char *scopes)
{
	json_t *out, *m, *resp;
	size_t i;

	if (!json_is_array(msg))
		return handle_one(s, msg, CALL_HERE, sink, scopes);
	/* batches: only the 2025-03-26 revision had them */
	if (strcmp(s->version, "2025-03-26") != 0 || json_array_size(msg) == 0)
		return rpc_error_json(json_null(), RPC_INVALID_REQUEST,
				      json_array_size(msg)
					      ? "batches are not supported in this protocol revision"
					      : "an empty batch");
	out = json_array();
	json_array_foreach(msg, i, m) {
		resp = handle_one(s, m, CALL_PLAIN, sink, scopes);
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
	json_error_t jerr;
	json_t *msg, *resp;
	char why[200];

	if (len > MCP_MAX_MESSAGE) {
		snprintf(why, sizeof(why), "message larger than %u bytes", MCP_MAX_MESSAGE);
		send_text(s, rpc_error(json_null(), RPC_INVALID_REQUEST, why));
		return;
	}
	msg = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!msg) {
		snprintf(why, sizeof(why), "parse error: %s (byte %d)", jerr.text, jerr.position);
		send_text(s, rpc_error(json_null(), RPC_PARSE_ERROR, why));
		return;
	}
	if (json_is_array(msg)) {
		resp = mcp_session_dispatch(s, msg, NULL, s->scopes);
		if (resp)
			send_json(s, resp);
		json_decref(msg);
		return;
	}
	resp = handle_one(s, msg, CALL_THREAD, NULL, s->scopes);
	if (resp)
		send_json(s, resp);
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
	struct listener *l;

	/* open subscriptions end gracefully: each gets its completion result */
	while ((l = s->listeners)) {
		s->listeners = l->next;
		send_json(s, mcp_listen_complete(l->id));
		json_decref(l->id);
		json_decref(l->filter);
		free(l);
	}

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
	pthread_mutex_unlock(&s->lock);
	json_decref(s->client_capabilities);
	json_decref(s->subscribed);
	free(s->scopes);
	pthread_cond_destroy(&s->changed);
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
