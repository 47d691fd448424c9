/*
 * The webhooks (docs/NOTIFY.md): a thread of the gate's for each webhook
 * of the policy ("notify", src/auth/notify_config.c) that reads the
 * tickets' events after its cursor (kept in the store, so a restart
 * resumes there), passes over those of other tools and events, and POSTs
 * each of the others to its url as a signed JSON body, through an egress
 * proxy whose one rule is the url's host and port
 * (tg_egress_local_start). A 2xx moves the cursor on; anything else is
 * counted, recorded (as a refusal is: rate-limited) and tried again after
 * 1 s, doubling up to 5 min, the same event first: a receiver gets them
 * in order, each once unless a crash comes between its answer and the
 * cursor's write (the event's id tells it a duplicate).
 *
 * Gateways sharing a store (an HTTP one and the stdio ones of hosts'
 * sessions, docs/CLI.md) deliver its events once: only the process that
 * holds an exclusive flock on STATE/notify.lock does; the others wait,
 * and one of them takes over, from the cursor in the store, when it
 * ends. Replicas sharing a PostgreSQL store likewise: only the one that
 * leads "webhooks" (tg_store_lead), checked before each read of events.
 *
 * Must never: run on a call's path or hold anything a call takes (a
 * call only writes its ticket; the events come through the store), put
 * a ticket's arguments, preview or findings in a body, follow a
 * redirect, reach a receiver around the proxy, or log the secret.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/curl.h"
#include "exec/exec.h"
#include "gate/gate_int.h"
#include "obs/metrics.h"
#include "toolgate/egress.h"
#include "toolgate/version.h"
#include "util/file.h"
#include "util/log.h"
#include "util/sodium.h"
#include "util/utf8.h"

#define CONNECT_MS 5000L
#define REQUEST_MS 10000L
#define BACKOFF_FIRST_MS 1000u
#define BACKOFF_MAX_MS 300000u
#define EVENTS_A_READ 32
#define REASON_MAX 1000  /* of a rejection's reason, in a body */
#define ANSWER_MAX 65536 /* of a receiver's answer read (and dropped) */

struct notify_hook {
	struct tg_gate *g;
	const struct tg_webhook *w;
	unsigned char *key;
	size_t keylen;
	struct tg_egress_local *proxy;
	char proxy_url[TG_EGRESS_LOCAL_URL];
	pthread_t thread;
	int started;
	pthread_mutex_t deny_lock;
	char denied[300];            /* the proxy's last refusal, for the attempt's record */
	uint64_t logged;             /* a store read's last failure logged (ms) */
};

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int stopping(struct tg_gate *g)
{
	int stop;

	pthread_mutex_lock(&g->notify_lock);
	stop = g->notify_stop;
	pthread_mutex_unlock(&g->notify_lock);
	return stop;
}

/* Sleep ms, or less when the gate stops. */
static void nap(struct tg_gate *g, unsigned ms)
{
	struct timespec when;

	clock_gettime(CLOCK_MONOTONIC, &when);
	when.tv_sec += ms / 1000;
	when.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (when.tv_nsec >= 1000000000L) {
		when.tv_sec++;
		when.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&g->notify_lock);
	while (!g->notify_stop &&
	       pthread_cond_timedwait(&g->notify_wake, &g->notify_lock, &when) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&g->notify_lock);
}

int notify_signature(const unsigned char *key, size_t keylen, int64_t t, const char *body,
		     size_t len, char out[NOTIFY_SIGNATURE_MAX])
{
	crypto_auth_hmacsha256_state st;
	unsigned char mac[crypto_auth_hmacsha256_BYTES];
	char stamp[24], hex[2 * crypto_auth_hmacsha256_BYTES + 1];
	int n = snprintf(stamp, sizeof(stamp), "%lld.", (long long)t);

	/* HMAC-SHA256(secret, "T." + body), as Stripe's and Slack's are signed */
	if (crypto_auth_hmacsha256_init(&st, key, keylen) != 0 ||
	    crypto_auth_hmacsha256_update(&st, (const unsigned char *)stamp, (size_t)n) != 0 ||
	    crypto_auth_hmacsha256_update(&st, (const unsigned char *)body, len) != 0 ||
	    crypto_auth_hmacsha256_final(&st, mac) != 0)
		return -1;
	sodium_bin2hex(hex, sizeof(hex), mac, sizeof(mac));
	snprintf(out, NOTIFY_SIGNATURE_MAX, "t=%lld,v1=%s", (long long)t, hex);
	sodium_memzero(&st, sizeof(st));
	return 0;
}

