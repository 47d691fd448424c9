/*
 * Validation: a compiled schema (compile.c) applied to an instance.
 *
 * apply() evaluates one node against one instance value. When the caller
 * needs annotations (an "unevaluatedProperties" or "unevaluatedItems"
 * somewhere above), it also reports which properties and items this node
 * evaluated successfully, so that annotations flow up through $ref, allOf,
 * anyOf, oneOf, if/then/else and dependentSchemas as 2020-12 says. The
 * dynamic scope (the resources entered on the way down) resolves
 * "$dynamicRef". Failed assertions are recorded in the "basic" output shape
 * unless they happen inside a branch whose failure is not an error
 * (anyOf, oneOf, not, if, contains).
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"

#define DEFAULT_MAX_DEPTH 512
#define DEFAULT_MAX_BYTES (16u << 20)
#define MAX_SCOPE 256
#define MAX_EVAL_DEPTH 1024 /* nested applications, $ref cycles included */

struct ann {
	const char **props;    /* evaluated property names (borrowed) */
	size_t nprops, cap;
	size_t items_upto;     /* items [0, items_upto) evaluated */
	int items_all;
	unsigned char *contains; /* items matched by "contains" */
	size_t ncontains;
};

struct ctx {
	const struct tg_schema *s;
	struct tg_schema_errors *errors;
	int quiet;                            /* >0: inside a branch */
	char ipath[1024];                     /* instance location */
	size_t ilen;
	const struct resource *scope[MAX_SCOPE];
	size_t nscope;
	int fatal;                            /* regex limit, too deep */
	size_t depth;
};

static void ann_free(struct ann *a)
{
	if (!a)
		return;
	free(a->props);
	free(a->contains);
	memset(a, 0, sizeof(*a));
}

static int ann_has_prop(const struct ann *a, const char *k)
{
	size_t i;

	for (i = 0; i < a->nprops; i++)
		if (a->props[i] == k || strcmp(a->props[i], k) == 0)
			return 1;
	return 0;
}

static void ann_add_prop(struct ann *a, const char *k)
{
	if (!a || ann_has_prop(a, k))
		return;
	if (a->nprops == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 8;
		const char **p = realloc(a->props, cap * sizeof(*p));

		if (!p)
			return;
		a->props = p;
		a->cap = cap;
	}
	a->props[a->nprops++] = k;
}

static void ann_mark_contains(struct ann *a, size_t i, size_t n)
{
	if (!a)
		return;
	if (!a->contains) {
		a->contains = calloc(n ? n : 1, 1);
		a->ncontains = n;
	}
	if (a->contains && i < a->ncontains)
		a->contains[i] = 1;
}

static void ann_merge(struct ann *into, const struct ann *from)
{
	size_t i;

	if (!into)
		return;
	for (i = 0; i < from->nprops; i++)
		ann_add_prop(into, from->props[i]);
	if (from->items_upto > into->items_upto)
		into->items_upto = from->items_upto;
	into->items_all |= from->items_all;
	for (i = 0; i < from->ncontains; i++)
		if (from->contains[i])
			ann_mark_contains(into, i, from->ncontains);
}

/* ---- errors and locations ------------------------------------------ */

static void fail(struct ctx *c, const struct snode *n, const char *kw, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void fail(struct ctx *c, const struct snode *n, const char *kw, const char *fmt, ...)
{
	struct tg_schema_error *e;
	va_list ap;

	if (c->quiet || !c->errors || c->errors->n >= c->errors->cap)
		return;
	e = &c->errors->v[c->errors->n++];
	snprintf(e->instance_location, sizeof(e->instance_location), "%.*s", (int)c->ilen,
		 c->ipath);
	snprintf(e->keyword_location, sizeof(e->keyword_location), "%s/%s", n->path, kw);
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
}

static size_t ipush(struct ctx *c, const char *seg, int index, size_t i)
{
	size_t old = c->ilen;
	char buf[32];
	const char *p;

	/* locations are only for errors: none wanted, none built */
	if (!c->errors || c->ilen + 2 >= sizeof(c->ipath))
		return old;
	c->ipath[c->ilen++] = '/';
	if (index) {
		snprintf(buf, sizeof(buf), "%zu", i);
		seg = buf;
	}
	for (p = seg; *p && c->ilen + 3 < sizeof(c->ipath); p++) {
		if (*p == '~' || *p == '/') {
			c->ipath[c->ilen++] = '~';
			c->ipath[c->ilen++] = *p == '~' ? '0' : '1';
		} else {
			c->ipath[c->ilen++] = *p;
		}
	}
	return old;
}

/* ---- JSON equality (1.0 equals 1) ----------------------------------- */

int json_equal_schema(const json_t *a, const json_t *b)
{
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b) &&
		       (!json_is_integer(a) || !json_is_integer(b) ||
			json_integer_value(a) == json_integer_value(b));
	if (json_typeof(a) != json_typeof(b))
		return 0;
	if (json_is_array(a)) {
		size_t i, n = json_array_size(a);

		if (n != json_array_size(b))
			return 0;
		for (i = 0; i < n; i++)
			if (!json_equal_schema(json_array_get(a, i), json_array_get(b, i)))
				return 0;
		return 1;
	}
	if (json_is_object(a)) {
		const char *k;
		json_t *v;

		if (json_object_size(a) != json_object_size(b))
			return 0;
		json_object_foreach((json_t *)a, k, v) {
			json_t *w = json_object_get(b, k);

			if (!w || !json_equal_schema(v, w))
				return 0;
		}
		return 1;
	}
	return json_equal(a, b);
}

