/* Unit tests: external identity providers (src/auth/jose.c, jwks.c,
 * oidc.c, oidc_claims.c, oidc_config.c; docs/AUTH.md, "External identity
 * providers"): the policy's identity_providers, tokens signed with RSA,
 * P-256 and Ed25519 keys made here and every refusal, keys fetched from a
 * provider served on loopback (idpfix.c) that is down, slow, serves
 * garbage or rotates its keys, and the gate's hook. */
#include <openssl/err.h>
#include <pthread.h>
#include <sodium.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "auth/oidc_int.h"
#include "idpfix.h"
#include "toolgate/auth.h"
#include "toolgate/catalog.h"
#include "toolgate/gate.h"
#include "toolgate/store.h"
#include "unit.h"

#define AUD "https://gw.example/mcp"
#define PRINCIPALS "\"principals\":{\"agent-1\":{\"scopes\":[\"sql.*:read\",\"fs.write:write\"]}," \
	"\"alice\":{\"scopes\":[\"*:approve\"]},\"bob\":{\"scopes\":[\"sql.query:read\"]}}"

struct fix {
	char dir[64];
	struct idp_server *srv;
	struct idp_key *rsa, *ec, *ed;
	struct tg_policy *policy;
	struct tg_idps *idps;
};

static struct idp_key *keys[3];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* policy text with PRINCIPALS and one provider {issuer, extra}, loaded. */
static int load_policy(struct fix *f, const char *issuer, const char *extra,
		       struct tg_error *err)
{
	char text[4096], path[128];

	snprintf(text, sizeof(text), "{" PRINCIPALS ",\"identity_providers\":[{\"issuer\":\"%s\"%s}]}",
		 issuer, extra);
	snprintf(path, sizeof(path), "%s/p.json", f->dir);
	if (unit_put(NULL, path, text, 0600) < 0)
		return -2;
	return tg_policy_load(path, &f->policy, err);
}

/* The JWKS of the three keys, and extra keys (JSON, "" for none). */
static char *jwks_of(struct fix *f, const char *extra)
{
	char *a = idp_key_jwk(f->rsa, ""), *b = idp_key_jwk(f->ec, ",\"use\":\"sig\""),
	     *c = idp_key_jwk(f->ed, ""), *out = NULL;

	if (a && b && c && asprintf(&out, "{\"keys\":[%s,%s,%s%s]}", a, b, c, extra) < 0)
		out = NULL;
	free(a);
	free(b);
	free(c);
	return out;
}

/* A token from key (kid its own unless kid_over) with alg and claims
 * (a printf format: the times are filled in by the caller). */
