/*
 * The policy's "identity_providers" (docs/AUTH.md, "External identity
 * providers"): the OpenID Connect providers whose tokens the gateway
 * accepts, each checked field by field, so a mistake is refused when the
 * policy loads, naming the field (`policy p.json:
 * identity_providers[0].algorithms: ...`), never found by a caller.
 *
 * Owns: the parsed configuration. Must never: accept an issuer that is
 * not https (but loopback, for tests), an algorithm outside RS256, ES256
 * and EdDSA, or a group that maps to a principal the policy lacks.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "auth/oidc_int.h"
#include "util/sodium.h"

#define MAX_GROUPS 1024

static const char *const fields[] = { "issuer", "audience", "principal_claim", "groups_claim",
				       "groups", "algorithms", "jwks_uri", "ca_file", "scopes",
				       "console" };
#define MAX_SECRET 1024

static int bad(struct tg_error *err, const char *path, size_t i, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static int bad(struct tg_error *err, const char *path, size_t i, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	tg_error_set(err, TG_ERR_INVALID, "policy %s: identity_providers[%zu]%s", path, i, msg);
	return -1;
}

/* String field name of o, 1 to max bytes, strdup'd into *out (NULL when
 * absent). -1 wrong (err set), -2 out of memory. */
static int string_field(json_t *o, const char *name, size_t max, const char *path, size_t i,
			char **out, struct tg_error *err)
{
	json_t *v = json_object_get(o, name);

	*out = NULL;
	if (!v)
		return 0;
	if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > max ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return bad(err, path, i, ".%s: a string of 1 to %zu bytes", name, max);
	*out = strdup(json_string_value(v));
	return *out ? 0 : -2;
}

static int parse_algorithms(json_t *v, const char *path, size_t i, unsigned *algs,
			    struct tg_error *err)
{
	const char *name;
	json_t *a;
	size_t k;
	int alg;

	*algs = OIDC_ALL_ALGS;
	if (!v)
		return 0;
	if (!json_is_array(v) || json_array_size(v) == 0 || json_array_size(v) > 3)
		return bad(err, path, i, ".algorithms: 1 to 3 of \"RS256\", \"ES256\", \"EdDSA\"");
	*algs = 0;
	json_array_foreach(v, k, a) {
		name = json_string_value(a);
		alg = oidc_alg_of(name);
		if (name && (strcmp(name, "none") == 0 || strncmp(name, "HS", 2) == 0))
			return bad(err, path, i, ".algorithms: %.16s is never accepted (unsigned, or "
				   "an HMAC whose secret would be the provider's public key)", name);
		if (!alg)
			return bad(err, path, i, ".algorithms: %.32s: want \"RS256\", \"ES256\" or "
				   "\"EdDSA\"", name ? name : "(not a string)");
		if (*algs & (unsigned)alg)
			return bad(err, path, i, ".algorithms: %s twice", name);
		*algs |= (unsigned)alg;
	}
	return 0;
}

/* "groups": {"idp-group": "principal"}, every principal the policy's. */
static int parse_groups(json_t *g, json_t *principals, const char *path, size_t i,
			struct tg_error *err)
{
	const char *group;
	json_t *v;

	if (!json_is_object(g) || json_object_size(g) == 0 || json_object_size(g) > MAX_GROUPS)
		return bad(err, path, i, ".groups: an object of 1 to %d \"group\": \"principal\"",
			   MAX_GROUPS);
	json_object_foreach(g, group, v) {
		if (!json_is_string(v) || !json_object_get(principals, json_string_value(v)))
			return bad(err, path, i, ".groups.%.64s: want the name of a principal of the "
				   "policy", group);
	}
	return 0;
}

/* The client secret of the console's sign-in, from its file: a regular
 * file nobody but its owner may read or write, one line of at most
 * MAX_SECRET bytes (a trailing newline dropped). */
