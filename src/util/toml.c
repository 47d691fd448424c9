/*
 * The TOML subset of gitleaks configurations, read strictly (toml.h).
 *
 * One pass over the text, by hand: a document is small (TOML_MAX) and
 * its grammar is line-oriented. The tables a header may not open again
 * (defined by a header, by a dotted key, or inline) and the arrays a
 * [[header]] may append to are kept as nodes, at most TOML_TABLES_MAX,
 * in a table hashed by their address: a lookup is one probe or a few,
 * whatever the number of nodes (a linear search over 4,096 of them, per
 * part of every dotted key, took seconds on a 1 MiB document).
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/toml.h"
#include "util/utf8.h"

#define TOML_TABLES_MAX 4096 /* tables and arrays of tables a document makes */
#define TOML_SLOTS_BITS 13   /* 8,192 slots: twice TOML_TABLES_MAX */
#define TOML_SLOTS (1u << TOML_SLOTS_BITS)

/* What a node is to the headers and to the dotted keys. */
enum node_kind {
	NODE_IMPLICIT, /* made on the way to another by a header: a header may define it,
			  a dotted key add to it (then it is NODE_DOTTED) */
	NODE_HEADER,   /* defined by a header (or an element of [[...]]): a dotted key of
			  another table's section may not add to it (TOML 1.0, toml-test's
			  table/append-with-dotted-keys-*) */
	NODE_DOTTED,   /* defined by a dotted key: dotted keys add to it, no header defines it */
	NODE_INLINE,   /* an inline table: closed */
	NODE_AOT,      /* an array of tables [[...]] appends to */
};

struct node {
	json_t *v;
	enum node_kind kind;
};

struct tp {
	const char *s, *origin;
	size_t n, i, line_at; /* the text, where the reader is, where its line began */
	unsigned line;
	struct tg_error *err;
	size_t values, depth;
	struct node *nodes; /* TOML_SLOTS of them, hashed by v; v NULL: a free slot */
	size_t nnodes;
};

/* Where a key or a header began: errors about it are reported there. */
struct mark {
	size_t i, line_at;
	unsigned line;
};

static struct mark here(const struct tp *p)
{
	return (struct mark){ p->i, p->line_at, p->line };
}

static void back(struct tp *p, const struct mark *m)
{
	p->i = m->i;
	p->line_at = m->line_at;
	p->line = m->line;
}

