/*
 * The Streamable HTTP transport (MCP 2025-11-25, "Transports"), on
 * libmicrohttpd: one endpoint (/mcp); POST carries one JSON-RPC message
 * (a batch in a 2025-03-26 session) and is answered with application/json,
 * or with an event stream when the call reports while it runs; 202 for
 * notifications and responses; DELETE ends a session; GET opens the
 * session's stream of what the server sends outside any request, or with
 * Last-Event-ID resumes a stream whose connection broke (stream.c). A
 * 2026-07-28 subscriptions/listen is answered with a stream that stays
 * open until the client closes it or the server stops.
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
 * notifications/cancelled on another connection kills its sandbox. Which
 * connections are kept, and for how long they may take to send their
 * headers, is http_admit.c's.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
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

#include "mcp/http_int.h"
#include "mcp/mcp_int.h"
#include "toolgate/catalog.h"

#define ENDPOINT "/mcp"
#define ADMIN_PREFIX "/admin/"
#define METRICS "/metrics"
#define ADMIN_MAX_BODY (64u << 10)
#define ADMIN_TOO_LARGE "{\"error\":{\"code\":\"too_large\",\"message\":\"an admin " \
			"request's body is at most 65536 bytes\"}}"
#define MAX_SESSIONS 1024
#define MAX_SESSIONS_PER_PRINCIPAL 64
#define MAX_SSE_BACKLOG (4u << 20) /* unread notification bytes of one answer */
#define SSE_RETRY_MS 1000          /* the reconnection delay SSE answers announce */
#define DEFAULT_MAX_IDLE 1800 /* seconds */

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
};

struct tg_mcp_http {
	struct tg_mcp *mcp;
	struct MHD_Daemon *daemon;
	struct http_admit *admit;   /* which connections are kept */
	pthread_mutex_t lock;       /* the session list */
	pthread_cond_t idle;        /* a session's user put it back */
	struct http_session *sessions; /* live, and ended but still in use */
	unsigned nsessions;
	unsigned port;
	char addr[INET_ADDRSTRLEN]; /* the bound address, for the Host check */
	unsigned max_idle;
	int stopping;
	struct http_listener *listeners; /* subscriptions/listen streams */
	struct mcp_watcher watcher; /* hears of catalogue reloads */
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
};

/* ---- sessions ------------------------------------------------------------ */

/* What a session sends outside any request: on its GET stream, when the
 * client opened one; else it is dropped (the caller holds s.lock). */
static void session_message(void *ctx, const char *text, size_t len)
{
	struct http_session *hs = ctx;

	(void)len;
	if (hs && hs->get)
		mcp_stream_send_text(hs->get, text);
}

static void session_free(struct http_session *hs)
{
	size_t i;

	mcp_session_release(&hs->s, 1);
	for (i = 0; i < hs->nstreams; i++)
		mcp_stream_unref(hs->kept[i]);
	mcp_stream_unref(hs->get);
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
	mcp_session_init(&hs->s, h->mcp, session_message, hs);
	snprintf(hs->s.principal, sizeof(hs->s.principal), "%s", principal);
	hs->s.transport = "tcp";
	hs->s.session_id = hs->id;
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

/* Keep st for resuming (the caller holds lock). Past MAX_STREAMS, the
 * oldest kept stream nobody reads goes (ended: its call's further events
 * go nowhere), never the GET stream; when every one is read, st is not
 * kept (it cannot be resumed). */
static void keep_stream(struct http_session *hs, struct mcp_stream *st)
{
	size_t i;

	if (hs->nstreams == MAX_STREAMS) {
		for (i = 0; i < hs->nstreams; i++)
			if (hs->kept[i] != hs->get && !mcp_stream_busy(hs->kept[i]))
				break;
		if (i == hs->nstreams)
			return;
		mcp_stream_end(hs->kept[i]);
		mcp_stream_unref(hs->kept[i]);
		memmove(hs->kept + i, hs->kept + i + 1, (--hs->nstreams - i) * sizeof(hs->kept[0]));
	}
	mcp_stream_ref(st);
	hs->kept[hs->nstreams++] = st;
}

/* Let st go (the caller holds lock). */
static void forget_stream(struct http_session *hs, struct mcp_stream *st)
{
	size_t i;

	for (i = 0; i < hs->nstreams; i++)
		if (hs->kept[i] == st) {
			memmove(hs->kept + i, hs->kept + i + 1,
				(--hs->nstreams - i) * sizeof(hs->kept[0]));
			mcp_stream_unref(st);
			return;
		}
}

/* The session's streams end: their readers finish (the caller holds lock). */
static void end_streams(struct http_session *hs)
{
	size_t i;

	for (i = 0; i < hs->nstreams; i++)
		mcp_stream_end(hs->kept[i]);
	pthread_mutex_lock(&hs->s.lock);
	if (hs->get)
		mcp_stream_end(hs->get);
	pthread_mutex_unlock(&hs->s.lock);
}

/* DELETE, or initialize refused: the session ends now, its calls
 * cancelled; the last user frees it. */
static void session_end(struct tg_mcp_http *h, struct http_session *hs)
{
	pthread_mutex_lock(&h->lock);
	hs->ended = 1;
	end_streams(hs);
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

/* A body of type, never cached (copied: the caller keeps body). */
static enum MHD_Result reply_nocache(struct MHD_Connection *c, unsigned status, const char *type,
				     const char *body)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* An answer of the admin API: JSON, never cached. */
static enum MHD_Result admin_reply(struct MHD_Connection *c, unsigned status, const char *json)
{
	return reply_nocache(c, status, "application/json", json);
}

/* GET /metrics (docs/METRICS.md): the gateway's counters. */
static enum MHD_Result metrics_reply(struct tg_mcp_http *h, struct MHD_Connection *c,
				     const char *method)
{
	char *text = strcmp(method, "GET") == 0
			     ? http_admit_metrics(h->admit, tg_gate_metrics(h->mcp->gate))
			     : NULL;
	enum MHD_Result rc;

	if (strcmp(method, "GET") != 0)
		return http_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, RPC_INVALID_REQUEST,
				  "Method Not Allowed: GET /metrics");
	if (!text)
		return http_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, RPC_INTERNAL_ERROR,
				  "out of memory");
	rc = reply_nocache(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text);
	free(text);
	return rc;
}

