/*
 * Identity providers' keys, fetched and cached, and their tokens checked
 * (include/toolgate/auth.h, docs/AUTH.md, "External identity providers").
 *
 * One thread per set fetches: OpenID Connect discovery
 * (ISSUER/.well-known/openid-configuration, whose issuer must be the
 * configured one exactly) for the jwks_uri, then the JWKS, with libcurl,
 * at most 256 KiB and 2 s for both, https only (http to loopback for
 * tests), no redirects. It fetches each provider at start, again when its
 * keys are older than their max-age (Cache-Control, 5 min to 1 day;
 * 15 min without), and when a request asks: a token whose kid is unknown
 * asks at most once per provider per 30 s, and waits for the answer at
 * most 2 s. Being the only fetcher makes refreshes single-flight; a fetch
 * that fails, times out or brings garbage keeps the keys there were.
 *
 * The approval console's sign-in (oidc_login.c) fetches too, from the
 * request's thread: a provider's discovery (kept 5 minutes here) and its
 * token endpoint, each bounded to 5 s.
 *
 * A token verified is remembered by its BLAKE2b hash (512 slots): a
 * token seen again is answered from there, while its provider's keys
 * are the set that verified it and its lifetime lasts.
 *
 * Owns: the providers' key sets, the thread and its curl handles, the
 * cache of results. Must never: hold the lock while fetching, let a
 * request wait past the bound, keep (but its hash) or forward a caller's
 * token.
 */
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "util/curl.h"
#include "auth/oidc_int.h"
#include "util/log.h"
#include "util/sodium.h"

#define MIN_MAX_AGE_S 300
#define MAX_MAX_AGE_S 86400
#define CACHE_SLOTS 512
#define SKEW TG_TOKEN_SKEW

struct idp {
	const struct oidc_provider_config *cfg;
	struct jwks *keys;           /* NULL until the first fetch that brought keys */
	char *jwks_uri;              /* configured or discovered; NULL: discover */
	uint64_t tried_ms, fetched_ms, max_age_ms;
	int tried, want, busy;
	unsigned fetches;
	unsigned keys_gen;           /* keys installed so far: a cached result names its set */
	char error[200];             /* why the last fetch failed, "" when it did not */
	json_t *discovery;           /* the console's sign-in's last discovery, or NULL */
	uint64_t discovered_ms;
};

/* A token verified, by its BLAKE2b hash (never the token itself): what
 * it gave, while its provider's keys are the ones that verified it and
 * its lifetime lasts. */
struct cached {
	unsigned char hash[crypto_generichash_BYTES];
	size_t idp;
	unsigned keys_gen;
	int64_t from, to;            /* nbf or iat, exp */
	char principal[TG_MAX_PRINCIPAL_NAME + 1];
	char *scopes;                /* NULL: a free slot */
};

struct tg_idps {
	const struct tg_policy *policy;
	struct cached *cache;        /* CACHE_SLOTS, by the hash's first bytes */
	char *resource;
	struct idp v[OIDC_MAX_PROVIDERS];
	size_t n;
	struct oidc_bounds b;
	pthread_mutex_t lock;
	pthread_cond_t wake;         /* the thread: a request asks, or stop */
	pthread_cond_t done;         /* the requests: a fetch ended */
	unsigned gen;                /* fetches ended */
	int stop;                    /* the thread: end (read atomically by the transfer too) */
	int started;                 /* the thread runs: join it */
	pthread_t thread;
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- fetching ------------------------------------------------------------- */

struct body {
	char *p;
	size_t n;
	int too_big;
	long max_age;                /* Cache-Control max-age, -1: none */
	const int *stop;
};

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
	struct body *b = arg;
	size_t n = size * nmemb;
	char *p;

	if (b->n + n > OIDC_MAX_JWKS) {
		b->too_big = 1;
		return 0; /* curl stops the transfer */
	}
	p = realloc(b->p, b->n + n + 1);
	if (!p)
		return 0;
	memcpy(p + b->n, data, n);
	b->p = p;
	b->n += n;
	b->p[b->n] = '\0';
	return n;
}

