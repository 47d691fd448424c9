/*
 * toolgate anomalies TOOL [FILE | -] --catalog DIR [--policy FILE] [--state DIR]
 *                    [--store URL] [--json]
 *
 * What the gateway's anomaly rules (docs/ANOMALIES.md) would find in a
 * call's arguments, so that an operator can try a contract's schema and
 * the policy's thresholds before a call is held: the arguments (FILE, or
 * stdin) checked against TOOL's input schema, then looked at as stage 4c
 * looks at them, with the policy's "anomalies" (else the defaults) and,
 * with --state, the tool's baseline kept there (read, never learnt); with
 * --store URL, the baseline of that PostgreSQL store instead (the state
 * directory is then not needed: the store is all that is read of it).
 * Exit 0: nothing found; 1: findings (the call would be held, or run and
 * recorded with warn); 2: usage; 3: arguments the schema refuses, or a
 * catalogue, policy, state or file that cannot be used (docs/CLI.md).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "toolgate/anomaly.h"
#include "toolgate/auth.h"
#include "toolgate/catalog.h"
#include "toolgate/contract.h"
#include "toolgate/gate.h"
#include "toolgate/schema.h"
#include "toolgate/store.h"
#include "util/file.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate anomalies TOOL [FILE | -] --catalog DIR [--policy FILE]\n"
		   "                          [--state DIR] [--store URL] [--json]\n"
		   "\n"
		   "Looks at a call's arguments (FILE, or stdin) as the gateway would before\n"
		   "running TOOL: SQL or shell injection, private addresses, path traversal,\n"
		   "hidden characters (bidi controls, terminal escapes), and with --state (or\n"
		   "--store) a size or entropy far from the tool's usual. Prints each finding\n"
		   "(rule, where, why). --store URL: the baselines are read from this\n"
		   "PostgreSQL database (postgres://HOST/DB, no password in it: docs/STORE.md)\n"
		   "instead of the state directory's store.\n"
		   "\n"
		   "Exit status: 0 nothing found; 1 findings; 2 usage; 3 arguments the input\n"
		   "schema refuses, or a catalogue, policy, state directory or file that\n"
		   "cannot be used (docs/CLI.md).\n");
}

/* The arguments valid for k's input schema: 0, or EXIT_DATA (said why). */
static int valid(const struct tg_contract *k, const char *args, size_t len)
{
	struct tg_schema_error ev[4];
	struct tg_schema_errors errors = { ev, 4, 0 };
	struct tg_error err;
	size_t i;
	int rc = tg_schema_validate(k->input_schema, args, len, &errors, &err);

	if (rc == 1)
		return 0;
	if (rc < 0) {
		cli_say(stderr, "anomalies", err.msg); /* it may quote the arguments */
		return EXIT_DATA;
	}
	fprintf(stderr, "toolgate anomalies: the arguments do not match the input schema of "
		"%s@%s (the gateway refuses them before it looks for anomalies):\n", k->name,
		k->version_text);
	for (i = 0; i < errors.n && i < 4; i++) {
		/* where (member names) and why (a value) are the arguments' */
		fputs("  ", stderr);
		cli_put_text(stderr, ev[i].instance_location[0] ? ev[i].instance_location : "/");
		fputs(": ", stderr);
		cli_put_text(stderr, ev[i].message);
		fputc('\n', stderr);
	}
	return EXIT_DATA;
}

static void print(const struct tg_contract *k, const struct tg_anomaly_finding *f, size_t n,
		  size_t total, enum tg_anomaly_action action, int json)
{
	size_t i;

	if (json) {
		json_t *a = json_array(), *doc;
		char *text;

		for (i = 0; a && i < n; i++)
			json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "rule",
							   tg_anomaly_rule_name(f[i].rule), "at",
							   f[i].at, "why", f[i].why));
		doc = json_pack("{s:s,s:s,s:o,s:I,s:s}", "tool", k->name, "version",
				k->version_text, "findings", a, "total", (json_int_t)total, "action",
				tg_anomaly_action_name(action));
		text = doc ? json_dumps(doc, JSON_INDENT(2)) : NULL;
		if (text)
			printf("%s\n", text);
		free(text);
		json_decref(doc);
		return;
	}
	for (i = 0; i < n; i++)
		printf("%s at %s: %s\n", tg_anomaly_rule_name(f[i].rule), f[i].at[0] ? f[i].at : "/",
		       f[i].why);
	if (!total)
		printf("%s@%s: nothing found: the call would run\n", k->name, k->version_text);
	else
		printf("%s@%s: %zu finding%s (one a rule shown): %s\n", k->name, k->version_text,
		       total, total == 1 ? "" : "s",
		       action == TG_ANOMALY_HOLD ? "the call would be held for review"
		       : action == TG_ANOMALY_WARN ? "the call would run, recorded as anomalous"
						   : "not looked for (off)");
}

