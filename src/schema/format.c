/*
 * "format" as an assertion (tg_schema_options.format_assert): the common
 * formats, checked by hand against their RFCs. Unknown formats, and every
 * format when assertions are off, only annotate. Each checker takes the
 * string and its length (strings may hold NUL).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"
#include "util/utf8.h"

static int digits(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

static int num(const char *s, size_t n)
{
	int v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

/* RFC 3339 full-date: YYYY-MM-DD with a real day of that month. */
static int is_date(const char *s, size_t n)
{
	static const int days[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int y, m, d;

	if (n != 10 || s[4] != '-' || s[7] != '-' || !digits(s, 4) || !digits(s + 5, 2) ||
	    !digits(s + 8, 2))
		return 0;
	y = num(s, 4);
	m = num(s + 5, 2);
	d = num(s + 8, 2);
	if (m < 1 || m > 12 || d < 1 || d > days[m - 1])
		return 0;
	if (m == 2 && d == 29 && !((y % 4 == 0 && y % 100 != 0) || y % 400 == 0))
		return 0;
	return 1;
}

/* RFC 3339 full-time: HH:MM:SS[.frac](Z|+HH:MM|-HH:MM); a leap second only
 * at 23:59:60 UTC. */
static int is_time(const char *s, size_t n)
{
	int h, m, sec, oh = 0, om = 0, sign = 0;
	size_t i = 8;

	if (n < 9 || s[2] != ':' || s[5] != ':' || !digits(s, 2) || !digits(s + 3, 2) ||
	    !digits(s + 6, 2))
		return 0;
	h = num(s, 2);
	m = num(s + 3, 2);
	sec = num(s + 6, 2);
	if (i < n && s[i] == '.') {
		size_t start = ++i;

		while (i < n && isdigit((unsigned char)s[i]))
			i++;
		if (i == start)
			return 0;
	}
	if (i < n && (s[i] == 'Z' || s[i] == 'z')) {
		i++;
	} else if (i < n && (s[i] == '+' || s[i] == '-')) {
		sign = s[i] == '+' ? 1 : -1;
		if (n - i != 6 || s[i + 3] != ':' || !digits(s + i + 1, 2) || !digits(s + i + 4, 2))
			return 0;
		oh = num(s + i + 1, 2);
		om = num(s + i + 4, 2);
		if (oh > 23 || om > 59)
			return 0;
		i += 6;
	} else {
		return 0;
	}
	if (i != n || h > 23 || m > 59 || sec > 60)
		return 0;
	if (sec == 60) {
		/* the leap second, in UTC: 23:59:60 */
		int utc = (h * 60 + m - sign * (oh * 60 + om)) % (24 * 60);

		if (utc < 0)
			utc += 24 * 60;
		if (utc != 23 * 60 + 59)
			return 0;
	}
	return 1;
}

static int is_date_time(const char *s, size_t n)
{
	return n > 11 && (s[10] == 'T' || s[10] == 't') && is_date(s, 10) &&
	       is_time(s + 11, n - 11);
}

static int is_ipv4(const char *s, size_t n)
{
	char buf[16];
	struct in_addr a;
	size_t i, seg = 0;

	if (n == 0 || n >= sizeof(buf))
		return 0;
	/* inet_pton accepts no leading zeros already; no other characters */
	for (i = 0; i < n; i++) {
		if (s[i] == '.') {
			seg = 0;
			continue;
		}
		if (!isdigit((unsigned char)s[i]))
			return 0;
		if (seg++ == 1 && s[i - 1] == '0')
			return 0; /* leading zero */
	}
	memcpy(buf, s, n);
	buf[n] = '\0';
	return inet_pton(AF_INET, buf, &a) == 1;
}

static int is_ipv6(const char *s, size_t n)
{
	char buf[64];
	struct in6_addr a;
	size_t i;

	if (n == 0 || n >= sizeof(buf))
		return 0;
	for (i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) && s[i] != ':' && s[i] != '.')
			return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return inet_pton(AF_INET6, buf, &a) == 1;
}

/* RFC 1123 host name: labels of letters, digits and inner hyphens, 1-63
 * characters each, 253 in all; a trailing dot is allowed; a label that
 * is an A-label must decode to a valid U-label (format_idn.c). */
