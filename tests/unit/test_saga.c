/* Unit tests: plans (src/gate/saga.c; docs/PIPELINE.md, "Sagas") through
 * a gate on a real store and audit log (gatefix.h): a plan approved and
 * run, its steps' records and its log in the store's sagas; a plan
 * refused for a step's scope, before and after its approval; a plan
 * whose step fails, undone; and plans a dead gateway left running or
 * compensating, driven on by tg_gate_resume_sagas. test_plan.c holds the
 * executor's two spellings. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gatefix.h"
#include "unit.h"

#define W(name, comp)                                                                       \
	"{\"name\":\"" name "\",\"version\":\"1.0.0\"," FIX_OWNER ",\"authority\":\"write\","  \
	"\"dry_run\":\"supported\",\"resumable\":true,\"compensation\":" comp ","           \
	"\"input_schema\":{\"type\":\"object\"}," FIX_ECHO "}"

static const char *const contracts[] = {
	"@examples/catalog/plan.run-1.0.0.json",
	"@examples/catalog/plan.undo-1.0.0.json",
	W("w.a", "{\"tool\":\"w.undo@1\"}"),
	W("w.undo", "{\"irreversible\":\"it is the undoing\"}"),
	"{\"name\":\"echo\",\"version\":\"1.0.0\"," FIX_OWNER ",\"authority\":\"read\","
	"\"input_schema\":{\"type\":\"object\"}," FIX_ECHO "}",
	NULL,
};

/* capped's rate lets a plan of two w.a steps show its preview (two
 * calls) and run its first step, not its second. */
#define POLICY "{\"audience\":\"gw\",\"max_token_ttl\":\"1h\",\"principals\":{"           \
	"\"agent\":{\"scopes\":[\"plan.*:write\",\"w.*:write\",\"echo:read\"]},"            \
	"\"capped\":{\"scopes\":[\"plan.*:write\",\"w.*:write\"],\"rate\":\"3/m\"},"        \
	"\"alice\":{\"scopes\":[\"*:approve\"]}}}"

#define SCOPES "plan.*:write w.*:write echo:read"
#define PLAN "{\"steps\":[{\"tool\":\"w.a\",\"arguments\":{\"n\":1}},"                     \
	"{\"tool\":\"echo\",\"arguments\":{\"said\":\"x\"}}]}"
#define PLAN_W2 "{\"steps\":[{\"tool\":\"w.a\",\"arguments\":{\"n\":1}},"                  \
	"{\"tool\":\"w.a\",\"arguments\":{\"n\":2}}]}"

/* A call of plan.run by principal with scopes under key: its answer's
 * code and ticket (code "" for a success). */
static int plan(struct fix *f, const char *principal, const char *scopes, const char *args,
		char *code, char *ticket, struct tg_call_result *r)
{
	struct fix_call c = { principal, "plan.run", args, scopes, "p1", NULL, 0 };
	struct tg_error err;

	if (fix_call(f, &c, r, &err) < 0) {
		fprintf(stderr, "# %s\n", err.msg);
		return -1;
	}
	fix_error_code(r, code, ticket);
	return 0;
}

/* principal's plan held, approved by alice: its ticket into id. */
static int held_and_approved(struct fix *f, const char *principal, const char *scopes,
			     const char *args, char *id)
{
	struct tg_call_result r;
	struct tg_error err;
	char code[64];

	if (plan(f, principal, scopes, args, code, id, &r) < 0)
		return -1;
	tg_call_result_release(&r);
	if (strcmp(code, "awaiting_approval") != 0) {
		fprintf(stderr, "# plan answered %s, not held\n", code);
		return -1;
	}
	return tg_store_ticket_decide(f->store, id, "alice", 1, NULL, (int64_t)time(NULL), &err);
}

/* The string member key of r is want. */
static int member_is(json_t *r, const char *key, const char *want)
{
	const char *v = json_string_value(json_object_get(r, key));

	return v && strcmp(v, want) == 0;
}

/* The call record of tool with outcome that is the plan's step n. */
static json_t *step_record(json_t *recs, const char *tool, const char *outcome, size_t n)
{
	size_t i;
	json_t *r;

	json_array_foreach(recs, i, r)
		if (member_is(r, "kind", "call") && member_is(r, "tool", tool) &&
		    member_is(r, "outcome", outcome) &&
		    json_integer_value(json_object_get(r, "plan_step")) == (json_int_t)n)
			return r;
	return NULL;
}

/* A plan of a write and a read, approved as one and run: its log in the
 * store (every step done, each under a call id of its own), a record for
 * each step's preview and run naming the plan; rolled back, its write
 * step undone by its compensation, its read left alone. */
