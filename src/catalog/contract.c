/*
 * The contract loader (include/toolgate/contract.h, docs/contracts.md).
 *
 * A contract is refused, naming the file, the field and the reason, for
 * anything a reviewer would send back: an unknown field (a typo must not
 * silently drop a rule), a missing authority (no default: a tool is read or
 * write because its owner said so), a write tool without a dry-run
 * statement and a compensation or an irreversibility (DESIGN: every write
 * has a rollback story), a schema that does not compile, a name outside the
 * MCP tool-name rules, a version that is not semver, an x-mcp-header
 * that breaks MCP 2026-07-28's rules (param_header.c); an upstream's
 * declaration put where contracts go is named as one, and where it goes. The executor's kind
 * is read here once, aliases included, so that no other part tells a plan
 * by a name.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog/catalog_int.h"
#include "catalog/contract_doc.h"
#include "sandbox/limits.h"
#include "toolgate/contract.h"
#include "toolgate/egress.h"
#include "toolgate/sandbox.h"
#include "util/jload.h"
#include "util/json_span.h"
#include "util/parse.h"

#define MAX_CONTRACT_BYTES (1u << 20)
#define MAX_TEXT 4096

struct loader {
	struct jload j;         /* "contract ORIGIN: FIELD: why" (util/jload.h) */
	const struct tg_schema_options *opts;
	struct tg_contract *c;
	const char *text;       /* the contract as written: its schemas' own bytes */
	size_t len;
};

static int text(struct loader *l, json_t *obj, const char *key, const char *field,
		int required, char **out)
{
	json_t *v = json_object_get(obj, key);

	*out = NULL;
	if (!v)
		return required ? jload_bad(&l->j, field, "required") : 0;
	return jload_string(&l->j, v, field, MAX_TEXT, out);
}

/* A string field of an element of an array of objects, its error naming
 * "where.key" ("errors[2].code"). */
static int member_text(struct loader *l, json_t *obj, const char *where, const char *key,
		       int required, char **out)
{
	char field[160];

	snprintf(field, sizeof(field), "%s.%s", where, key);
	return text(l, obj, key, field, required, out);
}

static int string_list(struct loader *l, json_t *a, const char *field, size_t max, char ***out)
{
	json_t *v;
	size_t i;

	*out = NULL;
	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) > max)
		return jload_bad(&l->j, field, "must be an array of at most %zu strings", max);
	*out = calloc(json_array_size(a) + 1, sizeof(**out));
	if (!*out)
		return jload_nomem(&l->j);
	json_array_foreach(a, i, v) {
		if (!json_is_string(v) || json_string_length(v) > MAX_TEXT)
			return jload_bad(&l->j, field, "item %zu must be a string", i);
		(*out)[i] = strdup(json_string_value(v));
		if (!(*out)[i])
			return jload_nomem(&l->j);
	}
	return 0;
}

int tg_semver_parse(const char *t, struct tg_semver *v)
{
	unsigned long n[3];
	const char *p = t;
	char *end;
	int i;

	memset(v, 0, sizeof(*v));
	for (i = 0; i < 3; i++) {
		if (!isdigit((unsigned char)*p) || (p[0] == '0' && isdigit((unsigned char)p[1])))
			return -1;
		n[i] = strtoul(p, &end, 10);
		if (n[i] > 999999)
			return -1;
		p = end;
		if (i < 2 && *p++ != '.')
			return -1;
	}
	if (*p == '-') {
		size_t k, len = strlen(p + 1);

		if (len == 0 || len >= sizeof(v->pre))
			return -1;
		for (k = 0; k < len; k++)
			if (!isalnum((unsigned char)p[1 + k]) && p[1 + k] != '.' && p[1 + k] != '-')
				return -1;
		memcpy(v->pre, p + 1, len + 1);
		p += len + 1;
	}
	if (*p)
		return -1;
	v->major = (unsigned)n[0];
	v->minor = (unsigned)n[1];
	v->patch = (unsigned)n[2];
	return 0;
}

int tg_semver_compare(const struct tg_semver *a, const struct tg_semver *b)
{
	if (a->major != b->major)
		return a->major < b->major ? -1 : 1;
	if (a->minor != b->minor)
		return a->minor < b->minor ? -1 : 1;
	if (a->patch != b->patch)
		return a->patch < b->patch ? -1 : 1;
	/* a pre-release sorts before its release */
	if (!a->pre[0] || !b->pre[0])
		return a->pre[0] ? -1 : b->pre[0] ? 1 : 0;
	return strcmp(a->pre, b->pre) < 0 ? -1 : strcmp(a->pre, b->pre) > 0;
}

