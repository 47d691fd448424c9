/*
 * The last step of compiling a schema: each node gets what validation
 * reads on its fast path (validate.c), computed once.
 *
 *   - flags: which groups of checks the node has, so a node pays only for
 *     the keywords it uses;
 *   - "const" and "enum" values as struct jv, compared with jv_equal;
 *   - a key table: every name the node's object keywords mention
 *     ("properties", "required", "dependentRequired", "dependentSchemas"),
 *     hashed like instance keys (jv_key_hash) in an open-addressed table.
 *     One pass over an instance object finds each member's entry; which
 *     entries were seen answers "required" and the dependencies without a
 *     lookup per name.
 *
 * Everything is allocated in the schema's arena (s->arena) and freed with
 * it.
 */
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"

static size_t key_len(const char *jansson_key)
{
	return json_object_iter_key_len(json_object_key_to_iter(jansson_key));
}

/* The entry of name in n's key table, added when absent; -1 out of memory. */
static long key_add(struct jv_doc *arena, struct snode *n, const char *name, size_t len,
		    size_t cap)
{
	uint32_t h = jv_key_hash(name, len), i;
	char *copy;

	for (i = 0; i < n->nkeys; i++)
		if (n->keys[i].hash == h && n->keys[i].len == len &&
		    memcmp(n->keys[i].name, name, len) == 0)
			return i;
	if (n->nkeys >= cap)
		return -1;
	/* a copy in the arena: 16-byte aligned and padded, so key_find can
	 * compare short names with two word loads (validate.c) */
	copy = jv_alloc(arena, len + 1);
	if (!copy)
		return -1;
	memcpy(copy, name, len);
	copy[len] = '\0';
	n->keys[n->nkeys].name = copy;
	n->keys[n->nkeys].len = (uint32_t)len;
	n->keys[n->nkeys].hash = h;
	return n->nkeys++;
}

static int collision_free(const struct snode *n, size_t tab)
{
	uint32_t i, j;

	for (i = 0; i < n->nkeys; i++)
		for (j = i + 1; j < n->nkeys; j++)
			if (((n->keys[i].hash ^ n->keys[j].hash) & (tab - 1)) == 0)
				return 0;
	return 1;
}

static int prepare_keys(struct jv_doc *arena, struct snode *n, struct tg_error *err)
{
	size_t cap = n->nprops + n->ndep_schemas + json_array_size(n->required), i, j, tab;
	json_t *r;

	for (i = 0; i < n->ndep_req; i++)
		cap += 1 + json_array_size(n->dep_req[i].required);
	if (cap == 0)
		return 0;
	if (cap > UINT32_MAX / 4)
		return tg_error_set(err, TG_ERR_LIMIT, "too many property names");
	n->keys = jv_alloc(arena, cap * sizeof(*n->keys));
	n->req = jv_alloc(arena, (json_array_size(n->required) + 1) * sizeof(*n->req));
	if (!n->keys || !n->req)
		goto nomem;
	memset(n->keys, 0, cap * sizeof(*n->keys));
	for (i = 0; i < n->nprops; i++) {
		long k = key_add(arena, n, n->props[i].name, key_len(n->props[i].name), cap);

		if (k < 0)
			goto nomem;
		n->keys[k].prop = n->props[i].node;
	}
	for (i = 0; i < n->ndep_schemas; i++) {
		long k = key_add(arena, n, n->dep_schemas[i].name, key_len(n->dep_schemas[i].name),
				 cap);

		if (k < 0)
			goto nomem;
		n->keys[k].dep_schema = n->dep_schemas[i].node;
	}
	json_array_foreach(n->required, i, r) {
		long k;

		if (!json_is_string(r))
			continue;
		k = key_add(arena, n, json_string_value(r), json_string_length(r), cap);
		if (k < 0)
			goto nomem;
		n->req[n->nreq++] = (uint32_t)k;
	}
	for (i = 0; i < n->ndep_req; i++) {
		json_t *list = n->dep_req[i].required;
		long k = key_add(arena, n, n->dep_req[i].name, key_len(n->dep_req[i].name), cap);
		uint32_t *deps = jv_alloc(arena, (json_array_size(list) + 1) * sizeof(*deps));
		uint32_t nd = 0;

		if (k < 0 || !deps)
			goto nomem;
		json_array_foreach(list, j, r) {
			long d;

			if (!json_is_string(r))
				continue;
			d = key_add(arena, n, json_string_value(r), json_string_length(r), cap);
			if (d < 0)
				goto nomem;
			deps[nd++] = (uint32_t)d;
		}
		n->keys[k].dep_req = deps;
		n->keys[k].ndep_req = nd;
	}
	for (i = 0; i < n->nkeys; i++)
		if (n->keys[i].dep_req || n->keys[i].dep_schema)
			n->ndeps++;
	for (tab = 8; tab < (size_t)n->nkeys * 2; tab *= 2)
		;
	/* a table up to four times larger when that puts every key in a
	 * slot of its own: then a lookup is one probe, hit or miss */
	for (j = 0; j < 3 && !collision_free(n, tab); j++)
		tab *= 2;
	if (j == 3)
		tab /= 8;
	else
		n->kperfect = 1;
	n->ktab = jv_alloc(arena, tab * sizeof(*n->ktab));
	if (!n->ktab)
		goto nomem;
	memset(n->ktab, 0, tab * sizeof(*n->ktab));
	n->kmask = (uint32_t)tab - 1;
	for (i = 0; i < n->nkeys; i++) {
		for (j = n->keys[i].hash & n->kmask; n->ktab[j].idx; j = (j + 1) & n->kmask)
			;
		n->ktab[j].hash = n->keys[i].hash;
		n->ktab[j].idx = (uint32_t)i + 1;
		n->ktab[j].len = n->keys[i].len;
		n->ktab[j].name = n->keys[i].name;
		n->ktab[j].prop = n->keys[i].prop;
	}
	/* names, required names and additionalProperties only, few enough
	 * for one word of "seen" bits: validate.c's object_fast */
	if (n->kperfect && n->nkeys <= 64 && !n->ndeps && !n->npatprops && !n->prop_names) {
		n->obj_fast = 1;
		for (i = 0; i < n->nreq; i++)
			n->reqmask |= (uint64_t)1 << n->req[i];
	}
	return 0;
nomem:
	return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
}

