/*
 * Compiling a JSON Schema (2020-12): the documents are walked once to find
 * every resource ("$id") and anchor ("$anchor", "$dynamicAnchor"), then
 * every subschema that can be applied is compiled into a struct snode
 * (schema_int.h), references resolved to nodes. Remote references resolve
 * only to registered schemas on disk (options.remote_base/remote_dir).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "schema/schema_int.h"
#include "util/file.h"
#include "util/pcre2.h"

#define DEFAULT_BASE "urn:toolgate:schema"
#define MAX_SCHEMA_BYTES (8u << 20)

/* ---- small maps ------------------------------------------------------ */

/* Open addressing on the json_t address: every subschema is looked up
 * once per reference and once when compiled. */
struct snode *schema_lookup(const struct tg_schema *s, const json_t *json)
{
	return ptrmap_get(&s->nodes, json);
}

/* Resources (documents and "$id"s) are a list; anchors ("uri#name" ->
 * schema) a JSON object in s->docs; which resource each schema object
 * belongs to, the owners map. */
static struct resource *resource_new(struct tg_schema *s, const char *uri, json_t *root)
{
	struct resource *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->uri = strdup(uri);
	r->root = root;
	r->dyn_anchors = json_object();
	if (!r->uri || !r->dyn_anchors) {
		free(r->uri);
		json_decref(r->dyn_anchors);
		free(r);
		return NULL;
	}
	r->next = s->resources;
	s->resources = r;
	return r;
}

static struct resource *resource_find(struct tg_schema *s, const char *uri)
{
	struct resource *r;

	for (r = s->resources; r; r = r->next)
		if (strcmp(r->uri, uri) == 0)
			return r;
	return NULL;
}

/* The resource a schema object belongs to, or NULL if never walked. */
static struct resource *owner_of(const struct tg_schema *s, const json_t *schema)
{
	return ptrmap_get(&s->owners, schema);
}

/* ---- walking a document -------------------------------------------- */

static int walk(struct tg_schema *s, json_t *schema, struct resource *res,
		struct tg_error *err);

static int walk_children(struct tg_schema *s, json_t *schema, struct resource *res,
			 struct tg_error *err)
{
	/* the union of 2020-12's and draft-07's schema-valued keywords: a
	 * keyword of the other dialect is not compiled, but walking it only
	 * registers identifiers a reference could name */
	static const char *const single[] = {
		"additionalProperties", "propertyNames", "unevaluatedProperties", "items",
		"contains", "unevaluatedItems", "not", "if", "then", "else", "additionalItems",
	};
	static const char *const maps[] = {
		"properties", "patternProperties", "$defs", "dependentSchemas", "definitions",
		"dependencies",
	};
	static const char *const lists[] = { "prefixItems", "allOf", "anyOf", "oneOf", "items" };
	const char *key;
	json_t *v, *m;
	size_t i, j;

	for (i = 0; i < sizeof(single) / sizeof(single[0]); i++)
		if ((v = json_object_get(schema, single[i])) && walk(s, v, res, err) < 0)
			return -1;
	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		m = json_object_get(schema, maps[i]);
		if (!json_is_object(m))
			continue;
		json_object_foreach(m, key, v)
			if (walk(s, v, res, err) < 0)
				return -1;
	}
	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		m = json_object_get(schema, lists[i]);
		if (!json_is_array(m))
			continue;
		json_array_foreach(m, j, v)
			if (walk(s, v, res, err) < 0)
				return -1;
	}
	return 0;
}

