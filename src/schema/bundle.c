/*
 * tg_schema_bundle: a compiled schema as one self-contained document, for
 * peers that get the schema but not the files it references (an MCP
 * client reading a tool's inputSchema).
 *
 * JSON Schema 2020-12 calls this a compound schema document (section
 * 9.3): each registered schema the compile loaded is embedded under
 * "$defs" with its URI as "$id", and the root gets its base URI as "$id"
 * when it has none, so every reference resolves inside the document
 * exactly as it did against the files. The meta-schemas are not embedded:
 * every validator knows them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"

/* A registered document as embedded: an object with "$id" set to the URI
 * it was loaded by. A document with its own absolute "$id" keeps it, and
 * a second entry under the load URI refers to it. */
static int embed(json_t *defs, const char *uri, json_t *doc, size_t *n)
{
	json_t *copy, *id;
	char *own = NULL, key[64];
	int rc = -1;

	if (json_is_boolean(doc))
		copy = json_is_true(doc) ? json_object() : json_pack("{s:{}}", "not");
	else
		copy = json_deep_copy(doc);
	if (!copy)
		return -1;
	id = json_object_get(copy, "$id");
	if (json_is_string(id))
		own = uri_resolve(uri, json_string_value(id));
	if (json_object_set_new(copy, "$id", json_string(own ? own : uri)) < 0)
		goto out;
	do
		snprintf(key, sizeof(key), "toolgate.registered.%zu", (*n)++);
	while (json_object_get(defs, key));
	if (json_object_set(defs, key, copy) < 0)
		goto out;
	if (own && strcmp(own, uri) != 0) {
		json_t *alias = json_pack("{s:s,s:s}", "$id", uri, "$ref", own);

		do
			snprintf(key, sizeof(key), "toolgate.registered.%zu", (*n)++);
		while (json_object_get(defs, key));
		if (!alias || json_object_set_new(defs, key, alias) < 0)
			goto out;
	}
	rc = 0;
out:
	free(own);
	json_decref(copy);
	return rc;
}

char *tg_schema_bundle(const struct tg_schema *s, struct tg_error *err)
{
	json_t *root = json_array_get(json_object_get(s->docs, "list"), 0), *defs, *doc;
	const char *uri, *defs_key = s->draft == 7 ? "definitions" : "$defs";
	char *text = NULL;
	size_t n = 0;

	tg_error_clear(err);
	root = json_deep_copy(root);
	if (!root)
		goto nomem;
	if (json_object_size(s->registered) && json_is_object(root)) {
		/* draft-07 ignores everything beside a "$ref", "definitions"
		 * included: the root moves one level down */
		if (s->draft == 7 && json_object_get(root, "$ref")) {
			/* json_pack takes root's reference, even when it fails */
			root = json_pack("{s:[o]}", "allOf", root);
			if (!root)
				goto nomem;
		}
		if (!json_object_get(root, "$id") &&
		    json_object_set_new(root, "$id", json_string(schema_base_uri(s))) < 0)
			goto nomem;
		defs = json_object_get(root, defs_key);
		if (!json_is_object(defs)) {
			defs = json_object();
			if (json_object_set_new(root, defs_key, defs) < 0)
				goto nomem;
		}
		json_object_foreach(s->registered, uri, doc)
			if (embed(defs, uri, doc, &n) < 0)
				goto nomem;
	}
	text = json_dumps(root, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!text)
		goto nomem;
	json_decref(root);
	return text;
nomem:
	json_decref(root);
	tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return NULL;
}
