/*
 * A listed name's addresses for the egress proxy (docs/EGRESS.md, "The
 * rules"), resolved and judged in one step: the proxy's own table (tests),
 * else /etc/hosts, else DNS for the absolute name. Every answer is
 * normalised right away as a literal is (an IPv4-mapped answer is the
 * IPv4 address it carries, and is connected to over IPv4), and the name is
 * refused when any answer is in a deny range or is an address of this
 * host in either family (an IPv6 answer that carries one of this host's
 * IPv4 addresses included), and when this host's addresses cannot be
 * listed at all.
 *
 * It must never hand the proxy an address it did not judge, nor judge
 * one spelling of an address and hand over another.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sandbox/egress_int.h"
#include "toolgate/egress.h"
#include "util/file.h"

static const struct egress_sys libc_sys = { getaddrinfo, freeaddrinfo, getifaddrs, freeifaddrs };

/* One address for name, when word (l bytes) is name (nl bytes): into
 * addrs while there is room, counted in *seen either way. */
static void add_if(const char *word, size_t l, const char *name, size_t nl, const char *addr,
		   struct sockaddr_storage *addrs, size_t *n, size_t *seen)
{
	if (l == nl && strncasecmp(word, name, nl) == 0 && ++*seen <= EGRESS_MAX_ADDRS &&
	    tg_egress_parse_ip(addr, &addrs[*n]) == 1)
		(*n)++;
}

/* name in /etc/hosts ("ADDRESS NAME [ALIAS...]" lines, # comments), read
 * here rather than through getaddrinfo, so that a name missing from it
 * goes to DNS as an absolute name (below). At most 1 MiB of it. */
static void etc_hosts(const char *name, size_t nl, struct sockaddr_storage *addrs, size_t *n,
		      size_t *seen)
{
	size_t len;
	char *text = file_read_all("/etc/hosts", 1u << 20, 1, &len), *line, *lsave = NULL;

	for (line = text ? strtok_r(text, "\n", &lsave) : NULL; line;
	     line = strtok_r(NULL, "\n", &lsave)) {
		char *save = NULL, *addr, *w;

		line[strcspn(line, "#")] = 0;
		addr = strtok_r(line, " \t\r", &save);
		while (addr && (w = strtok_r(NULL, " \t\r", &save)))
			add_if(w, strlen(w), name, nl, addr, addrs, n, seen);
	}
	free(text);
}

/* ::ffff:a.b.c.d as a.b.c.d, as tg_egress_parse_ip reads a literal: what
 * is judged is then what is connected to, over IPv4 (a dual-stack socket
 * would have reached the IPv4 address however it was judged). */
static void normalise(struct sockaddr_storage *a)
{
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)a;
	struct sockaddr_in *s4 = (struct sockaddr_in *)a;
	uint32_t v4;

	if (a->ss_family != AF_INET6 || !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
		return;
	memcpy(&v4, &s6->sin6_addr.s6_addr[12], 4);
	memset(a, 0, sizeof(*a));
	s4->sin_family = AF_INET;
	s4->sin_addr.s_addr = v4;
}

/* The addresses of name (without a trailing dot, l bytes): OUT *n. -1 and
 * why when it has none; -2 for more than EGRESS_MAX_ADDRS (a name that
 * resolves to a crowd is refused rather than half checked). DNS is asked
 * for the absolute name "NAME.": no search domain is tried, so a name that
 * does not exist never becomes one of the site's own. */
static int lookup(const struct egress_sys *sys, char *const *hosts, const char *name, size_t l,
		  unsigned port, struct sockaddr_storage *addrs, size_t *n, char *why, size_t len)
{
	struct addrinfo hints, *res = NULL, *ai;
	size_t i, seen = 0;
	char svc[8], absolute[260];
	int rc;

	for (i = 0; hosts && hosts[i]; i++) {
		const char *eq = strchr(hosts[i], '=');

		if (eq)
			add_if(hosts[i], (size_t)(eq - hosts[i]), name, l, eq + 1, addrs, n, &seen);
	}
	if (!hosts)
		etc_hosts(name, l, addrs, n, &seen);
	if (hosts || seen)
		goto counted;
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_ADDRCONFIG;
	snprintf(svc, sizeof(svc), "%u", port);
	snprintf(absolute, sizeof(absolute), "%.*s.", (int)l, name);
	rc = sys->getaddrinfo(absolute, svc, &hints, &res);
	if (rc != 0) {
		snprintf(why, len, "%.200s does not resolve: %s", name, gai_strerror(rc));
		return -1;
	}
	for (ai = res; ai; ai = ai->ai_next)
		if ((ai->ai_family == AF_INET || ai->ai_family == AF_INET6) && ai->ai_addr &&
		    ai->ai_addrlen <= sizeof(addrs[0]) && ++seen <= EGRESS_MAX_ADDRS) {
			memset(&addrs[*n], 0, sizeof(addrs[0]));
			memcpy(&addrs[(*n)++], ai->ai_addr, ai->ai_addrlen);
		}
	sys->freeaddrinfo(res);
counted:
	if (seen > EGRESS_MAX_ADDRS) {
		snprintf(why, len, "%.200s resolves to more than %d addresses", name,
			 EGRESS_MAX_ADDRS);
		*n = 0;
		return -2;
	}
	if (!*n)
		snprintf(why, len, hosts || seen ? "%.200s does not resolve" : "%.200s has no IP address",
			 name);
	return *n ? 0 : -1;
}

