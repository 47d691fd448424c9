/*
 * JSON numbers past what jansson holds exactly (json_wide.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json_wide.h"

#define INSERTED ".0" /* what makes a long integer literal a real for jansson */

/* The string token t[i] ('"') to its closing quote: its end, n when it
 * has none. */
static size_t string_end(const char *t, size_t n, size_t i)
{
	for (i++; i < n && t[i] != '"'; i++)
		if (t[i] == '\\')
			i++;
	return i < n ? i + 1 : n;
}

/* The next number at or after t[i] outside a string: 1 and its span
 * [*start, *end), or 0 when there is none. */
static int next_number(const char *t, size_t n, size_t i, size_t *start, size_t *end)
{
	while (i < n) {
		if (t[i] == '"') {
			i = string_end(t, n, i);
		} else if (t[i] == '-' || (t[i] >= '0' && t[i] <= '9')) {
			*start = i;
			while (i < n && t[i] && strchr("0123456789+-.eE", t[i]))
				i++;
			*end = i;
			return 1;
		} else {
			i++;
		}
	}
	return 0;
}

static int integral(const char *lit, size_t len)
{
	return !memchr(lit, '.', len) && !memchr(lit, 'e', len) && !memchr(lit, 'E', len);
}

/* An integer literal past 64 bits. */
static int long_integer(const char *lit, size_t len)
{
	int neg = len > 0 && lit[0] == '-';
	size_t ndig = len - (size_t)neg;

	if (!integral(lit, len) || ndig < 19)
		return 0;
	return ndig > 19 || memcmp(lit + neg, neg ? "9223372036854775808" : "9223372036854775807",
				   19) > 0;
}

/* A literal jansson refuses or rounds: a long integer, or more than 17
 * significant digits (from the first digit not 0 to the last, as the
 * schema's num_literal counts them). */
static int long_literal(const char *lit, size_t len)
{
	size_t i, k = 0, first = SIZE_MAX, last = 0;

	if (integral(lit, len))
		return long_integer(lit, len);
	for (i = 0; i < len && lit[i] != 'e' && lit[i] != 'E'; i++) {
		if (lit[i] < '0' || lit[i] > '9')
			continue;
		if (lit[i] != '0') {
			if (first == SIZE_MAX)
				first = k;
			last = k;
		}
		k++;
	}
	return first != SIZE_MAX && last - first + 1 > 17;
}

int json_wide_has_long(const char *t, size_t n)
{
	size_t s, e = 0;

	while (next_number(t, n, e, &s, &e))
		if (long_literal(t + s, e - s))
			return 1;
	return 0;
}

/* e's place in the rewritten text taken back to t's: less what was
 * inserted before it (its column: less what was inserted on its line). */
static void error_back(const char *t, size_t n, json_error_t *e)
{
	size_t s, end = 0, shift = 0, prev = 0, on_line = 0, at;

	if (e->position < 0)
		return;
	at = (size_t)e->position;
	while (next_number(t, n, end, &s, &end) && end + shift < at) {
		if (!long_integer(t + s, end - s))
			continue;
		if (memchr(t + prev, '\n', end - prev))
			on_line = 0;
		on_line += strlen(INSERTED);
		shift += strlen(INSERTED);
		prev = end;
	}
	at -= shift;
	if (at > prev && memchr(t + prev, '\n', (at < n ? at : n) - prev))
		on_line = 0;
	e->position = (int)at;
	if (e->column > (int)on_line)
		e->column -= (int)on_line;
}

/* t with INSERTED after each long integer literal, into copy (n plus
 * room for every insertion): its length. */
static size_t widen(const char *t, size_t n, char *copy)
{
	size_t s, end = 0, from = 0, o = 0;

	while (next_number(t, n, end, &s, &end)) {
		if (!long_integer(t + s, end - s))
			continue;
		memcpy(copy + o, t + from, end - from);
		o += end - from;
		memcpy(copy + o, INSERTED, strlen(INSERTED));
		o += strlen(INSERTED);
		from = end;
	}
	memcpy(copy + o, t + from, n - from);
	return o + n - from;
}

json_t *json_wide_load(const char *t, size_t n, size_t flags, json_error_t *e)
{
	size_t s, end = 0, count = 0, len;
	json_error_t mine;
	char *copy;
	json_t *j;

	if (!e)
		e = &mine;
	j = json_loadb(t, n, flags, e);
	if (j || json_error_code(e) != json_error_numeric_overflow)
		return j;
	while (next_number(t, n, end, &s, &end))
		count += (size_t)long_integer(t + s, end - s);
	if (!count)
		return NULL; /* a real past a double's range: jansson's error stands */
	copy = malloc(n + count * strlen(INSERTED) + 1);
	if (!copy)
		return NULL;
	len = widen(t, n, copy);
	j = json_loadb(copy, len, flags, e);
	free(copy);
	if (!j)
		error_back(t, n, e);
	return j;
}

/* ---- the canonical text ------------------------------------------------- */

/* A number of the value: its json_t and its literal in the text. */
struct number {
	const json_t *v;
	const char *lit;
	size_t len;
};

struct walk {
	const json_t **nums; /* every number, in the text's order */
	size_t n, cap;
	struct number *lits; /* each with its literal, by address */
	char *out;     /* the canonical text, growing */
	size_t len, size;
	size_t index;  /* numbers met in the canonical order */
	int fail;
};

static void in_text_order(struct walk *w, const json_t *v)
{
	const char *key;
	size_t i;
	json_t *c;

	if (w->fail)
		return;
	if (json_is_number(v)) {
		if (w->n == w->cap) {
			size_t cap = w->cap ? 2 * w->cap : 16;
			const json_t **p = realloc(w->nums, cap * sizeof(*p));

			if (!p) {
				w->fail = 1;
				return;
			}
			w->nums = p;
			w->cap = cap;
		}
		w->nums[w->n++] = v;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, c)
			in_text_order(w, c);
	} else if (json_is_object(v)) {
		/* jansson keeps an object's members in the order read */
		json_object_foreach((json_t *)v, key, c)
			in_text_order(w, c);
	}
}

