/*
 * A catalogue's resources and prompts (docs/contracts.md, "Resources and
 * prompts"): what the MCP methods resources/... and prompts/... serve, loaded from
 * DIR/resources/NAME.json and DIR/prompts/NAME.json with the same strictness as
 * contracts (unknown fields refused, sizes bounded, every problem naming
 * its file and field).
 *
 * A resource has a fixed URI and content (text, base64 blob, or a file
 * beside it read at load), or a URI template whose {variables} are
 * substituted into its text. A prompt has arguments and messages whose
 * strings may say {{argument}}; completions for an argument are listed in
 * its definition.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_int.h"
#include "util/file.h"
#include "util/sodium.h"

#define MAX_DEFINITION (1u << 20)   /* one resource or prompt file */
#define MAX_CONTENT (8u << 20)      /* a resource's content */
#define MAX_COMPLETIONS 100         /* values in one completion answer */

static int bad(struct tg_error *err, const char *file, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int bad(struct tg_error *err, const char *file, const char *field, const char *fmt, ...)
{
	char why[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return tg_error_set(err, TG_ERR_INVALID, "%s: %s: %s", file, field, why);
}

/* A regular file of at most max bytes, NUL-terminated; OUT *len. */
static char *read_file(const char *path, size_t max, size_t *len, struct tg_error *err)
{
	char *buf = file_read_all(path, max, 1, len);

	if (!buf && (errno == EFBIG || errno == EINVAL))
		tg_error_set(err, TG_ERR_LIMIT, "%s: not a regular file of at most %zu bytes", path,
			     max);
	else if (!buf)
		tg_error_sys(err, errno, "%s", path);
	return buf;
}

static int only(json_t *o, const char *const *allowed, const char *file, const char *where,
		struct tg_error *err)
{
	const char *key;
	json_t *v;
	size_t i;

	json_object_foreach(o, key, v) {
		for (i = 0; allowed[i]; i++)
			if (strcmp(key, allowed[i]) == 0)
				break;
		if (!allowed[i])
			return bad(err, file, where[0] ? where : key, "unknown field '%s'", key);
	}
	return 0;
}

static int optional_string(json_t *o, const char *key, const char *file, struct tg_error *err)
{
	json_t *v = json_object_get(o, key);

	if (v && (!json_is_string(v) || json_string_length(v) > 4096))
		return bad(err, file, key, "must be a string of at most 4096 bytes");
	return 0;
}

static int base64_ok(const char *s)
{
	size_t n = strlen(s), i;

	if (n % 4)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '+' && s[i] != '/' &&
		    !(s[i] == '=' && i >= n - 2))
			return 0;
	return 1;
}

/* The standard alphabet, padded (what MCP's blob is); libsodium's encoder. */
static char *base64(const unsigned char *p, size_t n)
{
	size_t cap = sodium_base64_ENCODED_LEN(n, sodium_base64_VARIANT_ORIGINAL);
	char *out = malloc(cap);

	return out ? sodium_bin2base64(out, cap, p, n, sodium_base64_VARIANT_ORIGINAL) : NULL;
}

static int textual(const char *mime)
{
	return !mime || strncmp(mime, "text/", 5) == 0 || strcmp(mime, "application/json") == 0 ||
	       strstr(mime, "+json") || strstr(mime, "+xml");
}

/* "file": a path beside the definition, no way out of the folder. */
static int load_file_content(json_t *r, const char *dir, const char *file, struct tg_error *err)
{
	const char *rel = json_string_value(json_object_get(r, "file"));
	const char *mime = json_string_value(json_object_get(r, "mimeType"));
	char path[4096], *data, *b64;
	size_t len;

	if (!rel || !rel[0] || rel[0] == '/' || strstr(rel, ".."))
		return bad(err, file, "file", "a path relative to %s, without '..'", dir);
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, rel) >= sizeof(path))
		return bad(err, file, "file", "path too long");
	data = read_file(path, MAX_CONTENT, &len, err);
	if (!data)
		return tg_error_wrap(err, "%s: file", file);
	if (textual(mime) && !memchr(data, '\0', len)) {
		json_t *t = json_stringn(data, len);

		free(data);
		if (!t)
			return bad(err, file, "file", "%s is not UTF-8 text; give a binary mimeType",
				   rel);
		if (json_object_set_new(r, "_text", t) < 0)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	} else {
		int rc;

		if (tg_sodium_load("resource", err) < 0) { /* its encoder */
			free(data);
			return tg_error_wrap(err, "%s: file", file);
		}
		b64 = base64((unsigned char *)data, len);
		free(data);
		if (!b64)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		rc = json_object_set_new(r, "_blob", json_string(b64));
		free(b64);
		if (rc < 0)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	json_object_del(r, "file");
	return 0;
}

