/* Unit tests: src/catalog/catalog.c, loading, resolution, MCP definitions. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "toolgate/catalog.h"
#include "toolgate/gate.h"
#include "unit.h"

static int write_contract(const char *dir, const char *file, const char *name,
			  const char *version, const char *extra)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "{\"name\":\"%s\",\"version\":\"%s\",\"description\":\"d\","
		   "\"owner\":{\"team\":\"t\",\"contact\":\"c\"},\"input_schema\":{\"type\":\"object\"},"
		   "\"executor\":{\"kind\":\"builtin\",\"name\":\"x\"},%s}",
		name, version, extra);
	return fclose(f);
}

/* Each test runs in its own process (unit.h): each makes its directory. */
static char dir[64];

static void remove_catalog(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static int make_catalog(void)
{
	static const char *const read = "\"authority\":\"read\"";

	strcpy(dir, "/tmp/tg-unit-catalog-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	return write_contract(dir, "q100.json", "sql.query", "1.0.0",
			      "\"authority\":\"read\",\"deprecation\":{\"since\":\"2026-01-01\","
			      "\"sunset\":\"2026-06-01\",\"replacement\":\"sql.query@2\"}") |
	       write_contract(dir, "q120.json", "sql.query", "1.2.0", read) |
	       write_contract(dir, "q200.json", "sql.query", "2.0.0",
			      "\"authority\":\"read\",\"title\":\"Query\",\"open_world\":false") |
	       write_contract(dir, "q210.json", "sql.query", "2.1.0-rc.1", read) |
	       write_contract(dir, "old.json", "legacy.tool", "1.0.0",
			      "\"authority\":\"read\",\"deprecation\":{\"since\":\"2025-01-01\","
			      "\"sunset\":\"2025-06-01\",\"replacement\":\"sql.query@2\"}") |
	       write_contract(dir, "w.json", "files.delete", "1.0.0",
			      "\"authority\":\"write\",\"dry_run\":\"supported\","
			      "\"compensation\":{\"irreversible\":\"deleted files are gone\"}") |
	       write_contract(dir, "notes.txt", "ignored", "9.9.9", read);
}

static int resolve_is(const struct tg_catalog *c, const char *ref, const char *today,
		      const char *want)
{
	const struct tg_contract *k;
	struct tg_error err;

	if (tg_catalog_resolve(c, ref, today, &k, &err) < 0) {
		fprintf(stderr, "%s: %s\n", ref, err.msg);
		return 0;
	}
	if (strcmp(k->version_text, want) != 0) {
		fprintf(stderr, "%s: %s, want %s\n", ref, k->version_text, want);
		return 0;
	}
	return 1;
}

static int resolution(void)
{
	const struct tg_contract *k;
	struct tg_catalog *c;
	struct tg_error err;

	CHECK(make_catalog() == 0);
	CHECK(tg_catalog_load_dir(dir, NULL, &c, &err) == 0);
	CHECK(tg_catalog_count(c) == 6);
	CHECK(strcmp(tg_catalog_at(c, 0)->name, "files.delete") == 0);
	CHECK(resolve_is(c, "sql.query", "2026-03-01", "2.0.0"));      /* not the rc */
	CHECK(resolve_is(c, "sql.query@1", "2026-03-01", "1.2.0"));    /* not deprecated 1.0 */
	CHECK(resolve_is(c, "sql.query@1.0", "2026-03-01", "1.0.0"));  /* deprecated, still live */
	CHECK(resolve_is(c, "sql.query@2.1.0-rc.1", "2026-03-01", "2.1.0-rc.1"));
	CHECK(tg_catalog_resolve(c, "sql.query@1.0.0", "2026-07-01", &k, &err) < 0);
	CHECK(err.code == TG_ERR_UNAVAILABLE && strstr(err.msg, "retired on 2026-06-01") &&
	      strstr(err.msg, "use sql.query@2"));
	CHECK(tg_catalog_resolve(c, "legacy.tool", NULL, &k, &err) < 0 && strstr(err.msg, "retired"));
	CHECK(tg_catalog_resolve(c, "sql.query@3", NULL, &k, &err) < 0 &&
	      strstr(err.msg, "no such tool version"));
	CHECK(tg_catalog_resolve(c, "nope", NULL, &k, &err) < 0 && strstr(err.msg, "no such tool"));
	CHECK(tg_catalog_resolve(c, "sql.query@x", NULL, &k, &err) < 0);
	CHECK(tg_catalog_resolve(c, "@1", NULL, &k, &err) < 0);
	tg_catalog_free(c);
	remove_catalog();
	return 0;
}

static int mcp_definition(void)
{
	const struct tg_contract *k;
	struct tg_catalog *c;
	struct tg_error err;
	json_t *o, *a;
	char *text;

	CHECK(make_catalog() == 0);
	CHECK(tg_catalog_load_dir(dir, NULL, &c, &err) == 0);
	CHECK(tg_catalog_resolve(c, "sql.query", "2026-03-01", &k, &err) == 0);
	text = tg_catalog_mcp_tool(k, NULL, &err);
	CHECK(text && (o = json_loads(text, 0, NULL)));
	a = json_object_get(o, "annotations");
	CHECK(strcmp(json_string_value(json_object_get(o, "name")), "sql.query") == 0);
	CHECK(json_is_object(json_object_get(o, "inputSchema")));
	CHECK(json_is_true(json_object_get(a, "readOnlyHint")));
	CHECK(json_is_false(json_object_get(a, "destructiveHint")));
	CHECK(json_is_true(json_object_get(a, "idempotentHint")));
	CHECK(json_is_false(json_object_get(a, "openWorldHint")));
	json_decref(o);
	free(text);
	CHECK(tg_catalog_resolve(c, "files.delete", NULL, &k, &err) == 0);
	text = tg_catalog_mcp_tool(k, "files_delete", &err);
	CHECK(text && (o = json_loads(text, 0, NULL)));
	a = json_object_get(o, "annotations");
	CHECK(strcmp(json_string_value(json_object_get(o, "name")), "files_delete") == 0);
	CHECK(json_is_false(json_object_get(a, "readOnlyHint")));
	CHECK(json_is_true(json_object_get(a, "destructiveHint")));
	CHECK(json_is_false(json_object_get(a, "idempotentHint")));
	json_decref(o);
	free(text);
	tg_catalog_free(c);
	remove_catalog();
	return 0;
}

static int duplicates_and_errors(void)
{
	struct tg_catalog *c;
	struct tg_error err;
	char path[512];

	CHECK(make_catalog() == 0);
	CHECK(write_contract(dir, "zz-dup.json", "sql.query", "1.2.0", "\"authority\":\"read\"") == 0);
	CHECK(tg_catalog_load_dir(dir, NULL, &c, &err) < 0);
	CHECK(strstr(err.msg, "sql.query@1.2.0 is in both") && strstr(err.msg, "zz-dup.json"));
	snprintf(path, sizeof(path), "%s/zz-dup.json", dir);
	unlink(path);
	CHECK(write_contract(dir, "zz-bad.json", "x", "1.0.0", "\"authority\":\"maybe\"") == 0);
	CHECK(tg_catalog_load_dir(dir, NULL, &c, &err) < 0 && strstr(err.msg, "zz-bad.json") &&
	      strstr(err.msg, "authority"));
	unlink(strcat(strcpy(path, dir), "/zz-bad.json"));
	/* a compensation names a write tool of the catalogue */
	CHECK(write_contract(dir, "zz-w.json", "files.write", "1.0.0",
			     "\"authority\":\"write\",\"dry_run\":\"supported\","
			     "\"compensation\":{\"tool\":\"files.undo@1\"}") == 0);
	CHECK(tg_catalog_load_dir(dir, NULL, &c, &err) < 0 && strstr(err.msg, "zz-w.json") &&
	      strstr(err.msg, "compensation.tool: tool 'files.undo@1': no such tool"));
	CHECK(write_contract(dir, "zz-u.json", "files.undo", "1.0.0", "\"authority\":\"read\"") == 0);
	CHECK(tg_catalog_load_dir(dir, NULL, &c, &err) < 0 &&
	      strstr(err.msg, "files.undo@1.0.0 is a read tool"));
	CHECK(write_contract(dir, "zz-u.json", "files.undo", "1.0.0",
			     "\"authority\":\"write\",\"dry_run\":\"supported\","
			     "\"compensation\":{\"irreversible\":\"it is the undo\"}") == 0);
	CHECK(tg_catalog_load_dir(dir, NULL, &c, &err) == 0);
	tg_catalog_free(c);
	remove_catalog();
	CHECK(tg_catalog_load_dir("/nonexistent-tg", NULL, &c, &err) < 0);
	return 0;
}

static struct tg_contract *contract(const char *input, const char *output, const char *authority)
{
	char text[2048];
	struct tg_contract *c = NULL;
	struct tg_error err;

	snprintf(text, sizeof(text),
		 "{\"name\":\"t\",\"version\":\"1.0.0\",\"description\":\"d\","
		 "\"owner\":{\"team\":\"t\",\"contact\":\"c\"},\"authority\":\"%s\","
		 "\"input_schema\":%s,%s%s%s\"executor\":{\"kind\":\"builtin\",\"name\":\"x\"}%s}",
		 authority, input, output ? "\"output_schema\":" : "", output ? output : "",
		 output ? "," : "",
		 strcmp(authority, "write") == 0
			 ? ",\"dry_run\":\"unsupported\",\"compensation\":{\"irreversible\":\"r\"}"
			 : "");
	if (tg_contract_parse(text, strlen(text), "t.json", NULL, &c, &err) < 0)
		fprintf(stderr, "%s\n", err.msg);
	return c;
}

/* diff(old, new) breaks callers (1) or not (0); -1 on error. */
static int breaks(const char *oi, const char *oo, const char *ni, const char *no)
{
	struct tg_contract *o = contract(oi, oo, "read"), *n = contract(ni, no, "read");
	struct tg_diff d;
	struct tg_error err;
	int rc = -1;

	if (o && n && tg_catalog_diff(o, n, &d, &err) == 0)
		rc = d.breaking;
	tg_contract_free(o);
	tg_contract_free(n);
	return rc;
}

static int diffs(void)
{
	const char *base = "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}}}";

	CHECK(breaks(base, NULL, base, NULL) == 0);
	/* inputs: accepting more is compatible, accepting less breaks */
	CHECK(breaks(base, NULL, "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":[\"string\",\"null\"]}}}", NULL) == 0);
	CHECK(breaks(base, NULL, "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\",\"maxLength\":3}}}", NULL) == 1);
	CHECK(breaks(base, NULL, "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"},\"b\":{}}}", NULL) == 0);
	CHECK(breaks(base, NULL, "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"},\"b\":{}},\"required\":[\"b\"]}", NULL) == 1);
	CHECK(breaks(base, NULL, "{\"type\":\"object\",\"properties\":{}}", NULL) == 1);
	CHECK(breaks(base, NULL, "{\"type\":\"object\",\"properties\":{\"a\":{\"enum\":[\"x\"]}}}", NULL) == 1);
	CHECK(breaks("{\"properties\":{\"a\":{\"enum\":[1,2]}}}", NULL, "{\"properties\":{\"a\":{\"enum\":[1,2,3]}}}", NULL) == 0);
	CHECK(breaks(base, NULL, "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"}},\"additionalProperties\":false}", NULL) == 1);
	/* outputs: promising less or returning more breaks */
	CHECK(breaks(base, base, base, "{\"type\":\"object\",\"properties\":{}}") == 1);
	CHECK(breaks(base, "{\"properties\":{\"n\":{\"enum\":[1]}}}", base, "{\"properties\":{\"n\":{\"enum\":[1,2]}}}") == 1);
	CHECK(breaks(base, base, base, "{\"type\":\"object\",\"properties\":{\"a\":{\"type\":\"string\"},\"z\":{}}}") == 0);
	/* read to write */
	{
		struct tg_contract *o = contract(base, NULL, "read"), *n = contract(base, NULL, "write");
		struct tg_diff d;
		struct tg_error err;

		CHECK(o && n && tg_catalog_diff(o, n, &d, &err) == 0 && d.breaking);
		CHECK(strstr(d.findings[0].text, "read became write"));
		tg_contract_free(o);
		tg_contract_free(n);
	}
	return 0;
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* 1 valid, 0 invalid, -1 error, for a compiled schema and instance text. */
static int valid(const struct tg_schema *s, const char *inst)
{
	struct tg_error err;

	return tg_schema_validate(s, inst, strlen(inst), NULL, &err);
}

