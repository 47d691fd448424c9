/*
 * The catalogue's upstreams (include/toolgate/catalog.h,
 * docs/UPSTREAMS.md): the declarations of DIR/upstreams/NAME.json, loaded
 * by src/upstream/ and carried beside the contracts, and the one rule that
 * joins them: a namespace NAME. belongs to its upstream, so no contract's
 * name starts with it.
 *
 * Carrying a declaration starts nothing: what runs an upstream is not
 * here. This file must never let a contract and an upstream's tool share a
 * name, nor an upstream's compensation point at anything but a write: a
 * write contract, or a name an upstream's write is exposed under.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_int.h"

/* The declared tool of an upstream of c that exposed names, or NULL; OUT
 * *owner its upstream when name lies in one's namespace. */
static const struct tg_upstream_tool *exposed_tool(const struct tg_catalog *c, const char *name,
						   const struct tg_upstream **owner)
{
	size_t i, k, n;

	*owner = NULL;
	for (i = 0; i < c->nup; i++) {
		const struct tg_upstream *u = c->up[i];

		n = strlen(u->name);
		if (strncmp(name, u->name, n) != 0 || name[n] != '.')
			continue;
		*owner = u;
		for (k = 0; k < u->ntools; k++)
			if (!u->tools[k].hide && strcmp(u->tools[k].exposed, name) == 0)
				return &u->tools[k];
		return NULL;
	}
	return NULL;
}

/* A contract of c whose name lies in upstream u's namespace: -1 and err
 * naming both files. */
static int clash(const struct tg_catalog *c, const struct tg_upstream *u, struct tg_error *err)
{
	size_t i, n = strlen(u->name);

	for (i = 0; i < c->n; i++) {
		const struct tg_contract *k = c->v[i];
		const struct tg_upstream *owner;
		const struct tg_upstream_tool *t;

		if (strncmp(k->name, u->name, n) != 0 || k->name[n] != '.')
			continue;
		t = exposed_tool(c, k->name, &owner);
		if (t && owner == u)
			return tg_error_set(err, TG_ERR_INVALID, "upstream %s: tools.%s: exposed as "
					    "%s, the name of contract %s", u->file, t->name,
					    k->name, k->file);
		return tg_error_set(err, TG_ERR_INVALID, "contract %s: name: %s lies in the "
				    "namespace %s. of upstream %s, which is the upstream's alone",
				    k->file, k->name, u->name, u->file);
	}
	return 0;
}

/* Why ref, a name in upstream owner's namespace, is not a write owner
 * exposes, or NULL: it must be one of the names its tools are served
 * under, not hidden, not read (a tool not declared is a write, exposed
 * under its own name). */
static const char *not_exposed_write(const struct tg_catalog *c, const struct tg_upstream *owner,
				     const char *ref)
{
	const char *tool = ref + strlen(owner->name) + 1;
	const struct tg_upstream_tool *t;
	const struct tg_upstream *o;
	size_t k;

	if (!tg_upstream_tool_name_ok(tool))
		return "is not a tool's: after the namespace, a tool name is 1 to 128 of "
		       "A-Z a-z 0-9 _ . -";
	t = exposed_tool(c, ref, &o);
	if (t)
		return t->authority == TG_UPSTREAM_READ ? "is a read tool, and undoing a write "
							  "writes" : NULL;
	/* not an exposed name: a declared tool's own name, hidden or renamed */
	for (k = 0; k < owner->ntools; k++)
		if (strcmp(owner->tools[k].name, tool) == 0)
			return owner->tools[k].hide ? "is a hidden tool, never served"
						    : "is a renamed tool's own name, and it is "
						      "served under its rename";
	return NULL;
}

/* Each compensation of u's tools names a write: an upstream's exposed
 * tool (one not declared is a write) or a write contract. */
static int bad_compensation(const struct tg_catalog *c, const struct tg_upstream *u,
			    struct tg_error *err)
{
	size_t i;