/* s with Slack's three control characters escaped (&, <, >), so that a
 * reason cannot make a link or a mention; at most max bytes of s, cut
 * where a character begins (a cut character would make the text no JSON
 * string, and the event would go without a body). size >= 5 * max + 1:
 * each byte becomes at most five. */
static void slack_escape(char *out, size_t size, const char *s, size_t max)
{
	size_t o = 0, i, n = utf8_cut(s, strlen(s), max);

	for (i = 0; i < n && o + 6 < size; i++) {
		const char *e = s[i] == '&' ? "&amp;" : s[i] == '<' ? "&lt;" : s[i] == '>' ? "&gt;"
										: NULL;
		unsigned char c = (unsigned char)s[i];

		if (e) {
			memcpy(out + o, e, strlen(e));
			o += strlen(e);
		} else {
			out[o++] = c < 0x20 ? ' ' : (char)c; /* one line */
		}
	}
	out[o] = '\0';
}

/* The one-line summary of event e, for a person (Slack's "text"): cut
 * short, if it must be, where a character begins. */
static void summary(const struct tg_ticket_event *e, const char *reason, const char *link,
		    char *out, size_t size)
{
	char why[5 * 200 + 1] = "", tail[600] = "";
	int n;

	if (reason)
		slack_escape(why, sizeof(why), reason, 200);
	if (link)
		snprintf(tail, sizeof(tail), " <%s|open in the console>", link);
	switch (e->state) {
	case TG_TICKET_PENDING:
		n = snprintf(out, size, "%s asks to run %s: ticket %.8s waits for a decision%s",
			     e->principal, e->tool, e->ticket, tail);
		break;
	case TG_TICKET_APPROVED:
	case TG_TICKET_REJECTED:
		n = snprintf(out, size, "%s's %s (ticket %.8s) %s by %s%s%s%s", e->principal, e->tool,
			     e->ticket, e->state == TG_TICKET_APPROVED ? "approved" : "rejected",
			     e->approver[0] ? e->approver : "someone", why[0] ? ": " : "", why, tail);
		break;
	default:
		n = snprintf(out, size, "%s's %s (ticket %.8s) %s%s", e->principal, e->tool,
			     e->ticket, tg_webhook_event_name((unsigned)e->state), tail);
		break;
	}
	/* snprintf cuts at a byte: back to where the last whole character
	 * began, or the text is no JSON string and the event has no body */
	if (n < 0 && size)
		out[0] = '\0';
	else if ((size_t)n >= size && size > 1)
		out[utf8_cut(out, (size_t)n, size - 2)] = '\0';
}

/* "scheme://host[:port]" of the MCP url resource, into out; 0, or -1
 * when it is none. */
static int origin_of(const char *resource, char *out, size_t size)
{
	const char *auth = resource ? strstr(resource, "://") : NULL;
	size_t n;

	if (!auth || (strncmp(resource, "https://", 8) != 0 && strncmp(resource, "http://", 7) != 0))
		return -1;
	n = (size_t)(auth + 3 - resource) + strcspn(auth + 3, "/?#");
	if (n + 1 > size)
		return -1;
	memcpy(out, resource, n);
	out[n] = '\0';
	return 0;
}

