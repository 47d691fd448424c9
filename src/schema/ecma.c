/*
 * "pattern", "patternProperties" and the "regex" format are ECMA-262
 * regular expressions (docs/SCHEMA.md, "Patterns"); PCRE2 runs them. This
 * file reads one as ECMA-262 reads it (with Unicode semantics, as JSON
 * Schema's tests expect) and writes the PCRE2 pattern that matches the
 * same strings, or refuses what ECMA-262 lacks, naming it (the
 * differences left: docs/SCHEMA.md, "Patterns").
 *
 * Where they differ and what is done:
 *   - \s and \S are ECMA-262's: ASCII blanks, U+00A0, U+1680, U+2000 to
 *     U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF (PCRE2's
 *     are ASCII's): written out;
 *   - '.' matches anything but a line terminator (LF, CR, U+2028,
 *     U+2029): written out;
 *   - \uHHHH (a surrogate pair joined), \u{H...} and \xHH are code
 *     points: written \x{...};
 *   - \p{...} takes ECMA-262's long names (\p{Letter}, gc=, sc=) as
 *     well as the short ones: the long general categories written short;
 *   - \d, \w and \b stay ASCII (PCRE2 without UCP), as ECMA-262's are;
 *   - \N is \g{N}, every digit read (PCRE2 would read \10 as octal
 *     without ten groups before it); regex.c asks PCRE2 to match an
 *     unset group's reference as ECMA-262 does (empty);
 *   - a literal '-' in a class is written \-, so that PCRE2 makes no
 *     range ECMA-262 does not (\s written out next to one would).
 * Refused, ECMA-262 having no such thing: \A \Z \z \G \K \h \H \R \X \a
 * \e \Q..\E \x{..} (without u) \N and other letters escaped, inline flags
 * (?i) and the like, atomic groups, possessive repetitions, comments,
 * conditionals, recursion, backtracking verbs, POSIX classes [[:alpha:]].
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"

#define ECMA_SPACE "\\t\\n\\x{0b}\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}"
#define ECMA_NOT_SPACE \
	"\\x{00}-\\x{08}\\x{0e}-\\x{1f}\\x{21}-\\x{9f}\\x{a1}-\\x{167f}\\x{1681}-\\x{1fff}" \
	"\\x{200b}-\\x{2027}\\x{202a}-\\x{202e}\\x{2030}-\\x{205e}\\x{2060}-\\x{2fff}" \
	"\\x{3001}-\\x{fefe}\\x{ff00}-\\x{10ffff}"

struct ec {
	const char *re;
	size_t n, i;
	char *out;
	size_t len, cap;
	const char *why;  /* the refusal, when one was made */
	size_t at;
};

static int put(struct ec *t, const char *s, size_t n)
{
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap * 2 > t->len + n + 1 ? t->cap * 2 : t->len + n + 1;
		char *o = cap <= (size_t)16 << 20 ? realloc(t->out, cap) : NULL;

		if (!o) {
			t->why = cap <= (size_t)16 << 20 ? "out of memory" : "too long once translated";
			t->at = t->i;
			return -1;
		}
		t->out = o;
		t->cap = cap;
	}
	memcpy(t->out + t->len, s, n);
	t->len += n;
	t->out[t->len] = '\0';
	return 0;
}

static int puts_(struct ec *t, const char *s)
{
	return put(t, s, strlen(s));
}

static int no(struct ec *t, size_t at, const char *why)
{
	t->why = why;
	t->at = at;
	return -1;
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* n hex digits at t->re[k]: their value, or -1. */
static long hexn(const struct ec *t, size_t k, size_t n)
{
	long v = 0;

	if (k + n > t->n)
		return -1;
	for (size_t j = 0; j < n; j++) {
		int h = hexval(t->re[k + j]);

		if (h < 0)
			return -1;
		v = v * 16 + h;
	}
	return v;
}

static int put_cp(struct ec *t, long cp)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "\\x{%lx}", cp);
	return puts_(t, buf);
}

