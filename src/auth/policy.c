/*
 * The policy file and scopes (include/toolgate/auth.h, docs/AUTH.md).
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/anomaly.h"
#include "auth/oidc_int.h"
#include "auth/policy_int.h"
#include "toolgate/auth.h"
#include "util/file.h"
#include "util/parse.h"

#define MAX_POLICY (1u << 20)
#define MAX_PRINCIPALS 1024
#define DEFAULT_MAX_TTL 3600

struct tg_policy {
	json_t *principals;          /* name -> {"scopes": [...]} */
	char *issuer, *audience;
	uint64_t max_ttl;
	struct tg_anomaly_config *anomalies; /* NULL: the defaults */
	struct tg_ticket_policy tickets;
	struct oidc_config *idps;    /* "identity_providers" (oidc_config.c), or NULL */
	json_t *client_key;          /* "writes.client_key": patterns, or NULL */
	json_t *lifetimes;           /* "tickets.lifetimes": pattern -> seconds, or NULL */
	uint64_t writes_wait_ms;     /* "writes.wait" */
	struct tg_webhook *webhooks; /* "notify.webhooks" (notify_config.c) */
	size_t nwebhooks;
};

static const char *const actions[] = { "read", "write", "approve", "scrape" };
enum { ACT_READ, ACT_WRITE, ACT_APPROVE, ACT_SCRAPE };

