/*
 * The policy's "notify" (docs/NOTIFY.md): its webhooks, each checked
 * field by field when the policy loads, so that a mistake is refused
 * naming the file and the field (`policy p.json: notify.webhooks[0].url:
 * ...`), never found when a ticket waits and nobody hears of it.
 *
 * Owns: the parsed webhooks. Must never: accept a url the egress rules
 * could not reach it by (not http(s), userinfo), plain http beyond a
 * loopback address, a link-local or cloud metadata address in any
 * spelling, an IPv6 address in a denied range but ::1 (the egress proxy allows an address a rule names, so the
 * metadata address is refused here, where the rule is made), nor a
 * secret file other users may read or replace. It never reads the
 * secret itself: the delivery does, when it starts.
 */
#include <errno.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "auth/policy_int.h"
#include "toolgate/egress.h"
#include "util/url.h"

#define URL_MAX 2048
#define SECRET_FILE_MAX 4096

/* In enum tg_ticket_state's order (toolgate/store.h). */
static const char *const events[] = { "created", "approved", "rejected", "cancelled",
				      "expired", "executed", "failed", "compensated" };
#define NEVENTS (sizeof(events) / sizeof(events[0]))

static const char *const fields[] = { "name", "url", "tools", "events", "secret_file" };

const char *tg_webhook_event_name(unsigned state)
{
	return state < NEVENTS ? events[state] : "?";
}

