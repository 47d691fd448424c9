/*
 * The MCP server object: what every session of every transport shares
 * (the gate, the configured principal for stdio, the instructions).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/mcp_int.h"
#include "util/file.h"
#include "util/sodium.h"

/* The key that seals MRTR requestStates: from a file of 64 hex digits,
 * so that every instance behind one load balancer opens the others'
 * states; without one, random for this process (a state then only
 * works on the instance that issued it). */
static int state_key(struct tg_mcp *m, const char *path, struct tg_error *err)
{
	size_t len, bin_len;
	char *text;
	int rc = 0;

	if (!path) {
		randombytes_buf(m->state_key, sizeof(m->state_key));
		return 0;
	}
	text = file_read_all(path, 4096, 1, &len);
	if (!text)
		return tg_error_set(err, TG_ERR_INVALID, "state key %s: %s", path, strerror(errno));
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		text[--len] = '\0';
	if (len != 2 * sizeof(m->state_key) ||
	    sodium_hex2bin(m->state_key, sizeof(m->state_key), text, len, NULL, &bin_len, NULL) != 0 ||
	    bin_len != sizeof(m->state_key))
		rc = tg_error_set(err, TG_ERR_INVALID,
				  "state key %s: want one line of 64 hex digits (32 random bytes; "
				  "e.g. head -c 32 /dev/urandom | xxd -p -c 64)", path);
	sodium_memzero(text, len);
	free(text);
	return rc;
}

/* With the gate's policy: the stdio principal's scopes, which a
 * principal named must have. */
static int stdio_scopes(struct tg_mcp *m, const struct tg_mcp_options *opts,
			struct tg_error *err)
{
	int known;

	m->policy = tg_gate_has_policy(m->gate);
	if (!m->policy)
		return 0;
	known = tg_gate_principal_scopes(m->gate, m->principal, &m->principal_scopes);
	if (known < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	/* the default one, when the policy does not name it, holds no
	 * scope (fail closed); one named must be the policy's */
	if (!known && opts && opts->principal)
		return tg_error_set(err, TG_ERR_INVALID, "principal %s is not in the policy",
				    m->principal);
	return 0;
}

static void gate_changed(void *ctx, const struct tg_catalog *old, const struct tg_catalog *now);

int tg_mcp_new(struct tg_gate *gate, const struct tg_mcp_options *opts, struct tg_mcp **out,
	       struct tg_error *err)
{
	struct tg_mcp *m = calloc(1, sizeof(*m));

