/*
 * An operator's rules are written for gitleaks, in Go's regular
 * expression syntax (RE2); toolgate matches them with PCRE2. This file
 * reads an RE2 expression and writes the PCRE2 pattern that matches the
 * same strings, or refuses it, naming the construct and its byte: never
 * a pattern PCRE2 would read differently (docs/REDACTION.md, "gitleaks
 * configurations").
 *
 * Where the two differ and what is done:
 *   - \s is [\t\n\f\r ] in Go, and holds \v in PCRE2: written out;
 *   - \v is the vertical tab in Go, a class in PCRE2: written \x{0b};
 *   - \0, \0o, \0oo are octal in Go: written \x{..}; \1 to \9 (a
 *     back-reference in PCRE2, an error or octal in Go) are refused;
 *   - a literal '{' is escaped, so no PCRE2 version reads it as a
 *     quantifier Go does not have ({,n});
 *   - $ is the end of the text (PCRE2_DOLLAR_ENDONLY, set at compile).
 * Refused because Go refuses them (a gitleaks configuration cannot hold
 * them, and PCRE2 would give them a meaning): lookaround, atomic and
 * possessive forms, recursion, conditionals, backtracking verbs, inline
 * comments, (?x) and flags other than i, m, s, U, escapes RE2 lacks
 * (\Z \G \K \R \h \e \c ...), a repetition of a repetition, and a count
 * over 1000. The rest (classes, \pN, \Q...\E, named groups, flags) has
 * the same meaning in both and is copied.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "obs/redact_int.h"

/* \s of Go, as class members and as a negated set of ranges */
#define GO_SPACE "\\t\\n\\f\\r "
#define GO_NOT_SPACE "\\x{00}-\\x{08}\\x{0b}\\x{0e}-\\x{1f}\\x{21}-\\x{10ffff}"

struct tr {
	const char *re;
	size_t n, i;
	char *out;
	size_t len, cap;
	const char *what; /* for errors: "rule aws-key: regex" */
	struct tg_error *err;
	int empty_q; /* the last item was an empty \Q\E (it leaves nothing) */
};

static int put(struct tr *t, const char *s, size_t n)
{
	if (t->len + n + 1 > t->cap)
		return tg_error_set(t->err, TG_ERR_INVALID, "%s: too long once translated", t->what);
	memcpy(t->out + t->len, s, n);
	t->len += n;
	t->out[t->len] = '\0';
	return 0;
}

static int puts_(struct tr *t, const char *s)
{
	return put(t, s, strlen(s));
}

static int refuse(struct tr *t, size_t at, const char *why)
{
	return tg_error_set(t->err, TG_ERR_INVALID,
			    "%s: %s at byte %zu: not RE2 (Go's syntax, which gitleaks reads)", t->what,
			    why, at + 1);
}

static int is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* \x: two hex digits, or {hex} up to 10FFFF. */
static int esc_hex(struct tr *t, size_t at)
{
	size_t j = t->i;

	if (j < t->n && t->re[j] == '{') {
		unsigned long v = 0;
		size_t k = j + 1;

		while (k < t->n && is_hex(t->re[k]) && k - j <= 8) {
			v = v * 16 + (unsigned long)(t->re[k] <= '9' ? t->re[k] - '0' : (t->re[k] | 0x20) - 'a' + 10);
			k++;
		}
		if (k == j + 1 || k >= t->n || t->re[k] != '}' || v > 0x10FFFF)
			return refuse(t, at, "a \\x{...} escape that is not a code point");
		t->i = k + 1;
		return put(t, t->re + at, t->i - at);
	}
	if (j + 1 < t->n && is_hex(t->re[j]) && is_hex(t->re[j + 1])) {
		t->i = j + 2;
		return put(t, t->re + at, 4);
	}
	return refuse(t, at, "a \\x escape without two hex digits");
}

/* An escape at t->re[at] (the backslash), t->i past its letter; in a
 * class or not. */