/* A principal's name: 1 to 127 of A-Z a-z 0-9 . _ @ - */
static int name_valid(const char *n)
{
	size_t len = strlen(n);

	return len > 0 && len <= TG_MAX_PRINCIPAL_NAME &&
	       strspn(n, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._@-") == len;
}

/* The action of scope s (its part after the last ':'), or -1. */
static int scope_action(const char *s, size_t *pattern_len)
{
	const char *colon = strrchr(s, ':');
	size_t i;

	if (!colon)
		return -1;
	*pattern_len = (size_t)(colon - s);
	for (i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		if (strcmp(colon + 1, actions[i]) == 0)
			return (int)i;
	return -1;
}

int policy_pattern_valid(const char *p, size_t plen)
{
	size_t i;

	for (i = 0; i < plen; i++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-", p[i]) &&
		    !(p[i] == '*' && i == plen - 1))
			return 0;
	return plen > 0;
}

/* 1 if a principal's scopes (a JSON array) are metrics:scrape alone. */
static int scrape_only(json_t *scopes)
{
	json_t *s;
	size_t i;

	json_array_foreach(scopes, i, s)
		if (!json_is_string(s) || strcmp(json_string_value(s), TG_SCOPE_SCRAPE) != 0)
			return 0;
	return json_array_size(scopes) > 0;
}

int tg_scope_valid(const char *s)
{
	size_t plen;
	int a;

	if (!s || strlen(s) > 200 || (a = scope_action(s, &plen)) < 0 || plen == 0)
		return 0;
	/* scrape is the metrics' own, never a tool's */
	if (a == ACT_SCRAPE)
		return strcmp(s, TG_SCOPE_SCRAPE) == 0;
	return policy_pattern_valid(s, plen);
}

int tg_policy_scrape_only(const struct tg_policy *p, const char *name)
{
	return scrape_only(json_object_get(json_object_get(p->principals, name), "scopes"));
}

int policy_pattern_covers(const char *p, size_t plen, const char *q, size_t qlen)
{
	if (plen && p[plen - 1] == '*')
		return qlen >= plen - 1 && memcmp(p, q, plen - 1) == 0;
	return plen == qlen && memcmp(p, q, plen) == 0;
}

/* 1 if scope have covers scope want: a pattern as wide, the same action,
 * or write where read is wanted. */
int tg_scope_covers(const char *have, const char *want)
{
	size_t hl, wl;
	int ha = scope_action(have, &hl), wa = scope_action(want, &wl);

	if (ha < 0 || wa < 0 || !(ha == wa || (ha == 1 && wa == 0)))
		return 0;
	return policy_pattern_covers(have, hl, want, wl);
}

int tg_scope_allows_call(const char *scope, const char *tool, int write)
{
	size_t pl;
	int a = scope_action(scope, &pl);

	if (a != 1 && !(a == 0 && !write))
		return 0;
	return policy_pattern_covers(scope, pl, tool, strlen(tool));
}

static int bad(struct tg_error *err, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(struct tg_error *err, const char *path, const char *fmt, ...)
{
	char msg[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tg_error_set(err, TG_ERR_INVALID, "policy %s: %s", path, msg);
}

/* "N/s", "N/m", "N/h": kept as _rate (N) and _window (ms) in p. -1
 * malformed, -2 out of memory. */
static int parse_rate(json_t *p, json_t *rate)
{
	const char *r = json_string_value(rate);
	unsigned long n;
	char unit, extra;

	if (!r || sscanf(r, "%lu/%c%c", &n, &unit, &extra) != 2 || n < 1 || n > 1000000 ||
	    !strchr("smh", unit) || r[0] == '-' || r[0] == '+')
		return -1;
	if (json_object_set_new(p, "_rate", json_integer((json_int_t)n)) < 0 ||
	    json_object_set_new(p, "_window", json_integer(unit == 's' ? 1000 : unit == 'm' ? 60000
										: 3600000)) < 0)
		return -2;
	return 0;
}

static int check_principals(json_t *ps, const char *path, struct tg_error *err)
{
	const char *name;
	json_t *p, *scopes, *s, *ttl, *rate;
	uint64_t ms;
	size_t i;
	int rc;

	if (!json_is_object(ps) || json_object_size(ps) > MAX_PRINCIPALS)
		return bad(err, path, "\"principals\": an object of at most 1024 principals");
	json_object_foreach(ps, name, p) {
		if (!name_valid(name))
			return bad(err, path, "principal '%.64s': 1 to 127 of A-Z a-z 0-9 . _ @ -",
				   name);
		scopes = json_object_get(p, "scopes");
		ttl = json_object_get(p, "max_token_ttl");
		rate = json_object_get(p, "rate");
		if (!json_is_object(p) || json_object_size(p) != (size_t)(1 + !!ttl + !!rate) ||
		    !json_is_array(scopes) || json_array_size(scopes) > TG_MAX_SCOPES)
			return bad(err, path, "principal %s: want {\"scopes\": [at most 64 scopes], "
				   "\"max_token_ttl\"?, \"rate\"?}", name);
		if (rate && (rc = parse_rate(p, rate)) == -2)
			return tg_error_set(err, TG_ERR_NOMEM, "policy %s: out of memory", path);
		if (rate && rc < 0)
			return bad(err, path, "principal %s: rate: \"N/s\", \"N/m\" or \"N/h\", N "
				   "from 1 to 1000000 (calls of each tool)", name);
		if (ttl && (!json_is_string(ttl) ||
			    parse_duration(json_string_value(ttl), &ms, err) < 0 || ms < 1000 ||
			    ms > (scrape_only(scopes) ? 365ull : 30ull) * 86400 * 1000))
			return bad(err, path, "principal %s: max_token_ttl: a duration from 1s to %s "
				   "days", name, scrape_only(scopes) ? "365 (its scopes are "
				   "metrics:scrape alone)" : "30 (365 for a principal whose scopes are "
				   "metrics:scrape alone)");
		/* kept in seconds, for tg_policy_principal_ttl */
		if (ttl && json_object_set_new(p, "_ttl", json_integer((json_int_t)(ms / 1000))) < 0)
			return tg_error_set(err, TG_ERR_NOMEM, "policy %s: out of memory", path);
		json_array_foreach(scopes, i, s)
			if (!tg_scope_valid(json_string_value(s)))
				return bad(err, path, "scope %.100s: want PATTERN:read|write|approve "
					   "(PATTERN a tool name, or a prefix ending in *), or "
					   "metrics:scrape",
					   json_is_string(s) ? json_string_value(s) : "(not a string)");
	}
	return 0;
}

void tg_ticket_policy_defaults(struct tg_ticket_policy *out)
{
	out->max_pending = 32;
	out->max_pending_bytes = 16u << 20;
	out->max_bytes = 1u << 20;
	out->collect_every_s = 600;
	out->keep_s = 30 * 86400;
	out->lifetime_s = 3600;
}

/* A ticket's lifetime (tickets.lifetime, tickets.lifetimes), seconds:
 * long enough for a person to see it, short enough that nobody approves
 * what its requester has long forgotten. */
#define TICKET_LIFETIME_MIN 60
#define TICKET_LIFETIME_MAX (7 * 86400)
#define TICKET_LIFETIMES_MAX 64

/* A size or duration field of "tickets": a string parse accepts, from min
 * to max (in its unit); 0 and *out left alone when absent. */
static int ticket_field(json_t *t, const char *name, int duration, uint64_t min, uint64_t max,
			const char *path, uint64_t *out, struct tg_error *err)
{
	json_t *v = json_object_get(t, name);
	struct tg_error perr;
	uint64_t n = 0;
	int rc = -1;

	if (!v)
		return 0;
	if (json_is_string(v))
		rc = duration ? parse_duration(json_string_value(v), &n, &perr)
			      : parse_size(json_string_value(v), &n, &perr);
	if (rc == 0 && duration) { /* kept in whole seconds */
		rc = n % 1000 ? -1 : 0;
		n /= 1000;
	}
	if (rc < 0 || n < min || n > max)
		return bad(err, path, "tickets.%s: %s", name,
			   !duration ? "a size from 1K to 1G, such as \"1M\""
			   : min == TICKET_LIFETIME_MIN ? "a duration from 1m to 7d, whole seconds, "
							  "such as \"1h\""
			   : min ? "a duration from 1d to 3650d, such as \"30d\""
				 : "a duration from 0 (never) to 1d, whole seconds, such as \"10m\"");
	*out = n;
	return 0;
}

/* The policy's "tickets" (docs/PIPELINE.md, "Bounds of the queue"), into
 * *tp, the defaults where it says nothing. */
static int parse_tickets(json_t *t, const char *path, struct tg_ticket_policy *tp,
			 struct tg_error *err)
{
	static const char *const fields[] = { "max_pending", "max_pending_bytes", "max_bytes",
					      "collect_every", "keep", "lifetime", "lifetimes" };
	json_t *v;
	const char *key;
	size_t i;

	tg_ticket_policy_defaults(tp);
	if (!t)
		return 0;
	if (!json_is_object(t))
		return bad(err, path, "tickets: want an object");
	json_object_foreach(t, key, v) {
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]) && strcmp(key, fields[i]); i++)
			;
		if (i == sizeof(fields) / sizeof(fields[0]))
			return bad(err, path, "tickets: unknown field \"%.64s\"", key);
	}
	v = json_object_get(t, "max_pending");
	if (v && (!json_is_integer(v) || json_integer_value(v) < 1 ||
		  json_integer_value(v) > 100000))
		return bad(err, path, "tickets.max_pending: an integer from 1 to 100000");
	if (v)
		tp->max_pending = (uint64_t)json_integer_value(v);
	if (ticket_field(t, "max_pending_bytes", 0, 1024, 1ull << 30, path, &tp->max_pending_bytes,
			 err) < 0 ||
	    ticket_field(t, "max_bytes", 0, 1024, 1ull << 30, path, &tp->max_bytes, err) < 0 ||
	    ticket_field(t, "collect_every", 1, 0, 86400, path, &tp->collect_every_s, err) < 0 ||
	    ticket_field(t, "keep", 1, 86400, 3650ull * 86400, path, &tp->keep_s, err) < 0 ||
	    ticket_field(t, "lifetime", 1, TICKET_LIFETIME_MIN, TICKET_LIFETIME_MAX, path,
			 &tp->lifetime_s, err) < 0)
		return -1;
	if (tp->max_bytes > tp->max_pending_bytes)
		return bad(err, path, "tickets.max_bytes is more than tickets.max_pending_bytes: "
			   "not one ticket could be held");
	return 0;
}

/* The policy's "tickets.lifetimes": tool patterns (a scope's) to the
 * lifetime of their tickets, checked as tickets.lifetime is; kept in
 * *out as pattern -> seconds (NULL when absent). */
static int parse_lifetimes(json_t *t, const char *path, json_t **out, struct tg_error *err)
{
	json_t *l = json_object_get(t, "lifetimes"), *v, *kept;
	const char *pattern;
	char field[300];
	uint64_t s;

	*out = NULL;
	if (!l)
		return 0;
	if (!json_is_object(l) || json_object_size(l) > TICKET_LIFETIMES_MAX)
		return bad(err, path, "tickets.lifetimes: want an object of at most %d tool patterns "
			   "to durations, such as {\"sql.*\": \"10m\"}", TICKET_LIFETIMES_MAX);
	kept = json_object();
	if (!kept)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	json_object_foreach(l, pattern, v) {
		if (strlen(pattern) > 200 || !policy_pattern_valid(pattern, strlen(pattern))) {
			json_decref(kept);
			return bad(err, path, "tickets.lifetimes: %.100s: want a tool name, or a "
				   "prefix ending in * (as a scope's pattern)", pattern);
		}
		snprintf(field, sizeof(field), "lifetimes.%s", pattern);
		s = 0;
		if (ticket_field(l, pattern, 1, TICKET_LIFETIME_MIN, TICKET_LIFETIME_MAX, path, &s,
				 err) < 0) {
			/* named by its whole path: tickets.lifetimes.PATTERN */
			json_decref(kept);
			return bad(err, path, "tickets.%s: a duration from 1m to 7d, whole seconds, "
				   "such as \"1h\"", field);
		}
		if (json_object_set_new(kept, pattern, json_integer((json_int_t)s)) < 0) {
			json_decref(kept);
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		}
	}
	*out = kept;
	return 0;
}

/* The policy's "writes" (docs/PIPELINE.md, "Write calls"): the tools
 * whose write calls still need a key of the client's, and how long a held
 * call waits for its decision when its client did not say. Kept in p;
 * the defaults where it says nothing. */
static int parse_writes(json_t *w, const char *path, struct tg_policy *p, struct tg_error *err)
{
	json_t *v, *keys, *s;
	const char *key;
	struct tg_error perr;
	uint64_t ms;
	size_t i;

	p->writes_wait_ms = TG_WRITES_WAIT_DEFAULT_MS;
	if (!w)
		return 0;
	if (!json_is_object(w))
		return bad(err, path, "writes: want an object");
	json_object_foreach(w, key, v)
		if (strcmp(key, "client_key") != 0 && strcmp(key, "wait") != 0)
			return bad(err, path, "writes: unknown field \"%.64s\"", key);
	keys = json_object_get(w, "client_key");
	if (keys && (!json_is_array(keys) || json_array_size(keys) > TG_MAX_SCOPES))
		return bad(err, path, "writes.client_key: want an array of at most 64 tool patterns");
	json_array_foreach(keys, i, s)
		if (!json_is_string(s) || json_string_length(s) > 200 ||
		    !policy_pattern_valid(json_string_value(s), json_string_length(s)))
			return bad(err, path, "writes.client_key: %.100s: want a tool name, or a "
				   "prefix ending in * (as a scope's pattern)",
				   json_is_string(s) ? json_string_value(s) : "(not a string)");
	v = json_object_get(w, "wait");
	if (v && (!json_is_string(v) || parse_duration(json_string_value(v), &ms, &perr) < 0 ||
		  ms > TG_WRITES_WAIT_MAX_MS))
		return bad(err, path, "writes.wait: a duration from 0 (answer at once) to 30m, such "
			   "as \"3m\"");
	if (v)
		p->writes_wait_ms = ms;
	p->client_key = json_incref(keys);
	return 0;
}

int tg_policy_load(const char *path, struct tg_policy **out, struct tg_error *err)
{
	static const char *const fields[] = { "issuer", "audience", "max_token_ttl", "principals",
					      "anomalies", "tickets", "identity_providers", "writes",
					      "notify" };
	struct tg_policy *p = NULL;
	json_error_t jerr;
	json_t *j = NULL, *v;
	const char *key;
	uint64_t ms;
	size_t len, i;
	char *text;

	tg_error_clear(err);
	*out = NULL;
	text = file_read_all(path, MAX_POLICY, 1, &len);
	if (!text)
		return errno == EFBIG ? bad(err, path, "larger than 1 MiB")
				      : tg_error_sys(err, errno, "policy %s", path);
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (!json_is_object(j)) {
		json_decref(j);
		return tg_error_set(err, TG_ERR_INVALID, "policy %s: line %d: %s", path, jerr.line,
				    j ? "want a JSON object" : jerr.text);
	}
	json_object_foreach(j, key, v) {
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]) && strcmp(key, fields[i]); i++)
			;
		if (i == sizeof(fields) / sizeof(fields[0])) {
			bad(err, path, "unknown field \"%.64s\"", key);
			goto fail;
		}
	}
	p = calloc(1, sizeof(*p));
	if (!p) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto fail;
	}
	p->max_ttl = DEFAULT_MAX_TTL;
	v = json_object_get(j, "max_token_ttl");
	if (v && (!json_is_string(v) || parse_duration(json_string_value(v), &ms, err) < 0 ||
		  ms < 1000 || ms > 30ull * 86400 * 1000)) {
		bad(err, path, "max_token_ttl: a duration from 1s to 30 days, such as \"1h\"");
		goto fail;
	}
	if (v)
		p->max_ttl = ms / 1000;
	for (i = 0; i < 2; i++) {
		v = json_object_get(j, fields[i]);
		if (v && (!json_is_string(v) || !json_string_length(v) || json_string_length(v) > 200)) {
			bad(err, path, "%s: a string of 1 to 200 bytes", fields[i]);
			goto fail;
		}
	}
	p->issuer = strdup(json_object_get(j, "issuer") ? json_string_value(json_object_get(j, "issuer"))
							: "toolgate");
	p->audience = strdup(json_object_get(j, "audience")
				     ? json_string_value(json_object_get(j, "audience"))
				     : "toolgate");
	if (check_principals(json_object_get(j, "principals"), path, err) < 0)
		goto fail;
	if (!p->issuer || !p->audience) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto fail;
	}
	v = json_object_get(j, "anomalies");
	if (v) {
		char *a = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

		if (!a) {
			tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			goto fail;
		}
		if (tg_anomaly_config_new(a, strlen(a), &p->anomalies, err) < 0) {
			free(a);
			tg_error_wrap(err, "policy %s", path); /* its code kept: out of memory */
			goto fail;
		}
		free(a);
	}
	if (parse_tickets(json_object_get(j, "tickets"), path, &p->tickets, err) < 0 ||
	    parse_lifetimes(json_object_get(j, "tickets"), path, &p->lifetimes, err) < 0 ||
	    oidc_config_parse(json_object_get(j, "identity_providers"),
			      json_object_get(j, "principals"), p->issuer, path, &p->idps, err) < 0)
		goto fail;
	if (parse_writes(json_object_get(j, "writes"), path, p, err) < 0 ||
	    notify_config_parse(json_object_get(j, "notify"), path, &p->webhooks, &p->nwebhooks,
				err) < 0)
		goto fail;
	p->principals = json_incref(json_object_get(j, "principals"));
	json_decref(j);
	*out = p;
	return 0;
