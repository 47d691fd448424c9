/*
 * MCP tasks (docs/MCP.md): the registry of the calls clients follow by a
 * task id, and the shapes the two revisions give them. A task lives in
 * memory, bound to the principal that made it: another principal asking
 * for its id hears that there is no such task, as the specification asks
 * of an authorization context. What a task's call changed is durable in
 * the store (its idempotency key, its ticket); the task itself is not: a
 * restarted gateway knows no task, and the client retries under the same
 * idempotency key instead.
 *
 * Locking: one lock for every task's fields (a task's run, the requests
 * that read or answer it, the registry's list), and one condition
 * broadcast on any change; a principal has at most TASK_MAX_LIVE tasks
 * running, so the contention stays small.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mcp/mcp_int.h"
#include "util/sodium.h"

static const char *const status_names[] = { "working", "input_required", "completed", "failed",
					    "cancelled" };

#define PAGE 50 /* tasks per tasks/list page */

int64_t mcp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int mcp_task_terminal(enum mcp_task_status status)
{
	return status == TASK_COMPLETED || status == TASK_FAILED || status == TASK_CANCELLED;
}

void mcp_tasks_init(struct mcp_tasks *ts)
{
	memset(ts, 0, sizeof(*ts));
	pthread_mutex_init(&ts->lock, NULL);
	pthread_cond_init(&ts->changed, NULL);
}

static void task_free(struct mcp_task *t)
{
	if (t->cancel[0] >= 0)
		close(t->cancel[0]);
	if (t->cancel[1] >= 0)
		close(t->cancel[1]);
	free(t->message);
	json_decref(t->result);
	json_decref(t->error);
	json_decref(t->asked);
	json_decref(t->answers);
	json_decref(t->breath);
	json_decref(t->caps);
	json_decref(t->sync_resp);
	json_decref(t->req_id);
	json_decref(t->token);
	free(t->name);
	free(t->args);
	free(t->scopes);
	free(t->idem_key);
	mrtr_free(t->mrtr);
	pthread_mutex_destroy(&t->sink_lock);
	free(t);
}

struct mcp_task *mcp_task_new(const char *principal, int modern, int64_t ttl_ms)
{
	struct mcp_task *t = calloc(1, sizeof(*t));
	unsigned char rnd[16];

	if (!t)
		return NULL;
	t->cancel[0] = t->cancel[1] = -1;
	pthread_mutex_init(&t->sink_lock, NULL);
	t->asked = json_object();
	t->answers = json_object();
	t->breath = json_array();
	if (!t->asked || !t->answers || !t->breath || pipe2(t->cancel, O_CLOEXEC) < 0) {
		task_free(t);
		return NULL;
	}
	/* unguessable: the id is all a client needs to follow its task */
	randombytes_buf(rnd, sizeof(rnd));
	sodium_bin2hex(t->id, sizeof(t->id), rnd, sizeof(rnd));
	snprintf(t->principal, sizeof(t->principal), "%s", principal);
	t->modern = modern;
	t->status = TASK_WORKING;
	t->created_ms = t->updated_ms = mcp_now_ms();
	if (ttl_ms <= 0)
		ttl_ms = TASK_TTL_MS;
	t->ttl_ms = ttl_ms < TASK_MIN_TTL_MS ? TASK_MIN_TTL_MS
					     : ttl_ms > TASK_MAX_TTL_MS ? TASK_MAX_TTL_MS : ttl_ms;
	t->refs = 1;
	return t;
}

void mcp_task_put_locked(struct mcp_task *t)
{
	if (--t->refs == 0)
		task_free(t);
}

void mcp_task_put(struct mcp_tasks *ts, struct mcp_task *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&ts->lock);
	mcp_task_put_locked(t);
	pthread_mutex_unlock(&ts->lock);
}

/* Finished tasks past their ttl leave the registry. */
static void sweep_locked(struct mcp_tasks *ts)
{
	int64_t now = mcp_now_ms();
	struct mcp_task **p = &ts->list, *t;

	while ((t = *p))
		if (t->listed && mcp_task_terminal(t->status) && t->created_ms + t->ttl_ms <= now) {
			*p = t->next;
			t->listed = 0;
			mcp_task_put_locked(t);
		} else {
			p = &t->next;
		}
}

unsigned mcp_tasks_live_locked(struct mcp_tasks *ts, const char *principal)
{
	struct mcp_task *t;
	unsigned n = 0;

	/* runs not listed yet count too: each may become a task */
	for (t = ts->list; t; t = t->next)
		n += !mcp_task_terminal(t->status) && strcmp(t->principal, principal) == 0;
	return n;
}

