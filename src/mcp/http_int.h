/*
 * Private interface of the Streamable HTTP transport's files: the
 * requests and the server's lifecycle (http.c), the admission of
 * connections (http_admit.c), the session registry (http_session.c),
 * event streams and subscriptions/listen (http_stream.c), the
 * 2026-07-28 stateless era (http_modern.c), /admin and /metrics
 * (http_admin.c), and who calls and what they may (auth.c). Only those
 * files include it.
 */
#ifndef TG_MCP_HTTP_INT_H
#define TG_MCP_HTTP_INT_H

#include <arpa/inet.h>
#include <jansson.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>

#include "util/mhd.h"
#include "mcp/mcp_int.h"
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
struct http_front;

/* Admission with header_timeout seconds (1 to HTTP_MAX_HEADER_TIMEOUT;
 * 0: HTTP_HEADER_TIMEOUT) to send a request's headers; tokens: every
 * request needs a bearer token (--tokens or --policy); front (borrowed):
 * its trusted proxies are not held to HTTP_MAX_PER_ADDRESS. Starts the
 * thread that closes connections past the deadline. OUT *out; -1 and err
 * when out of memory or threads. */
int http_admit_new(unsigned header_timeout, int tokens, const struct http_front *front,
		   struct http_admit **out, struct tg_error *err);
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

/* ---- who may address the server, by what name (http_front.c) ------------ */

#define HTTP_MAX_URL 255       /* --public-url */
#define HTTP_MAX_AUTHORITY 272 /* a normalised host:port */
#define HTTP_MAX_PROXIES 16    /* --trust-proxy's addresses and networks */

struct http_front {
	char addr[INET_ADDRSTRLEN]; /* the bound address */
	int loopback;               /* it is one (127.0.0.0/8) */
	int tls;                    /* the server has TLS of its own */
	int https;                  /* the URL clients use is https */
	char public_url[HTTP_MAX_URL + HTTP_MAX_AUTHORITY + 16]; /* --public-url, normalised; "" without */
	char authority[HTTP_MAX_AUTHORITY]; /* its host[:port], normalised */
	struct { uint32_t net, mask; } proxies[HTTP_MAX_PROXIES]; /* host order */
	size_t nproxies;
};

/* The rules for serving addr:port with o (NULL: plain HTTP, no proxy,
 * no public URL) into *f; authenticated: every caller presents a token.
 * -1 and err naming the option to add or fix: a non-loopback address
 * without authentication, without TLS or a trusted proxy, 0.0.0.0
 * without a public URL; a malformed --public-url or --trust-proxy. */
int http_front_init(struct http_front *f, const char *addr, unsigned port,
		    const struct tg_mcp_http_options *o, int authenticated, struct tg_error *err);
/* NULL when c's request may be served: it names this server (Host,
 * Origin, and X-Forwarded-* from a trusted proxy), else why not, 403
 * (DNS rebinding, a stranger behind no proxy); why (len bytes) may hold
 * the text. port: the one bound. */
const char *http_front_refused(const struct http_front *f, unsigned port,
			       struct MHD_Connection *c, char *why, size_t len);
/* 1 if sa is one of f's trusted proxies (f may be NULL: 0). */
int http_front_is_proxy(const struct http_front *f, const struct sockaddr *sa);
/* Who c's client is, as a key for sharing a limit fairly: its address;
 * from a trusted proxy, the last address of its one X-Forwarded-For (the
 * one it added), as http_front_key reads it; 0 when unknown. */
uint64_t http_front_client(const struct http_front *f, struct MHD_Connection *c);
/* An address's text as such a key: IPv4 whole; IPv6 by its /64 (one
 * host's addresses), an IPv4-mapped one (::ffff:a.b.c.d, as a dual-stack
 * proxy names its IPv4 clients) as that IPv4 address; 0 for no address.
 * Two are equal for one address or one /64 only (of IPv4 and the IPv6
 * unicast addresses given out, 2000::/3). */
