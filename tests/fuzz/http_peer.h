/*
 * What the HTTP fuzzers share (fuzz_http.c, fuzz_https.c): the server
 * under test in this process, serving a one-tool catalogue on a loopback
 * port, and the client's side of a connection to it. Included once by
 * each entry point: its functions are static.
 */
#ifndef TG_FUZZ_HTTP_PEER_H
#define TG_FUZZ_HTTP_PEER_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "toolgate/mcp.h"

static unsigned port;
/* the server lives as long as the fuzzer, reachable from here */
static struct tg_catalog *catalog;
static struct tg_gate *gate;
static struct tg_mcp *mcp;
static struct tg_mcp_http *http;

/* A connection to the server from 127.0.0.2 to 127.0.0.65 in turn: each
 * run leaves its port in TIME_WAIT for a minute, and tens of thousands of
 * runs from one address would use up its ephemeral ports. */
static int connect_local(void)
{
	static unsigned turn;
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct sockaddr_in src = { .sin_family = AF_INET };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	src.sin_addr.s_addr = htonl(INADDR_LOOPBACK + 1 + turn++ % 64);
	/* the port is chosen at connect, knowing the whole address pair */
	if (setsockopt(fd, IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&src, sizeof(src)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A connection, trying again for up to 2 s: a loaded machine can refuse
 * one for a moment (the listen queue full, ports in TIME_WAIT). */
static int connect_retry(void)
{
	int fd = connect_local(), tries;

	for (tries = 0; fd < 0 && tries < 200; tries++) {
		usleep(10000);
		fd = connect_local();
	}
	if (fd < 0) {
		perror("fuzz_http: connecting to the server under test");
		abort();
	}
	return fd;
}

/* The answer so far is an event stream: its header block is complete
 * and says so (a body may mention the type too: not that). */
static int is_stream(const char *out)
{
	const char *end = strstr(out, "\r\n\r\n"), *h;

	for (h = strstr(out, "\r\n"); end && h && h < end; h = strstr(h + 2, "\r\n"))
		if (strncasecmp(h + 2, "Content-Type: text/event-stream", 31) == 0)
			return 1;
	return 0;
}

/* The answer read with rd (0 or less: the end, a timeout of its own)
 * into out, until the server closes or the headers of a stream are in
 * (the GET stream, a subscription, stays open). */
static void read_answer(long (*rd)(void *, char *, size_t), void *ctx, char *out, size_t cap)
{
	size_t got = 0;
	long n;

	while (got < cap - 1 && (n = rd(ctx, out + got, cap - 1 - got)) > 0) {
		got += (size_t)n;
		out[got] = '\0';
		if (is_stream(out))
			break;
	}
	out[got] = '\0';
}

/* read(2) within 2 s */
static inline long read_plain(void *ctx, char *buf, size_t n)
{
	struct pollfd p = { *(int *)ctx, POLLIN, 0 };

	if (poll(&p, 1, 2000) <= 0)
		return 0;
	return (long)read(p.fd, buf, n);
}

/* Send the bytes over a plain connection, read the answer until the
 * server closes or 2 s pass. */
static inline void exchange(const char *req, size_t len, char *out, size_t cap)
{
	int fd = connect_retry();

	/* the server may answer and close before it has read everything
	 * (a refusal decided by the headers): EPIPE, not SIGPIPE */
	if (send(fd, req, len, MSG_NOSIGNAL) < 0) {
		close(fd);
		out[0] = '\0';
		return;
	}
	shutdown(fd, SHUT_WR);
	read_answer(read_plain, &fd, out, cap);
	close(fd);
}

/* The bearer token a server started with tokens accepts ("TOKEN" in an
 * input), and its line of a token file. */
#define PEER_TOKEN "fuzz-token"
#define PEER_TOKEN_HASH "33cc09ba35314d19e32ed9a5a30fca56eebbfab5faec7247fd0403cd26e155b5"

/* The server, with o (NULL: plain HTTP on loopback) and the token file
 * tokens (NULL: none asked for). */
static void server_start(const struct tg_mcp_http_options *o, const char *tokens)
{
	struct tg_mcp_options mo = { 0 };
	char dir[] = "/tmp/tg-fuzz-http-XXXXXX", path[64];
	struct tg_error err;
	FILE *f;

	if (!mkdtemp(dir))
		abort();
	snprintf(path, sizeof(path), "%s/echo.json", dir);
	f = fopen(path, "w");
	if (!f)
		abort();
	fputs("{\"name\":\"echo\",\"version\":\"1.0.0\",\"description\":\"d\",\"owner\":{\"team\":\"t\","
	      "\"contact\":\"c\"},\"authority\":\"read\",\"input_schema\":{\"type\":\"object\"},"
	      "\"executor\":{\"kind\":\"builtin\",\"name\":\"echo\"}}",
	      f);
	fclose(f);
	if (tg_catalog_load_dir(dir, NULL, &catalog, &err) < 0 ||
	    tg_gate_new(catalog, NULL, &gate, &err) < 0 || (mo.http_tokens = tokens, tg_mcp_new(gate, &mo, &mcp, &err) < 0) ||
	    tg_mcp_http_start(mcp, "127.0.0.1", 0, o, &http, &err) < 0) {
		fprintf(stderr, "fuzz_http: %s\n", err.msg);
		abort();
	}
	unlink(path);
	rmdir(dir);
	port = tg_mcp_http_port(http);
}

/* The request the input describes: "SID" becomes sid, "PORT" the port,
 * "TOKEN" PEER_TOKEN.
 * malloc'd, its length in *len; NULL when too long. */
static char *request_of(const uint8_t *data, size_t size, const char *sid, size_t *len)
{
	char *req = size <= 1 << 16 ? malloc(size * 12 + 1) : NULL, *o = req;
	size_t i;

	if (!req)
		return NULL;
	for (i = 0; i < size; i++) {
		if (i + 3 <= size && memcmp(data + i, "SID", 3) == 0) {
			o += sprintf(o, "%s", sid);
			i += 2;
		} else if (i + 5 <= size && memcmp(data + i, "TOKEN", 5) == 0) {
			o += sprintf(o, "%s", PEER_TOKEN);
			i += 4;
		} else if (i + 4 <= size && memcmp(data + i, "PORT", 4) == 0) {
			o += sprintf(o, "%u", port);
			i += 3;
		} else {
			*o++ = (char)data[i];
		}
	}
	*len = (size_t)(o - req);
	return req;
}

#endif
