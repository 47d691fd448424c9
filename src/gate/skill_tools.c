/*
 * The skills' scripts as tools (docs/SKILLS.md, "Scripts as tools"). A
 * skill served (well-formed, signed by a trusted key, unchanged, scanned)
 * may declare tools in its toolgate.json (tg_skill_tools checks each
 * against the skill's rules). Here each is checked against the gateway
 * as a catalogue's tool is: its name served once, its namespace no
 * catalogue tool's family or upstream's, its compensation resolved, its
 * mount against the gateway's directories, its description scanned. The
 * skill's files are written, as they were read and checked, into a
 * folder of the set's own (mkdtemp, 0755: the sandbox's user reads it),
 * which each tool is given at /skill read-only: a script changed on disk
 * after it was read is never what runs.
 *
 * The contracts are kept as text in the skills' set (skill_load.c):
 * each snapshot (snapshot.c) parses its own and owns them, as it owns its
 * upstreams' tools, and holds the set, whose folder its tools mount.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "gate/gate_int.h"
#include "toolgate/audit.h"
#include "toolgate/catalog.h"
#include "toolgate/egress.h"
#include "toolgate/skill.h"
#include "toolgate/upstream.h"
#include "util/file.h"

static void free_all(struct tg_contract **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		tg_contract_free(v[i]);
	free(v);
}

/* The contracts of t[0, n) parsed: 0 and *v, or -1 and err. */
static int parse_all(const struct tg_skill_tool *t, size_t n, struct tg_contract ***v,
		     struct tg_error *err)
{
	*v = calloc(n + 1, sizeof(**v));
	if (!*v)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < n; i++)
		if (tg_contract_parse(t[i].contract, strlen(t[i].contract), t[i].origin, NULL,
				      &(*v)[i], err) < 0) {
			free_all(*v, i);
			*v = NULL;
			return -1;
		}
	return 0;
}

/* The skill's namespace is its own: no tool of the catalogue has it as
 * its family (the name up to its first dot), no upstream is named so. */
static int namespace_free(const struct tg_catalog *c, const char *name, struct tg_error *err)
{
	size_t nl = strlen(name);

	for (size_t i = 0; i < tg_catalog_count(c); i++) {
		const struct tg_contract *k = tg_catalog_at(c, i);

		if (!strncmp(k->name, name, nl) && (k->name[nl] == '.' || !k->name[nl]))
			return tg_error_set(err, TG_ERR_INVALID, "its tools' namespace %s. is the "
					    "catalogue's (%s, %s)", name, k->name, k->file);
	}
	for (size_t i = 0; i < tg_catalog_upstream_count(c); i++)
		if (!strcmp(tg_catalog_upstream_at(c, i)->name, name))
			return tg_error_set(err, TG_ERR_INVALID, "its tools' namespace %s. is the "
					    "upstream %s's", name, name);
	return 0;
}

/* The skill's tools v[0, n) (taken) served beside the catalogue base: no
 * name twice, every compensation resolved to a write tool, every mount
 * allowed. The other skills' tools need not be there: each skill's are in
 * a namespace of its own (tg_skill_tools, namespace_free), and a
 * compensation names a tool of the same skill. */
static int fits(struct tg_gate *g, const struct tg_catalog *base, struct tg_contract **v,
		size_t n, struct tg_error *err)
{
	struct tg_catalog *c;
	int rc = 0;

	/* the catalogue takes them, whatever it returns */
	if (tg_catalog_derive(base, v, n, &c, err) < 0) {
		free(v);
		return -1;
	}
	for (size_t i = 0; rc == 0 && i < n; i++) {
		const struct tg_contract *undo;

		if (!v[i]->compensation_tool)
			continue;
		if (tg_catalog_resolve(c, v[i]->compensation_tool, "0000-01-01", &undo, err) < 0)
			rc = tg_error_wrap(err, "%s: compensation.tool", v[i]->file);
		else if (undo->authority != TG_AUTHORITY_WRITE)
			rc = tg_error_set(err, TG_ERR_INVALID, "%s: compensation.tool: %s@%s is a "
					  "read tool", v[i]->file, undo->name, undo->version_text);
	}
	if (rc == 0)
		rc = exec_check_catalog(c, g->dirs, err);
	free(v);
	tg_catalog_free(c);
	return rc;
}

