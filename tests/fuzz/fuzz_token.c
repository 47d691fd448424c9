/*
 * libFuzzer entry point: token verification (src/auth/token.c), what a
 * caller presents as a bearer token. Whatever arrives, verification
 * answers yes or no with a reason, never crashes; and anything it accepts
 * must carry the claims the policy allows (only a token this process
 * signed can pass, so acceptance here would be a forgery).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "toolgate/auth.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tg_policy *policy;
static struct tg_signer *signer;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/tmp/tg-fuzz-token-XXXXXX", path[64], cmd[96];
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
	fputs("{\"principals\":{\"agent-1\":{\"scopes\":[\"sql.*:read\"]}}}", f);
	fclose(f);
	if (tg_policy_load(path, &policy, &err) < 0 || tg_signer_open(dir, 1, &signer, &err) < 0)
		abort();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_claims c;
	struct tg_error err;

	if (tg_token_verify(signer, policy, NULL, (const char *)data, size, NULL, 1000, &c, &err) == 0)
		abort(); /* nothing here was signed by this process's new key */
	if (!err.msg[0])
		abort(); /* a refusal says why */
	return 0;
}
