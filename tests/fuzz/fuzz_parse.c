/*
 * libFuzzer entry point: the quantity parsers (src/util/parse.c) that read
 * --memory, --timeout, --cpus, --pids and the like. Any input must give a
 * value or a clear error, never a crash or a read past the ceiling.
 *
 *   make fuzz && build-fuzz/fuzz_parse -max_total_time=60
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_error err;
	char *s = malloc(size + 1);
	uint64_t v;
	unsigned m;

	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (parse_size(s, &v, &err) < 0 && !err.msg[0])
		abort();
	if (parse_duration(s, &v, &err) < 0 && !err.msg[0])
		abort();
	if (parse_cpus(s, &m, &err) == 0 && (m == 0 || m > 1024000))
		abort();
	if (parse_uint(s, 1, 65536, &v, &err) == 0 && (v < 1 || v > 65536))
		abort();
	free(s);
	return 0;
}
