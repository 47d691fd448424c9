/*
 * The Streamable HTTP transport (MCP 2025-11-25, "Transports"), on
 * libmicrohttpd: one endpoint (/mcp); POST carries one JSON-RPC message
 * (a batch in a 2025-03-26 session) and is answered with application/json,
 * or with an event stream when the call reports while it runs; 202 for
 * notifications and responses; DELETE ends a session; GET opens the
 * session's stream of what the server sends outside any request, or with
 * Last-Event-ID resumes a stream whose connection broke (stream.c). A
 * 2026-07-28 subscriptions/listen is answered with a stream that stays
 * open until the client closes it or the server stops.
 *
 * Sessions: initialize creates one and names it in Mcp-Session-Id (128
 * random bits); every later request must carry it (400 without, 404 for
 * one that ended or expired after max_idle of silence).
 * MCP-Protocol-Version must be a revision the server speaks (400). Against
 * DNS rebinding, a request whose Origin or Host is not the loopback
 * address the server listens on is refused with 403, before anything
 * else. Bodies above MCP_MAX_MESSAGE get 413 and the connection closes.
 *
 * Each connection has a thread (libmicrohttpd's thread-per-connection
 * mode), so a long tool call holds only its own connection; a
 * notifications/cancelled on another connection kills its sandbox. Which
 * connections are kept, and for how long they may take to send their
 * headers, is http_admit.c's.
 *
 * This file owns the server's lifecycle and the routing of a request:
 * the checks its headers decide, its body read under the ceiling, and a
 * legacy session's POST and DELETE. The rest is in the files named in
 * http_int.h: the session registry (http_session.c), event streams and
 * listen streams (http_stream.c), the stateless era (http_modern.c),
 * bearer tokens and scopes (auth.c), /admin and /metrics (http_admin.c).
 * It never decides what a token allows, nor what a call does: the
 * identify stage and the gate do.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <strings.h>
#include <time.h>

#include "util/mhd.h"
#include "mcp/http_int.h"
#include "mcp/mcp_int.h"
#include "util/json_wide.h"

#define ENDPOINT "/mcp"
#define ADMIN_PREFIX "/admin/"
#define METRICS "/metrics"
#define ADMIN_TOO_LARGE "{\"error\":{\"code\":\"too_large\",\"message\":\"an admin " \
			"request's body is at most 65536 bytes\"}}"
#define DEFAULT_MAX_IDLE 1800 /* seconds */

/* ---- responses ------------------------------------------------------------ */

enum MHD_Result http_reply(struct MHD_Connection *c, unsigned status, const char *type,
			   const char *body, const char *session_id)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(body), (void *)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	if (type)
		MHD_add_response_header(r, "Content-Type", type);
	if (session_id)
		MHD_add_response_header(r, "Mcp-Session-Id", session_id);
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* An HTTP error with a JSON-RPC error body (what the TypeScript SDK's
 * server sends, so clients can show the reason). */
enum MHD_Result http_error(struct MHD_Connection *c, unsigned status, int code,
			   const char *message)
{
	char *body = rpc_error(json_null(), code, message);
	enum MHD_Result rc = http_reply(c, status, "application/json", body ? body : "", NULL);

	free(body);
	return rc;
}

/* 503 with Retry-After: 1 and a JSON-RPC error body: the gateway cannot
 * answer this request now (a token it cannot check while its store is
 * away), and a retry may be answered. */