/* ---- checks --------------------------------------------------------------- */

static int accepts(const char *accept, const char *type)
{
	return accept && (strstr(accept, type) || strstr(accept, "*/*"));
}

static const char *meta_version(json_t *msg)
{
	json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");

	return json_string_value(json_object_get(meta, "io.modelcontextprotocol/protocolVersion"));
}

/* ---- event streams ------------------------------------------------------------ */

/* One connection reading a stream (the libmicrohttpd response's). A
 * legacy session's stream holds a use of its session while it is read. */
struct reader {
	struct tg_mcp_http *h;
	struct http_session *hs;    /* NULL: not a session's (modern) */
	struct mcp_stream *st;
	struct http_listener *l;    /* a subscriptions/listen stream's */
	struct call *k;             /* a modern call's answer: closing cancels it */
	unsigned gen;               /* this connection's hold on the stream */
};

static void call_gone(struct call *k);
static void call_unref(struct call *k);

/* A 2026-07-28 subscriptions/listen stream, ended with a completion
 * result when the server stops. */
struct http_listener {
	char principal[MCP_MAX_PRINCIPAL];
	json_t *id;
	json_t *filter;             /* what was acknowledged */
	struct mcp_stream *st;
	struct http_listener *next;
};

static ssize_t reader_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct reader *r = cls;
	ssize_t n = mcp_stream_read(r->st, r->gen, buf, max);

	(void)pos;
	return n < 0 ? MHD_CONTENT_READER_END_OF_STREAM : n;
}

static void listener_remove(struct tg_mcp_http *h, struct http_listener *l)
{
	struct http_listener **p;

	pthread_mutex_lock(&h->lock);
	for (p = &h->listeners; *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			break;
		}
	pthread_cond_broadcast(&h->idle);
	pthread_mutex_unlock(&h->lock);
	json_decref(l->id);
	json_decref(l->filter);
	mcp_stream_unref(l->st);
	free(l);
}

/* The connection closed, or the stream was read to its end. A legacy
 * stream stays kept for resuming until it has been read to its end. */
static void reader_free_fields(struct reader *r)
{
	if (r->gen)
		mcp_stream_detach(r->st, r->gen);
	if (r->k) {
		call_gone(r->k);
		call_unref(r->k);
	}
	if (r->hs) {
		pthread_mutex_lock(&r->h->lock);
		if (mcp_stream_finished(r->st))
			forget_stream(r->hs, r->st);
		pthread_mutex_unlock(&r->h->lock);
		session_put(r->h, r->hs);
	}
	if (r->l)
		listener_remove(r->h, r->l);
	mcp_stream_unref(r->st);
}

static void reader_free(void *cls)
{
	reader_free_fields(cls);
	free(cls);
}

/* Answer with a stream from event first on; the reader r (copied) takes
 * its reference to the stream, and its uses of the session and call. */
static enum MHD_Result serve_stream(struct MHD_Connection *c, const struct reader *tmpl,
				    unsigned long first)
{
	struct reader *r = malloc(sizeof(*r));
	struct MHD_Response *resp;
	enum MHD_Result rc;

	if (!r) {
		struct reader stack = *tmpl;

		reader_free_fields(&stack);
		return MHD_NO;
	}
	*r = *tmpl;
	r->gen = mcp_stream_attach(r->st, first);
	if (!r->gen) {
		reader_free(r);
		return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
				  "Bad Request: that stream was read to its end");
	}
	resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 4096, reader_read, r,
						 reader_free);
	if (!resp) {
		reader_free(r);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", "text/event-stream");
	MHD_add_response_header(resp, "Cache-Control", "no-cache");
	MHD_add_response_header(resp, "X-Accel-Buffering", "no");
	rc = MHD_queue_response(c, MHD_HTTP_OK, resp);
	MHD_destroy_response(resp); /* r goes with reader_free */
	return rc;
}

/* ---- SSE answers ------------------------------------------------------------ */

/* A POST answered as a stream of server-sent events: what the call
 * reports while it runs (progress, log messages, questions to the
 * client), then its response. A thread runs the call and appends events
 * to the stream; the connection reads them as they come (blocking is
 * fine in thread-per-connection mode). A closed connection does not
 * cancel the call (the specification's rule): in a legacy session its
 * events are kept, and the client may resume the stream with a GET and
 * Last-Event-ID. */
