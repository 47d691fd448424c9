/*
 * toolgate catalog list DIR         every contract: name, version, authority,
 *                                   risk, status
 * toolgate catalog show DIR REF     one tool (name, name@1, name@1.2.3): its
 *                                   MCP definition
 * toolgate catalog lint DIR         every contract loads, no name@version twice;
 *                                   each problem on its own line, exit 1
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "toolgate/catalog.h"

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
		return 2;
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
		return 2;
	}
	if (tg_catalog_resolve(cat, ref, NULL, &c, &err) < 0) {
		fprintf(stderr, "toolgate catalog: %s\n", err.msg);
		rc = 1;
	} else if (!(def = tg_catalog_mcp_tool(c, NULL, &err))) {
		fprintf(stderr, "toolgate catalog: %s\n", err.msg);
		rc = 2;
	} else {
		printf("# %s@%s from %s, owner %s <%s>\n%s\n", c->name, c->version_text, c->file,
		       c->owner_team, c->owner_contact, def);
		free(def);
	}
	tg_catalog_free(cat);
	return rc;
}

/* Every file on its own, so one run reports every problem. */
static int cmd_lint(const char *dir)
{
	struct tg_catalog *cat;
	struct tg_error err;
	struct dirent *e;
	int problems = 0, files = 0;
	DIR *d = opendir(dir);

	if (!d) {
		fprintf(stderr, "toolgate catalog: cannot open %s\n", dir);
		return 2;
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		struct tg_contract *c;
		char path[4096];

		if (len < 6 || strcmp(e->d_name + len - 5, ".json") != 0 || e->d_name[0] == '.')
			continue;
		files++;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (tg_contract_load(path, NULL, &c, &err) < 0) {
			printf("%s\n", err.msg);
			problems++;
		} else {
			tg_contract_free(c);
		}
	}
	closedir(d);
	/* duplicates show up when the whole directory loads */
	if (!problems && tg_catalog_load_dir(dir, NULL, &cat, &err) < 0) {
		printf("%s\n", err.msg);
		problems++;
	} else if (!problems) {
		tg_catalog_free(cat);
	}
	printf("%d contracts, %d problems\n", files, problems);
	return problems ? 1 : 0;
}

int cmd_catalog(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "list") == 0)
		return cmd_list(argv[2]);
	if (argc == 4 && strcmp(argv[1], "show") == 0)
		return cmd_show(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "lint") == 0)
		return cmd_lint(argv[2]);
	fprintf(stderr, "usage: toolgate catalog list DIR\n"
			"       toolgate catalog show DIR NAME[@VERSION]\n"
			"       toolgate catalog lint DIR\n");
	return 2;
}
