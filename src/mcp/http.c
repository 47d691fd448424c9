/*
 * The Streamable HTTP transport (MCP 2025-11-25, "Transports"), on
 * libmicrohttpd: one endpoint (/mcp); POST carries one JSON-RPC message
 * (a batch in a 2025-03-26 session) and is answered with application/json,
 * 202 for notifications and responses; DELETE ends a session; GET is 405
 * (this server sends nothing unprompted yet, so it offers no stream).
 *
 * Sessions: initialize creates one and names it in Mcp-Session-Id (128
 * random bits); every later request must carry it (400 without, 404 for
 * one that ended or expired after max_idle of silence).
 * MCP-Protocol-Version must be a revision the server speaks (400). Against
 * DNS rebinding, a request whose Origin or Host is not the loopback
 * address the server listens on is refused with 403, before anything
 * else. Bodies above MCP_MAX_MESSAGE get 413 and the connection closes.
 *
 * Each connection has a thread (libmicrohttpd's thread-per-connection
 * mode), so a long tool call holds only its own connection; a
 * notifications/cancelled on another connection kills its sandbox.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <pthread.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "mcp/mcp_int.h"
#include "toolgate/catalog.h"

#define ENDPOINT "/mcp"
#define MAX_SESSIONS 1024
#define MAX_SESSIONS_PER_PRINCIPAL 64
#define MAX_SSE_BACKLOG (4u << 20) /* unread notification bytes of one answer */
#define SSE_RETRY_MS 1000          /* the reconnection delay SSE answers announce */
#define RPC_HEADER_MISMATCH_HTTP (-32020) /* 2026-07-28's HeaderMismatch */
#define DEFAULT_MAX_IDLE 1800 /* seconds */

struct http_session {
	char id[33];
	struct mcp_session s;
	time_t last_used;
	int users;                  /* requests using it now */
	unsigned long streams;      /* SSE answers opened (their ids) */
	int ended;                  /* DELETEd or expired: freed by the last user */
	struct http_session *next;
};

struct tg_mcp_http {
	struct tg_mcp *mcp;
	struct MHD_Daemon *daemon;
	pthread_mutex_t lock;       /* the session list */
	pthread_cond_t idle;        /* a session's user put it back */
	struct http_session *sessions; /* live, and ended but still in use */
	unsigned nsessions;
	unsigned port;
	char addr[INET_ADDRSTRLEN]; /* the bound address, for the Host check */
	unsigned max_idle;
	int stopping;
};

struct request {
	char *body;
	size_t len, cap;
	size_t discarded;           /* bytes dropped past the ceiling */
	int too_large;
	char principal[MCP_MAX_PRINCIPAL]; /* identified from the headers */
};

/* ---- sessions ------------------------------------------------------------ */

static void drop_message(void *ctx, const char *text, size_t len)
{
	/* a session over HTTP sends nothing unprompted yet (no GET stream):
	 * what would go there is dropped */
	(void)ctx;
	(void)text;
	(void)len;
}

static void session_free(struct http_session *hs)
{
	mcp_session_release(&hs->s, 1);
	free(hs);
}

/* List hs (the caller holds lock). */
static void link_session(struct tg_mcp_http *h, struct http_session *hs)
{
	hs->next = h->sessions;
	h->sessions = hs;
	h->nsessions++;
}

/* Unlink hs (the caller holds lock). */
static void unlink_session(struct tg_mcp_http *h, struct http_session *hs)
{
	struct http_session **p;

	for (p = &h->sessions; *p; p = &(*p)->next)
		if (*p == hs) {
			*p = hs->next;
			h->nsessions--;
			return;
		}
}

/* Sessions silent for longer than max_idle end; ended sessions nobody
 * uses any more are freed (the caller holds lock). A session in use
 * stays listed, ended, until its last user puts it back, so that stop
 * can find and wait for it. */
static void expire(struct tg_mcp_http *h, time_t now)
{
	struct http_session *hs, *next;

	for (hs = h->sessions; hs; hs = next) {
		next = hs->next;
		if (!hs->ended && hs->users == 0 && now - hs->last_used > (time_t)h->max_idle)
			hs->ended = 1;
		if (hs->ended && hs->users == 0) {
			unlink_session(h, hs);
			session_free(hs); /* nothing runs in it: no waiting */
		}
	}
}

