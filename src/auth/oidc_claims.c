/*
 * The claims of an identity provider's token, once its signature has
 * verified (docs/AUTH.md, "External identity providers"): issuer exact,
 * audience this resource (RFC 8707), lifetime with 60 s of skew, and the
 * principal the policy maps the token to, by its principal claim or, when
 * the policy does not know that, by exactly one of its groups; then the
 * scopes: the token's that the policy grants the principal, or all it
 * grants when the provider is so configured.
 *
 * Owns: nothing past a call. Must never: name a principal the policy does
 * not know, or give a scope the policy does not grant that principal.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth/oidc_int.h"

#define SKEW TG_TOKEN_SKEW
#define MAX_TOKEN_SCOPES 256

static int refuse(struct tg_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int refuse(struct tg_error *err, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tg_error_set(err, TG_ERR_INVALID, "token: %s", msg);
}

/* A NumericDate claim (RFC 7519 2), whole seconds from 0 to 10^15 (an
 * integer or not); 0 when absent, -1 when not such a number. */
static int date_claim(json_t *claims, const char *name, int64_t *out)
{
	json_t *v = json_object_get(claims, name);
	double d;

	if (!v)
		return 0;
	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0 || json_integer_value(v) > (json_int_t)1000000000000000)
			return -1;
		*out = json_integer_value(v);
		return 1;
	}
	d = json_is_real(v) ? json_real_value(v) : -1;
	if (d < 0 || d > 1e15)
		return -1;
	*out = (int64_t)d;
	return 1;
}

/* 1 if aud (a string, or an array of strings) names audience. */
static int aud_has(json_t *aud, const char *audience)
{
	json_t *a;
	size_t i;

	if (json_is_string(aud))
		return strcmp(json_string_value(aud), audience) == 0;
	json_array_foreach(aud, i, a)
		if (json_is_string(a) && strcmp(json_string_value(a), audience) == 0)
			return 1;
	return 0;
}

static int check_time(json_t *claims, int64_t now, int64_t window[2], struct tg_error *err)
{
	int64_t exp = 0, nbf = 0, iat = 0;
	int has_exp = date_claim(claims, "exp", &exp), has_nbf = date_claim(claims, "nbf", &nbf);
	int has_iat = date_claim(claims, "iat", &iat);

	if (has_exp <= 0 || has_nbf < 0 || has_iat < 0)
		return refuse(err, "claims: exp is required, and exp, nbf and iat are numbers from 0 "
			      "to 10^15");
	/* the skew is added to now, never to the token's numbers: an
	 * integer claim may be anything up to INT64_MAX or down to INT64_MIN */
	if (exp <= now - SKEW)
		return refuse(err, "expired");
	if ((has_nbf && nbf > now + SKEW) || (has_iat && iat > now + SKEW))
		return refuse(err, "not valid yet (nbf or iat in the future)");
	window[0] = nbf > iat ? nbf : iat;
	window[1] = exp;
	return 0;
}

/* The policy principal the token's groups map to: exactly one, or a
 * refusal (none, or two different ones). */
static int principal_of_groups(const struct oidc_provider_config *c, json_t *claims,
			       const char *claimed, char *principal, size_t plen,
			       struct tg_error *err)
{
	json_t *groups = json_object_get(claims, c->groups_claim), *g;
	const char *found = NULL, *p;
	size_t i;

	if (json_is_string(groups)) {
		found = json_string_value(json_object_get(c->groups, json_string_value(groups)));
	} else {
		json_array_foreach(groups, i, g) {
			if (i >= MAX_TOKEN_SCOPES)
				break;
			p = json_string_value(json_object_get(c->groups, json_string_value(g)));
			if (p && found && strcmp(p, found) != 0)
				return refuse(err, "its groups map to two principals, %.64s and "
					      "%.64s: ambiguous", found, p);
			if (p)
				found = p;
		}
	}
	if (!found)
		return refuse(err, "the policy does not know principal %.64s, and none of its "
			      "%.32s maps to one", claimed, c->groups_claim);
	snprintf(principal, plen, "%s", found);
	return 0;
}

