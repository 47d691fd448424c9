/*
 * libsodium loaded with dlopen the first time it is needed
 * (src/util/sodium.h), as SQLite is (src/util/sqlite.c).
 *
 * Owns: the table of its functions. Must never: publish the table before
 * every pointer in it is filled and sodium_init said yes, or unload.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>

#include "util/dl.h"
#include "util/sodium.h"

#define LIBSODIUM "libsodium.so.23"

struct tg_sodium_api tg_sodium_fn;
int tg_sodium_ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failed[300]; /* why it could not be loaded; "" when it was */

static const struct dl_sym syms[] = {
#define S(f, name) { name, offsetof(struct tg_sodium_api, f) }
	S(aead_decrypt, "crypto_aead_xchacha20poly1305_ietf_decrypt"),
	S(aead_encrypt, "crypto_aead_xchacha20poly1305_ietf_encrypt"),
	S(hmacsha256_final, "crypto_auth_hmacsha256_final"),
	S(hmacsha256_init, "crypto_auth_hmacsha256_init"),
	S(hmacsha256_update, "crypto_auth_hmacsha256_update"),
	S(generichash, "crypto_generichash"),
	S(generichash_final, "crypto_generichash_final"),
	S(generichash_init, "crypto_generichash_init"),
	S(generichash_update, "crypto_generichash_update"),
	S(sha256, "crypto_hash_sha256"),
	S(sha256_final, "crypto_hash_sha256_final"),
	S(sha256_init, "crypto_hash_sha256_init"),
	S(sha256_update, "crypto_hash_sha256_update"),
	S(scrypt, "crypto_pwhash_scryptsalsa208sha256"),
	S(sign_detached, "crypto_sign_detached"),
	S(sign_sk_to_pk, "crypto_sign_ed25519_sk_to_pk"),
	S(sign_keypair, "crypto_sign_keypair"),
	S(sign_seed_keypair, "crypto_sign_seed_keypair"),
	S(sign_verify_detached, "crypto_sign_verify_detached"),
	S(random_buf, "randombytes_buf"),
	S(base642bin, "sodium_base642bin"),
	S(bin2base64, "sodium_bin2base64"),
	S(bin2hex, "sodium_bin2hex"),
	S(free_guarded, "sodium_free"),
	S(hex2bin, "sodium_hex2bin"),
	S(init, "sodium_init"),
	S(is_zero, "sodium_is_zero"),
	S(malloc_guarded, "sodium_malloc"),
	S(memcmp_ct, "sodium_memcmp"),
#undef S
};

static void load(void)
{
	struct tg_sodium_api api = { 0 };

	if (!DL_TABLE(LIBSODIUM, syms, api, failed))
		return;
	/* picks its implementations and opens the random source */
	if (api.init() < 0) {
		snprintf(failed, sizeof(failed), "sodium_init failed");
		return;
	}
	tg_sodium_fn = api;
	__atomic_store_n(&tg_sodium_ready, 1, __ATOMIC_RELEASE);
}

int tg_sodium_load(const char *what, struct tg_error *err)
{
	pthread_once(&once, load);
	return dl_loaded(failed, what, "libsodium", "libsodium23", err);
}

void tg_sodium_need(void)
{
	pthread_once(&once, load);
	dl_need(failed, "libsodium", "libsodium23");
}