static int is_hostname(const char *s, size_t n)
{
	size_t i, label = 0;

	if (n == 0 || n > 253 + (s[n - 1] == '.'))
		return 0;
	for (i = 0; i < n; i++) {
		char c = s[i];

		if (c == '.') {
			if (label == 0 || s[i - 1] == '-')
				return 0;
			label = 0;
			continue;
		}
		if (!(isalnum((unsigned char)c) || c == '-') || (c == '-' && label == 0) ||
		    ++label > 63)
			return 0;
	}
	if (!(label == 0 ? s[n - 1] == '.' && n > 1 : s[n - 1] != '-'))
		return 0;
	/* an A-label ("xn--...") must be one: a valid U-label's encoding */
	return format_alabels_ok(s, n);
}

/* RFC 5321 mailbox, ASCII: local-part (dot-atom or quoted) @ domain
 * (host name or an address literal); with idn, RFC 6531's: UTF-8 in the
 * local part too, an idn-hostname after the '@'. */
static int mailbox(const char *s, size_t n, int idn)
{
	const char *at = NULL;
	size_t i, local;

	for (i = n; i > 0; i--)
		if (s[i - 1] == '@') {
			at = s + i - 1;
			break;
		}
	if (!at)
		return 0;
	local = (size_t)(at - s);
	if (local == 0 || local > 64)
		return 0;
	if (s[0] == '"') {
		/* quoted-string: qtextSMTP (32-126 but '"' and '\\'), or a
		 * quoted-pair of '\\' and 32-126; UTF-8 too with idn */
		if (local < 2 || s[local - 1] != '"')
			return 0;
		for (i = 1; i < local - 1; i++) {
			unsigned char c = (unsigned char)s[i];

			if (c == '\\' && i + 1 < local - 1 && s[i + 1] >= 32 && s[i + 1] <= 126)
				i++;
			else if (!((c >= 32 && c <= 126 && c != '"' && c != '\\') || (idn && c >= 0x80)))
				return 0;
		}
		if (idn && !utf8_valid(s, local))
			return 0;
	} else {
		for (i = 0; i < local; i++) {
			char c = s[i];

			if (c == '.') {
				if (i == 0 || i == local - 1 || s[i + 1] == '.')
					return 0;
			} else if (!(isalnum((unsigned char)c) || (c && strchr("!#$%&'*+-/=?^_`{|}~", c)) ||
				     (idn && (unsigned char)c >= 0x80))) {
				return 0;
			}
		}
		if (idn && !utf8_valid(s, local))
			return 0;
	}
	at++;
	n -= local + 1;
	if (n > 2 && at[0] == '[' && at[n - 1] == ']') {
		if (n > 7 && strncmp(at + 1, "IPv6:", 5) == 0)
			return is_ipv6(at + 6, n - 7);
		return is_ipv4(at + 1, n - 2);
	}
	return idn ? format_idn_hostname(at, n) : is_hostname(at, n);
}

static int is_email(const char *s, size_t n)
{
	return mailbox(s, n, 0);
}

static int is_idn_email(const char *s, size_t n)
{
	return mailbox(s, n, 1);
}

/* RFC 6901. */
static int is_json_pointer(const char *s, size_t n)
{
	size_t i;

	if (n && s[0] != '/')
		return 0;
	for (i = 0; i < n; i++)
		if (s[i] == '~' && (i + 1 >= n || (s[i + 1] != '0' && s[i + 1] != '1')))
			return 0;
	return 1;
}

/* draft-handrews-relative-json-pointer: a non-negative integer without
 * leading zeros, then "#" or a JSON Pointer. */
static int is_relative_json_pointer(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && isdigit((unsigned char)s[i]))
		i++;
	if (i == 0 || (s[0] == '0' && i > 1))
		return 0;
	if (i == n)
		return 1;
	if (s[i] == '#')
		return i + 1 == n;
	return is_json_pointer(s + i, n - i);
}

static int is_uuid(const char *s, size_t n)
{
	size_t i;

	if (n != 36)
		return 0;
	for (i = 0; i < n; i++) {
		if (i == 8 || i == 13 || i == 18 || i == 23) {
			if (s[i] != '-')
				return 0;
		} else if (!isxdigit((unsigned char)s[i])) {
			return 0;
		}
	}
	return 1;
}

/* The URI family (format_uri.c). */
static int is_uri(const char *s, size_t n)
{
	return format_uri(s, n, 0, 1);
}

static int is_uri_reference(const char *s, size_t n)
{
	return format_uri(s, n, 0, 0);
}

