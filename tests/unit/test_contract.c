/* Unit tests: src/catalog/contract.c, the contract loader's rules. */
#include <stdlib.h>
#include <string.h>

#include "toolgate/contract.h"
#include "toolgate/schema.h"
#include "unit.h"

#define READ_TOOL                                                                   \
	"{\"name\":\"sql.query\",\"version\":\"1.2.0\",\"title\":\"Query\","        \
	"\"description\":\"Run a read-only SQL query\","                            \
	"\"owner\":{\"team\":\"data\",\"contact\":\"data@example.test\"},"          \
	"\"authority\":\"read\",\"risk\":\"low\","                                  \
	"\"input_schema\":{\"type\":\"object\",\"properties\":{\"sql\":{\"type\":\"string\"}}," \
	"\"required\":[\"sql\"]},"                                                  \
	"\"output_schema\":{\"type\":\"object\"},"                                  \
	"\"errors\":[{\"code\":\"syntax\",\"meaning\":\"bad SQL\",\"retryable\":false}]," \
	"\"executor\":{\"kind\":\"builtin\",\"name\":\"sql.query\"},"               \
	"\"timeout\":\"30s\",\"tags\":[\"sql\"]}"

static int parse(const char *text, struct tg_contract **c, struct tg_error *err)
{
	return tg_contract_parse(text, strlen(text), "tools/t.json", NULL, c, err);
}

/* base with one substitution of `from` by `to` (malloc'd; NULL if absent). */
static char *replace(const char *base, const char *from, const char *to)
{
	const char *at = base ? strstr(base, from) : NULL;
	char *out;

	if (!at)
		return NULL;
	out = malloc(strlen(base) - strlen(from) + strlen(to) + 1);
	if (!out)
		return NULL;
	memcpy(out, base, (size_t)(at - base));
	strcpy(out + (at - base), to);
	strcat(out, at + strlen(from));
	return out;
}

/* READ_TOOL with one substitution of `from` by `to`. */
static char *variant(const char *from, const char *to)
{
	return replace(READ_TOOL, from, to);
}

/* The variant is refused and the message names want. */
static int refused(const char *from, const char *to, const char *want)
{
	struct tg_contract *c = NULL;
	struct tg_error err;
	char *text = variant(from, to);
	int ok;

	if (!text)
		return 0;
	ok = parse(text, &c, &err) < 0 && strstr(err.msg, want) && strstr(err.msg, "tools/t.json");
	if (!ok)
		fprintf(stderr, "'%s' -> '%s': %s\n", from, to, c ? "accepted" : err.msg);
	tg_contract_free(c);
	free(text);
	return ok;
}

static int loads(void)
{
	struct tg_contract *c;
	struct tg_error err;

	CHECK(parse(READ_TOOL, &c, &err) == 0);
	CHECK(strcmp(c->name, "sql.query") == 0 && c->version.major == 1 && c->version.minor == 2);
	CHECK(c->authority == TG_AUTHORITY_READ && c->risk == TG_RISK_LOW && c->idempotent);
	CHECK(c->input_schema && c->output_schema && c->nerrors == 1 && !c->errors[0].retryable);
	CHECK(c->executor == TG_EXEC_BUILTIN && strcmp(c->builtin, "sql.query") == 0);
	CHECK(c->call_timeout_ms == 30000 && strcmp(c->tags[0], "sql") == 0 && !c->tags[1]);
	CHECK(c->dry_run == -1);
	tg_contract_free(c);
	tg_contract_free(NULL);
	return 0;
}

