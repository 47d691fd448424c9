/*
 * An interactive tool's questions to its client (docs/MCP.md): sampling,
 * elicitation and roots. In the session era, a request sent on the
 * call's sink whose answer (a response the dispatch routes here) the run
 * waits for; in the modern era, by MRTR (mrtr.c); in a call that runs as
 * a task, through the task's inputRequests and tasks/update.
 *
 * It asks only what the client declared it can answer, and never waits
 * past the end of the call, of the task or of the session.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp/session_int.h"

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
char *tool_ask(void *ctx, const char *request, const volatile int *stop)
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
		session_wait_a_while(&s->changed, &s->lock);
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
char *tool_ask_modern(void *ctx, const char *request, const volatile int *stop)
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
char *task_ask(void *ctx, const char *request, const volatile int *stop)
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
		session_wait_a_while(&ts->changed, &ts->lock);
	if (breath_answered(t)) {
		/* one line per question, in the order asked */
		json_array_foreach(t->breath, i, k) {
			line = json_dumps(json_object_get(t->answers, json_string_value(k)),
					  JSON_COMPACT);
			if (line) {
				size_t add = strlen(line) + 2;
				char *grown = realloc(text, len + add);

				if (grown) {
					text = grown;
					len += (size_t)snprintf(text + len, add, "%s%s",
								len ? "\n" : "", line);
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
void deliver_answer(struct mcp_session *s, json_t *msg)
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