static unsigned type_of(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_NULL: return T_NULL;
	case JSON_TRUE:
	case JSON_FALSE: return T_BOOLEAN;
	case JSON_OBJECT: return T_OBJECT;
	case JSON_ARRAY: return T_ARRAY;
	case JSON_STRING: return T_STRING;
	case JSON_INTEGER: return T_NUMBER | T_INTEGER;
	case JSON_REAL: {
		double d = json_real_value(v);

		return d == floor(d) && isfinite(d) ? T_NUMBER | T_INTEGER : T_NUMBER;
	}
	}
	return 0;
}

/* Code points in a UTF-8 string (jansson has checked it is valid). */
static size_t utf8_len(const char *s, size_t n)
{
	size_t i, cps = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			cps++;
	return cps;
}

static int multiple_of(double x, double m)
{
	double q = x / m;

	if (!isfinite(q))
		return 0;
	return fabs(q - nearbyint(q)) <= 1e-9 * fmax(1.0, fabs(q));
}

/* ---- keywords -------------------------------------------------------- */

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct named_node *)a)->name, ((const struct named_node *)b)->name);
}

static int apply(struct ctx *c, const struct snode *n, json_t *inst, struct ann *out);

/* Evaluate in a branch whose failure is not an error by itself. */
static int quietly(struct ctx *c, const struct snode *n, json_t *inst, struct ann *out)
{
	int ok;

	c->quiet++;
	ok = apply(c, n, inst, out);
	c->quiet--;
	return ok;
}

static int check_number(struct ctx *c, const struct snode *n, json_t *inst)
{
	double x = json_number_value(inst);
	int ok = 1;

	if (n->has_min && !(x >= n->min)) {
		fail(c, n, "minimum", "%g is less than %g", x, n->min);
		ok = 0;
	}
	if (n->has_max && !(x <= n->max)) {
		fail(c, n, "maximum", "%g is greater than %g", x, n->max);
		ok = 0;
	}
	if (n->has_xmin && !(x > n->xmin)) {
		fail(c, n, "exclusiveMinimum", "%g is not greater than %g", x, n->xmin);
		ok = 0;
	}
	if (n->has_xmax && !(x < n->xmax)) {
		fail(c, n, "exclusiveMaximum", "%g is not less than %g", x, n->xmax);
		ok = 0;
	}
	if (n->has_mult && !multiple_of(x, n->mult)) {
		fail(c, n, "multipleOf", "%g is not a multiple of %g", x, n->mult);
		ok = 0;
	}
	return ok;
}

static int check_string(struct ctx *c, const struct snode *n, json_t *inst)
{
	const char *s = json_string_value(inst);
	size_t len = json_string_length(inst), cps;
	int ok = 1, m;

	if (n->min_len >= 0 || n->max_len >= 0) {
		cps = utf8_len(s, len);
		if (n->min_len >= 0 && cps < (size_t)n->min_len) {
			fail(c, n, "minLength", "shorter than %lld characters", n->min_len);
			ok = 0;
		}
		if (n->max_len >= 0 && cps > (size_t)n->max_len) {
			fail(c, n, "maxLength", "longer than %lld characters", n->max_len);
			ok = 0;
		}
	}
	if (n->format && c->s->opts.format_assert && !format_check(n->format, s, len)) {
		fail(c, n, "format", "not a valid %s", n->format);
		ok = 0;
	}
	if (n->pattern) {
		m = regex_search(n->pattern, s, len);
		if (m < 0) {
			c->fatal = 1;
			fail(c, n, "pattern", "pattern match limit reached");
			ok = 0;
		} else if (!m) {
			fail(c, n, "pattern", "does not match the pattern");
			ok = 0;
		}
	}
	return ok;
}

