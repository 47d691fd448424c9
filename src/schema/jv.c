/*
 * The validator's instance values (struct jv): a read-only JSON tree laid
 * out for validation, parsed from text (jv_parse) or copied from a jansson
 * value (jv_from_json).
 *
 * Why not validate jansson values directly: every step through them is a
 * call into the library (iterators, json_array_get, json_string_value) and
 * every "required" name costs a hash of the name. Here a value is 16 bytes,
 * an array's items and an object's members are contiguous, each member key
 * carries its length and hash (keys are matched against a schema's
 * precomputed key table, compile.c's prepare step), and a number carries
 * its type bits ("integer" included) so the type check is one AND.
 *
 * Everything lives in one arena freed at once. The parser is strict
 * RFC 8259: UTF-8 checked, lone surrogates refused, duplicate member names
 * refused (two parsers could disagree on which one counts), depth and size
 * bounded by the caller.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"
#include "util/utf8.h"

#define BLOCK_MIN (16u << 10)

struct jv_block {
	struct jv_block *next;
	size_t used, cap;
	max_align_t data[];
};

void *jv_alloc(struct jv_doc *d, size_t size)
{
	struct jv_block *b = d->blocks;

	size = (size + 15) & ~(size_t)15;
	if (!b || b->cap - b->used < size) {
		size_t cap = size > BLOCK_MIN ? size : BLOCK_MIN;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->cap = cap;
		b->used = 0;
		b->next = d->blocks;
		d->blocks = b;
	}
	b->used += size;
	return (char *)b->data + b->used - size;
}

void jv_doc_release(struct jv_doc *d)
{
	struct jv_block *b, *next;

	for (b = d->blocks; b; b = next) {
		next = b->next;
		free(b);
	}
	d->blocks = NULL;
}

uint32_t jv_key_hash(const char *s, size_t n)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 16777619u;
	/* FNV's low bits are poor for short names; tables index by them */
	h ^= h >> 16;
	h *= 0x7feb352du;
	h ^= h >> 15;
	return h;
}

static void set_number(struct jv *v, double d)
{
	v->kind = JV_REAL;
	v->n = 0;
	v->u.d = d;
	v->tmask = d == floor(d) ? T_NUMBER | T_INTEGER : T_NUMBER;
}

static void set_int(struct jv *v, long long i)
{
	v->kind = JV_INT;
	v->n = 0;
	v->u.i = i;
	v->tmask = T_NUMBER | T_INTEGER;
}

/* ---- equality and hashing (JSON Schema's: 1.0 equals 1) ------------ */

static const struct jmember *member_find(const struct jv *obj, const struct jmember *want)
{
	uint32_t i;

	for (i = 0; i < obj->n; i++) {
		const struct jmember *m = &obj->u.members[i];

		if (m->hash == want->hash && m->klen == want->klen &&
		    memcmp(m->key, want->key, m->klen) == 0)
			return m;
	}
	return NULL;
}

int jv_equal(const struct jv *a, const struct jv *b)
{
	uint32_t i;

	if (a->kind != b->kind) {
		if ((a->tmask & T_NUMBER) && (b->tmask & T_NUMBER))
			return num_equal(a, b);
		return 0;
	}
	switch (a->kind) {
	case JV_NULL:
	case JV_TRUE:
	case JV_FALSE:
		return 1;
	case JV_INT:
		return a->u.i == b->u.i;
	case JV_REAL:
		return a->u.d == b->u.d;
	case JV_DEC:
		return num_equal(a, b);
	case JV_STRING:
		return a->n == b->n && memcmp(a->u.s, b->u.s, a->n) == 0;
	case JV_ARRAY:
		if (a->n != b->n)
			return 0;
		for (i = 0; i < a->n; i++)
			if (!jv_equal(&a->u.items[i], &b->u.items[i]))
				return 0;
		return 1;
	case JV_OBJECT:
		if (a->n != b->n)
			return 0;
		for (i = 0; i < a->n; i++) {
			const struct jmember *m = member_find(b, &a->u.members[i]);

			if (!m || !jv_equal(&a->u.members[i].val, &m->val))
				return 0;
		}
		return 1;
	}
	return 0;
}

static uint64_t mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h;
}