	tg_error_clear(err);
	*out = NULL;
	if (!m)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (opts && opts->principal && !mcp_principal_valid(opts->principal)) {
		free(m);
		return tg_error_set(err, TG_ERR_INVALID,
				    "principal '%.64s': 1 to %d of A-Z a-z 0-9 . _ @ -",
				    opts->principal, MCP_MAX_PRINCIPAL - 1);
	}
	if (tg_sodium_load("MCP server", err) < 0) {
		free(m);
		return -1;
	}
	pthread_mutex_init(&m->lock, NULL);
	pthread_mutex_init(&m->reload_lock, NULL);
	mcp_tasks_init(&m->tasks);
	m->gate = gate;
	m->principal = strdup(opts && opts->principal ? opts->principal : "local");
	m->instructions = opts && opts->instructions ? strdup(opts->instructions) : NULL;
	m->max_inflight = opts && opts->max_inflight ? opts->max_inflight : 16;
	m->http_header_timeout = opts ? opts->http_header_timeout : 0;
	if (m->principal && stdio_scopes(m, opts, err) < 0) {
		tg_mcp_free(m);
		return -1;
	}
	if (state_key(m, opts ? opts->state_key_file : NULL, err) < 0 ||
	    (opts && opts->http_tokens && mcp_tokens_load(opts->http_tokens, &m->tokens, err) < 0)) {
		tg_mcp_free(m);
		return -1;
	}
	if (!m->principal || (opts && opts->instructions && !m->instructions)) {
		tg_mcp_free(m);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	/* what an upstream lists anew reaches the sessions as a reload does */
	tg_gate_on_change(gate, gate_changed, m);
	m->hooked = 1;
	*out = m;
	return 0;
}

void tg_mcp_free(struct tg_mcp *m)
{
	if (!m)
		return;
	if (m->hooked)
		tg_gate_on_change(m->gate, NULL, NULL);
	/* task runs use the gate: they end before anything goes */
	mcp_tasks_stop(&m->tasks);
	pthread_mutex_destroy(&m->lock);
	pthread_mutex_destroy(&m->reload_lock);
	free(m->principal);
	free(m->instructions);
	mcp_tokens_free(m->tokens);
	sodium_memzero(m->state_key, sizeof(m->state_key));
	free(m->principal_scopes);
	free(m);
}

/* ---- reloading the catalogue ---------------------------------------------- */

void mcp_watch(struct tg_mcp *m, struct mcp_watcher *w, mcp_watch_fn fn, void *ctx)
{
	w->fn = fn;
	w->ctx = ctx;
	pthread_mutex_lock(&m->lock);
	w->next = m->watchers;
	m->watchers = w;
	pthread_mutex_unlock(&m->lock);
}

void mcp_unwatch(struct tg_mcp *m, struct mcp_watcher *w)
{
	struct mcp_watcher **p;

	pthread_mutex_lock(&m->lock);
	for (p = &m->watchers; *p; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			break;
		}
	pthread_mutex_unlock(&m->lock);
}

/* What clients can list of a catalogue, as JSON texts to compare. */
struct lists {
	char *tools, *prompts, *resources, *templates;
};

static int lists_of(const struct tg_catalog *c, struct lists *l)
{
	struct tg_error err;

	l->tools = tg_gate_tools_json_of(c, NULL, &err);
	l->prompts = tg_catalog_prompts_json(c, &err);
	l->resources = tg_catalog_resources_json(c, 0, &err);
	l->templates = tg_catalog_resources_json(c, 1, &err);
	return l->tools && l->prompts && l->resources && l->templates ? 0 : -1;
}

static void lists_free(struct lists *l)
{
	free(l->tools);
	free(l->prompts);
	free(l->resources);
	free(l->templates);
}

/* 1 if uri reads otherwise in a than in b (or exists in one only). */
static int content_differs(const struct tg_catalog *a, const struct tg_catalog *b, const char *uri)
{
	struct tg_error err;
	char *x = tg_catalog_resource_read(a, uri, &err), *y = tg_catalog_resource_read(b, uri, &err);
	int d = !x || !y || strcmp(x, y) != 0;

	free(x);
	free(y);
	return d;
}

/* The URIs of the resources listed in either, whose contents changed. */
static json_t *updated_uris(const struct tg_catalog *a, const struct lists *la,
			    const struct tg_catalog *b, const struct lists *lb)
{
	json_t *out = json_array(), *both[2], *r;
	size_t i, j;

	both[0] = json_loads(la->resources, 0, NULL);
	both[1] = json_loads(lb->resources, 0, NULL);
	for (j = 0; out && j < 2; j++)
		json_array_foreach(both[j], i, r) {
			const char *uri = json_string_value(json_object_get(r, "uri"));
			json_t *u;
			size_t k;
			int seen = 0;

			json_array_foreach(out, k, u)
				seen |= uri && strcmp(json_string_value(u), uri) == 0;
			if (uri && !seen && content_differs(a, b, uri))
				json_array_append_new(out, json_string(uri));
		}
	json_decref(both[0]);
	json_decref(both[1]);
	return out;
}

/* The sessions told what differs between old (listed in lo) and now,
 * and what of the upstreams' lists changed (tg_gate_lists_changed). */
static void tell(struct tg_mcp *m, const struct tg_catalog *old, const struct lists *lo,
		 const struct tg_catalog *now)
{
	struct lists ln = { 0 };
	struct mcp_change c = { 0, 0, 0, NULL };
	struct mcp_watcher *w;
	int resources, prompts;

	if (lists_of(now, &ln) == 0) {
		c.tools = strcmp(lo->tools, ln.tools) != 0;
		c.prompts = strcmp(lo->prompts, ln.prompts) != 0;
		c.resources = strcmp(lo->resources, ln.resources) != 0 ||
			      strcmp(lo->templates, ln.templates) != 0;
		c.updated = updated_uris(old, lo, now, &ln);
	} else {
		/* out of memory: say everything changed, clients list again */
		c.tools = c.prompts = c.resources = 1;
	}
	tg_gate_lists_changed(m->gate, &resources, &prompts);
	c.resources |= resources;
	c.prompts |= prompts;
	pthread_mutex_lock(&m->lock);
	for (w = m->watchers; w; w = w->next)
		w->fn(w->ctx, &c);
	pthread_mutex_unlock(&m->lock);
	json_decref(c.updated);
	lists_free(&ln);
}

/* The gate's own change (an upstream listed other tools), as a reload's. */
static void gate_changed(void *ctx, const struct tg_catalog *old, const struct tg_catalog *now)
{
	struct tg_mcp *m = ctx;
	struct lists lo = { 0 };

	pthread_mutex_lock(&m->reload_lock);
	if (lists_of(old, &lo) == 0)
		tell(m, old, &lo, now);
	pthread_mutex_unlock(&m->reload_lock);
	lists_free(&lo);
}

int tg_mcp_reload(struct tg_mcp *m, struct tg_catalog *catalog, struct tg_error *err)
{
	const struct tg_catalog *old, *now;
	struct lists lo = { 0 };
	int rc = -1;

	tg_error_clear(err);
	pthread_mutex_lock(&m->reload_lock); /* one reload at a time */
	old = tg_gate_acquire(m->gate);
	if (lists_of(old, &lo) < 0) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	if (tg_gate_reload(m->gate, catalog, err) < 0)
		goto out;
	now = tg_gate_acquire(m->gate);
	tell(m, old, &lo, now);
	tg_gate_release(m->gate, now);
	rc = 0;
out:
	tg_gate_release(m->gate, old);
	pthread_mutex_unlock(&m->reload_lock);
	lists_free(&lo);
	return rc;
}
