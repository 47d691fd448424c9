/*
 * The gateway's deployment, looked at before it serves (docs/CLI.md,
 * "Checked at start"; tg_gate_preflight): what the command tools need of
 * the host (src/exec/preflight.c), what the sandbox's tiers need of the
 * kernel and the cgroups this user may make, and the policy's scopes
 * against the tools they are meant for. serve refuses to listen while
 * anything is found; toolgate doctor says the same of a configuration.
 *
 * It changes nothing but a test cgroup made and removed again (the
 * sandbox's probe, which is how a cgroup this user may not make is found).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/exec.h"
#include "gate/gate_int.h"
#include "toolgate/auth.h"
#include "toolgate/catalog.h"
#include "toolgate/sandbox.h"
#include "toolgate/upstream.h"

struct said {
	tg_problem_fn fn;
	void *ctx;
	unsigned n;
};

static void say(struct said *s, const char *where, const char *what, const char *fix)
{
	s->n++;
	s->fn(s->ctx, where, what, fix);
}

/* The first command tool, or stdio upstream, of each tier: the kernel
 * and the cgroups give it what the tier guarantees, for this user. */
static void check_tiers(const struct tg_catalog *cat, struct said *s)
{
	static const enum tg_tier tiers[] = { TG_TIER_STRICT, TG_TIER_STANDARD };
	const char *file, *field;
	struct tg_sandbox_probe p;
	struct tg_error err;
	char where[1200], what[1400];
	size_t i, t;
	int probed = 0;

	for (t = 0; t < sizeof(tiers) / sizeof(tiers[0]); t++) {
		file = field = NULL;
		for (i = 0; !file && i < tg_catalog_count(cat); i++) {
			const struct tg_contract *k = tg_catalog_at(cat, i);

			if (k->executor == TG_EXEC_COMMAND && k->tier == tiers[t])
				file = k->file, field = "executor.tier";
		}
		for (i = 0; !file && i < tg_catalog_upstream_count(cat); i++) {
			const struct tg_upstream *u = tg_catalog_upstream_at(cat, i);

			if (u->transport == TG_UPSTREAM_STDIO && u->tier == tiers[t])
				file = u->file, field = "tier";
		}
		if (!file)
			continue;
		if (!probed++)
			tg_sandbox_probe_host(&p);
		if (tg_sandbox_tier_check(tiers[t], &p, &err) == 0)
			continue;
		snprintf(where, sizeof(where), "%s: %s", file, field);
		snprintf(what, sizeof(what), "the %s tier cannot be given on this host: %s",
			 tg_tier_name(tiers[t]), err.msg);
		say(s, where, what,
		    !p.cgroup_writable
			    ? "run the gateway as root, or in a cgroup delegated to its user "
			      "(systemd: Delegate=yes, docs/SYSTEMD.md); toolgate doctor says more"
			    : "toolgate doctor says what the host lacks (docs/SANDBOX.md)");
	}
}

/* 1 if scope is meant for something the gateway serves: a tool of the
 * catalogue, or an upstream's namespace (its tools are listed later). */
static int scope_used(const struct tg_catalog *cat, const char *scope)
{
	static const char *const actions[] = { "read", "write", "approve" };
	char want[300];
	size_t i, a, n;

	if (strcmp(scope, TG_SCOPE_SCRAPE) == 0)
		return 1;
	for (i = 0; i < tg_catalog_count(cat); i++)
		for (a = 0; a < 3; a++) {
			snprintf(want, sizeof(want), "%.200s:%s", tg_catalog_at(cat, i)->name,
				 actions[a]);
			if (tg_scope_covers(scope, want))
				return 1;
		}
	for (i = 0; i < tg_catalog_upstream_count(cat); i++) {
		const char *ns = tg_catalog_upstream_at(cat, i)->name;

		n = strlen(ns);
		/* "ns.anything", or a pattern wider than the namespace ("n*") */
		if ((strncmp(scope, ns, n) == 0 && scope[n] == '.') ||
		    (strchr(scope, '*') && strchr(scope, '*') - scope <= (long)n &&
		     strncmp(scope, ns, (size_t)(strchr(scope, '*') - scope)) == 0))
			return 1;
	}
	return 0;
}

static void check_scopes(const struct tg_policy *policy, const char *file,
			 const struct tg_catalog *cat, struct said *s)
{
	char where[1200], what[600];
	size_t i;

	for (i = 0; i < tg_policy_count(policy); i++) {
		const char *name = tg_policy_name(policy, i);
		char *list = tg_policy_scope_list(policy, name), *save = NULL, *sc;

		for (sc = list ? strtok_r(list, " ", &save) : NULL; sc;
		     sc = strtok_r(NULL, " ", &save)) {
			if (scope_used(cat, sc))
				continue;
			snprintf(where, sizeof(where), "%s: principals.%.200s.scopes",
				 file ? file : "the policy", name);
			snprintf(what, sizeof(what),
				 "%.300s matches no tool of the catalogue nor any upstream's "
				 "namespace", sc);
			say(s, where, what,
			    "fix the tool's name (toolgate catalog list shows them), or remove "
			    "the scope");
		}
		free(list);
	}
}

unsigned tg_gate_preflight(struct tg_gate *g, const char *policy_file, tg_problem_fn fn,
			   void *ctx)
{
	struct said s = { fn, ctx, 0 };
	/* what is served now: the catalogue's tools and the skills' (an
	 * upstream's are listed later, its namespace stands for them) */
	const struct tg_catalog *cat = tg_gate_acquire(g);

	s.n += exec_preflight(cat, g->dirs, g->store != NULL, fn, ctx);
	check_tiers(cat, &s);
	if (g->policy)
		check_scopes(g->policy, policy_file, cat, &s);
	tg_gate_release(g, cat);
	return s.n;
}