uint64_t http_front_key(const char *text);
/* The URL clients use for the MCP endpoint (printed at start):
 * --public-url, or SCHEME://ADDR:PORT/mcp. */
void http_front_resource(const struct http_front *f, unsigned port, char *out, size_t len);

#define WELL_KNOWN_PRM "/.well-known/oauth-protected-resource"
/* The URL of the server's Protected Resource Metadata (RFC 9728, 3.1):
 * the well-known path inserted between the resource URL's host and its
 * path. */
void http_front_metadata_url(const struct http_front *f, unsigned port, char *out, size_t len);
/* 1 if url (a request's path) is the metadata's: WELL_KNOWN_PRM alone or
 * followed by the resource URL's path or /mcp. */
int http_front_is_metadata(const struct http_front *f, unsigned port, const char *url);

/* ---- TLS (http_tls.c) ------------------------------------------------------ */

struct http_tls;

extern const char http_tls_priorities[]; /* TLS 1.2 and 1.3 only */

/* The chain in cert and the key in key (PEM files), read and checked:
 * the key not readable by others, matching the certificate, valid now.
 * OUT *out; -1 and err naming the option and file. */
int http_tls_new(const char *cert, const char *key, struct http_tls **out,
		 struct tg_error *err);
/* Read the files again; handshakes from now on get the new pair. -1 and
 * err (the old pair still served) when they do not load. */
int http_tls_reload(struct http_tls *t, struct tg_error *err);
/* Listing t for daemon's handshakes: lock, start the daemon, list, unlock
 * (a handshake waits for the listing). */
void http_tls_lock(void);
void http_tls_list(struct http_tls *t, const struct MHD_Daemon *daemon);
void http_tls_unlock(void);
/* The gnutls_certificate_retrieve_function2 for MHD_OPTION_HTTPS_CERT_CALLBACK. */
void *http_tls_callback(void);
/* Unlist and free; after the daemon stopped. NULL is a no-op. */
void http_tls_free(struct http_tls *t);

/* ---- the server and its requests (http.c) ------------------------------- */

#define MAX_STREAMS 32 /* a session's streams kept for resuming */

struct http_session {
	char id[33];
	struct mcp_session s;
	time_t last_used;
	int users;                  /* requests and readers using it now */
	unsigned long streams;      /* streams opened (their numbers) */
	struct mcp_stream *kept[MAX_STREAMS]; /* resumable, oldest first */
	size_t nstreams;
	struct mcp_stream *get;     /* the GET stream (under s.lock), or NULL */
	int ended;                  /* DELETEd or expired: freed by the last user */
	struct http_session *next;
	struct http_session *id_next; /* in its bucket of by_id (named ones) */
};

#define HTTP_ID_BUCKETS 256 /* the named sessions by their ids' hash */

struct tg_mcp_http {
	struct tg_mcp *mcp;
	struct MHD_Daemon *daemon;
	struct http_admit *admit;   /* which connections are kept */
	pthread_mutex_t lock;       /* the session list */
	pthread_cond_t idle;        /* a session's user put it back */
	struct http_session *sessions; /* live, and ended but still in use */
	unsigned nsessions;
	struct http_session *by_id[HTTP_ID_BUCKETS]; /* the same, found by id */
	time_t swept;               /* when idle sessions were last ended */
	unsigned port;
	struct http_front front;    /* who may address it, by what name */
	struct http_tls *tls;       /* its certificates, or NULL */
	unsigned max_idle;
	int stopping;
	struct http_listener *listeners; /* subscriptions/listen streams */
	struct mcp_watcher watcher; /* hears of catalogue reloads */
	struct console_sessions *console; /* the approval console's; NULL: no console */
	struct console_watch *console_watches; /* its event streams open (under lock) */
};

struct request {
	char *body;
	size_t len, cap;
	size_t discarded;           /* bytes dropped past the ceiling */
	int too_large;
	char principal[MCP_MAX_PRINCIPAL]; /* identified from the headers */
	char *scopes;               /* the caller's token's, with a policy; else NULL */
	char why[200];              /* why the token was refused */
	int admin;                  /* /admin/...: the admin API (docs/ADMIN.md) */
	int console;                /* /console/api/...: the console's (docs/CONSOLE.md) */
};

