/*
 * The 2026-07-28 stateless era (docs/MCP.md): a request that says its
 * version in _meta carries everything it needs (its capabilities, its log
 * level), is answered by the same handlers as the session era, and its
 * result carries resultType, the server's identity and, for what a client
 * may cache, how long and for whom.
 *
 * It never reads or writes session state but the session's principal,
 * calls in flight and sink: the era has no initialize.
 */
#include <stdio.h>
#include <string.h>

#include "mcp/session_int.h"

#define MODERN MCP_MODERN
#define META_LOG "io.modelcontextprotocol/logLevel"
#define CACHE_TTL_MS 60000 /* the catalogue does not change while served */

#define META_SERVER_INFO "io.modelcontextprotocol/serverInfo"

/* Who answers, as a modern result's _meta says it. */
static json_t *server_info(void)
{
	return json_pack("{s:s,s:s}", "name", "toolgate", "version", TOOLGATE_VERSION);
}

/* What every modern result carries: its type, the server's identity and,
 * for what a client may cache, how long and for whom. */
void modern_result(json_t *result, int cacheable)
{
	json_t *meta = json_object_get(result, "_meta");

	if (!json_object_get(result, "resultType"))
		json_object_set_new(result, "resultType", json_string("complete"));
	if (!json_is_object(meta)) {
		meta = json_object();
		json_object_set_new(result, "_meta", meta);
	}
	json_object_set_new(meta, META_SERVER_INFO, server_info());
	if (cacheable) {
		json_object_set_new(result, "ttlMs", json_integer(CACHE_TTL_MS));
		/* not to be shared between principals (docs/MCP.md): the
		 * tools, an upstream's resources and prompts are listed by scope */
		json_object_set_new(result, "cacheScope", json_string("private"));
	}
}

/* A request of the modern, stateless era: everything it needs is in its
 * own _meta (docs/MCP.md). No session state is read or written, but the
 * session's principal, calls in flight and sink. */
json_t *modern_handle(struct mcp_session *s, json_t *id, const char *method,
		      json_t *params, json_t *meta, const struct mcp_text *raw, int mode,
		      const struct mcp_sink *sink, const char *scopes)
{
	const char *version = json_string_value(json_object_get(meta, META_VERSION));
	const char *level = json_string_value(json_object_get(meta, META_LOG));
	json_t *resp = NULL, *r;
	size_t i;
	int cacheable = 0;

	if (!version || strcmp(version, MODERN) != 0) {
		json_t *e = json_pack("{s:s,s:O,s:{s:i,s:s,s:{s:[s,s,s,s],s:O}}}", "jsonrpc", "2.0",
				      "id", id, "error", "code", RPC_UNSUPPORTED_VERSION, "message",
				      "Unsupported protocol version", "data", "supported", MODERN,
				      session_versions[0], session_versions[1], session_versions[2],
				      "requested", json_object_get(meta, META_VERSION));
		return e;
	}
	if (!json_is_object(json_object_get(meta, META_CAPS)))
		return rpc_error_json(id, RPC_INVALID_PARAMS,
				      "_meta: " META_CAPS " (an object) is required");
	if (strcmp(method, "server/discover") == 0) {
		r = json_pack("{s:[s,s,s,s],s:o,s:{s:s,s:s,s:s}}", "supportedVersions", MODERN,
			      session_versions[0], session_versions[1], session_versions[2],
			      "capabilities", session_capabilities(0, MODERN), "serverInfo", "name",
			      "toolgate", "title", "toolgate", "version", TOOLGATE_VERSION);
		if (r && s->mcp->instructions)
			json_object_set_new(r, "instructions", json_string(s->mcp->instructions));
		if (r)
			modern_result(r, 1);
		return r ? rpc_result_json(id, r) : NULL;
	}
	if (strcmp(method, "tools/call") == 0) {
		struct call_opts opts = { 1, 0, 99, scopes, NULL, 0, 0, TASK_NEVER, 0, NULL,
					  { { 0 }, { 0 }, 0, "", 0, 0 }, NULL, 0 };

		/* log messages only when the request asks for them */
		for (i = 0; level && i < SESSION_NLOG_LEVELS; i++)
			if (strcmp(level, session_log_levels[i]) == 0)
				opts.log_at = (int)i;
		session_exact_arguments(raw, &opts);
		return tools_call(s, id, params, mode, sink, &opts);
	}
	if (strcmp(method, "tools/list") == 0) {
		resp = tools_list(s, id, params, 0, scopes);
		cacheable = 1;
	} else if (strcmp(method, "resources/list") == 0 ||
		   strcmp(method, "resources/templates/list") == 0 ||
		   strcmp(method, "resources/read") == 0) {
		resp = catalog_resources(s, method, id, params, scopes);
		cacheable = 1;
		/* resource not found: -32602 in this revision, no more -32002 */
		r = json_object_get(resp, "error");
		if (json_integer_value(json_object_get(r, "code")) == RPC_RESOURCE_NOT_FOUND)
			json_object_set_new(r, "code", json_integer(RPC_INVALID_PARAMS));
	} else if (strcmp(method, "prompts/get") == 0) {
		resp = catalog_prompt_get_modern(s, id, params, json_object_get(meta, META_CAPS),
						 scopes);
	} else if (strcmp(method, "prompts/list") == 0) {
		resp = catalog_prompts(s, method, id, params, scopes);
		cacheable = strcmp(method, "prompts/list") == 0;
	} else if (strcmp(method, "completion/complete") == 0) {
		resp = catalog_complete(s, id, params, scopes);
	} else if (strcmp(method, "subscriptions/listen") == 0) {
		return listen_request(s, id, params, sink);
	} else if (strcmp(method, "tasks/get") == 0 || strcmp(method, "tasks/update") == 0 ||
		   strcmp(method, "tasks/cancel") == 0) {
		/* tasks/result and tasks/list are gone in this revision */
		return task_methods_modern(s, id, method, params, json_object_get(meta, META_CAPS));
	} else {
		/* ping, logging/setLevel, resources/subscribe... are gone in
		 * this revision */
		char text[200];

		snprintf(text, sizeof(text), "method not found: %.120s", method);
		return rpc_error_json(id, RPC_METHOD_NOT_FOUND, text);
	}
	r = json_object_get(resp, "result");
	if (json_is_object(r))
		modern_result(r, cacheable);
	return resp;
}

/* The modern era's error codes, which HTTP answers with 400 or 404. */
int mcp_modern_status(json_t *resp)
{
	json_int_t code = json_integer_value(json_object_get(json_object_get(resp, "error"), "code"));

	if (code == RPC_UNSUPPORTED_VERSION || code == RPC_MISSING_CLIENT_CAPABILITY ||
	    code == RPC_HEADER_MISMATCH)
		return 400;
	if (code == RPC_METHOD_NOT_FOUND)
		return 404;
	return 200;
}
