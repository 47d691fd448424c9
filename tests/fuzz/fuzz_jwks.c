/*
 * libFuzzer entry point: a JSON Web Key Set as an identity provider serves
 * it (src/auth/jwks.c), imported into libcrypto and libsodium keys. Any bytes
 * give a key set or a reason, never a crash; and a key the set holds is
 * looked up and used for a signature check without harm.
 *
 *   make fuzz && mkdir -p build-fuzz/corpus/fuzz_jwks &&
 *   build-fuzz/fuzz_jwks -max_total_time=60 build-fuzz/corpus/fuzz_jwks tests/fuzz/seeds/fuzz_jwks
 *   (libFuzzer writes what it finds to the first directory: not the seeds)
 */
#include <stdlib.h>
#include <string.h>

#include "auth/oidc_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const kids[] = { NULL, "rsa-1", "ec-1", "ed-1", "" };
	static const int algs[] = { OIDC_RS256, OIDC_ES256, OIDC_EDDSA };
	unsigned char sig[512];
	const struct jwk *key;
	struct jwks *set;
	struct tg_error err;
	size_t k, a;

	if (jwks_parse((const char *)data, size, &set, &err) < 0) {
		if (!err.msg[0])
			abort();
		return 0;
	}
	memset(sig, 0x5a, sizeof(sig));
	for (k = 0; k < sizeof(kids) / sizeof(kids[0]); k++)
		for (a = 0; a < sizeof(algs) / sizeof(algs[0]); a++)
			if (jwks_find(set, kids[k], algs[a], &key, &err) == 0 &&
			    jwk_verify(key, algs[a], data, size, sig,
				       algs[a] == OIDC_RS256 ? 256 : 64))
				abort(); /* a signature of 0x5a bytes verified */
	jwks_put(set);
	return 0;
}
