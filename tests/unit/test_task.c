/* Unit tests: the MCP task registry (src/mcp/task.c): principals kept
 * apart, the shapes of both revisions, how a run's end settles a task,
 * answers, cancellation, pages, expiry and the per-principal bound. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp_int.h"
#include "unit.h"

/* A listed task of principal, finished when done; the caller's reference
 * dropped (the registry holds it). NULL when the registry refuses it. */
static struct mcp_task *task_of(struct mcp_tasks *ts, const char *principal, int modern,
				int done)
{
	struct mcp_task *t = mcp_task_new(principal, modern, 0);
	int rc;

	if (!t)
		return NULL;
	pthread_mutex_lock(&ts->lock);
	rc = mcp_task_add_locked(ts, t);
	if (rc == 0)
		mcp_task_list_locked(ts, t);
	if (rc == 0 && done)
		mcp_task_settle_locked(t, json_loads("{\"result\":{\"content\":[]}}", 0, NULL));
	pthread_mutex_unlock(&ts->lock);
	mcp_task_put(ts, t);
	return rc == 0 ? t : NULL;
}

static struct mcp_task *listed(struct mcp_tasks *ts, const char *principal, int modern)
{
	return task_of(ts, principal, modern, 0);
}

/* At most TASK_MAX_LIVE unfinished tasks a principal, counted whether
 * listed or not; a stopping registry takes none. */
static int live_bound(void)
{
	struct mcp_tasks ts;
	struct mcp_task *hidden = mcp_task_new("agent", 1, 0);
	int i;

	mcp_tasks_init(&ts);
	CHECK(hidden);
	pthread_mutex_lock(&ts.lock);
	CHECK(mcp_task_add_locked(&ts, hidden) == 0);
	pthread_mutex_unlock(&ts.lock);
	/* not listed: counted, but nobody can find it */
	CHECK(mcp_task_find(&ts, "agent", hidden->id) == NULL);
	for (i = 1; i < TASK_MAX_LIVE; i++)
		CHECK(listed(&ts, "agent", 1));
	CHECK(!listed(&ts, "agent", 1));
	CHECK(listed(&ts, "bob", 1));
	pthread_mutex_lock(&ts.lock);
	mcp_task_drop_locked(&ts, hidden);
	pthread_mutex_unlock(&ts.lock);
	CHECK(listed(&ts, "agent", 1));
	mcp_task_put(&ts, hidden);
	mcp_tasks_stop(&ts);
	return 0;
}

static int bound_to_principal(void)
{
	struct mcp_tasks ts;
	struct mcp_task *t, *got;

	mcp_tasks_init(&ts);
	t = listed(&ts, "agent", 1);
	CHECK(t && strlen(t->id) == 32);
	got = mcp_task_find(&ts, "agent", t->id);
	CHECK(got == t);
	mcp_task_put(&ts, got);
	/* another principal's task is no task of this one's */
	CHECK(mcp_task_find(&ts, "bob", t->id) == NULL);
	CHECK(mcp_task_find(&ts, "agent", "0123") == NULL);
	pthread_mutex_lock(&ts.lock);
	CHECK(mcp_tasks_live_locked(&ts, "agent") == 1);
	CHECK(mcp_tasks_live_locked(&ts, "bob") == 0);
	pthread_mutex_unlock(&ts.lock);
	mcp_tasks_stop(&ts);
	return 0;
}

static int shapes(void)
{
	struct mcp_tasks ts;
	struct mcp_task *m, *l;
	json_t *jm, *jl;

	mcp_tasks_init(&ts);
	m = listed(&ts, "agent", 1);
	l = listed(&ts, "agent", 0);
	CHECK(m && l);
	pthread_mutex_lock(&ts.lock);
	jm = mcp_task_json_locked(m, 1);
	jl = mcp_task_json_locked(l, 0);
	pthread_mutex_unlock(&ts.lock);
	/* 2026-07-28: ttlMs and pollIntervalMs; 2025-11-25: ttl, pollInterval */
	CHECK(json_integer_value(json_object_get(jm, "ttlMs")) == TASK_TTL_MS);
	CHECK(json_integer_value(json_object_get(jm, "pollIntervalMs")) == TASK_POLL_MS);
	CHECK(!json_object_get(jm, "ttl") && !json_object_get(jm, "pollInterval"));
	CHECK(json_integer_value(json_object_get(jl, "ttl")) == TASK_TTL_MS);
	CHECK(strcmp(json_string_value(json_object_get(jl, "status")), "working") == 0);
	CHECK(strlen(json_string_value(json_object_get(jl, "createdAt"))) == 24);
	CHECK(!json_object_get(jm, "result") && !json_object_get(jm, "inputRequests"));
	json_decref(jm);
	json_decref(jl);
	mcp_tasks_stop(&ts);
	return 0;
}

