/*
 * The event streams of the Streamable HTTP transport (the streams
 * themselves are stream.c's): a POST answered as server-sent events
 * while its call reports, a legacy session's GET stream and its resuming
 * with Last-Event-ID, and the 2026-07-28 subscriptions/listen streams,
 * which stay open until the client closes them or the server stops, and
 * hear of catalogue reloads (docs/MCP.md).
 *
 * It owns the connection's side of a stream (the reader), the calls run
 * on their own thread for an SSE answer, and the list of subscriptions
 * with its ceilings; it never reads a request's body nor decides who the
 * caller is or what it may: the request arrives here checked.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp/http_int.h"
#include "mcp/mcp_int.h"
#include "toolgate/catalog.h"
#include "util/json_wide.h"

#define MAX_SSE_BACKLOG (4u << 20) /* unread notification bytes of one answer */
#define SSE_RETRY_MS 1000          /* the reconnection delay SSE answers announce */

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
			http_session_forget_stream(r->hs, r->st);
		pthread_mutex_unlock(&r->h->lock);
		http_session_put(r->h, r->hs);
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
	struct mcp_text raw;        /* its text (malloc'd) when its arguments
				     * need it (session_exact_arguments) */
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
	free((char *)k->raw.text);
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
	json_t *resp = mcp_session_dispatch(&k->hs->s, k->msg, &k->raw, &sink, k->scopes);

	pthread_mutex_lock(&k->lock);
	if (resp && k->plain == NULL && !k->opened && !k->evented && http_meta_version(k->msg)) {
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
	http_session_put(k->h, k->hs);
	call_unref(k);
	return NULL;
}

/* Answer msg as an SSE stream; takes msg and the caller's use of hs (hs
 * is a legacy session's unless msg is modern). */
enum MHD_Result http_answer_sse(struct tg_mcp_http *h, struct MHD_Connection *c,
				struct http_session *hs, json_t *msg, const struct mcp_text *raw,
				const char *scopes)
{
	struct call *k = calloc(1, sizeof(*k));
	int modern = http_meta_version(msg) != NULL;
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
	/* the request's body ends before the call: a copy, only where a
	 * number of the arguments needs their own text (none: refused, not
	 * rounded) */
	if (k && raw && raw->text && json_wide_has_long(raw->text, raw->len)) {
		k->raw.text = strndup(raw->text, raw->len);
		k->raw.len = raw->len;
	}
	if (!k || !k->st || (k->raw.len && !k->raw.text)) {
		if (k && k->st)
			mcp_stream_unref(k->st);
		free(k);
		json_decref(msg);
		http_session_put(h, hs);
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
		http_session_keep_stream(hs, k->st);
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
		enum MHD_Result rc = body ? http_reply(c, (unsigned)mcp_modern_status(plain),
							"application/json", body, NULL)
					  : http_reply(c, MHD_HTTP_ACCEPTED, NULL, "", NULL);

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
int http_may_report(struct tg_mcp_http *h, json_t *msg)
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
	yes = tg_catalog_resolve(cat, name, NULL, &k, &err) == 0 &&
	      (k->executor == TG_EXEC_COMMAND || k->executor == TG_EXEC_UPSTREAM);
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
enum MHD_Result http_answer_listen(struct tg_mcp_http *h, struct MHD_Connection *c,
				   struct http_session *hs, json_t *msg, const char *principal)
{
	json_t *ack = NULL, *resp;
	struct mcp_sink sink = { capture, &ack };
	struct http_listener *l, *it;
	struct mcp_stream *st;
	enum MHD_Result rc;
	unsigned n = 0, mine = 0;

	resp = mcp_session_dispatch(&hs->s, msg, NULL, &sink, NULL); /* listen: no tool calls */
	http_session_put(h, hs);
	if (resp || !ack) {
		char *body = resp ? json_dumps(resp, JSON_COMPACT) : NULL;

		rc = body ? http_reply(c, (unsigned)mcp_modern_status(resp), "application/json",
				       body, NULL)
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
void http_changed(void *ctx, const struct mcp_change *c)
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

/* Stopping: each subscription ends gracefully, with its completion
 * result (the caller holds lock). */
void http_listeners_complete(struct tg_mcp_http *h)
{
	struct http_listener *l;

	for (l = h->listeners; l; l = l->next)
		mcp_stream_send(l->st, mcp_listen_complete(l->id), 1);
}

/* ---- GET streams --------------------------------------------------------------- */

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
enum MHD_Result http_get_stream(struct tg_mcp_http *h, struct MHD_Connection *c,
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

	if (!http_accepts(accept, "text/event-stream"))
		return http_error(c, MHD_HTTP_NOT_ACCEPTABLE, RPC_INVALID_REQUEST,
				  "Not Acceptable: the GET stream is text/event-stream");
	if (!sid)
		return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
				  "Bad Request: no Mcp-Session-Id (a stream belongs to a session)");
	if (last && parse_event_id(last, &number, &event) < 0)
		return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
				  "Bad Request: Last-Event-ID is not an event id of this server");
	hs = http_session_get(h, sid);
	if (!hs)
		return http_error(c, MHD_HTTP_NOT_FOUND, RPC_INVALID_REQUEST,
				  "Not Found: no such session (it ended or expired)");
	if (strcmp(hs->s.principal, principal) != 0 || (ver && !mcp_version_known(ver))) {
		int other = strcmp(hs->s.principal, principal) != 0;

		http_session_put(h, hs);
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
			http_session_put(h, hs);
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
		http_session_put(h, hs);
		return http_error(c, MHD_HTTP_INTERNAL_SERVER_ERROR, RPC_INTERNAL_ERROR,
				  "out of memory");
	}
	pthread_mutex_lock(&hs->s.lock);
	old = hs->get;
	if (old && mcp_stream_busy(old)) {
		pthread_mutex_unlock(&hs->s.lock);
		mcp_stream_unref(st);
		http_session_put(h, hs);
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
		http_session_forget_stream(hs, old);
	}
	http_session_keep_stream(hs, st);
	pthread_mutex_unlock(&h->lock);
	mcp_stream_unref(old);
	{
		struct reader r = { h, hs, st, NULL, NULL, 0 };

		return serve_stream(c, &r, 0);
	}
}
