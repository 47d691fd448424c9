/*
 * Unit tests: the Streamable HTTP bridge of an upstream (src/upstream/http.c)
 * with the unchanged client (client.c) over it, against
 * tests/upstream/fake_http.py on 127.0.0.1 (spawned with fork and exec),
 * reached through the bridge's own egress proxy: JSON and event-stream
 * answers, progress before the result, the session and protocol headers,
 * a credential header, concurrency, the bounds, a session that expires,
 * a request that hangs, the GET stream, the DELETE at the end, a url the
 * proxy refuses.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec/upstream_run.h"
#include "toolgate/upstream.h"
#include "unit.h"
#include "upstream/client.h"
#include "upstream/http.h"

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
 * it, the bridge running; 0 or -1. */
static int bridge_start(struct web *w, const char *host, int request_ms)
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
	    upstream_client_new(cin, cout, &ops, &w->c, &err) < 0 ||
	    upstream_client_start(w->c, &err) < 0 || pipe2(w->cancel, O_CLOEXEC) < 0) {
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
	if (server_start(w, flags) < 0 || bridge_start(w, "127.0.0.1", request_ms) < 0)
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
	CHECK(bridge_start(&w, "localhost", 0) == 0);
	rc = upstream_client_initialize(w.c, "toolgate-test", "0", NULL, T, &err);
	CHECK(rc < 0);
	run_join(&w);
	CHECK(strstr(w.why, "cannot reach http://localhost:") != NULL);
	CHECK(strstr(w.why, "s3cr3t") == NULL && strstr(err.msg, "s3cr3t") == NULL);
	pthread_mutex_lock(&seen.lock);
	rc = strncmp(seen.denied, "localhost:", 10) == 0;
	pthread_mutex_unlock(&seen.lock);
	CHECK(rc);
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
	CHECK(bridge_start(&w, "127.0.0.1", 0) == 0);
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

const struct unit_test upstream_http_tests[] = {
	{ "upstream_http/json", test_json },
	{ "upstream_http/sse", test_sse },
	{ "upstream_http/concurrent", test_concurrent },
	{ "upstream_http/status_hang", test_status_hang },
	{ "upstream_http/expired", test_expired },
	{ "upstream_http/oversized", test_oversized },
	{ "upstream_http/get_delete", test_get_delete },
	{ "upstream_http/refused", test_refused },
	{ "upstream_http/bad_header", test_bad_header },
	{ "upstream_http/runner", test_runner },
	{ "upstream_http/toolgate", test_toolgate },
	UNIT_TESTS_END
};
