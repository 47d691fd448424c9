/*
 * JWS compact serialisation (RFC 7515) as identity providers' tokens use
 * it (docs/AUTH.md, "External identity providers"): a token split into
 * its three base64url parts, header and claims decoded as JSON objects,
 * the signature as bytes. Nothing here is verified or trusted: jwks.c
 * checks the signature, oidc_claims.c the claims.
 *
 * Owns: the decoded parts of one token. Must never: accept more than
 * TG_MAX_TOKEN bytes, a NUL byte, a part that is not strict base64url,
 * or a header with "crit" (an extension it would not honour).
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/oidc_int.h"
#include "util/sodium.h"

#define B64 sodium_base64_VARIANT_URLSAFE_NO_PADDING

unsigned char *jose_unb64(const char *p, size_t n, size_t *out_len)
{
	unsigned char *bin = malloc(n + 1);
	const char *end = NULL;

	/* sodium stops at the first byte outside the alphabet: the whole
	 * part must be consumed, or a token could carry trailing bytes */
	if (!bin || sodium_base642bin(bin, n + 1, p, n, NULL, out_len, &end, B64) != 0 ||
	    end != p + n) {
		free(bin);
		return NULL;
	}
	bin[*out_len] = '\0';
	return bin;
}

json_t *jose_part_object(const char *p, size_t n)
{
	size_t len;
	unsigned char *bin = jose_unb64(p, n, &len);
	json_t *j = bin ? json_loadb((const char *)bin, len, JSON_REJECT_DUPLICATES, NULL) : NULL;

	free(bin);
	if (j && !json_is_object(j)) {
		json_decref(j);
		return NULL;
	}
	return j;
}

static int refuse(struct tg_error *err, const char *why)
{
	return tg_error_set(err, TG_ERR_INVALID, "token: %s", why);
}

/* The two dots of a compact token: 0, or -1 when it has not three parts. */
static int split(const char *token, size_t len, const char **dot1, const char **dot2)
{
	*dot1 = memchr(token, '.', len);
	*dot2 = *dot1 ? memchr(*dot1 + 1, '.', len - (size_t)(*dot1 + 1 - token)) : NULL;
	if (!*dot2 || memchr(*dot2 + 1, '.', len - (size_t)(*dot2 + 1 - token)))
		return -1;
	return 0;
}

int jose_parse(const char *token, size_t len, struct jose *j, struct tg_error *err)
{
	const char *dot1, *dot2;
	json_t *kid;

	memset(j, 0, sizeof(*j));
	if (len > TG_MAX_TOKEN)
		return refuse(err, "longer than 8192 bytes");
	if (memchr(token, '\0', len))
		return refuse(err, "malformed (a NUL byte)");
	if (split(token, len, &dot1, &dot2) < 0)
		return refuse(err, "malformed (want three base64url parts: header.claims.signature)");
	j->header = jose_part_object(token, (size_t)(dot1 - token));
	if (!j->header)
		return refuse(err, "malformed header (want base64url of a JSON object)");
	j->alg = json_string_value(json_object_get(j->header, "alg"));
	kid = json_object_get(j->header, "kid");
	if (!j->alg || (kid && (!json_is_string(kid) || json_string_length(kid) > 256))) {
		jose_release(j);
		return refuse(err, "header: alg must be a string, and kid one of at most 256 bytes");
	}
	j->kid = json_string_value(kid);
	/* RFC 7515 4.1.11: an extension the recipient does not understand
	 * must be refused, and this one understands none */
	if (json_object_get(j->header, "crit")) {
		jose_release(j);
		return refuse(err, "header: crit names extensions this gateway does not implement");
	}
	j->claims = jose_part_object(dot1 + 1, (size_t)(dot2 - dot1 - 1));
	if (!j->claims) {
		jose_release(j);
		return refuse(err, "malformed claims (want base64url of a JSON object)");
	}
	j->sig = jose_unb64(dot2 + 1, len - (size_t)(dot2 + 1 - token), &j->sig_len);
	if (!j->sig || j->sig_len == 0) {
		jose_release(j);
		return refuse(err, "malformed signature (want base64url)");
	}
	j->signed_part = token;
	j->signed_len = (size_t)(dot2 - token);
	return 0;
}

void jose_release(struct jose *j)
{
	json_decref(j->header);
	json_decref(j->claims);
	free(j->sig);
	memset(j, 0, sizeof(*j));
}

int tg_token_issuer(const char *token, size_t len, char *iss, size_t n)
{
	const char *dot1, *dot2, *v;
	json_t *claims;
	int rc = -1;

	if (n)
		iss[0] = '\0';
	if (len > TG_MAX_TOKEN || memchr(token, '\0', len) || split(token, len, &dot1, &dot2) < 0)
		return -1;
	claims = jose_part_object(dot1 + 1, (size_t)(dot2 - dot1 - 1));
	v = json_string_value(json_object_get(claims, "iss"));
	if (v && strlen(v) < n) {
		memcpy(iss, v, strlen(v) + 1);
		rc = 0;
	}
	json_decref(claims);
	return rc;
}

int oidc_alg_of(const char *name)
{
	if (!name)
		return 0;
	if (strcmp(name, "RS256") == 0)
		return OIDC_RS256;
	if (strcmp(name, "ES256") == 0)
		return OIDC_ES256;
	if (strcmp(name, "EdDSA") == 0)
		return OIDC_EDDSA;
	return 0;
}

const char *oidc_alg_name(int alg)
{
	return alg == OIDC_RS256 ? "RS256" : alg == OIDC_ES256 ? "ES256" : alg == OIDC_EDDSA ? "EdDSA"
											       : "?";
}

int oidc_url_allowed(const char *url)
{
	static const char *const loopback[] = { "http://127.0.0.1", "http://localhost",
						"http://[::1]" };
	size_t i, n;

	for (i = 0; url[i]; i++)
		if ((unsigned char)url[i] <= ' ' || url[i] == 0x7f)
			return 0;
	if (strncmp(url, "https://", 8) == 0)
		return url[8] != '\0' && url[8] != '/';
	for (i = 0; i < sizeof(loopback) / sizeof(loopback[0]); i++) {
		n = strlen(loopback[i]);
		if (strncmp(url, loopback[i], n) != 0)
			continue;
		/* the host ends there: a port of 1 to 5 digits, then a path
		 * or nothing (http://127.0.0.1.evil.example is not loopback,
		 * nor http://127.0.0.1:80@evil.example, whose host is after
		 * the @) */
		if (url[n] == ':') {
			size_t d = strspn(url + n + 1, "0123456789");

			if (d == 0 || d > 5)
				return 0;
			n += 1 + d;
		}
		return url[n] == '\0' || url[n] == '/';
	}
	return 0;
}
