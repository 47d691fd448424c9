/*
 * Private interface of the egress proxy (egress_proxy.c): the request
 * parser, on its own so that it can be fuzzed (tests/fuzz/fuzz_egress.c).
 */
#ifndef TG_EGRESS_INT_H
#define TG_EGRESS_INT_H

#include <stddef.h>
#include <stdint.h>

#define MAX_HEAD (16u << 10) /* a request head, bytes */

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

#endif
