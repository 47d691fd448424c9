/* Unit tests: the pipeline (src/gate/pipeline.c, write.c, output.c,
 * record.c; docs/PIPELINE.md), a test a stage, each through
 * tg_gate_call on a gate composed as serve composes it (gatefix.h: a real
 * store, a real audit log, a policy), each reading back the record the
 * stage left: its outcome, tool, principal and arguments' hash, never the
 * arguments nor a secret. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gatefix.h"
#include "unit.h"

#define K(name, version, authority, rest)                                             \
	"{\"name\":\"" name "\",\"version\":\"" version "\"," FIX_OWNER ",\"authority\":\"" \
	authority "\"," rest "}"

static const char *const contracts[] = {
	K("echo", "1.0.0", "read", "\"input_schema\":{\"type\":\"object\",\"properties\":{\"n\":"
	  "{\"type\":\"integer\"},\"said\":{\"type\":\"string\"}}}," FIX_ECHO),
	K("clock", "1.0.0", "read", "\"input_schema\":{\"type\":\"object\"},\"executor\":"
	  "{\"kind\":\"builtin\",\"name\":\"time.now\"}"),
	K("old", "1.0.0", "read", "\"input_schema\":{\"type\":\"object\"},\"deprecation\":"
	  "{\"since\":\"2019-01-01\",\"sunset\":\"2020-01-01\",\"replacement\":\"old@2\"},"
	  FIX_ECHO),
	K("old", "2.0.0", "read", "\"input_schema\":{\"type\":\"object\"}," FIX_ECHO),
	/* promises an integer n, and echoes whatever it is given */
	K("typed", "1.0.0", "read", "\"input_schema\":{\"type\":\"object\"},\"output_schema\":"
	  "{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}},\"required\":"
	  "[\"n\"]}," FIX_ECHO),
	K("w.put", "1.0.0", "write", "\"dry_run\":\"supported\",\"compensation\":"
	  "{\"irreversible\":\"a test's write\"},\"input_schema\":{\"type\":\"object\"},"
	  FIX_ECHO),
	NULL,
};

#define POLICY "{\"audience\":\"gw\",\"max_token_ttl\":\"1h\",\"principals\":{"      \
	"\"agent\":{\"scopes\":[\"echo:read\",\"old:read\",\"typed:read\",\"w.*:write\"]}," \
	"\"slow\":{\"scopes\":[\"echo:read\"],\"rate\":\"2/m\"},"                          \
	"\"alice\":{\"scopes\":[\"*:approve\"]}}}"

#define SCOPES "echo:read clock:read old:read typed:read w.*:write"

static int open_gate(struct fix *f, const char *name, enum tg_anomaly_action anomalies)
{
	struct fix_spec spec = { name, contracts, POLICY, anomalies, NULL };

	return fix_open(f, &spec);
}

/* One call by agent with its scopes: tg_gate_call's return. */
static int call(struct fix *f, const char *tool, const char *args, const char *key,
		struct tg_call_result *r, struct tg_error *err)
{
	struct fix_call c = { "agent", tool, args, SCOPES, key, NULL, 0 };

	return fix_call(f, &c, r, err);
}

/* The one call record of tool with outcome, by principal, with an
 * arguments' hash: the record, or NULL (said on stderr). */
static json_t *the_record(json_t *recs, const char *tool, const char *outcome,
			  const char *principal)
{
	json_t *r;
	size_t n = fix_count(recs, "call", tool, outcome, &r);
	const char *sha = json_string_value(json_object_get(r, "args_sha256"));
	const char *who = json_string_value(json_object_get(r, "principal"));

	if (n != 1 || !sha || strlen(sha) != 64 || !who || strcmp(who, principal) != 0) {
		fprintf(stderr, "# %zu records of %s %s by %s\n", n, tool, outcome, principal);
		return NULL;
	}
	return r;
}

/* 2 resolve: an unknown tool and a retired one are protocol errors,
 * recorded; a version pin, a deprecated version before its sunset, and a
 * bare name (the newest live version) resolve. */
