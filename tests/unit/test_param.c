/* Unit tests: x-mcp-header, the contract's annotations
 * (src/catalog/param_header.c) and the Mcp-Param-* headers checked against
 * a call's arguments (src/mcp/param.c). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mcp/mcp_int.h"
#include "toolgate/contract.h"
#include "unit.h"

#define HEAD                                                                        \
	"{\"name\":\"db.query\",\"version\":\"1.0.0\",\"description\":\"d\","      \
	"\"owner\":{\"team\":\"t\",\"contact\":\"c\"},\"authority\":\"read\","      \
	"\"executor\":{\"kind\":\"builtin\",\"name\":\"echo\"},\"input_schema\":"

#define GOOD                                                                        \
	"{\"type\":\"object\",\"properties\":{"                                     \
	"\"region\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"},"             \
	"\"shard\":{\"type\":\"integer\",\"x-mcp-header\":\"Shard\"},"   \
	"\"dry\":{\"type\":\"boolean\",\"x-mcp-header\":\"Dry-Run\"},"              \
	"\"where\":{\"type\":\"object\",\"properties\":{\"tenant\":"                \
	"{\"type\":\"string\",\"x-mcp-header\":\"Tenant\"}}},"                      \
	"\"sql\":{\"type\":\"string\",\"examples\":[{\"x-mcp-header\":\"data\"}]}}}"

/* A contract with the input schema given; OUT *c; err filled. */
static int load(const char *schema, struct tg_contract **c, struct tg_error *err)
{
	char *text;
	int rc;

	if (asprintf(&text, HEAD "%s}", schema) < 0)
		return -2;
	rc = tg_contract_parse(text, strlen(text), "tools/db.json", NULL, c, err);
	free(text);
	return rc;
}

/* The schema is refused, the message naming want. */
static int refused(const char *schema, const char *want)
{
	struct tg_contract *c = NULL;
	struct tg_error err;
	int ok = load(schema, &c, &err) == -1 && strstr(err.msg, want) &&
		 strstr(err.msg, "contract tools/db.json: ");

	if (!ok)
		fprintf(stderr, "%s: %s\n", schema, c ? "accepted" : err.msg);
	tg_contract_free(c);
	return ok;
}

static const struct tg_param_header *header(const struct tg_contract *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nparam_headers; i++)
		if (strcmp(c->param_headers[i].name, name) == 0)
			return &c->param_headers[i];
	return NULL;
}

static int annotations_kept(void)
{
	const struct tg_param_header *p;
	struct tg_contract *c;
	struct tg_error err;

	CHECK(load(GOOD, &c, &err) == 0);
	CHECK(c->nparam_headers == 4); /* not the example's */
	CHECK((p = header(c, "Region")) && p->type == TG_PARAM_STRING && p->depth == 1 &&
	      strcmp(p->path[0], "region") == 0 && !p->path[1]);
	CHECK((p = header(c, "Shard")) && p->type == TG_PARAM_INTEGER);
	CHECK((p = header(c, "Dry-Run")) && p->type == TG_PARAM_BOOLEAN);
	CHECK((p = header(c, "Tenant")) && p->depth == 2 && strcmp(p->path[0], "where") == 0 &&
	      strcmp(p->path[1], "tenant") == 0);
	tg_contract_free(c);
	/* none: nothing kept */
	CHECK(load("{\"type\":\"object\"}", &c, &err) == 0 && c->nparam_headers == 0);
	tg_contract_free(c);
	return 0;
}

#define PROP(schema) "{\"type\":\"object\",\"properties\":{\"p\":" schema "}}"