static int bad(struct tg_error *err, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int bad(struct tg_error *err, const char *path, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tg_error_set(err, TG_ERR_INVALID, "policy %s: notify.%s", path, msg);
}

/* A string field of 1 to max bytes without a NUL, or NULL when absent or not one. */
static const char *string_of(json_t *v, size_t max)
{
	if (!json_is_string(v) || json_string_length(v) == 0 || json_string_length(v) > max ||
	    strlen(json_string_value(v)) != json_string_length(v))
		return NULL;
	return json_string_value(v);
}

/* url: https, or http to a loopback address; no link-local nor metadata
 * address; its egress rule into w->rule. */
static int check_url(struct tg_webhook *w, const char *path, size_t i, json_t *v,
		     struct tg_error *err)
{
	struct sockaddr_storage addr;
	struct url_parts u;
	const char *s = string_of(v, URL_MAX), *why, *range = NULL;
	char host[256];
	size_t hl;
	int rc, lit;

	if (!s)
		return bad(err, path, "webhooks[%zu].url: required, a string of 1 to %d bytes", i,
			   URL_MAX);
	rc = url_parts(s, &u, &why);
	if (rc < 0)
		return bad(err, path, "webhooks[%zu].url: %s%s", i, why,
			   rc == -2 ? ": a receiver authenticates the signature, never a password"
				    : "");
	/* the bracketless host, as the egress rules read an address */
	hl = strlen(u.host);
	if (u.host[0] == '[')
		snprintf(host, sizeof(host), "%.*s", (int)(hl - 2), u.host + 1);
	else
		snprintf(host, sizeof(host), "%s", u.host);
	lit = tg_egress_parse_ip(host, &addr);
	if (lit < 0)
		return bad(err, path, "webhooks[%zu].url: %s is not a host name nor an IP address",
			   i, u.host);
	if (lit == 1)
		range = tg_egress_denied_range((const struct sockaddr *)&addr);
	/* an IPv6 literal in a denied range other than ::1 is no receiver's:
	 * the IPv4-compatible (::a9fe:a9fe, which a kernel may tunnel to
	 * 169.254.169.254 over IPv4), IPv4-translated and Teredo forms carry
	 * an IPv4 address that tg_egress_denied_range does not judge */
	if (range && (strstr(range, "metadata") || strstr(range, "link-local") ||
		      strstr(range, "cloud platform") ||
		      (addr.ss_family == AF_INET6 && strncmp(range, "loopback", 8) != 0)))
		return bad(err, path, "webhooks[%zu].url: %s is in %s: a webhook never goes there",
			   i, u.host, range);
	if (!u.https && !(range && strncmp(range, "loopback", 8) == 0))
		return bad(err, path, "webhooks[%zu].url: must be https:// (http:// only to a "
			   "loopback address such as 127.0.0.1, for tests)", i);
	w->url = strdup(s);
	if (!w->url)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	snprintf(w->rule, sizeof(w->rule), "%s", u.rule);
	return 0;
}

static int check_tools(struct tg_webhook *w, const char *path, size_t i, json_t *v,
		       struct tg_error *err)
{
	json_t *t;
	size_t k;

	if (!v)
		return 0;
	if (!json_is_array(v) || !json_array_size(v) || json_array_size(v) > TG_WEBHOOK_TOOLS_MAX)
		return bad(err, path, "webhooks[%zu].tools: want an array of 1 to %d tool patterns "
			   "(leave it out for every tool)", i, TG_WEBHOOK_TOOLS_MAX);
	w->tools = calloc(json_array_size(v), sizeof(*w->tools));
	if (!w->tools)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	json_array_foreach(v, k, t) {
		const char *s = string_of(t, 200);

		if (!s || !policy_pattern_valid(s, strlen(s)))
			return bad(err, path, "webhooks[%zu].tools[%zu]: want a tool name, or a "
				   "prefix ending in * (as a scope's pattern)", i, k);
		w->tools[k] = strdup(s);
		if (!w->tools[k])
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		w->ntools = k + 1;
	}
	return 0;
}

static int check_events(struct tg_webhook *w, const char *path, size_t i, json_t *v,
			struct tg_error *err)
{
	json_t *e;
	size_t k, n;

	if (!v) {
		w->events = (1u << NEVENTS) - 1;
		return 0;
	}
	if (!json_is_array(v) || !json_array_size(v))
		return bad(err, path, "webhooks[%zu].events: want an array of event names (leave "
			   "it out for every event)", i);
	json_array_foreach(v, k, e) {
		const char *s = json_string_value(e);

		for (n = 0; s && n < NEVENTS && strcmp(s, events[n]) != 0; n++)
			;
		if (!s || n == NEVENTS)
			return bad(err, path, "webhooks[%zu].events[%zu]: want one of created, "
				   "approved, rejected, cancelled, expired, executed, failed, "
				   "compensated", i, k);
		w->events |= 1u << n;
	}
	return 0;
}

/* The secret's file: there, a regular file, out of other users' reach
 * and out of its group's to replace. Its mode is all that is read here
 * (the key itself when the webhook starts, src/gate/notify.c). */
static int check_secret_file(struct tg_webhook *w, const char *path, size_t i, json_t *v,
			     struct tg_error *err)
{
	const char *s = string_of(v, SECRET_FILE_MAX);
	struct stat st;

	if (!s)
		return bad(err, path, "webhooks[%zu].secret_file: required, the file of the key "
			   "that signs each body (docs/NOTIFY.md)", i);
	if (stat(s, &st) < 0)
		return bad(err, path, "webhooks[%zu].secret_file: %s: %s", i, s, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return bad(err, path, "webhooks[%zu].secret_file: %s: not a regular file", i, s);
	if (st.st_mode & (S_IROTH | S_IWOTH | S_IWGRP))
		return bad(err, path, "webhooks[%zu].secret_file: %s: %s may %s this secret "
			   "(mode %04o): chmod 600 (or 640 for a group of readers)", i, s,
			   st.st_mode & (S_IROTH | S_IWOTH) ? "every user" : "its group",
			   st.st_mode & S_IROTH ? "read" : "replace",
			   (unsigned)(st.st_mode & 07777));
	w->secret_file = strdup(s);
	return w->secret_file ? 0 : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
}

static int check_webhook(struct tg_webhook *all, size_t i, json_t *o, const char *path,
			 struct tg_error *err)
{
	struct tg_webhook *w = &all[i];
	const char *key, *name;
	json_t *v;
	size_t k;

	if (!json_is_object(o))
		return bad(err, path, "webhooks[%zu]: want an object", i);
	json_object_foreach(o, key, v) {
		for (k = 0; k < sizeof(fields) / sizeof(fields[0]) && strcmp(key, fields[k]); k++)
			;
		if (k == sizeof(fields) / sizeof(fields[0]))
			return bad(err, path, "webhooks[%zu]: unknown field \"%.64s\"", i, key);
	}
	name = string_of(json_object_get(o, "name"), 64);
	if (!name || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			    "0123456789._-") != strlen(name))
		return bad(err, path, "webhooks[%zu].name: required, 1 to 64 of A-Z a-z 0-9 . _ -",
			   i);
	for (k = 0; k < i; k++)
		if (strcmp(all[k].name, name) == 0)
			return bad(err, path, "webhooks[%zu].name: %s is webhooks[%zu]'s already", i,
				   name, k);
	snprintf(w->name, sizeof(w->name), "%s", name);
	if (check_url(w, path, i, json_object_get(o, "url"), err) < 0 ||
	    check_tools(w, path, i, json_object_get(o, "tools"), err) < 0 ||
	    check_events(w, path, i, json_object_get(o, "events"), err) < 0 ||
	    check_secret_file(w, path, i, json_object_get(o, "secret_file"), err) < 0)
		return -1;
	return 0;
}

int notify_config_parse(json_t *v, const char *path, struct tg_webhook **out, size_t *n,
			struct tg_error *err)
{
	struct tg_webhook *w;
	json_t *hooks, *o;
	const char *key;
	size_t i;

	*out = NULL;
	*n = 0;
	if (!v)
		return 0;
	if (!json_is_object(v))
		return tg_error_set(err, TG_ERR_INVALID, "policy %s: notify: want an object", path);
	json_object_foreach(v, key, o)
		if (strcmp(key, "webhooks") != 0)
			return bad(err, path, "unknown field \"%.64s\"", key);
	hooks = json_object_get(v, "webhooks");
	if (!hooks)
		return 0;
	if (!json_is_array(hooks) || json_array_size(hooks) > TG_WEBHOOKS_MAX)
		return bad(err, path, "webhooks: want an array of at most %d webhooks",
			   TG_WEBHOOKS_MAX);
	if (!json_array_size(hooks))
		return 0;
	w = calloc(json_array_size(hooks), sizeof(*w));
	if (!w)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	json_array_foreach(hooks, i, o) {
		if (check_webhook(w, i, o, path, err) < 0) {
			notify_config_free(w, i + 1);
			return -1;
		}
	}
	*out = w;
	*n = json_array_size(hooks);
	return 0;
}

void notify_config_free(struct tg_webhook *w, size_t n)
{
	size_t i, k;

	if (!w)
		return;
	for (i = 0; i < n; i++) {
		free(w[i].url);
		free(w[i].secret_file);
		for (k = 0; k < w[i].ntools; k++)
			free(w[i].tools[k]);
		free(w[i].tools);
	}
	free(w);
}

int tg_webhook_covers(const struct tg_webhook *w, const char *tool)
{
	size_t len = strcspn(tool, "@"), k;

	if (!w->ntools)
		return 1;
	for (k = 0; k < w->ntools; k++)
		if (policy_pattern_covers(w->tools[k], strlen(w->tools[k]), tool, len))
			return 1;
	return 0;
}
