/*
 * toolgate token issue  --state DIR --policy FILE --principal NAME
 *                       --scope SCOPE... [--ttl 10m] [--audience AUD]
 * toolgate token verify --state DIR --policy FILE [--store URL] [--audience AUD] [TOKEN]
 * toolgate token revoke --state DIR --policy FILE [--store URL] [TOKEN]
 *
 * Short-lived signed tokens for the principals of a policy (docs/AUTH.md).
 * issue prints the token; verify prints its claims as JSON, or why it is
 * refused (exit 1); revoke records its id in the store until it expires.
 * A token argument "-" or none is read from stdin. The store is the state
 * directory's, or with --store URL a PostgreSQL database (the key stays
 * the state directory's: --state is needed all the same).
 *
 * Also the one reader of the token an approver's command is given
 * (cli_token_read: --token TOKEN, --token - or --token-file FILE), which
 * checks a token's file as the other secrets' files are checked: ours,
 * nobody else's to read.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/config.h"
#include "toolgate/auth.h"
#include "toolgate/store.h"
#include "util/parse.h"
#include "util/sodium.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: toolgate token issue --state DIR --policy FILE --principal NAME\n"
		   "                            --scope SCOPE [--scope SCOPE...] [--ttl 10m]\n"
		   "                            [--audience AUD]\n"
		   "       toolgate token verify --state DIR --policy FILE [--store URL]\n"
		   "                             [--audience AUD] [TOKEN]\n"
		   "       toolgate token revoke --state DIR --policy FILE [--store URL] [TOKEN]\n"
		   "\n"
		   "--store URL: the revocations are kept in this PostgreSQL database\n"
		   "(postgres://HOST/DB, no password in it: docs/STORE.md), not in DIR's store;\n"
		   "the signing key is DIR's all the same.\n"
		   "TOKEN \"-\" or none: stdin's first line. Exit status: 0; 1 the token is\n"
		   "refused; 2 usage; 3 the state directory, key, store or policy missing\n"
		   "or failing (docs/CLI.md).\n");
}

void cli_token_free(char *token)
{
	if (token) {
		sodium_memzero(token, strlen(token));
		free(token);
	}
}

/* TOKEN, or stdin's first line for "-" or none (at most TG_MAX_TOKEN
 * bytes: no more than one past that is read). */
static char *token_arg(const char *arg)
{
	char *line;
	size_t n;

	if (arg && strcmp(arg, "-") != 0)
		return strdup(arg);
	line = malloc(TG_MAX_TOKEN + 3);
	if (!line || !fgets(line, TG_MAX_TOKEN + 3, stdin)) {
		free(line);
		return NULL;
	}
	n = strcspn(line, "\r\n");
	if (n == 0 || n > TG_MAX_TOKEN) {
		sodium_memzero(line, TG_MAX_TOKEN + 3);
		free(line);
		return NULL;
	}
	line[n] = '\0';
	return line;
}

/* Why the token file open as fd (at path) is refused, into why; 0 when
 * it may be read. A token decides as its principal: a file others may
 * read lends that to them, one another user owns may be swapped. */
static int token_file_check(int fd, char *why, size_t len)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		snprintf(why, len, "%s", strerror(errno));
	else if (!S_ISREG(st.st_mode))
		snprintf(why, len, "is not a regular file");
	else if (st.st_uid != geteuid())
		snprintf(why, len, "is owned by uid %u, not by this user (uid %u)",
			 (unsigned)st.st_uid, (unsigned)geteuid());
	else if (st.st_mode & 077)
		snprintf(why, len, "has mode %04o: others may read or change it; a token's file "
			 "is 0600 or stricter (chmod 600)", (unsigned)(st.st_mode & 07777));
	else if (st.st_size > TG_MAX_TOKEN + 2)
		snprintf(why, len, "holds %lld bytes, more than a token's %d and a newline",
			 (long long)st.st_size, TG_MAX_TOKEN);
	else
		return 0;
	return -1;
}

/* The one line of the token file at path: 0 and OUT *out, or the exit
 * status having said why. */