static int valid_tool_name(const char *s)
{
	size_t n = strlen(s), i;

	if (n < 1 || n > 128)
		return 0;
	for (i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '.' && s[i] != '-')
			return 0;
	return 1;
}

static int valid_date(const char *s)
{
	return strlen(s) == 10 && isdigit((unsigned char)s[0]) && s[4] == '-' && s[7] == '-';
}

static int schema_field(struct loader *l, json_t *doc, const char *key, int required,
			struct tg_schema **out, char **out_text, void **out_doc)
{
	json_t *v = json_object_get(doc, key);
	size_t at, start, end;
	char *txt;

	*out = NULL;
	*out_text = NULL;
	if (!v)
		return required ? jload_bad(&l->j, key, "required") : 0;
	if (!json_is_object(v) && !json_is_boolean(v))
		return jload_bad(&l->j, key, "must be a JSON Schema (an object or a boolean)");
	txt = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!txt)
		return jload_nomem(&l->j);
	/* compiled as written, so that a number past a double's digits
	 * keeps them (docs/SCHEMA.md, "Numbers"); clients are shown txt */
	at = json_span_member(l->text, l->len, 0, key);
	end = at ? json_span_value(l->text, l->len, at, &start) : 0;
	if (!end)
		start = 0, end = 0;
	if (tg_schema_compile(end ? l->text + start : txt, end ? end - start : strlen(txt),
			      l->opts, out, l->j.err) < 0) {
		size_t i, line = 1;

		free(txt);
		for (i = 0; i < start; i++)
			line += l->text[i] == '\n';
		/* its code kept: out of memory is not a bad contract; a line and
		 * column in the message count from where the schema begins */
		if (end && line > 1 && strstr(l->j.err->msg, "line "))
			return tg_error_wrap(l->j.err, "contract %s: %s: invalid schema (its line 1 is "
					     "the file's line %zu)", l->j.origin, key, line);
		return tg_error_wrap(l->j.err, "contract %s: %s: invalid schema", l->j.origin, key);
	}
	*out_text = txt;
	if (out_doc) /* the contract's input_schema_doc (contract_doc.h) */
		*out_doc = json_incref(v);
	return 0;
}

static int load_errors(struct loader *l, json_t *doc)
{
	static const char *const fields[] = { "code", "meaning", "retryable", NULL };
	json_t *a = json_object_get(doc, "errors"), *e;
	struct tg_contract *c = l->c;
	char field[64];
	size_t i;

	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) > 256)
		return jload_bad(&l->j, "errors", "must be an array of at most 256 errors");
	c->errors = calloc(json_array_size(a) + 1, sizeof(*c->errors));
	if (!c->errors)
		return jload_nomem(&l->j);
	json_array_foreach(a, i, e) {
		snprintf(field, sizeof(field), "errors[%zu]", i);
		if (!json_is_object(e))
			return jload_bad(&l->j, field, "must be an object");
		c->nerrors = i + 1;
		if (jload_only(&l->j, e, field, fields) < 0 ||
		    member_text(l, e, field, "code", 1, &c->errors[i].code) < 0 ||
		    member_text(l, e, field, "meaning", 1, &c->errors[i].meaning) < 0)
			return -1;
		if (!json_is_boolean(json_object_get(e, "retryable")))
			return jload_bad(&l->j, field, "retryable: must be true or false");
		c->errors[i].retryable = json_is_true(json_object_get(e, "retryable"));
	}
	return 0;
}

/* executor.limits: the sandbox's reader (sandbox/limits.h), the one for
 * every file of the catalogue that gives a sandbox limits. */
static int load_limits(struct loader *l, json_t *lim)
{
	struct tg_contract *c = l->c;
	struct sandbox_limits s;
	const char *key, *why;
	char field[160];

	if (sandbox_limits_parse(lim, &s, &key, &why) < 0) {
		snprintf(field, sizeof(field), "executor.limits%s%.100s", key ? "." : "",
			 key ? key : "");
		return jload_bad(&l->j, field, "%s", why);
	}
	c->memory = s.memory;
	c->output = s.output;
	c->timeout_ms = s.timeout_ms;
	c->pids = s.pids;
	c->millicpus = s.millicpus;
	return 0;
}