struct call {
	struct tg_mcp_http *h;
	struct http_session *hs;
	json_t *msg;
	struct mcp_stream *st;
	pthread_mutex_t lock;
	pthread_cond_t decided;
	int evented;                /* something was appended */
	int opened;                 /* the answer is a stream */
	int done;
	json_t *plain;              /* a modern answer that came before any event */
	char *scopes;               /* the caller's token's, copied (the request may end first) */
	int refs;
};

static void call_unref(struct call *k)
{
	int last;

	pthread_mutex_lock(&k->lock);
	last = --k->refs == 0;
	pthread_mutex_unlock(&k->lock);
	if (!last)
		return;
	mcp_stream_unref(k->st);
	free(k->scopes);
	pthread_cond_destroy(&k->decided);
	pthread_mutex_destroy(&k->lock);
	free(k);
}

/* The answer's connection closed: in the modern era that cancels the
 * call (its session is the call's own). */
static void call_gone(struct call *k)
{
	pthread_mutex_lock(&k->lock);
	if (!k->done)
		mcp_session_cancel(&k->hs->s);
	pthread_mutex_unlock(&k->lock);
}

static void call_event(void *ctx, json_t *msg)
{
	struct call *k = ctx;

	pthread_mutex_lock(&k->lock);
	k->evented = 1;
	pthread_cond_broadcast(&k->decided);
	pthread_mutex_unlock(&k->lock);
	mcp_stream_send(k->st, msg, 0);
}

static void *call_main(void *arg)
{
	struct call *k = arg;
	struct mcp_sink sink = { call_event, k };
	json_t *resp = mcp_session_dispatch(&k->hs->s, k->msg, &sink, k->scopes);

	pthread_mutex_lock(&k->lock);
	if (resp && k->plain == NULL && !k->opened && !k->evented && meta_version(k->msg)) {
		/* nothing was reported: the answer goes as plain JSON, with
		 * the status its error calls for (answer_sse) */
		k->plain = resp;
		resp = NULL;
	}
	k->done = 1;
	pthread_cond_broadcast(&k->decided);
	pthread_mutex_unlock(&k->lock);
	if (resp)
		mcp_stream_send(k->st, resp, 1);
	else
		mcp_stream_end(k->st); /* cancelled: no response */
	json_decref(k->msg);
	session_put(k->h, k->hs);
	call_unref(k);
	return NULL;
}

/* Answer msg as an SSE stream; takes msg and the caller's use of hs (hs
 * is a legacy session's unless msg is modern). */
static enum MHD_Result answer_sse(struct tg_mcp_http *h, struct MHD_Connection *c,
				  struct http_session *hs, json_t *msg, const char *scopes)
{
	struct call *k = calloc(1, sizeof(*k));
	int modern = meta_version(msg) != NULL;
	unsigned long number;
	pthread_attr_t attr;
	pthread_t t;
	json_t *plain;
	int silent;

	pthread_mutex_lock(&h->lock);
	number = ++hs->streams;
	pthread_mutex_unlock(&h->lock);
	if (k)
		k->st = mcp_stream_new(number, !modern, MAX_SSE_BACKLOG);
	if (!k || !k->st) {
		free(k);
		json_decref(msg);
		session_put(h, hs);
		return http_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, RPC_INTERNAL_ERROR,
				  "out of memory");
	}
	pthread_mutex_init(&k->lock, NULL);
	pthread_cond_init(&k->decided, NULL);
	/* no copy (out of memory) with a policy: no scope, refused */
	k->scopes = scopes ? strdup(scopes) : NULL;
	if (scopes && !k->scopes)
		k->scopes = strdup("");
	k->refs = 2;
	k->h = h;
	k->hs = hs;
	k->msg = msg;
	if (!modern) {
		/* resumable: kept in the session, primed with event 0 */
		mcp_stream_prime(k->st, SSE_RETRY_MS);
		pthread_mutex_lock(&h->lock);
		keep_stream(hs, k->st);
		hs->users++; /* the reader's use */
		pthread_mutex_unlock(&h->lock);
	}
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &attr, call_main, k) != 0)
		call_main(k); /* no thread: the call runs here, the stream then holds it all */
	pthread_attr_destroy(&attr);
	pthread_mutex_lock(&k->lock);
	/* a modern error has its own status (400 for -32021), and the status
	 * goes first: wait for the first event or the answer; a call that
	 * reported nothing is answered with plain JSON */
	while (modern && !k->evented && !k->done)
		pthread_cond_wait(&k->decided, &k->lock);
	plain = k->plain;
	k->plain = NULL;
	silent = modern && k->done && !k->evented && !plain; /* cancelled: no answer */
	k->opened = 1;
	pthread_mutex_unlock(&k->lock);
	mcp_stream_ref(k->st);
	if (plain || silent) {
		char *body = plain ? json_dumps(plain, JSON_COMPACT) : NULL;
		enum MHD_Result rc = body ? reply(c, (unsigned)mcp_modern_status(plain),
						   "application/json", body, NULL)
					  : reply(c, MHD_HTTP_ACCEPTED, NULL, "", NULL);

		json_decref(plain);
		free(body);
		mcp_stream_unref(k->st);
		call_unref(k);
		return rc;
	}
	{
		struct reader r = { h, modern ? NULL : hs, k->st, NULL, modern ? k : NULL, 0 };

		if (!modern)
			call_unref(k); /* a closed stream is not a cancellation */
		return serve_stream(c, &r, 0);
	}
}