static int name_rules(void)
{
	CHECK(refused(PROP("{\"type\":\"string\",\"x-mcp-header\":\"Re gion\"}"),
		      "input_schema.properties.p.x-mcp-header: \"Re gion\" is not an HTTP token"));
	CHECK(refused(PROP("{\"type\":\"string\",\"x-mcp-header\":\"\"}"),
		      "input_schema.properties.p.x-mcp-header: must not be empty"));
	CHECK(refused(PROP("{\"type\":\"string\",\"x-mcp-header\":\"A\\r\\nB\"}"),
		      "\"A\\r\\nB\" holds a control character"));
	CHECK(refused(PROP("{\"type\":\"string\",\"x-mcp-header\":\"R\\u00e9gion\"}"),
		      "is not an HTTP token"));
	CHECK(refused(PROP("{\"type\":\"string\",\"x-mcp-header\":\"A:B\"}"), "not an HTTP token"));
	CHECK(refused(PROP("{\"type\":\"string\",\"x-mcp-header\":7}"), "must be a string"));
	CHECK(refused("{\"type\":\"object\",\"properties\":{"
		      "\"a\":{\"type\":\"string\",\"x-mcp-header\":\"Region\"},"
		      "\"b\":{\"type\":\"object\",\"properties\":{\"c\":"
		      "{\"type\":\"string\",\"x-mcp-header\":\"rEGION\"}}}}}",
		      "input_schema.properties.b.properties.c.x-mcp-header: \"rEGION\" repeats "
		      "\"Region\""));
	return 0;
}

static int type_rules(void)
{
	CHECK(refused(PROP("{\"type\":\"number\",\"x-mcp-header\":\"N\"}"),
		      "type number may not be mirrored"));
	CHECK(refused(PROP("{\"type\":\"object\",\"x-mcp-header\":\"N\"}"),
		      "integer, string or boolean"));
	CHECK(refused(PROP("{\"type\":\"array\",\"x-mcp-header\":\"N\"}"),
		      "integer, string or boolean"));
	CHECK(refused(PROP("{\"x-mcp-header\":\"N\"}"), "integer, string or boolean"));
	CHECK(refused(PROP("{\"type\":[\"string\",\"integer\"],\"x-mcp-header\":\"N\"}"),
		      "integer, string or boolean"));
	return 0;
}

/* Only a chain of properties from the root: no items, composition,
 * conditionals, $defs or $ref. */
static int reach_rules(void)
{
	static const char *const where[][2] = {
		{ "{\"type\":\"array\",\"items\":{\"type\":\"string\",\"x-mcp-header\":\"X\"}}",
		  "input_schema.properties.p.items.x-mcp-header: only a property reached from "
		  "the root through properties alone may be mirrored; this one is under items" },
		{ "{\"type\":\"array\",\"prefixItems\":[{\"type\":\"string\",\"x-mcp-header\":\"X\"}]}",
		  "input_schema.properties.p.prefixItems[0].x-mcp-header" },
		{ "{\"anyOf\":[{\"type\":\"string\",\"x-mcp-header\":\"X\"}]}", "under anyOf" },
		{ "{\"oneOf\":[{\"type\":\"string\",\"x-mcp-header\":\"X\"}]}", "under oneOf" },
		{ "{\"allOf\":[{\"type\":\"string\",\"x-mcp-header\":\"X\"}]}", "under allOf" },
		{ "{\"not\":{\"type\":\"string\",\"x-mcp-header\":\"X\"}}", "under not" },
		{ "{\"if\":{\"type\":\"string\"},\"then\":{\"type\":\"string\",\"x-mcp-header\":\"X\"}}",
		  "under then" },
		{ "{\"type\":\"object\",\"additionalProperties\":{\"type\":\"string\","
		  "\"x-mcp-header\":\"X\"}}", "under additionalProperties" },
		{ "{\"type\":\"object\",\"patternProperties\":{\"^a\":{\"type\":\"string\","
		  "\"x-mcp-header\":\"X\"}}}", "under patternProperties" },
		/* properties below a forbidden keyword stay forbidden */
		{ "{\"anyOf\":[{\"type\":\"object\",\"properties\":{\"q\":{\"type\":\"string\","
		  "\"x-mcp-header\":\"X\"}}}]}",
		  "input_schema.properties.p.anyOf[0].properties.q.x-mcp-header" },
	};
	char schema[512];
	size_t i;

	for (i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		snprintf(schema, sizeof(schema), PROP("%s"), where[i][0]);
		CHECK(refused(schema, where[i][1]));
	}
	CHECK(refused("{\"$defs\":{\"r\":{\"type\":\"string\",\"x-mcp-header\":\"R\"}},"
		      "\"type\":\"object\",\"properties\":{\"r\":{\"$ref\":\"#/$defs/r\"}}}",
		      "input_schema.$defs.r.x-mcp-header: only a property reached from the root "
		      "through properties alone may be mirrored; this one is under $defs"));
	CHECK(refused("{\"type\":\"string\",\"x-mcp-header\":\"Root\"}", "the root is not a property"));
	return 0;
}

