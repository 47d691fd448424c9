/*
 * libFuzzer entry point: ECMA-262 expressions read and written as PCRE2's
 * (src/schema/ecma.c), as contracts' "pattern" bring them. Never a crash
 * or a hang; an expression is compiled or refused with a message naming
 * it; one that compiles matches a fixed text within the limits.
 *
 * Run with a corpus directory of its own first:
 *   build-fuzz/fuzz_ecma CORPUS tests/fuzz/seeds/fuzz_ecma
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char text[] = "\xc3\xa9" "cole 2020-2020 \t\v\n\xe2\x80\xa8 ab \xf0\x9f\x98\x80 {,3} ]\\";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_error err;
	pcre2_code *re = regex_compile((const char *)data, size, &err);

	if (!re) {
		if (err.code == TG_ERR_NOMEM || strncmp(err.msg, "pattern '", 9) != 0)
			abort();
		return 0;
	}
	if (regex_search(re, text, sizeof(text) - 1) < -1)
		abort();
	pcre2_code_free(re);
	return 0;
}