static int refusals(void)
{
	CHECK(refused("\"risk\":\"low\"", "\"risk\":\"low\",\"owenr\":1", "owenr: unknown field"));
	CHECK(refused("\"authority\":\"read\",", "", "authority: required"));
	CHECK(refused("\"authority\":\"read\"", "\"authority\":\"admin\"", "read or write"));
	CHECK(refused("\"name\":\"sql.query\"", "\"name\":\"sql query\"", "name:"));
	CHECK(refused("\"version\":\"1.2.0\"", "\"version\":\"1.2\"", "version:"));
	CHECK(refused("\"version\":\"1.2.0\"", "\"version\":\"01.2.0\"", "version:"));
	/* the schema compiler's reason follows the contract's context */
	CHECK(refused("\"type\":\"object\",\"properties\"", "\"type\":\"obj\",\"properties\"",
		      "input_schema: invalid schema: unknown type 'obj'"));
	CHECK(refused("\"retryable\":false", "\"retryable\":\"no\"", "errors[0]: retryable"));
	CHECK(refused("\"code\":\"syntax\",", "", "errors[0].code: required"));
	CHECK(refused("\"kind\":\"builtin\",\"name\":\"sql.query\"", "\"kind\":\"mcp\"", "reserved"));
	CHECK(refused("\"kind\":\"builtin\",\"name\":\"sql.query\"", "\"kind\":\"command\"",
		      "executor.argv: required"));
	CHECK(refused("\"timeout\":\"30s\"", "\"timeout\":\"soon\"", "timeout"));
	CHECK(refused("\"owner\":{\"team\":\"data\",", "\"owner\":{", "owner.team: required"));
	CHECK(refused("\"input_schema\":", "\"inputSchema\":",
		      "inputSchema: unknown field (did you mean \"input_schema\"?)"));
	CHECK(refused("\"risk\":\"low\"", "\"risk\":\"low\",\"owenr\":1",
		      "owenr: unknown field (did you mean \"owner\"?)"));
	CHECK(refused("\"risk\":\"low\"", "\"risk\":\"low\",\"colour\":1", "colour: unknown field"));
	CHECK(!refused("\"risk\":\"low\"", "\"risk\":\"low\",\"colour\":1", "did you mean"));
	CHECK(refused("\"title\":\"Query\"", "\"title\":\"Query\",\"title\":\"Twice\"", "duplicate"));
	return 0;
}

/* A write tool states its dry-run support and its rollback story. */
static int write_rules(void)
{
	CHECK(refused("\"authority\":\"read\"", "\"authority\":\"write\"", "a write tool states"));
	CHECK(refused("\"authority\":\"read\"",
		      "\"authority\":\"write\",\"dry_run\":\"supported\"", "compensation"));
	CHECK(refused("\"authority\":\"read\"",
		      "\"authority\":\"write\",\"compensation\":{\"irreversible\":\"sent mail\"}",
		      "dry_run"));
	CHECK(refused("\"authority\":\"read\"",
		      "\"authority\":\"write\",\"dry_run\":\"supported\",\"compensation\":{}",
		      "either a tool"));
	{
		struct tg_contract *c = NULL;
		struct tg_error err;
		char *t = variant("\"authority\":\"read\"",
				  "\"authority\":\"write\",\"dry_run\":\"supported\","
				  "\"compensation\":{\"tool\":\"sql.restore@1\","
				  "\"arguments\":{\"snapshot\":\"$.result.snapshot\"}}");

		CHECK(t && parse(t, &c, &err) == 0);
		CHECK(c->authority == TG_AUTHORITY_WRITE && c->dry_run == 1);
		CHECK(strcmp(c->compensation_tool, "sql.restore@1") == 0 && c->compensation_args);
		tg_contract_free(c);
		free(t);
	}
	/* placeholders in the mapping: the call's id, an argument, whole */
	{
		static const char *const ok[] = { "\"${call_id}\"", "\"${arguments.path}\"",
						  "[{\"a\":\"${call_id}\"}]", "\"$5\"" };
		static const char *const no[] = { "\"${result}\"", "\"x${call_id}\"",
						  "\"${arguments.}\"", "\"${arguments.a}b}\"" };
		char mapping[256];
		size_t i;

		for (i = 0; i < 4; i++) {
			struct tg_contract *c = NULL;
			struct tg_error err;
			char *t;

			snprintf(mapping, sizeof(mapping), "\"authority\":\"write\",\"dry_run\":"
				 "\"supported\",\"compensation\":{\"tool\":\"u@1\",\"arguments\":"
				 "{\"v\":%s}}", ok[i]);
			t = variant("\"authority\":\"read\"", mapping);
			CHECK(t && parse(t, &c, &err) == 0);
			tg_contract_free(c);
			free(t);
			snprintf(mapping, sizeof(mapping), "\"authority\":\"write\",\"dry_run\":"
				 "\"supported\",\"compensation\":{\"tool\":\"u@1\",\"arguments\":"
				 "{\"v\":%s}}", no[i]);
			CHECK(refused("\"authority\":\"read\"", mapping, "a placeholder is"));
		}
	}
	return 0;
}

