/*
 * Traces: spans queued as they end, and exported as OTLP JSON in batches
 * by a thread of the tracer's own over HTTP (libcurl) to a collector
 * (include/toolgate/trace.h, docs/TRACING.md).
 *
 * A span is flat while the call's thread builds it: its ids, name, kind
 * and times, its attributes with their strings in one arena (one
 * allocation, two past 1 KiB of strings). Ending it takes the queue's lock
 * for a moment, no more: its JSON is made by the exporter, off the call's
 * path. The queue is bounded; a span that finds it full is dropped and
 * counted, and a batch the collector refuses (or does not answer within
 * the timeout) is dropped whole, counted too: a collector that is down
 * costs spans, never a call's time.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/curl.h"
#include "toolgate/redact.h"
#include "toolgate/trace.h"
#include "toolgate/version.h"
#include "util/sodium.h"
#include "util/utf8.h"

#define NAME_MAX_BYTES 128
#define VALUE_MAX_BYTES 1024
#define ATTRS_MAX 32
#define HEADERS_MAX 2048

struct tg_tracer {
	char *endpoint;
	struct curl_slist *headers;
	json_t *resource;            /* the resource and scope, for every export */
	json_t *scope;
	unsigned batch, interval_ms, queue_max, timeout_ms;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	struct tg_span *head, **tail; /* spans ended, oldest first */
	size_t queued;
	int stopping;
	struct tg_tracer_stats st;
};

/* A span as the call's thread builds it: flat, its strings in one arena,
 * so that beginning and ending one costs an allocation or two; its JSON
 * is written by the exporter, off the call's path. */
struct span_attr {
	size_t key, val;             /* offsets in the arena */
	char type;                   /* 's', 'i', 'b' */
	int64_t i;
};

struct tg_span {
	struct tg_tracer *t;
	struct tg_span *next;        /* in the queue */
	struct tg_trace_ctx ctx;     /* its own: trace id, span id, flags, state */
	uint8_t parent[8];
	int has_parent, remote_parent, kind, error;
	uint64_t start, end;         /* unix nanoseconds */
	size_t name, status;         /* arena offsets; status 0: none */
	struct span_attr attrs[ATTRS_MAX];
	int nattrs;
	char *arena;                 /* strings, NUL-terminated; [0] is "" */
	size_t used, cap;
	char first[1024];            /* the arena while it fits */
};

/* ---- W3C Trace Context ---------------------------------------------------- */

