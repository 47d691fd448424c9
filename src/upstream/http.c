/*
 * The Streamable HTTP bridge of an upstream (http.h says what it does):
 * the lines of the client (client.c) POSTed with libcurl's multi
 * interface, one thread driving every transfer, the answers (a JSON body,
 * or the events of a text/event-stream read by sse.c) written back as
 * lines; the optional GET stream of the server's own messages; the
 * session's id and the protocol version carried; a 2026-07-28 request
 * sent without a session, its mirrored headers made by http_modern.c,
 * cancelled by ending its transfer; the server reached only
 * through an egress proxy (src/sandbox/egress_proxy.c) whose one rule is
 * the url's host and port, as SOCKS5 on a unix socket of its own.
 *
 * Why curl's multi interface, not a pool of threads: a tools/call may
 * stream for minutes while pings and other calls go on; one thread
 * polling every transfer and the client's pipe does that with no thread
 * per request and no ceiling but UPSTREAM_HTTP_MAX_INFLIGHT.
 *
 * Must never: follow a redirect, buffer a body or an event past
 * UPSTREAM_MAX_MESSAGE, keep a header past UPSTREAM_HTTP_MAX_HEADERS,
 * reach the server around the proxy, put a credential in a message,
 * block on the client without watching the cancel descriptor, or send a
 * modern request a session id or open a GET stream without a session
 * era's initialize.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "util/curl.h"
#include "toolgate/egress.h"
#include "toolgate/version.h"
#include "upstream/client.h"
#include "upstream/http.h"
#include "upstream/http_int.h"
#include "upstream/sse.h"
#include "util/sodium.h"

/* What an answer's body is, once its first byte came. */
enum body_kind { BODY_UNKNOWN = 0, BODY_JSON, BODY_SSE, BODY_OTHER };

/* One request, and its answer on the way. */
struct xfer {
	struct xfer *next;
	struct upstream_http *b;
	CURL *h;
	struct curl_slist *hdrs;    /* holds the credentials: wiped at free */
	char *body;                 /* the message POSTed; NULL for the GET stream */
	size_t body_len;
	json_t *id;                 /* a request's id; NULL for anything else */
	char method[64];
	int get;                    /* the GET stream */
	int initialize;
	int modern;                 /* a 2026-07-28 request (its _meta names the revision) */
	int listen;                 /* a modern subscriptions/listen: no time bound */
	int first_page;             /* a modern tools/list without a cursor */
	enum body_kind kind;
	char ctype[64];             /* Content-Type, lower case, without parameters */
	size_t header_bytes;
	char *buf;                  /* a JSON body */
	size_t len, cap;
	struct sse_parser sse;
	int answered;               /* the response to id went to the client */
	char fault[160];            /* what breaks the connection, set by a callback */
	char errbuf[CURL_ERROR_SIZE];
};

enum get_state { GET_LATER = 0, GET_WANTED, GET_OPEN, GET_NONE };

