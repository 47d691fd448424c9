/*
 * The URI family of "format" (docs/SCHEMA.md, "Formats"): "uri" and
 * "uri-reference" by RFC 3986's grammar, "iri" and "iri-reference" by RFC
 * 3987's (the same, with the characters past ASCII it allows), and
 * "uri-template" by RFC 6570's. A parser of the grammar, not a pattern:
 * each component read in turn, an IP literal checked as an address, a
 * percent escape as two hex digits, UTF-8 decoded and checked against
 * the ranges RFC 3987 names (so a lone continuation byte, an overlong
 * form or a surrogate is no IRI).
 */
#include <arpa/inet.h>
#include <string.h>

#include "schema/schema_int.h"

struct rd {
	const unsigned char *s;
	size_t n, i;
	int iri;
};

static int alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static int digit(int c)
{
	return c >= '0' && c <= '9';
}

static int hexdig(int c)
{
	return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* c one of set's characters: never NUL (strchr finds set's terminator) */
static int in(const char *set, int c)
{
	return c != '\0' && strchr(set, c) != NULL;
}

/* The code point of the UTF-8 sequence at s[i, n), its length in *len;
 * -1 when it is not well formed (overlong, a surrogate, past U+10FFFF). */
static long utf8_at(const unsigned char *s, size_t n, size_t i, size_t *len)
{
	unsigned char c = s[i];
	size_t k, need;
	long cp, min;

	if (c < 0x80) {
		*len = 1;
		return c;
	}
	if (c >= 0xC2 && c <= 0xDF)
		need = 1, cp = c & 0x1F, min = 0x80;
	else if (c >= 0xE0 && c <= 0xEF)
		need = 2, cp = c & 0x0F, min = 0x800;
	else if (c >= 0xF0 && c <= 0xF4)
		need = 3, cp = c & 0x07, min = 0x10000;
	else
		return -1;
	for (k = 1; k <= need; k++) {
		if (i + k >= n || (s[i + k] & 0xC0) != 0x80)
			return -1;
		cp = cp << 6 | (s[i + k] & 0x3F);
	}
	if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return -1;
	*len = need + 1;
	return cp;
}

/* RFC 3987 ucschar, and iprivate (in a query only). */
static int ucschar(long c)
{
	if ((c >= 0xA0 && c <= 0xD7FF) || (c >= 0xF900 && c <= 0xFDCF) || (c >= 0xFDF0 && c <= 0xFFEF))
		return 1;
	/* %x10000-1FFFD ... %xE1000-EFFFD: each plane but its last two */
	return c >= 0x10000 && c <= 0xEFFFD && (c & 0xFFFF) <= 0xFFFD &&
	       !(c >= 0xE0000 && c < 0xE1000);
}

static int iprivate(long c)
{
	return (c >= 0xE000 && c <= 0xF8FF) || (c >= 0xF0000 && c <= 0xFFFFD) ||
	       (c >= 0x100000 && c <= 0x10FFFD);
}

enum {
	K_UNRES = 1,   /* unreserved (iunreserved) */
	K_SUB = 2,     /* sub-delims */
	K_COLON = 4,
	K_AT = 8,
	K_SLASH = 16,  /* "/" and "?" of a query or fragment */
	K_PRIVATE = 32 /* iprivate, in a query */
};

/* One character of the component at r->i, of the kinds allowed: 1 and
 * r->i moved past it, 0 where the component ends, -1 when the text is
 * wrong here (a bad escape or UTF-8, a character no component allows). */
static int take(struct rd *r, unsigned kinds)
{
	unsigned char c;
	size_t len;
	long cp;

	if (r->i >= r->n)
		return 0;
	c = r->s[r->i];
	if (c == '%') {
		if (r->i + 2 >= r->n)
			return -1;
		if (!hexdig(r->s[r->i + 1]) || !hexdig(r->s[r->i + 2]))
			return -1;
		r->i += 3;
		return 1;
	}
	if (c >= 0x80) {
		if (!r->iri || (cp = utf8_at(r->s, r->n, r->i, &len)) < 0)
			return -1;
		if ((kinds & K_UNRES) && (ucschar(cp) || ((kinds & K_PRIVATE) && iprivate(cp)))) {
			r->i += len;
			return 1;
		}
		return -1;
	}
	if (((kinds & K_UNRES) && (alpha(c) || digit(c) || in("-._~", c))) ||
	    ((kinds & K_SUB) && in("!$&'()*+,;=", c)) || ((kinds & K_COLON) && c == ':') ||
	    ((kinds & K_AT) && c == '@') || ((kinds & K_SLASH) && (c == '/' || c == '?'))) {
		r->i++;
		return 1;
	}
	return 0;
}

