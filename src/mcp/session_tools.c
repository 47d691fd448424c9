/*
 * tools/list with cursor pagination, and tools/call through the gate
 * (docs/MCP.md, docs/PIPELINE.md): the call's _meta checked, its progress
 * and log messages reported, its answer shaped for the revision.
 *
 * A tools/call runs on a thread of its own (at most max_inflight at once;
 * past that the session reads no further until one ends), so that pings
 * and cancellations are answered while a tool runs. A cancelled call's
 * sandbox is killed through its cancel pipe and, as the specification
 * asks, the request gets no response. A call that runs as a task is
 * handed to session_tasks.c; a tool's question to its client to
 * session_ask.c. Nothing here decides what a call may do: the gate does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mcp/session_int.h"
#include "util/json_span.h"
#include "util/json_wide.h"

#define PAGE_SIZE 50 /* tools per tools/list page */

#define META_IDEMPOTENCY "dev.toolgate/idempotencyKey" /* a write call's (docs/PIPELINE.md) */
#define META_DRY_RUN "dev.toolgate/dryRun"         /* show, do not do (docs/PIPELINE.md) */
#define META_WAIT "dev.toolgate/approvalWait"      /* ms a held call waits for its decision */

json_t *tools_list(struct mcp_session *s, json_t *id, json_t *params, int old_shapes,
		   const char *scopes)
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
	/* a listing's first page, just after serve started, waits a little
	 * (at most 2 s since) for the upstreams still listing their tools:
	 * a client that lists once as it connects sees them */
	if (!cursor)
		tg_gate_await_upstreams(s->mcp->gate);
	/* only what the caller may call (docs/AUTH.md): with a policy, no
	 * scopes given is none held; the cursor counts this list */
	if (s->mcp->policy && !scopes)
		scopes = "";
	text = tg_gate_tools_json_for(s->mcp->gate, scopes, NULL, &err);
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