struct upstream_http {
	const struct tg_upstream *u;
	char **creds;               /* "Name: value", wiped at free */
	size_t ncreds;
	int request_ms, connect_ms;
	char proxy_url[TG_EGRESS_LOCAL_URL];
	struct tg_egress_local *proxy; /* of the url's host and port alone */
	/* the proxy's last refusal, said when a connection fails (its
	 * thread writes it); and the caller's hook, told as before */
	pthread_mutex_t deny_lock;
	char denied[512];
	tg_egress_deny_fn on_deny;
	void *deny_ctx;
	int to_client;              /* the client's input, written here */
	int from_client;            /* its output, read here */
	CURLM *m;
	struct xfer *xfers;
	unsigned nxfers;
	enum get_state get;
	uint64_t get_at;            /* when GET_WANTED may open it */
	char session[UPSTREAM_HTTP_MAX_SESSION + 1];
	char protocol[16];
	int initialized;            /* an initialize was answered: the session era */
	int modern;                 /* a modern request was written: the 2026-07-28 era */
	struct http_params *params; /* the latest modern listing's x-mcp-header */
	char *in;                   /* the client's bytes not yet a whole line */
	size_t in_len, in_cap;
	int cancel_fd;
	int stopping;               /* cancelled, or the client went away */
	int expired;                /* the session: no DELETE */
	int broken;
	char why[256];
	int ran;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void cut_off(struct upstream_http *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The connection broken (the first reason stays). */
static void cut_off(struct upstream_http *b, const char *fmt, ...)
{
	va_list ap;

	if (b->broken)
		return;
	b->broken = 1;
	va_start(ap, fmt);
	vsnprintf(b->why, sizeof(b->why), fmt, ap);
	va_end(ap);
}

/* ---- to the client ----------------------------------------------------- */

/* len bytes to the client's input, waiting while its pipe is full but
 * never past the cancel descriptor. 0, or -1 (stopping). */
static int to_client(struct upstream_http *b, const char *p, size_t len)
{
	while (len && !b->stopping) {
		struct pollfd pfd[2] = { { b->to_client, POLLOUT, 0 }, { b->cancel_fd, POLLIN, 0 } };
		ssize_t w = write(b->to_client, p, len);

		if (w > 0) {
			p += w;
			len -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN) {
			b->stopping = 1; /* the client is gone (EPIPE: SIGPIPE is blocked) */
			break;
		}
		/* a failed poll, or the cancel: stop */
		if ((poll(pfd, b->cancel_fd >= 0 ? 2 : 1, -1) < 0 && errno != EINTR) ||
		    (b->cancel_fd >= 0 && pfd[1].revents))
			b->stopping = 1;
	}
	return len ? -1 : 0;
}

/* One message as one line: a CR or LF in it (whitespace, in JSON that
 * parses: a raw one is never inside a string) written as a space. */
static int line_to_client(struct upstream_http *b, const char *text, size_t len)
{
	size_t i = 0, j;

	while (i < len) {
		for (j = i; j < len && text[j] != '\n' && text[j] != '\r'; j++)
			;
		if (to_client(b, text + i, j - i) < 0 || (j < len && to_client(b, " ", 1) < 0))
			return -1;
		i = j + 1;
	}
	return to_client(b, "\n", 1);
}

/* A JSON-RPC error answering x's request in the server's place. */
static void answer_for(struct xfer *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void answer_for(struct xfer *x, const char *fmt, ...)
{
	char message[256], *text;
	va_list ap;
	json_t *msg;

	if (!x->id || x->answered)
		return;
	va_start(ap, fmt);
	vsnprintf(message, sizeof(message), fmt, ap);
	va_end(ap);
	msg = json_pack("{s:s,s:O,s:{s:i,s:s+}}", "jsonrpc", "2.0", "id", x->id, "error", "code",
			UPSTREAM_RPC_INTERNAL_ERROR, "message", "upstream HTTP: ", message);
	text = msg ? json_dumps(msg, JSON_COMPACT) : NULL;
	json_decref(msg);
	if (text)
		line_to_client(x->b, text, strlen(text));
	else
		cut_off(x->b, "out of memory");
	free(text);
	x->answered = 1;
}

/* The protocol version an initialize result agreed, for the header. */
static void sniff_protocol(struct upstream_http *b, json_t *result)
{
	const char *v = json_string_value(json_object_get(result, "protocolVersion"));
	size_t i, n = v ? strlen(v) : 0;

	if (!n || n >= sizeof(b->protocol))
		return;
	for (i = 0; i < n; i++)
		if (!((v[i] >= '0' && v[i] <= '9') || v[i] == '-'))
			return; /* the client refuses it; no header of it */
	memcpy(b->protocol, v, n + 1);
}

/* Whether msg answers x's request (and what initialize agreed). */
static void look_at(struct xfer *x, json_t *msg)
{
	json_t *id = json_object_get(msg, "id");

	if (!x->id || !id || json_object_get(msg, "method") || !json_equal(id, x->id))
		return;
	x->answered = 1;
	if (x->initialize) {
		x->b->initialized = 1;
		sniff_protocol(x->b, json_object_get(msg, "result"));
	}
	if (x->modern && strcmp(x->method, "tools/list") == 0)
		http_params_listed(x->b->params, json_object_get(msg, "result"), x->first_page);
}

/* One message of the server's (a body, an event's data) to the client:
 * a batch one line a member, anything else as it came (the client judges
 * what is not JSON-RPC). -1: stopping. */
static int message(struct xfer *x, const char *text, size_t len)
{
	json_t *msg = json_loadb(text, len, 0, NULL), *v;
	size_t i;
	int rc = 0;

	if (json_is_array(msg)) {
		json_array_foreach(msg, i, v) {
			char *one = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

			if (!one) {
				cut_off(x->b, "out of memory");
				rc = -1;
				break;
			}
			look_at(x, v);
			rc = line_to_client(x->b, one, strlen(one));
			free(one);
			if (rc < 0)
				break;
		}
		json_decref(msg);
		return rc;
	}
	if (json_is_object(msg))
		look_at(x, msg);
	json_decref(msg);
	return line_to_client(x->b, text, len);
}

/* ---- curl's callbacks ---------------------------------------------------- */

static int on_event(void *ctx, const char *type, const char *data, size_t len, const char *id)
{
	struct xfer *x = ctx;

	(void)id; /* no resumption (Last-Event-ID): a stream cut is an answer cut */
	if (strcmp(type, "message") != 0 || !len)
		return 0;
	return message(x, data, len);
}

static int token_eq(const char *line, size_t n, const char *name, const char **value,
		    size_t *vlen)
{
	size_t k = strlen(name);

	if (n <= k || line[k] != ':' || strncasecmp(line, name, k) != 0)
		return 0;
	*value = line + k + 1;
	*vlen = n - k - 1;
	while (*vlen && (**value == ' ' || **value == '\t')) {
		(*value)++;
		(*vlen)--;
	}
	while (*vlen && strchr(" \t\r\n", (*value)[*vlen - 1]))
		(*vlen)--;
	return 1;
}

static size_t on_header(char *line, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	struct upstream_http *b = x->b;
	const char *v;
	size_t vlen, i;

	n *= size;
	x->header_bytes += n;
	if (x->header_bytes > UPSTREAM_HTTP_MAX_HEADERS) {
		snprintf(x->fault, sizeof(x->fault), "an answer's headers over %u bytes",
			 UPSTREAM_HTTP_MAX_HEADERS);
		return 0;
	}
	if (n >= 5 && memcmp(line, "HTTP/", 5) == 0) {
		x->ctype[0] = '\0'; /* a new head (after a 100) */
	} else if (token_eq(line, n, "content-type", &v, &vlen)) {
		for (i = 0; i < vlen && i + 1 < sizeof(x->ctype) && v[i] != ';' && v[i] != ' '; i++)
			x->ctype[i] = (char)(v[i] >= 'A' && v[i] <= 'Z' ? v[i] + 32 : v[i]);
		x->ctype[i] = '\0';
	} else if (x->initialize && token_eq(line, n, "mcp-session-id", &v, &vlen)) {
		/* MCP: visible ASCII only; it goes into every later request */
		for (i = 0; i < vlen && v[i] >= 0x21 && v[i] <= 0x7e; i++)
			;
		if (!vlen || i < vlen || vlen > UPSTREAM_HTTP_MAX_SESSION) {
			snprintf(x->fault, sizeof(x->fault), "a session id that is not 1 to %u "
				 "visible ASCII characters", UPSTREAM_HTTP_MAX_SESSION);
			return 0;
		}
		memcpy(b->session, v, vlen);
		b->session[vlen] = '\0';
	}
	return n;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct xfer *x = ud;
	long status = 0;

	n *= size;
	if (x->kind == BODY_UNKNOWN) {
		curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
		/* a modern error's status (400, 404) carries its JSON-RPC error */
		x->kind = status != 200 && !(x->modern && status >= 400 && status < 500) ? BODY_OTHER
			  : strcmp(x->ctype, "application/json") == 0 ? BODY_JSON
			  : strcmp(x->ctype, "text/event-stream") == 0 ? BODY_SSE : BODY_OTHER;
	}
	if (x->kind == BODY_JSON) {
		if (x->len + n > UPSTREAM_MAX_MESSAGE) {
			snprintf(x->fault, sizeof(x->fault), "an answer over %u bytes",
				 UPSTREAM_MAX_MESSAGE);
			return 0;
		}
		if (x->len + n > x->cap) {
			size_t cap = x->cap ? x->cap : 16384;
			char *nb;

			while (cap < x->len + n)
				cap *= 2;
			if (cap > UPSTREAM_MAX_MESSAGE)
				cap = UPSTREAM_MAX_MESSAGE;
			nb = realloc(x->buf, cap);
			if (!nb) {
				snprintf(x->fault, sizeof(x->fault), "out of memory");
				return 0;
			}
			x->buf = nb;
			x->cap = cap;
		}
		memcpy(x->buf + x->len, p, n);
		x->len += n;
	} else if (x->kind == BODY_SSE && sse_feed(&x->sse, p, n, on_event, x) < 0) {
		if (!x->b->stopping && !x->b->broken)
			snprintf(x->fault, sizeof(x->fault), "%s (at most %u bytes)", x->sse.why,
				 UPSTREAM_MAX_MESSAGE);
		return 0;
	}
	/* BODY_OTHER: not read (an error's page); the time bound ends it */
	return n;
}

/* ---- transfers --------------------------------------------------------- */

static void xfer_free(struct xfer *x)
{
	struct curl_slist *l;

	if (!x)
		return;
	if (x->h) {
		curl_multi_remove_handle(x->b->m, x->h);
		curl_easy_cleanup(x->h);
	}
	for (l = x->hdrs; l; l = l->next)
		sodium_memzero(l->data, strlen(l->data));
	curl_slist_free_all(x->hdrs);
	free(x->body);
	free(x->buf);
	json_decref(x->id);
	sse_release(&x->sse);
	free(x);
}

static void xfer_unlink(struct upstream_http *b, struct xfer *x)
{
	struct xfer **pp;

	for (pp = &b->xfers; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			b->nxfers--;
			return;
		}
}

/* What xfer_new makes besides a POST of the session era. */
enum { XFER_DELETE = 1, XFER_MODERN = 2 };

/* The headers of a request: the credentials, the session's (never on a
 * modern request: that era has none), the transport's. -1 out of memory. */
static int xfer_headers(struct upstream_http *b, struct xfer *x)
{
	char line[UPSTREAM_HTTP_MAX_SESSION + 32];
	struct curl_slist *l;
	size_t i;

#define ADD(s)                                                         \
	do {                                                           \
		if (!(l = curl_slist_append(x->hdrs, (s))))            \
			return -1;                                     \
		x->hdrs = l;                                           \
	} while (0)
	for (i = 0; i < b->ncreds; i++)
		ADD(b->creds[i]);
	ADD(x->get ? "Accept: text/event-stream" : "Accept: application/json, text/event-stream");
	if (!x->get)
		ADD("Content-Type: application/json");
	if (b->session[0] && !x->modern) {
		snprintf(line, sizeof(line), "Mcp-Session-Id: %s", b->session);
		ADD(line);
	}
	if (b->protocol[0] && !x->modern) {
		snprintf(line, sizeof(line), "MCP-Protocol-Version: %s", b->protocol);
		ADD(line);
	}
	ADD("Expect:"); /* no 100-continue round trip for a large body */
#undef ADD
	return 0;
}

/* A transfer for the message body (owned from here; NULL: the GET
 * stream), or for DELETE (flags XFER_DELETE); a modern request's
 * (XFER_MODERN) without the session's headers. NULL out of memory. */
static struct xfer *xfer_new(struct upstream_http *b, char *body, size_t len, int flags)
{
	struct xfer *x = calloc(1, sizeof(*x));
	int del = flags & XFER_DELETE;
	CURL *h;

	if (!x) {
		free(body);
		return NULL;
	}
	x->b = b;
	x->body = body;
	x->body_len = len;
	x->get = !body && !del;
	x->modern = !!(flags & XFER_MODERN);
	sse_init(&x->sse, UPSTREAM_MAX_MESSAGE);
	h = x->h = curl_easy_init();
	if (!h || xfer_headers(b, x) < 0) {
		xfer_free(x);
		return NULL;
	}
	curl_easy_setopt(h, CURLOPT_URL, b->u->url);
	curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(h, CURLOPT_MAXREDIRS, 0L);
	/* only the proxy, whatever the environment says (no_proxy included) */
	curl_easy_setopt(h, CURLOPT_PROXY, b->proxy_url);
	curl_easy_setopt(h, CURLOPT_NOPROXY, "");
	curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, (long)b->connect_ms);
	curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, (long)(del ? UPSTREAM_HTTP_CLOSE_MS : b->request_ms));
	curl_easy_setopt(h, CURLOPT_USERAGENT, "toolgate/" TOOLGATE_VERSION);
	curl_easy_setopt(h, CURLOPT_HTTPHEADER, x->hdrs);
	curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(h, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(h, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(h, CURLOPT_ERRORBUFFER, x->errbuf);
	curl_easy_setopt(h, CURLOPT_PRIVATE, x);
	if (del) {
		curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, "DELETE");
	} else if (body) {
		curl_easy_setopt(h, CURLOPT_POST, 1L);
		curl_easy_setopt(h, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	}
	return x;
}

static void xfer_add(struct upstream_http *b, struct xfer *x)
{
	if (curl_multi_add_handle(b->m, x->h) != CURLM_OK) {
		xfer_free(x);
		cut_off(b, "out of memory");
		return;
	}
	x->next = b->xfers;
	b->xfers = x;
	b->nxfers++;
}

/* A notifications/cancelled of the modern era: the request's transfer
 * ended, which closes its stream (how the revision cancels over HTTP),
 * and nothing POSTed (a stateless server has nothing to cancel by it).
 * 1 when so; 0: a session-era cancellation, POSTed (and its request's
 * transfer ended: its stream would only go on). */
static int cancelled(struct upstream_http *b, json_t *msg)
{
	json_t *rid = json_object_get(json_object_get(msg, "params"), "requestId");
	struct xfer *y;
	int modern;

	for (y = b->xfers; rid && y; y = y->next)
		if (y->id && json_equal(y->id, rid)) {
			modern = y->modern;
			xfer_unlink(b, y);
			xfer_free(y);
			return modern;
		}
	/* nothing in progress: in the modern era, nowhere to send it */
	return http_modern_version(msg) || (b->modern && !b->session[0]);
}

/* A modern request's own: its mirrored headers, and no time bound for a
 * subscriptions/listen (the server or a cancellation ends it). 0; -1 out
 * of memory; 1 answered here (a header the server would refuse). */
static int modern_request(struct upstream_http *b, struct xfer *x, json_t *msg)
{
	char why[400];
	int rc;

	b->modern = 1;
	x->listen = x->id && strcmp(x->method, "subscriptions/listen") == 0;
	x->first_page = strcmp(x->method, "tools/list") == 0 &&
			!json_object_get(json_object_get(msg, "params"), "cursor");
	rc = http_modern_headers(b->params, msg, &x->hdrs, why, sizeof(why));
	if (rc > 0)
		answer_for(x, "%s", why);
	if (rc)
		return rc;
	curl_easy_setopt(x->h, CURLOPT_HTTPHEADER, x->hdrs);
	if (x->listen)
		curl_easy_setopt(x->h, CURLOPT_TIMEOUT_MS, 0L);
	return 0;
}

/* A line of the client's: what it is, then POSTed. */
static void post_line(struct upstream_http *b, const char *line, size_t len)
{
	json_t *msg = json_loadb(line, len, 0, NULL);
	const char *method = json_string_value(json_object_get(msg, "method"));
	json_t *id = json_object_get(msg, "id");
	int modern = method && http_modern_version(msg);
	char *body = NULL;
	struct xfer *x;
	int rc = 0;

	if (method && !id && strcmp(method, "notifications/cancelled") == 0 && cancelled(b, msg)) {
		json_decref(msg);
		return;
	}
	body = malloc(len + 1);
	if (body)
		memcpy(body, line, len);
	x = body ? xfer_new(b, body, len, modern ? XFER_MODERN : 0) : NULL;
	if (x && method) {
		snprintf(x->method, sizeof(x->method), "%s", method);
		x->initialize = strcmp(method, "initialize") == 0;
		if (id)
			x->id = json_incref(id);
	}
	if (x && modern)
		rc = modern_request(b, x, msg);
	json_decref(msg);
	if (!x || rc < 0) {
		xfer_free(x);
		cut_off(b, "out of memory");
		return;
	}
	if (rc > 0)
		xfer_free(x);
	else
		xfer_add(b, x);
}

/* The proxy's refusal, kept for the error of the connection it failed. */
static void bridge_denied(void *ctx, const char *destination, const char *why)
{
	struct upstream_http *b = ctx;

	if (strcmp(destination, TG_EGRESS_SUMMARY) != 0) {
		pthread_mutex_lock(&b->deny_lock);
		snprintf(b->denied, sizeof(b->denied), "%.480s", why);
		pthread_mutex_unlock(&b->deny_lock);
	}
	if (b->on_deny)
		b->on_deny(b->deny_ctx, destination, why);
}

/* Why a connection through the proxy failed, in the operator's words
 * rather than curl's SOCKS5 reply number ("Can't complete SOCKS5
 * connection to HOST. (2)"): out (size bytes). */
static void unreached(struct upstream_http *b, const struct xfer *x, CURLcode rc, char *out,
		      size_t size)
{
	const char *e = x->errbuf[0] ? x->errbuf : curl_easy_strerror(rc);
	const char *n = strstr(e, "SOCKS5") ? strrchr(e, '(') : NULL;
	long reply = n ? strtol(n + 1, NULL, 10) : -1; /* a reply of 0 to 255 */

	pthread_mutex_lock(&b->deny_lock);
	if (reply == 2 && b->denied[0])
		snprintf(out, size, "the egress proxy refused it: %s", b->denied);
	else if (reply == 2)
		snprintf(out, size, "the egress proxy refused it (docs/EGRESS.md)");
	else if (reply == 4 || reply == 3 || reply == 5)
		snprintf(out, size, "nothing answered at %s (the connection was refused, or the "
			 "host is unreachable): is the server listening there?", b->u->url_rule);
	else
		snprintf(out, size, "%s", e);
	pthread_mutex_unlock(&b->deny_lock);
}

/* What became of a transfer that ended (curl's rc), then freed. */
static void finished(struct upstream_http *b, struct xfer *x, CURLcode rc)
{
	curl_off_t sent = 0;
	long status = 0;

	curl_easy_getinfo(x->h, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_getinfo(x->h, CURLINFO_PRETRANSFER_TIME_T, &sent);
	xfer_unlink(b, x);
	if (x->fault[0]) {
		cut_off(b, "%s", x->fault);
	} else if (rc != CURLE_OK && !sent && !status) {
		/* never reached: the proxy refused it, no route, TLS */
		char why[600];

		unreached(b, x, rc, why, sizeof(why));
		cut_off(b, "cannot reach %s: %s", b->u->url, why);
	} else if (status == 404 && b->session[0] && !x->initialize && !x->modern) {
		b->expired = 1;
		cut_off(b, "the server's session expired (HTTP 404)");
	} else if (x->get) {
		/* 405: the server offers no stream; any other refusal is taken
		 * as the same. An end, a cut or a timeout: opened again. */
		b->get = rc == CURLE_OK && status != 200 ? GET_NONE : GET_WANTED;
		b->get_at = now_ms() + UPSTREAM_HTTP_REOPEN_MS;
	} else if (rc == CURLE_OPERATION_TIMEDOUT) {
		answer_for(x, "no answer within %d ms", b->request_ms);
	} else if (rc != CURLE_OK) {
		answer_for(x, "the answer was cut: %s", curl_easy_strerror(rc));
	} else if (status != 200 && status != 202 && status != 204) {
		/* a modern 4xx: its JSON-RPC error, when it holds one, is the answer */
		if (x->kind == BODY_JSON && x->len && message(x, x->buf, x->len) < 0 &&
		    !b->stopping)
			cut_off(b, "out of memory");
		answer_for(x, "the server answered HTTP %ld", status);
	} else {
		if (x->kind == BODY_JSON && x->len && message(x, x->buf, x->len) < 0 && !b->stopping)
			cut_off(b, "out of memory");
		answer_for(x, "the server's HTTP %ld answer held no response to %s", status,
			   x->method);
		/* the session era's stream only: a modern server has none */
		if (strcmp(x->method, "notifications/initialized") == 0 && b->get == GET_LATER &&
		    b->initialized && !x->modern) {
			b->get = GET_WANTED;
			b->get_at = now_ms();
		}
	}
	xfer_free(x);
}

/* ---- the client's lines ---------------------------------------------- */

/* Read what the client wrote; POST each whole line. */
static void from_client(struct upstream_http *b)
{
	size_t start = 0, scan;
	char *nl;
	ssize_t n;

	if (b->in_len == b->in_cap) {
		/* a line and its newline, at most: client.c writes no more */
		size_t most = UPSTREAM_MAX_MESSAGE + 1;
		size_t cap = b->in_cap ? b->in_cap * 2 : 131072;
		char *nb;

		if (b->in_len >= most) {
			cut_off(b, "the client wrote a line over %u bytes", UPSTREAM_MAX_MESSAGE);
			return;
		}
		nb = realloc(b->in, cap > most ? most : cap);
		if (!nb) {
			cut_off(b, "out of memory");
			return;
		}
		b->in = nb;
		b->in_cap = cap > most ? most : cap;
	}
	n = read(b->from_client, b->in + b->in_len, b->in_cap - b->in_len);
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		b->stopping = 1; /* the client went away */
		return;
	}
	scan = b->in_len;
	b->in_len += (size_t)n;
	while (!b->broken && (nl = memchr(b->in + scan, '\n', b->in_len - scan))) {
		size_t end = (size_t)(nl - b->in);

		if (end > start)
			post_line(b, b->in + start, end - start);
		start = scan = end + 1;
	}
	memmove(b->in, b->in + start, b->in_len - start);
	b->in_len -= start;
}

/* ---- the loop ---------------------------------------------------------- */

static void run_once(struct upstream_http *b)
{
	struct curl_waitfd w[2];
	unsigned nw = 0;
	int running, left;
	CURLMsg *m;

	if (b->get == GET_WANTED && now_ms() >= b->get_at && b->nxfers < UPSTREAM_HTTP_MAX_INFLIGHT) {
		struct xfer *x = xfer_new(b, NULL, 0, 0);

		if (!x) {
			cut_off(b, "out of memory");
			return;
		}
		xfer_add(b, x);
		b->get = GET_OPEN;
	}
	curl_multi_perform(b->m, &running);
	while (!b->broken && (m = curl_multi_info_read(b->m, &left)))
		if (m->msg == CURLMSG_DONE) {
			char *priv = NULL;

			curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, &priv);
			finished(b, (struct xfer *)priv, m->data.result);
		}
	if (b->broken || b->stopping)
		return;
	/* past the bound, the client's lines wait in its pipe */
	if (b->nxfers < UPSTREAM_HTTP_MAX_INFLIGHT)
		w[nw++] = (struct curl_waitfd){ b->from_client, CURL_WAIT_POLLIN, 0 };
	if (b->cancel_fd >= 0)
		w[nw++] = (struct curl_waitfd){ b->cancel_fd, CURL_WAIT_POLLIN, 0 };
	curl_multi_poll(b->m, w, nw, b->get == GET_WANTED ? 100 : 1000, NULL);
	for (unsigned i = 0; i < nw; i++) {
		if (!w[i].revents)
			continue;
		if (w[i].fd == b->cancel_fd)
			b->stopping = 1;
		else
			from_client(b);
	}
}

/* The session ended at the server (MCP: the client SHOULD), briefly. */
static void end_session(struct upstream_http *b)
{
	struct xfer *x;

	if (!b->session[0] || b->expired)
		return;
	x = xfer_new(b, NULL, 0, XFER_DELETE);
	if (!x)
		return;
	/* its answer is nobody's */
	curl_easy_setopt(x->h, CURLOPT_HEADERFUNCTION, NULL);
	x->kind = BODY_OTHER;
	curl_easy_perform(x->h);
	xfer_free(x);
}

void upstream_http_run(struct upstream_http *b, int cancel_fd, char *why, size_t size)
{
	sigset_t pipe_set;

	if (b->ran) {
		snprintf(why, size, "ran already");
		return;
	}
	b->ran = 1;
	b->cancel_fd = cancel_fd;
	/* the client gone is EPIPE on its pipe, never SIGPIPE */
	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, NULL);
	while (!b->broken && !b->stopping)
		run_once(b);
	while (b->xfers) {
		struct xfer *x = b->xfers;

		b->xfers = x->next;
		xfer_free(x);
	}
	b->nxfers = 0;
	end_session(b);
	/* end of file to the client: it breaks, its waiters wake */
	close(b->to_client);
	b->to_client = -1;
	snprintf(why, size, "%s", b->broken ? b->why : "stopped");
}

/* ---- making one ---------------------------------------------------------- */

/* The credentials as header lines, checked: a control character would
 * split the request's head. */
static int copy_headers(struct upstream_http *b, const struct upstream_http_options *o,
			struct tg_error *err)
{
	size_t i, j, nl;

