/*
 * Hidden characters (util/hidden.h, docs/ANOMALIES.md "unicode"): which
 * characters a person does not see as they are, found in context, and
 * the text written so that they are seen. A table of ranges says what a
 * code point is (it covers every Default_Ignorable_Code_Point and every
 * format character, General_Category Cf, of Unicode 15); the scan adds
 * what the character before says: a joiner after a letter of a script
 * that joins is writing, a variation selector after a base that has
 * variation sequences is its presentation, the tag characters of an RGI
 * subdivision flag are its name. Those are only not flagged: every
 * character of the table is found, and escaped wherever a person reads
 * it. Nothing here allocates but the *_new and hidden_json results;
 * nothing depends on the locale. It must never change what a call runs
 * with: it makes copies for people to read.
 */
#include <stdlib.h>
#include <string.h>

#include "util/hidden.h"
#include "util/hidden_tables.h"
#include "util/utf8.h"

#define NO_CHAR 0x110000u      /* hidden_scan.prev before the first character */
#define DISPLAY_MAX (256u << 20)

static const struct range {
	uint32_t lo, hi;
	enum hidden_kind kind;
} ranges[] = {
	/* sorted: a binary search finds a code point's */
	{ 0x00ad, 0x00ad, HIDDEN_IGNORABLE },   /* soft hyphen */
	{ 0x034f, 0x034f, HIDDEN_IGNORABLE },   /* combining grapheme joiner */
	{ 0x0600, 0x0605, HIDDEN_PREPENDED },   /* Arabic number signs */
	{ 0x061c, 0x061c, HIDDEN_BIDI_MARK },   /* Arabic letter mark */
	{ 0x06dd, 0x06dd, HIDDEN_PREPENDED },   /* Arabic end of ayah */
	{ 0x070f, 0x070f, HIDDEN_PREPENDED },   /* Syriac abbreviation mark */
	{ 0x0890, 0x0891, HIDDEN_PREPENDED },   /* Arabic pound and piastre marks above */
	{ 0x08e2, 0x08e2, HIDDEN_PREPENDED },   /* Arabic disputed end of ayah */
	{ 0x115f, 0x1160, HIDDEN_INVISIBLE },   /* Hangul choseong, jungseong fillers */
	{ 0x17b4, 0x17b5, HIDDEN_IGNORABLE },   /* Khmer inherent vowels */
	{ 0x180b, 0x180d, HIDDEN_VARIATION },   /* Mongolian free variation selectors */
	{ 0x180e, 0x180e, HIDDEN_INVISIBLE },   /* Mongolian vowel separator */
	{ 0x180f, 0x180f, HIDDEN_VARIATION },
	{ 0x200b, 0x200d, HIDDEN_INVISIBLE },   /* zero-width space, non-joiner, joiner */
	{ 0x200e, 0x200f, HIDDEN_BIDI_MARK },   /* left-to-right, right-to-left marks */
	{ 0x2028, 0x2029, HIDDEN_SEPARATOR },
	{ 0x202a, 0x202e, HIDDEN_BIDI },        /* embeddings, pop, overrides */
	{ 0x2060, 0x2060, HIDDEN_INVISIBLE },   /* word joiner */
	{ 0x2061, 0x2065, HIDDEN_FORMAT },      /* invisible operators */
	{ 0x2066, 0x2069, HIDDEN_BIDI },        /* isolates, pop */
	{ 0x206a, 0x206f, HIDDEN_FORMAT },      /* deprecated format controls */
	{ 0x3164, 0x3164, HIDDEN_INVISIBLE },   /* Hangul filler */
	{ 0xfe00, 0xfe0f, HIDDEN_VARIATION },
	{ 0xfeff, 0xfeff, HIDDEN_INVISIBLE },   /* zero-width no-break space, BOM */
	{ 0xffa0, 0xffa0, HIDDEN_INVISIBLE },   /* halfwidth Hangul filler */
	{ 0xfff0, 0xfff8, HIDDEN_FORMAT },      /* unassigned, ignorable */
	{ 0xfff9, 0xfffb, HIDDEN_FORMAT },      /* interlinear annotation */
	{ 0x110bd, 0x110bd, HIDDEN_PREPENDED }, /* Kaithi number signs */
	{ 0x110cd, 0x110cd, HIDDEN_PREPENDED },
	{ 0x13430, 0x1343f, HIDDEN_INVISIBLE }, /* Egyptian hieroglyph format controls */
	{ 0x1bca0, 0x1bca3, HIDDEN_INVISIBLE }, /* shorthand format controls */
	{ 0x1d173, 0x1d17a, HIDDEN_INVISIBLE }, /* musical formatting */
	{ 0xe0000, 0xe007f, HIDDEN_TAG },
	{ 0xe0080, 0xe00ff, HIDDEN_FORMAT },    /* unassigned, ignorable */
	{ 0xe0100, 0xe01ef, HIDDEN_VARIATION }, /* variation selectors 17 to 256 */
	{ 0xe01f0, 0xe0fff, HIDDEN_FORMAT },
};

