/*
 * JSON Web Key Sets (RFC 7517) and JWS signature checks (RFC 7518, RFC
 * 8037) for identity providers' tokens (docs/AUTH.md, "External identity
 * providers"): RS256 (RSA of 2048 to 8192 bits) and ES256 (P-256) through
 * OpenSSL's libcrypto (loaded when the first set is read, and by libcurl
 * anyway; its P-256 and RSA
 * verification is twice and a third faster than GnuTLS's nettle here,
 * docs/BENCHMARKS.md), EdDSA (Ed25519) through libsodium. Each key is
 * imported once, when its set is parsed, so a token's check costs a
 * signature verification and no parsing of key material.
 *
 * Owns: the imported keys of a set, shared by reference. Must never:
 * accept a key for an algorithm other than its type's (an RSA key for
 * ES256, a public key as an HMAC secret), or a JWK meant for encryption.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/oidc_int.h"
#include "util/crypto.h" /* libcrypto, loaded when the first set is read */
#include "util/sodium.h"

struct jwk {
	char *kid;                   /* NULL: none */
	int alg;                     /* the one algorithm the key's type verifies, OIDC_* */
	int stated;                  /* the JWK's own "alg", OIDC_*; 0: none, -1: another */
	EVP_PKEY *pub;               /* RS256, ES256 */
	unsigned char ed[crypto_sign_PUBLICKEYBYTES]; /* EdDSA */
	char *why;                   /* not usable: the reason; else NULL */
};

struct jwks {
	struct jwk *v;
	size_t n;
	unsigned refs;
};

/* A base64url member of a JWK, decoded; NULL when absent or malformed. */
static unsigned char *member_b64(json_t *k, const char *name, size_t *len)
{
	const char *s = json_string_value(json_object_get(k, name));

	return s ? jose_unb64(s, strlen(s), len) : NULL;
}

/* A big-endian unsigned integer with its leading zero bytes skipped. */
struct num {
	const unsigned char *data;
	size_t size;
};

static void strip_zeros(struct num *d)
{
	while (d->size > 1 && d->data[0] == 0) {
		d->data++;
		d->size--;
	}
}

/* A public key from OpenSSL parameters: NULL when libcrypto refuses it. */
static EVP_PKEY *pkey_from(const char *type, OSSL_PARAM_BLD *bld)
{
	OSSL_PARAM *params = bld ? OSSL_PARAM_BLD_to_param(bld) : NULL;
	EVP_PKEY_CTX *ctx = params ? EVP_PKEY_CTX_new_from_name(NULL, type, NULL) : NULL;
	EVP_PKEY *pkey = NULL;

	if (!ctx || EVP_PKEY_fromdata_init(ctx) <= 0 ||
	    EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0) {
		pkey = NULL;
		ERR_clear_error(); /* the thread's queue is libcurl's too */
	}
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	return pkey;
}

static EVP_PKEY *rsa_key(const struct num *n, const struct num *e)
{
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	BIGNUM *bn = BN_bin2bn(n->data, (int)n->size, NULL);
	BIGNUM *be = BN_bin2bn(e->data, (int)e->size, NULL);
	EVP_PKEY *pkey = NULL;

	if (bld && bn && be && OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, bn) &&
	    OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, be))
		pkey = pkey_from("RSA", bld);
	OSSL_PARAM_BLD_free(bld);
	BN_free(bn);
	BN_free(be);
	return pkey;
}

/* The point x, y on P-256; libcrypto refuses a point off the curve. */
static EVP_PKEY *p256_key(const unsigned char *x, const unsigned char *y)
{
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	unsigned char point[65];
	EVP_PKEY *pkey = NULL;

	point[0] = 0x04; /* uncompressed (SEC 1 2.3.3) */
	memcpy(point + 1, x, 32);
	memcpy(point + 33, y, 32);
	if (bld && OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, "P-256", 0) &&
	    OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, point, sizeof(point)))
		pkey = pkey_from("EC", bld);
	OSSL_PARAM_BLD_free(bld);
	return pkey;
}

