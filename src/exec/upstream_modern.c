/*
 * The runner's side of the protocol eras (docs/UPSTREAMS.md, "Protocol
 * eras"): which era a server is spoken to in, and what the 2026-07-28
 * era asks of a client that the session era did not.
 *
 *   - The handshake: server/discover first (unless the declaration says
 *     2025-11-25, or this runner learnt that the server is a session-era
 *     one), initialize when the server does not answer it as a 2026-07-28
 *     server. The client capabilities declared are the relay's.
 *   - Change notifications: a 2026-07-28 server has no session to send
 *     them on; a long-lived server is asked for them with one
 *     subscriptions/listen request kept open while it is up (opened again
 *     when it ends, never more often than UPSTREAM_MODERN_LISTEN_MS).
 *   - Multi round-trip requests: a tools/call answered input_required has
 *     its inputRequests asked of the call's client, as a session-era
 *     server's own requests are (the relay's rules), and is sent again
 *     with the answers and the server's requestState, at most
 *     UPSTREAM_MODERN_ROUNDS times.
 *
 * Never: send the server a request of the other era, ask the caller's
 * client what the declaration does not relay, keep a server's
 * requestState but for the retry it was given for, or ask after the call
 * was cancelled or its time ran out.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "exec/upstream_run_int.h"
#include "toolgate/version.h"
#include "util/log.h"

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The discover probe's bound in auto: a session-era server may keep a
 * request it does not know before initialize unanswered */
static int probe_ms(const struct upstream_run *r, int timeout_ms)
{
	return r->u->protocol == TG_UPSTREAM_PROTOCOL_AUTO && timeout_ms > UPSTREAM_MODERN_PROBE_MS
	       ? UPSTREAM_MODERN_PROBE_MS : timeout_ms;
}

int run_handshake(struct upstream_run *r, struct gen *g, int timeout_ms, struct tg_error *err)
{
	json_t *caps = upstream_relay_capabilities(r->u->relay);
	enum tg_upstream_protocol p = r->u->protocol;
	uint64_t start = now_ms(), spent;
	char why[256];
	int era, rc = 0;

	if (!caps)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	pthread_mutex_lock(&r->lock);
	era = r->era;
	pthread_mutex_unlock(&r->lock);
	if (p == TG_UPSTREAM_PROTOCOL_MODERN ||
	    (p == TG_UPSTREAM_PROTOCOL_AUTO && era == RUN_ERA_UNKNOWN)) {
		rc = upstream_client_discover(g->client, "toolgate", TOOLGATE_VERSION, caps,
					      probe_ms(r, timeout_ms), why, sizeof(why), err);
		if (rc == 0 && p == TG_UPSTREAM_PROTOCOL_MODERN)
			rc = tg_error_set(err, TG_ERR_INVALID, "the server does not speak "
					  "2026-07-28, which its declaration's protocol names (%s); "
					  "declare \"protocol\": \"auto\" to speak its own", why);
		if (rc < 0 && p == TG_UPSTREAM_PROTOCOL_AUTO) {
			/* it broke on a request it did not know: the next start
			 * tries initialize at once */
			pthread_mutex_lock(&r->lock);
			r->era = RUN_ERA_SESSION_TRY;
			pthread_mutex_unlock(&r->lock);
		}
	}
	if (rc == 0) {
		/* what the probe left of the handshake's time */
		spent = now_ms() - start;
		rc = upstream_client_initialize(g->client, "toolgate", TOOLGATE_VERSION, caps,
						spent + 1 < (uint64_t)timeout_ms
						? timeout_ms - (int)spent : 1, err);
		pthread_mutex_lock(&r->lock);
		/* a session-era server is not asked discover again by this
		 * runner; one that refused initialize too is, at its next start */
		r->era = rc == 0 ? RUN_ERA_SESSION : RUN_ERA_UNKNOWN;
		pthread_mutex_unlock(&r->lock);
	}
	json_decref(caps);
	if (rc >= 0) {
		pthread_mutex_lock(&r->lock);
		snprintf(r->protocol, sizeof(r->protocol), "%s", upstream_client_protocol(g->client));
		pthread_mutex_unlock(&r->lock);
	}
	return rc < 0 ? -1 : 0;
}