/* ECMA-262's General_Category values, long and short, and the short
 * name PCRE2 reads. */
static const char *const gc_names[][2] = {
	{ "Letter", "L" }, { "L", "L" }, { "Cased_Letter", "L&" }, { "LC", "L&" },
	{ "Uppercase_Letter", "Lu" }, { "Lu", "Lu" }, { "Lowercase_Letter", "Ll" }, { "Ll", "Ll" },
	{ "Titlecase_Letter", "Lt" }, { "Lt", "Lt" }, { "Modifier_Letter", "Lm" }, { "Lm", "Lm" },
	{ "Other_Letter", "Lo" }, { "Lo", "Lo" }, { "Mark", "M" }, { "Combining_Mark", "M" },
	{ "M", "M" }, { "Nonspacing_Mark", "Mn" }, { "Mn", "Mn" }, { "Spacing_Mark", "Mc" },
	{ "Mc", "Mc" }, { "Enclosing_Mark", "Me" }, { "Me", "Me" }, { "Number", "N" }, { "N", "N" },
	{ "Decimal_Number", "Nd" }, { "digit", "Nd" }, { "Nd", "Nd" }, { "Letter_Number", "Nl" },
	{ "Nl", "Nl" }, { "Other_Number", "No" }, { "No", "No" }, { "Punctuation", "P" },
	{ "punct", "P" }, { "P", "P" }, { "Connector_Punctuation", "Pc" }, { "Pc", "Pc" },
	{ "Dash_Punctuation", "Pd" }, { "Pd", "Pd" }, { "Open_Punctuation", "Ps" }, { "Ps", "Ps" },
	{ "Close_Punctuation", "Pe" }, { "Pe", "Pe" }, { "Initial_Punctuation", "Pi" }, { "Pi", "Pi" },
	{ "Final_Punctuation", "Pf" }, { "Pf", "Pf" }, { "Other_Punctuation", "Po" }, { "Po", "Po" },
	{ "Symbol", "S" }, { "S", "S" }, { "Math_Symbol", "Sm" }, { "Sm", "Sm" },
	{ "Currency_Symbol", "Sc" }, { "Sc", "Sc" }, { "Modifier_Symbol", "Sk" }, { "Sk", "Sk" },
	{ "Other_Symbol", "So" }, { "So", "So" }, { "Separator", "Z" }, { "Z", "Z" },
	{ "Space_Separator", "Zs" }, { "Zs", "Zs" }, { "Line_Separator", "Zl" }, { "Zl", "Zl" },
	{ "Paragraph_Separator", "Zp" }, { "Zp", "Zp" }, { "Other", "C" }, { "C", "C" },
	{ "Control", "Cc" }, { "cntrl", "Cc" }, { "Cc", "Cc" }, { "Format", "Cf" }, { "Cf", "Cf" },
	{ "Surrogate", "Cs" }, { "Cs", "Cs" }, { "Private_Use", "Co" }, { "Co", "Co" },
	{ "Unassigned", "Cn" }, { "Cn", "Cn" },
};

/* ECMA-262's binary properties (table-binary-unicode-properties); PCRE2
 * refuses those it does not know. */