static int add_anchor(struct tg_schema *s, struct resource *res, const char *name,
		      json_t *schema, struct tg_error *err)
{
	char *key;
	int rc;

	if (asprintf(&key, "%s#%s", res->uri, name) < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	rc = json_object_set(json_object_get(s->docs, "anchors"), key, schema);
	free(key);
	return rc < 0 ? tg_error_set(err, TG_ERR_NOMEM, "out of memory") : 0;
}

static int walk(struct tg_schema *s, json_t *schema, struct resource *res,
		struct tg_error *err)
{
	json_t *id, *anchor, *dyn;

	if (!json_is_object(schema))
		return 0;
	id = json_object_get(schema, "$id");
	/* draft-07: "$ref" makes its siblings, "$id" included, meaningless;
	 * "$id": "#name" is how an anchor is spelled */
	if (s->draft == 7 && json_object_get(schema, "$ref"))
		id = NULL;
	if (s->draft == 7 && json_is_string(id) && json_string_value(id)[0] == '#') {
		if (add_anchor(s, res, json_string_value(id) + 1, schema, err) < 0)
			return -1;
		id = NULL;
	}
	if (json_is_string(id)) {
		char *abs = uri_resolve(res->uri, json_string_value(id)), *frag, *base;

		if (!abs)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		base = uri_split(abs, &frag);
		free(abs);
		if (!base)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		if (frag && *frag && s->draft != 7) {
			tg_error_set(err, TG_ERR_INVALID, "$id '%s' has a fragment",
				     json_string_value(id));
			free(base);
			return -1;
		}
		if (!resource_find(s, base)) {
			res = resource_new(s, base, schema);
			if (!res) {
				free(base);
				return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			}
		} else {
			res = resource_find(s, base);
		}
		/* draft-07: "http://x/y.json#name" is a resource and an anchor */
		if (frag && *frag && add_anchor(s, res, frag, schema, err) < 0) {
			free(base);
			return -1;
		}
		free(base);
	}
	if (ptrmap_put(&s->owners, schema, res) < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (s->draft == 7)
		return walk_children(s, schema, res, err);
	anchor = json_object_get(schema, "$anchor");
	if (json_is_string(anchor) && add_anchor(s, res, json_string_value(anchor), schema, err) < 0)
		return -1;
	dyn = json_object_get(schema, "$dynamicAnchor");
	if (json_is_string(dyn)) {
		if (add_anchor(s, res, json_string_value(dyn), schema, err) < 0)
			return -1;
		json_object_set(res->dyn_anchors, json_string_value(dyn), schema);
	}
	return walk_children(s, schema, res, err);
}

/* Load, register and walk a document under base URI `uri`. */
static int add_document(struct tg_schema *s, json_t *doc, const char *uri,
			struct resource **out, struct tg_error *err)
{
	struct resource *res;

	if (json_array_append(json_object_get(s->docs, "list"), doc) < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	res = resource_new(s, uri, doc);
	if (!res)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (walk(s, doc, res, err) < 0)
		return -1;
	/* a root "$id" names the document: that resource is the root */
	if (json_is_object(doc) && json_is_string(json_object_get(doc, "$id")) &&
	    owner_of(s, doc))
		res = owner_of(s, doc);
	*out = res;
	return 0;
}

/* A registered schema file: a regular file of at most MAX_SCHEMA_BYTES,
 * parsed like a schema (load.c); OUT why (the file's name and what is
 * wrong) on failure. */
static json_t *load_bounded(struct tg_schema *s, const char *path, char *why, size_t whylen)
{
	struct tg_error e = { 0 };
	size_t n;
	char *buf = file_read_all(path, MAX_SCHEMA_BYTES, 1, &n);
	json_t *doc;

	if (!buf) {
		snprintf(why, whylen, "%.80s: %s", path,
			 errno == EFBIG || errno == EINVAL ? "not a regular file of at most 8 MiB"
							   : strerror(errno));
		return NULL;
	}
	doc = schema_load_text(buf, n, &s->arena, &s->exact, &e);
	free(buf);
	if (!doc)
		snprintf(why, whylen, "%.80s: %.300s", path, e.msg);
	return doc;
}

/* A registered schema from disk for an absolute URI under remote_base. */
static struct resource *load_remote(struct tg_schema *s, const char *uri, struct tg_error *err)
{
	const char *base = s->opts.remote_base, *dir = s->opts.remote_dir;
	struct resource *res = NULL;
	char path[4096], why[400];
	json_t *doc;
	size_t bl;

	if (!base || !dir || strncmp(uri, base, (bl = strlen(base))) != 0)
		return NULL;
	if (strstr(uri + bl, "..") || strchr(uri + bl, '?') || strchr(uri + bl, '\\') ||
	    (size_t)snprintf(path, sizeof(path), "%s/%s", dir, uri + bl) >= sizeof(path)) {
		tg_error_set(err, TG_ERR_INVALID, "$ref %s: not a registered schema's name", uri);
		return NULL;
	}
	doc = load_bounded(s, path, why, sizeof(why));
	if (!doc) {
		tg_error_set(err, TG_ERR_INVALID, "$ref %s: %s", uri, why);
		return NULL;
	}
	if (add_document(s, doc, uri, &res, err) < 0 ||
	    json_object_set(s->registered, uri, doc) < 0)
		res = NULL;
	json_decref(doc);
	return res;
}

/* The JSON Schema meta-schemas, from Debian's python3-jsonschema (never
 * fetched): draft2020-12.json holds the dialect's root, vocabularies.json
 * the vocabulary meta-schemas keyed by their URIs. */
#define METASCHEMA_DIR "/usr/lib/python3/dist-packages/jsonschema/schemas"
#define META_2020 "https://json-schema.org/draft/2020-12/"
#define META_07 "http://json-schema.org/draft-07/schema"

static struct resource *load_known(struct tg_schema *s, const char *uri, struct tg_error *err)
{
	struct resource *res = NULL;
	json_error_t jerr;
	json_t *doc = NULL, *all;
	char path[512];

	if (strcmp(uri, META_07) == 0) {
		snprintf(path, sizeof(path), "%s/draft7.json", METASCHEMA_DIR);
		doc = json_load_file(path, 0, &jerr);
	} else if (strcmp(uri, META_2020 "schema") == 0) {
		snprintf(path, sizeof(path), "%s/draft2020-12.json", METASCHEMA_DIR);
		doc = json_load_file(path, 0, &jerr);
	} else if (strncmp(uri, META_2020 "meta/", strlen(META_2020 "meta/")) == 0) {
		snprintf(path, sizeof(path), "%s/vocabularies.json", METASCHEMA_DIR);
		all = json_load_file(path, 0, &jerr);
		doc = json_incref(json_object_get(all, uri));
		json_decref(all);
	} else {
		return NULL;
	}
	if (!doc) {
		tg_error_set(err, TG_ERR_INVALID,
			     "$ref %s: the meta-schemas are not installed (%s)", uri, METASCHEMA_DIR);
		return NULL;
	}
	if (add_document(s, doc, uri, &res, err) < 0)
		res = NULL;
	json_decref(doc);
	return res;
}

/* ---- references ------------------------------------------------------ */

/* A JSON Pointer (already %-decoded where it came from a URI) from root. */
static json_t *pointer_get(json_t *root, const char *ptr)
{
	char seg[1024];
	json_t *cur = root;

	while (*ptr == '/') {
		size_t n = 0;

		ptr++;
		while (*ptr && *ptr != '/' && n < sizeof(seg) - 1) {
			if (ptr[0] == '~' && ptr[1] == '0') {
				seg[n++] = '~';
				ptr += 2;
			} else if (ptr[0] == '~' && ptr[1] == '1') {
				seg[n++] = '/';
				ptr += 2;
			} else {
				seg[n++] = *ptr++;
			}
		}
		seg[n] = '\0';
		if (json_is_object(cur)) {
			cur = json_object_get(cur, seg);
		} else if (json_is_array(cur)) {
			char *end;
			unsigned long i = strtoul(seg, &end, 10);

			if (*end || !n || (seg[0] == '0' && n > 1))
				return NULL;
			cur = json_array_get(cur, i);
		} else {
			return NULL;
		}
		if (!cur)
			return NULL;
	}
	return *ptr ? NULL : cur;
}

static void percent_decode(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '%' && s[1] && s[2]) {
			char hex[3] = { s[1], s[2], 0 };

			*o++ = (char)strtol(hex, NULL, 16);
			s += 2;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

int schema_resolve(struct tg_schema *s, struct resource *from, const char *ref,
		   json_t **out, struct resource **out_res, struct tg_error *err)
{
	char *abs = uri_resolve(from->uri, ref), *frag, *base;
	struct resource *res;
	json_t *target = NULL;
	int rc = -1;

	*out = NULL;
	if (!abs)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	base = uri_split(abs, &frag);
	if (!base) {
		free(abs);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	res = resource_find(s, base);
	if (!res) {
		struct tg_error lerr;

		tg_error_clear(&lerr);
		res = load_remote(s, base, &lerr);
		if (!res && lerr.code == TG_OK)
			res = load_known(s, base, &lerr);
		if (!res) {
			if (lerr.code != TG_OK && err)
				*err = lerr;
			else
				tg_error_set(err, TG_ERR_INVALID, "$ref '%s': no schema %s", ref, base);
			goto out;
		}
	}
	if (!frag || !*frag) {
		target = res->root;
	} else if (frag[0] == '/') {
		percent_decode(frag);
		target = pointer_get(res->root, frag);
	} else {
		char *key;

		if (asprintf(&key, "%s#%s", res->uri, frag) >= 0) {
			target = json_object_get(json_object_get(s->docs, "anchors"), key);
			free(key);
		}
	}
	if (!target) {
		tg_error_set(err, TG_ERR_INVALID, "$ref '%s': nothing at %s", ref, abs);
		goto out;
	}
	if (owner_of(s, target))
		res = owner_of(s, target);
	*out = target;
	*out_res = res;
	rc = 0;
out:
	free(base);
	free(abs);
	return rc;
}

/* ---- compiling a node ---------------------------------------------- */

static char *path_join(const char *path, const char *k1, const char *k2)
{
	char *out;

	if (k2 ? asprintf(&out, "%s/%s/%s", path, k1, k2) < 0 : asprintf(&out, "%s/%s", path, k1) < 0)
		return NULL;
	return out;
}

static struct snode *child(struct tg_schema *s, struct snode *n, const char *kw,
			   const char *sub, json_t *json, struct tg_error *err)
{
	char *p = path_join(n->path, kw, sub);
	struct snode *c;

	if (!p) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		return NULL;
	}
	c = schema_node(s, json, n->res, p, err);
	free(p);
	return c;
}

static int get_count(json_t *schema, const char *kw, long long *out, struct tg_error *err)
{
	json_t *v = json_object_get(schema, kw);
	double d;

	*out = -1;
	if (!v)
		return 0;
	if (json_is_integer(v)) {
		d = (double)json_integer_value(v);
	} else if (json_is_real(v)) {
		d = json_real_value(v);
	} else {
		return tg_error_set(err, TG_ERR_INVALID, "%s must be a number", kw);
	}
	if (d < 0 || d != floor(d))
		return tg_error_set(err, TG_ERR_INVALID, "%s must be a non-negative integer", kw);
	*out = d > 9.2e18 ? (long long)9.2e18 : (long long)d;
	return 0;
}

/* A number keyword as the validator compares it (num.c): a plain one,
 * or the exact value load.c kept. */
static int get_number(struct tg_schema *s, json_t *schema, const char *kw, int *has,
		      struct jv *out, struct tg_error *err)
{
	json_t *v = json_object_get(schema, kw);

	*has = 0;
	if (!v)
		return 0;
	if (!json_is_number(v))
		return tg_error_set(err, TG_ERR_INVALID, "%s must be a number", kw);
	*has = 1;
	return jv_copy_json(&s->arena, v, &s->exact, out, err);
}

static int type_bit(const char *t)
{
	static const char *const names[] = { "null", "boolean", "object", "array",
					     "number", "string", "integer" };
	int i;

	for (i = 0; i < 7; i++)
		if (strcmp(t, names[i]) == 0)
			return 1 << i;
	return 0;
}

static int compile_types(struct snode *n, struct tg_error *err)
{
	json_t *t = json_object_get(n->json, "type"), *v;
	size_t i;
	int b;

	if (!t)
		return 0;
	if (json_is_string(t)) {
		b = type_bit(json_string_value(t));
		if (!b)
			return tg_error_set(err, TG_ERR_INVALID, "unknown type '%s'",
					    json_string_value(t));
		n->types = (unsigned)b;
		return 0;
	}
	if (!json_is_array(t))
		return tg_error_set(err, TG_ERR_INVALID, "type must be a string or an array");
	json_array_foreach(t, i, v) {
		b = json_is_string(v) ? type_bit(json_string_value(v)) : 0;
		if (!b)
			return tg_error_set(err, TG_ERR_INVALID, "unknown type in type array");
		n->types |= (unsigned)b;
	}
	if (!n->types)
		n->types = 0x80; /* "type": [] matches nothing */
	return 0;
}

static int compile_list(struct tg_schema *s, struct snode *n, const char *kw,
			struct snode ***out, size_t *count, int nonempty, struct tg_error *err)
{
	json_t *a = json_object_get(n->json, kw), *v;
	char idx[24];
	size_t i;

	if (!a)
		return 0;
	if (!json_is_array(a) || (nonempty && json_array_size(a) == 0))
		return tg_error_set(err, TG_ERR_INVALID, "%s must be a%s array of schemas", kw,
				    nonempty ? " non-empty" : "n");
	*out = calloc(json_array_size(a) + 1, sizeof(**out));
	if (!*out)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	*count = json_array_size(a);
	json_array_foreach(a, i, v) {
		snprintf(idx, sizeof(idx), "%zu", i);
		(*out)[i] = child(s, n, kw, idx, v, err);
		if (!(*out)[i])
			return -1;
	}
	return 0;
}

static int compile_one(struct tg_schema *s, struct snode *n, const char *kw,
		       struct snode **out, struct tg_error *err)
{
	json_t *v = json_object_get(n->json, kw);

	if (!v)
		return 0;
	*out = child(s, n, kw, NULL, v, err);
	return *out ? 0 : -1;
}

static int compile_map(struct tg_schema *s, struct snode *n, const char *kw,
		       struct named_node **out, size_t *count, struct tg_error *err)
{
	json_t *m = json_object_get(n->json, kw), *v;
	const char *key;
	size_t i = 0;

	if (!m)
		return 0;
	if (!json_is_object(m))
		return tg_error_set(err, TG_ERR_INVALID, "%s must be an object of schemas", kw);
	*out = calloc(json_object_size(m) + 1, sizeof(**out));
	if (!*out)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	json_object_foreach(m, key, v) {
		(*out)[i].name = key;
		(*out)[i].node = child(s, n, kw, key, v, err);
		if (!(*out)[i].node)
			return -1;
		i++;
	}
	*count = i;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct named_node *)a)->name, ((const struct named_node *)b)->name);
}

static int compile_patterns(struct tg_schema *s, struct snode *n, struct tg_error *err)
{
	json_t *m = json_object_get(n->json, "patternProperties"), *v;
	const char *key;

	if (!m)
		return 0;
	if (!json_is_object(m))
		return tg_error_set(err, TG_ERR_INVALID, "patternProperties must be an object");
	n->patprops = calloc(json_object_size(m) + 1, sizeof(*n->patprops));
	if (!n->patprops)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	json_object_foreach(m, key, v) {
		struct pattern_node *p = &n->patprops[n->npatprops++];

		p->re = regex_compile(key, strlen(key), err);
		if (!p->re)
			return -1;
		p->node = child(s, n, "patternProperties", key, v, err);
		if (!p->node)
			return -1;
	}
	return 0;
}

static int compile_dependencies(struct tg_schema *s, struct snode *n, struct tg_error *err);

static int compile_object_keywords(struct tg_schema *s, struct snode *n, struct tg_error *err)
{
	json_t *j = n->json, *v, *m;
	const char *key;
	size_t i;

	if (compile_map(s, n, "properties", &n->props, &n->nprops, err) < 0 ||
	    compile_map(s, n, "dependentSchemas", &n->dep_schemas, &n->ndep_schemas, err) < 0 ||
	    compile_one(s, n, "additionalProperties", &n->addl_props, err) < 0 ||
	    compile_one(s, n, "propertyNames", &n->prop_names, err) < 0 ||
	    compile_one(s, n, "unevaluatedProperties", &n->uneval_props, err) < 0 ||
	    get_count(j, "minProperties", &n->min_props, err) < 0 ||
	    get_count(j, "maxProperties", &n->max_props, err) < 0)
		return -1;
	if (compile_patterns(s, n, err) < 0)
		return -1;
	v = json_object_get(j, "required");
	if (v) {
		if (!json_is_array(v))
			return tg_error_set(err, TG_ERR_INVALID, "required must be an array");
		n->required = v;
	}
	m = json_object_get(j, "dependentRequired");
	if (m) {
		if (!json_is_object(m))
			return tg_error_set(err, TG_ERR_INVALID, "dependentRequired must be an object");
		n->dep_req = calloc(json_object_size(m) + 1, sizeof(*n->dep_req));
		if (!n->dep_req)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		i = 0;
		json_object_foreach(m, key, v) {
			if (!json_is_array(v))
				return tg_error_set(err, TG_ERR_INVALID,
						    "dependentRequired/%s must be an array", key);
			n->dep_req[i].name = key;
			n->dep_req[i++].required = v;
		}
		n->ndep_req = i;
	}
	/* draft-07's "dependencies", which 2020-12 split in two: still read
	 * (the suite's optional dependencies-compatibility), unless the
	 * schema uses the two keywords that replaced it */
	if (!m && !json_object_get(j, "dependentSchemas"))
		return compile_dependencies(s, n, err);
	return 0;
}

static int compile_array_keywords(struct tg_schema *s, struct snode *n, struct tg_error *err)
{
	json_t *j = n->json, *v;

	if (compile_list(s, n, "prefixItems", &n->prefix, &n->nprefix, 1, err) < 0 ||
	    compile_one(s, n, "items", &n->items, err) < 0 ||
	    compile_one(s, n, "contains", &n->contains, err) < 0 ||
	    compile_one(s, n, "unevaluatedItems", &n->uneval_items, err) < 0 ||
	    get_count(j, "minContains", &n->min_contains, err) < 0 ||
	    get_count(j, "maxContains", &n->max_contains, err) < 0 ||
	    get_count(j, "minItems", &n->min_items, err) < 0 ||
	    get_count(j, "maxItems", &n->max_items, err) < 0)
		return -1;
	v = json_object_get(j, "uniqueItems");
	n->unique = json_is_true(v);
	return 0;
}

static int compile_value_keywords(struct tg_schema *s, struct snode *n, struct tg_error *err)
{
	static const struct jv zero = { .kind = JV_INT, .tmask = T_NUMBER | T_INTEGER };
	json_t *j = n->json, *v;
	struct jv mult;

	if (compile_types(n, err) < 0 ||
	    get_number(s, j, "minimum", &n->has_min, &n->min, err) < 0 ||
	    get_number(s, j, "maximum", &n->has_max, &n->max, err) < 0 ||
	    get_number(s, j, "exclusiveMinimum", &n->has_xmin, &n->xmin, err) < 0 ||
	    get_number(s, j, "exclusiveMaximum", &n->has_xmax, &n->xmax, err) < 0 ||
	    get_number(s, j, "multipleOf", &n->has_mult, &mult, err) < 0 ||
	    get_count(j, "minLength", &n->min_len, err) < 0 ||
	    get_count(j, "maxLength", &n->max_len, err) < 0)
		return -1;
	if (n->has_mult && num_cmp(&mult, &zero) <= 0)
		return tg_error_set(err, TG_ERR_INVALID, "multipleOf must be greater than 0");
	if (n->has_mult) {
		/* in the arena, not the node: its limbs are 232 bytes */
		n->mult = jv_alloc(&s->arena, sizeof(*n->mult));
		if (!n->mult)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		n->mult->v = mult;
		num_divisor(n->mult);
	}
	n->const_v = json_object_get(j, "const");
	v = json_object_get(j, "enum");
	if (v && !json_is_array(v))
		return tg_error_set(err, TG_ERR_INVALID, "enum must be an array");
	n->enum_v = v;
	v = json_object_get(j, "pattern");
	if (v) {
		if (!json_is_string(v))
			return tg_error_set(err, TG_ERR_INVALID, "pattern must be a string");
		n->pattern = regex_compile(json_string_value(v), json_string_length(v), err);
		if (!n->pattern)
			return -1;
		regex_hint(json_string_value(v), json_string_length(v), n->pattern,
			   &n->pattern_hint);
	}
	v = json_object_get(j, "format");
	if (json_is_string(v))
		n->format = json_string_value(v);
	/* an instance of "regex" is compiled to be judged: without the
	 * library that is an error now, not every instance "not a regex" */
	if (n->format && s->opts.format_assert && strcmp(n->format, "regex") == 0 &&
	    tg_pcre2_load("format \"regex\"", err) < 0)
		return -1;
	return 0;
}

/* draft-07 lets content be asserted (2020-12 annotates it only). */
static void compile_content(const struct tg_schema *s, struct snode *n)
{
	json_t *v;

	if (s->draft != 7)
		return;
	v = json_object_get(n->json, "contentEncoding");
	n->content_b64 = json_is_string(v) && strcasecmp(json_string_value(v), "base64") == 0;
	v = json_object_get(n->json, "contentMediaType");
	n->content_json = json_is_string(v) && strcasecmp(json_string_value(v), "application/json") == 0;
}

static int compile_refs(struct tg_schema *s, struct snode *n, struct tg_error *err)
{
	json_t *ref = json_object_get(n->json, "$ref"), *target;
	struct resource *res;

	if (ref) {
		if (!json_is_string(ref))
			return tg_error_set(err, TG_ERR_INVALID, "$ref must be a string");
		if (schema_resolve(s, n->res, json_string_value(ref), &target, &res, err) < 0)
			return -1;
		n->ref = schema_node(s, target, res, json_string_value(ref), err);
		if (!n->ref)
			return -1;
	}
	ref = json_object_get(n->json, "$dynamicRef");
	if (ref) {
		const char *r, *hash;

		if (!json_is_string(ref))
			return tg_error_set(err, TG_ERR_INVALID, "$dynamicRef must be a string");
		r = json_string_value(ref);
		if (schema_resolve(s, n->res, r, &target, &res, err) < 0)
			return -1;
		n->dyn_ref = schema_node(s, target, res, r, err);
		if (!n->dyn_ref)
			return -1;
		/* dynamic only when the target itself has a matching
		 * $dynamicAnchor (a plain-name fragment) */
		hash = strchr(r, '#');
		if (hash && hash[1] && hash[1] != '/' && json_is_object(target)) {
			json_t *da = json_object_get(target, "$dynamicAnchor");

			if (json_is_string(da) && strcmp(json_string_value(da), hash + 1) == 0)
				n->dyn_anchor_name = hash + 1;
		}
	}
	return 0;
}

/* draft-07's "dependencies": dependentRequired (an array) and
 * dependentSchemas (a schema) in one keyword. */
static int compile_dependencies(struct tg_schema *s, struct snode *n, struct tg_error *err)
{
	json_t *deps = json_object_get(n->json, "dependencies"), *v;
	size_t nreq = 0, nsch = 0;
	const char *key;

	if (!deps)
		return 0;
	if (!json_is_object(deps))
		return tg_error_set(err, TG_ERR_INVALID, "dependencies must be an object");
	n->dep_req = calloc(json_object_size(deps) + 1, sizeof(*n->dep_req));
	n->dep_schemas = calloc(json_object_size(deps) + 1, sizeof(*n->dep_schemas));
	if (!n->dep_req || !n->dep_schemas)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	json_object_foreach(deps, key, v) {
		if (json_is_array(v)) {
			n->dep_req[nreq].name = key;
			n->dep_req[nreq++].required = v;
		} else {
			n->dep_schemas[nsch].name = key;
			n->dep_schemas[nsch].node = child(s, n, "dependencies", key, v, err);
			if (!n->dep_schemas[nsch++].node)
				return -1;
		}
	}
	n->ndep_req = nreq;
	n->ndep_schemas = nsch;
	return 0;
}

/* draft-07's keywords, where they differ from 2020-12's: "$ref" alone
 * (its siblings are ignored), "items" as an array with "additionalItems",
 * "dependencies" for both dependentRequired and dependentSchemas. */
static int compile_draft7(struct tg_schema *s, struct snode *n, struct tg_error *err)
{
	json_t *j = n->json, *items, *v;

	if (json_object_get(j, "$ref")) {
		json_t *target;
		struct resource *res;
		json_t *ref = json_object_get(j, "$ref");

		if (!json_is_string(ref))
			return tg_error_set(err, TG_ERR_INVALID, "$ref must be a string");
		if (schema_resolve(s, n->res, json_string_value(ref), &target, &res, err) < 0)
			return -1;
		n->ref = schema_node(s, target, res, json_string_value(ref), err);
		return n->ref ? 0 : -1;
	}
	compile_content(s, n);
	if (compile_value_keywords(s, n, err) < 0 ||
	    compile_map(s, n, "properties", &n->props, &n->nprops, err) < 0 ||
	    compile_one(s, n, "additionalProperties", &n->addl_props, err) < 0 ||
	    compile_one(s, n, "propertyNames", &n->prop_names, err) < 0 ||
	    get_count(j, "minProperties", &n->min_props, err) < 0 ||
	    get_count(j, "maxProperties", &n->max_props, err) < 0 ||
	    compile_one(s, n, "contains", &n->contains, err) < 0 ||
	    get_count(j, "minItems", &n->min_items, err) < 0 ||
	    get_count(j, "maxItems", &n->max_items, err) < 0 ||
	    compile_list(s, n, "allOf", &n->all_of, &n->nall, 1, err) < 0 ||
	    compile_list(s, n, "anyOf", &n->any_of, &n->nany, 1, err) < 0 ||
	    compile_list(s, n, "oneOf", &n->one_of, &n->none, 1, err) < 0 ||
	    compile_one(s, n, "not", &n->not_, err) < 0 ||
	    compile_one(s, n, "if", &n->if_, err) < 0 ||
	    compile_one(s, n, "then", &n->then_, err) < 0 ||
	    compile_one(s, n, "else", &n->else_, err) < 0)
		return -1;
	if (compile_patterns(s, n, err) < 0)
		return -1;
	v = json_object_get(j, "required");
	if (v) {
		if (!json_is_array(v))
			return tg_error_set(err, TG_ERR_INVALID, "required must be an array");
		n->required = v;
	}
	n->unique = json_is_true(json_object_get(j, "uniqueItems"));
	items = json_object_get(j, "items");
	if (json_is_array(items)) {
		if (compile_list(s, n, "items", &n->prefix, &n->nprefix, 0, err) < 0 ||
		    compile_one(s, n, "additionalItems", &n->items, err) < 0)
			return -1;
	} else if (compile_one(s, n, "items", &n->items, err) < 0) {
		return -1;
	}
	return compile_dependencies(s, n, err);
}

/* "properties" sorted by name, for a binary search per instance key. */
static void sort_props(struct snode *n)
{
	if (n->nprops > 1)
		qsort(n->props, n->nprops, sizeof(n->props[0]), by_name);
}

/* A dialect without the validation vocabulary: its keywords are only
 * annotations. */
static void drop_validation(struct snode *n)
{
	if (n->pattern)
		pcre2_code_free(n->pattern);
	n->pattern = NULL;
	n->types = 0;
	n->const_v = n->enum_v = n->required = NULL;
	n->has_min = n->has_max = n->has_xmin = n->has_xmax = n->has_mult = 0;
	n->min_len = n->max_len = n->min_items = n->max_items = -1;
	n->min_props = n->max_props = n->min_contains = n->max_contains = -1;
	n->unique = 0;
	n->ndep_req = 0;
}

struct snode *schema_node(struct tg_schema *s, json_t *json, struct resource *res,
			  const char *path, struct tg_error *err)
{
	struct snode *n = ptrmap_get(&s->nodes, json);

	if (n)
		return n;
	if (!json_is_object(json) && !json_is_boolean(json)) {
		tg_error_set(err, TG_ERR_INVALID, "%s: a schema must be an object or a boolean",
			     path[0] ? path : "/");
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n || ptrmap_put(&s->nodes, json, n) < 0) {
		free(n);
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		return NULL;
	}
	n->json = json;
	n->path = strdup(path);
	n->min_len = n->max_len = n->min_props = n->max_props = -1;
	n->min_contains = n->max_contains = n->min_items = n->max_items = -1;
	if (json_is_boolean(json)) {
		n->boolean = json_is_true(json);
		return n;
	}
	n->boolean = -1;
	n->res = owner_of(s, json) ? owner_of(s, json) : res;
	if (s->draft == 7) {
		if (compile_draft7(s, n, err) < 0) {
			if (err && path[0])
				tg_error_wrap(err, "%s", path);
			return NULL;
		}
		sort_props(n);
		return n;
	}
	compile_content(s, n);
	if (compile_value_keywords(s, n, err) < 0 || compile_object_keywords(s, n, err) < 0 ||
	    compile_array_keywords(s, n, err) < 0 ||
	    compile_list(s, n, "allOf", &n->all_of, &n->nall, 1, err) < 0 ||
	    compile_list(s, n, "anyOf", &n->any_of, &n->nany, 1, err) < 0 ||
	    compile_list(s, n, "oneOf", &n->one_of, &n->none, 1, err) < 0 ||
	    compile_one(s, n, "not", &n->not_, err) < 0 ||
	    compile_one(s, n, "if", &n->if_, err) < 0 ||
	    compile_one(s, n, "then", &n->then_, err) < 0 ||
	    compile_one(s, n, "else", &n->else_, err) < 0 || compile_refs(s, n, err) < 0) {
		if (err && path[0])
			tg_error_wrap(err, "%s", path);
		return NULL;
	}
	if (s->no_validation)
		drop_validation(n);
	sort_props(n);
	return n;
}

/* Compile every $dynamicAnchor target up front: validation looks them up
 * in the dynamic scope and must not compile. */
static int compile_dynamic_anchors(struct tg_schema *s, struct tg_error *err)
{
	struct resource *r;
	const char *name;
	json_t *v;

	for (r = s->resources; r; r = r->next)
		json_object_foreach(r->dyn_anchors, name, v)
			if (!schema_node(s, v, r, name, err))
				return -1;
	return 0;
}

#define VOCAB_2020 "https://json-schema.org/draft/2020-12/vocab/"

/* 7 when "$schema" names draft-07 (with or without the empty fragment), or
 * when there is none and the options ask for it; 2020 otherwise. */
static int detect_draft(json_t *doc, const struct tg_schema_options *opts)
{
	json_t *d = json_is_object(doc) ? json_object_get(doc, "$schema") : NULL;
	const char *v = json_string_value(d);

	if (v)
		return strncmp(v, META_07, strlen(META_07)) == 0 &&
			       (v[strlen(META_07)] == '\0' || strcmp(v + strlen(META_07), "#") == 0)
			       ? 7 : 2020;
	return opts && opts->draft == TG_SCHEMA_DRAFT7 ? 7 : 2020;
}

/* "$schema" names the dialect; a custom meta-schema's "$vocabulary" says
 * which vocabularies apply. An unknown vocabulary it requires is an error;
 * without the validation vocabulary, validation keywords only annotate. */
static int read_dialect(struct tg_schema *s, json_t *doc, struct resource *root,
			struct tg_error *err)
{
	static const char *const known[] = { "core", "applicator", "unevaluated", "validation",
					     "meta-data", "format-annotation",
					     "format-assertion", "content" };
	json_t *dialect = json_is_object(doc) ? json_object_get(doc, "$schema") : NULL;
	json_t *meta, *vocab, *v;
	struct resource *res;
	const char *uri;
	size_t i;

	if (!dialect)
		return 0;
	if (!json_is_string(dialect))
		return tg_error_set(err, TG_ERR_INVALID, "$schema must be a string");
	if (strcmp(json_string_value(dialect), META_2020 "schema") == 0)
		return 0;
	if (schema_resolve(s, root, json_string_value(dialect), &meta, &res, err) < 0)
		return tg_error_wrap(err, "unknown $schema");
	vocab = json_object_get(meta, "$vocabulary");
	if (!json_is_object(vocab))
		return 0;
	json_object_foreach(vocab, uri, v) {
		int ok = 0;

		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strncmp(uri, VOCAB_2020, strlen(VOCAB_2020)) == 0 &&
			    strcmp(uri + strlen(VOCAB_2020), known[i]) == 0)
				ok = 1;
		if (!ok && json_is_true(v))
			return tg_error_set(err, TG_ERR_INVALID,
					    "$schema requires the unknown vocabulary %s", uri);
	}
	if (!json_object_get(vocab, VOCAB_2020 "validation"))
		s->no_validation = 1;
	return 0;
}