static int load_resource(struct tg_catalog *c, const char *dir, const char *file, json_t *r,
			 struct tg_error *err)
{
	static const char *const fields[] = { "uri", "uriTemplate", "name", "title", "description",
					      "mimeType", "text", "blob", "file", NULL };
	json_t *uri = json_object_get(r, "uri"), *tmpl = json_object_get(r, "uriTemplate");
	int ncontent = !!json_object_get(r, "text") + !!json_object_get(r, "blob") +
		       !!json_object_get(r, "file");
	json_t *list, *v;
	const char *key = uri ? "uri" : "uriTemplate";
	size_t i;

	if (!json_is_object(r))
		return bad(err, file, "resource", "must be a JSON object");
	if (only(r, fields, file, "", err) < 0 || optional_string(r, "title", file, err) < 0 ||
	    optional_string(r, "description", file, err) < 0 ||
	    optional_string(r, "mimeType", file, err) < 0)
		return -1;
	if (!uri == !tmpl)
		return bad(err, file, "uri", "exactly one of uri and uriTemplate");
	v = uri ? uri : tmpl;
	if (!json_is_string(v) || json_string_length(v) > 2048 || !strchr(json_string_value(v), ':'))
		return bad(err, file, key, "an absolute URI of at most 2048 bytes");
	/* the skills' own (serve --skills, docs/SKILLS.md): served first, a
	 * catalogue's resource there could never be read */
	if (!strncmp(json_string_value(v), "skill://", 8))
		return bad(err, file, key, "skill:// is the skills' own (docs/SKILLS.md, \"Serving\")");
	if (!json_is_string(json_object_get(r, "name")))
		return bad(err, file, "name", "required: a string");
	if (ncontent != 1 || (tmpl && !json_object_get(r, "text")))
		return bad(err, file, "text", tmpl ? "a template needs its text"
						  : "exactly one of text, blob and file");
	if (json_object_get(r, "text") && !json_is_string(json_object_get(r, "text")))
		return bad(err, file, "text", "must be a string");
	if (json_object_get(r, "blob") && (!json_is_string(json_object_get(r, "blob")) ||
					   !base64_ok(json_string_value(json_object_get(r, "blob")))))
		return bad(err, file, "blob", "must be base64");
	if (json_object_get(r, "file") && load_file_content(r, dir, file, err) < 0)
		return -1;
	if (json_object_get(r, "text")) {
		if (json_object_set(r, "_text", json_object_get(r, "text")) < 0)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		json_object_del(r, "text");
	}
	if (json_object_get(r, "blob")) {
		if (json_object_set(r, "_blob", json_object_get(r, "blob")) < 0)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		json_object_del(r, "blob");
	}
	list = uri ? c->resources : c->templates;
	json_array_foreach(list, i, v)
		if (json_equal(json_object_get(v, key), json_object_get(r, key)))
			return bad(err, file, key, "%s is also in %s", json_string_value(
					   json_object_get(r, key)),
				   json_string_value(json_object_get(v, "_file")));
	if (json_object_set_new(r, "_file", json_string(file)) < 0 || json_array_append(list, r) < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return 0;
}

/* A prompt's "elicit": what it asks the user before it renders, {key,
 * message, requestedSchema: {type: object, properties: {NAME: {type:
 * string|number|integer|boolean, ...}}, required?}}: an elicitation form,
 * whose answered fields fill the messages' {{NAME}}. */
static int check_elicit(json_t *e, const char *file, struct tg_error *err)
{
	static const char *const fields[] = { "key", "message", "requestedSchema", NULL };
	json_t *schema = json_object_get(e, "requestedSchema"), *props, *v;
	const char *key = json_string_value(json_object_get(e, "key")), *name, *type;

	if (!json_is_object(e) || only(e, fields, file, "elicit", err) < 0)
		return err && err->code != TG_OK ? -1 : bad(err, file, "elicit", "an object");
	if (!key || !*key || strlen(key) > 64 ||
	    strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") !=
		    strlen(key))
		return bad(err, file, "elicit", "key: 1 to 64 of A-Z a-z 0-9 _ . -");
	if (!json_is_string(json_object_get(e, "message")))
		return bad(err, file, "elicit", "message: required, a string");
	props = json_object_get(schema, "properties");
	if (!json_is_object(schema) || !json_is_object(props) || !json_object_size(props) ||
	    json_object_size(props) > 16)
		return bad(err, file, "elicit", "requestedSchema: {type: object, properties: 1 to "
			   "16 fields}");
	json_object_foreach(props, name, v) {
		type = json_string_value(json_object_get(v, "type"));
		if (!type || (strcmp(type, "string") && strcmp(type, "number") &&
			      strcmp(type, "integer") && strcmp(type, "boolean")))
			return bad(err, file, "elicit", "requestedSchema.properties.%s: an elicitation "
				   "form field is a string, number, integer or boolean", name);
	}
	return 0;
}

static int load_prompt(struct tg_catalog *c, const char *file, json_t *p, struct tg_error *err)
{
	static const char *const fields[] = { "name", "title", "description", "arguments",
					      "messages", "elicit", NULL };
	static const char *const arg_fields[] = { "name", "description", "required",
						  "completions", NULL };
	json_t *args = json_object_get(p, "arguments"), *msgs = json_object_get(p, "messages");
	json_t *a, *m, *completions = json_object(), *v;
	size_t i, j;

	if (!json_is_object(p))
		return bad(err, file, "prompt", "must be a JSON object");
	if (only(p, fields, file, "", err) < 0 || optional_string(p, "title", file, err) < 0 ||
	    optional_string(p, "description", file, err) < 0)
		goto fail;
	if (!json_is_string(json_object_get(p, "name")))
		bad(err, file, "name", "required: a string");
	else if (!strncmp(json_string_value(json_object_get(p, "name")), "skill:", 6))
		bad(err, file, "name", "skill: is the skills' own (docs/SKILLS.md, \"Serving\")");
	else if (args && (!json_is_array(args) || json_array_size(args) > 64))
		bad(err, file, "arguments", "an array of at most 64 arguments");
	else if (!json_is_array(msgs) || json_array_size(msgs) == 0 || json_array_size(msgs) > 64)
		bad(err, file, "messages", "required: an array of 1 to 64 messages");
	else if (json_object_get(p, "elicit") && check_elicit(json_object_get(p, "elicit"), file, err) < 0)
		goto fail;
	else
		goto check_args;
	goto fail;
check_args:
	json_array_foreach(args, i, a) {
		json_t *comp = json_object_get(a, "completions");

		if (!json_is_object(a) || only(a, arg_fields, file, "arguments", err) < 0 ||
		    !json_is_string(json_object_get(a, "name")) ||
		    (json_object_get(a, "required") && !json_is_boolean(json_object_get(a, "required")))) {
			if (err && err->code == TG_OK)
				bad(err, file, "arguments", "each a {name, description, required}");
			goto fail;
		}
		if (comp) {
			json_array_foreach(comp, j, v)
				if (!json_is_string(v))
					break;
			if (!json_is_array(comp) || j < json_array_size(comp) ||
			    json_array_size(comp) > 10000) {
				bad(err, file, "arguments", "completions: an array of strings");
				goto fail;
			}
			if (json_object_set(completions, json_string_value(json_object_get(a, "name")),
					    comp) < 0)
				goto nomem;
			json_object_del(a, "completions");
		}
	}
	json_array_foreach(msgs, i, m) {
		const char *role = json_string_value(json_object_get(m, "role"));
		const char *type = json_string_value(json_object_get(json_object_get(m, "content"), "type"));

		if (!role || (strcmp(role, "user") && strcmp(role, "assistant")) || !type ||
		    (strcmp(type, "text") && strcmp(type, "image") && strcmp(type, "audio") &&
		     strcmp(type, "resource") && strcmp(type, "resource_link"))) {
			bad(err, file, "messages", "each {role: user|assistant, content: {type: text, "
				   "image, audio, resource or resource_link, ...}}");
			goto fail;
		}
	}
	/* an embedded resource named by uri alone must be one of ours */
	json_array_foreach(msgs, i, m) {
		json_t *res = json_object_get(json_object_get(m, "content"), "resource");
		const char *uri = json_string_value(json_object_get(res, "uri"));
		char *found;

		if (!uri || strstr(uri, "{{") || json_object_get(res, "text") ||
		    json_object_get(res, "blob"))
			continue;
		found = tg_catalog_resource_read(c, uri, err);
		if (!found) {
			bad(err, file, "messages", "embeds %s, which is not a resource of the catalogue",
			    uri);
			goto fail;
		}
		free(found);
	}
	json_array_foreach(c->prompts, i, v)
		if (json_equal(json_object_get(v, "name"), json_object_get(p, "name"))) {
			bad(err, file, "name", "prompt %s is also in %s",
			    json_string_value(json_object_get(p, "name")),
			    json_string_value(json_object_get(v, "_file")));
			goto fail;
		}
	if (json_object_set(p, "_messages", msgs) < 0)
		goto nomem;
	json_object_del(p, "messages");
	if (json_object_get(p, "elicit")) {
		if (json_object_set(p, "_elicit", json_object_get(p, "elicit")) < 0)
			goto nomem;
		json_object_del(p, "elicit");
	}
	if (json_object_set_new(p, "_completions", completions) < 0 ||
	    json_object_set_new(p, "_file", json_string(file)) < 0 ||
	    json_array_append(c->prompts, p) < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return 0;
nomem:
	tg_error_set(err, TG_ERR_NOMEM, "out of memory");
fail:
	json_decref(completions);
	return -1;
}

static int load_folder(struct tg_catalog *c, const char *dir, const char *sub, struct tg_error *err)
{
	char path[4096], **files;
	size_t i, len;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	files = catalog_json_files(path, 1, err);
	if (!files)
		return -1;
	for (i = 0; files[i] && rc == 0; i++) {
		char *text = read_file(files[i], MAX_DEFINITION, &len, err);
		json_error_t jerr;
		json_t *j;

		if (!text) {
			rc = -1;
			break;
		}
		j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
		free(text);
		if (!j) {
			rc = tg_error_set(err, TG_ERR_INVALID, "%s: line %d: %s", files[i], jerr.line,
					  jerr.text);
			break;
		}
		rc = sub[0] == 'r' ? load_resource(c, path, files[i], j, err)
				   : load_prompt(c, files[i], j, err);
		json_decref(j);
	}
	catalog_free_files(files);
	return rc;
}

int catalog_load_content(struct tg_catalog *c, const char *dir, struct tg_error *err)
{
	c->resources = json_array();
	c->templates = json_array();
	c->prompts = json_array();
	if (!c->resources || !c->templates || !c->prompts)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (load_folder(c, dir, "resources", err) < 0 || load_folder(c, dir, "prompts", err) < 0)
		return -1;
	return 0;
}

void catalog_free_content(struct tg_catalog *c)
{
	json_decref(c->resources);
	json_decref(c->templates);
	json_decref(c->prompts);
}

/* ---- what MCP asks ---------------------------------------------------------- */

/* A definition as listed: the internal "_" members left out. */
static json_t *public_copy(json_t *def)
{
	json_t *o = json_object(), *v;
	const char *key;

	json_object_foreach(def, key, v)
		if (key[0] != '_' && json_object_set(o, key, v) < 0) {
			json_decref(o); /* out of memory: never a definition cut short */
			return NULL;
		}
	return o;
}

static char *dump_list(json_t *list, struct tg_error *err)
{
	json_t *out = json_array(), *v;
	char *text;
	size_t i;

	json_array_foreach(list, i, v)
		if (json_array_append_new(out, public_copy(v)) < 0) {
			json_decref(out);
			out = NULL;
			break;
		}
	text = out ? json_dumps(out, JSON_COMPACT) : NULL;
	json_decref(out);
	if (!text)
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return text;
}

size_t tg_catalog_resource_count(const struct tg_catalog *c)
{
	return json_array_size(c->resources) + json_array_size(c->templates);
}

size_t tg_catalog_prompt_count(const struct tg_catalog *c)
{
	return json_array_size(c->prompts);
}

char *tg_catalog_resources_json(const struct tg_catalog *c, int templates, struct tg_error *err)
{
	tg_error_clear(err);
	return dump_list(templates ? c->templates : c->resources, err);
}

char *tg_catalog_prompts_json(const struct tg_catalog *c, struct tg_error *err)
{
	tg_error_clear(err);
	return dump_list(c->prompts, err);
}

/* Match uri against a template's {variables} (RFC 6570 level 1: a value
 * is one path segment, unreserved characters or %-escapes only). OUT vars. */
static int template_match(const char *tmpl, const char *uri, json_t *vars)
{
	while (*tmpl) {
		if (*tmpl == '{') {
			const char *end = strchr(tmpl, '}'), *v = uri;
			char name[64];

			if (!end || (size_t)(end - tmpl - 1) >= sizeof(name) || end == tmpl + 1)
				return 0;
			snprintf(name, sizeof(name), "%.*s", (int)(end - tmpl - 1), tmpl + 1);
			while (*uri && (isalnum((unsigned char)*uri) || strchr("-._~%", *uri)))
				uri++;
			if (uri == v)
				return 0;
			json_object_set_new(vars, name, json_stringn(v, (size_t)(uri - v)));
			tmpl = end + 1;
			continue;
		}
		if (*tmpl++ != *uri++)
			return 0;
	}
	return *uri == '\0';
}

/* text with each {name} of vars replaced (malloc'd). */
static char *fill(const char *text, json_t *vars, const char *open, const char *close)
{
	size_t cap = strlen(text) + 1, n = 0, ol = strlen(open), cl = strlen(close);
	char *out = malloc(cap);
	const char *p = text;

	while (out && *p) {
		const char *end;
		json_t *v = NULL;

		if (strncmp(p, open, ol) == 0 && (end = strstr(p + ol, close)) && end - p - ol < 64) {
			char name[64];

			snprintf(name, sizeof(name), "%.*s", (int)(end - p - ol), p + ol);
			v = json_object_get(vars, name);
			if (json_is_string(v)) {
				size_t vl = json_string_length(v);
				char *bigger = realloc(out, cap += vl);

				if (!bigger) {
					free(out);
					return NULL;
				}
				out = bigger;
				memcpy(out + n, json_string_value(v), vl);
				n += vl;
				p = end + cl;
				continue;
			}
		}
		out[n++] = *p++;
	}
	if (out)
		out[n] = '\0';
	return out;
}

static json_t *content_of(json_t *def, const char *uri)
{
	json_t *item = json_pack("{s:s}", "uri", uri);

	if (!item)
		return NULL;
	if (json_object_get(def, "mimeType") &&
	    json_object_set(item, "mimeType", json_object_get(def, "mimeType")) < 0) {
		json_decref(item);
		return NULL;
	}
	return item;
}

char *tg_catalog_resource_read(const struct tg_catalog *c, const char *uri, struct tg_error *err)
{
	json_t *def, *item = NULL, *vars;
	char *text = NULL;
	size_t i;

	tg_error_clear(err);
	json_array_foreach(c->resources, i, def)
		if (strcmp(json_string_value(json_object_get(def, "uri")), uri) == 0) {
			const char *k = json_object_get(def, "_text") ? "_text" : "_blob";

			item = content_of(def, uri);
			if (item && json_object_set(item, k + 1, json_object_get(def, k)) < 0)
				goto nomem;
			break;
		}
	json_array_foreach(c->templates, i, def) {
		if (item)
			break;
		vars = json_object();
		if (vars && template_match(json_string_value(json_object_get(def, "uriTemplate")), uri,
					   vars)) {
			char *t = fill(json_string_value(json_object_get(def, "_text")), vars, "{", "}");

			item = t ? content_of(def, uri) : NULL;
			if (item && json_object_set_new(item, "text", json_string(t)) < 0) {
				free(t);
				json_decref(vars);
				goto nomem;
			}
			free(t);
		}
		json_decref(vars);
	}
	if (!item) {
		tg_error_set(err, TG_ERR_INVALID, "resource not found: %.200s", uri);
		return NULL;
	}
	{
		json_t *list = json_pack("[o]", item);

		text = list ? json_dumps(list, JSON_COMPACT) : NULL;
		json_decref(list);
	}
	if (!text)
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return text;
nomem:
	json_decref(item);
	tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return NULL;
}

/* Every string of v with {{argument}} filled, in place. */
static int fill_all(json_t *v, json_t *args)
{
	const char *key;
	json_t *x;
	size_t i;

	if (json_is_string(v)) {
		char *t = fill(json_string_value(v), args, "{{", "}}");
		int rc = t ? json_string_set(v, t) : -1;

		free(t);
		return rc;
	}
	if (json_is_array(v))
		json_array_foreach(v, i, x)
			if (fill_all(x, args) < 0)
				return -1;
	if (json_is_object(v))
		json_object_foreach(v, key, x)
			if (fill_all(x, args) < 0)
				return -1;
	return 0;
}

static json_t *find_prompt(const struct tg_catalog *c, const char *name)
{
	json_t *p;
	size_t i;

	json_array_foreach(c->prompts, i, p)
		if (strcmp(json_string_value(json_object_get(p, "name")), name) == 0)
			return p;
	return NULL;
}

char *tg_catalog_prompt_elicit(const struct tg_catalog *c, const char *name)
{
	json_t *p = find_prompt(c, name), *e = json_object_get(p, "_elicit");

	return e ? json_dumps(e, JSON_COMPACT) : NULL;
}

char *tg_catalog_prompt_get(const struct tg_catalog *c, const char *name, const char *args_json,
			    struct tg_error *err)
{
	json_t *p = find_prompt(c, name), *args, *a, *v, *msgs, *result;
	const char *key;
	char *text;
	size_t i;

	tg_error_clear(err);
	if (!p) {
		tg_error_set(err, TG_ERR_INVALID, "prompt not found: %.200s", name);
		return NULL;
	}
	args = args_json ? json_loads(args_json, 0, NULL) : json_object();
	if (!json_is_object(args)) {
		json_decref(args);
		tg_error_set(err, TG_ERR_INVALID, "prompt %s: arguments must be an object", name);
		return NULL;
	}
	json_object_foreach(args, key, v)
		if (!json_is_string(v)) {
			tg_error_set(err, TG_ERR_INVALID, "prompt %s: argument %s must be a string",
				     name, key);
			json_decref(args);
			return NULL;
		}
	json_array_foreach(json_object_get(p, "arguments"), i, a) {
		const char *an = json_string_value(json_object_get(a, "name"));

		if (json_object_get(args, an))
			continue;
		if (json_is_true(json_object_get(a, "required"))) {
			tg_error_set(err, TG_ERR_INVALID, "prompt %s: argument %s is required", name,
				     an);
			json_decref(args);
			return NULL;
		}
		if (json_object_set_new(args, an, json_string("")) < 0) /* optional, not given */
			goto nomem;
	}
	json_object_foreach(json_object_get(json_object_get(json_object_get(p, "_elicit"),
							    "requestedSchema"), "properties"), key, v)
		if (!json_object_get(args, key) &&
		    json_object_set_new(args, key, json_string("")) < 0) /* not asked, not given */
			goto nomem;
	msgs = json_deep_copy(json_object_get(p, "_messages"));
	if (!msgs || fill_all(msgs, args) < 0) {
		json_decref(msgs);
		goto nomem;
	}
	json_decref(args);
	/* an embedded resource named by uri alone gets the catalogue's
	 * content for it */
	json_array_foreach(msgs, i, v) {
		json_t *res = json_object_get(json_object_get(v, "content"), "resource");
		const char *uri = json_string_value(json_object_get(res, "uri"));
		char *contents;

		if (!uri || json_object_get(res, "text") || json_object_get(res, "blob"))
			continue;
		contents = tg_catalog_resource_read(c, uri, err);
		if (!contents) {
			json_decref(msgs);
			tg_error_wrap(err, "prompt %s", name);
			return NULL;
		}
		{
			json_t *list = json_loads(contents, 0, NULL);
			int rc = json_object_update(res, json_array_get(list, 0));

			json_decref(list);
			free(contents);
			if (rc < 0) {
				json_decref(msgs);
				tg_error_set(err, TG_ERR_NOMEM, "out of memory");
				return NULL;
			}
		}
	}
	result = json_pack("{s:o}", "messages", msgs);
	if (result && json_object_get(p, "description") &&
	    json_object_set(result, "description", json_object_get(p, "description")) < 0) {
		json_decref(result);
		result = NULL;
	}
	text = result ? json_dumps(result, JSON_COMPACT) : NULL;
	json_decref(result);
	if (!text)
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return text;
nomem:
	json_decref(args);
	tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return NULL;
}

char *tg_catalog_complete(const struct tg_catalog *c, const char *prompt, const char *argument,
			  const char *value, struct tg_error *err)
{
	json_t *p = prompt ? find_prompt(c, prompt) : NULL, *all, *values = json_array(), *v, *r;
	size_t i, total = 0, vl = value ? strlen(value) : 0;
	char *text;

	tg_error_clear(err);
	if (prompt && !p) {
		json_decref(values);
		tg_error_set(err, TG_ERR_INVALID, "prompt not found: %.200s", prompt);
		return NULL;
	}
	all = p ? json_object_get(json_object_get(p, "_completions"), argument) : NULL;
	json_array_foreach(all, i, v)
		if (strncmp(json_string_value(v), value ? value : "", vl) == 0) {
			if (total++ < MAX_COMPLETIONS)
				json_array_append(values, v);
		}
	r = json_pack("{s:o,s:I,s:b}", "values", values, "total", (json_int_t)total, "hasMore",
		      total > MAX_COMPLETIONS);
	text = r ? json_dumps(r, JSON_COMPACT) : NULL;
	json_decref(r);
	if (!text)
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return text;
}
