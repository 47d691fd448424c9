/*
 * The approval console's sign-in with an identity provider (docs/CONSOLE.md,
 * "Signing in"): the OAuth 2.1 authorization code flow with PKCE (S256)
 * and the resource indicator (RFC 8707), as the provider's "console"
 * client. The authorization request's URL, then the code exchanged at the
 * token endpoint for an access token for this gateway, which the caller
 * then verifies as any of the provider's tokens (tg_idps_verify): nothing
 * here trusts the token it brings back.
 *
 * Each provider has a redirect URI of its own (the caller's, with its
 * place in the list: src/mcp/http_console.c refuses a sign-in that comes
 * back to another's), and the code goes only to the provider the
 * sign-in began with, and not when the authorization response names
 * another issuer (RFC 9207's iss; required when the provider's metadata
 * says it sends one): a provider cannot have another's code sent to it
 * (a mix-up, RFC 9700 4.4).
 *
 * Owns: the two requests' contents. Must never: send the client secret
 * anywhere but the provider's token endpoint (found by its discovery,
 * https unless the issuer is loopback), send a code whose response names
 * another issuer, follow a redirect, or keep a token or a code (the
 * answer holding them is wiped).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auth/oidc_int.h"
#include "util/sodium.h"

#define BOUND_MS 5000 /* discovery, or the token request */
#define DISCOVERY_MAX_AGE_MS (5 * 60 * 1000)
#define B64 sodium_base64_VARIANT_URLSAFE_NO_PADDING

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* s percent-encoded (RFC 3986: all but the unreserved characters) after
 * what out holds; 0, or -1 when out is full. */
static int add(char *out, size_t len, const char *name, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(out);

	n += (size_t)snprintf(out + n, n < len ? len - n : 0, "%s%s=", n ? "&" : "", name);
	for (; *s && n + 4 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~') {
			out[n++] = (char)c;
		} else {
			out[n++] = '%';
			out[n++] = hex[c >> 4];
			out[n++] = hex[c & 15];
		}
	}
	out[n < len ? n : len - 1] = '\0';
	return *s || n + 4 >= len ? -1 : 0;
}

/* An authorization response from cfg (iss: its "iss", NULL when it had
 * none; RFC 9207 2.4): 0, or -1 and err when it names another issuer, or
 * none while doc says the provider sends it. */
static int from_issuer(const struct oidc_provider_config *cfg, json_t *doc, const char *iss,
		       struct tg_error *err)
{
	if (iss && strcmp(iss, cfg->issuer) != 0)
		return tg_error_set(err, TG_ERR_INVALID, "the authorization response is from "
				    "%.200s, not %.200s (a mix-up, RFC 9207)", iss, cfg->issuer);
	if (!iss && json_is_true(json_object_get(doc,
						 "authorization_response_iss_parameter_supported")))
		return tg_error_set(err, TG_ERR_INVALID, "the authorization response has no iss, "
				    "which %.200s sends (RFC 9207)", cfg->issuer);
	return 0;
}

/* Provider i with a console client, and its discovered endpoint name;
 * for the token endpoint (check_iss), an authorization response with iss
 * from it (from_issuer). */
static char *endpoint(struct tg_idps *s, size_t i, const char *name, int check_iss,
		      const char *iss, const struct oidc_provider_config **cfg,
		      const char **resource, struct tg_error *err)
{
	static const int never;
	json_t *doc;
	char *url;

	*cfg = oidc_provider_of(s, i, resource);
	if (!*cfg || !(*cfg)->console_client_id) {
		tg_error_set(err, TG_ERR_INVALID, "no identity provider %zu to sign in with (the "
			     "policy's identity_providers[%zu].console)", i, i);
		return NULL;
	}
	/* fetched again every 5 minutes at most: the sign-in is asked for
	 * before anyone is known, and must not fetch for each asking */
	doc = oidc_discovery_cached(s, i, DISCOVERY_MAX_AGE_MS);
	if (!doc) {
		if (oidc_discover(*cfg, now_ms() + BOUND_MS, &never, &doc, err) < 0)
			return NULL;
		oidc_discovery_keep(s, i, doc);
	}
	url = check_iss && from_issuer(*cfg, doc, iss, err) < 0
		? NULL : oidc_endpoint(*cfg, doc, name, err);
	json_decref(doc);
	/* RFC 6749 3.1, 3.2: no fragment, where the request's parameters
	 * would go */
	if (url && strchr(url, '#')) {
		tg_error_set(err, TG_ERR_INVALID, "%.200s's discovery: its %s has a fragment",
			     (*cfg)->issuer, name);
		free(url);
		url = NULL;
	}
	return url;
}