	if (!o || !o->nheaders)
		return 0;
	b->creds = calloc(o->nheaders, sizeof(*b->creds));
	if (!b->creds)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	for (i = 0; i < o->nheaders; i++) {
		const struct upstream_http_header *h = &o->headers[i];

		for (j = 0; j < h->len; j++) {
			unsigned char c = (unsigned char)h->value[j];

			if ((c < 0x20 && c != '\t') || c == 0x7f)
				return tg_error_set(err, TG_ERR_INVALID, "upstream %s: "
						    "credentials.header.%s: the file holds a control "
						    "character, which no header value may", b->u->name,
						    h->name);
		}
		nl = strlen(h->name);
		b->creds[i] = malloc(nl + 2 + h->len + 1);
		if (!b->creds[i])
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		b->ncreds = i + 1;
		memcpy(b->creds[i], h->name, nl);
		memcpy(b->creds[i] + nl, ": ", 2);
		memcpy(b->creds[i] + nl + 2, h->value, h->len);
		b->creds[i][nl + 2 + h->len] = '\0';
	}
	return 0;
}

/* The egress proxy of the url's host and port (tg_egress_local_start);
 * curl reaches it as SOCKS5, names resolved there. */
static int start_proxy(struct upstream_http *b, const struct upstream_http_options *o,
		       struct tg_error *err)
{
	struct tg_egress_proxy_options po;

