/*
 * The unit tests' gate fixture (gatefix.h): a gate composed as serve
 * composes it, on a temporary directory, and its audit log read back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gatefix.h"
#include "unit.h"

/* The upstreams' declarations as cat/upstreams/NAME.json. */
static int declare(struct fix *f, const char *const *up, struct tg_error *err)
{
	char fake[4096], rel[96], *text, *at;
	size_t i;

	snprintf(rel, sizeof(rel), "%s/cat/upstreams", f->dir);
	if (mkdir(rel, 0700) < 0 || unit_upstream_dir(fake) < 0)
		return tg_error_set(err, TG_ERR_SYSTEM, "mkdir %s, or no tests/upstream", rel);
	for (i = 0; up[i] && up[i + 1]; i += 2) {
		text = malloc(strlen(up[i + 1]) + strlen(fake) + 1);
		if (!text)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		strcpy(text, up[i + 1]);
		if ((at = strstr(text, "@FAKE@"))) {
			memmove(at + strlen(fake), at + 6, strlen(at + 6) + 1);
			memcpy(at, fake, strlen(fake));
		}
		snprintf(rel, sizeof(rel), "cat/upstreams/%s.json", up[i]);
		if (unit_put(f->dir, rel, text, 0600) < 0) {
			free(text);
			return tg_error_set(err, TG_ERR_SYSTEM, "write %s", rel);
		}
		free(text);
	}
	return 0;
}

/* The catalogue: each contract as cat/N.json. */
static int catalogue(struct fix *f, const char *const *contracts, const char *const *upstreams,
		     struct tg_error *err)
{
	char path[128], rel[32];
	size_t i;

	snprintf(path, sizeof(path), "%s/cat", f->dir);
	if (mkdir(path, 0700) < 0)
		return tg_error_set(err, TG_ERR_SYSTEM, "mkdir %s", path);
	for (i = 0; contracts && contracts[i]; i++) {
		snprintf(rel, sizeof(rel), "cat/%zu.json", i);
		if (contracts[i][0] == '@') {
			json_t *k = json_load_file(contracts[i] + 1, 0, NULL);
			char to[160];
			int rc;

			snprintf(to, sizeof(to), "%s/%s", f->dir, rel);
			rc = k ? json_dump_file(k, to, 0) : -1;
			json_decref(k);
			if (rc < 0)
				return tg_error_set(err, TG_ERR_SYSTEM, "copy %s", contracts[i] + 1);
		} else if (unit_put(f->dir, rel, contracts[i], 0644) < 0) {
			return tg_error_set(err, TG_ERR_SYSTEM, "write %s", rel);
		}
	}
	if (upstreams && upstreams[0] && declare(f, upstreams, err) < 0)
		return -1;
	return tg_catalog_load_dir(path, NULL, &f->cat, err);
}

int fix_open(struct fix *f, const struct fix_spec *spec)
{
	struct tg_gate_options o = { 0 };
	struct tg_error err = { 0 };
	char path[128];

	memset(f, 0, sizeof(*f));
	if (unit_tmpdir(f->dir, spec->name) < 0)
		return -1;
	snprintf(f->log, sizeof(f->log), "%s/audit.log", f->dir);
	snprintf(f->where, sizeof(f->where), "%s/state", f->dir);
	if (unit_on_pg && unit_pg_store(f->where, sizeof(f->where), f->schema,
					sizeof(f->schema)) < 0) {
		tg_error_set(&err, TG_ERR_SYSTEM, "no PostgreSQL schema (TG_TEST_PG)");
		goto fail;
	}
	if (catalogue(f, spec->contracts, spec->upstreams, &err) < 0 ||
	    tg_store_open(f->where, &f->store, &err) < 0 ||
	    tg_audit_open(f->log, TG_AUDIT_NOSYNC, &f->audit, &err) < 0)
		goto fail;
	if (spec->policy) {
		snprintf(path, sizeof(path), "%s/policy.json", f->dir);
		if (unit_put(f->dir, "policy.json", spec->policy, 0644) < 0) {
			tg_error_set(&err, TG_ERR_SYSTEM, "write policy.json");
			goto fail;
		}
		if (tg_policy_load(path, &f->policy, &err) < 0 ||
		    tg_signer_open(f->dir, 1, &f->signer, &err) < 0)
			goto fail;
	}
	o.audit = f->audit;
	o.store = f->store;
	o.policy = f->policy;
	o.signer = f->signer;
	o.anomalies = spec->anomalies;
	if (tg_gate_new(f->cat, &o, &f->gate, &err) == 0)
		return 0;
fail:
	fprintf(stderr, "# fixture %s: %s\n", spec->name, err.msg);
	fix_remove(f);
	return -1;
}

void fix_close(struct fix *f)
{
	tg_gate_free(f->gate);
	tg_audit_close(f->audit);
	tg_store_close(f->store);
	tg_signer_close(f->signer);
	tg_policy_free(f->policy);
	tg_catalog_free(f->cat);
	f->gate = NULL;
	f->audit = NULL;
	f->store = NULL;
	f->signer = NULL;
	f->policy = NULL;
	f->cat = NULL;
}