static int read_secret(const char *file, const char *path, size_t i, char **out,
		       struct tg_error *err)
{
	char buf[MAX_SECRET + 2];
	struct stat st;
	ssize_t n;
	int fd = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return bad(err, path, i, ".console.client_secret_file: %.200s: %s", file,
			   strerror(errno));
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & 077)) {
		close(fd);
		return bad(err, path, i, ".console.client_secret_file: %.200s: a regular file "
			   "only its owner may read (chmod 600)", file);
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	if (n <= 0 || n > MAX_SECRET || memchr(buf, '\0', (size_t)n) || memchr(buf, '\n', (size_t)n)) {
		sodium_memzero(buf, sizeof(buf));
		return bad(err, path, i, ".console.client_secret_file: %.200s: one line of 1 to %d "
			   "bytes", file, MAX_SECRET);
	}
	*out = strndup(buf, (size_t)n);
	sodium_memzero(buf, sizeof(buf));
	return *out ? 0 : -2;
}

/* "console": {"client_id", "scope"?, "client_secret_file"?}: the
 * approval console's sign-in with this provider. */
static int parse_console(json_t *o, const char *path, size_t i, struct oidc_provider_config *c,
			 struct tg_error *err)
{
	const char *key, *file;
	json_t *v;
	int rc;

	if (!o)
		return 0;
	if (!json_is_object(o))
		return bad(err, path, i, ".console: want {\"client_id\": ..., \"scope\"?, "
			   "\"client_secret_file\"?}");
	json_object_foreach(o, key, v)
		if (strcmp(key, "client_id") && strcmp(key, "scope") &&
		    strcmp(key, "client_secret_file"))
			return bad(err, path, i, ".console: unknown field \"%.64s\"", key);
	if ((rc = string_field(o, "client_id", 256, path, i, &c->console_client_id, err)) < 0 ||
	    (rc = string_field(o, "scope", 1024, path, i, &c->console_scope, err)) < 0)
		return rc == -2 ? tg_error_set(err, TG_ERR_NOMEM, "out of memory") : -1;
	if (!c->console_client_id)
		return bad(err, path, i, ".console.client_id: required (the console's client at "
			   "the provider)");
	if (!c->console_scope && !(c->console_scope = strdup("openid")))
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	v = json_object_get(o, "client_secret_file");
	file = json_string_value(v);
	if (v && (!file || !*file))
		return bad(err, path, i, ".console.client_secret_file: a file name");
	rc = file ? read_secret(file, path, i, &c->console_secret, err) : 0;
	return rc == -2 ? tg_error_set(err, TG_ERR_NOMEM, "out of memory") : rc;
}

/* Every field but the strings' copies: the scopes' mode, the URLs, the
 * groups. */
static int check_provider(json_t *o, json_t *principals, const char *path, size_t i,
			  struct oidc_provider_config *c, struct tg_error *err)
{
	const char *key, *scopes;
	json_t *v;
	size_t k;

	json_object_foreach(o, key, v) {
		for (k = 0; k < sizeof(fields) / sizeof(fields[0]) && strcmp(key, fields[k]); k++)
			;
		if (k == sizeof(fields) / sizeof(fields[0]))
			return bad(err, path, i, ": unknown field \"%.64s\"", key);
	}
	if (!c->issuer)
		return bad(err, path, i, ".issuer: required (the provider's URL, as its tokens' "
			   "iss says)");
	if (!oidc_url_allowed(c->issuer))
		return bad(err, path, i, ".issuer: an https URL (http only to 127.0.0.1, localhost "
			   "or [::1])");
	if (c->jwks_uri && !oidc_url_allowed(c->jwks_uri))
		return bad(err, path, i, ".jwks_uri: an https URL (http only to 127.0.0.1, "
			   "localhost or [::1])");
	if (c->ca_file && access(c->ca_file, R_OK) < 0)
		return bad(err, path, i, ".ca_file: %.200s cannot be read", c->ca_file);
	v = json_object_get(o, "scopes");
	scopes = json_string_value(v);
	if (v && (!scopes || (strcmp(scopes, "token") && strcmp(scopes, "policy"))))
		return bad(err, path, i, ".scopes: \"token\" (the token's scopes the policy grants) "
			   "or \"policy\" (all the policy grants)");
	c->scopes_from_policy = scopes && strcmp(scopes, "policy") == 0;
	if (parse_algorithms(json_object_get(o, "algorithms"), path, i, &c->algs, err) < 0)
		return -1;
	v = json_object_get(o, "groups");
	if (!v != !c->groups_claim)
		return bad(err, path, i, ".%s: groups_claim and groups go together",
			   v ? "groups" : "groups_claim");
	if (v && parse_groups(v, principals, path, i, err) < 0)
		return -1;
	c->groups = json_incref(v);
	return parse_console(json_object_get(o, "console"), path, i, c, err);
}

