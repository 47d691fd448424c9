/*
 * bench/mcp-load: the load generator of bench/mcp.sh. N clients, each one
 * MCP session over its own keep-alive HTTP/1.1 connection to
 * 127.0.0.1:PORT/mcp: initialize, the initialized notification, then
 * tools/call (or ping) in a loop for the given seconds, each answer read
 * whole and checked. Prints one JSON line: requests, errors, req/s, p50
 * and p99 latency in microseconds. The same program drives every server
 * it is compared with. Not a test: it asserts nothing.
 *
 * usage: mcp-load PORT CLIENTS SECONDS call|ping
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

struct client {
	pthread_t t;
	int port;
	double seconds;
	int ping;
	uint64_t *lat;       /* ns per request */
	size_t n, cap;
	size_t errors;
	char sid[128];
	char buf[1 << 16];
	size_t blen;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int connect_to(int port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		return -1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

static int send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);

		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Fill the buffer until it holds at least want bytes. */
static int fill(struct client *c, int fd, size_t want)
{
	while (c->blen < want) {
		ssize_t r;

		if (c->blen == sizeof(c->buf))
			return -1;
		r = read(fd, c->buf + c->blen, sizeof(c->buf) - c->blen);
		if (r <= 0)
			return -1;
		c->blen += (size_t)r;
	}
	return 0;
}

static void consume(struct client *c, size_t n)
{
	memmove(c->buf, c->buf + n, c->blen - n);
	c->blen -= n;
}

/* One HTTP response: OUT status, and the body into body (NUL-ended,
 * truncated to cap); Content-Length or chunked. Mcp-Session-Id is kept. */
static int read_response(struct client *c, int fd, int *status, char *body, size_t cap)
{
	char *end, *h;
	size_t hlen, clen = 0, blen = 0;
	int chunked = 0;

	for (;;) {
		c->buf[c->blen < sizeof(c->buf) ? c->blen : sizeof(c->buf) - 1] = '\0';
		end = c->blen ? memmem(c->buf, c->blen, "\r\n\r\n", 4) : NULL;
		if (end)
			break;
		if (fill(c, fd, c->blen + 1) < 0)
			return -1;
	}
	hlen = (size_t)(end - c->buf) + 4;
	*end = '\0';
	*status = atoi(c->buf + 9);
	for (h = strstr(c->buf, "\r\n"); h; h = strstr(h + 2, "\r\n")) {
		if (strncasecmp(h + 2, "Content-Length:", 15) == 0)
			clen = strtoul(h + 17, NULL, 10);
		else if (strncasecmp(h + 2, "Transfer-Encoding: chunked", 26) == 0)
			chunked = 1;
		else if (strncasecmp(h + 2, "Mcp-Session-Id:", 15) == 0)
			sscanf(h + 17, " %127[^\r]", c->sid);
	}
	consume(c, hlen);
	if (!chunked) {
		if (fill(c, fd, clen) < 0)
			return -1;
		blen = clen < cap - 1 ? clen : cap - 1;
		memcpy(body, c->buf, blen);
		body[blen] = '\0';
		consume(c, clen);
		return 0;
	}
	for (;;) {
		size_t size;
		char *crlf;

		while (!(crlf = memmem(c->buf, c->blen, "\r\n", 2)))
			if (fill(c, fd, c->blen + 1) < 0)
				return -1;
		size = strtoul(c->buf, NULL, 16);
		consume(c, (size_t)(crlf - c->buf) + 2);
		if (fill(c, fd, size + 2) < 0)
			return -1;
		if (blen + size < cap) {
			memcpy(body + blen, c->buf, size);
			blen += size;
		}
		consume(c, size + 2);
		if (size == 0)
			break;
	}
	body[blen] = '\0';
	return 0;
}

/* End the session (the server keeps at most 64 of one principal). */
static void end_session(struct client *c, int fd)
{
	char req[512], body[256];
	int n, status;

	if (!c->sid[0])
		return;
	n = snprintf(req, sizeof(req),
		     "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nMcp-Session-Id: %s\r\n"
		     "Content-Length: 0\r\n\r\n", c->port, c->sid);
	if (send_all(fd, req, (size_t)n) == 0)
		read_response(c, fd, &status, body, sizeof(body));
}