static enum MHD_Result http_unavailable(struct MHD_Connection *c, const char *message)
{
	char *body = rpc_error(json_null(), RPC_INTERNAL_ERROR, message);
	struct MHD_Response *r = MHD_create_response_from_buffer(body ? strlen(body) : 0,
								 body ? body : "",
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	free(body);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Retry-After", "1");
	rc = MHD_queue_response(c, MHD_HTTP_SERVICE_UNAVAILABLE, r);
	MHD_destroy_response(r);
	return rc;
}

/* ---- checks --------------------------------------------------------------- */

int http_accepts(const char *accept, const char *type)
{
	return accept && (strstr(accept, type) || strstr(accept, "*/*"));
}

const char *http_meta_version(json_t *msg)
{
	json_t *meta = json_object_get(json_object_get(msg, "params"), "_meta");

	return json_string_value(json_object_get(meta, "io.modelcontextprotocol/protocolVersion"));
}

struct header_count {
	const char *name;
	const char *first;
	unsigned n;
};

static enum MHD_Result count_header(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	struct header_count *hc = cls;

	(void)kind;
	if (strcasecmp(key, hc->name) == 0 && hc->n++ == 0)
		hc->first = value;
	return MHD_YES;
}

/* mcp_header_fn on a connection: every line of the header is counted (a
 * proxy may read another of two than this server would). */
const char *http_lookup_header(void *ctx, const char *name, unsigned *count)
{
	struct header_count hc = { name, NULL, 0 };

	MHD_get_connection_values(ctx, MHD_HEADER_KIND, count_header, &hc);
	*count = hc.n;
	return hc.first;
}

/* The Idempotency-Key header of a tools/call becomes its _meta key
 * (docs/PIPELINE.md): NULL, or why the request is refused (the header
 * twice, or disagreeing with the body's key). */
static const char *idempotency_header(struct MHD_Connection *c, json_t *msg)
{
	unsigned count;
	const char *v = http_lookup_header(c, "Idempotency-Key", &count), *method;
	json_t *params, *meta, *body_key;

	method = json_string_value(json_object_get(msg, "method"));
	if (!v || !method || strcmp(method, "tools/call") != 0)
		return NULL;
	if (count > 1)
		return "Bad Request: Idempotency-Key is given twice";
	params = json_object_get(msg, "params");
	if (!json_is_object(params))
		return NULL; /* the call answers a bad params itself */
	meta = json_object_get(params, "_meta");
	if (!meta) {
		meta = json_object();
		json_object_set_new(params, "_meta", meta);
	}
	if (!json_is_object(meta))
		return NULL;
	body_key = json_object_get(meta, "dev.toolgate/idempotencyKey");
	if (body_key && !(json_is_string(body_key) && strcmp(json_string_value(body_key), v) == 0))
		return "Bad Request: the Idempotency-Key header and the body's "
		       "_meta[\"dev.toolgate/idempotencyKey\"] disagree";
	json_object_set_new(meta, "dev.toolgate/idempotencyKey", json_string(v));
	return NULL;
}

/* ---- POST ------------------------------------------------------------------ */

static int is_initialize(json_t *msg)
{
	const char *m = json_string_value(json_object_get(msg, "method"));

	return json_is_object(msg) && m && strcmp(m, "initialize") == 0;
}

static enum MHD_Result do_post(struct tg_mcp_http *h, struct MHD_Connection *c,
			       struct request *rq, const char *principal)
{
	const char *sid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id");
	const char *ver = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "MCP-Protocol-Version");
	const char *ctype = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
	const char *accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept");
	struct mcp_text raw = { rq->body ? rq->body : "", rq->len };
	struct http_session *hs = NULL;
	enum MHD_Result rc;
	json_error_t jerr;
	json_t *msg, *resp;
	const char *why;
	char *body;
	int created = 0;