static int live_sessions_of(const struct tg_mcp_http *h, const char *principal)
{
	const struct http_session *hs;
	int n = 0;

	for (hs = h->sessions; hs; hs = hs->next)
		if (!hs->ended && strcmp(hs->s.principal, principal) == 0)
			n++;
	return n;
}

static struct http_session *session_new(struct tg_mcp_http *h, const char *principal,
					const char **why)
{
	struct http_session *hs = calloc(1, sizeof(*hs));
	unsigned char rnd[16];
	size_t i;

	*why = "Service Unavailable: out of memory";
	if (!hs || getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd)) {
		free(hs);
		return NULL;
	}
	for (i = 0; i < sizeof(rnd); i++)
		snprintf(hs->id + 2 * i, 3, "%02x", rnd[i]);
	mcp_session_init(&hs->s, h->mcp, drop_message, NULL);
	snprintf(hs->s.principal, sizeof(hs->s.principal), "%s", principal);
	hs->last_used = time(NULL);
	hs->users = 1;
	pthread_mutex_lock(&h->lock);
	expire(h, hs->last_used);
	/* one principal cannot take every slot from the others */
	if (h->stopping || h->nsessions >= MAX_SESSIONS ||
	    live_sessions_of(h, principal) >= MAX_SESSIONS_PER_PRINCIPAL) {
		*why = h->nsessions >= MAX_SESSIONS ? "Service Unavailable: too many sessions"
						     : "Service Unavailable: too many sessions for "
						       "this principal";
		pthread_mutex_unlock(&h->lock);
		session_free(hs);
		return NULL;
	}
	link_session(h, hs);
	pthread_mutex_unlock(&h->lock);
	return hs;
}

/* The live session named id, in use by the caller until session_put. */
static struct http_session *session_get(struct tg_mcp_http *h, const char *id)
{
	struct http_session *hs;
	time_t now = time(NULL);

	pthread_mutex_lock(&h->lock);
	expire(h, now);
	for (hs = h->sessions; hs; hs = hs->next)
		if (!hs->ended && strcmp(hs->id, id) == 0) {
			hs->users++;
			hs->last_used = now;
			break;
		}
	pthread_mutex_unlock(&h->lock);
	return hs;
}

static void session_put(struct tg_mcp_http *h, struct http_session *hs)
{
	int last;

	pthread_mutex_lock(&h->lock);
	hs->last_used = time(NULL);
	last = --hs->users == 0 && hs->ended;
	if (last)
		unlink_session(h, hs);
	pthread_cond_broadcast(&h->idle);
	pthread_mutex_unlock(&h->lock);
	if (last)
		session_free(hs);
}

/* DELETE, or initialize refused: the session ends now, its calls
 * cancelled; the last user frees it. */
static void session_end(struct tg_mcp_http *h, struct http_session *hs)
{
	pthread_mutex_lock(&h->lock);
	hs->ended = 1;
	pthread_mutex_unlock(&h->lock);
	mcp_session_cancel(&hs->s);
}

/* ---- responses ------------------------------------------------------------ */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     const char *body, const char *session_id)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	if (type)
		MHD_add_response_header(r, "Content-Type", type);
	if (session_id)
		MHD_add_response_header(r, "Mcp-Session-Id", session_id);
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* An HTTP error with a JSON-RPC error body (what the TypeScript SDK's
 * server sends, so clients can show the reason). */
static enum MHD_Result http_error(struct MHD_Connection *c, unsigned status, int code,
				  const char *message)
{
	char *body = rpc_error(json_null(), code, message);
	enum MHD_Result rc = reply(c, status, "application/json", body ? body : "", NULL);

	free(body);
	return rc;
}

/* ---- checks --------------------------------------------------------------- */

/* "NAME:PORT" for this server: its bound address or localhost, with its
 * port (a Host without a port is port 80, another server). */
static int is_this_server(const struct tg_mcp_http *h, const char *hostport)
{
	char want[96];

	snprintf(want, sizeof(want), "%s:%u", h->addr, h->port);
	if (strcasecmp(hostport, want) == 0)
		return 1;
	snprintf(want, sizeof(want), "localhost:%u", h->port);
	return strcasecmp(hostport, want) == 0;
}

