/*
 * Stage 8, the output check (docs/PIPELINE.md, docs/REDACTION.md): a
 * result against its contract's output schema, then secrets taken out of
 * everything a tool produced (its result, its progress and log lines, a
 * dry run's overlay summary) before anyone reads it. It never writes a
 * secret it found anywhere: only the rule that found it.
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
#include "obs/metrics.h"
#include "toolgate/redact.h"
#include "toolgate/schema.h"
#include "util/sodium.h"

/* 8 check: a successful result against the output schema. */
static int stage_check(struct call_state *st)
{
	struct tg_schema_error ev[MAX_SCHEMA_ERRORS];
	struct tg_schema_errors errors = { ev, MAX_SCHEMA_ERRORS, 0 };
	struct tg_error verr;
	char *text;
	int rc;

	if (st->out.is_error || !st->k->output_schema)
		return 0;
	if (!st->out.structured)
		return gate_refuse(st, "bad_output", "%s@%s returned no structured result, and its "
			      "contract promises one", st->k->name, st->k->version_text);
	/* the tool's own digits where jansson rounds a number of them */
	text = st->out.exact ? strdup(st->out.exact) : json_dumps(st->out.structured, JSON_COMPACT);
	rc = text ? tg_schema_validate(st->k->output_schema, text, strlen(text), &errors, &verr)
		  : -1;
	free(text);
	if (rc == 1)
		return 0;
	return gate_refuse(st, "bad_output", "%s@%s returned a result that does not match its output "
		      "schema%s%s%s%s", st->k->name, st->k->version_text,
		      rc == 0 && errors.n ? ": " : "", rc == 0 && errors.n ? ev[0].instance_location : "",
		      rc == 0 && errors.n ? " " : "", rc == 0 && errors.n ? ev[0].message : "");
}

/* s appended to the text buf[0, *len) of *cap bytes; -1 out of memory. */
static int append(char **buf, size_t *len, size_t *cap, const char *s)
{
	size_t l = strlen(s);
	char *grown;

	if (*len + l + 1 > *cap) {
		*cap = (*len + l + 1) * 2;
		grown = realloc(*buf, *cap);
		if (!grown)
			return -1;
		*buf = grown;
	}
	memcpy(*buf + *len, s, l + 1);
	*len += l;
	return 0;
}

/* An overlay dry run's changes, as a text block after the tool's own
 * content: what the caller (and the approver, in the preview) reads. */
int gate_overlay_summary(struct call_state *st)
{
	size_t i, n = json_array_size(st->out.changes), len = 0, cap = 0;
	char line[400], size[96], *text = NULL;
	json_t *c, *a, *b;
	int rc;

	snprintf(line, sizeof(line), "toolgate ran this dry run on an overlay: nothing was "
		 "written. It would change %zu path%s%s%s\n", n, n == 1 ? "" : "s",
		 st->out.changes_truncated ? " (and more, not listed)" : "", n ? ":" : ".");
	rc = append(&text, &len, &cap, line);
	json_array_foreach(st->out.changes, i, c) {
		b = json_object_get(c, "before_bytes");
		a = json_object_get(c, "after_bytes");
		size[0] = 0;
		if (b && a)
			snprintf(size, sizeof(size), " (%lld -> %lld bytes)",
				 (long long)json_integer_value(b), (long long)json_integer_value(a));
		else if (a)
			snprintf(size, sizeof(size), " (%lld bytes)", (long long)json_integer_value(a));
		/* the path whole: made safe by the walk (no control character) */
		snprintf(line, sizeof(line), "%s %s ",
			 json_string_value(json_object_get(c, "change")),
			 json_string_value(json_object_get(c, "kind")));
		if (rc == 0)
			rc = append(&text, &len, &cap, line);
		if (rc == 0)
			rc = append(&text, &len, &cap, json_string_value(json_object_get(c, "path")));
		snprintf(line, sizeof(line), "%s\n", size);
		if (rc == 0)
			rc = append(&text, &len, &cap, line);
		if (rc == 0 && json_is_string(json_object_get(c, "diff")))
			rc = append(&text, &len, &cap, json_string_value(json_object_get(c, "diff")));
	}
	if (rc == 0 && json_array_append_new(st->out.content, exec_text(text)) < 0)
		rc = -1;
	free(text);
	return rc;
}

