/*
 * A skill's scripts as tools (tg_skill_tools, include/toolgate/skill.h;
 * docs/SKILLS.md, "Scripts as tools"). A skill that ships scripts says
 * what each may do in its toolgate.json, signed with the rest of it: a
 * list of contracts in the catalogue's format (docs/contracts.md), each
 * a command tool that runs one of the skill's scripts in a sandbox. What
 * a skill could use to reach past its own files is refused here, before
 * anything runs: a name outside the skill's own (NAME.), an executor
 * other than a command, a mount (the skill's files are given at /skill,
 * read-only, and nothing else of the host), the gateway's state, an argv
 * that runs none of the skill's scripts, a compensation that is not a
 * write tool of the same skill.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/skill.h"

#define TOOLS_FIELDS_MSG "the only field is tools, a list of contracts"

void tg_skill_tools_free(struct tg_skill_tool *t, size_t n)
{
	for (size_t i = 0; t && i < n; i++) {
		free(t[i].origin);
		free(t[i].contract);
	}
	free(t);
}

/* The executor of tool o (a contract's JSON) checked and given the
 * skill's files at TG_SKILL_MOUNT from host: 0, or -1 and why[len]. */
static int executor(const struct tg_skill *s, json_t *o, const char *host, char *why, size_t len)
{
	json_t *e = json_object_get(o, "executor"), *argv, *v;
	const char *kind;
	size_t i, scripts = 0;

	kind = json_string_value(json_object_get(e, "kind"));
	if (!json_is_object(e) || !kind || strcmp(kind, "command") != 0)
		return snprintf(why, len, "executor: a skill's tool is a command (\"kind\": "
				"\"command\") that runs one of its scripts"), -1;
	if (json_object_get(e, "mounts"))
		return snprintf(why, len, "executor.mounts: a skill's tool is given its skill's "
				"files at " TG_SKILL_MOUNT " (read-only) and no other of the host's"), -1;
	if (json_object_get(e, "state"))
		return snprintf(why, len, "executor.state: not for a skill's tool: the gateway's "
				"state is its catalogue's tools'"), -1;
	argv = json_object_get(e, "argv");
	json_array_foreach(argv, i, v) {
		const char *a = json_string_value(v);
		const struct tg_skill_file *f;

		if (!a || strncmp(a, TG_SKILL_MOUNT "/scripts/", strlen(TG_SKILL_MOUNT) + 9) != 0)
			continue;
		f = tg_skill_file(s, a + strlen(TG_SKILL_MOUNT) + 1);
		if (!f)
			return snprintf(why, len, "executor.argv[%zu]: %.200s: the skill has no such "
					"script", i, a), -1;
		if (i == 0 && !f->executable)
			return snprintf(why, len, "executor.argv[0]: %.200s: not executable (chmod +x "
					"before signing, or run it with its interpreter)", a), -1;
		scripts++;
	}
	if (json_is_array(argv) && !scripts)
		return snprintf(why, len, "executor.argv: runs none of the skill's scripts (name "
				"one as " TG_SKILL_MOUNT "/scripts/FILE)"), -1;
	if (!json_object_get(e, "tier") &&
	    json_object_set_new(e, "tier", json_string("standard")) < 0)
		return snprintf(why, len, "out of memory"), -1;
	if (json_object_set_new(e, "mounts", json_pack("[{s:s, s:s, s:b}]", "host", host,
							 "inside", TG_SKILL_MOUNT, "writable",
							 0)) < 0)
		return snprintf(why, len, "out of memory"), -1;
	return 0;
}

/* Tool i of the list (o) checked against its skill's rules and as a
 * contract: its contract's text into *t, or -1 and err. */
static int one(const struct tg_skill *s, json_t *o, size_t i, const char *host,
	       struct tg_skill_tool *t, struct tg_error *err)
{
	const char *name = json_string_value(json_object_get(o, "name"));
	size_t nl = strlen(s->meta.name);
	char why[400];