static int unhex(const char *s, uint8_t *out, size_t n)
{
	size_t i;

	for (i = 0; i < 2 * n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return -1;
	for (i = 0; i < n; i++) {
		int hi = s[2 * i] <= '9' ? s[2 * i] - '0' : s[2 * i] - 'a' + 10;
		int lo = s[2 * i + 1] <= '9' ? s[2 * i + 1] - '0' : s[2 * i + 1] - 'a' + 10;

		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

/* Ids: random, not secret (they travel in headers), so a generator of
 * each thread's own (xoshiro256**) seeded once from the system's, rather
 * than a getrandom call for each id. */
static __thread uint64_t rng[4];
static __thread int rng_seeded;

static uint64_t rotl(uint64_t x, int k)
{
	return x << k | x >> (64 - k);
}

static void random_id(uint8_t *p, size_t n)
{
	while (!rng_seeded) {
		randombytes_buf(rng, sizeof(rng));
		rng_seeded = (rng[0] | rng[1] | rng[2] | rng[3]) != 0;
	}
	while (n) {
		uint64_t v = rotl(rng[1] * 5, 7) * 9, t = rng[1] << 17;
		size_t k = n < 8 ? n : 8;

		rng[2] ^= rng[0];
		rng[3] ^= rng[1];
		rng[1] ^= rng[2];
		rng[0] ^= rng[3];
		rng[2] ^= t;
		rng[3] = rotl(rng[3], 45);
		memcpy(p, &v, k);
		p += k;
		n -= k;
	}
}

static int all_zero(const uint8_t *p, size_t n)
{
	while (n--)
		if (*p++)
			return 0;
	return 1;
}

int tg_trace_parse(const char *tp, const char *ts, struct tg_trace_ctx *out,
		   struct tg_error *err)
{
	uint8_t version;
	size_t n, i;

	memset(out, 0, sizeof(*out));
	if (!tp)
		return tg_error_set(err, TG_ERR_INVALID, "traceparent: none");
	n = strlen(tp);
	/* version-traceid-parentid-flags: 2, 32, 16 and 2 hex digits */
	if (n < 55 || tp[2] != '-' || tp[35] != '-' || tp[52] != '-' || unhex(tp, &version, 1) < 0)
		return tg_error_set(err, TG_ERR_INVALID, "traceparent: not "
				    "VERSION-TRACEID-PARENTID-FLAGS");
	/* ff is forbidden; 00 is exactly 55 bytes; a later version may add
	 * fields after a dash, and its first four are read as 00's */
	if (version == 0xff || (version == 0 && n != 55) || (version > 0 && n > 55 && tp[55] != '-'))
		return tg_error_set(err, TG_ERR_INVALID, "traceparent: version %02x with %zu bytes",
				    version, n);
	if (unhex(tp + 3, out->trace_id, 16) < 0 || unhex(tp + 36, out->span_id, 8) < 0 ||
	    unhex(tp + 53, &out->flags, 1) < 0)
		return tg_error_set(err, TG_ERR_INVALID, "traceparent: not lowercase hex");
	if (all_zero(out->trace_id, 16) || all_zero(out->span_id, 8)) {
		memset(out, 0, sizeof(*out));
		return tg_error_set(err, TG_ERR_INVALID, "traceparent: an all-zero id");
	}
	out->valid = 1;
	/* tracestate travels on as it came, when it may: printable ASCII
	 * within its bound (else it is dropped, the parent kept) */
	if (ts && (n = strlen(ts)) <= TG_TRACESTATE_MAX) {
		for (i = 0; i < n && ts[i] >= 0x20 && ts[i] < 0x7f; i++) {
		}
		if (i == n)
			memcpy(out->state, ts, n + 1);
	}
	return 0;
}

static void hex(const uint8_t *p, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * n] = '\0';
}

void tg_trace_format(const struct tg_trace_ctx *ctx, char out[56])
{
	char tid[33], sid[17], fl[3];

	hex(ctx->trace_id, 16, tid);
	hex(ctx->span_id, 8, sid);
	hex(&ctx->flags, 1, fl);
	snprintf(out, 56, "00-%s-%s-%s", tid, sid, fl);
}

/* ---- spans ---------------------------------------------------------------- */

static uint64_t nanos_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* s, at most max bytes of it (cut where a UTF-8 character begins; one
 * that is not UTF-8 replaced), into the arena: its offset, or 0 (the
 * empty string) when memory runs out. */
static size_t keep(struct tg_span *sp, const char *s, size_t max)
{
	size_t n = utf8_cut(s, strlen(s), max), at;

	if (!utf8_valid(s, n)) {
		s = "(not UTF-8)";
		n = strlen(s);
	}
	if (sp->used + n + 1 > sp->cap) {
		size_t cap = sp->cap * 2 > sp->used + n + 1 ? sp->cap * 2 : sp->used + n + 1;
		char *a = sp->arena == sp->first ? malloc(cap) : realloc(sp->arena, cap);

		if (!a)
			return 0;
		if (sp->arena == sp->first)
			memcpy(a, sp->first, sp->used);
		sp->arena = a;
		sp->cap = cap;
	}
	at = sp->used;
	memcpy(sp->arena + at, s, n);
	sp->arena[at + n] = '\0';
	sp->used += n + 1;
	return at;
}

static void span_free(struct tg_span *s)
{
	if (s->arena != s->first)
		free(s->arena);
	free(s);
}

struct tg_span *tg_span_start(struct tg_tracer *t, const char *name, enum tg_span_kind kind,
			      const struct tg_span *parent, const struct tg_trace_ctx *remote)
{
	const struct tg_trace_ctx *up = parent ? &parent->ctx : remote && remote->valid ? remote
											  : NULL;
	struct tg_span *s;

	if (!t)
		return NULL;
	s = malloc(sizeof(*s));
	if (!s)
		return NULL;
	memset(s, 0, offsetof(struct tg_span, attrs));
	s->nattrs = 0;
	s->arena = s->first;
	s->cap = sizeof(s->first);
	s->first[0] = '\0';
	s->used = 1;
	s->t = t;
	s->start = nanos_now();
	s->kind = (int)kind;
	if (up) {
		memcpy(s->ctx.trace_id, up->trace_id, 16);
		s->ctx.flags = up->flags;
		memcpy(s->ctx.state, up->state, sizeof(s->ctx.state));
		memcpy(s->parent, up->span_id, 8);
		s->has_parent = 1;
		/* the caller's span is in another process: a remote parent */
		s->remote_parent = !parent && !up->local;
	} else {
		do
			random_id(s->ctx.trace_id, 16);
		while (all_zero(s->ctx.trace_id, 16));
		s->ctx.flags = 1;
	}
	do
		random_id(s->ctx.span_id, 8);
	while (all_zero(s->ctx.span_id, 8));
	s->ctx.valid = 1;
	s->ctx.local = 0;
	s->name = keep(s, name ? name : "", NAME_MAX_BYTES);
	return s;
}

void tg_span_set_name(struct tg_span *s, const char *name)
{
	if (s && name)
		s->name = keep(s, name, NAME_MAX_BYTES);
}

static struct span_attr *attr_new(struct tg_span *s, const char *key, char type)
{
	struct span_attr *a;

	if (!s || s->nattrs >= ATTRS_MAX)
		return NULL;
	a = &s->attrs[s->nattrs++];
	a->key = keep(s, key, NAME_MAX_BYTES);
	a->type = type;
	a->val = 0;
	a->i = 0;
	return a;
}

void tg_span_set_str(struct tg_span *s, const char *key, const char *value)
{
	struct span_attr *a = value ? attr_new(s, key, 's') : NULL;

	if (a)
		a->val = keep(s, value, VALUE_MAX_BYTES);
}

void tg_span_set_int(struct tg_span *s, const char *key, int64_t value)
{
	struct span_attr *a = attr_new(s, key, 'i');

	if (a)
		a->i = value;
}

void tg_span_set_bool(struct tg_span *s, const char *key, int value)
{
	struct span_attr *a = attr_new(s, key, 'b');

	if (a)
		a->i = value != 0;
}

void tg_span_error(struct tg_span *s, const char *type, const char *message)
{
	if (!s || s->error)
		return;
	s->error = 1;
	tg_span_set_str(s, "error.type", type ? type : "_OTHER");
	if (message) {
		/* an error's text may quote a tool's output: no secret leaves in it */
		struct tg_redact_out r;
		struct tg_error err;

		if (tg_redact(message, strlen(message), &r, &err) == 0)
			s->status = keep(s, r.total ? r.text : message, VALUE_MAX_BYTES);
		tg_redact_out_release(&r);
	}
}

void tg_span_context(const struct tg_span *s, struct tg_trace_ctx *out)
{
	if (s) {
		*out = s->ctx;
		out->local = 1;
	} else {
		memset(out, 0, sizeof(*out));
	}
}

void tg_span_ids(const struct tg_span *s, char trace_hex[33], char span_hex[17])
{
	if (!s) {
		trace_hex[0] = span_hex[0] = '\0';
		return;
	}
	hex(s->ctx.trace_id, 16, trace_hex);
	hex(s->ctx.span_id, 8, span_hex);
}

void tg_span_end(struct tg_span *s)
{
	struct tg_tracer *t;
	int queued = 0;

	if (!s)
		return;
	t = s->t;
	s->end = nanos_now();
	s->next = NULL;
	pthread_mutex_lock(&t->lock);
	t->st.ended++;
	if (t->queued < t->queue_max && !t->stopping) {
		*t->tail = s;
		t->tail = &s->next;
		queued = 1;
		if (++t->queued >= t->batch)
			pthread_cond_signal(&t->wake);
	} else {
		t->st.dropped++;
	}
	pthread_mutex_unlock(&t->lock);
	if (!queued)
		span_free(s);
}

/* The span as OTLP JSON has it (the exporter's work); NULL out of memory. */
static json_t *span_json(const struct tg_span *s)
{
	char tid[33], sid[17], pid[17], n[32];
	json_t *o, *attrs = json_array();
	int i;

	hex(s->ctx.trace_id, 16, tid);
	hex(s->ctx.span_id, 8, sid);
	for (i = 0; attrs && i < s->nattrs; i++) {
		const struct span_attr *a = &s->attrs[i];
		json_t *v;

		if (a->type == 's') {
			v = json_pack("{s:s}", "stringValue", s->arena + a->val);
		} else if (a->type == 'i') {
			snprintf(n, sizeof(n), "%lld", (long long)a->i); /* int64: a string */
			v = json_pack("{s:s}", "intValue", n);
		} else {
			v = json_pack("{s:b}", "boolValue", (int)a->i);
		}
		json_array_append_new(attrs, json_pack("{s:s,s:o}", "key", s->arena + a->key,
						       "value", v));
	}
	o = json_pack("{s:s,s:s,s:s,s:i,s:o}", "traceId", tid, "spanId", sid, "name",
		      s->arena + s->name, "kind", s->kind, "attributes", attrs);
	if (!o)
		return NULL;
	snprintf(n, sizeof(n), "%llu", (unsigned long long)s->start);
	json_object_set_new(o, "startTimeUnixNano", json_string(n));
	snprintf(n, sizeof(n), "%llu", (unsigned long long)s->end);
	json_object_set_new(o, "endTimeUnixNano", json_string(n));
	if (s->has_parent) {
		hex(s->parent, 8, pid);
		json_object_set_new(o, "parentSpanId", json_string(pid));
	}
	if (s->ctx.state[0])
		json_object_set_new(o, "traceState", json_string(s->ctx.state));
	/* trace flags, and whether the parent is remote: OTLP's HAS_IS_REMOTE
	 * and IS_REMOTE bits */
	json_object_set_new(o, "flags", json_integer(0x100 | (s->remote_parent ? 0x200 : 0) |
						     s->ctx.flags));
	if (s->error) {
		json_t *status = json_pack("{s:i}", "code", 2); /* STATUS_CODE_ERROR */

		if (status && s->status)
			json_object_set_new(status, "message", json_string(s->arena + s->status));
		json_object_set_new(o, "status", status);
	}
	return o;
}

/* ---- export --------------------------------------------------------------- */

static size_t discard(char *p, size_t size, size_t n, void *ctx)
{
	(void)p;
	(void)ctx;
	return size * n;
}

/* POST spans (n of them, taken) as one ExportTraceServiceRequest: 0 when
 * the collector took them. */
static int export(struct tg_tracer *t, CURL *c, struct tg_span *spans, char *why, size_t wlen)
{
	json_t *list = json_array(), *req;
	char *body = NULL, cerr[CURL_ERROR_SIZE] = "";
	long code = 0;
	CURLcode rc;

	while (spans) {
		struct tg_span *next = spans->next;

		json_array_append_new(list, span_json(spans));
		span_free(spans);
		spans = next;
	}
	req = json_pack("{s:[{s:O,s:[{s:O,s:o}]}]}", "resourceSpans", "resource", t->resource,
			"scopeSpans", "scope", t->scope, "spans", list);
	body = req ? json_dumps(req, JSON_COMPACT) : NULL;
	json_decref(req);
	if (!body) {
		snprintf(why, wlen, "out of memory");
		return -1;
	}
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, cerr);
	rc = curl_easy_perform(c);
	free(body);
	if (rc != CURLE_OK) {
		snprintf(why, wlen, "%.100s: %.140s", t->endpoint, cerr[0] ? cerr : curl_easy_strerror(rc));
		return -1;
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (code < 200 || code > 299) {
		snprintf(why, wlen, "%.200s: HTTP %ld", t->endpoint, code);
		return -1;
	}
	return 0;
}

static CURL *export_handle(struct tg_tracer *t)
{
	CURL *c = curl_easy_init();

	if (!c)
		return NULL;
	curl_easy_setopt(c, CURLOPT_URL, t->endpoint);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, t->headers);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)t->timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, (long)t->timeout_ms);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_PROXY, ""); /* the endpoint named, never a proxy's */
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "toolgate/" TOOLGATE_VERSION);
	return c;
}

