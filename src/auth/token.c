/*
 * Tokens (include/toolgate/auth.h, docs/AUTH.md): JWT (RFC 7519) signed
 * with EdDSA over Ed25519 (RFC 8037), by libsodium. The header is fixed,
 * {"alg":"EdDSA","typ":"JWT","kid":KID}; a token with any other alg is
 * refused before its signature is looked at (no "none", no confusion
 * with an HMAC key).
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth/oidc_int.h"
#include "toolgate/auth.h"
#include "toolgate/store.h"
#include "util/file.h"
#include "util/sodium.h"

#define KEY_FILE "signing.key"
#define SKEW TG_TOKEN_SKEW
#define B64 sodium_base64_VARIANT_URLSAFE_NO_PADDING

struct tg_signer {
	unsigned char sk[crypto_sign_SECRETKEYBYTES];
	unsigned char pk[crypto_sign_PUBLICKEYBYTES];
	char kid[17];
};

static void set_kid(struct tg_signer *s)
{
	unsigned char h[crypto_hash_sha256_BYTES];

	crypto_hash_sha256(h, s->pk, sizeof(s->pk));
	sodium_bin2hex(s->kid, sizeof(s->kid), h, 8);
}

static int dir_refused(const char *dir, struct tg_error *err)
{
	const char *why = file_private_dir_why(errno);

	return why ? tg_error_set(err, TG_ERR_INVALID, "state directory %s: %s; refusing to keep "
				  "a signing key there", dir, why)
		   : tg_error_sys(err, errno, "state directory %s", dir);
}

/* Make dir/signing.key: a new key, written whole under a name of its own
 * (mkstemp: O_EXCL, 0600), then linked into place. 0, 1 when another
 * process made it first (read that one), -1 and err. */
static int create_key(struct tg_signer *s, const char *dir, const char *path, struct tg_error *err)
{
	char tmp[4200], hex[2 * crypto_sign_SECRETKEYBYTES + 2];
	int fd, e = 0;
	size_t n;

	crypto_sign_keypair(s->pk, s->sk);
	sodium_bin2hex(hex, sizeof(hex) - 1, s->sk, sizeof(s->sk));
	n = 2 * crypto_sign_SECRETKEYBYTES;
	hex[n++] = '\n';
	hex[n] = '\0';
	snprintf(tmp, sizeof(tmp), "%s/signing.key.XXXXXX", dir);
	fd = mkstemp(tmp);
	if (fd < 0)
		e = errno;
	else if (write(fd, hex, n) != (ssize_t)n || fsync(fd) < 0)
		e = errno ? errno : EIO;
	if (fd >= 0 && close(fd) < 0 && !e)
		e = errno;
	if (!e && link(tmp, path) < 0)
		e = errno;
	if (fd >= 0)
		unlink(tmp);
	sodium_memzero(hex, sizeof(hex));
	if (!e)
		return 0;
	/* another process made it first: use that one */
	return e == EEXIST ? 1 : tg_error_sys(err, e, "signing key %s", path);
}

/* Read dir/signing.key: a regular file of ours, readable by nobody else,
 * never through a symbolic link. */
static char *read_key(const char *path, size_t *len, struct tg_error *err)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char *buf = NULL;
	struct stat st;
	ssize_t n;

	if (fd < 0)
		return NULL; /* errno: ENOENT means make one */
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077) || st.st_size > 4096) {
		close(fd);
		tg_error_set(err, TG_ERR_INVALID, "signing key %s: not a private file of this user "
			     "(want mode 0600, owned by uid %u)", path, (unsigned)geteuid());
		errno = EPERM;
		return NULL;
	}
	buf = malloc(4097);
	n = buf ? read(fd, buf, 4096) : -1;
	close(fd);
	if (n < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = '\0';
	*len = (size_t)n;
	return buf;
}

