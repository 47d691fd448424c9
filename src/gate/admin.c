/*
 * The admin API (include/toolgate/gate.h, docs/ADMIN.md): approval tickets
 * and rollbacks as JSON over HTTP, the same decisions as `toolgate
 * approvals` (both through tg_gate_decide, decide.c) and `toolgate
 * rollback`, by the principal the caller's token names and within its
 * scopes. The HTTP server (src/mcp/http_admin.c) routes /admin/... here
 * and records the refusals; this file knows nothing of HTTP but the
 * status codes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "toolgate/auth.h"
#include "toolgate/gate.h"
#include "toolgate/sandbox.h"
#include "toolgate/store.h"

#include "gate/gate_int.h"
#include "util/hidden.h"
#include "util/json_wide.h"

/* A copy of v with its strings and member names in their display form
 * (util/hidden.h: hidden characters escaped, backslashes doubled); NULL
 * out of memory. */
static json_t *display_copy(const json_t *v)
{
	const char *key;
	const json_t *item;
	json_t *copy;
	size_t i;
	char *text;

	if (json_is_string(v)) {
		text = hidden_display_new(json_string_value(v), json_string_length(v), NULL);
		copy = text ? json_string(text) : NULL;
		free(text);
		return copy;
	}
	if (json_is_array(v)) {
		copy = json_array();
		json_array_foreach(v, i, item)
			if (!copy || json_array_append_new(copy, display_copy(item)) < 0) {
				json_decref(copy);
				return NULL;
			}
		return copy;
	}
	if (!json_is_object(v))
		return json_deep_copy(v);
	copy = json_object();
	json_object_foreach((json_t *)v, key, item) {
		text = hidden_display_new(key, strlen(key), NULL);
		if (!copy || !text || json_object_set_new(copy, text, display_copy(item)) < 0) {
			free(text);
			json_decref(copy);
			return NULL;
		}
		free(text);
	}
	return copy;
}

/* 1 if a string or member name of v holds a hidden character. */
static int holds_hidden(const json_t *v)
{
	const char *key;
	const json_t *item;
	size_t i;

	if (json_is_string(v))
		return hidden_count(json_string_value(v), json_string_length(v)) > 0;
	json_array_foreach(v, i, item)
		if (holds_hidden(item))
			return 1;
	json_object_foreach((json_t *)v, key, item)
		if (hidden_count(key, strlen(key)) || holds_hidden(item))
			return 1;
	return 0;
}

/* text (JSON, else a string) as name in j, and as name_display when it
 * holds what a person would not see as it is (docs/ADMIN.md); -1 when
 * that display form cannot be made (out of memory): then neither is
 * shown, nothing is shown raw that should be escaped. */
static int set_shown(json_t *j, const char *name, const char *text)
{
	/* NULs in strings, as the arguments were taken (stage 3); a number
	 * jansson would round or refuse: the text, as the tool gets it */
	json_t *v = json_wide_has_long(text, strlen(text)) ? NULL
							   : json_loads(text, JSON_ALLOW_NUL, NULL);
	json_t *d;
	char display[64];

	if (!v)
		v = json_string(text); /* a preview in words; arguments jansson cannot hold */
	if (!v)
		return 0;
	if (holds_hidden(v)) {
		snprintf(display, sizeof(display), "%s_display", name);
		if (!(d = display_copy(v)) || json_object_set_new(j, display, d) < 0) {
			json_decref(v);
			return -1;
		}
	}
	json_object_set_new(j, name, v);
	return 0;
}