static int by_address(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct number *)a)->v;
	uintptr_t y = (uintptr_t)((const struct number *)b)->v;

	return x < y ? -1 : x > y;
}

struct key {
	const char *k;
	size_t len;
	json_t *v;
};

/* jansson's order for JSON_SORT_KEYS (its dump.c: bytes, then length) */
static int by_key(const void *a, const void *b)
{
	const struct key *x = a, *y = b;
	int c = memcmp(x->k, y->k, x->len < y->len ? x->len : y->len);

	return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* "\nINDEX:LITERAL" after the text */
static void append(struct walk *w, size_t index, const char *lit, size_t len)
{
	int need = snprintf(NULL, 0, "\n%zu:%.*s", index, (int)len, lit);

	if (w->fail || need < 0)
		return;
	if (w->len + (size_t)need + 1 > w->size) {
		size_t size = (w->len + (size_t)need + 1) * 2;
		char *p = realloc(w->out, size);

		if (!p) {
			w->fail = 1;
			return;
		}
		w->out = p;
		w->size = size;
	}
	snprintf(w->out + w->len, (size_t)need + 1, "\n%zu:%.*s", index, (int)len, lit);
	w->len += (size_t)need;
}

static void in_sorted_order(struct walk *w, json_t *v)
{
	if (w->fail)
		return;
	if (json_is_number(v)) {
		struct number k = { v, NULL, 0 }, *l;

		l = bsearch(&k, w->lits, w->n, sizeof(*l), by_address);
		if (l)
			append(w, w->index, l->lit, l->len);
		else
			w->fail = 1; /* every number was met in the text's order */
		w->index++;
	} else if (json_is_array(v)) {
		size_t i;
		json_t *c;

		json_array_foreach(v, i, c)
			in_sorted_order(w, c);
	} else if (json_is_object(v) && json_object_size(v)) {
		struct key *keys = malloc(json_object_size(v) * sizeof(*keys));
		const char *key;
		size_t klen, i = 0;
		json_t *c;

		if (!keys) {
			w->fail = 1;
			return;
		}
		json_object_keylen_foreach(v, key, klen, c)
			keys[i++] = (struct key){ key, klen, c };
		qsort(keys, i, sizeof(*keys), by_key);
		for (i = 0; i < json_object_size(v); i++)
			in_sorted_order(w, keys[i].v);
		free(keys);
	}
}

char *json_wide_canonical(const char *t, size_t n)
{
	struct walk w = { 0 };
	size_t s, end = 0, k = 0;
	char *base;
	json_t *v;

	if (!json_wide_has_long(t, n)) {
		v = json_loadb(t, n, JSON_ALLOW_NUL, NULL);
		base = v ? json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		json_decref(v);
		return base;
	}
	/* a member named twice would leave a number of the text out of the
	 * value, and the literals would follow the wrong numbers */
	v = json_wide_load(t, n, JSON_ALLOW_NUL | JSON_REJECT_DUPLICATES, NULL);
	if (!v)
		return NULL;
	in_text_order(&w, v);
	w.lits = w.fail ? NULL : calloc(w.n ? w.n : 1, sizeof(*w.lits));
	/* the i-th number of the text is the i-th the walk met */
	while (w.lits && k < w.n && next_number(t, n, end, &s, &end)) {
		w.lits[k] = (struct number){ w.nums[k], t + s, end - s };
		k++;
	}
	base = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	if (!w.lits || k != w.n || next_number(t, n, end, &s, &end) || !base) {
		free(base);
		base = NULL;
		goto out;
	}
	qsort(w.lits, w.n, sizeof(*w.lits), by_address);
	w.out = base;
	w.len = strlen(base);
	w.size = w.len + 1;
	in_sorted_order(&w, v);
	base = w.fail ? NULL : w.out;
	if (w.fail)
		free(w.out);
out:
	free(w.nums);
	free(w.lits);
	json_decref(v);
	return base;
}

/* out[*o, ...) grown to hold n more bytes (doubling); -1 out of memory. */
static int room(char **out, size_t *cap, size_t o, size_t n)
{
	char *p;

	if (o + n + 1 <= *cap)
		return 0;
	*cap = (o + n + 1) * 2;
	p = realloc(*out, *cap);
	if (!p)
		return -1;
	*out = p;
	return 0;
}

char *json_wide_text(const char *t, size_t n, size_t *len)
{
	size_t i = 0, o = 0, cap = n + 1, end, sl;
	char *out = malloc(cap), *s;
	json_t *v;

	while (out && i < n) {
		if (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r') {
			i++;
			continue;
		}
		if (t[i] != '"') {
			if (room(&out, &cap, o, 1) < 0)
				goto nomem;
			out[o++] = t[i++];
			continue;
		}
		/* a string as jansson writes it: its escapes decoded, written
		 * again where JSON needs them */
		end = string_end(t, n, i);
		v = json_loadb(t + i, end - i, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
		s = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
		json_decref(v);
		if (v && !s)
			goto nomem;
		sl = s ? strlen(s) : end - i; /* not a string jansson reads: as it is */
		if (room(&out, &cap, o, sl) < 0) {
			free(s);
			goto nomem;
		}
		memcpy(out + o, s ? s : t + i, sl);
		o += sl;
		free(s);
		i = end;
	}
	if (!out)
		return NULL;
	out[o] = '\0';
	*len = o;
	return out;
nomem:
	free(out);
	return NULL;
}