static void free_list(struct tg_span *s)
{
	while (s) {
		struct tg_span *next = s->next;

		span_free(s);
		s = next;
	}
}

static void *exporter(void *arg)
{
	struct tg_tracer *t = arg;
	CURL *c = export_handle(t);
	char why[256];

	pthread_mutex_lock(&t->lock);
	for (;;) {
		struct timespec until;
		struct tg_span *batch, *last;
		size_t n, i;
		int rc;

		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += t->interval_ms / 1000;
		until.tv_nsec += (long)(t->interval_ms % 1000) * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		while (!t->stopping && t->queued < t->batch &&
		       pthread_cond_timedwait(&t->wake, &t->lock, &until) != ETIMEDOUT) {
		}
		if (!t->queued) {
			if (t->stopping)
				break;
			continue;
		}
		/* the oldest n, taken off the queue */
		n = t->queued < t->batch ? t->queued : t->batch;
		batch = t->head;
		for (i = 1, last = batch; i < n; i++)
			last = last->next;
		t->head = last->next;
		last->next = NULL;
		if (!t->head)
			t->tail = &t->head;
		t->queued -= n;
		t->st.exports++;
		pthread_mutex_unlock(&t->lock);
		if (c) {
			rc = export(t, c, batch, why, sizeof(why));
		} else {
			rc = -1;
			snprintf(why, sizeof(why), "out of memory");
			free_list(batch);
		}
		pthread_mutex_lock(&t->lock);
		if (rc == 0) {
			t->st.exported += n;
		} else {
			t->st.export_failures++;
			t->st.dropped += n;
			snprintf(t->st.last_error, sizeof(t->st.last_error), "%s", why);
			if (t->stopping) {
				/* stopping, and the collector did not take a batch:
				 * the rest go too, rather than hold the exit up for a
				 * timeout each */
				free_list(t->head);
				t->head = NULL;
				t->tail = &t->head;
				t->st.dropped += t->queued;
				t->queued = 0;
			}
		}
	}
	pthread_mutex_unlock(&t->lock);
	if (c)
		curl_easy_cleanup(c);
	return NULL;
}

