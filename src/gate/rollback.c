/*
 * Rollback (docs/PIPELINE.md, "Rollback"): an executed write undone by its
 * contract's compensation, under the write's call id, once (a rollback
 * begun is resumed at the next start). The compensation runs through the
 * stages a plan's step does.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "gate/gate_int.h"
#include "util/sodium.h"

/* The compensation's arguments: mapping (the contract's, JSON) with each
 * "${call_id}" and "${arguments.NAME}" replaced; a copy (NULL and err when
 * an argument named is missing). */
static json_t *map_arguments(const json_t *mapping, const char *call_id, const json_t *args,
			     struct tg_error *err)
{
	const char *s = json_string_value(mapping), *key;
	json_t *out, *item, *v;
	size_t i;

	if (s && strcmp(s, "${call_id}") == 0)
		return json_string(call_id);
	if (s && strncmp(s, "${arguments.", 12) == 0) {
		char name[256];

		snprintf(name, sizeof(name), "%.*s", (int)(strlen(s) - 13), s + 12);
		v = json_object_get(args, name);
		if (!v)
			tg_error_set(err, TG_ERR_INVALID, "compensation.arguments: the call had no "
				     "argument %s", name);
		return v ? json_deep_copy(v) : NULL;
	}
	if (json_is_object(mapping)) {
		out = json_object();
		json_object_foreach((json_t *)mapping, key, item) {
			v = out ? map_arguments(item, call_id, args, err) : NULL;
			if (!v || json_object_set_new(out, key, v) < 0) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	}
	if (json_is_array(mapping)) {
		out = json_array();
		json_array_foreach(mapping, i, item) {
			v = out ? map_arguments(item, call_id, args, err) : NULL;
			if (!v || json_array_append_new(out, v) < 0) {
				json_decref(out);
				return NULL;
			}
		}
		return out;
	}
	return json_deep_copy(mapping);
}

int gate_compensation(const struct tg_catalog *cat, const struct tg_contract *k,
		      const char *call_id, const char *call_args, const struct tg_contract **undo,
		      char **args, struct tg_error *err)
{
	json_t *mapping, *given, *mapped;

	*args = NULL;
	if (k->irreversible)
		return tg_error_set(err, TG_ERR_INVALID, "call %s: %s@%s is irreversible (%s): "
				    "nothing undoes it", call_id, k->name, k->version_text,
				    k->irreversible);
	if (!k->compensation_tool)
		return tg_error_set(err, TG_ERR_INVALID, "call %s: %s@%s names no compensation",
				    call_id, k->name, k->version_text);
	if (tg_catalog_resolve(cat, k->compensation_tool, "0000-01-01", undo, err) < 0)
		return tg_error_wrap(err, "call %s: its compensation", call_id);
	mapping = k->compensation_args ? json_loads(k->compensation_args, 0, NULL)
				       : json_pack("{s:s}", "call_id", "${call_id}");
	given = call_args ? json_loads(call_args, 0, NULL) : json_object();
	mapped = mapping && given ? map_arguments(mapping, call_id, given, err) : NULL;
	json_decref(mapping);
	json_decref(given);
	if (!mapped)
		return err->code != TG_OK ? tg_error_wrap(err, "call %s", call_id)
					  : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	*args = json_dumps(mapped, JSON_COMPACT);
	json_decref(mapped);
	return *args ? 0 : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
}

/* The compensation of ticket t's call, resolved; OUT *undo and *args
 * (JSON text, malloc'd). */
static int compensation_of(const struct tg_catalog *cat, const struct tg_ticket *t,
			   const struct tg_contract **undo, char **args, struct tg_error *err)
{
	const struct tg_contract *k;

	*args = NULL;
	if (tg_catalog_resolve(cat, t->tool, "0000-01-01", &k, err) < 0)
		return tg_error_wrap(err, "call %s", t->id);
	return gate_compensation(cat, k, t->id, t->arguments, undo, args, err);
}

/* Run the compensation of call t (validated, not gated: the person who
 * asked for the rollback decided it); its result in r. */
static int run_compensation(struct tg_gate *g, const struct tg_catalog *cat,
			    const struct tg_ticket *t, const char *who, int dry_run,
			    struct tg_call_result *r, struct tg_error *err)
{
	struct tg_call call;
	struct call_state st;
	struct tg_error rerr;
	char *args = NULL;
	int rc;

