/*
 * The 2026-07-28 era of the Streamable HTTP transport: stateless POSTs
 * (docs/MCP.md). A request names its revision and the client's
 * capabilities in its _meta and carries no session; the headers that
 * mirror its body (MCP-Protocol-Version, Mcp-Method, Mcp-Name and the
 * Mcp-Param-* of a tools/call, param.c) must match it, since a proxy may
 * have acted on them; each request gets a session of its own
 * (http_session_once), and its answer's status comes from its error (400
 * for the era's protocol errors, 404 for an unknown method).
 *
 * It owns those checks and the answer of one modern POST; it never
 * keeps state between requests, never reads a session header, and
 * never answers a request whose headers disagree with its body.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/http_int.h"
#include "mcp/mcp_int.h"
#include "toolgate/catalog.h"

/* The Mcp-Param-* headers of a tools/call, against the arguments: NULL,
 * or why not. An unknown tool is left to the call, which answers it. */
static const char *params_mismatch(struct tg_mcp_http *h, struct MHD_Connection *c,
				   json_t *params, char *why, size_t len)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	const struct tg_catalog *cat;
	const struct tg_contract *k;
	const char *bad = NULL;
	struct tg_error err;

	if (!name)
		return NULL;
	/* checked against the catalogue as it is now; a reload between this
	 * check and the call is a race any gateway in front has too */
	cat = tg_gate_acquire(h->mcp->gate);
	if (tg_catalog_resolve(cat, name, NULL, &k, &err) == 0)
		bad = mcp_params_mismatch(k, json_object_get(params, "arguments"), http_lookup_header, c,
					  why, len);
	tg_gate_release(h->mcp->gate, cat);
	return bad;
}

/* 1 if header value v, without the spaces and tabs around it (RFC 9110,
 * 5.5), is s. */
static int ows_equal(const char *v, const char *s)
{
	size_t n;

	v += strspn(v, " \t");
	n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	return n == strlen(s) && memcmp(v, s, n) == 0;
}

/* The headers that mirror the body must match it (the server acts on the
 * body; a proxy may have acted on the headers): NULL, or why not. */
static const char *header_mismatch(struct tg_mcp_http *h, struct MHD_Connection *c, json_t *msg,
				   char *why, size_t len)
{
	static const char *const mirrored[] = { "MCP-Protocol-Version", "Mcp-Method", "Mcp-Name" };
	const char *ver, *hm, *hn;
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *params = json_object_get(msg, "params");
	const char *body_name = NULL;
	unsigned count;
	size_t name_len, i;
	char *name;
	int bad;

	/* twice, and a proxy may have acted on the other one */
	for (i = 0; i < sizeof(mirrored) / sizeof(mirrored[0]); i++) {
		http_lookup_header(c, mirrored[i], &count);
		if (count > 1) {
			snprintf(why, len, "Header mismatch: %s is given %u times", mirrored[i],
				 count);
			return why;
		}
	}
	ver = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "MCP-Protocol-Version");
	hm = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Method");
	hn = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Name");
	if (!ver || !ows_equal(ver, http_meta_version(msg))) {
		snprintf(why, len, "Header mismatch: MCP-Protocol-Version %s the body's %.40s",
			 ver ? "does not match" : "is missing; it must be", http_meta_version(msg));
		return why;
	}
	if (!hm || !ows_equal(hm, method)) {
		snprintf(why, len, "Header mismatch: Mcp-Method %s the body's method %.60s",
			 hm ? "does not match" : "is missing; it must be", method);
		return why;
	}
	if (strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0)
		body_name = json_string_value(json_object_get(params, "name"));
	else if (strcmp(method, "resources/read") == 0)
		body_name = json_string_value(json_object_get(params, "uri"));
	else if (strcmp(method, "tasks/get") == 0 || strcmp(method, "tasks/update") == 0 ||
		 strcmp(method, "tasks/cancel") == 0)
		body_name = json_string_value(json_object_get(params, "taskId"));
	else
		return NULL;
	if (!hn) {
		snprintf(why, len, "Header mismatch: Mcp-Name is missing; %.40s needs it", method);
		return why;
	}
	/* decoded, it may hold a NUL: compared by length */
	name = mcp_header_decode(hn, &name_len);
	bad = !name || !body_name || name_len != strlen(body_name) ||
	      memcmp(name, body_name, name_len) != 0;
	free(name);
	if (bad) {
		snprintf(why, len, "Header mismatch: Mcp-Name does not match the body's %s",
			 strcmp(method, "resources/read") == 0 ? "uri"
			 : strncmp(method, "tasks/", 6) == 0   ? "taskId"
							       : "name");
		return why;
	}
	if (strcmp(method, "tools/call") == 0)
		return params_mismatch(h, c, params, why, len);
	return NULL;
}

