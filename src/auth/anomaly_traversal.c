/*
 * Parameter anomalies, the traversal rule (docs/ANOMALIES.md "The string
 * rules"): a path segment of exactly two dots, plain or encoded the ways
 * servers have decoded it. Reads the string only; must never touch the
 * filesystem.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "auth/anomaly_int.h"
#include "auth/anomaly_text.h"

/*
 * The string is read as units: a dot, a separator (/ or \), a NUL, a break
 * (blanks, quotes, brackets and the punctuation around paths in text) or
 * anything else, each spelled plainly or encoded the ways servers have
 * decoded them: percent-encoding, repeated (%252e), %uXXXX, and overlong
 * UTF-8 (C0 AE, %c0%ae, %e0%80%ae). A segment is what lies between two
 * separators or breaks; one of exactly two dots next to a separator is
 * traversal, so is ".." as the whole string, and "....//" (left as "../"
 * by a filter that removes "../" once). "...", "a..b", "wait... /x" are
 * not.
 */
enum unit { U_OTHER, U_DOT, U_SEP, U_NUL, U_BREAK, U_START, U_END };

/* The byte or code point at i, percent-decoded as many times as it is
 * encoded (at most four); OUT *len its length, *enc whether encoded. */
static long pct_at(const struct text *t, size_t i, size_t *len, int *enc)
{
	const unsigned char *s = t->s;
	size_t j = i + 1;
	long v = '%';
	int levels = 0;

	*len = 1;
	if (s[i] != '%')
		return s[i];
	if (i + 6 <= t->n && (s[i + 1] | 0x20) == 'u' && is_hex(s[i + 2]) && is_hex(s[i + 3]) &&
	    is_hex(s[i + 4]) && is_hex(s[i + 5])) {
		*len = 6;
		*enc = 1;
		return hex_value(s[i + 2]) << 12 | hex_value(s[i + 3]) << 8 |
		       hex_value(s[i + 4]) << 4 | hex_value(s[i + 5]);
	}
	while (levels++ < 4 && j + 2 <= t->n && is_hex(s[j]) && is_hex(s[j + 1])) {
		v = hex_value(s[j]) << 4 | hex_value(s[j + 1]);
		j += 2;
		*len = j - i;
		*enc = 1;
		if (v != '%')
			break;
	}
	return v;
}

static enum unit unit_of(long cp)
{
	if (cp < 0x80 && is_word((unsigned char)cp))
		return U_OTHER; /* most bytes: said at once */
	if (cp == '.' || cp == 0xff0e)
		return U_DOT;
	if (cp == '/' || cp == '\\' || cp == 0x2215 || cp == 0x2216 || cp == 0xff0f || cp == 0xff3c)
		return U_SEP;
	if (cp == 0)
		return U_NUL;
	if (cp < 0x80 && (is_blank((unsigned char)cp) || one_of((unsigned char)cp, "\"'`<>(){}[]|,;=:?#&")))
		return U_BREAK;
	return U_OTHER;
}

/* The unit at i; OUT *len, *enc. */
static enum unit unit_at(const struct text *t, size_t i, size_t *len, int *enc)
{
	size_t l2, l3;
	long b = pct_at(t, i, len, enc), b2, b3, cp;

	/* overlong UTF-8 of '.', '/' or '\': C0 AE, C0 AF, C1 9C, E0 80 AE */
	if ((b == 0xc0 || b == 0xc1) && i + *len < t->n) {
		b2 = pct_at(t, i + *len, &l2, enc);
		if (b2 >= 0x80 && b2 <= 0xbf && unit_of((b & 0x1f) << 6 | (b2 & 0x3f)) != U_OTHER &&
		    ((b & 0x1f) << 6 | (b2 & 0x3f)) < 0x80) {
			*enc = 1;
			*len += l2;
			return unit_of((b & 0x1f) << 6 | (b2 & 0x3f));
		}
	} else if (b > 0xe0 && b < 0xf0 && i + *len < t->n) {
		/* a three-byte character written raw or encoded: fullwidth ．and
		 * ／, the division and set-minus slashes */
		b2 = pct_at(t, i + *len, &l2, enc);
		if (b2 >= 0x80 && b2 <= 0xbf && i + *len + l2 < t->n) {
			b3 = pct_at(t, i + *len + l2, &l3, enc);
			cp = (b & 0x0f) << 12 | (b2 & 0x3f) << 6 | (b3 & 0x3f);
			if (b3 >= 0x80 && b3 <= 0xbf && unit_of(cp) != U_OTHER) {
				*len += l2 + l3;
				return unit_of(cp);
			}
		}
	} else if (b == 0xe0 && i + *len < t->n) {
		b2 = pct_at(t, i + *len, &l2, enc);
		if (b2 >= 0x80 && b2 <= 0x9f && i + *len + l2 < t->n) {
			b3 = pct_at(t, i + *len + l2, &l3, enc);
			if (b3 >= 0x80 && b3 <= 0xbf && ((b2 & 0x3f) << 6 | (b3 & 0x3f)) < 0x80 &&
			    unit_of((b2 & 0x3f) << 6 | (b3 & 0x3f)) != U_OTHER) {
				*enc = 1;
				*len += l2 + l3;
				return unit_of((b2 & 0x3f) << 6 | (b3 & 0x3f));
			}
		}
	}
	return unit_of(b);
}

int anomaly_rule_traversal(const struct text *t, char *why, size_t cap)
{
	size_t i = 0, len = 0, from = 0, nlen;
	enum unit u, left = U_START;
	int dots = 0, other = 0, enc = 0, e, ne;

	for (i = 0; i <= t->n; i += len) {
		e = 0;
		u = i == t->n ? U_END : unit_at(t, i, &len, &e);
		if (u == U_NUL) {
			anomaly_say(why, cap, e ? "encoded NUL byte" : "NUL byte", t, i > 20 ? i - 20 : 0, 40);
			return 1;
		}
		enc |= e;
		if (u == U_DOT || u == U_OTHER) {
			dots += u == U_DOT;
			other |= u == U_OTHER;
			continue;
		}
		/* the end of a segment */
		if (!other && dots == 2 &&
		    (left == U_SEP || u == U_SEP || (left == U_START && u == U_END))) {
			anomaly_say(why, cap, enc ? "encoded '..' path segment" : "'..' path segment", t, from,
			    i - from + (u == U_END ? 0 : len));
			return 1;
		}
		ne = 0;
		if (!other && dots == 4 && u == U_SEP && i + len < t->n &&
		    unit_at(t, i + len, &nlen, &ne) == U_SEP) {
			anomaly_say(why, cap, "'....//' path segment", t, from, i - from + len + nlen);
			return 1;
		}
		if (u == U_END)
			break;
		left = u;
		from = i;
		dots = other = 0;
		enc = e;
	}
	return 0;
}
