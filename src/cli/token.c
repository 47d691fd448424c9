/*
 * toolgate token issue  --state DIR --policy FILE --principal NAME
 *                       --scope SCOPE... [--ttl 10m] [--audience AUD]
 * toolgate token verify --state DIR --policy FILE [--audience AUD] [TOKEN]
 * toolgate token revoke --state DIR --policy FILE [TOKEN]
 *
 * Short-lived signed tokens for the principals of a policy (docs/AUTH.md).
 * issue prints the token; verify prints its claims as JSON, or why it is
 * refused (exit 1); revoke records its id in the store until it expires.
 * A token argument "-" or none is read from stdin.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "toolgate/auth.h"
#include "toolgate/store.h"
#include "util/parse.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate token issue --state DIR --policy FILE --principal NAME\n"
		   "                            --scope SCOPE [--scope SCOPE...] [--ttl 10m]\n"
		   "                            [--audience AUD]\n"
		   "       toolgate token verify --state DIR --policy FILE [--audience AUD] [TOKEN]\n"
		   "       toolgate token revoke --state DIR --policy FILE [TOKEN]\n");
}

/* TOKEN, or stdin's first line for "-" or none (at most TG_MAX_TOKEN). */
static char *token_arg(const char *arg)
{
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (arg && strcmp(arg, "-") != 0)
		return strdup(arg);
	n = getline(&line, &cap, stdin);
	if (n <= 0 || n > TG_MAX_TOKEN + 1) {
		free(line);
		return NULL;
	}
	line[strcspn(line, "\r\n")] = '\0';
	return line;
}

int cmd_token(int argc, char **argv)
{
	const char *state = NULL, *policy_path = NULL, *principal = NULL, *audience = NULL;
	const char *ttl_text = "10m", *scopes[TG_MAX_SCOPES], *token_text = NULL, *verb;
	struct tg_policy *policy = NULL;
	struct tg_signer *signer = NULL;
	struct tg_store *store = NULL;
	struct tg_claims claims;
	struct tg_error err;
	size_t nscopes = 0;
	uint64_t ttl_ms;
	char *token = NULL;
	int i, rc = EXIT_TOOLGATE;

	if (argc < 2 || strcmp(argv[1], "--help") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	verb = argv[1];
	for (i = 2; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (a[0] != '-' || strcmp(a, "-") == 0) {
			token_text = a;
			continue;
		}
		if (!v) {
			fprintf(stderr, "toolgate token: %s needs a value\n", a);
			return 2;
		}
		if (strcmp(a, "--state") == 0)
			state = v;
		else if (strcmp(a, "--policy") == 0)
			policy_path = v;
		else if (strcmp(a, "--principal") == 0)
			principal = v;
		else if (strcmp(a, "--audience") == 0)
			audience = v;
		else if (strcmp(a, "--ttl") == 0)
			ttl_text = v;
		else if (strcmp(a, "--scope") == 0 && nscopes < TG_MAX_SCOPES)
			scopes[nscopes++] = v;
		else {
			fprintf(stderr, "toolgate token: unknown option '%s' (or more than %d scopes)\n",
				a, TG_MAX_SCOPES);
			return 2;
		}
		i++;
	}
	if (!state || !policy_path ||
	    (strcmp(verb, "issue") != 0 && strcmp(verb, "verify") != 0 &&
	     strcmp(verb, "revoke") != 0)) {
		usage(stderr);
		return 2;
	}
	if (tg_policy_load(policy_path, &policy, &err) < 0 ||
	    tg_signer_open(state, strcmp(verb, "issue") == 0, &signer, &err) < 0)
		goto fail;
	if (strcmp(verb, "issue") == 0) {
		struct tg_token_request req = { principal, scopes, nscopes, 0, audience };

		if (parse_duration(ttl_text, &ttl_ms, &err) < 0)
			goto fail;
		req.ttl = ttl_ms / 1000;
		if (tg_token_issue(signer, policy, &req, (int64_t)time(NULL), &token, &err) < 0)
			goto fail;
		puts(token);
		rc = 0;
		goto out;
	}
	token = token_arg(token_text);
	if (!token) {
		fprintf(stderr, "toolgate token: no token (an argument, or a line on stdin, of at "
			"most %d bytes)\n", TG_MAX_TOKEN);
		rc = 2;
		goto out;
	}
	if (tg_store_open(state, &store, &err) < 0 ||
	    tg_token_verify(signer, policy, store, token, strlen(token), audience,
			    (int64_t)time(NULL), &claims, &err) < 0) {
		rc = strcmp(verb, "verify") == 0 && err.code == TG_ERR_INVALID ? 1 : EXIT_TOOLGATE;
		goto fail_rc;
	}
	if (strcmp(verb, "verify") == 0) {
		printf("{\"sub\":\"%s\",\"jti\":\"%s\",\"iat\":%lld,\"exp\":%lld,\"scope\":\"%s\"}\n",
		       claims.sub, claims.jti, (long long)claims.iat, (long long)claims.exp,
		       claims.scope);
		rc = 0;
	} else if (tg_store_revoke(store, claims.jti, claims.exp + TG_TOKEN_SKEW, &err) == 0) {
		/* kept as long as a check would still take the token */
		printf("revoked %s (principal %s) until %lld\n", claims.jti, claims.sub,
		       (long long)claims.exp);
		rc = 0;
	}
	tg_claims_release(&claims);
	if (rc == 0)
		goto out;
fail:
	/* refused (bad input, the policy says no): 1; the system failed: 125 */
	rc = err.code == TG_ERR_INVALID ? 1 : EXIT_TOOLGATE;
fail_rc:
	fprintf(stderr, "toolgate token %s: %s\n", verb, err.msg);
out:
	free(token);
	tg_store_close(store);
	tg_signer_free(signer);
	tg_policy_free(policy);
	return rc;
}
