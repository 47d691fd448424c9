/*
 * Who may address the Streamable HTTP listener, and by what name
 * (docs/MCP.md, "Serving beyond loopback"; docs/SECURITY.md): the rules
 * `serve --http` starts under, and the Host, Origin and X-Forwarded-*
 * checks every request passes before anything else (DNS rebinding).
 *
 * At start: a loopback address is served as ever. Any other needs
 * authentication (--policy or --tokens), and either TLS of its own
 * (--tls-cert, --tls-key) or a TLS-terminating reverse proxy: the
 * proxy's addresses (--trust-proxy) and the URL clients use
 * (--public-url, https).
 *
 * Each request: from a loopback client that names this server by a
 * loopback name and carries no X-Forwarded-* header, it is the local
 * case, as before. Otherwise the request must name the public URL (by
 * default https://ADDR:PORT/mcp when the server has TLS): its Host (or,
 * from a trusted proxy only, its X-Forwarded-Host) is the URL's host and
 * port, its scheme (the connection's, or a trusted proxy's
 * X-Forwarded-Proto) the URL's, and an Origin, when sent, the URL's
 * origin. With --trust-proxy, no other client is served at all.
 *
 * It never reads a request's body, decides who the caller is, nor trusts
 * a forwarded header from an address that is not a trusted proxy.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <stddef.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mcp/http_int.h"

static int is_loopback_ip(uint32_t host_order)
{
	return host_order >> 24 == 127;
}

/* The host part of an authority, [v6] included, is a loopback name. */
static int loopback_host(const char *host, size_t len)
{
	char buf[64];
	struct in_addr a;

	if ((len == 9 && strncasecmp(host, "localhost", 9) == 0) ||
	    (len == 5 && strncmp(host, "[::1]", 5) == 0))
		return 1;
	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, host, len);
	buf[len] = '\0';
	return inet_pton(AF_INET, buf, &a) == 1 && is_loopback_ip(ntohl(a.s_addr));
}

/* The length of an authority's host: [v6] with its brackets, or up to
 * the port's colon. */
static size_t host_len(const char *auth)
{
	const char *close = auth[0] == '[' ? strchr(auth, ']') : NULL;

	return close ? (size_t)(close + 1 - auth) : strcspn(auth, ":");
}

/* An authority "host[:port]" of the scheme's URLs, normalised into out:
 * host in lower case, the port dropped when it is the scheme's default.
 * -1 when it is not one (a user part, an empty host, a bad port). */
static int authority_norm(const char *a, size_t len, int https, char *out, size_t outlen)
{
	const char *colon = NULL, *end = a + len, *p;
	unsigned long port = https ? 443 : 80;
	size_t hlen, i;

	if (len == 0 || memchr(a, '@', len))
		return -1;
	if (a[0] == '[') {
		const char *close = memchr(a, ']', len);

		if (!close)
			return -1;
		if (close + 1 < end && close[1] != ':')
			return -1;
		colon = close + 1 < end ? close + 1 : NULL;
	} else {
		colon = memchr(a, ':', len);
	}
	hlen = colon ? (size_t)(colon - a) : len;
	if (hlen == 0 || hlen + 7 > outlen)
		return -1;
	if (colon) {
		if (colon + 1 == end || end - colon > 6)
			return -1;
		port = 0;
		for (p = colon + 1; p < end; p++) {
			if (!isdigit((unsigned char)*p))
				return -1;
			port = port * 10 + (unsigned long)(*p - '0');
		}
		if (port == 0 || port > 65535)
			return -1;
	}
	for (i = 0; i < hlen; i++) {
		unsigned char ch = (unsigned char)a[i];

		if (ch <= ' ' || ch == '/' || ch == '?' || ch == '#' || ch == '\\' || ch >= 0x7f)
			return -1;
		out[i] = (char)tolower(ch);
	}
	out[hlen] = '\0';
	if (port != (https ? 443ul : 80ul))
		snprintf(out + hlen, outlen - hlen, ":%lu", port);
	return 0;
}

