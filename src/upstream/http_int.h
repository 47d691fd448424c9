/*
 * What http.c (the bridge's transfers) asks of http_modern.c (the
 * 2026-07-28 era's headers): private to src/upstream/http*.c.
 * http_modern.c owns the table of a listing's x-mcp-header annotations
 * and the headers that mirror a modern request's body; it never sends,
 * never keeps a request, and never writes to the client.
 */
#ifndef TG_UPSTREAM_HTTP_INT_H
#define TG_UPSTREAM_HTTP_INT_H

#include <jansson.h>
#include <stddef.h>

#include "util/curl.h"

/* The x-mcp-header annotations of the tools of the latest tools/list
 * listing, by tool name (UPSTREAM_HTTP_MAX_PARAM_TOOLS tools, at most
 * UPSTREAM_HTTP_MAX_PARAM_BYTES bytes). */
struct http_params;

/* An empty table; NULL out of memory. */
struct http_params *http_params_new(void);

/* NULL: nothing. */
void http_params_free(struct http_params *p);

/* A tools/list result seen going to the client: its tools' annotations
 * kept (those toolgate's own server would accept, docs/contracts.md),
 * after forgetting the previous listing's when first (a request without
 * a cursor starts a listing). What passes the bounds is not kept, and
 * the table says so: a call of a tool it does not know is then refused. */
void http_params_listed(struct http_params *p, json_t *result, int first);

/* The revision a message names in params._meta
 * ("io.modelcontextprotocol/protocolVersion"): a modern message; NULL
 * for any other (the session era's). */
const char *http_modern_version(json_t *msg);

/* The headers of a modern request (msg, whose http_modern_version is
 * set) appended to *hdrs: MCP-Protocol-Version, Mcp-Method, Mcp-Name of
 * a tools/call, prompts/get, resources/read or tasks/ request, and the
 * Mcp-Param-* of a tools/call of a tool p knows. 0; -1 out of memory; 1
 * when the server would have to refuse what could be sent (why, len
 * bytes, says which field and why: the bridge answers the request). */
int http_modern_headers(const struct http_params *p, json_t *msg, struct curl_slist **hdrs,
			char *why, size_t len);

#endif
