/*
 * libsodium (libsodium.so.23), loaded the first time something hashes,
 * signs or draws random bytes (src/util/sodium.c), as SQLite is
 * (src/util/sqlite.h): `toolgate run` and a sandbox's start never map it,
 * and mapping it cost every start 7 page faults of some 115
 * (docs/BENCHMARKS.md, "Start alone"). Include this instead of
 * <sodium.h>: the functions below are libsodium's, through the table
 * tg_sodium() returns.
 *
 * Unlike SQLite's, these functions are called from everywhere, on no
 * handle a loader could have made: each call goes through tg_sodium(),
 * which loads the library the first time and, when it cannot, stops the
 * process with a message naming the package (a broken installation: the
 * package depends on it). What keeps a long-running process from stopping
 * that way is its entry points: the gateway's parts that use libsodium
 * (the store, the audit log, tokens, the MCP server, skills...) call
 * tg_sodium_load where they used to call sodium_init, so a library that
 * cannot be loaded is an error when they start, naming what needs it.
 */
#ifndef TG_UTIL_SODIUM_H
#define TG_UTIL_SODIUM_H

#include <sodium.h>
#include <string.h>

#include "toolgate/error.h"

/* each the pointer of its function's own type, as the header declares it */
struct tg_sodium_api {
	__typeof__(crypto_aead_xchacha20poly1305_ietf_decrypt) *aead_decrypt;
	__typeof__(crypto_aead_xchacha20poly1305_ietf_encrypt) *aead_encrypt;
	__typeof__(crypto_auth_hmacsha256_final) *hmacsha256_final;
	__typeof__(crypto_auth_hmacsha256_init) *hmacsha256_init;
	__typeof__(crypto_auth_hmacsha256_update) *hmacsha256_update;
	__typeof__(crypto_generichash) *generichash;
	__typeof__(crypto_generichash_final) *generichash_final;
	__typeof__(crypto_generichash_init) *generichash_init;
	__typeof__(crypto_generichash_update) *generichash_update;
	__typeof__(crypto_hash_sha256) *sha256;
	__typeof__(crypto_hash_sha256_final) *sha256_final;
	__typeof__(crypto_hash_sha256_init) *sha256_init;
	__typeof__(crypto_hash_sha256_update) *sha256_update;
	__typeof__(crypto_pwhash_scryptsalsa208sha256) *scrypt;
	__typeof__(crypto_sign_detached) *sign_detached;
	__typeof__(crypto_sign_ed25519_sk_to_pk) *sign_sk_to_pk;
	__typeof__(crypto_sign_keypair) *sign_keypair;
	__typeof__(crypto_sign_seed_keypair) *sign_seed_keypair;
	__typeof__(crypto_sign_verify_detached) *sign_verify_detached;
	__typeof__(randombytes_buf) *random_buf;
	__typeof__(sodium_base642bin) *base642bin;
	__typeof__(sodium_bin2base64) *bin2base64;
	__typeof__(sodium_bin2hex) *bin2hex;
	__typeof__(sodium_free) *free_guarded;
	__typeof__(sodium_hex2bin) *hex2bin;
	__typeof__(sodium_init) *init;
	__typeof__(sodium_is_zero) *is_zero;
	__typeof__(sodium_malloc) *malloc_guarded;
	__typeof__(sodium_memcmp) *memcmp_ct;
};
extern struct tg_sodium_api tg_sodium_fn;
extern int tg_sodium_ready; /* 1 once tg_sodium_fn is filled (atomic) */

/* libsodium.so.23 loaded and initialised, once a process, thread-safe: 0;
 * or -1 and err saying it could not be and what needs it. */
int tg_sodium_load(const char *what, struct tg_error *err);

/* tg_sodium_load's, for a call that has no error to give: the process
 * ends (abort) when the library cannot be, the reason given to the log sink
 * (tg_log_set) first. */
void tg_sodium_need(void);

static inline const struct tg_sodium_api *tg_sodium(void)
{
	if (__builtin_expect(!__atomic_load_n(&tg_sodium_ready, __ATOMIC_ACQUIRE), 0))
		tg_sodium_need();
	return &tg_sodium_fn;
}

#define crypto_aead_xchacha20poly1305_ietf_decrypt (tg_sodium()->aead_decrypt)
#define crypto_aead_xchacha20poly1305_ietf_encrypt (tg_sodium()->aead_encrypt)
#define crypto_auth_hmacsha256_final (tg_sodium()->hmacsha256_final)
#define crypto_auth_hmacsha256_init (tg_sodium()->hmacsha256_init)
#define crypto_auth_hmacsha256_update (tg_sodium()->hmacsha256_update)
#define crypto_generichash (tg_sodium()->generichash)
#define crypto_generichash_final (tg_sodium()->generichash_final)
#define crypto_generichash_init (tg_sodium()->generichash_init)
#define crypto_generichash_update (tg_sodium()->generichash_update)
#define crypto_hash_sha256 (tg_sodium()->sha256)
#define crypto_hash_sha256_final (tg_sodium()->sha256_final)
#define crypto_hash_sha256_init (tg_sodium()->sha256_init)
#define crypto_hash_sha256_update (tg_sodium()->sha256_update)
#define crypto_pwhash_scryptsalsa208sha256 (tg_sodium()->scrypt)
#define crypto_sign_detached (tg_sodium()->sign_detached)
#define crypto_sign_ed25519_sk_to_pk (tg_sodium()->sign_sk_to_pk)
#define crypto_sign_keypair (tg_sodium()->sign_keypair)
#define crypto_sign_seed_keypair (tg_sodium()->sign_seed_keypair)
#define crypto_sign_verify_detached (tg_sodium()->sign_verify_detached)
#define randombytes_buf (tg_sodium()->random_buf)
#define sodium_base642bin (tg_sodium()->base642bin)
#define sodium_bin2base64 (tg_sodium()->bin2base64)
#define sodium_bin2hex (tg_sodium()->bin2hex)
#define sodium_free (tg_sodium()->free_guarded)
#define sodium_hex2bin (tg_sodium()->hex2bin)
#define sodium_is_zero (tg_sodium()->is_zero)
#define sodium_malloc (tg_sodium()->malloc_guarded)
#define sodium_memcmp (tg_sodium()->memcmp_ct)
/* a wipe needs no library: glibc's explicit_bzero is sodium_memzero's
 * guarantee (never optimised away), so a buffer is wiped before anything
 * loaded libsodium (a password read, a credential released) and a wipe
 * never loads it or stops the process */
#define sodium_memzero(p, n) explicit_bzero((p), (n))
/* sodium_init is tg_sodium_load's: no macro, so a call to it is a link error */

#endif