static int prepare_values(struct jv_doc *arena, const struct ptrmap *exact, struct snode *n,
			  struct tg_error *err)
{
	size_t i;

	if (n->const_v) {
		n->const_jv = jv_alloc(arena, sizeof(struct jv));
		if (!n->const_jv)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		if (jv_copy_json(arena, n->const_v, exact, n->const_jv, err) < 0)
			return -1;
	}
	if (n->enum_v) {
		n->nenum = (uint32_t)json_array_size(n->enum_v);
		n->enum_jv = jv_alloc(arena, (n->nenum + 1) * sizeof(struct jv));
		if (!n->enum_jv)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		for (i = 0; i < n->nenum; i++)
			if (jv_copy_json(arena, json_array_get(n->enum_v, i), exact, &n->enum_jv[i],
					 err) < 0)
				return -1;
	}
	return 0;
}

static unsigned node_flags(const struct snode *n, const struct tg_schema *s)
{
	unsigned f = 0;

	if (n->types)
		f |= F_TYPE;
	if (n->const_v)
		f |= F_CONST;
	if (n->enum_v)
		f |= F_ENUM;
	if (n->has_min || n->has_max || n->has_xmin || n->has_xmax || n->has_mult)
		f |= F_NUM;
	if (n->min_len >= 0 || n->max_len >= 0 || n->pattern ||
	    ((n->format || n->content_b64 || n->content_json) && s->opts.format_assert))
		f |= F_STR;
	if (n->ref)
		f |= F_REF;
	if (n->dyn_ref)
		f |= F_DYNREF;
	if (n->nall || n->nany || n->none || n->not_ || n->if_)
		f |= F_APPL;
	if (n->nkeys || n->npatprops || n->addl_props || n->prop_names || n->min_props >= 0 ||
	    n->max_props >= 0)
		f |= F_OBJ;
	if (n->nprefix || n->items || n->contains || n->min_items >= 0 || n->max_items >= 0 ||
	    n->unique)
		f |= F_ARR;
	if (n->uneval_props)
		f |= F_UNEVAL_P;
	if (n->uneval_items)
		f |= F_UNEVAL_I;
	return f;
}

/* A node that is only a "$ref" evaluates as its target (for a valid or
 * invalid answer; error lists and the dynamic scope still walk the
 * chain). Chains are followed a few steps; a cycle keeps the node. */
static void prepare_direct(struct snode *n)
{
	struct snode *t = n;
	int steps;

	for (steps = 0; steps < 8 && t->boolean < 0 && t->flags == F_REF; steps++)
		t = t->ref;
	n->direct = t->boolean >= 0 || t->flags != F_REF ? t : n;
}

static int fast_kind(const struct snode *n)
{
	unsigned f = n->flags;

	if (n->boolean >= 0)
		return n->boolean ? FAST_TRUE : FAST_FALSE;
	if (!f)
		return FAST_TRUE;
	if (f == F_TYPE)
		return FAST_TYPE;
	if (!(f & ~(unsigned)F_VALUE))
		return FAST_VALUE;
	if (!(f & ~(unsigned)(F_VALUE | F_OBJ)) && n->obj_fast && n->min_props < 0 &&
	    n->max_props < 0)
		return FAST_OBJECT;
	if (!(f & ~(unsigned)(F_VALUE | F_ARR)) && !n->contains)
		return FAST_ARRAY;
	return FAST_NONE;
}

int schema_prepare(struct tg_schema *s, struct tg_error *err)
{
	size_t i;

	for (i = 0; i < s->nodes.cap; i++) {
		struct snode *n = s->nodes.vals[i];

		if (!s->nodes.keys[i] || n->boolean >= 0)
			continue;
		if (prepare_keys(&s->arena, n, err) < 0 || prepare_values(&s->arena, &s->exact, n, err) < 0)
			return -1;
		n->flags = node_flags(n, s);
		if (n->dyn_anchor_name)
			s->dynamic = 1;
	}
	for (i = 0; i < s->nodes.cap; i++)
		if (s->nodes.keys[i]) {
			struct snode *n = s->nodes.vals[i];

			n->fast = fast_kind(n);
			prepare_direct(n);
		}
	return 0;
}
