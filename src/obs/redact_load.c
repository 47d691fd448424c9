/*
 * An operator's redaction rules, read from a gitleaks configuration
 * (docs/REDACTION.md, "gitleaks configurations"): the TOML is read by
 * util/toml.c, each expression translated from Go's syntax by
 * redact_re2.c, and the result is a struct tg_redact_ruleset that
 * redact_x.c matches with.
 *
 * gitleaks' format, as its v8 reads it: [[rules]] with id, regex,
 * secretGroup, entropy, keywords, allowlists ([[rules.allowlists]], or
 * the older [rules.allowlist]); global [[allowlists]] (or [allowlist]),
 * targetRules aiming one at some rules; [extend] with path and
 * disabledRules. Keys are matched without regard to case, as gitleaks
 * (viper) does. What does not apply to output that has no file path or
 * commit (paths, commits, path-only rules, skipReport parts, required
 * rules' proximity, extend.useDefault) is dropped or widened towards
 * redacting more, and said in a note; what is wrong is refused, naming
 * the file, the rule and the field. A key gitleaks does not know is
 * refused: a typo would otherwise drop an allowlist or a secretGroup
 * without a word.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "obs/redact_int.h"
#include "util/file.h"
#include "util/toml.h"

/* ---- rule ids, interned ---------------------------------------------- */

/* A finding's rule name is static for its reader (metrics keep it, the
 * audit log's tally, a remembered secret): an operator's ids live as long
 * as the process, each distinct one stored once. */
#define INTERN_MAX 4096

static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static char *interned[INTERN_MAX];
static size_t ninterned;

static const char *intern(const char *id)
{
	const char *r = NULL;
	size_t i;

	pthread_mutex_lock(&intern_lock);
	for (i = 0; i < ninterned && !r; i++)
		if (strcmp(interned[i], id) == 0)
			r = interned[i];
	if (!r && ninterned < INTERN_MAX && (interned[ninterned] = strdup(id)))
		r = interned[ninterned++];
	pthread_mutex_unlock(&intern_lock);
	return r;
}

/* ---- expressions ----------------------------------------------------- */

pcre2_code *redact_re2_compile(const char *re, size_t n, const char *what, struct tg_error *err)
{
	pcre2_compile_context *cc;
	pcre2_code *code;
	char *pat;
	int ecode;
	PCRE2_SIZE eoff;

	if (n > X_REGEX_MAX) {
		tg_error_set(err, TG_ERR_INVALID, "%s: %zu bytes, more than %d", what, n, X_REGEX_MAX);
		return NULL;
	}
	if (redact_re2_translate(re, n, what, &pat, err) < 0)
		return NULL;
	if (tg_pcre2_load(what, err) < 0) {
		free(pat);
		return NULL;
	}
	cc = pcre2_compile_context_create(NULL);
	if (!cc) {
		free(pat);
		tg_error_set(err, TG_ERR_NOMEM, "%s: out of memory", what);
		return NULL;
	}
	pcre2_set_newline(cc, PCRE2_NEWLINE_LF);
	/* ASCII \w \d \b as Go's (no UCP); Unicode classes and case folding */
	code = pcre2_compile((PCRE2_SPTR)pat, PCRE2_ZERO_TERMINATED,
			     PCRE2_UTF | PCRE2_MATCH_INVALID_UTF | PCRE2_DOLLAR_ENDONLY |
				     PCRE2_NEVER_BACKSLASH_C | PCRE2_NEVER_UCP,
			     &ecode, &eoff, cc);
	pcre2_compile_context_free(cc);
	free(pat);
	if (!code) {
		PCRE2_UCHAR msg[160];

		pcre2_get_error_message(ecode, msg, sizeof(msg));
		tg_error_set(err, TG_ERR_INVALID, "%s: %s", what, (char *)msg);
		return NULL;
	}
	/* the interpreter when it cannot; partial for a block's end */
	pcre2_jit_compile(code, PCRE2_JIT_COMPLETE | PCRE2_JIT_PARTIAL_HARD);
	return code;
}

/* ---- the configuration's shape ---------------------------------------- */

/* A rule as the files say it, before extension merges same ids. */
struct lrule {
	const char *id;
	const char *origin;    /* the file that defined it last */
	json_t *regex;         /* a string, or NULL */
	int has_path, skip, required;
	long group;
	double entropy;
	json_t *kw[X_EXTEND_DEPTH + 1]; /* keyword arrays, merged */
	size_t nkw;
	json_t *allow[X_ALLOW_MAX * (X_EXTEND_DEPTH + 1)];
	const char *allow_origin[X_ALLOW_MAX * (X_EXTEND_DEPTH + 1)];
	size_t nallow;
};

