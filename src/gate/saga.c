/*
 * Sagas (docs/PIPELINE.md, "Sagas"): a plan of write calls approved and
 * run as one. A tool whose executor is a plan ("kind": "plan",
 * TG_EXEC_PLAN) takes {"steps": [{"tool", "arguments"}, ...]}; its dry
 * run is every step's dry run; once approved, its steps run in order,
 * each logged in the store before and after it runs, each under a call id
 * of its own derived from the plan's. When a step fails, the steps done
 * before it are undone by their compensations, newest first. A plan's
 * undoing ("kind": "plan.undo", TG_EXEC_PLAN_UNDO) undoes a finished plan
 * the same way (the plan's rollback). A crash anywhere leaves the log
 * saying where it was: the plan's retry, or the next gateway to start
 * (tg_gate_resume_sagas), drives it on from there, and every step and
 * compensation is idempotent by its call id, so nothing runs twice and
 * nothing is left half-undone.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "gate/gate_int.h"
#include "toolgate/auth.h"
#include "toolgate/store.h"
#include "util/sodium.h"

#define SUMMARY_RESULT_MAX (64u << 10) /* a step's result, as the plan's answer shows it */

/* The plan's answer when it cannot go on: a tool error with a code. */
static int refuse(struct exec_out *o, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int refuse(struct exec_out *o, const char *code, const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	exec_out_release(o);
	o->is_error = 1;
	o->content = json_pack("[o]", exec_text(text));
	o->structured = json_pack("{s:{s:s,s:s}}", "error", "code", code, "message", text);
	return 1;
}

/* Structured content, and its text. */
static int answer(struct exec_out *o, json_t *obj, int is_error, struct tg_error *err)
{
	char *text = obj ? json_dumps(obj, JSON_COMPACT) : NULL;

	exec_out_release(o);
	o->is_error = is_error;
	o->structured = obj;
	o->content = text ? json_pack("[o]", exec_text(text)) : NULL;
	free(text);
	return o->content ? 0 : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
}

/* What a tool produced, as JSON: its structured result, or its text. */
static json_t *result_of(const struct exec_out *o)
{
	if (o->structured)
		return json_incref(o->structured);
	return json_incref(o->content);
}

static char *result_text(const struct exec_out *o)
{
	json_t *j = json_pack("{s:b,s:o?}", "isError", o->is_error, "result", result_of(o));
	char *text = j ? json_dumps(j, JSON_COMPACT) : NULL;

	json_decref(j);
	return text;
}

/* A step's findings, when the gate did not run it for them (gate_run
 * marks it held: a tool's own answer cannot): a new reference, or NULL. */
static json_t *step_findings(const struct exec_out *o)
{
	json_t *f = json_object_get(json_object_get(o->structured, "error"), "anomalies");

	if (!o->held || !json_is_array(f))
		return NULL;
	return json_incref(f);
}

struct plan {
	size_t n;
	const struct tg_contract *k[TG_SAGA_MAX_STEPS];
	char *args[TG_SAGA_MAX_STEPS];      /* canonical JSON text */
};

static void plan_free(struct plan *p)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		free(p->args[i]);
	p->n = 0;
}

/* The steps of a plan's arguments, resolved and checked: 0, 1 (refused:
 * out says why), -1 and err. */