/* An address rule opens that address even in a denied range (the
 * host's loopback, the cloud's metadata service, the site's own network:
 * docs/EGRESS.md): the operator's to write, in the catalogue; a skill's
 * tool names hosts, which the proxy judges. */
static int no_address(struct tg_contract *const *v, size_t n, struct tg_error *err)
{
	for (size_t i = 0; i < n; i++)
		for (size_t e = 0; v[i]->egress && v[i]->egress[e]; e++)
			if (tg_egress_rule_is_address(v[i]->egress[e]))
				return tg_error_set(err, TG_ERR_INVALID, "%s: executor.egress[%zu]: "
						    "%.200s: " TG_SKILL_EGRESS_ADDRESS, v[i]->file, e,
						    v[i]->egress[e]);
	return 0;
}

/* The folder set's skills are written into, made at the first. */
static int copy_root(struct gate_skillset *set, struct tg_error *err)
{
	if (!set->copy[0] && file_temp_dir("toolgate-skills", set->copy, sizeof(set->copy)) < 0)
		return tg_error_sys(err, errno, "a folder for the skills' tools");
	return 0;
}

int gate_skill_tools_add(struct tg_gate *g, const struct tg_catalog *catalog,
			 struct gate_skillset *set, const struct tg_skill *s, struct tg_error *err)
{
	struct tg_skill_tool *t, *grown;
	struct tg_contract **v;
	char host[4200], (*subject)[256] = NULL;
	size_t n = 0;

	if (!tg_skill_file(s, TG_SKILL_TOOLS_FILE))
		return 0;
	if (copy_root(set, err) < 0)
		return -1;
	snprintf(host, sizeof(host), "%s/%s", set->copy, s->meta.name);
	if (tg_skill_tools(s, host, &t, &n, err) < 0)
		return -1;
	if (namespace_free(catalog, s->meta.name, err) < 0 ||
	    parse_all(t, n, &v, err) < 0)
		goto fail;
	if (no_address(v, n, err) < 0) {
		free_all(v, n);
		goto fail;
	}
	if (gate_scan_tools(g, NULL, v, n, err) < 0) {
		free_all(v, n);
		goto fail;
	}
	/* what the record says of each, as of the catalogue's (serve.c) */
	subject = calloc(n, sizeof(*subject));
	if (!subject) {
		free_all(v, n);
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto fail;
	}
	for (size_t i = 0; i < n; i++)
		snprintf(subject[i], sizeof(subject[i]), "%s@%s", v[i]->name, v[i]->version_text);
	if (fits(g, catalog, v, n, err) < 0)
		goto fail;
	if (tg_skill_write(s, host, 0, err) < 0) {
		file_remove_tree(host);
		goto fail;
	}
	/* each tool loaded, on the record: nothing is served unrecorded */
	for (size_t i = 0; i < n; i++)
		if (tg_record_event(g->audit, "", subject[i], "loaded", NULL) < 0) {
			file_remove_tree(host);
			tg_error_set(err, TG_ERR_UNAVAILABLE, "%s: its load could not be recorded",
				     subject[i]);
			goto fail;
		}
	grown = realloc(set->tools, (set->ntools + n + 1) * sizeof(*grown));
	if (!grown) {
		file_remove_tree(host);
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto fail;
	}
	memcpy(grown + set->ntools, t, n * sizeof(*t));
	set->tools = grown;
	set->ntools += n;
	free(t);
	free(subject);
	return 0;
fail:
	free(subject);
	tg_skill_tools_free(t, n);
	return -1;
}

int gate_skill_tools_make(const struct gate_skillset *set, struct tg_contract ***v, size_t *n)
{
	struct tg_contract **mine, **grown;
	struct tg_error err;

	if (!set || !set->ntools)
		return 0;
	if (parse_all(set->tools, set->ntools, &mine, &err) < 0)
		return -1; /* the text parsed once: only memory fails */
	grown = realloc(*v, (*n + set->ntools + 1) * sizeof(*grown));
	if (!grown) {
		free_all(mine, set->ntools);
		return -1;
	}
	memcpy(grown + *n, mine, set->ntools * sizeof(*mine));
	free(mine);
	*v = grown;
	*n += set->ntools;
	return 0;
}
