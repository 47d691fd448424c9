/*
 * The server-sent events parser (sse.h): lines ended by CR LF, LF or CR,
 * the fields event, data and id (retry and the rest ignored, comments
 * skipped), an event handed on at its blank line, as the WHATWG HTML
 * standard's "Server-sent events" interprets a stream. The Streamable
 * HTTP bridge (http.c) reads MCP answers with it; tests/fuzz/fuzz_sse.c
 * drives it.
 *
 * Must never: hold more than max + 1 bytes of a line or of an event, read
 * past what it was fed, or hand on an event the stream did not end with
 * a blank line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "upstream/sse.h"

void sse_init(struct sse_parser *p, size_t max)
{
	memset(p, 0, sizeof(*p));
	p->max = max;
}

void sse_release(struct sse_parser *p)
{
	free(p->line);
	free(p->data);
	p->line = p->data = NULL;
	p->line_len = p->line_cap = p->data_len = p->data_cap = 0;
}

static int fail(struct sse_parser *p, const char *why)
{
	p->spent = 1;
	snprintf(p->why, sizeof(p->why), "%s", why);
	return -1;
}

/* buf (at *cap bytes) grown to hold need bytes, never past limit. */
static int grow(char **buf, size_t *cap, size_t need, size_t limit)
{
	size_t n = *cap ? *cap : 4096;
	char *b;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if (n > limit)
		n = limit;
	if (n < need)
		return -1;
	b = realloc(*buf, n);
	if (!b)
		return -1;
	*buf = b;
	*cap = n;
	return 0;
}

/* The blank line: the event so far to fn, and a fresh one begun. */
static int dispatch(struct sse_parser *p, sse_event_fn fn, void *ctx)
{
	const char *type = p->type[0] ? p->type : "message";
	int rc;

	if (!p->data_len) {
		/* no data field: no event, and its type is forgotten */
		p->type[0] = '\0';
		return 0;
	}
	/* the LF after the last data line is no part of the data; its
	 * place holds the NUL */
	p->data_len--;
	p->data[p->data_len] = '\0';
	rc = fn(ctx, type, p->data, p->data_len, p->id);
	p->data_len = 0;
	p->type[0] = '\0';
	return rc < 0 ? fail(p, "stopped by its reader") : 0;
}

static int field(struct sse_parser *p, const char *name, size_t nlen, const char *value,
		 size_t vlen)
{
	if (nlen == 5 && memcmp(name, "event", 5) == 0) {
		if (vlen > SSE_MAX_TYPE)
			return fail(p, "an event type over 64 bytes");
		memcpy(p->type, value, vlen);
		p->type[vlen] = '\0';
	} else if (nlen == 4 && memcmp(name, "data", 4) == 0) {
		/* the value and its LF, at most max + 1 together: the last LF
		 * goes at dispatch */
		if (p->data_len + vlen + 1 > p->max + 1)
			return fail(p, "an event over its bound");
		if (grow(&p->data, &p->data_cap, p->data_len + vlen + 1, p->max + 1) < 0)
			return fail(p, "out of memory");
		memcpy(p->data + p->data_len, value, vlen);
		p->data_len += vlen;
		p->data[p->data_len++] = '\n';
	} else if (nlen == 2 && memcmp(name, "id", 2) == 0) {
		/* the format ignores an id with a NUL; one past the bound is
		 * ignored too, rather than kept cut */
		if (vlen <= SSE_MAX_ID && !memchr(value, '\0', vlen)) {
			memcpy(p->id, value, vlen);
			p->id[vlen] = '\0';
		}
	}
	/* retry, and any other field: ignored */
	return 0;
}

static int line(struct sse_parser *p, sse_event_fn fn, void *ctx)
{
	const char *l = p->line ? p->line : "", *colon, *value;
	size_t len = p->line_len, nlen, vlen;

	if (!p->started) {
		p->started = 1;
		if (len >= 3 && memcmp(l, "\xEF\xBB\xBF", 3) == 0) {
			l += 3;
			len -= 3;
		}
	}
	if (!len)
		return dispatch(p, fn, ctx);
	if (l[0] == ':')
		return 0; /* a comment: a keep-alive, usually */
	colon = memchr(l, ':', len);
	if (!colon)
		return field(p, l, len, "", 0);
	nlen = (size_t)(colon - l);
	value = colon + 1;
	vlen = len - nlen - 1;
	if (vlen && value[0] == ' ') {
		value++;
		vlen--;
	}
	return field(p, l, nlen, value, vlen);
}

int sse_feed(struct sse_parser *p, const char *buf, size_t len, sse_event_fn fn, void *ctx)
{
	size_t i = 0, j;

	if (p->spent)
		return -1;
	while (i < len) {
		if (p->after_cr) {
			p->after_cr = 0;
			if (buf[i] == '\n') {
				i++;
				continue;
			}
		}
		for (j = i; j < len && buf[j] != '\n' && buf[j] != '\r'; j++)
			;
		if (j > i) {
			if (p->line_len + (j - i) > p->max)
				return fail(p, "a line over its bound");
			if (grow(&p->line, &p->line_cap, p->line_len + (j - i), p->max) < 0)
				return fail(p, "out of memory");
			memcpy(p->line + p->line_len, buf + i, j - i);
			p->line_len += j - i;
		}
		if (j == len)
			break;
		p->after_cr = buf[j] == '\r';
		i = j + 1;
		if (line(p, fn, ctx) < 0)
			return -1;
		p->line_len = 0;
	}
	return 0;
}