static const char *const binary_names[] = {
	"ASCII", "ASCII_Hex_Digit", "AHex", "Alphabetic", "Alpha", "Any", "Bidi_Control",
	"Bidi_C", "Bidi_Mirrored", "Bidi_M", "Case_Ignorable", "CI", "Cased",
	"Changes_When_Casefolded", "CWCF", "Changes_When_Casemapped", "CWCM",
	"Changes_When_Lowercased", "CWL", "Changes_When_NFKC_Casefolded", "CWKCF",
	"Changes_When_Titlecased", "CWT", "Changes_When_Uppercased", "CWU", "Dash",
	"Default_Ignorable_Code_Point", "DI", "Deprecated", "Dep", "Diacritic", "Dia", "Emoji",
	"Emoji_Component", "EComp", "Emoji_Modifier", "EMod", "Emoji_Modifier_Base", "EBase",
	"Emoji_Presentation", "EPres", "Extended_Pictographic", "ExtPict", "Extender", "Ext",
	"Grapheme_Base", "Gr_Base", "Grapheme_Extend", "Gr_Ext", "Hex_Digit", "Hex",
	"IDS_Binary_Operator", "IDSB", "IDS_Trinary_Operator", "IDST", "ID_Continue", "IDC",
	"ID_Start", "IDS", "Ideographic", "Ideo", "Join_Control", "Join_C",
	"Logical_Order_Exception", "LOE", "Lowercase", "Lower", "Math", "Noncharacter_Code_Point",
	"NChar", "Pattern_Syntax", "Pat_Syn", "Pattern_White_Space", "Pat_WS", "Quotation_Mark",
	"QMark", "Radical", "Regional_Indicator", "RI", "Sentence_Terminal", "STerm",
	"Soft_Dotted", "SD", "Terminal_Punctuation", "Term", "Unified_Ideograph", "UIdeo",
	"Uppercase", "Upper", "Variation_Selector", "VS", "White_Space", "space",
	"XID_Continue", "XIDC", "XID_Start", "XIDS",
};

static int is(const char *s, size_t n, const char *name)
{
	return strlen(name) == n && memcmp(s, name, n) == 0;
}

/* \p{...} and \P{...} as ECMA-262 reads them (exact names, no loose
 * matching as PCRE2's): a General_Category value (long names written
 * short), Script=/sc= (PCRE2's sc:, not its default \p{Greek}, which is
 * Script_Extensions), Script_Extensions=/scx=, a binary property. */
static int property(struct ec *t, size_t at)
{
	const char *name = t->re + t->i + 1, *end, *eq, *pre = NULL;
	char neg = t->re[at + 1];
	char buf[128];
	size_t n, np = 0, k;

	if (t->i >= t->n || t->re[t->i] != '{' ||
	    !(end = memchr(name, '}', t->n - t->i - 1)))
		return no(t, at, "a \\p without {name}");
	eq = memchr(name, '=', (size_t)(end - name));
	if (eq) {
		pre = name;
		np = (size_t)(eq - name);
		name = eq + 1;
	}
	n = (size_t)(end - name);
	if (n == 0 || n > 60)
		return no(t, at, "a \\p{...} name ECMA-262 does not have");
	for (size_t j = 0; j < n; j++)
		if (!((name[j] >= 'a' && name[j] <= 'z') || (name[j] >= 'A' && name[j] <= 'Z') ||
		      (name[j] >= '0' && name[j] <= '9') || name[j] == '_'))
			return no(t, at, "a \\p{...} name ECMA-262 does not have");
	t->i = (size_t)(end - t->re) + 1;
	if (pre && (is(pre, np, "Script") || is(pre, np, "sc") || is(pre, np, "Script_Extensions") ||
		    is(pre, np, "scx"))) {
		/* script names are capitalised (Latin, Latn): PCRE2 would take latin too */
		if (!(name[0] >= 'A' && name[0] <= 'Z'))
			return no(t, at, "a \\p{...} name ECMA-262 does not have");
		snprintf(buf, sizeof(buf), "\\%c{%s:%.*s}", neg,
			 np == 2 || np == 6 ? "sc" : "scx", (int)n, name);
		return puts_(t, buf);
	}
	if (pre && !is(pre, np, "General_Category") && !is(pre, np, "gc"))
		return no(t, at, "a \\p{...} name ECMA-262 does not have");
	for (k = 0; k < sizeof(gc_names) / sizeof(gc_names[0]); k++)
		if (is(name, n, gc_names[k][0])) {
			snprintf(buf, sizeof(buf), "\\%c{%s}", neg, gc_names[k][1]);
			return puts_(t, buf);
		}
	if (pre)
		return no(t, at, "a \\p{...} name ECMA-262 does not have");
	if (is(name, n, "Assigned")) /* PCRE2 has no such name */
		return puts_(t, neg == 'p' ? "\\P{Cn}" : "\\p{Cn}");
	for (k = 0; k < sizeof(binary_names) / sizeof(binary_names[0]); k++)
		if (is(name, n, binary_names[k])) {
			snprintf(buf, sizeof(buf), "\\%c{%.*s}", neg, (int)n, name);
			return puts_(t, buf);
		}
	return no(t, at, "a \\p{...} name ECMA-262 does not have");
}

