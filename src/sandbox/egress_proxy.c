/*
 * The egress proxy (docs/EGRESS.md): a unix socket that speaks HTTP
 * CONNECT, plain HTTP forwarding and SOCKS5, and opens a connection only
 * to what the policy allows.
 *
 * Each client has a thread of its own (at most max_clients at once, and
 * within the gateway's budget and its principal's share of it,
 * egress_budget.c: one more is told 503 at once). It has head_timeout_ms
 * to send its request head (16 KiB at most, 100 header lines), then the
 * proxy:
 *
 *   1. checks host:port against the allowlist (tg_egress_policy_check);
 *   2. resolves a name itself and refuses it when any address it resolves
 *      to is in a deny range or is this host's own (egress_resolve.c),
 *      and connects to one of the addresses it checked, an IPv6 one over
 *      IPv6 only: nothing is resolved twice, so a name cannot change
 *      between the check and the connection (DNS rebinding);
 *   3. relays both ways until either side is done, or idle_timeout_ms of
 *      silence.
 *
 * A plain HTTP request is forwarded as one request (Connection: close);
 * a redirect it answers with goes back to the client, whose next request
 * is checked like any other. Every refusal is a clear answer in the
 * client's protocol, and is reported through on_deny.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "toolgate/egress.h"
#include "sandbox/egress_int.h"

#define MAX_HEADERS 100         /* its lines */
#define CONNECT_TIMEOUT_MS 10000
#define RELAY_BUF (16u << 10)
#define MAX_REPORTS 100         /* refusals a proxy reports one by one */
#define RUN_CLIENTS 16          /* a proxy's connections at once, by default */
#define THREAD_STACK (256u << 10)

struct tg_egress_proxy {
	struct tg_egress_proxy_options o;
	char **hosts;                  /* a copy of o.hosts */
	char *path;
	int lfd;
	int stop[2];                   /* readable once the proxy stops */
	pthread_t acceptor;
	int has_acceptor;
	pthread_mutex_t lock;
	pthread_cond_t idle;
	unsigned clients;
	int stopping;                  /* no client admitted any more */
	unsigned reported, unreported; /* refusals told one by one, and not */
	struct tg_egress_policy *own_policy; /* made from o.rules, or NULL */
	struct egress_share *share;    /* o.principal's of the gateway's budget */
};

struct client {
	struct tg_egress_proxy *p;
	int fd;
};

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait until fd is ready for events, the deadline passes (0) or the proxy
 * stops (-1); 1 when ready. */
static int wait_fd(struct tg_egress_proxy *p, int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd pf[2] = { { fd, events, 0 }, { p->stop[0], POLLIN, 0 } };
		int64_t left = deadline - now_ms();
		int rc;

		if (left <= 0)
			return 0;
		rc = poll(pf, 2, left > 60000 ? 60000 : (int)left);
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0 || pf[1].revents)
			return -1;
		if (pf[0].revents)
			return 1;
	}
}

static int write_all(struct tg_egress_proxy *p, int fd, const void *buf, size_t len)
{
	const char *s = buf;
	int64_t deadline = now_ms() + CONNECT_TIMEOUT_MS;

	while (len) {
		ssize_t w = send(fd, s, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && (errno == EAGAIN || errno == EINTR)) {
			if (wait_fd(p, fd, POLLOUT, deadline) != 1)
				return -1;
			continue;
		}
		if (w <= 0)
			return -1;
		s += w;
		len -= (size_t)w;
	}
	return 0;
}

/* s into out (len bytes) as printable ASCII: other bytes as \xNN, so
 * that what a client wrote cannot forge a line of a record or a
 * terminal. */
static void printable(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; *s && o + 5 < len; s++) {
		unsigned char c = (unsigned char)*s;

		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, len - o, "\\x%02x", c);
	}
	out[o] = 0;
}

/* A refusal, reported through on_deny: the first MAX_REPORTS of a proxy
 * one by one, the rest counted and reported once when it stops (a loop
 * in the sandbox cannot flood the record). */
static void denied(struct tg_egress_proxy *p, const char *host, unsigned port, const char *why)
{
	char h[300], w[600], dest[320];
	int report;

	if (!p->o.on_deny)
		return;
	pthread_mutex_lock(&p->lock);
	report = p->reported < MAX_REPORTS;
	if (report)
		p->reported++;
	else
		p->unreported++;
	pthread_mutex_unlock(&p->lock);
	if (!report)
		return;
	printable(host, h, sizeof(h));
	printable(why, w, sizeof(w));
	if (*h)
		snprintf(dest, sizeof(dest), "%.290s:%u", h, port);
	else
		snprintf(dest, sizeof(dest), "(any)");
	p->o.on_deny(p->o.ctx, dest, w);
}

