/*
 * Who calls, and what they may (include/toolgate/gate.h, docs/AUTH.md):
 * the gate's policy, the key that checks its tokens and the store that
 * revokes them, as the CLI composed them into tg_gate_options; a bearer
 * token into a principal and its scopes (stage 1 for a transport), the
 * principals' rates, and the one decision of whether scopes allow a tool
 * (stage 4), which the pipeline and a transport's early 403 both ask, and
 * an upstream's resources and prompts (pseudo-tools NAME.resources and
 * NAME.prompts, read: upstream_reads.c) too.
 *
 * A token whose (unverified) iss is one of the policy's identity
 * providers' is checked by that provider's keys (src/auth/oidc.c); any
 * other by the gate's own key, as before.
 *
 * Owns: the gate's limiter and identity providers, and its borrowed
 * policy and signer. Must never: forward or keep a caller's token, or
 * grant a tool no scope names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gate/gate_int.h"
#include "toolgate/auth.h"

int gate_identity_init(struct tg_gate *g, const struct tg_gate_options *opts,
		       struct tg_error *err)
{
	if (!opts || !opts->policy)
		return 0;
	/* tokens are checked by the signer's key and revoked in the store */
	if (!opts->signer || !opts->store)
		return tg_error_set(err, TG_ERR_INVALID, "a policy needs the key that signs its "
				    "tokens and the store that revokes them (the state directory, "
				    "--state DIR)");
	g->policy = opts->policy;
	g->signer = opts->signer;
	g->anomaly_config = tg_policy_anomalies(opts->policy);
	/* the console's origin, in the webhooks' bodies */
	if (opts->resource && !(g->resource = strdup(opts->resource)))
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (tg_idps_new(opts->policy, opts->resource, &g->idps, err) < 0)
		return -1;
	return tg_limiter_new(opts->policy, &g->limiter, err);
}

void gate_identity_release(struct tg_gate *g)
{
	tg_limiter_free(g->limiter);
	g->limiter = NULL;
	tg_idps_free(g->idps);
	g->idps = NULL;
	free(g->resource);
	g->resource = NULL;
	g->policy = NULL;
	g->signer = NULL;
	g->anomaly_config = NULL;
}

int tg_gate_has_policy(const struct tg_gate *g)
{
	return g->policy != NULL;
}

int tg_gate_identify(struct tg_gate *g, const char *token, size_t len, char *principal,
		     size_t plen, char **scopes, struct tg_error *err)
{
	tg_error_clear(err);
	*scopes = NULL;
	if (!g->policy)
		return tg_error_set(err, TG_ERR_INVALID, "no policy: the gate checks no token");
	/* the same check as the approvers' commands (src/auth/identify.c) */
	return tg_token_identify(g->signer, g->policy, g->store, g->idps, token, len,
				 (int64_t)time(NULL), principal, plen, scopes, err);
}

char *tg_gate_login_providers(struct tg_gate *g)
{
	json_t *arr = json_array(), *doc;
	const char *iss;
	char *text;
	size_t i;

	for (i = 0; arr && (iss = tg_idps_issuer(g->idps, i)); i++)
		if (tg_idps_login_enabled(g->idps, i))
			json_array_append_new(arr, json_pack("{s:I,s:s}", "id", (json_int_t)i,
							     "issuer", iss));
	doc = arr ? json_pack("{s:o}", "providers", arr) : NULL;
	text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	json_decref(doc);
	return text;
}

int tg_gate_login_url(struct tg_gate *g, size_t id, const char *redirect_uri, const char *state,
		      const char *verifier, char **url, struct tg_error *err)
{
	*url = NULL;
	if (!tg_idps_login_enabled(g->idps, id))
		return tg_error_set(err, TG_ERR_INVALID, "no identity provider %zu to sign in with",
				    id);
	return tg_idps_login_url(g->idps, id, redirect_uri, state, verifier, url, err);
}

int tg_gate_login_token(struct tg_gate *g, size_t id, const char *code, const char *iss,
			const char *verifier, const char *redirect_uri, char **token,
			struct tg_error *err)
{
	*token = NULL;
	if (!tg_idps_login_enabled(g->idps, id))
		return tg_error_set(err, TG_ERR_INVALID, "no identity provider %zu to sign in with",
				    id);
	return tg_idps_login_token(g->idps, id, code, iss, verifier, redirect_uri, token,
				   err);
}