	if (!http_accepts(accept, "application/json") ||
	    !http_accepts(accept, "text/event-stream"))
		return http_error(c, MHD_HTTP_NOT_ACCEPTABLE, RPC_INVALID_REQUEST,
				  "Not Acceptable: the client must accept both application/json "
				  "and text/event-stream");
	if (!ctype || strncasecmp(ctype, "application/json", 16) != 0)
		return http_error(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE, RPC_INVALID_REQUEST,
				  "Unsupported Media Type: the body must be application/json");
	/* an integer past 64 bits is read, not refused: the arguments go
	 * on as written (session_exact_arguments) */
	msg = json_wide_load(raw.text, raw.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!msg) {
		char text[200];

		snprintf(text, sizeof(text), "Parse error: %s", jerr.text);
		return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_PARSE_ERROR, text);
	}
	why = idempotency_header(c, msg);
	if (why) {
		json_decref(msg);
		return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST, why);
	}
	/* a request that says its version in _meta is of the modern era:
	 * stateless, whatever session header it has; so is one without a
	 * session whose header says that era (its _meta is then missing,
	 * which http_post_modern answers) */
	if (json_is_object(msg) && json_is_string(json_object_get(msg, "method")) &&
	    (http_meta_version(msg) ||
	     (!sid && !is_initialize(msg) && ver && strcmp(ver, MCP_MODERN) == 0)))
		return http_post_modern(h, c, msg, rq);
	if (is_initialize(msg)) {
		if (sid) {
			json_decref(msg);
			return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
					  "Bad Request: initialize starts a session; it cannot carry one");
		}
		hs = http_session_new(h, principal, &why);
		if (!hs) {
			json_decref(msg);
			return http_error(c, MHD_HTTP_SERVICE_UNAVAILABLE, RPC_INTERNAL_ERROR, why);
		}
		created = 1;
	} else {
		if (!sid) {
			json_decref(msg);
			return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
					  "Bad Request: no Mcp-Session-Id (send initialize first)");
		}
		hs = http_session_get(h, sid);
		if (!hs) {
			json_decref(msg);
			return http_error(c, MHD_HTTP_NOT_FOUND, RPC_INVALID_REQUEST,
					  "Not Found: no such session (it ended or expired)");
		}
		/* a session is its principal's: another's token cannot use it */
		if (strcmp(hs->s.principal, principal) != 0) {
			http_session_put(h, hs);
			json_decref(msg);
			return http_error(c, MHD_HTTP_FORBIDDEN, RPC_INVALID_REQUEST,
					  "Forbidden: the session belongs to another principal");
		}
		if (ver && !mcp_version_known(ver)) {
			http_session_put(h, hs);
			json_decref(msg);
			return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
					  "Bad Request: unsupported MCP-Protocol-Version");
		}
	}
	if (!created) {
		char scope[200];
		const char *need = http_missing_scope(h, rq, msg, scope, sizeof(scope));

		if (need) {
			http_session_put(h, hs);
			return http_forbidden_scope(h, c, rq, msg, need);
		}
	}
	if (!created && http_may_report(h, msg))
		return http_answer_sse(h, c, hs, msg, &raw, rq->scopes);
	resp = mcp_session_dispatch(&hs->s, msg, &raw, NULL, rq->scopes);
	json_decref(msg);
	if (created && !mcp_session_started(&hs->s)) {
		/* initialize refused (bad params): no session to keep */
		http_session_end(h, hs);
	}
	if (!resp) {
		rc = http_reply(c, MHD_HTTP_ACCEPTED, NULL, "", NULL);
	} else {
		body = json_dumps(resp, JSON_COMPACT);
		json_decref(resp);
		rc = body ? http_reply(c, MHD_HTTP_OK, "application/json", body,
				       created && !hs->ended ? hs->id : NULL)
			  : MHD_NO;
		free(body);
	}
	http_session_put(h, hs);
	return rc;
}

static enum MHD_Result do_delete(struct tg_mcp_http *h, struct MHD_Connection *c,
				 const char *principal)
{
	const char *sid = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Mcp-Session-Id");
	struct http_session *hs;

	if (!sid)
		return http_error(c, MHD_HTTP_BAD_REQUEST, RPC_INVALID_REQUEST,
				  "Bad Request: no Mcp-Session-Id");
	hs = http_session_get(h, sid);
	if (!hs)
		return http_error(c, MHD_HTTP_NOT_FOUND, RPC_INVALID_REQUEST,
				  "Not Found: no such session");
	if (strcmp(hs->s.principal, principal) != 0) {
		http_session_put(h, hs);
		return http_error(c, MHD_HTTP_FORBIDDEN, RPC_INVALID_REQUEST,
				  "Forbidden: the session belongs to another principal");
	}
	http_session_end(h, hs);
	http_session_put(h, hs); /* the last user frees it, cancelling its calls */
	return http_reply(c, MHD_HTTP_OK, NULL, "", NULL);
}

/* 1 when the request came with a bearer token, good or not: a 401 then
 * says invalid_token; without one (no Authorization, or another scheme)
 * it carries no error code (RFC 6750 3.1). */
static int bearer_presented(struct MHD_Connection *c)
{
	const char *auth = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");

	return auth && strncasecmp(auth, "Bearer ", 7) == 0;
}

/* 1 when a request carries what a probe never does: a browser's Origin,
 * or a proxy's forwarded headers. */