char *notify_body(const struct tg_ticket_event *e, const char *reason, const char *resource)
{
	char id[24], origin[300], link[400], text[2048], cut[REASON_MAX + 1];
	json_t *o;
	char *body;
	int has_link = origin_of(resource, origin, sizeof(origin)) == 0;

	if (has_link)
		snprintf(link, sizeof(link), "%s/console/#/ticket/%s", origin, e->ticket);
	if (reason) {
		/* at most REASON_MAX bytes, cut where a character begins */
		size_t n = utf8_cut(reason, strlen(reason), REASON_MAX);

		memcpy(cut, reason, n);
		cut[n] = '\0';
		reason = cut;
	}
	summary(e, reason, has_link ? link : NULL, text, sizeof(text));
	snprintf(id, sizeof(id), "%llu", (unsigned long long)e->seq);
	/* the ticket's facts, never its arguments, preview or findings */
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:s}", "id", id, "event",
		      tg_webhook_event_name((unsigned)e->state), "ticket", e->ticket, "tool", e->tool,
		      "principal", e->principal, "state", tg_ticket_state_name(e->state), "created",
		      (json_int_t)e->created, "expires", (json_int_t)e->expires, "text", text);
	if (!o)
		return NULL;
	if (e->approver[0])
		json_object_set_new(o, "approver", json_string(e->approver));
	if (reason)
		json_object_set_new(o, "reason", json_string(reason));
	if (e->decided)
		json_object_set_new(o, "decided", json_integer((json_int_t)e->decided));
	if (has_link)
		json_object_set_new(o, "console", json_string(link));
	body = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (body && strlen(body) > NOTIFY_BODY_MAX) {
		free(body);
		body = NULL;
	}
	return body;
}

static size_t on_answer(char *p, size_t size, size_t n, void *ctx)
{
	size_t *got = ctx;

	(void)p;
	*got += size * n;
	return *got > ANSWER_MAX ? 0 : size * n; /* read, dropped, bounded */
}

static int on_progress(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c, curl_off_t d)
{
	(void)a, (void)b, (void)c, (void)d;
	return stopping(ctx) ? 1 : 0;
}

static void hook_denied(void *ctx, const char *destination, const char *why)
{
	struct notify_hook *h = ctx;

	if (strcmp(destination, TG_EGRESS_SUMMARY) == 0)
		return;
	pthread_mutex_lock(&h->deny_lock);
	snprintf(h->denied, sizeof(h->denied), "%.100s: %.180s", destination, why);
	pthread_mutex_unlock(&h->deny_lock);
}

/* One attempt at event e: 0 delivered (a 2xx); -1 not, why in why and
 * the outcome ("failed", "refused") in *outcome. */
static int post(struct notify_hook *h, const struct tg_ticket_event *e, const char *body,
		char *why, size_t wlen, const char **outcome)
{
	char sig[NOTIFY_SIGNATURE_MAX], line[NOTIFY_SIGNATURE_MAX + 32], ev[64];
	char errbuf[CURL_ERROR_SIZE] = "";
	struct curl_slist *hdrs = NULL, *l;
	size_t got = 0;
	long status = 0;
	CURLcode rc;
	CURL *c;

	*outcome = "failed";
	if (notify_signature(h->key, h->keylen, (int64_t)time(NULL), body, strlen(body), sig) < 0) {
		snprintf(why, wlen, "the signature could not be made");
		return -1;
	}
	snprintf(line, sizeof(line), "X-Toolgate-Signature: %s", sig);
	snprintf(ev, sizeof(ev), "X-Toolgate-Event: %llu", (unsigned long long)e->seq);
	c = curl_easy_init();
	l = curl_slist_append(hdrs, "Content-Type: application/json");
	l = l ? curl_slist_append(hdrs = l, line) : NULL;
	l = l ? curl_slist_append(hdrs = l, ev) : NULL;
	l = l ? curl_slist_append(hdrs = l, "Expect:") : NULL; /* no 100-continue round */
	if (!c || !l) {
		curl_slist_free_all(l ? l : hdrs);
		curl_easy_cleanup(c);
		snprintf(why, wlen, "out of memory");
		return -1;
	}
	hdrs = l;
	pthread_mutex_lock(&h->deny_lock);
	h->denied[0] = '\0';
	pthread_mutex_unlock(&h->deny_lock);
	curl_easy_setopt(c, CURLOPT_URL, h->w->url);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, strncasecmp(h->w->url, "https:", 6) == 0 ? "https"
											   : "http");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_PROXY, h->proxy_url);
	/* no NO_PROXY of the environment takes a receiver around the proxy */
	curl_easy_setopt(c, CURLOPT_NOPROXY, "");
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_MS);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, REQUEST_MS);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "toolgate/" TOOLGATE_VERSION);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, (long)strlen(body));
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_answer);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &got);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, h->g);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK || rc == CURLE_WRITE_ERROR)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	curl_slist_free_all(hdrs);
	if (status >= 200 && status < 300)
		return 0;
	pthread_mutex_lock(&h->deny_lock);
	if (h->denied[0]) {
		*outcome = "refused";
		snprintf(why, wlen, "refused by the egress rules: %s", h->denied);
	} else if (status) {
		snprintf(why, wlen, "HTTP %ld", status);
	} else {
		snprintf(why, wlen, "%s", errbuf[0] ? errbuf : curl_easy_strerror(rc));
	}
	pthread_mutex_unlock(&h->deny_lock);
	return -1;
}

