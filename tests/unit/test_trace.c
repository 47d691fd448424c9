/*
 * Unit tests: traces (src/obs/trace.c). traceparent as the W3C has it
 * (what is refused, what a later version may add, tracestate's bounds);
 * spans exported as OTLP/HTTP JSON to a collector on loopback that this
 * test runs, their shape checked field by field; a collector that is
 * down, or hangs: spans are dropped and counted, the queue stays bounded.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "toolgate/trace.h"
#include "unit.h"

#define TP "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

static int parse(void)
{
	struct tg_trace_ctx c;
	struct tg_error err;
	char out[56], big[TG_TRACESTATE_MAX + 2];

	CHECK(tg_trace_parse(TP, "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE", &c, &err) == 0);
	CHECK(c.valid && c.flags == 1 && c.trace_id[0] == 0x4b && c.span_id[7] == 0xb7);
	CHECK(strcmp(c.state, "rojo=00f067aa0ba902b7,congo=t61rcWkgMzE") == 0);
	tg_trace_format(&c, out);
	CHECK(strcmp(out, TP) == 0);
	/* refused: a new trace begins instead */
	CHECK(tg_trace_parse(NULL, NULL, &c, &err) < 0 && !c.valid);
	CHECK(tg_trace_parse("", NULL, &c, &err) < 0);
	CHECK(tg_trace_parse("00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", NULL, &c,
			     &err) < 0);
	CHECK(tg_trace_parse("ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", NULL, &c,
			     &err) < 0);
	CHECK(tg_trace_parse(TP "-extra", NULL, &c, &err) < 0); /* 00 is exactly 55 */
	CHECK(tg_trace_parse("00-00000000000000000000000000000000-00f067aa0ba902b7-01", NULL, &c,
			     &err) < 0 && strstr(err.msg, "all-zero"));
	CHECK(tg_trace_parse("00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", NULL, &c,
			     &err) < 0);
	CHECK(tg_trace_parse("00-4bf92f3577b34da6a3ce929d0e0e4736_00f067aa0ba902b7-01", NULL, &c,
			     &err) < 0);
	CHECK(tg_trace_parse("00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01", NULL, &c,
			     &err) < 0);
	/* a later version: its first four fields, what follows a dash ignored */
	CHECK(tg_trace_parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00-what", NULL,
			     &c, &err) == 0 && c.valid && c.flags == 0);
	CHECK(tg_trace_parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00what", NULL,
			     &c, &err) < 0);
	/* a tracestate that may not travel is dropped, the parent kept */
	CHECK(tg_trace_parse(TP, "a=b\r\nx: y", &c, &err) == 0 && c.valid && !c.state[0]);
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK(tg_trace_parse(TP, big, &c, &err) == 0 && c.valid && !c.state[0]);
	return 0;
}

/* A collector: accepts connections on loopback and answers each POST
 * with status (0: reads the request, never answers); the bodies kept. */
struct collector {
	int fd, port, status;
	volatile int stop;
	pthread_t th;
	pthread_mutex_t lock;
	json_t *bodies; /* the requests' JSON bodies */
	int requests;
	char paths[256];
};

static void *collector_main(void *arg)
{
	struct collector *c = arg;

	while (!c->stop) {
		int fd = accept(c->fd, NULL, NULL);
		char *buf = malloc(1 << 22), *body;
		size_t n = 0;
		long len = -1;

		if (fd < 0 && c->stop) {
			free(buf);
			break;
		}
		if (fd < 0 || !buf) {
			free(buf);
			if (fd >= 0)
				close(fd);
			continue;
		}
		for (;;) {
			ssize_t r;
			char *cl;

			buf[n] = '\0';
			body = strstr(buf, "\r\n\r\n");
			if (body && len < 0) {
				cl = strcasestr(buf, "Content-Length:");
				len = cl ? strtol(cl + 15, NULL, 10) : 0;
			}
			if (body && (long)(n - (size_t)(body + 4 - buf)) >= len)
				break;
			r = read(fd, buf + n, (1 << 22) - 1 - n);
			if (r <= 0)
				break;
			n += (size_t)r;
		}
		if (body) {
			json_t *j = json_loads(body + 4, 0, NULL);
			char path[64] = "";

			sscanf(buf, "POST %63s", path);
			pthread_mutex_lock(&c->lock);
			c->requests++;
			if (j)
				json_array_append_new(c->bodies, j);
			snprintf(c->paths, sizeof(c->paths), "%s", path);
			pthread_mutex_unlock(&c->lock);
		}
		if (c->status) {
			char resp[128];
			int m = snprintf(resp, sizeof(resp), "HTTP/1.1 %d X\r\nContent-Length: 2\r\n"
					 "Connection: close\r\n\r\n{}", c->status);

			if (write(fd, resp, (size_t)m) < 0)
				n = 0;
		} else {
			while (!c->stop && read(fd, buf, 1) > 0) {
			}
		}
		free(buf);
		close(fd);
	}
	return NULL;
}