/* Queue an answer of status with body (copied), of type and naming
 * session_id when not NULL. */
enum MHD_Result http_reply(struct MHD_Connection *c, unsigned status, const char *type,
			   const char *body, const char *session_id);
/* An HTTP error with a JSON-RPC error body (what the TypeScript SDK's
 * server sends, so clients can show the reason). */
enum MHD_Result http_error(struct MHD_Connection *c, unsigned status, int code,
			   const char *message);
/* 1 if an Accept header value takes type (or any type). */
int http_accepts(const char *accept, const char *type);
/* The revision a modern (2026-07-28) request names in its _meta, or NULL. */
const char *http_meta_version(json_t *msg);
/* mcp_header_fn on a connection (ctx): the first line of header name,
 * every line counted in *count (a proxy may read another of two than
 * this server would). */
const char *http_lookup_header(void *ctx, const char *name, unsigned *count);

/* ---- the session registry (http_session.c) -------------------------------- */

/* A new legacy session of principal (initialize), listed and in use by
 * the caller until http_session_put; NULL and why (a 503's reason) when
 * stopping, out of memory or past the ceilings of sessions. */
struct http_session *http_session_new(struct tg_mcp_http *h, const char *principal,
				      const char **why);
/* A session for one modern request: listed, but ended from the start;
 * NULL when stopping or out of memory. */
struct http_session *http_session_once(struct tg_mcp_http *h, const char *principal);
/* The live session named id, in use by the caller until http_session_put;
 * NULL when there is none (ended or expired). */
struct http_session *http_session_get(struct tg_mcp_http *h, const char *id);
/* The caller's use of hs ends; the last user of an ended session frees it. */
void http_session_put(struct tg_mcp_http *h, struct http_session *hs);
/* DELETE, or initialize refused: hs ends now, its calls cancelled. */
void http_session_end(struct tg_mcp_http *h, struct http_session *hs);
/* Keep st in hs for resuming, or let it go (the caller holds h->lock). */
void http_session_keep_stream(struct http_session *hs, struct mcp_stream *st);
void http_session_forget_stream(struct http_session *hs, struct mcp_stream *st);
/* Idle sessions end, unused ended ones are freed (the caller holds h->lock). */
void http_sessions_expire(struct tg_mcp_http *h, time_t now);
/* Stopping: every session ends, its streams and calls first (the caller
 * holds h->lock). */
void http_sessions_end_all(struct tg_mcp_http *h);

/* ---- event streams and subscriptions/listen (http_stream.c) -------------- */

/* A call that may report while it runs: a tools/call of a command tool
 * or with a progress token (answered by http_answer_sse). */
int http_may_report(struct tg_mcp_http *h, json_t *msg);
/* Answer msg (its text raw, copied where it will be needed) as an SSE
 * stream; takes msg and the caller's use of hs (hs is a legacy
 * session's unless msg is modern). */
enum MHD_Result http_answer_sse(struct tg_mcp_http *h, struct MHD_Connection *c,
				struct http_session *hs, json_t *msg, const struct mcp_text *raw,
				const char *scopes);
/* A modern subscriptions/listen: takes msg and the use of hs. */
enum MHD_Result http_answer_listen(struct tg_mcp_http *h, struct MHD_Connection *c,
				   struct http_session *hs, json_t *msg, const char *principal);
/* GET: a legacy session's stream, or the rest of one with Last-Event-ID. */
enum MHD_Result http_get_stream(struct tg_mcp_http *h, struct MHD_Connection *c,
				const char *principal);
/* mcp_watch_fn: a reload, told to the sessions and subscriptions of h. */
void http_changed(void *ctx, const struct mcp_change *c);
/* Stopping: every subscription gets its completion result (the caller
 * holds h->lock). */
void http_listeners_complete(struct tg_mcp_http *h);

