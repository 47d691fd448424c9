/*
 * External identity providers, private to src/auth/ (docs/AUTH.md,
 * "External identity providers"): the policy's "identity_providers"
 * (oidc_config.c), JWS compact tokens (jose.c), key sets and signature
 * checks (jwks.c), and the providers' keys fetched and cached
 * (oidc.c) and the claims of a token mapped to a principal
 * (oidc_claims.c).
 */
#ifndef TG_AUTH_OIDC_INT_H
#define TG_AUTH_OIDC_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "toolgate/auth.h"

#define OIDC_MAX_PROVIDERS 16
#define OIDC_MAX_JWKS (256u << 10)   /* bytes of a JWKS or discovery document */
#define OIDC_MAX_KEYS 64             /* keys of a JWKS */
#define OIDC_MIN_RSA_BITS 2048
#define OIDC_MAX_RSA_BITS 8192

/* The algorithms, as bits of a provider's allowlist. */
enum oidc_alg {
	OIDC_RS256 = 1,
	OIDC_ES256 = 2,
	OIDC_EDDSA = 4,
};
#define OIDC_ALL_ALGS (OIDC_RS256 | OIDC_ES256 | OIDC_EDDSA)

/* "RS256" -> OIDC_RS256 ...; 0 for any other name. */
int oidc_alg_of(const char *name);
const char *oidc_alg_name(int alg);

/* ---- configuration (oidc_config.c) ------------------------------------------ */

struct oidc_provider_config {
	char *issuer;
	char *audience;              /* NULL: the resource the server is given */
	char *principal_claim;       /* "sub" by default */
	char *groups_claim;          /* NULL: none */
	json_t *groups;              /* idp group -> policy principal (an object), or NULL */
	char *jwks_uri;              /* NULL: discovered */
	char *ca_file;               /* NULL: the system's */
	unsigned algs;               /* OIDC_* bits */
	int scopes_from_policy;      /* "scopes": "policy" */
	/* "console": the approval console signs people in with this
	 * provider (the authorization code flow with PKCE); NULL: it does not */
	char *console_client_id;
	char *console_scope;         /* the scope asked for ("openid" by default) */
	char *console_secret;        /* read from client_secret_file; NULL: a public client */
};

struct oidc_config {
	struct oidc_provider_config v[OIDC_MAX_PROVIDERS];
	size_t n;
};

/* The policy's "identity_providers" (arr, NULL when absent: *out NULL),
 * checked against the policy's principals and its own issuer; errors
 * name the field ("policy PATH: identity_providers[0].algorithms: ...").
 * OUT *out. */
int oidc_config_parse(json_t *arr, json_t *principals, const char *own_issuer, const char *path,
		      struct oidc_config **out, struct tg_error *err);
void oidc_config_free(struct oidc_config *c);
/* The policy's providers, NULL when it has none (policy.c). */
const struct oidc_config *policy_oidc(const struct tg_policy *policy);

/* 1 if url is https, or http to a loopback host (127.0.0.1, localhost,
 * [::1]) for tests. */
int oidc_url_allowed(const char *url);

/* ---- fetching (oidc.c), for the console's sign-in (oidc_login.c) ----------- */

struct tg_idps;
/* Provider i's configuration (NULL past the last) and the resource the
 * gateway is (*resource, NULL when unknown). */
const struct oidc_provider_config *oidc_provider_of(const struct tg_idps *s, size_t i,
						    const char **resource);
/* Provider i's discovery document the console's sign-in last fetched,
 * when younger than max_age_ms (a reference; NULL: none); and the one it
 * fetched, kept. So a flood of sign-ins does not fetch it each time. */
json_t *oidc_discovery_cached(struct tg_idps *s, size_t i, uint64_t max_age_ms);
void oidc_discovery_keep(struct tg_idps *s, size_t i, json_t *doc);
/* cfg's discovery document, its issuer checked (fetched before deadline,
 * monotonic ms): 0 and OUT *doc; -1 and err. */
int oidc_discover(const struct oidc_provider_config *cfg, uint64_t deadline, const int *stop,
		  json_t **doc, struct tg_error *err);
/* The endpoint name of a discovery document, an allowed URL (malloc'd);
 * NULL and err. */
char *oidc_endpoint(const struct oidc_provider_config *cfg, json_t *doc, const char *name,
		    struct tg_error *err);