static int probe_disguised(struct MHD_Connection *c)
{
	static const char *const names[] = { "Origin", "X-Forwarded-Host", "X-Forwarded-Proto",
					     "X-Forwarded-For", "Forwarded" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (MHD_lookup_connection_value(c, MHD_HEADER_KIND, names[i]))
			return 1;
	return 0;
}

static int is_console(const char *url)
{
	return strncmp(url, "/console", 8) == 0 && (url[8] == '\0' || url[8] == '/');
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct tg_mcp_http *h = cls;
	struct request *rq = *con_cls;
	const char *why;
	char text[400];

	(void)version;
	if (!rq) {
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");

		/* shut by the admission as it came in: nothing of it is done */
		if (http_admit_request(h->admit, c) < 0 || !(rq = calloc(1, sizeof(*rq))))
			return MHD_NO;
		*con_cls = rq;
		/* The headers are complete: whatever they decide is answered
		 * now, before a byte of the body is read (and before "100
		 * Continue"): the checks against DNS rebinding, the endpoint,
		 * the caller's token, a declared length over the ceiling. */
		why = http_front_refused(&h->front, h->port, c, text, sizeof(text));
		/* the probes: a load balancer's or a kubelet's names the
		 * listener by its address, not the public URL; they say only
		 * alive or ready, and why not only to a request that names
		 * this server. One that came through a proxy or from a page
		 * (forwarded headers, an Origin) is no probe: refused as any
		 * other (docs/MCP.md, "Health") */
		if (http_is_probe(url) && (!why || !probe_disguised(c)))
			return http_probe_reply(h, c, url, method, !why);
		if (why && is_console(url))
			return http_console_refused(h, c, why);
		if (why)
			return http_error(c, MHD_HTTP_FORBIDDEN, RPC_INVALID_REQUEST, why);
		/* RFC 9728: who issues tokens for this server, asked before any */
		if (http_front_is_metadata(&h->front, h->port, url))
			return http_resource_metadata(h, c, method);
		/* the approval console: its files, and its API for a person
		 * signed in with a cookie (not a bearer token) */
		if (is_console(url))
			return http_console_begin(h, c, rq, url, method);
		rq->admin = strncmp(url, ADMIN_PREFIX, strlen(ADMIN_PREFIX)) == 0;
		if (rq->admin && !h->mcp->policy)
			return http_admin_reply(c, 404, "{\"error\":{\"code\":\"not_found\","
						"\"message\":\"the admin API needs a policy "
						"(serve --policy --state)\"}}");
		if (!rq->admin && strcmp(url, ENDPOINT) != 0 && strcmp(url, METRICS) != 0)
			return http_error(c, MHD_HTTP_NOT_FOUND, RPC_INVALID_REQUEST,
					  "Not Found: the MCP endpoint is /mcp");
		switch (mcp_http_identify(h->mcp, MHD_lookup_connection_value(c, MHD_HEADER_KIND,
									      "Authorization"),
					  rq->principal, sizeof(rq->principal), &rq->scopes, rq->why,
					  sizeof(rq->why))) {
		case -1:
			tg_gate_record_refusal(h->mcp->gate, "", url, "unauthorized", rq->why);
			return http_unauthorized(h, c, rq->why, bearer_presented(c));
		case -2: /* not refused: its check could not be made now */
			tg_gate_record_refusal(h->mcp->gate, "", url, "unavailable", rq->why);
			return http_unavailable(c, rq->why);
		case 1: /* a token holder: may keep its connection between requests */
			if ((why = http_admit_trust(h->admit, c, rq->principal)))
				return http_error(c, MHD_HTTP_TOO_MANY_REQUESTS, RPC_INVALID_REQUEST, why);
		}
		/* the counters: the gate says who may see them */
		if (strcmp(url, METRICS) == 0 && !tg_gate_may_observe(h->mcp->gate, rq->scopes))
			return http_error(c, MHD_HTTP_FORBIDDEN, RPC_INVALID_REQUEST,
					  "Forbidden: GET /metrics needs a token with the scope "
					  "metrics:scrape, or an approve scope (docs/METRICS.md)");
		if (strcmp(url, METRICS) == 0)
			return http_metrics_reply(h, c, method);
		if (rq->admin && cl && strtoull(cl, NULL, 10) > ADMIN_MAX_BODY)
			return http_admin_reply(c, 413, ADMIN_TOO_LARGE);
		if (cl && strtoull(cl, NULL, 10) > MCP_MAX_MESSAGE) {
			rq->too_large = 1;
			return http_error(c, MHD_HTTP_CONTENT_TOO_LARGE, RPC_INVALID_REQUEST,
					  "Payload Too Large: a message is at most 4194304 bytes");
		}
		return MHD_YES;
	}
	if (*upload_size) {
		if (!rq->too_large && rq->len + *upload_size > (rq->admin || rq->console
								? ADMIN_MAX_BODY
								: MCP_MAX_MESSAGE))
			rq->too_large = 1;
		if (!rq->too_large) {
			if (rq->len + *upload_size > rq->cap) {
				/* small first: a request of 1 KiB or more from
				 * malloc consolidates its free lists each time */
				size_t cap = rq->cap ? rq->cap : 512;
				char *b;

				while (cap < rq->len + *upload_size)
					cap *= 2;
				b = realloc(rq->body, cap);
				if (!b)
					return MHD_NO;
				rq->body = b;
				rq->cap = cap;
			}
			memcpy(rq->body + rq->len, upload, *upload_size);
			rq->len += *upload_size;
		}
		/* a body without a declared length that grows past the
		 * ceiling: the rest is read and dropped, up to as much again,
		 * to answer 413 at its end; a longer one loses the connection */
		if (rq->too_large && (rq->discarded += *upload_size) > MCP_MAX_MESSAGE)
			return MHD_NO;
		*upload_size = 0;
		return MHD_YES;
	}
	if (rq->console)
		return http_console_answer(h, c, rq, url, method);
	if (rq->too_large && rq->admin)
		return http_admin_reply(c, 413, ADMIN_TOO_LARGE);
	if (rq->too_large)
		return http_error(c, MHD_HTTP_CONTENT_TOO_LARGE, RPC_INVALID_REQUEST,
				  "Payload Too Large: a message is at most 4194304 bytes");
	if (rq->admin)
		return http_admin_answer(h, c, rq, url, method);
	if (strcmp(method, "POST") == 0)
		return do_post(h, c, rq, rq->principal);
	if (strcmp(method, "DELETE") == 0)
		return do_delete(h, c, rq->principal);
	if (strcmp(method, "GET") == 0)
		return http_get_stream(h, c, rq->principal);
	{
		struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"",
									 MHD_RESPMEM_PERSISTENT);
		enum MHD_Result res;

		if (!r)
			return MHD_NO;
		MHD_add_response_header(r, "Allow", "POST, GET, DELETE");
		res = MHD_queue_response(c, MHD_HTTP_METHOD_NOT_ALLOWED, r);
		MHD_destroy_response(r);
		return res;
	}
}