/* A global allowlist, and which rules it aims at (NULL: all). */
struct lallow {
	json_t *obj;
	json_t *targets;
	const char *origin;
};

struct load {
	json_t *docs[X_EXTEND_DEPTH + 1];
	char *origins[X_EXTEND_DEPTH + 1];
	size_t ndocs;
	struct lrule *rules;
	size_t nrules;
	struct lallow *allows;
	size_t nallows;
	struct tg_redact_ruleset *rs;
	struct tg_error *err;
	int use_default;      /* a file said extend.useDefault */
};

static int note(struct load *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int note(struct load *l, const char *fmt, ...)
{
	struct tg_redact_ruleset *rs = l->rs;
	char **n;
	va_list ap;
	int rc;

	if (rs->nnotes >= 256)
		return 0; /* enough said */
	n = realloc(rs->notes, (rs->nnotes + 2) * sizeof(*n));
	if (!n)
		return tg_error_set(l->err, TG_ERR_NOMEM, "redaction rules: out of memory");
	rs->notes = n;
	va_start(ap, fmt);
	rc = vasprintf(&n[rs->nnotes], fmt, ap);
	va_end(ap);
	if (rc < 0)
		return tg_error_set(l->err, TG_ERR_NOMEM, "redaction rules: out of memory");
	n[++rs->nnotes] = NULL;
	return 0;
}

/* obj's keys all among known (case aside, each once). */
static int known_keys(struct load *l, json_t *obj, const char *const *known, const char *origin,
		      const char *where)
{
	const char *k, *k2;
	json_t *v, *v2;

	json_object_foreach(obj, k, v) {
		size_t i;

		for (i = 0; known[i] && strcasecmp(known[i], k) != 0; i++)
			;
		if (!known[i])
			return tg_error_set(l->err, TG_ERR_INVALID,
					    "%s: %s: unknown key '%.64s' (gitleaks' keys: see docs/REDACTION.md)",
					    origin, where, k);
		json_object_foreach(obj, k2, v2)
			if (k2 != k && strcasecmp(k2, k) == 0 && strcmp(k2, k) < 0)
				return tg_error_set(l->err, TG_ERR_INVALID,
						    "%s: %s: the key '%.64s' given twice ('%.64s')", origin,
						    where, k, k2);
	}
	return 0;
}

static json_t *get(json_t *obj, const char *key)
{
	const char *k;
	json_t *v;

	json_object_foreach(obj, k, v)
		if (strcasecmp(k, key) == 0)
			return v;
	return NULL;
}

/* obj[key] as a string (NULL when absent): -1 when of another type. */
static int get_str(struct load *l, json_t *obj, const char *key, const char *origin,
		   const char *where, json_t **out)
{
	json_t *v = get(obj, key);

	*out = NULL;
	if (v && !json_is_string(v))
		return tg_error_set(l->err, TG_ERR_INVALID, "%s: %s: %s must be a string", origin,
				    where, key);
	*out = v;
	return 0;
}

/* obj[key] as an array of strings, at most X_LIST_MAX (NULL when absent). */
static int get_strs(struct load *l, json_t *obj, const char *key, const char *origin,
		    const char *where, json_t **out)
{
	json_t *v = get(obj, key), *e;
	size_t i;

	*out = NULL;
	if (!v)
		return 0;
	if (!json_is_array(v))
		return tg_error_set(l->err, TG_ERR_INVALID, "%s: %s: %s must be an array of strings",
				    origin, where, key);
	if (json_array_size(v) > X_LIST_MAX)
		return tg_error_set(l->err, TG_ERR_INVALID, "%s: %s: %s holds %zu items, more than %d",
				    origin, where, key, json_array_size(v), X_LIST_MAX);
	json_array_foreach(v, i, e)
		if (!json_is_string(e))
			return tg_error_set(l->err, TG_ERR_INVALID,
					    "%s: %s: %s[%zu] must be a string", origin, where, key, i);
	*out = v;
	return 0;
}

/* obj[key] as an array of tables, or (old) one table (NULL when absent). */
static int get_tables(struct load *l, json_t *obj, const char *key_new, const char *key_old,
		      const char *origin, const char *where, json_t **arr, json_t **one)
{
	json_t *a = get(obj, key_new), *o = get(obj, key_old), *e;
	size_t i;

	*arr = *one = NULL;
	if (a && o)
		return tg_error_set(l->err, TG_ERR_INVALID,
				    "%s: %s: [%s] and [[%s]] both given (gitleaks refuses that too)",
				    origin, where, key_old, key_new);
	if (o && !json_is_object(o))
		return tg_error_set(l->err, TG_ERR_INVALID, "%s: %s: %s must be a table", origin,
				    where, key_old);
	if (a) {
		if (!json_is_array(a))
			return tg_error_set(l->err, TG_ERR_INVALID,
					    "%s: %s: %s must be an array of tables", origin, where,
					    key_new);
		if (json_array_size(a) > X_ALLOW_MAX)
			return tg_error_set(l->err, TG_ERR_INVALID, "%s: %s: more than %d %s", origin,
					    where, X_ALLOW_MAX, key_new);
		json_array_foreach(a, i, e)
			if (!json_is_object(e))
				return tg_error_set(l->err, TG_ERR_INVALID,
						    "%s: %s: %s[%zu] must be a table", origin, where,
						    key_new, i);
	}
	*arr = a;
	*one = o;
	return 0;
}

static const char *const rule_keys[] = {
	"id", "description", "regex", "secretGroup", "entropy", "keywords", "tags", "path",
	"allowlist", "allowlists", "required", "skipReport", NULL,
};
static const char *const allow_keys[] = {
	"description", "condition", "commits", "paths", "regexTarget", "regexes", "stopwords", NULL,
};
static const char *const gallow_keys[] = {
	"description", "condition", "commits", "paths", "regexTarget", "regexes", "stopwords",
	"targetRules", NULL,
};
static const char *const top_keys[] = {
	"title", "description", "minVersion", "extend", "rules", "allowlist", "allowlists", NULL,
};
static const char *const extend_keys[] = { "path", "url", "useDefault", "disabledRules", NULL };
static const char *const required_keys[] = { "id", "withinLines", "withinColumns", NULL };

static int id_ok(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > X_ID_MAX)
		return 0;
	for (const char *p = id; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '_' || *p == '-' || *p == '.'))
			return 0;
	return 1;
}

