/*
 * The scanner's rules compiled (include/toolgate/skill.h, docs/SKILLS.md,
 * "Rules"): the built-in table (src/skills/rules_builtin.c), then an
 * operator's file, which may add rules, replace a built-in one by its id,
 * or turn one off.
 *
 * Every pattern is compiled caseless, UTF-8, and run with PCRE2's match
 * and depth limits (src/skills/scan.c), so an operator's pattern that
 * backtracks badly costs a bounded time per file, not a hang.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skills/rules_builtin.h"
#include "skills/skill_int.h"
#include "util/file.h"
#include "util/jload.h"

#define RULES_FILE_MAX (1u << 20)
#define RULES_MAX 512
#define PATTERN_MAX 4096

static const char *const sev_names[] = { NULL, "low", "medium", "high", "critical" };

const char *tg_severity_name(enum tg_severity severity)
{
	return severity >= TG_SEVERITY_LOW && severity <= TG_SEVERITY_CRITICAL ? sev_names[severity]
									      : "none";
}

int tg_severity_parse(const char *s, enum tg_severity *out)
{
	for (int i = TG_SEVERITY_LOW; i <= TG_SEVERITY_CRITICAL; i++)
		if (strcmp(s, sev_names[i]) == 0) {
			*out = (enum tg_severity)i;
			return 0;
		}
	return -1;
}

static void rule_release(struct skill_rule *r)
{
	free(r->id);
	free(r->family);
	free(r->description);
	free(r->pattern);
	pcre2_code_free(r->re);
	memset(r, 0, sizeof(*r));
}

void tg_skill_rules_free(struct tg_skill_rules *rules)
{
	if (!rules)
		return;
	for (size_t i = 0; i < rules->n; i++)
		rule_release(&rules->r[i]);
	free(rules->r);
	words_release(&rules->words);
	free(rules);
}

const struct skill_rule *rules_find(const struct tg_skill_rules *rules, const char *id)
{
	for (size_t i = 0; i < rules->n; i++)
		if (strcmp(rules->r[i].id, id) == 0)
			return &rules->r[i];
	return NULL;
}

/* pattern compiled into *re, or -1 with err saying where it fails. */
static int compile(const char *pattern, pcre2_code **re, char *why, size_t len)
{
	int code;
	PCRE2_SIZE at;

	*re = pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
			    PCRE2_CASELESS | PCRE2_UTF | PCRE2_MULTILINE, &code, &at, NULL);
	if (!*re) {
		PCRE2_UCHAR msg[160];

		pcre2_get_error_message(code, msg, sizeof(msg));
		snprintf(why, len, "at offset %zu: %s", (size_t)at, (const char *)msg);
		return -1;
	}
	pcre2_jit_compile(*re, PCRE2_JIT_COMPLETE); /* the interpreter when it cannot */
	return 0;
}

static int builtin(struct tg_skill_rules *t, struct tg_error *err)
{
	if (tg_pcre2_load("skill rules", err) < 0)
		return -1;
	t->r = calloc(RULES_MAX, sizeof(*t->r));
	if (!t->r)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < builtin_rules_n; i++) {
		const struct builtin_rule *b = &builtin_rules[i];
		struct skill_rule *r = &t->r[t->n];
		char why[200];

		r->severity = b->severity;
		r->files = b->files;
		r->teaching = b->teaching;
		if (!(r->id = strdup(b->id)) || !(r->family = strdup(b->family)) ||
		    !(r->description = strdup(b->description))) {
			t->n++;
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		}
		t->n++;
		for (size_t k = 0; k < builtin_needs_n; k++)
			if (strcmp(builtin_needs[k].id, b->id) == 0)
				r->need = builtin_needs[k].words;
		if (b->pattern && !(r->pattern = strdup(b->pattern)))
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		if (b->pattern && compile(b->pattern, &r->re, why, sizeof(why)) < 0)
			return tg_error_set(err, TG_ERR_SYSTEM, "built-in rule %s: %s", b->id, why);
	}
	return 0;
}