/* Origin and Host: only this server's own names (DNS rebinding: a page
 * elsewhere, a local web server on another port included, must not reach
 * a local server). */
static const char *bad_origin_or_host(const struct tg_mcp_http *h, struct MHD_Connection *c)
{
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");

	if (!host || !is_this_server(h, host))
		return "Forbidden: the Host header does not name this server";
	if (origin && (strncasecmp(origin, "http://", 7) != 0 || !is_this_server(h, origin + 7)))
		return "Forbidden: the Origin is not this server's";
	return NULL;
}

static int accepts(const char *accept, const char *type)
{
	return accept && (strstr(accept, type) || strstr(accept, "*/*"));
}

static const char *meta_version(json_t *msg)
{
	json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");

	return json_string_value(json_object_get(meta, "io.modelcontextprotocol/protocolVersion"));
}

/* ---- SSE answers ------------------------------------------------------------ */

/* A POST answered as a stream of server-sent events: what the call reports
 * while it runs (progress, log messages), then its response. A thread runs
 * the call and appends events; libmicrohttpd's reader takes them as they
 * come (blocking is fine in thread-per-connection mode). */
struct sse {
	pthread_mutex_t lock;
	pthread_cond_t more;
	char *buf;
	size_t len, cap, off;
	int done;
	int gone;                   /* the client's connection is closed */
	int modern;                 /* a 2026-07-28 request: no ids, no priming */
	unsigned long stream;       /* this answer's number in its session */
	unsigned long events;       /* events sent on it */
	int refs;                   /* the call's thread and the response */
	struct tg_mcp_http *h;
	struct http_session *hs;
	json_t *msg;
};

static void sse_unref(struct sse *e)
{
	int last;

	pthread_mutex_lock(&e->lock);
	last = --e->refs == 0;
	pthread_mutex_unlock(&e->lock);
	if (!last)
		return;
	pthread_cond_destroy(&e->more);
	pthread_mutex_destroy(&e->lock);
	free(e->buf);
	free(e);
}

/* Append one message as an event (the message is taken). A notification
 * past MAX_SSE_BACKLOG of unread bytes is dropped (a client that does
 * not read cannot make the gateway hold a tool's every report); the final
 * response always goes. Nothing goes once the client is gone. */
static void sse_append(struct sse *e, json_t *msg, int final)
{
	char *text = json_dumps(msg, JSON_COMPACT);
	size_t need;

	json_decref(msg);
	if (!text)
		return;
	need = strlen(text) + 128;
	pthread_mutex_lock(&e->lock);
	if (e->gone || (!final && e->len - e->off + need > MAX_SSE_BACKLOG)) {
		pthread_mutex_unlock(&e->lock);
		free(text);
		return;
	}
	if (e->len + need > e->cap) {
		size_t cap = e->cap ? e->cap : 4096;
		char *b;

		while (cap < e->len + need)
			cap *= 2;
		b = realloc(e->buf, cap);
		if (b) {
			e->buf = b;
			e->cap = cap;
		}
	}
	/* each event has an id, "STREAM-N": the stream's number in the
	 * session and the event's in the stream (SEP-1699) */
	if (e->len + need <= e->cap && e->modern) /* 2026-07-28: no event ids */
		e->len += (size_t)snprintf(e->buf + e->len, e->cap - e->len,
					   "event: message\ndata: %s\n\n", text);
	else if (e->len + need <= e->cap)
		e->len += (size_t)snprintf(e->buf + e->len, e->cap - e->len,
					   "id: %lu-%lu\nevent: message\ndata: %s\n\n", e->stream,
					   ++e->events, text);
	pthread_cond_broadcast(&e->more);
	pthread_mutex_unlock(&e->lock);
	free(text);
}

static void sse_send(void *ctx, json_t *msg)
{
	sse_append(ctx, msg, 0);
}

static void *sse_call(void *arg)
{
	struct sse *e = arg;
	struct mcp_sink sink = { sse_send, e };
	json_t *resp = mcp_session_dispatch(&e->hs->s, e->msg, &sink);

	if (resp)
		sse_append(e, resp, 1);
	json_decref(e->msg);
	session_put(e->h, e->hs);
	pthread_mutex_lock(&e->lock);
	e->done = 1;
	pthread_cond_broadcast(&e->more);
	pthread_mutex_unlock(&e->lock);
	sse_unref(e);
	return NULL;
}