	for (i = 0; i < u->ntools; i++) {
		const char *ref = u->tools[i].compensation_tool, *why;
		const struct tg_upstream *owner;
		const struct tg_contract *k;
		struct tg_error rerr;

		if (!ref)
			continue;
		exposed_tool(c, ref, &owner);
		/* a name that is no tool's is not echoed: it may hold anything */
		if (owner && (why = not_exposed_write(c, owner, ref)))
			return tg_error_set(err, TG_ERR_INVALID, "upstream %s: tools.%s.compensation."
					    "tool: %s %s (upstream %s)", u->file, u->tools[i].name,
					    tg_upstream_tool_name_ok(ref + strlen(owner->name) + 1)
					    ? ref : "the name", why, owner->file);
		if (owner)
			continue;
		if (tg_catalog_resolve(c, ref, "0000-01-01", &k, &rerr) < 0)
			return tg_error_set(err, TG_ERR_INVALID, "upstream %s: tools.%s.compensation."
					    "tool: %s", u->file, u->tools[i].name, rerr.msg);
		if (k->authority != TG_AUTHORITY_WRITE)
			return tg_error_set(err, TG_ERR_INVALID, "upstream %s: tools.%s.compensation."
					    "tool: %s@%s is a read tool, and undoing a write writes",
					    u->file, u->tools[i].name, k->name, k->version_text);
	}
	return 0;
}

/* The declarations' files of DIR/upstreams (none when it is absent), and
 * room for as many in c. */
static char **upstream_files(struct tg_catalog *c, const char *dir, size_t *n,
			     struct tg_error *err)
{
	char path[4096];
	char **files;

	*n = 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/upstreams", dir) >= sizeof(path)) {
		tg_error_set(err, TG_ERR_INVALID, "catalog %.200s: the path is too long", dir);
		return NULL;
	}
	files = catalog_json_files(path, 1, err);
	if (!files)
		return NULL;
	while (files[*n])
		(*n)++;
	c->up = calloc(*n + 1, sizeof(*c->up));
	if (!c->up) {
		catalog_free_files(files);
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		return NULL;
	}
	return files;
}

int catalog_load_upstreams(struct tg_catalog *c, const char *dir, struct tg_error *err)
{
	char **files;
	size_t i, n;
	int rc = -1;

	files = upstream_files(c, dir, &n, err);
	if (!files)
		return -1;
	for (i = 0; i < n; i++) {
		if (tg_upstream_load(files[i], &c->up[c->nup], err) < 0)
			goto out;
		c->nup++;
	}
	for (i = 0; i < c->nup; i++)
		if (clash(c, c->up[i], err) < 0 || bad_compensation(c, c->up[i], err) < 0)
			goto out;
	rc = 0;
out:
	catalog_free_files(files);
	return rc;
}

/* A finding of tg_upstream_lint's, said as the loader's refusals are:
 * "upstream FILE: FIELD: why". */
struct lint_said {
	const struct tg_upstream *u;
	void (*report)(const char *line, void *ctx);
	void *ctx;
};

static void lint_line(const char *line, void *ctx)
{
	const struct lint_said *s = ctx;
	char full[1400];

	snprintf(full, sizeof(full), "upstream %s: %s", s->u->file, line);
	s->report(full, s->ctx);
}

int catalog_lint_upstreams(struct tg_catalog *c, const char *dir,
			   void (*report)(const char *line, void *ctx), void *ctx, size_t *nfiles,
			   struct tg_error *err)
{
	struct tg_error lerr;
	char **files;
	size_t i;
	int problems = 0;

	files = upstream_files(c, dir, nfiles, err);
	if (!files)
		return -1;
	/* every file on its own, so one run reports every problem */
	for (i = 0; files[i]; i++) {
		if (tg_upstream_load(files[i], &c->up[c->nup], &lerr) == 0) {
			c->nup++;
		} else {
			report(lerr.msg, ctx);
			problems++;
		}
	}
	catalog_free_files(files);
	for (i = 0; i < c->nup; i++) {
		struct lint_said said = { c->up[i], report, ctx };

		if (clash(c, c->up[i], &lerr) < 0 || bad_compensation(c, c->up[i], &lerr) < 0) {
			report(lerr.msg, ctx);
			problems++;
		}
		/* what loads but would fail at its start, or show a secret */
		problems += tg_upstream_lint(c->up[i], lint_line, &said);
	}
	return problems;
}

void catalog_free_upstreams(struct tg_catalog *c)
{
	size_t i;

	for (i = 0; i < c->nup; i++)
		tg_upstream_free(c->up[i]);
	free(c->up);
	c->up = NULL;
	c->nup = 0;
}

size_t tg_catalog_upstream_count(const struct tg_catalog *c)
{
	return c ? c->nup : 0;
}

const struct tg_upstream *tg_catalog_upstream_at(const struct tg_catalog *c, size_t i)
{
	return c && i < c->nup ? c->up[i] : NULL;
}