static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct tg_mcp_http *h = cls;
	struct request *rq = *con_cls;

	http_admit_done(h->admit, c, toe == MHD_REQUEST_TERMINATED_COMPLETED_OK);
	if (rq) {
		free(rq->body);
		free(rq->scopes);
		free(rq);
		*con_cls = NULL;
	}
}

/* Why libmicrohttpd could not listen on sa, which it says on stderr but
 * not to its caller: bind a socket of our own there as it does (with
 * SO_REUSEADDR), and its errno is the answer; 0 when that bind works. */
static int listen_errno(const struct sockaddr_in *sa)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), on = 1, e = 0;

	if (fd < 0)
		return errno;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) < 0 ||
	    bind(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0)
		e = errno;
	close(fd);
	return e;
}

static void http_free(struct tg_mcp_http *h)
{
	http_admit_free(h->admit);
	http_tls_free(h->tls);
	http_console_free(h);
	pthread_cond_destroy(&h->idle);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

/* Start libmicrohttpd on sa, with TLS when h has it. */
static struct MHD_Daemon *daemon_start(struct tg_mcp_http *h, const struct sockaddr_in *sa)
{
	struct MHD_Daemon *d;
	struct MHD_OptionItem tls[] = {
		{ MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)http_tls_priorities },
		{ MHD_OPTION_HTTPS_CERT_CALLBACK, 0, http_tls_callback() },
		{ MHD_OPTION_END, 0, NULL },
	};
	/* poll, not select: a descriptor past 1024 (long-lived streams make
	 * them many) must not refuse every new connection */
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION |
			 MHD_USE_POLL | MHD_USE_ERROR_LOG;

	if (h->tls)
		http_tls_lock(); /* a handshake waits until the daemon is listed */
	d = MHD_start_daemon(flags | (h->tls ? MHD_USE_TLS : 0), (uint16_t)h->port,
			     http_admit_accept, h->admit, handle, h,
			     MHD_OPTION_SOCK_ADDR, (const struct sockaddr *)sa,
			     MHD_OPTION_NOTIFY_COMPLETED, completed, h,
			     MHD_OPTION_NOTIFY_CONNECTION, http_admit_notify, h->admit,
			     MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)120,
			     /* a backstop: http_admit_accept refuses first, and counts it */
			     MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_MHD_LIMIT,
			     MHD_OPTION_ARRAY, h->tls ? tls : tls + 2, MHD_OPTION_END);
	if (h->tls) {
		if (d)
			http_tls_list(h->tls, d);
		http_tls_unlock();
	}
	return d;
}

int tg_mcp_http_start(struct tg_mcp *m, const char *addr, unsigned port,
		      const struct tg_mcp_http_options *opts, struct tg_mcp_http **out,
		      struct tg_error *err)
{
	struct tg_mcp_http *h;
	struct sockaddr_in sa;

