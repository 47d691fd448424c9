/*
 * Private interface of the egress proxy (egress_proxy.c): the request
 * parser, on its own so that it can be fuzzed (tests/fuzz/fuzz_egress.c);
 * resolving and judging a name (egress_resolve.c), with the system calls
 * it makes replaceable by a test's; the gateway's egress budget shared by
 * principals (egress_budget.c).
 */
#ifndef TG_EGRESS_INT_H
#define TG_EGRESS_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define MAX_HEAD (16u << 10) /* a request head, bytes */
#define EGRESS_MAX_ADDRS 16  /* addresses of one name checked */

struct egress_request {
	char method[16];
	char target[MAX_HEAD];
	char version[9];        /* HTTP/1.0 or HTTP/1.1 */
	char host[300];         /* as written: a name, an IPv4 literal or "[v6]" */
	unsigned port;
	int connect;            /* CONNECT; otherwise a plain request to forward */
	const char *path;       /* a plain request's path and query, in target */
	uint64_t body;          /* its Content-Length */
	size_t line_end;        /* where the header lines start */
};

/* Read the request head buf (head bytes, "\r\n\r\n" included, NUL after)
 * into *rq. NULL, or why it is refused with *code (400, 405, 411, 431). */
const char *egress_parse_request(const char *buf, size_t head, struct egress_request *rq,
				 int *code);

/* The IPv4 address sa is or carries (host order): an IPv4 address, or an
 * IPv6 one that embeds it (IPv4-mapped, IPv4-compatible, IPv4-translated,
 * NAT64 64:ff9b::/96, 6to4 2002::/16, else an ISATAP interface identifier
 * ...:0:5efe:a.b.c.d or ...:200:5efe:a.b.c.d). 1 and OUT *v4, or 0
 * (egress_addr.c). */
int egress_ipv4_of(const struct sockaddr *sa, uint32_t *v4);

struct addrinfo;
struct ifaddrs;

/* What resolving asks of the system: libc's, or a test's fakes. */
struct egress_sys {
	int (*getaddrinfo)(const char *node, const char *service, const struct addrinfo *hints,
			   struct addrinfo **res);
	void (*freeaddrinfo)(struct addrinfo *res);
	int (*getifaddrs)(struct ifaddrs **list);
	void (*freeifaddrs)(struct ifaddrs *list);
};

/* The addresses of name for port, resolved (hosts, a "NAME=ADDRESS" table
 * of the proxy's own, else /etc/hosts, else DNS for "NAME.") and judged:
 * each normalised as tg_egress_parse_ip reads a literal (IPv4-mapped as
 * IPv4), none in a deny range (tg_egress_denied_range), none an address of
 * this host in either family. sys NULL: libc. 0 and OUT addrs[*n] (at most
 * EGRESS_MAX_ADDRS, port set); -1 and why when the name has no address
 * (502); -2 and why when it is refused (403): a denied or own address,
 * more than EGRESS_MAX_ADDRS of them, or this host's addresses cannot be
 * listed (getifaddrs failed: refused rather than unchecked). */
int egress_resolve(const struct egress_sys *sys, char *const *hosts, const char *name,
		   unsigned port, struct sockaddr_storage *addrs, size_t *n, char *why, size_t len);

/* The gateway's egress budget (egress_budget.c): connections through all
 * proxies of the process, and the share of them one principal's runs may
 * hold together (a quarter, at least 8). */
#define EGRESS_ALL 256
#define EGRESS_SHARE (EGRESS_ALL / 4 > 8 ? EGRESS_ALL / 4 : 8)
#define EGRESS_PRINCIPAL_MAX 256 /* bytes of a principal told apart */

struct egress_share;

/* principal's share (NULL: ""), for one more proxy; NULL out of memory.
 * Given back with egress_share_put once the proxy has no connection. */
struct egress_share *egress_share_get(const char *principal);
void egress_share_put(struct egress_share *s);
/* One more connection for a proxy of s: NULL, or why not (the gateway's
 * budget or the principal's share is taken). Never blocks. */
const char *egress_budget_take(struct egress_share *s);
/* The connection taken is over. */
void egress_budget_give(struct egress_share *s);

#endif