static size_t on_header(char *data, size_t size, size_t nmemb, void *arg)
{
	struct body *b = arg;
	size_t n = size * nmemb;
	char line[256], *m, *end;
	long v;

	if (n < 14 || n >= sizeof(line) || strncasecmp(data, "cache-control:", 14) != 0)
		return n;
	memcpy(line, data, n);
	line[n] = '\0';
	m = strstr(line, "max-age=");
	if (m) {
		errno = 0;
		v = strtol(m + 8, &end, 10);
		if (!errno && end != m + 8 && v >= 0)
			b->max_age = v;
	}
	return n;
}

static int on_progress(void *arg, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	const struct body *body = arg;

	(void)a, (void)b, (void)c, (void)d;
	return __atomic_load_n(body->stop, __ATOMIC_RELAXED); /* non-zero: abort */
}

/* GET url (POST form when not NULL: application/x-www-form-urlencoded)
 * before deadline (monotonic ms), a transfer stopped early when *stop
 * becomes non-zero: 0 and OUT *out (out->p malloc'd, NUL-terminated,
 * out->n bytes); -1 and err. */
static int fetch_form(const char *url, const char *ca_file, uint64_t deadline, const int *stop,
		      const char *form, struct body *out, struct tg_error *err)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	uint64_t now = mono_ms();
	long status = 0, left;
	CURLcode rc;
	CURL *h;

	memset(out, 0, sizeof(*out));
	out->max_age = -1;
	out->stop = stop;
	if (!oidc_url_allowed(url))
		return tg_error_set(err, TG_ERR_INVALID, "%.200s: not https (nor http to loopback)",
				    url);
	if (now >= deadline)
		return tg_error_set(err, TG_ERR_SYSTEM, "%.200s: no time left", url);
	left = (long)(deadline - now);
	h = curl_easy_init();
	if (!h)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	curl_easy_setopt(h, CURLOPT_URL, url);
	/* the scheme the URL was checked for, and no redirect to another */
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, strncmp(url, "https:", 6) == 0 ? "https" : "http");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_PROXY, "");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, left);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, left);
	curl_easy_setopt(h, CURLOPT_USERAGENT, "toolgate/" TOOLGATE_VERSION);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, out);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, out);
	curl_easy_setopt(h, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(h, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(h, CURLOPT_XFERINFODATA, out);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	if (form)
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, form);
	/* the provider's CAs instead of the system's: libcurl keeps its
	 * built-in CA directory (/etc/ssl/certs) beside CAINFO unless told */
	if (ca_file) {
		curl_easy_setopt(h, CURLOPT_CAINFO, ca_file);
		curl_easy_setopt(h, CURLOPT_CAPATH, NULL);
	}
	rc = curl_easy_perform(h);
	curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(h);
	if (rc == CURLE_OK && status == 200 && out->p)
		return 0;
	/* an OAuth error's answer says why (RFC 6749 5.2) */
	if (rc == CURLE_OK && form && status == 400 && out->p) {
		json_t *e = json_loadb(out->p, out->n, 0, NULL);
		const char *code = json_string_value(json_object_get(e, "error"));
		const char *desc = json_string_value(json_object_get(e, "error_description"));

		tg_error_set(err, TG_ERR_INVALID, "%.200s: %.64s%s%.200s", url,
			     code ? code : "HTTP status 400", desc ? ": " : "", desc ? desc : "");
		json_decref(e);
		free(out->p);
		out->p = NULL;
		return -1;
	}
	if (out->too_big)
		tg_error_set(err, TG_ERR_LIMIT, "%.200s: larger than 256 KiB", url);
	else if (rc != CURLE_OK)
		tg_error_set(err, TG_ERR_SYSTEM,
			     "%.200s: %.200s", url, errbuf[0] ? errbuf : curl_easy_strerror(rc));
	else
		tg_error_set(err, TG_ERR_INVALID, "%.200s: HTTP status %ld", url, status);
	free(out->p);
	out->p = NULL;
	return -1;
}