/* "scheme://authority" of url into *https and the normalised authority;
 * *rest points past the authority. -1 when it is no http(s) URL. */
static int url_split(const char *url, int *https, char *auth, size_t alen, const char **rest)
{
	const char *a, *e;

	if (strncasecmp(url, "https://", 8) == 0)
		*https = 1, a = url + 8;
	else if (strncasecmp(url, "http://", 7) == 0)
		*https = 0, a = url + 7;
	else
		return -1;
	e = a + strcspn(a, "/?#");
	*rest = e;
	return authority_norm(a, (size_t)(e - a), *https, auth, alen);
}

static int parse_public_url(struct http_front *f, const char *url, struct tg_error *err)
{
	const char *rest;
	size_t n = strlen(url);

	if (n > HTTP_MAX_URL || url_split(url, &f->https, f->authority, sizeof(f->authority),
					    &rest) < 0)
		return tg_error_set(err, TG_ERR_INVALID, "--public-url '%.300s': wants the URL "
				    "clients use, such as https://gw.example.com/mcp (at most %d "
				    "bytes)", url, HTTP_MAX_URL);
	if (strpbrk(rest, "?#"))
		return tg_error_set(err, TG_ERR_INVALID, "--public-url '%.300s': no query or "
				    "fragment", url);
	if (!f->https && !loopback_host(f->authority, host_len(f->authority)))
		return tg_error_set(err, TG_ERR_INVALID, "--public-url '%.300s': must be https "
				    "(bearer tokens would cross the network in the clear)", url);
	snprintf(f->public_url, sizeof(f->public_url), "%s://%s%.255s", f->https ? "https" : "http",
		 f->authority, rest[0] && strcmp(rest, "/") != 0 ? rest : "/mcp");
	return 0;
}

static int parse_proxies(struct http_front *f, const char *list, struct tg_error *err)
{
	const char *p = list;

	while (*p) {
		size_t len = strcspn(p, ",");
		char one[40], *slash;
		struct in_addr a;
		unsigned long bits = 32;

		if (len == 0 || len >= sizeof(one) || f->nproxies == HTTP_MAX_PROXIES)
			goto bad;
		memcpy(one, p, len);
		one[len] = '\0';
		slash = strchr(one, '/');
		if (slash) {
			char *end;

			*slash = '\0';
			bits = strtoul(slash + 1, &end, 10);
			/* /0 would make every client a proxy */
			if (!isdigit((unsigned char)slash[1]) || *end || bits == 0 || bits > 32)
				goto bad;
		}
		if (inet_pton(AF_INET, one, &a) != 1)
			goto bad;
		f->proxies[f->nproxies].mask = bits ? ~0u << (32 - bits) : 0;
		f->proxies[f->nproxies].net = ntohl(a.s_addr) & f->proxies[f->nproxies].mask;
		f->nproxies++;
		p += len;
		if (*p == ',' && !*++p)
			goto bad; /* a trailing comma */
	}
	if (f->nproxies)
		return 0;
bad:
	return tg_error_set(err, TG_ERR_INVALID, "--trust-proxy '%.300s': wants the reverse "
			    "proxies' IPv4 addresses or networks, comma-separated (such as "
			    "10.0.0.5,10.1.0.0/24), at most %d", list, HTTP_MAX_PROXIES);
}