uint64_t jv_hash(const struct jv *v)
{
	uint64_t h = (uint64_t)v->kind * 0x9e3779b97f4a7c15ull;
	uint32_t i;

	switch (v->kind) {
	case JV_INT:
	case JV_REAL:
	case JV_DEC: {
		/* equal numbers hash alike whatever their spelling or kind:
		 * equal values have the same nearest double */
		double d = jv_number(v);
		uint64_t bits;

		if (d == 0)
			d = 0; /* -0.0 equals 0 */
		memcpy(&bits, &d, sizeof(bits));
		return mix(bits ^ 0x5bd1e995);
	}
	case JV_STRING:
		return mix(h ^ jv_key_hash(v->u.s, v->n) ^ ((uint64_t)v->n << 32));
	case JV_ARRAY:
		for (i = 0; i < v->n; i++)
			h = mix(h ^ jv_hash(&v->u.items[i])) + i;
		return h;
	case JV_OBJECT: {
		uint64_t sum = 0;

		/* member order does not matter: combine commutatively */
		for (i = 0; i < v->n; i++)
			sum += mix(v->u.members[i].hash ^ jv_hash(&v->u.members[i].val));
		return mix(h ^ sum);
	}
	default:
		return h;
	}
}

/* ---- from jansson ------------------------------------------------------ */

/* jansson checks what it parses, but not what json_stringn_nocheck made:
 * the validator relies on valid UTF-8 (regex.c skips PCRE2's check), so
 * strings and names are checked here (util/utf8.h). */
static int from_json(struct jv_doc *d, const json_t *j, const struct ptrmap *exact,
		     struct jv *out, size_t depth, size_t max_depth, struct tg_error *err)
{
	const struct jv *x;
	size_t i, n;

	switch (json_typeof(j)) {
	case JSON_NULL:
		out->kind = JV_NULL, out->tmask = T_NULL;
		return 0;
	case JSON_TRUE:
		out->kind = JV_TRUE, out->tmask = T_BOOLEAN;
		return 0;
	case JSON_FALSE:
		out->kind = JV_FALSE, out->tmask = T_BOOLEAN;
		return 0;
	case JSON_INTEGER:
		set_int(out, json_integer_value(j));
		return 0;
	case JSON_REAL:
		if (exact && (x = ptrmap_get(exact, j)) != NULL)
			*out = *x; /* the jdec lives in the schema's arena */
		else
			set_number(out, json_real_value(j));
		return 0;
	case JSON_STRING: {
		char *s;

		n = json_string_length(j);
		if (n > UINT32_MAX)
			return tg_error_set(err, TG_ERR_LIMIT, "string too long");
		if (!utf8_valid(json_string_value(j), n))
			return tg_error_set(err, TG_ERR_INVALID, "invalid UTF-8 in a string");
		s = jv_alloc(d, n + 1);
		if (!s)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		memcpy(s, json_string_value(j), n + 1);
		out->kind = JV_STRING, out->tmask = T_STRING;
		out->n = (uint32_t)n;
		out->u.s = s;
		return 0;
	}
	default:
		break;
	}
	if (depth >= max_depth)
		return tg_error_set(err, TG_ERR_LIMIT, "instance nested deeper than %zu", max_depth);
	if (json_is_array(j)) {
		n = json_array_size(j);
		out->kind = JV_ARRAY, out->tmask = T_ARRAY;
		out->n = (uint32_t)n;
		out->u.items = jv_alloc(d, (n ? n : 1) * sizeof(struct jv));
		if (!out->u.items)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		for (i = 0; i < n; i++)
			if (from_json(d, json_array_get(j, i), exact, &out->u.items[i], depth + 1,
				      max_depth, err) < 0)
				return -1;
		return 0;
	} else {
		const char *key;
		json_t *v;
		void *it;

		n = json_object_size(j);
		out->kind = JV_OBJECT, out->tmask = T_OBJECT;
		out->n = (uint32_t)n;
		out->u.members = jv_alloc(d, (n ? n : 1) * sizeof(struct jmember));
		if (!out->u.members)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		i = 0;
		for (it = json_object_iter((json_t *)j); it && i < n;
		     it = json_object_iter_next((json_t *)j, it), i++) {
			struct jmember *m = &out->u.members[i];
			size_t klen = json_object_iter_key_len(it);
			char *k = jv_alloc(d, klen + 1);

			key = json_object_iter_key(it);
			v = json_object_iter_value(it);
			if (!k)
				return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			if (!utf8_valid(key, klen))
				return tg_error_set(err, TG_ERR_INVALID, "invalid UTF-8 in a member name");
			memcpy(k, key, klen + 1);
			m->key = k;
			m->klen = (uint32_t)klen;
			m->hash = jv_key_hash(k, klen);
			if (from_json(d, v, exact, &m->val, depth + 1, max_depth, err) < 0)
				return -1;
		}
		return 0;
	}
}

