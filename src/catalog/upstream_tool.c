/*
 * An upstream's tools as contracts (include/toolgate/catalog.h,
 * docs/UPSTREAMS.md, "Serving"): one entry of a server's tools/list and
 * what the operator declared of it, made into the contract every stage of
 * the gate reads, and a catalogue that serves them beside the contracts
 * of its directory.
 *
 * What the server says of a tool is its own claim: its name, title,
 * description and schemas are taken (and the schemas compiled by
 * toolgate's validator, so that a schema it cannot judge is never served),
 * but what it may do is the declaration's: the authority (a write unless
 * declared read, whatever readOnlyHint says), the dry run, the rollback
 * story, task support. Nothing here starts or reaches a server.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_int.h"
#include "toolgate/catalog.h"
#include "toolgate/contract.h"
#include "toolgate/upstream.h"

#define MAX_DESCRIPTION (64u << 10) /* a description or title, bytes */

static const struct tg_upstream_tool *declared(const struct tg_upstream *u, const char *name)
{
	size_t i;

	for (i = 0; i < u->ntools; i++)
		if (strcmp(u->tools[i].name, name) == 0)
			return &u->tools[i];
	return NULL;
}

static int copy(char **to, const char *from)
{
	*to = from ? strdup(from) : NULL;
	return from && !*to ? -1 : 0;
}

/* A string member of o, at most MAX_DESCRIPTION bytes: 0 (NULL when
 * absent), -1 when it is something else or longer. */