static int collector_start(struct collector *c, int status)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);

	memset(c, 0, sizeof(*c));
	c->status = status;
	c->bodies = json_array();
	pthread_mutex_init(&c->lock, NULL);
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || bind(c->fd, (struct sockaddr *)&a, sizeof(a)) < 0 ||
	    listen(c->fd, 16) < 0 || getsockname(c->fd, (struct sockaddr *)&a, &al) < 0)
		return -1;
	c->port = ntohs(a.sin_port);
	return pthread_create(&c->th, NULL, collector_main, c) == 0 ? 0 : -1;
}

static void collector_stop(struct collector *c)
{
	/* accept wakes with an error; a connection held open ends when its
	 * client (the exporter, past its timeout) closes it */
	c->stop = 1;
	shutdown(c->fd, SHUT_RDWR);
	pthread_join(c->th, NULL);
	close(c->fd);
	json_decref(c->bodies);
	pthread_mutex_destroy(&c->lock);
}

/* The attribute key's value (its one typed field) in span s, or NULL. */
static json_t *attr(json_t *s, const char *key)
{
	json_t *a;
	size_t i;

	json_array_foreach(json_object_get(s, "attributes"), i, a)
		if (strcmp(json_string_value(json_object_get(a, "key")), key) == 0)
			return json_object_get(a, "value");
	return NULL;
}