static int command_executor(void)
{
	struct tg_contract *c = NULL;
	struct tg_error err;
	char *t = variant("\"kind\":\"builtin\",\"name\":\"sql.query\"",
			  "\"kind\":\"command\",\"argv\":[\"python3\",\"/tool/run.py\"],"
			  "\"tier\":\"standard\",\"limits\":{\"memory\":\"128M\",\"cpus\":0.5,"
			  "\"pids\":16,\"timeout\":\"5s\",\"output\":\"64K\"},"
			  "\"mounts\":[{\"host\":\"/srv/tool\",\"inside\":\"/tool\"}],"
			  "\"env\":{\"MODE\":\"ro\"},\"egress\":[\"api.example.test:443\"]");

	CHECK(t && parse(t, &c, &err) == 0);
	CHECK(c->executor == TG_EXEC_COMMAND && strcmp(c->argv[1], "/tool/run.py") == 0);
	CHECK(c->memory == 128u << 20 && c->millicpus == 500 && c->pids == 16 &&
	      c->timeout_ms == 5000 && c->output == 64u << 10);
	CHECK(c->nmounts == 1 && !c->mounts[0].writable && strcmp(c->env[0], "MODE=ro") == 0);
	CHECK(strcmp(c->egress[0], "api.example.test:443") == 0);
	tg_contract_free(c);
	free(t);
	CHECK(refused("\"kind\":\"builtin\",\"name\":\"sql.query\"",
		      "\"kind\":\"command\",\"argv\":[\"t\"],\"limits\":{\"output\":\"100\"}",
		      "executor.limits.output"));
	CHECK(refused("\"kind\":\"builtin\",\"name\":\"sql.query\"",
		      "\"kind\":\"command\",\"argv\":[\"t\"],\"limits\":{\"output\":\"1G\"}",
		      "executor.limits.output"));
	/* the limits are the sandbox's reader's (sandbox/limits.h): a CPU
	 * share out of range is refused before it is converted */
	CHECK(refused("\"kind\":\"builtin\",\"name\":\"sql.query\"",
		      "\"kind\":\"command\",\"argv\":[\"t\"],\"limits\":{\"cpus\":-1}",
		      "executor.limits.cpus: a number from 0.01 to 1024"));
	CHECK(refused("\"kind\":\"builtin\",\"name\":\"sql.query\"",
		      "\"kind\":\"command\",\"argv\":[\"t\"],\"limits\":{\"disk\":1}",
		      "executor.limits.disk: unknown field"));
	CHECK(refused("\"kind\":\"builtin\",\"name\":\"sql.query\"",
		      "\"kind\":\"command\",\"argv\":[\"t\"],\"limits\":7",
		      "executor.limits: must be an object"));
	/* an allowlist is the standard tier's, and its rules are read now */
	CHECK(refused("\"kind\":\"builtin\",\"name\":\"sql.query\"",
		      "\"kind\":\"command\",\"argv\":[\"t\"],\"egress\":[\"a.test:443\"]",
		      "executor.egress: is for the standard tier"));
	CHECK(refused("\"kind\":\"builtin\",\"name\":\"sql.query\"",
		      "\"kind\":\"command\",\"argv\":[\"t\"],\"tier\":\"standard\","
		      "\"egress\":[\"a.test\"]",
		      "egress rule 'a.test'"));
	return 0;
}

#define BUILTIN "\"kind\":\"builtin\",\"name\":\"sql.query\""
#define WRITE "\"authority\":\"write\",\"dry_run\":\"supported\"," \
	"\"compensation\":{\"irreversible\":\"a test\"}"

/* READ_TOOL as a command tool whose executor ends with `given`, a write
 * tool when write; 0 when it loads, and OUT *c. */
static int command_with(const char *given, int write, struct tg_contract **c,
			struct tg_error *err)
{
	char exec[256], *a, *b;
	int rc;

	snprintf(exec, sizeof(exec), "\"kind\":\"command\",\"argv\":[\"t\"]%s", given);
	a = variant(BUILTIN, exec);
	b = write ? replace(a, "\"authority\":\"read\"", WRITE) : NULL;
	*c = NULL;
	rc = (write ? b : a) ? parse(write ? b : a, c, err) : -1;
	free(a);
	free(b);
	return rc;
}

/* What a command tool is given of the gateway's directories:
 * executor.workspace none (the default), read or write, executor.state;
 * a read tool is refused write and the state, naming the file and the
 * field. */
