/*
 * Resources, prompts and completion as the gate serves them
 * (include/toolgate/gate.h; docs/UPSTREAMS.md, "Resources, prompts and
 * completions"): the catalogue's own, then each upstream's as its runner
 * listed them (src/exec/upstream_catalog.c) under the upstream's
 * namespace, a resource's URI as TG_UPSTREAM_URI_PREFIX NAME/ and the
 * server's own URI, a prompt p as NAME.p; each read, prompts/get and
 * completion of an upstream's routed back to its server.
 *
 * These are live reads of what the server holds, so each is allowed only
 * by the caller's scopes over the pseudo-tools NAME.resources and
 * NAME.prompts (read, the gate's one decision: identity.c), a listing
 * shows only what the caller may read, every resources/read and
 * prompts/get is recorded (kind "read": never what was read), and what a
 * server answers is redacted (output.c) before anyone sees it.
 *
 * Must never: show or read for a caller what its scopes do not allow, hand
 * on a server's answer unredacted, or read an upstream's data without a
 * record of it.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "exec/upstream_run.h"
#include "gate/gate_int.h"
#include "toolgate/catalog.h"
#include "toolgate/upstream.h"

#define PREFIX TG_UPSTREAM_URI_PREFIX
#define PREFIX_LEN (sizeof(PREFIX) - 1)

/* How one of the server's lists is served: the member rewritten, and the
 * pseudo-tool whose read scope shows it. */
static const struct {
	const char *member, *what;
} served_as[UPSTREAM_RUN_NLISTS] = {
	[UPSTREAM_RUN_RESOURCES] = { "uri", "resources" },
	[UPSTREAM_RUN_TEMPLATES] = { "uriTemplate", "resources" },
	[UPSTREAM_RUN_PROMPTS] = { "name", "prompts" },
};

/* The served form of upstream name's v (a URI or template under the
 * prefix, or a prompt's NAME.v), a new JSON string or NULL. */
static json_t *served(const char *name, const char *v, int prompt)
{
	size_t n = strlen(name) + strlen(v) + PREFIX_LEN + 2;
	char *s = malloc(n);
	json_t *j;

	if (!s)
		return NULL;
	snprintf(s, n, "%s%s%s%s", prompt ? "" : PREFIX, name, prompt ? "." : "/", v);
	j = json_string(s);
	free(s);
	return j;
}

/* 1 if who's scopes allow a read of upstream's pseudo-tool what; else 0
 * and the scope it needs in need. */
static int may(struct tg_gate *g, const struct tg_reader *who, const char *upstream,
	       const char *what, char *need, size_t len)
{
	char tool[64];

	snprintf(tool, sizeof(tool), "%s.%s", upstream, what);
	return !gate_scope_missing_for(g, tool, 0, who ? who->scopes : NULL, need, len);
}

/* Upstream e's list which, as served, appended to out; -1 out of memory. */
static int append_listed(json_t *out, const struct gate_upstream *e, enum upstream_run_list which)
{
	char *text = upstream_run_list(e->run, which);
	json_t *list = text ? json_loads(text, 0, NULL) : NULL, *entry, *v;
	const char *member = served_as[which].member;
	size_t i;
	int rc = 0;

	free(text);
	json_array_foreach(list, i, entry) {
		v = served(e->u->name, json_string_value(json_object_get(entry, member)),
			   which == UPSTREAM_RUN_PROMPTS);
		if (!v || json_object_set_new(entry, member, v) < 0 ||
		    json_array_append(out, entry) < 0) {
			rc = -1;
			break;
		}
	}
	json_decref(list);
	return rc;
}

/* own (the catalogue's list, JSON text, taken; NULL: err says why) and
 * each upstream's list which that who may read, JSON text. */