/* A call that may report while it runs: a tools/call of a command tool
 * (whose stderr may carry reports) or with a progress token. */
static int may_report(struct tg_mcp_http *h, json_t *msg)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *params = json_object_get(msg, "params");
	const char *name = json_string_value(json_object_get(params, "name"));
	const struct tg_catalog *cat;
	const struct tg_contract *k;
	struct tg_error err;
	int yes;

	if (!method || strcmp(method, "tools/call") != 0 || !name || !json_object_get(msg, "id"))
		return 0;
	if (json_object_get(json_object_get(params, "_meta"), "progressToken"))
		return 1;
	cat = tg_gate_acquire(h->mcp->gate);
	yes = tg_catalog_resolve(cat, name, NULL, &k, &err) == 0 && k->executor == TG_EXEC_COMMAND;
	tg_gate_release(h->mcp->gate, cat);
	return yes;
}

/* ---- subscriptions/listen ------------------------------------------------------- */

#define MAX_LISTENERS 256 /* open subscriptions/listen streams, all clients */
#define MAX_LISTENERS_PER_PRINCIPAL 32

static void capture(void *ctx, json_t *msg)
{
	json_t **ack = ctx;

	json_decref(*ack);
	*ack = msg;
}

/* subscriptions/listen: the session checks the request and gives the
 * acknowledgment, which opens the stream; the stream then stays open,
 * with keep-alives, until the client closes it or the server stops
 * (with the completion result). Takes msg and the use of hs. */
static enum MHD_Result answer_listen(struct tg_mcp_http *h, struct MHD_Connection *c,
				     struct http_session *hs, json_t *msg, const char *principal)
{
	json_t *ack = NULL, *resp;
	struct mcp_sink sink = { capture, &ack };
	struct http_listener *l, *it;
	struct mcp_stream *st;
	enum MHD_Result rc;
	unsigned n = 0, mine = 0;

	resp = mcp_session_dispatch(&hs->s, msg, &sink, NULL); /* listen: no tool calls */
	session_put(h, hs);
	if (resp || !ack) {
		char *body = resp ? json_dumps(resp, JSON_COMPACT) : NULL;

		rc = body ? reply(c, (unsigned)mcp_modern_status(resp), "application/json", body,
				  NULL)
			  : http_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, RPC_INTERNAL_ERROR,
				       "out of memory");
		free(body);
		json_decref(resp);
		json_decref(ack);
		json_decref(msg);
		return rc;
	}
	l = calloc(1, sizeof(*l));
	st = mcp_stream_new(0, 0, MAX_SSE_BACKLOG);
	if (!l || !st) {
		free(l);
		mcp_stream_unref(st);
		json_decref(ack);
		json_decref(msg);
		return http_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, RPC_INTERNAL_ERROR,
				  "out of memory");
	}
	l->id = json_incref(json_object_get(msg, "id"));
	l->filter = json_incref(json_object_get(json_object_get(ack, "params"), "notifications"));
	json_decref(msg);
	mcp_stream_send(st, ack, 0);
	mcp_stream_ref(st);
	l->st = st;
	snprintf(l->principal, sizeof(l->principal), "%s", principal);
	pthread_mutex_lock(&h->lock);
	for (it = h->listeners; it; it = it->next) {
		n++;
		mine += strcmp(it->principal, principal) == 0;
	}
	/* one principal cannot take every slot from the others */
	if (h->stopping || n >= MAX_LISTENERS || mine >= MAX_LISTENERS_PER_PRINCIPAL) {
		pthread_mutex_unlock(&h->lock);
		json_decref(l->id);
		json_decref(l->filter);
		mcp_stream_unref(st);
		mcp_stream_unref(st);
		free(l);
		return http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, RPC_INTERNAL_ERROR,
				  "Service Unavailable: too many open subscriptions (32 a "
				  "principal, 256 in all), or stopping");
	}
	l->next = h->listeners;
	h->listeners = l;
	pthread_mutex_unlock(&h->lock);
	{
		struct reader r = { h, NULL, st, l, NULL, 0 };

		return serve_stream(c, &r, 1);
	}
}

/* A reload changed c: each legacy session hears it on its GET stream,
 * each subscription what its filter names. */
static void http_changed(void *ctx, const struct mcp_change *c)
{
	struct tg_mcp_http *h = ctx;
	struct http_session *hs;
	struct http_listener *l;
	json_t *list, *n;
	size_t i;

	pthread_mutex_lock(&h->lock);
	for (hs = h->sessions; hs; hs = hs->next)
		if (!hs->ended)
			mcp_session_changed(&hs->s, c);
	for (l = h->listeners; l; l = l->next) {
		list = mcp_change_notifications(c, l->filter, l->id);
		json_array_foreach(list, i, n)
			mcp_stream_send(l->st, json_incref(n), 0);
		json_decref(list);
	}
	pthread_mutex_unlock(&h->lock);
}

/* ---- who calls, and what they may ------------------------------------------------ */