/* t as JSON; with full, its arguments and preview (up to 4 MiB each). */
static json_t *ticket_json(const struct tg_ticket *t, int full)
{
	json_t *j = json_pack("{s:s,s:s,s:s,s:s,s:s,s:I,s:I}", "id", t->id, "state",
			      tg_ticket_state_name(t->state), "principal", t->principal, "tool",
			      t->tool, "args_sha256", t->args_sha256, "created",
			      (json_int_t)t->created, "expires", (json_int_t)t->expires);

	if (!j)
		return NULL;
	/* what the approver decides on: the arguments hashed, and what the
	 * dry run said they would do (JSON when the pipeline made it); each
	 * also in its display form when it holds hidden characters */
	if ((full && t->arguments && set_shown(j, "arguments", t->arguments) < 0) ||
	    (full && t->preview && set_shown(j, "preview", t->preview) < 0)) {
		json_decref(j);
		return NULL;
	}
	/* why it was held besides its authority: its arguments' anomalies */
	if (t->findings) {
		json_t *f = json_loads(t->findings, 0, NULL);

		json_object_set_new(j, "anomalies", f ? f : json_string(t->findings));
	}
	if (t->approver[0])
		json_object_set_new(j, "approver", json_string(t->approver));
	if (t->reason)
		json_object_set_new(j, "reason", json_string(t->reason));
	if (t->decided)
		json_object_set_new(j, "decided", json_integer(t->decided));
	return j;
}

/* What the catalogue says of a ticket's tool (tool@version), for the
 * person deciding (docs/ADMIN.md): NULL when the catalogue no longer has
 * that version. Its sunset does not hide it: the date given resolves any. */
static json_t *tool_info(struct tg_gate *g, const char *ref)
{
	static const char *const risks[] = { "?", "low", "medium", "high", "critical" };
	const struct tg_catalog *cat = tg_gate_acquire(g);
	const struct tg_contract *k = NULL;
	struct tg_error err;
	json_t *j = NULL;

	if (cat && tg_catalog_resolve(cat, ref, "0001-01-01", &k, &err) == 0 &&
	    (j = json_pack("{s:s,s:s,s:s,s:s?,s:s?,s:s?,s:s?,s:s?}", "version", k->version_text,
			   "authority", k->authority == TG_AUTHORITY_WRITE ? "write" : "read",
			   "risk", risks[k->risk <= TG_RISK_CRITICAL ? k->risk : 0], "title",
			   k->title, "description", k->description, "owner_team", k->owner_team,
			   "owner_contact", k->owner_contact, "deprecated_since",
			   k->deprecated_since))) {
		if (k->irreversible)
			json_object_set_new(j, "irreversible", json_string(k->irreversible));
		if (k->compensation_tool)
			json_object_set_new(j, "compensation", json_string(k->compensation_tool));
	}
	tg_gate_release(g, cat);
	return j;
}

/* j as JSON text (taken), hidden characters written as JSON escapes so
 * that a terminal shows them (curl, `toolgate approvals show`). */
static char *dump(json_t *j, size_t flags)
{
	char *text = j ? json_dumps(j, flags) : NULL, *safe;

	json_decref(j);
	if (!text)
		return NULL;
	safe = hidden_json(text, strlen(text));
	free(text);
	return safe;
}

char *tg_ticket_to_json(const struct tg_ticket *t, int pretty)
{
	return dump(ticket_json(t, 1), pretty ? JSON_INDENT(2) : JSON_COMPACT);
}

/* An answer: status, and *out the JSON text of body (taken). */
/* j with its tool_info (taken; NULL stays NULL). */
static json_t *with_tool(struct tg_gate *g, json_t *j, const char *ref)
{
	json_t *info = j ? tool_info(g, ref) : NULL;

	if (info)
		json_object_set_new(j, "tool_info", info);
	return j;
}

static int answer(json_t *body, int status, char **out)
{
	*out = dump(body, JSON_COMPACT);
	return *out ? status : 500;
}

static int failure(int status, const char *code, const char *message, char **out)
{
	return answer(json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", message), status,
		      out);
}

int tg_ticket_approvable(const struct tg_ticket *t, const char *scopes, char *need, size_t len)
{
	const char *p = t->covers;
	char want[200];

	/* the ticket's tool (name@version: the name decides), then each
	 * tool it covers (a plan's steps) */
	snprintf(want, sizeof(want), "%.*s:approve", (int)strcspn(t->tool, "@"), t->tool);
	while (tg_scopes_cover(scopes, want)) {
		size_t n;

		while (p && *p == ' ')
			p++;
		if (!p || !*p)
			return 1;
		n = strcspn(p, " ");
		snprintf(want, sizeof(want), "%.*s:approve", (int)(n < 128 ? n : 128), p);
		p += n;
	}
	if (need)
		snprintf(need, len, "%s", want);
	return 0;
}

