/*
 * The upstream declaration loader (include/toolgate/upstream.h,
 * docs/UPSTREAMS.md): upstreams/NAME.json read and checked, its transport
 * and its sandbox here, its credentials and tools in decl_tools.c.
 *
 * A declaration is refused, naming the file and the field, for what an
 * operator would want to hear before the server runs: an unknown field (a
 * misspelt "writable" must not leave a mount read-write, nor a misspelt
 * "egress" drop a rule silently), a field of the other transport, a mount
 * of a host path that is not there, an egress rule without a port, a url
 * carrying a password. It must never start anything nor read a secret:
 * loading is what `catalog lint` does on any machine.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "sandbox/limits.h"
#include "toolgate/egress.h"
#include "upstream/upstream_int.h"
#include "util/file.h"
#include "util/sodium.h"
#include "util/url.h"

#define MAX_MOUNTS 64
#define MAX_EGRESS 64
#define MAX_ENV 128

int up_absolute(const char *s)
{
	return s && s[0] == '/';
}

/* NAME, the namespace, from origin's base name NAME.json. */
static int load_name(struct up_loader *l, json_t *doc)
{
	const char *slash = strrchr(l->j.origin, '/');
	const char *base = slash ? slash + 1 : l->j.origin, *given;
	size_t n = strlen(base), i;
	int ok = n > 5 && n - 5 <= 32 && strcmp(base + n - 5, ".json") == 0 &&
		 base[0] >= 'a' && base[0] <= 'z';

	for (i = 1; ok && i < n - 5; i++)
		ok = (base[i] >= 'a' && base[i] <= 'z') || isdigit((unsigned char)base[i]) ||
		     base[i] == '-';
	if (!ok)
		return jload_bad(&l->j, "name", "the file is upstreams/NAME.json, NAME the namespace of "
			      "its tools: 1 to 32 of a-z 0-9 -, a letter first");
	l->u->name = strndup(base, n - 5);
	if (!l->u->name)
		return jload_nomem(&l->j);
	given = json_string_value(json_object_get(doc, "name"));
	if (json_object_get(doc, "name") && (!given || strcmp(given, l->u->name) != 0))
		return jload_bad(&l->j, "name", "must be \"%s\", the file's name (or left out)",
			      l->u->name);
	return 0;
}

/* An array of at most max strings into a NULL-terminated list. */
static int string_array(struct up_loader *l, json_t *a, const char *field, size_t max,
			char ***out, size_t *n)
{
	char item[JLOAD_MAX_FIELD];
	json_t *v;
	size_t i;

	*out = NULL;
	*n = 0;
	if (!json_is_array(a) || json_array_size(a) > max)
		return jload_bad(&l->j, field, "must be an array of at most %zu strings", max);
	*out = calloc(json_array_size(a) + 1, sizeof(**out));
	if (!*out)
		return jload_nomem(&l->j);
	json_array_foreach(a, i, v) {
		snprintf(item, sizeof(item), "%s[%zu]", field, i);
		if (jload_string(&l->j, v, item, UPSTREAM_MAX_TEXT, &(*out)[i]) < 0)
			return -1;
		*n = i + 1;
	}
	return 0;
}