/* The reason of a rejected ticket (malloc'd), or NULL. */
static char *reason_of(struct tg_gate *g, const struct tg_ticket_event *e)
{
	struct tg_ticket t;
	struct tg_error err;
	char *r = NULL;

	if (e->state != TG_TICKET_REJECTED)
		return NULL;
	if (tg_store_ticket_get(g->store, e->ticket, TG_STORE_NOW, &t, &err) < 0)
		return NULL; /* collected: the event goes without it */
	if (t.reason)
		r = strdup(t.reason);
	tg_ticket_release(&t);
	return r;
}

static int delivers(struct tg_gate *g);

/* Event e delivered, tried again with backoff until it is or the gate
 * stops, or this replica no longer leads: 0 delivered, -1 not. */
static int deliver(struct notify_hook *h, const struct tg_ticket_event *e)
{
	struct tg_gate *g = h->g;
	char *reason = reason_of(g, e), *body = notify_body(e, reason, g->resource);
	char subject[100], why[400], detail[600];
	unsigned backoff = BACKOFF_FIRST_MS, failures = 0;
	const char *outcome;

	free(reason);
	snprintf(subject, sizeof(subject), "webhook %s", h->w->name);
	if (!body) {
		/* nothing a receiver could be sent: said, and passed over */
		tg_gate_record_event(g, "", subject, "webhook_failed", "a body could not be made");
		metrics_webhook(g->metrics, h->w->name, "failed");
		return 0;
	}
	while (!stopping(g)) {
		if (post(h, e, body, why, sizeof(why), &outcome) == 0) {
			metrics_webhook(g->metrics, h->w->name, "delivered");
			if (failures) {
				snprintf(detail, sizeof(detail), "event %llu (%s, ticket %s) delivered "
					 "after %u failed attempts", (unsigned long long)e->seq,
					 tg_webhook_event_name((unsigned)e->state), e->ticket, failures);
				tg_gate_record_event(g, "", subject, "webhook_delivered", detail);
			}
			free(body);
			return 0;
		}
		failures++;
		metrics_webhook(g->metrics, h->w->name, outcome);
		/* a replica that no longer leads leaves the event to the one
		 * that does, rather than both retrying it for as long as the
		 * receiver is down (the cursor stays before it) */
		if (!delivers(g)) {
			free(body);
			return -1;
		}
		snprintf(detail, sizeof(detail), "event %llu (%s, ticket %s), attempt %u: %.400s; "
			 "next in %u s", (unsigned long long)e->seq,
			 tg_webhook_event_name((unsigned)e->state), e->ticket, failures, why,
			 backoff / 1000);
		tg_gate_record_refusal(g, "", subject, "webhook_failed", detail);
		nap(g, backoff);
		backoff = backoff * 2 > BACKOFF_MAX_MS ? BACKOFF_MAX_MS : backoff * 2;
	}
	free(body);
	return -1;
}

static void keep_cursor(struct notify_hook *h, uint64_t seq)
{
	struct tg_error err;

	if (tg_store_webhook_cursor_set(h->g->store, h->w->name, seq, &err) < 0)
		tg_log(TG_LOG_ERROR, "webhook %s: its place in the events: %s", h->w->name, err.msg);
}