/* ---- resolving and connecting --------------------------------------------- */

/* A connection to a, within CONNECT_TIMEOUT_MS; -1 (errno). */
static int connect_to(struct tg_egress_proxy *p, const struct sockaddr_storage *a)
{
	socklen_t len = a->ss_family == AF_INET ? sizeof(struct sockaddr_in)
						: sizeof(struct sockaddr_in6);
	int fd = socket(a->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), e = 0, one = 1;

	if (fd < 0)
		return -1;
	/* an IPv6 address is reached over IPv6 only: a dual-stack socket
	 * would take ::ffff:a.b.c.d to an IPv4 address judged as IPv6 */
	if (a->ss_family == AF_INET6 &&
	    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one)) < 0) {
		e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	if (connect(fd, (const struct sockaddr *)a, len) < 0) {
		socklen_t el = sizeof(e);

		if (errno != EINPROGRESS ||
		    wait_fd(p, fd, POLLOUT, now_ms() + CONNECT_TIMEOUT_MS) != 1 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el) < 0 || e) {
			close(fd);
			errno = e ? e : ETIMEDOUT;
			return -1;
		}
	}
	return fd;
}

/* The upstream connection for host:port, or -1 with why and *code: 403
 * (the policy, a denied address), 502 (no connection). Every refusal by
 * the policy is reported. */
static int open_upstream(struct tg_egress_proxy *p, const char *host, unsigned port, int *code,
			 char *why, size_t len)
{
	struct sockaddr_storage addrs[EGRESS_MAX_ADDRS];
	const char *no;
	size_t n = 0, i;
	int literal_rule, fd = -1, e = 0, rc;

	*code = 403;
	no = tg_egress_policy_check(p->o.policy, host, port, &literal_rule);
	if (no) {
		snprintf(why, len, "%s", no);
		denied(p, host, port, why);
		return -1;
	}
	if (tg_egress_parse_ip(host, &addrs[0]) == 1) {
		n = 1; /* a rule names it: allowed as it is */
		if (addrs[0].ss_family == AF_INET)
			((struct sockaddr_in *)&addrs[0])->sin_port = htons((uint16_t)port);
		else
			((struct sockaddr_in6 *)&addrs[0])->sin6_port = htons((uint16_t)port);
	} else if ((rc = egress_resolve(NULL, p->hosts, host, port, addrs, &n, why, len)) < 0) {
		/* every address checked: one denied, and the name is refused */
		*code = rc == -2 ? 403 : 502;
		if (rc == -2)
			denied(p, host, port, why);
		return -1;
	}
	*code = 502;
	for (i = 0; i < n && fd < 0; i++) {
		fd = connect_to(p, &addrs[i]); /* the very address checked */
		if (fd < 0)
			e = errno;
	}
	if (fd < 0)
		snprintf(why, len, "%.100s:%u: %s", host, port, strerror(e));
	return fd;
}

/* ---- relaying ---------------------------------------------------------------- */

enum relay_mode {
	RELAY_TUNNEL,   /* both ways, a CONNECT's or SOCKS's tunnel */
	RELAY_RESPONSE, /* the upstream's answer to the client only */
};

/* The first bytes a client sends into a tunnel, watched for a proxy
 * request of its own: an allowed host that is itself a proxy must not
 * become the way to every other. A CONNECT, or a request line whose
 * target is an absolute http(s) URL (which only proxies are sent), after
 * any empty lines. */
struct sniff {
	char b[32];
	size_t n;
	int done;
};

static int token_char(int c);

/* 1 when what has come is a proxy request, 0 while it may still become
 * one, -1 (done) once it cannot. */
static int sniff_verdict(const struct sniff *s)
{
	const char *sp = memchr(s->b, ' ', s->n), *rest;
	size_t i, m, k;

	for (i = 0; i < (sp ? (size_t)(sp - s->b) : s->n); i++)
		if (!token_char((unsigned char)s->b[i]))
			return -1;
	if (!sp)
		return s->n > 16 ? -1 : 0; /* a method is short */
	m = (size_t)(sp - s->b);
	if (m == 7 && strncasecmp(s->b, "CONNECT", 7) == 0)
		return 1;
	rest = sp + 1;
	k = s->n - m - 1;
	if (k < 8) /* "https://" may still come */
		return strncasecmp(rest, "https://", k) == 0 || strncasecmp(rest, "http://", k < 7 ? k : 7) == 0 ? 0 : -1;
	return strncasecmp(rest, "http://", 7) == 0 || strncasecmp(rest, "https://", 8) == 0 ? 1 : -1;
}

