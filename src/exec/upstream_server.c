/*
 * What an upstream's server notifies and asks its client, on the client's
 * dispatcher thread (docs/UPSTREAMS.md, "The runner", "Relay"): a call's
 * progress to the call's hook by its token, the server's log messages to
 * the gateway's log (redacted, shown safe, rate-limited), a list_changed
 * raising the supervisor's flag, and its requests relayed to the call
 * they are for when the declaration's relay allows them, else refused.
 *
 * Never: wait on the server, or on a call, but for the runner's lock;
 * hand a request to a call it may not be for; log or hand on the
 * server's text unredacted.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/upstream_run_int.h"
#include "obs/shown.h"
#include "toolgate/redact.h"
#include "util/log.h"

/* ---- what the server notifies --------------------------------------- */

/* notifications/progress as a command tool reports it (docs/PIPELINE.md):
 * {"progress": {"progress": N, "total": M, "message": "..."}}, total and
 * message when given, the message redacted, shown and cut as a stderr
 * line is. JSON text (malloc'd), or NULL when params are not progress. */
static char *progress_event(json_t *params)
{
	json_t *v = json_object_get(params, "progress"), *total = json_object_get(params, "total");
	json_t *message = json_object_get(params, "message"), *p, *e;
	char text[LOG_SHOWN + 1];
	char *out = NULL;
	size_t n;

	if (!json_is_number(v) || (total && !json_is_number(total)) ||
	    (message && !json_is_string(message)))
		return NULL;
	p = json_pack("{s:O}", "progress", v);
	if (p && total)
		json_object_set(p, "total", total);
	if (p && message) {
		n = json_string_length(message);
		obs_shown(json_string_value(message), n > UPSTREAM_RUN_LOG_READ ? UPSTREAM_RUN_LOG_READ : n,
		      text, sizeof(text));
		json_object_set_new(p, "message", json_string(text));
	}
	e = p ? json_pack("{s:o}", "progress", p) : NULL;
	if (e)
		out = json_dumps(e, JSON_COMPACT);
	json_decref(e);
	return out;
}

/* notifications/progress: to the hook of the call of g whose token it
 * carries; anything else dropped and counted. The hook runs without the
 * lock; the call waits for it before it returns (its hooks are its
 * own). */
static void on_progress(struct gen *g, json_t *params)
{
	const char *token = json_string_value(json_object_get(params, "progressToken"));
	struct upstream_run *r = g->r;
	struct call_reg *c;
	char *event;

	pthread_mutex_lock(&r->lock);
	/* g's own: a server cannot reach another's call by its token */
	for (c = r->calls;
	     c && (c->g != g || !c->progress || !token || strcmp(c->token, token) != 0);
	     c = c->next)
		;
	if (c)
		c->busy++;
	else
		r->stats.progress_dropped++;
	pthread_mutex_unlock(&r->lock);
	if (!c)
		return;
	event = progress_event(params);
	if (event)
		c->hooks->notify(c->hooks->ctx, event);
	free(event);
	pthread_mutex_lock(&r->lock);
	if (!event)
		r->stats.progress_dropped++;
	c->busy--;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->lock);
}

/* notifications/message: to the gateway's log as a stderr line, "[LEVEL
 * LOGGER] DATA", redacted, cut and within a rate of its own. */
static void on_message(struct gen *g, json_t *params)
{
	const char *level = json_string_value(json_object_get(params, "level"));
	const char *logger = json_string_value(json_object_get(params, "logger"));
	json_t *data = json_object_get(params, "data");
	char buf[UPSTREAM_RUN_LOG_READ], *dumped = NULL;
	const char *text;
	size_t len;
	int n;

	if (!run_rate_take(&g->messages, g->r->u->name, "log messages (notifications/message)"))
		return;
	text = json_string_value(data);
	if (!text && data)
		text = dumped = json_dumps(data, JSON_COMPACT | JSON_ENCODE_ANY);
	n = snprintf(buf, sizeof(buf), "[%.32s%s%.64s] %s", level ? level : "?",
		     logger ? " " : "", logger ? logger : "", text ? text : "");
	free(dumped);
	len = n < 0 ? 0 : (size_t)n;
	run_log_text(g->r->u->name, buf, len < sizeof(buf) ? len : sizeof(buf) - 1, len >= sizeof(buf));
}

/* The client's notification callback, on its dispatcher thread: never
 * waits but for the runner's lock, which nobody holds across a wait on
 * the server, and a progress hook. */