static int text_member(json_t *o, const char *key, const char **out)
{
	json_t *v = json_object_get(o, key);

	*out = NULL;
	if (!v)
		return 0;
	if (!json_is_string(v) || json_string_length(v) > MAX_DESCRIPTION ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return -1;
	*out = json_string_value(v);
	return 0;
}

/* Schema member key of def compiled into *schema, its text into *text;
 * absent and not required: 0 with NULLs. */
static int schema_member(json_t *def, const char *key, int required, const char *who,
			 struct tg_schema **schema, char **text, struct tg_error *err)
{
	json_t *v = json_object_get(def, key);

	if (!v)
		return required ? tg_error_set(err, TG_ERR_INVALID, "%s: no %s", who, key) : 0;
	if (!json_is_object(v))
		return tg_error_set(err, TG_ERR_INVALID, "%s: %s is not an object", who, key);
	*text = json_dumps(v, JSON_COMPACT);
	if (!*text)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (tg_schema_compile(*text, strlen(*text), NULL, schema, err) < 0)
		return tg_error_wrap(err, "%s: %s", who, key);
	return 0;
}

/* 1 if the input schema has a boolean property name. */
static int boolean_property(json_t *in, const char *name)
{
	json_t *p = json_object_get(json_object_get(in, "properties"), name);
	json_t *t = json_object_get(p, "type"), *e;
	size_t i;

	if (json_is_string(t))
		return strcmp(json_string_value(t), "boolean") == 0;
	json_array_foreach(t, i, e)
		if (json_is_string(e) && strcmp(json_string_value(e), "boolean") == 0)
			return 1;
	return 0;
}

/* What the declaration says the tool may do, into c. */
static int declare(struct tg_contract *c, const struct tg_upstream *u,
		   const struct tg_upstream_tool *t, json_t *def, const char *who,
		   struct tg_error *err)
{
	json_t *ann = json_object_get(def, "annotations");
	json_t *open = json_object_get(ann, "openWorldHint");
	int write = !t || t->authority == TG_UPSTREAM_WRITE;
	char why[256];

	c->authority = write ? TG_AUTHORITY_WRITE : TG_AUTHORITY_READ;
	c->risk = write ? TG_RISK_HIGH : TG_RISK_LOW;
	c->idempotent = !write;
	/* MCP's default is an open world: said otherwise only by the server */
	c->open_world = !json_is_false(open);
	c->call_timeout_ms = u->timeout_ms;
	c->tasks = t ? (enum tg_task_support)t->tasks
		     : write ? TG_TASKS_OPTIONAL : TG_TASKS_FORBIDDEN;
	c->dry_run = 0;
	if (t && t->dry_run) {
		if (!boolean_property(json_object_get(def, "inputSchema"), t->dry_run_argument))
			return tg_error_set(err, TG_ERR_INVALID, "%s: dry_run.argument %s is not a "
					    "boolean property of its inputSchema: a call could "
					    "not ask for a dry run", who, t->dry_run_argument);
		c->dry_run = 1;
		if (copy(&c->dry_run_argument, t->dry_run_argument) < 0)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	if (!write)
		return 0;
	if (t && t->compensation_tool)
		return copy(&c->compensation_tool, t->compensation_tool) < 0 ||
		       copy(&c->compensation_args, t->compensation_args) < 0
		       ? tg_error_set(err, TG_ERR_NOMEM, "out of memory") : 0;
	if (t && t->irreversible)
		return copy(&c->irreversible, t->irreversible) < 0
		       ? tg_error_set(err, TG_ERR_NOMEM, "out of memory") : 0;
	snprintf(why, sizeof(why), "upstream %s declares no compensation for it", u->name);
	return copy(&c->irreversible, why) < 0 ? tg_error_set(err, TG_ERR_NOMEM, "out of memory")
					       : 0;
}

/* The parts of the listing's entry def, as the server gave them. */
static int describe(struct tg_contract *c, json_t *def, const char *who, struct tg_error *err)
{
	const char *title, *description;

	/* the title, or else the annotations' (MCP 2025-03-26's place for it) */
	if (text_member(def, "title", &title) < 0 ||
	    (!title && text_member(json_object_get(def, "annotations"), "title", &title) < 0))
		return tg_error_set(err, TG_ERR_INVALID, "%s: title: not a string of at most %u "
				    "bytes", who, MAX_DESCRIPTION);
	if (text_member(def, "description", &description) < 0)
		return tg_error_set(err, TG_ERR_INVALID, "%s: description: not a string of at "
				    "most %u bytes", who, MAX_DESCRIPTION);
	if (copy(&c->title, title) < 0 || copy(&c->description, description ? description : "") < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (schema_member(def, "inputSchema", 1, who, &c->input_schema, &c->input_schema_text,
			  err) < 0 ||
	    schema_member(def, "outputSchema", 0, who, &c->output_schema, &c->output_schema_text,
			  err) < 0)
		return -1;
	/* the anomaly rules walk the input schema (contract_doc.h) */
	c->input_schema_doc = json_incref(json_object_get(def, "inputSchema"));
	return contract_param_headers(c, who, err);
}

/* The definition's hash, kept for the pins, and the version 0.0.0+D, D
 * naming it: a ticket approved for name@version runs only while the
 * server lists the tool as it was. */
static int versioned(struct tg_contract *c, const char *def_json, size_t len, const char *who,
		     struct tg_error *err)
{
	struct tg_pin_definition d;

	if (tg_upstream_definition(def_json, len, &d, err) < 0)
		return err->code == TG_ERR_NOMEM ? -1 : tg_error_wrap(err, "%s", who);
	snprintf(c->version_text, sizeof(c->version_text), "0.0.0+%.24s", d.sha256);
	c->upstream_definition = strdup(d.sha256);
	tg_pin_definition_release(&d);
	if (!c->upstream_definition)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	tg_semver_parse("0.0.0", &c->version);
	return 0;
}

int tg_catalog_upstream_tool(const struct tg_upstream *u, const char *def_json, size_t len,
			     struct tg_contract **out, struct tg_error *err)
{
	const struct tg_upstream_tool *t;
	struct tg_contract *c = NULL;
	char who[400], exposed[200];
	const char *name;
	json_t *def;

	*out = NULL;
	tg_error_clear(err);
	if (len > TG_UPSTREAM_MAX_DEFINITION)
		return tg_error_set(err, TG_ERR_LIMIT, "upstream %s: a tool's definition is over "
				    "%u bytes", u->name, TG_UPSTREAM_MAX_DEFINITION);
	def = json_loadb(def_json, len, JSON_REJECT_DUPLICATES, NULL);
	name = json_string_value(json_object_get(def, "name"));
	if (!json_is_object(def) || !name || !tg_upstream_tool_name_ok(name)) {
		json_decref(def);
		return tg_error_set(err, TG_ERR_INVALID, "upstream %s: a listed tool without a "
				    "name of 1 to 128 of A-Z a-z 0-9 _ . -", u->name);
	}
	t = declared(u, name);
	if (t && t->hide) {
		json_decref(def);
		return 1;
	}
	snprintf(who, sizeof(who), "upstream %s: tool %s", u->name, name);
	/* a tool not declared is exposed under its own name */
	snprintf(exposed, sizeof(exposed), "%s.%s", u->name, name);
	c = calloc(1, sizeof(*c));
	if (!c || copy(&c->file, u->file) < 0 || copy(&c->upstream, u->name) < 0 ||
	    copy(&c->upstream_tool, name) < 0 || copy(&c->upstream_declaration, u->sha256) < 0 ||
	    copy(&c->owner_team, who) < 0 ||
	    copy(&c->owner_contact, u->file) < 0 || copy(&c->name, t ? t->exposed : exposed) < 0) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto fail;
	}
	if (strlen(c->name) > 128) {
		tg_error_set(err, TG_ERR_INVALID, "%s: exposed as %.140s..., over 128 characters "
			     "(declare a shorter rename)", who, c->name);
		goto fail;
	}
	c->executor = TG_EXEC_UPSTREAM;
	if (describe(c, def, who, err) < 0 || declare(c, u, t, def, who, err) < 0 ||
	    versioned(c, def_json, len, who, err) < 0)
		goto fail;
	json_decref(def);
	*out = c;
	return 0;
fail:
	json_decref(def);
	tg_contract_free(c);
	return -1;
}
