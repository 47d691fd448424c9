/*
 * libcrypto loaded with dlopen the first time a key set is read
 * (src/util/crypto.h), as libcurl is (src/util/curl.c).
 *
 * Owns: the table of its functions. Must never: be used before
 * tg_crypto_load said yes (the pointers are NULL until then), or unload.
 */
#include <pthread.h>
#include <stddef.h>

#include "util/crypto.h"
#include "util/dl.h"

#define LIBCRYPTO "libcrypto.so.3"

struct tg_crypto_api tg_crypto;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failed[300]; /* why it could not be loaded; "" when it was */

static void load(void)
{
	static const struct dl_sym syms[] = {
#define TG_CRYPTO_SYM(f) { #f, offsetof(struct tg_crypto_api, fn_##f) },
		TG_CRYPTO_FUNCS(TG_CRYPTO_SYM)
#undef TG_CRYPTO_SYM
	};
	struct tg_crypto_api api = { 0 };

	if (DL_TABLE(LIBCRYPTO, syms, api, failed))
		tg_crypto = api;
}

int tg_crypto_load(const char *what, struct tg_error *err)
{
	pthread_once(&once, load);
	return dl_loaded(failed, what, "libcrypto", "libssl3", err);
}