static int post(struct client *c, int fd, const char *json, int *status, char *body, size_t cap)
{
	char req[2048];
	int n = snprintf(req, sizeof(req),
			 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
			 "Accept: application/json, text/event-stream\r\n%s%s%s"
			 "MCP-Protocol-Version: 2025-11-25\r\nContent-Length: %zu\r\n\r\n%s",
			 c->port, c->sid[0] ? "Mcp-Session-Id: " : "", c->sid, c->sid[0] ? "\r\n" : "",
			 strlen(json), json);

	if (send_all(fd, req, (size_t)n) < 0)
		return -1;
	return read_response(c, fd, status, body, cap);
}

static void *run(void *arg)
{
	struct client *c = arg;
	static const char init[] = "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":"
				   "{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
				   "\"clientInfo\":{\"name\":\"mcp-load\",\"version\":\"1\"}}}";
	static const char inited[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
	char body[8192], req[512];
	uint64_t deadline, t0;
	int fd = connect_to(c->port), status;
	unsigned long id = 1;

	if (fd < 0 || post(c, fd, init, &status, body, sizeof(body)) < 0 || status != 200 ||
	    post(c, fd, inited, &status, body, sizeof(body)) < 0) {
		c->errors++;
		return NULL;
	}
	deadline = now_ns() + (uint64_t)(c->seconds * 1e9);
	while ((t0 = now_ns()) < deadline) {
		if (c->ping)
			snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":%lu,\"method\":\"ping\"}", id++);
		else
			snprintf(req, sizeof(req),
				 "{\"jsonrpc\":\"2.0\",\"id\":%lu,\"method\":\"tools/call\",\"params\":"
				 "{\"name\":\"echo\",\"arguments\":{\"text\":\"hello %lu\"}}}", id, id);
		id++;
		if (post(c, fd, req, &status, body, sizeof(body)) < 0) {
			c->errors++;
			break;
		}
		if (status != 200 || !strstr(body, "\"result\"") || strstr(body, "\"isError\":true")) {
			c->errors++;
			continue;
		}
		if (c->n == c->cap) {
			c->cap = c->cap ? c->cap * 2 : 4096;
			c->lat = realloc(c->lat, c->cap * sizeof(*c->lat));
			if (!c->lat)
				break;
		}
		c->lat[c->n++] = now_ns() - t0;
	}
	end_session(c, fd);
	close(fd);
	return NULL;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct client *cs;
	uint64_t *all;
	size_t total = 0, errors = 0, k = 0;
	int n, i;
	double secs;
	uint64_t t0, t1;

	if (argc != 5) {
		fprintf(stderr, "usage: mcp-load PORT CLIENTS SECONDS call|ping\n");
		return 2;
	}
	n = atoi(argv[2]);
	secs = atof(argv[3]);
	cs = calloc((size_t)n, sizeof(*cs));
	if (!cs || n < 1)
		return 2;
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		cs[i].port = atoi(argv[1]);
		cs[i].seconds = secs;
		cs[i].ping = strcmp(argv[4], "ping") == 0;
		pthread_create(&cs[i].t, NULL, run, &cs[i]);
	}
	for (i = 0; i < n; i++) {
		pthread_join(cs[i].t, NULL);
		total += cs[i].n;
		errors += cs[i].errors;
	}
	t1 = now_ns();
	all = malloc((total ? total : 1) * sizeof(*all));
	for (i = 0; i < n; i++) {
		memcpy(all + k, cs[i].lat, cs[i].n * sizeof(*all));
		k += cs[i].n;
		free(cs[i].lat);
	}
	qsort(all, total, sizeof(*all), by_value);
	printf("{\"clients\":%d,\"requests\":%zu,\"errors\":%zu,\"rps\":%.0f,\"p50_us\":%.1f,"
	       "\"p99_us\":%.1f}\n",
	       n, total, errors, (double)total / ((double)(t1 - t0) / 1e9),
	       total ? (double)all[total / 2] / 1e3 : 0, total ? (double)all[total * 99 / 100] / 1e3 : 0);
	free(all);
	free(cs);
	return 0;
}
