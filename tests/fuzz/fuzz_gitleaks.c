/*
 * libFuzzer entry point: an operator's gitleaks configuration
 * (src/obs/redact_load.c, its expressions through redact_re2.c) on
 * arbitrary bytes, then its rules at work (redact_x.c). Never a crash or
 * a hang; a configuration is loaded or refused with a message naming the
 * file (never "out of memory": nothing fails allocations here); one that
 * loads redacts a fixed text the same in one call and in a stream cut at
 * points drawn from the input, and every finding lies inside the text.
 * The text is some 45 KiB (lines repeated): more than two blocks, so that
 * a stream decides them from bytes held back, as it would a tool's.
 *
 * The bytes are a file's (a memfd, read by its /proc path), as serve
 * reads one. Run with a corpus directory of its own first:
 *   build-fuzz/fuzz_gitleaks CORPUS tests/fuzz/seeds/fuzz_gitleaks
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "toolgate/redact.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char sample[] =
	"log corp_a1b2c3d4e5f6 token=Zq8xW2pL9vB4nM7k ok\n"
	"BEGIN\nq12345\nEND\n"
	"AKIAQWERTYUIOPASDF12 aws and a password: \"Summer2024!x\"\n"
	"b'Y29ycF9hMWIyYzNkNGU1ZjYgaGVsbG8gd29ybGQ='\n"
	"the quick brown fox jumps over the lazy dog 0123456789 ABCDEF\n";

#define REPEAT 150

struct sink {
	char buf[REPEAT * 512];
	size_t len;
};

static char text[sizeof(sample) * REPEAT];
static size_t text_len;

static int sink_write(void *arg, const char *b, size_t n, struct tg_error *err)
{
	struct sink *s = arg;

	(void)err;
	if (s->len + n > sizeof(s->buf))
		abort(); /* markers are short: the output cannot grow so much */
	memcpy(s->buf + s->len, b, n);
	s->len += n;
	return 0;
}

static void check_same(const uint8_t *data, size_t size)
{
	static struct sink sink;
	struct tg_redact_out one;
	struct tg_redact_stream *st;
	struct tg_error err;
	size_t off = 0, n, k = 0, nf, i;
	const struct tg_redact_finding *f;

	if (!text_len)
		for (i = 0; i < REPEAT; i++) {
			memcpy(text + text_len, sample, sizeof(sample) - 1);
			text_len += sizeof(sample) - 1;
		}
	n = text_len;
	sink.len = 0;
	if (tg_redact(text, n, &one, &err) < 0 || tg_redact_stream_new(sink_write, &sink, &st, &err) < 0)
		abort();
	while (off < n) {
		size_t c = 1 + (size ? (size_t)data[k++ % size] * 37 % 9000 : 7);

		if (c > n - off)
			c = n - off;
		if (tg_redact_stream_feed(st, text + off, c, &err) < 0)
			abort();
		off += c;
	}
	if (tg_redact_stream_finish(st, &err) < 0)
		abort();
	f = tg_redact_stream_findings(st, &nf, NULL, NULL);
	if (sink.len != one.len || memcmp(sink.buf, one.text, one.len) != 0 || nf != one.nfindings)
		abort();
	for (i = 0; i < nf; i++)
		if (f[i].offset + f[i].length > n || f[i].offset != one.findings[i].offset ||
		    f[i].length != one.findings[i].length)
			abort();
	tg_redact_stream_free(st);
	tg_redact_out_release(&one);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_redact_ruleset *rs = NULL;
	struct tg_error err;
	char path[64];
	int fd = memfd_create("fuzz.toml", MFD_CLOEXEC);

	if (fd < 0)
		abort();
	if (size && write(fd, data, size) != (ssize_t)size)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (tg_redact_ruleset_load(path, &rs, &err) < 0) {
		if (rs || err.code == TG_ERR_NOMEM || strncmp(err.msg, path, strlen(path)) != 0)
			abort();
		close(fd);
		return 0;
	}
	close(fd);
	tg_redact_use(rs);
	check_same(data, size);
	tg_redact_use(NULL);
	tg_redact_ruleset_free(rs);
	return 0;
}