static struct lrule *find_rule(struct load *l, const char *id)
{
	for (size_t i = 0; i < l->nrules; i++)
		if (l->rules[i].id && strcmp(l->rules[i].id, id) == 0)
			return &l->rules[i];
	return NULL;
}

/* One [[rules]] entry of origin into lr (fresh, or the base's same id:
 * what this file sets wins, lists add up, as gitleaks' extend does). */
static int rule_read(struct load *l, json_t *r, const char *origin, struct lrule *lr,
		     int fresh)
{
	char where[96];
	json_t *v, *arr, *one;

	snprintf(where, sizeof(where), "rule %s", lr->id);
	if (known_keys(l, r, rule_keys, origin, where) < 0)
		return -1;
	if (get_str(l, r, "regex", origin, where, &v) < 0)
		return -1;
	if (v)
		lr->regex = v;
	if ((v = get(r, "path"))) {
		if (!json_is_string(v))
			return tg_error_set(l->err, TG_ERR_INVALID, "%s: %s: path must be a string",
					    origin, where);
		lr->has_path = 1;
	}
	if ((v = get(r, "secretGroup"))) {
		if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > 99)
			return tg_error_set(l->err, TG_ERR_INVALID,
					    "%s: %s: secretGroup must be an integer from 0 to 99",
					    origin, where);
		if (json_integer_value(v))
			lr->group = (long)json_integer_value(v);
	}
	if ((v = get(r, "entropy"))) {
		if (!json_is_number(v) || json_number_value(v) < 0 || json_number_value(v) > 8)
			return tg_error_set(l->err, TG_ERR_INVALID,
					    "%s: %s: entropy must be a number from 0 to 8 (bits a byte)",
					    origin, where);
		if (json_number_value(v) != 0)
			lr->entropy = json_number_value(v);
	}
	if (get_strs(l, r, "keywords", origin, where, &v) < 0)
		return -1;
	if (v && lr->nkw < X_EXTEND_DEPTH + 1)
		lr->kw[lr->nkw++] = v;
	if (get_strs(l, r, "tags", origin, where, &v) < 0)
		return -1;
	if ((v = get(r, "description")) && !json_is_string(v))
		return tg_error_set(l->err, TG_ERR_INVALID, "%s: %s: description must be a string",
				    origin, where);
	if ((v = get(r, "skipReport"))) {
		if (!json_is_boolean(v))
			return tg_error_set(l->err, TG_ERR_INVALID,
					    "%s: %s: skipReport must be true or false", origin, where);
		lr->skip = json_is_true(v);
	}
	if ((v = get(r, "required"))) {
		size_t i;
		json_t *e;

		if (!json_is_array(v) || json_array_size(v) > X_LIST_MAX)
			return tg_error_set(l->err, TG_ERR_INVALID,
					    "%s: %s: required must be an array of tables", origin, where);
		json_array_foreach(v, i, e) {
			json_t *id;

			if (!json_is_object(e) || known_keys(l, e, required_keys, origin, where) < 0)
				return json_is_object(e) ? -1
							 : tg_error_set(l->err, TG_ERR_INVALID,
									"%s: %s: required[%zu] must be a table",
									origin, where, i);
			if (get_str(l, e, "id", origin, where, &id) < 0)
				return -1;
			if (!id || !json_string_value(id)[0])
				return tg_error_set(l->err, TG_ERR_INVALID,
						    "%s: %s: required[%zu] has no id", origin, where, i);
		}
		lr->required = 1;
	}
	if (get_tables(l, r, "allowlists", "allowlist", origin, where, &arr, &one) < 0)
		return -1;
	{
		size_t n = (arr ? json_array_size(arr) : 0) + (one ? 1 : 0), i;

		if (lr->nallow + n > sizeof(lr->allow) / sizeof(lr->allow[0]))
			return tg_error_set(l->err, TG_ERR_INVALID, "%s: %s: too many allowlists",
					    origin, where);
		for (i = 0; i < n; i++) {
			lr->allow_origin[lr->nallow] = origin;
			lr->allow[lr->nallow++] = one ? one : json_array_get(arr, i);
		}
	}
	if (fresh)
		lr->origin = origin;
	return 0;
}