/* An annotation inside a shared schema file is reached through $ref:
 * refused, though the contract itself holds none. */
static int through_shared_ref(void)
{
	char dir[] = "/tmp/tg-unit-param-XXXXXX", path[256];
	struct tg_contract *c = NULL;
	struct tg_error err;
	FILE *f;
	int rc;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/schemas", dir);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/schemas/region.json", dir);
	CHECK((f = fopen(path, "w")));
	fputs("{\"type\":\"string\",\"x-mcp-header\":\"Region\"}", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/db.json", dir);
	CHECK((f = fopen(path, "w")));
	fputs(HEAD "{\"type\":\"object\",\"properties\":{\"region\":"
		   "{\"$ref\":\"schemas/region.json\"}}}}", f);
	fclose(f);
	rc = tg_contract_load(path, NULL, &c, &err);
	tg_contract_free(c);
	unlink(path);
	snprintf(path, sizeof(path), "%s/schemas/region.json", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/schemas", dir);
	rmdir(path);
	rmdir(dir);
	if (rc == 0 || !strstr(err.msg, "under $defs"))
		fprintf(stderr, "%s\n", rc == 0 ? "accepted" : err.msg);
	CHECK(rc == -1 && strstr(err.msg, "input_schema.$defs.") &&
	      strstr(err.msg, "under $defs (in " TG_CATALOG_BASE "schemas/region.json)"));
	return 0;
}

static int count_bounded(void)
{
	char schema[8192];
	size_t at, i;

	at = (size_t)snprintf(schema, sizeof(schema), "{\"type\":\"object\",\"properties\":{");
	for (i = 0; i <= TG_MAX_PARAM_HEADERS; i++)
		at += (size_t)snprintf(schema + at, sizeof(schema) - at,
				       "%s\"p%zu\":{\"type\":\"string\",\"x-mcp-header\":\"H%zu\"}",
				       i ? "," : "", i, i);
	snprintf(schema + at, sizeof(schema) - at, "}}");
	CHECK(refused(schema, "more than 32 annotations"));
	return 0;
}

/* ---- the headers against the arguments ----------------------------------------- */

/* Headers as "Name: value" lines, looked up as the HTTP transport does. */
static const char *lines_get(void *ctx, const char *name, unsigned *count)
{
	const char *const *l = ctx, *first = NULL;
	size_t n = strlen(name);

	*count = 0;
	for (; *l; l++)
		if (strncasecmp(*l, name, n) == 0 && strncmp(*l + n, ": ", 2) == 0 &&
		    (*count)++ == 0)
			first = *l + n + 2;
	return first;
}

/* NULL when the headers match arguments, else the message. */
static const char *check_call(const struct tg_contract *c, const char *arguments,
			      const char *const *headers)
{
	static char why[400];
	json_t *args = json_loads(arguments, 0, NULL);
	const char *r;

	if (!args)
		return "bad test arguments";
	r = mcp_params_mismatch(c, args, lines_get, (void *)headers, why, sizeof(why));
	json_decref(args);
	return r;
}

#define MATCHES(args, ...)                                                           \
	do {                                                                         \
		const char *const h_[] = { __VA_ARGS__, NULL };                      \
		const char *r_ = check_call(c, args, h_);                            \
		if (r_)                                                              \
			fprintf(stderr, "%s: %s\n", args, r_);                       \
		CHECK(!r_);                                                          \
	} while (0)

#define MISMATCH(want, args, ...)                                                    \
	do {                                                                         \
		const char *const h_[] = { __VA_ARGS__, NULL };                      \
		const char *r_ = check_call(c, args, h_);                            \
		if (!r_ || !strstr(r_, want))                                        \
			fprintf(stderr, "%s: %s\n", args, r_ ? r_ : "matched");      \
		CHECK(r_ && strstr(r_, want));                                       \
	} while (0)

static int headers_match(void)
{
	struct tg_contract *c;
	struct tg_error err;

	CHECK(load(GOOD, &c, &err) == 0);
	MATCHES("{\"region\":\"us-west1\",\"shard\":42,\"dry\":false,\"where\":{\"tenant\":\"acme\"}}",
		"Mcp-Param-Region: us-west1", "mcp-param-shard: 42", "Mcp-Param-Dry-Run: false",
		"Mcp-Param-Tenant: acme");
	/* null or absent: no header expected; unknown ones ignored */
	MATCHES("{\"shard\":null,\"where\":{}}", "Mcp-Param-Other: x");
	MATCHES("{\"where\":3}", "X: y");
	/* integers numerically; base64 decoded */
	MATCHES("{\"shard\":42}", "Mcp-Param-Shard: 42.0");
	MATCHES("{\"shard\":42.0}", "Mcp-Param-Shard: 4.2e1");
	MATCHES("{\"shard\":-7}", "Mcp-Param-Shard: -7");
	MATCHES("{\"region\":\"Hello, \\u4e16\\u754c\"}",
		"Mcp-Param-Region: =?base64?SGVsbG8sIOS4lueVjA==?=");
	MATCHES("{\"region\":\" padded \"}", "Mcp-Param-Region: =?base64?IHBhZGRlZCA=?=");
	MATCHES("{\"region\":\"=?base64?literal?=\"}",
		"Mcp-Param-Region: =?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?=");
	tg_contract_free(c);
	return 0;
}

static int headers_refused(void)
{
	struct tg_contract *c;
	struct tg_error err;

	CHECK(load(GOOD, &c, &err) == 0);
	MISMATCH("Mcp-Param-Region is missing; the body's arguments.region is set",
		 "{\"region\":\"us-west1\"}", "X: y");
	MISMATCH("Mcp-Param-Region does not match the body's arguments.region",
		 "{\"region\":\"us-west1\"}", "Mcp-Param-Region: us-east1");
	MISMATCH("Mcp-Param-Tenant does not match the body's arguments.where.tenant",
		 "{\"where\":{\"tenant\":\"acme\"}}", "Mcp-Param-Tenant: ACME");
	MISMATCH("Mcp-Param-Tenant is given but the body has no arguments.where.tenant",
		 "{\"where\":{}}", "Mcp-Param-Tenant: acme");
	MISMATCH("Mcp-Param-Shard does not match", "{\"shard\":42}", "Mcp-Param-Shard: 42.5");
	MISMATCH("Mcp-Param-Shard does not match", "{\"shard\":42}", "Mcp-Param-Shard: 0x2a");
	MISMATCH("Mcp-Param-Shard does not match", "{\"shard\":42}", "Mcp-Param-Shard: 43");
	MISMATCH("Mcp-Param-Shard does not match", "{\"shard\":9007199254740993}",
		 "Mcp-Param-Shard: 9007199254740992");
	MISMATCH("Mcp-Param-Dry-Run does not match", "{\"dry\":true}", "Mcp-Param-Dry-Run: True");
	MISMATCH("Mcp-Param-Region is given 2 times", "{\"region\":\"a\"}",
		 "Mcp-Param-Region: a", "MCP-PARAM-REGION: b");
	MISMATCH("Mcp-Param-Region holds characters", "{\"region\":\"caf\\u00e9\"}",
		 "Mcp-Param-Region: caf\xc3\xa9");
	MISMATCH("Mcp-Param-Region does not match", "{\"region\":\"a\"}",
		 "Mcp-Param-Region: =?base64?not base64!?=");
	/* a decoded NUL does not end the comparison early */
	MISMATCH("Mcp-Param-Region does not match", "{\"region\":\"ab\"}",
		 "Mcp-Param-Region: =?base64?YWIAYw==?=");
	tg_contract_free(c);
	return 0;
}

static int header_value_bounded(void)
{
	struct tg_contract *c;
	struct tg_error err;
	char *line = malloc(20 + 8193);

	CHECK(line && load(GOOD, &c, &err) == 0);
	strcpy(line, "Mcp-Param-Region: ");
	memset(line + strlen(line), 'a', 8193);
	line[18 + 8193] = '\0';
	MISMATCH("longer than 8192 bytes", "{\"region\":\"a\"}", line);
	tg_contract_free(c);
	free(line);
	return 0;
}

const struct unit_test param_tests[] = {
	{ "param/annotations_kept", annotations_kept },
	{ "param/name_rules", name_rules },
	{ "param/type_rules", type_rules },
	{ "param/reach_rules", reach_rules },
	{ "param/through_shared_ref", through_shared_ref },
	{ "param/count_bounded", count_bounded },
	{ "param/headers_match", headers_match },
	{ "param/headers_refused", headers_refused },
	{ "param/header_value_bounded", header_value_bounded },
	UNIT_TESTS_END,
};