int jv_copy_json(struct jv_doc *d, const json_t *j, const struct ptrmap *exact,
		 struct jv *out, struct tg_error *err)
{
	/* a schema document is at most 2048 levels deep: only a guard */
	return from_json(d, j, exact, out, 0, 4096, err);
}

int jv_from_json(struct jv_doc *d, const json_t *j, size_t max_depth, struct tg_error *err)
{
	d->blocks = NULL;
	if (from_json(d, j, NULL, &d->root, 0, max_depth, err) < 0) {
		jv_doc_release(d);
		return -1;
	}
	return 0;
}

/* ---- the parser ------------------------------------------------------- */

struct parser {
	struct jv_doc *d;
	const char *t;
	size_t len, pos, max_depth;
	struct jv *vstack;          /* items of the arrays being parsed */
	size_t nv, capv;
	struct jmember *mstack;     /* members of the objects being parsed */
	size_t nm, capm;
	char *sbuf;                 /* a string being unescaped */
	size_t caps;
	const char *why;            /* set with the position of an error */
	int nomem;
};

static int perr(struct parser *p, const char *why)
{
	if (!p->why)
		p->why = why;
	return -1;
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len) {
		char c = p->t[p->pos];

		if (c != ' ' && c != '\n' && c != '\r' && c != '\t')
			break;
		p->pos++;
	}
}

