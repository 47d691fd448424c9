/*
 * The approval console on the Streamable HTTP listener (docs/CONSOLE.md):
 * its static files under /console/ (compiled in, console_files.h), and
 * its API under /console/api/, for a person signed in with a session
 * cookie: sign-in with an approver's token, the tickets they may decide,
 * a ticket, the decisions and rollbacks (the admin API's, through
 * http_admin_call, so the gate decides and records them the same way),
 * and a stream of server-sent events that says when the list changed.
 *
 * It owns the console's HTTP: the cookie, the CSRF check and Origin rule
 * for every change, the security headers of every answer. It never
 * decides who may approve what (the gate does, as for /admin/), never
 * sends a token back to the browser, and never answers a change whose
 * CSRF token or Origin is missing or another's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mcp/console_files.h"
#include "mcp/console_int.h"
#include "mcp/http_int.h"
#include "util/sodium.h"

#define PREFIX "/console"
#define API PREFIX "/api/"
#define CSP "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " \
	    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
#define CONSOLE_MAX_STREAMS 64 /* console event streams open at once */
#define CONSOLE_MAX_STREAMS_PER_PRINCIPAL 8 /* of which one principal's */
#define STREAM_WAIT_MS 1000  /* a stream's wait for a ticket's move, at most */
#define STREAM_KEEPALIVE 15  /* seconds: a comment on a quiet stream */

/* Every answer's headers: nothing framed, sniffed, referred or run but
 * the console's own script; over TLS, HSTS. */
static void secure(const struct tg_mcp_http *h, struct MHD_Response *r)
{
	MHD_add_response_header(r, "Content-Security-Policy", CSP);
	MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
	MHD_add_response_header(r, "Referrer-Policy", "no-referrer");
	MHD_add_response_header(r, "X-Frame-Options", "DENY");
	MHD_add_response_header(r, "Cross-Origin-Opener-Policy", "same-origin");
	MHD_add_response_header(r, "Cross-Origin-Resource-Policy", "same-origin");
	if (h->front.https) /* its own TLS, or a proxy's: the URL clients use */
		MHD_add_response_header(r, "Strict-Transport-Security", "max-age=31536000");
}

/* The session cookie's name: the __Host- prefix (Secure, Path=/, no
 * Domain) when the URL clients use is https. */
static const char *cookie_name(const struct tg_mcp_http *h)
{
	return h->front.https ? "__Host-tg_console" : "tg_console";
}

static enum MHD_Result reply(struct tg_mcp_http *h, struct MHD_Connection *c, unsigned status,
			     const char *json, const char *cookie)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(json), (void *)json,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	secure(h, r);
	MHD_add_response_header(r, "Content-Type", "application/json");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (cookie)
		MHD_add_response_header(r, "Set-Cookie", cookie);
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result fail(struct tg_mcp_http *h, struct MHD_Connection *c, unsigned status,
			    const char *code, const char *message)
{
	json_t *j = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", message);
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	enum MHD_Result rc = reply(h, c, status, text ? text : "{}", NULL);

	json_decref(j);
	free(text);
	return rc;
}