/* ---- the tracer ----------------------------------------------------------- */

static int hexval(int ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10
						 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* "k=v,k2=v2" (values percent-decoded) as curl's header list; -1 and err
 * for a key that is not a token or a value with a control byte. */
static int parse_headers(const char *in, struct curl_slist **out, struct tg_error *err)
{
	const char *p = in;

	while (p && *p) {
		const char *end = strchr(p, ','), *eq;
		char line[HEADERS_MAX + 4];
		size_t klen, at, i;

		if (!end)
			end = p + strlen(p);
		eq = memchr(p, '=', (size_t)(end - p));
		while (p < end && *p == ' ')
			p++;
		if (!eq || eq == p)
			/* not echoed: it may hold a token */
			return tg_error_set(err, TG_ERR_INVALID, "OTLP headers: an entry that is "
					    "not key=value");
		klen = (size_t)(eq - p);
		while (klen && p[klen - 1] == ' ')
			klen--;
		if (klen + 2 >= HEADERS_MAX)
			return tg_error_set(err, TG_ERR_LIMIT, "OTLP headers: a key too long");
		for (i = 0; i < klen; i++)
			if (!isalnum((unsigned char)p[i]) && !strchr("!#$%&'*+-.^_`|~", p[i]))
				return tg_error_set(err, TG_ERR_INVALID, "OTLP headers: the key "
						    "\"%.*s\" is not an HTTP token", (int)klen, p);
		memcpy(line, p, klen);
		memcpy(line + klen, ": ", 2);
		at = klen + 2;
		for (p = eq + 1; p < end; p++) {
			int ch = (unsigned char)*p;

			if (ch == '%' && end - p >= 3 && hexval(p[1]) >= 0 && hexval(p[2]) >= 0) {
				ch = hexval(p[1]) << 4 | hexval(p[2]);
				p += 2;
			}
			if (ch < 0x20 || ch == 0x7f)
				return tg_error_set(err, TG_ERR_INVALID, "OTLP headers: a control "
						    "character in the value of %.*s", (int)klen, line);
			if (at >= HEADERS_MAX)
				return tg_error_set(err, TG_ERR_LIMIT, "OTLP headers: a value over "
						    "%d bytes", HEADERS_MAX);
			line[at++] = (char)ch;
		}
		line[at] = '\0';
		{
			struct curl_slist *l = curl_slist_append(*out, line);

			if (!l)
				return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			*out = l;
		}
		p = *end ? end + 1 : end;
	}
	return 0;
}

static json_t *kv(const char *key, const char *value)
{
	return json_pack("{s:s,s:{s:s}}", "key", key, "value", "stringValue", value);
}

/* What a tracer holds, freed (its thread stopped, or never started). */
static void tracer_release(struct tg_tracer *t)
{
	free_list(t->head);
	curl_slist_free_all(t->headers);
	json_decref(t->resource);
	json_decref(t->scope);
	pthread_mutex_destroy(&t->lock);
	pthread_cond_destroy(&t->wake);
	free(t->endpoint);
	free(t);
}

int tg_tracer_new(const struct tg_tracer_options *o, struct tg_tracer **out,
		  struct tg_error *err)
{
	struct tg_tracer *t;
	sigset_t all, old;
	int rc;

	*out = NULL;
	if (!o || !o->endpoint ||
	    (strncmp(o->endpoint, "http://", 7) != 0 && strncmp(o->endpoint, "https://", 8) != 0) ||
	    strlen(o->endpoint) > 2048 || strpbrk(o->endpoint, " \r\n\t"))
		return tg_error_set(err, TG_ERR_INVALID, "OTLP endpoint: an http:// or https:// URL "
				    "(as http://127.0.0.1:4318/v1/traces)");
	if (tg_sodium_load("OTLP traces", err) < 0)
		return -1;
	if (tg_curl_load("OTLP traces", err) < 0)
		return -1;
	t = calloc(1, sizeof(*t));
	if (!t)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	t->endpoint = strdup(o->endpoint);
	t->batch = o->batch ? o->batch : 512;
	t->interval_ms = o->interval_ms ? o->interval_ms : 1000;
	t->queue_max = o->queue_max ? o->queue_max : 4096;
	t->timeout_ms = o->timeout_ms ? o->timeout_ms : 5000;
	if (t->batch > t->queue_max)
		t->batch = t->queue_max;
	t->tail = &t->head;
	t->headers = curl_slist_append(NULL, "Content-Type: application/json");
	t->resource = json_pack("{s:[o,o,o,o]}", "attributes",
				kv("service.name", o->service_name ? o->service_name : "toolgate"),
				kv("service.version", TOOLGATE_VERSION),
				kv("telemetry.sdk.name", "toolgate"),
				kv("telemetry.sdk.language", "c"));
	t->scope = json_pack("{s:s,s:s}", "name", "toolgate", "version", TOOLGATE_VERSION);
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->wake, NULL);
	if (!t->endpoint || !t->headers || !t->resource || !t->scope) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto fail;
	}
	if (o->headers && parse_headers(o->headers, &t->headers, err) < 0)
		goto fail;
	/* the exporter takes no signal meant for the process */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&t->thread, NULL, exporter, t);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		tg_error_sys(err, rc, "tracer: its exporter thread");
		goto fail;
	}
	*out = t;
	return 0;
fail:
	tracer_release(t);
	return -1;
}

void tg_tracer_free(struct tg_tracer *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	t->stopping = 1;
	pthread_cond_signal(&t->wake);
	pthread_mutex_unlock(&t->lock);
	pthread_join(t->thread, NULL);
	tracer_release(t);
}

void tg_tracer_get_stats(struct tg_tracer *t, struct tg_tracer_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!t)
		return;
	pthread_mutex_lock(&t->lock);
	*st = t->st;
	pthread_mutex_unlock(&t->lock);
}