	memset(&call, 0, sizeof(call));
	memset(&st, 0, sizeof(st));
	clock_gettime(CLOCK_MONOTONIC, &st.start);
	call.principal = who;
	call.cancel_fd = -1;
	st.call = &call;
	st.catalog = cat;
	st.outcome = "protocol_error";
	st.dry = dry_run;
	snprintf(st.ticket, sizeof(st.ticket), "%s", t->id); /* the undo keys on the call's id */
	if (compensation_of(cat, t, &st.k, &args, err) < 0)
		return -1;
	call.tool = st.k->name;
	gate_span_begin(g, &st);
	st.args = args;
	st.args_len = strlen(args);
	rc = dry_run && st.k->dry_run < 1
		     ? gate_refuse(&st, "refused", "%s@%s cannot show what it would do: its contract "
			      "says dry_run unsupported", st.k->name, st.k->version_text)
		     : gate_run_stages(g, &st, err);
	if (rc >= 0 && !dry_run)
		st.outcome = st.out.is_error ? "rollback_failed" : "rolled_back";
	if (gate_stage_record(g, &st, rc < 0 ? err : NULL, &rerr) < 0 && rc >= 0)
		rc = gate_unrecorded(&st, &rerr, err);
	gate_span_finish(&st, rc < 0 ? err : NULL);
	free(st.canonical);
	free(args);
	if (rc < 0) {
		exec_out_release(&st.out);
		return -1;
	}
	snprintf(r->tool, sizeof(r->tool), "%s@%s", st.k->name, st.k->version_text);
	return gate_call_result(&st.out, r, err);
}

int tg_gate_rollback(struct tg_gate *g, const char *call_id, const char *who, int dry_run,
		     struct tg_call_result *r, struct tg_error *err)
{
	const struct tg_catalog *cat;
	struct tg_ticket t;
	struct tg_error lerr;
	int rc;

	tg_error_clear(err);
	memset(r, 0, sizeof(*r));
	if (!g->store)
		return tg_error_set(err, TG_ERR_INVALID, "rollback: no state directory");
	if (g->audit && tg_audit_ok(g->audit, err) < 0) {
		err->code = TG_ERR_UNAVAILABLE;
		return -1;
	}
	if (tg_store_ticket_get(g->store, call_id, TG_STORE_NOW, &t, err) < 0)
		return -1;
	if (t.state == TG_TICKET_COMPENSATED) {
		tg_ticket_release(&t);
		return 1;
	}
	if (t.state != TG_TICKET_EXECUTED) {
		tg_error_set(err, TG_ERR_INVALID, "call %s is %s: only an executed call can be "
			     "rolled back", call_id, tg_ticket_state_name(t.state));
		tg_ticket_release(&t);
		return -1;
	}
	cat = tg_gate_acquire(g);
	rc = dry_run ? 0 : tg_store_rollback_begin(g->store, call_id, who, TG_STORE_NOW, err);
	if (rc == 0) {
		rc = run_compensation(g, cat, &t, who, dry_run, r, err);
		/* logged either way: a compensation that could not even start
		 * failed as surely as one that ran and failed */
		if (!dry_run &&
		    tg_store_rollback_end(g->store, call_id, rc == 0 && !r->is_error,
					  rc == 0 ? (r->structured_json ? r->structured_json
									: r->content_json)
						  : err->msg, TG_STORE_NOW, &lerr) < 0) {
			tg_call_result_release(r);
			if (rc == 0)
				*err = lerr;
			rc = -1;
		}
	}
	tg_gate_release(g, cat);
	tg_ticket_release(&t);
	return rc;
}

int tg_gate_resume_rollbacks(struct tg_gate *g, size_t *resumed, size_t *failed,
			     struct tg_error *err)
{
	struct tg_rollback *list;
	struct tg_call_result r;
	struct tg_error rerr;
	size_t n, i;

	*resumed = *failed = 0;
	if (!g->store)
		return 0;
	if (tg_store_rollback_list(g->store, TG_ROLLBACK_RUNNING, &list, &n, err) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		int rc = tg_gate_rollback(g, list[i].call_id, list[i].requested_by, 0, &r, &rerr);

		/* one that cannot even start (its call is not executed, its
		 * tool is gone) ends as failed, not running for ever */
		if (rc < 0)
			tg_store_rollback_end(g->store, list[i].call_id, 0, rerr.msg,
					      TG_STORE_NOW, &rerr);
		(*resumed)++;
		if (rc < 0 || (rc == 0 && r.is_error))
			(*failed)++;
		if (rc == 0)
			tg_call_result_release(&r);
		tg_rollback_release(&list[i]);
	}
	free(list);
	return 0;
}