/* An RSA key: n of 2048 to 8192 bits, e odd and more than 1. */
static const char *import_rsa(json_t *k, struct jwk *key)
{
	size_t nlen = 0, elen = 0;
	unsigned char *n = member_b64(k, "n", &nlen), *e = member_b64(k, "e", &elen);
	struct num dn = { n, nlen }, de = { e, elen };
	const char *why = NULL;
	unsigned bits;

	if (!n || !e || nlen == 0 || elen == 0 || elen > 8) {
		why = "an RSA key needs n and e in base64url";
		goto out;
	}
	strip_zeros(&dn);
	strip_zeros(&de);
	bits = (unsigned)dn.size * 8;
	while (bits && !(dn.data[0] & (1u << ((bits - 1) % 8))))
		bits--;
	if (bits < OIDC_MIN_RSA_BITS || bits > OIDC_MAX_RSA_BITS) {
		why = bits < OIDC_MIN_RSA_BITS ? "an RSA key of fewer than 2048 bits"
					       : "an RSA key of more than 8192 bits";
		goto out;
	}
	if (!(de.data[de.size - 1] & 1) || (de.size == 1 && de.data[0] < 3)) {
		why = "an RSA key whose exponent is not an odd number above 1";
		goto out;
	}
	if (!(key->pub = rsa_key(&dn, &de)))
		why = "an RSA key libcrypto does not take";
	key->alg = OIDC_RS256;
out:
	free(n);
	free(e);
	return why;
}

/* An EC key on P-256 (x and y, 32 bytes each). */
static const char *import_ec(json_t *k, struct jwk *key)
{
	size_t xlen = 0, ylen = 0;
	unsigned char *x = member_b64(k, "x", &xlen), *y = member_b64(k, "y", &ylen);
	const char *crv = json_string_value(json_object_get(k, "crv")), *why = NULL;

	if (!crv || strcmp(crv, "P-256") != 0)
		why = "an EC key on a curve other than P-256";
	else if (!x || !y || xlen != 32 || ylen != 32)
		why = "a P-256 key needs x and y of 32 bytes in base64url";
	else if (!(key->pub = p256_key(x, y)))
		why = "a point that is not on P-256";
	key->alg = OIDC_ES256;
	free(x);
	free(y);
	return why;
}

/* An OKP key on Ed25519 (x, 32 bytes). */
static const char *import_okp(json_t *k, struct jwk *key)
{
	size_t xlen = 0;
	unsigned char *x = member_b64(k, "x", &xlen);
	const char *crv = json_string_value(json_object_get(k, "crv")), *why = NULL;

	if (!crv || strcmp(crv, "Ed25519") != 0)
		why = "an OKP key on a curve other than Ed25519";
	else if (!x || xlen != sizeof(key->ed))
		why = "an Ed25519 key needs x of 32 bytes in base64url";
	else
		memcpy(key->ed, x, sizeof(key->ed));
	key->alg = OIDC_EDDSA;
	free(x);
	return why;
}

/* 1 if the JWK's key_ops (RFC 7517 4.3), when present, allow verify. */
static int ops_verify(json_t *k)
{
	json_t *ops = json_object_get(k, "key_ops"), *op;
	size_t i;

	if (!ops)
		return 1;
	json_array_foreach(ops, i, op)
		if (json_is_string(op) && strcmp(json_string_value(op), "verify") == 0)
			return 1;
	return 0;
}

