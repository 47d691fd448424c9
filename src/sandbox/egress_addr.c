/*
 * Addresses for the egress proxy (docs/EGRESS.md): IP literals in every
 * spelling a client library accepts, so that "0x7f.1" or "2130706433" is
 * known for the loopback address it is, and the ranges no tool may reach
 * (the cloud metadata address among them) unless a rule names the very
 * address, with the IPv4 address an IPv6 one carries judged as itself.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/egress_int.h"
#include "toolgate/egress.h"

/* One part of a dotted IPv4 literal: decimal, octal (0...) or hex (0x...);
 * -1 when it is none of them or above max. */
static long long ipv4_part(const char *s, size_t n, unsigned long long max)
{
	unsigned long long v = 0;
	unsigned base = 10, d;
	size_t i = 0;

	if (n == 0)
		return -1;
	if (n >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		i = 2;
		if (n == 2)
			return 0; /* "0x" alone is 0, as inet_aton takes it */
	} else if (n >= 2 && s[0] == '0') {
		base = 8;
		i = 1;
	}
	for (; i < n; i++) {
		if (isdigit((unsigned char)s[i]))
			d = (unsigned)(s[i] - '0');
		else if (base == 16 && isxdigit((unsigned char)s[i]))
			d = (unsigned)(tolower((unsigned char)s[i]) - 'a' + 10);
		else
			return -1;
		if (d >= base)
			return -1;
		v = v * base + d;
		if (v > max)
			return -1;
	}
	return (long long)v;
}

/* s (n bytes) as inet_aton reads it: 1 to 4 parts, the last filling the
 * bytes left. 0 and OUT *out (host order), or -1. */
static int parse_ipv4(const char *s, size_t n, uint32_t *out)
{
	size_t start = 0, i, parts = 0;
	long long v[4];
	uint32_t a = 0;

	for (i = 0; i <= n; i++) {
		if (i < n && s[i] != '.')
			continue;
		if (parts == 4)
			return -1;
		v[parts] = ipv4_part(s + start, i - start, 0xffffffffull);
		if (v[parts] < 0)
			return -1;
		parts++;
		start = i + 1;
	}
	for (i = 0; i + 1 < parts; i++) {
		if (v[i] > 255)
			return -1;
		a |= (uint32_t)v[i] << (24 - 8 * i);
	}
	if (v[parts - 1] > (long long)(0xffffffffull >> (8 * (parts - 1))))
		return -1;
	*out = a | (uint32_t)v[parts - 1];
	return 0;
}

/* The WHATWG URL rule: a host whose last label is a number (digits, or
 * 0x and hex digits) is an IPv4 address, or invalid. */
static int ends_in_number(const char *h, size_t n)
{
	size_t i = n;

	while (i > 0 && h[i - 1] != '.')
		i--;
	if (i == n)
		return 0;
	if (n - i >= 2 && h[i] == '0' && (h[i + 1] == 'x' || h[i + 1] == 'X')) {
		for (i += 2; i < n; i++)
			if (!isxdigit((unsigned char)h[i]))
				return 0;
		return 1;
	}
	for (; i < n; i++)
		if (!isdigit((unsigned char)h[i]))
			return 0;
	return 1;
}

int tg_egress_parse_ip(const char *host, struct sockaddr_storage *out)
{
	char buf[INET6_ADDRSTRLEN + 2];
	size_t n = host ? strnlen(host, 300) : 0;
	uint32_t v4;

	memset(out, 0, sizeof(*out));
	if (n == 0 || n >= 300)
		return -1;
	if (host[0] == '[' || strchr(host, ':')) {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)out;
		size_t from = host[0] == '[', len = n - from;

		if (from && host[n - 1] != ']')
			return -1;
		len -= from;
		if (len >= sizeof(buf) || memchr(host + from, '%', len))
			return -1; /* a zone id names an interface of ours: never */
		memcpy(buf, host + from, len);
		buf[len] = 0;
		s6->sin6_family = AF_INET6;
		if (inet_pton(AF_INET6, buf, &s6->sin6_addr) != 1)
			return -1;
		if (IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
			/* ::ffff:a.b.c.d is a.b.c.d, for rules and connections alike */
			struct sockaddr_in *s4 = (struct sockaddr_in *)out;

			memcpy(&v4, &s6->sin6_addr.s6_addr[12], 4);
			memset(out, 0, sizeof(*out));
			s4->sin_family = AF_INET;
			s4->sin_addr.s_addr = v4;
		}
		return 1;
	}
	if (host[n - 1] == '.')
		n--; /* a fully qualified spelling */
	if (!ends_in_number(host, n))
		return 0;
	if (parse_ipv4(host, n, &v4) < 0)
		return -1;
	((struct sockaddr_in *)out)->sin_family = AF_INET;
	((struct sockaddr_in *)out)->sin_addr.s_addr = htonl(v4);
	return 1;
}

static const struct {
	uint32_t net, mask;
	const char *name;
} v4_denied[] = {
	{ 0x00000000, 0xff000000, "this network (0.0.0.0/8)" },
	{ 0x0a000000, 0xff000000, "private (10.0.0.0/8)" },
	{ 0x64400000, 0xffc00000, "shared address space (100.64.0.0/10)" },
	{ 0x7f000000, 0xff000000, "loopback (127.0.0.0/8)" },
	{ 0xa83f8110, 0xffffffff, "cloud platform service (Azure WireServer 168.63.129.16)" },
	{ 0xa9fe0000, 0xffff0000, "link-local and cloud metadata (169.254.0.0/16)" },
	{ 0xac100000, 0xfff00000, "private (172.16.0.0/12)" },
	{ 0xc0000000, 0xffffff00, "IETF protocol assignments (192.0.0.0/24)" },
	{ 0xc0a80000, 0xffff0000, "private (192.168.0.0/16)" },
	{ 0xc6120000, 0xfffe0000, "benchmarking (198.18.0.0/15)" },
	{ 0xe0000000, 0xf0000000, "multicast (224.0.0.0/4)" },
	{ 0xf0000000, 0xf0000000, "reserved and broadcast (240.0.0.0/4)" },
};