/* What c is, out of context. */
static enum hidden_kind kind_of(uint32_t c)
{
	size_t lo = 0, hi = sizeof(ranges) / sizeof(ranges[0]);

	if (c < 0x20)
		return c == '\t' || c == '\n' ? HIDDEN_NONE : HIDDEN_CONTROL;
	if (c < 0x7f)
		return HIDDEN_NONE;
	if (c <= 0x9f)
		return HIDDEN_CONTROL; /* DEL, C1 (U+009B is CSI to a terminal) */
	/* most letters and pictures are nowhere near a range: Latin, Greek,
	 * Cyrillic, the Indic scripts, CJK, Hangul, emoji */
	if (c < 0x0600 ? c != 0x00ad && c != 0x034f
		       : (c > 0x08e2 && c < 0x115f) || (c > 0x1160 && c < 0x17b4) ||
				 (c > 0x180f && c < 0x200b) ||
				 (c > 0x206f && c < 0xfe00 && c != 0x3164) ||
				 (c > 0xfffb && c < 0x110bd) || (c > 0x1d17a && c < 0xe0000))
		return HIDDEN_NONE;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c < ranges[mid].lo)
			hi = mid;
		else if (c > ranges[mid].hi)
			lo = mid + 1;
		else
			return ranges[mid].kind;
	}
	return HIDDEN_NONE;
}

static int in_ranges(const struct hidden_range *r, size_t n, uint32_t c)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (c < r[mid].lo)
			hi = mid;
		else if (c > r[mid].hi)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}

/* A letter or mark of a script that writes with zero-width characters. */
static int joining_letter(uint32_t c)
{
	return c >= 0x80 && c < NO_CHAR && in_ranges(hidden_letters, hidden_letters_n, c);
}

/* What an emoji is made of (Extended_Pictographic). */
static int pictograph(uint32_t c)
{
	return c >= 0x80 && c < NO_CHAR && in_ranges(hidden_pictographs, hidden_pictographs_n, c);
}

/* Whether invisible character c after prev is writing: a joiner,
 * non-joiner, zero-width space, word joiner, vowel separator or filler
 * after a letter of a script that writes with them (Persian's non-joiner,
 * Devanagari's half forms, Thai's word breaks); a zero-width joiner also
 * inside an emoji sequence (after a pictograph, a skin tone or the
 * emoji presentation selector); a format control of one script in that
 * script's text. Not after ASCII ("ad\u200Bmin"), first, after a space,
 * punctuation or a letter of another script, nor after another hidden
 * character (a run spells bits). */
static int joins(uint32_t c, uint32_t prev)
{
	if (c >= 0x13430 && c <= 0x1343f) /* Egyptian hieroglyphs */
		return (prev >= 0x13000 && prev < 0x13430) || (prev >= 0x13440 && prev <= 0x13455);
	if (c >= 0x1bca0 && c <= 0x1bca3) /* Duployan shorthand */
		return prev >= 0x1bc00 && prev <= 0x1bc9f;
	if (c >= 0x1d173 && c <= 0x1d17a) /* between musical symbols */
		return prev >= 0x1d100 && prev <= 0x1d1ff && !(prev >= 0x1d173 && prev <= 0x1d17a);
	if (c == 0x200d && (prev == 0xfe0f || (prev >= 0x1f3fb && prev <= 0x1f3ff) ||
			    pictograph(prev)))
		return 1;
	return joining_letter(prev);
}

/* The selectors of the standardized variation sequences of base (bits as
 * util/hidden_tables.h says). */
static uint32_t variant_selectors(uint32_t base)
{
	size_t lo = 0, hi = hidden_variants_n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (base < hidden_variants[mid].base)
			hi = mid;
		else if (base > hidden_variants[mid].base)
			lo = mid + 1;
		else
			return hidden_variants[mid].selectors;
	}
	return 0;
}

/* Whether variation selector c after prev is presentation: U+FE0E or
 * U+FE0F after a pictograph or a keycap's digit, # or *; U+FE00 to U+FE0D
 * and Mongolian's after a base of a standardized variation sequence with
 * that selector; U+E0100 to U+E01EF (the ideographic variation database's)
 * after a CJK ideograph. Anywhere else a selector varies nothing: it is a
 * hidden byte (variation-selector smuggling spells text with one a letter). */
