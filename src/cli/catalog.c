/*
 * toolgate catalog list DIR         every contract: name, version, authority,
 *                                   risk, status; then every upstream: name,
 *                                   transport, tools declared, pin
 * toolgate catalog show DIR REF     one tool (name, name@1, name@1.2.3): its
 *                                   MCP definition
 * toolgate catalog lint DIR         every contract loads, no name@version twice,
 *                                   no breaking change without a major version
 *                                   bump, every upstream declaration loads and
 *                                   keeps its namespace; each problem on its own
 *                                   line, exit 1
 * toolgate catalog diff OLD NEW     two contract files: each change, and whether
 *                                   it breaks callers (exit 1 when it does)
 * toolgate catalog manifest|sign|verify ...  the folder signed (catalog_sign.c)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/skill_int.h"
#include "toolgate/catalog.h"
#include "toolgate/upstream.h"

static const char *risk_name(enum tg_risk r)
{
	static const char *const names[] = { "?", "low", "medium", "high", "critical" };

	return (unsigned)r <= 4 ? names[r] : "?";
}

static int cmd_list(const char *dir)
{
	struct tg_catalog *cat;
	struct tg_error err;
	size_t i;

	if (tg_catalog_load_dir(dir, NULL, &cat, &err) < 0) {
		fprintf(stderr, "toolgate catalog: %s\n", err.msg);
		return EXIT_DATA;
	}
	printf("%-32s %-12s %-6s %-9s %s\n", "NAME", "VERSION", "AUTH", "RISK", "STATUS");
	for (i = 0; i < tg_catalog_count(cat); i++) {
		const struct tg_contract *c = tg_catalog_at(cat, i);
		char status[256] = "active";

		if (c->deprecated_since)
			snprintf(status, sizeof(status), "deprecated since %s%s%s%s%s",
				 c->deprecated_since, c->sunset ? ", sunset " : "",
				 c->sunset ? c->sunset : "", c->replacement ? ", use " : "",
				 c->replacement ? c->replacement : "");
		printf("%-32s %-12s %-6s %-9s %s\n", c->name, c->version_text,
		       c->authority == TG_AUTHORITY_READ ? "read" : "write", risk_name(c->risk),
		       status);
	}
	/* the upstreams after the contracts, only when there are some: a
	 * catalogue without them lists as it always did */
	if (tg_catalog_upstream_count(cat))
		printf("\n%-32s %-9s %-6s %s\n", "UPSTREAM", "TRANSPORT", "TOOLS", "PIN");
	for (i = 0; i < tg_catalog_upstream_count(cat); i++) {
		const struct tg_upstream *u = tg_catalog_upstream_at(cat, i);

		printf("%-32s %-9s %-6zu %s\n", u->name, tg_upstream_transport_name(u->transport),
		       u->ntools, tg_upstream_pin_name(u->pin));
	}
	tg_catalog_free(cat);
	return 0;
}

static int cmd_show(const char *dir, const char *ref)
{
	const struct tg_contract *c;
	struct tg_catalog *cat;
	struct tg_error err;
	char *def;
	int rc = 0;

	if (tg_catalog_load_dir(dir, NULL, &cat, &err) < 0) {
		fprintf(stderr, "toolgate catalog: %s\n", err.msg);
		return EXIT_DATA;
	}
	if (tg_catalog_resolve(cat, ref, NULL, &c, &err) < 0) {
		fprintf(stderr, "toolgate catalog: %s\n", err.msg);
		rc = 1;
	} else if (!(def = tg_catalog_mcp_tool(c, NULL, &err))) {
		fprintf(stderr, "toolgate catalog: %s\n", err.msg);
		rc = EXIT_DATA;
	} else {
		printf("# %s@%s from %s, owner %s <%s>\n%s\n", c->name, c->version_text, c->file,
		       c->owner_team, c->owner_contact, def);
		free(def);
	}
	tg_catalog_free(cat);
	return rc;
}

/* Print d; 1 when it breaks callers. */
static int print_diff(const struct tg_diff *d)
{
	size_t i;

	for (i = 0; i < d->n; i++)
		printf("%s %s\n", d->findings[i].breaking ? "breaking:  " : "compatible:",
		       d->findings[i].text);
	return d->breaking;
}