const char *schema_base_uri(const struct tg_schema *s)
{
	return s->opts.base_uri ? s->opts.base_uri : DEFAULT_BASE;
}

int tg_schema_compile(const char *text, size_t len, const struct tg_schema_options *opts,
		      struct tg_schema **out, struct tg_error *err)
{
	struct tg_schema *s;
	struct resource *root;
	json_t *doc;

	tg_error_clear(err);
	*out = NULL;
	if (len > MAX_SCHEMA_BYTES)
		return tg_error_set(err, TG_ERR_LIMIT, "schema larger than %u bytes",
				    MAX_SCHEMA_BYTES);
	s = calloc(1, sizeof(*s));
	if (!s)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	doc = schema_load_text(text, len, &s->arena, &s->exact, err);
	if (!doc) {
		tg_schema_free(s);
		return tg_error_wrap(err, "schema");
	}
	if (opts) {
		/* the strings are copied: a caller's buffers may not outlive it */
		s->opts = *opts;
		s->opts.remote_base = opts->remote_base ? strdup(opts->remote_base) : NULL;
		s->opts.remote_dir = opts->remote_dir ? strdup(opts->remote_dir) : NULL;
		s->opts.base_uri = opts->base_uri ? strdup(opts->base_uri) : NULL;
	}
	s->docs = json_pack("{s:[],s:{}}", "list", "anchors");
	s->registered = json_object();
	if (!s->docs || !s->registered || (opts && ((opts->remote_base && !s->opts.remote_base) ||
						    (opts->remote_dir && !s->opts.remote_dir) ||
						    (opts->base_uri && !s->opts.base_uri)))) {
		json_decref(doc);
		tg_schema_free(s);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	s->draft = detect_draft(doc, opts);
	if (add_document(s, doc, schema_base_uri(s), &root, err) < 0 ||
	    (s->draft != 7 && read_dialect(s, doc, root, err) < 0))
		goto fail;
	s->root = schema_node(s, doc, root, "", err);
	if (!s->root || compile_dynamic_anchors(s, err) < 0 || schema_prepare(s, err) < 0)
		goto fail;
	json_decref(doc);
	*out = s;
	return 0;
fail:
	json_decref(doc);
	tg_schema_free(s);
	return -1;
}

static void node_free(struct snode *n)
{
	size_t i;

	if (n->pattern)
		pcre2_code_free(n->pattern);
	for (i = 0; i < n->npatprops; i++)
		if (n->patprops[i].re)
			pcre2_code_free(n->patprops[i].re);
	free(n->patprops);
	free(n->props);
	free(n->dep_req);
	free(n->dep_schemas);
	free(n->prefix);
	free(n->all_of);
	free(n->any_of);
	free(n->one_of);
	free(n->path);
	free(n);
}

void tg_schema_free(struct tg_schema *s)
{
	struct resource *r, *next;
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nodes.cap; i++)
		if (s->nodes.keys[i])
			node_free(s->nodes.vals[i]);
	ptrmap_release(&s->nodes);
	ptrmap_release(&s->owners);
	ptrmap_release(&s->exact);
	for (r = s->resources; r; r = next) {
		next = r->next;
		free(r->uri);
		json_decref(r->dyn_anchors);
		free(r);
	}
	json_decref(s->docs);
	json_decref(s->registered);
	free((char *)s->opts.remote_base);
	free((char *)s->opts.remote_dir);
	free((char *)s->opts.base_uri);
	jv_doc_release(&s->arena);
	free(s);
}