static int plan_of(const struct tg_gate *g, const struct gate_run_env *run, const char *args,
		   size_t len, struct plan *p, struct exec_out *out, struct tg_error *err)
{
	json_t *doc = json_loadb(args, len, 0, NULL), *steps = json_object_get(doc, "steps"), *step;
	size_t i;
	int rc = 0;

	memset(p, 0, sizeof(*p));
	if (!json_is_array(steps) || json_array_size(steps) == 0 ||
	    json_array_size(steps) > TG_SAGA_MAX_STEPS) {
		json_decref(doc);
		return refuse(out, "bad_plan", "a plan is {\"steps\": [{\"tool\", \"arguments\"}]}, "
			      "1 to %d steps", TG_SAGA_MAX_STEPS);
	}
	json_array_foreach(steps, i, step) {
		const char *tool = json_string_value(json_object_get(step, "tool"));
		json_t *a = json_object_get(step, "arguments");
		const struct tg_contract *k;
		struct tg_error rerr;
		char need[200];
		int write;

		if (!tool || (a && !json_is_object(a))) {
			rc = refuse(out, "bad_plan", "step %zu: a tool name and an arguments object", i + 1);
			break;
		}
		if (tg_catalog_resolve(run->catalog, tool, run->call->today, &k, &rerr) < 0) {
			rc = refuse(out, "bad_plan", "step %zu: %s", i + 1, rerr.msg);
			break;
		}
		write = k->authority == TG_AUTHORITY_WRITE;
		if (k->executor == TG_EXEC_PLAN || k->executor == TG_EXEC_PLAN_UNDO) {
			rc = refuse(out, "bad_plan", "step %zu: a plan cannot hold a plan", i + 1);
			break;
		}
		/* the caller's scopes allow each step, not only the plan */
		if (gate_scope_missing(g, k, run->call->scopes, need, sizeof(need))) {
			rc = refuse(out, "forbidden", "step %zu: the caller may not call %s (it needs "
				    "the scope %s)", i + 1, k->name, need);
			break;
		}
		/* after a crash a step runs again: it must replay; and a step
		 * that cannot be undone can only be the last one */
		/* its preview runs every step's dry run before any approval:
		 * a step that cannot show what it would do might do it */
		if (write && k->dry_run < 1) {
			rc = refuse(out, "bad_plan", "step %zu: %s@%s has no dry run, and a plan's "
				    "preview runs each step's", i + 1, k->name, k->version_text);
			break;
		}
		if (write && !k->resumable) {
			rc = refuse(out, "bad_plan", "step %zu: %s@%s is not resumable (a crash could "
				    "not be recovered from safely)", i + 1, k->name, k->version_text);
			break;
		}
		if (write && !k->compensation_tool && i + 1 < json_array_size(steps)) {
			rc = refuse(out, "bad_plan", "step %zu: %s@%s cannot be undone (%s), so only "
				    "the last step may use it", i + 1, k->name, k->version_text,
				    k->irreversible ? k->irreversible : "no compensation");
			break;
		}
		p->k[i] = k;
		p->args[i] = a ? json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS) : strdup("{}");
		p->n = i + 1;
		if (!p->args[i]) {
			rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			break;
		}
	}
	json_decref(doc);
	if (rc != 0)
		plan_free(p);
	return rc;
}

/* Step n's call id: the first 128 bits of SHA-256("PLAN-ID:n"), hex. */
static void step_call_id(const char *saga, size_t n, char id[33])
{
	unsigned char h[crypto_hash_sha256_BYTES];
	char in[64];

	snprintf(in, sizeof(in), "%s:%zu", saga, n);
	crypto_hash_sha256(h, (const unsigned char *)in, strlen(in));
	sodium_bin2hex(id, 33, h, 16);
}

/* The plan's answer from its log: a success if it ended in state good. */
static int summary(const struct tg_saga *s, enum tg_saga_state good, struct exec_out *out,
		   struct tg_error *err)
{
	json_t *steps = json_array(), *obj;
	size_t i;

	for (i = 0; steps && i < s->n; i++) {
		const struct tg_saga_step *p = &s->steps[i];
		json_t *r = p->result && strlen(p->result) <= SUMMARY_RESULT_MAX
				    ? json_loads(p->result, 0, NULL)
				    : NULL;

		if (!r && p->result)
			r = json_pack("{s:b}", "truncated", 1);
		json_array_append_new(steps, json_pack("{s:s,s:s,s:s,s:o?}", "tool", p->tool,
						       "call_id", p->call_id, "state",
						       tg_saga_step_state_name(p->state), "last",
						       r));
	}
	obj = json_pack("{s:s,s:s,s:o}", "plan", s->id, "state", tg_saga_state_name(s->state),
			"steps", steps);
	return answer(out, obj, s->state != good, err);
}

/* Run the tool of step i of saga s (forward or its compensation); its
 * result logged; 1 if it succeeded. */