int tg_gate_principal_scopes(struct tg_gate *g, const char *principal, char **scopes)
{
	*scopes = NULL;
	if (!g->policy)
		return -1;
	/* one the policy does not name holds no scope: fail closed */
	*scopes = tg_policy_knows(g->policy, principal) ? tg_policy_scope_list(g->policy, principal)
							 : strdup("");
	if (!*scopes)
		return -1;
	return tg_policy_knows(g->policy, principal) ? 1 : 0;
}

const char gate_own_scopes[] = "";

int gate_scope_missing_for(const struct tg_gate *g, const char *name, int write,
			   const char *scopes, char *need, size_t len)
{
	if (scopes == gate_own_scopes || (!scopes && !g->policy))
		return 0;
	if (scopes && tg_scopes_allow_call(scopes, name, write))
		return 0;
	snprintf(need, len, "%.150s:%s", name, write ? "write" : "read");
	return 1;
}

int gate_scope_missing(const struct tg_gate *g, const struct tg_contract *k, const char *scopes,
		       char *need, size_t len)
{
	return gate_scope_missing_for(g, k->name, k->authority == TG_AUTHORITY_WRITE, scopes, need,
				      len);
}

int tg_gate_may_observe(const struct tg_gate *g, const char *scopes)
{
	/* the counters show every principal's calls by tool: with a policy,
	 * only to those who decide or scrape, never to any agent the gate
	 * serves */
	return !g->policy ||
	       (scopes && (tg_scopes_approve_any(scopes) || tg_scopes_cover(scopes, TG_SCOPE_SCRAPE)));
}

int tg_gate_authorize(struct tg_gate *g, const char *scopes, const char *tool, char *need,
		      size_t len)
{
	const struct tg_catalog *cat;
	const struct tg_contract *k;
	struct tg_error err;
	int missing = 0;

	cat = tg_gate_acquire(g);
	/* a tool that does not resolve is the call's to answer */
	if (tg_catalog_resolve(cat, tool, NULL, &k, &err) == 0)
		missing = gate_scope_missing(g, k, scopes, need, len);
	tg_gate_release(g, cat);
	return !missing;
}

#define MAX_METADATA_SCOPES 4096

char *tg_gate_resource_metadata(struct tg_gate *g, const char *resource)
{
	const struct tg_catalog *cat;
	json_t *m, *servers, *scopes;
	const char *prev = NULL, *iss;
	char *text = NULL, scope[200];
	size_t i;

	m = json_pack("{s:s, s:[s], s:s}", "resource", resource, "bearer_methods_supported",
		      "header", "resource_name", "toolgate");
	servers = json_array();
	scopes = json_array();
	if (!m || !servers || !scopes)
		goto out;
	/* the providers whose tokens are taken; the gateway's own tokens
	 * come from `toolgate token issue`, no authorization server */
	for (i = 0; (iss = tg_idps_issuer(g->idps, i)); i++)
		json_array_append_new(servers, json_string(iss));
	if (json_array_size(servers))
		json_object_set(m, "authorization_servers", servers);
	/* a scope for each tool: the one a call of it needs */
	cat = tg_gate_acquire(g);
	for (i = 0; i < tg_catalog_count(cat) && json_array_size(scopes) < MAX_METADATA_SCOPES;
	     i++) {
		const struct tg_contract *k = tg_catalog_at(cat, i);

		if (prev && strcmp(prev, k->name) == 0)
			continue;
		prev = k->name;
		snprintf(scope, sizeof(scope), "%.150s:%s", k->name,
			 k->authority == TG_AUTHORITY_WRITE ? "write" : "read");
		json_array_append_new(scopes, json_string(scope));
	}
	tg_gate_release(g, cat);
	json_object_set(m, "scopes_supported", scopes);
	text = json_dumps(m, JSON_COMPACT);
out:
	json_decref(servers);
	json_decref(scopes);
	json_decref(m);
	return text;
}