static int load_mounts(struct loader *l, json_t *a)
{
	static const char *const fields[] = { "host", "inside", "writable", NULL };
	struct tg_contract *c = l->c;
	char field[64];
	json_t *m;
	size_t i;

	if (!a)
		return 0;
	if (!json_is_array(a) || json_array_size(a) > 64)
		return jload_bad(&l->j, "executor.mounts", "must be an array of at most 64 mounts");
	c->mounts = calloc(json_array_size(a) + 1, sizeof(*c->mounts));
	if (!c->mounts)
		return jload_nomem(&l->j);
	json_array_foreach(a, i, m) {
		snprintf(field, sizeof(field), "executor.mounts[%zu]", i);
		if (!json_is_object(m))
			return jload_bad(&l->j, field, "must be an object");
		c->nmounts = i + 1;
		if (jload_only(&l->j, m, field, fields) < 0 ||
		    member_text(l, m, field, "host", 1, &c->mounts[i].host) < 0 ||
		    member_text(l, m, field, "inside", 0, &c->mounts[i].inside) < 0)
			return -1;
		c->mounts[i].writable = json_is_true(json_object_get(m, "writable"));
	}
	return 0;
}

/* What the gateway gives a command tool besides its mounts
 * (docs/contracts.md, "executor"): the workspace, none (the default), read
 * or write, and its family's state directory (a write tool's; the
 * authority checks come once the whole contract is read). A builtin runs
 * in the gateway, without a sandbox: it is given neither. */
static int load_given(struct loader *l, json_t *e)
{
	static const char *const modes[] = { "none", "read", "write" };
	struct tg_contract *c = l->c;
	json_t *v = json_object_get(e, "workspace"), *st = json_object_get(e, "state");

	if (c->executor != TG_EXEC_COMMAND && (v || st))
		return jload_bad(&l->j, v ? "executor.workspace" : "executor.state",
			   "is for command tools: a builtin runs in the gateway, without a sandbox");
	c->workspace = TG_WORKSPACE_NONE;
	if (v) {
		const char *s = json_string_value(v);
		int i;

		for (i = 0; i < 3 && !(s && strcmp(s, modes[i]) == 0); i++)
			;
		if (i == 3)
			return jload_bad(&l->j, "executor.workspace", "must be none (the default), read or write");
		c->workspace = (enum tg_workspace)i;
	}
	if (st && !json_is_boolean(st))
		return jload_bad(&l->j, "executor.state", "must be true or false");
	c->state = json_is_true(st);
	/* the family names the directory: STATE/tools/FAMILY */
	if (c->state && c->name[0] == '.')
		return jload_bad(&l->j, "executor.state", "its directory is the tool's family, its name up "
			   "to the first dot: a name that starts with a dot has none");
	return 0;
}

/* Whether executor e is a plan's: TG_EXEC_PLAN ("plan"), TG_EXEC_PLAN_UNDO
 * ("plan.undo"), or 0. *older: spelt the older way, a builtin named "saga"
 * or "saga.undo", which catalogues written before plans had a kind of
 * their own still say. */
static int plan_kind(const char *kind, json_t *e, int *older)
{
	const char *name = json_string_value(json_object_get(e, "name"));

	*older = strcmp(kind, "builtin") == 0 && name &&
		 (strcmp(name, "saga") == 0 || strcmp(name, "saga.undo") == 0);
	if (*older)
		kind = strcmp(name, "saga") == 0 ? "plan" : "plan.undo";
	if (strcmp(kind, "plan") == 0)
		return TG_EXEC_PLAN;
	return strcmp(kind, "plan.undo") == 0 ? TG_EXEC_PLAN_UNDO : 0;
}

/* A plan and its undoing are run by the gate itself (src/gate/saga.c),
 * their steps being other tools' calls, each with its own executor: the
 * plan's says its kind and nothing else (the older spelling its name
 * too). A field that would configure a sandbox or a builtin is a mistake
 * about what runs, so it is refused rather than ignored. */
static int load_plan(struct loader *l, json_t *e, int kind, int older)
{
	const char *key;
	json_t *v;

	l->c->executor = (enum tg_executor_kind)kind;
	json_object_foreach(e, key, v) {
		char field[160];

		if (strcmp(key, "kind") == 0 || (older && strcmp(key, "name") == 0))
			continue;
		snprintf(field, sizeof(field), "executor.%s", key);
		return jload_bad(&l->j, field, "a plan's executor takes only its kind: its steps are "
			   "other tools, each run by its own executor");
	}
	return 0;
}

