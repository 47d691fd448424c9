/*
 * The 2026-07-28 era of the Streamable HTTP bridge (http.h, docs/MCP.md
 * "The modern era" and "Mcp-Param-{Name}"): the headers a modern request
 * mirrors from its body, encoded as toolgate's own server decodes them
 * (src/mcp/param.c), and the table of a listing's x-mcp-header
 * annotations they are read with. http.c decides what is modern and
 * sends; this file only builds headers and the table.
 *
 * What the server would refuse is not sent: a number a header cannot
 * carry exactly, an object, a value longer than the server reads, a
 * revision that is not one. The bridge answers such a request itself, so
 * a call the server must refuse (400, HeaderMismatch) never goes out.
 *
 * Must never: keep a table past its bounds, put a byte in a header that
 * is not visible ASCII or space, nor a header name that is not a token.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "upstream/http.h"
#include "upstream/http_int.h"
#include "util/sodium.h"

#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define MAX_VERSION 32                       /* bytes of a revision's name */
#define MAX_ANNOTATION 128                   /* bytes of one x-mcp-header value */
#define SAFE_INTEGER 9007199254740991.0      /* 2^53 - 1: a double holds it exactly */
/* the server side's rules (toolgate/contract.h, TG_MAX_PARAM_HEADERS and
 * TG_MAX_PARAM_DEPTH; docs/contracts.md), which this part may not include */
#define MAX_PARAMS 32                        /* annotations in one input schema */
#define MAX_DEPTH 16                         /* properties from the root to one */

/* One annotated property: its header and its chain of keys. */
struct param {
	char *header;               /* "Mcp-Param-Region: " */
	size_t depth;
	char **path;                /* depth keys */
};

struct tool_params {
	char *tool;
	size_t n;
	struct param *params;       /* n of them */
};

struct http_params {
	struct tool_params *tools;  /* UPSTREAM_HTTP_MAX_PARAM_TOOLS slots */
	size_t ntools;
	size_t bytes;               /* kept, counted against the ceiling */
	int full;                   /* a listing passed a bound: not all kept */
};

struct http_params *http_params_new(void)
{
	struct http_params *p = calloc(1, sizeof(*p));

	if (p && !(p->tools = calloc(UPSTREAM_HTTP_MAX_PARAM_TOOLS, sizeof(*p->tools)))) {
		free(p);
		return NULL;
	}
	return p;
}

static void tool_release(struct tool_params *t)
{
	size_t i, k;

	for (i = 0; i < t->n; i++) {
		for (k = 0; k < t->params[i].depth; k++)
			free(t->params[i].path[k]);
		free(t->params[i].path);
		free(t->params[i].header);
	}
	free(t->params);
	free(t->tool);
	memset(t, 0, sizeof(*t));
}

static void params_clear(struct http_params *p)
{
	size_t i;

	for (i = 0; i < p->ntools; i++)
		tool_release(&p->tools[i]);
	p->ntools = 0;
	p->bytes = 0;
	p->full = 0;
}

void http_params_free(struct http_params *p)
{
	if (!p)
		return;
	params_clear(p);
	free(p->tools);
	free(p);
}

/* ---- the annotations of a listing ---------------------------------------- */