static const char *const rule_fields[] = { "id",    "family", "severity", "description",
					   "files", "pattern", "teaching", "off", NULL };

/* The files a rule reads: "text", "code" or "any". */
static int files_of(const char *s, unsigned *out)
{
	*out = strcmp(s, "text") == 0 ? FILE_TEXT : strcmp(s, "code") == 0 ? FILE_CODE
						 : strcmp(s, "any") == 0  ? FILE_ANY : 0;
	return *out ? 0 : -1;
}

/* Rule i of the operator's file into r (a new rule, or one replaced). */
static int load_rule(const struct jload *l, json_t *o, size_t i, struct tg_skill_rules *t)
{
	char f[64], why[200], *id = NULL, *pattern = NULL;
	struct skill_rule nr = { 0 }, *r;
	json_t *v;
	int off = 0, rc = -1;

	snprintf(f, sizeof(f), "rules[%zu]", i);
	if (!json_is_object(o))
		return jload_bad(l, f, "must be an object");
	if (jload_only(l, o, f, rule_fields) < 0)
		return -1;
	snprintf(f, sizeof(f), "rules[%zu].id", i);
	if (jload_string(l, json_object_get(o, "id"), f, 64, &id) < 0)
		return -1;
	if (!strchr(id, '/') || strspn(id, "abcdefghijklmnopqrstuvwxyz0123456789-/") != strlen(id)) {
		jload_bad(l, f, "'%s': a family and a name, lowercase, as remote-code/pipe-to-shell",
			  id);
		goto out;
	}
	snprintf(f, sizeof(f), "rules[%zu].off", i);
	if (jload_bool(l, o, "off", f, &off) < 0)
		goto out;
	r = (struct skill_rule *)rules_find(t, id);
	if (off) {
		if (!r) {
			jload_bad(l, f, "no rule %s to turn off", id);
			goto out;
		}
		r->off = 1;
		rc = 0;
		goto out;
	}
	nr.id = id;
	id = NULL;
	nr.family = strndup(nr.id, (size_t)(strchr(nr.id, '/') - nr.id));
	if (!nr.family) {
		jload_nomem(l);
		goto out;
	}
	snprintf(f, sizeof(f), "rules[%zu].severity", i);
	v = json_object_get(o, "severity");
	if (!json_is_string(v) || tg_severity_parse(json_string_value(v), &nr.severity) < 0) {
		jload_bad(l, f, "low, medium, high or critical");
		goto out;
	}
	snprintf(f, sizeof(f), "rules[%zu].files", i);
	v = json_object_get(o, "files");
	nr.files = FILE_ANY;
	if (v && (!json_is_string(v) || files_of(json_string_value(v), &nr.files) < 0)) {
		jload_bad(l, f, "text, code or any");
		goto out;
	}
	snprintf(f, sizeof(f), "rules[%zu].teaching", i);
	v = json_object_get(o, "teaching");
	if (v && !json_is_boolean(v) &&
	    !(json_is_string(v) && strcmp(json_string_value(v), "quoted") == 0)) {
		jload_bad(l, f, "true, false or \"quoted\"");
		goto out;
	}
	nr.teaching = json_is_true(v) ? 1 : json_is_string(v) ? 2 : 0;
	snprintf(f, sizeof(f), "rules[%zu].description", i);
	if (jload_string(l, json_object_get(o, "description"), f, 200, &nr.description) < 0)
		goto out;
	snprintf(f, sizeof(f), "rules[%zu].pattern", i);
	if (!json_object_get(o, "pattern") && r && !r->re) {
		/* one of the scanner's own rules, its severity or words changed */
		free(r->description);
		r->description = nr.description;
		nr.description = NULL;
		r->severity = nr.severity;
		r->files = nr.files;
		rc = 0;
		goto out;
	}
	if (!json_object_get(o, "pattern")) {
		jload_bad(l, f, "required (only the scanner's own rules, as %s lists them, go "
			  "without one)", "`toolgate skill rules`");
		goto out;
	}
	if (jload_string(l, json_object_get(o, "pattern"), f, PATTERN_MAX, &pattern) < 0)
		goto out;
	if (compile(pattern, &nr.re, why, sizeof(why)) < 0) {
		jload_bad(l, f, "%s", why);
		goto out;
	}
	nr.pattern = pattern;
	pattern = NULL;
	if (r) {
		rule_release(r); /* its words go with it: they were its pattern's */
		r->need = NULL;
	} else {
		if (t->n == RULES_MAX) {
			jload_bad(l, "rules", "more than %d rules in all", RULES_MAX);
			goto out;
		}
		r = &t->r[t->n++];
	}
	*r = nr;
	memset(&nr, 0, sizeof(nr));
	rc = 0;
out:
	rule_release(&nr);
	free(id);
	free(pattern);
	return rc;
}