static int fetch(const char *url, const char *ca_file, uint64_t deadline, const int *stop,
		 struct body *out, struct tg_error *err)
{
	return fetch_form(url, ca_file, deadline, stop, NULL, out, err);
}

int oidc_post_form(const char *url, const char *ca_file, unsigned bound_ms, const char *form,
		   json_t **doc, struct tg_error *err)
{
	static const int never;
	struct body b;

	*doc = NULL;
	if (fetch_form(url, ca_file, mono_ms() + bound_ms, &never, form, &b, err) < 0)
		return -1;
	*doc = json_loadb(b.p, b.n, JSON_REJECT_DUPLICATES, NULL);
	sodium_memzero(b.p, b.n); /* a token answer: the caller wipes *doc's copy */
	free(b.p);
	if (!json_is_object(*doc)) {
		json_decref(*doc);
		*doc = NULL;
		return tg_error_set(err, TG_ERR_INVALID, "%.200s: its answer is not a JSON object",
				    url);
	}
	return 0;
}

/* An endpoint of cfg's discovery document: an https URL (http for a
 * loopback issuer), malloc'd; NULL and err. An https provider's document
 * does not send a fetch to plain http, loopback's or another's. */
char *oidc_endpoint(const struct oidc_provider_config *cfg, json_t *doc, const char *name,
		    struct tg_error *err)
{
	const char *uri = json_string_value(json_object_get(doc, name));
	char *out = NULL;

	if (!uri || !oidc_url_allowed(uri) ||
	    (strncmp(cfg->issuer, "https:", 6) == 0 && strncmp(uri, "https:", 6) != 0))
		tg_error_set(err, TG_ERR_INVALID, "%.200s's discovery: want a %s, https (or http to "
			     "loopback, for a loopback issuer)", cfg->issuer, name);
	else if (!(out = strdup(uri)))
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return out;
}

int oidc_discover(const struct oidc_provider_config *cfg, uint64_t deadline, const int *stop,
		  json_t **doc, struct tg_error *err)
{
	size_t n = strlen(cfg->issuer);
	char url[1200];
	struct body b;

	*doc = NULL;
	/* OpenID Connect Discovery 1.0, 4: a trailing slash is dropped first */
	if (n && cfg->issuer[n - 1] == '/')
		n--;
	snprintf(url, sizeof(url), "%.*s/.well-known/openid-configuration", (int)n, cfg->issuer);
	if (fetch(url, cfg->ca_file, deadline, stop, &b, err) < 0)
		return -1;
	*doc = json_loadb(b.p, b.n, JSON_REJECT_DUPLICATES, NULL);
	free(b.p);
	if (!json_is_string(json_object_get(*doc, "issuer")) ||
	    strcmp(json_string_value(json_object_get(*doc, "issuer")), cfg->issuer) != 0) {
		json_decref(*doc);
		*doc = NULL;
		return tg_error_set(err, TG_ERR_INVALID, "%.200s: its issuer is not %.200s exactly",
				    url, cfg->issuer);
	}
	return 0;
}

/* The jwks_uri of cfg's discovery document, malloc'd; NULL and err. */
static char *discover(const struct oidc_provider_config *cfg, uint64_t deadline, const int *stop,
		      struct tg_error *err)
{
	json_t *doc;
	char *out;

	if (oidc_discover(cfg, deadline, stop, &doc, err) < 0)
		return NULL;
	out = oidc_endpoint(cfg, doc, "jwks_uri", err);
	json_decref(doc);
	return out;
}

/* Provider d's keys, fetched now (the lock not held): 0 and OUT *keys,
 * *max_age_ms; -1 and err. *uri is the jwks_uri, discovered when NULL
 * (and forgotten again when the JWKS fails, so the next fetch
 * rediscovers). */
static int fetch_keys(const struct oidc_provider_config *cfg, char **uri, uint64_t bound_ms,
		      const int *stop, struct jwks **keys, uint64_t *max_age_ms,
		      struct tg_error *err)
{
	uint64_t deadline = mono_ms() + bound_ms;
	struct body b;
	int rc;

