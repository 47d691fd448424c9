/*
 * Server-sent event streams of the Streamable HTTP transport: a POST's
 * answer (what a call reports, then its response), a session's GET
 * stream, a 2026-07-28 subscriptions/listen stream.
 *
 * A stream is a list of formatted events, each numbered; one connection
 * at a time reads it through the stream's cursor. In a legacy session
 * the events carry ids "STREAM-N", and the events are kept after they
 * are read (up to a ceiling in bytes, the oldest dropped first), so that
 * a client whose connection broke can resume with Last-Event-ID and get
 * what followed. A reader that waits longer than the keep-alive period
 * gets an SSE comment, which keeps intermediaries from closing a quiet
 * stream and lets the server notice a client that has gone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp/mcp_int.h"

#define KEEPALIVE_MS 15000
#define DETACHED_BYTES (64u << 10) /* kept of a stream nobody reads */

struct event {
	unsigned long n;
	char *text;                 /* the formatted event */
	size_t len;
	int final;
	struct event *next;
};

struct mcp_stream {
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct event *head, *tail;
	size_t bytes;               /* of the events kept */
	size_t max_bytes;
	unsigned long number;       /* the stream's in its session */
	unsigned long last;         /* the last event's number */
	int ids;                    /* events have ids, and are kept for resuming */
	int done;                   /* no event will follow */
	int delivered;              /* a reader read the final event to its end */
	int attached;               /* a connection reads it */
	unsigned gen;               /* which connection: the last to attach */
	unsigned long cursor;       /* the next event it reads */
	struct event *hint;         /* the event last read, where a search starts */
	size_t cursor_off;          /* bytes of that event it has read */
	int refs;
};

struct mcp_stream *mcp_stream_new(unsigned long number, int ids, size_t max_bytes)
{
	struct mcp_stream *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	pthread_mutex_init(&st->lock, NULL);
	pthread_cond_init(&st->more, NULL);
	st->number = number;
	st->ids = ids;
	st->max_bytes = max_bytes;
	st->refs = 1;
	return st;
}

void mcp_stream_ref(struct mcp_stream *st)
{
	pthread_mutex_lock(&st->lock);
	st->refs++;
	pthread_mutex_unlock(&st->lock);
}

static void event_free(struct event *e)
{
	free(e->text);
	free(e);
}