/* Feed n bytes the client sent; 1 when the tunnel carries a proxy
 * request. */
static int chained(struct sniff *s, const char *buf, size_t n)
{
	size_t i;
	int v;

	for (i = 0; !s->done && i < n; i++) {
		if (s->n == 0 && (buf[i] == '\r' || buf[i] == '\n'))
			continue; /* empty lines before a request are ignored by servers */
		s->b[s->n++] = buf[i];
		v = sniff_verdict(s);
		if (v == 1)
			return 1;
		if (v < 0 || s->n == sizeof(s->b))
			s->done = 1;
	}
	return 0;
}

/* Relay between the client a and the upstream b until both are done, or
 * idle_timeout_ms of silence, or the proxy stops; early is what the client
 * sent after its request head. 0, or -1 when a tunnel began with a proxy
 * request of its own (chained): the tunnel is cut there. */
static int relay(struct tg_egress_proxy *p, int a, int b, enum relay_mode mode, const char *early,
		 size_t early_len)
{
	char *buf = malloc(RELAY_BUF);
	int open_a = mode != RELAY_RESPONSE, open_b = 1, rc_out = 0;
	struct sniff sniff = { .n = 0, .done = mode != RELAY_TUNNEL };
	unsigned idle = p->o.idle_timeout_ms ? p->o.idle_timeout_ms : 300000;

	if (early_len && chained(&sniff, early, early_len))
		open_a = open_b = 0, rc_out = -1;
	else if (early_len && write_all(p, b, early, early_len) < 0)
		open_a = open_b = 0;
	while (buf && (open_a || open_b)) {
		/* a side that is done leaves the set (a hung-up socket would
		 * wake poll at once, for ever), but a client that only
		 * listens is still watched for hanging up */
		struct pollfd pf[3] = { { open_a || mode == RELAY_RESPONSE ? a : -1,
					  (short)(open_a ? POLLIN : 0), 0 },
					{ open_b ? b : -1, POLLIN, 0 },
					{ p->stop[0], POLLIN, 0 } };
		int rc = poll(pf, 3, (int)idle), i;

		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0 || pf[2].revents)
			break; /* silent too long, or the proxy stops */
		if (!open_a && (pf[0].revents & (POLLHUP | POLLERR)))
			break; /* the client is gone */
		for (i = 0; i < 2; i++) {
			int from = i ? b : a, to = i ? a : b;
			ssize_t r;

			if (!pf[i].revents || !(i ? open_b : open_a))
				continue;
			r = recv(from, buf, RELAY_BUF, MSG_DONTWAIT);
			if (r < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			if (r <= 0) {
				/* this side is done: the other hears so, and may finish */
				shutdown(to, SHUT_WR);
				if (i)
					open_b = 0;
				else
					open_a = 0;
				if (mode == RELAY_RESPONSE && i)
					open_a = 0;
				continue;
			}
			if (!i && chained(&sniff, buf, (size_t)r)) {
				open_a = open_b = 0;
				rc_out = -1;
				break;
			}
			if (write_all(p, to, buf, (size_t)r) < 0) {
				open_a = open_b = 0;
				break;
			}
		}
	}
	free(buf);
	return rc_out;
}

/* ---- HTTP -------------------------------------------------------------------- */

static void http_error(struct tg_egress_proxy *p, int fd, int code, const char *why)
{
	const char *reason = code == 400   ? "Bad Request"
			     : code == 403 ? "Forbidden"
			     : code == 405 ? "Method Not Allowed"
			     : code == 408 ? "Request Timeout"
			     : code == 431 ? "Request Header Fields Too Large"
			     : code == 503 ? "Service Unavailable"
					   : "Bad Gateway";
	char out[700];
	int n = snprintf(out, sizeof(out), "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\n"
			 "Connection: close\r\nContent-Length: %zu\r\n\r\ntoolgate egress: %.500s\n",
			 code, reason, strlen("toolgate egress: \n") + strnlen(why, 500), why);

	write_all(p, fd, out, (size_t)n);
}