static int load_executor(struct loader *l, json_t *doc)
{
	static const char *const fields[] = { "kind", "name", "argv", "tier", "limits",
					      "mounts", "env", "egress", "output", "interactive",
					      "workspace", "state", "prestart", NULL };
	json_t *e = json_object_get(doc, "executor"), *env, *v;
	struct tg_contract *c = l->c;
	const char *kind, *key;
	size_t i = 0;
	int plan, older, tier;

	if (!e)
		return jload_bad(&l->j, "executor", "required");
	if (!json_is_object(e) || jload_only(&l->j, e, "executor", fields) < 0)
		return json_is_object(e) ? -1 : jload_bad(&l->j, "executor", "must be an object");
	kind = json_string_value(json_object_get(e, "kind"));
	if (!kind)
		return jload_bad(&l->j, "executor.kind", "required: builtin, command, plan or plan.undo");
	plan = plan_kind(kind, e, &older);
	if (plan)
		return load_plan(l, e, plan, older);
	if (strcmp(kind, "builtin") == 0) {
		c->executor = TG_EXEC_BUILTIN;
		if (load_given(l, e) < 0)
			return -1;
		return text(l, e, "name", "executor.name", 1, &c->builtin);
	}
	if (strcmp(kind, "mcp") == 0)
		return jload_bad(&l->j, "executor.kind", "mcp is reserved: an upstream MCP server is "
			   "declared in the catalogue's upstreams/NAME.json (docs/UPSTREAMS.md), "
			   "not in a contract");
	if (strcmp(kind, "command") != 0)
		return jload_bad(&l->j, "executor.kind", "must be builtin, command, plan or plan.undo");
	c->executor = TG_EXEC_COMMAND;
	if (string_list(l, json_object_get(e, "argv"), "executor.argv", 256, &c->argv) < 0)
		return -1;
	if (!c->argv || !c->argv[0] || !c->argv[0][0])
		return jload_bad(&l->j, "executor.argv", "required: the command and its arguments");
	v = json_object_get(e, "output");
	if (v && (!json_is_string(v) || (strcmp(json_string_value(v), "json") &&
					 strcmp(json_string_value(v), "mcp"))))
		return jload_bad(&l->j, "executor.output", "must be json (the default) or mcp");
	c->output_mcp = v && strcmp(json_string_value(v), "mcp") == 0;
	v = json_object_get(e, "interactive");
	if (v && !json_is_boolean(v))
		return jload_bad(&l->j, "executor.interactive", "must be true or false");
	c->interactive = json_is_true(v);
	v = json_object_get(e, "prestart");
	if (v && !json_is_boolean(v))
		return jload_bad(&l->j, "executor.prestart", "must be true or false");
	c->prestart = json_is_true(v);
	if (load_given(l, e) < 0)
		return -1;
	v = json_object_get(e, "tier");
	tier = v ? tg_tier_parse(json_string_value(v)) : TG_TIER_STRICT;
	if (tier < 0)
		return jload_bad(&l->j, "executor.tier", "must be strict or standard");
	c->tier = (enum tg_tier)tier;
	if (load_limits(l, json_object_get(e, "limits")) < 0 ||
	    load_mounts(l, json_object_get(e, "mounts")) < 0 ||
	    string_list(l, json_object_get(e, "egress"), "executor.egress", 64, &c->egress) < 0)
		return -1;
	if (c->egress && c->egress[0]) {
		struct tg_egress_policy *policy;
		size_t n = 0;

		/* the rules are checked now: a tool whose allowlist cannot
		 * be read does not load */
		if (c->tier != TG_TIER_STANDARD)
			return jload_bad(&l->j, "executor.egress", "is for the standard tier (say tier: "
				   "standard); the strict tier has no network");
		while (c->egress[n])
			n++;
		if (tg_egress_policy_new((const char *const *)c->egress, n, &policy, l->j.err) < 0) {
			char why[300];

			snprintf(why, sizeof(why), "%.280s", l->j.err->msg);
			return jload_bad(&l->j, "executor.egress", "%s", why);
		}
		tg_egress_policy_free(policy);
	}
	env = json_object_get(e, "env");
	if (env) {
		if (!json_is_object(env) || json_object_size(env) > 128)
			return jload_bad(&l->j, "executor.env", "must be an object of at most 128 strings");
		c->env = calloc(json_object_size(env) + 1, sizeof(*c->env));
		if (!c->env)
			return jload_nomem(&l->j);
		json_object_foreach(env, key, v) {
			if (strncmp(key, "TOOLGATE_", 9) == 0)
				return jload_bad(&l->j, "executor.env", "%s: TOOLGATE_ names are the gateway's "
					   "(TOOLGATE_DRY_RUN, TOOLGATE_CALL_ID)", key);
			if (!json_is_string(v) || asprintf(&c->env[i++], "%s=%s", key,
							   json_string_value(v)) < 0)
				return jload_bad(&l->j, "executor.env", "%s must be a string", key);
		}
	}
	return 0;
}

/* A compensation's argument mapping: a string value "${call_id}" or
 * "${arguments.NAME}" (NAME a property of the write's input) is replaced
 * when the compensation runs (docs/contracts.md); any other "${" is a
 * mistake, refused. */