int up_env_name(const char *s)
{
	size_t i;

	if (!s || !(isalpha((unsigned char)s[0]) || s[0] == '_') || strlen(s) > 128)
		return 0;
	for (i = 1; s[i]; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return 1;
}

static int load_env(struct up_loader *l, json_t *env)
{
	const char *key;
	size_t i = 0;
	json_t *v;

	if (!env)
		return 0;
	if (!json_is_object(env) || json_object_size(env) > MAX_ENV)
		return jload_bad(&l->j, "env", "must be an object of at most %d strings", MAX_ENV);
	l->u->env = calloc(json_object_size(env) + 1, sizeof(*l->u->env));
	if (!l->u->env)
		return jload_nomem(&l->j);
	json_object_foreach(env, key, v) {
		char field[JLOAD_MAX_FIELD], *value;

		jload_field(field, sizeof(field), "env", key);
		if (!up_env_name(key))
			return jload_bad(&l->j, field, "a variable's name is a letter or _ and then "
				      "letters, digits or _, at most 128");
		if (strncmp(key, "TOOLGATE_", 9) == 0)
			return jload_bad(&l->j, field, "TOOLGATE_ names are the gateway's");
		if (jload_string(&l->j, v, field, UPSTREAM_MAX_TEXT, &value) < 0)
			return -1;
		if (asprintf(&l->u->env[i], "%s=%s", key, value) < 0) {
			l->u->env[i] = NULL;
			free(value);
			return jload_nomem(&l->j);
		}
		free(value);
		i++;
	}
	return 0;
}

/* sandbox.limits: the sandbox's reader (sandbox/limits.h), which a
 * contract's executor.limits shares, so that an operator writes limits
 * one way. */
static int load_limits(struct up_loader *l, json_t *lim)
{
	struct tg_upstream *u = l->u;
	struct sandbox_limits s;
	const char *key, *why;
	char field[JLOAD_MAX_FIELD];

	if (sandbox_limits_parse(lim, &s, &key, &why) < 0) {
		if (key)
			jload_field(field, sizeof(field), "sandbox.limits", key);
		else
			snprintf(field, sizeof(field), "sandbox.limits");
		return jload_bad(&l->j, field, "%s", why);
	}
	u->memory = s.memory;
	u->output = s.output;
	u->timeout_ms = s.timeout_ms;
	u->pids = s.pids;
	u->millicpus = s.millicpus;
	return 0;
}

/* Each mount's host path must be there now: a server started without the
 * directory its operator meant to give it would fail later, and less
 * clearly. */
static int load_mounts(struct up_loader *l, json_t *a)
{
	static const char *const fields[] = { "host", "inside", "writable", NULL };
	struct tg_upstream *u = l->u;
	char field[JLOAD_MAX_FIELD], sub[JLOAD_MAX_FIELD];
	struct stat st;
	json_t *m;
	size_t i;

	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) > MAX_MOUNTS)
		return jload_bad(&l->j, "sandbox.mounts", "must be an array of at most %d mounts",
			      MAX_MOUNTS);
	u->mounts = calloc(json_array_size(a) + 1, sizeof(*u->mounts));
	if (!u->mounts)
		return jload_nomem(&l->j);
	json_array_foreach(a, i, m) {
		struct tg_upstream_mount *mt = &u->mounts[i];

		snprintf(field, sizeof(field), "sandbox.mounts[%zu]", i);
		if (!json_is_object(m))
			return jload_bad(&l->j, field, "must be an object");
		u->nmounts = i + 1;
		if (jload_only(&l->j, m, field, fields) < 0)
			return -1;
		jload_field(sub, sizeof(sub), field, "host");
		if (!json_object_get(m, "host"))
			return jload_bad(&l->j, sub, "required: the host path to bind");
		if (jload_string(&l->j, json_object_get(m, "host"), sub, UPSTREAM_MAX_TEXT, &mt->host) < 0)
			return -1;
		if (!up_absolute(mt->host))
			return jload_bad(&l->j, sub, "%.200s: must be an absolute path", mt->host);
		if (stat(mt->host, &st) < 0)
			return jload_bad(&l->j, sub, "%.200s: %s", mt->host, strerror(errno));
		jload_field(sub, sizeof(sub), field, "inside");
		if (json_object_get(m, "inside") &&
		    jload_string(&l->j, json_object_get(m, "inside"), sub, UPSTREAM_MAX_TEXT,
			      &mt->inside) < 0)
			return -1;
		if (mt->inside && !up_absolute(mt->inside))
			return jload_bad(&l->j, sub, "%.200s: must be an absolute path", mt->inside);
		if (!mt->inside && !(mt->inside = strdup(mt->host)))
			return jload_nomem(&l->j);
		jload_field(sub, sizeof(sub), field, "writable");
		if (jload_bool(&l->j, m, "writable", sub, &mt->writable) < 0)
			return -1;
	}
	return 0;
}

/* rule names a port: "host:port" or "[v6]:port". */
static int has_port(const char *rule)
{
	const char *colon = rule[0] == '[' ? strstr(rule, "]:") : strrchr(rule, ':');

	if (colon && rule[0] == '[')
		colon++;
	return colon && colon[1] != '\0';
}

