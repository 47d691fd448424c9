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
 * with a policy (docs/AUTH.md), which the gate checks (tg_gate_identify),
 * a token of the file, or the configured principal when neither is asked
 * for. With a policy, a request's tools/call must also be one its token's
 * scopes allow before it goes further, as the gate decides it
 * (tg_gate_authorize, the pipeline's stage 4); the refusals are answered
 * here, 401 for no token that verified and 403 insufficient_scope (RFC 6750).
 *
 * It never names a principal but the one a token verified, or the
 * configured one when no token is asked for; it never holds a signing key
 * or decides a call's scope itself: that is the gate's.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "mcp/http_int.h"
#include "mcp/mcp_int.h"
#include "util/sodium.h"

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
	if (tg_sodium_load("--tokens", err) < 0)
		return -1;
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
	struct tg_error err;

	*scopes = NULL;
	snprintf(why, wlen, "a valid bearer token is required");
	if (!m->tokens && !m->policy) {
		snprintf(principal, plen, "%s", who);
		return 0;
	}
	if (!auth) {
		snprintf(why, wlen, "a valid bearer token is required (send Authorization: "
			 "Bearer TOKEN)");
		return -1;
	}
	if (strncasecmp(auth, "Bearer ", 7) != 0) {
		snprintf(why, wlen, "a valid bearer token is required: the Authorization header "
			 "is not Bearer TOKEN");
		return -1;
	}
	if (m->policy) {
		/* the gate checks it: the transport holds no key */
		if (tg_gate_identify(m->gate, auth + 7, strlen(auth + 7), principal, plen, scopes,
				     &err) < 0) {
			/* the token was not judged (its revocation could not be
			 * read): not a 401, which would tell its holder to get
			 * another, but a 503 to retry */
			if (err.code == TG_ERR_SYSTEM) {
				/* not the store's own words: they name its
				 * host, which a caller has no need of (/readyz
				 * says them to whoever runs the gateway) */
				snprintf(why, wlen, "Service Unavailable: the token cannot be "
					 "checked now (the gateway's store does not answer); "
					 "retry");
				return -2;
			}
			snprintf(why, wlen, "%.190s", err.msg);
			return -1;
		}
		return 1;
	}
	who = mcp_tokens_check(m->tokens, auth + 7, strlen(auth + 7));
	if (!who) {
		snprintf(why, wlen, "a valid bearer token is required: this one is not in the "
			 "server's token file");
		return -1;
	}
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

/* ---- who calls, and what they may ------------------------------------------------ */

/* With a policy: a tools/call's tool must be one the caller's scopes
 * allow (docs/AUTH.md), as the gate decides it; NULL, or the scope it
 * needs (in need). An unknown tool is left to the call, which answers it. */
const char *http_missing_scope(struct tg_mcp_http *h, const struct request *rq, json_t *msg,
			       char *need, size_t len)
{
	const char *method = json_string_value(json_object_get(msg, "method"));
	const char *name = json_string_value(json_object_get(json_object_get(msg, "params"),
							     "name"));
	json_t *m;
	size_t i;

	/* a batch: every call in it (the pipeline checks them again) */
	json_array_foreach(msg, i, m)
		if (http_missing_scope(h, rq, m, need, len))
			return need;
	if (!rq->scopes || !method || strcmp(method, "tools/call") != 0 || !name)
		return NULL;
	return tg_gate_authorize(h->mcp->gate, rq->scopes, name, need, len) ? NULL : need;
}

/* 403 insufficient_scope (RFC 6750): the token is good, not for this. */
enum MHD_Result http_forbidden_scope(struct tg_mcp_http *h, struct MHD_Connection *c,
				     const struct request *rq, json_t *msg, const char *need)
{
	json_t *id = json_object_get(msg, "id");
	char text[300], hdr[HTTP_MAX_URL + HTTP_MAX_AUTHORITY + 400], *body;
	char meta[HTTP_MAX_URL + HTTP_MAX_AUTHORITY + 64];
	struct MHD_Response *r;
	enum MHD_Result rc;

	/* refused before the pipeline: recorded here, as the pipeline
	 * records its own refusals */
	tg_gate_record_refusal(h->mcp->gate, rq->principal, need, "forbidden",
			       "insufficient_scope");
	snprintf(text, sizeof(text), "Forbidden: insufficient_scope: the call needs the scope %s",
		 need);
	body = rpc_error(id ? id : json_null(), RPC_INVALID_REQUEST, text);
	json_decref(msg);
	r = MHD_create_response_from_buffer(body ? strlen(body) : 0, body ? body : (char *)"",
					    MHD_RESPMEM_MUST_COPY);
	free(body);
	if (!r)
		return MHD_NO;
	http_front_metadata_url(&h->front, h->port, meta, sizeof(meta));
	snprintf(hdr, sizeof(hdr), "Bearer realm=\"toolgate\", error=\"insufficient_scope\", "
		 "scope=\"%s\", resource_metadata=\"%s\"", need, meta);
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "WWW-Authenticate", hdr);
	rc = MHD_queue_response(c, MHD_HTTP_FORBIDDEN, r);
	MHD_destroy_response(r);
	return rc;
}

/* 401: no bearer token that verified. */
enum MHD_Result http_unauthorized(struct tg_mcp_http *h, struct MHD_Connection *c,
				  const char *why, int presented)
{
	char text[260], hdr[HTTP_MAX_URL + HTTP_MAX_AUTHORITY + 160];
	char meta[HTTP_MAX_URL + HTTP_MAX_AUTHORITY + 64];
	char *body;
	struct MHD_Response *r;
	enum MHD_Result rc;

	snprintf(text, sizeof(text), "Unauthorized: %s", why);
	body = rpc_error(json_null(), RPC_INVALID_REQUEST, text);
	r = MHD_create_response_from_buffer(body ? strlen(body) : 0, body ? body : (char *)"",
					    MHD_RESPMEM_MUST_COPY);

	free(body);
	if (!r)
		return MHD_NO;
	if (h->mcp->policy)
		http_front_metadata_url(&h->front, h->port, meta, sizeof(meta));
	snprintf(hdr, sizeof(hdr), "Bearer realm=\"toolgate\"%s%s%s%s",
		 presented ? ", error=\"invalid_token\"" : "",
		 h->mcp->policy ? ", resource_metadata=\"" : "", h->mcp->policy ? meta : "",
		 h->mcp->policy ? "\"" : "");
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "WWW-Authenticate", hdr);
	rc = MHD_queue_response(c, MHD_HTTP_UNAUTHORIZED, r);
	MHD_destroy_response(r);
	return rc;
}

enum MHD_Result http_resource_metadata(struct tg_mcp_http *h, struct MHD_Connection *c,
				       const char *method)
{
	char url[HTTP_MAX_URL + HTTP_MAX_AUTHORITY + 32], *text;
	struct MHD_Response *r;
	enum MHD_Result rc;

	if (!h->mcp->policy)
		return http_error(c, MHD_HTTP_NOT_FOUND, RPC_INVALID_REQUEST, "Not Found: no "
				  "protected resource metadata without a policy (serve --policy)");
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return http_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, RPC_INVALID_REQUEST,
				  "Method Not Allowed: GET the metadata");
	http_front_resource(&h->front, h->port, url, sizeof(url));
	text = tg_gate_resource_metadata(h->mcp->gate, url);
	if (!text)
		return MHD_NO;
	r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Cache-Control", "max-age=300");
	rc = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}
