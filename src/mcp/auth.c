/*
 * Bearer tokens for the Streamable HTTP transport: the identify stage's
 * hook for HTTP (docs/MCP.md, "Bearer tokens"). A token file maps the
 * SHA-256 of each token to the principal it stands for, one per line:
 *
 *     # sha256(token)                                                  principal
 *     9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08 alice
 *
 * so the file holds no usable secret (`printf %s "$token" | sha256sum`
 * makes a line). A token stands for one principal: a hash listed twice is
 * refused, never settled by order. A request's token is hashed and compared with every
 * entry in constant time (libsodium), so neither the answer's timing nor
 * an early exit tells which entry came close.
 *
 * mcp_http_identify is the whole of HTTP's identify stage: a signed token
 * with a policy (docs/AUTH.md), a token of the file, or the configured
 * principal when neither is asked for.
 */
#include <ctype.h>
#include <errno.h>
#include <sodium.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "mcp/mcp_int.h"

#define MAX_TOKENS 4096
#define MAX_TOKEN_FILE (1u << 20)

struct mcp_tokens {
	struct {
		unsigned char hash[crypto_hash_sha256_BYTES];
		char principal[MCP_MAX_PRINCIPAL];
		unsigned line;
	} *v;
	size_t n;
};

static int hexval(int c)
{
	return isdigit(c) ? c - '0' : isxdigit(c) ? (tolower(c) - 'a' + 10) : -1;
}

int mcp_principal_valid(const char *p)
{
	size_t n = strlen(p), i;

	if (n == 0 || n >= MCP_MAX_PRINCIPAL)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)p[i]) && !strchr("._@-", p[i]))
			return 0;
	return 1;
}

/* The entry being added (t->v[t->n]) has the hash of an earlier one: -1 and
 * err naming both lines. A token stands for one principal; which of two
 * would be a guess (the last one won before this check). */
static int duplicate(const struct mcp_tokens *t, const char *path, struct tg_error *err)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (memcmp(t->v[i].hash, t->v[t->n].hash, sizeof(t->v[i].hash)) == 0)
			return tg_error_set(err, TG_ERR_INVALID, "--tokens %s: line %u: the token "
					    "of line %u again (for %s, there for %s): list each "
					    "token once", path, t->v[t->n].line, t->v[i].line,
					    t->v[t->n].principal, t->v[i].principal);
	return 0;
}

int mcp_tokens_load(const char *path, struct mcp_tokens **out, struct tg_error *err)
{
	struct mcp_tokens *t;
	char line[512];
	unsigned lineno = 0;
	long size;
	FILE *f;

	*out = NULL;
	if (sodium_init() < 0)
		return tg_error_set(err, TG_ERR_SYSTEM, "libsodium could not start");
	f = fopen(path, "r");
	if (!f)
		return tg_error_sys(err, errno, "--tokens %s", path);
	if (fseek(f, 0, SEEK_END) < 0 || (size = ftell(f)) < 0 || size > (long)MAX_TOKEN_FILE ||
	    fseek(f, 0, SEEK_SET) < 0) {
		fclose(f);
		return tg_error_set(err, TG_ERR_LIMIT, "--tokens %s: larger than %u bytes", path,
				    MAX_TOKEN_FILE);
	}
	t = calloc(1, sizeof(*t));
	if (t)
		t->v = calloc(MAX_TOKENS, sizeof(*t->v));
	if (!t || !t->v) {
		fclose(f);
		mcp_tokens_free(t);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	while (fgets(line, sizeof(line), f)) {
		char hex[80], principal[MCP_MAX_PRINCIPAL + 2];
		size_t i;
		int k;

		lineno++;
		if (!strchr(line, '\n') && !feof(f))
			goto bad_line;
		for (i = 0; isspace((unsigned char)line[i]); i++)
			;
		if (line[i] == '#' || line[i] == '\0')
			continue;
		if (sscanf(line, "%79s %129s", hex, principal) != 2 || strlen(hex) != 64 ||
		    !mcp_principal_valid(principal) || t->n == MAX_TOKENS)
			goto bad_line;
		for (k = 0; k < 32; k++) {
			int hi = hexval((unsigned char)hex[2 * k]), lo = hexval((unsigned char)hex[2 * k + 1]);

			if (hi < 0 || lo < 0)
				goto bad_line;
			t->v[t->n].hash[k] = (unsigned char)(hi * 16 + lo);
		}
		/* mcp_principal_valid: shorter than the field */
		memcpy(t->v[t->n].principal, principal, strlen(principal) + 1);
		t->v[t->n].line = lineno;
		if (duplicate(t, path, err) < 0) {
			fclose(f);
			mcp_tokens_free(t);
			return -1;
		}
		t->n++;
	}
	fclose(f);
	if (t->n == 0) {
		mcp_tokens_free(t);
		return tg_error_set(err, TG_ERR_INVALID, "--tokens %s: no token", path);
	}
	*out = t;
	return 0;
bad_line:
	fclose(f);
	mcp_tokens_free(t);
	return tg_error_set(err, TG_ERR_INVALID,
			    "--tokens %s: line %u: want the 64 hex digits of a token's SHA-256 and a "
			    "principal ([A-Za-z0-9._@-], at most %d characters)",
			    path, lineno, MCP_MAX_PRINCIPAL - 1);
}

const char *mcp_tokens_check(const struct mcp_tokens *t, const char *token, size_t len)
{
	unsigned char h[crypto_hash_sha256_BYTES];
	const char *found = NULL;
	size_t i;

	crypto_hash_sha256(h, (const unsigned char *)token, len);
	/* every entry compared, whatever matched */
	for (i = 0; i < t->n; i++)
		if (sodium_memcmp(h, t->v[i].hash, sizeof(h)) == 0)
			found = t->v[i].principal;
	return found;
}

int mcp_http_identify(const struct tg_mcp *m, const char *auth, char *principal, size_t plen,
		      char **scopes, char *why, size_t wlen)
{
	const char *who = m->principal;
	struct tg_claims claims;
	struct tg_error err;

	*scopes = NULL;
	snprintf(why, wlen, "a valid bearer token is required");
	if (!m->tokens && !m->policy) {
		snprintf(principal, plen, "%s", who);
		return 0;
	}
	if (!auth || strncasecmp(auth, "Bearer ", 7) != 0)
		return -1;
	if (m->policy) {
		if (tg_token_verify(m->signer, m->policy, m->store, auth + 7, strlen(auth + 7), NULL,
				    (int64_t)time(NULL), &claims, &err) < 0) {
			snprintf(why, wlen, "%.190s", err.msg);
			return -1;
		}
		snprintf(principal, plen, "%s", claims.sub);
		*scopes = claims.scope; /* taken */
		return 1;
	}
	who = mcp_tokens_check(m->tokens, auth + 7, strlen(auth + 7));
	if (!who)
		return -1;
	snprintf(principal, plen, "%s", who);
	return 1;
}

void mcp_tokens_free(struct mcp_tokens *t)
{
	if (!t)
		return;
	free(t->v);
	free(t);
}
