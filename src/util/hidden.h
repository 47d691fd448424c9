/*
 * Hidden characters: what a person reading a text does not see as it is
 * (docs/ANOMALIES.md, "unicode"). Bidi controls reorder what follows
 * them on screen (Trojan Source), control characters and escape
 * sequences make a terminal move, clear or recolour, zero-width
 * characters, variation selectors and tag characters carry text nobody
 * sees. One scanner says where they are, and in context which of them
 * are writing (a zero-width joiner inside an emoji or a Persian word,
 * U+FE0F after a heart, an ideographic variation selector after a CJK
 * ideograph) and which are not (the same after an ASCII letter): the
 * unicode anomaly rule flags the latter, and whatever shows a call's
 * arguments to a person escapes all of them.
 */
#ifndef TG_UTIL_HIDDEN_H
#define TG_UTIL_HIDDEN_H

#include <stddef.h>
#include <stdint.h>

enum hidden_kind {
	HIDDEN_NONE = 0,
	HIDDEN_BIDI,        /* U+202A-U+202E, U+2066-U+2069: reorder what follows */
	HIDDEN_BIDI_MARK,   /* U+200E, U+200F, U+061C: direction marks of RTL text */
	HIDDEN_CONTROL,     /* C0 but tab and newline, DEL, C1: a terminal acts on them */
	HIDDEN_TAG,         /* U+E0000-U+E007F: ASCII spelt invisibly */
	HIDDEN_INVISIBLE,   /* zero-width spaces and joiners, BOM, blank fillers, the
			     * format controls of Egyptian hieroglyphs, shorthand, music */
	HIDDEN_FORMAT,      /* invisible operators, deprecated format controls, annotations,
			     * unassigned ignorables: nothing legitimate in arguments */
	HIDDEN_VARIATION,   /* variation selectors: U+FE00-U+FE0F, U+E0100-U+E01EF,
			     * Mongolian's U+180B-U+180D, U+180F */
	HIDDEN_SEPARATOR,   /* U+2028, U+2029: line and paragraph separators */
	HIDDEN_IGNORABLE,   /* soft hyphen, grapheme joiner, other ignorables of a script */
	HIDDEN_PREPENDED,   /* Arabic, Syriac, Kaithi number signs: they span the digits
			     * after them */
	HIDDEN_BYTE,        /* a byte that is not UTF-8 */
};

/* One hidden character of a text. */
struct hidden {
	size_t at, len;         /* its bytes */
	uint32_t cp;            /* its code point (the byte, for HIDDEN_BYTE) */
	enum hidden_kind kind;
	int anomalous;          /* one the unicode rule flags (not writing in its
				 * context: util/hidden.c says what is) */
};

/* A scan of s[0, n) (any bytes), from its start. */
struct hidden_scan {
	const unsigned char *s;
	size_t n, i;
	uint32_t prev;          /* the character before i; past U+10FFFF: none */
	size_t flag_end;        /* tags before this name an RGI subdivision flag */
};

void hidden_scan_init(struct hidden_scan *h, const char *s, size_t n);
/* The next hidden character: 1 and OUT *c, 0 at the text's end. Every
 * character of the table is found, in any context; c->anomalous says
 * whether its context makes it writing. A scan is linear in n: a black
 * flag's look ahead reads at most 6 characters. */
int hidden_scan_next(struct hidden_scan *h, struct hidden *c);

/* What a kind is, for a person: "bidi control", "tag character", ... */
const char *hidden_kind_name(enum hidden_kind kind);

/* c written as a person reads it, into out (at least 12 bytes), NUL
 * terminated: \u202E, \u{E0041} past U+FFFF, \xNN for a byte that is not
 * UTF-8. Its length. */
size_t hidden_escape(const struct hidden *c, char *out);

/* The display form of s[0, n): each hidden character escaped as
 * hidden_escape writes it, each backslash doubled (so that "\u202E" in it
 * is always the character, never those six typed), everything else as it
 * is. At most cap - 1 bytes of it into out (cap > 0; never cut inside an
 * escape or a character), NUL-terminated; its whole length as the result.
 * OUT *count (may be NULL) the hidden characters. */
size_t hidden_display(const char *s, size_t n, char *out, size_t cap, size_t *count);
/* The same, malloc'd (NULL: out of memory, or n past 256 MiB). */
char *hidden_display_new(const char *s, size_t n, size_t *count);

/* The number of hidden characters in s[0, n). */
size_t hidden_count(const char *s, size_t n);

/* JSON text json[0, n) made safe for a terminal: each hidden character
 * written as a JSON escape (\u202E; a surrogate pair past U+FFFF; \uFFFD
 * for a byte that is not UTF-8), so that it parses to the same values but
 * shows no character a person would not see. Valid only where such a
 * character can stand in JSON: inside strings, as any JSON writer puts
 * it. malloc'd, NUL-terminated; NULL out of memory. */
char *hidden_json(const char *json, size_t n);

#endif
