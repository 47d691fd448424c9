/*
 * libFuzzer entry point: the validator's instance parser (jv.c), which
 * reads every tool call's arguments. Any input must parse or be refused
 * with an error, in bounded time and memory; and what it accepts must
 * agree with jansson: when jansson parses the same text (it refuses some
 * of what jv accepts, integers past 64 bits, NUL in names), the two trees
 * are equal (a number past a double's digits, which jansson rounds, by
 * its nearest double), and a tree is equal to itself and hashes alike.
 * Numbers also compare as num.c says: antisymmetric, equal ones hash
 * alike, different nearest doubles decide.
 */
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* num_multiple with m as a schema's divisor */
static int multiple(const struct jv *x, const struct jv *m)
{
	struct num_div d = { .v = *m };

	num_divisor(&d);
	return num_multiple(x, &d);
}

/* jv's tree and jansson's alike: jv_equal, but an exact decimal against
 * the double jansson rounded it to */
static int same(const struct jv *a, const struct jv *b)
{
	uint32_t i;

	if (a->kind == JV_DEC)
		return (b->kind == JV_REAL || b->kind == JV_INT) && jv_number(b) == a->u.dec->approx;
	if (a->kind != b->kind || a->n != b->n)
		return jv_equal(a, b);
	if (a->kind == JV_ARRAY) {
		for (i = 0; i < a->n; i++)
			if (!same(&a->u.items[i], &b->u.items[i]))
				return 0;
		return 1;
	}
	if (a->kind == JV_OBJECT) {
		for (i = 0; i < a->n; i++)
			if (a->u.members[i].klen != b->u.members[i].klen ||
			    memcmp(a->u.members[i].key, b->u.members[i].key, a->u.members[i].klen) ||
			    !same(&a->u.members[i].val, &b->u.members[i].val))
				return 0;
		return 1;
	}
	return jv_equal(a, b);
}

/* "D.DDDe+X" one unit of its last digit up, in place; 0 when it would
 * not fit. */
static int up(char *t, size_t size)
{
	char *e = strchr(t, 'e'), *s;

	if (!e)
		return 0;
	for (s = e - 1; s >= t; s--) {
		if (*s == '.')
			continue;
		if (*s != '9') {
			(*s)++;
			return 1;
		}
		*s = '0';
	}
	return snprintf(t, size, "1e%ld", strtol(e + 1, NULL, 10) + 1) < (int)size;
}

/* A decimal t (digits, a point, an exponent) as 0.DIG * 10^*exp, DIG
 * without leading or trailing zeros (80 bytes); 0 when it has none. */
static int normal(const char *t, char *dig, long *exp)
{
	long point = -1, k = 0, first = -1, e = 0;
	int n = 0;

	for (; *t && *t != 'e'; t++) {
		if (*t == '.') {
			point = k;
			continue;
		}
		if (*t != '0' && first < 0)
			first = k;
		if (first >= 0 && n < 79)
			dig[n++] = *t;
		k++;
	}
	if (*t == 'e')
		e = strtol(t + 1, NULL, 10);
	while (n > 0 && dig[n - 1] == '0')
		n--;
	dig[n] = '\0';
	if (point < 0)
		point = k;
	*exp = point - first + e;
	return first >= 0;
}

/* A double's text in messages and exact comparisons is the shortest
 * that reads back as it: it reads back, and one digit fewer does not. */
static void shortest(const struct jv *a)
{
	char buf[80], fewer[40];
	const char *p;
	int n = 0;

	if (a->kind != JV_REAL)
		return;
	num_text(a, buf, sizeof(buf));
	if (strtod(buf, NULL) != a->u.d)
		abort();
	/* its significant digits: leading and trailing zeros aside */
	{
		char dig[80];
		int k = 0, lo = 0;

		for (p = buf; *p && *p != 'e'; p++)
			if (*p >= '0' && *p <= '9')
				dig[k++] = *p;
		while (lo < k && dig[lo] == '0')
			lo++;
		while (k > lo && dig[k - 1] == '0')
			k--;
		n = k - lo;
	}
	if (n >= 2 && a->u.d != 0) {
		snprintf(fewer, sizeof(fewer), "%.*e", n - 2, fabs(a->u.d));
		if (strtod(fewer, NULL) == fabs(a->u.d))
			abort();
		/* nor the one just above it (a power of two's neighbour above
		 * is twice as far as the one below) */
		if (up(fewer, sizeof(fewer)) && strtod(fewer, NULL) == fabs(a->u.d))
			abort();
	}
	/* of the decimals of n digits that read back, the nearest: printf's,
	 * when it reads back (ECMAScript's Number::toString) */
	if (a->u.d != 0) {
		char d1[80], d2[80];
		long e1, e2;

		snprintf(fewer, sizeof(fewer), "%.*e", n - 1, fabs(a->u.d));
		if (strtod(fewer, NULL) == fabs(a->u.d) &&
		    (!normal(buf[0] == '-' ? buf + 1 : buf, d1, &e1) || !normal(fewer, d2, &e2) ||
		     strcmp(d1, d2) != 0 || e1 != e2))
			abort();
	}
}

/* Every pair of numbers among the root array's items. */
static void numbers(const struct jv *root)
{
	static const struct jv zero = { .kind = JV_INT, .tmask = T_NUMBER | T_INTEGER };
	uint32_t i, j;

	if (root->kind != JV_ARRAY)
		return;
	for (i = 0; i < root->n && i < 16; i++) {
		const struct jv *a = &root->u.items[i];

		if (!(a->tmask & T_NUMBER))
			continue;
		shortest(a);
		for (j = 0; j < root->n && j < 16; j++) {
			const struct jv *b = &root->u.items[j];
			int c;

			if (!(b->tmask & T_NUMBER))
				continue;
			c = num_cmp(a, b);
			if (c != -num_cmp(b, a) || (c == 0) != jv_equal(a, b) ||
			    (c == 0 && jv_hash(a) != jv_hash(b)) ||
			    (jv_number(a) < jv_number(b) && c >= 0) ||
			    (jv_number(a) > jv_number(b) && c <= 0))
				abort();
			/* a number is a multiple of itself (and runs in bounded time) */
			if (num_cmp(b, &zero) > 0 && !multiple(a, b) && c == 0)
				abort();
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_error err;
	struct jv_doc d, e;
	json_error_t jerr;
	json_t *j;
	int ok;

	ok = jv_parse(&d, (const char *)data, size, 64, &err) == 0;
	if (!ok && err.msg[0] == '\0')
		abort(); /* refused must say why */
	j = json_loadb((const char *)data, size,
		       JSON_DECODE_ANY | JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &jerr);
	if (ok) {
		if (!jv_equal(&d.root, &d.root) || jv_hash(&d.root) != jv_hash(&d.root))
			abort();
		numbers(&d.root);
		if (j && jv_from_json(&e, j, 64, &err) == 0) {
			if (!same(&d.root, &e.root))
				abort(); /* the two parsers read the text differently */
			jv_doc_release(&e);
		}
		jv_doc_release(&d);
	} else if (j && jv_from_json(&e, j, 64, &err) == 0) {
		/* jansson accepted what jv refused: only depth may differ, a
		 * raw NUL byte (jansson stops reading at one), or a number
		 * past jv's exact bounds (jansson rounds it) */
		if (!strstr(err.msg, "nested") && !memchr(data, 0, size) &&
		    !strstr(err.msg, "number out of range") &&
		    !strstr(err.msg, "significant digits"))
			abort();
		jv_doc_release(&e);
	}
	json_decref(j);
	return 0;
}