static const struct option options[] = {
	CLI_OPTION_CATALOG,
	CLI_OPTION_POLICY,
	CLI_OPTION_STATE,
	CLI_OPTION_STORE,
	{ "json", no_argument, NULL, 'j' },
	CLI_OPTION_HELP,
	CLI_OPTION_END,
};

int cmd_anomalies(int argc, char **argv)
{
	const char *tool = NULL, *file = NULL, *catalog = NULL, *policy_file = NULL, *state = NULL;
	const char *store_at = NULL, *where;
	struct tg_anomaly_finding f[8];
	enum tg_anomaly_action action;
	struct tg_policy *policy = NULL;
	struct tg_catalog *cat = NULL;
	struct tg_store *store = NULL;
	const struct tg_contract *k;
	struct tg_error err;
	size_t len = 0, total;
	char *args = NULL;
	int i, n, json = 0, rc = EXIT_DATA;
	const struct cli_bind binds[] = {
		{ 'c', &catalog }, { 'p', &policy_file }, { 's', &state }, { CLI_STORE, &store_at },
		{ 0, NULL },
	};

	i = cli_parse("anomalies", argc, argv, ":h", options, usage, binds, cli_set_flag, &json);
	if (i >= 0)
		return i;
	tool = optind < argc ? argv[optind++] : NULL;
	file = optind < argc ? argv[optind++] : NULL; /* "-": stdin */
	if (!tool || !catalog || optind < argc) {
		fprintf(stderr, "toolgate anomalies: %s\n",
			!tool ? "which TOOL?" : !catalog ? "--catalog DIR is needed"
				  : "TOOL and one FILE at most");
		usage(stderr);
		return EXIT_USAGE;
	}
	if (cli_store_url("anomalies", store_at) < 0)
		return EXIT_USAGE;
	/* reading: a baseline is never learnt here, and no store is made */
	if (state && cli_state_exists("anomalies", state) < 0)
		return EXIT_DATA;
	where = cli_store_at(store_at, state);
	if (where && !cli_has_store(where))
		where = NULL; /* no call recorded yet: no baseline */
	args = file_read_all(file && strcmp(file, "-") != 0 ? file : "/dev/stdin", TG_MAX_ARGUMENTS,
			     0, &len);
	if (!args) {
		fprintf(stderr, "toolgate anomalies: %s: %s\n", file ? file : "stdin",
			errno == EFBIG ? "larger than 4 MiB, the most a call's arguments may be"
				       : strerror(errno));
		return EXIT_DATA;
	}
	if (tg_catalog_load_dir(catalog, NULL, &cat, &err) < 0 ||
	    tg_catalog_resolve(cat, tool, NULL, &k, &err) < 0 ||
	    (policy_file && tg_policy_load(policy_file, &policy, &err) < 0) ||
	    (where && tg_store_open(where, &store, &err) < 0)) {
		fprintf(stderr, "toolgate anomalies: %s\n", err.msg);
		goto out;
	}
	rc = valid(k, args, len);
	if (rc != 0)
		goto out;
	n = tg_anomaly_check(k, policy ? tg_policy_anomalies(policy) : NULL, store, args, len, f, 8,
			     &total, &action, &err);
	if (n < 0) {
		cli_say(stderr, "anomalies", err.msg);
		rc = EXIT_DATA;
		goto out;
	}
	print(k, f, (size_t)n, total, action, json);
	rc = total ? 1 : 0;
out:
	free(args);
	tg_store_close(store);
	tg_policy_free(policy);
	tg_catalog_free(cat);
	return rc;
}