/* "host[:port]" (host possibly "[v6]") split, port default dflt; -1 bad. */
static int authority(const char *a, size_t n, char *host, size_t len, unsigned *port,
		     unsigned dflt)
{
	const char *end = a + n, *colon = NULL, *s;
	unsigned long v;
	char num[8];

	if (n == 0 || memchr(a, '@', n))
		return -1; /* userinfo: never */
	if (a[0] == '[') {
		s = memchr(a, ']', n);
		if (!s)
			return -1;
		colon = s + 1 < end ? s + 1 : NULL;
		if (colon && *colon != ':')
			return -1;
		s++;
	} else {
		colon = memchr(a, ':', n);
		s = colon ? colon : end;
	}
	if ((size_t)(s - a) >= len || s == a)
		return -1;
	memcpy(host, a, (size_t)(s - a));
	host[s - a] = 0;
	*port = dflt;
	if (colon) {
		size_t pl = (size_t)(end - colon - 1);

		if (pl == 0 || pl >= sizeof(num) || strspn(colon + 1, "0123456789") < pl)
			return -1;
		memcpy(num, colon + 1, pl);
		num[pl] = 0;
		v = strtoul(num, NULL, 10);
		if (v == 0 || v > 65535)
			return -1;
		*port = (unsigned)v;
	}
	return 0;
}

/* The request head into buf (first byte given); its length, with *used
 * the bytes read (the head and what followed). 0 and *code on failure. */
static size_t read_head(struct tg_egress_proxy *p, int fd, char *buf, size_t *used, int *code)
{
	int64_t deadline = now_ms() + (p->o.head_timeout_ms ? p->o.head_timeout_ms : 10000);
	size_t from = 0;
	char *end;

	for (;;) {
		ssize_t r;

		/* the head's end, looked for in what is new (and the 3 bytes
		 * before it); a NUL in the head is refused, one in a body
		 * that came along is the body's business */
		buf[*used] = 0;
		end = memmem(buf + from, *used - from, "\r\n\r\n", 4);
		if (end && memchr(buf, 0, (size_t)(end - buf))) {
			*code = 400;
			return 0;
		}
		if (end)
			return (size_t)(end - buf) + 4;
		from = *used > 3 ? *used - 3 : 0;
		if (*used >= MAX_HEAD) {
			*code = 431;
			return 0;
		}
		r = wait_fd(p, fd, POLLIN, deadline);
		if (r != 1) {
			*code = r == 0 ? 408 : 0;
			return 0;
		}
		r = recv(fd, buf + *used, MAX_HEAD - *used, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0) {
			*code = 0; /* gone */
			return 0;
		}
		*used += (size_t)r;
	}
}

static int hop_by_hop(const char *line, size_t n)
{
	/* and Host, which the proxy writes itself from the URL it checked */
	static const char *const names[] = { "connection:", "proxy-connection:", "keep-alive:",
					     "proxy-authorization:", "proxy-authenticate:", "te:",
					     "upgrade:", "trailer:", "host:" };
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (n >= strlen(names[i]) && strncasecmp(line, names[i], strlen(names[i])) == 0)
			return 1;
	return 0;
}

/* Check the head's lines (after the request line): each a "name: value"
 * of visible characters, no bare CR or LF, no folding, at most
 * MAX_HEADERS. A body's length into *body (0 when none). NULL, or why
 * not, with *code. */
static const char *check_headers(const char *buf, size_t head, uint64_t *body, int *code)
{
	const char *line = strstr(buf, "\r\n") + 2, *end = buf + head - 2, *eol;
	size_t lines = 0;
	int have_length = 0;

	*body = 0;
	*code = 400;
	for (; line < end; line = eol + 2) {
		const char *colon, *v;
		size_t n;

		eol = strstr(line, "\r\n");
		n = (size_t)(eol - line);
		if (++lines > MAX_HEADERS) {
			*code = 431;
			return "more than 100 header lines";
		}
		colon = memchr(line, ':', n);
		if (!colon || colon == line || line[0] == ' ' || line[0] == '\t')
			return "a malformed header line";
		for (v = line; v < eol; v++)
			if ((unsigned char)*v < 0x20 ? *v != '\t' : *v == 0x7f)
				return "a control character in a header";
		for (v = line; v < colon; v++)
			if (*v == ' ' || *v == '\t')
				return "a space in a header name";
		if (n >= 18 && strncasecmp(line, "transfer-encoding:", 18) == 0) {
			*code = 411;
			return "a request body is forwarded with a Content-Length only";
		}
		if (n >= 15 && strncasecmp(line, "content-length:", 15) == 0) {
			const char *d = line + 15;
			uint64_t len = 0;
			size_t digits = 0;

			while (d < eol && (*d == ' ' || *d == '\t'))
				d++;
			for (; d < eol && *d >= '0' && *d <= '9' && digits < 16; d++, digits++)
				len = len * 10 + (uint64_t)(*d - '0');
			while (d < eol && (*d == ' ' || *d == '\t'))
				d++;
			if (!digits || d != eol || (have_length && len != *body))
				return "a malformed Content-Length";
			have_length = 1;
			*body = len;
		}
	}
	return NULL;
}

