/*
 * x-mcp-header: input properties mirrored into HTTP headers (MCP
 * 2026-07-28, server/tools "x-mcp-header" and the Streamable HTTP
 * transport's "Custom Headers from Tool Parameters"; docs/contracts.md).
 *
 * A client must refuse a tool whose annotations break the revision's
 * rules, so the loader refuses the contract first, naming the property
 * and the rule. The walk covers the schema as clients get it (bundled:
 * the shared schemas it references embedded under $defs), so an
 * annotation inside a referenced file is found too, and refused: only
 * properties reached from the root through "properties" alone may carry
 * one. What is kept, per annotation, is the header name, the chain of
 * property keys and the type; src/mcp/param.c checks requests with it.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "catalog/catalog_int.h"

#define MAX_NAME 128   /* bytes of one x-mcp-header value */
#define MAX_WHERE 512  /* bytes of the schema location in messages */

struct walk {
	struct tg_contract *c;
	const char *origin;
	struct tg_error *err;
	const char *keys[TG_MAX_PARAM_DEPTH]; /* the properties chain to here */
	size_t depth;                         /* its length, while reachable */
	json_t *root;
	const char *id;                       /* the embedded schema's URI, if in one */
	char where[MAX_WHERE];                /* "input_schema.properties.a" */
};

static int walk(struct walk *w, json_t *node, const char *via);