int tg_signer_open(const char *dir, int create, struct tg_signer **out, struct tg_error *err)
{
	unsigned char seed_pk[crypto_sign_PUBLICKEYBYTES], seed_sk[crypto_sign_SECRETKEYBYTES];
	struct tg_signer *s;
	char path[4096], *text = NULL;
	size_t len = 0, bin_len;
	int rc = -1;

	tg_error_clear(err);
	*out = NULL;
	if (tg_sodium_load("tokens", err) < 0)
		return -1;
	if (snprintf(path, sizeof(path), "%s/%s", dir, KEY_FILE) >= (int)sizeof(path) - 16)
		return tg_error_set(err, TG_ERR_INVALID, "state directory: path too long");
	if (file_private_dir(dir) < 0)
		return dir_refused(dir, err);
	s = sodium_malloc(sizeof(*s));
	if (!s)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	text = read_key(path, &len, err);
	if (!text && errno == ENOENT && create) {
		rc = create_key(s, dir, path, err);
		if (rc == 0)
			goto done;
		if (rc < 0)
			goto fail;
		text = read_key(path, &len, err);
	}
	if (!text) {
		if (err->code == TG_OK)
			tg_error_sys(err, errno, "signing key %s", path);
		goto fail;
	}
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	if (sodium_hex2bin(s->sk, sizeof(s->sk), text, len, NULL, &bin_len, NULL) != 0 ||
	    bin_len != sizeof(s->sk)) {
		tg_error_set(err, TG_ERR_INVALID, "signing key %s: want %zu hex digits", path,
			     2 * sizeof(s->sk));
		goto fail;
	}
	/* the file's two halves must agree: the key pair its seed makes */
	crypto_sign_seed_keypair(seed_pk, seed_sk, s->sk);
	if (sodium_memcmp(seed_sk, s->sk, sizeof(seed_sk)) != 0) {
		sodium_memzero(seed_sk, sizeof(seed_sk));
		tg_error_set(err, TG_ERR_INVALID, "signing key %s: its public half does not match "
			     "its seed", path);
		goto fail;
	}
	sodium_memzero(seed_sk, sizeof(seed_sk));
	memcpy(s->pk, seed_pk, sizeof(s->pk));
done:
	if (text)
		sodium_memzero(text, len);
	free(text);
	set_kid(s);
	*out = s;
	return 0;
fail:
	if (text)
		sodium_memzero(text, len);
	free(text);
	sodium_free(s);
	return -1;
}

void tg_signer_close(struct tg_signer *s)
{
	if (s)
		sodium_free(s); /* zeroed */
}

const char *tg_signer_kid(const struct tg_signer *s)
{
	return s->kid;
}

/* base64url of n bytes of p, malloc'd. */
static char *b64(const void *p, size_t n)
{
	size_t len = sodium_base64_ENCODED_LEN(n, B64);
	char *out = malloc(len);

	if (out)
		sodium_bin2base64(out, len, p, n, B64);
	return out;
}

static char *b64_json(json_t *j)
{
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL, *out;

	json_decref(j);
	if (!text)
		return NULL;
	out = b64(text, strlen(text));
	free(text);
	return out;
}

/* The longest a token of name may live: the policy's, or the
 * principal's own when shorter; a scraper's own however long (it reads
 * counters, nothing else: docs/METRICS.md). */
static uint64_t max_ttl(const struct tg_policy *p, const char *name)
{
	uint64_t max = tg_policy_max_ttl(p), own = tg_policy_principal_ttl(p, name);

	if (own && tg_policy_scrape_only(p, name))
		return own;
	return own && own < max ? own : max;
}