static int token_file(const char *who, const char *path, char **out)
{
	char buf[TG_MAX_TOKEN + 3], why[160];
	ssize_t n;
	size_t got = 0;
	int fd;

	/* O_NONBLOCK: a FIFO named by mistake is refused, not waited on */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		fprintf(stderr, "toolgate %s: --token-file %s: %s\n", who, path, strerror(errno));
		return EXIT_DATA;
	}
	if (token_file_check(fd, why, sizeof(why)) < 0) {
		close(fd);
		fprintf(stderr, "toolgate %s: --token-file %s %s\n", who, path, why);
		return EXIT_DATA;
	}
	while (got < sizeof(buf) - 1 && (n = read(fd, buf + got, sizeof(buf) - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			fprintf(stderr, "toolgate %s: --token-file %s: %s\n", who, path,
				strerror(errno));
			close(fd);
			return EXIT_DATA;
		}
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	/* one trailing newline, as an editor or echo leaves it */
	if (got && buf[got - 1] == '\n')
		buf[--got] = '\0';
	if (got && buf[got - 1] == '\r')
		buf[--got] = '\0';
	if (!got || strlen(buf) != got || strcspn(buf, "\r\n \t") != got || got > TG_MAX_TOKEN) {
		fprintf(stderr, "toolgate %s: --token-file %s: %s\n", who, path,
			!got ? "is empty: it should hold the token (toolgate token issue ... > FILE)"
			     : got > TG_MAX_TOKEN ? "holds more than a token's bytes"
						  : "holds more than one token: one line, the token");
		return EXIT_DATA;
	}
	*out = strdup(buf);
	return *out ? 0 : EXIT_DATA;
}

int cli_token_read(const char *who, const char *arg, const char *file, char **out)
{
	*out = NULL;
	if (arg && file) {
		fprintf(stderr, "toolgate %s: --token or --token-file, not both\n", who);
		return EXIT_USAGE;
	}
	if (file)
		return token_file(who, file, out);
	if (!arg) {
		fprintf(stderr, "toolgate %s: --token-file FILE (or --token -, read from stdin) is "
			"needed: who decides\n", who);
		return EXIT_USAGE;
	}
	*out = token_arg(arg);
	if (*out && **out)
		return 0;
	free(*out);
	*out = NULL;
	if (strcmp(arg, "-") == 0)
		fprintf(stderr, "toolgate %s: --token -: no token on stdin (one line, at most %d "
			"bytes)\n", who, TG_MAX_TOKEN);
	else
		fprintf(stderr, "toolgate %s: --token: empty\n", who);
	return EXIT_USAGE;
}

static const struct option options[] = {
	CLI_OPTION_STATE,
	CLI_OPTION_STORE,
	CLI_OPTION_POLICY,
	{ "principal", required_argument, NULL, 'P' },
	{ "audience", required_argument, NULL, 'a' },
	{ "ttl", required_argument, NULL, 't' },
	{ "scope", required_argument, NULL, 'S' },
	CLI_OPTION_HELP,
	CLI_OPTION_END,
};

/* What token was asked. */
struct token_args {
	const char *state, *policy, *principal, *audience, *ttl, *token, *store;
	const char *scopes[TG_MAX_SCOPES];
	size_t nscopes;
};

/* --scope, the one option given more than once. */
static int add_scope(int opt, const char *arg, void *ctx)
{
	struct token_args *a = ctx;

	(void)opt;
	if (a->nscopes == TG_MAX_SCOPES) {
		fprintf(stderr, "toolgate token: --scope %s: at most %d scopes\n", arg,
			TG_MAX_SCOPES);
		return -1;
	}
	a->scopes[a->nscopes++] = arg;
	return 0;
}

/* argv (argv[0] the verb) into *a: -1, or the exit status (--help: 0; a
 * usage error, said: 2). */
static int token_parse(int argc, char **argv, struct token_args *a)
{
	const struct cli_bind binds[] = {
		{ 's', &a->state }, { 'p', &a->policy }, { 'P', &a->principal },
		{ 'a', &a->audience }, { 't', &a->ttl }, { CLI_STORE, &a->store }, { 0, NULL },
	};
	char who[32];
	int rc;

	snprintf(who, sizeof(who), "token %.16s", argv[0]);
	rc = cli_parse(who, argc, argv, ":h", options, usage, binds, add_scope, a);
	if (rc >= 0)
		return rc;
	if (optind < argc)
		a->token = argv[optind++];
	if (optind < argc) {
		fprintf(stderr, "toolgate %s: one TOKEN only\n", who);
		return EXIT_USAGE;
	}
	/* issue opens no store: the configuration file's is not for it */
	if (strcmp(argv[0], "issue") == 0 && cli_config_gave(a->store))
		a->store = NULL;
	if (a->store && strcmp(argv[0], "issue") == 0) {
		fprintf(stderr, "toolgate %s: --store is not an option of issue (it keeps nothing "
			"in the store)\n", who);
		return EXIT_USAGE;
	}
	if (cli_store_url(who, a->store) < 0)
		return EXIT_USAGE;
	if (!a->state || !a->policy) {
		fprintf(stderr, "toolgate %s: --state DIR and --policy FILE are needed\n", who);
		usage(stderr);
		return EXIT_USAGE;
	}
	return -1;
}

int cmd_token(int argc, char **argv)
{
	const char *state, *policy_path, *principal, *audience, *ttl_text, *token_text, *verb;
	struct token_args args = { 0 };
	struct tg_policy *policy = NULL;
	struct tg_signer *signer = NULL;
	struct tg_store *store = NULL;
	struct tg_claims claims;
	struct tg_error err;
	uint64_t ttl_ms;
	char *token = NULL;
	int rc;

	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : 0;
	}
	verb = argv[1];
	if (strcmp(verb, "issue") != 0 && strcmp(verb, "verify") != 0 &&
	    strcmp(verb, "revoke") != 0) {
		fprintf(stderr, "toolgate token: unknown command '%s' (issue, verify or revoke)\n",
			verb);
		return EXIT_USAGE;
	}
	rc = token_parse(argc - 1, argv + 1, &args);
	if (rc >= 0)
		return rc;
	rc = EXIT_DATA;
	state = args.state, policy_path = args.policy, principal = args.principal;
	audience = args.audience, ttl_text = args.ttl ? args.ttl : "10m";
	token_text = args.token;
	/* issue makes the state directory and its key; verify and revoke use them */
	if (strcmp(verb, "issue") != 0 && cli_state_exists(strcmp(verb, "verify") == 0 ?
							   "token verify" : "token revoke", state) < 0)
		return EXIT_DATA;
	if (tg_policy_load(policy_path, &policy, &err) < 0 ||
	    tg_signer_open(state, strcmp(verb, "issue") == 0, &signer, &err) < 0)
		goto fail;
	if (strcmp(verb, "issue") == 0) {
		struct tg_token_request req = { principal, args.scopes, args.nscopes, 0, audience };

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
		rc = EXIT_USAGE;
		goto out;
	}
	/* verify reads the revocations, if any were ever made: no store made */
	if ((strcmp(verb, "revoke") == 0 || cli_has_store(cli_store_at(args.store, state))) &&
	    tg_store_open(cli_store_at(args.store, state), &store, &err) < 0) {
		rc = EXIT_DATA;
		goto fail_rc;
	}
	if (tg_token_verify(signer, policy, store, token, strlen(token), audience,
			    (int64_t)time(NULL), &claims, &err) < 0)
		goto fail;
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
	/* refused (bad input, the policy says no): 1; the state, key or policy: 3 */
	rc = err.code == TG_ERR_INVALID ? EXIT_NO : EXIT_DATA;
fail_rc:
	fprintf(stderr, "toolgate token %s: %s\n", verb, err.msg);
out:
	cli_token_free(token);
	tg_store_close(store);
	tg_signer_close(signer);
	tg_policy_free(policy);
	return rc;
}