/* 8b redact: secrets in what the tool returned become [REDACTED:<rule>]
 * (docs/REDACTION.md) before anyone sees it: the caller, the
 * idempotency record a retry is answered from, the ticket's preview an
 * approver reads. Every string of the content blocks and of the
 * structured result, one that is all base64 or hex (an image's data, a
 * resource's blob, fs.read's content of a file that is not UTF-8)
 * decoded, redacted and encoded again: tg_redact_value. Counted by rule,
 * for the record and the metrics; never the secret itself. */
static void tally(struct redaction *t, const char *rule)
{
	size_t i;

	for (i = 0; i < t->nrules && strcmp(t->rules[i], rule) != 0; i++) {
	}
	if (i == t->nrules) {
		if (t->nrules == 8)
			i = 7; /* a ninth rule counts with the eighth: the total stays right */
		else
			t->rules[t->nrules++] = rule;
	}
	t->per[i]++;
}

/* s (n bytes) without its secrets, a new string; NULL when it had none. */
static json_t *redact_text(const char *s, size_t n, struct redaction *t)
{
	struct tg_redact_out o;
	struct tg_error err;
	json_t *v = NULL;
	size_t i;

	if (tg_redact_value(s, n, &o, &err) < 0) {
		/* out of memory: nothing of it shown rather than all of it */
		tg_redact_out_release(&o);
		tally(t, "not_redacted");
		t->count++;
		return json_string("[REDACTED:out_of_memory]");
	}
	if (o.total) {
		for (i = 0; i < o.nfindings; i++)
			tally(t, o.findings[i].rule);
		t->count += o.total;
		v = json_stringn(o.text, o.len);
		if (!v) /* a marker cut a character: not UTF-8 any more */
			v = json_string("[REDACTED:not_utf8]");
	}
	tg_redact_out_release(&o);
	return v;
}

/* Object o's member names without their secrets: a name that held one
 * is renamed (a name taken already gets "#2", "#3", ...), its value kept. */
static void redact_names(json_t *o, struct redaction *t)
{
	const char *key;
	json_t *item, *names = json_array(), *n;
	size_t i;

	json_object_foreach(o, key, item)
		json_array_append_new(names, json_string(key));
	json_array_foreach(names, i, n) {
		const char *name = json_string_value(n);
		json_t *r = name ? redact_text(name, strlen(name), t) : NULL;
		char renamed[1100];
		unsigned k;

		if (!r)
			continue;
		snprintf(renamed, sizeof(renamed), "%.1000s", json_string_value(r));
		for (k = 2; json_object_get(o, renamed) && k < 1000; k++)
			snprintf(renamed, sizeof(renamed), "%.1000s#%u", json_string_value(r), k);
		item = json_incref(json_object_get(o, name));
		json_object_del(o, name);
		json_object_set_new(o, renamed, item);
		json_decref(r);
	}
	json_decref(names);
}

/* Every string of v (v itself, when it is one), members' names included,
 * in place, each on its own. */
static void redact_strings(json_t *v, struct redaction *t)
{
	const char *key;
	json_t *item, *r;
	size_t i;

	if (json_is_string(v)) {
		r = redact_text(json_string_value(v), json_string_length(v), t);
		if (r)
			json_string_setn(v, json_string_value(r), json_string_length(r));
		json_decref(r);
	} else if (json_is_object(v)) {
		json_object_foreach(v, key, item)
			redact_strings(item, t);
		redact_names(v, t);
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, item)
			redact_strings(item, t);
	}
}

/* The redactor's findings in text, not counted; -1 out of memory. */
static long findings_in(const char *text)
{
	struct tg_redact_out o;
	struct tg_error err;
	long n = -1;

	if (tg_redact_value(text, strlen(text), &o, &err) == 0)
		n = (long)o.total;
	tg_redact_out_release(&o);
	return n;
}

