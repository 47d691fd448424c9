/*
 * Parameter anomalies, the unicode rule (docs/ANOMALIES.md "unicode"):
 * a string that holds what a person reviewing the call would not see as
 * it is. Bidi embeddings, overrides and isolates, which make a terminal
 * or a browser show text in another order than a tool reads it (Trojan
 * Source); control characters and escape sequences, which a terminal
 * acts on; tag characters, which spell ASCII invisibly; zero-width and
 * blank characters where they join no script; variation selectors after
 * a character they do not vary (a hidden byte each). Which characters
 * those are, in context, is util/hidden.c's;
 * this file only words the finding. Like the other string rules it is
 * pure, linear and allocates nothing; it never changes what runs.
 */
#include <stdio.h>
#include <string.h>

#include "auth/anomaly_int.h"
#include "util/hidden.h"
#include "util/utf8.h"

#define EXCERPT_BEFORE 16  /* bytes of context before the character, at most */
#define EXCERPT_MAX 60     /* bytes of the string shown, at most */
#define SPELT_MAX 40       /* bytes of what tag characters spell, at most */

/* What c is, for the finding. */
static const char *label(const struct hidden *c)
{
	if (c->kind == HIDDEN_CONTROL && (c->cp == 0x1b || c->cp == 0x9b))
		return "terminal escape";
	if (c->kind == HIDDEN_CONTROL && c->cp == '\r')
		return "carriage return without a newline";
	if (c->kind == HIDDEN_VARIATION)
		return "variation selector after a character it does not vary";
	if (c->kind == HIDDEN_INVISIBLE)
		return "invisible character outside the writing it belongs to";
	return hidden_kind_name(c->kind);
}

/*
 * The excerpt: from up to EXCERPT_BEFORE bytes before c (where a
 * character begins) to at most EXCERPT_MAX bytes, printable ASCII as it
 * is, hidden characters escaped as the display form writes them, other
 * bytes as \xNN, a backslash doubled, "..." when cut.
 */
static void excerpt(const unsigned char *s, size_t n, const struct hidden *c, char *out,
		    size_t cap)
{
	struct hidden_scan h;
	struct hidden d;
	size_t from = c->at > EXCERPT_BEFORE ? c->at - EXCERPT_BEFORE : 0, end, i, o = 0;
	int more;

	while (from < c->at && (s[from] & 0xc0) == 0x80)
		from++;
	end = n - from > EXCERPT_MAX ? from + EXCERPT_MAX : n;
	/* the hidden characters of the excerpt, in the string's context */
	hidden_scan_init(&h, (const char *)s, n);
	while ((more = hidden_scan_next(&h, &d)) && d.at < from) {
	}
	for (i = from; i < end && o + 16 < cap;) {
		if (more && i == d.at) {
			o += hidden_escape(&d, out + o);
			i += d.len;
			more = hidden_scan_next(&h, &d);
		} else if (s[i] == '\\') {
			out[o++] = '\\';
			out[o++] = '\\';
			i++;
		} else if (s[i] >= 0x20 && s[i] < 0x7f) {
			out[o++] = (char)s[i++];
		} else {
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", s[i++]);
		}
	}
	if (i < n && o + 4 <= cap) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = '\0';
}

/* What the run of tag characters at c spells, into out (cap bytes): the
 * ASCII they stand for, a backslash doubled. */
static void spelt(const unsigned char *s, size_t n, const struct hidden *c, char *out,
		  size_t cap)
{
	size_t i, k, o = 0;
	uint32_t cp;

	for (i = c->at; i < n && (k = utf8_char(s + i, n - i, &cp)) && cp >= 0xe0000 &&
	     cp <= 0xe007f && o + 3 < cap; i += k) {
		if (cp < 0xe0020 || cp == 0xe007f)
			continue; /* the language tag, the cancel tag */
		if (cp == 0xe005c)
			out[o++] = '\\';
		out[o++] = (char)(cp - 0xe0000);
	}
	out[o] = '\0';
}

int anomaly_rule_unicode(const unsigned char *s, size_t n, char *why, size_t cap)
{
	struct hidden_scan h;
	struct hidden c;
	char ex[4 * EXCERPT_MAX + 32], tags[SPELT_MAX + 1], esc[16];

	hidden_scan_init(&h, (const char *)s, n);
	while (hidden_scan_next(&h, &c)) {
		if (!c.anomalous)
			continue;
		excerpt(s, n, &c, ex, sizeof(ex));
		hidden_escape(&c, esc);
		if (c.kind == HIDDEN_TAG) {
			spelt(s, n, &c, tags, sizeof(tags));
			snprintf(why, cap, "tag characters spelling \"%s\": %s", tags, ex);
		} else {
			snprintf(why, cap, "%s %s: %s", label(&c), esc, ex);
		}
		return 1;
	}
	return 0;
}
