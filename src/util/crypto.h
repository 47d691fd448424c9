/*
 * libcrypto (OpenSSL 3), loaded the first time a key set is read
 * (src/util/crypto.c), as libcurl is (src/util/curl.h): only the
 * verification of an identity provider's RSA and P-256 tokens needs it
 * (src/auth/jwks.c), and mapping it cost every `toolgate run` some 2 ms on
 * the machines measured (docs/BENCHMARKS.md, "Start alone"). Include this
 * instead of OpenSSL's headers: the functions below are libcrypto's,
 * through the pointers tg_crypto_load filled.
 */
#ifndef TG_UTIL_CRYPTO_H
#define TG_UTIL_CRYPTO_H

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>
#include <openssl/rsa.h>

#include "toolgate/error.h"

/* the functions used, each a pointer of its own type, fn_NAME (a prefix,
 * so that the names, macros below, are not expanded in the table) */
#define TG_CRYPTO_FUNCS(X)                                                                      \
	X(BN_bin2bn) X(BN_free) X(CRYPTO_free) X(ECDSA_SIG_free) X(ECDSA_SIG_new)               \
	X(ECDSA_SIG_set0) X(ERR_clear_error) X(EVP_DigestVerify) X(EVP_DigestVerifyInit)        \
	X(EVP_MD_CTX_free) X(EVP_MD_CTX_new) X(EVP_PKEY_CTX_free) X(EVP_PKEY_CTX_new_from_name) \
	X(EVP_PKEY_CTX_set_rsa_padding) X(EVP_PKEY_free) X(EVP_PKEY_fromdata)                   \
	X(EVP_PKEY_fromdata_init) X(EVP_sha256) X(OSSL_PARAM_BLD_free) X(OSSL_PARAM_BLD_new)     \
	X(OSSL_PARAM_BLD_push_BN) X(OSSL_PARAM_BLD_push_octet_string)                           \
	X(OSSL_PARAM_BLD_push_utf8_string) X(OSSL_PARAM_BLD_to_param) X(OSSL_PARAM_free)        \
	X(i2d_ECDSA_SIG)

struct tg_crypto_api {
#define TG_CRYPTO_FIELD(f) __typeof__(f) *fn_##f;
	TG_CRYPTO_FUNCS(TG_CRYPTO_FIELD)
#undef TG_CRYPTO_FIELD
};
extern struct tg_crypto_api tg_crypto;

/* libcrypto (libcrypto.so.3) loaded, once a process, thread-safe: 0; or
 * -1 and err saying it could not be and what needs it. */
int tg_crypto_load(const char *what, struct tg_error *err);

#define BN_bin2bn tg_crypto.fn_BN_bin2bn
#define BN_free tg_crypto.fn_BN_free
#define CRYPTO_free tg_crypto.fn_CRYPTO_free /* OPENSSL_free's */
#define ECDSA_SIG_free tg_crypto.fn_ECDSA_SIG_free
#define ECDSA_SIG_new tg_crypto.fn_ECDSA_SIG_new
#define ECDSA_SIG_set0 tg_crypto.fn_ECDSA_SIG_set0
#define ERR_clear_error tg_crypto.fn_ERR_clear_error
#define EVP_DigestVerify tg_crypto.fn_EVP_DigestVerify
#define EVP_DigestVerifyInit tg_crypto.fn_EVP_DigestVerifyInit
#define EVP_MD_CTX_free tg_crypto.fn_EVP_MD_CTX_free
#define EVP_MD_CTX_new tg_crypto.fn_EVP_MD_CTX_new
#define EVP_PKEY_CTX_free tg_crypto.fn_EVP_PKEY_CTX_free
#define EVP_PKEY_CTX_new_from_name tg_crypto.fn_EVP_PKEY_CTX_new_from_name
#define EVP_PKEY_CTX_set_rsa_padding tg_crypto.fn_EVP_PKEY_CTX_set_rsa_padding
#define EVP_PKEY_free tg_crypto.fn_EVP_PKEY_free
#define EVP_PKEY_fromdata tg_crypto.fn_EVP_PKEY_fromdata
#define EVP_PKEY_fromdata_init tg_crypto.fn_EVP_PKEY_fromdata_init
#define EVP_sha256 tg_crypto.fn_EVP_sha256
#define OSSL_PARAM_BLD_free tg_crypto.fn_OSSL_PARAM_BLD_free
#define OSSL_PARAM_BLD_new tg_crypto.fn_OSSL_PARAM_BLD_new
#define OSSL_PARAM_BLD_push_BN tg_crypto.fn_OSSL_PARAM_BLD_push_BN
#define OSSL_PARAM_BLD_push_octet_string tg_crypto.fn_OSSL_PARAM_BLD_push_octet_string
#define OSSL_PARAM_BLD_push_utf8_string tg_crypto.fn_OSSL_PARAM_BLD_push_utf8_string
#define OSSL_PARAM_BLD_to_param tg_crypto.fn_OSSL_PARAM_BLD_to_param
#define OSSL_PARAM_free tg_crypto.fn_OSSL_PARAM_free
#define i2d_ECDSA_SIG tg_crypto.fn_i2d_ECDSA_SIG

#endif