/* An escape at t->re[at] (the backslash); t->i past its letter. */
static int escape(struct ec *t, size_t at, int in_class)
{
	char c = t->re[at + 1];
	long v, lo;

	switch (c) {
	case 'd': case 'D': case 'w': case 'W': case 't': case 'n': case 'r': case 'f':
		return put(t, t->re + at, 2);
	case 'b': /* a word boundary; in a class, a backspace (the same in PCRE2) */
	case 'B':
		if (in_class && c == 'B')
			return no(t, at, "\\B in a class");
		return put(t, t->re + at, 2);
	case 'v':
		return puts_(t, "\\x{0b}");
	case 's':
		return puts_(t, in_class ? ECMA_SPACE : "[" ECMA_SPACE "]");
	case 'S':
		return puts_(t, in_class ? ECMA_NOT_SPACE : "[" ECMA_NOT_SPACE "]");
	case 'c':
		if (t->i < t->n && ((t->re[t->i] >= 'a' && t->re[t->i] <= 'z') ||
				    (t->re[t->i] >= 'A' && t->re[t->i] <= 'Z')))
			return put_cp(t, t->re[t->i++] % 32);
		return no(t, at, "a \\c without a letter");
	case '0':
		if (t->i < t->n && t->re[t->i] >= '0' && t->re[t->i] <= '9')
			return no(t, at, "an octal escape");
		return puts_(t, "\\x{0}");
	case 'x':
		if ((v = hexn(t, t->i, 2)) < 0)
			return no(t, at, "a \\x without two hex digits");
		t->i += 2;
		return put_cp(t, v);
	case 'u':
		if (t->i < t->n && t->re[t->i] == '{') {
			const char *e = memchr(t->re + t->i, '}', t->n - t->i);
			size_t d = e ? (size_t)(e - t->re) - t->i - 1 : 0;

			if (!e || d == 0 || d > 6 || (v = hexn(t, t->i + 1, d)) < 0 || v > 0x10FFFF)
				return no(t, at, "a \\u{...} that is not a code point");
			t->i += d + 2;
			return put_cp(t, v);
		}
		if ((v = hexn(t, t->i, 4)) < 0)
			return no(t, at, "a \\u without four hex digits");
		t->i += 4;
		/* a surrogate pair is one code point */
		if (v >= 0xD800 && v <= 0xDBFF && t->i + 6 <= t->n && t->re[t->i] == '\\' &&
		    t->re[t->i + 1] == 'u' && (lo = hexn(t, t->i + 2, 4)) >= 0xDC00 && lo <= 0xDFFF) {
			t->i += 6;
			return put_cp(t, 0x10000 + ((v - 0xD800) << 10) + (lo - 0xDC00));
		}
		if (v >= 0xD800 && v <= 0xDFFF)
			return no(t, at, "a lone surrogate");
		return put_cp(t, v);
	case 'p': case 'P':
		return property(t, at);
	case 'k':
		if (in_class)
			return no(t, at, "\\k in a class");
		/* \k<name> only: PCRE2 would also read \k'name' and \k{name} */
		if (t->i < t->n && t->re[t->i] == '<') {
			const char *e = memchr(t->re + t->i, '>', t->n - t->i);

			if (e && (size_t)(e - t->re) > t->i + 1) {
				t->i = (size_t)(e - t->re) + 1;
				return put(t, t->re + at, t->i - at);
			}
		}
		return no(t, at, "a \\k without <name>");
	default:
		break;
	}
	if (c >= '1' && c <= '9') {
		char buf[32];
		long g = c - '0';

		if (in_class)
			return no(t, at, "a back-reference in a class");
		/* ECMA-262 reads every digit (\10 is group 10, a forward
		 * reference too); PCRE2 would read \10 as octal without ten
		 * groups before it: \g{N} is only ever a reference */
		while (t->i < t->n && t->re[t->i] >= '0' && t->re[t->i] <= '9') {
			g = g * 10 + (t->re[t->i++] - '0');
			if (g > 65535)
				return no(t, at, "a back-reference to no group");
		}
		snprintf(buf, sizeof(buf), "\\g{%ld}", g);
		return puts_(t, buf);
	}
	/* identity escapes: ECMA-262's syntax characters and '/', '-' */
	if (c && strchr("^$\\.*+?()[]{}|/-", c))
		return put(t, t->re + at, 2);
	return no(t, at, "an escape ECMA-262 does not have");
}