/* The file at path, depth levels of extension down: its rules and
 * global allowlists added to l (a base's rules first). */
static int file_load(struct load *l, const char *path, int depth);

static int extend_read(struct load *l, json_t *doc, const char *origin, int depth,
		       json_t **disabled)
{
	json_t *ext = get(doc, "extend"), *path, *v;

	*disabled = NULL;
	if (!ext)
		return 0;
	if (!json_is_object(ext))
		return tg_error_set(l->err, TG_ERR_INVALID, "%s: extend must be a table", origin);
	if (known_keys(l, ext, extend_keys, origin, "extend") < 0 ||
	    get_str(l, ext, "path", origin, "extend", &path) < 0 ||
	    get_strs(l, ext, "disabledRules", origin, "extend", disabled) < 0)
		return -1;
	if (get(ext, "url"))
		return tg_error_set(l->err, TG_ERR_INVALID,
				    "%s: extend.url: not supported (rules are read from a file)", origin);
	v = get(ext, "useDefault");
	if (v && !json_is_boolean(v))
		return tg_error_set(l->err, TG_ERR_INVALID,
				    "%s: extend.useDefault must be true or false", origin);
	if (path && json_is_true(v))
		return tg_error_set(l->err, TG_ERR_INVALID,
				    "%s: extend: path and useDefault both given (gitleaks refuses that too)",
				    origin);
	if (json_is_true(v))
		l->use_default = 1;
	if (json_is_true(v) &&
	    note(l, "%s: extend.useDefault: toolgate's built-in rules stand for gitleaks' default ones (always on)%s",
		 origin, *disabled ? "; disabledRules does not apply to them" : "") < 0)
		return -1;
	if (!path)
		return 0;
	if (depth >= X_EXTEND_DEPTH)
		return tg_error_set(l->err, TG_ERR_INVALID,
				    "%s: extend.path: more than %d levels of extension (gitleaks ignores the rest; so would no one notice)",
				    origin, X_EXTEND_DEPTH);
	{
		/* relative to the file that names it, not to a working directory */
		const char *p = json_string_value(path), *slash = strrchr(origin, '/');
		char full[4096];
		int n;

		if (p[0] == '/' || !slash)
			n = snprintf(full, sizeof(full), "%s", p);
		else
			n = snprintf(full, sizeof(full), "%.*s/%s", (int)(slash - origin), origin, p);
		if (n < 0 || (size_t)n >= sizeof(full))
			return tg_error_set(l->err, TG_ERR_LIMIT,
					    "%s: extend.path: longer than %zu bytes once joined to the file's folder",
					    origin, sizeof(full) - 1);
		return file_load(l, full, depth + 1);
	}
}