static int check_object(struct ctx *c, const struct snode *n, json_t *inst, struct ann *out)
{
	const char *key;
	json_t *v, *r;
	size_t i, old;
	int ok = 1;

	if (n->min_props >= 0 && json_object_size(inst) < (size_t)n->min_props) {
		fail(c, n, "minProperties", "fewer than %lld properties", n->min_props);
		ok = 0;
	}
	if (n->max_props >= 0 && json_object_size(inst) > (size_t)n->max_props) {
		fail(c, n, "maxProperties", "more than %lld properties", n->max_props);
		ok = 0;
	}
	if (n->required)
		json_array_foreach(n->required, i, r)
			if (json_is_string(r) && !json_object_get(inst, json_string_value(r))) {
				fail(c, n, "required", "'%s' is required", json_string_value(r));
				ok = 0;
			}
	for (i = 0; i < n->ndep_req; i++) {
		size_t j;

		if (!json_object_get(inst, n->dep_req[i].name))
			continue;
		json_array_foreach(n->dep_req[i].required, j, r)
			if (json_is_string(r) && !json_object_get(inst, json_string_value(r))) {
				fail(c, n, "dependentRequired", "'%s' requires '%s'",
				     n->dep_req[i].name, json_string_value(r));
				ok = 0;
			}
	}
	for (i = 0; i < n->ndep_schemas; i++)
		if (json_object_get(inst, n->dep_schemas[i].name) &&
		    !apply(c, n->dep_schemas[i].node, inst, out))
			ok = 0;
	json_object_foreach(inst, key, v) {
		int matched = 0;

		old = ipush(c, key, 0, 0);
		if (n->nprops) {
			struct named_node want = { key, NULL };
			const struct named_node *hit = bsearch(&want, n->props, n->nprops,
							       sizeof(n->props[0]), by_name);

			if (hit) {
				matched = 1;
				if (!apply(c, hit->node, v, NULL))
					ok = 0;
			}
		}
		for (i = 0; i < n->npatprops; i++) {
			int m = regex_search(n->patprops[i].re, key, strlen(key));

			if (m < 0)
				c->fatal = 1;
			if (m > 0) {
				matched = 1;
				if (!apply(c, n->patprops[i].node, v, NULL))
					ok = 0;
			}
		}
		if (!matched && n->addl_props) {
			matched = 1;
			if (!apply(c, n->addl_props, v, NULL))
				ok = 0;
		}
		if (n->prop_names) {
			json_t *name = json_string(key);

			if (name && !apply(c, n->prop_names, name, NULL))
				ok = 0;
			json_decref(name);
		}
		c->ilen = old;
		if (matched)
			ann_add_prop(out, key);
	}
	return ok;
}

static int check_array(struct ctx *c, const struct snode *n, json_t *inst, struct ann *out)
{
	size_t len = json_array_size(inst), i, j, old, found = 0;
	int ok = 1;

	if (n->min_items >= 0 && len < (size_t)n->min_items) {
		fail(c, n, "minItems", "fewer than %lld items", n->min_items);
		ok = 0;
	}
	if (n->max_items >= 0 && len > (size_t)n->max_items) {
		fail(c, n, "maxItems", "more than %lld items", n->max_items);
		ok = 0;
	}
	if (n->unique)
		for (i = 0; i < len && ok; i++)
			for (j = i + 1; j < len; j++)
				if (json_equal_schema(json_array_get(inst, i), json_array_get(inst, j))) {
					fail(c, n, "uniqueItems", "items %zu and %zu are equal", i, j);
					ok = 0;
					break;
				}
	for (i = 0; i < len && i < n->nprefix; i++) {
		old = ipush(c, NULL, 1, i);
		if (!apply(c, n->prefix[i], json_array_get(inst, i), NULL))
			ok = 0;
		c->ilen = old;
	}
	if (out && n->nprefix) {
		size_t upto = n->nprefix < len ? n->nprefix : len;

		if (upto > out->items_upto)
			out->items_upto = upto;
	}
	if (n->items) {
		for (i = n->nprefix; i < len; i++) {
			old = ipush(c, NULL, 1, i);
			if (!apply(c, n->items, json_array_get(inst, i), NULL))
				ok = 0;
			c->ilen = old;
		}
		if (out)
			out->items_all = 1;
	}
	if (n->contains) {
		for (i = 0; i < len; i++)
			if (quietly(c, n->contains, json_array_get(inst, i), NULL)) {
				found++;
				ann_mark_contains(out, i, len);
			}
		if (n->min_contains >= 0 ? found < (size_t)n->min_contains : found == 0) {
			fail(c, n, "contains", "%zu items match, fewer than required", found);
			ok = 0;
		}
		if (n->max_contains >= 0 && found > (size_t)n->max_contains) {
			fail(c, n, "maxContains", "%zu items match, more than %lld", found,
			     n->max_contains);
			ok = 0;
		}
	}
	return ok;
}