static int group(struct ec *t, size_t at)
{
	size_t k = t->i;

	if (k < t->n && t->re[k] == '*')
		return no(t, at, "a backtracking verb");
	if (k >= t->n || t->re[k] != '?')
		return put(t, "(", 1);
	k++;
	if (k < t->n && (t->re[k] == ':' || t->re[k] == '=' || t->re[k] == '!')) {
		t->i = k + 1;
		return put(t, t->re + at, 3);
	}
	if (k + 1 < t->n && t->re[k] == '<' && (t->re[k + 1] == '=' || t->re[k + 1] == '!')) {
		t->i = k + 2;
		return put(t, t->re + at, 4); /* lookbehind: ES2018 */
	}
	if (k < t->n && t->re[k] == '<') {
		const char *e = memchr(t->re + k, '>', t->n - k);

		if (!e || (size_t)(e - t->re) == k + 1)
			return no(t, at, "a named group without its name");
		t->i = (size_t)(e - t->re) + 1;
		return put(t, t->re + at, t->i - at);
	}
	return no(t, at, "a group form ECMA-262 does not have (inline flags, atomic, comment...)");
}

/* A class escape that stands for a set (\d \D \w \W \s \S \p \P). */
static int set_escape(const struct ec *t, size_t k)
{
	return k + 1 < t->n && t->re[k] == '\\' && strchr("dDwWsSpP", t->re[k + 1]) &&
	       t->re[k + 1] != '\0';
}

/* One class atom at k (not '-' as a range's operator): written out; *set
 * whether it stands for a set. */
static int class_atom(struct ec *t, size_t *k, int *set)
{
	unsigned char c = (unsigned char)t->re[*k];

	*set = set_escape(t, *k);
	if (c == '\\' && *k + 1 < t->n) {
		t->i = *k + 2;
		if (escape(t, *k, 1) < 0)
			return -1;
		*k = t->i;
		return 0;
	}
	(*k)++;
	if (c == '[' || c == '-' || c == '\\')
		/* '[' a literal in ECMA-262 (PCRE2 reads [: [. [=); a literal
		 * '-' escaped so that PCRE2 never makes a range ECMA-262 does not */
		return put(t, c == '[' ? "\\[" : c == '-' ? "\\-" : "\\\\", 2);
	if (c == '\0')
		return puts_(t, "\\x{0}");
	if (put(t, (const char *)&c, 1) < 0)
		return -1;
	/* the rest of a UTF-8 character: one atom */
	while (*k < t->n && ((unsigned char)t->re[*k] & 0xC0) == 0x80)
		if (put(t, t->re + (*k)++, 1) < 0)
			return -1;
	return 0;
}

