/*
 * Resources, prompts and completion (docs/MCP.md): resources/list,
 * templates/list, read, subscribe and unsubscribe; prompts/list and
 * prompts/get (a prompt that elicits its arguments first, by MRTR, in the
 * modern era); completion/complete. Answers come from the gate
 * (tg_gate_resources_json and the rest): the catalogue's own, and each
 * upstream's under its namespace, as the caller's scopes allow.
 *
 * It never runs a tool, decides a scope, nor changes what the catalogue
 * holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mcp/session_int.h"
#include "toolgate/catalog.h"

/* A gate's answer (JSON text, taken) as the result's member key (NULL:
 * the result itself), or its error: code for what does not exist or the
 * server refused, -32602 for a scope missing, -32603 for a server down or
 * late and for memory. */
static json_t *gate_answer(json_t *id, char *text, const char *key, int code,
			   const struct tg_error *err)
{
	json_t *v = text ? json_loads(text, 0, NULL) : NULL;
	int code_of = !text ? err->code : TG_ERR_NOMEM; /* text unparsed: memory */

	free(text);
	if (!v)
		return rpc_error_json(id, code_of == TG_ERR_FORBIDDEN ? RPC_INVALID_PARAMS
					  : code_of == TG_ERR_INVALID ? code
								      : RPC_INTERNAL_ERROR,
				      code_of == TG_ERR_NOMEM ? "out of memory" : err->msg);
	if (!key)
		return rpc_result_json(id, v);
	return rpc_result_json(id, json_pack("{s:o}", key, v));
}

#define MAX_SUBSCRIBED 256 /* resources/subscribe URIs of one session */

/* resources/subscribe and unsubscribe (the session era): the URIs whose
 * updates a reload reports to this session. Any URI of the catalogue's
 * may be watched (a reload may bring the resource); an upstream's is
 * refused: its server's updates are not relayed. */
static json_t *subscribe(struct mcp_session *s, json_t *id, const char *uri, int on)
{
	json_t *u;
	size_t i;
	int err = 0;

	if (strlen(uri) > 4096)
		return rpc_error_json(id, RPC_INVALID_PARAMS, "\"uri\": longer than 4096 bytes");
	if (on && strncmp(uri, TG_UPSTREAM_URI_PREFIX, strlen(TG_UPSTREAM_URI_PREFIX)) == 0)
		return rpc_error_json(id, RPC_INVALID_PARAMS, "resources/subscribe: an upstream's "
				      "resources send no updates through toolgate");
	pthread_mutex_lock(&s->lock);
	if (!s->subscribed)
		s->subscribed = json_array();
	json_array_foreach(s->subscribed, i, u)
		if (strcmp(json_string_value(u), uri) == 0)
			break;
	if (!on && i < json_array_size(s->subscribed))
		json_array_remove(s->subscribed, i);
	else if (on && i == json_array_size(s->subscribed))
		err = json_array_size(s->subscribed) >= MAX_SUBSCRIBED ||
		      json_array_append_new(s->subscribed, json_string(uri)) < 0;
	pthread_mutex_unlock(&s->lock);
	return err ? rpc_error_json(id, RPC_INVALID_PARAMS,
				    "resources/subscribe: at most 256 subscriptions a session")
		   : rpc_result_json(id, json_object());
}

json_t *catalog_resources(struct mcp_session *s, const char *method, json_t *id, json_t *params,
			  const char *scopes)
{
	const char *uri = json_string_value(json_object_get(params, "uri"));
	struct tg_reader who = { s->principal, scopes };
	struct tg_error err;

	if (strcmp(method, "resources/list") == 0 || strcmp(method, "resources/templates/list") == 0) {
		int templates = method[10] == 't';

		/* one page: a cursor never came from here */
		if (json_object_get(params, "cursor"))
			return rpc_error_json(id, RPC_INVALID_PARAMS, "invalid cursor");
		return gate_answer(id, tg_gate_resources_json(s->mcp->gate, &who, templates, &err),
				   templates ? "resourceTemplates" : "resources",
				   RPC_INTERNAL_ERROR, &err);
	}
	if (!uri)
		return rpc_error_json(id, RPC_INVALID_PARAMS, "\"uri\" (a string) is required");
	if (strcmp(method, "resources/read") == 0)
		return gate_answer(id, tg_gate_resource_read(s->mcp->gate, &who, uri, &err),
				   "contents", RPC_RESOURCE_NOT_FOUND, &err);
	return subscribe(s, id, uri, strcmp(method, "resources/subscribe") == 0);
}

json_t *catalog_prompts(struct mcp_session *s, const char *method, json_t *id, json_t *params,
			const char *scopes)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments"), *resp;
	struct tg_reader who = { s->principal, scopes };
	struct tg_error err;
	char *text;

	if (strcmp(method, "prompts/list") == 0) {
		if (json_object_get(params, "cursor"))
			return rpc_error_json(id, RPC_INVALID_PARAMS, "invalid cursor");
		return gate_answer(id, tg_gate_prompts_json(s->mcp->gate, &who, &err), "prompts",
				   RPC_INTERNAL_ERROR, &err);
	}
	if (!name)
		return rpc_error_json(id, RPC_INVALID_PARAMS, "\"name\" (a string) is required");
	if (args && !json_is_object(args))
		return rpc_error_json(id, RPC_INVALID_PARAMS, "\"arguments\" must be an object");
	text = args ? json_dumps(args, JSON_COMPACT) : NULL;
	resp = gate_answer(id, tg_gate_prompt_get(s->mcp->gate, &who, name, text, &err), NULL,
			   RPC_INVALID_PARAMS, &err);
	free(text);
	return resp;
}