/* Member key's string value as a rule that reads an assignment sees it,
 * with its name: the pair as jansson writes it, {"password":"..."}; the
 * value redacted in place where the rules find a secret there (all of it,
 * when what they left is no longer that pair). */
static void redact_pair(const char *key, json_t *value, struct redaction *t)
{
	json_t *pair = json_pack("{s:O}", key, value), *back, *v;
	char *text = pair ? json_dumps(pair, JSON_COMPACT) : NULL;
	struct tg_redact_out o;
	struct tg_error err;
	size_t i;

	json_decref(pair);
	if (!text)
		return;
	if (tg_redact_value(text, strlen(text), &o, &err) < 0 || !o.total) {
		tg_redact_out_release(&o);
		free(text);
		return;
	}
	for (i = 0; i < o.nfindings; i++)
		tally(t, o.findings[i].rule);
	t->count += o.total;
	back = json_loadb(o.text, o.len, 0, NULL);
	v = json_object_get(back, key);
	if (json_is_string(v) && json_object_size(back) == 1)
		json_string_setn(value, json_string_value(v), json_string_length(v));
	else
		json_string_set(value, "[REDACTED:assignment]");
	json_decref(back);
	tg_redact_out_release(&o);
	free(text);
}

static void redact_pairs(json_t *v, struct redaction *t)
{
	const char *key;
	json_t *item;
	size_t i;

	if (json_is_object(v)) {
		json_object_foreach(v, key, item) {
			if (json_is_string(item))
				redact_pair(key, item, t);
			else
				redact_pairs(item, t);
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, item)
			redact_pairs(item, t);
	}
}

/* gate_redact_json of v whose compact text before is (NULL: not made):
 * made again only when the strings' pass changed v (each change counts). */
static void redact_json_as(json_t *v, struct redaction *t, const char *before)
{
	uint64_t n = t->count;
	char *whole = NULL;
	long left;

	redact_strings(v, t);
	if (!json_is_object(v) && !json_is_array(v))
		return;
	if (!before || t->count != n)
		before = whole = json_dumps(v, JSON_COMPACT);
	left = before ? findings_in(before) : -1;
	free(whole);
	if (left != 0)
		redact_pairs(v, t);
}

/* Every string of v (v itself, when it is one), members' names included,
 * in place; and a member's string value as a rule that reads a name and
 * its value together sees it ("password":"..."), which no string alone
 * shows: looked for pair by pair only where the whole value's text, once
 * its strings are redacted, still holds a finding. */
void gate_redact_json(json_t *v, struct redaction *t)
{
	redact_json_as(v, t, NULL);
}

/* The string at o[key], in place (anything else there is left alone). */
void gate_redact_member(json_t *o, const char *key, struct redaction *t)
{
	json_t *v = json_object_get(o, key);

	if (json_is_string(v))
		gate_redact_json(v, t);
}

/* The text block of st's content that is its structured result's JSON
 * (a command tool's answer gives both), or NULL: jansson's text of it
 * (dump), or the tool's own (exec.h, exact: every digit of a number
 * jansson rounds). */
static json_t *text_mirrors(const struct call_state *st, const char *dump)
{
	json_t *first = json_array_get(st->out.content, 0), *text;

	if (!st->out.structured || json_array_size(st->out.content) < 1)
		return NULL;
	text = json_object_get(first, "text");
	if (!json_is_string(text))
		return NULL;
	if (st->out.exact && strcmp(st->out.exact, json_string_value(text)) == 0)
		return text;
	return dump && strcmp(dump, json_string_value(text)) == 0 ? text : NULL;
}

/* The tool's own text of its structured result (exact) may stand as the
 * mirror only when it shows no more than jansson's text of it (dump) would:
 * the rules found nothing in the structured copy's strings (found: they
 * are then as dump shows them), nor in that text (a keyed rule reads a
 * name and its value together there: "password": "...", which an escape
 * in the name, "p\u0061ssword", hides in exact). */
