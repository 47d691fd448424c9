/*
 * Who a bearer token names, by whichever check its issuer asks for
 * (docs/AUTH.md, "External identity providers", "Which check"): an
 * identity provider's keys for a provider's issuer, the policy's own
 * signing key for anything else. One function, so that the gate's
 * identify hook (tg_gate_identify) and the approver's commands
 * (`toolgate approvals`, `rollback`, `upstream accept`) take the same
 * tokens the same way.
 *
 * Owns: nothing past a call. Must never: let an unverified "iss" do more
 * than choose the keys; keep or forward the token.
 */
#include <stdio.h>
#include <string.h>

#include "toolgate/auth.h"

int tg_token_identify(const struct tg_signer *signer, const struct tg_policy *policy,
		      struct tg_store *store, struct tg_idps *idps, const char *token, size_t len,
		      int64_t now, char *principal, size_t plen, char **scopes,
		      struct tg_error *err)
{
	struct tg_claims claims;
	char iss[600];

	tg_error_clear(err);
	*scopes = NULL;
	/* the issuer picks the keys, and nothing else: an identity
	 * provider's token is verified whole by its provider's */
	if (idps && tg_token_issuer(token, len, iss, sizeof(iss)) == 0 &&
	    strcmp(iss, tg_policy_issuer(policy)) != 0 && tg_idps_knows(idps, iss))
		return tg_idps_verify(idps, token, len, now, principal, plen, scopes, err);
	if (tg_token_verify(signer, policy, store, token, len, NULL, now, &claims, err) < 0)
		return -1;
	snprintf(principal, plen, "%s", claims.sub);
	*scopes = claims.scope; /* taken */
	return 0;
}