static int bad(struct tp *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int bad(struct tp *p, const char *fmt, ...)
{
	char why[400];
	unsigned col = 1;
	va_list ap;

	/* the column in characters: UTF-8's continuation bytes not counted */
	for (size_t k = p->line_at; k < p->i && k < p->n; k++)
		col += ((unsigned char)p->s[k] & 0xC0) != 0x80;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return tg_error_set(p->err, TG_ERR_INVALID, "%s: line %u, column %u: %s", p->origin,
			    p->line, col, why);
}

static int nomem(struct tp *p)
{
	return tg_error_set(p->err, TG_ERR_NOMEM, "out of memory");
}

static int peek(const struct tp *p, size_t k)
{
	return p->i + k < p->n ? (unsigned char)p->s[p->i + k] : -1;
}

static int starts(const struct tp *p, const char *w)
{
	size_t l = strlen(w);

	return p->n - p->i >= l && memcmp(p->s + p->i, w, l) == 0;
}

static void newline(struct tp *p)
{
	p->line++;
	p->line_at = p->i;
}

/* Spaces and tabs. */
static void blank(struct tp *p)
{
	while (peek(p, 0) == ' ' || peek(p, 0) == '\t')
		p->i++;
}

/* A comment to its line's end (not the newline): 0, or -1 for a control
 * character in it. */
static int comment(struct tp *p)
{
	if (peek(p, 0) != '#')
		return 0;
	for (; p->i < p->n && p->s[p->i] != '\n'; p->i++) {
		unsigned char c = (unsigned char)p->s[p->i];

		if ((c < 0x20 && c != '\t' && !(c == '\r' && peek(p, 1) == '\n')) || c == 0x7f)
			return bad(p, "a control character in a comment");
	}
	return 0;
}

/* Blanks, comments and newlines. */
static int between(struct tp *p)
{
	for (;;) {
		blank(p);
		if (comment(p) < 0)
			return -1;
		if (starts(p, "\r\n"))
			p->i++;
		if (peek(p, 0) != '\n')
			return 0;
		p->i++;
		newline(p);
	}
}

/* The end of a line after a key's value or a header. */
static int line_end(struct tp *p)
{
	blank(p);
	if (comment(p) < 0)
		return -1;
	if (starts(p, "\r\n"))
		p->i++;
	if (p->i < p->n && peek(p, 0) != '\n')
		return bad(p, "more on the line after the value (one key = value a line)");
	return 0;
}

/* v's first slot (Fibonacci hashing of its address); linear probing from there. */
static size_t slot(const json_t *v)
{
	return (size_t)(((uint64_t)(uintptr_t)v * 0x9E3779B97F4A7C15ull) >> (64 - TOML_SLOTS_BITS));
}

static struct node *node_of(struct tp *p, const json_t *v)
{
	for (size_t k = slot(v);; k = (k + 1) & (TOML_SLOTS - 1)) {
		if (p->nodes[k].v == v)
			return &p->nodes[k];
		if (!p->nodes[k].v)
			return NULL;
	}
}

/* v noted as a node of kind; -1 past TOML_TABLES_MAX (the slots at most
 * half full, a free one always ends a probe). */
static int node_add(struct tp *p, json_t *v, enum node_kind kind)
{
	size_t k = slot(v);

	if (p->nnodes == TOML_TABLES_MAX)
		return bad(p, "more than %d tables", TOML_TABLES_MAX);
	while (p->nodes[k].v)
		k = (k + 1) & (TOML_SLOTS - 1);
	p->nodes[k] = (struct node){ v, kind };
	p->nnodes++;
	return 0;
}

static int hex(int c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* One \ escape of a basic string, after the backslash, appended to out. */
static int escape(struct tp *p, char *out, size_t *o)
{
	static const char from[] = "btnfr\"\\", to[] = "\b\t\n\f\r\"\\";
	int c = peek(p, 0), digits;
	const char *e = c > 0 ? strchr(from, c) : NULL;
	unsigned long u = 0;

	if (e) {
		out[(*o)++] = to[e - from];
		p->i++;
		return 0;
	}
	if (c != 'u' && c != 'U')
		return bad(p, "an escape TOML does not have (\\b \\t \\n \\f \\r \\\" \\\\ \\uXXXX "
			   "\\UXXXXXXXX)");
	digits = c == 'u' ? 4 : 8;
	for (int k = 1; k <= digits; k++) {
		int h = peek(p, (size_t)k), d = hex(h);

		if (d < 0)
			return bad(p, "\\%c needs %d hexadecimal digits", c, digits);
		u = u * 16 + (unsigned long)d;
	}
	if (u > 0x10FFFF || (u >= 0xD800 && u <= 0xDFFF))
		return bad(p, "\\%c%0*lX is not a Unicode scalar value", c, digits, u);
	p->i += (size_t)digits + 1;
	if (u < 0x80) {
		out[(*o)++] = (char)u;
	} else if (u < 0x800) {
		out[(*o)++] = (char)(0xC0 | (u >> 6));
		out[(*o)++] = (char)(0x80 | (u & 0x3F));
	} else if (u < 0x10000) {
		out[(*o)++] = (char)(0xE0 | (u >> 12));
		out[(*o)++] = (char)(0x80 | ((u >> 6) & 0x3F));
		out[(*o)++] = (char)(0x80 | (u & 0x3F));
	} else {
		out[(*o)++] = (char)(0xF0 | (u >> 18));
		out[(*o)++] = (char)(0x80 | ((u >> 12) & 0x3F));
		out[(*o)++] = (char)(0x80 | ((u >> 6) & 0x3F));
		out[(*o)++] = (char)(0x80 | (u & 0x3F));
	}
	return 0;
}

/* A string of any of the four kinds at the reader: OUT *out (malloc'd,
 * NUL-terminated, *len bytes). */
static int string(struct tp *p, char **out, size_t *len)
{
	int lit = peek(p, 0) == '\'', multi = starts(p, lit ? "'''" : "\"\"\"");
	const char *quote = lit ? (multi ? "'''" : "'") : (multi ? "\"\"\"" : "\"");
	size_t o = 0, cap = 64;
	/* grown as it fills (not sized to the rest of the document: a
	 * document of many short strings would allocate it once each) */
	char *buf = malloc(cap);

	if (!buf)
		return nomem(p);
	p->i += strlen(quote);
	/* a newline right after the opening quotes of a multi-line one is not in it */
	if (multi && starts(p, "\r\n"))
		p->i++;
	if (multi && peek(p, 0) == '\n') {
		p->i++;
		newline(p);
	}
	for (;;) {
		int c = peek(p, 0);

		/* one turn writes at most 4 bytes (an escape; a closing quote
		 * and 2 more), the NUL after them fits */
		if (cap - o < 5) {
			char *more = realloc(buf, cap * 2);

			if (!more) {
				free(buf);
				return nomem(p);
			}
			buf = more;
			cap *= 2;
		}
		if (c < 0) {
			free(buf);
			return bad(p, "a string not closed (%s)", quote);
		}
		if (starts(p, quote)) {
			p->i += strlen(quote);
			/* '''a'''' is a' : up to two quotes more belong to it */
			for (int k = 0; multi && k < 2 && peek(p, 0) == quote[0]; k++)
				buf[o++] = (char)p->s[p->i++];
			break;
		}
		if (c == '\n' && multi) {
			buf[o++] = '\n';
			p->i++;
			newline(p);
			continue;
		}
		if ((c < 0x20 && c != '\t' && !(multi && c == '\r' && peek(p, 1) == '\n')) ||
		    c == 0x7f) {
			free(buf);
			return bad(p, c == '\n' ? "a string not closed on its line"
					       : "a control character in a string (write it escaped)");
		}
		if (c == '\\' && !lit) {
			p->i++;
			if (multi && (peek(p, 0) == '\n' || peek(p, 0) == ' ' || peek(p, 0) == '\t' ||
				      starts(p, "\r\n"))) {
				/* a line-ending backslash: the blanks and newlines after it go */
				size_t at = p->i;

				blank(p);
				if (!(starts(p, "\r\n") || peek(p, 0) == '\n')) {
					p->i = at;
					free(buf);
					return bad(p, "a backslash before blanks that do not end the line");
				}
				/* a CR only before an LF: a lone one is a control character */
				while (peek(p, 0) == ' ' || peek(p, 0) == '\t' || peek(p, 0) == '\n' ||
				       starts(p, "\r\n")) {
					if (peek(p, 0) == '\n') {
						p->i++;
						newline(p);
					} else {
						p->i++;
					}
				}
				continue;
			}
			if (escape(p, buf, &o) < 0) {
				free(buf);
				return -1;
			}
			continue;
		}
		buf[o++] = (char)c;
		p->i++;
	}
	buf[o] = '\0';
	*out = buf;
	*len = o;
	return 0;
}

/* One part of a key: bare, or quoted. OUT key[TOML_KEY_MAX + 1]. */
static int key_part(struct tp *p, char *key)
{
	size_t l = 0;

	if (peek(p, 0) == '"' || peek(p, 0) == '\'') {
		char *s;

		if (starts(p, "'''") || starts(p, "\"\"\""))
			return bad(p, "a key cannot be a multi-line string");
		if (string(p, &s, &l) < 0)
			return -1;
		if (l > TOML_KEY_MAX || memchr(s, '\0', l)) {
			free(s);
			return bad(p, "a key over %d bytes, or with a NUL", TOML_KEY_MAX);
		}
		memcpy(key, s, l + 1);
		free(s);
		return 0;
	}
	while (p->i < p->n && (strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
				      "0123456789_-", p->s[p->i]) && p->s[p->i])) {
		if (l == TOML_KEY_MAX)
			return bad(p, "a key over %d bytes", TOML_KEY_MAX);
		key[l++] = p->s[p->i++];
	}
	if (!l)
		return bad(p, "a key expected (letters, digits, _ and -, or quoted)");
	key[l] = '\0';
	return 0;
}

/* A dotted key: its parts, at most TOML_DEPTH_MAX. */
struct dkey {
	char part[TOML_DEPTH_MAX][TOML_KEY_MAX + 1];
	size_t n;
};

static int dotted_key(struct tp *p, struct dkey *k)
{
	k->n = 0;
	for (;;) {
		blank(p);
		if (k->n == TOML_DEPTH_MAX)
			return bad(p, "a key of more than %d parts", TOML_DEPTH_MAX);
		if (key_part(p, k->part[k->n++]) < 0)
			return -1;
		blank(p);
		if (peek(p, 0) != '.')
			return 0;
		p->i++;
	}
}

static int value(struct tp *p, json_t **out);

/* How many of buf[0, n) lead as decimal digits. */
static size_t memspn_digits(const char *buf, size_t n)
{
	size_t k = 0;

	while (k < n && buf[k] >= '0' && buf[k] <= '9')
		k++;
	return k;
}

/* A number, or what the subset leaves out named. */
static int number(struct tp *p, json_t **out)
{
	char buf[128], *end;
	size_t l = 0, at = p->i;
	int fl = 0;

	if (starts(p, "inf") || starts(p, "nan") || starts(p, "+inf") || starts(p, "-inf") ||
	    starts(p, "+nan") || starts(p, "-nan"))
		return bad(p, "inf and nan are not in the subset of TOML this reads");
	if (starts(p, "0x") || starts(p, "0o") || starts(p, "0b"))
		return bad(p, "hexadecimal, octal and binary integers are not in the subset of TOML "
			   "this reads");
	while (p->i < p->n && strchr("0123456789+-._eE:", p->s[p->i]) && p->s[p->i]) {
		char c = p->s[p->i++];

		/* 07:32:00, 1979-05-27 (1.5e-3 and 100e-5 are floats) */
		if (c == ':' || (c == '-' && l == 4 && memspn_digits(buf, 4) == 4))
			return bad(p, "dates and times are not in the subset of TOML this reads");
		if (c == '_') {
			/* between two digits only */
			if (!l || buf[l - 1] < '0' || buf[l - 1] > '9' || peek(p, 0) < '0' ||
			    peek(p, 0) > '9')
				return bad(p, "an underscore in a number goes between two digits");
			continue;
		}
		if (l == sizeof(buf) - 1)
			return bad(p, "a number over %zu characters", sizeof(buf) - 1);
		fl |= c == '.' || c == 'e' || c == 'E';
		buf[l++] = c;
	}
	buf[l] = '\0';
	{
		/* no leading zero, a digit either side of a point */
		const char *d = buf + (buf[0] == '+' || buf[0] == '-');
		const char *dot = strchr(buf, '.');

		if (!*d || *d < '0' || *d > '9' || (d[0] == '0' && d[1] >= '0' && d[1] <= '9') ||
		    (dot && (dot == d || dot[1] < '0' || dot[1] > '9'))) {
			p->i = at;
			return bad(p, "not a value (a string, a number, true, false, an array or a "
				   "table)");
		}
	}
	errno = 0;
	if (fl) {
		double v = strtod(buf, &end);

		/* errno not asked: ERANGE also stands for a subnormal (1e-320) or
		 * an underflow to 0, which TOML rounds; an overflow is inf */
		if (*end || !isfinite(v)) {
			p->i = at;
			return bad(p, "not a number TOML reads, or out of range: %s", buf);
		}
		*out = json_real(v);
	} else {
		long long v = strtoll(buf, &end, 10);

		if (*end || errno) {
			p->i = at;
			return bad(p, "not an integer TOML reads, or out of 64 bits: %s", buf);
		}
		*out = json_integer(v);
	}
	return *out ? 0 : nomem(p);
}

/* An array: values over lines, a trailing comma, comments between. */
static int array(struct tp *p, json_t **out)
{
	json_t *a = json_array();

	if (!a)
		return nomem(p);
	p->i++;
	for (;;) {
		json_t *v;

		if (between(p) < 0)
			goto fail;
		if (peek(p, 0) == ']') {
			p->i++;
			*out = a;
			return 0;
		}
		if (value(p, &v) < 0)
			goto fail;
		if (json_array_append_new(a, v) < 0) {
			nomem(p);
			goto fail;
		}
		if (between(p) < 0)
			goto fail;
		if (peek(p, 0) == ',') {
			p->i++;
			continue;
		}
		if (peek(p, 0) != ']') {
			bad(p, "an array's values are separated by commas and end with ]");
			goto fail;
		}
	}
fail:
	json_decref(a);
	return -1;
}

static int assign(struct tp *p, json_t *table, const struct dkey *k, const struct mark *m,
		  json_t *v);

/* An inline table: { key = value, ... } on one line, closed. */
static int inline_table(struct tp *p, json_t **out)
{
	json_t *t = json_object();
	struct dkey *k = malloc(sizeof(*k));

	if (!t || !k || node_add(p, t, NODE_INLINE) < 0) {
		json_decref(t);
		free(k);
		return t && k ? -1 : nomem(p);
	}
	p->i++;
	blank(p);
	if (peek(p, 0) == '}') {
		p->i++;
		goto done;
	}
	for (;;) {
		json_t *v;
		struct mark m;

		blank(p);
		m = here(p);
		if (dotted_key(p, k) < 0)
			goto fail;
		if (peek(p, 0) != '=') {
			bad(p, "= expected after a key");
			goto fail;
		}
		p->i++;
		blank(p);
		if (value(p, &v) < 0 || assign(p, t, k, &m, v) < 0)
			goto fail;
		blank(p);
		if (peek(p, 0) == ',') {
			p->i++;
			blank(p);
			continue;
		}
		if (peek(p, 0) != '}') {
			bad(p, "an inline table's keys are separated by commas and end with } on "
			       "the same line");
			goto fail;
		}
		p->i++;
		break;
	}
done:
	free(k);
	/* closed: a NODE_INLINE from the start, nothing may add to it now */
	*out = t;
	return 0;
fail:
	free(k);
	json_decref(t);
	return -1;
}

static int value(struct tp *p, json_t **out)
{
	int c = peek(p, 0), rc;

	*out = NULL;
	if (++p->values > TOML_VALUES_MAX)
		return bad(p, "more than %d values", TOML_VALUES_MAX);
	if (p->depth == TOML_DEPTH_MAX)
		return bad(p, "arrays and tables more than %d deep", TOML_DEPTH_MAX);
	if (c == '"' || c == '\'') {
		char *s;
		size_t l;

		if (string(p, &s, &l) < 0)
			return -1;
		if (memchr(s, '\0', l)) {
			free(s);
			return bad(p, "a NUL (\\u0000) in a string");
		}
		*out = json_stringn(s, l);
		free(s);
		return *out ? 0 : nomem(p);
	}
	if (starts(p, "true") || starts(p, "false")) {
		p->i += c == 't' ? 4 : 5;
		*out = json_boolean(c == 't');
		return 0;
	}
	p->depth++;
	rc = c == '[' ? array(p, out) : c == '{' ? inline_table(p, out) : 1;
	p->depth--;
	if (rc <= 0)
		return rc;
	return number(p, out);
}

/* The table of the dotted key's prefix under table, made (defined) on
 * the way; then v (taken) at its last part, which must be new. Errors at
 * m, where the key began. */
static int assign(struct tp *p, json_t *table, const struct dkey *k, const struct mark *m,
		  json_t *v)
{
	for (size_t i = 0; i + 1 < k->n; i++) {
		json_t *next = json_object_get(table, k->part[i]);
		struct node *nd = next ? node_of(p, next) : NULL;

		if (!next) {
			next = json_object();
			if (!next || json_object_set_new(table, k->part[i], next) < 0) {
				json_decref(v);
				return nomem(p);
			}
			if (node_add(p, next, NODE_DOTTED) < 0) {
				json_decref(v);
				return -1;
			}
		} else if (nd && nd->kind == NODE_HEADER) {
			json_decref(v);
			back(p, m);
			return bad(p, "table %s was defined by a header: a dotted key may not add to it",
				   k->part[i]);
		} else if (!json_is_object(next) || !nd ||
			   (nd->kind != NODE_IMPLICIT && nd->kind != NODE_DOTTED)) {
			json_decref(v);
			back(p, m);
			return bad(p, "%s is a value already, not a table a dotted key may add to",
				   k->part[i]);
		} else {
			/* defined now: no header may define it after */
			nd->kind = NODE_DOTTED;
		}
		table = next;
	}
	if (json_object_get(table, k->part[k->n - 1])) {
		json_decref(v);
		back(p, m);
		return bad(p, "key %s given twice", k->part[k->n - 1]);
	}
	if (json_object_set_new(table, k->part[k->n - 1], v) < 0)
		return nomem(p);
	return 0;
}

/* A header, [a.b] or [[a.b]]: OUT *cur the table its keys go into. */
static int header(struct tp *p, json_t *root, json_t **cur)
{
	int aot = starts(p, "[[");
	struct dkey *k = malloc(sizeof(*k));
	json_t *t = root, *next;
	struct node *nd;
	struct mark m = here(p);
	int rc = -1;

	if (!k)
		return nomem(p);
	p->i += aot ? 2 : 1;
	if (dotted_key(p, k) < 0)
		goto out;
	if (!starts(p, aot ? "]]" : "]")) {
		bad(p, "%s expected to close the header", aot ? "]]" : "]");
		goto out;
	}
	p->i += aot ? 2 : 1;
	for (size_t i = 0; i < k->n; i++) {
		int last = i + 1 == k->n;

		next = json_object_get(t, k->part[i]);
		nd = next ? node_of(p, next) : NULL;
		if (!next) {
			next = last && aot ? json_array() : json_object();
			if (!next || json_object_set_new(t, k->part[i], next) < 0) {
				nomem(p);
				goto out;
			}
			if (node_add(p, next, last ? (aot ? NODE_AOT : NODE_HEADER)
						   : NODE_IMPLICIT) < 0)
				goto out;
			nd = node_of(p, next);
		} else if (!nd || nd->kind == NODE_INLINE) {
			back(p, &m);
			bad(p, "%s is a value already, not a table", k->part[i]);
			goto out;
		} else if (last && aot != (nd->kind == NODE_AOT)) {
			back(p, &m);
			bad(p, aot ? "%s is a table, not an array of tables"
				   : "%s is an array of tables: [[%s]] adds one",
			    k->part[i], k->part[i]);
			goto out;
		} else if (last && !aot) {
			if (nd->kind != NODE_IMPLICIT) {
				back(p, &m);
				bad(p, "table %s defined twice", k->part[i]);
				goto out;
			}
			nd->kind = NODE_HEADER;
		}
		if (nd->kind == NODE_AOT) {
			if (last) {
				json_t *el = json_object();

				if (!el || json_array_append_new(next, el) < 0) {
					nomem(p);
					goto out;
				}
				if (node_add(p, el, NODE_HEADER) < 0)
					goto out;
				next = el;
			} else {
				next = json_array_get(next, json_array_size(next) - 1);
			}
		}
		t = next;
	}
	*cur = t;
	rc = line_end(p);
out:
	free(k);
	return rc;
}

/* The document's lines, each a header or a key = value. */
static int document(struct tp *p, json_t *root)
{
	json_t *cur = root;
	struct dkey *k = malloc(sizeof(*k));
	int rc = -1;

	if (!k)
		return nomem(p);
	for (;;) {
		json_t *v;
		struct mark m;

		if (between(p) < 0)
			break;
		if (p->i >= p->n) {
			rc = 0;
			break;
		}
		if (peek(p, 0) == '[') {
			if (header(p, root, &cur) < 0)
				break;
			continue;
		}
		m = here(p);
		if (dotted_key(p, k) < 0)
			break;
		if (peek(p, 0) != '=') {
			bad(p, "= expected after a key");
			break;
		}
		p->i++;
		blank(p);
		if (value(p, &v) < 0 || assign(p, cur, k, &m, v) < 0 || line_end(p) < 0)
			break;
	}
	free(k);
	return rc;
}

int toml_parse(const char *text, size_t len, const char *origin, json_t **out,
	       struct tg_error *err)
{
	struct tp p = { text, origin, len, 0, 0, 1, err, 0, 0, NULL, 0 };
	json_t *root;
	int rc;

	*out = NULL;
	tg_error_clear(err);
	if (len > TOML_MAX)
		return tg_error_set(err, TG_ERR_LIMIT, "%s: larger than %u bytes", origin, TOML_MAX);
	if (memchr(text, '\0', len) || !utf8_valid(text, len))
		return tg_error_set(err, TG_ERR_INVALID, "%s: not UTF-8 text (or a NUL in it)",
				    origin);
	/* a byte order mark (toml-test's utf8-bom-*: editors write one) */
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		p.i = p.line_at = 3;
	root = json_object();
	p.nodes = calloc(TOML_SLOTS, sizeof(*p.nodes));
	if (!root || !p.nodes || node_add(&p, root, NODE_HEADER) < 0) {
		json_decref(root);
		free(p.nodes);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	rc = document(&p, root);
	free(p.nodes);
	if (rc < 0) {
		json_decref(root);
		return -1;
	}
	*out = root;
	return 0;
}