static int parse_provider(json_t *o, json_t *principals, const char *path, size_t i,
			  struct oidc_provider_config *c, struct tg_error *err)
{
	int rc;

	if (!json_is_object(o))
		return bad(err, path, i, ": want an object {\"issuer\": URL, ...}");
	if ((rc = string_field(o, "issuer", 512, path, i, &c->issuer, err)) < 0 ||
	    (rc = string_field(o, "audience", 512, path, i, &c->audience, err)) < 0 ||
	    (rc = string_field(o, "principal_claim", 64, path, i, &c->principal_claim, err)) < 0 ||
	    (rc = string_field(o, "groups_claim", 64, path, i, &c->groups_claim, err)) < 0 ||
	    (rc = string_field(o, "jwks_uri", 1024, path, i, &c->jwks_uri, err)) < 0 ||
	    (rc = string_field(o, "ca_file", 1024, path, i, &c->ca_file, err)) < 0)
		goto fail;
	if (!c->principal_claim && !(c->principal_claim = strdup("sub"))) {
		rc = -2;
		goto fail;
	}
	return check_provider(o, principals, path, i, c, err) < 0 ? -1 : 0;
fail:
	if (rc == -2)
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return -1;
}

int oidc_config_parse(json_t *arr, json_t *principals, const char *own_issuer, const char *path,
		      struct oidc_config **out, struct tg_error *err)
{
	struct oidc_config *c;
	size_t i, k;
	json_t *o;

	*out = NULL;
	if (!arr)
		return 0;
	if (!json_is_array(arr) || json_array_size(arr) > OIDC_MAX_PROVIDERS)
		return tg_error_set(err, TG_ERR_INVALID, "policy %s: identity_providers: an array of "
				    "at most %d providers", path, OIDC_MAX_PROVIDERS);
	c = calloc(1, sizeof(*c));
	if (!c)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	json_array_foreach(arr, i, o) {
		c->n = i + 1;
		/* an issuer is required there: the second test is for the analyzer */
		if (parse_provider(o, principals, path, i, &c->v[i], err) < 0 || !c->v[i].issuer)
			goto fail;
		if (own_issuer && strcmp(c->v[i].issuer, own_issuer) == 0) {
			bad(err, path, i, ".issuer: the policy's own issuer (its tokens are the "
			    "gateway's)");
			goto fail;
		}
		for (k = 0; k < i; k++)
			if (strcmp(c->v[k].issuer, c->v[i].issuer) == 0) {
				bad(err, path, i, ".issuer: the issuer of identity_providers[%zu] "
				    "again", k);
				goto fail;
			}
	}
	*out = c;
	return 0;
fail:
	oidc_config_free(c);
	return -1;
}

void oidc_config_free(struct oidc_config *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->n; i++) {
		free(c->v[i].issuer);
		free(c->v[i].audience);
		free(c->v[i].principal_claim);
		free(c->v[i].groups_claim);
		free(c->v[i].jwks_uri);
		free(c->v[i].ca_file);
		free(c->v[i].console_client_id);
		free(c->v[i].console_scope);
		if (c->v[i].console_secret) {
			sodium_memzero(c->v[i].console_secret, strlen(c->v[i].console_secret));
			free(c->v[i].console_secret);
		}
		json_decref(c->v[i].groups);
	}
	free(c);
}
