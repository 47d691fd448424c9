/*
 * Unit tests: the Streamable HTTP bridge of an upstream (src/upstream/http.c)
 * with the unchanged client (client.c) over it, against
 * tests/upstream/fake_http.py on 127.0.0.1 (spawned with fork and exec),
 * reached through the bridge's own egress proxy: JSON and event-stream
 * answers, progress before the result, the session and protocol headers,
 * a credential header, concurrency, the bounds, a session that expires,
 * a request that hangs, the GET stream, the DELETE at the end, a url the
 * proxy refuses. The 2026-07-28 era (fake_http.py --modern), whose client
 * side is not client.c's, is driven by writing the client's lines to the
 * bridge's descriptors: the mirrored headers, no session, no GET nor
 * DELETE, a cancellation that closes the call's stream, a
 * subscriptions/listen kept past the request bound.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec/upstream_run.h"
#include "toolgate/upstream.h"
#include "unit.h"
#include "upstream/client.h"
#include "upstream/http.h"
#include "upstream/http_int.h"

#define T 3000 /* ms: an answer the fake server gives at once */
#define TOKEN "Bearer s3cr3t-for-the-http-test"

struct seen {
	pthread_mutex_t lock;
	unsigned progress, messages;
	char last[128];
	char denied[128];
};

static struct seen seen = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void on_note(void *ctx, const char *method, json_t *params)
{
	struct seen *s = ctx;
	const char *data = json_string_value(json_object_get(params, "data"));

	pthread_mutex_lock(&s->lock);
	if (strcmp(method, "notifications/progress") == 0)
		s->progress++;
	if (strcmp(method, "notifications/message") == 0) {
		s->messages++;
		snprintf(s->last, sizeof(s->last), "%s", data ? data : "");
	}
	pthread_mutex_unlock(&s->lock);
}

static void on_denied(void *ctx, const char *destination, const char *why)
{
	struct seen *s = ctx;

	(void)why;
	pthread_mutex_lock(&s->lock);
	snprintf(s->denied, sizeof(s->denied), "%s", destination);
	pthread_mutex_unlock(&s->lock);
}

static const struct upstream_client_ops ops = { on_note, NULL, &seen };

struct web {
	pid_t pid;
	int port;
	char dir[64];
	struct tg_upstream *u;
	struct upstream_http *b;
	struct upstream_client *c;
	int cancel[2];
	pthread_t t;
	int running;
	char why[256];
	int cin, cout;              /* raw: the client's descriptors, no client */
	char rbuf[65536];           /* raw: what was read of cin, not yet a line */
	size_t rlen;
	json_t *held;               /* raw: messages read, not yet asked for */
};

static void *run_main(void *arg)
{
	struct web *w = arg;

	upstream_http_run(w->b, w->cancel[0], w->why, sizeof(w->why));
	return NULL;
}

static void script_path(char *out, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n;

	snprintf(out, size, "tests/upstream/fake_http.py");
	if (access(out, R_OK) == 0)
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		snprintf(out, size, "%s/../../tests/upstream/fake_http.py", dirname(exe));
	}
}

/* The fake server with flags (NULL-terminated, may be empty), its port
 * read from its first line; 0 or -1. */
static int server_start(struct web *w, const char *const *flags)
{
	char script[PATH_MAX + 64], line[32];
	const char *argv[12];
	int from[2], n = 0;
	ssize_t got;
	size_t len = 0;

	memset(&seen.progress, 0, sizeof(seen) - offsetof(struct seen, progress));
	script_path(script, sizeof(script));
	if (unit_tmpdir(w->dir, "http") < 0 || pipe2(from, O_CLOEXEC) < 0)
		return -1;
	argv[n++] = "python3";
	argv[n++] = script;
	argv[n++] = "0";
	while (flags && *flags && n < 10)
		argv[n++] = *flags++;
	argv[n] = NULL;
	w->pid = fork();
	if (w->pid < 0)
		return -1;
	if (w->pid == 0) {
		/* a test that fails leaves no server behind (nor its stderr open) */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(from[1], 1);
		execv("/usr/bin/python3", (char *const *)argv);
		execvp("python3", (char *const *)argv);
		_exit(127);
	}
	close(from[1]);
	while (len + 1 < sizeof(line) && (got = read(from[0], line + len, 1)) == 1 &&
	       line[len] != '\n')
		len++;
	line[len] = '\0';
	close(from[0]);
	w->port = (int)strtol(line, NULL, 10);
	return w->port > 0 ? 0 : -1;
}

/* A bridge to the fake server at host (its port), a started client over
 * it (raw: none, its descriptors kept in w), the bridge running; 0 or -1. */
static int bridge_start(struct web *w, const char *host, int request_ms, int raw)
{
	struct upstream_http_header h = { "Authorization", TOKEN, strlen(TOKEN) };
	struct upstream_http_options o = { .headers = &h, .nheaders = 1,
					   .request_ms = request_ms, .connect_ms = 2000,
					   .egress_denied = on_denied, .egress_ctx = &seen };
	char text[256], origin[128];
	struct tg_error err;
	int cin, cout;

	snprintf(text, sizeof(text), "{\"transport\": \"http\", \"url\": \"http://%s:%d/mcp\"}",
		 host, w->port);
	snprintf(origin, sizeof(origin), "%s/upstreams/web.json", w->dir);
	if (tg_upstream_parse(text, strlen(text), origin, &w->u, &err) < 0 ||
	    upstream_http_new(w->u, &o, &cin, &cout, &w->b, &err) < 0 ||
	    (raw ? (w->cin = cin, w->cout = cout, 0)
		 : upstream_client_new(cin, cout, &ops, &w->c, &err) < 0 ||
			   upstream_client_start(w->c, &err) < 0) ||
	    pipe2(w->cancel, O_CLOEXEC) < 0) {
		fprintf(stderr, "bridge: %s\n", err.msg);
		return -1;
	}
	if (pthread_create(&w->t, NULL, run_main, w) != 0)
		return -1;
	w->running = 1;
	return 0;
}

