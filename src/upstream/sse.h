/*
 * A server-sent events parser (the WHATWG HTML "Server-sent events"
 * stream format) with a ceiling: what the Streamable HTTP bridge
 * (http.c) reads an MCP server's text/event-stream answers with. Private
 * to src/upstream/; sse.c owns it.
 *
 * Bytes are fed as they come, in pieces of any size; each event is handed
 * to the callback when its blank line is seen: its type ("message" when
 * the stream gave none), its data (the data lines joined by LF, the last
 * LF removed), and the last event id so far. An event, or a line, over
 * the ceiling is an error and the parser is spent: nothing of it is
 * buffered past max + 1 bytes. What the stream ends on without a blank
 * line is no event (the format says so), and is never handed on.
 */
#ifndef TG_UPSTREAM_SSE_H
#define TG_UPSTREAM_SSE_H

#include <stddef.h>

#define SSE_MAX_TYPE 64   /* an event's type, bytes: longer is an error */
#define SSE_MAX_ID 256    /* an id, bytes: a longer one is ignored */

/* Called for each event; data is NUL-terminated (len bytes, which may
 * hold NULs of the stream's), valid for the call. Returns 0 to go on, or
 * -1 to stop: the feed returns -1 with the parser spent. */
typedef int (*sse_event_fn)(void *ctx, const char *type, const char *data, size_t len,
			    const char *id);

struct sse_parser {
	size_t max;               /* of one line, and of one event's data */
	char *line;               /* the line being read (up to max + 1) */
	size_t line_len, line_cap;
	char *data;               /* the event's data so far */
	size_t data_len, data_cap;
	char type[SSE_MAX_TYPE + 1];
	char id[SSE_MAX_ID + 1];
	int after_cr;             /* the last byte was a CR: an LF now ends nothing */
	int started;              /* past a leading BOM */
	int spent;                /* an error was returned: everything is refused */
	char why[96];             /* what the error was */
};

/* A parser whose lines and events are at most max bytes. Allocates
 * nothing until fed. */
void sse_init(struct sse_parser *p, size_t max);
/* Frees what p holds; p may be fed again only after sse_init. */
void sse_release(struct sse_parser *p);

/* Feed len bytes. 0, or -1: a line or an event over max, out of memory,
 * or the callback stopped; p->why says which, and every later feed is
 * -1 too. */
int sse_feed(struct sse_parser *p, const char *buf, size_t len, sse_event_fn fn, void *ctx);

#endif
