/*
 * libFuzzer entry point: the secret redactor (src/obs/redact.c), which
 * reads whatever a tool prints. Whatever the bytes: no crash, no leak, no
 * read outside the input; a stream fed in chunks (sizes drawn from the
 * input itself, from 1 byte to more than the window; the input also
 * repeated past three windows) writes exactly what
 * one call writes, with the same findings and flags; and no finding of 8
 * bytes or more (up to the 256 a scan remembers) is left in the output
 * after it was found. The input is also checked in base64 (the encoded
 * runs' decoder is a parser too: runs cut at the cap, decoded again,
 * wrapped lines), and as a value (tg_redact_value: a value it found
 * nothing in comes back as it was; one it decoded had findings).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct sink {
	char *p;
	size_t len, cap;
};

static int sink_write(void *arg, const char *buf, size_t n, struct tg_error *err)
{
	struct sink *s = arg;

	(void)err;
	if (s->len + n > s->cap) {
		s->cap = (s->len + n) * 2;
		s->p = realloc(s->p, s->cap);
		if (!s->p)
			abort();
	}
	memcpy(s->p + s->len, buf, n);
	s->len += n;
	return 0;
}

/* Chunk sizes from the input's own bytes: small ones mostly, a window's
 * worth now and then. */
static size_t next_chunk(uint32_t *x)
{
	*x = *x * 1103515245u + 12345u;
	switch ((*x >> 16) % 8) {
	case 0:
		return 1;
	case 1:
		return 2 + (*x >> 20) % 7;
	case 7:
		return TG_REDACT_WINDOW / 2 + (*x >> 8) % (2 * TG_REDACT_WINDOW);
	default:
		return 1 + (*x >> 12) % 300;
	}
}

/* Later than where it was found, the finding's bytes may only be inside
 * another finding (the markers stand there). */
static void check_no_repeat(const uint8_t *in, size_t n, const struct tg_redact_out *o)
{
	size_t i, j, from;

	for (i = 0; i < o->nfindings && i < 64; i++) {
		const struct tg_redact_finding *f = &o->findings[i];
		const uint8_t *needle = in + f->offset;

		if (f->length < 8 || f->length > 256)
			continue;
		from = 0;
		for (j = 0; j <= o->nfindings; j++) {
			size_t to = j < o->nfindings ? o->findings[j].offset : n;
			const uint8_t *hit;

			/* the uncovered input from..to is output as it is */
			if (to > from && to - from >= f->length) {
				hit = memmem(in + from, to - from, needle, f->length);
				while (hit && (size_t)(hit - in) < f->offset)
					hit = memmem(hit + 1, (size_t)(in + to - hit - 1), needle,
						     f->length);
				if (hit) {
					fprintf(stderr, "finding %zu (%s at %llu, %llu bytes) left at %zu\n",
						i, f->rule, (unsigned long long)f->offset,
						(unsigned long long)f->length, (size_t)(hit - in));
					abort();
				}
			}
			if (j < o->nfindings)
				from = o->findings[j].offset + o->findings[j].length;
		}
	}
}

static void check(const uint8_t *data, size_t size);

/* in[0..n) in base64, in lines of width (0: one line), after "b64: " */
static uint8_t *encoded(const uint8_t *in, size_t n, size_t width, size_t *len)
{
	static const char d[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint8_t *out = malloc(n * 2 + 16), *o = out;
	size_t i, k, line = 0;

	if (!out)
		abort();
	memcpy(o, "b64: ", 5);
	o += 5;
	for (i = 0; i < n; i += 3) {
		unsigned x = (unsigned)in[i] << 16 | (i + 1 < n ? (unsigned)in[i + 1] << 8 : 0) |
			     (i + 2 < n ? in[i + 2] : 0);

		for (k = 0; k < 4; k++) {
			if (width && line == width) {
				*o++ = '\n';
				line = 0;
			}
			*o++ = (uint8_t)(k * 6 < (n - i) * 8 ? d[(x >> (18 - 6 * k)) & 63] : '=');
			line++;
		}
	}
	*len = (size_t)(o - out);
	return out;
}

static void check_value(const uint8_t *data, size_t size)
{
	struct tg_redact_out v;
	struct tg_error err;

	if (tg_redact_value((const char *)data, size, &v, &err) < 0)
		abort();
	if (v.total == 0 && (v.len != size || (size && memcmp(v.text, data, size) != 0)))
		abort();
	if ((v.flags & TG_REDACT_DECODED) && v.total == 0)
		abort();
	tg_redact_out_release(&v);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *big, *enc;
	size_t n;

	check(data, size);
	check_value(data, size);
	if (size && (data[0] & 2)) {
		enc = encoded(data, size, data[0] & 4 ? 76 : 0, &n);
		check(enc, n);
		check_value(enc + 5, n - 5);
		free(enc);
	}
	/* inputs past the window too (libFuzzer's stay small): the input
	 * repeated to 3 windows, when its first byte is odd, so that a
	 * stream compacts, carries over and redacts repeats */
	if (size == 0 || !(data[0] & 1))
		return 0;
	big = malloc(3 * TG_REDACT_WINDOW + size);
	if (!big)
		abort();
	for (n = 0; n < 3 * TG_REDACT_WINDOW; n += size)
		memcpy(big + n, data, size);
	check(big, n);
	free(big);
	return 0;
}

static void check(const uint8_t *data, size_t size)
{
	struct tg_redact_out one;
	struct tg_redact_stream *st;
	const struct tg_redact_finding *f;
	struct sink sink = { NULL, 0, 0 };
	struct tg_error err;
	uint32_t x = 2166136261u;
	size_t i, nf, off;
	uint64_t total;
	unsigned flags;

	for (i = 0; i < size && i < 64; i++)
		x = (x ^ data[i]) * 16777619u;
	if (tg_redact((const char *)data, size, &one, &err) < 0)
		abort();
	if (tg_redact_stream_new(sink_write, &sink, &st, &err) < 0)
		abort();
	for (off = 0; off < size;) {
		size_t c = next_chunk(&x);

		if (c > size - off)
			c = size - off;
		if (tg_redact_stream_feed(st, data + off, c, &err) < 0)
			abort();
		off += c;
	}
	if (tg_redact_stream_finish(st, &err) < 0)
		abort();
	f = tg_redact_stream_findings(st, &nf, &total, &flags);
	if (sink.len != one.len || (one.len && memcmp(sink.p, one.text, one.len) != 0)) {
		fprintf(stderr, "stream output differs from one call's (%zu vs %zu bytes)\n",
			sink.len, one.len);
		abort();
	}
	if (nf != one.nfindings || total != one.total || flags != one.flags)
		abort();
	for (i = 0; i < nf; i++)
		if (f[i].offset != one.findings[i].offset || f[i].length != one.findings[i].length ||
		    f[i].line != one.findings[i].line || strcmp(f[i].rule, one.findings[i].rule) != 0 ||
		    f[i].flags != one.findings[i].flags)
			abort();
	check_no_repeat(data, size, &one);
	tg_redact_stream_free(st);
	tg_redact_out_release(&one);
	free(sink.p);
}