static int shared_schemas(void)
{
	static const char *const insts[][2] = {
		{ "{\"price\":{\"amount\":1.5,\"currency\":\"EUR\"}}", "1" },
		{ "{\"price\":{\"amount\":-1,\"currency\":\"EUR\"}}", "0" },
		{ "{\"price\":{\"amount\":1,\"currency\":\"GBP\"}}", "0" },
		{ "{\"price\":{\"amount\":1}}", "0" },
	};
	const struct tg_contract *k;
	struct tg_catalog *c;
	struct tg_schema *b;
	struct tg_error err;
	char path[256], *text;
	json_t *o, *in;
	size_t i;

	strcpy(dir, "/tmp/tg-unit-catalog-XXXXXX");
	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/schemas", dir);
	CHECK(mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/schemas/money.json", dir);
	CHECK(write_file(path, "{\"$defs\":{\"amount\":{\"type\":\"number\",\"minimum\":0}},"
			       "\"type\":\"object\",\"properties\":{\"amount\":{\"$ref\":\"#/$defs/amount\"},"
			       "\"currency\":{\"$ref\":\"currency.json\"}},"
			       "\"required\":[\"amount\",\"currency\"]}") == 0);
	snprintf(path, sizeof(path), "%s/schemas/currency.json", dir);
	CHECK(write_file(path, "{\"enum\":[\"EUR\",\"USD\"]}") == 0);
	snprintf(path, sizeof(path), "%s/pay.json", dir);
	CHECK(write_file(path, "{\"name\":\"pay\",\"version\":\"1.0.0\",\"description\":\"d\","
			       "\"owner\":{\"team\":\"t\",\"contact\":\"c\"},\"authority\":\"read\","
			       "\"executor\":{\"kind\":\"builtin\",\"name\":\"x\"},"
			       "\"input_schema\":{\"type\":\"object\",\"properties\":{\"price\":"
			       "{\"$ref\":\"schemas/money.json\"}},\"required\":[\"price\"]}}") == 0);
	CHECK(tg_catalog_load_dir(dir, NULL, &c, &err) == 0);
	CHECK(tg_catalog_resolve(c, "pay", NULL, &k, &err) == 0);
	for (i = 0; i < sizeof(insts) / sizeof(insts[0]); i++)
		CHECK(valid(k->input_schema, insts[i][0]) == atoi(insts[i][1]));
	/* the MCP definition carries the shared schemas: compiled without
	 * the files, it answers the same */
	text = tg_catalog_mcp_tool(k, NULL, &err);
	CHECK(text && (o = json_loads(text, 0, NULL)));
	in = json_object_get(o, "inputSchema");
	CHECK(json_object_size(json_object_get(in, "$defs")) == 2);
	CHECK(strcmp(json_string_value(json_object_get(in, "$id")), TG_CATALOG_BASE "pay.json") == 0);
	free(text);
	text = json_dumps(in, JSON_COMPACT);
	CHECK(text && tg_schema_compile(text, strlen(text), NULL, &b, &err) == 0);
	for (i = 0; i < sizeof(insts) / sizeof(insts[0]); i++)
		CHECK(valid(b, insts[i][0]) == atoi(insts[i][1]));
	tg_schema_free(b);
	free(text);
	json_decref(o);
	tg_catalog_free(c);
	/* what must not resolve: a missing file, a way out of schemas/, a
	 * file elsewhere on the host */
	{
		static const char *const refs[] = { "schemas/nope.json", "schemas/../pay.json",
						    "schemas/%2e%2e/pay.json", "file:///etc/passwd",
						    "/etc/passwd" };
		char contract[1024];

		for (i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
			struct tg_contract *bad = NULL;

			snprintf(contract, sizeof(contract),
				 "{\"name\":\"bad\",\"version\":\"1.0.0\",\"description\":\"d\","
				 "\"owner\":{\"team\":\"t\",\"contact\":\"c\"},\"authority\":\"read\","
				 "\"executor\":{\"kind\":\"builtin\",\"name\":\"x\"},"
				 "\"input_schema\":{\"$ref\":\"%s\"}}", refs[i]);
			snprintf(path, sizeof(path), "%s/bad.json", dir);
			CHECK(write_file(path, contract) == 0);
			CHECK(tg_contract_load(path, NULL, &bad, &err) == -1);
			if (!strstr(err.msg, "input_schema")) {
				fprintf(stderr, "%s: %s\n", refs[i], err.msg);
				CHECK(0);
			}
		}
	}
	/* draft-07 ignores what sits beside a root "$ref": the bundle moves
	 * the root down a level */
	{
		struct tg_contract *d7;

		CHECK(write_file(path, "{\"name\":\"d7\",\"version\":\"1.0.0\",\"description\":\"d\","
				       "\"owner\":{\"team\":\"t\",\"contact\":\"c\"},\"authority\":\"read\","
				       "\"executor\":{\"kind\":\"builtin\",\"name\":\"x\"},\"input_schema\":"
				       "{\"$schema\":\"http://json-schema.org/draft-07/schema#\","
				       "\"$ref\":\"schemas/currency.json\"}}") == 0);
		CHECK(tg_contract_load(path, NULL, &d7, &err) == 0);
		text = tg_schema_bundle(d7->input_schema, &err);
		CHECK(text && tg_schema_compile(text, strlen(text), NULL, &b, &err) == 0);
		CHECK(valid(b, "\"EUR\"") == 1 && valid(b, "\"GBP\"") == 0);
		tg_schema_free(b);
		free(text);
		tg_contract_free(d7);
	}
	remove_catalog();
	return 0;
}

/* A catalogue of one tool plus the given resource and prompt files
 * ({name, text} pairs, NULL-ended); 0 loaded, -1 refused with want in the
 * message. */
static int content_case(const char *const *files, const char *want, struct tg_catalog **out)
{
	struct tg_catalog *c = NULL;
	struct tg_error err;
	char path[512];
	size_t i;
	int rc;

	strcpy(dir, "/tmp/tg-unit-catalog-XXXXXX");
	if (!mkdtemp(dir))
		return -2;
	snprintf(path, sizeof(path), "%s/resources", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/prompts", dir);
	mkdir(path, 0755);
	if (write_contract(dir, "t.json", "t", "1.0.0", "\"authority\":\"read\"") < 0)
		return -2;
	for (i = 0; files[i]; i += 2) {
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if (write_file(path, files[i + 1]) < 0)
			return -2;
	}
	rc = tg_catalog_load_dir(dir, NULL, &c, &err);
	if (rc < 0 && want && !strstr(err.msg, want))
		fprintf(stderr, "refused with '%s', want '%s'\n", err.msg, want);
	if (rc < 0 && want && !strstr(err.msg, want))
		rc = -3;
	if (out && rc == 0)
		*out = c;
	else
		tg_catalog_free(c);
	if (!out || rc < 0)
		remove_catalog();
	return rc;
}

static int resources_and_prompts_refused(void)
{
	static const char *const cases[][3] = {
		{ "resources/a.json", "{\"uri\":\"x://a\",\"name\":\"a\",\"text\":\"t\",\"color\":1}",
		  "unknown field 'color'" },
		{ "resources/a.json", "{\"uri\":\"x://a\",\"uriTemplate\":\"x://{b}\",\"name\":\"a\",\"text\":\"t\"}",
		  "exactly one of uri and uriTemplate" },
		{ "resources/a.json", "{\"uri\":\"x://a\",\"name\":\"a\"}", "exactly one of text, blob and file" },
		{ "resources/a.json", "{\"uri\":\"x://a\",\"name\":\"a\",\"text\":\"t\",\"blob\":\"AA==\"}",
		  "exactly one of text" },
		{ "resources/a.json", "{\"uri\":\"x://a\",\"name\":\"a\",\"blob\":\"not base64!\"}", "base64" },
		{ "resources/a.json", "{\"uri\":\"x://a\",\"name\":\"a\",\"file\":\"../t.json\"}", "without '..'" },
		{ "resources/a.json", "{\"uri\":\"x://a\",\"name\":\"a\",\"file\":\"/etc/passwd\"}", "relative" },
		{ "resources/a.json", "{\"uri\":\"relative\",\"name\":\"a\",\"text\":\"t\"}", "absolute URI" },
		{ "resources/a.json", "{\"uriTemplate\":\"x://{b}\",\"name\":\"a\",\"blob\":\"AA==\"}",
		  "a template needs its text" },
		{ "resources/a.json", "[1]", "must be a JSON object" },
		{ "resources/a.json", "{\"uri\":\"skill://a/SKILL.md\",\"name\":\"a\",\"text\":\"t\"}",
		  "skill:// is the skills' own" },
		{ "prompts/p.json", "{\"name\":\"skill:p\",\"messages\":[{\"role\":\"user\",\"content\":"
				    "{\"type\":\"text\",\"text\":\"x\"}}]}",
		  "skill: is the skills' own" },
		{ "prompts/p.json", "{\"name\":\"p\"}", "messages" },
		{ "prompts/p.json", "{\"name\":\"p\",\"messages\":[{\"role\":\"system\",\"content\":{\"type\":\"text\",\"text\":\"x\"}}]}",
		  "role: user|assistant" },
		{ "prompts/p.json", "{\"name\":\"p\",\"arguments\":[{\"name\":\"a\",\"completions\":[1]}],"
				    "\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"x\"}}]}",
		  "completions" },
		{ "prompts/p.json", "{\"name\":\"p\",\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"resource\","
				    "\"resource\":{\"uri\":\"x://none\"}}}]}",
		  "not a resource of the catalogue" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *const files[] = { cases[i][0], cases[i][1], NULL };

		if (content_case(files, cases[i][2], NULL) != -1) {
			fprintf(stderr, "case %zu (%s) was not refused as expected\n", i, cases[i][1]);
			CHECK(0);
		}
	}
	{
		const char *const files[] = {
			"resources/a.json", "{\"uri\":\"x://a\",\"name\":\"a\",\"text\":\"t\"}",
			"resources/b.json", "{\"uri\":\"x://a\",\"name\":\"b\",\"text\":\"u\"}", NULL };

		CHECK(content_case(files, "is also in", NULL) == -1);
	}
	return 0;
}

static int resources_and_prompts_served(void)
{
	const char *const files[] = {
		"resources/text.json", "{\"uri\":\"x://text\",\"name\":\"t\",\"mimeType\":\"text/plain\",\"text\":\"hello\"}",
		"resources/bin.json", "{\"uri\":\"x://bin\",\"name\":\"b\",\"mimeType\":\"image/png\",\"file\":\"b.bin\"}",
		"resources/b.bin", "\x89PNG",
		"resources/tmpl.json", "{\"uriTemplate\":\"x://item/{id}/data\",\"name\":\"i\",\"mimeType\":\"application/json\","
				       "\"text\":\"{\\\"id\\\":\\\"{id}\\\"}\"}",
		"prompts/p.json", "{\"name\":\"p\",\"description\":\"d\",\"arguments\":[{\"name\":\"who\",\"required\":true},"
				  "{\"name\":\"lang\",\"completions\":[\"c\",\"cpp\",\"python\"]}],"
				  "\"messages\":[{\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"hi {{who}} in [{{lang}}]\"}},"
				  "{\"role\":\"user\",\"content\":{\"type\":\"resource\",\"resource\":{\"uri\":\"x://text\"}}}]}",
		NULL };
	struct tg_catalog *c;
	struct tg_error err;
	char *t;

	CHECK(content_case(files, NULL, &c) == 0);
	CHECK(tg_catalog_resource_count(c) == 3 && tg_catalog_prompt_count(c) == 1);
	t = tg_catalog_resource_read(c, "x://text", &err);
	CHECK(t && strstr(t, "\"text\":\"hello\"") && strstr(t, "text/plain"));
	free(t);
	t = tg_catalog_resource_read(c, "x://bin", &err); /* a binary file: base64 */
	CHECK(t && strstr(t, "\"blob\":\"iVBORw==\""));
	free(t);
	t = tg_catalog_resource_read(c, "x://item/123/data", &err);
	CHECK(t && strstr(t, "{\\\"id\\\":\\\"123\\\"}"));
	free(t);
	/* a template variable is one segment of unreserved characters */
	CHECK(!tg_catalog_resource_read(c, "x://item/1/2/data", &err) && err.code == TG_ERR_INVALID);
	CHECK(!tg_catalog_resource_read(c, "x://item/a\"b/data", &err));
	CHECK(!tg_catalog_resource_read(c, "x://nope", &err) && strstr(err.msg, "not found"));
	t = tg_catalog_prompt_get(c, "p", "{\"who\":\"Ada\"}", &err);
	CHECK(t && strstr(t, "hi Ada in []") && strstr(t, "\"text\":\"hello\""));
	free(t);
	CHECK(!tg_catalog_prompt_get(c, "p", "{}", &err) && strstr(err.msg, "who is required"));
	CHECK(!tg_catalog_prompt_get(c, "p", "{\"who\":1}", &err) && strstr(err.msg, "string"));
	CHECK(!tg_catalog_prompt_get(c, "q", NULL, &err) && strstr(err.msg, "not found"));
	t = tg_catalog_complete(c, "p", "lang", "c", &err);
	CHECK(t && strcmp(t, "{\"values\":[\"c\",\"cpp\"],\"total\":2,\"hasMore\":false}") == 0);
	free(t);
	t = tg_catalog_complete(c, "p", "who", "", &err); /* no completions listed */
	CHECK(t && strstr(t, "\"values\":[]"));
	free(t);
	t = tg_catalog_resources_json(c, 0, &err); /* internal members stay inside */
	CHECK(t && !strstr(t, "_text") && !strstr(t, "_file") && strstr(t, "x://bin"));
	free(t);
	tg_catalog_free(c);
	remove_catalog();
	return 0;
}

/* A catalogue of one echo tool named name, in a directory of its own. */
static int echo_catalog(const char *name, struct tg_catalog **out)
{
	struct tg_error err;
	char path[128];
	FILE *f;

	strcpy(dir, "/tmp/tg-unit-gate-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/t.json", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "{\"name\":\"%s\",\"version\":\"1.0.0\",\"description\":\"d\",\"authority\":"
		   "\"read\",\"owner\":{\"team\":\"t\",\"contact\":\"c\"},\"input_schema\":"
		   "{\"type\":\"object\"},\"executor\":{\"kind\":\"builtin\",\"name\":\"echo\"}}",
		name);
	if (fclose(f) != 0 || tg_catalog_load_dir(dir, NULL, out, &err) < 0)
		return -1;
	remove_catalog();
	return 0;
}

/* The gate's reload: a holder keeps its catalogue until it releases it,
 * later callers get the new one; a catalogue the gate refuses (a builtin
 * that does not exist) stays the caller's and changes nothing. */
static int gate_reload(void)
{
	struct tg_catalog *a, *b, *c, *bad;
	const struct tg_catalog *held, *now;
	const struct tg_contract *k;
	struct tg_gate *g;
	struct tg_error err;

	CHECK(echo_catalog("one", &a) == 0 && echo_catalog("two", &b) == 0 &&
	      echo_catalog("three", &c) == 0);
	CHECK(tg_gate_new(a, NULL, &g, &err) == 0);
	held = tg_gate_acquire(g);
	CHECK(held == a);
	CHECK(tg_gate_reload(g, b, &err) == 0);
	now = tg_gate_acquire(g);
	CHECK(now == b && tg_gate_catalog(g) == b);
	/* the holder's catalogue is still whole */
	CHECK(tg_catalog_resolve(held, "one", NULL, &k, &err) == 0 && strcmp(k->name, "one") == 0);
	tg_gate_release(g, held);
	/* b retired while held, then released: freed then (ASan would see a
	 * use after it) */
	CHECK(tg_gate_reload(g, c, &err) == 0);
	CHECK(tg_catalog_resolve(now, "two", NULL, &k, &err) == 0);
	tg_gate_release(g, now);
	CHECK(make_catalog() == 0);
	CHECK(tg_catalog_load_dir(dir, NULL, &bad, &err) == 0);
	remove_catalog();
	CHECK(tg_gate_reload(g, bad, &err) < 0 && strstr(err.msg, "no builtin tool named 'x'"));
	CHECK(tg_gate_catalog(g) == c);
	tg_catalog_free(bad);
	tg_gate_free(g); /* frees c, the gate's */
	tg_catalog_free(a);
	return 0;
}

struct said {
	int n;
	char first[512];
};

static void said_line(const char *line, void *ctx)
{
	struct said *s = ctx;

	if (s->n++ == 0)
		snprintf(s->first, sizeof(s->first), "%s", line);
}

/* The message of loading d, or "" when it loads. */
static const char *load_says(const char *d, struct tg_error *err)
{
	struct tg_catalog *c = NULL;

	if (tg_catalog_load_dir(d, NULL, &c, err) == 0) {
		tg_catalog_free(c);
		return "";
	}
	return err->msg;
}

/* An upstream's declaration where contracts go is named as one, and
 * where it goes; a folder named nearly upstreams is a lint problem. */
static int misplaced_declarations(void)
{
	static const char *const decl = "{\"transport\":\"stdio\",\"argv\":[\"node\"]}";
	char d[64], up[128], want[512], *real;
	struct said said = { 0 };
	struct tg_error err;
	size_t files, ups;

	CHECK(unit_tmpdir(d, "catalog-misplaced") == 0);
	CHECK(unit_put(d, "files.json", decl, 0644) == 0);
	snprintf(want, sizeof(want), "contract %s/files.json: this looks like an upstream "
		 "declaration (it has \"transport\"): move it to %s/upstreams/files.json", d, d);
	CHECK(strcmp(load_says(d, &err), want) == 0);
	/* argv or url alone says so too; a contract's own fields do not */
	CHECK(unit_put(d, "files.json", "{\"url\":\"http://127.0.0.1:9/mcp\"}", 0644) == 0);
	CHECK(strstr(load_says(d, &err), "declaration (it has \"url\")"));
	CHECK(unit_put(d, "files.json", "{\"argv\":[\"x\"],\"name\":\"x\"}", 0644) == 0);
	CHECK(strstr(load_says(d, &err), "declaration (it has \"argv\")"));
	CHECK(unit_put(d, "files.json", "{\"name\":\"x\",\"executor\":{\"argv\":[]}}", 0644) == 0);
	CHECK(!strstr(load_says(d, &err), "declaration"));
	CHECK(unlink(strcat(strcpy(up, d), "/files.json")) == 0);
	/* --catalog naming the upstreams folder: the catalogue is above it */
	CHECK(mkdir(strcat(strcpy(up, d), "/upstreams"), 0700) == 0);
	CHECK(unit_put(up, "files.json", decl, 0644) == 0);
	real = realpath(d, NULL);
	CHECK(real);
	snprintf(want, sizeof(want), "contract %s/files.json: this looks like an upstream "
		 "declaration (it has \"transport\") in an upstreams folder read as a "
		 "catalogue: name the catalogue above it (--catalog %s)", up, real);
	free(real);
	CHECK(strcmp(load_says(up, &err), want) == 0);
	CHECK(tg_catalog_lint(d, NULL, said_line, &said, &files, &ups, &err) == 0 && ups == 1);
	/* upstream/ (singular) is ignored by loading, named by lint */
	CHECK(rename(up, strcat(strcpy(want, d), "/upstream")) == 0);
	CHECK(mkdir(strcat(strcpy(up, d), "/Upstreams"), 0700) == 0);
	CHECK(mkdir(strcat(strcpy(up, d), "/tools"), 0700) == 0);
	CHECK(strcmp(load_says(d, &err), "") == 0);
	CHECK(tg_catalog_lint(d, NULL, said_line, &said, &files, &ups, &err) == 2 && ups == 0);
	CHECK(said.n == 2 && strstr(said.first, "folder ") &&
	      strstr(said.first, "pstream/ is not read: upstreams' declarations go in "));
	unit_rmtree(d);
	return 0;
}

const struct unit_test catalog_tests[] = {
	{ "catalog/misplaced_declarations", misplaced_declarations },
	{ "catalog/resources_and_prompts_refused", resources_and_prompts_refused },
	{ "catalog/resources_and_prompts_served", resources_and_prompts_served },
	{ "catalog/shared_schemas", shared_schemas },
	{ "catalog/diffs", diffs },
	{ "catalog/resolution", resolution },
	{ "catalog/mcp_definition", mcp_definition },
	{ "catalog/duplicates_and_errors", duplicates_and_errors },
	{ "catalog/gate_reload", gate_reload },
	UNIT_TESTS_END,
};
