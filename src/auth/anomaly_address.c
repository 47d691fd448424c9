/*
 * Parameter anomalies, the address rule (docs/ANOMALIES.md "The string
 * rules"): addresses of the ranges the egress proxy refuses, and internal
 * names, in text and in URLs' hosts in every spelling a client accepts.
 * Judges by tg_egress_denied_range; must never resolve a name or touch
 * the network.
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
#include "toolgate/egress.h"

/*
 * Addresses are judged by tg_egress_denied_range, the ranges the egress
 * proxy refuses. Where they are looked for decides the false positives:
 *
 *   - dotted quads anywhere in the text, but not a piece of a longer dotted
 *     number or of a word ("v10.0.0.1", "10.0.0.1-rc1", OID 1.3.6.1.4.1),
 *     not a netmask (255.255.255.0), and in 0.0.0.0/8 only 0.0.0.0 itself
 *     (0.1.2.3 is a version far more often than an address);
 *   - IPv6 literals anywhere ("::1", "[fd00:ec2::254]", "::ffff:a.b.c.d");
 *   - a URL's host (after "://") in every spelling a client accepts
 *     (2852039166, 0xa9fea9fe, 0251.0376.0251.0376, 169.254.43518, percent
 *     encoded), and internal names there: single-label hosts, localhost,
 *     .internal, .local, .home.arpa, metadata.goog;
 *   - a name of the metadata service or .internal/.localhost anywhere; the
 *     names that are also words (localhost, metadata, instance-data) only
 *     as the whole string or as NAME:PORT.
 */
#define HOST_MAX 255

static int host_byte(unsigned char c)
{
	return is_word(c) || c == '.' || c == '-';
}

static int ends_with(const char *s, size_t n, const char *tail)
{
	size_t k = strlen(tail);

	return n > k && memcmp(s + n - k, tail, k) == 0;
}

/* What an internal name (lowercase, n bytes) is; NULL for none. loose:
 * the name stands where only a host can (a URL, NAME:PORT, the whole
 * string), so names that are also words count. */
static const char *addr_name(const char *h, size_t n, int loose)
{
	if (ends_with(h, n, ".internal") || (n == 13 && memcmp(h, "metadata.goog", 13) == 0))
		return strstr(h, "metadata") ? "cloud metadata name" : "internal name (.internal)";
	if (ends_with(h, n, ".localhost"))
		return "loopback name (.localhost)";
	if (!loose)
		return NULL;
	if ((n == 8 && memcmp(h, "metadata", 8) == 0) || (n == 13 && memcmp(h, "instance-data", 13) == 0))
		return "cloud metadata name";
	if (n == 9 && memcmp(h, "localhost", 9) == 0)
		return "loopback name";
	if (ends_with(h, n, ".local"))
		return "link-local name (mDNS .local)";
	if (ends_with(h, n, ".home.arpa"))
		return "home network name (.home.arpa)";
	return NULL;
}

/* An address h (as written, printable) in a denied range: said with the
 * range, and the address it is when written otherwise (0xa9fea9fe). */
static int addr_say_ip(const char *h, const struct sockaddr_storage *ss, char *why, size_t cap)
{
	const char *range = tg_egress_denied_range((const struct sockaddr *)ss);
	char canon[INET6_ADDRSTRLEN] = "";
	int other;

	if (!range)
		return 0;
	if (ss->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, canon, sizeof(canon));
	else
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, canon, sizeof(canon));
	other = strcmp(canon, h) != 0;
	snprintf(why, cap, "%.60s%s%s%s: %s", h, other ? " (" : "", other ? canon : "",
		 other ? ")" : "", range);
	return 1;
}

static int addr_say_name(const char *h, const char *what, char *why, size_t cap)
{
	snprintf(why, cap, "%.60s: %s", h, what);
	return 1;
}

/* h (n bytes, NUL-terminated, lowercase) parsed as an IP literal and
 * judged; 0 for a name or nothing. */