fail:
	json_decref(j);
	tg_policy_free(p);
	return -1;
}

void tg_policy_free(struct tg_policy *p)
{
	if (!p)
		return;
	json_decref(p->principals);
	json_decref(p->client_key);
	json_decref(p->lifetimes);
	tg_anomaly_config_free(p->anomalies);
	oidc_config_free(p->idps);
	notify_config_free(p->webhooks, p->nwebhooks);
	free(p->issuer);
	free(p->audience);
	free(p);
}

const struct tg_ticket_policy *tg_policy_tickets(const struct tg_policy *p)
{
	return &p->tickets;
}

int tg_policy_client_key(const struct tg_policy *p, const char *tool)
{
	json_t *s;
	size_t i;

	json_array_foreach(p->client_key, i, s)
		if (policy_pattern_covers(json_string_value(s), json_string_length(s), tool, strlen(tool)))
			return 1;
	return 0;
}

uint64_t tg_policy_ticket_lifetime(const struct tg_policy *p, const char *tool)
{
	const char *pattern, *at = tool ? strchr(tool, '@') : NULL;
	size_t len = at ? (size_t)(at - tool) : tool ? strlen(tool) : 0, best = 0;
	uint64_t s = p->tickets.lifetime_s;
	json_t *v;

	if (!tool)
		return s;
	/* the longest pattern that covers the tool's name: a name beats its
	 * prefix, a longer prefix a shorter one */
	json_object_foreach(p->lifetimes, pattern, v) {
		size_t plen = strlen(pattern);

		if (plen > best && policy_pattern_covers(pattern, plen, tool, len)) {
			best = plen;
			s = (uint64_t)json_integer_value(v);
		}
	}
	return s;
}