static int check_mapping(struct loader *l, json_t *v, int depth)
{
	const char *s = json_string_value(v), *key;
	json_t *item;
	size_t i;

	if (depth > 16)
		return jload_bad(&l->j, "compensation.arguments", "nested deeper than 16");
	if (s && strstr(s, "${")) {
		size_t n = strlen(s);

		if (strcmp(s, "${call_id}") == 0 ||
		    (strncmp(s, "${arguments.", 12) == 0 && n > 13 && s[n - 1] == '}' &&
		     strcspn(s + 12, "}") == n - 13))
			return 0;
		return jload_bad(&l->j, "compensation.arguments", "\"%.80s\": a placeholder is "
			   "\"${call_id}\" or \"${arguments.NAME}\", the whole string", s);
	}
	json_object_foreach(v, key, item)
		if (check_mapping(l, item, depth + 1) < 0)
			return -1;
	json_array_foreach(v, i, item)
		if (check_mapping(l, item, depth + 1) < 0)
			return -1;
	return 0;
}

/* The rollback story of a write: dry-run stated, and a compensation or an
 * irreversibility with its reason. */
static int load_write_rules(struct loader *l, json_t *doc)
{
	static const char *const comp_fields[] = { "tool", "arguments", "irreversible", NULL };
	json_t *dr = json_object_get(doc, "dry_run"), *comp = json_object_get(doc, "compensation");
	struct tg_contract *c = l->c;

	c->dry_run = -1;
	if (dr) {
		const char *v = json_string_value(dr);

		if (!v || (strcmp(v, "supported") && strcmp(v, "unsupported") && strcmp(v, "overlay")))
			return jload_bad(&l->j, "dry_run", "must be supported, unsupported or overlay");
		c->dry_run = strcmp(v, "overlay") == 0 ? TG_DRY_RUN_OVERLAY
							: strcmp(v, "supported") == 0;
	}
	if (c->dry_run == TG_DRY_RUN_OVERLAY) {
		size_t i;
		int writable = c->workspace == TG_WORKSPACE_WRITE;

		for (i = 0; i < c->nmounts; i++)
			writable |= c->mounts[i].writable;
		if (c->executor != TG_EXEC_COMMAND || !writable)
			return jload_bad(&l->j, "dry_run", "overlay is for a command tool that writes: it needs "
				   "a writable mount or workspace (the gate runs it on overlays of "
				   "them)");
	}
	if (comp) {
		json_t *args;

		if (!json_is_object(comp) || jload_only(&l->j, comp, "compensation", comp_fields) < 0)
			return json_is_object(comp) ? -1 : jload_bad(&l->j, "compensation", "must be an object");
		if (text(l, comp, "tool", "compensation.tool", 0, &c->compensation_tool) < 0 ||
		    text(l, comp, "irreversible", "compensation.irreversible", 0,
			 &c->irreversible) < 0)
			return -1;
		if (!!c->compensation_tool == !!c->irreversible)
			return jload_bad(&l->j, "compensation",
				   "either a tool that undoes the write, or irreversible with a reason");
		args = json_object_get(comp, "arguments");
		if (args && (!c->compensation_tool || !json_is_object(args)))
			return jload_bad(&l->j, "compensation.arguments",
				   "an object mapping the undo tool's arguments, with tool");
		if (args && check_mapping(l, args, 0) < 0)
			return -1;
		if (args && !(c->compensation_args = json_dumps(args, JSON_COMPACT)))
			return jload_nomem(&l->j);
	}
	dr = json_object_get(doc, "resumable");
	if (dr && !json_is_boolean(dr))
		return jload_bad(&l->j, "resumable", "must be true or false");
	c->resumable = json_is_true(dr);
	if (c->resumable && c->authority != TG_AUTHORITY_WRITE)
		return jload_bad(&l->j, "resumable", "says how a write survives a crash: a read has nothing "
			   "to resume");
	/* a plan runs its steps once a person approved it as a whole: held,
	 * as only a write is */
	if ((c->executor == TG_EXEC_PLAN || c->executor == TG_EXEC_PLAN_UNDO) &&
	    c->authority != TG_AUTHORITY_WRITE)
		return jload_bad(&l->j, "authority", "a plan (or its undoing) runs writes once approved as a "
			   "whole: it must be write");
	if (c->prestart && (c->authority == TG_AUTHORITY_WRITE || (c->egress && c->egress[0])))
		return jload_bad(&l->j, "executor.prestart", "is for read tools without egress (a write's "
			   "call id is in its environment; egress has a proxy of the call's own)");
	dr = json_object_get(doc, "tasks");
	c->tasks = c->authority == TG_AUTHORITY_WRITE ? TG_TASKS_OPTIONAL : TG_TASKS_FORBIDDEN;
	if (dr) {
		static const char *const kinds[] = { "forbidden", "optional", "required" };
		const char *v = json_string_value(dr);
		int i;

		for (i = 0; i < 3 && !(v && strcmp(v, kinds[i]) == 0); i++)
			;
		if (i == 3)
			return jload_bad(&l->j, "tasks", "must be forbidden, optional or required");
		c->tasks = (enum tg_task_support)i;
	}
	if (c->authority == TG_AUTHORITY_WRITE && (c->dry_run < 0 || !comp))
		return jload_bad(&l->j, c->dry_run < 0 ? "dry_run" : "compensation",
			   "a write tool states dry_run (supported or unsupported) and a "
			   "compensation (the tool that undoes it, or irreversible with a reason)");
	return 0;
}

