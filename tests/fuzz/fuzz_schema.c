/*
 * libFuzzer entry point: schema compilation and validation. The input is
 * split at the first NUL byte into a schema and an instance; both are
 * untrusted (contracts come from tool authors, instances from agents). Any
 * input must compile or be refused, validate or be refused, in bounded
 * time and memory, and get the same answer with and without an error list.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/schema.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t slen = nul ? (size_t)(nul - data) : size;
	struct tg_schema_error ev[4];
	struct tg_schema_errors errors = { ev, 4, 0 };
	struct tg_schema *s;
	struct tg_error err;
	int rc;

	if (tg_schema_compile((const char *)data, slen, NULL, &s, &err) < 0)
		return 0;
	if (nul) {
		rc = tg_schema_validate(s, (const char *)nul + 1, size - slen - 1, &errors, &err);
		if (rc == 0 && errors.n == 0)
			abort(); /* invalid must say why */
		/* without an error list validation takes its fast paths and
		 * stops at the first failure: valid or not must not change
		 * (invalid may become "limit reached" when the error list goes
		 * on to a catastrophic pattern, and the reverse) */
		if ((tg_schema_validate(s, (const char *)nul + 1, size - slen - 1, NULL, &err) == 1) !=
		    (rc == 1))
			abort();
	}
	tg_schema_free(s);
	return 0;
}