/* As many characters of kinds as follow: their count, or -1. */
static long run(struct rd *r, unsigned kinds)
{
	long k = 0;
	int t;

	while ((t = take(r, kinds)) > 0)
		k++;
	return t < 0 ? -1 : k;
}

#define PCHAR (K_UNRES | K_SUB | K_COLON | K_AT)

/* host [":" port], from r->i to end (the authority without its userinfo). */
static int host_port(struct rd *r, size_t end)
{
	struct rd h = *r;
	size_t colon = end;

	h.n = end;
	if (h.i < end && h.s[h.i] == '[') {
		const unsigned char *close = memchr(h.s + h.i, ']', end - h.i);
		char buf[64];
		size_t len;

		if (!close)
			return 0;
		len = (size_t)(close - h.s) - h.i - 1;
		if (len > 0 && (h.s[h.i + 1] == 'v' || h.s[h.i + 1] == 'V')) {
			/* IPvFuture: "v" 1*HEXDIG "." 1*( unreserved / sub-delims / ":" ) */
			struct rd f = h;
			size_t dot;

			f.i = h.i + 2;
			f.n = (size_t)(close - h.s);
			for (dot = f.i; dot < f.n && hexdig(f.s[dot]); dot++)
				;
			if (dot == f.i || dot >= f.n || f.s[dot] != '.')
				return 0;
			f.i = dot + 1;
			f.iri = 0;
			if (run(&f, K_UNRES | K_SUB | K_COLON) <= 0 || f.i != f.n)
				return 0;
		} else {
			if (len == 0 || len >= sizeof(buf))
				return 0;
			memcpy(buf, h.s + h.i + 1, len);
			buf[len] = '\0';
			{
				struct in6_addr a;

				if (inet_pton(AF_INET6, buf, &a) != 1)
					return 0;
			}
		}
		h.i = (size_t)(close - h.s) + 1;
		colon = h.i;
	} else {
		/* reg-name or IPv4address: neither holds a ':' */
		if (run(&h, K_UNRES | K_SUB) < 0)
			return 0;
		colon = h.i;
	}
	if (colon == end)
		return 1;
	if (h.s[colon] != ':')
		return 0;
	for (h.i = colon + 1; h.i < end; h.i++)
		if (!digit(h.s[h.i]))
			return 0;
	return 1;
}

/* "//" authority at r->i (past the "//"): up to the path. */
static int authority(struct rd *r)
{
	size_t end = r->i, at = (size_t)-1;

	while (end < r->n && r->s[end] != '/' && r->s[end] != '?' && r->s[end] != '#') {
		if (r->s[end] == '@')
			at = end;
		end++;
	}
	if (at != (size_t)-1) {
		struct rd u = *r;

		u.n = at;
		if (run(&u, K_UNRES | K_SUB | K_COLON) < 0 || u.i != at)
			return 0;
		r->i = at + 1;
	}
	if (!host_port(r, end))
		return 0;
	r->i = end;
	return 1;
}

/* A path's segments from r->i: "/"-separated pchars (the first without a
 * ':' when nc: a relative reference's first segment would read as a
 * scheme); then what follows must be '?', '#' or the end. */
static int path(struct rd *r, int nc)
{
	int first = 1;

	for (;;) {
		if (run(r, first && nc ? (PCHAR & ~K_COLON) : PCHAR) < 0)
			return 0;
		if (first && nc && r->i < r->n && r->s[r->i] == ':')
			return 0;
		first = 0;
		if (r->i < r->n && r->s[r->i] == '/') {
			r->i++;
			continue;
		}
		return r->i == r->n || r->s[r->i] == '?' || r->s[r->i] == '#';
	}
}

