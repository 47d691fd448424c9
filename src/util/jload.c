/*
 * The loaders' shared readers (util/jload.h). Never: echo a key's
 * control bytes into a message, or keep a string longer than asked.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/jload.h"

int jload_bad(const struct jload *l, const char *field, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return tg_error_set(l->err, TG_ERR_INVALID, "%s %s: %s: %s", l->kind, l->origin, field,
			    msg);
}

int jload_nomem(const struct jload *l)
{
	return tg_error_set(l->err, TG_ERR_NOMEM, "out of memory");
}

void jload_field(char *buf, size_t size, const char *where, const char *key)
{
	size_t n, i;

	/* a path cut short still names where it starts */
	n = (size_t)snprintf(buf, size, "%s%s", where, where[0] ? "." : "");
	if (n >= size) {
		buf[size - 1] = '\0';
		return;
	}
	for (i = 0; key[i] && i < 200 && n + 5 < size; i++) {
		unsigned char c = (unsigned char)key[i];

		if (c < 0x20 || c == 0x7f)
			n += (size_t)snprintf(buf + n, size - n, "\\x%02x", c);
		else
			buf[n++] = (char)c;
	}
	buf[n] = '\0';
}

size_t jload_distance(const char *a, const char *b)
{
	size_t row[JLOAD_NEAR_MAX + 1], la = strlen(a), lb = strlen(b), i, j, diag, up;

	if (la > JLOAD_NEAR_MAX || lb > JLOAD_NEAR_MAX)
		return (size_t)-1;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		diag = row[0];
		row[0] = i;
		for (j = 1; j <= lb; j++) {
			up = row[j];
			row[j] = diag + (tolower((unsigned char)a[i - 1]) !=
					 tolower((unsigned char)b[j - 1]));
			if (up + 1 < row[j])
				row[j] = up + 1;
			if (row[j - 1] + 1 < row[j])
				row[j] = row[j - 1] + 1;
			diag = up;
		}
	}
	return row[lb];
}

const char *jload_nearest(const char *word, const char *const *names)
{
	const char *best = NULL;
	size_t i, d, bestd = 3;

	/* a slip of a key or two (a typo, camelCase for snake_case), never
	 * a guess at a word of a different length and sense */
	for (i = 0; names[i]; i++) {
		d = jload_distance(word, names[i]);
		if (d < bestd && 2 * d <= strlen(names[i])) {
			best = names[i];
			bestd = d;
		}
	}
	return best;
}

int jload_only(const struct jload *l, json_t *obj, const char *where,
	       const char *const *allowed)
{
	const char *key, *near;
	json_t *v;
	size_t i;

	json_object_foreach(obj, key, v) {
		for (i = 0; allowed[i]; i++)
			if (strcmp(key, allowed[i]) == 0)
				break;
		if (!allowed[i]) {
			char field[JLOAD_MAX_FIELD];

			jload_field(field, sizeof(field), where, key);
			near = jload_nearest(key, allowed);
			if (near)
				return jload_bad(l, field, "unknown field (did you mean \"%s\"?)",
						 near);
			return jload_bad(l, field, "unknown field");
		}
	}
	return 0;
}

int jload_string(const struct jload *l, json_t *v, const char *field, size_t max, char **out)
{
	*out = NULL;
	if (!json_is_string(v))
		return jload_bad(l, field, "must be a string");
	if (json_string_length(v) > max || strlen(json_string_value(v)) != json_string_length(v))
		return jload_bad(l, field, "longer than %zu bytes or holds NUL", max);
	*out = strdup(json_string_value(v));
	return *out ? 0 : jload_nomem(l);
}

int jload_bool(const struct jload *l, json_t *obj, const char *key, const char *field, int *out)
{
	json_t *v = json_object_get(obj, key);

	if (v && !json_is_boolean(v))
		return jload_bad(l, field, "must be true or false");
	*out = json_is_true(v);
	return 0;
}

void jload_strv_free(char **v)
{
	size_t i;

	for (i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}