/* Each rule on its own, so that a refusal names its index. */
static int check_rules(struct up_loader *l, char *const *rules, size_t n, const char *where)
{
	struct tg_egress_policy *p;
	struct tg_error perr;
	char field[JLOAD_MAX_FIELD];
	size_t i;

	for (i = 0; i < n; i++) {
		snprintf(field, sizeof(field), "%s[%zu]", where, i);
		if (!has_port(rules[i]))
			return jload_bad(&l->j, field, "\"%.200s\" has no port: a rule is host:port",
				      rules[i]);
		if (tg_egress_policy_new((const char *const *)&rules[i], 1, &p, &perr) < 0)
			return jload_bad(&l->j, field, "%.300s", perr.msg);
		tg_egress_policy_free(p);
	}
	return 0;
}

static int load_sandbox(struct up_loader *l, json_t *sb)
{
	static const char *const fields[] = { "tier", "mounts", "egress", "limits", NULL };
	struct tg_upstream *u = l->u;
	json_t *v;
	size_t n;
	int tier;

	u->tier = TG_TIER_STANDARD;
	if (!sb)
		return 0;
	if (!json_is_object(sb))
		return jload_bad(&l->j, "sandbox", "must be an object");
	if (jload_only(&l->j, sb, "sandbox", fields) < 0)
		return -1;
	v = json_object_get(sb, "tier");
	tier = v ? tg_tier_parse(json_string_value(v)) : TG_TIER_STANDARD;
	if (tier < 0 || (v && !json_is_string(v)))
		return jload_bad(&l->j, "sandbox.tier", "must be standard (the default) or strict");
	u->tier = (enum tg_tier)tier;
	if (load_mounts(l, json_object_get(sb, "mounts")) < 0 ||
	    load_limits(l, json_object_get(sb, "limits")) < 0)
		return -1;
	v = json_object_get(sb, "egress");
	if (!v)
		return 0;
	if (string_array(l, v, "sandbox.egress", MAX_EGRESS, &u->egress, &n) < 0 ||
	    check_rules(l, u->egress, n, "sandbox.egress") < 0)
		return -1;
	if (n && u->tier != TG_TIER_STANDARD)
		return jload_bad(&l->j, "sandbox.egress", "is for the standard tier: the strict tier "
			      "has no network");
	return 0;
}

/* "http://" or "https://", a host, an optional port, no userinfo
 * (util/url.h); and the egress rule its host and port make. */
static int load_url(struct up_loader *l, json_t *v)
{
	struct tg_upstream *u = l->u;
	struct url_parts parts;
	const char *why;
	int rc;

	if (!v)
		return jload_bad(&l->j, "url", "required: the server's Streamable HTTP endpoint");
	if (jload_string(&l->j, v, "url", TG_UPSTREAM_MAX_URL, &u->url) < 0)
		return -1;
	rc = url_parts(u->url, &parts, &why);
	if (rc == -2)
		return jload_bad(&l->j, "url", "%s: a credential goes in credentials.header, from "
			      "a file", why);
	if (rc < 0)
		return jload_bad(&l->j, "url", "%s", why);
	u->url_rule = strdup(parts.rule);
	if (!u->url_rule)
		return jload_nomem(&l->j);
	return check_rules(l, &u->url_rule, 1, "url");
}

static int load_stdio(struct up_loader *l, json_t *doc)
{
	struct tg_upstream *u = l->u;
	json_t *v = json_object_get(doc, "argv");
	size_t n;

	u->transport = TG_UPSTREAM_STDIO;
	if (json_object_get(doc, "url"))
		return jload_bad(&l->j, "url", "is for http upstreams: a stdio server is started from its "
			      "argv");
	if (!v)
		return jload_bad(&l->j, "argv", "required: the server's command and its arguments");
	if (string_array(l, v, "argv", TG_UPSTREAM_MAX_ARGV, &u->argv, &n) < 0)
		return -1;
	if (n == 0 || !u->argv[0][0])
		return jload_bad(&l->j, "argv", "required: the server's command and its arguments");
	if (load_env(l, json_object_get(doc, "env")) < 0)
		return -1;
	v = json_object_get(doc, "workdir");
	if (v && jload_string(&l->j, v, "workdir", UPSTREAM_MAX_TEXT, &u->workdir) < 0)
		return -1;
	if (u->workdir && !up_absolute(u->workdir))
		return jload_bad(&l->j, "workdir", "must be an absolute path inside the sandbox");
	if (load_sandbox(l, json_object_get(doc, "sandbox")) < 0)
		return -1;
	return jload_bool(&l->j, doc, "per_call", "per_call", &u->per_call);
}