/* RFC 9110's tchar: a character of a header name. */
static int is_tchar(unsigned char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
	       (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* Whether the server side would accept the annotation of a property
 * (schema) of t: one primitive type, a token name it does not have yet
 * (case ignored), under the count ceiling (param_header.c's rules). */
static int acceptable(const struct tool_params *t, json_t *schema, json_t *name)
{
	const char *type = json_string_value(json_object_get(schema, "type"));
	const char *s = json_string_value(name);
	size_t i, n = s ? json_string_length(name) : 0;

	if (!type || (strcmp(type, "string") && strcmp(type, "integer") && strcmp(type, "boolean")))
		return 0;
	if (!n || n > MAX_ANNOTATION || t->n >= MAX_PARAMS)
		return 0;
	for (i = 0; i < n; i++)
		if (!is_tchar((unsigned char)s[i]))
			return 0;
	for (i = 0; i < t->n; i++) {
		const char *h = t->params[i].header + strlen("Mcp-Param-");

		if (strlen(h) == n + 2 && strncasecmp(h, s, n) == 0)
			return 0; /* the server refuses the schema; the first is kept */
	}
	return 1;
}

/* Keep the annotation name of the property at keys[0..depth) in t. -1
 * past the bytes' ceiling or out of memory (then p->full). */
static int keep(struct http_params *p, struct tool_params *t, const char *name,
		const char *const *keys, size_t depth)
{
	size_t cost = sizeof(struct param) + strlen(name) + 16 + depth * sizeof(char *), k;
	struct param *np, *q;

	for (k = 0; k < depth; k++)
		cost += strlen(keys[k]) + 1;
	if (p->bytes + cost > UPSTREAM_HTTP_MAX_PARAM_BYTES)
		return -1;
	np = realloc(t->params, (t->n + 1) * sizeof(*np));
	if (!np)
		return -1;
	t->params = np;
	q = &np[t->n];
	memset(q, 0, sizeof(*q));
	q->header = malloc(strlen(name) + 16);
	q->path = calloc(depth, sizeof(*q->path));
	if (q->header)
		snprintf(q->header, strlen(name) + 16, "Mcp-Param-%s: ", name);
	for (k = 0; q->path && k < depth; k++)
		if (!(q->path[q->depth++] = strdup(keys[k])))
			break;
	t->n++;
	if (!q->header || !q->path || k < depth)
		return -1;
	p->bytes += cost;
	return 0;
}

/* The annotated properties under props (an object's "properties" reached
 * from the root through properties alone, depth keys so far). -1: a
 * bound passed. */
static int walk(struct http_params *p, struct tool_params *t, json_t *props, const char **keys,
		size_t depth)
{
	json_t *v, *name, *inner;
	const char *key;

	json_object_foreach(props, key, v) {
		keys[depth] = key;
		name = json_object_get(v, "x-mcp-header");
		if (name && acceptable(t, v, name) &&
		    keep(p, t, json_string_value(name), keys, depth + 1) < 0)
			return -1;
		inner = json_object_get(v, "properties");
		if (json_is_object(inner) && depth + 1 < MAX_DEPTH &&
		    walk(p, t, inner, keys, depth + 1) < 0)
			return -1;
	}
	return 0;
}

/* One listed tool: kept when it has an annotation. -1: a bound passed. */
static int listed_tool(struct http_params *p, json_t *tool)
{
	const char *name = json_string_value(json_object_get(tool, "name"));
	json_t *props = json_object_get(json_object_get(tool, "inputSchema"), "properties");
	const char *keys[MAX_DEPTH];
	struct tool_params t = { 0 };
	size_t cost;

	if (!name || !json_is_object(props))
		return 0;
	cost = sizeof(t) + strlen(name) + 1;
	if (walk(p, &t, props, keys, 0) < 0 || (t.n && !(t.tool = strdup(name))) ||
	    (t.n && (p->ntools >= UPSTREAM_HTTP_MAX_PARAM_TOOLS ||
		     p->bytes + cost > UPSTREAM_HTTP_MAX_PARAM_BYTES))) {
		tool_release(&t);
		return -1;
	}
	if (!t.n)
		return 0;
	p->bytes += cost;
	p->tools[p->ntools++] = t;
	return 0;
}

void http_params_listed(struct http_params *p, json_t *result, int first)
{
	json_t *tool;
	size_t i;

	if (first)
		params_clear(p);
	json_array_foreach(json_object_get(result, "tools"), i, tool) {
		if (p->full)
			break;
		if (listed_tool(p, tool) < 0)
			p->full = 1;
	}
}

static const struct tool_params *params_find(const struct http_params *p, const char *tool)
{
	size_t i;

	for (i = 0; i < p->ntools; i++)
		if (strcmp(p->tools[i].tool, tool) == 0)
			return &p->tools[i];
	return NULL;
}

/* ---- a modern request's headers ------------------------------------------ */

const char *http_modern_version(json_t *msg)
{
	json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");

	return json_string_value(json_object_get(meta, META_VERSION));
}

/* Whether s (n bytes) may go as it is: visible ASCII and inner spaces
 * (the server strips those around a value), not the base64 sentinel's
 * shape, within the ceiling. */
static int plain_safe(const char *s, size_t n)
{
	size_t i;

	if (!n || n > UPSTREAM_HTTP_MAX_MIRRORED || s[0] == ' ' || s[n - 1] == ' ')
		return 0;
	if (n >= 11 && strncmp(s, "=?base64?", 9) == 0 && strncmp(s + n - 2, "?=", 2) == 0)
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return 0;
	return 1;
}

/* "prefix" then s (n bytes), plain when it may be, else
 * =?base64?...?= (libsodium's original alphabet, as param.c decodes):
 * appended to *hdrs. 0, -1 out of memory. */
static int add_encoded(struct curl_slist **hdrs, const char *prefix, const char *s, size_t n,
		       size_t *sent)
{
	size_t pl = strlen(prefix), cap = pl + sodium_base64_ENCODED_LEN(n,
					sodium_base64_VARIANT_ORIGINAL) + 16;
	struct curl_slist *l;
	char *line = malloc(cap);

	if (!line)
		return -1;
	memcpy(line, prefix, pl);
	if (plain_safe(s, n)) {
		memcpy(line + pl, s, n);
		line[pl + n] = '\0';
	} else {
		memcpy(line + pl, "=?base64?", 9);
		sodium_bin2base64(line + pl + 9, cap - pl - 9, (const unsigned char *)s, n,
				  sodium_base64_VARIANT_ORIGINAL);
		memcpy(line + pl + 9 + strlen(line + pl + 9), "?=", 3);
	}
	*sent = strlen(line) - pl;
	l = curl_slist_append(*hdrs, line);
	sodium_memzero(line, cap);
	free(line);
	if (!l)
		return -1;
	*hdrs = l;
	return 0;
}

static int add_line(struct curl_slist **hdrs, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int add_line(struct curl_slist **hdrs, const char *fmt, ...)
{
	char line[256];
	struct curl_slist *l;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	l = curl_slist_append(*hdrs, line);
	if (!l)
		return -1;
	*hdrs = l;
	return 0;
}

/* The value at a property's chain of keys; NULL when absent or null. */
static json_t *value_at(const struct param *q, json_t *arguments)
{
	json_t *v = arguments;
	size_t i;

	for (i = 0; i < q->depth && json_is_object(v); i++)
		v = json_object_get(v, q->path[i]);
	return i == q->depth && !json_is_null(v) ? v : NULL;
}

static void param_path(const struct param *q, char *buf, size_t len)
{
	size_t i, at = 0;

	buf[0] = '\0';
	for (i = 0; i < q->depth && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%.60s", i ? "." : "", q->path[i]);
}

/* One annotated property's header, when its value is set. 0, -1 out of
 * memory, 1 a value the server would not match (why says which). */
static int add_param(struct curl_slist **hdrs, const struct param *q, json_t *arguments,
		     char *why, size_t len)
{
	json_t *v = value_at(q, arguments);
	char text[32], path[200];
	const char *s = text;
	size_t n, sent = 0;
	double d;

	if (!v)
		return 0;
	if (json_is_string(v)) {
		s = json_string_value(v);
		n = json_string_length(v);
	} else if (json_is_boolean(v)) {
		n = (size_t)snprintf(text, sizeof(text), "%s", json_is_true(v) ? "true" : "false");
	} else if (json_is_integer(v)) {
		n = (size_t)snprintf(text, sizeof(text), "%" JSON_INTEGER_FORMAT,
				     json_integer_value(v));
	} else if (json_is_real(v) && isfinite(d = json_real_value(v)) && d == floor(d) &&
		   fabs(d) <= SAFE_INTEGER) {
		n = (size_t)snprintf(text, sizeof(text), "%.0f", d);
	} else {
		param_path(q, path, sizeof(path));
		snprintf(why, len, "arguments.%s: %s cannot be mirrored into %.*s exactly (a "
			 "string, a boolean or an integer can), so the server would refuse the "
			 "call", path, json_is_real(v) ? "a number that is not an integer up to "
			 "2^53-1" : "a value of this type", (int)(strlen(q->header) - 2), q->header);
		return 1;
	}
	if (add_encoded(hdrs, q->header, s, n, &sent) < 0)
		return -1;
	if (sent <= UPSTREAM_HTTP_MAX_MIRRORED)
		return 0;
	param_path(q, path, sizeof(path));
	snprintf(why, len, "arguments.%s: its %.*s would be %zu bytes, over the %u a server "
		 "reads", path, (int)(strlen(q->header) - 2), q->header, sent,
		 UPSTREAM_HTTP_MAX_MIRRORED);
	return 1;
}

/* The field Mcp-Name mirrors for method, or NULL. */
static const char *name_field(const char *method)
{
	if (strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0)
		return "name";
	if (strcmp(method, "resources/read") == 0)
		return "uri";
	if (strcmp(method, "tasks/get") == 0 || strcmp(method, "tasks/update") == 0 ||
	    strcmp(method, "tasks/cancel") == 0)
		return "taskId";
	return NULL;
}

/* A revision's name as a header may carry it: digits and '-'. */
static int version_ok(const char *v)
{
	size_t n = strlen(v);

	return n && n <= MAX_VERSION && strspn(v, "0123456789-") == n;
}

int http_modern_headers(const struct http_params *p, json_t *msg, struct curl_slist **hdrs,
			char *why, size_t len)
{
	const char *version = http_modern_version(msg);
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *params = json_object_get(msg, "params"), *name = NULL;
	const struct tool_params *t = NULL;
	const char *field;
	size_t i, sent;
	int rc;

	if (!version || !version_ok(version)) {
		snprintf(why, len, "_meta.%s is not a revision's name (digits and '-', at most "
			 "%d)", META_VERSION, MAX_VERSION);
		return 1;
	}
	if (!method || strlen(method) > 128 || !plain_safe(method, strlen(method))) {
		snprintf(why, len, "a method that is not 1 to 128 visible ASCII characters");
		return 1;
	}
	if (add_line(hdrs, "MCP-Protocol-Version: %s", version) < 0 ||
	    add_line(hdrs, "Mcp-Method: %s", method) < 0)
		return -1;
	field = name_field(method);
	if (field)
		name = json_object_get(params, field);
	/* no name: nothing to mirror; the server answers the request */
	if (json_is_string(name) && add_encoded(hdrs, "Mcp-Name: ", json_string_value(name),
						json_string_length(name), &sent) < 0)
		return -1;
	if (strcmp(method, "tools/call") != 0 || !json_is_string(name))
		return 0;
	t = params_find(p, json_string_value(name));
	if (!t && p->full) {
		snprintf(why, len, "the tools list passed the bridge's bound for x-mcp-header "
			 "annotations (%u tools, %u bytes): the headers of %.128s are not known",
			 UPSTREAM_HTTP_MAX_PARAM_TOOLS, UPSTREAM_HTTP_MAX_PARAM_BYTES,
			 json_string_value(name));
		return 1;
	}
	for (i = 0; t && i < t->n; i++) {
		rc = add_param(hdrs, &t->params[i], json_object_get(params, "arguments"), why, len);
		if (rc)
			return rc;
	}
	return 0;
}