static int varies(uint32_t c, uint32_t prev)
{
	if (c == 0xfe0e || c == 0xfe0f)
		return pictograph(prev) || (prev >= '0' && prev <= '9') || prev == '#' ||
		       prev == '*';
	if (c >= 0xfe00 && c <= 0xfe0d)
		return (int)(variant_selectors(prev) >> (c - 0xfe00) & 1);
	if (c >= 0xe0100 && c <= 0xe01ef)
		return (prev >= 0x3400 && prev <= 0x4dbf) || (prev >= 0x4e00 && prev <= 0x9fff) ||
		       (prev >= 0xf900 && prev <= 0xfaff) || (prev >= 0x20000 && prev <= 0x3ffff);
	if (c >= 0x180b && c <= 0x180f)
		return (int)(variant_selectors(prev) >> (c == 0x180f ? 19 : 16 + (c - 0x180b)) & 1);
	return 0;
}

/* The character at s[i] (n bytes): its length, 0 when not UTF-8. */
static size_t decode(const unsigned char *s, size_t n, size_t i, uint32_t *c)
{
	if (s[i] < 0x80) {
		*c = s[i];
		return 1;
	}
	return utf8_char(s + i, n - i, c);
}

void hidden_scan_init(struct hidden_scan *h, const char *s, size_t n)
{
	h->s = (const unsigned char *)s;
	h->n = s ? n : 0;
	h->i = 0;
	h->prev = NO_CHAR;
	h->flag_end = 0;
}

/* After U+1F3F4 (a black flag), the tag characters of an RGI subdivision
 * flag, England's, Scotland's or Wales's ("gbeng", "gbsct", "gbwls", then
 * the cancel tag): the end of that sequence, or 0. Other tag sequences
 * make no emoji anyone shows: they are flagged. */
static size_t flag_tags(const struct hidden_scan *h)
{
	static const char *const names[] = { "gbeng", "gbsct", "gbwls" };
	char name[6];
	size_t i = h->i, k, count, f;
	uint32_t c;

	for (count = 0; count < 6 && i < h->n && (k = decode(h->s, h->n, i, &c)); count++) {
		if (c < 0xe0020 || c > 0xe007f)
			return 0;
		name[count] = (char)(c - 0xe0000);
		i += k;
	}
	if (count < 6 || name[5] != 0x7f)
		return 0;
	for (f = 0; f < sizeof(names) / sizeof(names[0]); f++)
		if (memcmp(name, names[f], 5) == 0)
			return i;
	return 0;
}

/* Whether c (after prev) is one the unicode rule flags. */
static int anomalous(const struct hidden_scan *h, const struct hidden *c, uint32_t prev)
{
	switch (c->kind) {
	case HIDDEN_CONTROL:
		/* a NUL is the traversal rule's; CR LF ends a line */
		return c->cp != 0 && !(c->cp == '\r' && h->i < h->n && h->s[h->i] == '\n');
	case HIDDEN_INVISIBLE:
		return !joins(c->cp, prev);
	case HIDDEN_VARIATION:
		return !varies(c->cp, prev);
	case HIDDEN_TAG:
		return c->at >= h->flag_end;
	case HIDDEN_BIDI:
	case HIDDEN_FORMAT:
		return 1;
	default:
		return 0;
	}
}

int hidden_scan_next(struct hidden_scan *h, struct hidden *c)
{
	while (h->i < h->n) {
		size_t at = h->i, len;
		uint32_t cp, prev = h->prev;
		enum hidden_kind k;

		if (h->s[at] >= 0x20 && h->s[at] < 0x7f) { /* printable ASCII, at once */
			h->prev = h->s[h->i++];
			continue;
		}
		len = decode(h->s, h->n, at, &cp);
		if (!len) {
			h->i++;
			h->prev = NO_CHAR;
			*c = (struct hidden){ at, 1, h->s[at], HIDDEN_BYTE, 0 };
			return 1;
		}
		h->i += len;
		h->prev = cp;
		if (cp == 0x1f3f4) {
			size_t end = flag_tags(h);

			if (end)
				h->flag_end = end;
		}
		k = kind_of(cp);
		if (k == HIDDEN_NONE)
			continue;
		*c = (struct hidden){ at, len, cp, k, 0 };
		c->anomalous = anomalous(h, c, prev);
		return 1;
	}
	return 0;
}

const char *hidden_kind_name(enum hidden_kind kind)
{
	static const char *const names[] = {
		"visible character", "bidi control", "bidi mark", "control character",
		"tag character", "invisible character", "invisible format character",
		"variation selector", "line or paragraph separator",
		"ignorable character", "prepended concatenation mark", "byte that is not UTF-8",
	};

	return (unsigned)kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "?";
}