/* A file of the console: index.html for the folder itself. */
static enum MHD_Result serve_file(struct tg_mcp_http *h, struct MHD_Connection *c,
				  const char *name, const char *method)
{
	const struct console_file *f;
	const char *inm = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "If-None-Match");
	struct MHD_Response *r;
	enum MHD_Result rc;
	int same;

	for (f = console_files; f->name && strcmp(f->name, *name ? name : "index.html"); f++)
		;
	if (!f->name)
		return fail(h, c, MHD_HTTP_NOT_FOUND, "not_found", "no such file of the console");
	if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
		return fail(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed", "GET");
	same = inm && strcmp(inm, f->etag) == 0;
	r = MHD_create_response_from_buffer(same ? 0 : f->len, same ? (void *)"" : (void *)f->data,
					    MHD_RESPMEM_PERSISTENT);
	if (!r)
		return MHD_NO;
	secure(h, r);
	MHD_add_response_header(r, "Content-Type", f->type);
	MHD_add_response_header(r, "ETag", f->etag);
	MHD_add_response_header(r, "Cache-Control", "no-cache");
	rc = MHD_queue_response(c, same ? MHD_HTTP_NOT_MODIFIED : MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

/* A change (anything but GET) must come from the console's own page:
 * its Origin sent (http_front_refused has checked it is this server's)
 * and, when the browser says, from the same origin. NULL, or why not. */
static const char *not_from_page(struct MHD_Connection *c)
{
	const char *site = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Sec-Fetch-Site");
	const char *type = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");

	if (!MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin"))
		return "a change must carry the Origin header of the console's page";
	if (site && strcmp(site, "same-origin") != 0)
		return "a change must come from the console's own page (Sec-Fetch-Site)";
	/* a form of another site cannot send this type without a preflight,
	 * which nothing here answers; the type itself, not one it begins
	 * (application/jsonx), with parameters at most */
	if (!type || strncmp(type, "application/json", 16) != 0 ||
	    (type[16] && type[16] != ';' && type[16] != ' ' && type[16] != '\t'))
		return "a change is sent as application/json";
	return NULL;
}

/* The person behind the session cookie, identified again by the token
 * they signed in with (its expiry and revocation count now): rq's
 * principal and scopes. With csrf (a change), the page's X-CSRF-Token
 * must be the session's. 0, or the answer already queued (*res). */
static int who(struct tg_mcp_http *h, struct MHD_Connection *c, struct request *rq, int csrf,
	       enum MHD_Result *res)
{
	const char *id = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, cookie_name(h));
	const char *sent = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-CSRF-Token");
	char *token = NULL;
	struct tg_error err;
	int rc;

	rc = id ? console_session_get(h->console, id, csrf ? (sent ? sent : "") : NULL,
				      (int64_t)time(NULL), &token, NULL)
		: 1;
	if (rc == 0 && tg_gate_identify(h->mcp->gate, token, strlen(token), rq->principal,
					sizeof(rq->principal), &rq->scopes, &err) < 0) {
		console_session_close(h->console, id);
		tg_gate_record_refusal(h->mcp->gate, "", PREFIX, "unauthorized", err.msg);
		rc = 3;
	}
	console_token_free(token);
	if (rc == 0)
		return 0;
	*res = rc == 2 ? fail(h, c, MHD_HTTP_FORBIDDEN, "csrf", "the X-CSRF-Token header is "
			      "missing or not this session's: reload the console")
	     : rc < 0 ? fail(h, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "out of memory")
		      : fail(h, c, MHD_HTTP_UNAUTHORIZED, "unauthorized", rc == 3
			     ? "the token this session was signed in with no longer holds: "
			       "sign in again"
			     : "sign in first (no session, or it ended)");
	return -1;
}

/* ---- signing in at an identity provider ------------------------------------------ */

/* The console's origin (scheme://host[:port]), as clients reach it. */
static void origin_of(const struct tg_mcp_http *h, char *out, size_t len)
{
	const char *path;

	http_front_resource(&h->front, h->port, out, len);
	path = strstr(out, "://");
	path = path ? strchr(path + 3, '/') : NULL;
	if (path)
		out[path - out] = '\0';
}

/* The sign-in's binding cookie: where the URL clients use is https, the
 * __Host- prefix (Secure, Path=/, no Domain), so that no sibling domain
 * nor plain http can plant an attacker's binding beside a state it began
 * (a login CSRF); else only the callback sees it. What follows the value. */
static const char *login_cookie(const struct tg_mcp_http *h)
{
	return h->front.https ? "__Host-tg_login" : "tg_login";
}

static const char *login_cookie_attrs(const struct tg_mcp_http *h)
{
	return h->front.https ? "Path=/; HttpOnly; SameSite=Lax; Secure"
			      : "Path=" API "login/callback; HttpOnly; SameSite=Lax";
}

/* A redirect (status) to location, setting the cookies not NULL. */
static enum MHD_Result redirect(struct tg_mcp_http *h, struct MHD_Connection *c, unsigned status,
				const char *location, const char *cookie, const char *cookie2)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(0, (void *)"",
								 MHD_RESPMEM_PERSISTENT);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	secure(h, r);
	MHD_add_response_header(r, "Location", location);
	MHD_add_response_header(r, "Cache-Control", "no-store");
	if (cookie)
		MHD_add_response_header(r, "Set-Cookie", cookie);
	if (cookie2)
		MHD_add_response_header(r, "Set-Cookie", cookie2);
	rc = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return rc;
}

/* GET login?idp=N: to the provider's authorization page, the flow's
 * binding in a cookie (login_cookie; Lax: the provider's redirect back is
 * a top-level navigation from its site). A start that fails keeps no
 * slot. */
static enum MHD_Result login_start(struct tg_mcp_http *h, struct MHD_Connection *c)
{
	const char *arg = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "idp");
	char origin[HTTP_MAX_URL + HTTP_MAX_AUTHORITY + 16], back[sizeof(origin) + 32];
	char state[CONSOLE_HEX], binding[CONSOLE_HEX], verifier[CONSOLE_VERIFIER], cookie[200];
	char *end = NULL, *url = NULL;
	unsigned long idp = arg ? strtoul(arg, &end, 10) : 0;
	struct tg_error err;
	enum MHD_Result rc;

	if (!arg || !*arg || *end || idp > 64)
		return fail(h, c, MHD_HTTP_BAD_REQUEST, "bad_request", "login?idp=N: a provider of "
			    "GET /console/api/login/providers");
	origin_of(h, origin, sizeof(origin));
	snprintf(back, sizeof(back), "%s" API "login/callback/%lu", origin, idp);
	console_login_begin(h->console, idp, http_front_client(&h->front, c), (int64_t)time(NULL),
			    state, binding, verifier);
	if (tg_gate_login_url(h->mcp->gate, idp, back, state, verifier, &url, &err) < 0) {
		sodium_memzero(verifier, sizeof(verifier));
		console_login_drop(h->console, state);
		tg_gate_record_refusal(h->mcp->gate, "", PREFIX "/api/login", "login_failed",
				       err.msg);
		return fail(h, c, MHD_HTTP_BAD_GATEWAY, "provider", err.msg);
	}
	sodium_memzero(verifier, sizeof(verifier));
	snprintf(cookie, sizeof(cookie), "%s=%s; %s; Max-Age=%d", login_cookie(h), binding,
		 login_cookie_attrs(h), CONSOLE_LOGIN_S);
	rc = redirect(h, c, MHD_HTTP_FOUND, url, cookie, NULL);
	free(url);
	return rc;
}

