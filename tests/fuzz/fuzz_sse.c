/*
 * libFuzzer entry point: the server-sent events parser (src/upstream/sse.c)
 * that reads an HTTP upstream's text/event-stream answers. The input is
 * fed twice, whole and in pieces whose sizes the input's own bytes draw,
 * with a small bound (so that both sides of it are reached): the two feeds
 * must hand on the same events (type, data, id) and end the same way, and
 * no event may be over the bound, nor have an empty type.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "upstream/sse.h"

#define MAX 512

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct digest {
	uint64_t h;
	unsigned n;
};

static void mix(struct digest *d, const char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		d->h = (d->h ^ (uint8_t)p[i]) * 1099511628211ull;
	d->h = (d->h ^ 0xff) * 1099511628211ull; /* a separator no byte is */
}

static int on_event(void *ctx, const char *type, const char *data, size_t len, const char *id)
{
	struct digest *d = ctx;

	if (len > MAX || !type[0] || data[len] != '\0' || strlen(id) > SSE_MAX_ID)
		abort();
	mix(d, type, strlen(type));
	mix(d, data, len);
	mix(d, id, strlen(id));
	d->n++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct digest whole = { 14695981039346656037ull, 0 }, parts = whole;
	struct sse_parser p;
	const char *text = (const char *)data;
	size_t at = 0, step;
	int r1, r2 = 0;

	sse_init(&p, MAX);
	r1 = sse_feed(&p, text, size, on_event, &whole);
	sse_release(&p);
	sse_init(&p, MAX);
	while (at < size && r2 == 0) {
		step = 1 + (uint8_t)text[at] % 7;
		if (step > size - at)
			step = size - at;
		r2 = sse_feed(&p, text + at, step, on_event, &parts);
		at += step;
	}
	sse_release(&p);
	if (r1 != r2 || whole.n != parts.n || whole.h != parts.h)
		abort();
	return 0;
}
