/* Unit tests: the egress allowlist (src/sandbox/egress_*.c). Addresses in
 * every spelling, the deny ranges, the rules, and the proxy itself over
 * loopback only: an upstream of the test's own on 127.0.0.1, reached
 * through a rule that names that address (a name that resolves there is
 * refused, as loopback is); the gate's record of egress refusals. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <ifaddrs.h>
#include <netdb.h>

#include <jansson.h>

#include "gate/gate_int.h"
#include "sandbox/egress_int.h"
#include "toolgate/audit.h"
#include "toolgate/catalog.h"
#include "toolgate/egress.h"
#include "toolgate/gate.h"
#include "unit.h"

/* ---- addresses and rules ------------------------------------------------- */

static int is_ip(const char *host, const char *want)
{
	struct sockaddr_storage a;
	char text[INET6_ADDRSTRLEN];
	const void *in;

	if (tg_egress_parse_ip(host, &a) != 1)
		return 0;
	in = a.ss_family == AF_INET ? (const void *)&((struct sockaddr_in *)&a)->sin_addr
				    : (const void *)&((struct sockaddr_in6 *)&a)->sin6_addr;
	inet_ntop(a.ss_family, in, text, sizeof(text));
	if (strcmp(text, want) != 0)
		fprintf(stderr, "%s read as %s, not %s\n", host, text, want);
	return strcmp(text, want) == 0;
}

/* Every spelling a client library takes for an address is known as one. */
static int spellings(void)
{
	struct sockaddr_storage a;

	CHECK(is_ip("127.0.0.1", "127.0.0.1"));
	CHECK(is_ip("2130706433", "127.0.0.1"));
	CHECK(is_ip("0x7f000001", "127.0.0.1"));
	CHECK(is_ip("0177.0.0.1", "127.0.0.1"));
	CHECK(is_ip("0x7f.1", "127.0.0.1"));
	CHECK(is_ip("127.1", "127.0.0.1"));
	CHECK(is_ip("127.0.1", "127.0.0.1"));
	CHECK(is_ip("169.254.169.254.", "169.254.169.254"));
	CHECK(is_ip("0xA9.0xFE.0xA9.0xFE", "169.254.169.254"));
	CHECK(is_ip("2852039166", "169.254.169.254"));
	CHECK(is_ip("[::1]", "::1"));
	/* an IPv4-mapped address is the IPv4 address */
	CHECK(is_ip("::ffff:127.0.0.1", "127.0.0.1"));
	CHECK(is_ip("[::ffff:a9fe:a9fe]", "169.254.169.254"));
	CHECK(is_ip("[64:ff9b::a9fe:a9fe]", "64:ff9b::a9fe:a9fe"));
	CHECK(is_ip("fd00:ec2::254", "fd00:ec2::254"));
	/* names, and what is neither */
	CHECK(tg_egress_parse_ip("api.example.com", &a) == 0);
	CHECK(tg_egress_parse_ip("1e100.net", &a) == 0);
	CHECK(tg_egress_parse_ip("1.2.3.4.5", &a) == -1);
	CHECK(tg_egress_parse_ip("256.1.1.1", &a) == -1);
	CHECK(tg_egress_parse_ip("1.2.3.256", &a) == -1);
	CHECK(tg_egress_parse_ip("0x100000000", &a) == -1);
	CHECK(tg_egress_parse_ip("08.1.1.1", &a) == -1);
	CHECK(tg_egress_parse_ip("example.08", &a) == -1);
	CHECK(tg_egress_parse_ip("[fe80::1%eth0]", &a) == -1);
	CHECK(tg_egress_parse_ip("fe80::1%25eth0", &a) == -1);
	CHECK(tg_egress_parse_ip("[::1", &a) == -1);
	CHECK(tg_egress_parse_ip("", &a) == -1);
	return 0;
}

static const char *range_of(const char *host)
{
	struct sockaddr_storage a;

	if (tg_egress_parse_ip(host, &a) != 1)
		return "(not an address)";
	return tg_egress_denied_range((struct sockaddr *)&a);
}

/* The ranges no name may lead to, in IPv4 and every IPv6 form that
 * embeds an IPv4 address; public addresses pass. */
static int deny_ranges(void)
{
	static const char *const denied[] = {
		"0.0.0.0", "10.1.2.3", "100.64.0.1", "127.0.0.1", "169.254.169.254",
		"172.16.0.1", "172.31.255.255", "192.0.0.170", "192.168.1.1", "198.18.0.1",
		"224.0.0.1", "255.255.255.255", "::", "::1", "::ffff:169.254.169.254",
		"::ffff:10.0.0.1", "::127.0.0.1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::1",
		"2002:a9fe:a9fe::", "2001:0:4136:e378::1", "fd00:ec2::254", "fc00::1",
		"fe80::1", "fec0::1", "ff02::1", "100::1", "168.63.129.16", "::ffff:0:a9fe:a9fe",
		/* deprecated or translator-only forms, whatever IPv4 they carry */
		"::8.8.8.8", "::ffff:0:808:808",
		/* IETF protocol assignments (192.0.0.0/24's counterpart): PCP,
		 * TURN and DNS-SD anycast, benchmarking (198.18.0.0/15's), the
		 * rest of 2001::/23; SRv6 SIDs, the dummy prefix */
		"2001:1::1", "2001:1::2", "2001:1::3", "2001:2::1", "2001:2:0:ffff::1", "2001:3::1",
		"2001:1ff:ffff::1", "5f00::1", "5f00:ffff::1", "100:0:0:1::1", "100::1:0:0:1",
		/* ISATAP: judged by the IPv4 address it carries */
		"2001:db8::5efe:10.0.0.1", "2001:db8::200:5efe:169.254.169.254",
		"2606:4700::5efe:127.0.0.1", "2002:808:808::5efe:10.0.0.1",
	};
	static const char *const open[] = {
		"8.8.8.8", "203.0.113.10", "172.32.0.1", "100.128.0.1", "169.253.255.255",
		"2001:db8::1", "2606:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808",
		"2001:200::1", "5eff::1", "100:0:0:2::1", "2001:db8::5efe:8.8.8.8",
		"2001:db8::200:5efe:8.8.8.8", "2001:db8::400:5efe:a00:1", "2001:db8::5eff:a00:1",
	};
	size_t i;

	for (i = 0; i < sizeof(denied) / sizeof(denied[0]); i++) {
		if (!range_of(denied[i]))
			fprintf(stderr, "%s passed\n", denied[i]);
		CHECK(range_of(denied[i]) != NULL);
	}
	for (i = 0; i < sizeof(open) / sizeof(open[0]); i++) {
		if (range_of(open[i]))
			fprintf(stderr, "%s denied: %s\n", open[i], range_of(open[i]));
		CHECK(range_of(open[i]) == NULL);
	}
	CHECK(strstr(range_of("169.254.169.254"), "metadata"));
	CHECK(strstr(range_of("fd00:ec2::254"), "metadata"));
	CHECK(strstr(range_of("::8.8.8.8"), "IPv4-compatible"));
	CHECK(strstr(range_of("2001::1"), "Teredo"));
	CHECK(strstr(range_of("2001:2::1"), "benchmarking"));
	CHECK(strstr(range_of("2001:1::1"), "IETF protocol assignments"));
	CHECK(strstr(range_of("2001:db8::5efe:10.0.0.1"), "private (10.0.0.0/8)"));
	CHECK(strstr(range_of("fd00::5efe:8.8.8.8"), "unique-local"));
	return 0;
}