static int run_step(struct tg_gate *g, const struct gate_run_env *run, struct tg_saga *s,
		    size_t i, int undo, struct tg_error *err)
{
	struct tg_store *st = tg_gate_store(g);
	struct tg_saga_step *p = &s->steps[i];
	struct tg_call uncancellable = *run->call;
	/* its approver approved the plan with this step as it is */
	struct gate_run_env env = { run->catalog, run->call, 0, p->call_id, s->id,
				    run->plan_sha256, i + 1, undo, 1 };
	const struct tg_contract *k, *tool;
	struct tg_error aerr;
	struct exec_out o;
	char *args = NULL, *text = NULL;
	int ok = 0, rc;

	memset(&o, 0, sizeof(o));
	/* a caller that gives up stops the plan going forward, never its
	 * undoing: a compensation cut short would leave it half-undone */
	if (undo) {
		uncancellable.cancel_fd = -1;
		env.call = &uncancellable;
	}
	rc = tg_catalog_resolve(run->catalog, p->tool, "0000-01-01", &k, err);
	tool = k;
	if (rc == 0 && undo)
		rc = gate_compensation(run->catalog, k, p->call_id, p->arguments, &tool, &args, err);
	if (rc == 0 && !undo && tg_store_saga_step(st, s->id, i, TG_STEP_RUNNING, NULL, err) < 0)
		return -1;
	if (rc == 0)
		rc = gate_run(g, &env, tool, undo ? args : p->arguments, &o, err);
	if (rc == 0) {
		ok = !o.is_error;
		/* the undo of a step that failed: "nothing to undo" means it
		 * left nothing behind, and it stays failed */
		if (undo && p->state == TG_STEP_FAILED && o.is_error) {
			const char *code = json_string_value(json_object_get(
				json_object_get(o.structured, "error"), "code"));

			if (code && strcmp(code, "not_found") == 0) {
				exec_out_release(&o);
				free(args);
				return 1;
			}
		}
		text = result_text(&o);
	} else {
		json_t *j = json_pack("{s:b,s:{s:s}}", "isError", 1, "result", "error", err->msg);
		char subject[240];

		text = j ? json_dumps(j, JSON_COMPACT) : NULL;
		json_decref(j);
		/* it did not reach gate_run, whose call record would say so */
		snprintf(subject, sizeof(subject), "plan %s step %zu %s%s", s->id, i + 1, p->tool,
			 undo ? " (undo)" : "");
		tg_gate_record_event(g, run->call->principal, subject,
				     undo ? "compensation_not_started" : "step_not_started", err->msg);
	}
	exec_out_release(&o);
	free(args);
	p->state = undo ? (ok ? TG_STEP_COMPENSATED : TG_STEP_COMPENSATION_FAILED)
			: (ok ? TG_STEP_DONE : TG_STEP_FAILED);
	/* the plan's own log says where it is, whatever the audit log does
	 * (the step's record is its call record, written by gate_run) */
	if (tg_store_saga_step(st, s->id, i, p->state, text, err) < 0) {
		free(text);
		return -1;
	}
	free(p->result);
	p->result = text;
	if (gate_audit_ok(g, &aerr) < 0)
		/* no later step runs unrecorded (stage_execute refuses them) */
		return tg_error_set(err, TG_ERR_UNAVAILABLE, "plan %s step %zu: the audit log "
				    "stopped (%s): the plan stops there", s->id, i + 1, aerr.msg);
	return ok;
}

/* Drive saga id on from where its log says it is: forward while it runs,
 * then, if a step failed, back. Its answer in out: a success if it ended
 * in state good (done for a plan, compensated for its undo). */
static int drive(struct tg_gate *g, const struct gate_run_env *run, const char *id,
		 enum tg_saga_state good, struct exec_out *out, struct tg_error *err)
{
	struct tg_store *st = tg_gate_store(g);
	struct tg_saga s;
	size_t i;
	int rc, failed = 0;

