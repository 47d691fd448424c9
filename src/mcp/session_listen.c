/*
 * subscriptions/listen (2026-07-28) and the notifications a reload of
 * the catalogue causes (docs/MCP.md): a listen request's filter checked
 * and acknowledged, what each subscription and each session-era client
 * hears of a change, and the graceful end of a subscription.
 *
 * It only tells: it never changes the catalogue, and a client hears only
 * of the lists and resources it asked about.
 */
#include <stdlib.h>
#include <string.h>

#include "mcp/session_int.h"

#define META_SUBSCRIPTION "io.modelcontextprotocol/subscriptionId"
#define MAX_LISTENERS 16        /* open subscriptions of one stdio client */
#define MAX_WATCHED 256         /* resourceSubscriptions of one request */

struct listener {
	json_t *id;                    /* the listen request's: the subscription's */
	json_t *filter;                /* what was acknowledged */
	struct listener *next;
};

/* The subset of a notifications filter the server honors: each type the
 * server's capabilities promise (a reload can change any of them). NULL
 * and *why for a malformed filter. */
static json_t *honored_filter(json_t *filter, const char **why)
{
	static const struct {
		const char *field, *cap, *feature;
	} kinds[] = {
		{ "toolsListChanged", "tools", "listChanged" },
		{ "promptsListChanged", "prompts", "listChanged" },
		{ "resourcesListChanged", "resources", "listChanged" },
	};
	json_t *caps, *out, *uris, *u;
	size_t i;

	if (filter && !json_is_object(filter)) {
		*why = "subscriptions/listen: \"notifications\" must be an object";
		return NULL;
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (json_object_get(filter, kinds[i].field) &&
		    !json_is_boolean(json_object_get(filter, kinds[i].field))) {
			*why = "subscriptions/listen: the *ListChanged fields are true or false";
			return NULL;
		}
	uris = json_object_get(filter, "resourceSubscriptions");
	if (uris && (!json_is_array(uris) || json_array_size(uris) > MAX_WATCHED)) {
		*why = "subscriptions/listen: \"resourceSubscriptions\" must be an array of at "
		       "most 256 URIs";
		return NULL;
	}
	json_array_foreach(uris, i, u)
		if (!json_is_string(u) || json_string_length(u) > 4096) {
			*why = "subscriptions/listen: a resource subscription is a URI (a string "
			       "of at most 4096 bytes)";
			return NULL;
		}
	caps = session_capabilities(0, MCP_MODERN);
	out = json_object();
	for (i = 0; out && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (json_is_true(json_object_get(filter, kinds[i].field)) &&
		    json_is_true(json_object_get(json_object_get(caps, kinds[i].cap),
						 kinds[i].feature)))
			json_object_set_new(out, kinds[i].field, json_true());
	if (out && json_array_size(uris) &&
	    json_is_true(json_object_get(json_object_get(caps, "resources"), "subscribe")))
		json_object_set(out, "resourceSubscriptions", uris);
	json_decref(caps);
	if (!out)
		*why = "out of memory";
	return out;
}

/* subscriptions/listen: the acknowledgment goes first, on the request's
 * own stream: over HTTP the sink, which the transport keeps open as the
 * subscription's stream (NULL returned: no response yet); on stdio the
 * session's channel, the subscription kept until the client cancels it
 * or the session ends (then it gets its completion result). */
json_t *listen_request(struct mcp_session *s, json_t *id, json_t *params,
		       const struct mcp_sink *sink)
{
	const char *why = NULL;
	json_t *filter = honored_filter(json_object_get(params, "notifications"), &why), *ack;
	struct listener *l;
	unsigned n = 0;

	if (!filter)
		return rpc_error_json(id, RPC_INVALID_PARAMS, why);
	ack = json_pack("{s:s,s:s,s:{s:{s:O},s:O}}", "jsonrpc", "2.0", "method",
			"notifications/subscriptions/acknowledged", "params", "_meta",
			META_SUBSCRIPTION, id, "notifications", filter);
	if (!ack) {
		json_decref(filter);
		return rpc_error_json(id, RPC_INTERNAL_ERROR, "out of memory");
	}
	if (sink) {
		json_decref(filter);
		sink->send(sink->ctx, ack);
		return NULL;
	}
	pthread_mutex_lock(&s->lock);
	for (l = s->listeners; l; l = l->next, n++)
		if (json_equal(l->id, id))
			break;
	if (l || n >= MAX_LISTENERS) {
		pthread_mutex_unlock(&s->lock);
		json_decref(filter);
		json_decref(ack);
		return rpc_error_json(id, RPC_INVALID_REQUEST,
				      l ? "subscriptions/listen: that id names an open subscription"
					: "subscriptions/listen: at most 16 open subscriptions");
	}
	l = calloc(1, sizeof(*l));
	if (!l) {
		pthread_mutex_unlock(&s->lock);
		json_decref(filter);
		json_decref(ack);
		return rpc_error_json(id, RPC_INTERNAL_ERROR, "out of memory");
	}
	l->id = json_incref(id);
	l->filter = filter;
	l->next = s->listeners;
	s->listeners = l;
	pthread_mutex_unlock(&s->lock);
	session_send_json(s, ack);
	return NULL;
}

json_t *mcp_listen_complete(json_t *id)
{
	json_t *r = json_pack("{s:{s:O}}", "_meta", META_SUBSCRIPTION, id);

	if (r)
		modern_result(r, 0); /* resultType "complete", who answers */
	return r ? rpc_result_json(id, r) : NULL;
}

static json_t *notification(const char *method, const char *uri, json_t *sub_id)
{
	json_t *n = json_pack("{s:s,s:s}", "jsonrpc", "2.0", "method", method);
	json_t *params = json_object();

	if (uri)
		json_object_set_new(params, "uri", json_string(uri));
	if (sub_id)
		json_object_set_new(params, "_meta", json_pack("{s:O}", META_SUBSCRIPTION, sub_id));
	if (n && json_object_size(params))
		json_object_set(n, "params", params);
	json_decref(params);
	return n;
}

static int listed(json_t *array, const char *s)
{
	json_t *v;
	size_t i;

	json_array_foreach(array, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), s) == 0)
			return 1;
	return 0;
}