/* A sign-in refused: recorded with why, and to the sign-in page with the
 * reason's code (never the provider's words, which the page would show). */
static enum MHD_Result login_refused(struct tg_mcp_http *h, struct MHD_Connection *c,
				     const char *reason, const char *why, const char *clear)
{
	char to[64];

	tg_gate_record_refusal(h->mcp->gate, "", PREFIX "/api/login", "unauthorized", why);
	snprintf(to, sizeof(to), PREFIX "/#/signin/%s", reason);
	return redirect(h, c, MHD_HTTP_FOUND, to, clear, NULL);
}

/* GET login/callback/N?code&state[&iss]: the code exchanged for an
 * access token for this gateway, which must then sign in as any token
 * does; to the console, signed in, or to its sign-in page with the
 * reason. Each provider has a redirect URI of its own (N, its place in
 * the policy's identity_providers), and a code comes back to the one of
 * the provider the sign-in began with, or is not sent at all: with the
 * iss check (RFC 9207) for providers that name themselves, the mix-up
 * defences of RFC 9700 4.4.2. */
static enum MHD_Result login_back(struct tg_mcp_http *h, struct MHD_Connection *c, size_t at)
{
	const char *code = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "code");
	const char *state = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "state");
	const char *iss = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "iss");
	const char *binding = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, login_cookie(h));
	char origin[HTTP_MAX_URL + HTTP_MAX_AUTHORITY + 16], back[sizeof(origin) + 32];
	char verifier[CONSOLE_VERIFIER], principal[MCP_MAX_PRINCIPAL], id[CONSOLE_HEX];
	char csrf[CONSOLE_HEX], cookie[200], clear[160], why[160], *token = NULL, *scopes = NULL;
	struct tg_error err;
	size_t idp;
	int rc;

	snprintf(clear, sizeof(clear), "%s=; %s; Max-Age=0", login_cookie(h),
		 login_cookie_attrs(h));
	if (!state || !binding ||
	    console_login_take(h->console, state, binding, (int64_t)time(NULL), &idp, verifier))
		return login_refused(h, c, "state", "a sign-in came back that this browser did not "
				     "begin, or too late", clear);
	if (idp != at) {
		sodium_memzero(verifier, sizeof(verifier));
		snprintf(why, sizeof(why), "a sign-in begun with provider %zu came back to provider "
			 "%zu's redirect URI (a mix-up, RFC 9700 4.4): its code is not sent", idp, at);
		return login_refused(h, c, "token", why, clear);
	}
	if (!code) {
		sodium_memzero(verifier, sizeof(verifier));
		return login_refused(h, c, "provider", "the provider sent no code (the person "
				     "declined, or it refused)", clear);
	}
	origin_of(h, origin, sizeof(origin));
	snprintf(back, sizeof(back), "%s" API "login/callback/%zu", origin, idp);
	rc = tg_gate_login_token(h->mcp->gate, idp, code, iss, verifier, back, &token, &err);
	sodium_memzero(verifier, sizeof(verifier));
	if (rc < 0)
		return login_refused(h, c, "token", err.msg, clear);
	if (tg_gate_identify(h->mcp->gate, token, strlen(token), principal, sizeof(principal),
			     &scopes, &err) < 0) {
		console_token_free(token);
		return login_refused(h, c, "identity", err.msg, clear);
	}
	free(scopes);
	rc = console_session_open(h->console, principal, token, strlen(token), (int64_t)time(NULL),
				  id, csrf);
	console_token_free(token);
	if (rc != 0)
		return login_refused(h, c, "busy", rc < 0 ? "out of memory"
				     : "too many console sessions are open", clear);
	tg_gate_record_event(h->mcp->gate, principal, PREFIX "/api/login", "console sign-in",
			     NULL);
	snprintf(cookie, sizeof(cookie), "%s=%s; Path=%s; HttpOnly; SameSite=Strict%s",
		 cookie_name(h), id, h->front.https ? "/" : PREFIX,
		 h->front.https ? "; Secure" : "");
	return redirect(h, c, MHD_HTTP_FOUND, PREFIX "/", cookie, clear);
}