/* The first len bytes of a request body, to the upstream: those that came
 * with the head, then what the client sends within the idle timeout. */
static int forward_body(struct tg_egress_proxy *p, int fd, int up, const char *early,
			size_t early_len, uint64_t len)
{
	unsigned idle = p->o.idle_timeout_ms ? p->o.idle_timeout_ms : 300000;
	char *buf;
	size_t n = early_len < len ? early_len : (size_t)len;

	if (n && write_all(p, up, early, n) < 0)
		return -1;
	len -= n;
	if (!len)
		return 0;
	buf = malloc(RELAY_BUF);
	while (buf && len) {
		ssize_t r;

		if (wait_fd(p, fd, POLLIN, now_ms() + idle) != 1)
			break;
		r = recv(fd, buf, len < RELAY_BUF ? (size_t)len : RELAY_BUF, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0 || write_all(p, up, buf, (size_t)r) < 0)
			break;
		len -= (size_t)r;
	}
	free(buf);
	return len ? -1 : 0;
}

static int token_char(int c)
{
	return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

const char *egress_parse_request(const char *buf, size_t head, struct egress_request *rq,
				 int *code)
{
	const char *eol = strstr(buf, "\r\n"), *line, *no;
	size_t n, off;

	/* the request line: METHOD SP TARGET SP HTTP/1.x, visible characters */
	memset(rq, 0, sizeof(*rq));
	*code = 400;
	n = strcspn(buf, " \r\n");
	if (!eol || n == 0 || n >= sizeof(rq->method) || buf[n] != ' ')
		return "a malformed request line";
	memcpy(rq->method, buf, n);
	line = buf + n + 1;
	off = strcspn(line, " \r\n");
	if (off == 0 || off >= sizeof(rq->target) || line + off >= eol || line[off] != ' ' ||
	    (size_t)(eol - (line + off + 1)) != 8 ||
	    (strncmp(line + off + 1, "HTTP/1.1", 8) != 0 && strncmp(line + off + 1, "HTTP/1.0", 8) != 0))
		return "a malformed request line";
	memcpy(rq->target, line, off);
	memcpy(rq->version, line + off + 1, 8);
	for (n = 0; rq->method[n]; n++)
		if (!token_char((unsigned char)rq->method[n]))
			return "a malformed request line";
	for (n = 0; rq->target[n]; n++)
		if ((unsigned char)rq->target[n] <= 0x20 || rq->target[n] == 0x7f)
			return "a control character in the request target";
	no = check_headers(buf, head, &rq->body, code);
	if (no)
		return no;
	*code = 400;
	rq->line_end = (size_t)(eol - buf) + 2;
	if (strcmp(rq->method, "CONNECT") == 0) {
		rq->connect = 1;
		if (authority(rq->target, strlen(rq->target), rq->host, sizeof(rq->host), &rq->port,
			      0) < 0 || rq->port == 0)
			return "CONNECT needs host:port";
		return NULL;
	}
	/* plain HTTP: absolute form only, forwarded as one request */
	if (strncasecmp(rq->target, "http://", 7) != 0) {
		*code = strncasecmp(rq->target, "https://", 8) == 0 ? 400 : 405;
		return "a proxy request names an absolute http:// URL (https: through CONNECT)";
	}
	rq->path = rq->target + 7 + strcspn(rq->target + 7, "/?#");
	if (*rq->path == '#' || authority(rq->target + 7, (size_t)(rq->path - rq->target - 7),
					  rq->host, sizeof(rq->host), &rq->port, 80) < 0)
		return "a malformed URL";
	return NULL;
}

/* A CONNECT: the tunnel to host:port, whose first bytes may not be a
 * CONNECT of their own. */
static void serve_connect(struct tg_egress_proxy *p, int fd, const struct egress_request *rq,
			  const char *buf, size_t head, size_t used)
{
	char why[400];
	int code, up;

	up = open_upstream(p, rq->host, rq->port, &code, why, sizeof(why));
	if (up < 0) {
		http_error(p, fd, code, why);
		return;
	}
	if (write_all(p, fd, "HTTP/1.1 200 Connection established\r\n\r\n", 39) == 0 &&
	    relay(p, fd, up, RELAY_TUNNEL, buf + head, used - head) < 0)
		denied(p, rq->host, rq->port, "a proxy request inside the tunnel (a proxy behind an "
		       "allowed host is no way to others)");
	close(up);
}

static void serve_http(struct tg_egress_proxy *p, int fd, char *buf, size_t used)
{
	static const char close_line[] = "Connection: close\r\n\r\n";
	struct egress_request *rq = malloc(sizeof(*rq));
	const char *no;
	char why[400], *out = NULL, *eol;
	size_t head, n, off, cap;
	int code = 400, up = -1, w;

	head = read_head(p, fd, buf, &used, &code);
	if (!head || !rq) {
		if (code && rq)
			http_error(p, fd, code, code == 431 ? "the request head is over 16 KiB"
					  : code == 408 ? "no request head in time"
							: "a NUL in the request head");
		goto out;
	}
	no = egress_parse_request(buf, head, rq, &code);
	if (no) {
		http_error(p, fd, code, no);
		goto out;
	}
	if (rq->connect) {
		serve_connect(p, fd, rq, buf, head, used);
		goto out;
	}
	up = open_upstream(p, rq->host, rq->port, &code, why, sizeof(why));
	if (up < 0) {
		http_error(p, fd, code, why);
		goto out;
	}
	/* the request line in origin form, Host from the URL, hop-by-hop
	 * headers dropped; one request, then the answer */
	cap = head + sizeof(rq->host) + 64;
	out = malloc(cap);
	if (!out)
		goto out;
	w = snprintf(out, cap, "%s %s%s %s\r\nHost: %.*s\r\n", rq->method,
		     *rq->path == '/' ? "" : "/", rq->path, rq->version,
		     (int)(rq->path - rq->target - 7), rq->target + 7);
	if (w < 0 || (size_t)w >= cap)
		goto out;
	n = (size_t)w;
	for (off = rq->line_end; off < head - 2; off = (size_t)(eol - buf) + 2) {
		eol = strstr(buf + off, "\r\n");
		if (!hop_by_hop(buf + off, (size_t)(eol - buf) - off)) {
			memcpy(out + n, buf + off, (size_t)(eol - buf) + 2 - off);
			n += (size_t)(eol - buf) + 2 - off;
		}
	}
	if (n + sizeof(close_line) > cap)
		goto out;
	memcpy(out + n, close_line, sizeof(close_line) - 1);
	n += sizeof(close_line) - 1;
	if (write_all(p, up, out, n) == 0 &&
	    forward_body(p, fd, up, buf + head, used - head, rq->body) == 0)
		relay(p, fd, up, RELAY_RESPONSE, NULL, 0);
out:
	free(out);
	free(rq);
	if (up >= 0)
		close(up);
}

/* ---- SOCKS5 ------------------------------------------------------------------- */

/* Exactly n bytes, within the head's time. */
static int read_n(struct tg_egress_proxy *p, int fd, void *buf, size_t n, int64_t deadline)
{
	char *b = buf;

	while (n) {
		ssize_t r;

		if (wait_fd(p, fd, POLLIN, deadline) != 1)
			return -1;
		r = recv(fd, b, n, MSG_DONTWAIT);
		if (r < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static void socks_reply(struct tg_egress_proxy *p, int fd, unsigned char rep)
{
	unsigned char r[10] = { 5, rep, 0, 1, 0, 0, 0, 0, 0, 0 };

	write_all(p, fd, r, sizeof(r));
}

static void serve_socks(struct tg_egress_proxy *p, int fd)
{
	int64_t deadline = now_ms() + (p->o.head_timeout_ms ? p->o.head_timeout_ms : 10000);
	unsigned char b[300], methods[255];
	char host[300], why[400];
	unsigned port;
	int code, up, none = 0;
	size_t i;

	/* VER NMETHODS METHODS: only "no authentication" is spoken */
	if (read_n(p, fd, b, 1, deadline) < 0 || (b[0] && read_n(p, fd, methods, b[0], deadline) < 0))
		return;
	for (i = 0; i < b[0]; i++)
		none |= methods[i] == 0;
	if (!none) {
		write_all(p, fd, "\x05\xff", 2);
		return;
	}
	if (write_all(p, fd, "\x05\x00", 2) < 0 || read_n(p, fd, b, 4, deadline) < 0)
		return;
	if (b[0] != 5 || b[1] != 1) {
		socks_reply(p, fd, 7); /* only CONNECT: no BIND, no UDP */
		return;
	}
	if (b[3] == 1 || b[3] == 4) {
		unsigned char a[16];
		size_t n = b[3] == 1 ? 4 : 16;

		if (read_n(p, fd, a, n, deadline) < 0 ||
		    !inet_ntop(b[3] == 1 ? AF_INET : AF_INET6, a, host + 1, sizeof(host) - 2))
			return;
		if (b[3] == 4) {
			size_t hl = strlen(host + 1);

			host[0] = '[';
			host[hl + 1] = ']';
			host[hl + 2] = 0;
		} else {
			memmove(host, host + 1, strlen(host + 1) + 1);
		}
	} else if (b[3] == 3) {
		if (read_n(p, fd, b, 1, deadline) < 0 || b[0] == 0 ||
		    read_n(p, fd, host, b[0], deadline) < 0)
			return;
		host[b[0]] = 0;
		if (strlen(host) != b[0]) {
			socks_reply(p, fd, 1);
			return;
		}
	} else {
		socks_reply(p, fd, 8);
		return;
	}
	if (read_n(p, fd, b, 2, deadline) < 0)
		return;
	port = (unsigned)b[0] << 8 | b[1];
	up = open_upstream(p, host, port, &code, why, sizeof(why));
	if (up < 0) {
		socks_reply(p, fd, code == 403 ? 2 : 4);
		return;
	}
	socks_reply(p, fd, 0);
	if (relay(p, fd, up, RELAY_TUNNEL, NULL, 0) < 0)
		denied(p, host, port, "a proxy request inside the tunnel (a proxy behind an "
		       "allowed host is no way to others)");
	close(up);
}

/* ---- the listener ------------------------------------------------------------ */

/* A client admitted is gone: its part of the gateway's budget (when it
 * had it) given back first, then the proxy may stop (and free its share). */
static void client_done(struct tg_egress_proxy *p, int budget)
{
	if (budget)
		egress_budget_give(p->share);
	pthread_mutex_lock(&p->lock);
	p->clients--;
	pthread_cond_broadcast(&p->idle);
	pthread_mutex_unlock(&p->lock);
}

static void *client_main(void *arg)
{
	struct client *c = arg;
	struct tg_egress_proxy *p = c->p;
	int64_t deadline = now_ms() + (p->o.head_timeout_ms ? p->o.head_timeout_ms : 10000);
	char *buf = malloc(MAX_HEAD + 1);
	ssize_t r = -1;

	while (buf && wait_fd(p, c->fd, POLLIN, deadline) == 1) {
		r = recv(c->fd, buf, 1, MSG_DONTWAIT);
		if (!(r < 0 && (errno == EAGAIN || errno == EINTR)))
			break;
	}
	if (r == 1 && (unsigned char)buf[0] == 5)
		serve_socks(p, c->fd);
	else if (r == 1)
		serve_http(p, c->fd, buf, 1);
	else if (buf && r < 0)
		http_error(p, c->fd, 408, "no request head in time");
	free(buf);
	close(c->fd);
	free(c);
	client_done(p, 1);
	return NULL;
}

/* A client's own thread, or a 503 at once when max_clients are served or
 * the gateway's budget or the principal's share of it is taken (the others
 * go on); fd is the proxy's either way. Never waits: it is called from a
 * run's supervision thread. */
static int admit(struct tg_egress_proxy *p, int fd)
{
	unsigned max = p->o.max_clients ? p->o.max_clients : RUN_CLIENTS;
	const char *full = NULL;
	struct client *c;
	pthread_attr_t attr;
	pthread_t t;
	int rc = -1;

	pthread_mutex_lock(&p->lock);
	if (p->clients >= max || p->stopping)
		full = "too many connections through the proxy at once";
	else
		p->clients++;
	pthread_mutex_unlock(&p->lock);
	if (!full && (full = egress_budget_take(p->share)))
		client_done(p, 0);
	if (full) {
		http_error(p, fd, 503, full);
		denied(p, "", 0, full);
		close(fd);
		return -1;
	}
	c = malloc(sizeof(*c));
	if (c && pthread_attr_init(&attr) == 0) {
		c->p = p;
		c->fd = fd;
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, THREAD_STACK);
		rc = pthread_create(&t, &attr, client_main, c) == 0 ? 0 : -1;
		pthread_attr_destroy(&attr);
	}
	if (rc < 0) {
		free(c);
		close(fd);
		client_done(p, 1);
	}
	return rc;
}

static void *acceptor_main(void *arg)
{
	struct tg_egress_proxy *p = arg;

	for (;;) {
		struct pollfd pf[2] = { { p->lfd, POLLIN, 0 }, { p->stop[0], POLLIN, 0 } };
		int fd;

		if (poll(pf, 2, -1) < 0 && errno != EINTR)
			break;
		if (pf[1].revents)
			break;
		if (!pf[0].revents)
			continue;
		fd = accept4(p->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd >= 0)
			admit(p, fd);
	}
	return NULL;
}

int tg_egress_proxy_adopt(struct tg_egress_proxy *p, int fd)
{
	int domain = 0, type = 0, listening = 1;
	socklen_t l1 = sizeof(domain), l2 = sizeof(type), l3 = sizeof(listening);

	/* what a sandbox hands over is checked: a connected stream socket
	 * (TCP or unix), nothing else (a pipe or a file could stall a thread) */
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &l1) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &l2) < 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &l3) < 0 ||
	    (domain != AF_INET && domain != AF_INET6 && domain != AF_UNIX) ||
	    type != SOCK_STREAM || listening) {
		close(fd);
		errno = ENOTSOCK;
		return -1;
	}
	return admit(p, fd);
}

