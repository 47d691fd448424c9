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
		if (ke - ks == klen && memcmp(t + ks, key, klen) == 0)
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