	if (!*uri && !(*uri = discover(cfg, deadline, stop, err)))
		return -1;
	rc = fetch(*uri, cfg->ca_file, deadline, stop, &b, err);
	if (rc == 0) {
		rc = jwks_parse(b.p, b.n, keys, err);
		free(b.p);
	}
	if (rc < 0) {
		if (!cfg->jwks_uri) {
			free(*uri);
			*uri = NULL;
		}
		return -1;
	}
	*max_age_ms = (b.max_age < 0 ? 900 : b.max_age < MIN_MAX_AGE_S ? MIN_MAX_AGE_S
			: b.max_age > MAX_MAX_AGE_S ? MAX_MAX_AGE_S : (uint64_t)b.max_age) * 1000;
	return 0;
}

/* ---- the thread ------------------------------------------------------------- */

/* When provider d is next due for a fetch (monotonic ms). */
static uint64_t due_at(const struct tg_idps *s, const struct idp *d)
{
	uint64_t again = d->tried_ms + s->b.min_refresh_ms, stale;

	if (d->want || !d->tried)
		return 0;
	if (!d->keys)
		return again;
	stale = d->fetched_ms + (d->max_age_ms ? d->max_age_ms : s->b.max_age_ms);
	return stale > again ? stale : again;
}

/* Fetch provider d, the lock held on entry and exit (released meanwhile). */
static void refresh(struct tg_idps *s, struct idp *d)
{
	struct jwks *keys = NULL, *old;
	uint64_t max_age = 0;
	struct tg_error err;
	char *uri = d->jwks_uri;
	uint64_t bound = s->b.fetch_ms; /* read under the lock */
	int rc;

	d->busy = 1;
	d->want = 0;
	d->tried = 1;
	d->tried_ms = mono_ms();
	d->fetches++;
	d->jwks_uri = NULL; /* the thread's alone while it fetches */
	pthread_mutex_unlock(&s->lock);
	rc = fetch_keys(d->cfg, &uri, bound, &s->stop, &keys, &max_age, &err);
	pthread_mutex_lock(&s->lock);
	d->jwks_uri = uri;
	if (rc == 0) {
		if (!d->keys || d->error[0])
			tg_log(TG_LOG_INFO, "identity provider %s: %zu keys", d->cfg->issuer,
			       jwks_count(keys));
		old = d->keys;
		d->keys = keys;
		d->keys_gen++;
		jwks_put(old);
		d->fetched_ms = mono_ms();
		d->max_age_ms = max_age;
		d->error[0] = '\0';
	} else {
		/* the operator's to read; a caller is told only that it failed */
		tg_log(TG_LOG_WARNING, "identity provider %s: its keys could not be fetched (%s)%s",
		       d->cfg->issuer, err.msg, d->keys ? "; the keys it had are kept" : "");
		snprintf(d->error, sizeof(d->error), "%.190s", err.msg);
	}
	d->busy = 0;
	s->gen++;
	pthread_cond_broadcast(&s->done);
}