static int doc_load(struct load *l, json_t *doc, const char *origin, int depth)
{
	json_t *rules, *disabled, *arr, *one, *e;
	size_t base_rules, i;

	if (known_keys(l, doc, top_keys, origin, "the top level") < 0)
		return -1;
	if ((e = get(doc, "title")) && !json_is_string(e))
		return tg_error_set(l->err, TG_ERR_INVALID, "%s: title must be a string", origin);
	/* gitleaks >= 8.28 (and its own default configuration) say which
	 * gitleaks they need: nothing for toolgate to check */
	if ((e = get(doc, "minVersion")) && !json_is_string(e))
		return tg_error_set(l->err, TG_ERR_INVALID, "%s: minVersion must be a string", origin);
	if (extend_read(l, doc, origin, depth, &disabled) < 0)
		return -1;
	base_rules = l->nrules;
	if (disabled) {
		json_array_foreach(disabled, i, e) {
			struct lrule *lr = find_rule(l, json_string_value(e));

			if (!lr) {
				if (note(l, "%s: extend.disabledRules: no rule %.64s in what is extended",
					 origin, json_string_value(e)) < 0)
					return -1;
				continue;
			}
			lr->id = NULL; /* dropped */
		}
	}
	rules = get(doc, "rules");
	if (rules && (!json_is_array(rules) || json_array_size(rules) > X_RULES_MAX))
		return tg_error_set(l->err, TG_ERR_INVALID,
				    "%s: rules must be an array of tables ([[rules]]), at most %d",
				    origin, X_RULES_MAX);
	json_array_foreach(rules, i, e) {
		json_t *id;
		struct lrule *lr;
		char where[32];
		int fresh = 0;

		snprintf(where, sizeof(where), "rules[%zu]", i);
		if (!json_is_object(e))
			return tg_error_set(l->err, TG_ERR_INVALID, "%s: %s must be a table", origin,
					    where);
		if (get_str(l, e, "id", origin, where, &id) < 0)
			return -1;
		if (!id || !id_ok(json_string_value(id)))
			return tg_error_set(l->err, TG_ERR_INVALID,
					    "%s: %s: id must be 1 to %d of [A-Za-z0-9._-] (it names the marker [REDACTED:<id>])",
					    origin, where, X_ID_MAX);
		lr = find_rule(l, json_string_value(id));
		if (lr && (size_t)(lr - l->rules) >= base_rules)
			return tg_error_set(l->err, TG_ERR_INVALID, "%s: rule %s given twice", origin,
					    json_string_value(id));
		if (!lr) {
			if (l->nrules >= X_RULES_MAX)
				return tg_error_set(l->err, TG_ERR_INVALID, "%s: more than %d rules",
						    origin, X_RULES_MAX);
			lr = &l->rules[l->nrules++];
			memset(lr, 0, sizeof(*lr));
			lr->id = json_string_value(id);
			fresh = 1;
		}
		if (rule_read(l, e, origin, lr, fresh) < 0)
			return -1;
		lr->origin = origin;
	}
	if (get_tables(l, doc, "allowlists", "allowlist", origin, "the top level", &arr, &one) < 0)
		return -1;
	for (i = 0; i < (arr ? json_array_size(arr) : 0) + (one ? 1 : 0); i++) {
		struct lallow *a;

		if (l->nallows >= X_ALLOW_MAX * (X_EXTEND_DEPTH + 1))
			return tg_error_set(l->err, TG_ERR_INVALID, "%s: too many allowlists", origin);
		a = &l->allows[l->nallows++];
		a->obj = one ? one : json_array_get(arr, i);
		a->origin = origin;
		if (known_keys(l, a->obj, gallow_keys, origin, "allowlist") < 0 ||
		    get_strs(l, a->obj, "targetRules", origin, "allowlist", &a->targets) < 0)
			return -1;
	}
	return 0;
}

static int file_load(struct load *l, const char *path, int depth)
{
	char *text;
	size_t len;
	json_t *doc;
	char *origin;

	text = file_read_all(path, TOML_MAX, 1, &len);
	if (!text) {
		if (errno == EFBIG)
			return tg_error_set(l->err, TG_ERR_LIMIT, "%s: more than %u bytes", path,
					    TOML_MAX);
		return tg_error_set(l->err, errno == ENOMEM ? TG_ERR_NOMEM : TG_ERR_INVALID, "%s: %s",
				    path, errno == EINVAL ? "not a regular file" : strerror(errno));
	}
	if (!(origin = strdup(path))) {
		free(text);
		return tg_error_set(l->err, TG_ERR_NOMEM, "%s: out of memory", path);
	}
	if (toml_parse(text, len, path, &doc, l->err) < 0) {
		free(text);
		free(origin);
		return -1;
	}
	free(text);
	l->docs[l->ndocs] = doc;
	l->origins[l->ndocs++] = origin;
	return doc_load(l, doc, origin, depth);
}

/* ---- compiled ---------------------------------------------------------- */

static int allow_make(struct load *l, json_t *obj, const char *const *keys, const char *origin,
		      const char *where,
		      struct xallow *a, int *applies)
{
	json_t *v, *re, *stop, *paths, *commits, *e;
	size_t i;
	char what[160];