/* The bridge's run, ended by itself (the connection broke), joined. */
static void run_join(struct web *w)
{
	pthread_join(w->t, NULL);
	w->running = 0;
	close(w->cancel[0]);
	close(w->cancel[1]);
}

/* The bridge stopped (the session DELETEd), everything freed. */
static void web_stop(struct web *w)
{
	ssize_t r;

	if (w->running) {
		r = write(w->cancel[1], "x", 1);
		(void)r;
		pthread_join(w->t, NULL);
		close(w->cancel[0]);
		close(w->cancel[1]);
	}
	upstream_client_free(w->c);
	if (!w->c && w->cin > 0)
		close(w->cin);
	if (!w->c && w->cout > 0)
		close(w->cout);
	json_decref(w->held);
	upstream_http_free(w->b);
	tg_upstream_free(w->u);
	if (w->pid > 0) {
		kill(w->pid, SIGKILL);
		waitpid(w->pid, NULL, 0);
	}
	unit_rmtree(w->dir);
}

static int start(struct web *w, const char *const *flags, int request_ms)
{
	struct tg_error err;

	memset(w, 0, sizeof(*w));
	if (server_start(w, flags) < 0 || bridge_start(w, "127.0.0.1", request_ms, 0) < 0)
		return -1;
	if (upstream_client_initialize(w->c, "toolgate-test", "0", NULL, T, &err) < 0) {
		fprintf(stderr, "initialize: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* tools/call name(args JSON) into *res; the client's rc. */
static int call(struct web *w, const char *name, const char *args, int timeout_ms, json_t **res,
		struct tg_error *err)
{
	json_t *a = json_loads(args, 0, NULL);
	int rc = upstream_client_call_tool(w->c, name, a, NULL, timeout_ms, res, err);

	json_decref(a);
	return rc;
}

static const char *structured(json_t *res, const char *key)
{
	return json_string_value(json_object_get(json_object_get(res, "structuredContent"), key));
}

/* JSON answers: initialize, its session and protocol version carried,
 * the credential header sent, tools listed, a call answered. */
static int test_json(void)
{
	struct tg_error err;
	struct web w;
	json_t *tools = NULL, *res = NULL;
	int ok;

	CHECK(start(&w, NULL, 0) == 0);
	CHECK(strcmp(upstream_client_protocol(w.c), "2025-06-18") == 0);
	CHECK(upstream_client_list_tools(w.c, T, &tools, &err) == 0);
	CHECK(json_array_size(tools) == 10);
	CHECK(call(&w, "echo", "{\"text\": \"hi\\nthere\"}", T, &res, &err) == 0);
	CHECK(strcmp(json_string_value(json_object_get(json_object_get(res, "structuredContent"),
						       "text")), "hi\nthere") == 0);
	json_decref(res);
	CHECK(call(&w, "headers", "{}", T, &res, &err) == 0);
	ok = structured(res, "Mcp-Session-Id") && strlen(structured(res, "Mcp-Session-Id")) == 32 &&
	     strcmp(structured(res, "MCP-Protocol-Version"), "2025-06-18") == 0 &&
	     strcmp(structured(res, "Authorization"), TOKEN) == 0;
	json_decref(res);
	CHECK(ok);
	CHECK(upstream_client_ping(w.c, T, &err) == 0);
	json_decref(tools);
	web_stop(&w);
	return 0;
}

/* Every answer an event stream, pretty-printed over data lines; progress
 * before the result; a batch split into lines. */
static int test_sse(void)
{
	const char *flags[] = { "--sse", NULL };
	struct tg_error err;
	struct web w;
	json_t *res = NULL;
	unsigned progress, messages;
	int i;

	CHECK(start(&w, flags, 0) == 0);
	CHECK(upstream_client_ping(w.c, T, &err) == 0);
	CHECK(call(&w, "progress", "{\"n\": 4}", T, &res, &err) == 0);
	CHECK(json_is_true(json_object_get(json_object_get(res, "structuredContent"), "done")));
	json_decref(res);
	CHECK(call(&w, "batch", "{}", T, &res, &err) == 0);
	CHECK(json_is_true(json_object_get(json_object_get(res, "structuredContent"), "batch")));
	json_decref(res);
	for (i = 0; i < 100; i++) {
		pthread_mutex_lock(&seen.lock);
		progress = seen.progress;
		messages = seen.messages;
		pthread_mutex_unlock(&seen.lock);
		if (progress == 4 && messages == 1)
			break;
		usleep(10000);
	}
	CHECK(progress == 4 && messages == 1);
	CHECK(strcmp(seen.last, "in a batch") == 0);
	web_stop(&w);
	return 0;
}

struct slow {
	struct web *w;
	int rc;
};

static void *slow_main(void *arg)
{
	struct slow *s = arg;
	struct tg_error err;
	json_t *res = NULL;

	s->rc = call(s->w, "slow", "{\"ms\": 1500}", 5000, &res, &err);
	json_decref(res);
	return NULL;
}

/* A long call holds up neither a ping nor another call. */
static int test_concurrent(void)
{
	struct timespec a, b;
	struct slow s;
	struct tg_error err;
	struct web w;
	pthread_t t;
	json_t *res = NULL;
	long ms;

	CHECK(start(&w, NULL, 0) == 0);
	s.w = &w;
	s.rc = -2;
	CHECK(pthread_create(&t, NULL, slow_main, &s) == 0);
	usleep(100000);
	clock_gettime(CLOCK_MONOTONIC, &a);
	CHECK(upstream_client_ping(w.c, T, &err) == 0);
	CHECK(call(&w, "echo", "{}", T, &res, &err) == 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	json_decref(res);
	ms = (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
	pthread_join(t, NULL);
	CHECK(s.rc == 0);
	CHECK(ms < 1000);
	web_stop(&w);
	return 0;
}

/* An HTTP error status is the request's error; a hung request ends at its
 * bound, and the connection goes on. */
static int test_status_hang(void)
{
	struct tg_error err;
	struct web w;
	json_t *res = NULL;

	CHECK(start(&w, NULL, 700) == 0);
	CHECK(call(&w, "status", "{\"code\": 503}", T, &res, &err) == 1);
	CHECK(strstr(err.msg, "upstream HTTP: the server answered HTTP 503") != NULL);
	json_decref(res);
	CHECK(call(&w, "hang", "{}", T, &res, &err) == 1);
	CHECK(strstr(err.msg, "no answer within 700 ms") != NULL);
	json_decref(res);
	CHECK(upstream_client_ping(w.c, T, &err) == 0);
	CHECK(!upstream_client_broken(w.c, NULL, 0));
	web_stop(&w);
	return 0;
}

/* 1 when the client is broken within a second. */
static int broken_soon(struct web *w, char *why, size_t size)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (upstream_client_broken(w->c, why, size))
			return 1;
		usleep(10000);
	}
	return 0;
}

/* A session the server forgot (404) breaks the connection; the run says
 * why. */
static int test_expired(void)
{
	struct tg_error err;
	struct web w;
	json_t *res = NULL;
	char why[256];

	CHECK(start(&w, NULL, 0) == 0);
	CHECK(call(&w, "expire", "{}", T, &res, &err) == 0);
	json_decref(res);
	CHECK(upstream_client_ping(w.c, T, &err) < 0);
	CHECK(err.code == TG_ERR_UNAVAILABLE);
	CHECK(broken_soon(&w, why, sizeof(why)));
	run_join(&w);
	CHECK(strstr(w.why, "session expired (HTTP 404)") != NULL);
	web_stop(&w);
	return 0;
}

/* A body or an event over 4 MiB breaks the connection. */
static int test_oversized(void)
{
	const char *tools[] = { "big", "bigsse" };
	struct tg_error err;
	struct web w;
	json_t *res = NULL;
	char why[256];
	int i;

	for (i = 0; i < 2; i++) {
		CHECK(start(&w, NULL, 0) == 0);
		CHECK(call(&w, tools[i], "{}", T, &res, &err) < 0);
		CHECK(err.code == TG_ERR_UNAVAILABLE);
		CHECK(broken_soon(&w, why, sizeof(why)));
		run_join(&w);
		CHECK(strstr(w.why, "4194304 bytes") != NULL);
		web_stop(&w);
	}
	return 0;
}

/* The GET stream's messages reach the client; the session is DELETEd at
 * the end. */
static int test_get_delete(void)
{
	char log[128], text[4096], *sid = NULL;
	const char *flags[] = { "--get", "--log", log, NULL };
	struct tg_error err;
	struct web w;
	json_t *res = NULL;
	FILE *f;
	size_t n;
	int i, got = 0;

	snprintf(log, sizeof(log), "/tmp/tg-unit-http-log-%d", (int)getpid());
	unlink(log);
	CHECK(start(&w, flags, 0) == 0);
	CHECK(upstream_client_notify(w.c, "notifications/initialized", NULL, &err) == 0);
	for (i = 0; i < 300 && !got; i++) {
		pthread_mutex_lock(&seen.lock);
		got = strcmp(seen.last, "hello from GET") == 0;
		pthread_mutex_unlock(&seen.lock);
		usleep(10000);
	}
	CHECK(got);
	CHECK(call(&w, "headers", "{}", T, &res, &err) == 0);
	sid = strdup(structured(res, "Mcp-Session-Id"));
	json_decref(res);
	web_stop(&w);
	f = fopen(log, "r");
	CHECK(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	unlink(log);
	snprintf(log, sizeof(log), "DELETE %s", sid);
	free(sid);
	CHECK(strstr(text, log) != NULL);
	CHECK(strstr(text, "GET ") != NULL);
	return 0;
}

/* A name that resolves to loopback is refused by the egress proxy (only
 * an address named in the url is allowed): the connection breaks, the
 * refusal is reported, nothing of the credential is in the reason. */
static int test_refused(void)
{
	struct tg_error err;
	struct web w;
	int rc;

	memset(&w, 0, sizeof(w));
	CHECK(server_start(&w, NULL) == 0);
	CHECK(bridge_start(&w, "localhost", 0, 0) == 0);
	rc = upstream_client_initialize(w.c, "toolgate-test", "0", NULL, T, &err);
	CHECK(rc < 0);
	run_join(&w);
	CHECK(strstr(w.why, "cannot reach http://localhost:") != NULL);
	/* the proxy's reason, not curl's SOCKS5 reply number */
	CHECK(strstr(w.why, ": the egress proxy refused it: ") && !strstr(w.why, "SOCKS5"));
	CHECK(strstr(w.why, "s3cr3t") == NULL && strstr(err.msg, "s3cr3t") == NULL);
	pthread_mutex_lock(&seen.lock);
	rc = strncmp(seen.denied, "localhost:", 10) == 0;
	pthread_mutex_unlock(&seen.lock);
	CHECK(rc);
	web_stop(&w);
	return 0;
}

/* Nothing listening at the url: said so, not as a SOCKS5 reply number. */
static int test_nothing_there(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	struct tg_error err;
	struct web w;
	int fd;

	memset(&w, 0, sizeof(w));
	CHECK(unit_tmpdir(w.dir, "uphttp") == 0);
	/* a port of loopback's that was free a moment ago */
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
	      getsockname(fd, (struct sockaddr *)&a, &len) == 0);
	close(fd);
	w.port = ntohs(a.sin_port);
	CHECK(bridge_start(&w, "127.0.0.1", 0, 0) == 0);
	CHECK(upstream_client_initialize(w.c, "toolgate-test", "0", NULL, T, &err) < 0);
	run_join(&w);
	CHECK(strstr(w.why, "nothing answered at 127.0.0.1:") &&
	      strstr(w.why, "is the server listening there?") && !strstr(w.why, "SOCKS5"));
	web_stop(&w);
	return 0;
}

/* A credential whose value would split the request's head is refused,
 * by its name, without its value. */
static int test_bad_header(void)
{
	const char *text = "{\"transport\": \"http\", \"url\": \"http://127.0.0.1:9/mcp\"}";
	struct upstream_http_header h = { "X-Key", "abc\r\nEvil: 1", 13 };
	struct upstream_http_options o = { .headers = &h, .nheaders = 1 };
	struct upstream_http *b = NULL;
	struct tg_upstream *u;
	struct tg_error err;
	int cin, cout;

	CHECK(tg_upstream_parse(text, strlen(text), "/x/upstreams/web.json", &u, &err) == 0);
	CHECK(upstream_http_new(u, &o, &cin, &cout, &b, &err) < 0);
	CHECK(strstr(err.msg, "credentials.header.X-Key") != NULL);
	CHECK(strstr(err.msg, "Evil") == NULL);
	CHECK(!b && cin == -1 && cout == -1);
	tg_upstream_free(u);
	return 0;
}

/* A call's progress events through the runner: counted, the last kept. */
struct events {
	pthread_mutex_t lock;
	unsigned n;
	char last[128];
};

static void keep_event(void *ctx, const char *event)
{
	struct events *e = ctx;

	pthread_mutex_lock(&e->lock);
	e->n++;
	snprintf(e->last, sizeof(e->last), "%s", event);
	pthread_mutex_unlock(&e->lock);
}

/* The runner of an http upstream: its credential read from its file into
 * the header, its tools listed and called, a call's progress (an event
 * stream's notifications/progress with the runner's token) to its hook,
 * and a session that expires started again. */
static int test_runner(void)
{
	char text[512], path[128], *tools, *out = NULL;
	struct events ev = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct upstream_run_call_hooks h = { .notify = keep_event, .ctx = &ev };
	struct upstream_run *r = NULL;
	struct tg_error err;
	struct web w;
	json_t *res;
	FILE *f;
	int ok, i;

	memset(&w, 0, sizeof(w));
	CHECK(server_start(&w, NULL) == 0);
	snprintf(path, sizeof(path), "%s/auth", w.dir);
	f = fopen(path, "w");
	CHECK(f);
	fputs(TOKEN "\n", f);
	fclose(f);
	CHECK(chmod(path, 0600) == 0);
	snprintf(text, sizeof(text), "{\"transport\": \"http\", \"url\": "
		 "\"http://127.0.0.1:%d/mcp\", \"credentials\": {\"header\": "
		 "{\"Authorization\": \"%s\"}}}", w.port, path);
	snprintf(path, sizeof(path), "%s/upstreams/web.json", w.dir);
	CHECK(tg_upstream_parse(text, strlen(text), path, &w.u, &err) == 0);
	CHECK(upstream_run_new(w.u, NULL, &r, &err) == 0);
	CHECK(upstream_run_wait(r, 8000, &err) == 0);
	tools = upstream_run_tools(r, NULL);
	ok = tools && strstr(tools, "\"bigsse\"");
	free(tools);
	CHECK(ok);
	CHECK(upstream_run_call(r, "headers", "{}", T, -1, &out, &err) == 0);
	res = json_loads(out, 0, NULL);
	free(out);
	ok = res && strcmp(structured(res, "Authorization"), TOKEN) == 0;
	json_decref(res);
	CHECK(ok);
	/* delivered before the call returns, each one */
	CHECK(upstream_run_call_ex(r, "progress", "{\"n\": 3}", T, -1, &h, &out, &err) == 0);
	free(out);
	CHECK(ev.n == 3);
	CHECK(strcmp(ev.last, "{\"progress\":{\"progress\":2}}") == 0);
	CHECK(upstream_run_call(r, "expire", "{}", T, -1, &out, &err) == 0);
	free(out);
	CHECK(upstream_run_call(r, "echo", "{}", T, -1, &out, &err) < 0);
	CHECK(err.code == TG_ERR_UNAVAILABLE);
	CHECK(strstr(err.msg, "session expired") != NULL);
	/* started again, after its backoff */
	for (i = 0; i < 50 && upstream_run_call(r, "echo", "{}", T, -1, &out, &err) < 0; i++)
		usleep(100000);
	free(out);
	CHECK(upstream_run_starts(r) == 2);
	upstream_run_free(r);
	web_stop(&w);
	return 0;
}

/* toolgate's own `serve --http` (src/mcp/http.c, a real Streamable HTTP
 * server) as the upstream: initialized, listed, a builtin tool called
 * (its answer an event stream when a progress token is given), the
 * session DELETEd at the end. The binary and the examples are found from
 * the test binary's directory (build/tests/). */
static int test_toolgate(void)
{
	char exe[PATH_MAX], root[PATH_MAX], bin[PATH_MAX + 16], cat[PATH_MAX + 32],
		ws[PATH_MAX + 32], line[512];
	const char *argv[] = { "toolgate", "serve", "--catalog", cat, "--workspace", ws, "--http",
			       "127.0.0.1:0", NULL };
	struct tg_error err;
	struct web w;
	json_t *tools = NULL, *res = NULL, *args, *meta;
	const char *at;
	ssize_t n;
	int from[2], ok;
	size_t len = 0;
	FILE *f;

	memset(&w, 0, sizeof(w));
	memset(&seen.progress, 0, sizeof(seen) - offsetof(struct seen, progress));
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	CHECK(n > 0);
	exe[n] = '\0';
	snprintf(root, sizeof(root), "%s", dirname(exe)); /* build/tests */
	snprintf(bin, sizeof(bin), "%s/../toolgate", root);
	snprintf(cat, sizeof(cat), "%s/../../examples/catalog", root);
	snprintf(ws, sizeof(ws), "%s/../../examples/workspace", root);
	CHECK(access(bin, X_OK) == 0 && access(cat, R_OK) == 0);
	CHECK(unit_tmpdir(w.dir, "http") == 0 && pipe2(from, O_CLOEXEC) == 0);
	w.pid = fork();
	CHECK(w.pid >= 0);
	if (w.pid == 0) {
		dup2(from[1], 2);
		execv(bin, (char *const *)argv);
		_exit(127);
	}
	close(from[1]);
	/* its stderr: the audit's lines, then "... MCP on http://127.0.0.1:PORT/mcp" */
	f = fdopen(from[0], "r");
	CHECK(f);
	while (fgets(line, sizeof(line), f) && !(at = strstr(line, "MCP on http://127.0.0.1:")))
		len++;
	CHECK(len < 1000 && at);
	w.port = (int)strtol(at + strlen("MCP on http://127.0.0.1:"), NULL, 10);
	CHECK(w.port > 0);
	CHECK(bridge_start(&w, "127.0.0.1", 0, 0) == 0);
	CHECK(upstream_client_initialize(w.c, "toolgate-test", "0", NULL, T, &err) == 0);
	CHECK(strcmp(upstream_client_protocol(w.c), UPSTREAM_PROTOCOL) == 0);
	CHECK(upstream_client_notify(w.c, "notifications/initialized", NULL, &err) == 0);
	CHECK(upstream_client_list_tools(w.c, T, &tools, &err) == 0);
	CHECK(json_array_size(tools) > 3);
	json_decref(tools);
	args = json_pack("{s:s}", "path", "notes.txt");
	meta = json_pack("{s:s}", "progressToken", "p1");
	ok = upstream_client_call_tool(w.c, "fs.read", args, meta, T, &res, &err);
	json_decref(args);
	json_decref(meta);
	if (ok != 0)
		fprintf(stderr, "fs.read: %s\n", err.msg);
	CHECK(ok == 0);
	CHECK(json_is_array(json_object_get(res, "content")));
	CHECK(!json_is_true(json_object_get(res, "isError")));
	json_decref(res);
	CHECK(upstream_client_ping(w.c, T, &err) == 0);
	fclose(f);
	web_stop(&w);
	return 0;
}

/* ---- the 2026-07-28 era, raw -------------------------------------------- */

#define META "\"_meta\": {\"io.modelcontextprotocol/protocolVersion\": \"2026-07-28\", " \
	     "\"io.modelcontextprotocol/clientCapabilities\": {}}"

/* The fake server (--modern and flags) and a bridge to it, running, its
 * client's descriptors kept in w (no client): 0 or -1. */
static int raw_start(struct web *w, const char *const *flags, int request_ms)
{
	const char *all[8] = { "--modern" };
	int n = 1;

	memset(w, 0, sizeof(*w));
	while (flags && *flags && n < 7)
		all[n++] = *flags++;
	all[n] = NULL;
	return server_start(w, all) < 0 ? -1 : bridge_start(w, "127.0.0.1", request_ms, 1);
}

/* A request of the modern era: id, method, the params' members (a JSON
 * object's inside, may be empty) with the era's _meta. 0 or -1. */
static int raw_request(struct web *w, int id, const char *method, const char *params)
{
	char line[4096];
	int n = snprintf(line, sizeof(line), "{\"jsonrpc\": \"2.0\", \"id\": %d, \"method\": "
			 "\"%s\", \"params\": {%s%s" META "}}\n", id, method, params,
			 params[0] ? ", " : "");

	return n > 0 && (size_t)n < sizeof(line) && write(w->cout, line, (size_t)n) == n ? 0 : -1;
}

static int raw_line(struct web *w, const char *line)
{
	size_t n = strlen(line);

	return write(w->cout, line, n) == (ssize_t)n && write(w->cout, "\n", 1) == 1 ? 0 : -1;
}

/* A held message with id, taken out of w->held; NULL: none. */
static json_t *held_take(struct web *w, int id)
{
	json_t *msg;
	size_t i;

	json_array_foreach(w->held, i, msg)
		if (json_integer_value(json_object_get(msg, "id")) == id) {
			json_incref(msg);
			json_array_remove(w->held, i);
			return msg;
		}
	return NULL;
}

/* The message the bridge wrote that has id (others held for later, the
 * acknowledged notification of a listen noted in *acked), within ms:
 * *out, or NULL when none came. */
static void raw_answer(struct web *w, int id, int ms, json_t **out, int *acked)
{
	struct timespec a, b;
	const char *method;
	json_t *msg;
	char *nl;

	if (!w->held)
		w->held = json_array();
	*out = held_take(w, id);
	clock_gettime(CLOCK_MONOTONIC, &a);
	while (!*out) {
		while ((nl = memchr(w->rbuf, '\n', w->rlen))) {
			size_t n = (size_t)(nl - w->rbuf) + 1;

			msg = json_loadb(w->rbuf, n - 1, 0, NULL);
			memmove(w->rbuf, w->rbuf + n, w->rlen - n);
			w->rlen -= n;
			method = json_string_value(json_object_get(msg, "method"));
			if (acked && method &&
			    strcmp(method, "notifications/subscriptions/acknowledged") == 0)
				*acked = 1;
			if (msg && json_object_get(msg, "id"))
				json_array_append(w->held, msg);
			json_decref(msg);
		}
		*out = held_take(w, id);
		if (*out)
			return;
		clock_gettime(CLOCK_MONOTONIC, &b);
		long left = ms - ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000);
		struct pollfd p = { w->cin, POLLIN, 0 };
		ssize_t got;

		if (left <= 0 || poll(&p, 1, (int)left) <= 0 || w->rlen == sizeof(w->rbuf))
			return;
		got = read(w->cin, w->rbuf + w->rlen, sizeof(w->rbuf) - w->rlen);
		if (got <= 0)
			return;
		w->rlen += (size_t)got;
	}
}

/* 1 when s is t (s may be NULL). */
static int is(const char *s, const char *t)
{
	return s && strcmp(s, t) == 0;
}

/* The result's structuredContent (or the result) member key, a string. */
static const char *raw_field(json_t *msg, const char *key)
{
	json_t *r = json_object_get(msg, "result");
	json_t *sc = json_object_get(r, "structuredContent");

	return json_string_value(json_object_get(sc ? sc : json_object_get(r, "headers"), key));
}

static const char *raw_error(json_t *msg)
{
	return json_string_value(json_object_get(json_object_get(msg, "error"), "message"));
}

/* The log file's text (at most size - 1 bytes) into text. */
static void log_read(const char *path, char *text, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(text, 1, size - 1, f) : 0;

	if (f)
		fclose(f);
	text[n] = '\0';
}

/* How many times s is in text. */
static int count(const char *text, const char *s)
{
	int n = 0;

	while ((text = strstr(text, s))) {
		n++;
		text += strlen(s);
	}
	return n;
}

/* 1 when the log holds s within ms. */
static int log_soon(const char *path, const char *s, int ms)
{
	char text[8192];
	int i;

	for (i = 0; i <= ms / 20; i++) {
		log_read(path, text, sizeof(text));
		if (strstr(text, s))
			return 1;
		usleep(20000);
	}
	return 0;
}

#define HEADERS "\"name\": \"headers\", \"arguments\": {}"
#define REGION(v) "\"name\": \"region\", \"arguments\": {\"region\": " v "}"

/* raw_start with the fake's --log in a fresh file, its path in log (128
 * bytes). */
static int raw_start_logged(struct web *w, char *log, int request_ms)
{
	const char *flags[] = { "--log", log, NULL };

	snprintf(log, 128, "/tmp/tg-unit-http-mlog-%d", (int)getpid());
	unlink(log);
	return raw_start(w, flags, request_ms);
}

/* The bridge and the fake stopped, what the fake logged in text (size
 * bytes), its file removed. */
static void raw_stop(struct web *w, const char *log, char *text, size_t size)
{
	web_stop(w);
	log_read(log, text, size);
	unlink(log);
}

/* 1 when a modern request is answered a result within T. */
static int raw_ok(struct web *w, int id, const char *method, const char *params)
{
	json_t *m = NULL;
	int ok;

	if (raw_request(w, id, method, params) < 0)
		return 0;
	raw_answer(w, id, T, &m, NULL);
	ok = json_object_get(m, "result") != NULL;
	json_decref(m);
	return ok;
}

/* The headers a modern request mirrors from its body: the revision, the
 * method, the name (plain, or base64 when it is not visible ASCII), an
 * annotated argument, and no session; a number a header cannot carry and
 * a revision that is not one answered by the bridge without a POST. */
static int test_modern_headers(void)
{
	/* the fake refuses (400) a Mcp-Name or Mcp-Param-Region that is not
	 * the body's: each answer is a result that names the headers got */
	static const struct {
		const char *method, *params, *header, *want; /* want NULL: absent */
	} cases[] = {
		{ "tools/call", HEADERS, "mcp-protocol-version", "2026-07-28" },
		{ "tools/call", HEADERS, "mcp-method", "tools/call" },
		{ "tools/call", HEADERS, "mcp-name", "headers" },
		{ "tools/call", HEADERS, "mcp-session-id", NULL },
		{ "tools/call", HEADERS, "mcp-param-region", NULL },
		{ "tools/call", REGION("\"eu-west-1\""), "mcp-param-region", "eu-west-1" },
		{ "tools/call", REGION("\"Z\\u00fcrich\""), "mcp-param-region",
		  "=?base64?WsO8cmljaA==?=" },
		{ "tools/call", REGION("null"), "mcp-param-region", NULL },
		{ "resources/read", "\"uri\": \"file:///a b.txt\"", "mcp-name", "file:///a b.txt" },
		{ "resources/read", "\"uri\": \"file:///a b.txt\"", "mcp-method", "resources/read" },
		{ "resources/read", "\"uri\": \"file:///\\u00e9\"", "mcp-name",
		  "=?base64?ZmlsZTovLy/DqQ==?=" },
	};
	char log[128], text[8192];
	const char *got;
	struct web w;
	json_t *m;
	size_t i;
	int ok;

	CHECK(raw_start_logged(&w, log, 0) == 0);
	CHECK(raw_request(&w, 1, "server/discover", "") == 0);
	raw_answer(&w, 1, T, &m, NULL);
	ok = m && is(json_string_value(json_object_get(json_object_get(
			 json_object_get(m, "result"), "serverInfo"), "name")), "fake-http-modern");
	json_decref(m);
	CHECK(ok);
	CHECK(raw_request(&w, 2, "tools/list", "") == 0);
	raw_answer(&w, 2, T, &m, NULL);
	CHECK(m && json_array_size(json_object_get(json_object_get(m, "result"), "tools")) == 5);
	json_decref(m);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK(raw_request(&w, 100 + (int)i, cases[i].method, cases[i].params) == 0);
		raw_answer(&w, 100 + (int)i, T, &m, NULL);
		got = m ? raw_field(m, cases[i].header) : "no answer";
		ok = m && (cases[i].want ? is(got, cases[i].want) : !got);
		if (!ok)
			fprintf(stderr, "case %zu: %s is %s\n", i, cases[i].header, got ? got : "absent");
		json_decref(m);
		CHECK(ok);
	}
	CHECK(raw_request(&w, 7, "tools/call", REGION("1.5")) == 0);
	raw_answer(&w, 7, T, &m, NULL);
	ok = m && raw_error(m) && strstr(raw_error(m), "upstream HTTP: arguments.region:") &&
	     strstr(raw_error(m), "Mcp-Param-Region");
	json_decref(m);
	CHECK(ok);
	CHECK(raw_line(&w, "{\"jsonrpc\": \"2.0\", \"id\": 10, \"method\": \"server/discover\", "
		       "\"params\": {\"_meta\": {\"io.modelcontextprotocol/protocolVersion\": "
		       "\"2026-07-28\\r\\nX: 1\"}}}") == 0);
	raw_answer(&w, 10, T, &m, NULL);
	ok = m && raw_error(m) && strstr(raw_error(m), "not a revision's name");
	json_decref(m);
	CHECK(ok);
	raw_stop(&w, log, text, sizeof(text));
	/* every header as the fake wanted it; the two refused never sent */
	CHECK(!strstr(text, "MISMATCH"));
	CHECK(count(text, "POST None tools/call tools/call\n") == 8);
	CHECK(count(text, "POST None server/discover server/discover\n") == 1);
	CHECK(count(text, "POST ") == 13);
	return 0;
}

/* No session in the modern era: no GET stream (not even after a
 * notifications/initialized), no DELETE at the end, no session id sent. */
static int test_modern_stateless(void)
{
	char log[128], text[8192];
	struct web w;

	CHECK(raw_start_logged(&w, log, 0) == 0);
	CHECK(raw_ok(&w, 1, "server/discover", ""));
	/* what opens the session era's GET stream, answered 202 here */
	CHECK(raw_line(&w, "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/initialized\", "
		       "\"params\": {" META "}}") == 0);
	CHECK(raw_ok(&w, 2, "tools/call", "\"name\": \"echo\", \"arguments\": {}"));
	usleep(1300000); /* a GET would open at once, again a second later */
	raw_stop(&w, log, text, sizeof(text));
	CHECK(strstr(text, "POST None tools/call tools/call"));
	CHECK(strstr(text, "POST None notifications/initialized notifications/initialized"));
	CHECK(!strstr(text, "GET ") && !strstr(text, "DELETE "));
	return 0;
}

/* A modern call cancelled: its transfer ended (the server sees its
 * stream closed), no more answer to it, nothing POSTed for the
 * cancellation; the bridge goes on. */
static int test_modern_cancel(void)
{
	char log[128], text[8192];
	struct web w;
	json_t *m;

	CHECK(raw_start_logged(&w, log, 0) == 0);
	CHECK(raw_request(&w, 7, "tools/call", "\"name\": \"hang\", \"arguments\": {}") == 0);
	CHECK(log_soon(log, "POST None tools/call tools/call", T));
	CHECK(raw_line(&w, "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/cancelled\", "
		       "\"params\": {\"requestId\": 7}}") == 0);
	CHECK(log_soon(log, "CLOSED tools/call 7", T));
	raw_answer(&w, 7, 300, &m, NULL);
	CHECK(!m);
	CHECK(raw_ok(&w, 8, "server/discover", ""));
	raw_stop(&w, log, text, sizeof(text));
	CHECK(!strstr(text, "notifications/cancelled"));
	return 0;
}

/* A subscriptions/listen outlives the request bound (1.5 s here) that
 * cuts a hung call, and ends when the client cancels it. */
static int test_modern_listen(void)
{
	char log[128], text[8192];
	struct web w;
	json_t *m;
	int acked = 0, ok;

	CHECK(raw_start_logged(&w, log, 1500) == 0);
	CHECK(raw_request(&w, 9, "subscriptions/listen",
			  "\"notifications\": {\"toolsListChanged\": true}") == 0);
	CHECK(raw_request(&w, 10, "tools/call", "\"name\": \"hang\", \"arguments\": {}") == 0);
	raw_answer(&w, 10, 4000, &m, &acked);
	ok = m && raw_error(m) && strstr(raw_error(m), "no answer within 1500 ms");
	json_decref(m);
	CHECK(ok);
	CHECK(acked);
	/* twice the bound: the listen is still open, unanswered */
	raw_answer(&w, 9, 1600, &m, NULL);
	CHECK(!m);
	CHECK(!log_soon(log, "CLOSED subscriptions/listen", 0));
	CHECK(raw_line(&w, "{\"jsonrpc\": \"2.0\", \"method\": \"notifications/cancelled\", "
		       "\"params\": {\"requestId\": 9}}") == 0);
	CHECK(log_soon(log, "CLOSED subscriptions/listen 9", T));
	raw_stop(&w, log, text, sizeof(text));
	return 0;
}

/* The headers of a modern tools/call (args JSON) as one text, "Name:
 * value\n" each, or "refused: why"; NULL out of memory. */
static char *params_headers(struct http_params *p, const char *tool, const char *args)
{
	char line[512], why[400], *text = NULL;
	struct curl_slist *hdrs = NULL, *l;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	json_t *msg;
	int rc;

	snprintf(line, sizeof(line), "{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \"tools/call\", "
		 "\"params\": {\"name\": \"%s\", \"arguments\": %s, " META "}}", tool, args);
	msg = json_loads(line, 0, NULL);
	rc = msg && f ? http_modern_headers(p, msg, &hdrs, why, sizeof(why)) : -1;
	for (l = hdrs; f && rc == 0 && l; l = l->next)
		if (strncmp(l->data, "Mcp-Param-", 10) == 0)
			fprintf(f, "%s\n", l->data);
	if (f && rc > 0)
		fprintf(f, "refused: %s", why);
	if (f)
		fclose(f);
	curl_slist_free_all(hdrs);
	json_decref(msg);
	return text;
}

/* 1 when the headers of the call are want. */
static int params_are(struct http_params *p, const char *tool, const char *args,
		      const char *want)
{
	char *got = params_headers(p, tool, args);
	int ok = got && strcmp(got, want) == 0;

	if (!ok)
		fprintf(stderr, "%s %s: got \"%s\", want \"%s\"\n", tool, args, got, want);
	free(got);
	return ok;
}

static void params_list(struct http_params *p, const char *tools, int first)
{
	json_t *result = json_loads(tools, 0, NULL);

	http_params_listed(p, result, first);
	json_decref(result);
}

/* The table of a listing's x-mcp-header: what the server side accepts
 * kept (nested through properties too), the rest not; a listing without
 * a cursor replaces it, a later page adds; past its bound, a call of a
 * tool not kept is refused; integers, booleans and numbers encoded. */
static int test_modern_params(void)
{
	struct http_params *p = http_params_new();
	struct tg_error err;
	char *many;
	size_t at = 0, i;

	CHECK(p);
	/* the headers are libcurl's lists: loaded as a bridge's start loads it */
	CHECK(tg_curl_load("the test", &err) == 0);
	params_list(p, "{\"tools\": [{\"name\": \"a\", \"inputSchema\": {\"properties\": {"
		    "\"r\": {\"type\": \"string\", \"x-mcp-header\": \"R\"},"
		    "\"n\": {\"type\": \"integer\", \"x-mcp-header\": \"N\"},"
		    "\"b\": {\"type\": \"boolean\", \"x-mcp-header\": \"B\"},"
		    "\"f\": {\"type\": \"number\", \"x-mcp-header\": \"F\"},"
		    "\"s\": {\"type\": \"string\", \"x-mcp-header\": \"Bad Name\"},"
		    "\"d\": {\"type\": \"string\", \"x-mcp-header\": \"r\"},"
		    "\"l\": {\"type\": \"array\", \"items\": {\"type\": \"string\", "
		    "\"x-mcp-header\": \"L\"}},"
		    "\"o\": {\"type\": \"object\", \"properties\": {\"t\": {\"type\": \"string\", "
		    "\"x-mcp-header\": \"T\"}}}}}}]}", 1);
	CHECK(params_are(p, "a", "{\"r\": \"x\", \"n\": 42, \"b\": false, \"f\": 1, \"s\": \"x\", "
			 "\"d\": \"y\", \"l\": [\"z\"], \"o\": {\"t\": \" t\"}}",
			 "Mcp-Param-R: x\nMcp-Param-N: 42\nMcp-Param-B: false\n"
			 "Mcp-Param-T: =?base64?IHQ=?=\n"));
	CHECK(params_are(p, "a", "{\"n\": 4.2e1, \"r\": null}", "Mcp-Param-N: 42\n"));
	CHECK(params_are(p, "a", "{\"n\": 1e300}", "refused: arguments.n: a number that is not "
			 "an integer up to 2^53-1 cannot be mirrored into Mcp-Param-N exactly (a "
			 "string, a boolean or an integer can), so the server would refuse the call"));
	CHECK(params_are(p, "a", "{\"o\": {\"t\": {}}}", "refused: arguments.o.t: a value of this "
			 "type cannot be mirrored into Mcp-Param-T exactly (a string, a boolean or "
			 "an integer can), so the server would refuse the call"));
	params_list(p, "{\"tools\": [{\"name\": \"b\", \"inputSchema\": {\"properties\": {"
		    "\"q\": {\"type\": \"string\", \"x-mcp-header\": \"Q\"}}}}]}", 0);
	CHECK(params_are(p, "a", "{\"r\": \"x\"}", "Mcp-Param-R: x\n"));
	CHECK(params_are(p, "b", "{\"q\": \"x\"}", "Mcp-Param-Q: x\n"));
	params_list(p, "{\"tools\": [{\"name\": \"b\", \"inputSchema\": {}}]}", 1);
	CHECK(params_are(p, "a", "{\"r\": \"x\"}", ""));
	CHECK(params_are(p, "b", "{\"q\": \"x\"}", ""));
	/* one tool past the bound: a tool not kept is refused, a kept one not */
	many = malloc((UPSTREAM_HTTP_MAX_PARAM_TOOLS + 1) * 120 + 32);
	CHECK(many);
	at += (size_t)snprintf(many, 32, "{\"tools\": [");
	for (i = 0; i <= UPSTREAM_HTTP_MAX_PARAM_TOOLS; i++)
		at += (size_t)snprintf(many + at, 120, "%s{\"name\": \"t%zu\", \"inputSchema\": {"
				       "\"properties\": {\"q\": {\"type\": \"string\", "
				       "\"x-mcp-header\": \"Q\"}}}}", i ? "," : "", i);
	snprintf(many + at, 32, "]}");
	params_list(p, many, 1);
	free(many);
	CHECK(params_are(p, "t0", "{\"q\": \"x\"}", "Mcp-Param-Q: x\n"));
	CHECK(params_are(p, "t1024", "{\"q\": \"x\"}", "refused: the tools list passed the "
			 "bridge's bound for x-mcp-header annotations (1024 tools, 1048576 bytes): "
			 "the headers of t1024 are not known"));
	http_params_free(p);
	return 0;
}

const struct unit_test upstream_http_tests[] = {
	{ "upstream_http/json", test_json },
	{ "upstream_http/sse", test_sse },
	{ "upstream_http/concurrent", test_concurrent },
	{ "upstream_http/status_hang", test_status_hang },
	{ "upstream_http/expired", test_expired },
	{ "upstream_http/oversized", test_oversized },
	{ "upstream_http/get_delete", test_get_delete },
	{ "upstream_http/refused", test_refused },
	{ "upstream_http/nothing_there", test_nothing_there },
	{ "upstream_http/bad_header", test_bad_header },
	{ "upstream_http/runner", test_runner },
	{ "upstream_http/toolgate", test_toolgate },
	{ "upstream_http/modern_headers", test_modern_headers },
	{ "upstream_http/modern_params", test_modern_params },
	{ "upstream_http/modern_stateless", test_modern_stateless },
	{ "upstream_http/modern_cancel", test_modern_cancel },
	{ "upstream_http/modern_listen", test_modern_listen },
	UNIT_TESTS_END
};