	rc = tg_store_saga_get(st, id, &s, err);
	if (rc != 0)
		return rc < 0 ? -1 : refuse(out, "not_found", "no plan %s", id);
	if (s.state == TG_SAGA_RUNNING) {
		for (i = 0; i < s.n; i++) {
			if (s.steps[i].state == TG_STEP_DONE)
				continue;
			rc = run_step(g, run, &s, i, 0, err);
			if (rc < 0)
				goto out;
			if (rc == 0)
				break;
		}
		s.state = i == s.n ? TG_SAGA_DONE : TG_SAGA_COMPENSATING;
		if (tg_store_saga_set(st, id, s.state, TG_STORE_NOW, err) < 0) {
			rc = -1;
			goto out;
		}
	}
	if (s.state == TG_SAGA_COMPENSATING) {
		/* newest first; one that fails does not stop the others */
		for (i = s.n; i-- > 0;) {
			const struct tg_contract *k;
			struct tg_error rerr;

			/* a step that failed may still have taken effect (it
			 * committed, then timed out): its undo runs too, when
			 * it has one, and finds nothing if nothing was done */
			if (s.steps[i].state == TG_STEP_FAILED &&
			    (tg_catalog_resolve(run->catalog, s.steps[i].tool, "0000-01-01", &k,
						&rerr) < 0 || !k->compensation_tool))
				continue;
			/* a read changed nothing: there is nothing to undo */
			if (tg_catalog_resolve(run->catalog, s.steps[i].tool, "0000-01-01", &k,
					       &rerr) == 0 && k->authority != TG_AUTHORITY_WRITE)
				continue;
			if (s.steps[i].state != TG_STEP_DONE &&
			    s.steps[i].state != TG_STEP_FAILED &&
			    s.steps[i].state != TG_STEP_COMPENSATION_FAILED)
				continue;
			rc = run_step(g, run, &s, i, 1, err);
			if (rc < 0)
				goto out;
			failed += rc == 0;
		}
		s.state = failed ? TG_SAGA_FAILED : TG_SAGA_COMPENSATED;
		if (tg_store_saga_set(st, id, s.state, TG_STORE_NOW, err) < 0) {
			rc = -1;
			goto out;
		}
	}
	rc = summary(&s, good, out, err);
out:
	tg_saga_release(&s);
	return rc;
}

/* 0 if each step of plan p resolves to the version its ticket's preview
 * showed (or the plan's log exists already: then the log's versions run);
 * 1 and out when one does not; -1. */
static int same_versions(struct tg_gate *g, const char *id, const struct plan *p,
			 struct exec_out *out, struct tg_error *err)
{
	struct tg_saga saga;
	struct tg_ticket t;
	json_t *pv, *steps;
	size_t i;
	int rc;

	rc = tg_store_saga_get(tg_gate_store(g), id, &saga, err);
	if (rc <= 0) {
		if (rc == 0)
			tg_saga_release(&saga);
		return rc;
	}
	if (tg_store_ticket_get(tg_gate_store(g), id, TG_STORE_NOW, &t, err) < 0)
		return -1;
	pv = t.preview ? json_loads(t.preview, 0, NULL) : NULL;
	tg_ticket_release(&t);
	steps = json_object_get(json_object_get(pv, "structured"), "steps");
	rc = 0;
	for (i = 0; i < p->n && rc == 0; i++) {
		const char *v = json_string_value(json_object_get(json_array_get(steps, i),
								  "version"));

		if (!v || strcmp(v, p->k[i]->version_text) != 0)
			rc = refuse(out, "version_changed", "step %zu: %s resolves to %s now, not to "
				    "the %s its approver saw; pin the version in the plan, or make a "
				    "new one", i + 1, p->k[i]->name, p->k[i]->version_text,
				    v ? v : "(no preview)");
	}
	json_decref(pv);
	return rc;
}

int saga_execute(struct tg_gate *g, const struct gate_run_env *run, const char *args, size_t len,
		 struct exec_out *out, struct tg_error *err)
{
	struct tg_saga_step steps[TG_SAGA_MAX_STEPS];
	struct plan p;
	json_t *previews;
	size_t i;
	int rc;