/* GET login/providers, login?idp=N, login/callback/N. */
static enum MHD_Result console_login_answer(struct tg_mcp_http *h, struct MHD_Connection *c,
					    const char *rest)
{
	const char *n = strncmp(rest, "login/callback/", 15) == 0 ? rest + 15 : NULL;
	char *list, *end = NULL;
	unsigned long at = n && *n >= '0' && *n <= '9' ? strtoul(n, &end, 10) : 0;
	enum MHD_Result rc;

	if (strcmp(rest, "login/providers") == 0) {
		list = tg_gate_login_providers(h->mcp->gate);
		rc = list ? reply(h, c, MHD_HTTP_OK, list, NULL)
			  : fail(h, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal", "out of memory");
		free(list);
		return rc;
	}
	if (strcmp(rest, "login") == 0)
		return login_start(h, c);
	if (end && !*end && end - n <= 2)
		return login_back(h, c, at);
	return fail(h, c, MHD_HTTP_NOT_FOUND, "not_found", "login/providers, login?idp=N, "
		    "login/callback/N");
}

enum MHD_Result http_console_refused(struct tg_mcp_http *h, struct MHD_Connection *c,
				     const char *why)
{
	return fail(h, c, MHD_HTTP_FORBIDDEN, "forbidden", why);
}

enum MHD_Result http_console_begin(struct tg_mcp_http *h, struct MHD_Connection *c,
				   struct request *rq, const char *url, const char *method)
{
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
	const char *why;
	enum MHD_Result res;
	int change = strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0;

	if (!h->console)
		return fail(h, c, MHD_HTTP_NOT_FOUND, "not_found", h->mcp->policy
			    ? "the console is off (serve --no-console)"
			    : "the console needs a policy (serve --policy FILE --state DIR)");
	if (strcmp(url, PREFIX) == 0)
		return redirect(h, c, MHD_HTTP_MOVED_PERMANENTLY, PREFIX "/", NULL, NULL);
	if (strncmp(url, API, strlen(API)) != 0)
		return serve_file(h, c, url + strlen(PREFIX "/"), method);
	if (change && (why = not_from_page(c)))
		return fail(h, c, MHD_HTTP_FORBIDDEN, "forbidden", why);
	if (cl && strtoull(cl, NULL, 10) > ADMIN_MAX_BODY)
		return fail(h, c, MHD_HTTP_CONTENT_TOO_LARGE, "too_large",
			    "a request to the console is at most 65536 bytes");
	rq->console = 1;
	/* signing in, with a token or at a provider, is done without a session */
	if (strcmp(url, API "session") == 0 && strcmp(method, "POST") == 0)
		return MHD_YES;
	if (!change && strncmp(url, API "login", strlen(API "login")) == 0)
		return console_login_answer(h, c, url + strlen(API));
	if (who(h, c, rq, change, &res) < 0)
		return res;
	if ((why = http_admit_trust(h->admit, c, rq->principal)))
		return fail(h, c, MHD_HTTP_TOO_MANY_REQUESTS, "too_many", why);
	return MHD_YES;
}

/* {"principal", "csrf"}: who is signed in, and the token the page sends
 * with each change. */
static enum MHD_Result who_am_i(struct tg_mcp_http *h, struct MHD_Connection *c,
				const char *principal, const char *csrf, const char *cookie)
{
	json_t *j = json_pack("{s:s,s:s}", "principal", principal, "csrf", csrf);
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;
	enum MHD_Result rc = text ? reply(h, c, MHD_HTTP_OK, text, cookie)
				  : fail(h, c, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal",
					 "out of memory");

	json_decref(j);
	free(text);
	return rc;
}

/* POST /console/api/session {"token": "..."}: a session for the token's
 * principal, its cookie set; the answer holds the CSRF token the page
 * sends with each change. */
static enum MHD_Result sign_in(struct tg_mcp_http *h, struct MHD_Connection *c,
			       struct request *rq)
{
	json_t *doc = rq->len ? json_loadb(rq->body, rq->len, 0, NULL) : NULL;
	const char *token = json_string_value(json_object_get(doc, "token"));
	char id[CONSOLE_HEX], csrf[CONSOLE_HEX], cookie[200], body[256];
	struct tg_error err;
	int rc;

	if (!token || !*token) { /* its length: the gate refuses past TG_MAX_TOKEN */
		json_decref(doc);
		return fail(h, c, MHD_HTTP_BAD_REQUEST, "bad_request",
			    "sign in with {\"token\": \"...\"}: an approver's token");
	}
	if (tg_gate_identify(h->mcp->gate, token, strlen(token), rq->principal,
			     sizeof(rq->principal), &rq->scopes, &err) < 0) {
		json_decref(doc);
		tg_gate_record_refusal(h->mcp->gate, "", PREFIX "/api/session", "unauthorized",
				       err.msg);
		snprintf(body, sizeof(body), "That token does not sign you in: %.180s", err.msg);
		return fail(h, c, MHD_HTTP_UNAUTHORIZED, "unauthorized", body);
	}
	/* a new sign-in ends the session its cookie named, if any */
	console_session_close(h->console, MHD_lookup_connection_value(c, MHD_COOKIE_KIND,
								      cookie_name(h)));
	rc = console_session_open(h->console, rq->principal, token, strlen(token),
				  (int64_t)time(NULL), id, csrf);
	json_decref(doc);
	if (rc != 0)
		return fail(h, c, rc < 0 ? MHD_HTTP_INTERNAL_SERVER_ERROR : MHD_HTTP_SERVICE_UNAVAILABLE,
			    "unavailable", rc < 0 ? "out of memory"
			    : "too many console sessions are open: try again later");
	tg_gate_record_event(h->mcp->gate, rq->principal, PREFIX "/api/session", "console sign-in",
			     NULL);
	snprintf(cookie, sizeof(cookie), "%s=%s; Path=%s; HttpOnly; SameSite=Strict%s",
		 cookie_name(h), id, h->front.https ? "/" : PREFIX,
		 h->front.https ? "; Secure" : "");
	return who_am_i(h, c, rq->principal, csrf, cookie);
}

/* /console/api/session: GET who is signed in (and the CSRF token, for a
 * page reloaded), DELETE sign out. */
static enum MHD_Result session(struct tg_mcp_http *h, struct MHD_Connection *c,
			       struct request *rq, const char *method)
{
	const char *id = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, cookie_name(h));
	char csrf[CONSOLE_HEX], cookie[160], *token = NULL;

	if (strcmp(method, "POST") == 0)
		return sign_in(h, c, rq);
	if (strcmp(method, "DELETE") == 0) {
		console_session_close(h->console, id);
		snprintf(cookie, sizeof(cookie), "%s=; Path=%s; HttpOnly; SameSite=Strict; "
			 "Max-Age=0%s", cookie_name(h), h->front.https ? "/" : PREFIX,
			 h->front.https ? "; Secure" : "");
		return reply(h, c, MHD_HTTP_OK, "{}", cookie);
	}
	if (strcmp(method, "GET") != 0)
		return fail(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed",
			    "GET, POST or DELETE");
	if (console_session_get(h->console, id, NULL, (int64_t)time(NULL), &token, csrf) != 0)
		return fail(h, c, MHD_HTTP_UNAUTHORIZED, "unauthorized", "sign in first");
	console_token_free(token);
	return who_am_i(h, c, rq->principal, csrf, NULL);
}