static int ttl_clamped(void)
{
	struct mcp_tasks ts;
	struct mcp_task *a = mcp_task_new("p", 0, 5), *b = mcp_task_new("p", 0, 1LL << 50);

	mcp_tasks_init(&ts);
	CHECK(a && b);
	CHECK(a->ttl_ms == TASK_MIN_TTL_MS && b->ttl_ms == TASK_MAX_TTL_MS);
	mcp_task_put(&ts, a);
	mcp_task_put(&ts, b);
	mcp_tasks_stop(&ts);
	return 0;
}

/* A tool's error: completed with isError (2026-07-28), failed (2025-11-25);
 * a JSON-RPC error: failed with it; a cancelled task stays cancelled. */
static int settled(void)
{
	struct mcp_tasks ts;
	struct mcp_task *m, *l, *e, *c;
	const char *tool_error = "{\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"no\"}],"
				 "\"isError\":true,\"resultType\":\"complete\"}}";
	json_t *j;

	mcp_tasks_init(&ts);
	m = listed(&ts, "agent", 1);
	l = listed(&ts, "agent", 0);
	e = listed(&ts, "agent", 1);
	c = listed(&ts, "agent", 1);
	CHECK(m && l && e && c);
	CHECK(mcp_task_cancel(&ts, c) == TASK_WORKING);
	CHECK(mcp_task_cancel(&ts, c) == TASK_CANCELLED);
	pthread_mutex_lock(&ts.lock);
	mcp_task_settle_locked(m, json_loads(tool_error, 0, NULL));
	mcp_task_settle_locked(l, json_loads(tool_error, 0, NULL));
	mcp_task_settle_locked(e, json_loads("{\"error\":{\"code\":-32021,\"message\":\"m\"}}", 0,
					     NULL));
	mcp_task_settle_locked(c, json_loads(tool_error, 0, NULL));
	CHECK(m->status == TASK_COMPLETED && l->status == TASK_FAILED);
	CHECK(l->message && strcmp(l->message, "no") == 0);
	CHECK(e->status == TASK_FAILED && c->status == TASK_CANCELLED);
	j = mcp_task_json_locked(m, 1);
	CHECK(json_is_true(json_object_get(json_object_get(j, "result"), "isError")));
	CHECK(!json_object_get(json_object_get(j, "result"), "resultType"));
	json_decref(j);
	j = mcp_task_json_locked(e, 1);
	CHECK(json_integer_value(json_object_get(json_object_get(j, "error"), "code")) == -32021);
	CHECK(!json_object_get(j, "result"));
	json_decref(j);
	mcp_task_settle_locked(m, NULL); /* a run that ended without an answer */
	CHECK(m->status == TASK_FAILED && m->error);
	pthread_mutex_unlock(&ts.lock);
	mcp_tasks_stop(&ts);
	return 0;
}

static int answers(void)
{
	struct mcp_tasks ts;
	struct mcp_task *t;
	json_t *r;
	char why[160];

	mcp_tasks_init(&ts);
	t = listed(&ts, "agent", 1);
	CHECK(t);
	json_object_set_new(t->asked, "a", json_pack("{s:s}", "method", "elicitation/create"));
	json_object_set_new(t->asked, "b", json_pack("{s:s}", "method", "elicitation/create"));
	/* a subset first; an unknown key is ignored; a non-object refused */
	r = json_pack("{s:{s:s},s:{}}", "a", "action", "accept", "zzz");
	CHECK(mcp_task_answer(&ts, t, r, why, sizeof(why)) == 0);
	json_decref(r);
	CHECK(!json_object_get(t->asked, "a") && json_object_get(t->asked, "b"));
	CHECK(json_object_get(t->answers, "a") && !json_object_get(t->answers, "zzz"));
	r = json_pack("{s:i}", "b", 1);
	CHECK(mcp_task_answer(&ts, t, r, why, sizeof(why)) < 0 && strstr(why, "\"b\""));
	json_decref(r);
	CHECK(json_object_get(t->asked, "b"));
	mcp_tasks_stop(&ts);
	return 0;
}

