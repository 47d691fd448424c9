/*
 * What a declaration that loads may still get wrong (docs/UPSTREAMS.md,
 * "Commands" and "Fields"): the mistakes that load, start and then fail
 * silently, said by `catalog lint` (tg_upstream_lint), by `upstream test`
 * and `show` and the runner at its start (tg_upstream_check_mounts), and
 * by `upstream test` and `serve` once a server has listed its tools
 * (tg_upstream_check_listing).
 *
 * Each finding is one line naming the field, without the file (its caller
 * adds what it needs) and without an argv, env or url value of the
 * declaration's (a mount's host path is quoted): a secret
 * is named by the redactor's rule, a launcher by the table below, a tool
 * by a declared name (tg_upstream_tool_name_ok's characters only) or a
 * listed one that passes the same check.
 *
 * Never: refuse a declaration (loading is decl.c's), start a server, read
 * a credential, or echo a value the redactor finds a secret in.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/redact.h"
#include "toolgate/sandbox.h"
#include "toolgate/upstream.h"

#define LINT_LINE 1024
#define NEAR_MAX 2           /* edits a declared name may be from a listed one */
#define NEAR_ASKED 64        /* absent tools a nearest name is looked for */

/* Launchers that fetch a package when they start: what the usual MCP
 * client configuration runs, and what a sandbox without a network cannot
 * (its start then times out with nothing said). */
static const struct launcher {
	const char *argv0, *argv1; /* argv1 NULL: any */
} launchers[] = {
	{ "npx", NULL }, { "pnpx", NULL }, { "uvx", NULL }, { "bunx", NULL }, { "pipx", NULL },
	{ "npm", "exec" }, { "npm", "x" }, { "pnpm", "dlx" }, { "yarn", "dlx" }, { "bun", "x" },
	{ "uv", "tool" },
};

