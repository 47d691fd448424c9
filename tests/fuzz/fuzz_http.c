/*
 * libFuzzer entry point: the Streamable HTTP transport (src/mcp/http*.c)
 * as a client reaches it, bytes on a socket: libmicrohttpd parses them
 * and toolgate's handler answers (sessions, header checks, bodies,
 * JSON-RPC). The server runs in this process on a loopback port, so a
 * crash or a leak there is the fuzzer's finding. "SID" in the input
 * becomes the id of a live session (made at start), so the fuzzer reaches
 * past the session check. Every request must get an HTTP answer or a
 * closed connection, within the timeout.
 */
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

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned port;
static char sid[64] = "none";
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

/* Send the bytes, read the answer until the server closes or 2 s pass. */
static void exchange(const char *req, size_t len, char *out, size_t cap)
{
	int fd = connect_local(), tries;
	size_t got = 0;

	/* a loaded machine can refuse a connection for a moment (the
	 * listen queue full, ports in TIME_WAIT): try again, up to 2 s */
	for (tries = 0; fd < 0 && tries < 200; tries++) {
		usleep(10000);
		fd = connect_local();
	}
	if (fd < 0) {
		perror("fuzz_http: connecting to the server under test");
		abort();
	}
	/* the server may answer and close before it has read everything
	 * (a refusal decided by the headers): EPIPE, not SIGPIPE */
	if (send(fd, req, len, MSG_NOSIGNAL) < 0) {
		close(fd);
		return;
	}
	shutdown(fd, SHUT_WR);
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		ssize_t n;

		if (poll(&p, 1, 2000) <= 0)
			break;
		n = read(fd, out + got, cap - 1 - got);
		if (n <= 0)
			break;
		got += (size_t)n;
		if (got == cap - 1)
			break;
		/* a stream (the GET stream, a subscription) stays open: its
		 * headers are the answer */
		out[got] = '\0';
		if (is_stream(out))
			break;
	}
	out[got] = '\0';
	close(fd);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char dir[] = "/tmp/tg-fuzz-http-XXXXXX", path[64], req[1024], resp[4096], *h;
	static const char body[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
				   "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{}}}";
	struct tg_error err;
	FILE *f;
	int n;

	(void)argc;
	(void)argv;
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
	    tg_gate_new(catalog, NULL, &gate, &err) < 0 || tg_mcp_new(gate, NULL, &mcp, &err) < 0 ||
	    tg_mcp_http_start(mcp, "127.0.0.1", 0, &http, &err) < 0)
		abort();
	unlink(path);
	rmdir(dir);
	port = tg_mcp_http_port(http);
	n = snprintf(req, sizeof(req),
		     "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%u\r\nContent-Type: application/json\r\n"
		     "Accept: application/json, text/event-stream\r\nContent-Length: %zu\r\n\r\n%s",
		     port, strlen(body), body);
	exchange(req, (size_t)n, resp, sizeof(resp));
	h = strcasestr(resp, "Mcp-Session-Id: ");
	if (!h || sscanf(h + 16, "%63[0-9a-f]", sid) != 1)
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char resp[1 << 16];
	char *req = malloc(size * 12 + 1), *o = req;
	size_t i;

	if (!req || size > 1 << 16) {
		free(req);
		return 0;
	}
	for (i = 0; i < size; i++) {
		if (i + 3 <= size && memcmp(data + i, "SID", 3) == 0) {
			o += sprintf(o, "%s", sid);
			i += 2;
		} else if (i + 4 <= size && memcmp(data + i, "PORT", 4) == 0) {
			o += sprintf(o, "%u", port);
			i += 3;
		} else {
			*o++ = (char)data[i];
		}
	}
	exchange(req, (size_t)(o - req), resp, sizeof(resp));
	/* an answer is an HTTP status line, or nothing (connection closed) */
	if (resp[0] && strncmp(resp, "HTTP/1.", 7) != 0)
		abort();
	free(req);
	return 0;
}
