/*
 * A tools/call as an MCP task, and the tasks methods (docs/MCP.md): the
 * 2025-11-25 revision's (the client asks with params.task; tasks/get,
 * tasks/list, tasks/result, tasks/cancel) and the 2026-07-28 extension's
 * (the server makes a task of a call that outlasts TASK_AFTER_MS;
 * tasks/get, tasks/update, tasks/cancel). The registry and the shapes are
 * task.c's.
 *
 * A task's run is the task's from the start, on its own session with no
 * client; it never outlives the server (mcp_tasks_stop) and is never
 * seen by another principal.
 */
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mcp/session_int.h"
#include "toolgate/catalog.h"

#define META_RELATED_TASK "io.modelcontextprotocol/related-task"

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
	json_t *resp = tools_call_response(&t->s, t->req_id, t->name, t->args, &f, t->mrtr, t->token,
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

/* The run of task t takes what job j had: the call, its options, where
 * its reports go; its own session, as s's principal. */
static void task_take_job(struct mcp_session *s, struct mcp_task *t, struct call_job *j)
{
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
}

/* Start task t's run (added, not listed). A 2025-11-25 task (now) is one
 * from the start: listed, its creation recorded, before its run begins,
 * so that a run that ends at once (the gate refusing the call) finds it
 * listed and settles it. Listed once the run had begun, such a task could
 * end unlisted and stay working for ever, counted toward TASK_MAX_LIVE.
 * -1 when the run could not start: t has left the registry, failed. */
static int task_start(struct mcp_session *s, struct mcp_task *t, int now)
{
	struct mcp_tasks *ts = &s->mcp->tasks;
	pthread_attr_t attr;
	pthread_t th;
	int started, listed;

	if (now && t->name) {
		t->sink.send = NULL; /* the run reports to nobody */
		task_record(s->mcp, s->principal, t->id, "created", t->name);
		pthread_mutex_lock(&ts->lock);
		mcp_task_list_locked(ts, t);
		pthread_mutex_unlock(&ts->lock);
	}
	pthread_mutex_lock(&ts->lock);
	t->refs++; /* the run's */
	ts->running++;
	pthread_mutex_unlock(&ts->lock);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	started = t->name && pthread_create(&th, &attr, task_runner, t) == 0;
	pthread_attr_destroy(&attr);
	if (started)
		return 0;
	mcp_session_release(&t->s, 0);
	pthread_mutex_lock(&ts->lock);
	listed = t->listed;
	ts->running--;
	t->refs--;
	t->done = 1;
	mcp_task_settle_locked(t, NULL);
	mcp_task_drop_locked(ts, t);
	pthread_cond_broadcast(&ts->changed);
	pthread_mutex_unlock(&ts->lock);
	if (listed)
		task_record(s->mcp, s->principal, t->id, "failed", t->name);
	return -1;
}

/* Job j's call as a task (j->opts.task): TASK_NOW answers with the task
 * at once; TASK_MAYBE waits up to TASK_AFTER_MS for the run and answers
 * as a request would when it ended (or stopped to ask by MRTR), else
 * makes the call a task and answers with that. The run is the task's
 * from the start, so that nothing of it depends on the request's life. */
json_t *task_call(struct mcp_session *s, struct call_job *j)
{
	struct mcp_tasks *ts = &s->mcp->tasks;
	struct mcp_task *t = mcp_task_new(s->principal, j->opts.modern, j->opts.task_ttl_ms);
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
	task_take_job(s, t, j);
	if (task_start(s, t, j->opts.task == TASK_NOW) < 0) {
		mcp_task_put(ts, t);
		return rpc_error_json(j->id, RPC_INTERNAL_ERROR, "tools/call: out of resources");
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
json_t *task_mode(struct mcp_session *s, json_t *id, const char *name, json_t *params,
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

/* ---- tasks/get, tasks/update, tasks/result, tasks/list, tasks/cancel ---------- */

/* tasks/result (2025-11-25): what the call would have answered, once
 * task t ended (waiting for that while the request lives). */
json_t *task_result(struct mcp_session *s, json_t *id, struct mcp_task *t,
		    const struct inflight *f)
{
	struct mcp_tasks *ts = &s->mcp->tasks;
	json_t *resp = NULL, *r;

	pthread_mutex_lock(&ts->lock);
	while (!mcp_task_terminal(t->status) && !ts->stopping && !request_cancelled(f))
		session_wait_a_while(&ts->changed, &ts->lock);
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
json_t *task_methods_legacy(struct mcp_session *s, json_t *id, const char *method,
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
		j = mode == CALL_PLAIN ? NULL : tools_job_new(s, id);
		if (!j) {
			mcp_task_put(ts, t);
			return rpc_error_json(id, RPC_INTERNAL_ERROR, "tasks/result: out of resources");
		}
		j->wait_for = t;
		return tools_job_start(s, j, mode);
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
json_t *task_methods_modern(struct mcp_session *s, json_t *id, const char *method,
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
