/*
 * JSON Web Key Sets (RFC 7517) and JWS signature checks (RFC 7518, RFC
 * 8037) for identity providers' tokens (docs/AUTH.md, "External identity
 * providers"): RS256 (RSA of 2048 to 8192 bits) and ES256 (P-256) through
 * GnuTLS, EdDSA (Ed25519) through libsodium. Each key is imported once,
 * when its set is parsed, so a token's check costs a signature
 * verification and no parsing of key material.
 *
 * Owns: the imported keys of a set, shared by reference. Must never:
 * accept a key for an algorithm other than its type's (an RSA key for
 * ES256, a public key as an HMAC secret), or a JWK meant for encryption.
 */
#include <gnutls/abstract.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <jansson.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/oidc_int.h"

struct jwk {
	char *kid;                   /* NULL: none */
	int alg;                     /* the one algorithm the key's type verifies, OIDC_* */
	int stated;                  /* the JWK's own "alg", OIDC_*; 0: none, -1: another */
	gnutls_pubkey_t pub;         /* RS256, ES256 */
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

/* Leading zero bytes of a big-endian unsigned integer skipped (one kept). */
static void strip_zeros(gnutls_datum_t *d)
{
	while (d->size > 1 && d->data[0] == 0) {
		d->data++;
		d->size--;
	}
}

/* An RSA key: n of 2048 to 8192 bits, e odd and more than 1. */
static const char *import_rsa(json_t *k, struct jwk *key)
{
	size_t nlen = 0, elen = 0;
	unsigned char *n = member_b64(k, "n", &nlen), *e = member_b64(k, "e", &elen);
	gnutls_datum_t dn = { n, (unsigned)nlen }, de = { e, (unsigned)elen };
	const char *why = NULL;
	unsigned bits;

	if (!n || !e || nlen == 0 || elen == 0 || elen > 8) {
		why = "an RSA key needs n and e in base64url";
		goto out;
	}
	strip_zeros(&dn);
	strip_zeros(&de);
	bits = dn.size * 8;
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
	if (gnutls_pubkey_init(&key->pub) < 0 || gnutls_pubkey_import_rsa_raw(key->pub, &dn, &de) < 0)
		why = "an RSA key GnuTLS does not take";
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
	gnutls_datum_t dx = { x, (unsigned)xlen }, dy = { y, (unsigned)ylen };
	const char *crv = json_string_value(json_object_get(k, "crv")), *why = NULL;

	if (!crv || strcmp(crv, "P-256") != 0)
		why = "an EC key on a curve other than P-256";
	else if (!x || !y || xlen != 32 || ylen != 32)
		why = "a P-256 key needs x and y of 32 bytes in base64url";
	else if (gnutls_pubkey_init(&key->pub) < 0 ||
		 gnutls_pubkey_import_ecc_raw(key->pub, GNUTLS_ECC_CURVE_SECP256R1, &dx, &dy) < 0)
		why = "a P-256 key GnuTLS does not take";
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
	if (key->pub) {
		gnutls_pubkey_deinit(key->pub);
		key->pub = NULL;
	}
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
		if (set->v[i].pub)
			gnutls_pubkey_deinit(set->v[i].pub);
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

/* ES256's signature is r||s, 32 bytes each (RFC 7518 3.4); GnuTLS wants
 * it DER-encoded. */
static int verify_es256(const struct jwk *key, const gnutls_datum_t *data,
			const unsigned char *sig, size_t sig_len)
{
	unsigned char rb[32], sb[32];
	gnutls_datum_t r = { rb, 32 }, s = { sb, 32 }, der = { NULL, 0 };
	int ok;

	if (sig_len != 64)
		return 0;
	memcpy(rb, sig, 32);
	memcpy(sb, sig + 32, 32);
	strip_zeros(&r);
	strip_zeros(&s);
	if (gnutls_encode_rs_value(&der, &r, &s) < 0)
		return 0;
	ok = gnutls_pubkey_verify_data2(key->pub, GNUTLS_SIGN_ECDSA_SHA256, 0, data, &der) >= 0;
	gnutls_free(der.data);
	return ok;
}

int jwk_verify(const struct jwk *key, int alg, const void *data, size_t len,
	       const unsigned char *sig, size_t sig_len)
{
	gnutls_datum_t d = { (unsigned char *)(uintptr_t)data, (unsigned)len };
	gnutls_datum_t s = { (unsigned char *)(uintptr_t)sig, (unsigned)sig_len };

	if (key->why || key->alg != alg)
		return 0;
	switch (alg) {
	case OIDC_RS256:
		return gnutls_pubkey_verify_data2(key->pub, GNUTLS_SIGN_RSA_SHA256, 0, &d, &s) >= 0;
	case OIDC_ES256:
		return verify_es256(key, &d, sig, sig_len);
	case OIDC_EDDSA:
		return sig_len == crypto_sign_BYTES &&
		       crypto_sign_verify_detached(sig, data, len, key->ed) == 0;
	default:
		return 0;
	}
}