/* With a policy: a tools/call's tool must be one the caller's scopes
 * allow (docs/AUTH.md); NULL, or the scope it needs (in need). An unknown
 * tool is left to the call, which answers it. */
static const char *missing_scope(struct tg_mcp_http *h, const struct request *rq, json_t *msg,
				 char *need, size_t len)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *m;
	size_t i;

	/* a batch: every call in it (the pipeline checks them again) */
	json_array_foreach(msg, i, m)
		if (missing_scope(h, rq, m, need, len))
			return need;
	const char *name = json_string_value(json_object_get(json_object_get(msg, "params"), "name"));
	const struct tg_catalog *cat;
	const struct tg_contract *k;
	struct tg_error err;
	char tool[160];
	int write = -1;

	if (!rq->scopes || !method || strcmp(method, "tools/call") != 0 || !name)
		return NULL;
	cat = tg_gate_acquire(h->mcp->gate);
	if (tg_catalog_resolve(cat, name, NULL, &k, &err) == 0) {
		write = k->authority == TG_AUTHORITY_WRITE;
		snprintf(tool, sizeof(tool), "%s", k->name); /* without @version */
		snprintf(need, len, "%.150s:%s", k->name, write ? "write" : "read");
	}
	tg_gate_release(h->mcp->gate, cat);
	if (write < 0)
		return NULL;
	return tg_scopes_allow_call(rq->scopes, tool, write) ? NULL : need;
}

/* 403 insufficient_scope (RFC 6750): the token is good, not for this. */
static enum MHD_Result forbidden_scope(struct tg_mcp_http *h, struct MHD_Connection *c,
				       const struct request *rq, json_t *msg, const char *need)
{
	json_t *id = json_object_get(msg, "id");
	char text[300], hdr[300], *body;
	struct MHD_Response *r;
	enum MHD_Result rc;

	/* refused before the pipeline: recorded here, as the pipeline
	 * records its own refusals */
	tg_gate_record_refusal(h->mcp->gate, rq->principal, need, "forbidden",
			       "insufficient_scope");
	snprintf(text, sizeof(text), "Forbidden: insufficient_scope: the call needs the scope %s",
		 need);
	body = rpc_error(id ? id : json_null(), RPC_INVALID_REQUEST, text);
	json_decref(msg);
	r = MHD_create_response_from_buffer(body ? strlen(body) : 0, body ? body : (char *)"",
					    MHD_RESPMEM_MUST_COPY);
	free(body);
	if (!r)
		return MHD_NO;
	snprintf(hdr, sizeof(hdr), "Bearer realm=\"toolgate\", error=\"insufficient_scope\", "
		 "scope=\"%s\"", need);
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "WWW-Authenticate", hdr);
	rc = MHD_queue_response(c, MHD_HTTP_FORBIDDEN, r);
	MHD_destroy_response(r);
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
	mcp_session_init(&hs->s, h->mcp, session_message, NULL);
	snprintf(hs->s.principal, sizeof(hs->s.principal), "%s", principal);
	hs->s.transport = "tcp";
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

/* The Idempotency-Key header of a tools/call becomes its _meta key
 * (docs/PIPELINE.md): NULL, or why the request is refused (the header
 * twice, or disagreeing with the body's key). */
static const char *idempotency_header(struct MHD_Connection *c, json_t *msg)
{
	unsigned count;
	const char *v = lookup_header(c, "Idempotency-Key", &count), *method;
	json_t *params, *meta, *body_key;

	method = json_string_value(json_object_get(msg, "method"));
	if (!v || !method || strcmp(method, "tools/call") != 0)
		return NULL;
	if (count > 1)
		return "Bad Request: Idempotency-Key is given twice";
	params = json_object_get(msg, "params");
	if (!json_is_object(params))
		return NULL; /* the call answers a bad params itself */
	meta = json_object_get(params, "_meta");
	if (!meta) {
		meta = json_object();
		json_object_set_new(params, "_meta", meta);
	}
	if (!json_is_object(meta))
		return NULL;
	body_key = json_object_get(meta, "dev.toolgate/idempotencyKey");
	if (body_key && !(json_is_string(body_key) && strcmp(json_string_value(body_key), v) == 0))
		return "Bad Request: the Idempotency-Key header and the body's "
		       "_meta[\"dev.toolgate/idempotencyKey\"] disagree";
	json_object_set_new(meta, "dev.toolgate/idempotencyKey", json_string(v));
	return NULL;
}


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
		bad = mcp_params_mismatch(k, json_object_get(params, "arguments"), lookup_header, c,
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
		lookup_header(c, mirrored[i], &count);
		if (count > 1) {
			snprintf(why, len, "Header mismatch: %s is given %u times", mirrored[i],
				 count);
			return why;
		}
	}
	ver = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "MCP-Protocol-Version");
	hm = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Method");
	hn = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Name");
	if (!ver || !ows_equal(ver, meta_version(msg))) {
		snprintf(why, len, "Header mismatch: MCP-Protocol-Version %s the body's %.40s",
			 ver ? "does not match" : "is missing; it must be", meta_version(msg));
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
	enum MHD_Result rc = reply(c, MHD_HTTP_BAD_REQUEST, "application/json", body ? body : "",
				   NULL);

	json_decref(resp);
	json_decref(msg);
	free(body);
	return rc;
}

