/*
 * Unit tests: an upstream's resources, prompts and completions served by
 * the gate under its namespace (src/gate/upstream_reads.c,
 * docs/UPSTREAMS.md, "Resources, prompts and completions"), with
 * tests/upstream/fake_server.py (mode runner), which declares them, and
 * the same server in mode normal, which declares none: listed with their
 * URIs and names rewritten (the server's pages followed); a read routed
 * back, its contents redacted and recorded; a template expanded by the
 * client read as the server's; a URI of no upstream served, or of a server
 * without resources, refused; the scopes NAME.resources and NAME.prompts;
 * prompts/get; completion; a server's list_changed heard.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gatefix.h"
#include "unit.h"

#define FAKE_ARGV(MODE) "\"transport\":\"stdio\",\"argv\":[\"/usr/bin/python3\"," \
			"\"/srv/fake/fake_server.py\",\"" MODE "\"],\"sandbox\":{\"mounts\":" \
			"[{\"host\":\"@FAKE@\",\"inside\":\"/srv/fake\"}]}"
#define URI(U) "toolgate://upstream/" U

static const char *const plain[] = {
	"{\"name\":\"plain\",\"version\":\"1.0.0\",\"authority\":\"read\"," FIX_OWNER ","
	"\"input_schema\":{\"type\":\"object\"}," FIX_ECHO "}",
	NULL,
};

/* fake declares resources, prompts and completions; bare none */
static const char *const two[] = {
	"fake", "{" FAKE_ARGV("runner") ",\"tools\":{\"echo\":{\"authority\":\"read\"}}}",
	"bare", "{" FAKE_ARGV("normal") ",\"tools\":{\"echo\":{\"authority\":\"read\"}}}",
	NULL,
};

static const char *const policy =
	"{\"principals\":{\"agent\":{\"scopes\":[\"fake.echo:read\"]},"
	"\"reader\":{\"scopes\":[\"fake.resources:read\"]},"
	"\"all\":{\"scopes\":[\"fake.*:read\"]}}}";

/* The gate's listing (kind 0 resources, 1 templates, 2 prompts) for who,
 * parsed, once it holds an entry whose member is want (15 s); with want
 * NULL, at once. NULL and said when it never does. */
static json_t *listed(struct tg_gate *g, const struct tg_reader *who, int kind, const char *want)
{
	const char *member = kind == 0 ? "uri" : kind == 1 ? "uriTemplate" : "name";
	struct tg_error err;
	json_t *list, *e;
	size_t i;
	char *text;
	int tries;

	for (tries = 0; tries < 1500; tries++) {
		text = kind == 2 ? tg_gate_prompts_json(g, who, &err)
				 : tg_gate_resources_json(g, who, kind, &err);
		list = text ? json_loads(text, 0, NULL) : NULL;
		free(text);
		if (!list)
			return NULL;
		if (!want)
			return list;
		json_array_foreach(list, i, e)
			if (json_is_string(json_object_get(e, member)) &&
			    strcmp(json_string_value(json_object_get(e, member)), want) == 0)
				return list;
		json_decref(list);
		usleep(10000);
	}
	fprintf(stderr, "# never listed: %s\n", want);
	return NULL;
}

/* A read's contents parsed, or NULL and err. */
static json_t *read_uri(struct fix *f, const struct tg_reader *who, const char *uri,
			struct tg_error *err)
{
	char *text = tg_gate_resource_read(f->gate, who, uri, err);
	json_t *v = text ? json_loads(text, 0, NULL) : NULL;

	free(text);
	return v;
}

static int listing(void)
{
	struct fix_spec spec = { "gateres", plain, NULL, TG_ANOMALY_DEFAULT, two };
	struct fix f;
	json_t *l;
	char *text;

	if (fix_open(&f, &spec) < 0)
		return -1;
	/* both pages, the URIs the gateway's */
	l = listed(f.gate, NULL, 0, URI("fake/file:///logo.png"));
	CHECK(l && json_array_size(l) == 2);
	CHECK(strcmp(json_string_value(json_object_get(json_array_get(l, 0), "uri")),
		     URI("fake/file:///notes.txt")) == 0);
	CHECK(strcmp(json_string_value(json_object_get(json_array_get(l, 0), "name")),
		     "notes") == 0);
	/* bare declares no resources: nothing of it listed */
	text = json_dumps(l, 0);
	CHECK(text && !strstr(text, "upstream/bare"));
	free(text);
	json_decref(l);
	l = listed(f.gate, NULL, 1, URI("fake/file:///logs/{day}"));
	CHECK(l && json_array_size(l) == 1);
	json_decref(l);
	l = listed(f.gate, NULL, 2, "fake.greet");
	CHECK(l && json_array_size(l) == 1);
	CHECK(json_is_array(json_object_get(json_array_get(l, 0), "arguments")));
	json_decref(l);
	fix_remove(&f);
	return 0;
}