/* One JWK into key: 0 usable, 1 kept with a reason, -1 out of memory. */
static int import_key(json_t *k, struct jwk *key)
{
	const char *kty = json_string_value(json_object_get(k, "kty"));
	const char *use = json_string_value(json_object_get(k, "use"));
	const char *kid = json_string_value(json_object_get(k, "kid"));
	json_t *alg = json_object_get(k, "alg");
	const char *why;

	if (kid && !(key->kid = strdup(kid)))
		return -1;
	if (alg)
		key->stated = oidc_alg_of(json_string_value(alg)) ? oidc_alg_of(json_string_value(alg))
								  : -1;
	if (json_object_get(k, "use") && (!use || strcmp(use, "sig") != 0))
		why = "a key for a use other than sig";
	else if (!ops_verify(k))
		why = "a key whose key_ops do not include verify";
	else if (!kty)
		why = "a key without kty";
	else if (strcmp(kty, "RSA") == 0)
		why = import_rsa(k, key);
	else if (strcmp(kty, "EC") == 0)
		why = import_ec(k, key);
	else if (strcmp(kty, "OKP") == 0)
		why = import_okp(k, key);
	else
		why = "a key of a type other than RSA, EC and OKP";
	if (!why && key->stated && key->stated != key->alg)
		why = "a key whose alg is not its type's (RS256 for RSA, ES256 for P-256, EdDSA "
		      "for Ed25519)";
	if (!why)
		return 0;
	EVP_PKEY_free(key->pub);
	key->pub = NULL;
	key->why = strdup(why);
	return key->why ? 1 : -1;
}

int jwks_parse(const char *text, size_t len, struct jwks **out, struct tg_error *err)
{
	struct jwks *set = NULL;
	json_t *j, *keys, *k;
	size_t i, usable = 0;
	int rc = -1, r;

	*out = NULL;
	if (len > OIDC_MAX_JWKS)
		return tg_error_set(err, TG_ERR_LIMIT, "JWKS: larger than 256 KiB");
	/* a key exists only once a set was read: jwk_verify and jwks_put
	 * have it loaded */
	if (tg_crypto_load("JWKS", err) < 0)
		return -1;
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	keys = json_object_get(j, "keys");
	if (!json_is_object(j) || !json_is_array(keys) || json_array_size(keys) == 0 ||
	    json_array_size(keys) > OIDC_MAX_KEYS) {
		tg_error_set(err, TG_ERR_INVALID, "JWKS: want {\"keys\": [1 to 64 keys]}");
		goto out;
	}
	set = calloc(1, sizeof(*set));
	if (set) {
		set->refs = 1;
		set->v = calloc(json_array_size(keys), sizeof(*set->v));
	}
	if (!set || !set->v) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	json_array_foreach(keys, i, k) {
		if (!json_is_object(k)) {
			tg_error_set(err, TG_ERR_INVALID, "JWKS: key %zu is not an object", i);
			goto out;
		}
		r = import_key(k, &set->v[set->n++]);
		if (r < 0) {
			tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			goto out;
		}
		usable += r == 0;
	}
	if (!usable) {
		tg_error_set(err, TG_ERR_INVALID, "JWKS: no key this gateway can use (%s)",
			     set->v[0].why);
		goto out;
	}
	*out = set;
	set = NULL;
	rc = 0;
out:
	jwks_put(set);
	json_decref(j);
	return rc;
}

void jwks_get(struct jwks *set)
{
	set->refs++;
}

void jwks_put(struct jwks *set)
{
	size_t i;

	if (!set || --set->refs)
		return;
	for (i = 0; i < set->n; i++) {
		EVP_PKEY_free(set->v[i].pub);
		free(set->v[i].kid);
		free(set->v[i].why);
	}
	free(set->v);
	free(set);
}

size_t jwks_count(const struct jwks *set)
{
	return set ? set->n : 0;
}

int jwks_find(const struct jwks *set, const char *kid, int alg, const struct jwk **key,
	      struct tg_error *err)
{
	const struct jwk *first = NULL, *fit = NULL, *k;
	size_t i, n = 0;