static char *listing(struct tg_gate *g, const struct tg_reader *who, enum upstream_run_list which,
		     char *own, struct tg_error *err)
{
	json_t *out = own ? json_loads(own, 0, NULL) : NULL;
	struct gate_upstream **v = NULL;
	char need[200], *text = NULL;
	size_t n = 0, i;
	int rc = 0;

	free(own);
	if (!own)
		return NULL;
	if (!out || gate_upstreams_hold(g, &v, &n) < 0)
		rc = -1;
	for (i = 0; i < n; i++) {
		if (rc == 0 && may(g, who, v[i]->u->name, served_as[which].what, need, sizeof(need)))
			rc = append_listed(out, v[i], which);
		gate_upstream_put(g, v[i]);
	}
	free(v);
	if (rc == 0)
		text = json_dumps(out, JSON_COMPACT);
	json_decref(out);
	if (!text)
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return text;
}

char *tg_gate_resources_json(struct tg_gate *g, const struct tg_reader *who, int templates,
			     struct tg_error *err)
{
	const struct tg_catalog *cat = tg_gate_acquire(g);
	char *own = tg_catalog_resources_json(cat, templates, err);

	tg_gate_release(g, cat);
	if (own && g->skills_dir && !(own = gate_skills_list(g, own, templates, 0)))
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return listing(g, who, templates ? UPSTREAM_RUN_TEMPLATES : UPSTREAM_RUN_RESOURCES, own,
		       err);
}

char *tg_gate_prompts_json(struct tg_gate *g, const struct tg_reader *who, struct tg_error *err)
{
	const struct tg_catalog *cat = tg_gate_acquire(g);
	char *own = tg_catalog_prompts_json(cat, err);

	tg_gate_release(g, cat);
	if (own && g->skills_dir && !(own = gate_skills_list(g, own, 0, 1)))
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return listing(g, who, UPSTREAM_RUN_PROMPTS, own, err);
}

/* ---- a request routed back ------------------------------------------------ */

/* The upstream a served URI names (with a reference) and, in *orig, the
 * server's own URI; NULL when uri is not under the prefix (*under 0: the
 * catalogue's) or names no upstream served (*under 1). */
static struct gate_upstream *by_uri(struct tg_gate *g, const char *uri, const char **orig,
				    int *under)
{
	const char *name = uri + PREFIX_LEN, *slash;

	*under = strncmp(uri, PREFIX, PREFIX_LEN) == 0;
	slash = *under ? strchr(name, '/') : NULL;
	if (!slash)
		return NULL;
	*orig = slash + 1;
	return gate_upstream_named(g, name, (size_t)(slash - name));
}

/* The upstream whose namespace prompt name lies in (with a reference),
 * *orig its own name; NULL: the catalogue's. */
static struct gate_upstream *by_prompt(struct tg_gate *g, const char *name, const char **orig)
{
	const char *dot = strchr(name, '.');

	if (!dot)
		return NULL;
	*orig = dot + 1;
	return gate_upstream_named(g, name, (size_t)(dot - name));
}

/* What one request of a server is: its method, the capability it needs,
 * the pseudo-tool whose scope allows it, what it is about as served (the
 * record's subject), whether it is recorded, and the result's member
 * given back (NULL: the whole result) with its JSON type. */
struct ask {
	const char *method, *capability, *what, *subject;
	int record;
	const char *member;
	json_type type;
};

/* The read's record (kind "read", docs/AUDIT.md): who, the pseudo-tool,
 * the method, the subject, the outcome, how long, what was redacted by
 * rule, the error; never what was read. Waited for when it ran. */
static int record_read(struct tg_gate *g, const struct tg_reader *who, const struct ask *a,
		       const char *tool, const char *outcome, const struct timespec *start,
		       const struct redaction *t, const struct tg_error *why, struct tg_error *err)
{
	struct timespec now;
	json_t *o, *by;
	size_t k;

	clock_gettime(CLOCK_MONOTONIC, &now);
	o = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:I}", "kind", "read", "principal",
		      who && who->principal ? who->principal : "", "tool", tool, "method",
		      a->method, "subject", a->subject, "outcome", outcome, "duration_us",
		      (json_int_t)((now.tv_sec - start->tv_sec) * 1000000LL +
				   (now.tv_nsec - start->tv_nsec) / 1000));
	if (o && why)
		json_object_set_new(o, "error", json_string(why->msg));
	if (o && t->count) {
		by = json_object();
		for (k = 0; by && k < t->nrules; k++)
			json_object_set_new(by, t->rules[k], json_integer((json_int_t)t->per[k]));
		json_object_set_new(o, "redacted", by);
	}
	return gate_record_fields(g, o, strcmp(outcome, "forbidden") != 0, err);
}