int mcp_task_add_locked(struct mcp_tasks *ts, struct mcp_task *t)
{
	if (ts->stopping || mcp_tasks_live_locked(ts, t->principal) >= TASK_MAX_LIVE)
		return -1;
	t->refs++;
	t->next = ts->list;
	ts->list = t;
	return 0;
}

void mcp_task_drop_locked(struct mcp_tasks *ts, struct mcp_task *t)
{
	struct mcp_task **p;

	for (p = &ts->list; *p; p = &(*p)->next)
		if (*p == t) {
			*p = t->next;
			t->listed = 0;
			mcp_task_put_locked(t);
			return;
		}
}

void mcp_task_list_locked(struct mcp_tasks *ts, struct mcp_task *t)
{
	struct mcp_task **p, **oldest = NULL, *x;
	unsigned n = 0;

	sweep_locked(ts);
	/* past TASK_MAX_KEPT, the principal's oldest finished task goes */
	for (p = &ts->list; *p; p = &(*p)->next)
		if ((*p)->listed && strcmp((*p)->principal, t->principal) == 0) {
			n++;
			if (mcp_task_terminal((*p)->status))
				oldest = p;
		}
	if (n >= TASK_MAX_KEPT && oldest) {
		x = *oldest;
		*oldest = x->next;
		x->listed = 0;
		mcp_task_put_locked(x);
	}
	t->listed = 1;
	pthread_cond_broadcast(&ts->changed);
}

struct mcp_task *mcp_task_find(struct mcp_tasks *ts, const char *principal, const char *id)
{
	struct mcp_task *t;

	pthread_mutex_lock(&ts->lock);
	sweep_locked(ts);
	for (t = ts->list; t; t = t->next)
		if (t->listed && strcmp(t->id, id) == 0 && strcmp(t->principal, principal) == 0) {
			t->refs++;
			break;
		}
	pthread_mutex_unlock(&ts->lock);
	return t;
}

static json_t *iso_time(int64_t ms)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	char text[40], out[48];

	gmtime_r(&s, &tm);
	strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out, sizeof(out), "%s.%03dZ", text, (int)(ms % 1000));
	return json_string(out);
}

json_t *mcp_task_json_locked(const struct mcp_task *t, int detailed)
{
	json_t *j = json_pack("{s:s,s:s,s:o,s:o,s:I,s:i}", "taskId", t->id, "status",
			      status_names[t->status], "createdAt", iso_time(t->created_ms),
			      "lastUpdatedAt", iso_time(t->updated_ms),
			      t->modern ? "ttlMs" : "ttl", (json_int_t)t->ttl_ms,
			      t->modern ? "pollIntervalMs" : "pollInterval", TASK_POLL_MS);

	if (!j)
		return NULL;
	if (t->message)
		json_object_set_new(j, "statusMessage", json_string(t->message));
	if (!detailed)
		return j;
	if (t->status == TASK_COMPLETED && t->result)
		json_object_set(j, "result", t->result);
	else if (t->status == TASK_FAILED && t->error)
		json_object_set(j, "error", t->error);
	else if (t->status == TASK_INPUT_REQUIRED)
		/* a copy: the run changes it while the answer is written out */
		json_object_set_new(j, "inputRequests", json_deep_copy(t->asked));
	return j;
}

void mcp_task_set_message_locked(struct mcp_task *t, const char *text)
{
	size_t n = text ? strnlen(text, 1024) : 0;

	/* cut on a character's first byte: the rest stays UTF-8 */
	if (text && text[n])
		while (n && ((unsigned char)text[n] & 0xc0) == 0x80)
			n--;

	free(t->message);
	t->message = text ? malloc(n + 1) : NULL;
	if (t->message) {
		memcpy(t->message, text, n);
		t->message[n] = 0;
	}
}

void mcp_task_set_locked(struct mcp_tasks *ts, struct mcp_task *t, enum mcp_task_status status)
{
	t->status = status;
	t->updated_ms = mcp_now_ms();
	pthread_cond_broadcast(&ts->changed);
}

/* The first text of a tool result's content: a failed task's message. */
static const char *first_text(json_t *result)
{
	json_t *c = json_array_get(json_object_get(result, "content"), 0);

	return json_string_value(json_object_get(c, "text"));
}