static int resolve(void)
{
	struct tg_call_result r;
	struct tg_error err;
	struct fix f;
	struct fix_call before = { "agent", "old@1.0.0", NULL, SCOPES, NULL, "2019-06-01", 0 };
	json_t *recs, *rec;

	CHECK(open_gate(&f, "gate-resolve", TG_ANOMALY_DEFAULT) == 0);
	CHECK(call(&f, "nope", NULL, NULL, &r, &err) < 0 && err.code == TG_ERR_INVALID &&
	      strstr(err.msg, "no such tool"));
	CHECK(call(&f, "old@1.0.0", NULL, NULL, &r, &err) < 0 && err.code == TG_ERR_UNAVAILABLE &&
	      strstr(err.msg, "retired on 2020-01-01; use old@2"));
	CHECK(call(&f, "old@x", NULL, NULL, &r, &err) < 0 && err.code == TG_ERR_INVALID);
	CHECK(fix_call(&f, &before, &r, &err) == 0 && !r.is_error &&
	      strcmp(r.tool, "old@1.0.0") == 0);
	tg_call_result_release(&r);
	CHECK(call(&f, "old", NULL, NULL, &r, &err) == 0 && strcmp(r.tool, "old@2.0.0") == 0);
	tg_call_result_release(&r);
	CHECK(call(&f, "old@2", NULL, NULL, &r, &err) == 0 && strcmp(r.tool, "old@2.0.0") == 0);
	tg_call_result_release(&r);
	fix_close(&f);

	CHECK((recs = fix_records(f.log)) != NULL);
	CHECK((rec = the_record(recs, "nope", "protocol_error", "agent")) != NULL);
	CHECK(strstr(json_string_value(json_object_get(rec, "error")), "no such tool"));
	CHECK(!json_object_get(rec, "version"));
	CHECK((rec = the_record(recs, "old@1.0.0", "protocol_error", "agent")) != NULL);
	CHECK(strstr(json_string_value(json_object_get(rec, "error")), "retired"));
	CHECK(fix_count(recs, "call", "old", "ok", NULL) == 3);
	CHECK(fix_count(recs, "call", NULL, NULL, NULL) == 6);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* 3 validate: arguments that do not match the schema are a tool error
 * naming the field and the keyword; recorded, without the value. */
static int validate(void)
{
	struct tg_call_result r;
	struct tg_error err;
	struct fix f;
	json_t *recs;

	CHECK(open_gate(&f, "gate-validate", TG_ANOMALY_DEFAULT) == 0);
	CHECK(call(&f, "echo", "{\"n\":\"value-7f3a\"}", NULL, &r, &err) == 0 && r.is_error);
	CHECK(strstr(r.content_json, "do not match the input schema of echo@1.0.0"));
	CHECK(strstr(r.content_json, "/n: ") && strstr(r.content_json, "/properties/n/type"));
	tg_call_result_release(&r);
	fix_close(&f);

	CHECK((recs = fix_records(f.log)) != NULL);
	CHECK(the_record(recs, "echo", "invalid_arguments", "agent") != NULL);
	CHECK(fix_count(recs, NULL, NULL, NULL, NULL) == 1);
	CHECK(fix_log_holds(f.log, "value-7f3a") == 0);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* 4 authorize: a tool none of the caller's scopes allows is refused,
 * naming the scope it needs (read for a read tool, write for a write). */
static int authorize(void)
{
	struct fix_call c = { "agent", "echo", NULL, "old:read", NULL, NULL, 0 };
	struct tg_call_result r;
	struct tg_error err;
	struct fix f;
	json_t *recs;

	CHECK(open_gate(&f, "gate-authorize", TG_ANOMALY_DEFAULT) == 0);
	CHECK(fix_call(&f, &c, &r, &err) == 0 && r.is_error &&
	      strstr(r.content_json, "it needs the scope echo:read"));
	tg_call_result_release(&r);
	c.tool = "w.put";
	c.scopes = "w.*:read";
	c.key = "k";
	CHECK(fix_call(&f, &c, &r, &err) == 0 && r.is_error &&
	      strstr(r.content_json, "it needs the scope w.put:write"));
	tg_call_result_release(&r);
	c.tool = "echo";
	c.scopes = "echo:read";
	CHECK(fix_call(&f, &c, &r, &err) == 0 && !r.is_error);
	tg_call_result_release(&r);
	/* an approve scope calls nothing */
	c.scopes = "*:approve";
	CHECK(fix_call(&f, &c, &r, &err) == 0 && r.is_error);
	tg_call_result_release(&r);
	fix_close(&f);

	CHECK((recs = fix_records(f.log)) != NULL);
	CHECK(fix_count(recs, "call", "echo", "forbidden", NULL) == 2);
	CHECK(the_record(recs, "w.put", "forbidden", "agent") != NULL);
	CHECK(the_record(recs, "echo", "ok", "agent") != NULL);
	/* nothing was held: no ticket for a write refused its scope */
	{
		struct tg_ticket *t = NULL;
		struct tg_store *st;
		char path[96];
		size_t n = 1;

		snprintf(path, sizeof(path), "%s/state", f.dir);
		CHECK(tg_store_open(path, &st, &err) == 0);
		CHECK(tg_store_ticket_list(st, -1, (int64_t)time(NULL), &t, &n, &err) == 0 && n == 0);
		free(t);
		tg_store_close(st);
	}
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* 4b limit: slow may call echo twice a minute; the third is a retryable
 * tool error saying when, and another principal is not limited by it. */
static int limit(void)
{
	struct fix_call c = { "slow", "echo", NULL, "echo:read", NULL, NULL, 0 };
	struct tg_call_result r;
	struct tg_error err;
	char code[64], ticket[64];
	struct fix f;
	json_t *recs, *doc;

	CHECK(open_gate(&f, "gate-limit", TG_ANOMALY_DEFAULT) == 0);
	for (int i = 0; i < 2; i++) {
		CHECK(fix_call(&f, &c, &r, &err) == 0 && !r.is_error);
		tg_call_result_release(&r);
	}
	CHECK(fix_call(&f, &c, &r, &err) == 0 && r.is_error && strstr(r.content_json, "rate limited"));
	fix_error_code(&r, code, ticket);
	CHECK(strcmp(code, "rate_limited") == 0);
	CHECK((doc = json_loads(r.structured_json, 0, NULL)) != NULL);
	CHECK(json_integer_value(json_object_get(json_object_get(doc, "error"),
						 "retry_after_ms")) > 0);
	json_decref(doc);
	tg_call_result_release(&r);
	CHECK(call(&f, "echo", NULL, NULL, &r, &err) == 0 && !r.is_error);
	tg_call_result_release(&r);
	fix_close(&f);

	CHECK((recs = fix_records(f.log)) != NULL);
	CHECK(the_record(recs, "echo", "rate_limited", "slow") != NULL);
	CHECK(fix_count(recs, "call", "echo", "ok", NULL) == 3);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

#define INJECTION "{\"said\":\"' OR 1=1 --\"}"

/* 4c anomalies: a read whose argument looks like SQL injection is held
 * as a ticket (the default), or runs with warn; recorded either way
 * with its findings and what was done. */
static int anomalies(void)
{
	struct tg_call_result r;
	struct tg_ticket t;
	struct tg_error err;
	char code[64], ticket[64];
	struct fix f;
	json_t *recs, *rec;

	CHECK(open_gate(&f, "gate-anomalies", TG_ANOMALY_DEFAULT) == 0);
	CHECK(call(&f, "echo", INJECTION, NULL, &r, &err) == 0 && r.is_error);
	fix_error_code(&r, code, ticket);
	CHECK(strcmp(code, "awaiting_approval") == 0 && strlen(ticket) == 32);
	CHECK(!strstr(r.content_json, "1=1")); /* it did not run */
	/* sent without a key: found again by its arguments, and told so */
	CHECK(strstr(r.content_json, "call again with the same arguments once it is decided") &&
	      !strstr(r.content_json, "idempotency key"));
	tg_call_result_release(&r);
	CHECK(tg_store_ticket_get(f.store, ticket, (int64_t)time(NULL), &t, &err) == 0);
	CHECK(t.state == TG_TICKET_PENDING && strcmp(t.tool, "echo@1.0.0") == 0 && t.findings &&
	      strstr(t.findings, "\"sql\""));
	tg_ticket_release(&t);
	fix_close(&f);
	CHECK((recs = fix_records(f.log)) != NULL);
	CHECK((rec = the_record(recs, "echo", "held", "agent")) != NULL);
	CHECK(strcmp(json_string_value(json_object_get(rec, "anomaly_action")), "hold") == 0);
	CHECK(strcmp(json_string_value(json_object_get(json_array_get(
		     json_object_get(rec, "anomalies"), 0), "rule")), "sql") == 0);
	json_decref(recs);
	fix_remove(&f);

	/* the same call again finds its ticket, and is told the same; one
	 * sent with a key is found by it, and told so */
	CHECK(open_gate(&f, "gate-anomalies", TG_ANOMALY_DEFAULT) == 0);
	CHECK(call(&f, "echo", INJECTION, NULL, &r, &err) == 0 && r.is_error);
	fix_error_code(&r, code, ticket);
	tg_call_result_release(&r);
	CHECK(call(&f, "echo", INJECTION, NULL, &r, &err) == 0 && r.is_error &&
	      strstr(r.content_json, ticket) &&
	      strstr(r.content_json, "call again with the same arguments") &&
	      !strstr(r.content_json, "idempotency key"));
	tg_call_result_release(&r);
	CHECK(call(&f, "echo", INJECTION, "k-anomalous", &r, &err) == 0 && r.is_error &&
	      strstr(r.content_json, "call again with the same idempotency key"));
	tg_call_result_release(&r);
	fix_close(&f);
	fix_remove(&f);

	/* --anomalies warn: it runs, and says so */
	CHECK(open_gate(&f, "gate-anomalies", TG_ANOMALY_WARN) == 0);
	CHECK(call(&f, "echo", INJECTION, NULL, &r, &err) == 0 && !r.is_error &&
	      strstr(r.structured_json, "1=1"));
	tg_call_result_release(&r);
	fix_close(&f);
	CHECK((recs = fix_records(f.log)) != NULL);
	CHECK((rec = the_record(recs, "echo", "ok", "agent")) != NULL);
	CHECK(strcmp(json_string_value(json_object_get(rec, "anomaly_action")), "warn") == 0);
	CHECK(json_integer_value(json_object_get(rec, "anomalies_total")) >= 1);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* 5 dedupe: a retry under a write's key finds the same ticket, and the
 * key with other arguments is refused rather than answered with another
 * call's result. */
static int dedupe(void)
{
	struct tg_call_result r;
	struct tg_ticket *all = NULL;
	struct tg_error err;
	char code[64], first[64], again[64];
	struct fix f;
	size_t n = 0, i;
	json_t *recs;

	CHECK(open_gate(&f, "gate-dedupe", TG_ANOMALY_DEFAULT) == 0);
	CHECK(call(&f, "w.put", "{\"n\":1}", "k1", &r, &err) == 0 && r.is_error);
	fix_error_code(&r, code, first);
	CHECK(strcmp(code, "awaiting_approval") == 0 && strlen(first) == 32);
	tg_call_result_release(&r);
	CHECK(call(&f, "w.put", "{\"n\":1}", "k1", &r, &err) == 0 && r.is_error);
	fix_error_code(&r, code, again);
	CHECK(strcmp(code, "awaiting_approval") == 0 && strcmp(first, again) == 0);
	tg_call_result_release(&r);
	CHECK(call(&f, "w.put", "{\"n\":2}", "k1", &r, &err) == 0 && r.is_error);
	fix_error_code(&r, code, again);
	CHECK(strcmp(code, "key_reused") == 0);
	tg_call_result_release(&r);
	CHECK(tg_store_ticket_list(f.store, -1, (int64_t)time(NULL), &all, &n, &err) == 0);
	for (i = 0; i < n; i++)
		tg_ticket_release(&all[i]);
	free(all);
	CHECK(n == 1);
	fix_close(&f);

	CHECK((recs = fix_records(f.log)) != NULL);
	CHECK(fix_count(recs, "call", "w.put", "held", NULL) == 2);
	CHECK(fix_count(recs, "call", "w.put", "refused", NULL) == 1);
	CHECK(fix_count(recs, NULL, NULL, NULL, NULL) == 3);
	CHECK(!json_object_get(json_array_get(recs, 0), "key_derived"));
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* 5 dedupe without a key of the client's (a stock agent host sends none):
 * the key derived from the principal, the tool and the arguments finds the
 * same ticket on a retry; other arguments, or another principal, make
 * another; approved, the retry runs it once and the next replays its
 * answer, saying it is an earlier call's. The records say the key was
 * derived. */
static int derived(void)
{
	struct fix_call bob = { "bob", "w.put", "{\"n\":1}", SCOPES, NULL, NULL, 0 };
	struct tg_call_result r;
	struct tg_error err;
	char code[64], first[64], again[64], key[80];
	struct fix f;
	json_t *recs, *rec;

	CHECK(open_gate(&f, "gate-derived", TG_ANOMALY_DEFAULT) == 0);
	CHECK(call(&f, "w.put", "{\"n\":1}", NULL, &r, &err) == 0 && r.is_error);
	fix_error_code(&r, code, first);
	CHECK(strcmp(code, "awaiting_approval") == 0 && strlen(first) == 32);
	CHECK(strncmp(r.derived_key, "derived:", 8) == 0 &&
	      strstr(r.content_json, "one was derived from the arguments") &&
	      strstr(r.content_json, "call again with the same arguments"));
	memcpy(key, r.derived_key, sizeof(key));
	tg_call_result_release(&r);
	/* the host's retry: the same ticket, the same key */
	CHECK(call(&f, "w.put", "{\"n\":1}", NULL, &r, &err) == 0 && r.is_error);
	fix_error_code(&r, code, again);
	CHECK(strcmp(code, "awaiting_approval") == 0 && strcmp(first, again) == 0 &&
	      strcmp(r.derived_key, key) == 0);
	tg_call_result_release(&r);
	/* the same arguments, in another order: the same canonical call */
	CHECK(call(&f, "w.put", "{ \"n\" : 1 }", NULL, &r, &err) == 0);
	fix_error_code(&r, code, again);
	CHECK(strcmp(first, again) == 0);
	tg_call_result_release(&r);
	/* other arguments, another principal: other tickets, other keys */
	CHECK(call(&f, "w.put", "{\"n\":2}", NULL, &r, &err) == 0 && r.is_error);
	fix_error_code(&r, code, again);
	CHECK(strcmp(code, "awaiting_approval") == 0 && strcmp(first, again) != 0 &&
	      r.derived_key[0] && strcmp(r.derived_key, key) != 0);
	tg_call_result_release(&r);
	CHECK(fix_call(&f, &bob, &r, &err) == 0 && r.is_error);
	fix_error_code(&r, code, again);
	CHECK(strcmp(code, "awaiting_approval") == 0 && strcmp(first, again) != 0 &&
	      r.derived_key[0] && strcmp(r.derived_key, key) != 0);
	tg_call_result_release(&r);
	/* approved: the retry runs it, the next replays it and says so */
	CHECK(tg_store_ticket_decide(f.store, first, "alice", 1, NULL, (int64_t)time(NULL),
				     &err) == 0);
	CHECK(call(&f, "w.put", "{\"n\":1}", NULL, &r, &err) == 0 && !r.is_error &&
	      strcmp(r.structured_json, "{\"n\":1}") == 0 && strcmp(r.derived_key, key) == 0 &&
	      !strstr(r.content_json, "earlier call"));
	tg_call_result_release(&r);
	CHECK(call(&f, "w.put", "{\"n\":1}", NULL, &r, &err) == 0 && !r.is_error &&
	      strcmp(r.structured_json, "{\"n\":1}") == 0 &&
	      strstr(r.content_json, "the answer of an earlier call with the same arguments") &&
	      strstr(r.content_json, "an idempotency key of your own"));
	tg_call_result_release(&r);
	/* the caller's own key is a call of its own, and its answer no replay */
	CHECK(call(&f, "w.put", "{\"n\":1}", "mine", &r, &err) == 0 && r.is_error &&
	      !r.derived_key[0] && !strstr(r.content_json, "derived"));
	fix_error_code(&r, code, again);
	CHECK(strcmp(code, "awaiting_approval") == 0 && strcmp(first, again) != 0);
	tg_call_result_release(&r);
	fix_close(&f);

	CHECK((recs = fix_records(f.log)) != NULL);
	CHECK(fix_count(recs, "call", "w.put", "held", &rec) == 6);
	CHECK(!json_object_get(rec, "key_derived")); /* the last: the caller's key */
	CHECK((rec = the_record(recs, "w.put", "ok", "agent")) != NULL);
	CHECK(json_is_true(json_object_get(rec, "key_derived")) &&
	      strcmp(json_string_value(json_object_get(rec, "call_id")), first) == 0);
	CHECK((rec = the_record(recs, "w.put", "replayed", "agent")) != NULL);
	CHECK(json_is_true(json_object_get(rec, "key_derived")));
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* The policy's writes.client_key: the tools it names still need the
 * client's own key; the others do not. */
static int client_key(void)
{
	static const char policy[] =
		"{\"principals\":{\"agent\":{\"scopes\":[\"w.*:write\"]}},"
		"\"writes\":{\"client_key\":[\"w.p*\"],\"wait\":\"1s\"}}";
	static const char *const two[] = {
		K("w.put", "1.0.0", "write", "\"dry_run\":\"unsupported\",\"compensation\":"
		  "{\"irreversible\":\"t\"},\"input_schema\":{\"type\":\"object\"}," FIX_ECHO),
		K("w.set", "1.0.0", "write", "\"dry_run\":\"unsupported\",\"compensation\":"
		  "{\"irreversible\":\"t\"},\"input_schema\":{\"type\":\"object\"}," FIX_ECHO),
		NULL,
	};
	struct fix_spec spec = { "gate-client-key", two, policy, TG_ANOMALY_DEFAULT, NULL };
	struct tg_call_result r;
	struct tg_error err;
	char code[64], id[64];
	struct fix f;

	CHECK(fix_open(&f, &spec) == 0);
	CHECK(tg_policy_client_key(f.policy, "w.put") && !tg_policy_client_key(f.policy, "w.set"));
	CHECK(tg_policy_writes_wait_ms(f.policy) == 1000);
	CHECK(call(&f, "w.put", "{}", NULL, &r, &err) == 0 && r.is_error && !r.derived_key[0] &&
	      strstr(r.content_json, "it needs an idempotency key") &&
	      strstr(r.content_json, "writes.client_key"));
	tg_call_result_release(&r);
	CHECK(call(&f, "w.put", "{}", "k", &r, &err) == 0 && r.is_error);
	fix_error_code(&r, code, id);
	CHECK(strcmp(code, "awaiting_approval") == 0);
	tg_call_result_release(&r);
	CHECK(call(&f, "w.set", "{}", NULL, &r, &err) == 0 && r.is_error && r.derived_key[0]);
	fix_error_code(&r, code, id);
	CHECK(strcmp(code, "awaiting_approval") == 0);
	tg_call_result_release(&r);
	fix_remove(&f);
	return 0;
}

/* 6 approve: a write is held as a pending ticket with its dry run as the
 * preview; its requester cannot decide it; approved, the retry runs it
 * once under the ticket's id, and every retry after replays the answer. */
static int approve(void)
{
	struct tg_call_result r;
	struct tg_ticket t;
	struct tg_error err;
	char code[64], id[64], *ran;
	struct fix f;
	json_t *recs, *rec;
	char sha[65];

	CHECK(open_gate(&f, "gate-approve", TG_ANOMALY_DEFAULT) == 0);
	CHECK(call(&f, "w.put", "{\"n\":7}", "k", &r, &err) == 0 && r.is_error);
	fix_error_code(&r, code, id);
	CHECK(strcmp(code, "awaiting_approval") == 0 && strstr(r.structured_json, "\"preview\""));
	tg_call_result_release(&r);
	CHECK(tg_store_ticket_get(f.store, id, (int64_t)time(NULL), &t, &err) == 0);
	CHECK(t.state == TG_TICKET_PENDING && strcmp(t.principal, "agent") == 0 &&
	      strcmp(t.tool, "w.put@1.0.0") == 0 && t.preview && strstr(t.preview, "\"n\":7") &&
	      strcmp(t.arguments, "{\"n\":7}") == 0);
	memcpy(sha, t.args_sha256, sizeof(sha));
	tg_ticket_release(&t);
	CHECK(tg_store_ticket_decide(f.store, id, "agent", 1, NULL, (int64_t)time(NULL), &err) < 0);
	/* still pending: the retry is told so, and nothing ran */
	CHECK(call(&f, "w.put", "{\"n\":7}", "k", &r, &err) == 0 && r.is_error);
	tg_call_result_release(&r);
	CHECK(tg_store_ticket_decide(f.store, id, "alice", 1, NULL, (int64_t)time(NULL), &err) == 0);
	CHECK(call(&f, "w.put", "{\"n\":7}", "k", &r, &err) == 0 && !r.is_error &&
	      strcmp(r.structured_json, "{\"n\":7}") == 0);
	ran = strdup(r.content_json);
	tg_call_result_release(&r);
	CHECK(ran);
	CHECK(call(&f, "w.put", "{\"n\":7}", "k", &r, &err) == 0 && !r.is_error &&
	      strcmp(r.content_json, ran) == 0);
	free(ran);
	tg_call_result_release(&r);
	CHECK(tg_store_ticket_get(f.store, id, (int64_t)time(NULL), &t, &err) == 0);
	CHECK(t.state == TG_TICKET_EXECUTED && strcmp(t.approver, "alice") == 0);
	tg_ticket_release(&t);
	fix_close(&f);

	CHECK((recs = fix_records(f.log)) != NULL);
	CHECK(fix_count(recs, "call", "w.put", "held", NULL) == 2);
	CHECK((rec = the_record(recs, "w.put", "ok", "agent")) != NULL);
	CHECK(strcmp(json_string_value(json_object_get(rec, "call_id")), id) == 0);
	CHECK(strcmp(json_string_value(json_object_get(rec, "args_sha256")), sha) == 0);
	CHECK(the_record(recs, "w.put", "replayed", "agent") != NULL);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* 7 execute: builtins run in the gateway (echo its arguments back,
 * time.now the clock); a write's dry run runs without a key or a ticket. */
static int execute(void)
{
	struct fix_call dry = { "agent", "w.put", "{\"n\":3}", SCOPES, NULL, NULL, 1 };
	struct tg_call_result r;
	struct tg_error err;
	struct fix f;
	json_t *recs, *got, *want;

	CHECK(open_gate(&f, "gate-execute", TG_ANOMALY_DEFAULT) == 0);
	CHECK(call(&f, "echo", "{\"said\":\"hi\",\"n\":3}", NULL, &r, &err) == 0 && !r.is_error);
	got = json_loads(r.structured_json, 0, NULL);
	want = json_pack("{s:s,s:i}", "said", "hi", "n", 3);
	CHECK(got && want && json_equal(got, want));
	json_decref(got);
	json_decref(want);
	CHECK(strstr(r.content_json, "\"type\":\"text\""));
	tg_call_result_release(&r);
	CHECK(call(&f, "clock", NULL, NULL, &r, &err) == 0 && !r.is_error &&
	      strstr(r.structured_json, "\"utc\":") && strstr(r.structured_json, "\"unix\":"));
	tg_call_result_release(&r);
	CHECK(fix_call(&f, &dry, &r, &err) == 0 && !r.is_error &&
	      strcmp(r.structured_json, "{\"n\":3}") == 0);
	tg_call_result_release(&r);
	fix_close(&f);

	CHECK((recs = fix_records(f.log)) != NULL);
	CHECK(the_record(recs, "echo", "ok", "agent") != NULL);
	CHECK(the_record(recs, "clock", "ok", "agent") != NULL);
	CHECK(the_record(recs, "w.put", "dry_run", "agent") != NULL);
	CHECK(fix_count(recs, NULL, NULL, NULL, NULL) == 3);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

#define TOKEN "ghp_" "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"

/* 8 check: a result that breaks the contract's output schema is a tool
 * error; a secret in a result is redacted wherever it appears, the
 * record counts it by rule and never holds it. */
static int check(void)
{
	struct tg_call_result r;
	struct tg_error err;
	struct fix f;
	json_t *recs, *rec;

	CHECK(open_gate(&f, "gate-check", TG_ANOMALY_DEFAULT) == 0);
	CHECK(call(&f, "typed", "{\"n\":\"five\"}", NULL, &r, &err) == 0 && r.is_error &&
	      strstr(r.content_json, "does not match its output schema") && !r.structured_json);
	tg_call_result_release(&r);
	CHECK(call(&f, "typed", "{\"n\":5}", NULL, &r, &err) == 0 && !r.is_error);
	tg_call_result_release(&r);
	CHECK(call(&f, "echo", "{\"said\":\"token " TOKEN " ends\"}", NULL, &r, &err) == 0 &&
	      !r.is_error);
	CHECK(!strstr(r.content_json, TOKEN) && !strstr(r.structured_json, TOKEN));
	CHECK(strstr(r.structured_json, "token [REDACTED:github_token] ends"));
	CHECK(strstr(r.content_json, "[REDACTED:github_token]"));
	tg_call_result_release(&r);
	fix_close(&f);

	CHECK((recs = fix_records(f.log)) != NULL);
	CHECK(the_record(recs, "typed", "bad_output", "agent") != NULL);
	CHECK(the_record(recs, "typed", "ok", "agent") != NULL);
	CHECK((rec = the_record(recs, "echo", "ok", "agent")) != NULL);
	CHECK(json_integer_value(json_object_get(json_object_get(rec, "redacted"),
						 "github_token")) >= 1);
	CHECK(fix_log_holds(f.log, "ghp_") == 0 && fix_log_holds(f.log, "five") == 0);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* 8b redact: a keyed secret, whose name says what it is (no string
 * alone shows both), in a structured result as in its text, nested too;
 * the record counts it. */
static int check_keyed(void)
{
	struct tg_call_result r;
	struct tg_error err;
	struct fix f;
	json_t *recs, *rec;

	CHECK(open_gate(&f, "gate-keyed", TG_ANOMALY_DEFAULT) == 0);
	CHECK(call(&f, "echo", "{\"said\":\"hi\",\"db_password\":\"Zq8vN2kLp4Xw9Rt\","
		   "\"cfg\":{\"api_key\":\"Hy7uK3mPq9Lw2Xv6\"}}", NULL, &r, &err) == 0 &&
	      !r.is_error);
	CHECK(!strstr(r.structured_json, "Zq8vN2kLp4Xw9Rt") && !strstr(r.content_json, "Zq8vN2kLp4Xw9Rt"));
	CHECK(!strstr(r.structured_json, "Hy7uK3mPq9Lw2Xv6") &&
	      !strstr(r.content_json, "Hy7uK3mPq9Lw2Xv6"));
	CHECK(strstr(r.structured_json, "\"db_password\":\"[REDACTED:password_assignment]\""));
	CHECK(strstr(r.structured_json, "\"said\":\"hi\""));
	tg_call_result_release(&r);
	fix_close(&f);
	CHECK((recs = fix_records(f.log)) != NULL);
	CHECK((rec = the_record(recs, "echo", "ok", "agent")) != NULL);
	CHECK(json_integer_value(json_object_get(json_object_get(rec, "redacted"),
						 "password_assignment")) == 2);
	CHECK(fix_log_holds(f.log, "Zq8vN2kLp4Xw9Rt") == 0);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* 9 record: every call, whatever its end, leaves exactly one record,
 * chained: the log verifies with the audit API, and one byte changed in
 * it is found. */
static int record(void)
{
	static const struct {
		const char *tool, *args, *key, *scopes;
		int protocol;
	} calls[] = {
		{ "echo", "{\"said\":\"m-1\"}", NULL, SCOPES, 0 },     /* ok */
		{ "echo", "{\"n\":\"m-2\"}", NULL, SCOPES, 0 },        /* invalid_arguments */
		{ "echo", "{\"said\":\"m-3\"}", NULL, "old:read", 0 }, /* forbidden */
		{ "nope", "{\"said\":\"m-4\"}", NULL, SCOPES, 1 },     /* protocol_error */
		{ "w.put", "{\"said\":\"m-5\"}", NULL, SCOPES, 0 },    /* held, key derived */
		{ "w.put", "{\"said\":\"m-6\"}", "k", SCOPES, 0 },     /* held */
		{ "typed", "{\"said\":\"m-7\"}", NULL, SCOPES, 0 },    /* bad_output */
	};
	static const char *const outcomes[] = { "ok", "invalid_arguments", "forbidden",
						"protocol_error", "held", "held",
						"bad_output" };
	struct tg_audit_report rep;
	struct tg_call_result r;
	struct tg_error err;
	struct fix f;
	json_t *recs, *rec;
	size_t i, n;
	FILE *fp;

	CHECK(open_gate(&f, "gate-record", TG_ANOMALY_DEFAULT) == 0);
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		struct fix_call c = { "agent", calls[i].tool, calls[i].args, calls[i].scopes,
				      calls[i].key, NULL, 0 };

		CHECK((fix_call(&f, &c, &r, &err) < 0) == calls[i].protocol);
		tg_call_result_release(&r);
	}
	fix_close(&f);

	CHECK((recs = fix_records(f.log)) != NULL);
	n = json_array_size(recs);
	CHECK(n == sizeof(calls) / sizeof(calls[0]));
	json_array_foreach(recs, i, rec) {
		CHECK(json_integer_value(json_object_get(rec, "seq")) == (json_int_t)i + 1);
		CHECK(strcmp(json_string_value(json_object_get(rec, "kind")), "call") == 0);
		CHECK(strcmp(json_string_value(json_object_get(rec, "tool")), calls[i].tool) == 0);
		CHECK(strcmp(json_string_value(json_object_get(rec, "outcome")), outcomes[i]) == 0);
		CHECK(strcmp(json_string_value(json_object_get(rec, "principal")), "agent") == 0);
		CHECK(strlen(json_string_value(json_object_get(rec, "args_sha256"))) == 64);
		CHECK(json_is_integer(json_object_get(rec, "duration_us")));
	}
	CHECK(fix_log_holds(f.log, "m-") == 0);
	CHECK(tg_audit_verify(f.log, NULL, &rep, &err) == 0 && rep.bad_line == 0 &&
	      rep.records == n && rep.last_seq == n);
	/* the third record's outcome rewritten: the chain says where */
	CHECK((fp = fopen(f.log, "r+")) != NULL);
	{
		char *text = NULL, *at;
		size_t len = 0;

		CHECK(getdelim(&text, &len, '\0', fp) > 0);
		CHECK((at = strstr(text, "\"forbidden\"")) != NULL);
		CHECK(fseek(fp, at - text + 1, SEEK_SET) == 0 && fputc('F', fp) == 'F');
		free(text);
	}
	CHECK(fclose(fp) == 0);
	CHECK(tg_audit_verify(f.log, NULL, &rep, &err) == 0 && rep.bad_line == 3 &&
	      rep.records == 2);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* A held call's ticket lives as long as the policy's tickets.lifetimes
 * says for its tool, and tickets.lifetime for the others. */
static int ticket_lifetime(void)
{
	static const char policy[] = "{\"audience\":\"gw\",\"principals\":{\"agent\":{\"scopes\":"
		"[\"w.*:write\",\"echo:read\"]}},\"tickets\":{\"lifetime\":\"3h\",\"lifetimes\":"
		"{\"w.*\":\"2m\",\"w.other\":\"7d\"}}}";
	struct fix_spec spec = { "gate-lifetime", contracts, policy, TG_ANOMALY_DEFAULT, NULL };
	struct tg_call_result r;
	struct tg_ticket t;
	struct tg_error err;
	char code[64], id[64];
	struct fix f;

	CHECK(fix_open(&f, &spec) == 0);
	CHECK(call(&f, "w.put", "{\"n\":2}", "k", &r, &err) == 0 && r.is_error);
	fix_error_code(&r, code, id);
	tg_call_result_release(&r);
	CHECK(strcmp(code, "awaiting_approval") == 0);
	CHECK(tg_store_ticket_get(f.store, id, (int64_t)time(NULL), &t, &err) == 0);
	CHECK(t.expires - t.created == 120);
	tg_ticket_release(&t);
	/* past it, fail closed: the retry is told it expired, and nothing ran */
	CHECK(tg_store_ticket_expire(f.store, (int64_t)time(NULL) + 121, NULL, &err) == 0);
	CHECK(call(&f, "w.put", "{\"n\":2}", "k", &r, &err) == 0 && r.is_error);
	fix_error_code(&r, code, id);
	tg_call_result_release(&r);
	CHECK(strcmp(code, "expired") == 0);
	fix_remove(&f);
	return 0;
}

/* The tickets' watch (src/gate/watch.c): a held call's ticket wakes a
 * reader waiting for the next event; a decision taken in another opening
 * of the store (as toolgate approvals takes it) too; and a ticket past
 * its expiry is swept to expired, with its event, without anyone reading
 * it. */
static int ticket_watch(void)
{
	struct tg_ticket_event ev[8];
	struct tg_call_result r;
	struct tg_ticket req, t;
	struct tg_store *other;
	struct tg_error err;
	char code[64], id[64], dir[128], *text;
	uint64_t seq, last;
	size_t n, i;
	int expired = 0;
	struct fix f;

	CHECK(open_gate(&f, "gate-watch", TG_ANOMALY_DEFAULT) == 0);
	seq = tg_gate_ticket_events_wait(f.gate, 0, 0);
	CHECK(call(&f, "w.put", "{\"n\":1}", "k", &r, &err) == 0 && r.is_error);
	fix_error_code(&r, code, id);
	tg_call_result_release(&r);
	CHECK(strcmp(code, "awaiting_approval") == 0);
	CHECK(tg_gate_ticket_events_wait(f.gate, seq, 5000) == seq + 1);
	CHECK(tg_store_ticket_events(f.store, seq, 8, ev, &n, &last, &err) == 0 && n == 1 &&
	      ev[0].state == TG_TICKET_PENDING && strcmp(ev[0].ticket, id) == 0);
	CHECK((text = tg_gate_metrics(f.gate)) != NULL);
	CHECK(strstr(text, "\ntoolgate_tickets_pending{tool=\"w.put\"} 1\n"));
	free(text);
	snprintf(dir, sizeof(dir), "%s/state", f.dir);
	CHECK(tg_store_open(dir, &other, &err) == 0);
	CHECK(tg_store_ticket_decide(other, id, "alice", 0, "no", (int64_t)time(NULL), &err) == 0);
	CHECK(tg_gate_ticket_events_wait(f.gate, seq + 1, 5000) == seq + 2);
	/* nothing new: the wait ends with its time, saying so */
	CHECK(tg_gate_ticket_events_wait(f.gate, seq + 2, 300) == seq + 2);
	memset(&req, 0, sizeof(req));
	strcpy(req.principal, "agent");
	strcpy(req.tool, "w.put@1.0.0");
	memset(req.args_sha256, 'f', 64);
	CHECK(tg_store_ticket_create(other, &req, (int64_t)time(NULL) - 10, 5, &t, &err) == 0);
	tg_store_close(other);
	for (i = 0; i < 20 && !expired; i++) {
		last = tg_gate_ticket_events_wait(f.gate, seq + 3, 1000);
		if (last < seq + 4)
			continue;
		CHECK(tg_store_ticket_events(f.store, seq + 3, 8, ev, &n, &last, &err) == 0);
		expired = n == 1 && ev[0].state == TG_TICKET_EXPIRED && strcmp(ev[0].ticket, t.id) == 0;
	}
	CHECK(expired);
	tg_ticket_release(&t);
	/* the other opening's decision and the sweep counted, nothing pending */
	CHECK((text = tg_gate_metrics(f.gate)) != NULL);
	CHECK(strstr(text, "\ntoolgate_approvals_total{outcome=\"rejected\"} 1\n") &&
	      strstr(text, "\ntoolgate_approvals_total{outcome=\"expired\"} 1\n") &&
	      strstr(text, "\ntoolgate_ticket_decision_seconds_count{outcome=\"rejected\"} 1\n") &&
	      strstr(text, "\ntoolgate_tickets_pending_oldest_seconds 0\n") &&
	      !strstr(text, "toolgate_tickets_pending{"));
	free(text);
	fix_remove(&f);
	return 0;
}

const struct unit_test gate_tests[] = {
	{ "gate/resolve", resolve },
	{ "gate/validate", validate },
	{ "gate/authorize", authorize },
	{ "gate/limit", limit },
	{ "gate/anomalies", anomalies },
	{ "gate/dedupe", dedupe },
	{ "gate/derived_key", derived },
	{ "gate/client_key", client_key },
	{ "gate/approve", approve },
	{ "gate/execute", execute },
	{ "gate/check", check },
	{ "gate/check_keyed", check_keyed },
	{ "gate/record", record },
	{ "gate/ticket_watch", ticket_watch },
	{ "gate/ticket_lifetime", ticket_lifetime },
	UNIT_TESTS_END,
};