	*applies = 0;
	memset(a, 0, sizeof(*a));
	if (known_keys(l, obj, keys, origin, where) < 0 ||
	    get_strs(l, obj, "regexes", origin, where, &re) < 0 ||
	    get_strs(l, obj, "stopwords", origin, where, &stop) < 0 ||
	    get_strs(l, obj, "paths", origin, where, &paths) < 0 ||
	    get_strs(l, obj, "commits", origin, where, &commits) < 0)
		return -1;
	if (get_str(l, obj, "condition", origin, where, &v) < 0)
		return -1;
	if (v) {
		const char *c = json_string_value(v);

		if (strcasecmp(c, "and") == 0 || strcmp(c, "&&") == 0)
			a->all = 1;
		else if (!(c[0] == '\0' || strcasecmp(c, "or") == 0 || strcmp(c, "||") == 0))
			return tg_error_set(l->err, TG_ERR_INVALID,
					    "%s: %s: condition must be AND or OR, not '%.32s'", origin,
					    where, c);
	}
	if (get_str(l, obj, "regexTarget", origin, where, &v) < 0)
		return -1;
	a->target = XA_SECRET;
	if (v) {
		const char *t = json_string_value(v);

		if (strcmp(t, "match") == 0)
			a->target = XA_MATCH;
		else if (strcmp(t, "line") == 0)
			a->target = XA_LINE;
		else if (t[0] && strcmp(t, "secret") != 0)
			return tg_error_set(l->err, TG_ERR_INVALID,
					    "%s: %s: regexTarget must be secret, match or line, not '%.32s'",
					    origin, where, t);
	}
	if (!json_array_size(re) && !json_array_size(stop) && !json_array_size(paths) &&
	    !json_array_size(commits))
		return tg_error_set(l->err, TG_ERR_INVALID,
				    "%s: %s: must hold regexes, stopwords, paths or commits", origin, where);
	if (json_array_size(paths) || json_array_size(commits)) {
		/* output has no path or commit: such a check never holds */
		if (a->all || (!json_array_size(re) && !json_array_size(stop)))
			return note(l, "%s: %s: paths and commits do not apply to what a tool prints: this allowlist allows nothing here",
				    origin, where);
		if (note(l, "%s: %s: paths and commits do not apply to what a tool prints: only its regexes and stopwords are used",
			 origin, where) < 0)
			return -1;
	}
	a->re = calloc(json_array_size(re) + 1, sizeof(*a->re));
	a->stop = calloc(json_array_size(stop) + 1, sizeof(*a->stop));
	if (!a->re || !a->stop)
		return tg_error_set(l->err, TG_ERR_NOMEM, "redaction rules: out of memory");
	json_array_foreach(re, i, e) {
		snprintf(what, sizeof(what), "%s: %s: regexes[%zu]", origin, where, i);
		if (!(a->re[a->nre] = redact_re2_compile(json_string_value(e), json_string_length(e),
							 what, l->err)))
			return -1;
		a->nre++;
	}
	json_array_foreach(stop, i, e) {
		char *w = strdup(json_string_value(e));

		if (!w)
			return tg_error_set(l->err, TG_ERR_NOMEM, "redaction rules: out of memory");
		for (char *p = w; *p; p++)
			if (*p >= 'A' && *p <= 'Z')
				*p = (char)(*p + 32);
		a->stop[a->nstop++] = w;
		if (!w[0])
			return tg_error_set(l->err, TG_ERR_INVALID, "%s: %s: stopwords[%zu] is empty",
					    origin, where, i);
	}
	*applies = 1;
	return 0;
}

