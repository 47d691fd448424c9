/*
 * toolgate doctor: each kernel feature the tiers need, and what each tier
 * guarantees on this host; and, when the configuration file gives serve a
 * catalogue, the deployment serve would run with, looked at as serve
 * looks at it before it listens (tg_gate_preflight). Exits 1 when the
 * strict tier cannot be guaranteed or the deployment has a problem.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "cli/config.h"
#include "toolgate/sandbox.h"

static const char *yes(int v)
{
	return v ? "yes" : "NO";
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The warm pool, tried: how long a sandbox takes to get ready, and a
 * cold and a warm start of /bin/true (the best of 3). 0, or -1 with why. */
struct warm_probe {
	double ready_ms, cold_ms, warm_ms;
	char why[256];
};

static int probe_warm(struct warm_probe *w)
{
	char *argv[] = { "/bin/true", NULL };
	struct tg_sandbox_spec *s = NULL;
	struct tg_sandbox_pool *pool = NULL;
	struct tg_sandbox_pool_stats st;
	struct tg_error err;
	int i, k, rc = -1;

	memset(w, 0, sizeof(*w));
	w->cold_ms = w->warm_ms = 1e9;
	tg_error_clear(&err);
	if (tg_sandbox_spec_new(TG_TIER_STRICT, &s, &err) < 0 ||
	    tg_sandbox_spec_set_argv(s, 1, argv, &err) < 0)
		goto out;
	for (i = 0; i < 3; i++) {
		struct tg_sandbox_result *r = NULL;
		double t0 = now_ms();

		if (tg_sandbox_run(s, &r, &err) < 0)
			goto out;
		if (now_ms() - t0 < w->cold_ms)
			w->cold_ms = now_ms() - t0;
		tg_sandbox_result_free(r);
	}
	for (i = 0; i < 3; i++) {
		struct tg_sandbox_result *r = NULL;
		double t0 = now_ms();

		unsigned long long failed;

		if (!pool && tg_sandbox_pool_new(s, 1, 0, &pool, &err) < 0)
			goto out;
		tg_sandbox_pool_get_stats(pool, &st);
		failed = st.failed;
		for (k = 0; k < 2000; k++) {
			tg_sandbox_pool_get_stats(pool, &st);
			if (st.ready || st.failed > failed)
				break;
			usleep(1000);
		}
		if (!st.ready) {
			snprintf(err.msg, sizeof(err.msg), "no sandbox got ready: %s", st.last_error);
			goto out;
		}
		if (i == 0)
			w->ready_ms = now_ms() - t0;
		t0 = now_ms();
		if (tg_sandbox_pool_run(pool, s, &r, &err) < 0)
			goto out;
		if (now_ms() - t0 < w->warm_ms)
			w->warm_ms = now_ms() - t0;
		tg_sandbox_result_free(r);
	}
	rc = 0;
out:
	if (rc < 0)
		snprintf(w->why, sizeof(w->why), "%.250s", err.msg);
	tg_sandbox_pool_free(pool);
	tg_sandbox_spec_free(s);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate doctor [--json]\n"
		   "\n"
		   "Each kernel feature the sandbox's tiers need, and what each tier\n"
		   "guarantees on this host; with a configuration file (toolgate.conf(5))\n"
		   "that gives serve a catalogue, the deployment serve would run with,\n"
		   "checked as serve checks it at start. Exit status: 0; 1 the\n"
		   "strict tier cannot be guaranteed here, or the deployment has a problem;\n"
		   "2 usage; 3 a configuration file it refuses (docs/CLI.md).\n");
}

/* The deployment's problems, printed (text) or kept (JSON). */
struct problems {
	int json;
	json_t *list;
};

static void problem(void *ctx, const char *where, const char *what, const char *fix)
{
	struct problems *p = ctx;

	if (p->json)
		json_array_append_new(p->list, json_pack("{s:s, s:s, s:s}", "where", where, "what",
							 what, "fix", fix));
	else
		printf("  PROBLEM  %s: %s\n           fix: %s\n", where, what, fix);
}

/* The configured deployment (cli_serve_check): 0 nothing found or
 * nothing configured, 1 problems, or serve's exit status for a
 * configuration it refuses. */
static int deployment(int json, json_t **out)
{
	struct problems p = { json, json ? json_array() : NULL };
	struct serve_check check = { problem, &p, 0, 0 };
	const char *file = cli_config_file();
	int rc;

	if (!json)
		printf("\ndeployment\n");
	/* doctor takes no key, so only a --config was read: the default
	 * file (or $TOOLGATE_CONFIG's) is read here, for serve's values */
	if (!file && cli_config_load("doctor", NULL, &file) < 0) {
		json_decref(p.list);
		return EXIT_DATA;
	}
	rc = cli_serve_check(file, &check);
	if (json) {
		*out = json_pack("{s:s?, s:b, s:o}", "config", file, "checked", check.catalog,
				 "problems", p.list);
	} else if (!check.catalog) {
		if (file)
			printf("  not checked: %s gives serve no catalogue (docs/CONFIG.md)\n",
			       file);
		else
			printf("  not checked: no configuration file (--config FILE, or %s; "
			       "docs/CONFIG.md)\n", CLI_CONFIG_DEFAULT);
	} else if (!rc && !check.problems) {
		printf("  %s: serve's deployment has no problem found (docs/CLI.md)\n",
		       file);
	}
	return rc ? rc : check.problems ? 1 : 0;
}

static const struct option options[] = {
	{ "json", no_argument, NULL, 'j' },
	CLI_OPTION_HELP,
	CLI_OPTION_END,
};