uint64_t tg_policy_writes_wait_ms(const struct tg_policy *p)
{
	return p->writes_wait_ms;
}

const struct tg_anomaly_config *tg_policy_anomalies(const struct tg_policy *p)
{
	return p->anomalies;
}

const struct oidc_config *policy_oidc(const struct tg_policy *p)
{
	return p->idps;
}

const char *tg_policy_issuer(const struct tg_policy *p)
{
	return p->issuer;
}

const char *tg_policy_audience(const struct tg_policy *p)
{
	return p->audience;
}

uint64_t tg_policy_max_ttl(const struct tg_policy *p)
{
	return p->max_ttl;
}

int tg_policy_knows(const struct tg_policy *p, const char *name)
{
	return json_object_get(p->principals, name) != NULL;
}

int tg_policy_grants(const struct tg_policy *p, const char *name, const char *scope)
{
	json_t *scopes = json_object_get(json_object_get(p->principals, name), "scopes"), *s;
	size_t i;

	if (!tg_scope_valid(scope))
		return 0;
	json_array_foreach(scopes, i, s)
		if (tg_scope_covers(json_string_value(s), scope))
			return 1;
	return 0;
}

char *tg_policy_scope_list(const struct tg_policy *p, const char *name)
{
	json_t *scopes = json_object_get(json_object_get(p->principals, name), "scopes"), *s;
	size_t i, n = 1, off = 0;
	char *out;

	json_array_foreach(scopes, i, s)
		n += json_string_length(s) + 1;
	out = calloc(1, n);
	json_array_foreach(scopes, i, s) {
		size_t len = json_string_length(s);

		if (!out)
			break;
		if (i)
			out[off++] = ' ';
		if (len)
			memcpy(out + off, json_string_value(s), len);
		off += len;
	}
	return out;
}