static ssize_t sse_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct sse *e = cls;
	size_t n;

	(void)pos;
	pthread_mutex_lock(&e->lock);
	while (e->off == e->len && !e->done)
		pthread_cond_wait(&e->more, &e->lock);
	if (e->off == e->len) {
		pthread_mutex_unlock(&e->lock);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	n = e->len - e->off < max ? e->len - e->off : max;
	memcpy(buf, e->buf + e->off, n);
	e->off += n;
	if (e->off == e->len)
		e->off = e->len = 0; /* all read: the buffer starts over */
	pthread_mutex_unlock(&e->lock);
	return (ssize_t)n;
}

static void sse_free(void *cls)
{
	struct sse *e = cls;

	/* the answer is over or its connection closed: the call may still
	 * run (a closed stream is not a cancellation), its events go nowhere */
	pthread_mutex_lock(&e->lock);
	e->gone = 1;
	e->off = e->len = 0;
	pthread_mutex_unlock(&e->lock);
	sse_unref(e);
}

/* A tools/call that may report while it runs: a command tool (whose
 * stderr may carry reports) or a call with a progress token. */
static int may_report(struct tg_mcp_http *h, json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *params = json_object_get(msg, "params");
	const char *name = json_string_value(json_object_get(params, "name"));
	const struct tg_contract *k;
	struct tg_error err;

	if (!method || strcmp(method, "tools/call") != 0 || !name || !json_object_get(msg, "id"))
		return 0;
	if (json_object_get(json_object_get(params, "_meta"), "progressToken"))
		return 1;
	return tg_catalog_resolve(tg_gate_catalog(h->mcp->gate), name, NULL, &k, &err) == 0 &&
	       k->executor == TG_EXEC_COMMAND;
}

/* Answer msg as an SSE stream; takes msg and the caller's use of hs. */
static enum MHD_Result answer_sse(struct tg_mcp_http *h, struct MHD_Connection *c,
				  struct http_session *hs, json_t *msg)
{
	struct sse *e = calloc(1, sizeof(*e));
	struct MHD_Response *r;
	pthread_attr_t attr;
	pthread_t t;
	enum MHD_Result rc;

	if (!e) {
		json_decref(msg);
		session_put(h, hs);
		return http_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, RPC_INTERNAL_ERROR,
				  "out of memory");
	}
	pthread_mutex_init(&e->lock, NULL);
	pthread_cond_init(&e->more, NULL);
	e->refs = 2;
	e->h = h;
	e->hs = hs;
	e->msg = msg;
	/* The stream opens with a priming event: an id and no data, and the
	 * reconnection delay (SEP-1699). This server never closes an answer
	 * before its response, so a client never needs to resume one. */
	pthread_mutex_lock(&h->lock);
	e->stream = ++hs->streams;
	pthread_mutex_unlock(&h->lock);
	e->modern = meta_version(msg) != NULL;
	e->cap = 256;
	e->buf = malloc(e->cap);
	if (e->buf && !e->modern)
		e->len = (size_t)snprintf(e->buf, e->cap, "id: %lu-0\nretry: %u\ndata: \n\n",
					  e->stream, SSE_RETRY_MS);
	else if (!e->buf)
		e->cap = 0;
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, sse_read, e, sse_free);
	if (!r) {
		e->refs = 1;
		json_decref(msg);
		session_put(h, hs);
		sse_unref(e);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	MHD_add_response_header(r, "Cache-Control", "no-cache");
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, sse_call, e) != 0)
		sse_call(e); /* no thread: the call runs here, the stream then holds it all */
	pthread_attr_destroy(&attr);
	rc = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r); /* the response's reference to e goes with sse_free */
	return rc;
}

/* ---- the modern era: stateless POSTs ------------------------------------------ */


/* A session for one modern request: listed (so that stop finds and waits
 * for it) but ended from the start (no request can name it), freed when
 * its request is done. */
static struct http_session *session_once(struct tg_mcp_http *h, const char *principal)
{
	struct http_session *hs = calloc(1, sizeof(*hs));

