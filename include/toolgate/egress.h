/*
 * toolgate egress: the allowlist proxy through which a sandbox reaches
 * exactly the services its contract names (docs/EGRESS.md).
 *
 * A policy is a list of HOST:PORT rules. A name opens only its listed
 * ports; an address literal in a rule is allowed even in a range that is
 * otherwise denied. Every other destination is denied, and so is every
 * address in the deny ranges (loopback, RFC 1918, link-local and so the
 * cloud metadata address, unique-local, and the rest of
 * tg_egress_denied_range), whatever name led to it.
 *
 * The proxy listens on a unix socket and speaks HTTP CONNECT, plain HTTP
 * forwarding (absolute-form requests) and SOCKS5 (CONNECT, names resolved
 * by the proxy). It resolves names itself, checks every address a name
 * resolves to, and connects to the address it checked.
 */
#ifndef TOOLGATE_EGRESS_H
#define TOOLGATE_EGRESS_H

#include <stddef.h>
#include <sys/socket.h>

#include "toolgate/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TG_EGRESS_MAX_RULES 64

/* ---- addresses --------------------------------------------------------------- */

/* host as an IP address in any spelling a client library accepts: dotted
 * IPv4 with decimal, octal (0177) or hex (0x7f) parts and the short forms
 * (127.1, a single 32-bit number), IPv6 with or without brackets
 * (an IPv4-mapped one, ::ffff:a.b.c.d, is returned as the IPv4 address
 * it is; NAT64 forms stay IPv6). 1 and OUT *out (port 0) for an
 * address; 0 for a name; -1 for neither (a malformed literal, a zone id). */
TG_API int tg_egress_parse_ip(const char *host, struct sockaddr_storage *out);

/* 1 when an allowlist rule ("host:port") names its host by an address
 * (tg_egress_parse_ip), which opens that address even in a denied range;
 * 0 for a name or a rule that is not "host:port". */
TG_API int tg_egress_rule_is_address(const char *rule);

/* The deny range address sa falls in ("loopback", "link-local (cloud
 * metadata)", "private (RFC 1918)"...), or NULL for a public address. An
 * IPv6 address that embeds an IPv4 one (mapped, NAT64, 6to4) is judged by
 * the IPv4 address; the deprecated IPv4-compatible (::/96) and the
 * IPv4-translated (::ffff:0:0:0/96) forms are denied whatever they carry. */
TG_API const char *tg_egress_denied_range(const struct sockaddr *sa);

/* ---- the policy -------------------------------------------------------------- */

struct tg_egress_policy;

/* A policy of n rules "HOST:PORT" ("[V6]:PORT" for an IPv6 literal; a
 * port 1 to 65535; a name of letters, digits, '-' and '.', at most 253
 * bytes, matched without case and without a trailing dot). OUT *out. */
TG_API int tg_egress_policy_new(const char *const *rules, size_t n, struct tg_egress_policy **out,
				struct tg_error *err);
TG_API void tg_egress_policy_free(struct tg_egress_policy *p);
/* Whether host:port may be asked for at all (before resolving): NULL, or
 * why not. *literal_rule set when a rule names this address literally
 * (its address is then allowed even in a deny range). */
TG_API const char *tg_egress_policy_check(const struct tg_egress_policy *p, const char *host,
					  unsigned port, int *literal_rule);

/* ---- the proxy --------------------------------------------------------------- */

struct tg_egress_proxy;

/* A refused attempt: destination as asked ("host:port"), and why. At
 * the proxy's stop, the refusals it did not report one by one are
 * reported once, with destination TG_EGRESS_SUMMARY and why "N more
 * refusals, ...": never a HOST:PORT nor "(any)", so that whoever records
 * refusals tells it from one (the gateway records it whatever the rate). */
#define TG_EGRESS_SUMMARY "(more)"
typedef void (*tg_egress_deny_fn)(void *ctx, const char *destination, const char *why);

struct tg_egress_proxy_options {
	/* A unix socket made here (0600), removed at stop; NULL: none, the
	 * clients come through tg_egress_proxy_adopt. */
	const char *socket_path;
	/* The allowlist: a policy (borrowed: it must outlive the proxy), or
	 * nrules rules the proxy reads (tg_egress_policy_new) and keeps. */
	const struct tg_egress_policy *policy;
	const char *const *rules;
	size_t nrules;
	/* Names resolved without DNS ("NAME=ADDRESS", NULL-terminated; an
	 * /etc/hosts of the proxy's own, for tests in a network namespace),
	 * or NULL: getaddrinfo. */
	const char *const *hosts;
	/* Told each refusal (NULL: not told), from the proxy's threads and
	 * from tg_egress_proxy_adopt's caller, a run's supervision thread:
	 * it must not wait (the gateway queues its record). */
	tg_egress_deny_fn on_deny;
	void *ctx;
	/* Who the run is for (copied; NULL: none, one principal ""): the
	 * proxies of one principal share at most a quarter of the gateway's
	 * 256 connections at once, however many runs it has. */
	const char *principal;
	unsigned max_clients;              /* at once; 0: 16 */
	unsigned head_timeout_ms;          /* to send a request head; 0: 10 s */
	unsigned idle_timeout_ms;          /* a relayed connection silent; 0: 5 min */
};

TG_API int tg_egress_proxy_start(const struct tg_egress_proxy_options *opts,
				 struct tg_egress_proxy **out, struct tg_error *err);
/* Serve one more client on fd, a connected stream socket (TCP or unix;
 * anything else is refused, ENOTSOCK): a sandbox's loopback listener hands
 * its connections over this way. fd is the proxy's, in every case. 0, or
 * -1 when refused (too many clients of this proxy, of its principal or of
 * the gateway: told with a 503 and reported). Never waits for a client. */
TG_API int tg_egress_proxy_adopt(struct tg_egress_proxy *proxy, int fd);
/* Stop listening, end every connection, remove the socket. */
TG_API void tg_egress_proxy_stop(struct tg_egress_proxy *proxy);

/* ---- a proxy of one destination, for this process ----------------------------- */

/* The gateway's own HTTP clients that go where a file says (an HTTP
 * upstream, a webhook) reach their server through a proxy whose one rule
 * is its HOST:PORT: a name resolving to a denied range is refused unless
 * the rule names that very address. */
struct tg_egress_local;

#define TG_EGRESS_LOCAL_URL 128

/* A proxy (tg_egress_proxy_start with opts, whose socket_path, policy
 * and rules are not read; NULL: the defaults) whose one rule is rule, on
 * a unix socket (0600) in a directory of its own made under /tmp (0700).
 * OUT *out, and OUT url: its address as libcurl's CURLOPT_PROXY takes it
 * (socks5h://, names resolved by the proxy). */
TG_API int tg_egress_local_start(const char *rule, const struct tg_egress_proxy_options *opts,
				 struct tg_egress_local **out, char url[TG_EGRESS_LOCAL_URL],
				 struct tg_error *err);
/* Stop it, end its connections, remove its socket and directory. NULL: nothing. */
TG_API void tg_egress_local_stop(struct tg_egress_local *local);

#ifdef __cplusplus
}
#endif
#endif
