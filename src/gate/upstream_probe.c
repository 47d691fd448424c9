/*
 * One upstream seen once (toolgate/gate.h, tg_gate_upstream_probe; the
 * operator's `toolgate upstream test|pin|diff`, docs/UPSTREAMS.md,
 * "Commands"): its server started in its sandbox, or reached over HTTP,
 * by the runner serve uses (src/exec/upstream_run.c) with the directories
 * serve would check it against, its first listing taken, each tool judged
 * as upstreams.c judges it before serving it, what its declaration says
 * that would not work as served (a writable mount its sandbox's user
 * cannot write, a declared tool the server does not list) said, and the
 * server stopped.
 *
 * Never: serve a tool, write to a store or the audit log, or hand the
 * caller a server's text as a reason unredacted (the listing's own text,
 * the names and definitions, is the caller's to show safe).
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "exec/upstream_run.h"
#include "gate/gate_int.h"
#include "obs/shown.h"
#include "toolgate/catalog.h"
#include "toolgate/scan.h"
#include "toolgate/upstream.h"

void tg_upstream_listing_release(struct tg_upstream_listing *l)
{
	size_t i;

	if (!l)
		return;
	for (i = 0; i < l->n; i++) {
		free(l->tools[i].name);
		free(l->tools[i].definition);
		tg_contract_free(l->tools[i].contract);
		free(l->tools[i].why);
	}
	free(l->tools);
	for (i = 0; i < l->nwarnings; i++)
		free(l->warnings[i]);
	free(l->warnings);
	memset(l, 0, sizeof(*l));
}

/* t refused for why (the server's text in it): kept shown safe. */
static int refuse(struct tg_listed_tool *t, const char *why)
{
	char shown[700];

	obs_shown(why, strlen(why), shown, sizeof(shown));
	t->verdict = TG_LISTED_REFUSED;
	tg_contract_free(t->contract);
	t->contract = NULL;
	t->why = strdup(shown);
	return t->why ? 0 : -1;
}

/* Whether an exposed name is served by one of l's first n tools. */
static int served_before(const struct tg_upstream_listing *l, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (l->tools[i].verdict == TG_LISTED_SERVED &&
		    strcmp(l->tools[i].contract->name, name) == 0)
			return 1;
	return 0;
}

/* Tool i of l (its definition set), judged as upstreams.c's tools_of
 * does: 0, or -1 out of memory. */
static int judge(const struct tg_upstream *u, enum tg_descriptions descriptions,
		 struct tg_upstream_listing *l, size_t i)
{
	struct tg_listed_tool *t = &l->tools[i];
	struct tg_scan_finding f[1];
	struct tg_error err;
	char line[400], why[700];
	int rc;

	rc = tg_catalog_upstream_tool(u, t->definition, strlen(t->definition), &t->contract, &err);
	if (rc < 0 && err.code == TG_ERR_NOMEM)
		return -1;
	if (rc < 0)
		return refuse(t, err.msg);
	if (rc == 1) {
		t->verdict = TG_LISTED_HIDDEN;
		return 0;
	}
	t->verdict = TG_LISTED_SERVED;
	if (served_before(l, i, t->contract->name)) {
		snprintf(why, sizeof(why), "%s: exposed as %s, the name of a tool served already "
			 "(rename one of them)", t->contract->upstream_tool, t->contract->name);
		return refuse(t, why);
	}
	if (descriptions == TG_DESCRIPTIONS_REFUSE && tg_scan_contract(t->contract, f, 1) > 0) {
		tg_scan_describe(&f[0], line, sizeof(line));
		snprintf(why, sizeof(why), "%s: %s: " DESCRIPTION_REFUSED, t->contract->name, line);
		return refuse(t, why);
	}
	return 0;
}

/* A warning kept in the listing (report's ctx): failed set when out of
 * memory. */
struct warned {
	struct tg_upstream_listing *l;
	size_t cap;
	int failed;
};

static void warn(const char *line, void *ctx)
{
	struct warned *w = ctx;
	char **nv, *copy;

	if (w->failed)
		return;
	if (w->l->nwarnings == w->cap) {
		nv = realloc(w->l->warnings, (w->cap * 2 + 4) * sizeof(*nv));
		if (!nv) {
			w->failed = 1;
			return;
		}
		w->l->warnings = nv;
		w->cap = w->cap * 2 + 4;
	}
	copy = strdup(line);
	if (!copy) {
		w->failed = 1;
		return;
	}
	w->l->warnings[w->l->nwarnings++] = copy;
}

