/*
 * MCP's requests on the client side (client.h): the handshake of either
 * era (server/discover for 2026-07-28, initialize with its version
 * negotiation for the session era), the lists (tools, resources, resource
 * templates, prompts) with their pages, tools/call and ping, over the
 * connection of client.c.
 *
 * Must never: accept a protocol version it does not speak, follow a
 * server's cursors without a ceiling on pages and entries, or interpret a
 * tool's result (the gate checks it).
 */
#include <stdlib.h>
#include <string.h>

#include "upstream/client_int.h"

/* The revisions this client speaks, newest first (the first is offered). */
static const char *const versions[] = { UPSTREAM_PROTOCOL, "2025-06-18", "2025-03-26" };

/* A server's value quoted for a message: escaped JSON, at most 64 bytes. */
static void quote(json_t *v, char *out, size_t size)
{
	char *text = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;

	snprintf(out, size, "%.64s", text ? text : "(none)");
	free(text);
}

/* The members of initialize's answer (and discover's, method) checked,
 * but its version; 0, or -1 and err. */
static int check_members(json_t *res, const char *method, struct tg_error *err)
{
	json_t *v = json_object_get(res, "capabilities");

	if (v && !json_is_object(v))
		return tg_error_set(err, TG_ERR_INVALID, "%s: \"capabilities\" is not an object",
				    method);
	v = json_object_get(res, "serverInfo");
	if (v && !json_is_object(v))
		return tg_error_set(err, TG_ERR_INVALID, "%s: \"serverInfo\" is not an object",
				    method);
	v = json_object_get(res, "instructions");
	if (v && !json_is_string(v))
		return tg_error_set(err, TG_ERR_INVALID, "%s: \"instructions\" is not a string",
				    method);
	return 0;
}

/* The answer to initialize checked; 0, or -1 and err. */
static int check_init(json_t *res, struct tg_error *err)
{
	json_t *v;
	const char *version;
	char q[80];
	size_t i;

	if (!json_is_object(res))
		return tg_error_set(err, TG_ERR_INVALID, "initialize: the answer is not an object");
	v = json_object_get(res, "protocolVersion");
	version = json_string_value(v);
	for (i = 0; version && i < sizeof(versions) / sizeof(versions[0]); i++)
		if (strcmp(version, versions[i]) == 0)
			break;
	if (!version || i == sizeof(versions) / sizeof(versions[0])) {
		quote(v, q, sizeof(q));
		return tg_error_set(err, TG_ERR_INVALID,
				    "initialize: the server speaks protocol version %s; toolgate "
				    "speaks 2025-11-25, 2025-06-18 and 2025-03-26",
				    q);
	}
	return check_members(res, "initialize", err);
}

int upstream_client_initialize(struct upstream_client *c, const char *name, const char *version,
			       json_t *capabilities, int timeout_ms, struct tg_error *err)
{
	json_t *params, *res = NULL;
	int rc;

	tg_error_clear(err);
	params = json_pack("{s:s,s:o,s:{s:s,s:s}}", "protocolVersion", UPSTREAM_PROTOCOL,
			   "capabilities", capabilities ? json_incref(capabilities) : json_object(),
			   "clientInfo", "name", name, "version", version);
	if (!params)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	rc = upstream_client_request(c, "initialize", params, timeout_ms, &res, err);
	json_decref(params);
	if (rc == 0)
		rc = check_init(res, err);
	else if (rc > 0)
		rc = -1; /* the server refused: err says how */
	if (rc < 0) {
		/* a server that never answers, refuses or speaks another
		 * revision is of no use: the connection ends here */
		client_break(c, "%s", err ? err->msg : "initialize failed");
		json_decref(res);
		return -1;
	}
	pthread_mutex_lock(&c->lock);
	c->init_result = res;
	snprintf(c->protocol, sizeof(c->protocol), "%s",
		 json_string_value(json_object_get(res, "protocolVersion")));
	c->ready = 1;
	pthread_mutex_unlock(&c->lock);
	if (upstream_client_notify(c, "notifications/initialized", NULL, err) < 0)
		return tg_error_wrap(err, "initialize");
	return 0;
}

/* The _meta of the 2026-07-28 era's requests: the version, the client's
 * capabilities (borrowed, may be NULL: none) and its identity. */
