/*
 * The egress allowlist (docs/EGRESS.md): HOST:PORT rules. A name opens
 * only its listed ports, and never an address: a request for an IP
 * literal is allowed only by a rule that names that very address (in
 * whatever spelling either was written), and then even in a range that is
 * otherwise denied.
 */
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "toolgate/egress.h"

struct rule {
	char host[254];                /* a name, lower case, no trailing dot; or "" */
	struct sockaddr_storage addr;  /* a literal's address (family 0: a name) */
	unsigned port;
};

struct tg_egress_policy {
	struct rule rules[TG_EGRESS_MAX_RULES];
	size_t n;
};

/* host as a name rules compare: lower case, no trailing dot, letters,
 * digits, '-', '_' and '.' in labels of 1 to 63, at most 253 bytes; -1
 * when it is not one. */
static int normal_name(const char *host, char out[254])
{
	size_t n = strnlen(host, 300), i, label = 0;

	if (n && host[n - 1] == '.')
		n--;
	if (n == 0 || n > 253)
		return -1;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)host[i];

		if (c == '.') {
			if (label == 0)
				return -1;
			label = 0;
		} else if (isalnum(c) || c == '-' || c == '_') {
			if (++label > 63)
				return -1;
		} else {
			return -1;
		}
		out[i] = (char)tolower(c);
	}
	if (label == 0)
		return -1;
	out[n] = 0;
	return 0;
}

static int same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET)
		return ((const struct sockaddr_in *)a)->sin_addr.s_addr ==
		       ((const struct sockaddr_in *)b)->sin_addr.s_addr;
	return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		      &((const struct sockaddr_in6 *)b)->sin6_addr, 16) == 0;
}

/* "HOST:PORT" or "[V6]:PORT" split: 0, or -1. */
static int split(const char *text, char *host, size_t len, unsigned *port)
{
	const char *colon = strrchr(text, ':');
	char *end;
	unsigned long p;
	size_t n;

	if (!colon || colon == text)
		return -1;
	n = (size_t)(colon - text);
	/* an IPv6 literal names its port after brackets only */
	if (memchr(text, ':', n) && !(text[0] == '[' && text[n - 1] == ']'))
		return -1;
	if (n >= len || !isdigit((unsigned char)colon[1]))
		return -1;
	p = strtoul(colon + 1, &end, 10);
	if (*end || p == 0 || p > 65535)
		return -1;
	memcpy(host, text, n);
	host[n] = 0;
	*port = (unsigned)p;
	return 0;
}

int tg_egress_policy_new(const char *const *rules, size_t n, struct tg_egress_policy **out,
			 struct tg_error *err)
{
	struct tg_egress_policy *p;
	char host[300];
	size_t i;
	int kind;

	*out = NULL;
	if (n > TG_EGRESS_MAX_RULES)
		return tg_error_set(err, TG_ERR_LIMIT, "egress: at most %d rules",
				    TG_EGRESS_MAX_RULES);
	p = calloc(1, sizeof(*p));
	if (!p)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	for (i = 0; i < n; i++) {
		struct rule *r = &p->rules[i];

		if (!rules[i] || split(rules[i], host, sizeof(host), &r->port) < 0 ||
		    (kind = tg_egress_parse_ip(host, &r->addr)) < 0 ||
		    (kind == 0 && normal_name(host, r->host) < 0)) {
			tg_egress_policy_free(p);
			return tg_error_set(err, TG_ERR_INVALID, "egress rule '%.80s': HOST:PORT, with "
					    "a name or an IP address (IPv6 in brackets) and a port "
					    "from 1 to 65535", rules[i] ? rules[i] : "");
		}
	}
	p->n = n;
	*out = p;
	return 0;
}

void tg_egress_policy_free(struct tg_egress_policy *p)
{
	free(p);
}

const char *tg_egress_policy_check(const struct tg_egress_policy *p, const char *host,
				   unsigned port, int *literal_rule)
{
	struct sockaddr_storage addr;
	char name[254];
	int kind = tg_egress_parse_ip(host, &addr), name_listed = 0;
	size_t i;

	*literal_rule = 0;
	if (kind < 0)
		return "not a host name nor an IP address";
	if (kind == 0 && normal_name(host, name) < 0)
		return "not a host name nor an IP address";
	if (port == 0 || port > 65535)
		return "no such port";
	for (i = 0; i < p->n; i++) {
		const struct rule *r = &p->rules[i];

		if (kind == 1 ? !same_addr(&r->addr, &addr)
			      : r->addr.ss_family != 0 || strcmp(r->host, name) != 0)
			continue;
		if (r->port == port) {
			*literal_rule = kind == 1;
			return NULL;
		}
		name_listed = 1;
	}
	if (name_listed)
		return "the allowlist opens other ports of that host, not this one";
	return kind == 1 ? "no rule names this address" : "no rule names this host";
}