static int exact_kept(const struct call_state *st, const json_t *mirror, uint64_t found,
		      const char *dump)
{
	if (!mirror || !st->out.exact || found ||
	    strcmp(st->out.exact, json_string_value(mirror)) != 0)
		return 0;
	return dump && findings_in(dump) == 0; /* out of memory (-1): not kept */
}

/* Secrets out of the result, before anyone sees it. The
 * structured result's text is made once and used by each look at it
 * while its strings are as they were. */
static void stage_redact(struct tg_gate *g, struct call_state *st)
{
	struct redaction *t = &st->redacted;
	uint64_t before = t->count, per[8];
	char *dump = NULL;
	json_t *mirror;
	size_t k;

	memcpy(per, t->per, sizeof(per));
	if (st->out.structured)
		dump = json_dumps(st->out.structured, JSON_COMPACT | JSON_ENCODE_ANY);
	mirror = text_mirrors(st, dump);
	if (st->out.structured)
		redact_json_as(st->out.structured, t, dump);
	/* the tool's own text of it (every digit) decodes to the strings just
	 * looked at, but its escapes (\/, \uXXXX) would hide a secret from
	 * the rules: kept when they found none, else made again from the
	 * redacted copy, its digits lost rather than a secret shown */
	if (exact_kept(st, mirror, t->count - before, dump))
		mirror = NULL;
	free(dump);
	free(st->out.exact); /* what the check needed it for is done */
	st->out.exact = NULL;
	if (mirror) {
		/* the text block is the structured result's JSON: made again
		 * from it redacted, not read apart (its escaping and its
		 * one string differ from what the caller decodes) */
		char *text = json_dumps(st->out.structured, JSON_COMPACT | JSON_ENCODE_ANY);

		if (!text || json_string_set(mirror, text) < 0)
			json_string_set(mirror, "[REDACTED:out_of_memory]");
		free(text);
	}
	gate_redact_json(st->out.content, t);
	/* an overlay dry run's diffs: the lines it would remove were read */
	if (st->out.changes)
		gate_redact_json(st->out.changes, t);
	if (t->count == before)
		return;
	for (k = 0; k < t->nrules; k++)
		if (t->per[k] > per[k])
			metrics_count(g->metrics, "redactions", t->rules[k]);
}

void gate_notify_redacted(void *ctx, const char *event)
{
	const struct notify_redacting *n = ctx;
	struct redaction t;
	json_t *e = json_loads(event, 0, NULL);
	char *text;

	memset(&t, 0, sizeof(t));
	if (!e) /* not JSON: not passed on, secrets or not */
		return;
	gate_redact_json(e, &t);
	text = t.count ? json_dumps(e, JSON_COMPACT) : NULL;
	json_decref(e);
	n->call->notify(n->call->notify_ctx, text ? text : event);
	free(text);
}

/* The tool's requests to the client (sampling, elicitation) share the
 * notifier's context: passed on with the caller's, without secrets, as
 * its reports are; what is not JSON is not passed on. */
char *gate_ask_through(void *ctx, const char *request, const volatile int *stop)
{
	const struct notify_redacting *n = ctx;
	json_t *q = json_loads(request, 0, NULL);
	struct redaction t;
	char *text, *answer;

	if (!q)
		return NULL;
	memset(&t, 0, sizeof(t));
	gate_redact_json(q, &t);
	text = t.count ? json_dumps(q, JSON_COMPACT) : NULL;
	json_decref(q);
	answer = n->call->ask(n->call->notify_ctx, text ? text : request, stop);
	free(text);
	return answer;
}

int gate_stage_check_redact(struct tg_gate *g, struct call_state *st)
{
	int rc = stage_check(st);

	if (rc >= 0)
		stage_redact(g, st);
	return rc;
}

/* A record's free text (an error, a person's reason, a subject), without
 * secrets: a tool's message may quote what it was given. */
void gate_redact_record(json_t *fields)
{
	static const char *const keys[] = { "error", "reason", "subject" };
	struct redaction t;
	size_t i;

	memset(&t, 0, sizeof(t));
	for (i = 0; fields && i < sizeof(keys) / sizeof(keys[0]); i++)
		gate_redact_member(fields, keys[i], &t);
}