static int pages(void)
{
	struct mcp_tasks ts;
	json_t *p, *q;
	int bad, i;

	mcp_tasks_init(&ts);
	for (i = 0; i < 60; i++)
		CHECK(task_of(&ts, "agent", 0, 1));
	CHECK(listed(&ts, "bob", 0));
	p = mcp_tasks_page(&ts, "agent", NULL, &bad);
	CHECK(p && json_array_size(json_object_get(p, "tasks")) == 50);
	CHECK(json_is_string(json_object_get(p, "nextCursor")));
	q = mcp_tasks_page(&ts, "agent", json_string_value(json_object_get(p, "nextCursor")),
			   &bad);
	CHECK(q && json_array_size(json_object_get(q, "tasks")) == 10);
	CHECK(!json_object_get(q, "nextCursor"));
	json_decref(p);
	json_decref(q);
	CHECK(!mcp_tasks_page(&ts, "agent", "nope", &bad) && bad);
	p = mcp_tasks_page(&ts, "bob", NULL, &bad);
	CHECK(p && json_array_size(json_object_get(p, "tasks")) == 1);
	json_decref(p);
	mcp_tasks_stop(&ts);
	return 0;
}

/* Past its ttl a finished task is forgotten, a running one is not; past
 * TASK_MAX_KEPT the principal's oldest finished task goes. */
static int expiry_and_bound(void)
{
	struct mcp_tasks ts;
	struct mcp_task *done, *running, *first, *got;
	char first_id[33], done_id[33];
	int i;

	mcp_tasks_init(&ts);
	done = listed(&ts, "agent", 1);
	running = listed(&ts, "agent", 1);
	CHECK(done && running);
	memcpy(done_id, done->id, sizeof(done_id)); /* done is freed when it expires */
	pthread_mutex_lock(&ts.lock);
	mcp_task_settle_locked(done, json_loads("{\"result\":{\"content\":[]}}", 0, NULL));
	done->created_ms -= done->ttl_ms + 1;
	running->created_ms -= running->ttl_ms + 1;
	pthread_mutex_unlock(&ts.lock);
	CHECK(mcp_task_find(&ts, "agent", done_id) == NULL);
	got = mcp_task_find(&ts, "agent", running->id);
	CHECK(got == running);
	mcp_task_put(&ts, got);

	first = listed(&ts, "bob", 1);
	CHECK(first);
	memcpy(first_id, first->id, sizeof(first_id));
	pthread_mutex_lock(&ts.lock);
	mcp_task_settle_locked(first, json_loads("{\"result\":{\"content\":[]}}", 0, NULL));
	pthread_mutex_unlock(&ts.lock);
	for (i = 1; i < TASK_MAX_KEPT; i++)
		CHECK(task_of(&ts, "bob", 1, 1));
	got = mcp_task_find(&ts, "bob", first_id);
	CHECK(got);
	mcp_task_put(&ts, got);
	CHECK(task_of(&ts, "bob", 1, 1));
	CHECK(mcp_task_find(&ts, "bob", first_id) == NULL);
	mcp_tasks_stop(&ts);
	return 0;
}

const struct unit_test task_tests[] = {
	{ "task/bound_to_principal", bound_to_principal },
	{ "task/live_bound", live_bound },
	{ "task/shapes", shapes },
	{ "task/ttl_clamped", ttl_clamped },
	{ "task/settled", settled },
	{ "task/answers", answers },
	{ "task/pages", pages },
	{ "task/expiry_and_bound", expiry_and_bound },
	UNIT_TESTS_END,
};