static int may_approve(const char *scopes, const struct tg_ticket *t)
{
	return tg_ticket_approvable(t, scopes, NULL, 0);
}

/* A store refusal as an answer: not found, a conflict, or the store. */
static int store_failure(const struct tg_error *err, char **out)
{
	if (err->code != TG_ERR_INVALID)
		return failure(500, "store", err->msg, out);
	if (strstr(err->msg, "no such ticket") || strstr(err->msg, "not a ticket id"))
		return failure(404, "not_found", err->msg, out);
	return failure(409, "conflict", err->msg, out);
}

/* GET /admin/tickets[?state=S]: those the caller may decide, and its own. */
static int list_tickets(struct tg_gate *g, struct tg_store *st, const char *principal,
			const char *scopes, const char *query, char **out)
{
	struct tg_ticket *list;
	struct tg_error err;
	json_t *arr = json_array();
	int state = TG_TICKET_PENDING; /* -2: a state that is none */
	size_t n, i;

	if (query && strncmp(query, "state=", 6) == 0) {
		state = -2;
		if (strcmp(query + 6, "all") == 0)
			state = TG_TICKET_ANY;
		for (i = 0; state == -2 && i <= TG_TICKET_COMPENSATED; i++)
			if (strcmp(query + 6, tg_ticket_state_name((enum tg_ticket_state)i)) == 0)
				state = (int)i;
		if (state == -2) {
			json_decref(arr);
			return failure(400, "bad_request", "state: pending, approved, rejected, "
				       "expired, cancelled, executed, failed, compensated or all", out);
		}
	} else if (query && *query) {
		json_decref(arr);
		return failure(400, "bad_request", "the one query parameter is state=", out);
	}
	if (tg_store_ticket_list(st, (enum tg_ticket_state)state, TG_STORE_NOW, &list, &n,
				 &err) < 0) {
		json_decref(arr);
		return store_failure(&err, out);
	}
	for (i = 0; i < n; i++) {
		if (arr && (may_approve(scopes, &list[i]) ||
			    strcmp(list[i].principal, principal) == 0)) {
			/* a list stays small: the arguments and the preview (up
			 * to 4 MiB each) are in GET /admin/tickets/ID */
			json_array_append_new(arr, with_tool(g, ticket_json(&list[i], 0),
							     list[i].tool));
		}
		tg_ticket_release(&list[i]);
	}
	free(list);
	return answer(json_pack("{s:o}", "tickets", arr), 200, out);
}

/* POST /admin/tickets/ID/{approve,reject,cancel}: tg_gate_decide, its
 * refusals as statuses (the messages name neither the requester nor the
 * scope: the caller may not be allowed to see the ticket). */
static int decide(struct tg_gate *g, struct tg_store *st, const char *principal,
		  const char *scopes, const char *id, const char *verb, json_t *body, char **out)
{
	const char *reason = json_string_value(json_object_get(body, "reason"));
	enum tg_decision d = strcmp(verb, "cancel") == 0    ? TG_DECISION_CANCEL
			     : strcmp(verb, "approve") == 0 ? TG_DECISION_APPROVE
							    : TG_DECISION_REJECT;
	struct tg_ticket now;
	struct tg_error err;
	int rc;

	rc = tg_gate_decide(st, g->audit, principal, scopes, id, d, reason, &err);
	if (rc < 0 && err.code == TG_ERR_UNAVAILABLE)
		return failure(503, "unavailable", err.msg, out);
	if (rc < 0 && err.code == TG_ERR_FORBIDDEN)
		return d == TG_DECISION_CANCEL
			       ? failure(403, "forbidden", "only the principal that asked for a "
					 "call may cancel it", out)
			       : failure(403, "insufficient_scope", "the caller's scopes do not "
					 "approve this tool", out);
	if (rc < 0 && err.code == TG_ERR_LIMIT)
		return failure(400, "bad_request", err.msg, out);
	if (rc < 0)
		return store_failure(&err, out);
	if (rc > 0)
		return failure(503, "unavailable", "the decision was taken, but its record could "
			       "not be written: the audit log stopped, and no call runs until it "
			       "writes again", out);
	if (tg_store_ticket_get(st, id, TG_STORE_NOW, &now, &err) < 0)
		return store_failure(&err, out);
	rc = answer(ticket_json(&now, 1), 200, out);
	tg_ticket_release(&now);
	return rc;
}