int tg_idps_login_enabled(const struct tg_idps *s, size_t i)
{
	const struct oidc_provider_config *c = oidc_provider_of(s, i, NULL);

	return c && c->console_client_id;
}

int tg_idps_login_url(struct tg_idps *s, size_t i, const char *redirect_uri, const char *state,
		      const char *verifier, char **url, struct tg_error *err)
{
	const struct oidc_provider_config *cfg;
	const char *resource;
	unsigned char hash[crypto_hash_sha256_BYTES];
	char challenge[64], query[3072] = "", *at = endpoint(s, i, "authorization_endpoint", 0,
							     NULL, &cfg, &resource, err);
	size_t n;

	*url = NULL;
	if (!at)
		return -1;
	crypto_hash_sha256(hash, (const unsigned char *)verifier, strlen(verifier));
	sodium_bin2base64(challenge, sizeof(challenge), hash, sizeof(hash), B64);
	if (add(query, sizeof(query), "response_type", "code") < 0 ||
	    add(query, sizeof(query), "client_id", cfg->console_client_id) < 0 ||
	    add(query, sizeof(query), "redirect_uri", redirect_uri) < 0 ||
	    add(query, sizeof(query), "scope", cfg->console_scope) < 0 ||
	    add(query, sizeof(query), "state", state) < 0 ||
	    add(query, sizeof(query), "code_challenge", challenge) < 0 ||
	    add(query, sizeof(query), "code_challenge_method", "S256") < 0 ||
	    (resource && add(query, sizeof(query), "resource", resource) < 0)) {
		free(at);
		return tg_error_set(err, TG_ERR_LIMIT, "the authorization request is too long");
	}
	n = strlen(at) + 1 + strlen(query) + 1;
	*url = malloc(n);
	if (*url)
		snprintf(*url, n, "%s%c%s", at, strchr(at, '?') ? '&' : '?', query);
	free(at);
	return *url ? 0 : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
}

/* A JSON value's strings wiped, in place (a token answer's tokens). */
static void wipe(json_t *v)
{
	const char *key;
	json_t *e;
	size_t i;

	if (json_is_string(v))
		sodium_memzero((char *)json_string_value(v), json_string_length(v));
	else if (json_is_object(v))
		json_object_foreach(v, key, e)
			wipe(e);
	else if (json_is_array(v))
		json_array_foreach(v, i, e)
			wipe(e);
}

int tg_idps_login_token(struct tg_idps *s, size_t i, const char *code, const char *iss,
			const char *verifier, const char *redirect_uri, char **token,
			struct tg_error *err)
{
	const struct oidc_provider_config *cfg;
	const char *resource, *tok;
	char form[4096] = "", *at = endpoint(s, i, "token_endpoint", 1, iss, &cfg, &resource, err);
	json_t *doc = NULL;
	int rc;

	*token = NULL;
	if (!at)
		return -1;
	if (add(form, sizeof(form), "grant_type", "authorization_code") < 0 ||
	    add(form, sizeof(form), "code", code) < 0 ||
	    add(form, sizeof(form), "redirect_uri", redirect_uri) < 0 ||
	    add(form, sizeof(form), "client_id", cfg->console_client_id) < 0 ||
	    add(form, sizeof(form), "code_verifier", verifier) < 0 ||
	    (resource && add(form, sizeof(form), "resource", resource) < 0) ||
	    (cfg->console_secret && add(form, sizeof(form), "client_secret",
					cfg->console_secret) < 0)) {
		sodium_memzero(form, sizeof(form));
		free(at);
		return tg_error_set(err, TG_ERR_LIMIT, "the token request is too long");
	}
	rc = oidc_post_form(at, cfg->ca_file, BOUND_MS, form, &doc, err);
	sodium_memzero(form, sizeof(form));
	free(at);
	if (rc < 0)
		return -1;
	tok = json_string_value(json_object_get(doc, "access_token"));
	if (!tok || strlen(tok) > TG_MAX_TOKEN)
		rc = tg_error_set(err, TG_ERR_INVALID, "the provider's token answer has no "
				  "access_token (of at most %d bytes)", TG_MAX_TOKEN);
	else if (!(*token = strdup(tok)))
		rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	wipe(doc);
	json_decref(doc);
	return rc;
}