/* ---- a name's answers, judged ------------------------------------------------- */

/* A resolver and an interface list of the test's own: what the name asked
 * answers (NULL-terminated), and this host's addresses. */
static const char *const *fake_answers;
static char fake_asked[300];
static int fake_ifaddrs_fail;

static int fake_getaddrinfo(const char *node, const char *service, const struct addrinfo *hints,
			    struct addrinfo **res)
{
	struct addrinfo *head = NULL, **tail = &head;
	size_t i;

	(void)service;
	(void)hints;
	snprintf(fake_asked, sizeof(fake_asked), "%s", node);
	for (i = 0; fake_answers && fake_answers[i]; i++) {
		struct addrinfo *ai = calloc(1, sizeof(*ai) + sizeof(struct sockaddr_storage));
		struct sockaddr_in6 *s6;
		struct sockaddr_in *s4;

		if (!ai)
			break;
		s6 = (struct sockaddr_in6 *)(ai + 1);
		s4 = (struct sockaddr_in *)(ai + 1);
		ai->ai_addr = (struct sockaddr *)(ai + 1);
		ai->ai_socktype = SOCK_STREAM;
		if (inet_pton(AF_INET6, fake_answers[i], &s6->sin6_addr) == 1) {
			ai->ai_family = s6->sin6_family = AF_INET6;
			ai->ai_addrlen = sizeof(*s6);
		} else if (inet_pton(AF_INET, fake_answers[i], &s4->sin_addr) == 1) {
			ai->ai_family = s4->sin_family = AF_INET;
			ai->ai_addrlen = sizeof(*s4);
		}
		*tail = ai;
		tail = &ai->ai_next;
	}
	*res = head;
	return head ? 0 : EAI_NONAME;
}

static void fake_freeaddrinfo(struct addrinfo *res)
{
	while (res) {
		struct addrinfo *next = res->ai_next;

		free(res);
		res = next;
	}
}

static struct sockaddr_in own_lo = { .sin_family = AF_INET }, own4 = { .sin_family = AF_INET };
static struct sockaddr_in6 own6 = { .sin6_family = AF_INET6 };
static struct ifaddrs if_packet = { .ifa_name = (char *)"eth0" },
		      if_lo = { &if_packet, (char *)"lo", 0, (struct sockaddr *)&own_lo, NULL, { NULL }, NULL },
		      if_v4 = { &if_lo, (char *)"eth0", 0, (struct sockaddr *)&own4, NULL, { NULL }, NULL },
		      if_v6 = { &if_v4, (char *)"eth0", 0, (struct sockaddr *)&own6, NULL, { NULL }, NULL };

static int fake_getifaddrs(struct ifaddrs **list)
{
	inet_pton(AF_INET, "127.0.0.1", &own_lo.sin_addr);
	inet_pton(AF_INET, "192.0.2.77", &own4.sin_addr);
	inet_pton(AF_INET6, "2001:db8::77", &own6.sin6_addr);
	if (fake_ifaddrs_fail) {
		errno = ENOMEM;
		return -1;
	}
	*list = &if_v6;
	return 0;
}

static void fake_freeifaddrs(struct ifaddrs *list)
{
	(void)list;
}

/* egress_resolve with the fakes, for name answering answers: its status,
 * and why or the first address (with its family) in out. */
static int judged(const char *name, const char *const *answers, char *out, size_t len)
{
	static const struct egress_sys sys = { fake_getaddrinfo, fake_freeaddrinfo,
					       fake_getifaddrs, fake_freeifaddrs };
	struct sockaddr_storage addrs[EGRESS_MAX_ADDRS];
	char text[INET6_ADDRSTRLEN] = "";
	size_t n = 99;
	int rc;

	fake_answers = answers;
	out[0] = 0;
	rc = egress_resolve(&sys, NULL, name, 443, addrs, &n, out, len);
	if (rc == 0 && n) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)&addrs[0];
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)&addrs[0];

		if (addrs[0].ss_family == AF_INET && ntohs(s4->sin_port) == 443)
			inet_ntop(AF_INET, &s4->sin_addr, text, sizeof(text));
		else if (addrs[0].ss_family == AF_INET6 && ntohs(s6->sin6_port) == 443)
			inet_ntop(AF_INET6, &s6->sin6_addr, text, sizeof(text));
		snprintf(out, len, "%s %s n=%zu", addrs[0].ss_family == AF_INET ? "v4" : "v6", text,
			 n);
	}
	if (rc != 0 && n != 0)
		return 99; /* a refused name hands no address over */
	return rc;
}

/* A DNS answer is normalised and judged as what is connected to: an
 * IPv4-mapped answer of an address of this host (::ffff:192.0.2.77, here
 * an address of eth0) is this host's address, refused, as are its NAT64
 * and 6to4 forms and its IPv6 address; a public mapped answer is
 * connected to over IPv4; the deprecated forms are refused; and a host
 * whose interfaces cannot be listed refuses every name. */
