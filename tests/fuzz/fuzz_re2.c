/*
 * libFuzzer entry point: Go's regular expressions (RE2) read and written
 * as PCRE2's (src/obs/redact_re2.c), as an operator's gitleaks rules
 * bring them. Never a crash or a hang; an expression is compiled or
 * refused with a message naming it (never "out of memory"); one that
 * compiles matches a fixed text, whatever it is, within the limits.
 *
 * Run with a corpus directory of its own first:
 *   build-fuzz/fuzz_re2 CORPUS tests/fuzz/seeds/fuzz_re2
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "obs/redact_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char text[] = "corp_a1b2c3d4e5f6 \t\v\n\xc3\xa9 BEGIN q12345 END {,3} ]\\ aaaa\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_error err;
	pcre2_code *re = redact_re2_compile((const char *)data, size, "re", &err);
	pcre2_match_context *mc;
	pcre2_match_data *md;

	if (!re) {
		if (err.code == TG_ERR_NOMEM || strncmp(err.msg, "re: ", 4) != 0)
			abort();
		return 0;
	}
	mc = pcre2_match_context_create(NULL);
	md = pcre2_match_data_create_from_pattern(re, NULL);
	if (!mc || !md)
		abort();
	pcre2_set_match_limit(mc, 100000);
	pcre2_set_depth_limit(mc, 1000);
	pcre2_match(re, (PCRE2_SPTR)text, sizeof(text) - 1, 0, 0, md, mc);
	pcre2_match_data_free(md);
	pcre2_match_context_free(mc);
	pcre2_code_free(re);
	return 0;
}