int http_front_init(struct http_front *f, const char *addr, unsigned port,
		    const struct tg_mcp_http_options *o, int authenticated, struct tg_error *err)
{
	struct in_addr a;
	char where[96];

	memset(f, 0, sizeof(*f));
	if (inet_pton(AF_INET, addr, &a) != 1)
		return tg_error_set(err, TG_ERR_INVALID, "--http %s: not an IPv4 address (no name "
				    "is resolved: 127.0.0.1 for this host)", addr);
	inet_ntop(AF_INET, &a, f->addr, sizeof(f->addr));
	f->loopback = is_loopback_ip(ntohl(a.s_addr));
	f->tls = o && o->tls_cert;
	f->https = f->tls;
	snprintf(where, sizeof(where), "--http %s:%u", addr, port);
	if (o && !!o->tls_cert != !!o->tls_key)
		return tg_error_set(err, TG_ERR_INVALID, "%s: --tls-cert and --tls-key go together",
				    where);
	if (o && o->trust_proxy && parse_proxies(f, o->trust_proxy, err) < 0)
		return -1;
	if (o && o->public_url && parse_public_url(f, o->public_url, err) < 0)
		return -1;
	if (f->nproxies && !f->public_url[0])
		return tg_error_set(err, TG_ERR_INVALID, "%s: --trust-proxy needs --public-url, "
				    "the URL clients use through the proxy", where);
	/* a proxy, or a public name, brings other hosts' clients to a
	 * loopback listener too */
	if (!authenticated && (!f->loopback || f->nproxies ||
			       (f->public_url[0] &&
				!loopback_host(f->authority, host_len(f->authority)))))
		return tg_error_set(err, TG_ERR_INVALID, "%s: %s, and no caller would be "
				    "authenticated: add --policy FILE --state DIR (or --tokens "
				    "FILE)", where, !f->loopback ? "not a loopback address"
				    : f->nproxies ? "--trust-proxy serves other hosts' clients"
				    : "--public-url names another host");
	if (f->loopback)
		return 0;
	if (!f->tls && !f->nproxies)
		return tg_error_set(err, TG_ERR_INVALID, "%s: not a loopback address: serve "
				    "HTTPS (--tls-cert FILE --tls-key FILE), or put a TLS-"
				    "terminating proxy in front (--trust-proxy ADDR --public-url "
				    "https://...); bearer tokens must not cross a network in the "
				    "clear", where);
	if (!f->public_url[0] && a.s_addr == htonl(INADDR_ANY))
		return tg_error_set(err, TG_ERR_INVALID, "%s: --public-url names the URL clients "
				    "use (such as https://gw.example.com:%u/mcp): 0.0.0.0 is no "
				    "name of this server", where, port);
	return 0;
}

void http_front_resource(const struct http_front *f, unsigned port, char *out, size_t len)
{
	if (f->public_url[0])
		snprintf(out, len, "%s", f->public_url);
	else
		snprintf(out, len, "%s://%s:%u/mcp", f->tls ? "https" : "http", f->addr, port);
}

void http_front_metadata_url(const struct http_front *f, unsigned port, char *out, size_t len)
{
	char url[HTTP_MAX_URL + HTTP_MAX_AUTHORITY + 32];
	const char *path;

	http_front_resource(f, port, url, sizeof(url));
	/* RFC 9728, 3.1: the well-known part goes between host and path */
	path = strchr(strstr(url, "://") + 3, '/');
	snprintf(out, len, "%.*s/.well-known/oauth-protected-resource%s",
		 (int)(path ? path - url : (ptrdiff_t)strlen(url)), url, path ? path : "");
}

int http_front_is_metadata(const struct http_front *f, unsigned port, const char *url)
{
	char res[HTTP_MAX_URL + HTTP_MAX_AUTHORITY + 32];
	const char *path;
	size_t n = strlen(WELL_KNOWN_PRM);

	if (strncmp(url, WELL_KNOWN_PRM, n) != 0)
		return 0;
	if (!url[n])
		return 1;
	/* the path-suffixed form: this resource's path, or the endpoint's
	 * own (a proxy may map another path to /mcp) */
	http_front_resource(f, port, res, sizeof(res));
	path = strchr(strstr(res, "://") + 3, '/');
	return strcmp(url + n, "/mcp") == 0 || (path && strcmp(url + n, path) == 0);
}