static int given_dirs(void)
{
	struct tg_contract *c;
	struct tg_error err;

	CHECK(command_with("", 0, &c, &err) == 0 && c->workspace == TG_WORKSPACE_NONE &&
	      !c->state);
	tg_contract_free(c);
	CHECK(command_with(",\"workspace\":\"none\"", 0, &c, &err) == 0 &&
	      c->workspace == TG_WORKSPACE_NONE);
	tg_contract_free(c);
	CHECK(command_with(",\"workspace\":\"read\"", 0, &c, &err) == 0 &&
	      c->workspace == TG_WORKSPACE_READ);
	tg_contract_free(c);
	CHECK(command_with(",\"workspace\":\"write\",\"state\":true", 1, &c, &err) == 0 &&
	      c->workspace == TG_WORKSPACE_WRITE && c->state);
	tg_contract_free(c);
	CHECK(command_with(",\"workspace\":\"rw\"", 0, &c, &err) < 0 &&
	      strstr(err.msg, "contract tools/t.json: executor.workspace: must be none (the "
		     "default), read or write"));
	CHECK(command_with(",\"workspace\":true", 1, &c, &err) < 0 &&
	      strstr(err.msg, "tools/t.json: executor.workspace: must be"));
	CHECK(command_with(",\"workspace\":\"write\"", 0, &c, &err) < 0 &&
	      strstr(err.msg, "tools/t.json: executor.workspace: write is for write tools"));
	CHECK(command_with(",\"state\":true", 0, &c, &err) < 0 &&
	      strstr(err.msg, "tools/t.json: executor.state: is for write tools"));
	CHECK(command_with(",\"state\":\"yes\"", 1, &c, &err) < 0 &&
	      strstr(err.msg, "tools/t.json: executor.state: must be true or false"));
	/* a builtin runs in the gateway: it is given neither */
	CHECK(refused(BUILTIN, BUILTIN ",\"workspace\":\"read\"",
		      "executor.workspace: is for command tools"));
	CHECK(refused(BUILTIN, BUILTIN ",\"state\":false", "executor.state: is for command tools"));
	/* the state directory is the family's: a name up to its first dot */
	{
		char *a = variant(BUILTIN, "\"kind\":\"command\",\"argv\":[\"t\"],\"state\":true");
		char *b = replace(a, "\"authority\":\"read\"", WRITE);
		char *d = replace(b, "\"name\":\"sql.query\"", "\"name\":\".query\"");

		CHECK(d && parse(d, &c, &err) < 0 && strstr(err.msg, "executor.state: its directory"));
		free(a);
		free(b);
		free(d);
	}
	return 0;
}

/* READ_TOOL with the executor `exec`, a write tool when write: its kind
 * once loaded, or 0 (and OUT err) when refused. */
static int kind_of_tool(const char *exec, int write, struct tg_error *err)
{
	struct tg_contract *c = NULL;
	char *t = variant(BUILTIN, exec);
	char *w = write && t ? replace(t, "\"authority\":\"read\"", WRITE) : NULL;
	int kind = (write ? w : t) && parse(write ? w : t, &c, err) == 0 ? (int)c->executor : 0;

	if (kind > TG_EXEC_COMMAND && c->builtin)
		kind = -1; /* a plan has no builtin's name */
	tg_contract_free(c);
	free(t);
	free(w);
	return kind;
}

/* The same, a write tool: what a plan must be. */
static int kind_of(const char *exec, struct tg_error *err)
{
	return kind_of_tool(exec, 1, err);
}

/* A plan and its undoing are executor kinds of their own, spelt "plan"
 * and "plan.undo", or the older way, a builtin named "saga" or
 * "saga.undo": the same kind either way. Their executor says nothing but
 * that (their steps are other tools), so any other field is refused,
 * named. */