static int class_(struct ec *t, size_t at)
{
	size_t k = t->i;
	int set, prev = 0; /* 1: the previous atom can start a range, 2: a set */

	/* [] matches nothing, [^] any character, in ECMA-262 */
	if (k < t->n && t->re[k] == ']') {
		t->i = k + 1;
		return puts_(t, "(?!)");
	}
	if (k + 1 < t->n && t->re[k] == '^' && t->re[k + 1] == ']') {
		t->i = k + 2;
		return puts_(t, "(?s:.)");
	}
	if (put(t, "[", 1) < 0)
		return -1;
	if (k < t->n && t->re[k] == '^') {
		if (put(t, "^", 1) < 0)
			return -1;
		k++;
	}
	while (k < t->n && t->re[k] != ']') {
		if (t->re[k] == '-' && prev && k + 1 < t->n && t->re[k + 1] != ']') {
			/* a range: neither end may be a set (a SyntaxError with u) */
			if (prev == 2 || set_escape(t, k + 1))
				return no(t, k, "a class escape in a range");
			k++;
			if (put(t, "-", 1) < 0 || class_atom(t, &k, &set) < 0)
				return -1;
			prev = 0;
			continue;
		}
		if (class_atom(t, &k, &set) < 0)
			return -1;
		prev = set ? 2 : 1;
	}
	if (k >= t->n)
		return no(t, at, "a class without its ]");
	t->i = k + 1;
	return put(t, "]", 1);
}

int ecma_translate(const char *re, size_t n, char **out, const char **why, size_t *at)
{
	struct ec t = { re, n, 0, NULL, 0, n * 4 + 64, NULL, 0 };
	int quant = 0;

	*out = NULL;
	if (!(t.out = malloc(t.cap))) {
		*why = "out of memory";
		*at = 0;
		return -1;
	}
	t.out[0] = '\0';
	while (t.i < n) {
		size_t start = t.i;
		char c = re[t.i++];
		int r;

		if (c == '*' || c == '+' || c == '?') {
			if (quant == 1 && c == '?') {
				quant = 2;
				r = put(&t, "?", 1);
			} else if (quant) {
				r = no(&t, start, "a repetition of a repetition (a possessive form in PCRE2)");
			} else {
				quant = 1;
				r = put(&t, &c, 1);
			}
			if (r < 0)
				goto fail;
			continue;
		}
		if (c == '{') {
			size_t k = t.i;

			while (k < n && ((re[k] >= '0' && re[k] <= '9') || re[k] == ','))
				k++;
			if (k < n && re[k] == '}' && k > t.i && re[t.i] != ',') {
				/* {n}, {n,}, {n,m}: a repetition */
				if (quant) {
					no(&t, start, "a repetition of a repetition (a possessive form in PCRE2)");
					goto fail;
				}
				quant = 1;
				if (put(&t, re + start, k + 1 - start) < 0)
					goto fail;
				t.i = k + 1;
				continue;
			}
			quant = 0;
			if (puts_(&t, "\\{") < 0)
				goto fail;
			continue;
		}
		quant = 0;
		switch (c) {
		case '\\':
			if (t.i >= n) {
				no(&t, start, "a trailing backslash");
				goto fail;
			}
			t.i++;
			r = escape(&t, start, 0);
			break;
		case '(':
			r = group(&t, start);
			break;
		case '[':
			r = class_(&t, start);
			break;
		case '.':
			r = puts_(&t, "[^\\n\\r\\x{2028}\\x{2029}]");
			break;
		case '}':
			r = puts_(&t, "\\}");
			break;
		case '\0': /* PCRE2 is given a NUL-terminated pattern */
			r = puts_(&t, "\\x{0}");
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
	*why = t.why ? t.why : "unreadable";
	*at = t.at;
	return -1;
}
