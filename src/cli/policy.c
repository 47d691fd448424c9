/*
 * toolgate policy lint FILE [--catalog DIR]
 *
 * Checks a policy file (docs/AUTH.md) and reports excessive agency: a
 * wildcard write scope, a principal whose own token lifetime is above
 * the policy's, tokens allowed to live longer than a day, and with the
 * catalogue, write tools nobody may approve. Exit 0 when there is
 * nothing to report, 1 when there is, 2 for bad usage, 3 for a policy
 * or catalogue that does not load (docs/CLI.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "toolgate/auth.h"
#include "toolgate/catalog.h"

#define DAY 86400

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate policy lint FILE [--catalog DIR]\n"
		   "\n"
		   "Exit status: 0 nothing to report; 1 findings; 2 usage; 3 a policy or\n"
		   "catalogue that does not load (docs/CLI.md).\n");
}

/* 1 if any principal holds a scope that approves tool. */
static int approvable(const struct tg_policy *p, const char *tool)
{
	char scope[200];
	size_t i;

	snprintf(scope, sizeof(scope), "%.150s:approve", tool);
	for (i = 0; i < tg_policy_count(p); i++)
		if (tg_policy_grants(p, tg_policy_name(p, i), scope))
			return 1;
	return 0;
}

/* The principal's scopes: each wildcard write scope is a finding. */
static unsigned lint_scopes(const char *path, const struct tg_policy *p, const char *name)
{
	char *list = tg_policy_scope_list(p, name), *save = NULL, *s;
	unsigned findings = 0;

	for (s = list ? strtok_r(list, " ", &save) : NULL; s; s = strtok_r(NULL, " ", &save)) {
		size_t n = strlen(s);

		if (n >= 7 && strcmp(s + n - 6, ":write") == 0 && s[n - 7] == '*') {
			printf("%s: excessive agency: %s holds %s, a wildcard write scope (name the "
			       "write tools it needs)\n", path, name, s);
			findings++;
		}
	}
	free(list);
	return findings;
}

static const struct option options[] = {
	CLI_OPTION_CATALOG,
	CLI_OPTION_HELP,
	CLI_OPTION_END,
};

int cmd_policy(int argc, char **argv)
{
	const char *path = NULL, *catalog = NULL;
	struct tg_policy *p = NULL;
	struct tg_catalog *cat = NULL;
	struct tg_error err;
	unsigned findings = 0;
	const struct cli_bind binds[] = { { 'c', &catalog }, { 0, NULL } };
	size_t i;
	int opt;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	if (strcmp(argv[1], "lint") != 0) {
		fprintf(stderr, "toolgate policy: unknown command '%s' (lint)\n", argv[1]);
		return EXIT_USAGE;
	}
	opt = cli_parse("policy lint", argc - 1, argv + 1, ":h", options, usage, binds, NULL, NULL);
	if (opt >= 0)
		return opt;
	if (optind + 1 != argc - 1) {
		fprintf(stderr, "toolgate policy lint: takes one FILE (%d given)\n",
			argc - 1 - optind);
		return EXIT_USAGE;
	}
	path = argv[1 + optind];
	if (tg_policy_load(path, &p, &err) < 0 ||
	    (catalog && tg_catalog_load_dir(catalog, NULL, &cat, &err) < 0)) {
		fprintf(stderr, "toolgate policy lint: %s\n", err.msg);
		tg_policy_free(p);
		return EXIT_DATA;
	}
	if (tg_policy_max_ttl(p) > DAY) {
		printf("%s: excessive agency: tokens may live %llu h (max_token_ttl); keep them "
		       "short-lived, an hour or less\n", path,
		       (unsigned long long)tg_policy_max_ttl(p) / 3600);
		findings++;
	}
	for (i = 0; i < tg_policy_count(p); i++) {
		const char *name = tg_policy_name(p, i);
		uint64_t ttl = tg_policy_principal_ttl(p, name);

		findings += lint_scopes(path, p, name);
		if (ttl > tg_policy_max_ttl(p) && !tg_policy_scrape_only(p, name)) {
			printf("%s: %s's max_token_ttl (%llu s) is above the policy's (%llu s): the "
			       "policy's wins\n", path, name, (unsigned long long)ttl,
			       (unsigned long long)tg_policy_max_ttl(p));
			findings++;
		}
	}
	for (i = 0; cat && i < tg_catalog_count(cat); i++) {
		const struct tg_contract *k = tg_catalog_at(cat, i);

		if (k->authority == TG_AUTHORITY_WRITE && (i == 0 ||
		    strcmp(tg_catalog_at(cat, i - 1)->name, k->name) != 0) && !approvable(p, k->name)) {
			printf("%s: %s is a write tool nobody may approve (give a principal "
			       "%s:approve)\n", path, k->name, k->name);
			findings++;
		}
	}
	printf("%s: %zu principal%s, %u finding%s\n", path, tg_policy_count(p),
	       tg_policy_count(p) == 1 ? "" : "s", findings, findings == 1 ? "" : "s");
	tg_catalog_free(cat);
	tg_policy_free(p);
	return findings ? 1 : 0;
}