static int plan_executor(void)
{
	struct tg_error err;

	CHECK(kind_of("\"kind\":\"plan\"", &err) == TG_EXEC_PLAN);
	CHECK(kind_of("\"kind\":\"plan.undo\"", &err) == TG_EXEC_PLAN_UNDO);
	CHECK(kind_of("\"kind\":\"builtin\",\"name\":\"saga\"", &err) == TG_EXEC_PLAN);
	CHECK(kind_of("\"name\":\"saga.undo\",\"kind\":\"builtin\"", &err) ==
	      TG_EXEC_PLAN_UNDO);
	/* only those two names are the older spelling */
	CHECK(kind_of("\"kind\":\"builtin\",\"name\":\"sagas\"", &err) == TG_EXEC_BUILTIN);
	CHECK(kind_of("\"kind\":\"builtin\",\"name\":\"plan\"", &err) == TG_EXEC_BUILTIN);
	CHECK(kind_of("\"kind\":\"plan\",\"argv\":[\"t\"]", &err) == 0 &&
	      strstr(err.msg, "contract tools/t.json: executor.argv: a plan's executor takes only "
		     "its kind"));
	CHECK(kind_of("\"kind\":\"plan\",\"name\":\"saga\"", &err) == 0 &&
	      strstr(err.msg, "tools/t.json: executor.name: a plan's executor takes only"));
	CHECK(kind_of("\"kind\":\"plan.undo\",\"workspace\":\"none\"", &err) == 0 &&
	      strstr(err.msg, "tools/t.json: executor.workspace: a plan's"));
	CHECK(kind_of("\"kind\":\"builtin\",\"name\":\"saga\",\"tier\":\"strict\"",
		      &err) == 0 && strstr(err.msg, "tools/t.json: executor.tier: a plan's"));
	CHECK(kind_of("\"kind\":\"plan\",\"nmae\":1", &err) == 0 &&
	      strstr(err.msg, "executor.nmae: unknown field"));
	/* a plan runs writes once approved as a whole: never a read, which
	 * nobody approves */
	CHECK(kind_of_tool("\"kind\":\"plan\"", 0, &err) == 0 &&
	      strstr(err.msg, "tools/t.json: authority: a plan (or its undoing) runs writes"));
	CHECK(kind_of_tool("\"kind\":\"builtin\",\"name\":\"saga.undo\"", 0, &err) == 0 &&
	      strstr(err.msg, "it must be write"));
	CHECK(kind_of_tool("\"kind\":\"builtin\",\"name\":\"sagas\"", 0, &err) ==
	      TG_EXEC_BUILTIN);
	CHECK(kind_of("\"kind\":\"plans\"", &err) == 0 &&
	      strstr(err.msg, "executor.kind: must be builtin, command, plan or plan.undo"));
	return 0;
}

static int semver(void)
{
	struct tg_semver a, b;

	CHECK(tg_semver_parse("1.10.0", &a) == 0 && tg_semver_parse("1.9.3", &b) == 0);
	CHECK(tg_semver_compare(&a, &b) > 0);
	CHECK(tg_semver_parse("2.0.0-rc.1", &a) == 0 && tg_semver_parse("2.0.0", &b) == 0);
	CHECK(tg_semver_compare(&a, &b) < 0 && strcmp(a.pre, "rc.1") == 0);
	CHECK(tg_semver_parse("1.0", &a) < 0 && tg_semver_parse("1.0.0-", &a) < 0);
	CHECK(tg_semver_parse("1.0.0x", &a) < 0 && tg_semver_parse("v1.0.0", &a) < 0);
	return 0;
}

/* A schema's numbers past 64 bits or a double's digits: the contract
 * loads (jansson alone refuses it) and its schemas compare them exactly. */
static int exact_numbers(void)
{
	struct tg_contract *c;
	struct tg_error err;
	char *text = variant("{\"sql\":{\"type\":\"string\"}}",
			     "{\"sql\":{\"type\":\"string\"},"
			     "\"id\":{\"type\":\"integer\",\"maximum\":18446744073709551615},"
			     "\"amount\":{\"exclusiveMaximum\":0.100000000000000000001}}");

	CHECK(text && parse(text, &c, &err) == 0);
	CHECK(tg_schema_validate(c->input_schema, "{\"sql\":\"x\",\"id\":18446744073709551615}", 37,
				 NULL, &err) == 1);
	CHECK(tg_schema_validate(c->input_schema, "{\"sql\":\"x\",\"id\":18446744073709551616}", 37,
				 NULL, &err) == 0);
	CHECK(tg_schema_validate(c->input_schema, "{\"sql\":\"x\",\"amount\":0.1}", 24, NULL,
				 &err) == 1);
	CHECK(tg_schema_validate(c->input_schema,
				 "{\"sql\":\"x\",\"amount\":0.100000000000000000001}", 44, NULL,
				 &err) == 0);
	/* what MCP clients are shown: jansson's text, the bound a double */
	CHECK(strstr(c->input_schema_text, "\"maximum\":1.8446744073709552e19") != NULL);
	tg_contract_free(c);
	free(text);
	/* still refused past a double, with the line */
	CHECK(refused("\"low\"", "\"low\",\"x\":1e400", "line 1"));
	return 0;
}

const struct unit_test contract_tests[] = {
	{ "contract/loads", loads },
	{ "contract/refusals", refusals },
	{ "contract/write_rules", write_rules },
	{ "contract/command_executor", command_executor },
	{ "contract/given_dirs", given_dirs },
	{ "contract/plan_executor", plan_executor },
	{ "contract/semver", semver },
	{ "contract/exact_numbers", exact_numbers },
	UNIT_TESTS_END,
};