void session_sink_send(void *ctx, json_t *msg)
{
	session_send_json(ctx, msg);
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

		for (i = 0; level && i < SESSION_NLOG_LEVELS; i++)
			if (strcmp(level, session_log_levels[i]) == 0)
				break;
		pthread_mutex_lock(&r->s->lock);
		at = r->log_at >= 0 ? r->log_at : r->s->log_level;
		pthread_mutex_unlock(&r->s->lock);
		if (level && i < SESSION_NLOG_LEVELS && (int)i >= at &&
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

/* ---- tools/call ------------------------------------------------------------- */

/* _meta[META_IDEMPOTENCY] of a result: {"key": key, "derived": true}. */
static void meta_derived_key(json_t *result, const char *key)
{
	json_t *meta = json_object_get(result, "_meta");

	if (!json_is_object(meta)) {
		meta = json_object();
		if (json_object_set_new(result, "_meta", meta) < 0)
			return;
	}
	json_object_set_new(meta, META_IDEMPOTENCY,
			    json_pack("{s:s,s:b}", "key", key, "derived", 1));
}

/* Run a tools/call through the gate; its response. f: the call's
 * cancellation (NULL in a batch); mrtr: a modern call's questions. */
json_t *tools_call_response(struct mcp_session *s, json_t *id, const char *name,
			    const char *args, struct inflight *f, struct mrtr *mrtr,
			    json_t *token, const struct mcp_sink *sink,
			    const struct call_opts *opts)
{
	struct reporter rep = { s, opts->log_at, { session_sink_send, s }, token, 0, 0,
				mrtr, f ? f->cancel[1] : -1, 0, opts->run_of };
	struct tg_call call = { s->principal, name, args, args ? strlen(args) : 0,
				f ? f->cancel[0] : -1, NULL, tool_event, &rep,
				opts->run_of ? task_ask : mrtr ? tool_ask_modern : tool_ask,
				&rep.suspended, opts->scopes, opts->idem_key,
				opts->dry_run, opts->approval_wait_ms,
				opts->run_of ? &opts->run_of->withdraw : NULL, NULL,
				/* a session that ends (its client closed stdin)
				 * ends its calls' approval waits: they are
				 * answered, and the server exits */
				&s->closing };
	struct tg_call_result r;
	struct tg_error err;
	struct tg_trace_ctx here;
	json_t *result, *content, *structured = NULL;

	if (sink)
		rep.sink = *sink;
	/* the execute_tool span's parent: the request's span */
	if (opts->trace.valid) {
		call.trace = &opts->trace;
	} else if (session_request_span) {
		tg_span_context(session_request_span, &here);
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
	/* a held call without a key of its client's: the key the gate derived,
	 * which the host's retry of the same call finds (docs/PIPELINE.md) */
	if (result && r.derived_key[0])
		meta_derived_key(result, r.derived_key);
	tg_call_result_release(&r);
	if (result && opts->modern)
		modern_result(result, 0);
	return result ? rpc_result_json(id, result)
		      : rpc_error_json(id, RPC_INTERNAL_ERROR, "tools/call: out of memory");
}

/* 1 if the read end of a cancel pipe holds nothing (it is O_NONBLOCK). */
static int pipe_empty(int fd)
{
	char b;

	return read(fd, &b, 1) < 0 && errno == EAGAIN;
}

/* f's cancel pipe kept for s's next call (under s->lock), when nothing
 * was ever written to it and there is room (else job_free closes it). A
 * pipe made and closed was three system calls a call. */
static void spare_keep(struct mcp_session *s, struct inflight *f)
{
	if (f->cancelled || s->nspare == sizeof(s->spare) / sizeof(s->spare[0]) ||
	    !pipe_empty(f->cancel[0]))
		return;
	/* an idle session keeps its spares till it ends: a ceiling for all */
	if (__atomic_add_fetch(&s->mcp->spares, 1, __ATOMIC_RELAXED) > MCP_SPARES_MAX) {
		__atomic_sub_fetch(&s->mcp->spares, 1, __ATOMIC_RELAXED);
		return;
	}
	s->spare[s->nspare][0] = f->cancel[0];
	s->spare[s->nspare][1] = f->cancel[1];
	s->nspare++;
	f->cancel[0] = f->cancel[1] = -1;
}

int session_spare_take(struct mcp_session *s, int fd[2])
{
	fd[0] = -1;
	if (!s->nspare)
		return 0;
	__atomic_sub_fetch(&s->mcp->spares, 1, __ATOMIC_RELAXED);
	s->nspare--;
	fd[0] = s->spare[s->nspare][0];
	fd[1] = s->spare[s->nspare][1];
	return 1;
}

/* f (under s->lock) leaves the calls in flight: from here nobody writes
 * its cancel pipe, which may be kept (spare_keep). */
static void inflight_remove(struct mcp_session *s, struct inflight *f)
{
	struct inflight **p;

	for (p = &s->inflight; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			break;
		}
	spare_keep(s, f);
	s->ninflight--;
	/* one slot is free: one waiter for it is woken (a broadcast woke
	 * every request of a shared session's waiting to take it); the
	 * release waits for the last call on changed */
	pthread_cond_signal(&s->slot);
	if (s->closing)
		pthread_cond_broadcast(&s->changed);
}

static void job_free(struct call_job *j)
{
	if (j->f->cancel[0] >= 0) {
		close(j->f->cancel[0]);
		close(j->f->cancel[1]);
	}
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
	session_span_end(j->span, NULL); /* not answered */
	free(j->name);
	free(j->args);
	free(j);
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
	session_span_end(j->span, cancelled ? NULL : resp);
	j->span = NULL;
	if (j->wait_for) {
		mcp_task_put(&s->mcp->tasks, j->wait_for);
		j->wait_for = NULL;
	}
	/* a cancelled request gets no response */
	if (cancelled)
		json_decref(resp);
	else
		session_send_json(s, resp);
	pthread_mutex_lock(&s->lock);
	inflight_remove(s, j->f);
	pthread_mutex_unlock(&s->lock);
	job_free(j);
	return NULL;
}

/* A job for request id: its cancel pipe made; NULL out of resources. */
struct call_job *tools_job_new(struct mcp_session *s, json_t *id)
{
	struct call_job *j = calloc(1, sizeof(*j));

	if (j)
		j->f = calloc(1, sizeof(*j->f));
	if (j && j->f) {
		pthread_mutex_lock(&s->lock);
		session_spare_take(s, j->f->cancel);
		pthread_mutex_unlock(&s->lock);
	}
	/* non-blocking: inflight_remove asks whether it holds anything */
	if (!j || !j->f ||
	    (j->f->cancel[0] < 0 && pipe2(j->f->cancel, O_CLOEXEC | O_NONBLOCK) < 0)) {
		if (j)
			free(j->f);
		free(j);
		return NULL;
	}
	j->s = s;
	j->id = json_incref(id);
	j->f->id = json_incref(id);
	j->span = session_request_span; /* it ends with the job's answer */
	session_request_span = NULL;
	return j;
}

/* What job j answers: a task's result it waits for, a call as a task, or
 * a call. */
static json_t *job_answer(struct call_job *j)
{
	if (j->wait_for)
		return task_result(j->s, j->id, j->wait_for, j->f);
	if (j->opts.task != TASK_NEVER)
		return task_call(j->s, j);
	return tools_call_response(j->s, j->id, j->name, j->args, j->f, j->mrtr, j->token,
				   j->has_sink ? &j->sink : NULL, &j->opts);
}

/* Run job j (taken) as mode says: in flight, cancellable, in this thread
 * (CALL_HERE: its answer returned) or on one of its own (CALL_THREAD: the
 * answer is sent from there, NULL returned). */
json_t *tools_job_start(struct mcp_session *s, struct call_job *j, int mode)
{
	pthread_attr_t attr;
	pthread_t t;
	json_t *resp;

	pthread_mutex_lock(&s->lock);
	/* backpressure: past max_inflight, the reader waits for a slot */
	while (s->ninflight >= s->mcp->max_inflight)
		pthread_cond_wait(&s->slot, &s->lock);
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
			session_span_end(j->span, resp);
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

void session_exact_arguments(const struct mcp_text *raw, struct call_opts *o)
{
	size_t at, start, end;

	o->exact_args = NULL;
	o->exact_len = 0;
	if (!raw || !raw->text)
		return;
	/* jansson refused duplicate names in the message: the members found
	 * as written are the ones it read */
	at = json_span_member(raw->text, raw->len, 0, "params");
	at = at ? json_span_member(raw->text, raw->len, at, "arguments") : 0;
	end = at ? json_span_value(raw->text, raw->len, at, &start) : 0;
	if (end && json_wide_has_long(raw->text + start, end - start)) {
		o->exact_args = raw->text + start;
		o->exact_len = end - start;
	}
}

/* tools/call: checked here, then run as mode says: CALL_THREAD on a
 * thread of its own (the answer is sent from there: NULL returned),
 * CALL_HERE in this thread, cancellable (HTTP: the answer goes back on
 * the request that asked), CALL_PLAIN in this thread (a batch). */
json_t *tools_call(struct mcp_session *s, json_t *id, json_t *params, int mode,
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
	size_t len;

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
	/* a client that says nothing (a stock host) waits as the policy says */
	with_key.approval_wait_ms = wait ? (unsigned)json_integer_value(wait)
					 : TG_APPROVAL_WAIT_POLICY;
	/* a batch's calls run one after the other: none may stall the rest */
	if (mode == CALL_PLAIN)
		with_key.approval_wait_ms = 0;
	/* half the session's calls in flight already: a wait nobody asked
	 * for answers at once, so that waiting calls never take every slot
	 * and stop the session reading (its cancellations included) */
	if (!wait && mode != CALL_PLAIN) {
		pthread_mutex_lock(&s->lock);
		if (s->ninflight >= s->mcp->max_inflight / 2)
			with_key.approval_wait_ms = 0;
		pthread_mutex_unlock(&s->lock);
	}
	if (args && !json_is_object(args))
		return rpc_error_json(id, RPC_INVALID_PARAMS,
				      "tools/call: \"arguments\" must be an object");
	if (token && !json_is_string(token) && !json_is_integer(token))
		token = NULL; /* the specification: a string or an integer */
	/* it is copied into every progress notification: bounded */
	if (json_is_string(token) && json_string_length(token) > 256)
		return rpc_error_json(id, RPC_INVALID_PARAMS,
				      "tools/call: _meta.progressToken longer than 256 bytes");
	/* a batch (2025-03-26) has no tasks */
	if (mode != CALL_PLAIN && (refused = task_mode(s, id, name, params, &with_key)))
		return refused;
	/* as written where jansson would round or refuse a number of them */
	if (args && opts->exact_args)
		text = json_wide_text(opts->exact_args, opts->exact_len, &len);
	else
		text = args ? json_dumps(args, JSON_COMPACT) : NULL;
	if (args && !text)
		return rpc_error_json(id, RPC_INTERNAL_ERROR, "tools/call: out of memory");
	if (mode == CALL_PLAIN) {
		json_t *resp = tools_call_response(s, id, name, text, NULL, NULL, token, sink, opts);

		free(text);
		return resp;
	}
	j = tools_job_new(s, id);
	if (!j) {
		free(text);
		return rpc_error_json(id, RPC_INTERNAL_ERROR, "tools/call: out of resources");
	}
	j->args = text;
	if (opts->modern) {
		/* its questions to the client go by MRTR: a retry's requestState
		 * and inputResponses are checked before anything runs */
		char why[160];

		if (mrtr_open(s->mcp, s->principal, name, params, opts->exact_args,
			      opts->exact_len, caps, &j->mrtr, why, sizeof(why)) < 0) {
			job_free(j);
			return rpc_error_json(id, RPC_INVALID_PARAMS, why);
		}
		j->caps = json_incref(caps);
	}
	j->name = strdup(name);
	j->token = json_incref(token);
	j->opts = *opts;
	j->opts.exact_args = NULL; /* the message's: gone once this returns */
	j->opts.exact_len = 0;
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
	return tools_job_start(s, j, mode);
}
