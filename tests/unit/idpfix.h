/*
 * A fake OpenID Connect provider for the unit tests (tests/unit/idpfix.c):
 * keys made in the test (RSA-2048 and P-256 with GnuTLS, Ed25519 with
 * libsodium), their JWKS, tokens signed with them, and a tiny HTTP server
 * on loopback that serves discovery and the JWKS, which a test can make
 * slow, broken or change, and whose requests it counts.
 */
#ifndef TG_TEST_IDPFIX_H
#define TG_TEST_IDPFIX_H

#include <stddef.h>

enum idp_key_type { IDP_RSA, IDP_EC, IDP_ED };

struct idp_key;

/* A new key of type (bits for RSA), with kid; NULL on failure. */
struct idp_key *idp_key_new(enum idp_key_type type, unsigned bits, const char *kid);
void idp_key_free(struct idp_key *k);
/* The public JWK of k as JSON text (malloc'd); extra: members added
 * inside the object ("" or ",\"use\":\"enc\""). */
char *idp_key_jwk(const struct idp_key *k, const char *extra);
/* A compact JWS: header and claims JSON texts, signed by k with alg
 * ("RS256", "ES256", "EdDSA"; k NULL: the signature part is sig_b64, or
 * "" when NULL). malloc'd. */
char *idp_token(const struct idp_key *k, const char *alg, const char *header,
		const char *claims, const char *sig_b64);
/* base64url of n bytes (malloc'd). */
char *idp_b64(const void *p, size_t n);

/* The server's modes for the JWKS path. */
enum idp_mode { IDP_OK, IDP_SLOW, IDP_GARBAGE, IDP_ERROR };

struct idp_server;

/* A server on 127.0.0.1 (an ephemeral port) serving
 * /.well-known/openid-configuration (issuer its own URL, jwks_uri
 * URL/jwks) and /jwks; NULL on failure. */
struct idp_server *idp_server_start(void);
void idp_server_stop(struct idp_server *s);
/* "http://127.0.0.1:PORT" */
const char *idp_server_url(const struct idp_server *s);
/* The JWKS document it serves (copied), and how. */
void idp_server_set_jwks(struct idp_server *s, const char *jwks);
void idp_server_set_mode(struct idp_server *s, enum idp_mode mode);
/* Requests for the JWKS (jwks) or discovery (!jwks) so far. */
unsigned idp_server_hits(struct idp_server *s, int jwks);

#endif
