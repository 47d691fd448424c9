/*
 * Validation: a compiled schema (compile.c, prepare.c) applied to an
 * instance (struct jv, jv.c).
 *
 * apply() evaluates one node against one instance value, entering only
 * the groups of checks the node has (its flags). When no error list is
 * wanted, or inside a branch whose failure is not an error by itself
 * (anyOf, oneOf, not, if, contains), the first failed assertion ends the
 * node: the answer is known.
 *
 * Annotations: when an "unevaluatedProperties" or "unevaluatedItems" needs
 * them, a node reports which members (a bit per member index of the
 * instance object) and which items it evaluated successfully; they flow
 * up through $ref, allOf, anyOf, oneOf, if/then/else and dependentSchemas
 * as 2020-12 says. A node passes its caller's annotation set down to its
 * subschemas directly: if the node fails, every node up to the nearest
 * branch fails too, and a branch starts a fresh set, so nothing a failed
 * node evaluated survives. The dynamic scope (the resources entered on
 * the way down) resolves "$dynamicRef". Failed assertions are recorded in
 * the "basic" output shape.
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

/* What a node evaluated of its instance. Bit sets over member or item
 * indices: inline up to 64, on the heap beyond. */
struct ann {
	uint64_t p_inl, *p_heap;   /* evaluated properties */
	uint64_t c_inl, *c_heap;   /* items "contains" matched */
	uint32_t items_upto;       /* items [0, items_upto) evaluated */
	int items_all;
	int nomem;
};

struct ctx {
	const struct tg_schema *s;
	struct tg_schema_errors *errors;
	int quiet;                            /* >0: inside a branch */
	char ipath[1024];                     /* instance location */
	size_t ilen;
	const struct resource *scope[MAX_SCOPE];
	size_t nscope;
	int fatal;                            /* regex limit, too deep, no memory */
	size_t depth;
	/* the fast paths are off: errors are collected here, or the schema
	 * has a dynamic scope to keep (COLLECT(c) || s->dynamic) */
	int slow;
};

/* Every failed assertion is wanted: an error list, outside a branch. */
#define COLLECT(c) ((c)->errors && !(c)->quiet)

static uint64_t *bits(uint64_t *inl, uint64_t **heap, size_t n, int create, int *nomem)
{
	if (n <= 64)
		return inl;
	if (!*heap && create) {
		*heap = calloc((n + 63) / 64, sizeof(uint64_t));
		if (!*heap)
			*nomem = 1;
	}
	return *heap;
}

static int bit_get(const uint64_t *b, size_t i)
{
	return b && (b[i / 64] >> (i % 64)) & 1;
}

static void bit_set(uint64_t *b, size_t i)
{
	if (b)
		b[i / 64] |= (uint64_t)1 << (i % 64);
}

static void ann_free(struct ann *a)
{
	free(a->p_heap);
	free(a->c_heap);
}

/* Annotations of inst's node merged into its caller's (same instance). */
static void ann_merge(struct ann *into, const struct ann *from, const struct jv *inst)
{
	size_t i, w = (inst->n + 63) / 64;

	if (inst->kind == JV_OBJECT) {
		uint64_t *d = bits(&into->p_inl, &into->p_heap, inst->n, 1, &into->nomem);
		const uint64_t *s = inst->n <= 64 ? &from->p_inl : from->p_heap;

		for (i = 0; d && s && i < w; i++)
			d[i] |= s[i];
	}
	if (inst->kind == JV_ARRAY) {
		uint64_t *d;
		const uint64_t *s = inst->n <= 64 ? &from->c_inl : from->c_heap;

		if (from->items_upto > into->items_upto)
			into->items_upto = from->items_upto;
		into->items_all |= from->items_all;
		d = s ? bits(&into->c_inl, &into->c_heap, inst->n, 1, &into->nomem) : NULL;
		for (i = 0; d && s && i < w; i++)
			d[i] |= s[i];
	}
	into->nomem |= from->nomem;
}

/* ---- errors and locations ------------------------------------------ */