static const char hex[] = "0123456789ABCDEF";

size_t hidden_escape(const struct hidden *c, char *out)
{
	size_t o = 0;
	int shift;

	out[o++] = '\\';
	if (c->kind == HIDDEN_BYTE) {
		out[o++] = 'x';
		out[o++] = hex[c->cp >> 4 & 15];
		out[o++] = hex[c->cp & 15];
	} else {
		out[o++] = 'u';
		if (c->cp > 0xffff)
			out[o++] = '{';
		for (shift = c->cp > 0xffff ? 16 : 12; shift >= 0; shift -= 4)
			out[o++] = hex[c->cp >> shift & 15];
		if (c->cp > 0xffff)
			out[o++] = '}';
	}
	out[o] = '\0';
	return o;
}

/* piece (k bytes) at out + *o, when it fits below cap - 1 and nothing was
 * cut before it (*full once something did not): out holds a prefix. With
 * whole, a piece of characters is cut where one begins; else it goes
 * whole or not at all. k is added to *total either way. */
static void put(char *out, size_t cap, size_t *o, int *full, const char *piece, size_t k,
		int whole, size_t *total)
{
	size_t w = k;

	*total += k;
	if (*full)
		return;
	if (*o + k > cap - 1) {
		w = whole ? 0 : utf8_cut(piece, k, cap - 1 - *o);
		*full = 1;
	}
	memcpy(out + *o, piece, w);
	*o += w;
}

size_t hidden_display(const char *s, size_t n, char *out, size_t cap, size_t *count)
{
	struct hidden_scan h;
	struct hidden c;
	size_t i = 0, o = 0, total = 0, seen = 0, run;
	char esc[16];
	int more, full = 0;

	hidden_scan_init(&h, s, n);
	more = hidden_scan_next(&h, &c);
	while (i < h.n) {
		if (more && i == c.at) {
			put(out, cap, &o, &full, esc, hidden_escape(&c, esc), 1, &total);
			i += c.len;
			seen++;
			more = hidden_scan_next(&h, &c);
		} else if (s[i] == '\\') {
			put(out, cap, &o, &full, "\\\\", 2, 1, &total);
			i++;
		} else {
			/* up to the next backslash or hidden character: UTF-8 */
			for (run = i; run < h.n && s[run] != '\\' && !(more && run == c.at); run++) {
			}
			put(out, cap, &o, &full, s + i, run - i, 0, &total);
			i = run;
		}
	}
	out[o] = '\0';
	if (count)
		*count = seen;
	return total;
}

char *hidden_display_new(const char *s, size_t n, size_t *count)
{
	char one[1], *out;
	size_t len;

	if (n > DISPLAY_MAX)
		return NULL;
	len = hidden_display(s, n, one, sizeof(one), count);
	out = malloc(len + 1);
	if (out)
		hidden_display(s, n, out, len + 1, NULL);
	return out;
}

size_t hidden_count(const char *s, size_t n)
{
	struct hidden_scan h;
	struct hidden c;
	size_t count = 0;

	hidden_scan_init(&h, s, n);
	while (hidden_scan_next(&h, &c))
		count++;
	return count;
}

/* \uXXXX of a UTF-16 unit, at out. */
static void json_unit(char *out, unsigned u)
{
	out[0] = '\\';
	out[1] = 'u';
	out[2] = hex[u >> 12 & 15];
	out[3] = hex[u >> 8 & 15];
	out[4] = hex[u >> 4 & 15];
	out[5] = hex[u & 15];
}

char *hidden_json(const char *json, size_t n)
{
	struct hidden_scan h;
	struct hidden c;
	size_t count = hidden_count(json, n), i = 0, o = 0;
	char *out;

	if (!json)
		return NULL;
	/* at most 12 bytes (a surrogate pair) for a character of 1 or more */
	if (count > (SIZE_MAX - n - 1) / 12 || !(out = malloc(n + 12 * count + 1)))
		return NULL;
	hidden_scan_init(&h, json, n);
	while (hidden_scan_next(&h, &c)) {
		memcpy(out + o, json + i, c.at - i);
		o += c.at - i;
		if (c.kind == HIDDEN_BYTE) {
			json_unit(out + o, 0xfffd);
			o += 6;
		} else if (c.cp > 0xffff) {
			json_unit(out + o, 0xd800 + ((c.cp - 0x10000) >> 10));
			json_unit(out + o + 6, 0xdc00 + ((c.cp - 0x10000) & 0x3ff));
			o += 12;
		} else {
			json_unit(out + o, c.cp);
			o += 6;
		}
		i = c.at + c.len;
	}
	memcpy(out + o, json + i, n - i);
	out[o + n - i] = '\0';
	return out;
}