	memset(&po, 0, sizeof(po));
	b->on_deny = o ? o->egress_denied : NULL;
	b->deny_ctx = o ? o->egress_ctx : NULL;
	po.on_deny = bridge_denied;
	po.ctx = b;
	po.principal = o ? o->principal : NULL;
	po.max_clients = UPSTREAM_HTTP_MAX_CONNECTIONS;
	/* a relayed connection may stay silent as long as a request may */
	po.idle_timeout_ms = (unsigned)b->request_ms;
	if (tg_egress_local_start(b->u->url_rule, &po, &b->proxy, b->proxy_url, err) < 0)
		return tg_error_wrap(err, "upstream %s: url", b->u->name);
	return 0;
}

int upstream_http_new(const struct tg_upstream *u, const struct upstream_http_options *o,
		      int *client_in, int *client_out, struct upstream_http **out,
		      struct tg_error *err)
{
	struct upstream_http *b;
	int in[2] = { -1, -1 }, outp[2] = { -1, -1 };

	*out = NULL;
	*client_in = *client_out = -1;
	if (u->transport != TG_UPSTREAM_HTTP || !u->url || !u->url_rule)
		return tg_error_set(err, TG_ERR_INVALID, "upstream %s: not an http upstream",
				    u->name);
	if (tg_curl_load("an http upstream", err) < 0)
		return -1;
	b = calloc(1, sizeof(*b));
	if (!b)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	b->u = u;
	pthread_mutex_init(&b->deny_lock, NULL);
	b->to_client = b->from_client = b->cancel_fd = -1;
	b->request_ms = o && o->request_ms > 0 ? o->request_ms : UPSTREAM_HTTP_REQUEST_MS;
	b->connect_ms = o && o->connect_ms > 0 ? o->connect_ms : UPSTREAM_HTTP_CONNECT_MS;
	if (copy_headers(b, o, err) < 0 || start_proxy(b, o, err) < 0)
		goto fail;
	b->m = curl_multi_init();
	b->params = http_params_new();
	if (!b->m || !b->params) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto fail;
	}
	curl_multi_setopt(b->m, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)UPSTREAM_HTTP_MAX_CONNECTIONS);
	if (pipe2(in, O_CLOEXEC) < 0 || pipe2(outp, O_CLOEXEC) < 0) {
		tg_error_sys(err, errno, "upstream %s: a pipe", u->name);
		goto fail;
	}
	/* written between polls of the cancel descriptor; read when ready */
	if (fcntl(in[1], F_SETFL, O_NONBLOCK) < 0 || fcntl(outp[0], F_SETFL, O_NONBLOCK) < 0) {
		tg_error_sys(err, errno, "upstream %s: a pipe", u->name);
		goto fail;
	}
	b->to_client = in[1];
	b->from_client = outp[0];
	*client_in = in[0];
	*client_out = outp[1];
	*out = b;
	return 0;
fail:
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0)
			close(in[i]);
		if (outp[i] >= 0)
			close(outp[i]);
	}
	upstream_http_free(b);
	return -1;
}

void upstream_http_free(struct upstream_http *b)
{
	size_t i;

	if (!b)
		return;
	while (b->xfers) {
		struct xfer *x = b->xfers;

		b->xfers = x->next;
		xfer_free(x);
	}
	if (b->m)
		curl_multi_cleanup(b->m);
	http_params_free(b->params);
	tg_egress_local_stop(b->proxy);
	for (i = 0; i < b->ncreds; i++) {
		sodium_memzero(b->creds[i], strlen(b->creds[i]));
		free(b->creds[i]);
	}
	free(b->creds);
	if (b->to_client >= 0)
		close(b->to_client);
	if (b->from_client >= 0)
		close(b->from_client);
	free(b->in);
	pthread_mutex_destroy(&b->deny_lock);
	free(b);
}