static int check_applicators(struct ctx *c, const struct snode *n, json_t *inst,
			     struct ann *out)
{
	size_t i, valid;
	int ok = 1;

	for (i = 0; i < n->nall; i++)
		if (!apply(c, n->all_of[i], inst, out))
			ok = 0;
	if (n->nany) {
		for (i = 0, valid = 0; i < n->nany; i++) {
			struct ann a = { 0 };

			if (quietly(c, n->any_of[i], inst, out ? &a : NULL)) {
				valid++;
				ann_merge(out, &a);
			}
			ann_free(&a);
			if (valid && !out)
				break; /* no annotations wanted: the first will do */
		}
		if (!valid) {
			fail(c, n, "anyOf", "matches none of the schemas");
			ok = 0;
		}
	}
	if (n->none) {
		struct ann keep = { 0 };

		for (i = 0, valid = 0; i < n->none; i++) {
			struct ann a = { 0 };

			if (quietly(c, n->one_of[i], inst, out ? &a : NULL)) {
				valid++;
				ann_free(&keep);
				keep = a;
			} else {
				ann_free(&a);
			}
		}
		if (valid != 1) {
			fail(c, n, "oneOf", "matches %zu of the schemas, not exactly one", valid);
			ok = 0;
		} else {
			ann_merge(out, &keep);
		}
		ann_free(&keep);
	}
	if (n->not_ && quietly(c, n->not_, inst, NULL)) {
		fail(c, n, "not", "matches a schema it must not");
		ok = 0;
	}
	if (n->if_) {
		struct ann a = { 0 };

		if (quietly(c, n->if_, inst, out ? &a : NULL)) {
			ann_merge(out, &a);
			if (n->then_ && !apply(c, n->then_, inst, out))
				ok = 0;
		} else if (n->else_ && !apply(c, n->else_, inst, out)) {
			ok = 0;
		}
		ann_free(&a);
	}
	return ok;
}

/* Resolve $dynamicRef: the outermost resource in the dynamic scope that
 * has a $dynamicAnchor of the same name wins. */
static const struct snode *dynamic_target(struct ctx *c, const struct snode *n)
{
	size_t i;

	if (!n->dyn_anchor_name)
		return n->dyn_ref;
	for (i = 0; i < c->nscope; i++) {
		json_t *a = json_object_get(c->scope[i]->dyn_anchors, n->dyn_anchor_name);
		const struct snode *t = a ? schema_lookup(c->s, a) : NULL;

		if (t)
			return t;
	}
	return n->dyn_ref;
}

static int check_unevaluated(struct ctx *c, const struct snode *n, json_t *inst,
			     struct ann *here)
{
	size_t i, old;
	int ok = 1;

	if (n->uneval_props && json_is_object(inst)) {
		const char *key;
		json_t *v;

		json_object_foreach(inst, key, v) {
			if (ann_has_prop(here, key))
				continue;
			old = ipush(c, key, 0, 0);
			if (!apply(c, n->uneval_props, v, NULL))
				ok = 0;
			c->ilen = old;
			ann_add_prop(here, key);
		}
	}
	if (n->uneval_items && json_is_array(inst) && !here->items_all) {
		size_t len = json_array_size(inst);

		for (i = here->items_upto; i < len; i++) {
			if (i < here->ncontains && here->contains[i])
				continue;
			old = ipush(c, NULL, 1, i);
			if (!apply(c, n->uneval_items, json_array_get(inst, i), NULL))
				ok = 0;
			c->ilen = old;
		}
		here->items_all = 1;
	}
	return ok;
}