int tg_token_issue(const struct tg_signer *s, const struct tg_policy *p,
		   const struct tg_token_request *req, int64_t now, char **out, struct tg_error *err)
{
	unsigned char jti[16], sig[crypto_sign_BYTES];
	char jti_hex[33], *head = NULL, *body = NULL, *signing = NULL, *sig64 = NULL, *scope;
	size_t i, n = 0;
	uint64_t max;
	json_t *claims;
	int rc = -1;

	tg_error_clear(err);
	*out = NULL;
	if (!req->principal || !tg_policy_knows(p, req->principal))
		return tg_error_set(err, TG_ERR_INVALID, "token: principal %.64s is not in the "
				    "policy", req->principal ? req->principal : "(none)");
	if (req->nscopes == 0 || req->nscopes > TG_MAX_SCOPES)
		return tg_error_set(err, TG_ERR_INVALID, "token: 1 to %d scopes", TG_MAX_SCOPES);
	max = max_ttl(p, req->principal);
	if (req->ttl == 0 || req->ttl > max)
		return tg_error_set(err, TG_ERR_INVALID, "token: a lifetime of %llu s; the policy "
				    "allows %.64s 1 to %llu", (unsigned long long)req->ttl,
				    req->principal, (unsigned long long)max);
	for (i = 0; i < req->nscopes; i++) {
		if (!tg_scope_valid(req->scopes[i]))
			return tg_error_set(err, TG_ERR_INVALID, "token: scope %.100s: want "
					    "PATTERN:read|write|approve", req->scopes[i]);
		if (!tg_policy_grants(p, req->principal, req->scopes[i]))
			return tg_error_set(err, TG_ERR_INVALID, "token: the policy does not grant "
					    "%.64s the scope %.100s", req->principal, req->scopes[i]);
		n += strlen(req->scopes[i]) + 1;
	}
	scope = calloc(1, n + 1);
	if (!scope)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	for (i = 0, n = 0; i < req->nscopes; i++) {
		size_t len = strlen(req->scopes[i]);

		if (i)
			scope[n++] = ' ';
		memcpy(scope + n, req->scopes[i], len);
		n += len;
	}
	randombytes_buf(jti, sizeof(jti));
	sodium_bin2hex(jti_hex, sizeof(jti_hex), jti, sizeof(jti));
	claims = json_pack("{s:s,s:s,s:s,s:I,s:I,s:s,s:s}", "iss", tg_policy_issuer(p), "sub",
			   req->principal, "aud", req->audience ? req->audience
								: tg_policy_audience(p),
			   "iat", (json_int_t)now, "exp", (json_int_t)(now + (int64_t)req->ttl), "jti",
			   jti_hex, "scope", scope);
	free(scope);
	head = b64_json(json_pack("{s:s,s:s,s:s}", "alg", "EdDSA", "typ", "JWT", "kid", s->kid));
	body = b64_json(claims);
	if (!head || !body || asprintf(&signing, "%s.%s", head, body) < 0) {
		signing = NULL;
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	crypto_sign_detached(sig, NULL, (const unsigned char *)signing, strlen(signing), s->sk);
	sig64 = b64(sig, sizeof(sig));
	if (!sig64 || asprintf(out, "%s.%s", signing, sig64) < 0) {
		*out = NULL;
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	rc = 0;
out:
	free(head);
	free(body);
	free(signing);
	free(sig64);
	return rc;
}

static int refuse(struct tg_error *err, const char *why)
{
	return tg_error_set(err, TG_ERR_INVALID, "token: %s", why);
}

/* Every scope of the space-separated list still granted to sub. */
static int scopes_granted(const struct tg_policy *p, const char *sub, const char *list)
{
	char *copy = strdup(list), *save = NULL, *s;
	int ok = copy != NULL, n = 0;

	for (s = copy ? strtok_r(copy, " ", &save) : NULL; s && ok; s = strtok_r(NULL, " ", &save))
		ok = ++n <= TG_MAX_SCOPES && tg_policy_grants(p, sub, s);
	free(copy);
	return ok && n > 0;
}

int tg_token_verify(const struct tg_signer *s, const struct tg_policy *p, struct tg_store *store,
		    const char *token, size_t len, const char *audience, int64_t now,
		    struct tg_claims *c, struct tg_error *err)
{
	const char *dot1, *dot2, *sub, *jti, *scope;
	unsigned char *sig = NULL;
	json_t *head = NULL, *body = NULL, *exp, *iat, *nbf;
	size_t sig_len;
	int rc = -1;

	tg_error_clear(err);
	memset(c, 0, sizeof(*c));
	if (len > TG_MAX_TOKEN)
		return refuse(err, "longer than 8192 bytes");
	if (memchr(token, '\0', len))
		return refuse(err, "malformed (a NUL byte)");
	dot1 = memchr(token, '.', len);
	dot2 = dot1 ? memchr(dot1 + 1, '.', len - (size_t)(dot1 + 1 - token)) : NULL;
	if (!dot2 || memchr(dot2 + 1, '.', len - (size_t)(dot2 + 1 - token)))
		return refuse(err, "malformed (want three base64url parts: header.claims.signature)");
	head = jose_part_object(token, (size_t)(dot1 - token));
	if (!head)
		return refuse(err, "malformed header");
	/* the algorithm first: only EdDSA, whatever the token claims */
	if (!json_is_string(json_object_get(head, "alg")) ||
	    strcmp(json_string_value(json_object_get(head, "alg")), "EdDSA") != 0) {
		refuse(err, "header: alg must be EdDSA");
		goto out;
	}
	sig = jose_unb64(dot2 + 1, len - (size_t)(dot2 + 1 - token), &sig_len);
	if (!sig || sig_len != crypto_sign_BYTES ||
	    crypto_sign_verify_detached(sig, (const unsigned char *)token, (size_t)(dot2 - token),
					s->pk) != 0) {
		refuse(err, "the signature does not verify (not signed by this gateway's key)");
		goto out;
	}
	body = jose_part_object(dot1 + 1, (size_t)(dot2 - dot1 - 1));
	if (!body) {
		refuse(err, "malformed claims");
		goto out;
	}
	exp = json_object_get(body, "exp");
	iat = json_object_get(body, "iat");
	nbf = json_object_get(body, "nbf");
	sub = json_string_value(json_object_get(body, "sub"));
	jti = json_string_value(json_object_get(body, "jti"));
	scope = json_string_value(json_object_get(body, "scope"));
	if (!json_is_integer(exp) || !json_is_integer(iat) || (nbf && !json_is_integer(nbf)) ||
	    !sub || !jti || !scope || strlen(sub) > TG_MAX_PRINCIPAL_NAME || strlen(jti) > 32) {
		refuse(err, "claims: iss, sub, aud, iat, exp, jti and scope are required");
		goto out;
	}
	if (!json_is_string(json_object_get(body, "iss")) ||
	    strcmp(json_string_value(json_object_get(body, "iss")), tg_policy_issuer(p)) != 0) {
		refuse(err, "issued by another issuer");
		goto out;
	}
	if (!json_is_string(json_object_get(body, "aud")) ||
	    strcmp(json_string_value(json_object_get(body, "aud")),
		   audience ? audience : tg_policy_audience(p)) != 0) {
		refuse(err, "for another audience");
		goto out;
	}
	if (json_integer_value(exp) + SKEW <= now) {
		refuse(err, "expired");
		goto out;
	}
	if (json_integer_value(exp) - json_integer_value(iat) > (json_int_t)max_ttl(p, sub)) {
		refuse(err, "it lives longer than the policy now allows its principal");
		goto out;
	}
	if (json_integer_value(iat) - SKEW > now || (nbf && json_integer_value(nbf) - SKEW > now)) {
		refuse(err, "not valid yet (issued in the future)");
		goto out;
	}
	if (store) {
		int r = tg_store_revoked(store, jti, now, err);

		if (r != 0) {
			if (r > 0)
				refuse(err, "revoked");
			goto out;
		}
	}
	if (!scopes_granted(p, sub, scope)) {
		refuse(err, "its principal or a scope of it is no longer in the policy");
		goto out;
	}
	snprintf(c->sub, sizeof(c->sub), "%s", sub);
	snprintf(c->jti, sizeof(c->jti), "%s", jti);
	c->iat = json_integer_value(iat);
	c->exp = json_integer_value(exp);
	c->scope = strdup(scope);
	rc = c->scope ? 0 : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
out:
	free(sig);
	json_decref(head);
	json_decref(body);
	return rc;
}

void tg_claims_release(struct tg_claims *c)
{
	free(c->scope);
	c->scope = NULL;
}