static void say(void (*report)(const char *line, void *ctx), void *ctx, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(void (*report)(const char *line, void *ctx), void *ctx, const char *fmt, ...)
{
	char line[LINT_LINE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	report(line, ctx);
}

/* The launcher argv starts with, or NULL: argv[0] by its base name,
 * past an env(1) and its options and NAME=VALUE settings; *at its index. */
static const struct launcher *launcher_of(char *const *argv, size_t *at)
{
	const char *base = strrchr(argv[0], '/');
	size_t i;

	*at = 0;
	if (strcmp(base ? base + 1 : argv[0], "env") == 0) {
		for (argv++, ++*at; *argv && (**argv == '-' || strchr(*argv, '=')); argv++)
			++*at;
		if (!*argv)
			return NULL;
		base = strrchr(argv[0], '/');
	}
	base = base ? base + 1 : argv[0];
	for (i = 0; i < sizeof(launchers) / sizeof(launchers[0]); i++)
		if (strcmp(base, launchers[i].argv0) == 0 &&
		    (!launchers[i].argv1 || (argv[1] && strcmp(argv[1], launchers[i].argv1) == 0)))
			return &launchers[i];
	return NULL;
}

/* The rule of the first secret the redactor finds in text at or past
 * from (the part a name's "NAME=" leaves), or NULL; "" out of memory. */
static const char *secret_in(const char *text, size_t from)
{
	struct tg_redact_out o;
	struct tg_error err;
	const char *rule = NULL;
	size_t i;

	if (tg_redact(text, strlen(text), &o, &err) < 0) {
		tg_redact_out_release(&o);
		return "";
	}
	for (i = 0; i < o.nfindings && !rule; i++)
		if (o.findings[i].offset + o.findings[i].length > from)
			rule = o.findings[i].rule; /* static */
	tg_redact_out_release(&o);
	return rule;
}

int tg_upstream_lint(const struct tg_upstream *u, void (*report)(const char *line, void *ctx),
		     void *ctx)
{
	const struct launcher *l;
	const char *rule;
	size_t i, eq;
	int n = 0;

	/* with egress rules the standard tier may reach a registry: not said */
	if (u->argv && (!u->egress || !u->egress[0]) && (l = launcher_of(u->argv, &i))) {
		say(report, ctx, "argv[%zu]: %s%s%s fetches the server at each start, and the "
		    "sandbox has no network: install the package and name its entry point "
		    "(docs/UPSTREAMS.md, \"Examples\")", i, l->argv0, l->argv1 ? " " : "",
		    l->argv1 ? l->argv1 : "");
		n++;
	}
	for (i = 0; u->argv && u->argv[i]; i++)
		if ((rule = secret_in(u->argv[i], 0))) {
			say(report, ctx, "argv[%zu]: holds what looks like a secret (%s): put it in "
			    "a 0600 file and name it in credentials.env", i, *rule ? rule : "?");
			n++;
		}
	/* the whole NAME=VALUE, as `upstream show` redacts it: a rule may
	 * need the name (PASSWORD=...), but only a secret in the value counts */
	for (i = 0; u->env && u->env[i]; i++) {
		eq = strcspn(u->env[i], "=");
		if ((rule = secret_in(u->env[i], eq + 1))) {
			say(report, ctx, "env.%.*s: holds what looks like a secret (%s): put it in "
			    "a 0600 file and name it in credentials.env", (int)eq, u->env[i],
			    *rule ? rule : "?");
			n++;
		}
	}
	if (u->url && (rule = secret_in(u->url, 0))) {
		say(report, ctx, "url: holds what looks like a secret (%s): put it in a 0600 file "
		    "and name it in credentials.header", *rule ? rule : "?");
		n++;
	}
	return n;
}

int tg_upstream_check_mounts(const struct tg_upstream *u,
			     void (*report)(const char *line, void *ctx), void *ctx)
{
	char why[LINT_LINE - 64];
	size_t i;
	int n = 0;

	for (i = 0; i < u->nmounts; i++) {
		if (!u->mounts[i].writable ||
		    tg_sandbox_bind_writable(NULL, u->mounts[i].host, why, sizeof(why)) != 0)
			continue; /* gone since it loaded: the start refuses it, naming it */
		say(report, ctx, "sandbox.mounts[%zu]: writable, but %s", i, why);
		n++;
	}
	return n;
}

/* The edit distance of a and b (Levenshtein), or NEAR_MAX + 1 when over
 * NEAR_MAX: a band of NEAR_MAX either side of the diagonal, so each pair
 * costs at most 128 * 5 steps. */
static size_t distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, row[130], prev, cur, best;

	if (la > 128 || lb > 128 || (la > lb ? la - lb : lb - la) > NEAR_MAX)
		return NEAR_MAX + 1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		/* only the band is computed; the cells either side of it are
		 * "too far", so the next row never reads a stale one */
		size_t lo = i > NEAR_MAX + 1 ? i - NEAR_MAX : 1;
		size_t hi = i + NEAR_MAX < lb ? i + NEAR_MAX : lb;

		prev = row[lo - 1];
		row[lo - 1] = lo == 1 ? i : NEAR_MAX + 1;
		best = row[lo - 1];
		for (j = lo; j <= hi; j++) {
			cur = row[j];
			row[j] = prev + (a[i - 1] != b[j - 1]);
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			if (cur + 1 < row[j])
				row[j] = cur + 1;
			if (row[j] < best)
				best = row[j];
			prev = cur;
		}
		if (hi < lb)
			row[hi + 1] = NEAR_MAX + 1;
		if (best > NEAR_MAX)
			return NEAR_MAX + 1;
	}
	return row[lb] > NEAR_MAX ? NEAR_MAX + 1 : row[lb];
}

/* The listed name nearest to name when it is close (at most NEAR_MAX
 * edits, and no more than a third of name's length: "ls" is not near
 * "cp"), the first of the nearest; NULL otherwise. */
static const char *nearest(const char *name, const char *const *listed, size_t n)
{
	size_t i, d, best = NEAR_MAX + 1, len = strlen(name);
	const char *found = NULL;

	for (i = 0; i < n; i++) {
		if (!listed[i] || !tg_upstream_tool_name_ok(listed[i]))
			continue; /* not a name the server's tools can be served under */
		d = distance(name, listed[i]);
		if (d < best && d * 3 <= len) {
			best = d;
			found = listed[i];
		}
	}
	return found;
}

int tg_upstream_check_listing(const struct tg_upstream *u, const char *const *listed, size_t n,
			      void (*report)(const char *line, void *ctx), void *ctx)
{
	const char *near;
	size_t i, k;
	int absent = 0;

	for (i = 0; i < u->ntools; i++) {
		for (k = 0; k < n; k++)
			if (listed[k] && strcmp(listed[k], u->tools[i].name) == 0)
				break;
		if (k < n)
			continue;
		/* bounded: a thousand misspelt keys cost no more than 64 */
		near = absent < NEAR_ASKED ? nearest(u->tools[i].name, listed, n) : NULL;
		say(report, ctx, "tools.%s: declared, but the server lists no such tool%s%s%s",
		    u->tools[i].name, near ? " (did you mean " : "", near ? near : "",
		    near ? "?)" : "");
		absent++;
	}
	return absent;
}