int tg_egress_proxy_start(const struct tg_egress_proxy_options *opts,
			  struct tg_egress_proxy **out, struct tg_error *err)
{
	struct tg_egress_proxy *p;
	struct sockaddr_un sun;
	size_t i, n = 0;
	mode_t old;
	int rc;

	*out = NULL;
	if ((opts->socket_path && strlen(opts->socket_path) >= sizeof(sun.sun_path)) ||
	    !opts->policy == !opts->rules)
		return tg_error_set(err, TG_ERR_INVALID, "egress proxy: a policy or rules, and a "
				    "socket path of at most %zu bytes", sizeof(sun.sun_path) - 1);
	p = calloc(1, sizeof(*p));
	if (!p)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	p->o = *opts;
	if (opts->rules &&
	    tg_egress_policy_new(opts->rules, opts->nrules, &p->own_policy, err) < 0) {
		free(p);
		return -1;
	}
	if (p->own_policy)
		p->o.policy = p->own_policy;
	p->lfd = p->stop[0] = p->stop[1] = -1;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->idle, NULL);
	p->o.principal = NULL; /* borrowed no further than here */
	if (!(p->share = egress_share_get(opts->principal)))
		goto nomem;
	while (opts->hosts && opts->hosts[n])
		n++;
	if (opts->hosts && !(p->hosts = calloc(n + 1, sizeof(char *))))
		goto nomem;
	for (i = 0; i < n; i++)
		if (!(p->hosts[i] = strdup(opts->hosts[i])))
			goto nomem;
	if (pipe2(p->stop, O_CLOEXEC) < 0) {
		tg_error_sys(err, errno, "egress proxy: its stop pipe");
		tg_egress_proxy_stop(p);
		return -1;
	}
	if (!opts->socket_path) {
		*out = p; /* clients come through tg_egress_proxy_adopt only */
		return 0;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, opts->socket_path, strlen(opts->socket_path));
	p->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	old = umask(0177);
	rc = p->lfd < 0 ? -1 : bind(p->lfd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (rc == 0 && !(p->path = strdup(opts->socket_path))) {
		unlink(opts->socket_path);
		goto nomem;
	}
	if (rc < 0 || listen(p->lfd, 64) < 0) {
		tg_error_sys(err, errno, "egress proxy: %s", opts->socket_path);
		tg_egress_proxy_stop(p);
		return -1;
	}
	rc = pthread_create(&p->acceptor, NULL, acceptor_main, p);
	if (rc != 0) {
		/* pthread_create returns its error (EAGAIN: no thread) */
		tg_error_sys(err, rc, "egress proxy: its accepting thread");
		tg_egress_proxy_stop(p);
		return -1;
	}
	p->has_acceptor = 1;
	*out = p;
	return 0;
nomem:
	tg_egress_proxy_stop(p);
	return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
}