void mcp_task_settle_locked(struct mcp_task *t, json_t *resp)
{
	json_t *result = json_object_get(resp, "result"), *error = json_object_get(resp, "error");
	enum mcp_task_status to;

	if (t->status == TASK_CANCELLED) {
		/* it stays cancelled, whatever the run did after */
		json_decref(resp);
		return;
	}
	json_decref(t->result);
	json_decref(t->error);
	t->result = t->error = NULL;
	if (json_is_object(result)) {
		/* the 2026 extension: a tool's own error is a completed task
		 * with isError; 2025-11-25 counts it as failed */
		int failed = !t->modern && json_is_true(json_object_get(result, "isError"));

		t->result = json_incref(result);
		json_object_del(t->result, "resultType");
		to = failed ? TASK_FAILED : TASK_COMPLETED;
		mcp_task_set_message_locked(t, failed ? first_text(result) : NULL);
	} else {
		t->error = json_is_object(error)
				   ? json_incref(error)
				   : json_pack("{s:i,s:s}", "code", RPC_INTERNAL_ERROR, "message",
					       "the task's call ended without an answer");
		to = TASK_FAILED;
		mcp_task_set_message_locked(t, json_string_value(json_object_get(t->error, "message")));
	}
	json_decref(resp);
	t->status = to;
	t->updated_ms = mcp_now_ms();
}

enum mcp_task_status mcp_task_cancel(struct mcp_tasks *ts, struct mcp_task *t)
{
	enum mcp_task_status before;

	pthread_mutex_lock(&ts->lock);
	before = t->status;
	if (!mcp_task_terminal(before)) {
		mcp_task_set_message_locked(t, "cancelled by the client");
		mcp_task_set_locked(ts, t, TASK_CANCELLED);
		/* the run stops (a sandbox is killed, an approval withdrawn) */
		t->withdraw = 1; /* the client's own: a pending approval is withdrawn */
		if (write(t->cancel[1], "x", 1) < 0) {
			/* only a closed pipe fails, and the run's is open */
		}
	}
	pthread_mutex_unlock(&ts->lock);
	return before;
}

int mcp_task_answer(struct mcp_tasks *ts, struct mcp_task *t, json_t *responses, char *why,
		    size_t len)
{
	const char *key;
	json_t *v;

	json_object_foreach(responses, key, v)
		if (!json_is_object(v)) {
			snprintf(why, len, "tasks/update: inputResponses[\"%.64s\"] must be an object",
				 key);
			return -1;
		}
	pthread_mutex_lock(&ts->lock);
	json_object_foreach(responses, key, v) {
		/* only an open question's; others are ignored, as the extension says */
		if (!json_object_get(t->asked, key))
			continue;
		json_object_set_new(t->answers, key, json_pack("{s:O}", "result", v));
		json_object_del(t->asked, key);
	}
	pthread_cond_broadcast(&ts->changed);
	pthread_mutex_unlock(&ts->lock);
	return 0;
}

json_t *mcp_tasks_page(struct mcp_tasks *ts, const char *principal, const char *cursor,
		       int *bad)
{
	json_t *all = json_array(), *page = json_array(), *out;
	struct mcp_task *t;
	size_t start = 0, i;

	*bad = 0;
	pthread_mutex_lock(&ts->lock);
	sweep_locked(ts);
	for (t = ts->list; t && all; t = t->next)
		if (t->listed && strcmp(t->principal, principal) == 0)
			json_array_insert_new(all, 0, mcp_task_json_locked(t, 0)); /* oldest first */
	pthread_mutex_unlock(&ts->lock);
	if (!all || !page) {
		json_decref(all);
		json_decref(page);
		return NULL;
	}
	if (cursor) {
		/* opaque to the client: the id of the last task it was given */
		for (i = 0; i < json_array_size(all); i++)
			if (strcmp(json_string_value(json_object_get(json_array_get(all, i), "taskId")),
				   cursor) == 0)
				break;
		if (i == json_array_size(all)) {
			*bad = 1;
			json_decref(all);
			json_decref(page);
			return NULL;
		}
		start = i + 1;
	}
	for (i = start; i < json_array_size(all) && i < start + PAGE; i++)
		json_array_append(page, json_array_get(all, i));
	out = json_pack("{s:o}", "tasks", page);
	if (out && i < json_array_size(all))
		json_object_set(out, "nextCursor",
				json_object_get(json_array_get(all, i - 1), "taskId"));
	json_decref(all);
	return out;
}

void mcp_tasks_stop(struct mcp_tasks *ts)
{
	struct mcp_task *t;

	pthread_mutex_lock(&ts->lock);
	ts->stopping = 1;
	/* every run stops, listed or not (nothing is withdrawn: a pending
	 * approval stays pending, for a retry under the same key) */
	for (t = ts->list; t; t = t->next)
		if (!t->done && write(t->cancel[1], "x", 1) < 0)
			continue;
	pthread_cond_broadcast(&ts->changed);
	while (ts->running)
		pthread_cond_wait(&ts->changed, &ts->lock);
	while ((t = ts->list)) {
		ts->list = t->next;
		t->listed = 0;
		mcp_task_put_locked(t);
	}
	pthread_mutex_unlock(&ts->lock);
	pthread_cond_destroy(&ts->changed);
	pthread_mutex_destroy(&ts->lock);
}