void mcp_stream_unref(struct mcp_stream *st)
{
	struct event *e, *next;
	int last;

	if (!st)
		return;
	pthread_mutex_lock(&st->lock);
	last = --st->refs == 0;
	pthread_mutex_unlock(&st->lock);
	if (!last)
		return;
	for (e = st->head; e; e = next) {
		next = e->next;
		event_free(e);
	}
	pthread_cond_destroy(&st->more);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

unsigned long mcp_stream_number(const struct mcp_stream *st)
{
	return st->number;
}

/* Drop the oldest events until the kept ones fit, never the final one
 * nor one the reader is halfway through (the caller holds lock). Nobody
 * reading, a stream keeps less: DETACHED_BYTES while its call runs, and
 * only the response once it is done (what a client that resumes needs;
 * the notifications between are best effort). */
static void trim(struct mcp_stream *st)
{
	struct event **p = &st->head, *e, *last = NULL;
	size_t limit = st->attached ? st->max_bytes
		     : st->done	    ? 0
				    : (st->max_bytes < DETACHED_BYTES ? st->max_bytes : DETACHED_BYTES);

	while (st->bytes > limit && (e = *p)) {
		if (e->final || (st->attached && e->n == st->cursor && st->cursor_off)) {
			last = e;
			p = &e->next;
			continue;
		}
		*p = e->next;
		if (st->hint == e)
			st->hint = NULL;
		if (st->tail == e)
			st->tail = last; /* the newest went: the one before it is */
		st->bytes -= e->len;
		event_free(e);
	}
}

/* Append one event: the priming one (json NULL: event 0, an id and the
 * reconnection delay), or a message (json text). */
static void push(struct mcp_stream *st, const char *json, unsigned retry_ms, int final)
{
	struct event *e = calloc(1, sizeof(*e));
	int n;

	if (!e)
		return;
	pthread_mutex_lock(&st->lock);
	if (st->done) {
		pthread_mutex_unlock(&st->lock);
		free(e);
		return;
	}
	e->n = json ? ++st->last : 0;
	if (!json)
		n = asprintf(&e->text, "id: %lu-0\nretry: %u\ndata: \n\n", st->number, retry_ms);
	else if (st->ids)
		n = asprintf(&e->text, "id: %lu-%lu\nevent: message\ndata: %s\n\n", st->number,
			     e->n, json);
	else
		n = asprintf(&e->text, "event: message\ndata: %s\n\n", json);
	if (n < 0) {
		pthread_mutex_unlock(&st->lock);
		free(e);
		return; /* out of memory: the event is lost, not the stream */
	}
	e->len = (size_t)n;
	e->final = final;
	if (st->tail)
		st->tail->next = e;
	else
		st->head = e;
	st->tail = e;
	st->bytes += e->len;
	if (final)
		st->done = 1;
	trim(st);
	pthread_cond_broadcast(&st->more);
	pthread_mutex_unlock(&st->lock);
}

void mcp_stream_prime(struct mcp_stream *st, unsigned retry_ms)
{
	/* SEP-1699: the client learns an event id at once, and how long to
	 * wait before it reconnects */
	push(st, NULL, retry_ms, 0);
}

void mcp_stream_send(struct mcp_stream *st, json_t *msg, int final)
{
	char *json = msg ? json_dumps(msg, JSON_COMPACT) : NULL;

	json_decref(msg);
	if (json)
		push(st, json, 0, final);
	free(json);
}

void mcp_stream_send_text(struct mcp_stream *st, const char *json)
{
	push(st, json, 0, 0);
}

void mcp_stream_end(struct mcp_stream *st)
{
	pthread_mutex_lock(&st->lock);
	st->done = 1;
	trim(st);
	pthread_cond_broadcast(&st->more);
	pthread_mutex_unlock(&st->lock);
}

unsigned mcp_stream_attach(struct mcp_stream *st, unsigned long first)
{
	unsigned gen = 0;

	pthread_mutex_lock(&st->lock);
	if (!st->delivered) {
		/* a reader that attaches takes the stream over: the client
		 * that resumes knows its old connection is gone, though the
		 * server may not have noticed yet */
		st->attached = 1;
		st->cursor = first;
		st->cursor_off = 0;
		st->hint = NULL;
		gen = ++st->gen ? st->gen : ++st->gen;
		pthread_cond_broadcast(&st->more);
	}
	pthread_mutex_unlock(&st->lock);
	return gen;
}

void mcp_stream_detach(struct mcp_stream *st, unsigned gen)
{
	pthread_mutex_lock(&st->lock);
	if (gen == st->gen) {
		st->attached = 0;
		if (!st->ids) {
			/* nothing to resume: whatever comes is dropped */
			st->done = 1;
			st->delivered = 1;
		}
		trim(st);
	}
	pthread_cond_broadcast(&st->more);
	pthread_mutex_unlock(&st->lock);
}

int mcp_stream_busy(struct mcp_stream *st)
{
	int b;

	pthread_mutex_lock(&st->lock);
	b = st->attached;
	pthread_mutex_unlock(&st->lock);
	return b;
}

int mcp_stream_finished(struct mcp_stream *st)
{
	int f;

	pthread_mutex_lock(&st->lock);
	f = st->delivered;
	pthread_mutex_unlock(&st->lock);
	return f;
}

/* The event the cursor is at, or the first after it (the caller holds lock). */
static struct event *at_cursor(struct mcp_stream *st)
{
	struct event *e = st->hint && st->hint->n <= st->cursor ? st->hint : st->head;

	for (; e; e = e->next)
		if (e->n >= st->cursor)
			return e;
	return NULL;
}

ssize_t mcp_stream_read(struct mcp_stream *st, unsigned gen, char *buf, size_t max)
{
	struct event *e;
	struct timespec ts;
	size_t n;

	pthread_mutex_lock(&st->lock);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += KEEPALIVE_MS / 1000;
	while (gen == st->gen && !(e = at_cursor(st)) && !st->done)
		if (pthread_cond_timedwait(&st->more, &st->lock, &ts) == ETIMEDOUT) {
			pthread_mutex_unlock(&st->lock);
			if (max < 3)
				return 0;
			memcpy(buf, ":\n\n", 3); /* a comment: keep-alive */
			return 3;
		}
	if (gen != st->gen) {
		pthread_mutex_unlock(&st->lock);
		return -1; /* another connection took the stream over */
	}
	if (!e) {
		st->delivered = 1;
		pthread_mutex_unlock(&st->lock);
		return -1; /* the end */
	}
	if (e->n != st->cursor) {
		st->cursor = e->n; /* what was between was dropped */
		st->cursor_off = 0;
	}
	n = e->len - st->cursor_off < max ? e->len - st->cursor_off : max;
	memcpy(buf, e->text + st->cursor_off, n);
	st->cursor_off += n;
	st->hint = e;
	if (st->cursor_off == e->len) {
		st->cursor = e->n + 1;
		st->cursor_off = 0;
		if (!st->ids) {
			/* nothing to resume: a read event is let go (it is the
			 * head: earlier ones went the same way) */
			st->head = e->next;
			if (st->tail == e)
				st->tail = NULL;
			st->hint = NULL;
			st->bytes -= e->len;
			event_free(e);
		}
	}
	pthread_mutex_unlock(&st->lock);
	return (ssize_t)n;
}