void upstream_run_protocol(struct upstream_run *r, char *out, size_t size)
{
	pthread_mutex_lock(&r->lock);
	snprintf(out, size, "%s", r->protocol);
	pthread_mutex_unlock(&r->lock);
}

/* The subscription's filter: each list whose capability says it changes. */
static json_t *listen_filter(struct upstream_client *c)
{
	static const struct {
		const char *cap, *field;
	} kinds[] = {
		{ "tools", "toolsListChanged" },
		{ "resources", "resourcesListChanged" },
		{ "prompts", "promptsListChanged" },
	};
	json_t *caps = upstream_client_capabilities(c), *f = json_object();
	size_t i;

	for (i = 0; f && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (json_is_true(json_object_get(json_object_get(caps, kinds[i].cap),
						 "listChanged")) &&
		    json_object_set_new(f, kinds[i].field, json_true()) < 0) {
			json_decref(f);
			return NULL;
		}
	if (f && !json_object_size(f)) {
		json_decref(f);
		return NULL;
	}
	return f;
}

void run_listen(struct upstream_run *r, struct gen *g)
{
	json_t *filter, *params, *res = NULL;
	struct tg_error err;
	int rc;

	if (!upstream_client_modern(g->client) || g->listen_off)
		return;
	if (g->listen_id > 0) {
		if (!upstream_client_settled(g->client, g->listen_id, 0))
			return;
		/* it ended: the server's end, its own bound, or a refusal */
		rc = upstream_client_wait(g->client, g->listen_id, 0, &res, &err);
		g->listen_id = 0;
		if (rc > 0 && json_integer_value(json_object_get(res, "code")) == -32601) {
			g->listen_off = 1;
			tg_log(TG_LOG_INFO, "upstream %s: the server has no subscriptions/listen: "
			       "changes to its lists are seen when it starts again", r->u->name);
		}
		json_decref(res);
		g->listen_at = now_ms() + UPSTREAM_MODERN_LISTEN_MS;
		return;
	}
	if (now_ms() < g->listen_at)
		return;
	filter = listen_filter(g->client);
	if (!filter) {
		g->listen_off = 1; /* nothing of it changes */
		return;
	}
	params = json_pack("{s:o}", "notifications", filter);
	g->listen_id = params ? upstream_client_send(g->client, "subscriptions/listen", params,
						     &err) : -1;
	json_decref(params);
	if (g->listen_id < 0) {
		g->listen_id = 0;
		g->listen_at = now_ms() + UPSTREAM_MODERN_LISTEN_MS;
	}
}

/* ---- multi round-trip requests ---------------------------------------- */

/* What stops the asking: the caller's cancel_fd or the call's deadline,
 * watched by a thread of its own while the call's thread asks. */
struct watch {
	int cancel_fd, done[2];
	uint64_t deadline;
	volatile int stop;
	pthread_t t;
};

static void *watch_main(void *arg)
{
	struct watch *w = arg;
	struct pollfd p[2] = { { w->done[0], POLLIN, 0 }, { w->cancel_fd, POLLIN, 0 } };
	uint64_t now;
	int n;

	for (;;) {
		now = now_ms();
		if (now >= w->deadline)
			break;
		n = poll(p, w->cancel_fd >= 0 ? 2 : 1, (int)(w->deadline - now));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || p[1].revents)
			break;
		if (p[0].revents)
			return NULL; /* the asking is over */
	}
	w->stop = 1;
	return NULL;
}

/* The answer of one asked request (a line: {"result"} or {"error"}) as
 * responses[key]; 0, or -1 and err naming what the client said. */