	if (!hs)
		return NULL;
	mcp_session_init(&hs->s, h->mcp, drop_message, NULL);
	snprintf(hs->s.principal, sizeof(hs->s.principal), "%s", principal);
	hs->users = 1;
	hs->ended = 1;
	pthread_mutex_lock(&h->lock);
	if (h->stopping) {
		pthread_mutex_unlock(&h->lock);
		session_free(hs);
		return NULL;
	}
	link_session(h, hs);
	pthread_mutex_unlock(&h->lock);
	return hs;
}

struct header_count {
	const char *name;
	const char *first;
	unsigned n;
};

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	struct header_count *hc = cls;

	(void)kind;
	if (strcasecmp(key, hc->name) == 0 && hc->n++ == 0)
		hc->first = value;
	return MHD_YES;
}

/* mcp_header_fn on a connection: every line of the header is counted (a
 * proxy may read another of two than this server would). */
static const char *lookup_header(void *ctx, const char *name, unsigned *count)
{
	struct header_count hc = { name, NULL, 0 };

	MHD_get_connection_values(ctx, MHD_HEADER_KIND, count_header, &hc);
	*count = hc.n;
	return hc.first;
}

/* The Mcp-Param-* headers of a tools/call, against the arguments: NULL,
 * or why not. An unknown tool is left to the call, which answers it. */
static const char *params_mismatch(struct tg_mcp_http *h, struct MHD_Connection *c,
				   json_t *params, char *why, size_t len)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	const struct tg_contract *k;
	struct tg_error err;

	if (!name || tg_catalog_resolve(tg_gate_catalog(h->mcp->gate), name, NULL, &k, &err) < 0)
		return NULL;
	return mcp_params_mismatch(k, json_object_get(params, "arguments"), lookup_header, c, why,
				   len);
}

/* The headers that mirror the body must match it (the server acts on the
 * body; a proxy may have acted on the headers): NULL, or why not. */
static const char *header_mismatch(struct tg_mcp_http *h, struct MHD_Connection *c, json_t *msg,
				   char *why, size_t len)
{
	const char *ver = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "MCP-Protocol-Version");
	const char *hm = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Method");
	const char *hn = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Name");
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *params = json_object_get(msg, "params");
	const char *body_name = NULL;
	size_t name_len;
	char *name;
	int bad;

	if (!ver || strcmp(ver, meta_version(msg)) != 0) {
		snprintf(why, len, "Header mismatch: MCP-Protocol-Version %s the body's %.40s",
			 ver ? "does not match" : "is missing; it must be", meta_version(msg));
		return why;
	}
	if (!hm || strcmp(hm, method) != 0) {
		snprintf(why, len, "Header mismatch: Mcp-Method %s the body's method %.60s",
			 hm ? "does not match" : "is missing; it must be", method);
		return why;
	}
	if (strcmp(method, "tools/call") == 0 || strcmp(method, "prompts/get") == 0)
		body_name = json_string_value(json_object_get(params, "name"));
	else if (strcmp(method, "resources/read") == 0)
		body_name = json_string_value(json_object_get(params, "uri"));
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
			 strcmp(method, "resources/read") == 0 ? "uri" : "name");
		return why;
	}
	if (strcmp(method, "tools/call") == 0)
		return params_mismatch(h, c, params, why, len);
	return NULL;
}

/* A modern request: no session, the headers checked against the body,
 * the answer's status from its error (400 for the era's protocol errors,
 * 404 for an unknown method). Takes msg. */
