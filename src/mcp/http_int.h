/*
 * Private interface of the Streamable HTTP transport's files: the
 * requests (http.c) and the admission of connections (http_admit.c).
 * Only src/mcp/http*.c include it.
 */
#ifndef TG_MCP_HTTP_INT_H
#define TG_MCP_HTTP_INT_H

#include <microhttpd.h>
#include <sys/socket.h>

#include "toolgate/error.h"

/* The listener's connections (docs/MCP.md, "Connections"). */
#define HTTP_MAX_CONNECTIONS 512  /* open at once, all clients */
#define HTTP_MAX_WAITING 128      /* of which waiting for a request's headers */
#define HTTP_MAX_PER_ADDRESS 256  /* of one client address */
#define HTTP_MAX_PER_PRINCIPAL 64 /* serving or idle, of one token holder */
#define HTTP_MAX_CLOSING 128      /* past the 512: closed here, not yet gone */
/* libmicrohttpd's own limit, a backstop: http_admit_accept refuses first */
#define HTTP_MHD_LIMIT (HTTP_MAX_CONNECTIONS + HTTP_MAX_CLOSING + 1)
#define HTTP_HEADER_TIMEOUT 10    /* seconds to send a request's headers, by default */
#define HTTP_MAX_HEADER_TIMEOUT 300

struct http_admit;

/* Admission with header_timeout seconds (1 to HTTP_MAX_HEADER_TIMEOUT;
 * 0: HTTP_HEADER_TIMEOUT) to send a request's headers; tokens: every
 * request needs a bearer token (--tokens or --policy). Starts the thread
 * that closes connections past the deadline. OUT *out; -1 and err when
 * out of memory or threads. */
int http_admit_new(unsigned header_timeout, int tokens, struct http_admit **out,
		   struct tg_error *err);
/* Stop the thread and free a. Only once the daemon that used a stopped
 * (every connection closed); NULL is a no-op. */
void http_admit_free(struct http_admit *a);

/* libmicrohttpd's accept policy and connection notifier, a as their
 * closure: past HTTP_MAX_CONNECTIONS, or HTTP_MAX_PER_ADDRESS of its
 * address, a new connection closes the longest-waiting one there, else
 * the longest-idle, and is refused only when every one serves a request;
 * each is tracked from its start to its close (libmicrohttpd's own
 * limit: HTTP_MHD_LIMIT). */
enum MHD_Result http_admit_accept(void *a, const struct sockaddr *addr, socklen_t len);
void http_admit_notify(void *a, struct MHD_Connection *c, void **socket_context,
		       enum MHD_ConnectionNotificationCode code);

/* c's request headers are in (the access handler's first call): c no
 * longer waits, whatever its deadline was. 0; -1 when c was shut down
 * here (a deadline, a budget, room for another) while its request came
 * in: nothing of the request may be done, the handler answers MHD_NO. */
int http_admit_request(struct http_admit *a, struct MHD_Connection *c);
/* c's request carried a bearer token of principal that verified: once it
 * ends, c may stay idle for the next request without a deadline of its
 * own. A principal holds at most HTTP_MAX_PER_PRINCIPAL connections,
 * serving or idle: past it, its own longest-idle one is closed (never
 * another principal's). NULL, or, when every one of them serves a
 * request, why the request is to be refused (429; c is not trusted). */
const char *http_admit_trust(struct http_admit *a, struct MHD_Connection *c,
			     const char *principal);
/* c's request ended; ok: answered in full (the connection may carry
 * another), else the connection is closing. A token holder's waits idle
 * for the next request; any other waits under the deadline and budget
 * when the server asks for no token, else is shut down (its answer was
 * a refusal: libmicrohttpd closes those connections anyway). */
void http_admit_done(struct http_admit *a, struct MHD_Connection *c, int ok);

/* text (taken) with the connection metrics appended (docs/METRICS.md);
 * NULL when text is NULL or out of memory. */
char *http_admit_metrics(struct http_admit *a, char *text);

/* The Host and Origin of c's request: NULL when they name this server
 * (addr, or localhost, with port), else why not (DNS rebinding). */
const char *http_origin_refused(const char *addr, unsigned port, struct MHD_Connection *c);

#endif
