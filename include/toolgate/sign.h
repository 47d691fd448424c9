/*
 * minisign's formats (https://jedisct1.github.io/minisign/, as minisign
 * 0.11 writes them): its public keys, its secret keys (unencrypted, or
 * encrypted under a password with scrypt) and its signatures, read and
 * written with libsodium, so that what toolgate signs `minisign -V`
 * verifies and what minisign signs toolgate verifies.
 *
 * Every text these functions read is untrusted: each is refused past its
 * ceiling (a file over TG_SIGN_FILE_MAX bytes, a trusted comment over
 * TG_SIGN_TRUSTED_MAX), every line must end in "\n" (or "\r\n"; the last
 * line of a text may end at its end instead) and every base64 line must
 * decode to exactly the length its format says. A refusal returns -1
 * with a message saying which file and what is wrong ("signature: line 2:
 * not base64"); nothing crashes.
 *
 * Key ids are minisign's: 8 random bytes, shown as the little-endian u64
 * they make, in upper-case hex ("89F9F02A7C33CEBA").
 */
#ifndef TOOLGATE_SIGN_H
#define TOOLGATE_SIGN_H

#include <stddef.h>

#include "toolgate/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TG_SIGN_KEYID_LEN 8
#define TG_SIGN_PK_LEN 32          /* Ed25519 public key */
#define TG_SIGN_SK_LEN 64          /* Ed25519 secret key: seed || public key */
#define TG_SIGN_FILE_MAX 4096      /* the longest key or signature text read */
#define TG_SIGN_TRUSTED_MAX 1024   /* the longest trusted comment, in bytes */
/* The scrypt parameters tg_sign_sec_format writes: libsodium's
 * "interactive" ones (some 50 ms and 16 MiB), not minisign's own
 * (opslimit 33554432, memlimit 1 GiB: seconds and a gibibyte to open).
 * minisign reads the parameters from the file, so it opens either. */
#define TG_SIGN_KDF_OPSLIMIT 524288ULL
#define TG_SIGN_KDF_MEMLIMIT 16777216ULL
/* The most a secret key file may ask of the key derivation: twice
 * minisign's own opslimit, and its memlimit (1 GiB); above either the key
 * is refused before anything is allocated. */
#define TG_SIGN_KDF_OPSLIMIT_MAX 67108864ULL
#define TG_SIGN_KDF_MEMLIMIT_MAX 1073741824ULL

struct tg_sign_pub {
	unsigned char id[TG_SIGN_KEYID_LEN];
	unsigned char pk[TG_SIGN_PK_LEN];
};

/* Secret: tg_sign_sec_release() it (or sodium_memzero) once used. */
struct tg_sign_sec {
	unsigned char id[TG_SIGN_KEYID_LEN];
	unsigned char sk[TG_SIGN_SK_LEN];
};

/* A new key pair with a random key id, as `minisign -G` makes. OUT *pub
 * and *sec (cleared on entry). 0, or -1 and err (libsodium cannot start). */
TG_API int tg_sign_keygen(struct tg_sign_pub *pub, struct tg_sign_sec *sec,
			  struct tg_error *err);

/* The public half of sec, into OUT *pub. This function can't fail. */
TG_API void tg_sign_sec_pub(const struct tg_sign_sec *sec, struct tg_sign_pub *pub);

/* Zero *sec. sec may be NULL. */
TG_API void tg_sign_sec_release(struct tg_sign_sec *sec);

/* id as minisign prints it: 16 upper-case hex digits and a NUL, into
 * OUT out. */
TG_API void tg_sign_keyid_hex(const unsigned char id[TG_SIGN_KEYID_LEN], char out[17]);

/* Read a public key: a minisign.pub file's text ("untrusted comment:
 * ...\n" then the base64 line) or the base64 line alone (what `minisign
 * -P` takes); text is len bytes, not necessarily NUL-terminated. The
 * comment is not trusted: the key id is the one in the base64. OUT *out
 * (cleared on entry). 0, or -1 and err. */
TG_API int tg_sign_pub_parse(const char *text, size_t len, struct tg_sign_pub *out,
			     struct tg_error *err);