/* ---- the event stream --------------------------------------------------------- */

/* GET /console/api/events: "tickets" when the pending tickets the person
 * may see changed (their list, as GET /admin/tickets gives it), a
 * comment when quiet; it ends when the server stops, or when the
 * session's token no longer holds. */
struct console_watch {
	struct tg_mcp_http *h;
	struct console_watch *next;  /* h->console_watches */
	char principal[MCP_MAX_PRINCIPAL];
	char *scopes;
	char id[CONSOLE_HEX];        /* the session's */
	char *last;                  /* the list last sent */
	uint64_t seen;               /* the ticket events it was made after */
	time_t quiet_since;
};

static void watch_free(void *cls)
{
	struct console_watch *w = cls, **p;

	pthread_mutex_lock(&w->h->lock);
	for (p = &w->h->console_watches; *p && *p != w; p = &(*p)->next)
		;
	if (*p)
		*p = w->next;
	pthread_mutex_unlock(&w->h->lock);
	free(w->scopes);
	free(w->last);
	free(w);
}

/* w listed among the streams open: 0; or the status refusing it, *why
 * said: the console's share is taken (503), or the person's (429: one
 * principal, even one that decides nothing, must not take every stream
 * and leave the approvers' lists dead). */
static unsigned watch_admit(struct tg_mcp_http *h, struct console_watch *w, const char **why)
{
	const struct console_watch *o;
	unsigned all = 0, mine = 0, status = 0;

	pthread_mutex_lock(&h->lock);
	for (o = h->console_watches; o; o = o->next) {
		all++;
		mine += strcmp(o->principal, w->principal) == 0;
	}
	if (all >= CONSOLE_MAX_STREAMS) {
		status = MHD_HTTP_SERVICE_UNAVAILABLE;
		*why = "too many console streams are open (64): try again later";
	} else if (mine >= CONSOLE_MAX_STREAMS_PER_PRINCIPAL) {
		status = MHD_HTTP_TOO_MANY_REQUESTS;
		*why = "this principal has 8 live lists open: close a console page";
	} else {
		w->next = h->console_watches;
		h->console_watches = w;
	}
	pthread_mutex_unlock(&h->lock);
	return status;
}