/* What u says that would not work as l is served: its writable mounts
 * the sandbox's user cannot write, its declared tools l does not list.
 * 0, or -1 out of memory. */
static int warnings_of(const struct tg_upstream *u, struct tg_upstream_listing *l)
{
	struct warned w = { l, 0, 0 };
	const char **names = calloc(l->n + 1, sizeof(*names));
	size_t i;

	if (!names)
		return -1;
	for (i = 0; i < l->n; i++)
		names[i] = l->tools[i].name;
	tg_upstream_check_mounts(u, warn, &w);
	tg_upstream_check_listing(u, names, l->n, warn, &w);
	free(names);
	return w.failed ? -1 : 0;
}

/* The listing text (a JSON array of tools/list entries) judged into *l. */
static int listing_judge(const struct tg_upstream *u, enum tg_descriptions descriptions,
			 const char *text, struct tg_upstream_listing *l, struct tg_error *err)
{
	json_t *list = json_loads(text, 0, NULL), *def, *name;
	size_t i;

	if (!json_is_array(list))
		goto nomem; /* the runner keeps only what it parsed */
	l->tools = calloc(json_array_size(list) + 1, sizeof(*l->tools));
	if (!l->tools)
		goto nomem;
	json_array_foreach(list, i, def) {
		struct tg_listed_tool *t = &l->tools[l->n++];

		name = json_object_get(def, "name");
		t->definition = json_dumps(def, JSON_COMPACT);
		if (!t->definition || (json_is_string(name) &&
				       !(t->name = strdup(json_string_value(name)))))
			goto nomem;
		if (judge(u, descriptions, l, i) < 0)
			goto nomem;
	}
	if (warnings_of(u, l) < 0)
		goto nomem;
	json_decref(list);
	return 0;
nomem:
	json_decref(list);
	tg_upstream_listing_release(l);
	return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
}

int tg_gate_upstream_probe(const struct tg_catalog *catalog, const char *name,
			   const struct tg_gate_options *opts, int timeout_ms,
			   struct tg_upstream_listing *out, struct tg_error *err)
{
	struct upstream_run_options ropts = { 0 };
	struct exec_dirs_options dopts = { 0 };
	const struct tg_upstream *u = NULL;
	struct upstream_run *run = NULL;
	struct exec_dirs *dirs = NULL;
	char *text = NULL;
	size_t i;
	int rc = -1;

	tg_error_clear(err);
	memset(out, 0, sizeof(*out));
	for (i = 0; i < tg_catalog_upstream_count(catalog) && !u; i++)
		if (strcmp(tg_catalog_upstream_at(catalog, i)->name, name) == 0)
			u = tg_catalog_upstream_at(catalog, i);
	if (!u)
		return tg_error_set(err, TG_ERR_INVALID, "no upstream %s is declared", name);
	if (opts) {
		dopts.workspace = opts->workspace;
		dopts.tools_dir = opts->tools_dir;
		/* --catalog-trust: what the catalogue holds is checked (and
		 * given) from its verified copy, as serve's */
		dopts.tools_copy = opts->tools_copy;
		dopts.state_dir = opts->state_dir;
		dopts.own_files = opts->own_files;
	}
	/* the checks tg_gate_new makes before it starts any server */
	if (exec_dirs_new(&dopts, &dirs, err) < 0 || exec_check_catalog(catalog, dirs, err) < 0)
		goto out;
	ropts.dirs = dirs;
	ropts.fail_fast = 1;
	if (upstream_run_new(u, &ropts, &run, err) < 0 ||
	    upstream_run_wait(run, timeout_ms, err) < 0)
		goto out;
	text = upstream_run_tools(run, NULL);
	if (!text) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	rc = listing_judge(u, opts ? opts->descriptions : TG_DESCRIPTIONS_REFUSE, text, out, err);
	if (rc == 0)
		upstream_run_protocol(run, out->protocol, sizeof(out->protocol));
out:
	free(text);
	upstream_run_free(run);
	exec_dirs_free(dirs);
	return rc;
}