static json_t *modern_meta(json_t *capabilities, const char *name, const char *version)
{
	return json_pack("{s:s,s:o,s:{s:s,s:s}}", UPSTREAM_META_VERSION, UPSTREAM_MODERN,
			 UPSTREAM_META_CAPABILITIES,
			 capabilities ? json_incref(capabilities) : json_object(),
			 "io.modelcontextprotocol/clientInfo", "name", name, "version", version);
}

/* Whether a discover result names the 2026-07-28 era, its other members
 * well formed: 1, 0 (it does not: *why says what it names), or -1 and
 * err (malformed). */
static int check_discover(json_t *res, char *why, size_t size, struct tg_error *err)
{
	json_t *named = json_object_get(res, "supportedVersions"), *v;
	char q[80];
	size_t i;

	if (!json_is_object(res))
		return tg_error_set(err, TG_ERR_INVALID, "server/discover: the answer is not an "
				    "object");
	if (!json_is_array(named)) {
		snprintf(why, size, "server/discover: the answer has no supportedVersions");
		return 0;
	}
	json_array_foreach(named, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), UPSTREAM_MODERN) == 0)
			break;
	if (i == json_array_size(named)) {
		quote(named, q, sizeof(q));
		snprintf(why, size, "server/discover: the server speaks %s", q);
		return 0;
	}
	return check_members(res, "server/discover", err) < 0 ? -1 : 1;
}

int upstream_client_discover(struct upstream_client *c, const char *name, const char *version,
			     json_t *capabilities, int timeout_ms, char *why, size_t size,
			     struct tg_error *err)
{
	json_t *meta, *params, *res = NULL;
	int rc;