json_t *catalog_complete(struct mcp_session *s, json_t *id, json_t *params, const char *scopes)
{
	json_t *ref = json_object_get(params, "ref"), *arg = json_object_get(params, "argument");
	json_t *context = json_object_get(params, "context"), *resp;
	const char *type = json_string_value(json_object_get(ref, "type"));
	const char *aname = json_string_value(json_object_get(arg, "name"));
	const char *value = json_string_value(json_object_get(arg, "value"));
	struct tg_reader who = { s->principal, scopes };
	struct tg_error err;
	char *ctx;
	int prompt;

	if (!type || !aname || !value ||
	    (strcmp(type, "ref/prompt") && strcmp(type, "ref/resource")) ||
	    (context && !json_is_object(context)))
		return rpc_error_json(id, RPC_INVALID_PARAMS,
				      "completion/complete: ref {type: ref/prompt or ref/resource} "
				      "and argument {name, value} are required, context an object");
	prompt = strcmp(type, "ref/prompt") == 0;
	ctx = context ? json_dumps(context, JSON_COMPACT) : NULL;
	resp = gate_answer(id, tg_gate_complete(s->mcp->gate, &who, type,
						json_string_value(json_object_get(ref, prompt ? "name"
												: "uri")),
						aname, value, ctx, &err),
			   "completion", RPC_INVALID_PARAMS, &err);
	free(ctx);
	return resp;
}

/* The elicitation answer's fields as prompt arguments (strings). */
static json_t *elicited_arguments(json_t *given, json_t *content)
{
	json_t *args = json_is_object(given) ? json_deep_copy(given) : json_object(), *v;
	const char *k;

	json_object_foreach(content, k, v) {
		char *text = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY);

		if (args && !json_object_get(args, k))
			json_object_set_new(args, k, json_string(text ? text : json_string_value(v)));
		free(text);
	}
	return args;
}

/* prompts/get in the modern era: a prompt that asks its user first
 * (docs/contracts.md, "elicit") does it by MRTR, unless the arguments
 * hold every field already. */
json_t *catalog_prompt_get_modern(struct mcp_session *s, json_t *id, json_t *params, json_t *caps,
				  const char *scopes)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments"), *elicit, *props, *ask, *v, *resp = NULL;
	const struct tg_catalog *cat;
	struct mrtr *r = NULL;
	char tool[160], why[160], *text;
	const char *k;
	int stop = 0, given = 1;

	if (!name)
		return catalog_prompts(s, "prompts/get", id, params, scopes);
	cat = tg_gate_acquire(s->mcp->gate);
	text = tg_catalog_prompt_elicit(cat, name);
	tg_gate_release(s->mcp->gate, cat);
	elicit = text ? json_loads(text, 0, NULL) : NULL;
	free(text);
	props = json_object_get(json_object_get(elicit, "requestedSchema"), "properties");
	json_object_foreach(props, k, v)
		given &= json_is_string(json_object_get(args, k));
	if (!elicit || given) {
		json_decref(elicit);
		return catalog_prompts(s, "prompts/get", id, params, scopes);
	}
	snprintf(tool, sizeof(tool), "prompt:%.140s", name);
	if (mrtr_open(s->mcp, s->principal, tool, params, NULL, 0, caps, &r, why, sizeof(why)) < 0) {
		json_decref(elicit);
		return rpc_error_json(id, RPC_INVALID_PARAMS, why);
	}
	ask = json_pack("{s:O,s:O}", "message", json_object_get(elicit, "message"),
			"requestedSchema", json_object_get(elicit, "requestedSchema"));
	text = ask ? mrtr_ask(r, "elicitation/create", ask,
			      json_string_value(json_object_get(elicit, "key")), 0, &stop)
		   : NULL;
	json_decref(ask);
	json_decref(elicit);
	if (stop) {
		resp = mrtr_response(r, id); /* ask the user, then again */
	} else if (text) {
		json_t *answer = json_loads(text, 0, NULL), *result = json_object_get(answer, "result");

		if (!result)
			resp = mrtr_missing_capability(r, id);
		else if (!json_is_string(json_object_get(result, "action")) ||
			 strcmp(json_string_value(json_object_get(result, "action")), "accept") != 0)
			resp = rpc_error_json(id, RPC_INVALID_PARAMS,
					      "prompts/get: the user did not give what the prompt asks");
		else {
			json_t *p2 = json_deep_copy(params);

			if (p2)
				json_object_set_new(p2, "arguments",
						    elicited_arguments(args, json_object_get(result,
											     "content")));
			resp = p2 ? catalog_prompts(s, "prompts/get", id, p2, scopes) : NULL;
			json_decref(p2);
		}
		json_decref(answer);
	}
	free(text);
	mrtr_free(r);
	return resp ? resp : rpc_error_json(id, RPC_INTERNAL_ERROR, "out of memory");
}