static int load_misc(struct loader *l, json_t *doc)
{
	static const char *const dep_fields[] = { "since", "sunset", "replacement", NULL };
	static const char *const owner_fields[] = { "team", "contact", NULL };
	struct tg_contract *c = l->c;
	json_t *v = json_object_get(doc, "owner");
	struct tg_error perr;
	const char *s;

	if (!v)
		return jload_bad(&l->j, "owner", "required: team and contact");
	if (!json_is_object(v) || jload_only(&l->j, v, "owner", owner_fields) < 0 ||
	    text(l, v, "team", "owner.team", 1, &c->owner_team) < 0 ||
	    text(l, v, "contact", "owner.contact", 1, &c->owner_contact) < 0)
		return json_is_object(v) ? -1 : jload_bad(&l->j, "owner", "must be an object");
	s = json_string_value(json_object_get(doc, "risk"));
	if (json_object_get(doc, "risk")) {
		static const char *const risks[] = { "low", "medium", "high", "critical" };
		int i;

		for (i = 0; i < 4 && s; i++)
			if (strcmp(s, risks[i]) == 0)
				c->risk = (enum tg_risk)(i + 1);
		if (!c->risk)
			return jload_bad(&l->j, "risk", "must be low, medium, high or critical");
	} else {
		c->risk = c->authority == TG_AUTHORITY_WRITE ? TG_RISK_HIGH : TG_RISK_LOW;
	}
	v = json_object_get(doc, "idempotent");
	if (v && !json_is_boolean(v))
		return jload_bad(&l->j, "idempotent", "must be true or false");
	c->idempotent = v ? json_is_true(v) : c->authority == TG_AUTHORITY_READ;
	v = json_object_get(doc, "open_world");
	if (v && !json_is_boolean(v))
		return jload_bad(&l->j, "open_world", "must be true or false");
	c->open_world = json_is_true(v);
	v = json_object_get(doc, "timeout");
	if (v && (!json_is_string(v) ||
		  parse_duration(json_string_value(v), &c->call_timeout_ms, &perr) < 0))
		return jload_bad(&l->j, "timeout", "a duration such as \"30s\"");
	v = json_object_get(doc, "deprecation");
	if (v) {
		if (!json_is_object(v) || jload_only(&l->j, v, "deprecation", dep_fields) < 0 ||
		    text(l, v, "since", "deprecation.since", 1, &c->deprecated_since) < 0 ||
		    text(l, v, "sunset", "deprecation.sunset", 0, &c->sunset) < 0 ||
		    text(l, v, "replacement", "deprecation.replacement", 0, &c->replacement) < 0)
			return json_is_object(v) ? -1 : jload_bad(&l->j, "deprecation", "must be an object");
		if (!valid_date(c->deprecated_since) || (c->sunset && !valid_date(c->sunset)))
			return jload_bad(&l->j, "deprecation", "dates are YYYY-MM-DD");
	}
	return string_list(l, json_object_get(doc, "tags"), "tags", 64, &c->tags);
}

/* An upstream's declaration (docs/UPSTREAMS.md) read as a contract: it
 * would be refused for its first unknown field ("transport"), which tells
 * its author nothing; say where it goes instead. origin is DIR/NAME.json
 * as the catalogue names its files; err set and -1 when doc is one, else 0. */
static int upstream_misplaced(const struct loader *l, json_t *doc)
{
	static const char *const keys[] = { "transport", "argv", "url", NULL };
	const char *origin = l->j.origin, *slash = strrchr(origin, '/'), *key = NULL, *last;
	char dir[4096], *real = NULL;
	size_t i;
	int rc;

	for (i = 0; keys[i] && !key; i++)
		if (json_object_get(doc, keys[i]))
			key = keys[i];
	if (!key)
		return 0;
	/* a DIR that is an upstreams folder already (--catalog named it, or
	 * "." inside it): the catalogue is the folder above */
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - origin) : 1,
		 slash ? (slash == origin ? "/" : origin) : ".");
	real = realpath(dir, NULL);
	last = real ? strrchr(real, '/') : NULL;
	if (last && strcmp(last, "/upstreams") == 0)
		rc = tg_error_set(l->j.err, TG_ERR_INVALID, "contract %s: this looks like an "
				  "upstream declaration (it has \"%s\") in an upstreams folder read as "
				  "a catalogue: name the catalogue above it (--catalog %.*s)", origin,
				  key, last == real ? 1 : (int)(last - real), real);
	else
		rc = tg_error_set(l->j.err, TG_ERR_INVALID, "contract %s: this looks like an "
				  "upstream declaration (it has \"%s\"): move it to %s/upstreams/%s",
				  origin, key, dir, slash ? slash + 1 : origin);
	free(real);
	return rc;
}