static int map_principal(const struct oidc_provider_config *c, const struct tg_policy *policy,
			 json_t *claims, char *principal, size_t plen, struct tg_error *err)
{
	const char *claimed = json_string_value(json_object_get(claims, c->principal_claim));

	/* an address the provider has not verified is anyone's to type
	 * (OpenID Connect Core 5.1: email_verified): it names nobody */
	if (claimed && strcmp(c->principal_claim, "email") == 0 &&
	    !json_is_true(json_object_get(claims, "email_verified"))) {
		if (!c->groups)
			return refuse(err, "claims: email %.64s is not verified (email_verified "
				      "is not true)", claimed);
		return principal_of_groups(c, claims, "(an unverified email)", principal, plen,
					   err);
	}
	if (!claimed && !c->groups)
		return refuse(err, "claims: %.64s is required (a string)", c->principal_claim);
	if (claimed && strlen(claimed) < plen && tg_policy_knows(policy, claimed)) {
		snprintf(principal, plen, "%s", claimed);
		return 0;
	}
	if (!c->groups)
		return refuse(err, "the policy does not know principal %.64s", claimed);
	return principal_of_groups(c, claims, claimed ? claimed : "(none)", principal, plen, err);
}

/* Append s to the space-separated list out (size n, offset *off), unless
 * already there. */
static void add_scope(char *out, size_t n, size_t *off, const char *s)
{
	size_t len = strlen(s), i = 0;

	while (i < *off) { /* already listed? */
		size_t w = strcspn(out + i, " ");

		if (w == len && memcmp(out + i, s, len) == 0)
			return;
		i += w + 1;
	}
	if (*off + len + 2 > n)
		return;
	if (*off)
		out[(*off)++] = ' ';
	memcpy(out + *off, s, len + 1);
	*off += len;
}

/* The scopes of a token scope t the policy grants principal: t itself,
 * or the policy's narrower ones it covers (a token's sql.*:read and a
 * policy's sql.query:read give sql.query:read). */
static void intersect_one(const struct tg_policy *policy, const char *principal, const char *t,
			  const char *granted, char *out, size_t n, size_t *off)
{
	char *copy, *save = NULL, *g;

	if (!tg_scope_valid(t))
		return; /* openid, profile and the like: not ours */
	if (tg_policy_grants(policy, principal, t)) {
		add_scope(out, n, off, t);
		return;
	}
	copy = strdup(granted);
	for (g = copy ? strtok_r(copy, " ", &save) : NULL; g; g = strtok_r(NULL, " ", &save))
		if (tg_scope_covers(t, g))
			add_scope(out, n, off, g);
	free(copy);
}

/* The token's scope (a space-separated string) or scp (a string or an
 * array) intersected with what the policy grants principal. */
static char *token_scopes(const struct tg_policy *policy, const char *principal, json_t *claims)
{
	json_t *scope = json_object_get(claims, "scope"), *scp = json_object_get(claims, "scp"), *s;
	char *granted = tg_policy_scope_list(policy, principal), *out, *copy, *save = NULL, *t;
	size_t n, off = 0, i;

	if (!granted)
		return NULL;
	/* at most every granted scope once, and the token's own (whose
	 * text, separators included, is shorter than the token) */
	n = strlen(granted) + TG_MAX_TOKEN + 2;
	out = calloc(1, n);
	if (!out) {
		free(granted);
		return NULL;
	}
	if (!json_is_string(scope) && json_is_string(scp))
		scope = scp;
	if (json_is_string(scope)) {
		copy = strdup(json_string_value(scope));
		for (t = copy ? strtok_r(copy, " ", &save) : NULL, i = 0; t && i < MAX_TOKEN_SCOPES;
		     t = strtok_r(NULL, " ", &save), i++)
			intersect_one(policy, principal, t, granted, out, n, &off);
		free(copy);
	} else {
		json_array_foreach(scp, i, s)
			if (json_is_string(s) && i < MAX_TOKEN_SCOPES)
				intersect_one(policy, principal, json_string_value(s), granted, out,
					      n, &off);
	}
	free(granted);
	return out;
}

int oidc_claims_check(const struct oidc_provider_config *c, const struct tg_policy *policy,
		      const struct jose *j, const char *audience, int64_t now, char *principal,
		      size_t plen, char **scopes, int64_t window[2], struct tg_error *err)
{
	const char *iss = json_string_value(json_object_get(j->claims, "iss"));

	*scopes = NULL;
	if (!iss || strcmp(iss, c->issuer) != 0)
		return refuse(err, "issued by another issuer");
	if (!audience)
		return refuse(err, "the provider %.200s has no audience: set its \"audience\", or "
			      "give the server its URL", c->issuer);
	if (!aud_has(json_object_get(j->claims, "aud"), audience))
		return refuse(err, "for another audience (want %.200s, RFC 8707)", audience);
	if (check_time(j->claims, now, window, err) < 0 ||
	    map_principal(c, policy, j->claims, principal, plen, err) < 0)
		return -1;
	*scopes = c->scopes_from_policy ? tg_policy_scope_list(policy, principal)
					: token_scopes(policy, principal, j->claims);
	return *scopes ? 0 : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
}