static int load_transport(struct up_loader *l, json_t *doc)
{
	static const char *const stdio_only[] = { "argv", "env", "workdir", "sandbox", "per_call",
						  NULL };
	json_t *v = json_object_get(doc, "transport");
	const char *t = json_string_value(v);
	size_t i;

	if (!v)
		return jload_bad(&l->j, "transport", "required: stdio or http");
	if (t && strcmp(t, "stdio") == 0)
		return load_stdio(l, doc);
	if (!t || strcmp(t, "http") != 0)
		return jload_bad(&l->j, "transport", "must be stdio or http");
	l->u->transport = TG_UPSTREAM_HTTP;
	/* the gateway starts nothing for an http upstream: it is reached
	 * through the egress proxy with its url's host as the only rule */
	for (i = 0; stdio_only[i]; i++)
		if (json_object_get(doc, stdio_only[i]))
			return jload_bad(&l->j, stdio_only[i], "is for stdio upstreams: an http upstream "
				      "is a server the gateway reaches at its url, not one it runs");
	return load_url(l, json_object_get(doc, "url"));
}

/* A field whose value is one of values (n of them; absent: the first):
 * its index in *out. 0, or -1 naming it with must. */
static int load_choice(struct up_loader *l, json_t *doc, const char *field,
		       const char *const *values, int n, const char *must, int *out)
{
	json_t *v = json_object_get(doc, field);
	const char *s = json_string_value(v);
	int i;

	*out = 0;
	if (!v)
		return 0;
	for (i = 0; i < n && !(s && strcmp(s, values[i]) == 0); i++)
		;
	if (i == n)
		return jload_bad(&l->j, field, "%s", must);
	*out = i;
	return 0;
}

static int load_pin(struct up_loader *l, json_t *doc)
{
	static const char *const modes[] = { "strict", "review", "off" };
	int i, rc = load_choice(l, doc, "pin", modes, 3, "must be strict (the default), review "
				"or off", &i);

	l->u->pin = (enum tg_upstream_pin)i;
	return rc;
}

/* "protocol": the era spoken to the server (auto by default). */
static int load_protocol(struct up_loader *l, json_t *doc)
{
	static const char *const eras[] = { "auto", "2026-07-28", "2025-11-25" };
	int i, rc = load_choice(l, doc, "protocol", eras, 3, "must be auto (the default), "
				"2026-07-28 or 2025-11-25", &i);

	l->u->protocol = (enum tg_upstream_protocol)i;
	return rc;
}

/* "relay": which of the server's requests reach the caller's client.
 * None unless named: an upstream asks the agent's client for nothing the
 * operator did not allow (no sampling unless declared). */
static int load_relay(struct up_loader *l, json_t *doc)
{
	static const char *const kinds[] = { "sampling", "elicitation", "roots" };
	json_t *a = json_object_get(doc, "relay"), *v;
	char field[JLOAD_MAX_FIELD];
	size_t i, k;

	l->u->relay = 0;
	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) > 3)
		return jload_bad(&l->j, "relay", "must be an array of sampling, elicitation and "
			      "roots, each at most once");
	json_array_foreach(a, i, v) {
		snprintf(field, sizeof(field), "relay[%zu]", i);
		for (k = 0; k < 3 && !(json_is_string(v) &&
				       strcmp(json_string_value(v), kinds[k]) == 0); k++)
			;
		if (k == 3)
			return jload_bad(&l->j, field, "must be sampling, elicitation or roots");
		if (l->u->relay & (1u << k))
			return jload_bad(&l->j, field, "%s is named twice", kinds[k]);
		l->u->relay |= 1u << k;
	}
	return 0;
}

int tg_upstream_parse(const char *text, size_t len, const char *origin,
		      struct tg_upstream **out, struct tg_error *err)
{
	static const char *const fields[] = { "name", "transport", "argv", "env", "workdir",
					      "url", "sandbox", "credentials", "tools", "pin",
					      "per_call", "relay", "protocol", NULL };
	/* cppcheck-suppress ctuuninitvar ; err is an OUT parameter, stored here */
	struct up_loader l = { { "upstream", origin, err }, NULL };
	json_error_t jerr;
	json_t *doc;
	int rc = -1;

