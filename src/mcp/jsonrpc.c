/*
 * JSON-RPC 2.0 (https://www.jsonrpc.org/specification) as MCP uses it:
 * requests, notifications and responses; ids are strings or integers
 * (MCP: never null, no fractions); params, when present, an object.
 */
#include <string.h>

#include "mcp/mcp_int.h"

static int valid_id(json_t *id)
{
	return json_is_string(id) || json_is_integer(id);
}

enum rpc_kind rpc_classify(json_t *msg, json_t **id, const char **why)
{
	json_t *v, *method, *params;

	*id = json_null(); /* a singleton: borrowing it is safe */
	*why = NULL;
	if (!json_is_object(msg)) {
		*why = "a message must be a JSON object";
		return RPC_INVALID;
	}
	v = json_object_get(msg, "id");
	if (v && valid_id(v))
		*id = v;
	if (!json_is_string(json_object_get(msg, "jsonrpc")) ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")), "2.0") != 0) {
		*why = "\"jsonrpc\" must be \"2.0\"";
		return RPC_INVALID;
	}
	method = json_object_get(msg, "method");
	if (method) {
		if (!json_is_string(method)) {
			*why = "\"method\" must be a string";
			return RPC_INVALID;
		}
		params = json_object_get(msg, "params");
		if (params && !json_is_object(params)) {
			*why = "\"params\" must be an object";
			return RPC_INVALID;
		}
		if (!v)
			return RPC_NOTIFICATION;
		if (!valid_id(v)) {
			*why = "\"id\" must be a string or an integer";
			return RPC_INVALID;
		}
		return RPC_REQUEST;
	}
	if (v && valid_id(v) &&
	    (json_object_get(msg, "result") != NULL) != (json_object_get(msg, "error") != NULL))
		return RPC_RESPONSE;
	*why = "neither a request, a notification nor a response";
	return RPC_INVALID;
}

json_t *rpc_result_json(json_t *id, json_t *result)
{
	return json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id, "result", result);
}

json_t *rpc_error_json(json_t *id, int code, const char *message)
{
	return json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id", id, "error", "code", code,
			 "message", message);
}

static char *dump(json_t *j)
{
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	return text;
}

char *rpc_result(json_t *id, json_t *result)
{
	return dump(rpc_result_json(id, result));
}

char *rpc_error(json_t *id, int code, const char *message)
{
	return dump(rpc_error_json(id, code, message));
}