void tg_egress_proxy_stop(struct tg_egress_proxy *p)
{
	size_t i;

	if (!p)
		return;
	if (p->stop[1] >= 0 && write(p->stop[1], "x", 1) < 0) {
		/* a fresh pipe takes one byte */
	}
	if (p->has_acceptor)
		pthread_join(p->acceptor, NULL);
	pthread_mutex_lock(&p->lock);
	p->stopping = 1;
	while (p->clients)
		pthread_cond_wait(&p->idle, &p->lock);
	pthread_mutex_unlock(&p->lock);
	if (p->unreported && p->o.on_deny) {
		char why[120];

		snprintf(why, sizeof(why), "%u more refusals, not reported one by one",
			 p->unreported);
		p->o.on_deny(p->o.ctx, TG_EGRESS_SUMMARY, why);
	}
	if (p->lfd >= 0)
		close(p->lfd);
	if (p->path)
		unlink(p->path);
	for (i = 0; p->stop[0] >= 0 && i < 2; i++)
		close(p->stop[i]);
	for (i = 0; p->hosts && p->hosts[i]; i++)
		free(p->hosts[i]);
	free(p->hosts);
	tg_egress_policy_free(p->own_policy);
	egress_share_put(p->share); /* no client is left to give back to it */
	free(p->path);
	pthread_cond_destroy(&p->idle);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