static int is_iri(const char *s, size_t n)
{
	return format_uri(s, n, 1, 1);
}

static int is_iri_reference(const char *s, size_t n)
{
	return format_uri(s, n, 1, 0);
}

static int is_regex(const char *s, size_t n)
{
	struct tg_error err;
	char buf[4096];
	pcre2_code *re;

	if (n >= sizeof(buf) || memchr(s, 0, n))
		return 0;
	memcpy(buf, s, n);
	buf[n] = '\0';
	re = regex_compile(buf, n, &err);
	if (!re)
		return 0;
	pcre2_code_free(re);
	return 1;
}

/* ISO 8601 duration as RFC 3339 appendix A: P[nY][nM][nD][T[nH][nM][nS]]
 * or PnW. */
static int is_duration(const char *s, size_t n)
{
	static const char date_units[] = "YMD", time_units[] = "HMS";
	size_t i = 1;
	int in_time = 0, any = 0, last = -1;

	if (n < 2 || s[0] != 'P')
		return 0;
	if (s[n - 1] == 'W')
		return n > 2 && digits(s + 1, n - 2);
	while (i < n) {
		size_t start = i;
		const char *u, *units = in_time ? time_units : date_units;

		if (s[i] == 'T') {
			if (in_time)
				return 0;
			in_time = 1;
			last = -1;
			i++;
			if (i == n)
				return 0;
			continue;
		}
		while (i < n && isdigit((unsigned char)s[i]))
			i++;
		if (i == start || i == n)
			return 0;
		u = strchr(units, s[i]);
		if (!u || (int)(u - units) <= last)
			return 0;
		last = (int)(u - units);
		any = 1;
		i++;
	}
	return any;
}

static int b64val(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' : c >= 'a' && c <= 'z' ? c - 'a' + 26 :
	       c >= '0' && c <= '9' ? c - '0' + 52 : c == '+' ? 62 : c == '/' ? 63 : -1;
}

int content_check(const char *s, size_t n, int b64, int json)
{
	char *buf = NULL;
	const char *doc = s;
	size_t dn = n;
	json_t *v;
	int ok = 1;

	if (b64) {
		/* RFC 4648 base64: groups of four, '=' padding only at the end */
		size_t i, k = 0;
		unsigned acc = 0;
		int bits = 0, pad = 0;

		if (n % 4)
			return 0;
		if (!(buf = malloc(n / 4 * 3 + 1)))
			return 0;
		for (i = 0; i < n; i++) {
			int d = b64val((unsigned char)s[i]);

			if (s[i] == '=' && i >= n - 2) {
				pad++;
				continue;
			}
			if (d < 0 || pad) {
				free(buf);
				return 0;
			}
			acc = acc << 6 | (unsigned)d;
			if ((bits += 6) >= 8) {
				bits -= 8;
				buf[k++] = (char)(acc >> bits);
				acc &= (1u << bits) - 1;
			}
		}
		doc = buf;
		dn = k;
	}
	if (json) {
		/* any JSON text: big integers and "\\u0000" are JSON too */
		v = json_loadb(doc, dn, JSON_DECODE_ANY | JSON_DECODE_INT_AS_REAL | JSON_ALLOW_NUL,
			       NULL);
		ok = v != NULL ? 1 : -1;
		json_decref(v);
	}
	free(buf);
	return ok;
}

int format_check(const char *format, const char *s, size_t n)
{
	static const struct {
		const char *name;
		int (*check)(const char *s, size_t n);
	} table[] = {
		{ "date-time", is_date_time }, { "date", is_date }, { "time", is_time },
		{ "email", is_email }, { "hostname", is_hostname }, { "ipv4", is_ipv4 },
		{ "ipv6", is_ipv6 }, { "uri", is_uri }, { "uri-reference", is_uri_reference },
		{ "json-pointer", is_json_pointer },
		{ "relative-json-pointer", is_relative_json_pointer }, { "uuid", is_uuid },
		{ "regex", is_regex }, { "duration", is_duration }, { "iri", is_iri },
		{ "iri-reference", is_iri_reference }, { "uri-template", format_uri_template },
		{ "idn-hostname", format_idn_hostname }, { "idn-email", is_idn_email },
	};
	size_t i;

	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (strcmp(format, table[i].name) == 0)
			return table[i].check(s, n);
	return 1; /* unknown formats annotate only */
}