static int cmd_diff(const char *old_path, const char *new_path)
{
	struct tg_contract *o = NULL, *n = NULL;
	struct tg_diff d;
	struct tg_error err;
	int rc = EXIT_DATA;

	if (tg_contract_load(old_path, NULL, &o, &err) < 0 ||
	    tg_contract_load(new_path, NULL, &n, &err) < 0 || tg_catalog_diff(o, n, &d, &err) < 0) {
		fprintf(stderr, "toolgate catalog: %s\n", err.msg);
		goto out;
	}
	rc = print_diff(&d);
	printf("%s@%s -> %s@%s: %s\n", o->name, o->version_text, n->name, n->version_text,
	       rc ? "breaking" : "compatible");
	if (rc && n->version.major <= o->version.major)
		printf("a breaking change needs a major version bump\n");
out:
	tg_contract_free(o);
	tg_contract_free(n);
	return rc;
}

static void print_line(const char *line, void *ctx)
{
	(void)ctx;
	printf("%s\n", line);
}

static int cmd_lint(const char *dir)
{
	struct tg_error err;
	size_t files, upstreams;
	int problems = tg_catalog_lint(dir, NULL, print_line, NULL, &files, &upstreams, &err);

	if (problems < 0) {
		fprintf(stderr, "toolgate catalog: %s\n", err.msg);
		return EXIT_DATA;
	}
	printf("%zu contract%s, ", files, files == 1 ? "" : "s");
	if (upstreams)
		printf("%zu upstream%s, ", upstreams, upstreams == 1 ? "" : "s");
	printf("%d problem%s\n", problems, problems == 1 ? "" : "s");
	return problems ? 1 : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate catalog list DIR\n"
		   "       toolgate catalog show DIR NAME[@VERSION]\n"
		   "       toolgate catalog lint DIR\n"
		   "       toolgate catalog diff OLD.json NEW.json\n"
		   "       toolgate catalog manifest DIR\n"
		   "       toolgate catalog sign DIR --secret-key FILE [--password-file FILE]\n"
		   "       toolgate catalog verify DIR... (--trust FILE | --public-key FILE)\n"
		   "\n"
		   "Exit status: 0; 1 lint problems, a breaking diff, or no such tool (show);\n"
		   "2 usage; 3 a catalogue, a contract or an upstream's declaration that does\n"
		   "not load (docs/CLI.md).\n");
}

static const struct option options[] = {
	CLI_OPTION_HELP,
	CLI_OPTION_END,
};

int cmd_catalog(int argc, char **argv)
{
	static const struct {
		const char *verb;
		int operands;
	} verbs[] = { { "list", 1 }, { "show", 2 }, { "lint", 1 }, { "diff", 2 } };
	char who[32];
	char **ops;
	size_t v;
	int opt, n;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (!strcmp(argv[1], "manifest") || !strcmp(argv[1], "sign") || !strcmp(argv[1], "verify"))
		return cli_catalog_sign(argc - 1, argv + 1);
	for (v = 0; v < sizeof(verbs) / sizeof(verbs[0]); v++)
		if (strcmp(argv[1], verbs[v].verb) == 0)
			break;
	if (v == sizeof(verbs) / sizeof(verbs[0])) {
		fprintf(stderr, "toolgate catalog: unknown command '%s' (list, show, lint, diff, "
				"manifest, sign or verify)\n",
			argv[1]);
		return EXIT_USAGE;
	}
	snprintf(who, sizeof(who), "catalog %s", verbs[v].verb);
	opt = cli_parse(who, argc - 1, argv + 1, ":h", options, usage, NULL, NULL, NULL);
	if (opt >= 0)
		return opt;
	ops = argv + 1 + optind;
	n = argc - 1 - optind;
	if (n != verbs[v].operands) {
		fprintf(stderr, "toolgate %s: takes %s (%d argument%s given)\n", who,
			verbs[v].operands == 1 ? "DIR"
			: v == 1 ? "DIR NAME[@VERSION]" : "OLD.json NEW.json", n, n == 1 ? "" : "s");
		return EXIT_USAGE;
	}
	if (v == 0)
		return cmd_list(ops[0]);
	if (v == 1)
		return cmd_show(ops[0], ops[1]);
	if (v == 2)
		return cmd_lint(ops[0]);
	return cmd_diff(ops[0], ops[1]);
}
