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
#define HTTP_HEADER_TIMEOUT 10    /* seconds to send a request's headers, by default */
#define HTTP_MAX_HEADER_TIMEOUT 300

struct http_admit;

/* Admission with header_timeout seconds (1 to HTTP_MAX_HEADER_TIMEOUT;
 * 0: HTTP_HEADER_TIMEOUT) to send a request's headers; starts the thread
 * that closes connections past it. OUT *out; -1 and err when out of
 * memory or threads. */
int http_admit_new(unsigned header_timeout, struct http_admit **out, struct tg_error *err);
/* Stop the thread and free a. Only once the daemon that used a stopped
 * (every connection closed); NULL is a no-op. */
void http_admit_free(struct http_admit *a);

/* libmicrohttpd's accept policy and connection notifier, a as their
 * closure: a connection is refused past HTTP_MAX_CONNECTIONS or
 * HTTP_MAX_PER_ADDRESS of its address, and each is tracked from its
 * start to its close. */
enum MHD_Result http_admit_accept(void *a, const struct sockaddr *addr, socklen_t len);
void http_admit_notify(void *a, struct MHD_Connection *c, void **socket_context,
		       enum MHD_ConnectionNotificationCode code);

/* c's request headers are in (the access handler's first call): c no
 * longer waits, whatever its deadline was. */
void http_admit_request(struct http_admit *a, struct MHD_Connection *c);
/* c's request carried a bearer token that verified: once it ends, c may
 * stay idle for the next request without a deadline of its own. */
void http_admit_trust(struct http_admit *a, struct MHD_Connection *c);
/* c's request ended; ok: answered in full (the connection may carry
 * another), else the connection is closing. A connection without a
 * token holder's request waits again, under the deadline and budget. */
void http_admit_done(struct http_admit *a, struct MHD_Connection *c, int ok);

/* text (taken) with the connection metrics appended (docs/METRICS.md);
 * NULL when text is NULL or out of memory. */
char *http_admit_metrics(struct http_admit *a, char *text);

/* The Host and Origin of c's request: NULL when they name this server
 * (addr, or localhost, with port), else why not (DNS rebinding). */
const char *http_origin_refused(const char *addr, unsigned port, struct MHD_Connection *c);

#endif