/* pub as a minisign.pub file's text ("untrusted comment: minisign public
 * key ID\nBASE64\n"), malloc'd (the caller frees it), or NULL when out of
 * memory. */
TG_API char *tg_sign_pub_format(const struct tg_sign_pub *pub);

/* Read a secret key file's text (len bytes): encrypted ("Sc": password
 * is required, and a wrong one is refused by the key's checksum) or
 * unencrypted (`minisign -G -W`; password is ignored, and the checksum,
 * which minisign leaves zero there, is checked when it is not zero).
 * Either way the key's public half must be the one its seed makes. A key
 * asking for more than TG_SIGN_KDF_*_MAX is refused. OUT *out (cleared on
 * entry; tg_sign_sec_release it). 0, or -1 and err: TG_ERR_INVALID for a
 * malformed or damaged key or a wrong password, TG_ERR_LIMIT past a
 * ceiling, TG_ERR_NOMEM when the key derivation cannot have its memory. */
TG_API int tg_sign_sec_parse(const char *text, size_t len, const char *password,
			     struct tg_sign_sec *out, struct tg_error *err);

/* sec as a secret key file's text, malloc'd: encrypted under password
 * with scrypt (TG_SIGN_KDF_OPSLIMIT and _MEMLIMIT, a random salt), or
 * unencrypted, as `minisign -G -W` writes, when password is NULL. The
 * text is secret: the caller zeroes it (sodium_memzero) and frees it.
 * NULL and err when out of memory. */
TG_API char *tg_sign_sec_format(const struct tg_sign_sec *sec, const char *password,
				struct tg_error *err);

/* Sign len bytes of data as `minisign -S` does: prehashed (algorithm
 * "ED": the Ed25519 signature is over BLAKE2b-512 of the data), with
 * trusted_comment signed along (the global signature); NULL or "" for
 * minisign's default without a file name, "timestamp:<unix time>". The
 * trusted comment must be at most TG_SIGN_TRUSTED_MAX bytes of UTF-8
 * without control characters but tab. Returns the .minisig file's text,
 * malloc'd (the caller frees it), or NULL and err. */
TG_API char *tg_sign_data(const struct tg_sign_sec *sec, const void *data, size_t len,
			  const char *trusted_comment, struct tg_error *err);

/* Verify a .minisig text (sig, sig_len bytes) of len bytes of data
 * against pub: its key id must be pub's ("signed by key X, not Y"), its
 * signature must verify (prehashed "ED" or legacy "Ed"), and so must its
 * global signature over the trusted comment. On success the trusted
 * comment is copied, NUL-terminated, into OUT trusted (trusted_len bytes;
 * TG_SIGN_TRUSTED_MAX + 1 always suffice; NULL: not wanted). OUT trusted
 * is cleared on entry and filled only on success. 0, or -1 and err:
 * TG_ERR_INVALID when malformed or not verified, TG_ERR_LIMIT past a
 * ceiling or when the trusted comment does not fit the caller's buffer. */
TG_API int tg_sign_verify(const struct tg_sign_pub *pub, const void *data, size_t len,
			  const char *sig, size_t sig_len, char *trusted, size_t trusted_len,
			  struct tg_error *err);

/* The key id a .minisig text names, into OUT id (cleared on entry), so a
 * caller can pick the key from a trust store; the text is checked as
 * tg_sign_verify checks it, all but the signatures. 0, or -1 and err. */
TG_API int tg_sign_sig_keyid(const char *sig, size_t sig_len,
			     unsigned char id[TG_SIGN_KEYID_LEN], struct tg_error *err);

/* 1 when the .minisig text is prehashed ("ED", what minisign 0.11 writes),
 * 0 when legacy ("Ed", `minisign -S -l`), -1 when it cannot be read. A
 * legacy signature signs the data itself and leaves its algorithm bytes
 * unsigned: a caller that knows what it verifies may take only "ED". */
TG_API int tg_sign_sig_prehashed(const char *sig, size_t sig_len);

#ifdef __cplusplus
}
#endif

#endif