static int escape(struct tr *t, size_t at, int in_class)
{
	char c = t->re[at + 1];
	char buf[32];

	switch (c) {
	case 'a': case 'f': case 't': case 'n': case 'r':
	case 'd': case 'D': case 'w': case 'W':
		return put(t, t->re + at, 2);
	case 'A': case 'z': case 'b': case 'B':
		if (in_class)
			return refuse(t, at, "an assertion escape inside a class");
		return put(t, t->re + at, 2);
	case 'v':
		return puts_(t, "\\x{0b}");
	case 's':
		return puts_(t, in_class ? GO_SPACE : "[" GO_SPACE "]");
	case 'S':
		return puts_(t, in_class ? GO_NOT_SPACE : "[" GO_NOT_SPACE "]");
	case 'x':
		return esc_hex(t, at);
	case '0': {
		unsigned v = 0;
		size_t k = t->i;

		while (k < t->n && k - t->i < 2 && t->re[k] >= '0' && t->re[k] <= '7')
			v = v * 8 + (unsigned)(t->re[k++] - '0');
		t->i = k;
		snprintf(buf, sizeof(buf), "\\x{%02x}", v);
		return puts_(t, buf);
	}
	case 'p': case 'P': {
		size_t k = t->i;

		if (k < t->n && t->re[k] == '{') {
			/* a Unicode class or script name, as Go knows them:
			 * letters, '_' and a leading '^' (PCRE2's own Xan, L&,
			 * bidi classes... are not Go's) */
			size_t nm = k + 1 + (k + 1 < t->n && t->re[k + 1] == '^');

			while (k < t->n && t->re[k] != '}')
				k++;
			if (k >= t->n)
				return refuse(t, at, "a \\p{ without its }");
			if (k == nm || (t->re[nm] == 'X' && k - nm == 3))
				return refuse(t, at, "a \\p{...} class Go does not have");
			for (size_t j = nm; j < k; j++)
				if (!((t->re[j] >= 'a' && t->re[j] <= 'z') || (t->re[j] >= 'A' && t->re[j] <= 'Z') ||
				      t->re[j] == '_'))
					return refuse(t, at, "a \\p{...} class Go does not have");
			k++;
		} else if (k < t->n && ((t->re[k] >= 'A' && t->re[k] <= 'Z') || (t->re[k] >= 'a' && t->re[k] <= 'z'))) {
			k++;
		} else {
			return refuse(t, at, "a \\p without a class name");
		}
		t->i = k;
		return put(t, t->re + at, k - at);
	}
	case 'Q':
		if (in_class)
			return refuse(t, at, "\\Q inside a class");
		{
			const char *e = memmem(t->re + t->i, t->n - t->i, "\\E", 2);
			size_t end = e ? (size_t)(e - t->re) : t->n;

			/* literal text, copied between PCRE2's own \Q and \E;
			 * an empty one is nothing in both, but a repetition
			 * after it repeats what came before in Go ("a*\Q\E+"
			 * is (a*)+) and makes a possessive or lazy form in
			 * PCRE2: refused in the main loop */
			t->empty_q = end == t->i;
			if (!t->empty_q &&
			    (puts_(t, "\\Q") < 0 || put(t, t->re + t->i, end - t->i) < 0 || puts_(t, "\\E") < 0))
				return -1;
			t->i = e ? end + 2 : t->n;
			return 0;
		}
	default:
		break;
	}
	if (c >= '1' && c <= '9')
		return refuse(t, at, "a back-reference (or an octal escape not starting \\0)");
	if ((unsigned char)c < 0x80 && !((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) &&
	    c >= 0x20)
		return put(t, t->re + at, 2); /* escaped punctuation: itself */
	snprintf(buf, sizeof(buf), "the escape \\%c", c >= 0x21 && c < 0x7f ? c : '?');
	return refuse(t, at, buf);
}

/* A group's opening at t->re[at] == '(' (t->i past it). */
static int group_open(struct tr *t, size_t at)
{
	size_t k = t->i;

	if (k < t->n && t->re[k] == '*')
		return refuse(t, at, "a backtracking verb (*...)");
	if (k >= t->n || t->re[k] != '?')
		return put(t, "(", 1);
	k++;
	if (k < t->n && t->re[k] == ':') {
		t->i = k + 1;
		return put(t, "(?:", 3);
	}
	if (k < t->n && (t->re[k] == 'P' || t->re[k] == '<')) {
		size_t s = t->re[k] == 'P' ? k + 1 : k;

		if (s < t->n && t->re[s] == '<' && s + 1 < t->n && t->re[s + 1] != '=' && t->re[s + 1] != '!') {
			size_t e = s + 1;

			while (e < t->n && t->re[e] != '>')
				e++;
			if (e >= t->n || e == s + 1)
				return refuse(t, at, "a named group without its name");
			t->i = e + 1;
			if (puts_(t, "(?<") < 0 || put(t, t->re + s + 1, e - s - 1) < 0)
				return -1;
			return put(t, ">", 1);
		}
		if (s < t->n && t->re[s] == '<')
			return refuse(t, at, "a lookbehind (?<= or (?<!");
		return refuse(t, at, "a group form (?P that is not (?P<name>");
	}
	/* flags: (?imsU-imsU) or (?imsU-imsU:...) */
	{
		size_t e = k;
		int neg = 0, any = 0;

		while (e < t->n && t->re[e] != ')' && t->re[e] != ':') {
			char f = t->re[e];

			if (f == '-' && !neg)
				neg = 1;
			else if (f == 'i' || f == 'm' || f == 's' || f == 'U')
				any = 1;
			else if (f == '=' || f == '!')
				return refuse(t, at, "a lookahead (?= or (?!");
			else if (f == '>')
				return refuse(t, at, "an atomic group (?>");
			else if (f == '#')
				return refuse(t, at, "an inline comment (?#");
			else if (f == 'x')
				return refuse(t, at, "the flag x");
			else
				return refuse(t, at, "a group form other than (?:, (?P<name>, (?<name> or flags");
			e++;
		}
		if (e >= t->n || !any)
			return refuse(t, at, "a flag group without flags or its end");
		t->i = e + 1;
		return put(t, t->re + at, e + 1 - at);
	}
}

/* A class from t->re[at] == '[' to its ']'. */
static int class_(struct tr *t, size_t at)
{
	size_t k = t->i;

	if (put(t, "[", 1) < 0)
		return -1;
	if (k < t->n && t->re[k] == '^') {
		if (put(t, "^", 1) < 0)
			return -1;
		k++;
	}
	if (k < t->n && t->re[k] == ']') {
		/* a ']' first is a member, in both */
		if (puts_(t, "\\]") < 0)
			return -1;
		k++;
	}
	while (k < t->n && t->re[k] != ']') {
		char c = t->re[k];

		if (c == '\\' && k + 1 < t->n) {
			char e = t->re[k + 1];

			t->i = k + 2;
			if (escape(t, k, 1) < 0)
				return -1;
			k = t->i;
			/* after a class (\s written out as its members, \d,
			 * \pL...), Go reads '-' as itself, never a range */
			if (strchr("dDwWsSpP", e) && k + 1 < t->n && t->re[k] == '-' && t->re[k + 1] != ']') {
				if (puts_(t, "\\-") < 0)
					return -1;
				k++;
			}
			continue;
		}
		if (c == '[' && k + 1 < t->n && t->re[k + 1] == ':') {
			const char *e = memmem(t->re + k + 2, t->n - k - 2, ":]", 2);

			if (!e)
				return refuse(t, k, "a [: without its :]");
			if (put(t, t->re + k, (size_t)(e - t->re) + 2 - k) < 0)
				return -1;
			k = (size_t)(e - t->re) + 2;
			if (k + 1 < t->n && t->re[k] == '-' && t->re[k + 1] != ']') {
				if (puts_(t, "\\-") < 0)
					return -1;
				k++;
			}
			continue;
		}
		if (c == '[') {
			/* a literal '[' in Go; PCRE2 reads [. and [= */
			if (puts_(t, "\\[") < 0)
				return -1;
			k++;
			continue;
		}
		if (put(t, &c, 1) < 0)
			return -1;
		k++;
	}
	if (k >= t->n)
		return refuse(t, at, "a class without its ]");
	t->i = k + 1;
	return put(t, "]", 1);
}

/* {n}, {n,}, {n,m} at t->re[at]: 1 and its length in *len when it is a
 * repetition (n, m <= 1000, n <= m), 0 when Go reads a literal '{', -1
 * when refused. */
static int repeat(struct tr *t, size_t at, size_t *len)
{
	size_t k = at + 1;
	long lo = 0, hi = -1;
	int digits = 0;

	/* Go: a count with a leading zero is no count ('{' a literal) */
	if (k + 1 < t->n && t->re[k] == '0' && t->re[k + 1] >= '0' && t->re[k + 1] <= '9')
		return 0;
	while (k < t->n && t->re[k] >= '0' && t->re[k] <= '9') {
		if (lo <= 100000000)
			lo = lo * 10 + (t->re[k] - '0');
		k++;
		digits++;
	}
	if (!digits)
		return 0;
	if (k < t->n && t->re[k] == ',') {
		k++;
		if (k < t->n && t->re[k] >= '0' && t->re[k] <= '9') {
			hi = 0;
			if (k + 1 < t->n && t->re[k] == '0' && t->re[k + 1] >= '0' && t->re[k + 1] <= '9')
				return 0;
			while (k < t->n && t->re[k] >= '0' && t->re[k] <= '9') {
				if (hi <= 100000000)
					hi = hi * 10 + (t->re[k] - '0');
				k++;
			}
		}
	} else {
		hi = lo;
	}
	if (k >= t->n || t->re[k] != '}')
		return 0;
	if (lo > 1000 || hi > 1000 || (hi >= 0 && hi < lo))
		return refuse(t, at, "a repetition count over 1000 or with its bounds reversed");
	*len = k + 1 - at;
	return 1;
}

int redact_re2_translate(const char *re, size_t n, const char *what, char **out,
			 struct tg_error *err)
{
	struct tr t = { re, n, 0, NULL, 0, n * 48 + 64, what, err, 0 };
	int quant = 0; /* 1: after a repetition; 2: after its lazy '?' */

	*out = NULL;
	if (!(t.out = malloc(t.cap)))
		return tg_error_set(err, TG_ERR_NOMEM, "%s: out of memory", what);
	t.out[0] = '\0';
	while (t.i < n) {
		size_t at = t.i;
		char c = re[t.i++];
		size_t rlen = 0;
		int r = 0, empty_q = t.empty_q;

		t.empty_q = 0;
		if (c == '*' || c == '+' || c == '?' || (c == '{' && (r = repeat(&t, at, &rlen)) != 0)) {
			if (c == '{' && r < 0)
				goto fail;
			if (empty_q) {
				refuse(&t, at, "a repetition after an empty \\Q\\E (Go repeats what is before it)");
				goto fail;
			}
			if (c == '?' && quant == 1) {
				quant = 2;
				if (put(&t, "?", 1) < 0)
					goto fail;
				continue;
			}
			if (quant) {
				refuse(&t, at, "a repetition of a repetition (a possessive form in PCRE2)");
				goto fail;
			}
			quant = 1;
			if (c == '{') {
				t.i = at + rlen;
				if (put(&t, re + at, rlen) < 0)
					goto fail;
			} else if (put(&t, &c, 1) < 0) {
				goto fail;
			}
			continue;
		}
		quant = 0;
		switch (c) {
		case '\\':
			if (t.i >= n) {
				refuse(&t, at, "a trailing backslash");
				goto fail;
			}
			t.i++;
			r = escape(&t, at, 0);
			break;
		case '(':
			r = group_open(&t, at);
			break;
		case '[':
			r = class_(&t, at);
			break;
		case '{':
			r = puts_(&t, "\\{");
			break;
		case '}':
			r = puts_(&t, "\\}");
			break;
		default:
			r = put(&t, &c, 1);
			break;
		}
		if (r < 0)
			goto fail;
	}
	*out = t.out;
	return 0;
fail:
	free(t.out);
	return -1;
}