	if (asprintf(&t->origin, "%s/" TG_SKILL_TOOLS_FILE ": tools[%zu]", s->dir, i) < 0) {
		t->origin = NULL;
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	if (!json_is_object(o))
		return tg_error_set(err, TG_ERR_INVALID, "%s: a contract (a JSON object)",
				    t->origin);
	if (!name || !json_is_string(json_object_get(o, "authority")))
		return tg_error_set(err, TG_ERR_INVALID, "%s: %s: required, a string", t->origin,
				    name ? "authority" : "name");
	if (strncmp(name, s->meta.name, nl) != 0 || name[nl] != '.' || !name[nl + 1])
		return tg_error_set(err, TG_ERR_INVALID, "%s: name: %.200s: a skill's tool is "
				    "named in the skill's own namespace, %s.TOOL", t->origin, name,
				    s->meta.name);
	if (executor(s, o, host, why, sizeof(why)) < 0)
		return tg_error_set(err, TG_ERR_INVALID, "%s: %s", t->origin, why);
	t->contract = json_dumps(o, JSON_COMPACT);
	if (!t->contract)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return 0;
}

/* Each compensation names a write tool of the same skill. */
static int compensations(json_t *tools, const char *origin, struct tg_error *err)
{
	size_t i, k;
	json_t *o, *p;

	json_array_foreach(tools, i, o) {
		const char *ref = json_string_value(
			json_object_get(json_object_get(o, "compensation"), "tool"));
		size_t n = ref ? strcspn(ref, "@") : 0;
		int found = 0;

		json_array_foreach(tools, k, p) {
			const char *name = json_string_value(json_object_get(p, "name"));
			const char *auth = json_string_value(json_object_get(p, "authority"));

			if (ref && strlen(name) == n && !strncmp(name, ref, n) &&
			    !strcmp(auth, "write"))
				found = 1;
		}
		if (ref && !found)
			return tg_error_set(err, TG_ERR_INVALID, "%s: tools[%zu]: compensation.tool: "
					    "%.200s is not a write tool of this skill", origin, i,
					    ref);
	}
	return 0;
}

int tg_skill_tools(const struct tg_skill *s, const char *host, struct tg_skill_tool **out,
		   size_t *n, struct tg_error *err)
{
	const struct tg_skill_file *f = tg_skill_file(s, TG_SKILL_TOOLS_FILE);
	json_t *doc, *tools, *o;
	json_error_t jerr;
	char origin[TG_SKILL_PATH_MAX + 64];
	size_t i;

	*out = NULL;
	*n = 0;
	if (!f)
		return 0;
	snprintf(origin, sizeof(origin), "%s/" TG_SKILL_TOOLS_FILE, s->dir);
	if (f->size > TG_SKILL_TOOLS_FILE_MAX)
		return tg_error_set(err, TG_ERR_LIMIT, "%s: larger than %u bytes", origin,
				    TG_SKILL_TOOLS_FILE_MAX);
	doc = json_loadb(f->data, (size_t)f->size, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc)
		return tg_error_set(err, TG_ERR_INVALID, "%s: line %d: %s", origin, jerr.line,
				    jerr.text);
	tools = json_object_get(doc, "tools");
	if (!json_is_object(doc) || json_object_size(doc) != 1 || !json_is_array(tools) ||
	    !json_array_size(tools) || json_array_size(tools) > TG_SKILL_TOOLS_MAX) {
		json_decref(doc);
		return tg_error_set(err, TG_ERR_INVALID, "%s: " TOOLS_FIELDS_MSG " (1 to %d)",
				    origin, TG_SKILL_TOOLS_MAX);
	}
	*out = calloc(json_array_size(tools), sizeof(**out));
	if (!*out) {
		json_decref(doc);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	json_array_foreach(tools, i, o) {
		(*n)++;
		if (one(s, o, i, host, &(*out)[i], err) < 0)
			goto fail;
	}
	/* names checked above: strings; each once */
	for (i = 1; i < *n; i++)
		for (size_t k = 0; k < i; k++)
			if (!strcmp(json_string_value(json_object_get(json_array_get(tools, i), "name")),
				    json_string_value(json_object_get(json_array_get(tools, k), "name")))) {
				tg_error_set(err, TG_ERR_INVALID, "%s: tools[%zu]: name: given "
					     "twice (tools[%zu])", origin, i, k);
				goto fail;
			}
	if (compensations(tools, origin, err) < 0)
		goto fail;
	json_decref(doc);
	return 0;
fail:
	json_decref(doc);
	tg_skill_tools_free(*out, *n);
	*out = NULL;
	*n = 0;
	return -1;
}