static int resolve_judged(void)
{
	static const char *const mapped_own[] = { "::ffff:192.0.2.77", NULL };
	static const char *const mapped_public[] = { "::ffff:203.0.113.9", NULL };
	static const char *const nat64_own[] = { "64:ff9b::c000:24d", NULL };
	static const char *const sixto4_own[] = { "2002:c000:24d::1", NULL };
	static const char *const v6_own[] = { "2001:db8::77", NULL };
	static const char *const v4_own[] = { "203.0.113.9", "192.0.2.77", NULL };
	static const char *const compatible[] = { "::cb00:7109", NULL };
	static const char *const mixed[] = { "203.0.113.9", "2001:db8::5", NULL };
	static const char *crowd[18];
	static char crowd_text[17][24];
	char why[400];
	int i;

	CHECK(judged("own.invalid", mapped_own, why, sizeof(why)) == -2);
	CHECK(strstr(why, "own.invalid resolves to 192.0.2.77, in a denied range: this host's own "
		      "address"));
	CHECK(strcmp(fake_asked, "own.invalid.") == 0); /* the absolute name */
	CHECK(judged("pub.invalid.", mapped_public, why, sizeof(why)) == 0);
	CHECK(strcmp(why, "v4 203.0.113.9 n=1") == 0);
	CHECK(judged("own.invalid", nat64_own, why, sizeof(why)) == -2 &&
	      strstr(why, "64:ff9b::c000:24d") && strstr(why, "own address"));
	CHECK(judged("own.invalid", sixto4_own, why, sizeof(why)) == -2 &&
	      strstr(why, "own address"));
	CHECK(judged("own.invalid", v6_own, why, sizeof(why)) == -2 && strstr(why, "own address"));
	CHECK(judged("own.invalid", v4_own, why, sizeof(why)) == -2 &&
	      strstr(why, "192.0.2.77") && strstr(why, "own address"));
	CHECK(judged("old.invalid", compatible, why, sizeof(why)) == -2 &&
	      strstr(why, "IPv4-compatible"));
	CHECK(judged("pub.invalid", mixed, why, sizeof(why)) == 0);
	CHECK(strcmp(why, "v4 203.0.113.9 n=2") == 0);
	CHECK(judged("none.invalid", NULL, why, sizeof(why)) == -1 &&
	      strstr(why, "does not resolve"));
	for (i = 0; i < 17; i++) {
		snprintf(crowd_text[i], sizeof(crowd_text[i]), "203.0.113.%d", i + 1);
		crowd[i] = crowd_text[i];
	}
	CHECK(judged("crowd.invalid", crowd, why, sizeof(why)) == -2 &&
	      strstr(why, "more than 16"));
	/* the interfaces cannot be listed: refused, not let through */
	fake_ifaddrs_fail = 1;
	CHECK(judged("pub.invalid", mapped_public, why, sizeof(why)) == -2 &&
	      strstr(why, "own addresses cannot be listed"));
	fake_ifaddrs_fail = 0;
	return 0;
}