/* The list as the person may see it now; NULL when the session ended or
 * its token no longer holds (expired, revoked). */
static char *pending_list(struct console_watch *w)
{
	char *out = NULL, *token = NULL, principal[MCP_MAX_PRINCIPAL];
	struct tg_error err;
	int status;

	if (console_session_peek(w->h->console, w->id, (int64_t)time(NULL), &token))
		return NULL;
	free(w->scopes);
	w->scopes = NULL;
	status = tg_gate_identify(w->h->mcp->gate, token, strlen(token), principal,
				  sizeof(principal), &w->scopes, &err);
	console_token_free(token);
	if (status < 0 || strcmp(principal, w->principal) != 0)
		return NULL;
	status = tg_gate_admin(w->h->mcp->gate, w->principal, w->scopes ? w->scopes : "", "GET",
			       "/admin/tickets", NULL, 0, &out);
	if (status != 200) {
		free(out);
		return NULL;
	}
	return out;
}

static ssize_t watch_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct console_watch *w = cls;

	(void)pos;
	for (;;) {
		char *now;
		int n;

		if (w->h->stopping)
			return MHD_CONTENT_READER_END_OF_STREAM;
		/* the list, and the session's token checked, each time a
		 * ticket moved and at least once a second */
		now = pending_list(w);
		if (!now)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (!w->last || strcmp(now, w->last) != 0) {
			n = snprintf(buf, max, "event: tickets\ndata: %s\n\n", now);
			/* more than the buffer: say only that it changed */
			if (n < 0 || (size_t)n >= max)
				n = snprintf(buf, max, "event: tickets\ndata: {\"changed\":true}\n\n");
			free(w->last);
			w->last = now;
			w->quiet_since = time(NULL);
			return n;
		}
		free(now);
		if (time(NULL) - w->quiet_since >= STREAM_KEEPALIVE) {
			w->quiet_since = time(NULL);
			return snprintf(buf, max, ":\n\n");
		}
		/* woken by the gate's watch within about 250 ms of a ticket's
		 * move, in this process or another (docs/STORE.md) */
		w->seen = tg_gate_ticket_events_wait(w->h->mcp->gate, w->seen, STREAM_WAIT_MS);
	}
}