void run_on_notification(void *ctx, const char *method, json_t *params)
{
	struct gen *g = ctx;
	struct upstream_run *r = g->r;

	if (strcmp(method, "notifications/progress") == 0) {
		on_progress(g, params);
	} else if (strcmp(method, "notifications/message") == 0) {
		on_message(g, params);
	} else if (r->u->per_call && g->listing) {
		/* the listing's own server: listed again on it, once, before
		 * it stops (supervise); a new server for it would say the
		 * same as it starts, and so on without end */
		pthread_mutex_lock(&r->lock);
		g->self_changed |= strcmp(method, "notifications/tools/list_changed") == 0
				   ? RUN_SELF_TOOLS
				   : strstr(method, "/list_changed") ? RUN_SELF_LISTS : 0;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
	} else if (r->u->per_call && !g->heed) {
		/* a call's server that says its lists changed as it starts
		 * (tools it registers once it knows the client) says what the
		 * listing's server said and was listed again for */
	} else if (strcmp(method, "notifications/tools/list_changed") == 0) {
		/* a flag, however many come: the supervisor lists once */
		pthread_mutex_lock(&r->lock);
		r->relist = 1;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
	} else if (strcmp(method, "notifications/resources/list_changed") == 0 ||
		   strcmp(method, "notifications/prompts/list_changed") == 0) {
		pthread_mutex_lock(&r->lock);
		r->relist_lists |= method[14] == 'r' ? 1u << UPSTREAM_RUN_RESOURCES |
							 1u << UPSTREAM_RUN_TEMPLATES
						       : 1u << UPSTREAM_RUN_PROMPTS;
		pthread_cond_broadcast(&r->cond);
		pthread_mutex_unlock(&r->lock);
	}
}

/* ---- what the server asks ------------------------------------------- */

/* The call of g a request of its server (read as seq) is for, and the
 * request pushed to its relay (under the lock): 0, or -1 and e, *say 0
 * when the refusal is not to be logged (said once already). MCP gives a
 * server's request nothing that names the call it serves, so it is a
 * call's only when that call was the one in flight on the server when
 * the request was read (sent before it), and no call of the server ended
 * without its answer: such a call's requests may still come, and would
 * reach another call's client. */
static int relay_to_call(struct gen *g, json_t *id, const char *method, json_t *params,
			 uint64_t seq, struct upstream_rpc_error *e, int *say)
{
	struct call_reg *c, *one = NULL;
	unsigned n = 0;

	for (c = g->r->calls; c; c = c->next)
		if (c->g == g && c->seq < seq) {
			one = c;
			n++;
		}
	e->code = UPSTREAM_RPC_INTERNAL_ERROR;
	*say = 1;
	if (g->unattributable[0]) {
		snprintf(e->message, sizeof(e->message), "toolgate cannot tell which call this "
			 "request is for: %.150s; refused until the server restarts",
			 g->unattributable);
		*say = !g->unattributable_said;
		g->unattributable_said = 1;
	} else if (n != 1) {
		snprintf(e->message, sizeof(e->message), "toolgate cannot tell which call this "
			 "request is for (%u calls of the server in flight when it was read)", n);
	} else if (!one->relay) {
		e->code = UPSTREAM_RPC_METHOD_NOT_FOUND;
		snprintf(e->message, sizeof(e->message), "the client of this call cannot be asked");
	} else {
		return upstream_relay_push(one->relay, id, method, params, e);
	}
	return -1;
}

/* The client's request callback, on its dispatcher thread: a request the
 * declaration's relay allows goes to its call's relay, answered later;
 * any other is refused at once, and logged as the server's messages are
 * (redacted, shown, within a rate of its own). Never waits but for the
 * runner's lock. */
json_t *run_on_request(void *ctx, json_t *id, const char *method, json_t *params, uint64_t seq,
		       struct upstream_rpc_error *e)
{
	struct gen *g = ctx;
	struct upstream_run *r = g->r;
	const struct upstream_relay_kind *k = upstream_relay_kind_of(method);
	char line[UPSTREAM_RUN_LOG_READ];
	int n, say = 1;

	if (upstream_client_modern(g->client)) {
		/* the era asks by input_required, on the call's own answer */
		e->code = UPSTREAM_RPC_METHOD_NOT_FOUND;
		snprintf(e->message, sizeof(e->message), "upstream %s: %.64s is not relayed: a "
			 "2026-07-28 server asks its client by answering input_required",
			 r->u->name, method);
	} else if (!k) {
		e->code = UPSTREAM_RPC_METHOD_NOT_FOUND;
		snprintf(e->message, sizeof(e->message), "upstream %s: %.64s is not relayed: "
			 "relay names sampling, elicitation and roots only", r->u->name, method);
	} else if (!(r->u->relay & k->bit)) {
		e->code = UPSTREAM_RPC_METHOD_NOT_FOUND;
		snprintf(e->message, sizeof(e->message), "upstream %s: %s is not relayed: its "
			 "declaration's relay does not name %s", r->u->name, method, k->kind);
	} else {
		pthread_mutex_lock(&r->lock);
		n = relay_to_call(g, id, method, params, seq, e, &say);
		pthread_mutex_unlock(&r->lock);
		if (n == 0) {
			e->code = UPSTREAM_RPC_DEFERRED;
			return NULL;
		}
	}
	if (say && run_rate_take(&g->refused, r->u->name, "refused requests")) {
		n = snprintf(line, sizeof(line), "refused its request %.64s: %s", method, e->message);
		run_log_text(r->u->name, line, n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n
							   : sizeof(line) - 1, 0);
	}
	return NULL;
}