/* POST /admin/calls/ID/rollback {"dry_run": bool}. */
static int rollback(struct tg_gate *g, struct tg_store *st, const char *principal,
		    const char *scopes, const char *id, json_t *body, char **out)
{
	json_t *dry = json_object_get(body, "dry_run"), *res;
	struct tg_call_result r;
	struct tg_ticket t;
	struct tg_error err;
	int rc;

	if (dry && !json_is_boolean(dry))
		return failure(400, "bad_request", "dry_run: true or false", out);
	if (tg_store_ticket_get(st, id, TG_STORE_NOW, &t, &err) < 0)
		return store_failure(&err, out);
	rc = may_approve(scopes, &t);
	tg_ticket_release(&t);
	if (!rc)
		return failure(403, "insufficient_scope", "rolling a call back needs an approve "
			       "scope over its tool", out);
	rc = tg_gate_rollback(g, id, principal, json_is_true(dry), &r, &err);
	if (rc < 0)
		return err.code == TG_ERR_INVALID ? failure(409, "conflict", err.msg, out)
						  : failure(500, "rollback", err.msg, out);
	if (rc == 1)
		return answer(json_pack("{s:s,s:b}", "call_id", id, "already", 1), 200, out);
	res = json_pack("{s:s,s:s,s:b,s:b,s:o?}", "call_id", id, "compensation", r.tool, "dry_run",
			json_is_true(dry), "failed", r.is_error, "result",
			json_loads(r.structured_json ? r.structured_json : r.content_json, 0, NULL));
	rc = r.is_error ? 409 : 200;
	tg_call_result_release(&r);
	return answer(res, rc, out);
}

/* GET /admin/rollbacks: the log and its success rate, of the calls the
 * caller may decide or asked for (a compensation's answer may show a
 * file's content). */
static int list_rollbacks(struct tg_store *st, const char *principal, const char *scopes,
			  char **out)
{
	struct tg_rollback *r;
	struct tg_error err;
	json_t *arr = json_array();
	size_t n, i, ok = 0, ended = 0;

	if (tg_store_rollback_list(st, TG_ROLLBACK_ANY, &r, &n, &err) < 0) {
		json_decref(arr);
		return store_failure(&err, out);
	}
	for (i = 0; i < n; i++) {
		struct tg_ticket t;
		int mine = 0;

		if (tg_store_ticket_get(st, r[i].call_id, TG_STORE_NOW, &t, &err) == 0) {
			mine = may_approve(scopes, &t) || strcmp(t.principal, principal) == 0;
			tg_ticket_release(&t);
		}
		if (!mine) {
			tg_rollback_release(&r[i]);
			continue;
		}
		ok += r[i].state == TG_ROLLBACK_SUCCEEDED;
		ended += r[i].state != TG_ROLLBACK_RUNNING;
		json_array_append_new(arr, json_pack("{s:s,s:s,s:s,s:i,s:s?,s:I,s:I}", "call_id",
						     r[i].call_id, "state",
						     tg_rollback_state_name(r[i].state),
						     "requested_by", r[i].requested_by, "attempts",
						     r[i].attempts, "detail", r[i].detail, "started",
						     (json_int_t)r[i].started, "ended",
						     (json_int_t)r[i].ended));
		tg_rollback_release(&r[i]);
	}
	free(r);
	return answer(json_pack("{s:o,s:I,s:I}", "rollbacks", arr, "succeeded", (json_int_t)ok,
				"ended", (json_int_t)ended), 200, out);
}