static int refuse(struct walk *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int refuse(struct walk *w, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tg_error_set(w->err, TG_ERR_INVALID, "contract %s: %s.x-mcp-header: %s", w->origin,
			    w->where, msg);
}

/* RFC 9110's tchar: a character of a header name. */
static int is_tchar(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* The type of a property that may be mirrored: "type" exactly one of
 * "integer", "string" or "boolean"; 0 for any other. A type list (even
 * with "null") is refused: the official TypeScript client drops a tool
 * whose annotated property says anything but one primitive type, so a
 * catalogue that allowed it would lose the tool in clients. */
static enum tg_param_type param_type(json_t *schema)
{
	static const char *const names[] = { "string", "integer", "boolean" };
	json_t *t = json_object_get(schema, "type");
	size_t k;

	for (k = 0; json_is_string(t) && k < 3; k++)
		if (strcmp(json_string_value(t), names[k]) == 0)
			return (enum tg_param_type)(k + 1);
	return 0;
}

/* The rules on the annotation's value (the name in Mcp-Param-{name}). */
static int check_name(struct walk *w, json_t *v, const char *shown)
{
	const char *s = json_string_value(v);
	size_t i, n;

	if (!s)
		return refuse(w, "must be a string (the NAME of the header Mcp-Param-NAME)");
	n = json_string_length(v);
	if (n == 0)
		return refuse(w, "must not be empty");
	if (n > MAX_NAME)
		return refuse(w, "%s is longer than %d bytes", shown, MAX_NAME);
	for (i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return refuse(w, "%s holds a control character", shown);
	for (i = 0; i < n; i++)
		if (!is_tchar((unsigned char)s[i]))
			return refuse(w, "%s is not an HTTP token (RFC 9110 tchar: letters, digits "
				      "and !#$%%&'*+-.^_`|~)", shown);
	for (i = 0; i < w->c->nparam_headers; i++)
		if (strcasecmp(w->c->param_headers[i].name, s) == 0)
			return refuse(w, "%s repeats \"%s\" (header names are case-insensitive)",
				      shown, w->c->param_headers[i].name);
	return 0;
}

/* Keep the annotation of the property w is at. */
static int keep(struct walk *w, const char *name, enum tg_param_type type)
{
	struct tg_contract *c = w->c;
	struct tg_param_header *p;
	size_t i;

	if (!c->param_headers) {
		c->param_headers = calloc(TG_MAX_PARAM_HEADERS, sizeof(*c->param_headers));
		if (!c->param_headers)
			return tg_error_set(w->err, TG_ERR_NOMEM, "out of memory");
	}
	p = &c->param_headers[c->nparam_headers++];
	p->type = type;
	p->depth = w->depth;
	p->name = strdup(name);
	p->path = calloc(w->depth + 1, sizeof(*p->path));
	for (i = 0; p->path && i < w->depth; i++)
		if (!(p->path[i] = strdup(w->keys[i])))
			break;
	if (!p->name || !p->path || i < w->depth)
		return tg_error_set(w->err, TG_ERR_NOMEM, "out of memory");
	return 0;
}

/* node carries x-mcp-header; via is the first keyword other than
 * properties on the way from the root (NULL: none). */
static int annotation(struct walk *w, json_t *node, const char *via)
{
	json_t *v = json_object_get(node, "x-mcp-header");
	char *shown = json_dumps(v, JSON_ENCODE_ANY | JSON_ENSURE_ASCII);
	enum tg_param_type type = param_type(node);
	char quoted[96];
	int rc = -1;

	snprintf(quoted, sizeof(quoted), "%.80s%s", shown ? shown : "?",
		 shown && strlen(shown) > 80 ? "..." : "");
	free(shown);
	if (check_name(w, v, quoted) < 0)
		return -1;
	if (via)
		rc = refuse(w, "only a property reached from the root through properties alone "
			    "may be mirrored; this one is under %s%s%.200s%s", via,
			    w->id ? " (in " : "", w->id ? w->id : "", w->id ? ")" : "");
	else if (w->depth == 0)
		rc = refuse(w, "the root is not a property; put it on one of its properties");
	else if (w->depth > TG_MAX_PARAM_DEPTH)
		rc = refuse(w, "the property is nested deeper than %d properties",
			    TG_MAX_PARAM_DEPTH);
	else if (!type && json_is_string(json_object_get(node, "type")) &&
		 strcmp(json_string_value(json_object_get(node, "type")), "number") == 0)
		rc = refuse(w, "type number may not be mirrored (a header cannot carry it "
			    "exactly); use integer or string");
	else if (!type)
		rc = refuse(w, "the property must say \"type\": integer, string or boolean");
	else if (w->c->nparam_headers >= TG_MAX_PARAM_HEADERS)
		rc = refuse(w, "more than %d annotations in one input schema",
			    TG_MAX_PARAM_HEADERS);
	else
		rc = keep(w, json_string_value(v), type);
	return rc;
}

/* Walk into a member of the node at w->where, named by fmt. */
static int walk_member(struct walk *w, json_t *node, const char *via, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int walk_member(struct walk *w, json_t *node, const char *via, const char *fmt, ...)
{
	size_t mark = strlen(w->where);
	va_list ap;
	int rc;

	va_start(ap, fmt);
	vsnprintf(w->where + mark, sizeof(w->where) - mark, fmt, ap);
	va_end(ap);
	rc = walk(w, node, via);
	w->where[mark] = '\0';
	return rc;
}

/* The members of a "properties": each a property, reachable if its
 * object is. */
static int walk_properties(struct walk *w, json_t *props, const char *via)
{
	const char *key;
	json_t *v;
	int rc;

	json_object_foreach(props, key, v) {
		if (!via && w->depth < TG_MAX_PARAM_DEPTH)
			w->keys[w->depth] = key;
		w->depth += !via;
		rc = walk_member(w, v, via, ".properties.%s", key);
		w->depth -= !via;
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Every subschema, wherever it is: the keywords that hold data, not
 * schemas, are skipped (an example object may hold any key). */
static int walk(struct walk *w, json_t *node, const char *via)
{
	static const char *const data[] = { "const", "enum", "default", "examples", NULL };
	const char *key, *outer = w->id;
	json_t *v;
	size_t i;
	int rc = 0;

	if (json_is_array(node)) {
		json_array_foreach(node, i, v)
			if (walk_member(w, v, via, "[%zu]", i) < 0)
				return -1;
		return 0;
	}
	if (!json_is_object(node))
		return 0;
	/* a shared schema embedded by the bundle is named by its $id */
	if (node != w->root && json_is_string(json_object_get(node, "$id")))
		w->id = json_string_value(json_object_get(node, "$id"));
	if (json_object_get(node, "x-mcp-header"))
		rc = annotation(w, node, via);
	json_object_foreach(node, key, v) {
		if (rc < 0)
			break;
		for (i = 0; data[i] && strcmp(key, data[i]) != 0; i++)
			;
		if (data[i])
			continue;
		if (strcmp(key, "properties") == 0 && json_is_object(v))
			rc = walk_properties(w, v, via);
		else
			rc = walk_member(w, v, via ? via : key, ".%s", key);
	}
	w->id = outer;
	return rc;
}

int contract_param_headers(struct tg_contract *c, const char *origin, struct tg_error *err)
{
	struct walk w = { .c = c, .origin = origin, .err = err, .where = "input_schema" };
	char *text = tg_schema_bundle(c->input_schema, err);
	json_t *doc;
	int rc;

	if (!text)
		return -1;
	doc = json_loads(text, JSON_DECODE_ANY, NULL);
	free(text);
	if (!doc)
		return tg_error_set(err, TG_ERR_NOMEM, "contract %s: input_schema: out of memory",
				    origin);
	w.root = doc;
	rc = walk(&w, doc, NULL);
	json_decref(doc);
	return rc;
}

void contract_free_param_headers(struct tg_contract *c)
{
	size_t i, k;

	for (i = 0; i < c->nparam_headers; i++) {
		free(c->param_headers[i].name);
		for (k = 0; c->param_headers[i].path && c->param_headers[i].path[k]; k++)
			free(c->param_headers[i].path[k]);
		free(c->param_headers[i].path);
	}
	free(c->param_headers);
	c->param_headers = NULL;
	c->nparam_headers = 0;
}