static void *refresher(void *arg)
{
	struct tg_idps *s = arg;
	struct timespec ts;
	uint64_t now, next, due;
	size_t i;

	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		now = mono_ms();
		next = now + 60000;
		for (i = 0; i < s->n; i++) {
			due = due_at(s, &s->v[i]);
			if (due <= now)
				break;
			if (due < next)
				next = due;
		}
		if (i < s->n) {
			refresh(s, &s->v[i]);
			continue;
		}
		ts.tv_sec = (time_t)(next / 1000);
		ts.tv_nsec = (long)(next % 1000) * 1000000;
		pthread_cond_timedwait(&s->wake, &s->lock, &ts);
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* ---- the set ---------------------------------------------------------------- */

int tg_idps_new(const struct tg_policy *policy, const char *resource, struct tg_idps **out,
		struct tg_error *err)
{
	const struct oidc_config *c = policy ? policy_oidc(policy) : NULL;
	pthread_condattr_t ca;
	struct tg_idps *s;
	size_t i;
	int e;

	tg_error_clear(err);
	*out = NULL;
	if (!c || !c->n)
		return 0;
	if (tg_curl_load("identity providers", err) < 0)
		return -1;
	if (tg_sodium_load("identity providers", err) < 0)
		return -1;
	s = calloc(1, sizeof(*s));
	if (s)
		s->cache = calloc(CACHE_SLOTS, sizeof(*s->cache));
	if (!s || !s->cache || (resource && !(s->resource = strdup(resource)))) {
		if (s)
			free(s->cache);
		free(s);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	s->policy = policy;
	s->n = c->n;
	s->b = (struct oidc_bounds){ 2000, 2000, 30000, 900000 };
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&s->wake, &ca);
	pthread_cond_init(&s->done, &ca);
	pthread_condattr_destroy(&ca);
	for (i = 0; i < s->n; i++) {
		s->v[i].cfg = &c->v[i];
		if (c->v[i].jwks_uri && !(s->v[i].jwks_uri = strdup(c->v[i].jwks_uri))) {
			tg_idps_free(s);
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		}
	}
	e = pthread_create(&s->thread, NULL, refresher, s);
	if (e) {
		tg_idps_free(s);
		return tg_error_sys(err, e, "identity providers: the thread that fetches keys");
	}
	s->started = 1;
	*out = s;
	return 0;
}

void tg_idps_free(struct tg_idps *s)
{
	size_t i;

	if (!s)
		return;
	if (s->started) {
		pthread_mutex_lock(&s->lock);
		__atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
		pthread_cond_signal(&s->wake);
		pthread_mutex_unlock(&s->lock);
		pthread_join(s->thread, NULL);
	}
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->wake);
	pthread_cond_destroy(&s->done);
	for (i = 0; i < s->n; i++) {
		jwks_put(s->v[i].keys);
		free(s->v[i].jwks_uri);
		json_decref(s->v[i].discovery);
	}
	for (i = 0; i < CACHE_SLOTS; i++)
		free(s->cache[i].scopes);
	free(s->cache);
	free(s->resource);
	free(s);
}

void oidc_bounds_set(struct tg_idps *s, const struct oidc_bounds *b)
{
	pthread_mutex_lock(&s->lock);
	s->b = *b;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
}

void oidc_keys_install(struct tg_idps *s, size_t i, struct jwks *set)
{
	struct jwks *old = NULL;

	pthread_mutex_lock(&s->lock);
	if (i < s->n) {
		old = s->v[i].keys;
		s->v[i].keys = set;
		s->v[i].keys_gen++;
		s->v[i].fetched_ms = mono_ms();
		set = NULL;
	}
	jwks_put(old);
	jwks_put(set);
	pthread_mutex_unlock(&s->lock);
}

unsigned oidc_fetches(struct tg_idps *s, size_t i)
{
	unsigned n;

	pthread_mutex_lock(&s->lock);
	n = i < s->n ? s->v[i].fetches : 0;
	pthread_mutex_unlock(&s->lock);
	return n;
}

static struct idp *provider_of(const struct tg_idps *s, const char *iss)
{
	size_t i;

	for (i = 0; iss && s && i < s->n; i++)
		if (strcmp(s->v[i].cfg->issuer, iss) == 0)
			return (struct idp *)&s->v[i];
	return NULL;
}

int tg_idps_knows(const struct tg_idps *s, const char *iss)
{
	return provider_of(s, iss) != NULL;
}

const char *tg_idps_issuer(const struct tg_idps *s, size_t i)
{
	return s && i < s->n ? s->v[i].cfg->issuer : NULL;
}

json_t *oidc_discovery_cached(struct tg_idps *s, size_t i, uint64_t max_age_ms)
{
	json_t *doc = NULL;

	pthread_mutex_lock(&s->lock);
	if (i < s->n && s->v[i].discovery && mono_ms() - s->v[i].discovered_ms < max_age_ms)
		doc = json_incref(s->v[i].discovery);
	pthread_mutex_unlock(&s->lock);
	return doc;
}