int tg_gate_admin(struct tg_gate *g, const char *principal, const char *scopes,
		  const char *method, const char *path, const char *body, size_t len, char **out)
{
	struct tg_store *st = tg_gate_store(g);
	char id[33], verb[16];
	const char *query = strchr(path, '?');
	size_t plen = query ? (size_t)(query - path) : strlen(path);
	int get = strcmp(method, "GET") == 0, post = strcmp(method, "POST") == 0, rc;
	json_t *doc = NULL;
	struct tg_ticket t;
	struct tg_error err;

	*out = NULL;
	if (!st)
		return failure(404, "not_found", "the admin API needs a policy and a state "
			       "directory (serve --policy --state)", out);
	if (post && len) {
		doc = json_loadb(body, len, 0, NULL);
		if (!json_is_object(doc)) {
			json_decref(doc);
			return failure(400, "bad_request", "the body is a JSON object", out);
		}
	}
	if (plen == 14 && strncmp(path, "/admin/tickets", 14) == 0) {
		rc = get ? list_tickets(g, st, principal, scopes, query ? query + 1 : NULL, out)
			 : failure(405, "method_not_allowed", "GET", out);
	} else if (plen == 11 && strncmp(path, "/admin/warm", 11) == 0) {
		struct tg_sandbox_pool_stats ws;

		tg_gate_get_warm_stats(g, &ws);
		/* an operator's view (its errors name host paths): approvers */
		rc = !scopes || !strstr(scopes, ":approve")
			     ? failure(403, "insufficient_scope", "the warm pools are shown to a "
				       "principal with an approve scope", out)
		     : get ? answer(json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:s}",
					    "size", (json_int_t)ws.size, "ready",
					    (json_int_t)ws.ready, "refilling",
					    (json_int_t)ws.refilling, "spent", (json_int_t)ws.spent,
					    "made", (json_int_t)ws.made, "cgroups_reused",
					    (json_int_t)ws.cgroups_reused, "failed",
					    (json_int_t)ws.failed, "warm_runs",
					    (json_int_t)ws.warm_runs, "cold_runs",
					    (json_int_t)ws.cold_runs, "last_error", ws.last_error),
				  200, out)
			 : failure(405, "method_not_allowed", "GET", out);
	} else if (plen == 16 && strncmp(path, "/admin/rollbacks", 16) == 0) {
		rc = get ? list_rollbacks(st, principal, scopes, out)
			 : failure(405, "method_not_allowed", "GET", out);
	} else if (sscanf(path, "/admin/calls/%32[0-9a-f]/%15[a-z]", id, verb) == 2 &&
		   strcmp(verb, "rollback") == 0 && plen == 13 + 32 + 9) {
		rc = post ? rollback(g, st, principal, scopes, id, doc, out)
			  : failure(405, "method_not_allowed", "POST", out);
	} else if (strncmp(path, "/admin/tickets/", 15) == 0 && plen >= 15 + 32 &&
		   sscanf(path + 15, "%32[0-9a-f]", id) == 1 && strlen(id) == 32) {
		const char *rest = path + 15 + 32;
		size_t rlen = plen - 15 - 32;

		if (post && rlen > 1 && rlen < sizeof(verb) && rest[0] == '/' &&
		    (snprintf(verb, sizeof(verb), "%.*s", (int)rlen - 1, rest + 1),
		     strcmp(verb, "approve") == 0 || strcmp(verb, "reject") == 0 ||
		     strcmp(verb, "cancel") == 0)) {
			/* it reads the ticket first: no such ticket is a 404 */
			rc = decide(g, st, principal, scopes, id, verb, doc, out);
		} else if (tg_store_ticket_get(st, id, TG_STORE_NOW, &t, &err) < 0) {
			rc = store_failure(&err, out);
		} else {
			if (rlen == 0 && get)
				rc = may_approve(scopes, &t) || strcmp(t.principal, principal) == 0
					     ? answer(with_tool(g, ticket_json(&t, 1), t.tool), 200,
						      out)
					     : failure(403, "insufficient_scope", "the caller may "
						       "neither decide this ticket nor did it ask "
						       "for it", out);
			else
				rc = failure(rlen == 0 ? 405 : 404, rlen == 0 ? "method_not_allowed"
					     : "not_found", rlen == 0 ? "GET" : "POST .../approve, "
					     ".../reject or .../cancel", out);
			tg_ticket_release(&t);
		}
	} else {
		rc = failure(404, "not_found", "the admin API: /admin/tickets, /admin/tickets/ID, "
			     "/admin/tickets/ID/{approve,reject,cancel}, /admin/calls/ID/rollback, "
			     "/admin/rollbacks, /admin/warm", out);
	}
	json_decref(doc);
	return rc;
}