static int reads(void)
{
	struct fix_spec spec = { "gateresread", plain, NULL, TG_ANOMALY_DEFAULT, two };
	struct tg_reader who = { "alice", NULL };
	struct tg_error err;
	const char *t;
	struct fix f;
	json_t *c, *recs, *last = NULL;

	if (fix_open(&f, &spec) < 0)
		return -1;
	json_decref(listed(f.gate, NULL, 0, URI("fake/file:///notes.txt")));
	/* routed back, redacted, its URI the served one */
	c = read_uri(&f, &who, URI("fake/file:///notes.txt"), &err);
	CHECK(c && json_array_size(c) == 1);
	t = json_string_value(json_object_get(json_array_get(c, 0), "text"));
	CHECK(t && strstr(t, "notes:") && strstr(t, "[REDACTED:") && !strstr(t, "AKIAZ7Q3R5T2W4Y6"));
	CHECK(strcmp(json_string_value(json_object_get(json_array_get(c, 0), "uri")),
		     URI("fake/file:///notes.txt")) == 0);
	json_decref(c);
	c = read_uri(&f, &who, URI("fake/file:///logo.png"), &err);
	CHECK(c && json_is_string(json_object_get(json_array_get(c, 0), "blob")));
	json_decref(c);
	/* the served template, expanded as a client does, is the server's */
	c = read_uri(&f, &who, URI("fake/file:///logs/monday"), &err);
	t = json_string_value(json_object_get(json_array_get(c, 0), "text"));
	CHECK(t && strcmp(t, "log of monday") == 0);
	json_decref(c);
	/* no such upstream; a server without resources; the server's own refusal */
	CHECK(!read_uri(&f, &who, URI("nope/file:///notes.txt"), &err));
	CHECK(err.code == TG_ERR_INVALID && strstr(err.msg, "names no upstream"));
	CHECK(!read_uri(&f, &who, URI("bare/file:///notes.txt"), &err));
	CHECK(err.code == TG_ERR_INVALID && strstr(err.msg, "declares no resources capability"));
	CHECK(!read_uri(&f, &who, URI("fake/file:///missing"), &err));
	CHECK(err.code == TG_ERR_INVALID && strstr(err.msg, "no such resource"));
	/* the catalogue's own, as before */
	CHECK(!read_uri(&f, &who, "file:///notes.txt", &err) && err.code == TG_ERR_INVALID);
	fix_close(&f);
	recs = fix_records(f.log);
	CHECK(recs && fix_count(recs, "read", "fake.resources", "ok", &last) == 3);
	CHECK(fix_count(recs, "read", "fake.resources", "upstream_error", NULL) == 1);
	CHECK(fix_count(recs, "read", "bare.resources", "upstream_error", NULL) == 1);
	CHECK(strcmp(json_string_value(json_object_get(last, "subject")),
		     URI("fake/file:///logs/monday")) == 0);
	CHECK(fix_count(recs, "read", NULL, NULL, &last) == 5);
	json_decref(recs);
	CHECK(fix_log_holds(f.log, "\"redacted\"") == 1);
	CHECK(fix_log_holds(f.log, "AKIAZ7Q3R5T2W4Y6") == 0);
	fix_remove(&f);
	return 0;
}