/* A modern request: no session, the headers checked against the body,
 * the answer's status from its error (400 for the era's protocol errors,
 * 404 for an unknown method). Takes msg. */
static enum MHD_Result do_post_modern(struct tg_mcp_http *h, struct MHD_Connection *c,
				      json_t *msg, const struct request *rq)
{
	const char *principal = rq->principal, *need;
	char scope[200];
	struct http_session *hs;
	enum MHD_Result rc;
	json_t *resp;
	char why[400], *body;

	if (!meta_version(msg))
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
	need = missing_scope(h, rq, msg, scope, sizeof(scope));
	if (need)
		return forbidden_scope(h, c, rq, msg, need);
	hs = session_once(h, principal);
	if (!hs) {
		json_decref(msg);
		return http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, RPC_INTERNAL_ERROR,
				  "Service Unavailable: the server is stopping or out of memory");
	}
	if (may_report(h, msg))
		return answer_sse(h, c, hs, msg, rq->scopes);
	if (json_object_get(msg, "id") &&
	    strcmp(json_string_value(json_object_get(msg, "method")), "subscriptions/listen") == 0)
		return answer_listen(h, c, hs, msg, principal);
	resp = mcp_session_dispatch(&hs->s, msg, NULL, rq->scopes);
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

static enum MHD_Result unauthorized(struct MHD_Connection *c, const char *why)
{
	char text[260], *body;
	struct MHD_Response *r;
	enum MHD_Result rc;

	snprintf(text, sizeof(text), "Unauthorized: %s", why);
	body = rpc_error(json_null(), RPC_INVALID_REQUEST, text);
	r = MHD_create_response_from_buffer(body ? strlen(body) : 0, body ? body : (char *)"",
					    MHD_RESPMEM_MUST_COPY);

	free(body);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "WWW-Authenticate", "Bearer realm=\"toolgate\", "
				"error=\"invalid_token\"");
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
	why = idempotency_header(c, msg);
	if (why) {
		json_decref(msg);
		return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST, why);
	}
	/* a request that says its version in _meta is of the modern era:
	 * stateless, whatever session header it has; so is one without a
	 * session whose header says that era (its _meta is then missing,
	 * which do_post_modern answers) */
	if (json_is_object(msg) && json_is_string(json_object_get(msg, "method")) &&
	    (meta_version(msg) || (!sid && !is_initialize(msg) && ver && strcmp(ver, MCP_MODERN) == 0)))
		return do_post_modern(h, c, msg, rq);
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
	if (!created) {
		char scope[200];
		const char *need = missing_scope(h, rq, msg, scope, sizeof(scope));

		if (need) {
			session_put(h, hs);
			return forbidden_scope(h, c, rq, msg, need);
		}
	}
	if (!created && may_report(h, msg))
		return answer_sse(h, c, hs, msg, rq->scopes);
	resp = mcp_session_dispatch(&hs->s, msg, NULL, rq->scopes);
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

/* "STREAM-N": the stream and the event a client last got. */
static int parse_event_id(const char *v, unsigned long *stream, unsigned long *event)
{
	char *end;

	errno = 0;
	*stream = strtoul(v, &end, 10);
	if (end == v || *end != '-' || !isdigit((unsigned char)end[1]) || errno)
		return -1;
	v = end + 1;
	*event = strtoul(v, &end, 10);
	return *end || errno || *event == ULONG_MAX ? -1 : 0;
}

/* GET: the session's stream of what the server sends outside any
 * request; with Last-Event-ID, the rest of a stream whose connection
 * broke (a POST's answer, or the GET stream itself). */