static const char *v4_range(uint32_t a)
{
	size_t i;

	for (i = 0; i < sizeof(v4_denied) / sizeof(v4_denied[0]); i++)
		if ((a & v4_denied[i].mask) == v4_denied[i].net)
			return v4_denied[i].name;
	return NULL;
}

static int prefix(const unsigned char *a, const unsigned char *p, unsigned bits)
{
	unsigned full = bits / 8, rest = bits % 8;

	if (memcmp(a, p, full) != 0)
		return 0;
	return !rest || ((a[full] ^ p[full]) & (0xff << (8 - rest))) == 0;
}

static uint32_t v4_at(const unsigned char *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
}

static const unsigned char zero[16],
			   mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff },
			   translated[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0 },
			   nat64[12] = { 0, 0x64, 0xff, 0x9b }, sixto4[2] = { 0x20, 0x02 };

/* An ISATAP interface identifier (RFC 5214: 0:5efe or 200:5efe, then an
 * IPv4 address), under whatever /64: 1 and OUT *v4, or 0. */
static int isatap(const unsigned char *a, uint32_t *v4)
{
	if ((a[8] | 0x02) != 0x02 || a[9] != 0 || a[10] != 0x5e || a[11] != 0xfe)
		return 0;
	*v4 = v4_at(a + 12);
	return 1;
}

int egress_ipv4_of(const struct sockaddr *sa, uint32_t *v4)
{
	const unsigned char *a;

	if (sa->sa_family == AF_INET) {
		*v4 = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
		return 1;
	}
	if (sa->sa_family != AF_INET6)
		return 0;
	a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	if (prefix(a, mapped, 96) || prefix(a, zero, 96) || prefix(a, nat64, 96) ||
	    prefix(a, translated, 96)) {
		*v4 = v4_at(a + 12);
		return 1;
	}
	if (prefix(a, sixto4, 16)) {
		*v4 = v4_at(a + 2);
		return 1;
	}
	return isatap(a, v4);
}

/* IPv6 ranges denied as such, the counterparts of the IPv4 ones and those
 * of IPv6's own; the first that holds an address names it. */
static const struct {
	unsigned char net[16];
	unsigned bits;
	const char *name;
} v6_denied[] = {
	{ { 0, 0x64, 0xff, 0x9b, 0, 1 }, 48, "local NAT64 (64:ff9b:1::/48)" },
	{ { 0x01, 0 }, 64, "discard-only (100::/64)" },
	{ { 0x01, 0, 0, 0, 0, 0, 0, 1 }, 64, "dummy prefix (100:0:0:1::/64)" },
	{ { 0x20, 0x01, 0, 0 }, 32, "Teredo (2001::/32), which hides an IPv4 address" },
	{ { 0x20, 0x01, 0, 0x02, 0, 0 }, 48, "benchmarking (2001:2::/48)" },
	{ { 0x20, 0x01 }, 23, "IETF protocol assignments, anycast services among them (2001::/23)" },
	{ { 0x5f, 0 }, 16, "segment routing SIDs (5f00::/16)" },
	{ { 0xfc }, 7, "unique-local, cloud metadata among them (fc00::/7)" },
	{ { 0xfe, 0x80 }, 10, "link-local (fe80::/10)" },
	{ { 0xfe, 0xc0 }, 10, "site-local (fec0::/10)" },
	{ { 0xff }, 8, "multicast (ff00::/8)" },
};

const char *tg_egress_denied_range(const struct sockaddr *sa)
{
	const unsigned char *a;
	const char *range;
	uint32_t v4;
	size_t i;

	if (sa->sa_family == AF_INET)
		return v4_range(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	if (sa->sa_family != AF_INET6)
		return "not an IP address";
	a = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	if (memcmp(a, zero, 16) == 0)
		return "unspecified (::)";
	if (memcmp(a, zero, 15) == 0 && a[15] == 1)
		return "loopback (::1)";
	/* forms no service is reached by: IPv4-compatible addresses are
	 * deprecated (RFC 4291; a kernel may tunnel them over IPv4, sit0),
	 * IPv4-translated ones live inside a translator (RFC 2765) */
	if (prefix(a, zero, 96))
		return "IPv4-compatible (::/96), deprecated";
	if (prefix(a, translated, 96))
		return "IPv4-translated (::ffff:0:0:0/96), for translators only";
	for (i = 0; i < sizeof(v6_denied) / sizeof(v6_denied[0]); i++)
		if (prefix(a, v6_denied[i].net, v6_denied[i].bits))
			return v6_denied[i].name;
	/* IPv4-mapped, NAT64, 6to4, ISATAP: the IPv4 address inside, judged
	 * as itself (an ISATAP identifier under a 6to4 prefix: both) */
	if (egress_ipv4_of(sa, &v4) && (range = v4_range(v4)))
		return range;
	if (isatap(a, &v4))
		return v4_range(v4);
	return NULL;
}

int tg_egress_rule_is_address(const char *rule)
{
	const char *colon = rule ? strrchr(rule, ':') : NULL;
	struct sockaddr_storage ss;
	char host[300];

	if (!colon || (size_t)(colon - rule) >= sizeof(host))
		return 0;
	memcpy(host, rule, (size_t)(colon - rule));
	host[colon - rule] = '\0';
	return tg_egress_parse_ip(host, &ss) == 1;
}
