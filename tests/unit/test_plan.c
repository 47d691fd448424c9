/* Unit tests: a plan (src/gate/saga.c) through the gate's pipeline, its
 * executor spelt "plan" and, the older way, a builtin named "saga"; the
 * two run alike. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "toolgate/catalog.h"
#include "toolgate/gate.h"
#include "toolgate/store.h"
#include "unit.h"

/* The example catalogue's plan.run and plan.undo, their executors
 * replaced by run's and undo's, and a read tool echo: loaded from a
 * directory of dir's. OUT *out. */
static int plan_catalog(const char *dir, const char *run, const char *undo,
			struct tg_catalog **out)
{
	static const char *const files[] = { "plan.run-1.0.0.json", "plan.undo-1.0.0.json" };
	const char *exec[] = { run, undo };
	char path[160];
	struct tg_error err;
	size_t i;

	snprintf(path, sizeof(path), "%s/cat", dir);
	if (mkdir(path, 0700) < 0)
		return -1;
	for (i = 0; i < 2; i++) {
		json_t *k;
		int rc;

		snprintf(path, sizeof(path), "examples/catalog/%s", files[i]);
		k = json_load_file(path, 0, NULL);
		if (!k || json_object_set_new(k, "executor", json_loads(exec[i], 0, NULL)) < 0)
			return -1;
		snprintf(path, sizeof(path), "%s/cat/%s", dir, files[i]);
		rc = json_dump_file(k, path, 0);
		json_decref(k);
		if (rc < 0)
			return -1;
	}
	snprintf(path, sizeof(path), "%s/cat/echo.json", dir);
	{
		FILE *f = fopen(path, "w");

		if (!f)
			return -1;
		fputs("{\"name\":\"echo\",\"version\":\"1.0.0\",\"description\":\"d\","
		      "\"authority\":\"read\",\"owner\":{\"team\":\"t\",\"contact\":\"c\"},"
		      "\"input_schema\":{\"type\":\"object\"},"
		      "\"executor\":{\"kind\":\"builtin\",\"name\":\"echo\"}}", f);
		if (fclose(f) != 0)
			return -1;
	}
	snprintf(path, sizeof(path), "%s/cat", dir);
	return tg_catalog_load_dir(path, NULL, out, &err);
}

/* One call of plan.run by "agent" with steps (a JSON array): OUT *r. */
static int call_plan(struct tg_gate *g, const char *steps, int dry, const char *key,
		     struct tg_call_result *r)
{
	struct tg_call call;
	struct tg_error err;
	char args[512];

	snprintf(args, sizeof(args), "{\"steps\":%s}", steps);
	memset(&call, 0, sizeof(call));
	call.principal = "agent";
	call.tool = "plan.run";
	call.arguments = args;
	call.arguments_len = strlen(args);
	call.cancel_fd = -1;
	call.dry_run = dry;
	call.idempotency_key = key;
	memset(r, 0, sizeof(*r));
	return tg_gate_call(g, &call, r, &err);
}

/* The ticket of a held call's answer (structured JSON text), copied into
 * out; "" when it was not held. */
static const char *held_ticket(const char *text, char *out, size_t size)
{
	json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
	json_t *e = json_object_get(doc, "error");
	const char *code = json_string_value(json_object_get(e, "code"));
	const char *id = json_string_value(json_object_get(e, "ticket"));

	snprintf(out, size, "%s", code && strcmp(code, "awaiting_approval") == 0 && id ? id : "");
	json_decref(doc);
	return out;
}

/* Each id in text (32 hex digits: a ticket's, a plan's, a step's call)
 * made x's: a run's ids are its own. */
static void without_ids(char *text)
{
	size_t n = 0;

	for (; *text; text++) {
		n = strchr("0123456789abcdef", *text) ? n + 1 : 0;
		if (n == 32)
			memset(text - 31, 'x', 32);
	}
}

#define STEPS "[{\"tool\":\"echo\",\"arguments\":{\"said\":\"hello\"}}]"

/* What a plan spelt by run (and its undo by undo) answers: its dry run,
 * a plan holding a plan refused, a held call, approved, run once, then
 * undone. OUT *seen, the answers one after another, ids and times taken
 * out (malloc'd). */