/* Where the webhook starts: its kept cursor, else the latest event now
 * (what came before the webhook was configured is history), kept. */
static uint64_t first_cursor(struct notify_hook *h)
{
	struct tg_ticket_event none[1];
	struct tg_error err;
	uint64_t seq, last;
	size_t n;
	int found;

	while (!stopping(h->g)) {
		if (tg_store_webhook_cursor(h->g->store, h->w->name, &seq, &found, &err) == 0 &&
		    (found || tg_store_ticket_events(h->g->store, 0, 0, none, &n, &last, &err) == 0)) {
			if (!found) {
				seq = last;
				keep_cursor(h, seq);
			}
			return seq;
		}
		tg_log(TG_LOG_ERROR, "webhook %s: its place in the events: %s", h->w->name,
		       err.msg);
		nap(h->g, 5000);
	}
	return 0;
}

/* 1 when this process delivers the store's webhooks: it holds
 * STATE/notify.lock (held once got, until gate_notify_stop), or the file
 * could not be opened (then each process delivers: duplicates rather
 * than silence). */
static int delivers(struct tg_gate *g)
{
	struct tg_error err;
	int yes;

	/* replicas of a shared store: the one that leads "webhooks" */
	yes = tg_store_lead(g->store, "webhooks", &err);
	if (yes >= 0 || err.code != TG_ERR_UNAVAILABLE)
		return yes > 0;
	pthread_mutex_lock(&g->notify_lock);
	if (!g->notify_held && g->notify_fd >= 0 && flock(g->notify_fd, LOCK_EX | LOCK_NB) == 0)
		g->notify_held = 1;
	yes = g->notify_held || g->notify_fd < 0;
	pthread_mutex_unlock(&g->notify_lock);
	return yes;
}

static void *deliverer(void *arg)
{
	struct notify_hook *h = arg;
	struct tg_gate *g = h->g;
	struct tg_ticket_event ev[EVENTS_A_READ];
	struct tg_error err;
	uint64_t cursor, last, kept;
	size_t n, i;

	/* where it starts is pinned now, whoever delivers: a replica that
	 * comes to lead a second later goes on from there, not from the
	 * events of that second on */
	first_cursor(h);
	/* another process delivers: wait for its end (a second at a time) */
	while (!stopping(g) && !delivers(g))
		nap(g, 1000);
	cursor = kept = first_cursor(h);
	while (!stopping(g)) {
		/* a replica that no longer leads (its session cut) stops; when
		 * it leads again, it goes on from the cursor in the store */
		if (!delivers(g)) {
			while (!stopping(g) && !delivers(g))
				nap(g, 1000);
			cursor = kept = first_cursor(h);
			continue;
		}
		if (tg_store_ticket_events(g->store, cursor, EVENTS_A_READ, ev, &n, &last, &err) < 0) {
			if (mono_ms() - h->logged >= 60000) {
				h->logged = mono_ms();
				tg_log(TG_LOG_ERROR, "webhook %s: reading the tickets' events: %s",
				       h->w->name, err.msg);
			}
			nap(g, 1000);
			continue;
		}
		/* events collected under the cursor (a receiver down past
		 * tickets.keep): what is left starts after them */
		if (!n && cursor < last)
			cursor = last;
		for (i = 0; i < n; i++) {
			const struct tg_ticket_event *e = &ev[i];

			if ((h->w->events & (1u << e->state)) && tg_webhook_covers(h->w, e->tool)) {
				if (deliver(h, e) < 0)
					break; /* stopping, or led elsewhere: the cursor stays before e */
				cursor = e->seq;
				keep_cursor(h, cursor);
				kept = cursor;
			} else {
				cursor = e->seq;
			}
		}
		if (cursor != kept) {
			keep_cursor(h, cursor);
			kept = cursor;
		}
		if (n < EVENTS_A_READ && !stopping(g))
			tg_gate_ticket_events_wait(g, cursor, 1000);
	}
	return NULL;
}

/* The secret of w (its file's bytes, the newlines that end it dropped): checked
 * again as the policy checked it, since the file may have changed, and
 * the mode checked is that of the file read (fstat on its descriptor). */