static int rule_make(struct load *l, struct lrule *lr, struct xrule *xr)
{
	char what[160];
	size_t i, k;
	struct tg_redact_ruleset *rs = l->rs;

	xr->id = lr->id;
	snprintf(what, sizeof(what), "%s: rule %s: regex", lr->origin, lr->id);
	if (!(xr->re = redact_re2_compile(json_string_value(lr->regex),
					  json_string_length(lr->regex), what, l->err)))
		return -1;
	pcre2_pattern_info(xr->re, PCRE2_INFO_CAPTURECOUNT, &xr->groups);
	if (lr->group > (long)xr->groups)
		return tg_error_set(l->err, TG_ERR_INVALID,
				    "%s: rule %s: secretGroup %ld, but the regex has %u groups",
				    lr->origin, lr->id, lr->group, xr->groups);
	xr->group = (uint32_t)lr->group;
	xr->entropy = lr->entropy;
	for (k = 0; k < lr->nkw; k++) {
		json_t *e;

		json_array_foreach(lr->kw[k], i, e) {
			char **kw = realloc(xr->kw, (xr->nkw + 1) * sizeof(*kw));

			if (!kw)
				return tg_error_set(l->err, TG_ERR_NOMEM, "redaction rules: out of memory");
			xr->kw = kw;
			if (json_string_length(e) == 0 || json_string_length(e) > X_KEYWORD_MAX)
				return tg_error_set(l->err, TG_ERR_INVALID,
						    "%s: rule %s: keywords[%zu]: 1 to %d bytes",
						    lr->origin, lr->id, i, X_KEYWORD_MAX);
			if (!(xr->kw[xr->nkw] = strdup(json_string_value(e))))
				return tg_error_set(l->err, TG_ERR_NOMEM, "redaction rules: out of memory");
			xr->nkw++;
		}
	}
	xr->allow = calloc(lr->nallow + l->nallows + 1, sizeof(*xr->allow));
	if (!xr->allow)
		return tg_error_set(l->err, TG_ERR_NOMEM, "redaction rules: out of memory");
	for (i = 0; i < lr->nallow; i++) {
		int applies;
		struct xallow *a = &rs->allows[rs->nallows++];

		snprintf(what, sizeof(what), "rule %s: allowlists[%zu]", lr->id, i);
		if (allow_make(l, lr->allow[i], allow_keys, lr->allow_origin[i], what, a, &applies) < 0)
			return -1;
		if (applies)
			xr->allow[xr->nallow++] = a;
	}
	return 0;
}

static int rules_make(struct load *l)
{
	struct tg_redact_ruleset *rs = l->rs;
	const char *const *builtin = tg_redact_rules();
	size_t i, j, nallow = l->nallows;

	for (i = 0; i < l->nrules; i++)
		nallow += l->rules[i].nallow;
	rs->rules = calloc(l->nrules + REDACT_VENDORS_MAX + 1, sizeof(*rs->rules));
	rs->ids = calloc(l->nrules + REDACT_VENDORS_MAX + 1, sizeof(*rs->ids));
	rs->allows = calloc(nallow + 1, sizeof(*rs->allows));
	rs->global = calloc(l->nallows + 1, sizeof(*rs->global));
	if (!rs->rules || !rs->ids || !rs->allows || !rs->global)
		return tg_error_set(l->err, TG_ERR_NOMEM, "redaction rules: out of memory");
	for (i = 0; i < l->nrules; i++) {
		struct lrule *lr = &l->rules[i];

		if (!lr->id)
			continue; /* disabled */
		/* a built-in rule's name (gitleaks' own configuration has a
		 * "jwt"): both find what the name says, under one name */
		for (j = 0; builtin[j] && strcasecmp(builtin[j], lr->id) != 0; j++)
			;
		if (builtin[j] &&
		    note(l, "%s: rule %s: also a built-in rule's name: its findings and theirs are counted together",
			 lr->origin, lr->id) < 0)
			return -1;
		if (lr->skip) {
			if (note(l, "%s: rule %s: skipReport: a part of other rules, not redacted on its own",
				 lr->origin, lr->id) < 0)
				return -1;
			continue;
		}
		if (!lr->regex) {
			/* with useDefault, a rule of gitleaks' defaults given
			 * only its allowlists or keywords: toolgate has no such
			 * rule to add them to */
			if (!lr->has_path && l->use_default) {
				if (note(l, "%s: rule %s: no regex: it adds to gitleaks' default rule of that id, which toolgate does not have (its own rules stand for them)",
					 lr->origin, lr->id) < 0)
					return -1;
				continue;
			}
			if (!lr->has_path)
				return tg_error_set(l->err, TG_ERR_INVALID,
						    "%s: rule %s: neither regex nor path", lr->origin,
						    lr->id);
			if (note(l, "%s: rule %s: matches a path only: nothing to match in what a tool prints",
				 lr->origin, lr->id) < 0)
				return -1;
			continue;
		}
		if (lr->has_path &&
		    note(l, "%s: rule %s: path does not apply to what a tool prints: its regex runs on everything",
			 lr->origin, lr->id) < 0)
			return -1;
		if (lr->required &&
		    note(l, "%s: rule %s: required rules not checked: its own matches are redacted",
			 lr->origin, lr->id) < 0)
			return -1;
		if (rule_make(l, lr, &rs->rules[rs->n++]) < 0)
			return -1;
	}
	/* global allowlists: for all, or aimed at rules by id */
	for (i = 0; i < l->nallows; i++) {
		struct lallow *la = &l->allows[i];
		struct xallow *a = &rs->allows[rs->nallows++];
		char where[48];
		int applies;
		json_t *t;
		size_t k;

		snprintf(where, sizeof(where), "allowlists[%zu]", i);
		if (allow_make(l, la->obj, gallow_keys, la->origin, where, a, &applies) < 0)
			return -1;
		if (!la->targets) {
			if (applies)
				rs->global[rs->nglobal++] = a;
			continue;
		}
		json_array_foreach(la->targets, k, t) {
			struct lrule *lr = find_rule(l, json_string_value(t));

			if (!lr)
				return tg_error_set(l->err, TG_ERR_INVALID,
						    "%s: %s: targetRules names no rule '%.64s'", la->origin,
						    where, json_string_value(t));
			for (j = 0; j < rs->n && applies; j++) {
				struct xrule *xr = &rs->rules[j];
				size_t h;

				if (strcmp(xr->id, lr->id ? lr->id : "") != 0)
					continue;
				/* once, however often targetRules names it: the
				 * rule's array has room for each global list once */
				for (h = 0; h < xr->nallow && xr->allow[h] != a; h++)
					;
				if (h == xr->nallow)
					xr->allow[xr->nallow++] = a;
			}
		}
	}
	for (i = 0; i < rs->n; i++) {
		const char *id = intern(rs->rules[i].id);

		if (!id)
			return tg_error_set(l->err, TG_ERR_INVALID,
					    "redaction rules: more than %d distinct rule ids in this process's life: restart it",
					    INTERN_MAX);
		rs->rules[i].id = rs->ids[i] = id;
	}
	rs->nown = rs->n;
	/* toolgate's own vendor rules after the operator's */
	if (redact_vendors_add(rs, l->err) < 0)
		return -1;
	return redact_x_keywords(rs, l->err);
}