static int scopes(void)
{
	struct fix_spec spec = { "gateresscope", plain, policy, TG_ANOMALY_DEFAULT, two };
	struct tg_reader agent = { "agent", "fake.echo:read" };
	struct tg_reader reader = { "reader", "fake.resources:read" };
	struct tg_reader all = { "all", "fake.*:read" };
	struct tg_reader none = { "anon", NULL };
	struct tg_error err;
	struct fix f;
	json_t *l, *c, *recs;
	char *text;

	if (fix_open(&f, &spec) < 0)
		return -1;
	json_decref(listed(f.gate, &all, 2, "fake.greet"));
	json_decref(listed(f.gate, &all, 0, URI("fake/file:///notes.txt")));
	/* a caller without the scope lists nothing of fake's and is refused */
	l = listed(f.gate, &agent, 0, NULL);
	CHECK(l && json_array_size(l) == 0);
	json_decref(l);
	l = listed(f.gate, &none, 1, NULL);
	CHECK(l && json_array_size(l) == 0);
	json_decref(l);
	CHECK(!read_uri(&f, &agent, URI("fake/file:///notes.txt"), &err));
	CHECK(err.code == TG_ERR_FORBIDDEN && strstr(err.msg, "fake.resources:read"));
	CHECK(!read_uri(&f, &none, URI("fake/file:///notes.txt"), &err));
	CHECK(err.code == TG_ERR_FORBIDDEN);
	/* resources, not prompts */
	l = listed(f.gate, &reader, 0, NULL);
	CHECK(l && json_array_size(l) == 2);
	json_decref(l);
	l = listed(f.gate, &reader, 2, NULL);
	CHECK(l && json_array_size(l) == 0);
	json_decref(l);
	c = read_uri(&f, &reader, URI("fake/file:///logs/x"), &err);
	CHECK(c);
	json_decref(c);
	CHECK(!tg_gate_prompt_get(f.gate, &reader, "fake.greet", "{\"who\":\"a\"}", &err));
	CHECK(err.code == TG_ERR_FORBIDDEN && strstr(err.msg, "fake.prompts:read"));
	CHECK(!tg_gate_complete(f.gate, &reader, "ref/prompt", "fake.greet", "who", "a", NULL,
				&err));
	CHECK(err.code == TG_ERR_FORBIDDEN);
	text = tg_gate_complete(f.gate, &reader, "ref/resource", URI("fake/file:///logs/{day}"),
				"day", "t", NULL, &err);
	CHECK(text && strstr(text, "tuesday"));
	free(text);
	fix_close(&f);
	recs = fix_records(f.log);
	CHECK(recs && fix_count(recs, "read", "fake.resources", "forbidden", NULL) == 2);
	CHECK(fix_count(recs, "read", "fake.prompts", "forbidden", NULL) == 1);
	CHECK(fix_count(recs, "read", "fake.resources", "ok", NULL) == 1);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

static int prompts_and_completion(void)
{
	struct fix_spec spec = { "gateresprompt", plain, NULL, TG_ANOMALY_DEFAULT, two };
	struct tg_reader who = { "alice", NULL };
	struct tg_error err;
	struct fix f;
	json_t *r, *recs;
	const char *t;
	char *text;

	if (fix_open(&f, &spec) < 0)
		return -1;
	json_decref(listed(f.gate, NULL, 2, "fake.greet"));
	text = tg_gate_prompt_get(f.gate, &who, "fake.greet", "{\"who\":\"Ann\"}", &err);
	r = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	t = json_string_value(json_object_get(
		json_object_get(json_array_get(json_object_get(r, "messages"), 0), "content"),
		"text"));
	CHECK(t && strcmp(t, "Hello, Ann!") == 0);
	json_decref(r);
	CHECK(!tg_gate_prompt_get(f.gate, &who, "fake.greet", "{}", &err));
	CHECK(err.code == TG_ERR_INVALID && strstr(err.msg, "greet needs who"));
	CHECK(!tg_gate_prompt_get(f.gate, &who, "bare.greet", NULL, &err));
	CHECK(strstr(err.msg, "declares no prompts capability"));
	text = tg_gate_complete(f.gate, &who, "ref/prompt", "fake.greet", "who", "al", NULL, &err);
	r = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	CHECK(json_array_size(json_object_get(r, "values")) == 2);
	CHECK(strcmp(json_string_value(json_array_get(json_object_get(r, "values"), 1)),
		     "albert") == 0);
	json_decref(r);
	/* completions are not recorded; prompts/get is */
	fix_close(&f);
	recs = fix_records(f.log);
	CHECK(recs && fix_count(recs, "read", "fake.prompts", "ok", NULL) == 1);
	CHECK(fix_count(recs, "read", "fake.prompts", "upstream_error", NULL) == 1);
	CHECK(fix_count(recs, "read", NULL, NULL, NULL) == 3);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

struct heard {
	struct tg_gate *g;
	int resources, prompts;
};

static void on_change(void *ctx, const struct tg_catalog *old, const struct tg_catalog *now)
{
	struct heard *h = ctx;
	int r, p;

	(void)old;
	(void)now;
	tg_gate_lists_changed(h->g, &r, &p);
	__atomic_or_fetch(&h->resources, r, __ATOMIC_SEQ_CST);
	__atomic_or_fetch(&h->prompts, p, __ATOMIC_SEQ_CST);
}

/* the server's notifications/resources/list_changed: listed anew, told */
static int list_changed(void)
{
	struct fix_spec spec = { "gatereschg", plain, NULL, TG_ANOMALY_DEFAULT, two };
	struct tg_reader who = { "alice", NULL };
	struct heard h = { NULL, 0, 0 };
	struct tg_error err;
	struct fix f;
	json_t *c;

	if (fix_open(&f, &spec) < 0)
		return -1;
	h.g = f.gate;
	json_decref(listed(f.gate, NULL, 0, URI("fake/file:///notes.txt")));
	tg_gate_on_change(f.gate, on_change, &h);
	__atomic_store_n(&h.resources, 0, __ATOMIC_SEQ_CST);
	c = read_uri(&f, &who, URI("fake/file:///add"), &err);
	CHECK(c);
	json_decref(c);
	c = listed(f.gate, NULL, 0, URI("fake/file:///added.txt"));
	CHECK(c);
	json_decref(c);
	for (int i = 0; i < 500 && !__atomic_load_n(&h.resources, __ATOMIC_SEQ_CST); i++)
		usleep(10000);
	CHECK(__atomic_load_n(&h.resources, __ATOMIC_SEQ_CST) == 1);
	tg_gate_on_change(f.gate, NULL, NULL);
	fix_remove(&f);
	return 0;
}

const struct unit_test gate_resources_tests[] = {
	{ "gate_resources/listing", listing },
	{ "gate_resources/reads", reads },
	{ "gate_resources/scopes", scopes },
	{ "gate_resources/prompts_and_completion", prompts_and_completion },
	{ "gate_resources/list_changed", list_changed },
	UNIT_TESTS_END
};