static int policy_of(const char *const *rules, size_t n, struct tg_egress_policy **p)
{
	struct tg_error err;

	tg_error_clear(&err);
	if (tg_egress_policy_new(rules, n, p, &err) < 0) {
		fprintf(stderr, "policy: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* A name opens only its ports; an address only by a rule naming it, in
 * whichever spelling; malformed rules are refused. */
static int rules(void)
{
	static const char *const good[] = { "api.example.com:443", "API.example.com:8443",
					    "db.internal.:5432", "169.254.169.254:80",
					    "[fd00:ec2::254]:80" };
	static const char *const bad[] = { "api.example.com", "api.example.com:0",
					   "api.example.com:65536", "api.example.com:http",
					   "ap i.example.com:80", "*.example.com:443",
					   "fd00::1:80", "[fd00::1]", "1.2.3.4.5:80",
					   "http://api.example.com:80", ":80", "a..b:80" };
	struct tg_egress_policy *p;
	struct tg_error err;
	int lit;
	size_t i;

	CHECK(policy_of(good, 5, &p) == 0);
	CHECK(tg_egress_policy_check(p, "api.example.com", 443, &lit) == NULL && !lit);
	CHECK(tg_egress_policy_check(p, "API.EXAMPLE.COM.", 443, &lit) == NULL);
	CHECK(tg_egress_policy_check(p, "api.example.com", 8443, &lit) == NULL);
	CHECK(strstr(tg_egress_policy_check(p, "api.example.com", 22, &lit), "other ports"));
	CHECK(tg_egress_policy_check(p, "db.internal", 5432, &lit) == NULL);
	CHECK(tg_egress_policy_check(p, "evil.example.com", 443, &lit) != NULL);
	CHECK(tg_egress_policy_check(p, "example.com", 443, &lit) != NULL);
	CHECK(tg_egress_policy_check(p, "x.api.example.com", 443, &lit) != NULL);
	/* the literal rule, in other spellings */
	CHECK(tg_egress_policy_check(p, "169.254.169.254", 80, &lit) == NULL && lit);
	CHECK(tg_egress_policy_check(p, "0xa9fea9fe", 80, &lit) == NULL && lit);
	CHECK(tg_egress_policy_check(p, "169.254.169.254", 81, &lit) != NULL);
	CHECK(tg_egress_policy_check(p, "[fd00:ec2:0::254]", 80, &lit) == NULL && lit);
	CHECK(tg_egress_policy_check(p, "[::ffff:169.254.169.254]", 80, &lit) == NULL && lit);
	CHECK(tg_egress_policy_check(p, "169.254.169.253", 80, &lit) != NULL);
	CHECK(tg_egress_policy_check(p, "10.0.0.1", 443, &lit) != NULL);
	CHECK(tg_egress_policy_check(p, "a b", 443, &lit) != NULL);
	CHECK(tg_egress_policy_check(p, "api.example.com", 0, &lit) != NULL);
	tg_egress_policy_free(p);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tg_error_clear(&err);
		if (tg_egress_policy_new(&bad[i], 1, &p, &err) == 0)
			fprintf(stderr, "rule %s taken\n", bad[i]);
		CHECK(p == NULL && strstr(err.msg, "HOST:PORT"));
	}
	return 0;
}

/* ---- the proxy -------------------------------------------------------------- */

/* An upstream on 127.0.0.1: each connection's bytes are kept (until the
 * head's end and 100 ms of quiet), answered with a short HTTP response
 * that echoes how many bytes came, and closed. */
struct upstream {
	int fd;
	unsigned port;
	pthread_t t;
	pthread_mutex_t lock;
	char got[8192];
	size_t len;
	int conns;
};

static void *upstream_main(void *arg)
{
	struct upstream *u = arg;

	for (;;) {
		char buf[4096], out[128];
		size_t len = 0;
		int c = accept(u->fd, NULL, NULL), n;

		if (c < 0)
			return NULL;
		for (;;) {
			struct pollfd pf = { c, POLLIN, 0 };
			ssize_t r;

			if (poll(&pf, 1, len && memmem(buf, len, "\r\n\r\n", 4) ? 100 : 2000) <= 0)
				break;
			r = read(c, buf + len, sizeof(buf) - len);
			if (r <= 0)
				break;
			len += (size_t)r;
			if (len == sizeof(buf))
				break;
		}
		pthread_mutex_lock(&u->lock);
		u->conns++;
		u->len = len < sizeof(u->got) - 1 ? len : sizeof(u->got) - 1;
		memcpy(u->got, buf, u->len);
		u->got[u->len] = 0;
		pthread_mutex_unlock(&u->lock);
		n = snprintf(out, sizeof(out), "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nup:%03zu",
			     len % 1000);
		if (write(c, out, (size_t)n) < 0) {
			/* the test sees it */
		}
		close(c);
	}
}

static int upstream_start(struct upstream *u)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);

	memset(u, 0, sizeof(*u));
	pthread_mutex_init(&u->lock, NULL);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	u->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (u->fd < 0 || bind(u->fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    listen(u->fd, 16) < 0 || getsockname(u->fd, (struct sockaddr *)&sin, &len) < 0)
		return -1;
	u->port = ntohs(sin.sin_port);
	return pthread_create(&u->t, NULL, upstream_main, u) == 0 ? 0 : -1;
}

struct denials {
	pthread_mutex_t lock;
	char last[512];
	int n;
};

static void on_deny(void *ctx, const char *destination, const char *why)
{
	struct denials *d = ctx;

	pthread_mutex_lock(&d->lock);
	snprintf(d->last, sizeof(d->last), "%s %s", destination, why);
	d->n++;
	pthread_mutex_unlock(&d->lock);
}

static unsigned rig_idle_ms = 2000; /* a relayed connection's silence */

struct rig {
	struct upstream up;
	struct tg_egress_policy *policy;
	struct tg_egress_proxy *proxy;
	struct denials denials;
	char dir[64], path[100];
};

/* An upstream, a policy naming 127.0.0.1:its port (and the name
 * loop.test:its port, which resolves to 127.0.0.1 and so is refused), a
 * proxy on a socket in a fresh directory. */
static int rig_start(struct rig *g, unsigned max_clients, unsigned head_ms)
{
	static char crowd[17][40];
	static const char *hosts[3 + 17 + 1] = { "loop.test=127.0.0.1", "many.test=203.0.113.1",
						 "many.test=10.0.0.1" };
	struct tg_egress_proxy_options o;
	char r1[64], r2[64], r3[64], r4[64];
	const char *rules[4] = { r1, r2, r3, r4 };
	struct tg_error err;
	int i;

	for (i = 0; i < 17; i++) {
		snprintf(crowd[i], sizeof(crowd[i]), "crowd.test=203.0.113.%d", i + 1);
		hosts[3 + i] = crowd[i];
	}
	memset(g, 0, sizeof(*g));
	signal(SIGPIPE, SIG_IGN); /* a refused client's write may come late */
	pthread_mutex_init(&g->denials.lock, NULL);
	if (upstream_start(&g->up) < 0 || unit_tmpdir(g->dir, "egress") < 0)
		return -1;
	snprintf(r1, sizeof(r1), "127.0.0.1:%u", g->up.port);
	snprintf(r2, sizeof(r2), "loop.test:%u", g->up.port);
	snprintf(r3, sizeof(r3), "many.test:%u", g->up.port);
	snprintf(r4, sizeof(r4), "crowd.test:%u", g->up.port);
	if (policy_of(rules, 4, &g->policy) < 0)
		return -1;
	snprintf(g->path, sizeof(g->path), "%s/proxy.sock", g->dir);
	memset(&o, 0, sizeof(o));
	o.socket_path = g->path;
	o.policy = g->policy;
	o.hosts = hosts;
	o.on_deny = on_deny;
	o.ctx = &g->denials;
	o.max_clients = max_clients;
	o.head_timeout_ms = head_ms;
	o.idle_timeout_ms = rig_idle_ms;
	tg_error_clear(&err);
	if (tg_egress_proxy_start(&o, &g->proxy, &err) < 0) {
		fprintf(stderr, "proxy: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static void rig_stop(struct rig *g)
{
	tg_egress_proxy_stop(g->proxy);
	tg_egress_policy_free(g->policy);
	unit_rmtree(g->dir);
}

static int dial(const struct rig *g)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", g->path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Everything fd sends until it closes, or 3 s pass (into buf, NUL-ended). */
static size_t drain(int fd, char *buf, size_t cap)
{
	size_t len = 0;

	for (;;) {
		struct pollfd pf = { fd, POLLIN, 0 };
		ssize_t r;

		if (len + 1 >= cap || poll(&pf, 1, 3000) <= 0)
			break;
		r = read(fd, buf + len, cap - 1 - len);
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	buf[len] = 0;
	return len;
}

/* Send req (len bytes) as one client and read the whole answer. */
static size_t exchange(const struct rig *g, const char *req, size_t len, char *buf, size_t cap)
{
	int fd = dial(g);
	size_t n;

	buf[0] = 0;
	if (fd < 0)
		return 0;
	if (write(fd, req, len) != (ssize_t)len) {
		/* refused before it was all sent: the answer is still there */
	}
	n = drain(fd, buf, cap);
	close(fd);
	return n;
}

static size_t ask(const struct rig *g, const char *req, char *buf, size_t cap)
{
	return exchange(g, req, strlen(req), buf, cap);
}

/* CONNECT to the allowed address, and the tunnel carries bytes both ways;
 * other ports and the name that resolves to loopback are refused. */
static int proxy_connect(void)
{
	struct rig g;
	char req[256], buf[4096];

	CHECK(rig_start(&g, 0, 0) == 0);
	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\nHost: x\r\n\r\nPING\r\n\r\n",
		 g.up.port);
	ask(&g, req, buf, sizeof(buf));
	CHECK(strncmp(buf, "HTTP/1.1 200 Connection established\r\n\r\n", 39) == 0);
	CHECK(strstr(buf, "up:008"));
	CHECK(strcmp(g.up.got, "PING\r\n\r\n") == 0);
	/* another port of the same address */
	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", g.up.port + 1);
	ask(&g, req, buf, sizeof(buf));
	CHECK(strncmp(buf, "HTTP/1.1 403 ", 13) == 0 && strstr(buf, "other ports"));
	/* the same address in another spelling is the same rule */
	snprintf(req, sizeof(req), "CONNECT 0x7f.1:%u HTTP/1.1\r\n\r\nPING\r\n\r\n", g.up.port);
	ask(&g, req, buf, sizeof(buf));
	CHECK(strstr(buf, "200 Connection established") && strstr(buf, "up:008"));
	/* a listed name that resolves into a deny range */
	snprintf(req, sizeof(req), "CONNECT loop.test:%u HTTP/1.1\r\n\r\n", g.up.port);
	ask(&g, req, buf, sizeof(buf));
	CHECK(strncmp(buf, "HTTP/1.1 403 ", 13) == 0 && strstr(buf, "loopback"));
	CHECK(strstr(g.denials.last, "loop.test:") && strstr(g.denials.last, "loopback"));
	/* one denied address among a name's many is enough */
	snprintf(req, sizeof(req), "CONNECT many.test:%u HTTP/1.1\r\n\r\n", g.up.port);
	ask(&g, req, buf, sizeof(buf));
	CHECK(strncmp(buf, "HTTP/1.1 403 ", 13) == 0 && strstr(buf, "10.0.0.1"));
	/* a name with more addresses than are checked */
	snprintf(req, sizeof(req), "CONNECT crowd.test:%u HTTP/1.1\r\n\r\n", g.up.port);
	ask(&g, req, buf, sizeof(buf));
	CHECK(strncmp(buf, "HTTP/1.1 403 ", 13) == 0 && strstr(buf, "more than 16 addresses"));
	/* a name never listed, and the metadata address */
	ask(&g, "CONNECT metadata.google.internal:80 HTTP/1.1\r\n\r\n", buf, sizeof(buf));
	CHECK(strncmp(buf, "HTTP/1.1 403 ", 13) == 0 && strstr(buf, "no rule names this host"));
	ask(&g, "CONNECT 169.254.169.254:80 HTTP/1.1\r\n\r\n", buf, sizeof(buf));
	CHECK(strncmp(buf, "HTTP/1.1 403 ", 13) == 0 && strstr(buf, "no rule names this address"));
	CHECK(g.up.conns == 2);
	CHECK(g.denials.n == 6);
	rig_stop(&g);
	return 0;
}

/* A tunnel through an allowed host that begins with a CONNECT of its own
 * (a proxy behind the allowed host) is cut, and recorded. */
static int proxy_chain(void)
{
	struct rig g;
	char req[256], buf[4096];
	int fd;

	CHECK(rig_start(&g, 0, 0) == 0);
	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", g.up.port);
	fd = dial(&g);
	CHECK(fd >= 0 && write(fd, req, strlen(req)) == (ssize_t)strlen(req));
	CHECK(read(fd, buf, 39) == 39 && strncmp(buf, "HTTP/1.1 200", 12) == 0);
	/* in two pieces, as a slow client would */
	CHECK(write(fd, "conn", 4) == 4);
	usleep(50000);
	CHECK(write(fd, "ect 10.0.0.1:22 HTTP/1.1\r\n\r\n", 28) == 28);
	drain(fd, buf, sizeof(buf));
	close(fd);
	CHECK(strstr(buf, "up:") == NULL);
	CHECK(strstr(g.denials.last, "a proxy request inside the tunnel"));
	/* after empty lines; an absolute-form request to a proxy */
	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n\r\n\r\nCONNECT a:1 "
		 "HTTP/1.1\r\n\r\n", g.up.port);
	ask(&g, req, buf, sizeof(buf));
	CHECK(strstr(buf, "up:") == NULL && g.denials.n == 2);
	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\nGET HTTP://10.0.0.1/ "
		 "HTTP/1.1\r\n\r\n", g.up.port);
	ask(&g, req, buf, sizeof(buf));
	CHECK(strstr(buf, "up:") == NULL && g.denials.n == 3);
	/* whereas CONNECT further on in a tunnel is only data */
	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\nGET / HTTP/1.1\r\n"
		 "X: CONNECT a:1 HTTP/1.1\r\n\r\n", g.up.port);
	ask(&g, req, buf, sizeof(buf));
	CHECK(strstr(buf, "up:"));
	rig_stop(&g);
	return 0;
}

/* Plain HTTP: the origin form goes on, Host written from the URL, hop-by-
 * hop headers dropped, the body by its Content-Length, and nothing a
 * client pipelines after it. */
static int proxy_http(void)
{
	struct rig g;
	char req[512], buf[4096];

	CHECK(rig_start(&g, 0, 0) == 0);
	snprintf(req, sizeof(req),
		 "POST http://127.0.0.1:%u/path?q=1 HTTP/1.1\r\nHost: evil.test\r\n"
		 "Proxy-Authorization: Basic eA==\r\nContent-Length: 5\r\nX-Keep: yes\r\n"
		 "Connection: keep-alive\r\n\r\nhello"
		 "GET http://127.0.0.1:%u/second HTTP/1.1\r\n\r\n",
		 g.up.port, g.up.port);
	ask(&g, req, buf, sizeof(buf));
	CHECK(strncmp(buf, "HTTP/1.1 200 OK", 15) == 0);
	pthread_mutex_lock(&g.up.lock);
	snprintf(req, sizeof(req), "POST /path?q=1 HTTP/1.1\r\nHost: 127.0.0.1:%u\r\n", g.up.port);
	CHECK(strncmp(g.up.got, req, strlen(req)) == 0);
	CHECK(strstr(g.up.got, "X-Keep: yes\r\n"));
	CHECK(strstr(g.up.got, "Connection: close\r\n\r\nhello"));
	CHECK(!strstr(g.up.got, "evil.test") && !strstr(g.up.got, "Proxy-Authorization"));
	CHECK(!strstr(g.up.got, "keep-alive") && !strstr(g.up.got, "second"));
	CHECK(g.up.conns == 1);
	pthread_mutex_unlock(&g.up.lock);
	/* a URL without a path; https: goes through CONNECT */
	snprintf(req, sizeof(req), "GET http://127.0.0.1:%u HTTP/1.0\r\n\r\n", g.up.port);
	ask(&g, req, buf, sizeof(buf));
	CHECK(strstr(buf, "200 OK") && strncmp(g.up.got, "GET / HTTP/1.0\r\n", 16) == 0);
	ask(&g, "GET https://127.0.0.1/ HTTP/1.1\r\n\r\n", buf, sizeof(buf));
	CHECK(strncmp(buf, "HTTP/1.1 400 ", 13) == 0 && strstr(buf, "CONNECT"));
	ask(&g, "GET http://user@127.0.0.1/ HTTP/1.1\r\n\r\n", buf, sizeof(buf));
	CHECK(strncmp(buf, "HTTP/1.1 400 ", 13) == 0);
	ask(&g, "GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\n\r\n", buf,
	    sizeof(buf));
	CHECK(strncmp(buf, "HTTP/1.1 403 ", 13) == 0);
	ask(&g, "GET /relative HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", buf, sizeof(buf));
	CHECK(strncmp(buf, "HTTP/1.1 405 ", 13) == 0);
	CHECK(g.up.conns == 2);
	rig_stop(&g);
	return 0;
}

/* Malformed and hostile heads: each a clear refusal, none reaches the
 * upstream, and the proxy serves the next client. */
static int proxy_bad_input(void)
{
	static const struct {
		const char *req;
		const char *status;
	} cases[] = {
		{ "GARBAGE\r\n\r\n", "400" },
		{ "GET  http://127.0.0.1/ HTTP/1.1\r\n\r\n", "400" },
		{ "GET http://127.0.0.1/ HTTP/2.0\r\n\r\n", "400" },
		{ "G<T http://127.0.0.1/ HTTP/1.1\r\n\r\n", "400" },
		{ "CONNECT 127.0.0.1 HTTP/1.1\r\n\r\n", "400" },
		{ "CONNECT 127.0.0.1:99999 HTTP/1.1\r\n\r\n", "400" },
		{ "CONNECT [::1 HTTP/1.1\r\n\r\n", "400" },
		{ "GET http://127.0.0.1/ HTTP/1.1\r\nNoColon\r\n\r\n", "400" },
		{ "GET http://127.0.0.1/ HTTP/1.1\r\n Folded: x\r\n\r\n", "400" },
		{ "GET http://127.0.0.1/ HTTP/1.1\r\nX: a\nHost: b\r\n\r\n", "400" },
		{ "GET http://127.0.0.1/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
		  "400" },
		{ "GET http://127.0.0.1/ HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "400" },
		{ "POST http://127.0.0.1/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "411" },
	};
	struct rig g;
	char buf[4096], *flood;
	size_t i, n = 0;

	CHECK(rig_start(&g, 0, 300) == 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ask(&g, cases[i].req, buf, sizeof(buf));
		if (strncmp(buf + 9, cases[i].status, 3) != 0)
			fprintf(stderr, "%s: %s\n", cases[i].req, buf);
		CHECK(strncmp(buf, "HTTP/1.1 ", 9) == 0 && strncmp(buf + 9, cases[i].status, 3) == 0);
		CHECK(strstr(buf, "toolgate egress: "));
	}
	/* a NUL; a head over 16 KiB; more than 100 lines */
	exchange(&g, "GET http://a/ HTTP/1.1\r\nX: \0\r\n\r\n", 32, buf, sizeof(buf));
	CHECK(strncmp(buf, "HTTP/1.1 400 ", 13) == 0);
	flood = malloc(64 << 10);
	CHECK(flood);
	n = (size_t)sprintf(flood, "GET http://127.0.0.1/ HTTP/1.1\r\n");
	while (n < (20u << 10))
		n += (size_t)sprintf(flood + n, "X-Long: %0100d\r\n", 0);
	exchange(&g, flood, n, buf, sizeof(buf));
	CHECK(strncmp(buf, "HTTP/1.1 431 ", 13) == 0);
	n = (size_t)sprintf(flood, "GET http://127.0.0.1/ HTTP/1.1\r\n");
	for (i = 0; i < 101; i++)
		n += (size_t)sprintf(flood + n, "X: %zu\r\n", i);
	n += (size_t)sprintf(flood + n, "\r\n");
	exchange(&g, flood, n, buf, sizeof(buf));
	CHECK(strncmp(buf, "HTTP/1.1 431 ", 13) == 0);
	free(flood);
	/* a client that never finishes its head */
	exchange(&g, "GET http://127.0.0.1/ HTTP/1.1\r\n", 32, buf, sizeof(buf));
	CHECK(strncmp(buf, "HTTP/1.1 408 ", 13) == 0);
	CHECK(g.up.conns == 0);
	rig_stop(&g);
	return 0;
}

/* SOCKS5: a name the proxy resolves, an address, refusals in SOCKS's own
 * codes, and no method but "no authentication". */
static int proxy_socks(void)
{
	struct rig g;
	unsigned char req[300], buf[4096];
	size_t n;
	int fd;

	CHECK(rig_start(&g, 0, 0) == 0);
	/* IPv4 127.0.0.1 */
	fd = dial(&g);
	CHECK(fd >= 0);
	n = 0;
	memcpy(req, "\x05\x01\x00" "\x05\x01\x00\x01\x7f\x00\x00\x01", 11);
	n = 11;
	req[n++] = (unsigned char)(g.up.port >> 8);
	req[n++] = (unsigned char)(g.up.port & 0xff);
	memcpy(req + n, "HI\r\n\r\n", 6);
	n += 6;
	CHECK(write(fd, req, n) == (ssize_t)n);
	n = drain(fd, (char *)buf, sizeof(buf));
	close(fd);
	CHECK(n >= 12 && memcmp(buf, "\x05\x00\x05\x00", 4) == 0);
	CHECK(strstr((char *)buf + 12, "up:006"));
	/* a name: loop.test resolves to loopback, refused (2: not allowed) */
	fd = dial(&g);
	CHECK(fd >= 0);
	n = (size_t)sprintf((char *)req, "\x05\x01%c\x05\x01%c\x03%c%s", 0, 0, 9, "loop.test");
	req[n++] = (unsigned char)(g.up.port >> 8);
	req[n++] = (unsigned char)(g.up.port & 0xff);
	CHECK(write(fd, req, n) == (ssize_t)n);
	n = drain(fd, (char *)buf, sizeof(buf));
	close(fd);
	CHECK(n == 12 && buf[2] == 5 && buf[3] == 2);
	CHECK(strstr(g.denials.last, "loop.test") && strstr(g.denials.last, "loopback"));
	/* BIND (7: command not supported); username auth only (no method) */
	fd = dial(&g);
	CHECK(fd >= 0 && write(fd, "\x05\x01\x00\x05\x02\x00\x01\x7f\x00\x00\x01\x00\x50", 13) == 13);
	n = drain(fd, (char *)buf, sizeof(buf));
	close(fd);
	CHECK(n == 12 && buf[3] == 7);
	fd = dial(&g);
	CHECK(fd >= 0 && write(fd, "\x05\x01\x02", 3) == 3);
	n = drain(fd, (char *)buf, sizeof(buf));
	close(fd);
	CHECK(n == 2 && buf[1] == 0xff);
	CHECK(g.up.conns == 1);
	rig_stop(&g);
	return 0;
}

/* Refusals are reported escaped, the first 100 one by one and the rest
 * counted at the end; a SOCKS tunnel that starts a proxy request is cut;
 * a NUL in a body that came with the head is the body's business. */
static int proxy_reports(void)
{
	struct rig g;
	char req[256], buf[4096];
	unsigned char s[300];
	size_t n;
	int fd, i;

	CHECK(rig_start(&g, 0, 0) == 0);
	/* a SOCKS name with an escape sequence in it */
	fd = dial(&g);
	CHECK(fd >= 0);
	n = (size_t)sprintf((char *)s, "\x05\x01%c\x05\x01%c\x03%c%s", 0, 0, 9, "\x1b[31m.red");
	s[n++] = 0;
	s[n++] = 80;
	CHECK(write(fd, s, n) == (ssize_t)n);
	drain(fd, buf, sizeof(buf));
	close(fd);
	CHECK(strstr(g.denials.last, "\\x1b[31m.red:80 "));
	/* a SOCKS tunnel to the allowed address that starts a CONNECT */
	fd = dial(&g);
	CHECK(fd >= 0);
	memcpy(s, "\x05\x01\x00\x05\x01\x00\x01\x7f\x00\x00\x01", 11);
	s[11] = (unsigned char)(g.up.port >> 8);
	s[12] = (unsigned char)(g.up.port & 0xff);
	memcpy(s + 13, "CONNECT 10.0.0.1:22 HTTP/1.1\r\n\r\n", 32);
	CHECK(write(fd, s, 45) == 45);
	n = drain(fd, buf, sizeof(buf));
	close(fd);
	CHECK(n == 12 && strstr(g.denials.last, "a proxy request inside the tunnel"));
	/* a body with a NUL, sent with its head */
	n = (size_t)snprintf(req, sizeof(req), "POST http://127.0.0.1:%u/ HTTP/1.1\r\n"
			     "Content-Length: 3\r\n\r\na", g.up.port);
	memcpy(req + n, "\0b", 2);
	exchange(&g, req, n + 2, buf, sizeof(buf));
	CHECK(strstr(buf, "200 OK"));
	/* a flood of refusals */
	for (i = 0; i < 110; i++)
		ask(&g, "CONNECT 10.0.0.1:22 HTTP/1.1\r\n\r\n", buf, sizeof(buf));
	CHECK(g.denials.n == 100);
	rig_stop(&g);
	CHECK(g.denials.n == 101 && strstr(g.denials.last, "12 more refusals"));
	/* the summary's destination is its own, for the gateway to tell it */
	CHECK(strncmp(g.denials.last, TG_EGRESS_SUMMARY " ", strlen(TG_EGRESS_SUMMARY) + 1) == 0);
	return 0;
}

/* At most max_clients at once: one more is told 503 and the others go on;
 * adopt takes connected sockets and nothing else. */
static int proxy_limits(void)
{
	struct rig g;
	char req[256], buf[4096];
	int held, fds[2], pfd[2];

	CHECK(rig_start(&g, 1, 2000) == 0);
	held = dial(&g);
	CHECK(held >= 0 && write(held, "GET", 3) == 3);
	usleep(100000);
	ask(&g, "GET http://127.0.0.1/ HTTP/1.1\r\n\r\n", buf, sizeof(buf));
	CHECK(strncmp(buf, "HTTP/1.1 503 ", 13) == 0);
	close(held);
	usleep(100000);
	snprintf(req, sizeof(req), "GET http://127.0.0.1:%u/ HTTP/1.1\r\n\r\n", g.up.port);
	ask(&g, req, buf, sizeof(buf));
	CHECK(strstr(buf, "200 OK"));
	/* adopt: a pipe is refused, a socket pair's end is served */
	CHECK(pipe(pfd) == 0);
	errno = 0;
	CHECK(tg_egress_proxy_adopt(g.proxy, pfd[0]) < 0 && errno == ENOTSOCK);
	close(pfd[1]);
	CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
	usleep(100000); /* the last client's thread has left */
	CHECK(tg_egress_proxy_adopt(g.proxy, fds[1]) == 0);
	CHECK(write(fds[0], req, strlen(req)) == (ssize_t)strlen(req));
	drain(fds[0], buf, sizeof(buf));
	close(fds[0]);
	CHECK(strstr(buf, "200 OK"));
	rig_stop(&g);
	return 0;
}

/* Stopping ends every connection at once, a silent tunnel included: its
 * idle timeout here is 10 minutes, so a stop that waited for it would
 * run into the test's own time limit. */
static int proxy_stop(void)
{
	struct rig g;
	char req[256], buf[64];
	int fd;

	rig_idle_ms = 600000;
	CHECK(rig_start(&g, 0, 0) == 0);
	snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", g.up.port);
	fd = dial(&g);
	CHECK(fd >= 0 && write(fd, req, strlen(req)) == (ssize_t)strlen(req));
	CHECK(read(fd, buf, 39) == 39);
	rig_stop(&g);
	CHECK(read(fd, buf, sizeof(buf)) <= 0);
	close(fd);
	CHECK(access(g.path, F_OK) < 0);
	return 0;
}

/* A connection handed to proxy p (as a sandbox's forwarder would) that
 * asks for a tunnel to 127.0.0.1:port: its fd, held open, once the tunnel
 * is established; -1, with the refusal's first line in why, otherwise. */
static int tunnel(struct tg_egress_proxy *p, unsigned port, char *why, size_t len)
{
	char req[80], buf[256];
	int fds[2];
	ssize_t r;
	struct pollfd pf;

	why[0] = 0;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
		return -1;
	if (tg_egress_proxy_adopt(p, fds[1]) == 0) {
		snprintf(req, sizeof(req), "CONNECT 127.0.0.1:%u HTTP/1.1\r\n\r\n", port);
		if (write(fds[0], req, strlen(req)) != (ssize_t)strlen(req))
			goto refused;
	}
	pf = (struct pollfd){ fds[0], POLLIN, 0 };
	if (poll(&pf, 1, 5000) != 1 || (r = read(fds[0], buf, sizeof(buf) - 1)) <= 0)
		goto refused;
	buf[r] = 0;
	if (strncmp(buf, "HTTP/1.1 200 ", 13) == 0)
		return fds[0];
	snprintf(why, len, "%s", strstr(buf, "toolgate egress: ") ? strstr(buf, "toolgate egress: ")
								   : buf);
refused:
	close(fds[0]);
	return -1;
}

/* One principal's concurrent runs cannot take the gateway's egress: 17
 * runs of alice (a proxy each, 16 connections a run by default) asking
 * for 272 tunnels get 64 of them, a quarter of the gateway's 256; bob's
 * run is served beside them; and a run's own limit is 16. */
static int principal_share(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t slen = sizeof(sin);
	struct tg_egress_proxy *alice[17], *bob;
	struct tg_egress_proxy_options o;
	static int held[17 * 17];
	struct denials d;
	struct tg_error err;
	char rule[40], why[300];
	const char *rules[1] = { rule };
	int up, i, k, n = 0, shares = 0, fd;

	/* an upstream that never accepts: its backlog completes the tunnels */
	signal(SIGPIPE, SIG_IGN);
	memset(&d, 0, sizeof(d));
	pthread_mutex_init(&d.lock, NULL);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	up = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(up >= 0 && bind(up, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	      listen(up, 1024) == 0 && getsockname(up, (struct sockaddr *)&sin, &slen) == 0);
	snprintf(rule, sizeof(rule), "127.0.0.1:%u", ntohs(sin.sin_port));
	memset(&o, 0, sizeof(o));
	o.rules = rules;
	o.nrules = 1;
	o.on_deny = on_deny;
	o.ctx = &d;
	o.idle_timeout_ms = 30000;
	tg_error_clear(&err);
	o.principal = "alice";
	for (i = 0; i < 17; i++)
		CHECK(tg_egress_proxy_start(&o, &alice[i], &err) == 0);
	o.principal = "bob";
	CHECK(tg_egress_proxy_start(&o, &bob, &err) == 0);
	for (i = 0; i < 17; i++)
		for (k = 0; k < 16; k++) {
			fd = tunnel(alice[i], ntohs(sin.sin_port), why, sizeof(why));
			if (fd >= 0)
				held[n++] = fd;
			else if (strstr(why, "503") || strstr(why, "share"))
				shares += strstr(why, "this principal's runs hold their share") != NULL;
		}
	if (n != 64 || shares != 272 - 64)
		fprintf(stderr, "alice holds %d tunnels, %d refused by her share\n", n, shares);
	CHECK(n == 64 && shares == 272 - 64);
	/* another principal is served meanwhile */
	fd = tunnel(bob, ntohs(sin.sin_port), why, sizeof(why));
	if (fd < 0)
		fprintf(stderr, "bob refused: %s\n", why);
	CHECK(fd >= 0);
	held[n++] = fd;
	/* a run's own limit: 16 at once by default */
	for (k = 0; k < 16 && fd >= 0; k++) {
		fd = tunnel(bob, ntohs(sin.sin_port), why, sizeof(why));
		if (fd >= 0)
			held[n++] = fd;
	}
	CHECK(k == 16 && fd < 0 && strstr(why, "through the proxy at once"));
	CHECK(d.n >= 100); /* each refusal reported (the first 100 of a run) */
	/* the tunnels over (the upstream gone too: a tunnel waits for the
	 * side still open), alice's share is hers again */
	for (i = 0; i < n; i++)
		close(held[i]);
	close(up);
	usleep(300000);
	up = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(up >= 0 && setsockopt(up, SOL_SOCKET, SO_REUSEADDR, &(int){ 1 }, sizeof(int)) == 0 &&
	      bind(up, (struct sockaddr *)&sin, sizeof(sin)) == 0 && listen(up, 16) == 0);
	fd = tunnel(alice[16], ntohs(sin.sin_port), why, sizeof(why));
	if (fd < 0)
		fprintf(stderr, "alice refused after: %s\n", why);
	CHECK(fd >= 0);
	close(fd);
	for (i = 0; i < 17; i++)
		tg_egress_proxy_stop(alice[i]);
	tg_egress_proxy_stop(bob);
	close(up);
	return 0;
}

/* ---- refusals recorded by the gateway ----------------------------------------- */

/* What the audit log at path accounts for: each egress_denied record one
 * refusal, or the N of a run's summary, each record's suppressed_before,
 * the last refusals_suppressed; OUT *forbidden, the forbidden records. */
static long long accounted(const char *path, int *forbidden)
{
	char line[4096], *at;
	long long total = 0;
	FILE *f = fopen(path, "r");

	*forbidden = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		json_t *o = json_loads(line, 0, NULL);
		const char *outcome = json_string_value(json_object_get(o, "outcome"));
		const char *error = json_string_value(json_object_get(o, "error"));

		if (outcome && strcmp(outcome, "egress_denied") == 0)
			total += error && (at = strstr(error, TG_EGRESS_SUMMARY ": ")) == error
					 ? strtoll(at + strlen(TG_EGRESS_SUMMARY) + 2, NULL, 10)
					 : 1;
		if (outcome && strcmp(outcome, "forbidden") == 0) {
			total++;
			++*forbidden;
		}
		total += json_integer_value(json_object_get(o, "suppressed_before"));
		json_decref(o);
	}
	fclose(f);
	return total;
}

/* Three runs of one principal refuse 160, 100 and 100 connections (the
 * first's proxy reports 100 and then "60 more"), then the principal calls
 * a tool out of its scope five times: the log accounts for all 365, the
 * summary's 60 included though the bucket was spent when it came, and the
 * five forbidden calls are recorded each, the egress refusals having
 * used up buckets of their own. */
static int refusals_accounted(void)
{
	struct tg_gate_options go;
	struct tg_catalog *cat;
	struct tg_audit *a;
	struct tg_gate *g;
	struct tg_error err;
	char dir[64], path[128];
	int i, forbidden;
	long long n;

	CHECK(unit_tmpdir(dir, "refusals") == 0);
	CHECK(tg_catalog_load_dir(dir, NULL, &cat, &err) == 0);
	snprintf(path, sizeof(path), "%s/audit.log", dir);
	CHECK(tg_audit_open(path, 0, &a, &err) == 0);
	memset(&go, 0, sizeof(go));
	go.audit = a;
	CHECK(tg_gate_new(cat, &go, &g, &err) == 0);
	for (i = 0; i < 300; i++)
		gate_record_egress_refusal(g, "agent7", "web.fetch@1.0.0", "10.0.0.1:22",
					   "no rule names this address");
	gate_record_egress_refusal(g, "agent7", "web.fetch@1.0.0", TG_EGRESS_SUMMARY,
				   "60 more refusals, not reported one by one");
	for (i = 0; i < 5; i++)
		tg_gate_record_refusal(g, "agent7", "admin.tool", "forbidden", "no scope admin:write");
	tg_gate_free(g);
	tg_catalog_free(cat); /* the caller's, as tg_gate_new was given it */
	tg_audit_close(a);
	n = accounted(path, &forbidden);
	if (n != 365 || forbidden != 5)
		fprintf(stderr, "the log accounts for %lld refusals of 365, %d forbidden of 5\n", n,
			forbidden);
	unit_rmtree(dir);
	CHECK(n == 365 && forbidden == 5);
	return 0;
}

const struct unit_test egress_tests[] = {
	{ "egress/spellings", spellings },
	{ "egress/deny_ranges", deny_ranges },
	{ "egress/rules", rules },
	{ "egress/resolve_judged", resolve_judged },
	{ "egress/proxy_connect", proxy_connect },
	{ "egress/proxy_chain", proxy_chain },
	{ "egress/proxy_http", proxy_http },
	{ "egress/proxy_bad_input", proxy_bad_input },
	{ "egress/proxy_socks", proxy_socks },
	{ "egress/proxy_limits", proxy_limits },
	{ "egress/proxy_reports", proxy_reports },
	{ "egress/proxy_stop", proxy_stop },
	{ "egress/principal_share", principal_share },
	{ "egress/refusals_accounted", refusals_accounted },
	UNIT_TESTS_END
};
