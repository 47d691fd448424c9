/*
 * libFuzzer entry point: what a sandboxed command sends the egress proxy
 * (src/sandbox/egress_proxy.c, egress_addr.c, egress_policy.c). The input
 * is a request head as a client writes it; the parser refuses it with a
 * status or reads it into a request whose parts keep their promises (a
 * host of a name or an address, a port 1 to 65535, a path inside the
 * target). The host is then judged by the policy and, as an address, by
 * the deny ranges, as the proxy would: none of it may crash, an
 * IPv4-mapped literal is read as the IPv4 address, and an address the
 * policy allows must be the one its rule names.
 */
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/egress_int.h"
#include "toolgate/egress.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct tg_egress_policy *policy;
static struct egress_request rq;
static char buf[MAX_HEAD + 1];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const rules[] = { "api.example.com:443", "api.example.com:80",
					     "169.254.169.254:80", "[fd00:ec2::254]:80" };
	struct tg_error err;

	(void)argc;
	(void)argv;
	if (tg_egress_policy_new(rules, 4, &policy, &err) < 0)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_storage a;
	const char *end, *no;
	size_t head;
	int code, literal, kind;

	if (size > MAX_HEAD || memchr(data, 0, size))
		return 0; /* the proxy refuses these before parsing */
	memcpy(buf, data, size);
	buf[size] = 0;
	end = strstr(buf, "\r\n\r\n");
	if (!end)
		return 0;
	head = (size_t)(end - buf) + 4;
	no = egress_parse_request(buf, head, &rq, &code);
	if (no) {
		if (code != 400 && code != 405 && code != 411 && code != 431)
			abort();
		return 0;
	}
	if (!rq.host[0] || rq.port == 0 || rq.port > 65535 || rq.line_end > head)
		abort();
	if (!rq.connect && (rq.path < rq.target || rq.path > rq.target + strlen(rq.target)))
		abort();
	kind = tg_egress_parse_ip(rq.host, &a);
	if (kind == 1) {
		uint32_t v4;

		(void)tg_egress_denied_range((struct sockaddr *)&a);
		(void)egress_ipv4_of((struct sockaddr *)&a, &v4);
		/* an IPv4-mapped literal is the IPv4 address, never left mapped */
		if (a.ss_family == AF_INET6 &&
		    IN6_IS_ADDR_V4MAPPED(&((struct sockaddr_in6 *)&a)->sin6_addr))
			abort();
	}
	if (!tg_egress_policy_check(policy, rq.host, rq.port, &literal) && kind == 1) {
		/* only the two literal rules allow an address */
		const unsigned char *b = a.ss_family == AF_INET
			? (const unsigned char *)&((struct sockaddr_in *)&a)->sin_addr
			: (const unsigned char *)&((struct sockaddr_in6 *)&a)->sin6_addr;

		if (!literal || rq.port != 80 ||
		    (a.ss_family == AF_INET && memcmp(b, "\xa9\xfe\xa9\xfe", 4) != 0) ||
		    (a.ss_family == AF_INET6 &&
		     memcmp(b, "\xfd\x00\x0e\xc2\0\0\0\0\0\0\0\0\0\0\x02\x54", 16) != 0))
			abort();
	}
	return 0;
}