	memset(out, 0, sizeof(*out));
	rc = plan_of(g, run, args, len, &p, out, err);
	if (rc != 0)
		return rc < 0 ? -1 : 0;
	if (run->dry_run) {
		/* each step's own dry run, against the state as it is now, as
		 * a call of its own: limited, looked at for anomalies and
		 * recorded; one that would be held is not run, and its place
		 * in the preview holds its findings, never a result */
		previews = json_array();
		for (i = 0; previews && i < p.n; i++) {
			struct gate_run_env env = { run->catalog, run->call, 1, NULL, run->plan,
						    run->plan_sha256, i + 1, 0, 0 };
			struct exec_out o;
			json_t *held;

			if (gate_run(g, &env, p.k[i], p.args[i], &o, err) < 0) {
				json_decref(previews);
				plan_free(&p);
				return -1;
			}
			held = step_findings(&o);
			if (held) {
				json_array_append_new(previews, json_pack("{s:s,s:s,s:b,s:o}", "tool",
									  p.k[i]->name, "version",
									  p.k[i]->version_text,
									  "held", 1, "anomalies", held));
				exec_out_release(&o);
				continue;
			}
			if (o.is_error) {
				char *why = result_text(&o);

				refuse(out, "step_would_fail", "step %zu (%s@%s) would fail: %.600s",
				       i + 1, p.k[i]->name, p.k[i]->version_text, why ? why : "");
				free(why);
				exec_out_release(&o);
				json_decref(previews);
				plan_free(&p);
				return 0;
			}
			json_array_append_new(previews, json_pack("{s:s,s:s,s:o?}", "tool", p.k[i]->name,
								  "version", p.k[i]->version_text,
								  "preview", result_of(&o)));
			exec_out_release(&o);
		}
		plan_free(&p);
		return answer(out, json_pack("{s:o,s:b}", "steps", previews, "dry_run", 1), 0, err);
	}
	if (!tg_gate_store(g) || !run->call_id) {
		plan_free(&p);
		refuse(out, "not_approved", "a plan runs for real only as an approved call");
		return 0;
	}
	/* the steps run as the versions the approver saw in the preview */
	rc = same_versions(g, run->call_id, &p, out, err);
	if (rc != 0) {
		plan_free(&p);
		return rc < 0 ? -1 : 0;
	}
	memset(steps, 0, sizeof(steps));
	for (i = 0; i < p.n; i++) {
		snprintf(steps[i].tool, sizeof(steps[i].tool), "%s@%s", p.k[i]->name,
			 p.k[i]->version_text);
		step_call_id(run->call_id, i, steps[i].call_id);
		steps[i].arguments = p.args[i];
	}
	/* logged (or found, after a crash) before any step runs */
	rc = tg_store_saga_begin(tg_gate_store(g), run->call_id, steps, p.n, TG_STORE_NOW,
				 err);
	plan_free(&p);
	if (rc == 1) {
		refuse(out, "running", "plan %s is being run by another gateway; retry when it ends",
		       run->call_id);
		return 0;
	}
	return rc < 0 ? -1 : drive(g, run, run->call_id, TG_SAGA_DONE, out, err);
}

int saga_undo(struct tg_gate *g, const struct gate_run_env *run, const char *args, size_t len,
	      struct exec_out *out, struct tg_error *err)
{
	json_t *doc = json_loadb(args, len, 0, NULL);
	const char *id = json_string_value(json_object_get(doc, "call_id"));
	struct tg_store *st = tg_gate_store(g);
	struct tg_saga s;
	char plan[33];
	int rc;

	memset(out, 0, sizeof(*out));
	snprintf(plan, sizeof(plan), "%s", id ? id : "");
	json_decref(doc);
	if (!st || !plan[0]) {
		refuse(out, "bad_request", "a plan's undoing takes the plan's call_id, and a state "
		       "directory");
		return 0;
	}
	rc = tg_store_saga_get(st, plan, &s, err);
	if (rc != 0)
		return rc < 0 ? -1 : (refuse(out, "not_found", "no plan %s", plan), 0);
	rc = s.state;
	if (rc == TG_SAGA_COMPENSATED) {
		tg_saga_release(&s);
		return answer(out, json_pack("{s:s,s:s,s:b}", "plan", plan, "state", "compensated",
					     "already", 1), 0, err);
	}
	tg_saga_release(&s);
	if (rc == TG_SAGA_RUNNING) {
		refuse(out, "running", "plan %s is still running", plan);
		return 0;
	}
	if (run->dry_run) {
		refuse(out, "dry_run_unsupported", "the dry run of a plan's undo is each step's "
		       "rollback --dry-run");
		return 0;
	}
	/* one runner at a time */
	switch (tg_store_saga_take(st, plan, err)) {
	case 0:
		break;
	case 1:
		refuse(out, "running", "plan %s is being undone by another gateway", plan);
		return 0;
	default:
		return -1;
	}
	/* done, or failed before: undo what is done, again what failed */
	if (rc != TG_SAGA_COMPENSATING &&
	    tg_store_saga_set(st, plan, TG_SAGA_COMPENSATING, TG_STORE_NOW, err) < 0)
		return -1;
	return drive(g, run, plan, TG_SAGA_COMPENSATED, out, err);
}

