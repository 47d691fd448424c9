/*
 * Where a JSON value lies in its text (json_span.h).
 */
#include <string.h>

#include "util/json_span.h"

static size_t skip_ws(const char *t, size_t n, size_t i)
{
	while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
		i++;
	return i;
}

/* t[i] is '"': the index past the closing quote, 0 when unterminated. */
static size_t skip_string(const char *t, size_t n, size_t i)
{
	for (i++; i < n; i++) {
		if (t[i] == '\\')
			i++;
		else if (t[i] == '"')
			return i + 1;
	}
	return 0;
}

size_t json_span_value(const char *t, size_t n, size_t pos, size_t *start)
{
	size_t i = skip_ws(t, n, pos), depth = 0;

	*start = i;
	if (i >= n)
		return 0;
	if (t[i] != '{' && t[i] != '[' && t[i] != '"') {
		while (i < n && !strchr(",]} \t\r\n:", t[i]))
			i++;
		return i > *start ? i : 0;
	}
	while (i < n) {
		if (t[i] == '"') {
			i = skip_string(t, n, i);
			if (!i)
				return 0;
		} else {
			if (t[i] == '{' || t[i] == '[')
				depth++;
			else if (t[i] == '}' || t[i] == ']')
				depth--;
			i++;
		}
		if (depth == 0)
			return i;
	}
	return 0;
}

size_t json_span_next(const char *t, size_t n, size_t i)
{
	size_t s;

	i = json_span_value(t, n, i, &s);
	if (!i)
		return 0;
	i = skip_ws(t, n, i);
	return i < n && t[i] == ',' ? i + 1 : 0;
}

/* The four hex digits at w[i] as OUT *cp; -1 when they are not. */
static int hex4(const char *w, size_t wn, size_t i, unsigned long *cp)
{
	size_t k;

	*cp = 0;
	if (i + 4 > wn)
		return -1;
	for (k = i; k < i + 4; k++) {
		char c = w[k];

		if (c >= '0' && c <= '9')
			*cp = *cp * 16 + (unsigned long)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*cp = *cp * 16 + (unsigned long)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*cp = *cp * 16 + (unsigned long)(c - 'A' + 10);
		else
			return -1;
	}
	return 0;
}

/* The escape at w[*i] ('\\') decoded into out (UTF-8), *i past it: its
 * length, 0 when it is not one (a lone surrogate included, as jansson
 * refuses it). */
static size_t unescape(const char *w, size_t wn, size_t *i, unsigned char *out)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	unsigned long cp, lo;
	const char *at;

	if (*i + 1 >= wn)
		return 0;
	if (w[*i + 1] != 'u') {
		at = memchr(from, w[*i + 1], sizeof(from) - 1);
		if (!at)
			return 0;
		out[0] = (unsigned char)to[at - from];
		*i += 2;
		return 1;
	}
	if (hex4(w, wn, *i + 2, &cp) < 0)
		return 0;
	*i += 6;
	if (cp >= 0xDC00 && cp <= 0xDFFF)
		return 0;
	if (cp >= 0xD800 && cp <= 0xDBFF) {
		if (*i + 1 >= wn || w[*i] != '\\' || w[*i + 1] != 'u' ||
		    hex4(w, wn, *i + 2, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF)
			return 0;
		*i += 6;
		cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
	}
	if (cp < 0x80) {
		out[0] = (unsigned char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (unsigned char)(0xC0 | (cp >> 6));
		out[1] = (unsigned char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (unsigned char)(0xE0 | (cp >> 12));
		out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
		out[2] = (unsigned char)(0x80 | (cp & 0x3F));
		return 3;
	}
	out[0] = (unsigned char)(0xF0 | (cp >> 18));
	out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
	out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
	out[3] = (unsigned char)(0x80 | (cp & 0x3F));
	return 4;
}

/* The name written as w[0, wn) (its escapes decoded) is key[0, klen). */
static int same_name(const char *w, size_t wn, const char *key, size_t klen)
{
	size_t i = 0, k = 0, no;
	unsigned char out[4];

	while (i < wn) {
		if (w[i] != '\\') {
			out[0] = (unsigned char)w[i++];
			no = 1;
		} else if (!(no = unescape(w, wn, &i, out))) {
			return 0;
		}
		if (k + no > klen || memcmp(key + k, out, no) != 0)
			return 0;
		k += no;
	}
	return k == klen;
}

size_t json_span_member(const char *t, size_t n, size_t pos, const char *key)
{
	size_t i = skip_ws(t, n, pos), klen = strlen(key), ks, ke;

	if (i >= n || t[i] != '{')
		return 0;
	for (i++;;) {
		i = skip_ws(t, n, i);
		if (i >= n || t[i] != '"')
			return 0;
		ks = i + 1;
		i = skip_string(t, n, i);
		if (!i)
			return 0;
		ke = i - 1; /* the closing quote */
		i = skip_ws(t, n, i);
		if (i >= n || t[i] != ':')
			return 0;
		if (same_name(t + ks, ke - ks, key, klen))
			return skip_ws(t, n, i + 1);
		i = json_span_next(t, n, i + 1);
		if (!i)
			return 0;
	}
}

size_t json_span_item(const char *t, size_t n, size_t pos, size_t idx)
{
	size_t i = skip_ws(t, n, pos), k;

	if (i >= n || t[i] != '[')
		return 0;
	i++;
	for (k = 0;; k++) {
		i = skip_ws(t, n, i);
		if (i >= n || t[i] == ']')
			return 0;
		if (k == idx)
			return i;
		i = json_span_next(t, n, i);
		if (!i)
			return 0;
	}
}