/* 400 with a JSON-RPC error answering msg (taken). */
static enum MHD_Result refuse_modern(struct MHD_Connection *c, json_t *msg, int code,
				     const char *why)
{
	json_t *id = json_object_get(msg, "id");
	json_t *resp = rpc_error_json(id ? id : json_null(), code, why);
	char *body = resp ? json_dumps(resp, JSON_COMPACT) : NULL;
	enum MHD_Result rc = http_reply(c, MHD_HTTP_BAD_REQUEST, "application/json",
					body ? body : "", NULL);

	json_decref(resp);
	json_decref(msg);
	free(body);
	return rc;
}

/* A modern request: no session, the headers checked against the body,
 * the answer's status from its error (400 for the era's protocol errors,
 * 404 for an unknown method). Takes msg. */
enum MHD_Result http_post_modern(struct tg_mcp_http *h, struct MHD_Connection *c, json_t *msg,
				 const struct request *rq)
{
	const char *principal = rq->principal, *need;
	struct mcp_text raw = { rq->body, rq->len };
	char scope[200];
	struct http_session *hs;
	enum MHD_Result rc;
	json_t *resp;
	char why[400], *body;

	if (!http_meta_version(msg))
		return refuse_modern(c, msg, RPC_INVALID_PARAMS,
				     "_meta: io.modelcontextprotocol/protocolVersion (a string) is "
				     "required");
	if (header_mismatch(h, c, msg, why, sizeof(why)))
		return refuse_modern(c, msg, RPC_HEADER_MISMATCH, why);
	/* a malformed request: 400, as the revision says */
	if (!json_is_object(json_object_get(json_object_get(json_object_get(msg, "params"), "_meta"),
					    "io.modelcontextprotocol/clientCapabilities")))
		return refuse_modern(c, msg, RPC_INVALID_PARAMS,
				     "_meta: io.modelcontextprotocol/clientCapabilities (an object) "
				     "is required");
	need = http_missing_scope(h, rq, msg, scope, sizeof(scope));
	if (need)
		return http_forbidden_scope(h, c, rq, msg, need);
	hs = http_session_once(h, principal);
	if (!hs) {
		json_decref(msg);
		return http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, RPC_INTERNAL_ERROR,
				  "Service Unavailable: the server is stopping or out of memory");
	}
	if (http_may_report(h, msg))
		return http_answer_sse(h, c, hs, msg, &raw, rq->scopes);
	if (json_object_get(msg, "id") &&
	    strcmp(json_string_value(json_object_get(msg, "method")), "subscriptions/listen") == 0)
		return http_answer_listen(h, c, hs, msg, principal);
	resp = mcp_session_dispatch(&hs->s, msg, &raw, NULL, rq->scopes);
	json_decref(msg);
	if (!resp) {
		rc = http_reply(c, MHD_HTTP_ACCEPTED, NULL, "", NULL);
	} else {
		unsigned status = (unsigned)mcp_modern_status(resp);

		body = json_dumps(resp, JSON_COMPACT);
		json_decref(resp);
		rc = body ? http_reply(c, status, "application/json", body, NULL) : MHD_NO;
		free(body);
	}
	http_session_put(h, hs);
	return rc;
}