	tg_error_clear(err);
	*out = NULL;
	if (tg_mhd_load("serve --http", err) < 0)
		return -1;
	h = calloc(1, sizeof(*h));
	if (!h)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (http_front_init(&h->front, addr, port, opts, m->tokens || m->policy, err) < 0 ||
	    (opts && opts->tls_cert && http_tls_new(opts->tls_cert, opts->tls_key, &h->tls,
						     err) < 0)) {
		free(h);
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, h->front.addr, &sa.sin_addr);
	h->mcp = m;
	h->port = port;
	h->max_idle = DEFAULT_MAX_IDLE;
	if (http_admit_new(m->http_header_timeout, m->tokens || m->policy, &h->front, &h->admit,
			   err) < 0) {
		http_tls_free(h->tls);
		free(h);
		return -1;
	}
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->idle, NULL);
	if (http_console_init(h, opts && opts->no_console, err) < 0) {
		http_free(h);
		return -1;
	}
	h->daemon = daemon_start(h, &sa);
	if (!h->daemon) {
		int e = listen_errno(&sa);

		http_free(h);
		if (e == EADDRINUSE)
			return tg_error_set(err, TG_ERR_SYSTEM, "--http %s:%u: %s:%u is in use "
					    "(EADDRINUSE): another process listens there; port 0 "
					    "picks a free one", addr, port, addr, port);
		if (e)
			return tg_error_sys(err, e, "--http %s:%u: cannot listen", addr, port);
		return tg_error_set(err, TG_ERR_SYSTEM, "--http %s:%u: cannot listen", addr, port);
	}
	if (port == 0) {
		const union MHD_DaemonInfo *i = MHD_get_daemon_info(h->daemon,
								     MHD_DAEMON_INFO_BIND_PORT);

		h->port = i ? i->port : 0;
	}
	mcp_watch(m, &h->watcher, http_changed, h);
	*out = h;
	return 0;
}

int tg_mcp_http_reload_tls(struct tg_mcp_http *h, struct tg_error *err)
{
	tg_error_clear(err);
	if (!h || !h->tls)
		return 0;
	return http_tls_reload(h->tls, err);
}

int tg_mcp_http_resource(const char *addr, unsigned port, const struct tg_mcp_http_options *o,
			 char *out, size_t len, struct tg_error *err)
{
	struct http_front f;

	tg_error_clear(err);
	out[0] = '\0';
	/* what would not start is said by tg_mcp_http_start, in its order
	 * (authentication first): here it is only not known */
	if (http_front_init(&f, addr, port, o, 1, err) < 0) {
		tg_error_clear(err);
		return 1;
	}
	if (!f.public_url[0] && port == 0)
		return 1;
	http_front_resource(&f, port, out, len);
	return 0;
}

void tg_mcp_http_url(const struct tg_mcp_http *h, char *out, size_t len)
{
	http_front_resource(&h->front, h->port, out, len);
}

unsigned tg_mcp_http_port(const struct tg_mcp_http *h)
{
	return h->port;
}

void tg_mcp_http_stop(struct tg_mcp_http *h)
{
	struct timespec deadline;

	if (!h)
		return;
	mcp_unwatch(h->mcp, &h->watcher);
	/* every session ends, its calls cancelled first, so that nothing
	 * holds a connection thread the daemon's stop waits for */
	pthread_mutex_lock(&h->lock);
	h->stopping = 1;
	/* subscriptions end gracefully, with their completion result */
	http_listeners_complete(h);
	http_sessions_end_all(h);
	/* the completion results go out before the connections close: a
	 * listener leaves the list once its reader read the last event (a
	 * client that reads nothing gets 2 s) */
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 2;
	while (h->listeners && pthread_cond_timedwait(&h->idle, &h->lock, &deadline) == 0)
		;
	pthread_mutex_unlock(&h->lock);
	MHD_stop_daemon(h->daemon);
	http_admit_free(h->admit); /* every connection closed */
	h->admit = NULL;
	/* the calls still running (SSE answers' threads) put their sessions
	 * back as they end; the last user frees each */
	pthread_mutex_lock(&h->lock);
	for (;;) {
		http_sessions_expire(h, time(NULL));
		if (!h->sessions)
			break;
		pthread_cond_wait(&h->idle, &h->lock);
	}
	pthread_mutex_unlock(&h->lock);
	http_free(h);
}