uint64_t tg_policy_principal_ttl(const struct tg_policy *p, const char *name)
{
	json_t *t = json_object_get(json_object_get(p->principals, name), "_ttl");

	return t ? (uint64_t)json_integer_value(t) : 0;
}

size_t tg_policy_count(const struct tg_policy *p)
{
	return json_object_size(p->principals);
}

const char *tg_policy_name(const struct tg_policy *p, size_t i)
{
	void *it = json_object_iter(p->principals);

	while (it && i--)
		it = json_object_iter_next(p->principals, it);
	return it ? json_object_iter_key(it) : NULL;
}

uint64_t tg_policy_rate(const struct tg_policy *p, const char *name, uint64_t *window_ms)
{
	json_t *pr = json_object_get(p->principals, name);

	if (window_ms)
		*window_ms = (uint64_t)json_integer_value(json_object_get(pr, "_window"));
	return (uint64_t)json_integer_value(json_object_get(pr, "_rate"));
}

/* 1 if any scope of the space-separated list satisfies fn(scope, a, b). */
static int any_scope(const char *list, int (*fn)(const char *, const char *, int),
		     const char *a, int b)
{
	char *copy = list ? strdup(list) : NULL, *save = NULL, *s;
	int ok = 0;

	for (s = copy ? strtok_r(copy, " ", &save) : NULL; s && !ok; s = strtok_r(NULL, " ", &save))
		ok = fn(s, a, b);
	free(copy);
	return ok;
}

static int covers(const char *have, const char *want, int unused)
{
	(void)unused;
	return tg_scope_covers(have, want);
}

int tg_scopes_allow_call(const char *list, const char *tool, int write)
{
	return any_scope(list, tg_scope_allows_call, tool, write);
}

int tg_scopes_cover(const char *list, const char *want)
{
	return any_scope(list, covers, want, 0);
}

/* 1 if scope's action is approve. */
static int approves(const char *scope, const char *unused, int unused2)
{
	size_t n = strlen(scope);

	(void)unused;
	(void)unused2;
	return n > 8 && strcmp(scope + n - 8, ":approve") == 0;
}

int tg_scopes_approve_any(const char *list)
{
	return any_scope(list, approves, NULL, 0);
}

size_t tg_policy_webhook_count(const struct tg_policy *p)
{
	return p ? p->nwebhooks : 0;
}

const struct tg_webhook *tg_policy_webhook(const struct tg_policy *p, size_t i)
{
	return p && i < p->nwebhooks ? &p->webhooks[i] : NULL;
}