/* Integral doubles within 64 bits as integers again, everywhere in v. */
static json_t *integers_again(json_t *v)
{
	json_t *c, *n;
	void *it;
	size_t i;

	if (json_is_array(v)) {
		json_array_foreach(v, i, c)
			if ((n = integers_again(c)) != c && json_array_set_new(v, i, n) < 0)
				return NULL;
	} else if (json_is_object(v)) {
		for (it = json_object_iter(v); it; it = json_object_iter_next(v, it)) {
			c = json_object_iter_value(it);
			if ((n = integers_again(c)) != c && json_object_iter_set_new(v, it, n) < 0)
				return NULL;
		}
	} else if (json_is_real(v)) {
		double d = json_real_value(v);

		if (d == floor(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0)
			return json_integer((json_int_t)d);
	}
	return v;
}

/* The contract as jansson reads it. jansson refuses an integer past 64
 * bits; such a contract is read with its integers as doubles, those
 * that fit 64 bits made integers again: the fields a contract has read
 * as written, and its schemas are compiled from their own bytes
 * (schema_field). */
static json_t *load_text(const char *text, size_t len, json_error_t *jerr)
{
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, jerr), *again;

	if (doc || json_error_code(jerr) != json_error_numeric_overflow)
		return doc;
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL, jerr);
	if (!doc)
		return NULL;
	again = integers_again(doc);
	if (!again)
		snprintf(jerr->text, sizeof(jerr->text), "out of memory");
	if (again != doc) {
		/* only a lone number changes itself: not a contract anyway */
		json_decref(doc);
		return again;
	}
	return doc;
}

int tg_contract_parse(const char *textp, size_t len, const char *origin,
		      const struct tg_schema_options *opts, struct tg_contract **out,
		      struct tg_error *err)
{
	static const char *const fields[] = {
		"name", "version", "title", "description", "owner", "authority", "risk",
		"idempotent", "open_world", "input_schema", "output_schema", "errors",
		"executor", "timeout", "dry_run", "compensation", "resumable", "tasks", "deprecation",
		"tags",
		NULL,
	};
	/* cppcheck-suppress ctuuninitvar ; err is an OUT parameter, stored here */
	struct loader l = { { "contract", origin, err }, opts, NULL, NULL, 0 };
	json_error_t jerr;
	const char *a;
	json_t *doc;
	int rc = -1;