static int take_answer(const char *method, const char *answer, size_t len, json_t *responses,
		       const char *key, struct tg_error *err)
{
	json_t *j = json_loadb(answer, len, 0, NULL), *result = json_object_get(j, "result");
	const char *message = json_string_value(json_object_get(json_object_get(j, "error"),
								"message"));
	int rc = 0;

	if (result && json_object_set(responses, key, result) < 0)
		rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	else if (!result)
		rc = tg_error_set(err, TG_ERR_INVALID, "its client did not answer %s: %.200s",
				  method, message ? message : "no answer");
	json_decref(j);
	return rc;
}

/* An input request checked against the declaration and the relay's
 * rules; the copy the client is asked ({"request", "key", "more"}) in
 * *out. 0, or -1 and err. */
static int input_request(const struct upstream_run *r, const char *key, json_t *req, int more,
			 json_t **out, struct tg_error *err)
{
	const char *method = json_string_value(json_object_get(req, "method"));
	const struct upstream_relay_kind *k = upstream_relay_kind_of(method);
	json_t *params = json_object_get(req, "params"), *copy;
	struct upstream_rpc_error e;

	*out = NULL;
	if (!json_is_object(req) || !k || (params && !json_is_object(params)))
		return tg_error_set(err, TG_ERR_INVALID, "inputRequests[%.64s] is not a "
				    "sampling/createMessage, elicitation/create or roots/list "
				    "request", key);
	if (!(r->u->relay & k->bit))
		return tg_error_set(err, TG_ERR_INVALID, "the server asks its client for %s, "
				    "which its declaration does not relay", method);
	copy = params ? json_deep_copy(params) : json_object();
	if (copy && upstream_relay_admit(method, copy, &e) < 0) {
		json_decref(copy);
		return tg_error_set(err, TG_ERR_INVALID, "%s", e.message);
	}
	*out = copy ? json_pack("{s:{s:s,s:o},s:s,s:b}", "request", "method", method, "params",
				copy, "key", key, "more", more) : NULL;
	return *out ? 0 : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
}

/* An answer text's lines given, in order, to the questions asked since
 * the last answer (keys[from..to], to the one just asked): one line a
 * question, as an ask hook answers questions asked together ("more").
 * 0, or -1 and err. */
static int take_lines(json_t *asked, size_t from, size_t to, const char *answer,
		      json_t *responses, struct tg_error *err)
{
	const char *line = answer, *nl;
	json_t *q;
	size_t i;

	for (i = from; i <= to; i++) {
		q = json_array_get(asked, i);
		nl = strchr(line, '\n');
		if (!*line)
			return tg_error_set(err, TG_ERR_INVALID, "its client did not answer %s: no "
					    "answer", json_string_value(json_object_get(json_object_get(
					    q, "request"), "method")));
		if (take_answer(json_string_value(json_object_get(json_object_get(q, "request"),
								  "method")),
				line, nl ? (size_t)(nl - line) : strlen(line), responses,
				json_string_value(json_object_get(q, "key")), err) < 0)
			return -1;
		line = nl ? nl + 1 : line + strlen(line);
	}
	return 0;
}

/* Every request checked first (nobody is asked for a call that cannot
 * finish), then each asked of the caller's client in turn, all but the
 * last "more" (asked together: a caller asked by MRTR gets them in one
 * InputRequiredResult); the answers into responses. An answer "" is none
 * yet: a later answer carries it, a line a question, or the caller is
 * being asked first. 1: the call is being stopped to ask its client
 * first (toolgate's own caller is asked by MRTR); 0; -1 and err. */