static int addr_judge_ip(const char *h, char *why, size_t cap, int *is_name)
{
	struct sockaddr_storage ss;
	int rc = tg_egress_parse_ip(h, &ss);

	*is_name = rc == 0;
	return rc == 1 && addr_say_ip(h, &ss, why, cap);
}

/* The host of the URL whose "://" is at i. */
static int addr_url(const struct text *t, size_t i, char *why, size_t cap)
{
	const unsigned char *s = t->s;
	size_t a = i + 3, e = a, h, he, o = 0;
	char host[HOST_MAX + 1];
	const char *what;
	int is_name;

	while (e < t->n && e - a < 512 && !is_blank(s[e]) && !one_of(s[e], "/?#\\\"'<>`"))
		e++;
	for (h = e; h > a && s[h - 1] != '@'; h--) {
	}
	if (h < e && s[h] == '[') {
		for (he = h; he < e && s[he] != ']'; he++) {
		}
		he += he < e;
	} else {
		for (he = h; he < e && s[he] != ':'; he++) {
		}
	}
	while (h < he && o < HOST_MAX) {
		/* percent-encoded: what a client decodes before it looks */
		if (s[h] == '%' && he - h >= 3 && is_hex(s[h + 1]) && is_hex(s[h + 2])) {
			host[o++] = (char)lower((unsigned char)(hex_value(s[h + 1]) << 4 | hex_value(s[h + 2])));
			h += 3;
		} else {
			host[o++] = (char)lower(s[h++]);
		}
	}
	if (h < he || o == 0)
		return 0;
	if (o > 1 && host[o - 1] == '.')
		o--; /* a fully qualified spelling */
	host[o] = '\0';
	if (memchr(host, '\0', o))
		return 0;
	if (addr_judge_ip(host, why, cap, &is_name))
		return 1;
	if (!is_name)
		return 0;
	for (h = 0; h < o; h++)
		if (!host_byte((unsigned char)host[h]))
			return 0;
	what = addr_name(host, o, 1);
	if (!what && !memchr(host, '.', o))
		what = "single-label name (resolved inside the network)";
	return what && addr_say_name(host, what, why, cap);
}

/* The run at i of bytes in an IPv6 literal, if it has two colons. */
static int addr_v6(const struct text *t, size_t i, size_t *next, char *why, size_t cap)
{
	const unsigned char *s = t->s;
	size_t j = i, colons = 0, hexes = 0, k;
	char buf[64];
	int is_name;

	while (j < t->n && (is_hex(s[j]) || s[j] == ':' || s[j] == '.')) {
		colons += s[j] == ':';
		hexes += s[j] != ':' && s[j] != '.';
		j++;
	}
	if (colons < 2 || hexes == 0 || j - i >= sizeof(buf))
		return 0;
	/* a word goes on ("::1x"); a zone id (%eth0) may follow */
	if (j < t->n && (is_word(s[j]) || s[j] == ':'))
		return 0;
	memcpy(buf, s + i, j - i);
	buf[j - i] = '\0';
	for (k = 0; buf[k]; k++)
		buf[k] = (char)lower((unsigned char)buf[k]);
	if (!strchr(buf, ':') || buf[0] == '.' || buf[j - i - 1] == '.')
		return 0;
	*next = j;
	return addr_judge_ip(buf, why, cap, &is_name);
}

/* Whether /prefix at i after address v names the network v starts
 * (10.0.0.0/8, 0.0.0.0/0): a range written down, not a host to reach. */
static int cidr_network(const struct text *t, size_t i, uint32_t v)
{
	unsigned bits = 0;
	size_t j;

	for (j = i; j < t->n && j - i < 2 && is_digit(t->s[j]); j++)
		bits = bits * 10 + (unsigned)(t->s[j] - '0');
	if (j == i || bits > 32 || (j < t->n && is_word(t->s[j])))
		return 0;
	return bits == 32 ? 0 : (v & (0xffffffffu >> bits)) == 0;
}