	tg_error_clear(err);
	*out = NULL;
	if (len > MAX_CONTRACT_BYTES)
		return tg_error_set(err, TG_ERR_LIMIT, "contract %s: larger than %u bytes", origin,
				    MAX_CONTRACT_BYTES);
	doc = load_text(textp, len, &jerr);
	if (!doc)
		return tg_error_set(err, TG_ERR_INVALID, "contract %s: line %d: %s", origin,
				    jerr.line, jerr.text);
	l.text = textp;
	l.len = len;
	l.c = calloc(1, sizeof(*l.c));
	if (!l.c) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	l.c->file = strdup(origin);
	if (upstream_misplaced(&l, doc) < 0 || jload_only(&l.j, doc, "", fields) < 0 || text(&l, doc, "name", "name", 1, &l.c->name) < 0)
		goto out;
	if (!valid_tool_name(l.c->name)) {
		jload_bad(&l.j, "name", "1 to 128 characters of A-Z a-z 0-9 _ . -");
		goto out;
	}
	a = json_string_value(json_object_get(doc, "version"));
	if (!a || strlen(a) >= sizeof(l.c->version_text) || tg_semver_parse(a, &l.c->version) < 0) {
		jload_bad(&l.j, "version", "required: a semantic version such as 1.2.0");
		goto out;
	}
	memcpy(l.c->version_text, a, strlen(a) + 1); /* shorter: checked above */
	a = json_string_value(json_object_get(doc, "authority"));
	if (!json_object_get(doc, "authority")) {
		jload_bad(&l.j, "authority", "required: read or write (there is no default)");
		goto out;
	}
	if (!a || (strcmp(a, "read") && strcmp(a, "write"))) {
		jload_bad(&l.j, "authority", "must be read or write");
		goto out;
	}
	l.c->authority = strcmp(a, "read") == 0 ? TG_AUTHORITY_READ : TG_AUTHORITY_WRITE;
	if (text(&l, doc, "title", "title", 0, &l.c->title) < 0 ||
	    text(&l, doc, "description", "description", 1, &l.c->description) < 0 ||
	    load_misc(&l, doc) < 0 ||
	    schema_field(&l, doc, "input_schema", 1, &l.c->input_schema,
			 &l.c->input_schema_text, &l.c->input_schema_doc) < 0 ||
	    contract_param_headers(l.c, origin, err) < 0 ||
	    schema_field(&l, doc, "output_schema", 0, &l.c->output_schema,
			 &l.c->output_schema_text, NULL) < 0 ||
	    load_errors(&l, doc) < 0 || load_executor(&l, doc) < 0 || load_write_rules(&l, doc) < 0)
		goto out;
	/* read means read-only by construction: nothing it mounts is writable */
	if (l.c->authority == TG_AUTHORITY_READ) {
		size_t i;

		for (i = 0; i < l.c->nmounts; i++)
			if (l.c->mounts[i].writable) {
				char field[64];

				snprintf(field, sizeof(field), "executor.mounts[%zu].writable", i);
				jload_bad(&l.j, field, "a read tool cannot mount anything writable");
				goto out;
			}
		if (l.c->workspace == TG_WORKSPACE_WRITE) {
			jload_bad(&l.j, "executor.workspace", "write is for write tools: a read tool cannot "
			    "write the workspace (say read)");
			goto out;
		}
		/* the state holds what write tools keep, copies of deleted
		 * files among them: no read tool is ever given it */
		if (l.c->state) {
			jload_bad(&l.j, "executor.state", "is for write tools: a read tool is never given "
			    "the gateway's state");
			goto out;
		}
	}
	*out = l.c;
	l.c = NULL;
	rc = 0;
out:
	tg_contract_free(l.c);
	json_decref(doc);
	return rc;
}

int tg_contract_load(const char *path, const struct tg_schema_options *opts,
		     struct tg_contract **out, struct tg_error *err)
{
	struct tg_schema_options o = { 0 };
	char base[4096], dir[4096];
	const char *slash = strrchr(path, '/');
	FILE *f;
	char *buf;
	size_t n;
	int rc;

	/* the contract's schemas live at TG_CATALOG_BASE<file name>, and
	 * the shared schemas at TG_CATALOG_BASE schemas/, from the folder
	 * beside the file */
	if (opts)
		o = *opts;
	if (!o.remote_base && !o.remote_dir) {
		int dl = slash ? (int)(slash - path) : 1;

		snprintf(base, sizeof(base), TG_CATALOG_BASE "%s", slash ? slash + 1 : path);
		snprintf(dir, sizeof(dir), "%.*s/schemas", dl, slash ? path : ".");
		if (!o.base_uri)
			o.base_uri = base;
		o.remote_base = TG_CATALOG_BASE "schemas/";
		o.remote_dir = dir;
	}
	opts = &o;
	f = fopen(path, "rb");
	tg_error_clear(err);
	*out = NULL;
	if (!f)
		return tg_error_sys(err, errno, "contract %s", path);
	buf = malloc(MAX_CONTRACT_BYTES + 1);
	if (!buf) {
		fclose(f);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	n = fread(buf, 1, MAX_CONTRACT_BYTES + 1, f);
	fclose(f);
	rc = tg_contract_parse(buf, n, path, opts, out, err);
	free(buf);
	return rc;
}

void tg_contract_free(struct tg_contract *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nerrors; i++) {
		free(c->errors[i].code);
		free(c->errors[i].meaning);
	}
	free(c->errors);
	for (i = 0; i < c->nmounts; i++) {
		free(c->mounts[i].host);
		free(c->mounts[i].inside);
	}
	free(c->mounts);
	tg_schema_free(c->input_schema);
	tg_schema_free(c->output_schema);
	free(c->input_schema_text);
	free(c->output_schema_text);
	json_decref(contract_input_doc(c));
	jload_strv_free(c->argv);
	jload_strv_free(c->env);
	jload_strv_free(c->egress);
	jload_strv_free(c->tags);
	contract_free_param_headers(c);
	free(c->file);
	free(c->name);
	free(c->title);
	free(c->description);
	free(c->owner_team);
	free(c->owner_contact);
	free(c->builtin);
	free(c->upstream);
	free(c->upstream_tool);
	free(c->upstream_declaration);
	free(c->upstream_definition);
	free(c->dry_run_argument);
	free(c->compensation_tool);
	free(c->compensation_args);
	free(c->irreversible);
	free(c->deprecated_since);
	free(c->sunset);
	free(c->replacement);
	free(c);
}