static int ask_each(const struct upstream_run *r, json_t *requests,
		    const struct upstream_run_call_hooks *hooks, struct watch *w,
		    json_t *responses, struct tg_error *err)
{
	json_t *asked = json_array(), *req, *q;
	const char *key;
	char *text, *answer;
	size_t i = 0, n = json_object_size(requests), waiting = 0;
	int rc = 0;

	if (!asked)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	json_object_foreach(requests, key, req) {
		rc = input_request(r, key, req, ++i < n, &q, err);
		if (rc < 0 || json_array_append_new(asked, q) < 0) {
			json_decref(asked);
			return rc < 0 ? -1 : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		}
	}
	for (i = 0; rc == 0 && i < n; i++) {
		text = json_dumps(json_array_get(asked, i), JSON_COMPACT);
		answer = text && !w->stop ? hooks->ask(hooks->ctx, text, &w->stop) : NULL;
		free(text);
		if (answer && !*answer)
			; /* before stop: the caller's MRTR stops the call */
		else if (w->stop)
			rc = tg_error_set(err, TG_ERR_LIMIT, "the call ended while its client was "
					  "asked");
		else if (!answer)
			rc = tg_error_set(err, TG_ERR_INVALID, "its client was not asked");
		else if (take_lines(asked, waiting, i, answer, responses, err) < 0)
			rc = -1;
		else
			waiting = i + 1;
		free(answer);
	}
	json_decref(asked);
	return rc < 0 ? -1 : waiting < n;
}

int run_input_required(const struct upstream_run *r, json_t *res,
		       const struct upstream_run_call_hooks *hooks, uint64_t deadline,
		       int cancel_fd, json_t **retry, struct tg_error *err)
{
	json_t *requests = json_object_get(res, "inputRequests");
	json_t *state = json_object_get(res, "requestState"), *responses;
	struct watch w = { .cancel_fd = cancel_fd, .done = { -1, -1 }, .deadline = deadline };
	int rc, e;

	*retry = NULL;
	if (!json_is_object(requests) || !json_object_size(requests) ||
	    json_object_size(requests) > UPSTREAM_MODERN_REQUESTS || (state && !json_is_string(state)))
		return tg_error_set(err, TG_ERR_INVALID, "an input_required answer needs 1 to %u "
				    "inputRequests and a string requestState, if any",
				    UPSTREAM_MODERN_REQUESTS);
	if (!hooks || !hooks->ask)
		return tg_error_set(err, TG_ERR_INVALID, "the server asks its client for input, "
				    "and this call's client cannot be asked");
	responses = json_object();
	if (!responses)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	e = pipe2(w.done, O_CLOEXEC) < 0 ? errno : pthread_create(&w.t, NULL, watch_main, &w);
	if (e) {
		if (w.done[0] >= 0) {
			close(w.done[0]);
			close(w.done[1]);
		}
		json_decref(responses);
		return tg_error_sys(err, e, "a thread to watch the call while its client is asked");
	}
	rc = ask_each(r, requests, hooks, &w, responses, err);
	while (write(w.done[1], "x", 1) < 0 && errno == EINTR)
		;
	pthread_join(w.t, NULL);
	close(w.done[0]);
	close(w.done[1]);
	if (rc == 1)
		rc = tg_error_set(err, TG_ERR_INVALID, "stopped to ask its client first");
	if (rc == 0 && !(*retry = json_pack("{s:O}", "inputResponses", responses)))
		rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	/* echoed as it came, for this retry only */
	if (rc == 0 && state && json_object_set(*retry, "requestState", state) < 0)
		rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (rc < 0) {
		json_decref(*retry);
		*retry = NULL;
	}
	json_decref(responses);
	return rc;
}

int run_result_type(json_t *res, const char *method, struct tg_error *err)
{
	json_t *t = json_object_get(res, "resultType");
	const char *s = json_string_value(t);

	if (!t || (s && strcmp(s, "complete") == 0))
		return 0;
	if (s && strcmp(s, "input_required") == 0)
		return 1;
	return tg_error_set(err, TG_ERR_INVALID, "%s: the answer's resultType is %.32s, neither "
			    "complete nor input_required", method, s ? s : "not a string");
}