static int apply(struct ctx *c, const struct snode *n, json_t *inst, struct ann *out)
{
	unsigned t = type_of(inst);
	int ok = 1, pushed = 0, own_ann;
	struct ann here = { 0 };
	struct ann *a;

	if (n->boolean >= 0) {
		if (!n->boolean)
			fail(c, n, "", "the schema is false");
		return n->boolean;
	}
	if (c->fatal)
		return 0;
	if (++c->depth > MAX_EVAL_DEPTH) {
		c->fatal = 1;
		c->depth--;
		return 0;
	}
	if (n->res && (c->nscope == 0 || c->scope[c->nscope - 1] != n->res) &&
	    c->nscope < MAX_SCOPE) {
		c->scope[c->nscope++] = n->res;
		pushed = 1;
	}
	/* Annotations are gathered where someone will read them: a caller
	 * that asked, or this node's own unevaluated* keywords. */
	own_ann = (n->uneval_props || n->uneval_items) && (t & (T_OBJECT | T_ARRAY));
	a = own_ann || out ? &here : NULL;

	if (n->types && !(n->types & t)) {
		fail(c, n, "type", "wrong type");
		ok = 0;
	}
	if (n->const_v && !json_equal_schema(n->const_v, inst)) {
		fail(c, n, "const", "not the constant value");
		ok = 0;
	}
	if (n->enum_v) {
		size_t i;
		json_t *v;
		int found = 0;

		json_array_foreach(n->enum_v, i, v)
			if (json_equal_schema(v, inst)) {
				found = 1;
				break;
			}
		if (!found) {
			fail(c, n, "enum", "not one of the allowed values");
			ok = 0;
		}
	}
	if ((t & T_NUMBER) && !check_number(c, n, inst))
		ok = 0;
	if ((t & T_STRING) && !check_string(c, n, inst))
		ok = 0;
	if (n->ref && !apply(c, n->ref, inst, a))
		ok = 0;
	if (n->dyn_ref && !apply(c, dynamic_target(c, n), inst, a))
		ok = 0;
	if (!check_applicators(c, n, inst, a))
		ok = 0;
	if ((t & T_OBJECT) && !check_object(c, n, inst, a))
		ok = 0;
	if ((t & T_ARRAY) && !check_array(c, n, inst, a))
		ok = 0;
	if (own_ann && !check_unevaluated(c, n, inst, &here))
		ok = 0;
	if (ok && out)
		ann_merge(out, &here);
	ann_free(&here);
	if (pushed)
		c->nscope--;
	c->depth--;
	return ok && !c->fatal;
}

int schema_validate_json(const struct tg_schema *s, json_t *inst,
			 struct tg_schema_errors *errors, struct tg_error *err)
{
	struct ctx c;
	int ok;

	/* no memset: ipath and scope are written before they are read */
	c.s = s;
	c.errors = errors;
	c.quiet = 0;
	c.ilen = 0;
	c.nscope = 0;
	c.fatal = 0;
	c.depth = 0;
	if (errors)
		errors->n = 0;
	ok = apply(&c, s->root, inst, NULL);
	if (c.fatal)
		return tg_error_set(err, TG_ERR_LIMIT,
				    "validation stopped: a pattern's match limit or the "
				    "evaluation depth was reached");
	return ok ? 1 : 0;
}

/* The deepest nesting of [ and { in JSON text, strings skipped: checked
 * before parsing, so a 10,000-deep document costs one pass, not a parse. */
static size_t nesting(const char *t, size_t len)
{
	size_t i, d = 0, max = 0;
	int in_str = 0;

	for (i = 0; i < len; i++) {
		char ch = t[i];

		if (in_str) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in_str = 0;
		} else if (ch == '"') {
			in_str = 1;
		} else if (ch == '[' || ch == '{') {
			if (++d > max)
				max = d;
		} else if ((ch == ']' || ch == '}') && d) {
			d--;
		}
	}
	return max;
}

int tg_schema_validate(const struct tg_schema *s, const char *text, size_t len,
		       struct tg_schema_errors *errors, struct tg_error *err)
{
	size_t max = s->opts.max_bytes ? s->opts.max_bytes : DEFAULT_MAX_BYTES;
	json_error_t jerr;
	json_t *inst;
	int rc;

	tg_error_clear(err);
	if (len > max)
		return tg_error_set(err, TG_ERR_LIMIT, "instance larger than %zu bytes", max);
	if (nesting(text, len) > (s->opts.max_depth ? s->opts.max_depth : DEFAULT_MAX_DEPTH))
		return tg_error_set(err, TG_ERR_LIMIT, "instance nested deeper than %zu",
				    s->opts.max_depth ? s->opts.max_depth : (size_t)DEFAULT_MAX_DEPTH);
	inst = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
	if (!inst)
		return tg_error_set(err, TG_ERR_INVALID, "instance: line %d: %s", jerr.line,
				    jerr.text);
	rc = schema_validate_json(s, inst, errors, err);
	json_decref(inst);
	return rc;
}
