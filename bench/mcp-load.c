/*
 * bench/mcp-load: the load generator of bench/mcp.sh. N clients, each one
 * MCP session over its own keep-alive HTTP/1.1 connection to
 * 127.0.0.1:PORT/mcp: initialize, the initialized notification, then
 * tools/call (or ping) in a loop for the given seconds, each answer read
 * whole and checked. The clients open their sessions first and start
 * calling together, so that req/s is the calls' alone: a proxy that starts
 * a server process for each session (bench/upstream.sh's peer) would
 * otherwise count its start-up as throughput. Prints one JSON line:
 * requests, errors, req/s, p50 and p99 latency in microseconds. The same
 * program drives every server it is compared with. Not a test: it asserts
 * nothing.
 *
 * usage: mcp-load PORT CLIENTS SECONDS call|ping [TOOL [ARGUMENTS]]
 *   TOOL defaults to echo (bench/mcp.sh's), ARGUMENTS (a JSON object sent
 *   as is) to {"text":"hello N"}, N the request's id.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
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
	int ping;
	const char *tool, *args; /* args NULL: {"text":"hello N"} */
	pthread_barrier_t *start; /* every client's session is open */
	const uint64_t *deadline; /* set by main once all have passed start */
	uint64_t *lat;       /* ns per request */
	size_t n, cap;
	size_t errors;
	char sid[128];
	char buf[1 << 16];
	size_t blen;
};

/* The first failure of a run, said on stderr: a count alone does not say
 * whether the server refused, timed out or closed the connection. */
static void say_error(const char *what, int status, const char *body)
{
	static int said;

	if (__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		return;
	fprintf(stderr, "mcp-load: first error: %s, status %d: %.300s\n", what, status, body);
}

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
	char body[8192], req[1024], text[64];
	uint64_t t0;
	int fd = connect_to(c->port), status = 0;
	unsigned long id = 1;

	body[0] = '\0';

	if (fd < 0 || post(c, fd, init, &status, body, sizeof(body)) < 0 || status != 200 ||
	    post(c, fd, inited, &status, body, sizeof(body)) < 0) {
		say_error("initialize", status, fd < 0 ? "cannot connect" : body);
		c->errors++;
		pthread_barrier_wait(c->start);
		pthread_barrier_wait(c->start);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	pthread_barrier_wait(c->start);
	pthread_barrier_wait(c->start); /* main has set the deadline */
	/* A new connection for the calls, in the same session: while the last
	 * sessions were opened (a peer may start a process for each), this one
	 * sat idle longer than a server's keep-alive timeout (node's is 5 s). */
	close(fd);
	fd = connect_to(c->port);
	if (fd < 0) {
		say_error("reconnecting", 0, "cannot connect");
		c->errors++;
		return NULL;
	}
	while ((t0 = now_ns()) < *c->deadline) {
		if (c->ping) {
			snprintf(req, sizeof(req), "{\"jsonrpc\":\"2.0\",\"id\":%lu,\"method\":\"ping\"}", id);
		} else {
			snprintf(text, sizeof(text), "{\"text\":\"hello %lu\"}", id);
			snprintf(req, sizeof(req),
				 "{\"jsonrpc\":\"2.0\",\"id\":%lu,\"method\":\"tools/call\",\"params\":"
				 "{\"name\":\"%s\",\"arguments\":%s}}", id, c->tool, c->args ? c->args : text);
		}
		id++;
		if (post(c, fd, req, &status, body, sizeof(body)) < 0) {
			say_error("the connection", 0, "closed or unreadable");
			c->errors++;
			break;
		}
		if (status != 200 || !strstr(body, "\"result\"") || strstr(body, "\"isError\":true")) {
			say_error("the answer", status, body);
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
	pthread_barrier_t start;
	uint64_t *all, deadline = 0;
	size_t total = 0, errors = 0, k = 0;
	int n, i;
	double secs;
	uint64_t t0, t1;

	if (argc < 5 || argc > 7) {
		fprintf(stderr, "usage: mcp-load PORT CLIENTS SECONDS call|ping [TOOL [ARGUMENTS]]\n");
		return 2;
	}
	signal(SIGPIPE, SIG_IGN); /* a server that closes a connection is an error counted */
	n = atoi(argv[2]);
	secs = atof(argv[3]);
	cs = calloc((size_t)n, sizeof(*cs));
	if (!cs || n < 1 || pthread_barrier_init(&start, NULL, (unsigned)n + 1))
		return 2;
	for (i = 0; i < n; i++) {
		cs[i].port = atoi(argv[1]);
		cs[i].ping = strcmp(argv[4], "ping") == 0;
		cs[i].tool = argc > 5 ? argv[5] : "echo";
		cs[i].args = argc > 6 ? argv[6] : NULL;
		cs[i].start = &start;
		cs[i].deadline = &deadline;
		pthread_create(&cs[i].t, NULL, run, &cs[i]);
	}
	pthread_barrier_wait(&start);
	t0 = now_ns();
	deadline = t0 + (uint64_t)(secs * 1e9);
	pthread_barrier_wait(&start);
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