	tg_error_clear(err);
	snprintf(why, size, "%s", "");
	meta = modern_meta(capabilities, name, version);
	params = meta ? json_pack("{s:O}", "_meta", meta) : NULL;
	if (!params) {
		json_decref(meta);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	rc = upstream_client_request(c, "server/discover", params, timeout_ms, &res, err);
	json_decref(params);
	if (rc > 0 || (rc < 0 && err->code == TG_ERR_LIMIT)) {
		/* refused, or never answered (a session-era server may keep a
		 * request before initialize unanswered): not this era */
		snprintf(why, size, "%s", err->msg);
		rc = 0;
	} else if (rc == 0) {
		rc = check_discover(res, why, size, err);
	}
	if (rc == 1) {
		pthread_mutex_lock(&c->lock);
		c->init_result = res;
		res = NULL;
		c->meta = meta;
		meta = NULL;
		snprintf(c->protocol, sizeof(c->protocol), "%s", UPSTREAM_MODERN);
		c->ready = 1;
		pthread_mutex_unlock(&c->lock);
	}
	json_decref(res);
	json_decref(meta);
	if (rc == 0)
		tg_error_clear(err);
	return rc;
}

int upstream_client_modern(struct upstream_client *c)
{
	return c->meta != NULL;
}

const char *upstream_client_protocol(struct upstream_client *c)
{
	return c->ready ? c->protocol : NULL;
}

json_t *upstream_client_capabilities(struct upstream_client *c)
{
	return json_object_get(c->init_result, "capabilities");
}

json_t *upstream_client_server_info(struct upstream_client *c)
{
	return json_object_get(c->init_result, "serverInfo");
}

const char *upstream_client_instructions(struct upstream_client *c)
{
	return json_string_value(json_object_get(c->init_result, "instructions"));
}

/* One page's entries (its key's array) appended to all, each an object
 * with a string member field; 0, or -1 and err. */
static int take_page(json_t *all, json_t *res, const struct upstream_list_kind *k, unsigned page,
		     size_t max_bytes, size_t *bytes, struct tg_error *err)
{
	json_t *entries = json_object_get(res, k->key), *entry;
	size_t i;

	if (!json_is_array(entries))
		return tg_error_set(err, TG_ERR_INVALID, "%s: page %u has no %s array", k->method,
				    page + 1, k->key);
	if (json_array_size(all) + json_array_size(entries) > UPSTREAM_MAX_TOOLS)
		return tg_error_set(err, TG_ERR_LIMIT, "%s: more than %u %s", k->method,
				    UPSTREAM_MAX_TOOLS, k->key);
	json_array_foreach(entries, i, entry) {
		if (!json_is_object(entry) || !json_is_string(json_object_get(entry, k->field)))
			return tg_error_set(err, TG_ERR_INVALID,
					    "%s: page %u, entry %zu: not an object with a %s",
					    k->method, page + 1, i, k->field);
		/* counted as the list's text will hold it: refused as soon
		 * as it goes past, not once every page is kept */
		if (max_bytes && (*bytes += json_dumpb(entry, NULL, 0, JSON_COMPACT) + 1) > max_bytes)
			return tg_error_set(err, TG_ERR_LIMIT, "%s: more than %zu bytes", k->method,
					    max_bytes);
		if (json_array_append(all, entry) < 0)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	return 0;
}

const struct upstream_list_kind upstream_list_tools = { "tools/list", "tools", "name" };
const struct upstream_list_kind upstream_list_resources = { "resources/list", "resources", "uri" };
const struct upstream_list_kind upstream_list_templates = { "resources/templates/list",
							     "resourceTemplates", "uriTemplate" };
const struct upstream_list_kind upstream_list_prompts = { "prompts/list", "prompts", "name" };

int upstream_client_list(struct upstream_client *c, const struct upstream_list_kind *k,
			 size_t max_bytes, int timeout_ms, json_t **out, struct tg_error *err)
{
	json_t *all = json_array(), *cursor = NULL, *res = NULL, *params, *next;
	size_t bytes = 1; /* the list's brackets */
	unsigned page;
	int rc = -1;

	tg_error_clear(err);
	*out = NULL;
	if (!all)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	for (page = 0;; page++) {
		if (page == UPSTREAM_MAX_PAGES) {
			tg_error_set(err, TG_ERR_LIMIT, "%s: more than %u pages", k->method,
				     UPSTREAM_MAX_PAGES);
			goto out;
		}
		params = cursor ? json_pack("{s:O}", "cursor", cursor) : NULL;
		if (cursor && !params) {
			tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			goto out;
		}
		rc = upstream_client_request(c, k->method, params, timeout_ms, &res, err);
		json_decref(params);
		if (rc != 0 || take_page(all, res, k, page, max_bytes, &bytes, err) < 0) {
			rc = -1;
			goto out;
		}
		next = json_object_get(res, "nextCursor");
		if (!next || json_is_null(next))
			break;
		if (!json_is_string(next) || (cursor && json_equal(next, cursor))) {
			rc = tg_error_set(err, TG_ERR_INVALID,
					  "%s: page %u's nextCursor is %s", k->method, page + 1,
					  json_is_string(next) ? "the cursor that asked for it"
							       : "not a string");
			goto out;
		}
		json_decref(cursor);
		cursor = json_incref(next);
		json_decref(res);
		res = NULL;
	}
	*out = all;
	all = NULL;
	rc = 0;
out:
	json_decref(res);
	json_decref(cursor);
	json_decref(all);
	return rc;
}

int upstream_client_list_tools(struct upstream_client *c, int timeout_ms, json_t **tools,
			       struct tg_error *err)
{
	return upstream_client_list(c, &upstream_list_tools, 0, timeout_ms, tools, err);
}

int upstream_client_call_tool(struct upstream_client *c, const char *name, json_t *arguments,
			      json_t *meta, int timeout_ms, json_t **result, struct tg_error *err)
{
	json_t *params = json_pack("{s:s}", "name", name);
	int rc;

	*result = NULL;
	tg_error_clear(err);
	if (params && json_object_set_new(params, "arguments",
					  arguments ? json_incref(arguments) : json_object()) < 0) {
		json_decref(params);
		params = NULL;
	}
	if (params && meta && json_object_set(params, "_meta", meta) < 0) {
		json_decref(params);
		params = NULL;
	}
	if (!params)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	rc = upstream_client_request(c, "tools/call", params, timeout_ms, result, err);
	json_decref(params);
	if (rc == 0 && !json_is_object(*result)) {
		json_decref(*result);
		*result = NULL;
		return tg_error_set(err, TG_ERR_INVALID,
				    "tools/call %s: the result is not an object", name);
	}
	return rc;
}

int upstream_client_ping(struct upstream_client *c, int timeout_ms, struct tg_error *err)
{
	json_t *res = NULL;
	/* the 2026-07-28 era retired ping: discover is as cheap */
	int rc = upstream_client_request(c, c->meta ? "server/discover" : "ping", NULL, timeout_ms,
					 &res, err);

	if (rc == 0 && !json_is_object(res))
		rc = tg_error_set(err, TG_ERR_INVALID, "ping: the answer is not an object");
	json_decref(res);
	return rc == 0 ? 0 : -1;
}