void oidc_discovery_keep(struct tg_idps *s, size_t i, json_t *doc)
{
	json_t *old = NULL;

	pthread_mutex_lock(&s->lock);
	if (i < s->n) {
		old = s->v[i].discovery;
		s->v[i].discovery = json_incref(doc);
		s->v[i].discovered_ms = mono_ms();
	}
	pthread_mutex_unlock(&s->lock);
	json_decref(old);
}

const struct oidc_provider_config *oidc_provider_of(const struct tg_idps *s, size_t i,
						    const char **resource)
{
	if (resource)
		*resource = s ? s->resource : NULL;
	return s && i < s->n ? s->v[i].cfg : NULL;
}

/* A fetch of d's keys is coming (a request's refresh, at most one per
 * min_refresh_ms), the lock held: 1, or 0 when none will. */
static int ask_refresh(struct tg_idps *s, struct idp *d)
{
	if (d->busy || d->want)
		return 1;
	if (d->tried && mono_ms() - d->tried_ms < s->b.min_refresh_ms)
		return 0;
	d->want = 1;
	pthread_cond_signal(&s->wake);
	return 1;
}

/* Wait, the lock held, until no fetch of d is wanted or under way, or
 * wait_ms have passed. */
static void wait_refresh(struct tg_idps *s, struct idp *d)
{
	uint64_t deadline = mono_ms() + s->b.wait_ms;
	struct timespec ts = { (time_t)(deadline / 1000), (long)(deadline % 1000) * 1000000 };

	while ((d->want || d->busy) && mono_ms() < deadline)
		if (pthread_cond_timedwait(&s->done, &s->lock, &ts) == ETIMEDOUT)
			break;
}

/* The key set holding the key for kid and alg, referenced (put it under
 * the lock) and OUT *gen its generation; NULL and err. An unknown kid asks for a refresh and waits
 * for it, within the bounds. */
static struct jwks *keys_for(struct tg_idps *s, struct idp *d, const char *kid, int alg,
			     const struct jwk **key, unsigned *gen, struct tg_error *err)
{
	struct jwks *set = NULL;
	int r = 1, round;

	pthread_mutex_lock(&s->lock);
	for (round = 0; round < 2; round++) {
		r = d->keys ? jwks_find(d->keys, kid, alg, key, err) : 1;
		if (r == 0) {
			set = d->keys;
			*gen = d->keys_gen;
			jwks_get(set);
		}
		if (r <= 0 || round == 1 || !ask_refresh(s, d))
			break;
		wait_refresh(s, d);
	}
	if (r > 0 && !d->keys)
		tg_error_set(err, TG_ERR_INVALID, "token: no keys yet from %.200s (%s)",
			     d->cfg->issuer, d->error[0] ? "they could not be fetched: the gateway's "
			     "log says why" : "being fetched");
	else if (r > 0)
		tg_error_set(err, TG_ERR_INVALID, "token: unknown kid %.64s (not among the keys of "
			     "%.200s, refreshed at most every %llu s)", kid ? kid : "(none)",
			     d->cfg->issuer, (unsigned long long)(s->b.min_refresh_ms / 1000));
	pthread_mutex_unlock(&s->lock);
	return set;
}

/* The header's alg against d's allowlist: OIDC_*, or 0 and err. */
static int alg_allowed(const struct idp *d, const char *name, struct tg_error *err)
{
	int alg = oidc_alg_of(name);

	if (strcmp(name, "none") == 0)
		return tg_error_set(err, TG_ERR_INVALID, "token: header: alg none (unsigned) is "
				    "never accepted"), 0;
	if (strncmp(name, "HS", 2) == 0)
		return tg_error_set(err, TG_ERR_INVALID, "token: header: alg %.16s is never "
				    "accepted (an HMAC keyed with a public key is a forgery)",
				    name), 0;
	if (!alg || !(d->cfg->algs & (unsigned)alg))
		return tg_error_set(err, TG_ERR_INVALID, "token: header: alg %.16s is not one "
				    "%.200s may use", name, d->cfg->issuer), 0;
	return alg;
}