static enum MHD_Result do_get(struct tg_mcp_http *h, struct MHD_Connection *c,
			      const char *principal)
{
	const char *sid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id");
	const char *ver = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "MCP-Protocol-Version");
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
	const char *last = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Last-Event-ID");
	struct http_session *hs;
	struct mcp_stream *st = NULL, *old;
	unsigned long number = 0, event = 0;
	size_t i;

	if (!accepts(accept, "text/event-stream"))
		return http_error(c, MHD_HTTP_NOT_ACCEPTABLE, RPC_INVALID_REQUEST,
				  "Not Acceptable: the GET stream is text/event-stream");
	if (!sid)
		return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
				  "Bad Request: no Mcp-Session-Id (a stream belongs to a session)");
	if (last && parse_event_id(last, &number, &event) < 0)
		return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
				  "Bad Request: Last-Event-ID is not an event id of this server");
	hs = session_get(h, sid);
	if (!hs)
		return http_error(c, MHD_HTTP_NOT_FOUND, RPC_INVALID_REQUEST,
				  "Not Found: no such session (it ended or expired)");
	if (strcmp(hs->s.principal, principal) != 0 || (ver && !mcp_version_known(ver))) {
		int other = strcmp(hs->s.principal, principal) != 0;

		session_put(h, hs);
		return other ? http_error(c, MHD_HTTP_FORBIDDEN, RPC_INVALID_REQUEST,
					  "Forbidden: the session belongs to another principal")
			     : http_error(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
					  "Bad Request: unsupported MCP-Protocol-Version");
	}
	if (last) {
		pthread_mutex_lock(&h->lock);
		for (i = 0; i < hs->nstreams; i++)
			if (mcp_stream_number(hs->kept[i]) == number) {
				st = hs->kept[i];
				mcp_stream_ref(st);
			}
		pthread_mutex_unlock(&h->lock);
		if (!st) {
			session_put(h, hs);
			return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
					  "Bad Request: Last-Event-ID names no stream of this "
					  "session that is left to resume");
		}
		{
			struct reader r = { h, hs, st, NULL, NULL, 0 };

			return serve_stream(c, &r, event + 1);
		}
	}
	/* a new GET stream: one at a time; one left unread is replaced */
	pthread_mutex_lock(&h->lock);
	number = ++hs->streams;
	pthread_mutex_unlock(&h->lock);
	st = mcp_stream_new(number, 1, MAX_SSE_BACKLOG);
	if (!st) {
		session_put(h, hs);
		return http_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, RPC_INTERNAL_ERROR,
				  "out of memory");
	}
	pthread_mutex_lock(&hs->s.lock);
	old = hs->get;
	if (old && mcp_stream_busy(old)) {
		pthread_mutex_unlock(&hs->s.lock);
		mcp_stream_unref(st);
		session_put(h, hs);
		return http_error(c, MHD_HTTP_CONFLICT, RPC_INVALID_REQUEST,
				  "Conflict: the session's GET stream is open on another "
				  "connection (resume a broken one with Last-Event-ID)");
	}
	mcp_stream_prime(st, SSE_RETRY_MS);
	mcp_stream_ref(st);
	hs->get = st;
	pthread_mutex_unlock(&hs->s.lock);
	pthread_mutex_lock(&h->lock);
	if (old) {
		mcp_stream_end(old);
		forget_stream(hs, old);
	}
	keep_stream(hs, st);
	pthread_mutex_unlock(&h->lock);
	mcp_stream_unref(old);
	{
		struct reader r = { h, hs, st, NULL, NULL, 0 };

		return serve_stream(c, &r, 0);
	}
}

/* A request of the admin API (docs/ADMIN.md), its body read: answered
 * by the gate's router; decisions and refusals go on the record. */