/* A dotted quad at i, four decimal parts, not part of a longer number or
 * word. */
static int addr_quad(const struct text *t, size_t i, size_t *next, char *why, size_t cap)
{
	const unsigned char *s = t->s;
	size_t j = i, end, parts = 1, digits = 0;
	struct sockaddr_storage ss;
	uint32_t v;
	char buf[24];
	int is_name;

	while (j < t->n && (is_digit(s[j]) || s[j] == '.'))
		j++;
	*next = j;
	end = j;
	if (s[end - 1] == '.')
		end--; /* the end of a sentence, or a name (10.0.0.1.nip.io) */
	else if (j < t->n && (is_word(s[j]) || (s[j] == '-' && j + 1 < t->n && is_alpha(s[j + 1]))))
		return 0;
	for (j = i; j < end; j++) {
		if (s[j] != '.') {
			if (++digits > 4)
				return 0;
			continue;
		}
		if (!digits)
			return 0;
		parts++;
		digits = 0;
	}
	if (parts != 4 || !digits || end - i >= sizeof(buf))
		return 0;
	memcpy(buf, s + i, end - i);
	buf[end - i] = '\0';
	if (tg_egress_parse_ip(buf, &ss) != 1)
		return 0;
	v = ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr);
	/* a netmask, a version 0.x.y.z: not addresses anyone reaches */
	if (v >= 0xff000000u && (~v & (~v + 1)) == 0)
		return 0;
	if ((v >> 24) == 0 && v != 0)
		return 0;
	if (end < t->n && s[end] == '/' && cidr_network(t, end + 1, v))
		return 0;
	return addr_judge_ip(buf, why, cap, &is_name);
}

/* A host name at i: an internal one anywhere, or a word-like one standing
 * as a host (the whole string, or NAME:PORT). */
static int addr_host_name(const struct text *t, size_t i, size_t *next, char *why, size_t cap)
{
	const unsigned char *s = t->s;
	size_t j = i, k, from = 0, to = t->n;
	char buf[HOST_MAX + 1];
	const char *what;
	int loose;

	while (j < t->n && host_byte(s[j]))
		j++;
	*next = j;
	k = j;
	while (k > i && s[k - 1] == '.')
		k--;
	if (k - i > HOST_MAX || k == i)
		return 0;
	while (from < t->n && is_blank(s[from]))
		from++;
	while (to > from && is_blank(s[to - 1]))
		to--;
	loose = (from == i && to == k) ||
		(k < t->n && s[k] == ':' && k + 1 < t->n && is_digit(s[k + 1]));
	for (j = i; j < k; j++)
		buf[j - i] = (char)lower(s[j]);
	buf[k - i] = '\0';
	what = addr_name(buf, k - i, loose);
	return what && addr_say_name(buf, what, why, cap);
}

int anomaly_rule_address(const struct text *t, char *why, size_t cap)
{
	const unsigned char *s = t->s;
	size_t i = 0, next;

	for (i = 0; i < t->n; i = next) {
		unsigned char prev = i > 0 ? s[i - 1] : ' ';

		next = i + 1;
		if (s[i] == ':' && i + 2 < t->n && s[i + 1] == '/' && s[i + 2] == '/' &&
		    addr_url(t, i, why, cap))
			return 1;
		/* runs start where a word, a number or a literal does not go on */
		if (host_byte(prev))
			continue;
		if (prev != ':' && (is_hex(s[i]) || s[i] == ':') && addr_v6(t, i, &next, why, cap))
			return 1;
		if (next > i + 1)
			continue;
		if (is_digit(s[i]) && addr_quad(t, i, &next, why, cap))
			return 1;
		if (is_alpha(s[i]) && addr_host_name(t, i, &next, why, cap))
			return 1;
	}
	return 0;
}