static int grow(void **v, size_t *cap, size_t need, size_t size)
{
	size_t cap2 = *cap ? *cap : 16;
	void *n;

	while (cap2 < need)
		cap2 *= 2;
	if (cap2 == *cap)
		return 0;
	n = realloc(*v, cap2 * size);
	if (!n)
		return -1;
	*v = n;
	*cap = cap2;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static long read_hex4(struct parser *p)
{
	long v = 0;
	int i, h;

	if (p->len - p->pos < 4)
		return -1;
	for (i = 0; i < 4; i++) {
		h = hexval(p->t[p->pos + (size_t)i]);
		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	p->pos += 4;
	return v;
}

static size_t put_utf8(char *o, unsigned long cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xc0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xe0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		o[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | (cp >> 18));
	o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	o[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/* A string (p->pos just after its opening quote): OUT *s (arena, NUL
 * terminated) and *n bytes. */
static int parse_string(struct parser *p, const char **s, uint32_t *n)
{
	size_t start = p->pos, i = p->pos, o = 0;
	int plain = 1;
	char *out;

	/* the common case: no escape, copied once */
	for (; i < p->len; i++) {
		unsigned char c = (unsigned char)p->t[i];

		if (c == '"' || c == '\\')
			break;
		if (c < 0x20)
			return p->pos = i, perr(p, "control character in a string");
		if (c >= 0x80) {
			size_t k = utf8_char((const unsigned char *)p->t + i, p->len - i, NULL);

			if (!k)
				return p->pos = i, perr(p, "invalid UTF-8 in a string");
			i += k - 1;
		}
	}
	if (i >= p->len)
		return p->pos = i, perr(p, "unterminated string");
	if (p->t[i] == '\\')
		plain = 0;
	if (plain) {
		if (i - start > UINT32_MAX)
			return perr(p, "string too long");
		out = jv_alloc(p->d, i - start + 1);
		if (!out)
			return p->nomem = 1, perr(p, "out of memory");
		memcpy(out, p->t + start, i - start);
		out[i - start] = '\0';
		*s = out;
		*n = (uint32_t)(i - start);
		p->pos = i + 1;
		return 0;
	}
	/* escapes: an unescaped string is never longer than its source */
	for (i = start; i < p->len && p->t[i] != '"'; i++)
		if (p->t[i] == '\\')
			i++;
	if (grow((void **)&p->sbuf, &p->caps, i - start + 4, 1) < 0)
		return p->nomem = 1, perr(p, "out of memory");
	p->pos = start;
	while (p->pos < p->len) {
		unsigned char c = (unsigned char)p->t[p->pos];

		if (c == '"')
			break;
		if (c < 0x20)
			return perr(p, "control character in a string");
		if (c >= 0x80) {
			size_t k = utf8_char((const unsigned char *)p->t + p->pos, p->len - p->pos, NULL);

			if (!k)
				return perr(p, "invalid UTF-8 in a string");
			memcpy(p->sbuf + o, p->t + p->pos, k);
			o += k;
			p->pos += k;
			continue;
		}
		if (c != '\\') {
			p->sbuf[o++] = (char)c;
			p->pos++;
			continue;
		}
		if (++p->pos >= p->len)
			return perr(p, "unterminated string");
		c = (unsigned char)p->t[p->pos++];
		switch (c) {
		case '"': p->sbuf[o++] = '"'; break;
		case '\\': p->sbuf[o++] = '\\'; break;
		case '/': p->sbuf[o++] = '/'; break;
		case 'b': p->sbuf[o++] = '\b'; break;
		case 'f': p->sbuf[o++] = '\f'; break;
		case 'n': p->sbuf[o++] = '\n'; break;
		case 'r': p->sbuf[o++] = '\r'; break;
		case 't': p->sbuf[o++] = '\t'; break;
		case 'u': {
			long cp = read_hex4(p), lo;

			if (cp < 0)
				return perr(p, "invalid \\u escape");
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return perr(p, "lone low surrogate in \\u escape");
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (p->len - p->pos < 2 || p->t[p->pos] != '\\' ||
				    p->t[p->pos + 1] != 'u')
					return perr(p, "lone high surrogate in \\u escape");
				p->pos += 2;
				lo = read_hex4(p);
				if (lo < 0xdc00 || lo > 0xdfff)
					return perr(p, "invalid surrogate pair in \\u escape");
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			o += put_utf8(p->sbuf + o, (unsigned long)cp);
			break;
		}
		default:
			return p->pos--, perr(p, "invalid escape in a string");
		}
	}
	if (p->pos >= p->len)
		return perr(p, "unterminated string");
	p->pos++; /* the closing quote */
	if (o > UINT32_MAX)
		return perr(p, "string too long");
	out = jv_alloc(p->d, o + 1);
	if (!out)
		return p->nomem = 1, perr(p, "out of memory");
	memcpy(out, p->sbuf, o);
	out[o] = '\0';
	*s = out;
	*n = (uint32_t)o;
	return 0;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int parse_number(struct parser *p, struct jv *out)
{
	size_t start = p->pos, ndig = 0;
	int neg = 0, integral = 1;
	unsigned long long acc = 0;
	char buf[64], *copy = buf, *end;
	struct num_lit lit;
	struct jdec *dec;
	double d;

	if (p->t[p->pos] == '-') {
		neg = 1;
		p->pos++;
	}
	if (p->pos >= p->len || !is_digit(p->t[p->pos]))
		return perr(p, "invalid number");
	if (p->t[p->pos] == '0') {
		p->pos++;
		ndig = 1;
	} else {
		while (p->pos < p->len && is_digit(p->t[p->pos])) {
			if (ndig < 19)
				acc = acc * 10 + (unsigned long long)(p->t[p->pos] - '0');
			ndig++;
			p->pos++;
		}
	}
	if (p->pos < p->len && p->t[p->pos] == '.') {
		integral = 0;
		p->pos++;
		if (p->pos >= p->len || !is_digit(p->t[p->pos]))
			return perr(p, "invalid number: a digit must follow the point");
		while (p->pos < p->len && is_digit(p->t[p->pos]))
			p->pos++;
	}
	if (p->pos < p->len && (p->t[p->pos] == 'e' || p->t[p->pos] == 'E')) {
		integral = 0;
		p->pos++;
		if (p->pos < p->len && (p->t[p->pos] == '+' || p->t[p->pos] == '-'))
			p->pos++;
		if (p->pos >= p->len || !is_digit(p->t[p->pos]))
			return perr(p, "invalid number: a digit must follow the exponent");
		while (p->pos < p->len && is_digit(p->t[p->pos]))
			p->pos++;
	}
	/* an integer that fits 64 bits: itself */
	if (integral && (ndig <= 18 || (ndig == 19 && acc <= (unsigned long long)LLONG_MAX + neg))) {
		set_int(out, neg ? (long long)(0ull - acc) : (long long)acc);
		return 0;
	}
	/* 17 characters hold at most 17 digits: a double, and no second look */
	lit.nsig = 0;
	lit.exp = 0;
	if (p->pos - start > 17)
		num_literal(p->t + start, p->pos - start, NULL, 0, &lit);
	if (lit.nsig > NUM_MAX_DIGITS)
		return p->pos = start,
		       perr(p, "number with more than " NUM_STR(NUM_MAX_DIGITS) " significant digits");
	if (lit.nsig > 17 && lit.exp < NUM_MIN_EXP)
		return p->pos = start, perr(p, "number out of range");
	/* strtod needs a terminated copy: the text may end at the number */
	if (p->pos - start >= sizeof(buf)) {
		copy = malloc(p->pos - start + 1);
		if (!copy)
			return p->nomem = 1, perr(p, "out of memory");
	}
	memcpy(copy, p->t + start, p->pos - start);
	copy[p->pos - start] = '\0';
	errno = 0;
	d = strtod(copy, &end);
	if (copy != buf)
		free(copy);
	if (errno == ERANGE && isinf(d))
		return p->pos = start, perr(p, "number out of range");
	if (lit.nsig <= 17) {
		set_number(out, d);
		return 0;
	}
	/* past a double's digits: the decimal itself */
	dec = jv_alloc(p->d, sizeof(*dec) + lit.nsig);
	if (!dec)
		return p->nomem = 1, perr(p, "out of memory");
	num_literal(p->t + start, p->pos - start, dec->dig, lit.nsig, &lit);
	dec->approx = d;
	dec->exp = (int32_t)lit.exp;
	dec->ndig = (uint32_t)lit.nsig;
	dec->neg = (uint8_t)lit.neg;
	out->kind = JV_DEC;
	out->n = 0;
	out->u.dec = dec;
	out->tmask = lit.exp >= (long long)lit.nsig ? T_NUMBER | T_INTEGER : T_NUMBER;
	return 0;
}

static int literal(struct parser *p, const char *word, struct jv *out, int kind, unsigned tmask)
{
	size_t n = strlen(word);

	if (p->len - p->pos < n || memcmp(p->t + p->pos, word, n) != 0)
		return perr(p, "invalid literal");
	p->pos += n;
	out->kind = (uint8_t)kind;
	out->tmask = (uint8_t)tmask;
	out->n = 0;
	return 0;
}

static int parse_value(struct parser *p, struct jv *out, size_t depth);

/* Two members with the same name: refused (RFC 8259 leaves it open, and
 * a validator and a tool that disagree on which one counts is a hole). */
static int has_duplicate(struct parser *p, const struct jmember *m, size_t n)
{
	size_t i, j, cap;
	uint32_t *tab;

	if (n <= 16) {
		for (i = 0; i < n; i++)
			for (j = i + 1; j < n; j++)
				if (m[i].hash == m[j].hash && m[i].klen == m[j].klen &&
				    memcmp(m[i].key, m[j].key, m[i].klen) == 0)
					return 1;
		return 0;
	}
	for (cap = 32; cap < n * 2; cap *= 2)
		;
	tab = calloc(cap, sizeof(*tab));
	if (!tab) {
		p->nomem = 1;
		return 1;
	}
	for (i = 0; i < n; i++) {
		for (j = m[i].hash & (cap - 1); tab[j]; j = (j + 1) & (cap - 1)) {
			const struct jmember *o = &m[tab[j] - 1];

			if (o->hash == m[i].hash && o->klen == m[i].klen &&
			    memcmp(o->key, m[i].key, o->klen) == 0) {
				free(tab);
				return 1;
			}
		}
		tab[j] = (uint32_t)i + 1;
	}
	free(tab);
	return 0;
}

static int parse_object(struct parser *p, struct jv *out, size_t depth)
{
	size_t base = p->nm, n;

	p->pos++; /* { */
	skip_ws(p);
	if (p->pos < p->len && p->t[p->pos] == '}') {
		p->pos++;
		goto done;
	}
	for (;;) {
		struct jmember m;

		skip_ws(p);
		if (p->pos >= p->len || p->t[p->pos] != '"')
			return perr(p, "expected a member name");
		p->pos++;
		if (parse_string(p, &m.key, &m.klen) < 0)
			return -1;
		m.hash = jv_key_hash(m.key, m.klen);
		skip_ws(p);
		if (p->pos >= p->len || p->t[p->pos] != ':')
			return perr(p, "expected ':'");
		p->pos++;
		if (parse_value(p, &m.val, depth + 1) < 0)
			return -1;
		if (grow((void **)&p->mstack, &p->capm, p->nm + 1, sizeof(m)) < 0)
			return p->nomem = 1, perr(p, "out of memory");
		p->mstack[p->nm++] = m;
		skip_ws(p);
		if (p->pos < p->len && p->t[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->t[p->pos] == '}') {
			p->pos++;
			break;
		}
		return perr(p, "expected ',' or '}'");
	}
done:
	n = p->nm - base;
	if (n > UINT32_MAX)
		return perr(p, "object too large");
	if (n && has_duplicate(p, p->mstack + base, n))
		/* the stacks are jv_parse's to free, on every path */
		/* NOLINTNEXTLINE(clang-analyzer-unix.Malloc) */
		return perr(p, p->nomem ? "out of memory" : "duplicate member name in an object");
	out->kind = JV_OBJECT, out->tmask = T_OBJECT;
	out->n = (uint32_t)n;
	out->u.members = jv_alloc(p->d, (n ? n : 1) * sizeof(struct jmember));
	if (!out->u.members)
		return p->nomem = 1, perr(p, "out of memory");
	if (n)
		memcpy(out->u.members, p->mstack + base, n * sizeof(struct jmember));
	p->nm = base;
	return 0;
}

static int parse_array(struct parser *p, struct jv *out, size_t depth)
{
	size_t base = p->nv, n;

	p->pos++; /* [ */
	skip_ws(p);
	if (p->pos < p->len && p->t[p->pos] == ']') {
		p->pos++;
		goto done;
	}
	for (;;) {
		struct jv v;

		if (parse_value(p, &v, depth + 1) < 0)
			return -1;
		if (grow((void **)&p->vstack, &p->capv, p->nv + 1, sizeof(v)) < 0)
			return p->nomem = 1, perr(p, "out of memory");
		p->vstack[p->nv++] = v;
		skip_ws(p);
		if (p->pos < p->len && p->t[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->t[p->pos] == ']') {
			p->pos++;
			break;
		}
		return perr(p, "expected ',' or ']'");
	}
done:
	n = p->nv - base;
	if (n > UINT32_MAX)
		return perr(p, "array too large");
	out->kind = JV_ARRAY, out->tmask = T_ARRAY;
	out->n = (uint32_t)n;
	out->u.items = jv_alloc(p->d, (n ? n : 1) * sizeof(struct jv));
	if (!out->u.items)
		return p->nomem = 1, perr(p, "out of memory");
	if (n)
		memcpy(out->u.items, p->vstack + base, n * sizeof(struct jv));
	p->nv = base;
	return 0;
}

static int parse_value(struct parser *p, struct jv *out, size_t depth)
{
	skip_ws(p);
	if (p->pos >= p->len)
		return perr(p, "unexpected end of input");
	switch (p->t[p->pos]) {
	case '{':
	case '[':
		if (depth >= p->max_depth)
			return perr(p, "nested too deep");
		return p->t[p->pos] == '{' ? parse_object(p, out, depth) : parse_array(p, out, depth);
	case '"':
		p->pos++;
		out->kind = JV_STRING, out->tmask = T_STRING;
		return parse_string(p, &out->u.s, &out->n);
	case 't':
		return literal(p, "true", out, JV_TRUE, T_BOOLEAN);
	case 'f':
		return literal(p, "false", out, JV_FALSE, T_BOOLEAN);
	case 'n':
		return literal(p, "null", out, JV_NULL, T_NULL);
	default:
		return parse_number(p, out);
	}
}

int jv_parse(struct jv_doc *d, const char *text, size_t len, size_t max_depth,
	     struct tg_error *err)
{
	struct parser p = { 0 };
	int rc;

	d->blocks = NULL;
	p.d = d;
	p.t = text;
	p.len = len;
	p.max_depth = max_depth;
	rc = parse_value(&p, &d->root, 0);
	if (rc == 0) {
		skip_ws(&p);
		if (p.pos < p.len)
			rc = perr(&p, "text after the value");
	}
	free(p.vstack);
	free(p.mstack);
	free(p.sbuf);
	if (rc == 0)
		return 0;
	jv_doc_release(d);
	if (p.nomem)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	{
		size_t i, line = 1, col = 1;

		for (i = 0; i < p.pos && i < len; i++) {
			if (text[i] == '\n') {
				line++;
				col = 1;
			} else {
				col++;
			}
		}
		if (strcmp(p.why, "nested too deep") == 0)
			return tg_error_set(err, TG_ERR_LIMIT,
					    "line %zu, column %zu: nested deeper than %zu", line, col,
					    max_depth);
		return tg_error_set(err, TG_ERR_INVALID, "line %zu, column %zu: %s", line, col,
				    p.why);
	}
}