static int operator_file(const char *path, struct tg_skill_rules *t, struct tg_error *err)
{
	struct jload l = { .kind = "rules", .origin = path, .err = err };
	json_error_t je;
	json_t *doc, *rules;
	size_t len;
	char *text = file_read_all(path, RULES_FILE_MAX, 1, &len);
	int rc = -1;

	if (!text)
		return errno == EFBIG ? tg_error_set(err, TG_ERR_LIMIT, "rules %s: over %u bytes",
						     path, RULES_FILE_MAX)
				      : tg_error_sys(err, errno, "rules %s", path);
	doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
	free(text);
	if (!doc)
		return tg_error_set(err, TG_ERR_INVALID, "rules %s: line %d: %s", path, je.line,
				    je.text);
	rules = json_object_get(doc, "rules");
	if (!json_is_object(doc) || json_object_size(doc) != 1 || !json_is_array(rules)) {
		jload_bad(&l, "(top)", "must be {\"rules\": [...]}");
		goto out;
	}
	for (size_t i = 0; i < json_array_size(rules); i++)
		if (load_rule(&l, json_array_get(rules, i), i, t) < 0)
			goto out;
	rc = 0;
out:
	json_decref(doc);
	return rc;
}

int tg_skill_rules_new(const char *path, struct tg_skill_rules **out, struct tg_error *err)
{
	struct tg_skill_rules *t = calloc(1, sizeof(*t));

	*out = NULL;
	if (!t)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (builtin(t, err) < 0 || (path && operator_file(path, t, err) < 0)) {
		tg_skill_rules_free(t);
		return -1;
	}
	if (words_build(&t->words, t->r, t->n) < 0) {
		tg_skill_rules_free(t);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory (the rules' words)");
	}
	*out = t;
	return 0;
}

size_t tg_skill_rules_count(const struct tg_skill_rules *rules)
{
	return rules->n;
}

void tg_skill_rules_get(const struct tg_skill_rules *rules, size_t i, const char **id,
			const char **family, enum tg_severity *severity, const char **description)
{
	const struct skill_rule *r = &rules->r[i];

	*id = r->id;
	*family = r->family;
	*severity = r->severity;
	*description = r->description;
}

char *tg_skill_rules_json(const struct tg_skill_rules *rules)
{
	json_t *a = json_array(), *doc;
	char *text;

	for (size_t i = 0; a && i < rules->n; i++) {
		const struct skill_rule *r = &rules->r[i];
		json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:o}", "id", r->id, "severity",
				      tg_severity_name(r->severity), "files",
				      r->files == FILE_TEXT ? "text"
				      : r->files == FILE_CODE ? "code" : "any",
				      "description", r->description, "teaching",
				      r->teaching == 2 ? json_string("quoted")
						       : json_boolean(r->teaching));

		if (o && r->pattern && json_object_set_new(o, "pattern", json_string(r->pattern)) < 0)
			json_decref(o), o = NULL;
		if (o && r->off && json_object_set_new(o, "off", json_true()) < 0)
			json_decref(o), o = NULL;
		if (json_array_append_new(a, o) < 0) {
			json_decref(a);
			return NULL;
		}
	}
	doc = a ? json_pack("{s:o}", "rules", a) : NULL;
	if (!doc)
		return NULL;
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
	return text;
}