json_t *mcp_change_notifications(const struct mcp_change *c, json_t *filter, json_t *sub_id)
{
	static const struct {
		const char *field, *method;
	} lists[] = {
		{ "toolsListChanged", "notifications/tools/list_changed" },
		{ "promptsListChanged", "notifications/prompts/list_changed" },
		{ "resourcesListChanged", "notifications/resources/list_changed" },
	};
	const int changed[] = { c->tools, c->prompts, c->resources };
	json_t *out = json_array(), *u;
	size_t i;

	for (i = 0; out && i < sizeof(lists) / sizeof(lists[0]); i++)
		if (changed[i] && (!filter || json_is_true(json_object_get(filter, lists[i].field))))
			json_array_append_new(out, notification(lists[i].method, NULL, sub_id));
	json_array_foreach(c->updated, i, u)
		if (out && listed(filter ? json_object_get(filter, "resourceSubscriptions") : NULL,
				  json_string_value(u)))
			json_array_append_new(out, notification("notifications/resources/updated",
								json_string_value(u), sub_id));
	return out;
}

void mcp_session_changed(struct mcp_session *s, const struct mcp_change *c)
{
	json_t *all = json_array(), *part, *n, *u;
	struct listener *l;
	size_t i;

	pthread_mutex_lock(&s->lock);
	if (all && s->state == SESSION_READY) {
		/* the session era: every list change, updates it subscribed to */
		part = mcp_change_notifications(c, NULL, NULL);
		json_array_extend(all, part);
		json_decref(part);
		json_array_foreach(c->updated, i, u)
			if (listed(s->subscribed, json_string_value(u)))
				json_array_append_new(all, notification("notifications/resources/updated",
									json_string_value(u), NULL));
	}
	for (l = s->listeners; all && l; l = l->next) {
		part = mcp_change_notifications(c, l->filter, l->id);
		json_array_extend(all, part);
		json_decref(part);
	}
	pthread_mutex_unlock(&s->lock);
	json_array_foreach(all, i, n)
		session_send_json(s, json_incref(n));
	json_decref(all);
}

/* A cancelled subscription ends without a response; 1 if rid named one. */
int listen_end(struct mcp_session *s, json_t *rid)
{
	struct listener **p, *l = NULL;

	pthread_mutex_lock(&s->lock);
	for (p = &s->listeners; *p; p = &(*p)->next)
		if (json_equal((*p)->id, rid)) {
			l = *p;
			*p = l->next;
			break;
		}
	pthread_mutex_unlock(&s->lock);
	if (!l)
		return 0;
	json_decref(l->id);
	json_decref(l->filter);
	free(l);
	return 1;
}

/* The session ends: open subscriptions end gracefully, each with its
 * completion result. */
void listen_close_all(struct mcp_session *s)
{
	struct listener *l;

	while ((l = s->listeners)) {
		s->listeners = l->next;
		session_send_json(s, mcp_listen_complete(l->id));
		json_decref(l->id);
		json_decref(l->filter);
		free(l);
	}
}