/* ---- the 2026-07-28 stateless era (http_modern.c) -------------------------- */

/* A modern POST: no session, the headers checked against the body. Takes msg. */
enum MHD_Result http_post_modern(struct tg_mcp_http *h, struct MHD_Connection *c, json_t *msg,
				 const struct request *rq);

/* ---- who calls, and what they may (auth.c) --------------------------------- */

/* With a policy, the scope a tools/call (or a batch's) needs that rq's
 * token lacks, written to need (len bytes); else NULL. */
const char *http_missing_scope(struct tg_mcp_http *h, const struct request *rq, json_t *msg,
			       char *need, size_t len);
/* 403 insufficient_scope for msg (taken), recorded as a refusal. */
enum MHD_Result http_forbidden_scope(struct tg_mcp_http *h, struct MHD_Connection *c,
				     const struct request *rq, json_t *msg, const char *need);
/* 401 with WWW-Authenticate, for why; presented: a token was sent (else
 * no error code, RFC 6750 3.1). With a policy, the header names the
 * resource metadata (RFC 9728, 5.1). */
enum MHD_Result http_unauthorized(struct tg_mcp_http *h, struct MHD_Connection *c,
				  const char *why, int presented);
/* GET of the Protected Resource Metadata (RFC 9728): 200 with it when
 * the server has a policy, else 404. */
enum MHD_Result http_resource_metadata(struct tg_mcp_http *h, struct MHD_Connection *c,
				       const char *method);

/* ---- /admin, /metrics and the probes (http_admin.c) ----------------------- */

/* An answer of the admin API: JSON, never cached. */
enum MHD_Result http_admin_reply(struct MHD_Connection *c, unsigned status, const char *json);
/* A request of the admin API, its body read (docs/ADMIN.md). */
enum MHD_Result http_admin_answer(struct tg_mcp_http *h, struct MHD_Connection *c,
				  const struct request *rq, const char *url, const char *method);
/* A request of the admin API as principal with scopes (path with its
 * query): the gate's answer in *out (malloc'd) and its status; a
 * decision and every refusal go on the record. */
int http_admin_call(struct tg_mcp_http *h, const char *principal, const char *scopes,
		    const char *method, const char *path, const char *body, size_t len,
		    char **out);
/* GET /metrics (docs/METRICS.md). */
enum MHD_Result http_metrics_reply(struct tg_mcp_http *h, struct MHD_Connection *c,
				   const char *method);
/* 1 if url is a probe's: /healthz or /readyz. */
int http_is_probe(const char *url);
/* A probe, GET or HEAD (405 else; docs/MCP.md, "Health"): /healthz 200
 * "ok"; /readyz 200 "ok" when the gate is ready (tg_gate_ready), else
 * 503 "not ready", with the gate's reason when named (the request named
 * this server: http_front_refused let it). Never cached, never recorded. */
enum MHD_Result http_probe_reply(struct tg_mcp_http *h, struct MHD_Connection *c,
				 const char *url, const char *method, int named);

/* ---- the approval console (http_console.c, docs/CONSOLE.md) -------------- */

#define ADMIN_MAX_BODY (64u << 10) /* an admin API's or the console's request */

/* Its sessions, unless off or without a policy (then no console). */
int http_console_init(struct tg_mcp_http *h, int off, struct tg_error *err);
void http_console_free(struct tg_mcp_http *h);
/* A request under /console: answered now (files, refusals), or MHD_YES
 * with rq->console set and rq's principal identified, to read its body. */
enum MHD_Result http_console_begin(struct tg_mcp_http *h, struct MHD_Connection *c,
				   struct request *rq, const char *url, const char *method);
/* A request under /console that the front refused (why): 403 with the
 * console's headers. */
enum MHD_Result http_console_refused(struct tg_mcp_http *h, struct MHD_Connection *c,
				     const char *why);
/* Its body read: the answer. */
enum MHD_Result http_console_answer(struct tg_mcp_http *h, struct MHD_Connection *c,
				    struct request *rq, const char *url, const char *method);

#endif