static enum MHD_Result do_post_modern(struct tg_mcp_http *h, struct MHD_Connection *c,
				      json_t *msg, const char *principal)
{
	struct http_session *hs;
	enum MHD_Result rc;
	json_t *resp;
	char why[400], *body;

	if (header_mismatch(h, c, msg, why, sizeof(why))) {
		json_t *id = json_object_get(msg, "id");

		resp = rpc_error_json(id ? id : json_null(), RPC_HEADER_MISMATCH_HTTP, why);
		json_decref(msg);
		body = resp ? json_dumps(resp, JSON_COMPACT) : NULL;
		json_decref(resp);
		rc = reply(c, MHD_HTTP_BAD_REQUEST, "application/json", body ? body : "", NULL);
		free(body);
		return rc;
	}
	hs = session_once(h, principal);
	if (!hs) {
		json_decref(msg);
		return http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, RPC_INTERNAL_ERROR,
				  "Service Unavailable: the server is stopping or out of memory");
	}
	if (may_report(h, msg))
		return answer_sse(h, c, hs, msg);
	resp = mcp_session_dispatch(&hs->s, msg, NULL);
	json_decref(msg);
	if (!resp) {
		rc = reply(c, MHD_HTTP_ACCEPTED, NULL, "", NULL);
	} else {
		unsigned status = (unsigned)mcp_modern_status(resp);

		body = json_dumps(resp, JSON_COMPACT);
		json_decref(resp);
		rc = body ? reply(c, status, "application/json", body, NULL) : MHD_NO;
		free(body);
	}
	session_put(h, hs);
	return rc;
}

/* ---- POST ------------------------------------------------------------------ */

static int is_initialize(json_t *msg)
{
	const char *m = json_string_value(json_object_get(msg, "method"));

	return json_is_object(msg) && m && strcmp(m, "initialize") == 0;
}

/* identify: with a token file, the bearer token's principal; NULL and
 * *why otherwise. Without one, the configured principal. */
static const char *identify(struct tg_mcp_http *h, struct MHD_Connection *c)
{
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");

	if (!h->mcp->tokens)
		return h->mcp->principal;
	if (!auth || strncasecmp(auth, "Bearer ", 7) != 0)
		return NULL;
	return mcp_tokens_check(h->mcp->tokens, auth + 7, strlen(auth + 7));
}

static enum MHD_Result unauthorized(struct MHD_Connection *c)
{
	char *body = rpc_error(json_null(), RPC_INVALID_REQUEST,
			       "Unauthorized: a valid bearer token is required");
	struct MHD_Response *r = MHD_create_response_from_buffer(body ? strlen(body) : 0,
								 body ? body : (char *)"",
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	free(body);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"toolgate\"");
	rc = MHD_queue_response(c, MHD_HTTP_UNAUTHORIZED, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result do_post(struct tg_mcp_http *h, struct MHD_Connection *c,
			       struct request *rq, const char *principal)
{
	const char *sid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id");
	const char *ver = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "MCP-Protocol-Version");
	const char *ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
	struct http_session *hs = NULL;
	enum MHD_Result rc;
	json_error_t jerr;
	json_t *msg, *resp;
	const char *why;
	char *body;
	int created = 0;

	if (!accepts(accept, "application/json") || !accepts(accept, "text/event-stream"))
		return http_error(c, MHD_HTTP_NOT_ACCEPTABLE, RPC_INVALID_REQUEST,
				  "Not Acceptable: the client must accept both application/json "
				  "and text/event-stream");
	if (!ctype || strncasecmp(ctype, "application/json", 16) != 0)
		return http_error(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, RPC_INVALID_REQUEST,
				  "Unsupported Media Type: the body must be application/json");
	msg = json_loadb(rq->body ? rq->body : "", rq->len, JSON_REJECT_DUPLICATES, &jerr);
	if (!msg) {
		char text[200];

		snprintf(text, sizeof(text), "Parse error: %s", jerr.text);
		return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_PARSE_ERROR, text);
	}
	/* a request that says its version in _meta is of the modern era:
	 * stateless, whatever session header it has */
	if (json_is_object(msg) && json_is_string(json_object_get(msg, "method")) && meta_version(msg))
		return do_post_modern(h, c, msg, principal);
	if (is_initialize(msg)) {
		if (sid) {
			json_decref(msg);
			return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
					  "Bad Request: initialize starts a session; it cannot carry one");
		}
		hs = session_new(h, principal, &why);
		if (!hs) {
			json_decref(msg);
			return http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, RPC_INTERNAL_ERROR, why);
		}
		created = 1;
	} else {
		if (!sid) {
			json_decref(msg);
			return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
					  "Bad Request: no Mcp-Session-Id (send initialize first)");
		}
		hs = session_get(h, sid);
		if (!hs) {
			json_decref(msg);
			return http_error(c, MHD_HTTP_NOT_FOUND, RPC_INVALID_REQUEST,
					  "Not Found: no such session (it ended or expired)");
		}
		/* a session is its principal's: another's token cannot use it */
		if (strcmp(hs->s.principal, principal) != 0) {
			session_put(h, hs);
			json_decref(msg);
			return http_error(c, MHD_HTTP_FORBIDDEN, RPC_INVALID_REQUEST,
					  "Forbidden: the session belongs to another principal");
		}
		if (ver && !mcp_version_known(ver)) {
			session_put(h, hs);
			json_decref(msg);
			return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
					  "Bad Request: unsupported MCP-Protocol-Version");
		}
	}
	if (!created && may_report(h, msg))
		return answer_sse(h, c, hs, msg);
	resp = mcp_session_dispatch(&hs->s, msg, NULL);
	json_decref(msg);
	if (created && !mcp_session_started(&hs->s)) {
		/* initialize refused (bad params): no session to keep */
		session_end(h, hs);
	}
	if (!resp) {
		rc = reply(c, MHD_HTTP_ACCEPTED, NULL, "", NULL);
	} else {
		body = json_dumps(resp, JSON_COMPACT);
		json_decref(resp);
		rc = body ? reply(c, MHD_HTTP_OK, "application/json", body,
				  created && !hs->ended ? hs->id : NULL)
			  : MHD_NO;
		free(body);
	}
	session_put(h, hs);
	return rc;
}