static int plan_answers(const char *run, const char *undo, char **seen)
{
	struct tg_catalog *cat = NULL;
	struct tg_store *store = NULL;
	struct tg_gate_options opts = { 0 };
	struct tg_gate *g = NULL;
	struct tg_call_result r = { 0 };
	struct tg_error err = { 0 };
	char dir[64], path[96], ticket[64], *ans = NULL, *all = NULL;
	size_t len = 0;
	FILE *f;
	int rc = -1;

	*seen = NULL;
	if (unit_tmpdir(dir, "plan") < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/state", dir);
	f = open_memstream(&all, &len);
	if (!f || plan_catalog(dir, run, undo, &cat) < 0 || tg_store_open(path, &store, &err) < 0)
		goto out;
	opts.store = store;
	if (tg_gate_new(cat, &opts, &g, &err) < 0)
		goto out;

	/* the dry run: every step's, nothing held */
	if (call_plan(g, STEPS, 1, NULL, &r) < 0 || r.is_error)
		goto out;
	fprintf(f, "dry %s\n", r.structured_json ? r.structured_json : r.content_json);
	tg_call_result_release(&r);
	/* a plan's step cannot be a plan, nor a plan's undoing */
	if (call_plan(g, "[{\"tool\":\"plan.undo\",\"arguments\":{\"call_id\":\""
		      "00000000000000000000000000000000\"}}]", 1, NULL, &r) < 0 || !r.is_error)
		goto out;
	fprintf(f, "nested %s\n", r.content_json);
	tg_call_result_release(&r);
	/* held for a person, approved, run under its key */
	if (call_plan(g, STEPS, 0, "k1", &r) < 0 || !r.is_error)
		goto out;
	held_ticket(r.structured_json, ticket, sizeof(ticket));
	tg_call_result_release(&r);
	snprintf(path, sizeof(path), "/admin/tickets/%s/approve", ticket);
	if (!ticket[0] || tg_gate_admin(g, "ops", "plan.run:approve echo:approve", "POST", path,
					"", 0, &ans) != 200)
		goto out;
	if (call_plan(g, STEPS, 0, "k1", &r) < 0 || r.is_error)
		goto out;
	fprintf(f, "ran %s\n", r.structured_json);
	tg_call_result_release(&r);
	/* undone by plan.undo, the plan's compensation */
	if (tg_gate_rollback(g, ticket, "ops", 0, &r, &err) != 0 || r.is_error)
		goto out;
	fprintf(f, "undone %s\n", r.structured_json ? r.structured_json : r.content_json);
	tg_call_result_release(&r);
	rc = 0;
out:
	if (rc < 0)
		fprintf(stderr, "plan %s: %s\n", run, r.content_json ? r.content_json : err.msg);
	free(ans);
	tg_gate_free(g);
	tg_catalog_free(cat);
	tg_store_close(store);
	unit_rmtree(dir);
	if (f && fclose(f) == 0 && rc == 0) {
		without_ids(all);
		*seen = all;
		all = NULL;
	}
	free(all);
	return rc;
}

/* A plan runs through the gate the same whichever spelling its contract
 * uses. */
static int plan_spellings(void)
{
	char *now = NULL, *older = NULL;

	CHECK(plan_answers("{\"kind\":\"plan\"}", "{\"kind\":\"plan.undo\"}", &now) == 0);
	CHECK(plan_answers("{\"kind\":\"builtin\",\"name\":\"saga\"}",
			   "{\"kind\":\"builtin\",\"name\":\"saga.undo\"}", &older) == 0);
	CHECK(strstr(now, "dry {\"steps\":[{\"tool\":\"echo\",\"version\":\"1.0.0\","
		     "\"preview\":{\"said\":\"hello\"}}],\"dry_run\":true}\n"));
	CHECK(strstr(now, "nested [{\"type\":\"text\",\"text\":\"step 1: a plan cannot hold a "
		     "plan\"}]\n"));
	CHECK(strstr(now, "ran {\"plan\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\",\"state\":"
		     "\"done\","));
	CHECK(strstr(now, "undone {\"plan\":\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\",\"state\":"
		     "\"compensated\","));
	if (strcmp(now, older) != 0)
		fprintf(stderr, "spelt plan:\n%sspelt saga:\n%s", now, older);
	CHECK(strcmp(now, older) == 0);
	free(now);
	free(older);
	return 0;
}

const struct unit_test plan_tests[] = {
	{ "plan/spellings", plan_spellings },
	UNIT_TESTS_END,
};