/* ---- load and free ----------------------------------------------------- */

void tg_redact_ruleset_free(struct tg_redact_ruleset *rs)
{
	size_t i, j;

	if (!rs || __atomic_sub_fetch(&rs->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	for (i = 0; i < rs->n; i++) {
		pcre2_code_free(rs->rules[i].re);
		free(rs->rules[i].allow);
		for (j = 0; j < rs->rules[i].nkw; j++)
			free(rs->rules[i].kw[j]);
		free(rs->rules[i].kw);
	}
	for (i = 0; i < rs->nallows; i++) {
		for (j = 0; j < rs->allows[i].nre; j++)
			pcre2_code_free(rs->allows[i].re[j]);
		for (j = 0; j < rs->allows[i].nstop; j++)
			free(rs->allows[i].stop[j]);
		free(rs->allows[i].re);
		free(rs->allows[i].stop);
	}
	for (i = 0; i < rs->nnotes; i++)
		free(rs->notes[i]);
	free(rs->notes);
	free(rs->rules);
	free(rs->ids);
	free(rs->allows);
	free(rs->global);
	free(rs->kws);
	free(rs->always);
	free(rs->first);
	free(rs->kwtext);
	free(rs);
}

int tg_redact_ruleset_load(const char *path, struct tg_redact_ruleset **out, struct tg_error *err)
{
	struct load l;
	size_t i;
	int rc = -1;

	*out = NULL;
	memset(&l, 0, sizeof(l));
	l.err = err;
	l.rs = calloc(1, sizeof(*l.rs));
	l.rules = calloc(X_RULES_MAX, sizeof(*l.rules));
	l.allows = calloc(X_ALLOW_MAX * (X_EXTEND_DEPTH + 1), sizeof(*l.allows));
	if (!l.rs || !l.rules || !l.allows) {
		tg_error_set(err, TG_ERR_NOMEM, "redaction rules: out of memory");
		goto out;
	}
	l.rs->refs = 1;
	if (file_load(&l, path, 0) < 0 || rules_make(&l) < 0)
		goto out;
	if (l.rs->nown == 0 && note(&l, "%s: no rule to apply", path) < 0)
		goto out;
	*out = l.rs;
	l.rs = NULL;
	rc = 0;
out:
	tg_redact_ruleset_free(l.rs);
	for (i = 0; i < l.ndocs; i++) {
		json_decref(l.docs[i]);
		free(l.origins[i]);
	}
	free(l.rules);
	free(l.allows);
	return rc;
}

size_t tg_redact_ruleset_ids(const struct tg_redact_ruleset *rs, const char *const **ids)
{
	*ids = rs->ids;
	return rs->nown;
}

const char *const *tg_redact_ruleset_notes(const struct tg_redact_ruleset *rs)
{
	static const char *const none[] = { NULL };

	return rs->notes ? (const char *const *)rs->notes : none;
}