/* The cached result of the token hashed h, valid at now: 0, OUT
 * principal and *scopes (malloc'd); 1 when there is none; -1 out of
 * memory. */
static int cache_get(struct tg_idps *s, const unsigned char *h, int64_t now, char *principal,
		     size_t plen, char **scopes)
{
	struct cached *c = &s->cache[(h[0] | (size_t)h[1] << 8) % CACHE_SLOTS];
	int rc = 1;

	pthread_mutex_lock(&s->lock);
	if (c->scopes && sodium_memcmp(c->hash, h, sizeof(c->hash)) == 0 &&
	    c->keys_gen == s->v[c->idp].keys_gen && c->from <= now + SKEW && c->to > now - SKEW) {
		snprintf(principal, plen, "%s", c->principal);
		*scopes = strdup(c->scopes);
		rc = *scopes ? 0 : -1;
	}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* A verified result kept for the token hashed h (out of memory: not kept). */
static void cache_put(struct tg_idps *s, const unsigned char *h, size_t idp, unsigned gen,
		      const int64_t window[2], const char *principal, const char *scopes)
{
	struct cached *c = &s->cache[(h[0] | (size_t)h[1] << 8) % CACHE_SLOTS];
	char *copy = strdup(scopes);

	pthread_mutex_lock(&s->lock);
	free(c->scopes);
	memcpy(c->hash, h, sizeof(c->hash));
	c->idp = idp;
	c->keys_gen = gen;
	c->from = window[0];
	c->to = window[1];
	snprintf(c->principal, sizeof(c->principal), "%s", principal);
	c->scopes = copy;
	pthread_mutex_unlock(&s->lock);
}

int tg_idps_verify(struct tg_idps *s, const char *token, size_t len, int64_t now,
		   char *principal, size_t plen, char **scopes, struct tg_error *err)
{
	unsigned char h[crypto_generichash_BYTES];
	const struct jwk *key = NULL;
	int64_t window[2];
	struct jwks *set;
	struct jose j;
	struct idp *d;
	unsigned gen = 0;
	int alg, ok, rc = -1;

	tg_error_clear(err);
	*scopes = NULL;
	if (plen)
		principal[0] = '\0';
	/* a token seen before is answered by its hash, while the keys that
	 * verified it and its lifetime last */
	if (len <= TG_MAX_TOKEN) {
		crypto_generichash(h, sizeof(h), (const unsigned char *)token, len, NULL, 0);
		rc = cache_get(s, h, now, principal, plen, scopes);
		if (rc <= 0)
			return rc == 0 ? 0 : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		rc = -1;
	}
	if (jose_parse(token, len, &j, err) < 0)
		return -1;
	/* the issuer only picks the keys; the claims are checked once the
	 * signature has verified */
	d = provider_of(s, json_string_value(json_object_get(j.claims, "iss")));
	if (!d) {
		tg_error_set(err, TG_ERR_INVALID, "token: issued by no issuer this gateway trusts");
		goto out;
	}
	alg = alg_allowed(d, j.alg, err);
	if (!alg)
		goto out;
	set = keys_for(s, d, j.kid, alg, &key, &gen, err);
	if (!set)
		goto out;
	ok = jwk_verify(key, alg, j.signed_part, j.signed_len, j.sig, j.sig_len);
	pthread_mutex_lock(&s->lock);
	jwks_put(set);
	pthread_mutex_unlock(&s->lock);
	if (!ok) {
		tg_error_set(err, TG_ERR_INVALID, "token: the signature does not verify with the "
			     "key of %.200s", d->cfg->issuer);
		goto out;
	}
	rc = oidc_claims_check(d->cfg, s->policy, &j, d->cfg->audience ? d->cfg->audience
									: s->resource,
			       now, principal, plen, scopes, window, err);
	if (rc == 0 && len <= TG_MAX_TOKEN) /* hashed above (jose_parse refuses more) */
		cache_put(s, h, (size_t)(d - s->v), gen, window, principal, *scopes);
out:
	jose_release(&j);
	return rc;
}