static enum MHD_Result events(struct tg_mcp_http *h, struct MHD_Connection *c,
			      struct request *rq)
{
	const char *id = MHD_lookup_connection_value(c, MHD_COOKIE_KIND, cookie_name(h));
	struct console_watch *w = calloc(1, sizeof(*w));
	struct MHD_Response *r;
	enum MHD_Result rc;
	const char *why = NULL;
	unsigned status;

	if (!w)
		return MHD_NO;
	w->h = h;
	snprintf(w->principal, sizeof(w->principal), "%s", rq->principal);
	snprintf(w->id, sizeof(w->id), "%s", id ? id : "");
	w->quiet_since = time(NULL);
	if ((status = watch_admit(h, w, &why))) {
		free(w);
		return fail(h, c, status, "unavailable", why);
	}
	w->scopes = rq->scopes ? strdup(rq->scopes) : NULL;
	w->seen = tg_gate_ticket_events_wait(h->mcp->gate, 0, 0);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 1 << 20, watch_read, w,
					      watch_free);
	if (!r) {
		watch_free(w);
		return MHD_NO;
	}
	secure(h, r);
	MHD_add_response_header(r, "Content-Type", "text/event-stream");
	MHD_add_response_header(r, "Cache-Control", "no-store");
	MHD_add_response_header(r, "X-Accel-Buffering", "no");
	rc = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return rc;
}

/* ---- the rest: the admin API's, as the person signed in ----------------------- */

enum MHD_Result http_console_answer(struct tg_mcp_http *h, struct MHD_Connection *c,
				    struct request *rq, const char *url, const char *method)
{
	const char *q = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "state");
	const char *rest = url + strlen(API);
	char path[512], *out = NULL;
	int status;
	enum MHD_Result res;

	if (rq->too_large)
		return fail(h, c, MHD_HTTP_CONTENT_TOO_LARGE, "too_large",
			    "a request to the console is at most 65536 bytes");
	if (strcmp(rest, "session") == 0)
		return session(h, c, rq, method);
	if (strcmp(rest, "events") == 0)
		return strcmp(method, "GET") == 0
			       ? events(h, c, rq)
			       : fail(h, c, MHD_HTTP_METHOD_NOT_ALLOWED, "method_not_allowed", "GET");
	if (strncmp(rest, "tickets", 7) != 0 && strncmp(rest, "calls/", 6) != 0 &&
	    strcmp(rest, "rollbacks") != 0)
		return fail(h, c, MHD_HTTP_NOT_FOUND, "not_found", "the console's API: session, "
			    "events, tickets, tickets/ID, tickets/ID/{approve,reject,cancel}, "
			    "calls/ID/rollback, rollbacks");
	snprintf(path, sizeof(path), "/admin/%.400s%s%.64s", rest, q ? "?state=" : "", q ? q : "");
	status = http_admin_call(h, rq->principal, rq->scopes, method, path, rq->body, rq->len,
				 &out);
	res = reply(h, c, (unsigned)status, out ? out : "{}", NULL);
	free(out);
	return res;
}

int tg_mcp_http_console_url(const struct tg_mcp_http *h, char *out, size_t len)
{
	char origin[HTTP_MAX_URL + HTTP_MAX_AUTHORITY + 16];

	if (!h->console) {
		if (len)
			*out = '\0';
		return 0;
	}
	origin_of(h, origin, sizeof(origin));
	snprintf(out, len, "%s" PREFIX "/", origin);
	return 1;
}

int http_console_init(struct tg_mcp_http *h, int off, struct tg_error *err)
{
	if (off || !h->mcp->policy)
		return 0;
	h->console = console_sessions_new();
	if (!h->console)
		return tg_error_set(err, TG_ERR_NOMEM, "the console's sessions: out of memory");
	return 0;
}

void http_console_free(struct tg_mcp_http *h)
{
	console_sessions_free(h->console);
	h->console = NULL;
}