/* POST form to url (within bound_ms, at most 256 KiB back, no redirect):
 * 0 and OUT *doc, the JSON object answered with 200; -1 and err (an OAuth
 * error's code and description when the answer is one). */
int oidc_post_form(const char *url, const char *ca_file, unsigned bound_ms, const char *form,
		   json_t **doc, struct tg_error *err);

/* ---- tokens (jose.c) -------------------------------------------------------- */

/* A JWS in compact form, split and decoded; nothing verified. */
struct jose {
	const char *signed_part;     /* header.payload, borrowed from the token */
	size_t signed_len;
	unsigned char *sig;
	size_t sig_len;
	json_t *header, *claims;
	const char *alg;             /* the header's, a string */
	const char *kid;             /* the header's, or NULL */
};

/* Split and decode token (len bytes, at most TG_MAX_TOKEN): 0 and OUT
 * *j (jose_release it), -1 and a specific err (TG_ERR_INVALID, "token:
 * ..."). */
int jose_parse(const char *token, size_t len, struct jose *j, struct tg_error *err);
void jose_release(struct jose *j);
/* base64url (no padding) of [p, p+n), decoded into a malloc'd buffer
 * with a NUL after it; NULL when malformed. */
unsigned char *jose_unb64(const char *p, size_t n, size_t *out_len);
/* A part of a token decoded as a JSON object (duplicate keys refused), or
 * NULL. The gate's own tokens (token.c) are read with it too. */
json_t *jose_part_object(const char *p, size_t n);

/* ---- key sets (jwks.c) ------------------------------------------------------ */

struct jwk;
struct jwks;

/* Parse a JWKS document: at most OIDC_MAX_KEYS keys. A key that cannot
 * be used (another kty, "use" other than "sig", an RSA key under 2048
 * bits, a bad point) is kept with the reason, so a token naming it is
 * refused with that reason. -1 and err for a document that is not a JWKS
 * or has no usable key. OUT *out (jwks_put it). */
int jwks_parse(const char *text, size_t len, struct jwks **out, struct tg_error *err);
/* Reference counting: the set is shared by the cache and the requests
 * verifying with it. Not thread-safe by itself: callers hold their lock. */
void jwks_get(struct jwks *set);
void jwks_put(struct jwks *set);
size_t jwks_count(const struct jwks *set);
/* The key for a token's kid (NULL: the only key for alg) and alg: 0 and
 * OUT *key; 1 when there is none (unknown kid); -1 and err when the key
 * found does not fit alg or cannot be used. */
int jwks_find(const struct jwks *set, const char *kid, int alg, const struct jwk **key,
	      struct tg_error *err);
/* 1 if sig (the JWS signature) over data verifies with key for alg. */
int jwk_verify(const struct jwk *key, int alg, const void *data, size_t len,
	       const unsigned char *sig, size_t sig_len);

/* ---- claims (oidc_claims.c) ------------------------------------------------- */

/* The verified claims of j, from provider c, as a principal of policy and
 * its effective scopes: iss, aud (audience), exp, nbf and iat (60 s of
 * skew), the principal claim or the groups. 0, OUT principal, *scopes
 * (malloc'd) and window (the latest of nbf and iat, and exp: when the
 * token is valid, before the skew); -1 and err. */
int oidc_claims_check(const struct oidc_provider_config *c, const struct tg_policy *policy,
		      const struct jose *j, const char *audience, int64_t now, char *principal,
		      size_t plen, char **scopes, int64_t window[2], struct tg_error *err);

/* ---- fetching and cache (oidc.c) -------------------------------------------- */

/* The bounds of fetching keys, in milliseconds; tests shorten them. */
struct oidc_bounds {
	uint64_t fetch_ms;           /* discovery and JWKS together: 2 s */
	uint64_t wait_ms;            /* the longest a request waits for a refresh: 2 s */
	uint64_t min_refresh_ms;     /* a provider's keys fetched at most this often: 30 s */
	uint64_t max_age_ms;         /* when the JWKS says no max-age: 15 min */
};
void oidc_bounds_set(struct tg_idps *idps, const struct oidc_bounds *b);
/* set (taken) as provider i's keys, as a fetch would: for the fuzzers,
 * which fetch nothing. */
void oidc_keys_install(struct tg_idps *idps, size_t i, struct jwks *set);
/* Fetches of provider i so far (started), for tests. */
unsigned oidc_fetches(struct tg_idps *idps, size_t i);

#endif