static int exported(void)
{
	struct tg_tracer_options o = { 0 };
	struct tg_tracer_stats st;
	struct tg_tracer *t;
	struct tg_trace_ctx parent, mine;
	struct tg_span *server, *child;
	struct collector c;
	struct tg_error err;
	char url[128], tid[33], sid[17], big[3000];
	json_t *rs, *spans, *sv, *ch;
	size_t i;

	CHECK(collector_start(&c, 200) == 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/traces", c.port);
	o.endpoint = url;
	o.interval_ms = 60000; /* one export: at free */
	o.service_name = "toolgate-test";
	o.headers = "x-tenant=t%201,authorization=Bearer abc";
	CHECK(tg_tracer_new(&o, &t, &err) == 0);
	CHECK(tg_trace_parse(TP, "rojo=1", &parent, &err) == 0);
	server = tg_span_start(t, "tools/call fs.read", TG_SPAN_SERVER, NULL, &parent);
	tg_span_set_str(server, "mcp.method.name", "tools/call");
	tg_span_set_int(server, "toolgate.n", -42);
	tg_span_set_bool(server, "toolgate.b", 1);
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	tg_span_set_str(server, "toolgate.big", big);
	tg_span_set_str(server, "toolgate.bad", "\xff\xfe");
	child = tg_span_start(t, "execute_tool", TG_SPAN_INTERNAL, server, NULL);
	tg_span_set_name(child, "execute_tool fs.read");
	tg_span_error(child, "tool_error", "it failed");
	tg_span_context(child, &mine);
	CHECK(mine.valid && memcmp(mine.trace_id, parent.trace_id, 16) == 0);
	tg_span_ids(child, tid, sid);
	CHECK(strlen(tid) == 32 && strlen(sid) == 16 && strncmp(tid, TP + 3, 32) == 0);
	for (i = 0; i < 40; i++)
		tg_span_set_str(child, "toolgate.many", "v"); /* at most 32 kept */
	tg_span_end(child);
	tg_span_end(server);
	/* NULL everywhere is a no-op */
	CHECK(tg_span_start(NULL, "x", TG_SPAN_INTERNAL, NULL, NULL) == NULL);
	tg_span_set_str(NULL, "k", "v");
	tg_span_end(NULL);
	tg_tracer_free(t); /* exports what waits */

	pthread_mutex_lock(&c.lock);
	CHECK(c.requests == 1 && json_array_size(c.bodies) == 1 &&
	      strcmp(c.paths, "/v1/traces") == 0);
	rs = json_array_get(json_object_get(json_array_get(c.bodies, 0), "resourceSpans"), 0);
	CHECK(rs);
	{
		json_t *ra = json_object_get(json_object_get(rs, "resource"), "attributes");

		CHECK(strcmp(json_string_value(json_object_get(json_object_get(json_array_get(ra, 0),
			     "value"), "stringValue")), "toolgate-test") == 0);
	}
	spans = json_object_get(json_array_get(json_object_get(rs, "scopeSpans"), 0), "spans");
	CHECK(json_array_size(spans) == 2);
	ch = json_array_get(spans, 0);
	sv = json_array_get(spans, 1);
	/* the server span: the caller's trace, its span the parent (remote) */
	CHECK(strcmp(json_string_value(json_object_get(sv, "traceId")),
		     "4bf92f3577b34da6a3ce929d0e0e4736") == 0);
	CHECK(strcmp(json_string_value(json_object_get(sv, "parentSpanId")), "00f067aa0ba902b7") == 0);
	CHECK(strcmp(json_string_value(json_object_get(sv, "traceState")), "rojo=1") == 0);
	CHECK(json_integer_value(json_object_get(sv, "kind")) == 2);
	CHECK(json_integer_value(json_object_get(sv, "flags")) == 0x301);
	CHECK(strcmp(json_string_value(json_object_get(sv, "name")), "tools/call fs.read") == 0);
	CHECK(json_is_string(json_object_get(sv, "startTimeUnixNano")) &&
	      json_is_string(json_object_get(sv, "endTimeUnixNano")) &&
	      strcmp(json_string_value(json_object_get(sv, "startTimeUnixNano")),
		     json_string_value(json_object_get(sv, "endTimeUnixNano"))) <= 0);
	CHECK(strcmp(json_string_value(json_object_get(attr(sv, "mcp.method.name"), "stringValue")),
		     "tools/call") == 0);
	CHECK(strcmp(json_string_value(json_object_get(attr(sv, "toolgate.n"), "intValue")), "-42") == 0);
	CHECK(json_is_true(json_object_get(attr(sv, "toolgate.b"), "boolValue")));
	CHECK(json_string_length(json_object_get(attr(sv, "toolgate.big"), "stringValue")) == 1024);
	CHECK(strcmp(json_string_value(json_object_get(attr(sv, "toolgate.bad"), "stringValue")),
		     "(not UTF-8)") == 0);
	CHECK(!json_object_get(sv, "status"));
	/* the child: its parent the server span, local; the error */
	CHECK(strcmp(json_string_value(json_object_get(ch, "parentSpanId")),
		     json_string_value(json_object_get(sv, "spanId"))) == 0);
	CHECK(strcmp(json_string_value(json_object_get(ch, "spanId")), sid) == 0);
	CHECK(json_integer_value(json_object_get(ch, "flags")) == 0x101);
	CHECK(strcmp(json_string_value(json_object_get(ch, "name")), "execute_tool fs.read") == 0);
	CHECK(json_integer_value(json_object_get(json_object_get(ch, "status"), "code")) == 2);
	CHECK(strcmp(json_string_value(json_object_get(json_object_get(ch, "status"), "message")),
		     "it failed") == 0);
	CHECK(strcmp(json_string_value(json_object_get(attr(ch, "error.type"), "stringValue")),
		     "tool_error") == 0);
	CHECK(json_array_size(json_object_get(ch, "attributes")) == 32);
	pthread_mutex_unlock(&c.lock);
	collector_stop(&c);

	/* a root span: a new trace, no parent */
	CHECK(tg_tracer_new(&o, &t, &err) == 0);
	server = tg_span_start(t, "ping", TG_SPAN_SERVER, NULL, NULL);
	tg_span_context(server, &mine);
	CHECK(mine.valid && mine.flags == 1);
	tg_span_end(server);
	tg_tracer_get_stats(t, &st);
	CHECK(st.ended == 1);
	tg_tracer_free(t);
	/* malformed options */
	o.endpoint = "ftp://x/";
	CHECK(tg_tracer_new(&o, &t, &err) < 0 && strstr(err.msg, "http://"));
	o.endpoint = url;
	o.headers = "bad key=v";
	CHECK(tg_tracer_new(&o, &t, &err) < 0 && strstr(err.msg, "token"));
	o.headers = "k=a%0d%0ab";
	CHECK(tg_tracer_new(&o, &t, &err) < 0 && strstr(err.msg, "control"));
	return 0;
}

/* A collector that refuses, one that is not there, one that hangs: the
 * spans are dropped and counted, nothing waits on them but the exporter. */
static int collector_down(void)
{
	struct tg_tracer_options o = { 0 };
	struct tg_tracer_stats st;
	struct tg_tracer *t;
	struct collector c;
	struct tg_error err;
	char url[128];
	int i;

	CHECK(collector_start(&c, 503) == 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/traces", c.port);
	o.endpoint = url;
	CHECK(tg_tracer_new(&o, &t, &err) == 0);
	for (i = 0; i < 5; i++)
		tg_span_end(tg_span_start(t, "x", TG_SPAN_INTERNAL, NULL, NULL));
	tg_tracer_get_stats(t, &st);
	tg_tracer_free(t);
	collector_stop(&c);
	CHECK(c.requests == 1);
	/* nobody listens: the port of a socket closed again */
	CHECK(collector_start(&c, 200) == 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/traces", c.port);
	collector_stop(&c);
	o.interval_ms = 50;
	CHECK(tg_tracer_new(&o, &t, &err) == 0);
	for (i = 0; i < 5; i++)
		tg_span_end(tg_span_start(t, "x", TG_SPAN_INTERNAL, NULL, NULL));
	for (i = 0; i < 250; i++) {
		tg_tracer_get_stats(t, &st);
		if (st.export_failures)
			break;
		usleep(20000);
	}
	CHECK(st.ended == 5 && st.dropped == 5 && st.exported == 0 && st.export_failures == 1 &&
	      strstr(st.last_error, "127.0.0.1"));
	tg_tracer_free(t);

	/* one that takes the request and never answers: the export waits
	 * its timeout, the queue (4) fills, the rest are dropped */
	CHECK(collector_start(&c, 0) == 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/traces", c.port);
	o.queue_max = 4;
	o.batch = 4;
	o.timeout_ms = 1500;
	CHECK(tg_tracer_new(&o, &t, &err) == 0);
	for (i = 0; i < 4; i++)
		tg_span_end(tg_span_start(t, "x", TG_SPAN_INTERNAL, NULL, NULL));
	for (i = 0; i < 250; i++) { /* the exporter took the first four */
		int took;

		pthread_mutex_lock(&c.lock);
		took = c.requests;
		pthread_mutex_unlock(&c.lock);
		if (took)
			break;
		usleep(20000);
	}
	for (i = 0; i < 10; i++)
		tg_span_end(tg_span_start(t, "y", TG_SPAN_INTERNAL, NULL, NULL));
	tg_tracer_get_stats(t, &st);
	/* four in the hung export, four queued, six dropped */
	CHECK(st.ended == 14 && st.dropped == 6 && st.exports == 1);
	tg_tracer_free(t);
	tg_tracer_get_stats(NULL, &st);
	collector_stop(&c);
	return 0;
}

const struct unit_test trace_tests[] = {
	{ "trace/parse", parse },
	{ "trace/exported", exported },
	{ "trace/collector_down", collector_down },
	UNIT_TESTS_END,
};
