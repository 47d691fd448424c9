/*
 * Schema documents from text. jv.c parses them (strict RFC 8259, the
 * instance parser's rules: duplicate names refused, NUL allowed in a
 * string) and they are handed to the compiler as jansson values, with one
 * difference jansson cannot carry: a number past a double's 17 digits
 * becomes a json_real of its nearest double, and its exact value (a
 * struct jv of kind JV_DEC, num.c) is kept in the schema's arena under
 * that json_t's address, where the compiler looks for it (jv_copy_json
 * with the map: the number keywords, const and enum).
 */
#include <jansson.h>
#include <string.h>

#include "schema/schema_int.h"

/* As deep as jansson's own parser goes (JSON_PARSER_MAX_DEPTH) */
#define MAX_DOC_DEPTH 2048

static json_t *to_json(const struct jv *v, struct jv_doc *arena, struct ptrmap *exact);

static json_t *dec_to_json(const struct jv *v, struct jv_doc *arena, struct ptrmap *exact)
{
	size_t size = sizeof(struct jdec) + v->u.dec->ndig;
	struct jdec *dec = jv_alloc(arena, size);
	struct jv *copy = jv_alloc(arena, sizeof(*copy));
	json_t *j = json_real(v->u.dec->approx);

	if (!dec || !copy || !j || ptrmap_put(exact, j, copy) < 0) {
		json_decref(j);
		return NULL;
	}
	memcpy(dec, v->u.dec, size);
	*copy = *v;
	copy->u.dec = dec;
	return j;
}

static json_t *compound_to_json(const struct jv *v, struct jv_doc *arena, struct ptrmap *exact)
{
	json_t *j = v->kind == JV_ARRAY ? json_array() : json_object(), *c;
	uint32_t i;

	if (!j)
		return NULL;
	for (i = 0; i < v->n; i++) {
		if (v->kind == JV_ARRAY) {
			c = to_json(&v->u.items[i], arena, exact);
			if (!c || json_array_append_new(j, c) < 0)
				goto fail;
		} else {
			const struct jmember *m = &v->u.members[i];

			c = to_json(&m->val, arena, exact);
			if (!c || json_object_setn_new_nocheck(j, m->key, m->klen, c) < 0)
				goto fail;
		}
	}
	return j;
fail:
	json_decref(j);
	return NULL;
}

static json_t *to_json(const struct jv *v, struct jv_doc *arena, struct ptrmap *exact)
{
	switch (v->kind) {
	case JV_NULL:
		return json_null();
	case JV_TRUE:
		return json_true();
	case JV_FALSE:
		return json_false();
	case JV_INT:
		return json_integer(v->u.i);
	case JV_REAL:
		return json_real(v->u.d);
	case JV_DEC:
		return dec_to_json(v, arena, exact);
	case JV_STRING:
		/* checked UTF-8 (jv.c); it may hold NUL, as JSON_ALLOW_NUL lets it */
		return json_stringn_nocheck(v->u.s, v->n);
	default:
		return compound_to_json(v, arena, exact);
	}
}

json_t *schema_load_text(const char *text, size_t len, struct jv_doc *arena,
			 struct ptrmap *exact, struct tg_error *err)
{
	struct jv_doc d;
	json_t *j;

	if (jv_parse(&d, text, len, MAX_DOC_DEPTH, err) < 0)
		return NULL;
	j = to_json(&d.root, arena, exact);
	jv_doc_release(&d);
	if (!j)
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	return j;
}