void fix_remove(struct fix *f)
{
	fix_close(f);
	if (f->dir[0])
		unit_rmtree(f->dir);
	f->dir[0] = '\0';
	if (f->schema[0])
		unit_pg_drop(f->schema);
	f->schema[0] = '\0';
}

int fix_call(struct fix *f, const struct fix_call *c, struct tg_call_result *r,
	     struct tg_error *err)
{
	struct tg_call call;

	memset(&call, 0, sizeof(call));
	call.principal = c->principal;
	call.tool = c->tool;
	call.arguments = c->args;
	call.arguments_len = c->args ? strlen(c->args) : 0;
	call.cancel_fd = -1;
	call.today = c->today;
	call.scopes = c->scopes;
	call.idempotency_key = c->key;
	call.dry_run = c->dry_run;
	return tg_gate_call(f->gate, &call, r, err);
}

void fix_error_code(const struct tg_call_result *r, char *code, char *ticket)
{
	json_t *doc = r->structured_json ? json_loads(r->structured_json, 0, NULL) : NULL;
	json_t *e = json_object_get(doc, "error");
	const char *c = json_string_value(json_object_get(e, "code"));
	const char *t = json_string_value(json_object_get(e, "ticket"));

	snprintf(code, 64, "%s", c ? c : "");
	snprintf(ticket, 64, "%s", t ? t : "");
	json_decref(doc);
}

json_t *fix_records(const char *path)
{
	json_t *recs = json_array();
	FILE *fp = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;

	if (!fp || !recs) {
		if (fp)
			fclose(fp);
		json_decref(recs);
		return NULL;
	}
	while ((n = getline(&line, &cap, fp)) > 0) {
		json_t *r = json_loadb(line, (size_t)n, 0, NULL);

		if (!json_is_object(r)) {
			fprintf(stderr, "# not a record: %s", line);
			json_decref(r);
			json_decref(recs);
			recs = NULL;
			break;
		}
		json_array_append_new(recs, r);
	}
	free(line);
	fclose(fp);
	return recs;
}

/* 1 if member key of r is the string want (NULL: anything). */
static int is(json_t *r, const char *key, const char *want)
{
	const char *v = json_string_value(json_object_get(r, key));

	return !want || (v && strcmp(v, want) == 0);
}

size_t fix_count(json_t *recs, const char *kind, const char *tool, const char *outcome,
		 json_t **last)
{
	size_t i, n = 0;
	json_t *r;

	if (last)
		*last = NULL;
	json_array_foreach(recs, i, r) {
		if (!is(r, "kind", kind) || !is(r, "tool", tool) || !is(r, "outcome", outcome))
			continue;
		n++;
		if (last)
			*last = r;
	}
	return n;
}

int fix_log_holds(const char *path, const char *what)
{
	FILE *fp = fopen(path, "r");
	char *text = NULL;
	size_t len = 0;
	int found;

	if (!fp)
		return -1;
	found = getdelim(&text, &len, '\0', fp) >= 0 && strstr(text, what) != NULL;
	free(text);
	fclose(fp);
	return found;
}

/* ---- an upstream's tools ------------------------------------------------- */

json_t *fix_tools_with(struct tg_gate *g, const char *want)
{
	struct tg_error err;
	json_t *list = NULL, *t;
	size_t i;
	int n;

	for (n = 0; n < 1500; n++) {
		char *text = tg_gate_tools_json(g, NULL, &err);

		json_decref(list);
		list = text ? json_loads(text, 0, NULL) : NULL;
		free(text);
		json_array_foreach(list, i, t)
			if (strcmp(json_string_value(json_object_get(t, "name")), want) == 0)
				return list;
		usleep(10000);
	}
	fprintf(stderr, "# no tool %s was served\n", want);
	json_decref(list);
	return NULL;
}

json_t *fix_tool(json_t *list, const char *name)
{
	json_t *t;
	size_t i;

	json_array_foreach(list, i, t)
		if (strcmp(json_string_value(json_object_get(t, "name")), name) == 0)
			return t;
	return NULL;
}

int fix_has_tool(struct tg_gate *g, const char *name)
{
	struct tg_error err;
	char *text = tg_gate_tools_json(g, NULL, &err);
	char want[160];
	int yes;

	snprintf(want, sizeof(want), "\"name\":\"%s\"", name);
	yes = text && strstr(text, want) != NULL;
	free(text);
	return yes;
}

int fix_wait_tool(struct tg_gate *g, const char *name, int present)
{
	int n;

	for (n = 0; n < 1500; n++) {
		if (fix_has_tool(g, name) == present)
			return 0;
		usleep(10000);
	}
	return -1;
}

char *fix_call_text(struct fix *f, const char *tool_name, const char *args, const char *key,
		    char *code, char *ticket)
{
	struct fix_call c = { "alice", tool_name, args, NULL, key, NULL, 0 };
	struct tg_call_result r;
	struct tg_error err;
	char *text;

	code[0] = ticket[0] = '\0';
	if (fix_call(f, &c, &r, &err) < 0) {
		snprintf(code, 64, "protocol");
		return NULL;
	}
	fix_error_code(&r, code, ticket);
	if (asprintf(&text, "%s %s%s", r.is_error ? "error" : "ok", r.content_json,
		     r.structured_json ? r.structured_json : "") < 0)
		text = NULL;
	tg_call_result_release(&r);
	return text;
}