static void fail(struct ctx *c, const struct snode *n, const char *kw, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void fail(struct ctx *c, const struct snode *n, const char *kw, const char *fmt, ...)
{
	struct tg_schema_error *e;
	va_list ap;

	if (!COLLECT(c) || c->errors->n >= c->errors->cap)
		return;
	e = &c->errors->v[c->errors->n++];
	snprintf(e->instance_location, sizeof(e->instance_location), "%.*s", (int)c->ilen,
		 c->ipath);
	snprintf(e->keyword_location, sizeof(e->keyword_location), "%s/%s", n->path, kw);
	va_start(ap, fmt);
	vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
}

/* Append a member name (seg, len bytes) or an index to the instance
 * location; returns the length to restore. Built only for error lists. */
static size_t ipush_slow(struct ctx *c, const char *seg, size_t len, size_t index)
{
	size_t old = c->ilen, i;
	char buf[32];

	if (c->ilen + 2 >= sizeof(c->ipath))
		return old;
	c->ipath[c->ilen++] = '/';
	if (!seg) {
		len = (size_t)snprintf(buf, sizeof(buf), "%zu", index);
		seg = buf;
	}
	for (i = 0; i < len && c->ilen + 3 < sizeof(c->ipath); i++) {
		if (seg[i] == '~' || seg[i] == '/') {
			c->ipath[c->ilen++] = '~';
			c->ipath[c->ilen++] = seg[i] == '~' ? '0' : '1';
		} else {
			c->ipath[c->ilen++] = seg[i];
		}
	}
	return old;
}

static inline size_t ipush(struct ctx *c, const char *seg, size_t len, size_t index)
{
	return COLLECT(c) ? ipush_slow(c, seg, len, index) : c->ilen;
}

/* ---- value keywords ------------------------------------------------------ */

/* Code points in a UTF-8 string (the parser has checked it is valid). */
static size_t utf8_len(const char *s, size_t n)
{
	size_t i, cps = 0;

	for (i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			cps++;
	return cps;
}

/* noinline, as check_string: value_checks stays small for the leaves
 * that need neither. Numbers compare exactly (num.c). */
static __attribute__((noinline)) int check_number(struct ctx *c, const struct snode *n,
						  const struct jv *inst)
{
	char bx[80], bb[80];
	int ok = 1;

	/* the texts only for an error that is kept: num_text may print a
	 * double digit by digit */
#define NUM_FAIL(kw, what, bound)                                                          \
	do {                                                                               \
		if (COLLECT(c) && c->errors->n < c->errors->cap)                           \
			fail(c, n, kw, "%s " what " %s", num_text(inst, bx, sizeof(bx)),  \
			     num_text(bound, bb, sizeof(bb)));                             \
		ok = 0;                                                                    \
	} while (0)
	if (n->has_min && num_cmp(inst, &n->min) < 0)
		NUM_FAIL("minimum", "is less than", &n->min);
	if (n->has_max && num_cmp(inst, &n->max) > 0)
		NUM_FAIL("maximum", "is greater than", &n->max);
	if (n->has_xmin && num_cmp(inst, &n->xmin) <= 0)
		NUM_FAIL("exclusiveMinimum", "is not greater than", &n->xmin);
	if (n->has_xmax && num_cmp(inst, &n->xmax) >= 0)
		NUM_FAIL("exclusiveMaximum", "is not less than", &n->xmax);
	if (n->has_mult && !num_multiple(inst, n->mult))
		NUM_FAIL("multipleOf", "is not a multiple of", &n->mult->v);
#undef NUM_FAIL
	return ok;
}

static __attribute__((noinline)) int check_string(struct ctx *c, const struct snode *n,
						  const struct jv *inst)
{
	const char *s = inst->u.s;
	size_t len = inst->n;
	int ok = 1, m;

	/* a code point is 1 to 4 bytes: count them only when the byte
	 * length does not settle it */
	if (n->min_len >= 0 && (size_t)n->min_len > (len + 3) / 4 &&
	    (len < (size_t)n->min_len || utf8_len(s, len) < (size_t)n->min_len)) {
		fail(c, n, "minLength", "shorter than %lld characters", n->min_len);
		ok = 0;
	}
	if (n->max_len >= 0 && len > (size_t)n->max_len && utf8_len(s, len) > (size_t)n->max_len) {
		fail(c, n, "maxLength", "longer than %lld characters", n->max_len);
		ok = 0;
	}
	if (n->format && c->s->opts.format_assert && !format_check(n->format, s, len)) {
		fail(c, n, "format", "not a valid %s", n->format);
		ok = 0;
	}
	if ((n->content_b64 || n->content_json) && c->s->opts.format_assert) {
		int r = content_check(s, len, n->content_b64, n->content_json);

		if (r <= 0) {
			fail(c, n, r == 0 ? "contentEncoding" : "contentMediaType",
			     r == 0 ? "not base64" : n->content_b64 ? "not a JSON document once decoded" :
			     "not a JSON document");
			ok = 0;
		}
	}
	if (n->pattern && (ok || COLLECT(c))) {
		const struct regex_hint *h = &n->pattern_hint;

		/* what cannot match is known without running the pattern */
		if (len < h->minlen || (h->first >= 0 && (!len || (unsigned char)s[0] != h->first)))
			m = 0;
		else
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

/* ---- applicators ------------------------------------------------------ */

static int apply(struct ctx *c, const struct snode *n, const struct jv *inst, struct ann *out);

static int value_checks(struct ctx *c, const struct snode *n, const struct jv *inst);
static int object_fast(struct ctx *c, const struct snode *n, const struct jv *inst);
static int array_fast(struct ctx *c, const struct snode *n, const struct jv *inst);

/* apply(), or its fast paths where nothing of its bookkeeping is needed:
 * no error list, no annotations, no dynamic scope. A node with value
 * checks only (the leaves of most tool schemas), or an object schema of
 * the usual shape (object_fast), is checked here directly. */
static inline int eval(struct ctx *c, const struct snode *n, const struct jv *inst,
		       struct ann *out)
{
	if (out || c->slow)
		return apply(c, n, inst, out);
	n = n->direct;
	switch (n->fast) {
	case FAST_TRUE:
		return 1;
	case FAST_FALSE:
		return 0;
	case FAST_TYPE:
		return (n->types & inst->tmask) != 0;
	case FAST_VALUE:
		return value_checks(c, n, inst) && !c->fatal;
	/* no reference or applicator, so no cycle: each level descends into
	 * the instance, whose depth the parser bounded */
	case FAST_OBJECT:
		return (!(n->flags & F_VALUE) || value_checks(c, n, inst)) &&
		       (inst->kind != JV_OBJECT || object_fast(c, n, inst)) && !c->fatal;
	case FAST_ARRAY:
		return (!(n->flags & F_VALUE) || value_checks(c, n, inst)) &&
		       (inst->kind != JV_ARRAY || array_fast(c, n, inst)) && !c->fatal;
	default:
		return apply(c, n, inst, NULL);
	}
}

/* Evaluate in a branch whose failure is not an error by itself. */
static int quietly(struct ctx *c, const struct snode *n, const struct jv *inst, struct ann *out)
{
	int ok;

	int slow = c->slow;

	c->quiet++;
	c->slow = c->s->dynamic;
	ok = eval(c, n, inst, out);
	c->quiet--;
	c->slow = slow;
	return ok;
}

/* memcmp(a, b, n) == 0 for the short names and enum strings of schemas,
 * without a call. */
static inline uint64_t load64(const char *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t load32(const char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline int same_bytes(const char *a, const char *b, size_t n)
{
	size_t i;

	/* word loads, the last one overlapping: no byte loop, no reads
	 * past n */
	if (n >= 8) {
		if (n > 64)
			return memcmp(a, b, n) == 0;
		for (i = 0; i + 8 < n; i += 8)
			if (load64(a + i) != load64(b + i))
				return 0;
		return load64(a + n - 8) == load64(b + n - 8);
	}
	if (n >= 4)
		return load32(a) == load32(b) && load32(a + n - 4) == load32(b + n - 4);
	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

/* Two member names of n < 16 bytes, both in an arena (jv.c: 16-byte
 * aligned, sizes rounded up to 16, so 16 bytes are readable): two word
 * loads each, the bytes past n masked off. */
static inline int same_short_key(const char *a, const char *b, uint32_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t m0 = n >= 8 ? ~0ull : n ? ~0ull >> (64 - 8 * n) : 0;
	uint64_t m1 = n <= 8 ? 0 : ~0ull >> (64 - 8 * (n - 8));

	return (((load64(a) ^ load64(b)) & m0) | ((load64(a + 8) ^ load64(b + 8)) & m1)) == 0;
#else
	return same_bytes(a, b, n);
#endif
}

static inline int slot_is(const struct kslot *sl, const struct jmember *m)
{
	return sl->hash == m->hash && sl->len == m->klen &&
	       (m->klen < 16 ? same_short_key(sl->name, m->key, m->klen)
			     : same_bytes(sl->name, m->key, m->klen));
}

/* The key table entry of member m, or -1. */
static long key_find(const struct snode *n, const struct jmember *m)
{
	uint32_t j = m->hash & n->kmask, k;

	while ((k = n->ktab[j].idx) != 0) {
		if (slot_is(&n->ktab[j], m))
			return (long)k - 1;
		if (n->kperfect)
			break;
		j = (j + 1) & n->kmask;
	}
	return -1;
}

static int check_dependencies(struct ctx *c, const struct snode *n, const struct jv *inst,
			      const uint64_t *seen, struct ann *out)
{
	uint32_t k, j;
	int ok = 1;

	for (k = 0; k < n->nkeys; k++) {
		const struct keyent *e = &n->keys[k];

		if (!bit_get(seen, k) || (!e->dep_req && !e->dep_schema))
			continue;
		for (j = 0; j < e->ndep_req; j++)
			if (!bit_get(seen, e->dep_req[j])) {
				fail(c, n, "dependentRequired", "'%s' requires '%s'", e->name,
				     n->keys[e->dep_req[j]].name);
				ok = 0;
			}
		if (!ok && !COLLECT(c))
			return 0;
		if (e->dep_schema && !eval(c, e->dep_schema, inst, out)) {
			ok = 0;
			if (!COLLECT(c))
				return 0;
		}
	}
	return ok;
}

static int check_member(struct ctx *c, const struct snode *n, const struct jmember *m,
			long k, int *matched)
{
	size_t i;
	int ok = 1;

	if (k >= 0 && n->keys[k].prop) {
		*matched = 1;
		if (!eval(c, n->keys[k].prop, &m->val, NULL)) {
			ok = 0;
			if (!COLLECT(c))
				return 0;
		}
	}
	for (i = 0; i < n->npatprops; i++) {
		int r = regex_search(n->patprops[i].re, m->key, m->klen);

		if (r < 0) {
			c->fatal = 1;
			return 0;
		}
		if (r > 0) {
			*matched = 1;
			if (!eval(c, n->patprops[i].node, &m->val, NULL)) {
				ok = 0;
				if (!COLLECT(c))
					return 0;
			}
		}
	}
	if (!*matched && n->addl_props) {
		*matched = 1;
		if (!eval(c, n->addl_props, &m->val, NULL))
			ok = 0;
	}
	if (n->prop_names && (ok || COLLECT(c))) {
		struct jv name = { .kind = JV_STRING, .tmask = T_STRING, .n = m->klen };

		name.u.s = m->key;
		if (!eval(c, n->prop_names, &name, NULL))
			ok = 0;
	}
	return ok;
}

/* The usual tool-argument object (named properties, required names,
 * additionalProperties) when neither errors nor annotations are wanted:
 * one probe per member, one word of "seen" bits. */
static int object_fast(struct ctx *c, const struct snode *n, const struct jv *inst)
{
	uint64_t seen = 0;
	uint32_t i;

	for (i = 0; i < inst->n; i++) {
		const struct jmember *m = &inst->u.members[i];
		const struct kslot *sl = &n->ktab[m->hash & n->kmask];
		const struct snode *sub = n->addl_props;

		if (sl->idx && slot_is(sl, m)) {
			seen |= (uint64_t)1 << (sl->idx - 1);
			if (sl->prop)
				sub = sl->prop;
		}
		if (sub && !eval(c, sub, &m->val, NULL))
			return 0;
	}
	return (seen & n->reqmask) == n->reqmask;
}

static int check_object(struct ctx *c, const struct snode *n, const struct jv *inst,
			struct ann *out)
{
	uint64_t seen_inl[4] = { 0 }, *seen = NULL, *evaluated = NULL;
	int ok = 1, track = n->nreq || n->ndeps;
	uint32_t i;

	if (n->min_props >= 0 && inst->n < (unsigned long long)n->min_props) {
		fail(c, n, "minProperties", "fewer than %lld properties", n->min_props);
		if (!COLLECT(c))
			return 0;
		ok = 0;
	}
	if (n->max_props >= 0 && inst->n > (unsigned long long)n->max_props) {
		fail(c, n, "maxProperties", "more than %lld properties", n->max_props);
		if (!COLLECT(c))
			return 0;
		ok = 0;
	}
	if (n->obj_fast && !out && !COLLECT(c))
		return object_fast(c, n, inst);
	if (track) {
		seen = n->nkeys <= 256 ? seen_inl : calloc((n->nkeys + 63) / 64, sizeof(uint64_t));
		if (!seen) {
			c->fatal = 1;
			return 0;
		}
	}
	if (out)
		evaluated = bits(&out->p_inl, &out->p_heap, inst->n, 1, &out->nomem);
	for (i = 0; i < inst->n; i++) {
		const struct jmember *m = &inst->u.members[i];
		long k = n->nkeys ? key_find(n, m) : -1;
		int matched = 0;
		size_t old;

		if (k >= 0 && track)
			bit_set(seen, (size_t)k);
		if ((k < 0 || !n->keys[k].prop) && !n->npatprops && !n->addl_props && !n->prop_names)
			continue;
		old = ipush(c, m->key, m->klen, 0);
		if (!check_member(c, n, m, k, &matched)) {
			ok = 0;
			if (!COLLECT(c))
				goto done;
		}
		c->ilen = old;
		if (matched && evaluated)
			bit_set(evaluated, i);
	}
	for (i = 0; i < n->nreq; i++)
		if (!bit_get(seen, n->req[i])) {
			fail(c, n, "required", "'%s' is required", n->keys[n->req[i]].name);
			ok = 0;
			if (!COLLECT(c))
				goto done;
		}
	if (n->ndeps && !check_dependencies(c, n, inst, seen, out))
		ok = 0;
done:
	if (seen != seen_inl)
		free(seen);
	return ok;
}

struct hashed {
	uint64_t h;
	uint32_t i;
};

static int by_hash(const void *a, const void *b)
{
	uint64_t x = ((const struct hashed *)a)->h, y = ((const struct hashed *)b)->h;

	return x < y ? -1 : x > y;
}

/* Two equal items: OUT *i < *j and 1; 0 none; -1 out of memory. Pairs
 * for short arrays, equal hashes among sorted hashes for long ones. */
static int find_duplicate(const struct jv *a, size_t *i, size_t *j)
{
	struct hashed *h;
	size_t x, y;

	if (a->n <= 16) {
		for (x = 0; x < a->n; x++)
			for (y = x + 1; y < a->n; y++)
				if (jv_equal(&a->u.items[x], &a->u.items[y])) {
					*i = x;
					*j = y;
					return 1;
				}
		return 0;
	}
	h = malloc(a->n * sizeof(*h));
	if (!h)
		return -1;
	for (x = 0; x < a->n; x++) {
		h[x].h = jv_hash(&a->u.items[x]);
		h[x].i = (uint32_t)x;
	}
	qsort(h, a->n, sizeof(*h), by_hash);
	for (x = 0; x < a->n; x++)
		for (y = x + 1; y < a->n && h[y].h == h[x].h; y++)
			if (jv_equal(&a->u.items[h[x].i], &a->u.items[h[y].i])) {
				*i = h[x].i < h[y].i ? h[x].i : h[y].i;
				*j = h[x].i < h[y].i ? h[y].i : h[x].i;
				free(h);
				return 1;
			}
	free(h);
	return 0;
}

static int check_items(struct ctx *c, const struct snode *n, const struct jv *inst,
		       struct ann *out)
{
	uint32_t len = inst->n, i;
	size_t old;
	int ok = 1;

	for (i = 0; i < len && i < n->nprefix; i++) {
		old = ipush(c, NULL, 0, i);
		if (!eval(c, n->prefix[i], &inst->u.items[i], NULL)) {
			ok = 0;
			if (!COLLECT(c))
				return 0;
		}
		c->ilen = old;
	}
	if (out && n->nprefix) {
		uint32_t upto = n->nprefix < len ? (uint32_t)n->nprefix : len;

		if (upto > out->items_upto)
			out->items_upto = upto;
	}
	if (n->items) {
		for (i = (uint32_t)n->nprefix; i < len; i++) {
			old = ipush(c, NULL, 0, i);
			if (!eval(c, n->items, &inst->u.items[i], NULL)) {
				ok = 0;
				if (!COLLECT(c))
					return 0;
			}
			c->ilen = old;
		}
		if (out)
			out->items_all = 1;
	}
	return ok;
}

static int check_contains(struct ctx *c, const struct snode *n, const struct jv *inst,
			  struct ann *out)
{
	size_t found = 0, need = n->min_contains >= 0 ? (size_t)n->min_contains : 1;
	uint64_t *marks = out ? bits(&out->c_inl, &out->c_heap, inst->n, 1, &out->nomem) : NULL;
	uint32_t i;
	int ok = 1;

	for (i = 0; i < inst->n; i++) {
		if (quietly(c, n->contains, &inst->u.items[i], NULL)) {
			found++;
			bit_set(marks, i);
		}
		/* the answer is known: enough, and no upper bound or marks */
		if (found >= need && n->max_contains < 0 && !out && !COLLECT(c))
			break;
	}
	if (found < need) {
		fail(c, n, "contains", "%zu items match, fewer than required", found);
		ok = 0;
	}
	if (n->max_contains >= 0 && found > (size_t)n->max_contains) {
		fail(c, n, "maxContains", "%zu items match, more than %lld", found, n->max_contains);
		ok = 0;
	}
	return ok;
}

static int check_array(struct ctx *c, const struct snode *n, const struct jv *inst,
		       struct ann *out)
{
	int ok = 1;

	if (n->min_items >= 0 && inst->n < (unsigned long long)n->min_items) {
		fail(c, n, "minItems", "fewer than %lld items", n->min_items);
		ok = 0;
	}
	if (n->max_items >= 0 && inst->n > (unsigned long long)n->max_items) {
		fail(c, n, "maxItems", "more than %lld items", n->max_items);
		ok = 0;
	}
	if (!ok && !COLLECT(c))
		return 0;
	if (n->unique) {
		size_t i, j;
		int d = find_duplicate(inst, &i, &j);

		if (d < 0) {
			c->fatal = 1;
			return 0;
		}
		if (d) {
			fail(c, n, "uniqueItems", "items %zu and %zu are equal", i, j);
			ok = 0;
			if (!COLLECT(c))
				return 0;
		}
	}
	if ((n->nprefix || n->items) && !check_items(c, n, inst, out)) {
		ok = 0;
		if (!COLLECT(c))
			return 0;
	}
	if (n->contains && !check_contains(c, n, inst, out))
		ok = 0;
	return ok;
}

/* An array schema without "contains" when neither errors nor annotations
 * are wanted: bounds, uniqueness, then each item. */
static __attribute__((noinline)) int items_unique(struct ctx *c, const struct jv *inst)
{
	size_t x, y;
	int d = find_duplicate(inst, &x, &y);

	if (d < 0)
		c->fatal = 1;
	return d == 0;
}

static int array_fast(struct ctx *c, const struct snode *n, const struct jv *inst)
{
	uint32_t i;

	if ((n->min_items >= 0 && inst->n < (unsigned long long)n->min_items) ||
	    (n->max_items >= 0 && inst->n > (unsigned long long)n->max_items))
		return 0;
	if (n->unique && !items_unique(c, inst))
		return 0;
	for (i = 0; i < inst->n && i < n->nprefix; i++)
		if (!eval(c, n->prefix[i], &inst->u.items[i], NULL))
			return 0;
	if (n->items)
		for (; i < inst->n; i++)
			if (!eval(c, n->items, &inst->u.items[i], NULL))
				return 0;
	return 1;
}

static int check_any_of(struct ctx *c, const struct snode *n, const struct jv *inst,
			struct ann *out)
{
	size_t i, valid = 0;

	for (i = 0; i < n->nany; i++) {
		struct ann a = { 0 };

		if (quietly(c, n->any_of[i], inst, out ? &a : NULL)) {
			valid++;
			if (out)
				ann_merge(out, &a, inst);
		}
		if (out)
			ann_free(&a);
		if (valid && !out)
			break; /* no annotations wanted: the first will do */
	}
	if (!valid)
		fail(c, n, "anyOf", "matches none of the schemas");
	return valid > 0;
}

static int check_one_of(struct ctx *c, const struct snode *n, const struct jv *inst,
			struct ann *out)
{
	struct ann keep = { 0 };
	size_t i, valid = 0;

	for (i = 0; i < n->none && valid < 2; i++) {
		struct ann a = { 0 };

		if (quietly(c, n->one_of[i], inst, out ? &a : NULL)) {
			valid++;
			if (out)
				ann_free(&keep);
			keep = a;
		} else if (out) {
			ann_free(&a);
		}
	}
	if (valid != 1) {
		/* "valid < 2" stopped the count: say so */
		if (valid == 2 && i < n->none)
			fail(c, n, "oneOf", "matches more than one of the schemas");
		else
			fail(c, n, "oneOf", "matches %zu of the schemas, not exactly one", valid);
	} else if (out) {
		ann_merge(out, &keep, inst);
	}
	if (out)
		ann_free(&keep);
	return valid == 1;
}

static int check_applicators(struct ctx *c, const struct snode *n, const struct jv *inst,
			     struct ann *out)
{
	size_t i;
	int ok = 1;

	for (i = 0; i < n->nall; i++)
		if (!eval(c, n->all_of[i], inst, out)) {
			ok = 0;
			if (!COLLECT(c))
				return 0;
		}
	if (n->nany && !check_any_of(c, n, inst, out)) {
		ok = 0;
		if (!COLLECT(c))
			return 0;
	}
	if (n->none && !check_one_of(c, n, inst, out)) {
		ok = 0;
		if (!COLLECT(c))
			return 0;
	}
	if (n->not_ && quietly(c, n->not_, inst, NULL)) {
		fail(c, n, "not", "matches a schema it must not");
		ok = 0;
		if (!COLLECT(c))
			return 0;
	}
	if (n->if_) {
		struct ann a = { 0 };

		if (quietly(c, n->if_, inst, out ? &a : NULL)) {
			if (out)
				ann_merge(out, &a, inst);
			if (n->then_ && !eval(c, n->then_, inst, out))
				ok = 0;
		} else if (n->else_ && !eval(c, n->else_, inst, out)) {
			ok = 0;
		}
		if (out)
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

static int check_unevaluated(struct ctx *c, const struct snode *n, const struct jv *inst,
			     struct ann *here)
{
	uint32_t i;
	size_t old;
	int ok = 1;

	if (n->uneval_props && inst->kind == JV_OBJECT) {
		uint64_t *ev = bits(&here->p_inl, &here->p_heap, inst->n, 1, &here->nomem);

		for (i = 0; i < inst->n; i++) {
			const struct jmember *m = &inst->u.members[i];

			if (bit_get(ev, i))
				continue;
			old = ipush(c, m->key, m->klen, 0);
			if (!eval(c, n->uneval_props, &m->val, NULL)) {
				ok = 0;
				if (!COLLECT(c))
					return 0;
			}
			c->ilen = old;
			bit_set(ev, i);
		}
	}
	if (n->uneval_items && inst->kind == JV_ARRAY && !here->items_all) {
		const uint64_t *marks = inst->n <= 64 ? &here->c_inl : here->c_heap;

		for (i = here->items_upto; i < inst->n; i++) {
			if (bit_get(marks, i))
				continue;
			old = ipush(c, NULL, 0, i);
			if (!eval(c, n->uneval_items, &inst->u.items[i], NULL)) {
				ok = 0;
				if (!COLLECT(c))
					return 0;
			}
			c->ilen = old;
		}
		here->items_all = 1;
	}
	return ok;
}

/* One node's checks on one value; a failed check ends the node unless
 * every error is wanted. */
#define CHECK(cond)                                  \
	do {                                         \
		if (!(cond)) {                       \
			ok = 0;                      \
			if (!COLLECT(c))             \
				return 0;            \
		}                                    \
	} while (0)

static int enum_has(const struct snode *n, const struct jv *inst)
{
	uint32_t i;

	for (i = 0; i < n->nenum; i++) {
		const struct jv *e = &n->enum_jv[i];

		/* strings, the usual enum, compared here */
		if (inst->kind == JV_STRING ? e->kind == JV_STRING && e->n == inst->n &&
						      same_bytes(e->u.s, inst->u.s, inst->n)
					    : jv_equal(e, inst))
			return 1;
	}
	return 0;
}

static __attribute__((noinline)) int value_checks_all(struct ctx *c, const struct snode *n,
							const struct jv *inst);

/* "type", "const", "enum" and the number and string keywords: the first
 * failure answers, unless every error is wanted. */
static int value_checks(struct ctx *c, const struct snode *n, const struct jv *inst)
{
	unsigned f = n->flags;

	if (COLLECT(c))
		return value_checks_all(c, n, inst);
	if ((f & F_TYPE) && !(n->types & inst->tmask))
		return 0;
	if ((f & F_ENUM) && !enum_has(n, inst))
		return 0;
	if ((f & F_CONST) && !jv_equal(n->const_jv, inst))
		return 0;
	if ((f & F_NUM) && (inst->tmask & T_NUMBER) && !check_number(c, n, inst))
		return 0;
	if ((f & F_STR) && (inst->tmask & T_STRING))
		return check_string(c, n, inst);
	return 1;
}

/* "expected string or null, got integer" */
static void type_failed(struct ctx *c, const struct snode *n, const struct jv *inst)
{
	static const char *const names[] = { "null",   "boolean", "object", "array",
					     "number", "string",  "integer" };
	char want[96] = "";
	size_t i, o = 0;
	const char *got;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (n->types & (1u << i))
			o += (size_t)snprintf(want + o, sizeof(want) - o, "%s%s", o ? " or " : "",
					      names[i]);
	switch (inst->kind) {
	case JV_NULL: got = "null"; break;
	case JV_TRUE:
	case JV_FALSE: got = "boolean"; break;
	case JV_OBJECT: got = "object"; break;
	case JV_ARRAY: got = "array"; break;
	case JV_STRING: got = "string"; break;
	default: got = inst->tmask & T_INTEGER ? "integer" : "number"; break;
	}
	fail(c, n, "type", "expected %s, got %s", want, got);
}

static __attribute__((noinline)) int value_checks_all(struct ctx *c, const struct snode *n,
							const struct jv *inst)
{
	unsigned f = n->flags, t = inst->tmask;
	int ok = 1;

	if (f & F_TYPE)
		CHECK((n->types & t) || (type_failed(c, n, inst), 0));
	if (f & F_CONST)
		CHECK(jv_equal(n->const_jv, inst) ||
		      (fail(c, n, "const", "not the constant value"), 0));
	if (f & F_ENUM)
		CHECK(enum_has(n, inst) || (fail(c, n, "enum", "not one of the allowed values"), 0));
	if ((f & F_NUM) && (t & T_NUMBER))
		CHECK(check_number(c, n, inst));
	if ((f & F_STR) && (t & T_STRING))
		CHECK(check_string(c, n, inst));
	return ok;
}
#undef CHECK

#define CHECK(cond)                                  \
	do {                                         \
		if (!(cond)) {                       \
			ok = 0;                      \
			if (!COLLECT(c))             \
				goto done;           \
		}                                    \
	} while (0)

static int apply(struct ctx *c, const struct snode *n, const struct jv *inst, struct ann *out)
{
	unsigned f, t = inst->tmask;
	int ok = 1, pushed = 0;
	struct ann here, *a = out;

	if (!COLLECT(c) && !c->s->dynamic)
		n = n->direct;
	f = n->flags;
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
	if (c->s->dynamic && n->res && (c->nscope == 0 || c->scope[c->nscope - 1] != n->res) &&
	    c->nscope < MAX_SCOPE) {
		c->scope[c->nscope++] = n->res;
		pushed = 1;
	}
	if (f & F_VALUE)
		CHECK(value_checks(c, n, inst));
	if (!(f & ~(unsigned)F_VALUE))
		goto done;
	/* Annotations are gathered where someone reads them: the caller's
	 * set, or a fresh one for this node's own unevaluated* keywords (and
	 * when collecting every error, where a failed node goes on). */
	if (((f & F_UNEVAL_P) && (t & T_OBJECT)) || ((f & F_UNEVAL_I) && (t & T_ARRAY)) ||
	    (out && COLLECT(c))) {
		memset(&here, 0, sizeof(here));
		a = &here;
	}
	if (f & F_REF)
		CHECK(eval(c, n->ref, inst, a));
	if (f & F_DYNREF)
		CHECK(apply(c, dynamic_target(c, n), inst, a));
	if (f & F_APPL)
		CHECK(check_applicators(c, n, inst, a));
	if ((f & F_OBJ) && (t & T_OBJECT))
		CHECK(check_object(c, n, inst, a));
	if ((f & F_ARR) && (t & T_ARRAY))
		CHECK(check_array(c, n, inst, a));
	if (a == &here && (f & (F_UNEVAL_P | F_UNEVAL_I)))
		CHECK(check_unevaluated(c, n, inst, &here));
done:
	if (a == &here) {
		if (here.nomem)
			c->fatal = 1;
		if (ok && out)
			ann_merge(out, &here, inst);
		ann_free(&here);
	}
	if (out && out->nomem)
		c->fatal = 1;
	if (pushed)
		c->nscope--;
	c->depth--;
	return ok && !c->fatal;
}

int schema_validate_jv(const struct tg_schema *s, const struct jv *inst,
		       struct tg_schema_errors *errors, struct tg_error *err)
{
	struct ctx c;
	int ok;

	/* no memset: ipath and scope are written before they are read */
	c.s = s;
	c.errors = errors;
	c.quiet = 0;
	c.slow = errors || s->dynamic;
	c.ilen = 0;
	c.nscope = 0;
	c.fatal = 0;
	c.depth = 0;
	if (errors)
		errors->n = 0;
	ok = apply(&c, s->root, inst, NULL);
	if (c.fatal)
		return tg_error_set(err, TG_ERR_LIMIT,
				    "validation stopped: a pattern's match limit, the evaluation "
				    "depth or the memory was exhausted");
	return ok ? 1 : 0;
}

static size_t max_depth(const struct tg_schema *s)
{
	return s->opts.max_depth ? s->opts.max_depth : DEFAULT_MAX_DEPTH;
}

int tg_schema_validate(const struct tg_schema *s, const char *text, size_t len,
		       struct tg_schema_errors *errors, struct tg_error *err)
{
	size_t max = s->opts.max_bytes ? s->opts.max_bytes : DEFAULT_MAX_BYTES;
	struct jv_doc d;
	int rc;

	tg_error_clear(err);
	if (errors)
		errors->n = 0;
	if (len > max)
		return tg_error_set(err, TG_ERR_LIMIT, "instance larger than %zu bytes", max);
	if (jv_parse(&d, text, len, max_depth(s), err) < 0)
		return tg_error_wrap(err, "instance");
	rc = schema_validate_jv(s, &d.root, errors, err);
	jv_doc_release(&d);
	return rc;
}
