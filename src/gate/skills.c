/*
 * The skills the gateway serves (docs/SKILLS.md, "Serving"), as the set
 * read last (skill_load.c: at start and at each reload), each request
 * holding the set it reads for as long as it reads it.
 *
 * Served progressively, over MCP's resources and prompts: each skill's
 * SKILL.md listed as a resource (skill://NAME/SKILL.md, with the
 * description), its other files read by URI when the model follows the
 * body's references, and a prompt a skill (skill:NAME) that gives the
 * body as a message.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gate/gate_int.h"
#include "toolgate/skill.h"
#include "util/sodium.h"
#include "util/utf8.h"

#define URI_PREFIX "skill://"
#define PROMPT_PREFIX "skill:"

size_t tg_gate_skill_count(struct tg_gate *g)
{
	struct gate_skillset *set = gate_skillset_get(g);
	size_t n = set ? set->n : 0;

	gate_skillset_put(g, set);
	return n;
}

struct name_key {
	const char *name;
	size_t len;
};

static int name_cmp(const void *key, const void *e)
{
	const struct name_key *k = key;
	const char *n = (*(struct tg_skill *const *)e)->meta.name;
	int c = strncmp(k->name, n, k->len);

	return c ? c : n[k->len] ? -1 : 0;
}

/* The skill of set served as name[0, len), or NULL: the skills are
 * sorted by name. */
static const struct tg_skill *named(const struct gate_skillset *set, const char *name,
				    size_t len)
{
	struct name_key k = { name, len };
	struct tg_skill *const *s;

	if (!set || !set->n || memchr(name, '\0', len))
		return NULL;
	s = bsearch(&k, set->v, set->n, sizeof(*set->v), name_cmp);
	return s ? *s : NULL;
}

/* own (a JSON array's text, taken) with the skills' entries after it. */
char *gate_skills_list(struct tg_gate *g, char *own, int templates, int prompts)
{
	struct gate_skillset *set = gate_skillset_get(g);
	size_t n = set ? set->n : 0;
	char *text = NULL;
	json_t *a;

	if (!n) {
		/* none served (a catalogue without its own skills/): as it is */
		gate_skillset_put(g, set);
		return own;
	}
	a = own ? json_loads(own, 0, NULL) : NULL;
	free(own);
	if (!json_is_array(a)) {
		json_decref(a);
		gate_skillset_put(g, set);
		return NULL;
	}
	if (templates && n)
		json_array_append_new(
			a, json_pack("{s:s, s:s, s:s}", "uriTemplate", URI_PREFIX "{name}/{+path}",
				     "name", "skill-file", "description",
				     "A file of a skill the gateway serves, by its path in the skill "
				     "(the body of SKILL.md names them)"));
	for (size_t i = 0; !templates && i < n; i++) {
		const struct tg_skill *s = set->v[i];
		char uri[128], name[80];

		snprintf(uri, sizeof(uri), URI_PREFIX "%s/SKILL.md", s->meta.name);
		snprintf(name, sizeof(name), PROMPT_PREFIX "%s", s->meta.name);
		if (prompts)
			json_array_append_new(a, json_pack("{s:s, s:s}", "name", name, "description",
							   s->meta.description));
		else
			json_array_append_new(
				a, json_pack("{s:s, s:s, s:s, s:s, s:I}", "uri", uri, "name",
					     s->meta.name, "description", s->meta.description,
					     "mimeType", "text/markdown", "size",
					     (json_int_t)s->skill_md_len));
	}
	gate_skillset_put(g, set);
	text = json_dumps(a, JSON_COMPACT);
	json_decref(a);
	return text;
}

/* A file's contents entry: text when it is UTF-8, else base64. */
static json_t *contents(const char *uri, const struct tg_skill_file *f)
{
	const char *dot = strrchr(f->path, '.');
	const char *mime = dot && !strcmp(dot, ".md") ? "text/markdown" : "text/plain";
	json_t *o;

	if (!memchr(f->data, '\0', f->size) && utf8_valid(f->data, f->size))
		return json_pack("{s:s, s:s, s:s%}", "uri", uri, "mimeType", mime, "text", f->data,
				 (size_t)f->size);
	{
		size_t n = sodium_base64_ENCODED_LEN(f->size, sodium_base64_VARIANT_ORIGINAL);
		char *b = malloc(n);

		if (!b)
			return NULL;
		sodium_bin2base64(b, n, (const unsigned char *)f->data, f->size,
				  sodium_base64_VARIANT_ORIGINAL);
		o = json_pack("{s:s, s:s, s:s}", "uri", uri, "mimeType", "application/octet-stream",
			      "blob", b);
		free(b);
		return o;
	}
}

int gate_skills_is_uri(const char *uri)
{
	return strncmp(uri, URI_PREFIX, strlen(URI_PREFIX)) == 0;
}

char *gate_skills_read(struct tg_gate *g, const char *uri, struct tg_error *err)
{
	const char *name = uri + strlen(URI_PREFIX), *slash = strchr(name, '/');
	struct gate_skillset *set = gate_skillset_get(g);
	const struct tg_skill *s = slash ? named(set, name, (size_t)(slash - name)) : NULL;
	const struct tg_skill_file *f = s ? tg_skill_file(s, slash + 1) : NULL;
	json_t *a;
	char *text = NULL;

	if (f) {
		a = json_array();
		if (a && json_array_append_new(a, contents(uri, f)) == 0)
			text = json_dumps(a, JSON_COMPACT);
		json_decref(a);
		if (!text)
			tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	} else {
		tg_error_set(err, TG_ERR_INVALID, "no resource %.200s: %s", uri,
			     s ? "the skill has no such file" : "no such skill is served");
	}
	gate_skillset_put(g, set);
	return text;
}

int gate_skills_is_prompt(const char *name)
{
	return strncmp(name, PROMPT_PREFIX, strlen(PROMPT_PREFIX)) == 0;
}

/* The body's length without the blank lines at its end. */
static size_t body_len(const struct tg_skill *s)
{
	size_t n = s->skill_md_len - s->meta.body;

	while (n && strchr(" \t\r\n", s->skill_md[s->meta.body + n - 1]))
		n--;
	return n;
}

char *gate_skills_prompt(struct tg_gate *g, const char *name, struct tg_error *err)
{
	const char *n = name + strlen(PROMPT_PREFIX);
	struct gate_skillset *set = gate_skillset_get(g);
	const struct tg_skill *s = named(set, n, strlen(n));
	char *body, *text = NULL;
	json_t *o;

	if (!s) {
		gate_skillset_put(g, set);
		tg_error_set(err, TG_ERR_INVALID, "no prompt %.200s: no such skill is served", name);
		return NULL;
	}
	if (asprintf(&body, "%.*s\n\n(The skill's files are resources: " URI_PREFIX "%s/PATH, PATH "
			    "as the skill names it.)",
		     (int)body_len(s), s->skill_md + s->meta.body, s->meta.name) < 0) {
		gate_skillset_put(g, set);
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		return NULL;
	}
	o = json_pack("{s:s, s:[{s:s, s:{s:s, s:s}}]}", "description", s->meta.description,
		      "messages", "role", "user", "content", "type", "text", "text", body);
	gate_skillset_put(g, set);
	free(body);
	if (o)
		text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!text)
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return text;
}