int http_front_is_proxy(const struct http_front *f, const struct sockaddr *sa)
{
	uint32_t ip;
	size_t i;

	if (!sa || sa->sa_family != AF_INET)
		return 0;
	ip = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
	for (i = 0; i < f->nproxies; i++)
		if ((ip & f->proxies[i].mask) == f->proxies[i].net)
			return 1;
	return 0;
}

/* A forwarded header's one value, trimmed, into out; NULL when it is a
 * list (a proxy that appends puts its own value last, after what the
 * client sent: the first is the client's) or longer than out. */
static const char *one_value(const char *v, char *out, size_t len)
{
	size_t n;

	while (*v == ' ' || *v == '\t')
		v++;
	n = strlen(v);
	while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		n--;
	if (memchr(v, ',', n) || n >= len)
		return NULL;
	memcpy(out, v, n);
	out[n] = '\0';
	return out;
}

/* The local case: a loopback client naming this server by one of its
 * loopback names (the bound address, 127.0.0.1 or localhost, with the
 * port), through no proxy; its Origin, if any, the same. */
static int local_request(const struct http_front *f, unsigned port, const char *host,
			 const char *origin)
{
	char mine[3][64], auth[HTTP_MAX_AUTHORITY];
	const char *rest;
	int https, i, host_ok = 0, origin_ok = !origin;

	snprintf(mine[0], sizeof(mine[0]), "%s:%u", f->addr, port);
	snprintf(mine[1], sizeof(mine[1]), "127.0.0.1:%u", port);
	snprintf(mine[2], sizeof(mine[2]), "localhost:%u", port);
	for (i = 0; i < 3; i++) {
		host_ok |= strcasecmp(host, mine[i]) == 0;
		/* an Origin drops a default port: compare it normalised */
		if (origin && url_split(origin, &https, auth, sizeof(auth), &rest) == 0 &&
		    !*rest && https == f->tls) {
			char want[64];

			authority_norm(mine[i], strlen(mine[i]), https, want, sizeof(want));
			origin_ok |= strcmp(auth, want) == 0;
		}
	}
	return host_ok && origin_ok;
}

