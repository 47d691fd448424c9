/*
 * libFuzzer entry point: an identity provider's token (src/auth/jose.c,
 * jwks.c, oidc_claims.c) checked by tg_idps_verify against a fixed JWKS
 * (RS256, ES256 and EdDSA keys; seeds/fuzz_oidc_token holds a valid token
 * of each, signed by their private halves, which are kept nowhere).
 * Whatever arrives, the answer is yes or no with a reason, never a crash;
 * and what is accepted names a principal of the policy with only scopes
 * it grants.
 *
 *   make fuzz && mkdir -p build-fuzz/corpus/fuzz_oidc_token &&
 *   build-fuzz/fuzz_oidc_token -max_total_time=60 build-fuzz/corpus/fuzz_oidc_token tests/fuzz/seeds/fuzz_oidc_token
 *   (libFuzzer writes what it finds to the first directory: not the seeds)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auth/oidc_int.h"
#include "toolgate/auth.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char jwks_text[] =
	"{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"rsa-1\",\"use\":\"sig\",\"n\":\"3LJ9VjFIp2oaWjIJdz"
	"JgZru4j2w81-O2wYx8J4kMx9KgX9p1P9opUQ18zbDCzqOnBRtyrzcF-nPuTb013uWp9ZjVPVBUtl9vdJCpAKumyg"
	"_SLDS2266IMWNk2tCCru9xm0TR-01VdJ5WC03FBt_gVm0S-7bWwoWpK_gDHsq6ytC5kvS1oJT2YsdF-rL29Vn7lh"
	"DQv-rWe2hKUXGOnYKZ2OVuOPUhNjUpQleZPrEIccZsd0kxR4ZBYd1WLK4LSHxc3ynCtbsaIZeUfHvKJl7-hCHDDl"
	"j_EM5oXBzAMg4FmcKNHx06b31WDipxM8M10oA5gMZRfg872xX8I1yEM4q-HQ\",\"e\":\"AQAB\"},{\"kty\":"
	"\"EC\",\"crv\":\"P-256\",\"kid\":\"ec-1\",\"x\":\"6F7K01t4mORdqudwzCLM7WELCj_mOM97XYtOTk"
	"uHYMg\",\"y\":\"6eVCuInqy__Xdlg3ulnONmQpLpWxzuROaH9Yzdqwx_o\"},{\"kty\":\"OKP\",\"crv\":"
	"\"Ed25519\",\"kid\":\"ed-1\",\"alg\":\"EdDSA\",\"x\":\"jENFn94c0gkklAECR177Ud2_d7QENQfIk"
	"nFkEosPoWQ\"}]}"
	;

static struct tg_policy *policy;
static struct tg_idps *idps;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/tmp/tg-fuzz-oidc-XXXXXX", path[64];
	struct oidc_bounds b = { 100, 100, 1000ull * 86400 * 365, 1000ull * 86400 * 365 };
	struct jwks *set;
	struct tg_error err;
	FILE *f;

	(void)argc;
	(void)argv;
	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/policy.json", dir);
	f = fopen(path, "w");
	if (!f)
		abort();
	/* a jwks_uri nothing listens on: the keys are installed, not fetched */
	fputs("{\"principals\":{\"agent-1\":{\"scopes\":[\"sql.*:read\"]},\"alice\":{\"scopes\":"
	      "[\"*:approve\"]}},\"identity_providers\":[{\"issuer\":\"https://idp.example\","
	      "\"audience\":\"https://gw.example/mcp\",\"jwks_uri\":\"http://127.0.0.1:1/jwks\","
	      "\"groups_claim\":\"groups\",\"groups\":{\"g-admins\":\"alice\",\"g-agents\":"
	      "\"agent-1\"}}]}", f);
	fclose(f);
	if (tg_policy_load(path, &policy, &err) < 0 || tg_idps_new(policy, NULL, &idps, &err) < 0 ||
	    jwks_parse(jwks_text, strlen(jwks_text), &set, &err) < 0)
		abort();
	unlink(path);
	rmdir(dir);
	oidc_bounds_set(idps, &b);
	oidc_keys_install(idps, 0, set);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char principal[128], iss[256], *scopes = NULL, *copy, *save = NULL, *s;
	struct tg_error err;

	tg_token_issuer((const char *)data, size, iss, sizeof(iss));
	if (tg_idps_verify(idps, (const char *)data, size, 1800000000, principal,
			   sizeof(principal), &scopes, &err) < 0) {
		if (!err.msg[0] || scopes)
			abort(); /* a refusal says why, and gives nothing */
		return 0;
	}
	if (!tg_policy_knows(policy, principal))
		abort();
	copy = strdup(scopes);
	for (s = copy ? strtok_r(copy, " ", &save) : NULL; s; s = strtok_r(NULL, " ", &save))
		if (!tg_policy_grants(policy, principal, s))
			abort(); /* a scope the policy does not grant */
	free(copy);
	free(scopes);
	return 0;
}