static enum MHD_Result admin_answer(struct tg_mcp_http *h, struct MHD_Connection *c,
				    const struct request *rq, const char *url, const char *method)
{
	char *out = NULL;
	const char *q = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "state");
	char path[512];
	int status;
	enum MHD_Result res;

	/* libmicrohttpd took the query off the URL: put the one parameter
	 * there is back for the router */
	snprintf(path, sizeof(path), "%.400s%s%.64s", url, q ? "?state=" : "", q ? q : "");
	status = tg_gate_admin(h->mcp->gate, rq->principal, rq->scopes ? rq->scopes : "",
			       method, path, rq->body, rq->len, &out);
	/* a person's decisions, and every refusal, go on the record */
	if (strcmp(method, "GET") != 0 || status >= 300) {
		char outcome[48];
		json_t *ans = out ? json_loads(out, 0, NULL) : NULL;
		const char *reason = json_string_value(
			json_object_get(json_object_get(ans, "error"), "message"));

		snprintf(outcome, sizeof(outcome), "admin %s %d", method, status);
		/* a refusal is queued, and recorded at a bounded rate; what
		 * was done is answered once it is on the record */
		if (status >= 400) {
			tg_gate_record_refusal(h->mcp->gate, rq->principal, path, outcome, reason);
		} else if (tg_gate_record_event(h->mcp->gate, rq->principal, path, outcome,
						reason) < 0) {
			free(out);
			out = strdup("{\"error\":{\"code\":\"unavailable\",\"message\":\"done, "
				     "but its record could not be written: the audit log stopped\"}}");
			status = 503;
		}
		json_decref(ans);
	}
	res = admin_reply(c, (unsigned)status, out ? out : "{}");
	free(out);
	return res;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct tg_mcp_http *h = cls;
	struct request *rq = *con_cls;
	const char *why;

	(void)version;
	if (!rq) {
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");

		/* shut by the admission as it came in: nothing of it is done */
		if (http_admit_request(h->admit, c) < 0 || !(rq = calloc(1, sizeof(*rq))))
			return MHD_NO;
		*con_cls = rq;
		/* The headers are complete: whatever they decide is answered
		 * now, before a byte of the body is read (and before "100
		 * Continue"): the checks against DNS rebinding, the endpoint,
		 * the caller's token, a declared length over the ceiling. */
		why = http_origin_refused(h->addr, h->port, c);
		if (why)
			return http_error(c, MHD_HTTP_FORBIDDEN, RPC_INVALID_REQUEST, why);
		rq->admin = strncmp(url, ADMIN_PREFIX, strlen(ADMIN_PREFIX)) == 0;
		if (rq->admin && !h->mcp->policy)
			return admin_reply(c, 404, "{\"error\":{\"code\":\"not_found\",\"message\":"
					   "\"the admin API needs a policy (serve --policy --state)\"}}");
		if (!rq->admin && strcmp(url, ENDPOINT) != 0 && strcmp(url, METRICS) != 0)
			return http_error(c, MHD_HTTP_NOT_FOUND, RPC_INVALID_REQUEST,
					  "Not Found: the MCP endpoint is /mcp");
		switch (mcp_http_identify(h->mcp, MHD_lookup_connection_value(c, MHD_HEADER_KIND,
									      "Authorization"),
					  rq->principal, sizeof(rq->principal), &rq->scopes, rq->why,
					  sizeof(rq->why))) {
		case -1:
			tg_gate_record_refusal(h->mcp->gate, "", url, "unauthorized", rq->why);
			return unauthorized(c, rq->why);
		case 1: /* a token holder: may keep its connection between requests */
			if ((why = http_admit_trust(h->admit, c, rq->principal)))
				return http_error(c, MHD_HTTP_TOO_MANY_REQUESTS, RPC_INVALID_REQUEST, why);
		}
		/* the counters: they show every principal's calls by tool, so
		 * with a policy only to those who decide (an approve scope),
		 * never to any agent the server would serve */
		if (strcmp(url, METRICS) == 0 && h->mcp->policy && !tg_scopes_approve_any(rq->scopes))
			return http_error(c, MHD_HTTP_FORBIDDEN, RPC_INVALID_REQUEST,
					  "Forbidden: GET /metrics needs a token with an approve scope "
					  "(docs/METRICS.md)");
		if (strcmp(url, METRICS) == 0)
			return metrics_reply(h, c, method);
		if (rq->admin && cl && strtoull(cl, NULL, 10) > ADMIN_MAX_BODY)
			return admin_reply(c, 413, ADMIN_TOO_LARGE);
		if (cl && strtoull(cl, NULL, 10) > MCP_MAX_MESSAGE) {
			rq->too_large = 1;
			return http_error(c, MHD_HTTP_CONTENT_TOO_LARGE, RPC_INVALID_REQUEST,
					  "Payload Too Large: a message is at most 4194304 bytes");
		}
		return MHD_YES;
	}
	if (*upload_size) {
		if (!rq->too_large &&
		    rq->len + *upload_size > (rq->admin ? ADMIN_MAX_BODY : MCP_MAX_MESSAGE))
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
	if (rq->too_large && rq->admin)
		return admin_reply(c, 413, ADMIN_TOO_LARGE);
	if (rq->too_large)
		return http_error(c, MHD_HTTP_CONTENT_TOO_LARGE, RPC_INVALID_REQUEST,
				  "Payload Too Large: a message is at most 4194304 bytes");
	if (rq->admin)
		return admin_answer(h, c, rq, url, method);
	if (strcmp(method, "POST") == 0)
		return do_post(h, c, rq, rq->principal);
	if (strcmp(method, "DELETE") == 0)
		return do_delete(h, c, rq->principal);
	if (strcmp(method, "GET") == 0)
		return do_get(h, c, rq->principal);
	{
		struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"",
									 MHD_RESPMEM_PERSISTENT);
		enum MHD_Result res;

		if (!r)
			return MHD_NO;
		MHD_add_response_header(r, "Allow", "POST, GET, DELETE");
		res = MHD_queue_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, r);
		MHD_destroy_response(r);
		return res;
	}
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct tg_mcp_http *h = cls;
	struct request *rq = *con_cls;

	http_admit_done(h->admit, c, toe == MHD_REQUEST_TERMINATED_COMPLETED_OK);
	if (rq) {
		free(rq->body);
		free(rq->scopes);
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
	if (http_admit_new(m->http_header_timeout, m->tokens || m->policy, &h->admit, err) < 0) {
		free(h);
		return -1;
	}
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->idle, NULL);
	/* poll, not select: a descriptor past 1024 (long-lived streams make
	 * them many) must not refuse every new connection */
	h->daemon = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD |
					     MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL |
					     MHD_USE_ERROR_LOG,
				     (uint16_t)port, http_admit_accept, h->admit, handle, h,
				     MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
				     MHD_OPTION_NOTIFY_COMPLETED, completed, h,
				     MHD_OPTION_NOTIFY_CONNECTION, http_admit_notify, h->admit,
				     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
				     /* a backstop: http_admit_accept refuses first, and counts it */
				     MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MHD_LIMIT,
				     MHD_OPTION_END);
	if (!h->daemon) {
		http_admit_free(h->admit);
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
	mcp_watch(m, &h->watcher, http_changed, h);
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
	struct http_listener *l;
	struct timespec deadline;

	if (!h)
		return;
	mcp_unwatch(h->mcp, &h->watcher);
	/* every session ends, its calls cancelled first, so that nothing
	 * holds a connection thread the daemon's stop waits for */
	pthread_mutex_lock(&h->lock);
	h->stopping = 1;
	/* subscriptions end gracefully, with their completion result */
	for (l = h->listeners; l; l = l->next)
		mcp_stream_send(l->st, mcp_listen_complete(l->id), 1);
	for (hs = h->sessions; hs; hs = hs->next) {
		hs->ended = 1;
		end_streams(hs);
		mcp_session_cancel(&hs->s);
	}
	/* the completion results go out before the connections close: a
	 * listener leaves the list once its reader read the last event (a
	 * client that reads nothing gets 2 s) */
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 2;
	while (h->listeners && pthread_cond_timedwait(&h->idle, &h->lock, &deadline) == 0)
		;
	pthread_mutex_unlock(&h->lock);
	MHD_stop_daemon(h->daemon);
	http_admit_free(h->admit); /* every connection closed */
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