const char *http_front_refused(const struct http_front *f, unsigned port,
			       struct MHD_Connection *c, char *why, size_t len)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *client = ci ? ci->client_addr : NULL;
	unsigned nhost = 0, nxfh = 0, nxfp = 0;
	const char *host = http_lookup_header(c, "Host", &nhost);
	const char *xfh = http_lookup_header(c, "X-Forwarded-Host", &nxfh);
	const char *xfp = http_lookup_header(c, "X-Forwarded-Proto", &nxfp);
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	char want[HTTP_MAX_AUTHORITY], got[HTTP_MAX_AUTHORITY], one[HTTP_MAX_AUTHORITY];
	const char *rest, *named;
	int proxy, https, from_loopback;

	if (!host || nhost > 1)
		return "Forbidden: a request names its server in one Host header";
	from_loopback = client && client->sa_family == AF_INET &&
			is_loopback_ip(ntohl(((const struct sockaddr_in *)client)->sin_addr.s_addr));
	proxy = f->nproxies && http_front_is_proxy(f, client);
	/* forwarded headers count only from a trusted proxy */
	if (from_loopback && !(proxy && (xfh || xfp)) && local_request(f, port, host, origin))
		return NULL;
	if (!f->public_url[0] && f->loopback)
		return local_request(f, port, host, NULL)
			       ? "Forbidden: the Origin is not this server's"
			       : "Forbidden: the Host header does not name this server";
	if (f->nproxies && !proxy)
		return "Forbidden: this server is reached through its proxy (--trust-proxy), or "
		       "from this host by a loopback name";
	if (f->public_url[0]) {
		snprintf(want, sizeof(want), "%s", f->authority);
	} else {
		/* as a whole: the default port (443) is dropped, as from a Host */
		snprintf(one, sizeof(one), "%s:%u", f->addr, port);
		authority_norm(one, strlen(one), f->tls, want, sizeof(want));
	}
	https = f->tls;
	if (proxy && (nxfh > 1 || nxfp > 1))
		return "Forbidden: X-Forwarded-Host or X-Forwarded-Proto is given twice";
	if (proxy && xfp) {
		if (!one_value(xfp, one, sizeof(one)) ||
		    (strcasecmp(one, "https") != 0 && strcasecmp(one, "http") != 0))
			return "Forbidden: X-Forwarded-Proto is not one of http or https";
		https = strcasecmp(one, "https") == 0;
	}
	if (https != f->https) {
		snprintf(why, len, "Forbidden: the request came over %s, but this server's URL "
			 "is %s%s", https ? "https" : "http", f->public_url[0] ? f->public_url :
			 "https://...", proxy ? " (the proxy must say how the client came: "
			 "X-Forwarded-Proto)" : "");
		return why;
	}
	named = proxy && xfh ? one_value(xfh, one, sizeof(one)) : host;
	if (!named)
		return "Forbidden: X-Forwarded-Host is a list or too long: the proxy must set "
		       "it, not add to the client's";
	if (authority_norm(named, strlen(named), https, got, sizeof(got)) < 0 ||
	    strcmp(got, want) != 0) {
		snprintf(why, len, "Forbidden: the request names the server %.100s, not %s (its "
			 "public URL)", named, want);
		return why;
	}
	if (origin && (url_split(origin, &https, got, sizeof(got), &rest) < 0 || *rest ||
		       https != f->https || strcmp(got, want) != 0)) {
		snprintf(why, len, "Forbidden: the Origin %.100s is not this server's (%s://%s)",
			 origin, f->https ? "https" : "http", want);
		return why;
	}
	return NULL;
}

/* An IPv4 address (host order) as a client's key: bit 32 set, so that
 * none is 0 nor any IPv6 key. */
static uint64_t key4(uint32_t host_order)
{
	return (uint64_t)1 << 32 | host_order;
}

uint64_t http_front_key(const char *text)
{
	unsigned char a[sizeof(struct in6_addr)];
	uint32_t v4;
	uint64_t k = 0;
	size_t i;

	if (inet_pton(AF_INET, text, a) == 1) {
		memcpy(&v4, a, sizeof(v4));
		return key4(ntohl(v4));
	}
	if (inet_pton(AF_INET6, text, a) != 1)
		return 0;
	/* a dual-stack proxy's IPv4 client (::ffff:a.b.c.d): that address,
	 * not the one /64 every such client would share */
	if (IN6_IS_ADDR_V4MAPPED((const struct in6_addr *)(const void *)a)) {
		memcpy(&v4, a + 12, sizeof(v4));
		return key4(ntohl(v4));
	}
	/* the /64 in network order, its first bit for the tag: 2000::/3,
	 * the unicast addresses given out, never has it set */
	for (i = 0; i < 8; i++)
		k = k << 8 | a[i];
	return k | (uint64_t)1 << 63;
}

uint64_t http_front_client(const struct http_front *f, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
	const struct sockaddr *sa = ci ? ci->client_addr : NULL;
	unsigned n = 0;
	const char *xff = http_lookup_header(c, "X-Forwarded-For", &n);
	const char *last;
	char one[INET6_ADDRSTRLEN];
	uint64_t k;

	if (!sa || sa->sa_family != AF_INET)
		return 0;
	/* through a trusted proxy, the address it says it was asked from:
	 * the last of the list, the one it added */
	if (xff && n == 1 && http_front_is_proxy(f, sa)) {
		last = strrchr(xff, ',');
		if (one_value(last ? last + 1 : xff, one, sizeof(one)) &&
		    (k = http_front_key(one)))
			return k;
	}
	return key4(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
}
