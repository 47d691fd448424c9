/*
 * RFC 8785 (JCS), the canonical text of a JSON value (jcs.h): members
 * sorted by the UTF-16 code units of their names, numbers printed as
 * ECMAScript's Number.prototype.toString prints a double (section 3.2.2.3),
 * strings escaped as JSON.stringify escapes them. What makes a pinned
 * tool definition's hash stable across the order of its members, its
 * whitespace and the spelling of its numbers (src/upstream/pin.c).
 *
 * Must never: grow its text past the caller's ceiling, or print a number
 * it did not check round-trips to the same double.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/jcs.h"
#include "util/utf8.h"

#define JCS_MAX_DEPTH 2048 /* jansson's own parser stops at the same depth */

struct jcs_buf {
	char *p;
	size_t len, cap, max;
	int fail;          /* 0, or the first enum jcs_fail */
};

static void put(struct jcs_buf *b, const char *s, size_t n)
{
	char *bigger;
	size_t cap;

	if (b->fail)
		return;
	if (n > b->max - b->len) {
		b->fail = JCS_TOO_LONG;
		return;
	}
	if (b->len + n + 1 > b->cap) {
		cap = b->cap ? b->cap : 256;
		while (cap < b->len + n + 1)
			cap *= 2;
		bigger = realloc(b->p, cap);
		if (!bigger) {
			b->fail = JCS_NOMEM;
			return;
		}
		b->p = bigger;
		b->cap = cap;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/* A string as JSON.stringify writes it: '"' and '\\' escaped, the five
 * control characters with a short escape so, the others as \u00xx in
 * lower case, every other character as its UTF-8 bytes. */
static void put_string(struct jcs_buf *b, const char *s, size_t n)
{
	size_t i, run = 0;
	char esc[8];

	put(b, "\"", 1);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		const char *short_esc = NULL;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		put(b, s + run, i - run);
		run = i + 1;
		switch (c) {
		case '"': short_esc = "\\\""; break;
		case '\\': short_esc = "\\\\"; break;
		case '\b': short_esc = "\\b"; break;
		case '\f': short_esc = "\\f"; break;
		case '\n': short_esc = "\\n"; break;
		case '\r': short_esc = "\\r"; break;
		case '\t': short_esc = "\\t"; break;
		default: break;
		}
		if (short_esc) {
			put(b, short_esc, 2);
		} else {
			snprintf(esc, sizeof(esc), "\\u%04x", c);
			put(b, esc, 6);
		}
	}
	put(b, s + run, n - run);
	put(b, "\"", 1);
}

/* A finite double as ECMAScript prints it: the fewest significant digits
 * that read back as the same double (the correctly rounded ones, so the
 * closest when several would), then plain notation for a decimal exponent
 * from -6 to 20, exponent notation (1e+21, 1.5e-7) outside it. */
static void put_number(struct jcs_buf *b, double d)
{
	char e[48], digits[24], out[48];
	const char *s;
	int p, k = 0, n, i, o = 0;

	if (!isfinite(d)) {
		if (!b->fail)
			b->fail = JCS_INVALID;
		return;
	}
	if (d == 0) { /* -0 too */
		put(b, "0", 1);
		return;
	}
	if (d < 0) {
		out[o++] = '-';
		d = -d;
	}
	for (p = 1; p <= 17; p++) {
		snprintf(e, sizeof(e), "%.*e", p - 1, d);
		if (strtod(e, NULL) == d)
			break;
	}
	for (s = e; *s && *s != 'e'; s++)
		if (*s >= '0' && *s <= '9')
			digits[k++] = *s;
	n = (int)strtol(*s ? s + 1 : "0", NULL, 10) + 1; /* the value is 0.DIGITS x 10^n */
	while (k > 1 && digits[k - 1] == '0')
		k--;
	if (k <= n && n <= 21) {
		memcpy(out + o, digits, (size_t)k);
		o += k;
		for (i = k; i < n; i++)
			out[o++] = '0';
	} else if (0 < n && n <= 21) {
		memcpy(out + o, digits, (size_t)n);
		o += n;
		out[o++] = '.';
		memcpy(out + o, digits + n, (size_t)(k - n));
		o += k - n;
	} else if (-6 < n && n <= 0) {
		out[o++] = '0';
		out[o++] = '.';
		for (i = 0; i < -n; i++)
			out[o++] = '0';
		memcpy(out + o, digits, (size_t)k);
		o += k;
	} else {
		out[o++] = digits[0];
		if (k > 1) {
			out[o++] = '.';
			memcpy(out + o, digits + 1, (size_t)(k - 1));
			o += k - 1;
		}
		o += snprintf(out + o, sizeof(out) - (size_t)o, "e%c%d", n - 1 < 0 ? '-' : '+',
			      abs(n - 1));
	}
	put(b, out, (size_t)o);
}

/* The first UTF-16 code unit of code point cp. */
static uint32_t utf16_lead(uint32_t cp)
{
	return cp >= 0x10000 ? 0xd800 + ((cp - 0x10000) >> 10) : cp;
}

/* Two member names in the order of their UTF-16 code units (RFC 8785
 * 3.2.3): the order of their code points but for those past U+FFFF,
 * whose surrogates sort before U+E000 to U+FFFF. */
static int name_cmp(const void *pa, const void *pb)
{
	const unsigned char *x = *(const unsigned char *const *)pa;
	const unsigned char *y = *(const unsigned char *const *)pb;
	size_t nx = strlen((const char *)x), ny = strlen((const char *)y), lx, ly;
	uint32_t cx, cy;

	while (nx && ny) {
		lx = utf8_char(x, nx, &cx);
		ly = utf8_char(y, ny, &cy);
		/* jansson holds only UTF-8; a stray byte sorts as itself */
		if (!lx) {
			cx = *x;
			lx = 1;
		}
		if (!ly) {
			cy = *y;
			ly = 1;
		}
		if (cx != cy) {
			if (utf16_lead(cx) != utf16_lead(cy))
				return utf16_lead(cx) < utf16_lead(cy) ? -1 : 1;
			return cx < cy ? -1 : 1;
		}
		x += lx;
		nx -= lx;
		y += ly;
		ny -= ly;
	}
	return nx ? 1 : ny ? -1 : 0;
}

static void put_value(struct jcs_buf *b, json_t *v, int depth);

static void put_object(struct jcs_buf *b, json_t *v, int depth)
{
	size_t n = json_object_size(v), i = 0;
	const char **names, *name;
	json_t *m;

	names = malloc((n ? n : 1) * sizeof(*names));
	if (!names) {
		b->fail = JCS_NOMEM;
		return;
	}
	json_object_foreach(v, name, m)
		names[i++] = name;
	qsort(names, n, sizeof(*names), name_cmp);
	put(b, "{", 1);
	for (i = 0; i < n && !b->fail; i++) {
		if (i)
			put(b, ",", 1);
		put_string(b, names[i], strlen(names[i]));
		put(b, ":", 1);
		put_value(b, json_object_get(v, names[i]), depth + 1);
	}
	put(b, "}", 1);
	free(names);
}

static void put_value(struct jcs_buf *b, json_t *v, int depth)
{
	size_t i;

	if (b->fail)
		return;
	if (depth > JCS_MAX_DEPTH) {
		b->fail = JCS_INVALID;
		return;
	}
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		put_object(b, v, depth);
		break;
	case JSON_ARRAY:
		put(b, "[", 1);
		for (i = 0; i < json_array_size(v) && !b->fail; i++) {
			if (i)
				put(b, ",", 1);
			put_value(b, json_array_get(v, i), depth + 1);
		}
		put(b, "]", 1);
		break;
	case JSON_STRING:
		/* a NUL is JSON (\u0000) but not a C string's: refused, as
		 * every name and text of the gateway refuses it */
		if (memchr(json_string_value(v), '\0', json_string_length(v)))
			b->fail = JCS_INVALID;
		else
			put_string(b, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		put_number(b, (double)json_integer_value(v));
		break;
	case JSON_REAL:
		put_number(b, json_real_value(v));
		break;
	case JSON_TRUE:
		put(b, "true", 4);
		break;
	case JSON_FALSE:
		put(b, "false", 5);
		break;
	case JSON_NULL:
		put(b, "null", 4);
		break;
	}
}

int jcs_dump(json_t *v, size_t max, char **out, size_t *len)
{
	struct jcs_buf b = { .max = max };

	*out = NULL;
	*len = 0;
	put_value(&b, v, 0);
	if (!b.fail && !b.p)
		b.fail = JCS_INVALID;
	if (b.fail) {
		free(b.p);
		return b.fail;
	}
	*out = b.p;
	*len = b.len;
	return 0;
}

json_t *jcs_load(const char *text, size_t len, char *why, size_t whylen)
{
	json_error_t je;
	json_t *v;

	/* every number a double, as JCS reads JSON (I-JSON, RFC 7493): an
	 * integer past 2^53 is the double nearest it; a name given twice
	 * is ambiguous, so refused rather than resolved */
	v = json_loadb(text, len, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL | JSON_REJECT_DUPLICATES,
		       &je);
	if (!v)
		snprintf(why, whylen, "not JSON at byte %d: %s", je.position, je.text);
	return v;
}

int jcs_text(const char *text, size_t len, size_t max, char **out, size_t *outlen, char *why,
	     size_t whylen)
{
	json_t *v = jcs_load(text, len, why, whylen);
	int rc;

	*out = NULL;
	*outlen = 0;
	if (!v)
		return JCS_INVALID;
	rc = jcs_dump(v, max, out, outlen);
	if (rc == JCS_INVALID)
		snprintf(why, whylen, "a value JCS cannot hold (a NUL in a string, or nested "
			 "deeper than %d)", JCS_MAX_DEPTH);
	json_decref(v);
	return rc;
}