static char *token(const struct idp_key *key, const char *alg, const char *kid,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static char *token(const struct idp_key *key, const char *alg, const char *kid,
		   const char *fmt, ...)
{
	char header[256], claims[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(claims, sizeof(claims), fmt, ap);
	va_end(ap);
	snprintf(header, sizeof(header), "{\"alg\":\"%s\",\"typ\":\"JWT\",\"kid\":\"%s\"}", alg, kid);
	return idp_token(key, alg, header, claims, NULL);
}

/* Claims of a good token for sub with scope, from f's server. */
#define GOOD "{\"iss\":\"%s\",\"aud\":\"" AUD "\",\"sub\":\"%s\",\"exp\":%lld,\"iat\":%lld," \
	"\"scope\":\"%s\"}"

static char *good(struct fix *f, const struct idp_key *k, const char *alg, const char *sub,
		  const char *scope)
{
	long long t = (long long)time(NULL);

	return token(k, alg, k == f->rsa ? "rsa-1" : k == f->ec ? "ec-1" : "ed-1", GOOD,
		     idp_server_url(f->srv), sub, t + 600, t, scope);
}

/* Verify tok: 0 accepted (principal and scopes into who and *scopes), -1
 * refused with err. */
static int verify(struct fix *f, const char *tok, char *who, char **scopes,
		  struct tg_error *err)
{
	char w[128], *s = NULL;
	int rc = tg_idps_verify(f->idps, tok, strlen(tok), (int64_t)time(NULL), w, sizeof(w), &s,
				err);

	if (who)
		snprintf(who, 128, "%s", w);
	if (scopes)
		*scopes = s;
	else
		free(s);
	if (rc < 0 && getenv("OIDC_VERBOSE"))
		fprintf(stderr, "# refused: %s\n", err->msg);
	return rc;
}

/* tok is refused with a message holding want. */
static int refused(struct fix *f, char *tok, const char *want)
{
	struct tg_error err;
	int rc;

	if (!tok)
		return 0;
	rc = verify(f, tok, NULL, NULL, &err);
	free(tok);
	if (rc == 0 || !strstr(err.msg, want)) {
		fprintf(stderr, "# want a refusal with \"%s\", got: %s\n", want,
			rc == 0 ? "accepted" : err.msg);
		return 0;
	}
	return 1;
}

/* The keys made once per process (RSA-2048 takes a moment). */
static int make_keys(struct fix *f)
{
	if (!keys[0]) {
		keys[0] = idp_key_new(IDP_RSA, 2048, "rsa-1");
		keys[1] = idp_key_new(IDP_EC, 0, "ec-1");
		keys[2] = idp_key_new(IDP_ED, 0, "ed-1");
	}
	f->rsa = keys[0];
	f->ec = keys[1];
	f->ed = keys[2];
	return keys[0] && keys[1] && keys[2] ? 0 : -1;
}

/* Wait until the provider's keys are in (a good token verifies), 5 s at most. */
static int ready(struct fix *f)
{
	struct tg_error err;
	char *tok = good(f, f->ed, "EdDSA", "agent-1", "sql.*:read");
	int i, rc = -1;

	for (i = 0; tok && i < 100 && rc < 0; i++) {
		rc = verify(f, tok, NULL, NULL, &err);
		if (rc < 0)
			usleep(50000);
	}
	free(tok);
	return rc;
}

/* A provider on loopback serving the three keys (and extra_keys), the
 * policy with its extra fields, the set started; ready when wait. */
static int setup(struct fix *f, const char *extra_fields, const char *extra_keys,
		 const char *resource, int wait)
{
	struct tg_error err;
	char *jwks;

	memset(f, 0, sizeof(*f));
	if (unit_tmpdir(f->dir, "oidc") < 0 || make_keys(f) < 0 || !(f->srv = idp_server_start()))
		return -1;
	jwks = jwks_of(f, extra_keys);
	if (!jwks)
		return -1;
	idp_server_set_jwks(f->srv, jwks);
	free(jwks);
	if (load_policy(f, idp_server_url(f->srv), extra_fields, &err) < 0 ||
	    tg_idps_new(f->policy, resource, &f->idps, &err) < 0) {
		fprintf(stderr, "# %s\n", err.msg);
		return -1;
	}
	return wait ? ready(f) : 0;
}

static void teardown(struct fix *f)
{
	tg_idps_free(f->idps);
	tg_policy_free(f->policy);
	idp_server_stop(f->srv);
	unit_rmtree(f->dir);
}

/* ---- configuration ---------------------------------------------------------- */

/* The provider extra refused with a message holding want. */
static int config_refused(struct fix *f, const char *issuer, const char *extra, const char *want)
{
	struct tg_error err;
	int rc = load_policy(f, issuer, extra, &err);

	if (rc == 0) {
		tg_policy_free(f->policy);
		f->policy = NULL;
	}
	if (rc == 0 || !strstr(err.msg, want)) {
		fprintf(stderr, "# %s: want a refusal with \"%s\", got: %s\n", extra, want,
			rc == 0 ? "loaded" : err.msg);
		return 0;
	}
	return 1;
}

static int config(void)
{
	struct fix f = { 0 };
	struct tg_error err;
	char text[8192], path[128];
	size_t i, off;

	CHECK(unit_tmpdir(f.dir, "oidc") == 0);
	CHECK(load_policy(&f, "https://idp.example", ",\"audience\":\"a\",\"principal_claim\":"
			  "\"email\",\"groups_claim\":\"roles\",\"groups\":{\"admins\":\"alice\"},"
			  "\"algorithms\":[\"RS256\"],\"jwks_uri\":\"https://idp.example/k\","
			  "\"scopes\":\"policy\"", &err) == 0);
	CHECK(policy_oidc(f.policy) && policy_oidc(f.policy)->n == 1);
	CHECK(policy_oidc(f.policy)->v[0].algs == OIDC_RS256);
	CHECK(policy_oidc(f.policy)->v[0].scopes_from_policy == 1);
	tg_policy_free(f.policy);
	f.policy = NULL;
	/* defaults */
	CHECK(load_policy(&f, "http://127.0.0.1:9", "", &err) == 0);
	CHECK(policy_oidc(f.policy)->v[0].algs == OIDC_ALL_ALGS);
	CHECK(strcmp(policy_oidc(f.policy)->v[0].principal_claim, "sub") == 0);
	tg_policy_free(f.policy);
	f.policy = NULL;
	/* https, or http to a loopback host that ends where it should */
	CHECK(oidc_url_allowed("https://idp.example/realms/x") && oidc_url_allowed("http://[::1]:80/x"));
	CHECK(oidc_url_allowed("http://localhost") && oidc_url_allowed("http://127.0.0.1:9/"));
	CHECK(!oidc_url_allowed("http://localhost@evil.example") && !oidc_url_allowed("https://"));
	/* a port then userinfo: the host is the one after the @ */
	CHECK(!oidc_url_allowed("http://127.0.0.1:80@evil.example/k") &&
	      !oidc_url_allowed("http://localhost:@evil.example") &&
	      !oidc_url_allowed("http://[::1]:1@evil.example") &&
	      !oidc_url_allowed("http://127.0.0.1:123456/"));
	CHECK(!oidc_url_allowed("https://a b") && !oidc_url_allowed("HTTP://127.0.0.1"));
	CHECK(!oidc_url_allowed("http://127.0.0.10") && !oidc_url_allowed("file:///etc/passwd"));
	CHECK(config_refused(&f, "http://idp.example", "", "identity_providers[0].issuer: an https"));
	CHECK(config_refused(&f, "http://127.0.0.1.evil.example", "", "issuer: an https"));
	CHECK(config_refused(&f, "https://idp.example", ",\"x\":1",
			     "identity_providers[0]: unknown field \"x\""));
	CHECK(config_refused(&f, "https://idp.example", ",\"algorithms\":[\"none\"]",
			     "identity_providers[0].algorithms: none is never accepted"));
	CHECK(config_refused(&f, "https://idp.example", ",\"algorithms\":[\"HS256\"]",
			     "algorithms: HS256 is never accepted"));
	CHECK(config_refused(&f, "https://idp.example", ",\"algorithms\":[\"PS256\"]",
			     "algorithms: PS256: want"));
	CHECK(config_refused(&f, "https://idp.example", ",\"algorithms\":[\"RS256\",\"RS256\"]",
			     "algorithms: RS256 twice"));
	CHECK(config_refused(&f, "https://idp.example", ",\"algorithms\":[]", "algorithms: 1 to 3"));
	CHECK(config_refused(&f, "https://idp.example", ",\"groups_claim\":\"g\"",
			     ".groups_claim: groups_claim and groups go together"));
	CHECK(config_refused(&f, "https://idp.example", ",\"groups_claim\":\"g\",\"groups\":"
			     "{\"x\":\"mallory\"}", ".groups.x: want the name of a principal"));
	CHECK(config_refused(&f, "https://idp.example", ",\"scopes\":\"all\"", ".scopes: \"token\""));
	CHECK(config_refused(&f, "https://idp.example", ",\"jwks_uri\":\"ftp://x\"", ".jwks_uri"));
	CHECK(config_refused(&f, "https://idp.example", ",\"ca_file\":\"/nonexistent/ca.pem\"",
			     ".ca_file: /nonexistent/ca.pem cannot be read"));
	CHECK(config_refused(&f, "https://idp.example", ",\"audience\":\"\"", ".audience: a string"));
	CHECK(config_refused(&f, "https://idp.example", ",\"issuer\":\"https://b\"",
			     "duplicate"));
	/* the console's client: a client_id, a secret only its owner reads */
	CHECK(config_refused(&f, "https://idp.example", ",\"console\":{}",
			     ".console.client_id: required"));
	CHECK(config_refused(&f, "https://idp.example", ",\"console\":{\"client_id\":\"c\","
			     "\"x\":1}", ".console: unknown field \"x\""));
	snprintf(path, sizeof(path), "%s/secret", f.dir);
	CHECK(unit_put(NULL, path, "s3cret\n", 0644) == 0);
	snprintf(text, sizeof(text), ",\"console\":{\"client_id\":\"c\",\"client_secret_file\":"
		 "\"%s\"}", path);
	CHECK(config_refused(&f, "https://idp.example", text, "only its owner may read"));
	CHECK(unit_put(NULL, path, "s3cret\n", 0600) == 0);
	CHECK(load_policy(&f, "https://idp.example", text, &err) == 0);
	CHECK(strcmp(policy_oidc(f.policy)->v[0].console_secret, "s3cret") == 0);
	CHECK(strcmp(policy_oidc(f.policy)->v[0].console_scope, "openid") == 0);
	tg_policy_free(f.policy);
	f.policy = NULL;
	/* two providers with one issuer; seventeen; the policy's own issuer */
	snprintf(text, sizeof(text), "{" PRINCIPALS ",\"identity_providers\":[{\"issuer\":"
		 "\"https://a\"},{\"issuer\":\"https://a\"}]}");
	snprintf(path, sizeof(path), "%s/p2.json", f.dir);
	CHECK(unit_put(NULL, path, text, 0600) == 0);
	CHECK(tg_policy_load(path, &f.policy, &err) < 0 &&
	      strstr(err.msg, "identity_providers[1].issuer: the issuer of identity_providers[0]"));
	off = (size_t)snprintf(text, sizeof(text), "{" PRINCIPALS ",\"identity_providers\":[");
	for (i = 0; i < 17; i++)
		off += (size_t)snprintf(text + off, sizeof(text) - off, "%s{\"issuer\":\"https://i%zu\"}",
					i ? "," : "", i);
	snprintf(text + off, sizeof(text) - off, "]}");
	CHECK(unit_put(NULL, path, text, 0600) == 0);
	CHECK(tg_policy_load(path, &f.policy, &err) < 0 &&
	      strstr(err.msg, "identity_providers: an array of at most 16"));
	snprintf(text, sizeof(text), "{\"issuer\":\"https://a\"," PRINCIPALS ",\"identity_providers\":"
		 "[{\"issuer\":\"https://a\"}]}");
	CHECK(unit_put(NULL, path, text, 0600) == 0);
	CHECK(tg_policy_load(path, &f.policy, &err) < 0 && strstr(err.msg, "the policy's own issuer"));
	/* a policy without providers has no set */
	snprintf(text, sizeof(text), "{" PRINCIPALS "}");
	CHECK(unit_put(NULL, path, text, 0600) == 0);
	CHECK(tg_policy_load(path, &f.policy, &err) == 0);
	CHECK(tg_idps_new(f.policy, AUD, &f.idps, &err) == 0 && f.idps == NULL);
	tg_policy_free(f.policy);
	unit_rmtree(f.dir);
	return 0;
}

/* ---- key sets --------------------------------------------------------------- */

static int jwks(void)
{
	struct fix f = { 0 };
	struct tg_error err;
	const struct jwk *k;
	struct jwks *set;
	unsigned char n[128], sig[256];
	char doc[4096], *n64, *rsa, *many;
	size_t i, off;

	CHECK(make_keys(&f) == 0);
	CHECK(jwks_parse("garbage", 7, &set, &err) < 0 && strstr(err.msg, "JWKS: want"));
	CHECK(jwks_parse("{\"keys\":[]}", 11, &set, &err) < 0);
	CHECK(jwks_parse("{\"keys\":[1]}", 12, &set, &err) < 0);
	/* a short RSA key and an encryption key alone: nothing usable */
	memset(n, 0xc5, sizeof(n));
	n64 = idp_b64(n, sizeof(n));
	snprintf(doc, sizeof(doc), "{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"short\",\"n\":\"%s\","
		 "\"e\":\"AQAB\"}]}", n64);
	CHECK(jwks_parse(doc, strlen(doc), &set, &err) < 0 &&
	      strstr(err.msg, "fewer than 2048 bits"));
	/* kept beside a usable key, with the reason */
	rsa = idp_key_jwk(f.rsa, "");
	CHECK(rsa != NULL);
	snprintf(doc, sizeof(doc), "{\"keys\":[{\"kty\":\"RSA\",\"kid\":\"short\",\"n\":\"%s\","
		 "\"e\":\"AQAB\"},%s,{\"kty\":\"oct\",\"kid\":\"h\",\"k\":\"AAAA\"}]}", n64, rsa);
	free(n64);
	CHECK(jwks_parse(doc, strlen(doc), &set, &err) == 0 && jwks_count(set) == 3);
	CHECK(jwks_find(set, "short", OIDC_RS256, &k, &err) < 0 &&
	      strstr(err.msg, "key short is not usable: an RSA key of fewer than 2048 bits"));
	CHECK(jwks_find(set, "h", OIDC_RS256, &k, &err) < 0 && strstr(err.msg, "other than RSA"));
	CHECK(jwks_find(set, "rsa-1", OIDC_ES256, &k, &err) < 0 &&
	      strstr(err.msg, "alg ES256 does not fit key rsa-1"));
	CHECK(jwks_find(set, "nope", OIDC_RS256, &k, &err) == 1);
	CHECK(jwks_find(set, "rsa-1", OIDC_RS256, &k, &err) == 0 && k);
	CHECK(jwks_find(set, NULL, OIDC_RS256, &k, &err) == 0 && k); /* the only one */
	/* a refused signature leaves nothing in libcrypto's error queue,
	 * which libcurl's TLS reads too */
	memset(sig, 0x5a, sizeof(sig));
	CHECK(!jwk_verify(k, OIDC_RS256, "x", 1, sig, sizeof(sig)) && ERR_peek_error() == 0);
	CHECK(!jwk_verify(k, OIDC_RS256, "x", 1, sig, 255) && ERR_peek_error() == 0);
	jwks_put(set);
	/* use other than sig; a JWK whose alg is not its type's */
	free(rsa);
	rsa = idp_key_jwk(f.rsa, ",\"use\":\"enc\"");
	snprintf(doc, sizeof(doc), "{\"keys\":[%s]}", rsa);
	CHECK(jwks_parse(doc, strlen(doc), &set, &err) < 0 && strstr(err.msg, "use other than sig"));
	free(rsa);
	rsa = idp_key_jwk(f.rsa, ",\"key_ops\":[\"encrypt\"]");
	snprintf(doc, sizeof(doc), "{\"keys\":[%s]}", rsa);
	CHECK(jwks_parse(doc, strlen(doc), &set, &err) < 0 && strstr(err.msg, "key_ops"));
	free(rsa);
	rsa = idp_key_jwk(f.rsa, ",\"key_ops\":[\"verify\"]");
	snprintf(doc, sizeof(doc), "{\"keys\":[%s]}", rsa);
	CHECK(jwks_parse(doc, strlen(doc), &set, &err) == 0);
	jwks_put(set);
	free(rsa);
	rsa = idp_key_jwk(f.rsa, ",\"alg\":\"ES256\"");
	snprintf(doc, sizeof(doc), "{\"keys\":[%s]}", rsa);
	CHECK(jwks_parse(doc, strlen(doc), &set, &err) < 0 && strstr(err.msg, "not its type's"));
	free(rsa);
	/* a point that is not on P-256 (0, 0; and the real key's x with
	 * another y): refused when the set is read */
	{
		static const char bad_ec[] = "{\"keys\":[{\"kty\":\"EC\",\"crv\":\"P-256\","
			"\"x\":\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\",\"y\":"
			"\"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\"}]}";
		char *ec = idp_key_jwk(f.ec, ""), *y;

		CHECK(jwks_parse(bad_ec, strlen(bad_ec), &set, &err) < 0 &&
		      strstr(err.msg, "not on P-256"));
		CHECK(ec != NULL && (y = strstr(ec, "\"y\":\"")) != NULL);
		y[5] = y[5] == 'A' ? 'B' : 'A';
		snprintf(doc, sizeof(doc), "{\"keys\":[%s]}", ec);
		CHECK(jwks_parse(doc, strlen(doc), &set, &err) < 0 && strstr(err.msg, "not on P-256"));
		CHECK(ERR_peek_error() == 0);
		free(ec);
	}
	/* 65 keys */
	many = malloc(65 * 40 + 32);
	CHECK(many != NULL);
	off = (size_t)snprintf(many, 32, "{\"keys\":[");
	for (i = 0; i < 65; i++)
		off += (size_t)snprintf(many + off, 40, "%s{\"kty\":\"x\"}", i ? "," : "");
	snprintf(many + off, 8, "]}");
	CHECK(jwks_parse(many, strlen(many), &set, &err) < 0 && strstr(err.msg, "1 to 64 keys"));
	free(many);
	return 0;
}

/* ---- tokens ----------------------------------------------------------------- */

static int accepts(void)
{
	struct fix f;
	struct tg_error err;
	char who[128], *scopes, *tok;
	long long t = (long long)time(NULL);
	int i;

	CHECK(setup(&f, ",\"audience\":\"" AUD "\"", "", NULL, 1) == 0);
	for (i = 0; i < 3; i++) {
		const struct idp_key *k = i == 0 ? f.rsa : i == 1 ? f.ec : f.ed;

		tok = good(&f, k, i == 0 ? "RS256" : i == 1 ? "ES256" : "EdDSA", "agent-1",
			   "openid sql.*:read fs.write:read profile");
		CHECK(tok && verify(&f, tok, who, &scopes, &err) == 0);
		CHECK(strcmp(who, "agent-1") == 0);
		/* openid and profile are not toolgate's scopes */
		CHECK(strcmp(scopes, "sql.*:read fs.write:read") == 0);
		free(scopes);
		free(tok);
	}
	/* ES256's r and s, leading zeros and high bits alike, many times */
	for (i = 0; i < 64; i++) {
		tok = token(f.ec, "ES256", "ec-1", "{\"iss\":\"%s\",\"aud\":\"" AUD "\",\"sub\":"
			    "\"agent-1\",\"exp\":%lld,\"n\":%d}", idp_server_url(f.srv), t + 60, i);
		CHECK(tok && verify(&f, tok, NULL, NULL, &err) == 0);
		free(tok);
	}
	/* aud as an array; scp as an array; the token's wider scope narrowed
	 * to the policy's (bob has sql.query:read only) */
	tok = token(f.rsa, "RS256", "rsa-1", "{\"iss\":\"%s\",\"aud\":[\"other\",\"" AUD "\"],"
		    "\"sub\":\"bob\",\"exp\":%lld,\"scp\":[\"sql.*:read\",\"fs.write:write\"]}",
		    idp_server_url(f.srv), t + 60);
	CHECK(tok && verify(&f, tok, who, &scopes, &err) == 0);
	CHECK(strcmp(who, "bob") == 0 && strcmp(scopes, "sql.query:read") == 0);
	free(scopes);
	free(tok);
	/* no scope claim: no scope (known principal, nothing it may call) */
	tok = token(f.ed, "EdDSA", "ed-1", "{\"iss\":\"%s\",\"aud\":\"" AUD "\",\"sub\":\"alice\","
		    "\"exp\":%lld}", idp_server_url(f.srv), t + 60);
	CHECK(tok && verify(&f, tok, who, &scopes, &err) == 0);
	CHECK(strcmp(who, "alice") == 0 && strcmp(scopes, "") == 0);
	free(scopes);
	free(tok);
	/* a scope the policy does not grant is dropped */
	tok = good(&f, f.ed, "EdDSA", "bob", "fs.write:write *:approve sql.query:read");
	CHECK(tok && verify(&f, tok, NULL, &scopes, &err) == 0);
	CHECK(strcmp(scopes, "sql.query:read") == 0);
	free(scopes);
	free(tok);
	teardown(&f);
	return 0;
}

static int scopes_from_policy(void)
{
	struct fix f;
	struct tg_error err;
	char who[128], *scopes, *tok;

	CHECK(setup(&f, ",\"scopes\":\"policy\"", "", AUD, 1) == 0); /* the resource's audience */
	tok = good(&f, f.rsa, "RS256", "agent-1", "openid");
	CHECK(tok && verify(&f, tok, who, &scopes, &err) == 0);
	CHECK(strcmp(who, "agent-1") == 0 && strcmp(scopes, "sql.*:read fs.write:write") == 0);
	free(scopes);
	free(tok);
	teardown(&f);
	return 0;
}

/* The signature part of tok replaced by sig (base64url). */
static char *resigned(char *tok, const char *sig)
{
	char *dot = tok ? strrchr(tok, '.') : NULL, *out = NULL;

	if (dot && asprintf(&out, "%.*s.%s", (int)(dot - tok), tok, sig) < 0)
		out = NULL;
	free(tok);
	return out;
}

static int refusals(void)
{
	struct fix f;
	const char *iss;
	char big[9000], hmac64[64], *tok, *rsa_jwk;
	unsigned char mac[32];
	long long t = (long long)time(NULL);

	CHECK(setup(&f, ",\"audience\":\"" AUD "\"", "", NULL, 1) == 0);
	iss = idp_server_url(f.srv);
	CHECK(refused(&f, token(f.rsa, "RS256", "rsa-1", GOOD, iss, "agent-1", t - 100, t - 700,
				"sql.*:read"), "token: expired"));
	CHECK(refused(&f, token(f.rsa, "RS256", "rsa-1", "{\"iss\":\"%s\",\"aud\":\"" AUD "\","
				"\"sub\":\"agent-1\",\"exp\":%lld,\"nbf\":%lld}", iss, t + 900,
				t + 300), "not valid yet"));
	CHECK(refused(&f, token(f.rsa, "RS256", "rsa-1", GOOD, iss, "agent-1", t + 600, t + 300,
				""), "not valid yet"));
	CHECK(refused(&f, token(f.rsa, "RS256", "rsa-1", "{\"iss\":\"%s\",\"aud\":\"https://other/"
				"mcp\",\"sub\":\"agent-1\",\"exp\":%lld}", iss, t + 60),
		      "for another audience"));
	CHECK(refused(&f, token(f.rsa, "RS256", "rsa-1", "{\"iss\":\"%s\",\"sub\":\"agent-1\","
				"\"exp\":%lld}", iss, t + 60), "for another audience"));
	CHECK(refused(&f, token(f.rsa, "RS256", "rsa-1", "{\"iss\":\"%s/\",\"aud\":\"" AUD "\","
				"\"sub\":\"agent-1\",\"exp\":%lld}", iss, t + 60),
		      "issued by no issuer this gateway trusts"));
	CHECK(refused(&f, token(f.rsa, "RS256", "rsa-1", "{\"iss\":\"%s\",\"aud\":\"" AUD "\","
				"\"sub\":\"agent-1\"}", iss), "exp is required"));
	CHECK(refused(&f, token(f.rsa, "RS256", "rsa-1", "{\"iss\":\"%s\",\"aud\":\"" AUD "\","
				"\"sub\":\"agent-1\",\"exp\":\"soon\"}", iss), "exp is required"));
	/* numbers whose skew would overflow */
	CHECK(refused(&f, token(f.rsa, "RS256", "rsa-1", "{\"iss\":\"%s\",\"aud\":\"" AUD "\","
				"\"sub\":\"agent-1\",\"exp\":9223372036854775807}", iss),
		      "exp is required"));
	CHECK(refused(&f, token(f.rsa, "RS256", "rsa-1", "{\"iss\":\"%s\",\"aud\":\"" AUD "\","
				"\"sub\":\"agent-1\",\"exp\":%lld,\"nbf\":-9223372036854775808}",
				iss, t + 60), "exp is required"));
	CHECK(refused(&f, token(f.rsa, "RS256", "rsa-1", GOOD, iss, "mallory", t + 60, t, ""),
		      "the policy does not know principal mallory"));
	CHECK(refused(&f, token(f.rsa, "RS256", "rsa-1", "{\"iss\":\"%s\",\"aud\":\"" AUD "\","
				"\"exp\":%lld}", iss, t + 60), "sub is required"));
	/* alg none, with and without a signature */
	CHECK(refused(&f, idp_token(NULL, "none", "{\"alg\":\"none\"}", "{}", ""), "malformed"));
	snprintf(big, sizeof(big), GOOD, iss, "agent-1", t + 60, t, "sql.*:read");
	CHECK(refused(&f, idp_token(NULL, "none", "{\"alg\":\"none\",\"kid\":\"rsa-1\"}", big, "AA"),
		      "alg none (unsigned) is never accepted"));
	/* HS256 keyed with the provider's RSA public key (its JWK text) */
	rsa_jwk = idp_key_jwk(f.rsa, "");
	CHECK(rsa_jwk != NULL);
	tok = idp_token(NULL, "HS256", "{\"alg\":\"HS256\",\"kid\":\"rsa-1\"}", big, "x");
	CHECK(tok != NULL);
	{
		char *dot = strrchr(tok, '.');
		char *sig;

		crypto_auth_hmacsha256(mac, (const unsigned char *)tok, (size_t)(dot - tok),
				       (const unsigned char *)rsa_jwk);
		sig = idp_b64(mac, sizeof(mac));
		snprintf(hmac64, sizeof(hmac64), "%s", sig);
		free(sig);
	}
	free(rsa_jwk);
	CHECK(refused(&f, resigned(tok, hmac64), "alg HS256 is never accepted"));
	CHECK(refused(&f, token(f.rsa, "PS256", "rsa-1", GOOD, iss, "agent-1", t + 60, t, ""),
		      "alg PS256 is not one"));
	/* alg/kty mismatch: an ES256 header naming the RSA key, and an RSA
	 * signature under an EdDSA header */
	CHECK(refused(&f, token(f.ec, "ES256", "rsa-1", GOOD, iss, "agent-1", t + 60, t, ""),
		      "alg ES256 does not fit key rsa-1"));
	CHECK(refused(&f, token(f.rsa, "EdDSA", "ed-1", GOOD, iss, "agent-1", t + 60, t, ""),
		      "the signature does not verify"));
	/* a key of another's signature; a flipped byte */
	CHECK(refused(&f, token(f.ed, "EdDSA", "ec-1", GOOD, iss, "agent-1", t + 60, t, ""),
		      "does not fit key ec-1"));
	tok = good(&f, f.rsa, "RS256", "agent-1", "sql.*:read");
	CHECK(tok != NULL);
	tok[strlen(tok) - 5] = tok[strlen(tok) - 5] == 'A' ? 'B' : 'A';
	CHECK(refused(&f, tok, "the signature does not verify"));
	tok = good(&f, f.ec, "ES256", "agent-1", "sql.*:read");
	CHECK(refused(&f, resigned(tok, "AAAA"), "the signature does not verify"));
	/* unknown kid (no refresh: the keys are fresh) */
	CHECK(refused(&f, token(f.rsa, "RS256", "rsa-9", GOOD, iss, "agent-1", t + 60, t, ""),
		      "unknown kid rsa-9"));
	/* oversized, malformed */
	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	big[100] = '.';
	big[200] = '.';
	CHECK(refused(&f, strdup(big), "longer than 8192 bytes"));
	CHECK(refused(&f, strdup("abc"), "want three base64url parts"));
	CHECK(refused(&f, strdup("a.b.c.d"), "want three base64url parts"));
	CHECK(refused(&f, strdup("!!!.e30.AA"), "malformed header"));
	CHECK(refused(&f, strdup("eyJhbGciOiJSUzI1NiJ9.!!!.AA"), "malformed claims"));
	CHECK(refused(&f, strdup("eyJhbGciOiJSUzI1NiJ9.e30=.AA"), "malformed claims")); /* padding */
	CHECK(refused(&f, strdup("bm90IGpzb24.e30.AA"), "malformed header"));           /* not JSON */
	CHECK(refused(&f, strdup("eyJhbGciOiJSUzI1NiJ9.WzFd.AA"), "malformed claims")); /* [1] */
	CHECK(refused(&f, strdup("eyJhbGciOiJSUzI1NiJ9.e30.!"), "malformed signature"));
	CHECK(refused(&f, strdup("eyJhbGciOjF9.e30.AA"), "alg must be a string"));
	CHECK(refused(&f, idp_token(NULL, "RS256", "{\"alg\":\"RS256\",\"crit\":[\"x\"]}", "{}", "AA"),
		      "crit"));
	teardown(&f);
	return 0;
}

static int short_rsa_key(void)
{
	struct fix f;
	struct idp_key *weak = idp_key_new(IDP_RSA, 1024, "weak");
	char *jwk = weak ? idp_key_jwk(weak, "") : NULL, extra[1024];
	long long t = (long long)time(NULL);

	CHECK(jwk != NULL);
	snprintf(extra, sizeof(extra), ",%s", jwk);
	free(jwk);
	CHECK(setup(&f, ",\"audience\":\"" AUD "\"", extra, NULL, 1) == 0);
	CHECK(refused(&f, token(weak, "RS256", "weak", GOOD, idp_server_url(f.srv), "agent-1",
				t + 60, t, ""), "fewer than 2048 bits"));
	idp_key_free(weak);
	teardown(&f);
	return 0;
}

static int algorithms_allowed(void)
{
	struct fix f;
	struct tg_error err;
	char *tok;

	CHECK(setup(&f, ",\"audience\":\"" AUD "\",\"algorithms\":[\"RS256\",\"EdDSA\"]", "", NULL,
		    1) == 0);
	CHECK(refused(&f, good(&f, f.ec, "ES256", "agent-1", ""), "alg ES256 is not one"));
	tok = good(&f, f.rsa, "RS256", "agent-1", "");
	CHECK(tok && verify(&f, tok, NULL, NULL, &err) == 0);
	free(tok);
	teardown(&f);
	return 0;
}

static int groups(void)
{
	struct fix f;
	struct tg_error err;
	char who[128], *scopes, *tok;
	const char *iss;
	long long t = (long long)time(NULL);

	CHECK(setup(&f, ",\"audience\":\"" AUD "\",\"principal_claim\":\"email\",\"groups_claim\":"
		    "\"groups\",\"groups\":{\"g-agents\":\"agent-1\",\"g-admins\":\"alice\","
		    "\"g-ops\":\"alice\"}", "", NULL, 0) == 0);
	iss = idp_server_url(f.srv);
	/* the principal claim, when the policy knows it */
	tok = token(f.ed, "EdDSA", "ed-1", "{\"iss\":\"%s\",\"aud\":\"" AUD "\",\"email\":\"bob\","
		    "\"email_verified\":true,\"exp\":%lld,\"scope\":\"sql.query:read\"}", iss,
		    t + 60);
	for (int i = 0; i < 100 && verify(&f, tok, who, NULL, &err) < 0; i++)
		usleep(50000);
	CHECK(verify(&f, tok, who, &scopes, &err) == 0 && strcmp(who, "bob") == 0);
	free(scopes);
	free(tok);
	/* an address the provider did not verify names nobody */
	CHECK(refused(&f, token(f.ed, "EdDSA", "ed-1", "{\"iss\":\"%s\",\"aud\":\"" AUD "\","
				"\"email\":\"bob\",\"email_verified\":false,\"exp\":%lld}", iss,
				t + 60), "principal (an unverified email)"));
	/* else its one group's principal (two groups of one principal too) */
	tok = token(f.ed, "EdDSA", "ed-1", "{\"iss\":\"%s\",\"aud\":\"" AUD "\",\"email\":"
		    "\"a@corp\",\"exp\":%lld,\"groups\":[\"staff\",\"g-admins\",\"g-ops\"],"
		    "\"scope\":\"*:approve\"}", iss, t + 60);
	CHECK(tok && verify(&f, tok, who, &scopes, &err) == 0);
	CHECK(strcmp(who, "alice") == 0 && strcmp(scopes, "*:approve") == 0);
	free(scopes);
	free(tok);
	/* two principals: ambiguous, both named */
	CHECK(refused(&f, token(f.ed, "EdDSA", "ed-1", "{\"iss\":\"%s\",\"aud\":\"" AUD "\","
				"\"email\":\"a@corp\",\"exp\":%lld,\"groups\":[\"g-agents\","
				"\"g-admins\"]}", iss, t + 60),
		      "two principals, agent-1 and alice: ambiguous"));
	/* none of its groups maps */
	CHECK(refused(&f, token(f.ed, "EdDSA", "ed-1", "{\"iss\":\"%s\",\"aud\":\"" AUD "\","
				"\"email\":\"m@corp\",\"email_verified\":true,\"exp\":%lld,"
				"\"groups\":[\"staff\"]}", iss, t + 60),
		      "the policy does not know principal m@corp"));
	CHECK(refused(&f, token(f.ed, "EdDSA", "ed-1", "{\"iss\":\"%s\",\"aud\":\"" AUD "\","
				"\"exp\":%lld}", iss, t + 60), "does not know principal (none)"));
	teardown(&f);
	return 0;
}

static int no_audience(void)
{
	struct fix f;

	CHECK(setup(&f, "", "", NULL, 0) == 0); /* no audience, no resource */
	for (int i = 0; i < 100 && oidc_fetches(f.idps, 0) == 0; i++)
		usleep(50000);
	usleep(200000);
	CHECK(refused(&f, good(&f, f.rsa, "RS256", "agent-1", ""), "has no audience"));
	teardown(&f);
	return 0;
}

/* ---- fetching --------------------------------------------------------------- */

/* A loopback port nothing listens on. */
static unsigned closed_port(void)
{
	struct idp_server *s = idp_server_start();
	unsigned port = 0;

	if (s) {
		port = (unsigned)strtoul(strrchr(idp_server_url(s), ':') + 1, NULL, 10);
		idp_server_stop(s);
	}
	return port;
}

static int fetch_down(void)
{
	struct fix f;
	char extra[128];
	double t0;

	snprintf(extra, sizeof(extra), ",\"audience\":\"" AUD "\",\"jwks_uri\":"
		 "\"http://127.0.0.1:%u/jwks\"", closed_port());
	/* the provider down at start: the set starts all the same */
	CHECK(setup(&f, extra, "", NULL, 0) == 0);
	t0 = now_s();
	CHECK(refused(&f, good(&f, f.rsa, "RS256", "agent-1", ""), "no keys yet from"));
	CHECK(now_s() - t0 < 2.5);
	CHECK(idp_server_hits(f.srv, 0) == 0); /* jwks_uri given: no discovery */
	teardown(&f);
	return 0;
}

static int fetch_slow(void)
{
	struct fix f;
	struct tg_error err;
	struct oidc_bounds b = { 2000, 2000, 100, 900000 };
	long long t = (long long)time(NULL);
	char *tok;
	double t0;

	CHECK(setup(&f, ",\"audience\":\"" AUD "\"", "", NULL, 1) == 0);
	oidc_bounds_set(f.idps, &b);
	idp_server_set_mode(f.srv, IDP_SLOW);
	usleep(150000);
	/* an unknown kid asks for a refresh, which is slow: the request
	 * returns within the bound, refused */
	t0 = now_s();
	CHECK(refused(&f, token(f.rsa, "RS256", "rsa-9", GOOD, idp_server_url(f.srv), "agent-1",
				t + 60, t, ""), "unknown kid rsa-9"));
	CHECK(now_s() - t0 < 2.5);
	/* the keys it had still serve, and quickly */
	tok = good(&f, f.rsa, "RS256", "agent-1", "");
	t0 = now_s();
	CHECK(tok && verify(&f, tok, NULL, NULL, &err) == 0);
	CHECK(now_s() - t0 < 0.5);
	free(tok);
	teardown(&f);
	return 0;
}

static int fetch_slow_start(void)
{
	struct fix f;
	double t0;

	memset(&f, 0, sizeof(f));
	CHECK(make_keys(&f) == 0);
	CHECK((f.srv = idp_server_start()) != NULL);
	CHECK(unit_tmpdir(f.dir, "oidc") == 0);
	idp_server_set_mode(f.srv, IDP_SLOW);
	{
		struct tg_error err;

		CHECK(load_policy(&f, idp_server_url(f.srv), ",\"audience\":\"" AUD "\"", &err) == 0);
		CHECK(tg_idps_new(f.policy, NULL, &f.idps, &err) == 0);
	}
	usleep(100000); /* the first fetch under way */
	t0 = now_s();
	CHECK(refused(&f, good(&f, f.rsa, "RS256", "agent-1", ""), "no keys yet from"));
	CHECK(now_s() - t0 < 2.5);
	t0 = now_s();
	teardown(&f); /* stops the thread mid-fetch, promptly */
	CHECK(now_s() - t0 < 2.5);
	return 0;
}

static int fetch_garbage(void)
{
	struct fix f;
	struct tg_error err;
	struct oidc_bounds b = { 2000, 2000, 50, 900000 };
	long long t = (long long)time(NULL);
	unsigned before;
	char *tok;
	int mode;

	CHECK(setup(&f, ",\"audience\":\"" AUD "\"", "", NULL, 1) == 0);
	oidc_bounds_set(f.idps, &b);
	for (mode = IDP_GARBAGE; mode <= IDP_ERROR; mode++) {
		idp_server_set_mode(f.srv, (enum idp_mode)mode);
		usleep(100000);
		before = idp_server_hits(f.srv, 1);
		CHECK(refused(&f, token(f.rsa, "RS256", "rsa-9", GOOD, idp_server_url(f.srv),
					"agent-1", t + 60, t, ""), "unknown kid rsa-9"));
		CHECK(idp_server_hits(f.srv, 1) > before); /* it did ask */
		tok = good(&f, f.rsa, "RS256", "agent-1", "");
		CHECK(tok && verify(&f, tok, NULL, NULL, &err) == 0); /* old keys kept */
		free(tok);
	}
	/* a JWKS of nothing usable is garbage too */
	idp_server_set_mode(f.srv, IDP_OK);
	idp_server_set_jwks(f.srv, "{\"keys\":[{\"kty\":\"oct\",\"k\":\"AAAA\"}]}");
	usleep(100000);
	CHECK(refused(&f, token(f.rsa, "RS256", "rsa-9", GOOD, idp_server_url(f.srv), "agent-1",
				t + 60, t, ""), "unknown kid rsa-9"));
	tok = good(&f, f.ec, "ES256", "agent-1", "");
	CHECK(tok && verify(&f, tok, NULL, NULL, &err) == 0);
	free(tok);
	teardown(&f);
	return 0;
}

struct racer {
	struct fix *f;
	const char *tok;
	int rc;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	struct tg_error err;

	r->rc = verify(r->f, r->tok, NULL, NULL, &err);
	return NULL;
}

static int rotation(void)
{
	struct fix f;
	struct tg_error err;
	struct oidc_bounds b = { 2000, 2000, 300, 900000 };
	struct idp_key *k2 = idp_key_new(IDP_ED, 0, "ed-2");
	char *jwk = k2 ? idp_key_jwk(k2, "") : NULL, extra[512], *jwks, *tok;
	struct racer r[8];
	pthread_t th[8];
	unsigned before, disc;
	long long t = (long long)time(NULL);
	int i;

	CHECK(jwk != NULL);
	CHECK(setup(&f, ",\"audience\":\"" AUD "\"", "", NULL, 1) == 0);
	/* the provider rotates: a new key beside the old */
	snprintf(extra, sizeof(extra), ",%s", jwk);
	free(jwk);
	jwks = jwks_of(&f, extra);
	CHECK(jwks != NULL);
	idp_server_set_jwks(f.srv, jwks);
	free(jwks);
	tok = token(k2, "EdDSA", "ed-2", GOOD, idp_server_url(f.srv), "agent-1", t + 60, t,
		    "sql.*:read");
	CHECK(tok != NULL);
	/* the keys were fetched under 30 s ago: no refresh yet */
	before = idp_server_hits(f.srv, 1);
	CHECK(verify(&f, tok, NULL, NULL, &err) < 0 && strstr(err.msg, "unknown kid ed-2"));
	CHECK(verify(&f, tok, NULL, NULL, &err) < 0);
	CHECK(idp_server_hits(f.srv, 1) == before);
	/* once the interval has passed, eight requests at once: one fetch */
	oidc_bounds_set(f.idps, &b);
	usleep(400000);
	disc = idp_server_hits(f.srv, 0);
	for (i = 0; i < 8; i++) {
		r[i] = (struct racer){ &f, tok, -2 };
		CHECK(pthread_create(&th[i], NULL, race, &r[i]) == 0);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		CHECK(r[i].rc == 0);
	}
	CHECK(idp_server_hits(f.srv, 1) == before + 1);
	CHECK(idp_server_hits(f.srv, 0) == disc); /* the jwks_uri discovered is kept */
	CHECK(verify(&f, tok, NULL, NULL, &err) == 0);
	free(tok);
	idp_key_free(k2);
	teardown(&f);
	return 0;
}

/* ---- TLS -------------------------------------------------------------------- */

/* An https provider on 127.0.0.1 (python3's http.server over TLS, with a
 * certificate openssl makes for 127.0.0.1 in dir): its port, and OUT *pid
 * and *out (its stdout's pipe, to close after it); 0 on failure. It
 * serves dir/jwks.json. */
static const char tls_server[] =
	"import http.server, ssl, sys, json\n"
	"d = sys.argv[1]\n"
	"class H(http.server.BaseHTTPRequestHandler):\n"
	"    def do_GET(self):\n"
	"        if self.path == '/.well-known/openid-configuration':\n"
	"            body = json.dumps({'issuer': url, 'jwks_uri': url + '/jwks'}).encode()\n"
	"        elif self.path == '/jwks':\n"
	"            body = open(d + '/jwks.json', 'rb').read()\n"
	"        else:\n"
	"            body = b'{}'\n"
	"        self.send_response(200)\n"
	"        self.send_header('Content-Length', str(len(body)))\n"
	"        self.end_headers()\n"
	"        self.wfile.write(body)\n"
	"    def log_message(self, *a):\n"
	"        pass\n"
	"s = http.server.HTTPServer(('127.0.0.1', 0), H)\n"
	"c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)\n"
	"c.load_cert_chain(d + '/cert.pem', d + '/key.pem')\n"
	"s.socket = c.wrap_socket(s.socket, server_side=True)\n"
	"url = 'https://127.0.0.1:%d' % s.server_address[1]\n"
	"print(s.server_address[1], flush=True)\n"
	"s.serve_forever()\n";

static unsigned tls_start(const char *dir, pid_t *pid, int *out)
{
	char cmd[512], buf[32] = "";
	int fds[2];
	ssize_t n;

	snprintf(cmd, sizeof(cmd), "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 "
		 "-nodes -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -days 1 "
		 "-keyout %s/key.pem -out %s/cert.pem 2>/dev/null", dir, dir);
	if (system(cmd) != 0 || pipe(fds) < 0)
		return 0;
	*pid = fork();
	if (*pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl("/usr/bin/python3", "python3", "-c", tls_server, dir, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	n = *pid > 0 ? read(fds[0], buf, sizeof(buf) - 1) : -1;
	*out = fds[0]; /* kept open: python's stdout is not a broken pipe */
	buf[n > 0 ? n : 0] = '\0';
	return (unsigned)strtoul(buf, NULL, 10);
}

static int tls(void)
{
	struct fix f;
	struct tg_error err;
	char extra[256], url[64], *jwks, *tok;
	long long t = (long long)time(NULL);
	struct oidc_bounds b = { 4000, 2000, 200, 900000 };
	unsigned port;
	pid_t pid = -1;
	int i, rc = -1, pipe_fd = -1;

	/* the loopback http provider only makes the keys and the policy's
	 * principals; the tokens name the https one */
	CHECK(setup(&f, "", "", NULL, 0) == 0);
	jwks = jwks_of(&f, "");
	CHECK(jwks && unit_put(f.dir, "jwks.json", jwks, 0600) == 0);
	free(jwks);
	port = tls_start(f.dir, &pid, &pipe_fd);
	CHECK(port > 0);
	snprintf(url, sizeof(url), "https://127.0.0.1:%u", port);
	tg_idps_free(f.idps);
	tg_policy_free(f.policy);
	f.idps = NULL;
	/* the provider's CA given: its keys arrive over TLS */
	snprintf(extra, sizeof(extra), ",\"audience\":\"" AUD "\",\"ca_file\":\"%s/cert.pem\"",
		 f.dir);
	if (load_policy(&f, url, extra, &err) < 0 || tg_idps_new(f.policy, NULL, &f.idps, &err) < 0)
		goto out;
	oidc_bounds_set(f.idps, &b); /* a loaded machine's first fetch may time out: again soon */
	tok = token(f.rsa, "RS256", "rsa-1", GOOD, url, "agent-1", t + 60, t, "sql.*:read");
	for (i = 0; tok && i < 100 && verify(&f, tok, NULL, NULL, &err) < 0; i++)
		usleep(50000);
	if (!tok || i == 100) {
		fprintf(stderr, "# over TLS: %s\n", err.msg);
		free(tok);
		goto out;
	}
	tg_idps_free(f.idps);
	tg_policy_free(f.policy);
	f.idps = NULL;
	/* without it, the self-signed certificate is refused: no keys */
	snprintf(extra, sizeof(extra), ",\"audience\":\"" AUD "\"");
	if (load_policy(&f, url, extra, &err) < 0 || tg_idps_new(f.policy, NULL, &f.idps, &err) < 0)
		goto out;
	for (i = 0; i < 100 && oidc_fetches(f.idps, 0) == 0; i++)
		usleep(50000);
	usleep(500000);
	rc = refused(&f, tok, "no keys yet from") ? 0 : -1;
out:
	if (pid > 0) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
	}
	if (pipe_fd >= 0)
		close(pipe_fd);
	teardown(&f);
	return rc;
}

/* ---- the gate's hook -------------------------------------------------------- */

static int gate_hook(void)
{
	struct fix f;
	struct tg_gate_options o = { 0 };
	struct tg_signer *signer = NULL;
	struct tg_store *store = NULL;
	struct tg_catalog *cat = NULL;
	struct tg_gate *gate = NULL;
	struct tg_error err;
	const char *scope_list[] = { "sql.*:read" };
	struct tg_token_request req = { "agent-1", scope_list, 1, 600, NULL };
	char who[128], path[128], *scopes, *tok, *own;
	int i;

	CHECK(setup(&f, "", "", NULL, 0) == 0);
	snprintf(path, sizeof(path), "%s/cat", f.dir);
	CHECK(mkdir(path, 0700) == 0);
	CHECK(tg_catalog_load_dir(path, NULL, &cat, &err) == 0);
	CHECK(tg_signer_open(f.dir, 1, &signer, &err) == 0 && tg_store_open(f.dir, &store, &err) == 0);
	o.policy = f.policy;
	o.signer = signer;
	o.store = store;
	o.resource = AUD; /* the providers' audience, named by none */
	CHECK(tg_gate_new(cat, &o, &gate, &err) == 0);
	tok = good(&f, f.rsa, "RS256", "agent-1", "sql.*:read");
	CHECK(tok != NULL);
	for (i = 0; i < 100; i++) {
		if (tg_gate_identify(gate, tok, strlen(tok), who, sizeof(who), &scopes, &err) == 0)
			break;
		usleep(50000);
	}
	CHECK(i < 100 && strcmp(who, "agent-1") == 0 && strcmp(scopes, "sql.*:read") == 0);
	free(scopes);
	free(tok);
	/* the gate's own tokens as before */
	CHECK(tg_token_issue(signer, f.policy, &req, (int64_t)time(NULL), &own, &err) == 0);
	CHECK(tg_gate_identify(gate, own, strlen(own), who, sizeof(who), &scopes, &err) == 0);
	CHECK(strcmp(who, "agent-1") == 0);
	free(scopes);
	free(own);
	/* a provider's token with another audience: refused by the gate */
	tok = token(f.rsa, "RS256", "rsa-1", "{\"iss\":\"%s\",\"aud\":\"x\",\"sub\":\"agent-1\","
		    "\"exp\":%lld}", idp_server_url(f.srv), (long long)time(NULL) + 60);
	CHECK(tg_gate_identify(gate, tok, strlen(tok), who, sizeof(who), &scopes, &err) < 0 &&
	      strstr(err.msg, "for another audience") && scopes == NULL);
	free(tok);
	/* an issuer nobody trusts goes to the gate's own check, and fails */
	tok = token(f.rsa, "RS256", "rsa-1", "{\"iss\":\"https://evil\",\"aud\":\"" AUD "\","
		    "\"sub\":\"agent-1\",\"exp\":%lld}", (long long)time(NULL) + 60);
	CHECK(tg_gate_identify(gate, tok, strlen(tok), who, sizeof(who), &scopes, &err) < 0 &&
	      strstr(err.msg, "alg must be EdDSA"));
	free(tok);
	tg_gate_free(gate);
	tg_store_close(store);
	tg_signer_close(signer);
	tg_catalog_free(cat);
	teardown(&f);
	return 0;
}

/* ---- cost (reported, never asserted: docs/BENCHMARKS.md) ---------------------- */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* p50 and p99 of n timings (us), sorted in place. */
static void report(const char *what, double *us, int n)
{
	qsort(us, (size_t)n, sizeof(us[0]), cmp_double);
	fprintf(stderr, "# %s: %.1f us p50, %.1f us p99\n", what, us[n / 2], us[n * 99 / 100]);
}

static int cost(void)
{
	static double us[2000];
	static char *toks[300];
	struct fix f;
	struct tg_error err;
	char *scopes, who[128], what[96];
	int a, i;

	CHECK(setup(&f, ",\"audience\":\"" AUD "\"", "", NULL, 1) == 0);
	for (a = 0; a < 3; a++) {
		const struct idp_key *k = a == 0 ? f.rsa : a == 1 ? f.ec : f.ed;
		const char *alg = a == 0 ? "RS256" : a == 1 ? "ES256" : "EdDSA";
		long long t = (long long)time(NULL);

		/* each token new: signature, claims and all */
		for (i = 0; i < 300; i++) {
			toks[i] = token(k, alg, a == 0 ? "rsa-1" : a == 1 ? "ec-1" : "ed-1",
					"{\"iss\":\"%s\",\"aud\":\"" AUD "\",\"sub\":\"agent-1\","
					"\"exp\":%lld,\"jti\":\"%d\",\"scope\":\"sql.*:read\"}",
					idp_server_url(f.srv), t + 600, i);
			CHECK(toks[i] != NULL);
		}
		for (i = 0; i < 300; i++) {
			double t0 = now_s();

			CHECK(tg_idps_verify(f.idps, toks[i], strlen(toks[i]), (int64_t)time(NULL),
					     who, sizeof(who), &scopes, &err) == 0);
			us[i] = (now_s() - t0) * 1e6;
			free(scopes);
		}
		snprintf(what, sizeof(what), "%s, a token's first check", alg);
		report(what, us, 300);
		/* the same token again: answered by its hash */
		for (i = 0; i < 2000; i++) {
			double t0 = now_s();

			CHECK(tg_idps_verify(f.idps, toks[0], strlen(toks[0]), (int64_t)time(NULL),
					     who, sizeof(who), &scopes, &err) == 0);
			us[i] = (now_s() - t0) * 1e6;
			free(scopes);
		}
		snprintf(what, sizeof(what), "%s, a token seen before", alg);
		report(what, us, 2000);
		for (i = 0; i < 300; i++)
			free(toks[i]);
	}
	teardown(&f);
	return 0;
}

/* A result kept for a token seen before ends with its lifetime and with
 * the keys that verified it. */
static int cached(void)
{
	struct fix f;
	struct tg_error err;
	struct oidc_bounds b = { 2000, 2000, 50, 900000 };
	long long t = (long long)time(NULL);
	char who[128], *scopes, *tok, *ec, *ed, doc[2048];

	CHECK(setup(&f, ",\"audience\":\"" AUD "\"", "", NULL, 1) == 0);
	tok = good(&f, f.rsa, "RS256", "agent-1", "sql.*:read");
	CHECK(tok && verify(&f, tok, NULL, NULL, &err) == 0);
	CHECK(verify(&f, tok, NULL, NULL, &err) == 0);
	/* past its exp (and the skew), seen before or not */
	CHECK(tg_idps_verify(f.idps, tok, strlen(tok), t + 661, who, sizeof(who), &scopes,
			     &err) < 0 && strstr(err.msg, "expired") && !scopes);
	CHECK(tg_idps_verify(f.idps, tok, strlen(tok), t + 650, who, sizeof(who), &scopes,
			     &err) == 0);
	free(scopes);
	/* the provider drops rsa-1: once its keys are fetched again, the
	 * token seen before is checked anew, and refused */
	ec = idp_key_jwk(f.ec, "");
	ed = idp_key_jwk(f.ed, "");
	CHECK(ec && ed);
	snprintf(doc, sizeof(doc), "{\"keys\":[%s,%s]}", ec, ed);
	free(ec);
	free(ed);
	idp_server_set_jwks(f.srv, doc);
	oidc_bounds_set(f.idps, &b);
	usleep(100000);
	CHECK(refused(&f, token(f.ed, "EdDSA", "ed-9", GOOD, idp_server_url(f.srv), "agent-1",
				t + 60, t, ""), "unknown kid ed-9")); /* makes it fetch */
	CHECK(verify(&f, tok, NULL, NULL, &err) < 0 && strstr(err.msg, "unknown kid rsa-1"));
	free(tok);
	teardown(&f);
	return 0;
}

const struct unit_test oidc_tests[] = {
	{ "oidc/config", config },
	{ "oidc/jwks", jwks },
	{ "oidc/accepts", accepts },
	{ "oidc/scopes_from_policy", scopes_from_policy },
	{ "oidc/refusals", refusals },
	{ "oidc/short_rsa_key", short_rsa_key },
	{ "oidc/algorithms_allowed", algorithms_allowed },
	{ "oidc/groups", groups },
	{ "oidc/no_audience", no_audience },
	{ "oidc/fetch_down", fetch_down },
	{ "oidc/fetch_slow", fetch_slow },
	{ "oidc/fetch_slow_start", fetch_slow_start },
	{ "oidc/fetch_garbage", fetch_garbage },
	{ "oidc/rotation", rotation },
	{ "oidc/tls", tls },
	{ "oidc/gate_hook", gate_hook },
	{ "oidc/cached", cached },
	{ "oidc/cost", cost },
	UNIT_TESTS_END,
};