static int read_key(struct notify_hook *h, struct tg_error *err)
{
	const char *path = h->w->secret_file;
	struct stat st;
	size_t len, read;
	char *text = file_read_stat(path, 4096, 1, &read, &st);

	if (!text)
		return tg_error_sys(err, errno, "webhook %s: secret_file %s", h->w->name, path);
	if (st.st_mode & (S_IROTH | S_IWOTH | S_IWGRP)) {
		sodium_memzero(text, read);
		free(text);
		return tg_error_set(err, TG_ERR_INVALID, "webhook %s: secret_file %s: others "
				    "may read or replace it (mode %04o): chmod 600", h->w->name, path,
				    (unsigned)(st.st_mode & 07777));
	}
	len = read;
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	if (len < 16) {
		sodium_memzero(text, read);
		free(text);
		return tg_error_set(err, TG_ERR_INVALID, "webhook %s: secret_file %s: at least 16 "
				    "bytes (openssl rand -hex 32 makes one)", h->w->name, path);
	}
	h->key = (unsigned char *)text;
	h->keylen = len;
	return 0;
}

int gate_notify_start(struct tg_gate *g, struct tg_error *err)
{
	size_t n = tg_policy_webhook_count(g->policy), i;
	struct tg_egress_proxy_options po;
	int rc;

	g->notify_fd = -1;
	if (!n || !g->store)
		return 0;
	if (tg_curl_load("webhooks", err) < 0)
		return -1;
	g->hooks = calloc(n, sizeof(*g->hooks));
	if (!g->hooks)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	/* opened with the hooks there: gate_notify_stop closes it */
	if (g->dirs && g->dirs->state) {
		char path[4096];

		if ((size_t)snprintf(path, sizeof(path), "%s/notify.lock", g->dirs->state) <
		    sizeof(path))
			g->notify_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
						  O_NOCTTY, 0600);
		if (g->notify_fd < 0)
			tg_log(TG_LOG_WARNING, "webhooks: %s/notify.lock: %s: this gateway "
			       "delivers them whether another does or not", g->dirs->state,
			       strerror(errno));
	}
	for (i = 0; i < n; i++) {
		struct notify_hook *h = &g->hooks[i];

		g->nhooks = i + 1; /* what gate_notify_stop releases */
		h->g = g;
		h->w = tg_policy_webhook(g->policy, i);
		pthread_mutex_init(&h->deny_lock, NULL);
		memset(&po, 0, sizeof(po));
		po.on_deny = hook_denied;
		po.ctx = h;
		po.max_clients = 2;
		po.idle_timeout_ms = (unsigned)REQUEST_MS;
		if (read_key(h, err) < 0)
			return -1;
		if (tg_egress_local_start(h->w->rule, &po, &h->proxy, h->proxy_url, err) < 0)
			return tg_error_wrap(err, "webhook %s: url", h->w->name);
	}
	for (i = 0; i < n; i++) {
		rc = gate_thread_start(&g->hooks[i].thread, deliverer, &g->hooks[i]);
		if (rc != 0)
			return tg_error_sys(err, rc, "webhook %s: its thread could not start",
					    g->hooks[i].w->name);
		g->hooks[i].started = 1;
	}
	return 0;
}

void gate_notify_stop(struct tg_gate *g)
{
	size_t i;

	if (!g->hooks)
		return;
	pthread_mutex_lock(&g->notify_lock);
	g->notify_stop = 1;
	pthread_cond_broadcast(&g->notify_wake);
	pthread_mutex_unlock(&g->notify_lock);
	for (i = 0; i < g->nhooks; i++) {
		struct notify_hook *h = &g->hooks[i];

		if (h->started)
			pthread_join(h->thread, NULL);
		tg_egress_local_stop(h->proxy);
		if (h->key) {
			sodium_memzero(h->key, h->keylen);
			free(h->key);
		}
		pthread_mutex_destroy(&h->deny_lock);
	}
	free(g->hooks);
	g->hooks = NULL;
	g->nhooks = 0;
	if (g->notify_fd >= 0)
		close(g->notify_fd); /* another gateway of the store delivers now */
	g->notify_fd = -1;
	g->notify_held = 0;
}