static int run_and_records(void)
{
	struct tg_call_result r;
	struct tg_ticket t;
	struct tg_saga s;
	struct tg_error err;
	char code[64], id[64], ticket[64], step1[33], step2[33];
	struct fix_spec spec = { "saga-run", contracts, POLICY, TG_ANOMALY_DEFAULT, NULL };
	struct fix f;
	json_t *recs, *rec, *planrec;

	CHECK(fix_open(&f, &spec) == 0);
	CHECK(held_and_approved(&f, "agent", SCOPES, PLAN, id) == 0);
	CHECK(tg_store_ticket_get(f.store, id, (int64_t)time(NULL), &t, &err) == 0);
	CHECK(t.covers && strcmp(t.covers, "w.a echo") == 0);
	tg_ticket_release(&t);
	CHECK(plan(&f, "agent", SCOPES, PLAN, code, ticket, &r) == 0 && !r.is_error);
	CHECK(strstr(r.structured_json, "\"state\":\"done\""));
	tg_call_result_release(&r);

	CHECK(tg_store_saga_get(f.store, id, &s, &err) == 0);
	CHECK(s.state == TG_SAGA_DONE && s.n == 2);
	CHECK(strcmp(s.steps[0].tool, "w.a@1.0.0") == 0 && s.steps[0].state == TG_STEP_DONE &&
	      strcmp(s.steps[0].arguments, "{\"n\":1}") == 0);
	CHECK(strcmp(s.steps[1].tool, "echo@1.0.0") == 0 && s.steps[1].state == TG_STEP_DONE);
	CHECK(strlen(s.steps[0].call_id) == 32 && strcmp(s.steps[0].call_id, s.steps[1].call_id));
	memcpy(step1, s.steps[0].call_id, sizeof(step1));
	memcpy(step2, s.steps[1].call_id, sizeof(step2));
	tg_saga_release(&s);

	/* rolled back: the write's step undone, the read's left done */
	CHECK(tg_gate_rollback(f.gate, id, "alice", 0, &r, &err) == 0 && !r.is_error);
	tg_call_result_release(&r);
	CHECK(tg_store_saga_get(f.store, id, &s, &err) == 0);
	CHECK(s.state == TG_SAGA_COMPENSATED && s.steps[0].state == TG_STEP_COMPENSATED &&
	      s.steps[1].state == TG_STEP_DONE);
	tg_saga_release(&s);
	fix_close(&f);

	CHECK((recs = fix_records(f.log)) != NULL);
	CHECK(fix_count(recs, "call", "plan.run", "held", NULL) == 1);
	CHECK(fix_count(recs, "call", "plan.run", "ok", &planrec) == 1);
	CHECK(member_is(planrec, "call_id", id));
	/* the preview: each step's dry run, before the plan had an id */
	CHECK((rec = step_record(recs, "w.a", "dry_run", 1)) != NULL);
	CHECK(!json_object_get(rec, "plan") && !json_object_get(rec, "call_id"));
	CHECK(step_record(recs, "echo", "dry_run", 2) != NULL);
	/* the run: each step's record names the plan, by id and by hash */
	CHECK((rec = step_record(recs, "w.a", "ok", 1)) != NULL);
	CHECK(member_is(rec, "plan", id) && member_is(rec, "call_id", step1) &&
	      member_is(rec, "principal", "agent"));
	CHECK(member_is(rec, "plan_args_sha256",
			json_string_value(json_object_get(planrec, "args_sha256"))));
	CHECK((rec = step_record(recs, "echo", "ok", 2)) != NULL);
	CHECK(member_is(rec, "plan", id) && member_is(rec, "call_id", step2));
	/* the undoing: the write's compensation, under its step's call id */
	CHECK((rec = step_record(recs, "w.undo", "ok", 1)) != NULL);
	CHECK(json_is_true(json_object_get(rec, "compensation")) &&
	      member_is(rec, "call_id", step1) && member_is(rec, "plan", id));
	CHECK(fix_count(recs, "call", "w.undo", NULL, NULL) == 1);
	CHECK(fix_count(recs, "call", "plan.undo", "rolled_back", NULL) == 1);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* A step the caller's scopes do not allow refuses the plan, naming the
 * step: before approval (its preview: no ticket, no step run), and after
 * it when the caller no longer holds the scope (no step run, no log). */
static int step_refused_for_scope(void)
{
	struct fix_spec spec = { "saga-scope", contracts, POLICY, TG_ANOMALY_DEFAULT, NULL };
	struct tg_call_result r;
	struct tg_ticket *all = NULL, t;
	struct tg_saga s;
	struct tg_error err;
	char code[64], id[64], ticket[64];
	struct fix f;
	size_t n = 1;
	json_t *recs;

	CHECK(fix_open(&f, &spec) == 0);
	CHECK(plan(&f, "agent", "plan.*:write w.*:write", PLAN, code, id, &r) == 0 && r.is_error);
	CHECK(strcmp(code, "forbidden") == 0 && !id[0]);
	CHECK(strstr(r.content_json, "step 2: the caller may not call echo (it needs the scope "
		     "echo:read)"));
	tg_call_result_release(&r);
	CHECK(tg_store_ticket_list(f.store, -1, (int64_t)time(NULL), &all, &n, &err) == 0 && n == 0);
	free(all);

	/* held and approved with the scope; retried without it */
	CHECK(held_and_approved(&f, "agent", SCOPES, PLAN, id) == 0);
	CHECK(plan(&f, "agent", "plan.*:write w.*:write", PLAN, code, ticket, &r) == 0);
	CHECK(r.is_error && strstr(r.content_json, "step 2: the caller may not call echo"));
	tg_call_result_release(&r);
	CHECK(tg_store_saga_get(f.store, id, &s, &err) == 1);
	CHECK(tg_store_ticket_get(f.store, id, (int64_t)time(NULL), &t, &err) == 0 &&
	      t.state == TG_TICKET_FAILED);
	tg_ticket_release(&t);
	fix_close(&f);

	CHECK((recs = fix_records(f.log)) != NULL);
	CHECK(fix_count(recs, "call", "plan.run", "dry_run_failed", NULL) == 1);
	CHECK(fix_count(recs, "call", "plan.run", "tool_error", NULL) == 1);
	/* only the approved plan's preview ran steps, as dry runs */
	CHECK(fix_count(recs, "call", "w.a", NULL, NULL) == 1 &&
	      fix_count(recs, "call", "w.a", "dry_run", NULL) == 1);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* A step that fails (refused for its principal's rate) fails the plan:
 * the steps before it are undone, newest first, and so is the failed one
 * (it may have taken effect); the plan ends compensated. */
static int step_fails_undone(void)
{
	struct fix_spec spec = { "saga-fail", contracts, POLICY, TG_ANOMALY_DEFAULT, NULL };
	struct tg_call_result r;
	struct tg_saga s;
	struct tg_error err;
	char code[64], id[64], ticket[64];
	struct fix f;
	json_t *recs, *rec;
	size_t i;

	CHECK(fix_open(&f, &spec) == 0);
	CHECK(held_and_approved(&f, "capped", "plan.*:write w.*:write", PLAN_W2, id) == 0);
	CHECK(plan(&f, "capped", "plan.*:write w.*:write", PLAN_W2, code, ticket, &r) == 0);
	CHECK(r.is_error && strstr(r.structured_json, "\"state\":\"compensated\""));
	tg_call_result_release(&r);
	CHECK(tg_store_saga_get(f.store, id, &s, &err) == 0);
	CHECK(s.state == TG_SAGA_COMPENSATED && s.n == 2);
	CHECK(s.steps[0].state == TG_STEP_COMPENSATED && s.steps[1].state == TG_STEP_COMPENSATED);
	tg_saga_release(&s);
	fix_close(&f);

	CHECK((recs = fix_records(f.log)) != NULL);
	CHECK(step_record(recs, "w.a", "ok", 1) != NULL);
	CHECK((rec = step_record(recs, "w.a", "rate_limited", 2)) != NULL);
	CHECK(member_is(rec, "plan", id));
	CHECK(step_record(recs, "w.undo", "ok", 1) && step_record(recs, "w.undo", "ok", 2));
	/* newest first: step 2's undoing is recorded before step 1's */
	json_array_foreach(recs, i, rec)
		if (member_is(rec, "tool", "w.undo"))
			break;
	CHECK(json_integer_value(json_object_get(rec, "plan_step")) == 2);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

#define RUNNING_ID "0123456789abcdef0123456789abcdef"
#define UNDOING_ID "fedcba9876543210fedcba9876543210"

/* Plan id logged by another opening of the store (dead once closed) with
 * two w.a steps, their call ids id with its last digit 0 and 1: the first
 * in state first, the second in second, the plan in state. */
static int leave_plan(const char *where, const char *id, enum tg_saga_step_state first,
		      enum tg_saga_step_state second, enum tg_saga_state state)
{
	struct tg_saga_step steps[2];
	struct tg_store *st = NULL;
	struct tg_error err;
	int rc;

	memset(steps, 0, sizeof(steps));
	snprintf(steps[0].tool, sizeof(steps[0].tool), "w.a@1.0.0");
	snprintf(steps[1].tool, sizeof(steps[1].tool), "w.a@1.0.0");
	snprintf(steps[0].call_id, sizeof(steps[0].call_id), "%.31s0", id);
	snprintf(steps[1].call_id, sizeof(steps[1].call_id), "%.31s1", id);
	steps[0].arguments = "{\"n\":1}";
	steps[1].arguments = "{\"n\":2}";
	rc = tg_store_open(where, &st, &err);
	if (rc == 0)
		rc = tg_store_saga_begin(st, id, steps, 2, (int64_t)time(NULL), &err);
	if (rc == 0)
		rc = tg_store_saga_step(st, id, 0, first, "{\"isError\":false}", &err);
	if (rc == 0)
		rc = tg_store_saga_step(st, id, 1, second, NULL, &err);
	if (rc == 0)
		rc = tg_store_saga_set(st, id, state, (int64_t)time(NULL), &err);
	if (rc != 0)
		fprintf(stderr, "# %s\n", err.msg);
	tg_store_close(st); /* its runner dies */
	return rc;
}

/* A gateway that starts drives on the plans a dead one left: forward
 * from the step that was running (the done one does not run again),
 * back for one that was being undone. */
static int resume(void)
{
	struct fix_spec spec = { "saga-resume", contracts, POLICY, TG_ANOMALY_DEFAULT, NULL };
	struct tg_saga s;
	struct tg_error err;
	size_t resumed, failed;
	struct fix f;
	json_t *recs, *rec;

	CHECK(fix_open(&f, &spec) == 0);
	CHECK(leave_plan(f.where, RUNNING_ID, TG_STEP_DONE, TG_STEP_RUNNING, TG_SAGA_RUNNING) == 0);
	CHECK(leave_plan(f.where, UNDOING_ID, TG_STEP_DONE, TG_STEP_FAILED,
			 TG_SAGA_COMPENSATING) == 0);
	CHECK(tg_gate_resume_sagas(f.gate, &resumed, &failed, &err) == 0);
	CHECK(resumed == 2 && failed == 0);
	CHECK(tg_store_saga_get(f.store, RUNNING_ID, &s, &err) == 0);
	CHECK(s.state == TG_SAGA_DONE && s.steps[0].state == TG_STEP_DONE &&
	      s.steps[1].state == TG_STEP_DONE && strstr(s.steps[1].result, "\"n\":2"));
	tg_saga_release(&s);
	CHECK(tg_store_saga_get(f.store, UNDOING_ID, &s, &err) == 0);
	CHECK(s.state == TG_SAGA_COMPENSATED && s.steps[0].state == TG_STEP_COMPENSATED);
	tg_saga_release(&s);
	/* nothing left to resume */
	CHECK(tg_gate_resume_sagas(f.gate, &resumed, &failed, &err) == 0 && resumed == 0);
	fix_close(&f);

	CHECK((recs = fix_records(f.log)) != NULL);
	/* forward: step 2 only, under its logged call id */
	CHECK(fix_count(recs, "call", "w.a", NULL, &rec) == 1);
	CHECK(json_integer_value(json_object_get(rec, "plan_step")) == 2 &&
	      member_is(rec, "plan", RUNNING_ID) && member_is(rec, "call_id", "0123456789abcdef0123456789abcde1") &&
	      member_is(rec, "outcome", "ok") && member_is(rec, "principal", "toolgate"));
	/* its arguments' hash is the held call's: a restarted gateway has none */
	CHECK(!json_object_get(rec, "plan_args_sha256"));
	/* back: both steps of the other undone, none of the first plan's */
	CHECK(fix_count(recs, "call", "w.undo", "ok", NULL) == 2);
	CHECK((rec = step_record(recs, "w.undo", "ok", 1)) != NULL && member_is(rec, "plan",
										    UNDOING_ID));
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* The same on a PostgreSQL store (tests/unit/pgfix.c): its plans' logs,
 * their steps, a dead runner's plans taken over. */
#define ON_PG(fn)                                   \
	static int fn##_pg(void)                    \
	{                                           \
		unit_on_pg = 1;                     \
		if (!getenv("TG_TEST_PG"))          \
			return UNIT_SKIP;           \
		return fn();                        \
	}
ON_PG(run_and_records)
ON_PG(step_fails_undone)
ON_PG(resume)

const struct unit_test saga_tests[] = {
	{ "saga/run_and_records", run_and_records },
	{ "saga/step_refused_for_scope", step_refused_for_scope },
	{ "saga/step_fails_undone", step_fails_undone },
	{ "saga/resume", resume },
	{ "saga-pg/run_and_records", run_and_records_pg },
	{ "saga-pg/step_fails_undone", step_fails_undone_pg },
	{ "saga-pg/resume", resume_pg },
	UNIT_TESTS_END,
};