/* Whether a is an address of this host's interfaces list: the same IPv6
 * address, or the same IPv4 address however either carries it (an IPv4
 * interface address inside a NAT64 or 6to4 answer, or the reverse). */
static int own_address(const struct ifaddrs *list, const struct sockaddr_storage *a)
{
	const struct ifaddrs *i;
	uint32_t v4, own;
	int has_v4 = egress_ipv4_of((const struct sockaddr *)a, &v4);

	for (i = list; i; i = i->ifa_next) {
		const struct sockaddr *s = i->ifa_addr;

		if (!s)
			continue;
		if (s->sa_family == AF_INET6 && a->ss_family == AF_INET6 &&
		    memcmp(&((const struct sockaddr_in6 *)s)->sin6_addr,
			   &((const struct sockaddr_in6 *)a)->sin6_addr, 16) == 0)
			return 1;
		if (has_v4 && egress_ipv4_of(s, &own) && own == v4)
			return 1;
	}
	return 0;
}

static const char *addr_text(const struct sockaddr_storage *a, char *buf, size_t len)
{
	const void *in = a->ss_family == AF_INET
				 ? (const void *)&((const struct sockaddr_in *)a)->sin_addr
				 : (const void *)&((const struct sockaddr_in6 *)a)->sin6_addr;

	return inet_ntop(a->ss_family, in, buf, (socklen_t)len) ? buf : "?";
}

/* Every one of n addresses judged: 0, or -2 and why the name is refused. */
static int judge(const struct egress_sys *sys, const char *name,
		 const struct sockaddr_storage *addrs, size_t n, char *why, size_t len)
{
	struct ifaddrs *list = NULL;
	char text[INET6_ADDRSTRLEN];
	const char *range = NULL;
	size_t i;

	for (i = 0; i < n && !range; i++)
		range = tg_egress_denied_range((const struct sockaddr *)&addrs[i]);
	if (!range) {
		/* unlisted, the host's own addresses cannot be told from
		 * others: the name is refused rather than let through */
		if (sys->getifaddrs(&list) < 0) {
			snprintf(why, len, "%.100s: refused, this host's own addresses cannot be listed "
				 "(getifaddrs: %s)", name, strerror(errno));
			return -2;
		}
		for (i = 0; i < n && !range; i++)
			if (own_address(list, &addrs[i]))
				range = "this host's own address";
		sys->freeifaddrs(list);
	}
	if (!range)
		return 0;
	snprintf(why, len, "%.100s resolves to %s, in a denied range: %s", name,
		 addr_text(&addrs[i - 1], text, sizeof(text)), range);
	return -2;
}

int egress_resolve(const struct egress_sys *sys, char *const *hosts, const char *name,
		   unsigned port, struct sockaddr_storage *addrs, size_t *n, char *why, size_t len)
{
	size_t i, l = strlen(name);
	int rc;

	if (!sys)
		sys = &libc_sys;
	*n = 0;
	if (l && name[l - 1] == '.')
		l--;
	rc = lookup(sys, hosts, name, l, port, addrs, n, why, len);
	if (rc < 0)
		return rc;
	for (i = 0; i < *n; i++) {
		normalise(&addrs[i]);
		if (addrs[i].ss_family == AF_INET)
			((struct sockaddr_in *)&addrs[i])->sin_port = htons((uint16_t)port);
		else
			((struct sockaddr_in6 *)&addrs[i])->sin6_port = htons((uint16_t)port);
	}
	rc = judge(sys, name, addrs, *n, why, len);
	if (rc < 0)
		*n = 0;
	return rc;
}