static enum MHD_Result do_delete(struct tg_mcp_http *h, struct MHD_Connection *c,
				 const char *principal)
{
	const char *sid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id");
	struct http_session *hs;

	if (!sid)
		return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
				  "Bad Request: no Mcp-Session-Id");
	hs = session_get(h, sid);
	if (!hs)
		return http_error(c, MHD_HTTP_NOT_FOUND, RPC_INVALID_REQUEST,
				  "Not Found: no such session");
	if (strcmp(hs->s.principal, principal) != 0) {
		session_put(h, hs);
		return http_error(c, MHD_HTTP_FORBIDDEN, RPC_INVALID_REQUEST,
				  "Forbidden: the session belongs to another principal");
	}
	session_end(h, hs);
	session_put(h, hs); /* the last user frees it, cancelling its calls */
	return reply(c, MHD_HTTP_OK, NULL, "", NULL);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct tg_mcp_http *h = cls;
	struct request *rq = *con_cls;
	const char *why, *principal;

	(void)version;
	if (!rq) {
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");

		rq = calloc(1, sizeof(*rq));
		if (!rq)
			return MHD_NO;
		*con_cls = rq;
		/* The headers are complete: whatever they decide is answered
		 * now, before a byte of the body is read (and before "100
		 * Continue"): the checks against DNS rebinding, the endpoint,
		 * the caller's token, a declared length over the ceiling. */
		why = bad_origin_or_host(h, c);
		if (why)
			return http_error(c, MHD_HTTP_FORBIDDEN, RPC_INVALID_REQUEST, why);
		if (strcmp(url, ENDPOINT) != 0)
			return http_error(c, MHD_HTTP_NOT_FOUND, RPC_INVALID_REQUEST,
					  "Not Found: the MCP endpoint is /mcp");
		principal = identify(h, c);
		if (!principal)
			return unauthorized(c);
		snprintf(rq->principal, sizeof(rq->principal), "%s", principal);
		if (cl && strtoull(cl, NULL, 10) > MCP_MAX_MESSAGE) {
			rq->too_large = 1;
			return http_error(c, MHD_HTTP_CONTENT_TOO_LARGE, RPC_INVALID_REQUEST,
					  "Payload Too Large: a message is at most 4194304 bytes");
		}
		return MHD_YES;
	}
	if (*upload_size) {
		if (!rq->too_large && rq->len + *upload_size > MCP_MAX_MESSAGE)
			rq->too_large = 1;
		if (!rq->too_large) {
			if (rq->len + *upload_size > rq->cap) {
				size_t cap = rq->cap ? rq->cap : 4096;
				char *b;

				while (cap < rq->len + *upload_size)
					cap *= 2;
				b = realloc(rq->body, cap);
				if (!b)
					return MHD_NO;
				rq->body = b;
				rq->cap = cap;
			}
			memcpy(rq->body + rq->len, upload, *upload_size);
			rq->len += *upload_size;
		}
		/* a body without a declared length that grows past the
		 * ceiling: the rest is read and dropped, up to as much again,
		 * to answer 413 at its end; a longer one loses the connection */
		if (rq->too_large && (rq->discarded += *upload_size) > MCP_MAX_MESSAGE)
			return MHD_NO;
		*upload_size = 0;
		return MHD_YES;
	}
	if (rq->too_large)
		return http_error(c, MHD_HTTP_CONTENT_TOO_LARGE, RPC_INVALID_REQUEST,
				  "Payload Too Large: a message is at most 4194304 bytes");
	if (strcmp(method, "POST") == 0)
		return do_post(h, c, rq, rq->principal);
	if (strcmp(method, "DELETE") == 0)
		return do_delete(h, c, rq->principal);
	{
		struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"",
									 MHD_RESPMEM_PERSISTENT);
		enum MHD_Result res;

		if (!r)
			return MHD_NO;
		MHD_add_response_header(r, "Allow", "POST, DELETE");
		res = MHD_queue_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, r);
		MHD_destroy_response(r);
		return res;
	}
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct request *rq = *con_cls;

	(void)cls;
	(void)c;
	(void)toe;
	if (rq) {
		free(rq->body);
		free(rq);
		*con_cls = NULL;
	}
}