/* [ "?" query ] [ "#" fragment ] to the end. */
static int query_fragment(struct rd *r)
{
	if (r->i < r->n && r->s[r->i] == '?') {
		r->i++;
		if (run(r, PCHAR | K_SLASH | K_PRIVATE) < 0)
			return 0;
	}
	if (r->i < r->n && r->s[r->i] == '#') {
		r->i++;
		if (run(r, PCHAR | K_SLASH) < 0)
			return 0;
	}
	return r->i == r->n;
}

int format_uri(const char *s, size_t n, int iri, int absolute)
{
	struct rd r = { (const unsigned char *)s, n, 0, iri };
	size_t k = 0;
	int has_scheme = 0;

	/* scheme ":" when the text starts so */
	if (n && alpha(r.s[0])) {
		for (k = 1; k < n && (alpha(r.s[k]) || digit(r.s[k]) || in("+-.", r.s[k])); k++)
			;
		has_scheme = k < n && r.s[k] == ':';
	}
	if (absolute && !has_scheme)
		return 0;
	if (has_scheme)
		r.i = k + 1;
	if (r.n - r.i >= 2 && r.s[r.i] == '/' && r.s[r.i + 1] == '/') {
		r.i += 2;
		if (!authority(&r) || !path(&r, 0))
			return 0;
	} else if (!path(&r, !has_scheme)) {
		return 0;
	}
	return query_fragment(&r);
}

/* ---- RFC 6570 URI Template ----------------------------------------------- */

/* varname: varchar *( ["."] varchar ), varchar: ALPHA / DIGIT / "_" /
 * pct-encoded. */
static int varname(struct rd *r)
{
	int any = 0;

	for (;;) {
		unsigned char c = r->i < r->n ? r->s[r->i] : 0;

		if (alpha(c) || digit(c) || c == '_') {
			r->i++;
		} else if (c == '%') {
			if (r->i + 2 >= r->n || !hexdig(r->s[r->i + 1]) || !hexdig(r->s[r->i + 2]))
				return 0;
			r->i += 3;
		} else if (c == '.' && any && r->i + 1 < r->n && r->s[r->i + 1] != '.') {
			r->i++;
			continue; /* a varchar must follow */
		} else {
			return any && r->s[r->i - 1] != '.';
		}
		any = 1;
	}
}

/* "{" [ operator ] varspec *( "," varspec ) "}" at r->i (past the "{"). */
static int expression(struct rd *r)
{
	if (r->i < r->n && strchr("+#./;?&=,!@|", r->s[r->i]) && r->s[r->i])
		r->i++;
	for (;;) {
		if (!varname(r))
			return 0;
		if (r->i < r->n && r->s[r->i] == ':') {
			/* prefix: max-length %x31-39 0*3DIGIT */
			size_t d = ++r->i;

			if (r->i >= r->n || r->s[r->i] < '1' || r->s[r->i] > '9')
				return 0;
			while (r->i < r->n && digit(r->s[r->i]) && r->i - d < 4)
				r->i++;
		} else if (r->i < r->n && r->s[r->i] == '*') {
			r->i++;
		}
		if (r->i < r->n && r->s[r->i] == ',') {
			r->i++;
			continue;
		}
		if (r->i < r->n && r->s[r->i] == '}') {
			r->i++;
			return 1;
		}
		return 0;
	}
}

int format_uri_template(const char *s, size_t n)
{
	struct rd r = { (const unsigned char *)s, n, 0, 1 };

	while (r.i < n) {
		unsigned char c = r.s[r.i];
		size_t len;
		long cp;

		if (c == '{') {
			r.i++;
			if (!expression(&r))
				return 0;
		} else if (c == '%') {
			if (r.i + 2 >= n || !hexdig(r.s[r.i + 1]) || !hexdig(r.s[r.i + 2]))
				return 0;
			r.i += 3;
		} else if (c >= 0x80) {
			if ((cp = utf8_at(r.s, n, r.i, &len)) < 0 || !(ucschar(cp) || iprivate(cp)))
				return 0;
			r.i += len;
		} else if (c <= 0x20 || c == 0x7F || strchr("\"'<>\\^`{|}", c)) {
			return 0;
		} else {
			r.i++;
		}
	}
	return 1;
}