	*key = NULL;
	for (i = 0; set && i < set->n; i++) {
		k = &set->v[i];
		if (kid ? (!k->kid || strcmp(k->kid, kid) != 0) : (k->why || k->alg != alg))
			continue;
		if (!first)
			first = k;
		/* two keys may share a kid when their types differ (RFC 7517 4.5) */
		if (!fit && !k->why && k->alg == alg)
			fit = k;
		n++;
	}
	if (!first)
		return 1;
	if (!kid && n > 1)
		return tg_error_set(err, TG_ERR_INVALID, "token: no kid, and the provider has "
				    "%zu keys for %s", n, oidc_alg_name(alg));
	if (fit) {
		*key = fit;
		return 0;
	}
	if (first->why)
		return tg_error_set(err, TG_ERR_INVALID, "token: key %.64s is not usable: %s", kid,
				    first->why);
	return tg_error_set(err, TG_ERR_INVALID, "token: header alg %s does not fit key %.64s "
			    "(a key for %s)", oidc_alg_name(alg), kid, oidc_alg_name(first->alg));
}

/* A signature over SHA-256 of data: RSASSA-PKCS1-v1_5 for RS256 (RFC
 * 7518 3.3), ECDSA for ES256 given DER-encoded. Each call has its own
 * context: the key is shared by threads, a context is not. A refusal
 * leaves nothing in the thread's error queue: libcurl's TLS reads the
 * same queue, and a caller's forged tokens would fill it. */
static int verify_sha256(EVP_PKEY *pub, int pkcs1, const void *data, size_t len,
			 const unsigned char *sig, size_t sig_len)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	EVP_PKEY_CTX *pctx = NULL;
	int ok = 0;

	if (md && EVP_DigestVerifyInit(md, &pctx, EVP_sha256(), NULL, pub) > 0 &&
	    (!pkcs1 || EVP_PKEY_CTX_set_rsa_padding(pctx, RSA_PKCS1_PADDING) > 0))
		ok = EVP_DigestVerify(md, sig, sig_len, data, len) == 1;
	EVP_MD_CTX_free(md);
	if (!ok)
		ERR_clear_error();
	return ok;
}

/* ES256's signature is r||s, 32 bytes each (RFC 7518 3.4); libcrypto
 * wants it DER-encoded (an ECDSA-Sig-Value, RFC 3279 2.2.3). */
static int verify_es256(EVP_PKEY *pub, const void *data, size_t len, const unsigned char *sig,
			size_t sig_len)
{
	ECDSA_SIG *es;
	BIGNUM *r, *s;
	unsigned char *der = NULL;
	int der_len = -1, ok = 0;

	if (sig_len != 64)
		return 0;
	es = ECDSA_SIG_new();
	r = BN_bin2bn(sig, 32, NULL);
	s = BN_bin2bn(sig + 32, 32, NULL);
	if (es && r && s && ECDSA_SIG_set0(es, r, s) == 1) {
		r = s = NULL; /* es owns them now */
		der_len = i2d_ECDSA_SIG(es, &der);
	}
	if (der_len > 0)
		ok = verify_sha256(pub, 0, data, len, der, (size_t)der_len);
	else
		ERR_clear_error();
	OPENSSL_free(der);
	ECDSA_SIG_free(es);
	BN_free(r);
	BN_free(s);
	return ok;
}

int jwk_verify(const struct jwk *key, int alg, const void *data, size_t len,
	       const unsigned char *sig, size_t sig_len)
{
	if (key->why || key->alg != alg)
		return 0;
	switch (alg) {
	case OIDC_RS256:
		return verify_sha256(key->pub, 1, data, len, sig, sig_len);
	case OIDC_ES256:
		return verify_es256(key->pub, data, len, sig, sig_len);
	case OIDC_EDDSA:
		return sig_len == crypto_sign_BYTES &&
		       crypto_sign_verify_detached(sig, data, len, key->ed) == 0;
	default:
		return 0;
	}
}
