/*
 * Contract diffs: is a new version of a tool compatible with its callers?
 *
 * Inputs (what agents send) break when the new schema accepts less: a new
 * required property, a property removed, a type or an enum narrowed, a
 * bound tightened, a pattern added or changed, additional properties
 * closed. Outputs (what agents receive) break when the new schema promises
 * less or may return what callers never saw: an output field removed or no
 * longer required, a type or an enum widened. A read tool becoming a write
 * tool breaks too. Schemas are compared structurally, keyword by keyword,
 * through properties and items; what cannot be compared that way ($ref
 * changes, combinators) is reported as a change to review.
 */
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/catalog.h"

static void note(struct tg_diff *d, int breaking, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void note(struct tg_diff *d, int breaking, const char *fmt, ...)
{
	va_list ap;

	if (d->n == sizeof(d->findings) / sizeof(d->findings[0]))
		return;
	va_start(ap, fmt);
	vsnprintf(d->findings[d->n].text, sizeof(d->findings[d->n].text), fmt, ap);
	va_end(ap);
	d->findings[d->n++].breaking = breaking;
	if (breaking)
		d->breaking = 1;
}

/* Type names a schema allows; "number" includes "integer". 0x7f: any. */
static unsigned types_of(json_t *s)
{
	static const char *const names[] = { "null", "boolean", "object", "array",
					     "number", "string", "integer" };
	json_t *t = json_object_get(s, "type"), *v;
	unsigned bits = 0, i;
	size_t k;

	if (!t)
		return 0x7f;
	for (i = 0; i < 7; i++) {
		if (json_is_string(t) && strcmp(json_string_value(t), names[i]) == 0)
			bits |= 1u << i;
		if (json_is_array(t))
			json_array_foreach(t, k, v)
				if (json_is_string(v) && strcmp(json_string_value(v), names[i]) == 0)
					bits |= 1u << i;
	}
	if (bits & (1u << 4))
		bits |= 1u << 6; /* number admits integers */
	return bits;
}

static int in_enum(json_t *e, json_t *v)
{
	size_t i;
	json_t *x;

	json_array_foreach(e, i, x)
		if (json_equal(x, v))
			return 1;
	return 0;
}

static int is_required(json_t *s, const char *name)
{
	json_t *r = json_object_get(s, "required"), *v;
	size_t i;

	json_array_foreach(r, i, v)
		if (json_is_string(v) && strcmp(json_string_value(v), name) == 0)
			return 1;
	return 0;
}

static double num(json_t *s, const char *kw, double dflt)
{
	json_t *v = json_object_get(s, kw);

	return json_is_number(v) ? json_number_value(v) : dflt;
}

static void diff_schema(struct tg_diff *d, json_t *o, json_t *n, const char *where, int input);

static void diff_bounds(struct tg_diff *d, json_t *o, json_t *n, const char *where, int input)
{
	static const struct {
		const char *kw;
		int lower; /* a lower bound: raising it narrows */
	} bounds[] = {
		{ "minimum", 1 }, { "exclusiveMinimum", 1 }, { "minLength", 1 }, { "minItems", 1 },
		{ "minProperties", 1 }, { "maximum", 0 }, { "exclusiveMaximum", 0 },
		{ "maxLength", 0 }, { "maxItems", 0 }, { "maxProperties", 0 },
	};
	unsigned i;

	for (i = 0; i < sizeof(bounds) / sizeof(bounds[0]); i++) {
		double ov = num(o, bounds[i].kw, bounds[i].lower ? -INFINITY : INFINITY);
		double nv = num(n, bounds[i].kw, bounds[i].lower ? -INFINITY : INFINITY);
		int narrower = bounds[i].lower ? nv > ov : nv < ov;

		if (ov == nv)
			continue;
		/* inputs break when narrowed, outputs when widened */
		note(d, input ? narrower : !narrower, "%s %s: %s %s (%g -> %g)",
		     input ? "input" : "output", where, bounds[i].kw,
		     narrower ? "tightened" : "loosened", ov, nv);
	}
}

static void diff_properties(struct tg_diff *d, json_t *o, json_t *n, const char *where, int input)
{
	json_t *op = json_object_get(o, "properties"), *np = json_object_get(n, "properties"), *v;
	const char *key;
	char sub[512];

	json_object_foreach(op, key, v) {
		json_t *w = json_object_get(np, key);

		snprintf(sub, sizeof(sub), "%s/%s", where, key);
		if (!w) {
			note(d, 1, "%s %s: %s removed", input ? "input" : "output", sub,
			     input ? "property" : "field");
			continue;
		}
		if (input && !is_required(o, key) && is_required(n, key))
			note(d, 1, "input %s: now required", sub);
		if (!input && is_required(o, key) && !is_required(n, key))
			note(d, 1, "output %s: no longer always present", sub);
		diff_schema(d, v, w, sub, input);
	}
	json_object_foreach(np, key, v) {
		snprintf(sub, sizeof(sub), "%s/%s", where, key);
		if (json_object_get(op, key))
			continue;
		if (input && is_required(n, key))
			note(d, 1, "input %s: new required property", sub);
		else
			note(d, 0, "%s %s: new %s", input ? "input" : "output", sub,
			     input ? "optional property" : "field");
	}
	if (input && !json_is_false(json_object_get(o, "additionalProperties")) &&
	    json_is_false(json_object_get(n, "additionalProperties")))
		note(d, 1, "input %s: additional properties no longer accepted", where);
}

static void diff_schema(struct tg_diff *d, json_t *o, json_t *n, const char *where, int input)
{
	unsigned ot, nt;
	json_t *oe, *ne, *v;
	size_t i;

	if (!json_is_object(o) || !json_is_object(n)) {
		if (!json_equal(o, n))
			note(d, 1, "%s %s: schema changed from or to a boolean schema",
			     input ? "input" : "output", where[0] ? where : "/");
		return;
	}
	ot = types_of(o);
	nt = types_of(n);
	if (ot != nt) {
		int narrowed = (ot & ~nt) != 0, widened = (nt & ~ot) != 0;

		if (input ? narrowed : widened)
			note(d, 1, "%s %s: type %s", input ? "input" : "output", where[0] ? where : "/",
			     input ? "narrowed" : "widened");
		else
			note(d, 0, "%s %s: type %s", input ? "input" : "output", where[0] ? where : "/",
			     input ? "widened" : "narrowed");
	}
	oe = json_object_get(o, "enum");
	ne = json_object_get(n, "enum");
	if (oe || ne) {
		int lost = 0, gained = 0;

		if (oe && ne) {
			json_array_foreach(oe, i, v)
				lost |= !in_enum(ne, v);
			json_array_foreach(ne, i, v)
				gained |= !in_enum(oe, v);
		} else {
			lost = ne != NULL;   /* an enum appeared: fewer values accepted */
			gained = oe != NULL; /* an enum went away: more values possible */
		}
		if (input ? lost : gained)
			note(d, 1, "%s %s: enum %s", input ? "input" : "output", where[0] ? where : "/",
			     input ? "narrowed" : "widened");
		else if (lost || gained)
			note(d, 0, "%s %s: enum %s", input ? "input" : "output", where[0] ? where : "/",
			     input ? "widened" : "narrowed");
	}
	if (!json_equal(json_object_get(o, "const") ? json_object_get(o, "const") : json_null(),
			json_object_get(n, "const") ? json_object_get(n, "const") : json_null()))
		note(d, 1, "%s %s: const changed", input ? "input" : "output", where[0] ? where : "/");
	if (input && json_object_get(n, "pattern") &&
	    !json_equal(json_object_get(o, "pattern") ? json_object_get(o, "pattern") : json_null(),
			json_object_get(n, "pattern")))
		note(d, 1, "input %s: pattern added or changed", where[0] ? where : "/");
	diff_bounds(d, o, n, where[0] ? where : "/", input);
	diff_properties(d, o, n, where, input);
	if (json_object_get(o, "items") && json_object_get(n, "items")) {
		char sub[512];

		snprintf(sub, sizeof(sub), "%s/items", where);
		diff_schema(d, json_object_get(o, "items"), json_object_get(n, "items"), sub, input);
	}
	{
		static const char *const opaque[] = { "$ref", "allOf", "anyOf", "oneOf", "not",
						      "if", "then", "else", "$defs" };
		unsigned k;

		for (k = 0; k < sizeof(opaque) / sizeof(opaque[0]); k++)
			if (!json_equal(json_object_get(o, opaque[k]) ? json_object_get(o, opaque[k])
								      : json_null(),
					json_object_get(n, opaque[k]) ? json_object_get(n, opaque[k])
								      : json_null()))
				note(d, 0, "%s %s: %s changed: review it", input ? "input" : "output",
				     where[0] ? where : "/", opaque[k]);
	}
}

int tg_catalog_diff(const struct tg_contract *old, const struct tg_contract *new_,
		    struct tg_diff *d, struct tg_error *err)
{
	json_t *oi, *ni, *oo = NULL, *no = NULL;

	memset(d, 0, sizeof(*d));
	tg_error_clear(err);
	oi = json_loads(old->input_schema_text, JSON_DECODE_ANY, NULL);
	ni = json_loads(new_->input_schema_text, JSON_DECODE_ANY, NULL);
	if (old->output_schema_text)
		oo = json_loads(old->output_schema_text, JSON_DECODE_ANY, NULL);
	if (new_->output_schema_text)
		no = json_loads(new_->output_schema_text, JSON_DECODE_ANY, NULL);
	if (!oi || !ni) {
		json_decref(oi);
		json_decref(ni);
		json_decref(oo);
		json_decref(no);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	if (old->authority == TG_AUTHORITY_READ && new_->authority == TG_AUTHORITY_WRITE)
		note(d, 1, "authority: read became write");
	diff_schema(d, oi, ni, "", 1);
	if (oo && no)
		diff_schema(d, oo, no, "", 0);
	else if (oo && !no)
		note(d, 1, "output: the output schema was removed");
	json_decref(oi);
	json_decref(ni);
	json_decref(oo);
	json_decref(no);
	return 0;
}