int tg_gate_resume_sagas(struct tg_gate *g, size_t *resumed, size_t *failed, struct tg_error *err)
{
	/* approved before the crash: its steps run as the gate's own */
	struct tg_call call = { .principal = "toolgate", .cancel_fd = -1,
				.scopes = gate_own_scopes };
	char (*ids)[33];
	size_t n, i;

	*resumed = *failed = 0;
	if (!tg_gate_store(g))
		return 0;
	if (tg_store_saga_orphans(tg_gate_store(g), &ids, &n, err) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		const struct tg_catalog *cat = tg_gate_acquire(g);
		struct gate_run_env run = { cat, &call, 0, ids[i], ids[i], NULL, 0, 0, 0 };
		struct exec_out out;
		struct tg_error derr;

		memset(&out, 0, sizeof(out));
		(*resumed)++;
		if (drive(g, &run, ids[i], TG_SAGA_DONE, &out, &derr) != 0 || out.is_error) {
			json_t *state = json_object_get(out.structured, "state");

			/* a plan that ended compensated did what it must */
			if (!json_is_string(state) ||
			    strcmp(json_string_value(state), "compensated") != 0)
				(*failed)++;
		}
		exec_out_release(&out);
		tg_gate_release(g, cat);
	}
	free(ids);
	return 0;
}

/* Append tool's name (without its version) to the space-separated list
 * *out of *n bytes: 0, or -1 (out of memory: *out freed). */
static int add_name(char **out, size_t *n, const char *tool)
{
	size_t tl = strcspn(tool, "@");
	char *bigger;

	if (!tl || tl > 128)
		return 0;
	bigger = realloc(*out, *n + tl + 2);
	if (!bigger) {
		free(*out);
		*out = NULL;
		return -1;
	}
	*out = bigger;
	if (*n)
		(*out)[(*n)++] = ' ';
	memcpy(*out + *n, tool, tl);
	*n += tl;
	(*out)[*n] = '\0';
	return 0;
}

char *saga_covers(const char *args, size_t len)
{
	json_t *doc = json_loadb(args, len, 0, NULL), *step;
	char *out = NULL;
	size_t i, n = 0;

	json_array_foreach(json_object_get(doc, "steps"), i, step) {
		const char *tool = json_string_value(json_object_get(step, "tool"));

		if (tool && add_name(&out, &n, tool) < 0)
			break;
	}
	json_decref(doc);
	return out;
}

char *saga_undo_covers(struct tg_gate *g, const char *args, size_t len)
{
	json_t *doc = json_loadb(args, len, 0, NULL);
	const char *id = json_string_value(json_object_get(doc, "call_id"));
	struct tg_saga saga;
	struct tg_error err;
	char *out = NULL;
	size_t i, n = 0;

	if (id && tg_gate_store(g) && tg_store_saga_get(tg_gate_store(g), id, &saga, &err) == 0) {
		for (i = 0; i < saga.n && add_name(&out, &n, saga.steps[i].tool) == 0; i++)
			;
		tg_saga_release(&saga);
	}
	json_decref(doc);
	return out;
}

/* At most so many of its steps' findings are kept on a plan's ticket. */
#define PLAN_FINDINGS_MAX 32

json_t *saga_preview_findings(const char *preview)
{
	json_t *pv = preview ? json_loads(preview, 0, NULL) : NULL, *out = NULL, *step;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(pv, "structured"), "steps"), i, step) {
		json_t *f = json_object_get(step, "anomalies"), *item;
		size_t j;

		json_array_foreach(f, j, item) {
			const char *at = json_string_value(json_object_get(item, "at"));
			char where[300];

			if (!out && !(out = json_array()))
				break;
			if (json_array_size(out) >= PLAN_FINDINGS_MAX)
				break;
			snprintf(where, sizeof(where), "/steps/%zu/arguments%.200s", i, at ? at : "");
			json_array_append_new(out, json_pack("{s:O?,s:s,s:O?}", "rule",
							     json_object_get(item, "rule"), "at", where,
							     "why", json_object_get(item, "why")));
		}
	}
	json_decref(pv);
	return out;
}

char *saga_without_arguments(const char *args, size_t len)
{
	json_t *doc = json_loadb(args, len, 0, NULL), *steps = json_object_get(doc, "steps"), *step;
	char *out = NULL;
	size_t i;

	if (json_is_array(steps)) {
		json_array_foreach(steps, i, step)
			json_object_del(step, "arguments");
		out = json_dumps(doc, JSON_COMPACT);
	}
	json_decref(doc);
	return out;
}