int tg_mcp_http_start(struct tg_mcp *m, const char *addr, unsigned port, struct tg_mcp_http **out,
		      struct tg_error *err)
{
	struct tg_mcp_http *h;
	struct sockaddr_in sa;

	tg_error_clear(err);
	*out = NULL;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
		return tg_error_set(err, TG_ERR_INVALID, "--http %s: not an IPv4 address", addr);
	if (!(ntohl(sa.sin_addr.s_addr) >> 24 == 127))
		return tg_error_set(err, TG_ERR_INVALID,
				    "--http %s: only loopback addresses (127.0.0.0/8); nothing "
				    "authenticates HTTP clients yet", addr);
	h = calloc(1, sizeof(*h));
	if (!h)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	h->mcp = m;
	h->port = port;
	h->max_idle = DEFAULT_MAX_IDLE;
	inet_ntop(AF_INET, &sa.sin_addr, h->addr, sizeof(h->addr));
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->idle, NULL);
	h->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
					     MHD_USE_THREAD_PER_CONNECTION | MHD_USE_ERROR_LOG,
				     (uint16_t)port, NULL, NULL, handle, h, MHD_OPTION_SOCK_ADDR,
				     (struct sockaddr *)&sa, MHD_OPTION_NOTIFY_COMPLETED, completed,
				     NULL, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned)512, MHD_OPTION_END);
	if (!h->daemon) {
		pthread_cond_destroy(&h->idle);
		pthread_mutex_destroy(&h->lock);
		free(h);
		return tg_error_set(err, TG_ERR_SYSTEM, "--http %s:%u: cannot listen", addr, port);
	}
	if (port == 0) {
		const union MHD_DaemonInfo *i = MHD_get_daemon_info(h->daemon,
								     MHD_DAEMON_INFO_BIND_PORT);

		h->port = i ? i->port : 0;
	}
	*out = h;
	return 0;
}

unsigned tg_mcp_http_port(const struct tg_mcp_http *h)
{
	return h->port;
}

void tg_mcp_http_stop(struct tg_mcp_http *h)
{
	struct http_session *hs;

	if (!h)
		return;
	/* every session ends, its calls cancelled first, so that nothing
	 * holds a connection thread the daemon's stop waits for */
	pthread_mutex_lock(&h->lock);
	h->stopping = 1;
	for (hs = h->sessions; hs; hs = hs->next) {
		hs->ended = 1;
		mcp_session_cancel(&hs->s);
	}
	pthread_mutex_unlock(&h->lock);
	MHD_stop_daemon(h->daemon);
	/* the calls still running (SSE answers' threads) put their sessions
	 * back as they end; the last user frees each */
	pthread_mutex_lock(&h->lock);
	for (;;) {
		expire(h, time(NULL));
		if (!h->sessions)
			break;
		pthread_cond_wait(&h->idle, &h->lock);
	}
	pthread_mutex_unlock(&h->lock);
	pthread_cond_destroy(&h->idle);
	pthread_mutex_destroy(&h->lock);
	free(h);
}