/* The server's URIs in contents (a read's) as served. */
static int serve_uris(json_t *contents, const char *name)
{
	json_t *c, *v;
	size_t i;

	json_array_foreach(contents, i, c) {
		if (!json_is_object(c))
			return -1;
		if (!json_is_string(json_object_get(c, "uri")))
			continue;
		v = served(name, json_string_value(json_object_get(c, "uri")), 0);
		if (!v || json_object_set_new(c, "uri", v) < 0)
			return -1;
	}
	return 0;
}

/* The server's result (text) checked and redacted: the member a asks
 * for, or the whole, JSON text (malloc'd); NULL and err. */
static char *answer_of(const struct gate_upstream *e, const struct ask *a, const char *res,
		       struct redaction *t, struct tg_error *err)
{
	json_t *r = json_loads(res, 0, NULL), *v = a->member ? json_object_get(r, a->member) : r;
	char *out = NULL;

	if (!v || json_typeof(v) != a->type ||
	    (a->capability[0] == 'p' && !json_is_array(json_object_get(v, "messages"))) ||
	    (strcmp(a->method, "resources/read") == 0 && serve_uris(v, e->u->name) < 0)) {
		tg_error_set(err, TG_ERR_INVALID, "upstream %s answered %s with something that is "
			     "not its result", e->u->name, a->method);
	} else {
		gate_redact_json(v, t);
		if (!(out = json_dumps(v, JSON_COMPACT)))
			tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	json_decref(r);
	return out;
}

/* Request a of upstream e (the reference taken) with params (taken), for
 * who: scope, record, redaction. The answer (JSON text), or NULL and err. */
static char *ask_upstream(struct tg_gate *g, const struct tg_reader *who, struct gate_upstream *e,
			  const struct ask *a, json_t *params, struct tg_error *err)
{
	struct redaction t;
	struct timespec start;
	struct tg_error rerr;
	const char *outcome = "ok";
	char tool[64], need[200], *text, *res = NULL, *out = NULL;

	memset(&t, 0, sizeof(t));
	clock_gettime(CLOCK_MONOTONIC, &start);
	snprintf(tool, sizeof(tool), "%s.%s", e->u->name, a->what);
	text = params ? json_dumps(params, JSON_COMPACT) : NULL;
	json_decref(params);
	if (!may(g, who, e->u->name, a->what, need, sizeof(need))) {
		tg_error_set(err, TG_ERR_FORBIDDEN, "the caller may not read the %s of upstream %s "
			     "(it needs the scope %s)", a->what, e->u->name, need);
		outcome = "forbidden";
	} else if (!text) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		outcome = "error";
	} else if (a->record && gate_audit_ok(g, err) < 0) {
		/* nothing read that the log cannot keep */
		tg_error_set(err, TG_ERR_UNAVAILABLE, "the audit log has stopped: nothing is read");
		goto out;
	} else if (upstream_run_request(e->run, a->capability, a->method, text, 0, &res, err) < 0) {
		outcome = err->code == TG_ERR_UNAVAILABLE ? "upstream_unavailable"
			  : err->code == TG_ERR_LIMIT	 ? "upstream_timeout"
							 : "upstream_error";
	} else if (!(out = answer_of(e, a, res, &t, err))) {
		outcome = err->code == TG_ERR_NOMEM ? "error" : "bad_output";
	}
	if (a->record && record_read(g, who, a, tool, outcome, &start, &t, out ? NULL : err,
				     &rerr) < 0 && out) {
		free(out);
		out = NULL;
		tg_error_set(err, TG_ERR_UNAVAILABLE, "%s ran, but its record could not be written: "
			     "%s", a->method, rerr.msg);
	}
out:
	free(text);
	free(res);
	gate_upstream_put(g, e);
	return out;
}

