/*
 * The Streamable HTTP transport of an upstream (MCP 2025-03-26 and after,
 * "Transports"), as a bridge to the client (client.h), which speaks
 * JSON-RPC lines over two descriptors and stays as it is for stdio.
 * Private to src/upstream/ and its runner (src/exec/upstream_run.c);
 * http.c owns it (http_modern.c its 2026-07-28 headers), docs/UPSTREAMS.md
 * ("HTTP upstreams") says what it does.
 *
 *     int cin, cout;
 *     upstream_http_new(u, &opts, &cin, &cout, &b, &err); // an egress proxy started
 *     upstream_client_new(cin, cout, ops, &c, &err);      // the client owns both
 *     thread: upstream_http_run(b, cancel_fd, why, sizeof(why)); // until cancel or break
 *     ... upstream_client_free(c); upstream_http_free(b);
 *
 * Each line the client writes (one JSON-RPC message) is POSTed to the url
 * (Accept: application/json, text/event-stream). The era is the
 * message's: one of the session era (2025) goes with the session id the
 * server gave at initialize and, once negotiated, MCP-Protocol-Version;
 * after notifications/initialized, once an initialize was answered, the
 * GET stream is opened; the session is DELETEd at the end. A modern one
 * (2026-07-28: its params._meta names io.modelcontextprotocol/
 * protocolVersion) goes with no session id, and with the headers that
 * mirror its body as the server checks them (docs/MCP.md):
 * MCP-Protocol-Version (the _meta's), Mcp-Method, Mcp-Name (the name of a
 * tools/call or prompts/get, the uri of a resources/read, the taskId of a
 * tasks/ request) and, on a tools/call, an Mcp-Param-{Name} for each set
 * argument the latest modern tools/list annotated "x-mcp-header"
 * (UPSTREAM_HTTP_MAX_PARAM_TOOLS tools, UPSTREAM_HTTP_MAX_PARAM_BYTES
 * kept); a value not plain visible ASCII goes as =?base64?...?=. Its
 * notifications/cancelled is not POSTed: the cancelled request's transfer
 * is ended (the server sees its stream closed; nothing more of it reaches
 * the client). A modern subscriptions/listen has no time bound: the
 * server or a cancellation ends it. A 4xx answer of a modern request that
 * holds its JSON-RPC error (-32020, -32022, -32601) is passed on as it is.
 * Its answer goes back to the client as lines: a JSON body as one (a
 * batch as one a message), a text/event-stream answer one a "message"
 * event, in the order sent, notifications (progress) before the
 * response included. Requests are concurrent: one thread drives every
 * transfer with curl's multi interface, so a long tools/call never holds
 * up a ping, and no thread is started per request.
 *
 * What the bridge answers for the server, as a JSON-RPC error to the
 * request's id (-32603 "upstream HTTP: ..."): an HTTP status other than
 * 200, 202 or 204 (but a modern 4xx's own error), an answer that holds no
 * response to the request, a request past its own time bound, an answer
 * cut once begun; and, never sent, a modern request the server would
 * have to refuse: a _meta revision that is not digits and '-', an
 * annotated argument a header cannot carry exactly (a non-integer number,
 * an object, over UPSTREAM_HTTP_MAX_MIRRORED bytes), a tools/call of a
 * tool not kept because a listing passed the table's bounds.
 *
 * What breaks the connection (the client's input is closed: it reports
 * EOF, its waiters fail, the runner starts again): the server cannot be
 * reached (refused by the egress proxy, no connection, TLS), a 404 once a
 * session was given (the session expired), a body or an event over
 * UPSTREAM_MAX_MESSAGE (never buffered whole), response headers over
 * UPSTREAM_HTTP_MAX_HEADERS, a session id that is not visible ASCII.
 *
 * Never: follow a redirect, speak anything but http and https, reach the
 * server but through the egress proxy (its url's host and port the only
 * rule), log a credential or put one in an error, start a thread.
 */
#ifndef TG_UPSTREAM_HTTP_H
#define TG_UPSTREAM_HTTP_H

#include <stddef.h>

#include "toolgate/error.h"
#include "toolgate/upstream.h"

#define UPSTREAM_HTTP_CONNECT_MS 10000          /* a connection, through the proxy */
#define UPSTREAM_HTTP_REQUEST_MS (10 * 60000)   /* one request and its whole answer */
#define UPSTREAM_HTTP_MAX_HEADERS (32u << 10)   /* one answer's header bytes */
#define UPSTREAM_HTTP_MAX_INFLIGHT 64u          /* requests at once; the rest wait */
#define UPSTREAM_HTTP_MAX_CONNECTIONS 16        /* to the server at once */
#define UPSTREAM_HTTP_MAX_SESSION 256           /* a session id, bytes */
#define UPSTREAM_HTTP_CLOSE_MS 2000             /* the DELETE of the session */
#define UPSTREAM_HTTP_REOPEN_MS 1000            /* a GET stream that ended, opened again */
#define UPSTREAM_HTTP_MAX_MIRRORED 8192u        /* a mirrored header's value as sent, bytes */
#define UPSTREAM_HTTP_MAX_PARAM_TOOLS 1024u     /* tools whose x-mcp-header are kept */
#define UPSTREAM_HTTP_MAX_PARAM_BYTES (1u << 20) /* and the bytes of what is kept */

/* A header the requests carry: a credential (credentials.header), its
 * value read by the caller. */
struct upstream_http_header {
	const char *name;
	const char *value;          /* len bytes; no CR, LF, NUL nor other control but tab */
	size_t len;
};

struct upstream_http_options {
	/* copied (and wiped at free); none may be a header the transport
	 * sets (the loader refuses them: docs/UPSTREAMS.md, "credentials") */
	const struct upstream_http_header *headers;
	size_t nheaders;
	int request_ms;             /* 0: UPSTREAM_HTTP_REQUEST_MS */
	int connect_ms;             /* 0: UPSTREAM_HTTP_CONNECT_MS */
	/* the egress proxy's: as exec_env.egress_denied, principal */
	void (*egress_denied)(void *ctx, const char *destination, const char *why);
	void *egress_ctx;
	const char *principal;
};

struct upstream_http;

/* A bridge to u's url (u borrowed, must outlive it; o may be NULL): its
 * egress proxy started (u->url_rule its one rule, on a unix socket in a
 * private directory), the client's descriptors made: OUT *client_in (the
 * client reads it: its in_fd) and *client_out (the client writes it: its
 * out_fd), the caller's from here (upstream_client_new takes them). OUT
 * *out. -1 and err naming the upstream and, for a header, its name (never
 * its value): a header with a control character, the proxy refused. */
int upstream_http_new(const struct tg_upstream *u, const struct upstream_http_options *o,
		      int *client_in, int *client_out, struct upstream_http **out,
		      struct tg_error *err);

/* Carry messages both ways until cancel_fd (-1: none) is readable, the
 * client closes its output, or the connection breaks; then end every
 * transfer, DELETE the session unless it expired (within
 * UPSTREAM_HTTP_CLOSE_MS), and close the client's input. How it ended in
 * why (size bytes): "stopped", or why it broke. Once only. */
void upstream_http_run(struct upstream_http *b, int cancel_fd, char *why, size_t size);

/* The proxy stopped, its directory removed, the credentials wiped, the
 * descriptors the bridge kept closed. After upstream_http_run has
 * returned, or when it never ran. NULL: nothing. */
void upstream_http_free(struct upstream_http *b);

#endif