	tg_error_clear(err);
	*out = NULL;
	/* the file's hash below: libsodium, an error here when it cannot be
	 * loaded (a catalogue's check, doctor), not a stop at the hash */
	if (tg_sodium_load("upstream", err) < 0)
		return -1;
	if (len > TG_UPSTREAM_MAX_BYTES)
		return tg_error_set(err, TG_ERR_LIMIT, "upstream %s: larger than %u bytes", origin,
				    TG_UPSTREAM_MAX_BYTES);
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!doc)
		return tg_error_set(err, TG_ERR_INVALID, "upstream %s: line %d: %s", origin,
				    jerr.line, jerr.text);
	l.u = calloc(1, sizeof(*l.u));
	if (!l.u || !(l.u->file = strdup(origin))) {
		jload_nomem(&l.j);
		goto out;
	}
	if (!json_is_object(doc)) {
		jload_bad(&l.j, "(top)", "must be a JSON object");
		goto out;
	}
	if (jload_only(&l.j, doc, "", fields) < 0 || load_name(&l, doc) < 0 ||
	    load_transport(&l, doc) < 0 || up_load_credentials(&l, doc) < 0 ||
	    up_load_tools(&l, doc) < 0 || load_pin(&l, doc) < 0 || load_relay(&l, doc) < 0 ||
	    load_protocol(&l, doc) < 0)
		goto out;
	{
		unsigned char h[crypto_hash_sha256_BYTES];

		/* the file as it was read: a reload knows an unchanged one */
		crypto_hash_sha256(h, (const unsigned char *)text, len);
		sodium_bin2hex(l.u->sha256, sizeof(l.u->sha256), h, sizeof(h));
	}
	*out = l.u;
	l.u = NULL;
	rc = 0;
out:
	tg_upstream_free(l.u);
	json_decref(doc);
	return rc;
}

int tg_upstream_load(const char *path, struct tg_upstream **out, struct tg_error *err)
{
	size_t len;
	char *text;
	int rc;

	tg_error_clear(err);
	*out = NULL;
	text = file_read_all(path, TG_UPSTREAM_MAX_BYTES, 1, &len);
	if (!text && errno == EFBIG)
		return tg_error_set(err, TG_ERR_LIMIT, "upstream %s: larger than %u bytes", path,
				    TG_UPSTREAM_MAX_BYTES);
	if (!text)
		return tg_error_sys(err, errno, "upstream %s", path);
	rc = tg_upstream_parse(text, len, path, out, err);
	free(text);
	return rc;
}

void tg_upstream_free(struct tg_upstream *u)
{
	size_t i;

	if (!u)
		return;
	jload_strv_free(u->argv);
	jload_strv_free(u->env);
	jload_strv_free(u->egress);
	for (i = 0; i < u->nmounts; i++) {
		free(u->mounts[i].host);
		free(u->mounts[i].inside);
	}
	free(u->mounts);
	for (i = 0; i < u->ncredentials; i++) {
		free(u->credentials[i].name);
		free(u->credentials[i].path);
	}
	free(u->credentials);
	for (i = 0; i < u->ntools; i++) {
		free(u->tools[i].name);
		free(u->tools[i].exposed);
		free(u->tools[i].dry_run_argument);
		free(u->tools[i].compensation_tool);
		free(u->tools[i].compensation_args);
		free(u->tools[i].irreversible);
	}
	free(u->tools);
	free(u->workdir);
	free(u->url);
	free(u->url_rule);
	free(u->file);
	free(u->name);
	free(u);
}

const char *tg_upstream_transport_name(enum tg_upstream_transport t)
{
	return t == TG_UPSTREAM_STDIO ? "stdio" : t == TG_UPSTREAM_HTTP ? "http" : "?";
}

const char *tg_upstream_pin_name(enum tg_upstream_pin p)
{
	return p == TG_UPSTREAM_PIN_STRICT ? "strict" : p == TG_UPSTREAM_PIN_REVIEW ? "review"
		: p == TG_UPSTREAM_PIN_OFF ? "off" : "?";
}
