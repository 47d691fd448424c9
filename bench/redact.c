/*
 * bench/redact: megabytes a second through the secret redactor (include/
 * toolgate/redact.h) on one core, over a file held in memory: one call
 * over all of it, and a stream fed in 64 KiB writes (what a tool's output
 * goes through). Five rounds of each, the median printed. bench/redact.sh
 * runs it on the mixed corpus beside secretlint. Time is CPU time (the
 * process's): a figure per core that a busy machine does not bend. Not
 * a test: it asserts
 * nothing. docs/BENCHMARKS.md holds the latest figures.
 *
 * usage: redact FILE [ROUNDS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "toolgate/redact.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int discard(void *arg, const char *buf, size_t n, struct tg_error *err)
{
	(void)buf, (void)err;
	*(size_t *)arg += n;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	FILE *f;
	char *data;
	long size;
	int rounds = argc > 2 ? atoi(argv[2]) : 5, r;
	double one[16], str[16];
	struct tg_redact_out o;
	struct tg_error err;
	uint64_t findings = 0;

	if (argc < 2 || rounds < 1 || rounds > 16) {
		fprintf(stderr, "usage: redact FILE [ROUNDS (1-16)]\n");
		return 2;
	}
	f = fopen(argv[1], "rb");
	if (!f || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		perror(argv[1]);
		return 1;
	}
	data = malloc((size_t)size + 1);
	if (!data || fread(data, 1, (size_t)size, f) != (size_t)size) {
		perror(argv[1]);
		return 1;
	}
	fclose(f);
	for (r = 0; r < rounds; r++) {
		struct tg_redact_stream *st;
		size_t out = 0, off;
		double t0 = now_s();

		if (tg_redact(data, (size_t)size, &o, &err) < 0) {
			fprintf(stderr, "redact: %s\n", err.msg);
			return 1;
		}
		one[r] = (double)size / 1e6 / (now_s() - t0);
		findings = o.total;
		tg_redact_out_release(&o);
		t0 = now_s();
		if (tg_redact_stream_new(discard, &out, &st, &err) < 0)
			return 1;
		for (off = 0; off < (size_t)size; off += 65536) {
			size_t n = (size_t)size - off < 65536 ? (size_t)size - off : 65536;

			if (tg_redact_stream_feed(st, data + off, n, &err) < 0)
				return 1;
		}
		if (tg_redact_stream_finish(st, &err) < 0)
			return 1;
		tg_redact_stream_free(st);
		str[r] = (double)size / 1e6 / (now_s() - t0);
	}
	qsort(one, (size_t)rounds, sizeof(double), cmp_double);
	qsort(str, (size_t)rounds, sizeof(double), cmp_double);
	printf("{\"bytes\":%ld,\"findings\":%llu,\"one_call_mbps\":%.1f,\"stream_mbps\":%.1f}\n",
	       size, (unsigned long long)findings, one[rounds / 2], str[rounds / 2]);
	free(data);
	return 0;
}