/* params (taken) with member key set to text parsed (NULL: none set):
 * params, or NULL out of memory (or text not JSON). */
static json_t *with_member(json_t *params, const char *key, const char *text)
{
	if (params && text && json_object_set_new(params, key, json_loads(text, 0, NULL)) < 0) {
		json_decref(params);
		return NULL;
	}
	return params;
}

char *tg_gate_resource_read(struct tg_gate *g, const struct tg_reader *who, const char *uri,
			    struct tg_error *err)
{
	struct ask a = { "resources/read", "resources", "resources", uri, 1, "contents",
			 JSON_ARRAY };
	const struct tg_catalog *cat;
	struct gate_upstream *e;
	const char *orig = NULL;
	char *text;
	int under;

	tg_error_clear(err);
	if (gate_skills_is_uri(uri))
		return gate_skills_read(g, uri, err);
	e = by_uri(g, uri, &orig, &under);
	if (e)
		return ask_upstream(g, who, e, &a, json_pack("{s:s}", "uri", orig), err);
	if (under) {
		tg_error_set(err, TG_ERR_INVALID, "no resource %.200s: it names no upstream served",
			     uri);
		return NULL;
	}
	cat = tg_gate_acquire(g);
	text = tg_catalog_resource_read(cat, uri, err);
	tg_gate_release(g, cat);
	return text;
}

char *tg_gate_prompt_get(struct tg_gate *g, const struct tg_reader *who, const char *name,
			 const char *args_json, struct tg_error *err)
{
	struct ask a = { "prompts/get", "prompts", "prompts", name, 1, NULL, JSON_OBJECT };
	const struct tg_catalog *cat;
	struct gate_upstream *e;
	const char *orig = NULL;
	json_t *params;
	char *text;

	tg_error_clear(err);
	if (gate_skills_is_prompt(name))
		return gate_skills_prompt(g, name, err);
	e = by_prompt(g, name, &orig);
	if (e) {
		params = with_member(json_pack("{s:s}", "name", orig), "arguments", args_json);
		return ask_upstream(g, who, e, &a, params, err);
	}
	cat = tg_gate_acquire(g);
	text = tg_catalog_prompt_get(cat, name, args_json, err);
	tg_gate_release(g, cat);
	return text;
}

char *tg_gate_complete(struct tg_gate *g, const struct tg_reader *who, const char *ref_type,
		       const char *ref, const char *argument, const char *value,
		       const char *context_json, struct tg_error *err)
{
	int prompt = strcmp(ref_type, "ref/prompt") == 0, under = 0;
	struct ask a = { "completion/complete", "completions", prompt ? "prompts" : "resources",
			 ref, 0, "completion", JSON_OBJECT };
	const struct tg_catalog *cat;
	struct gate_upstream *e = NULL;
	const char *orig = NULL;
	json_t *params;
	char *text;

	tg_error_clear(err);
	if (ref)
		e = prompt ? by_prompt(g, ref, &orig) : by_uri(g, ref, &orig, &under);
	if (e) {
		params = json_pack("{s:{s:s,s:s},s:{s:s,s:s}}", "ref", "type", ref_type,
				   prompt ? "name" : "uri", orig, "argument", "name", argument,
				   "value", value);
		params = with_member(params, "context", context_json);
		return ask_upstream(g, who, e, &a, params, err);
	}
	/* the catalogue's templates list no completions: its prompts do */
	cat = tg_gate_acquire(g);
	text = tg_catalog_complete(cat, prompt ? ref : NULL, argument, value, err);
	tg_gate_release(g, cat);
	return text;
}