static const char *tf(int v)
{
	return v ? "true" : "false";
}

static void print_json(const struct tg_sandbox_probe *p, int strict_ok, int standard_ok,
		       const struct warm_probe *w, json_t *dep)
{
	char *text = dep ? json_dumps(dep, JSON_COMPACT) : NULL;

	printf("{\"user_namespaces\":%s,\"namespaces\":%s,\"clone3_pidfd\":%s,"
	       "\"mount_api\":%s,\"seccomp\":%s,\"landlock_abi\":%d,"
	       "\"cgroup_version\":%d,\"cgroup_memory\":%s,\"cgroup_pids\":%s,"
	       "\"cgroup_cpu\":%s,\"cgroup_writable\":%s,\"overlayfs\":%s,\"strict\":%s,"
	       "\"standard\":%s,\"warm_pool\":",
	       tf(p->userns), tf(p->namespaces), tf(p->clone3_pidfd), tf(p->mount_api),
	       tf(p->seccomp), p->landlock_abi, p->cgroup_version, tf(p->cgroup_memory),
	       tf(p->cgroup_pids), tf(p->cgroup_cpu), tf(p->cgroup_writable), tf(p->overlayfs),
	       tf(strict_ok), tf(standard_ok));
	if (w)
		printf("{\"works\":true,\"ready_ms\":%.2f,\"cold_start_ms\":%.2f,"
		       "\"warm_start_ms\":%.2f}", w->ready_ms, w->cold_ms, w->warm_ms);
	else
		printf("{\"works\":false}");
	printf(",\"deployment\":%s}\n", text ? text : "null");
	free(text);
}

int cmd_doctor(int argc, char **argv)
{
	struct tg_sandbox_probe p;
	struct tg_error err;
	int strict_ok, standard_ok, json = 0, warm_ok = 0, opt, deployed;
	char strict_msg[512], standard_msg[512];
	struct warm_probe w;

	opt = cli_parse("doctor", argc, argv, ":h", options, usage, NULL, cli_set_flag, &json);
	if (opt >= 0)
		return opt;
	if (optind < argc) {
		fprintf(stderr, "toolgate doctor: unexpected argument '%s' (see --help)\n",
			argv[optind]);
		return EXIT_USAGE;
	}
	tg_sandbox_probe_host(&p);
	strict_ok = tg_sandbox_tier_check(TG_TIER_STRICT, &p, &err) == 0;
	snprintf(strict_msg, sizeof(strict_msg), "%s", strict_ok ? "" : err.msg);
	standard_ok = tg_sandbox_tier_check(TG_TIER_STANDARD, &p, &err) == 0;
	snprintf(standard_msg, sizeof(standard_msg), "%s", standard_ok ? "" : err.msg);
	if (strict_ok)
		warm_ok = probe_warm(&w) == 0;
	if (json) {
		json_t *dep = NULL;

		deployed = deployment(1, &dep);

		print_json(&p, strict_ok, standard_ok, warm_ok ? &w : NULL, dep);
		json_decref(dep);
		return deployed > 1 ? deployed : !strict_ok || deployed;
	}
	printf("kernel features\n");
	printf("  user namespaces            %s\n", yes(p.userns));
	printf("  mount/pid/net/ipc/uts/cgroup namespaces  %s\n", yes(p.namespaces));
	printf("  clone3 + pidfd             %s\n", yes(p.clone3_pidfd));
	printf("  mount API (open_tree...)   %s\n", yes(p.mount_api));
	printf("  seccomp (notify, kill)     %s\n", yes(p.seccomp));
	if (p.landlock_abi)
		printf("  landlock                   ABI %d%s\n", p.landlock_abi,
		       p.landlock_abi >= 4 ? " (filesystem, TCP)" : " (filesystem only)");
	else
		printf("  landlock                   NO\n");
	printf("  cgroups                    %s\n", p.cgroup_detail);
	printf("  overlayfs                  %s\n", yes(p.overlayfs));
	printf("\ntiers\n");
	if (strict_ok)
		printf("  strict    guaranteed: new user/mount/pid/net/ipc/uts/cgroup namespaces,\n"
		       "            tmpfs root with read-only binds, masked /proc, no /sys,\n"
		       "            seccomp allowlist, landlock filesystem and TCP rules,\n"
		       "            cgroup memory/pids/cpu limits, rlimits, no capabilities,\n"
		       "            no_new_privs, no network, wall-clock kill\n");
	else
		printf("  strict    REFUSED: %s\n", strict_msg);
	if (standard_ok)
		printf("  standard  guaranteed: as strict; no network, or an egress allowlist\n"
		       "            through the proxy (docs/EGRESS.md), where landlock's TCP\n"
		       "            rules (ABI 4) let the command reach the proxy's port only\n");
	else
		printf("  standard  REFUSED: %s\n", standard_msg);
	printf("\nwarm pool\n");
	if (warm_ok)
		printf("  works: a sandbox is ready %.1f ms after it is asked for; /bin/true\n"
		       "  starts cold in %.2f ms, warm in %.2f ms (the best of 3 each).\n"
		       "  toolgate serve --warm N keeps N ready for each command tool.\n",
		       w.ready_ms, w.cold_ms, w.warm_ms);
	else if (strict_ok)
		printf("  does NOT work here: %s\n", w.why);
	else
		printf("  not tried: the strict tier is refused\n");
	deployed = deployment(0, NULL);
	return deployed > 1 ? deployed : !strict_ok || deployed;
}
