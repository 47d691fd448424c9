/*
 * Unit tests: the client side of MCP over stdio (src/upstream/client*.c),
 * driven against tests/upstream/fake_server.py, spawned with fork and exec
 * over two pipes (no sandbox: the client owns descriptors, not processes).
 * Each mode of the fake server is one way an upstream misbehaves; every
 * wait has a timeout well under a second or two.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "unit.h"
#include "upstream/client.h"

#define T 2000 /* ms: an answer the fake server gives at once */

/* What the callbacks saw, under lock. */
struct seen {
	pthread_mutex_t lock;
	unsigned notifications, list_changed;
	char last_message[256];
	int slow;           /* the first notification takes 300 ms */
	int answer_sampling;
	int defer_sampling; /* sampling is deferred: its id kept in deferred */
	json_t *deferred;
	uint64_t deferred_seq; /* its read sequence number */
};

static struct seen seen = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void on_notification(void *ctx, const char *method, json_t *params)
{
	struct seen *s = ctx;
	const char *data = json_string_value(json_object_get(params, "data"));

	pthread_mutex_lock(&s->lock);
	if (s->slow && s->notifications == 0) {
		pthread_mutex_unlock(&s->lock);
		usleep(300 * 1000);
		pthread_mutex_lock(&s->lock);
	}
	s->notifications++;
	if (strcmp(method, "notifications/tools/list_changed") == 0)
		s->list_changed++;
	if (strcmp(method, "notifications/message") == 0 && data)
		snprintf(s->last_message, sizeof(s->last_message), "%s", data);
	pthread_mutex_unlock(&s->lock);
}

static json_t *on_request(void *ctx, json_t *id, const char *method, json_t *params,
			  uint64_t seq, struct upstream_rpc_error *e)
{
	struct seen *s = ctx;

	(void)params;
	if (s->defer_sampling && strcmp(method, "sampling/createMessage") == 0) {
		pthread_mutex_lock(&s->lock);
		s->deferred = json_incref(id);
		s->deferred_seq = seq;
		pthread_mutex_unlock(&s->lock);
		e->code = UPSTREAM_RPC_DEFERRED;
		return NULL;
	}
	if (s->answer_sampling && strcmp(method, "sampling/createMessage") == 0)
		return json_pack("{s:s,s:{s:s,s:s},s:s}", "role", "assistant", "content", "type",
				 "text", "text", "hi", "model", "m");
	e->code = -32000;
	snprintf(e->message, sizeof(e->message), "the test refuses %s", method);
	return NULL;
}

static const struct upstream_client_ops ops = { on_notification, on_request, &seen };

struct fake {
	pid_t pid;
	struct upstream_client *c;
};

/* tests/upstream/fake_server.py from the working directory (the tree's
 * root), else from the test binary's (build/tests/). */
static void script_path(char *out, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n;

	snprintf(out, size, "tests/upstream/fake_server.py");
	if (access(out, R_OK) == 0)
		return;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		snprintf(out, size, "%s/../../tests/upstream/fake_server.py", dirname(exe));
	}
}

/* The fake server in mode (arg may be NULL) and a started client over its
 * pipes; 0 or -1. */
static int fake_start(struct fake *f, const struct upstream_client_ops *o, const char *mode,
		      const char *arg)
{
	char script[PATH_MAX + 64];
	int to[2], from[2];
	struct tg_error err;

	signal(SIGPIPE, SIG_DFL); /* the client must cope without help */
	script_path(script, sizeof(script));
	if (pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
		return -1;
	f->pid = fork();
	if (f->pid < 0)
		return -1;
	if (f->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		/* the system's python, not a version manager's shim (slow) */
		execl("/usr/bin/python3", "python3", script, mode, arg, (char *)NULL);
		execlp("python3", "python3", script, mode, arg, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	if (upstream_client_new(from[0], to[1], o, &f->c, &err) < 0 ||
	    upstream_client_start(f->c, &err) < 0) {
		fprintf(stderr, "client: %s\n", err.msg);
		return -1;
	}
	return 0;
}

static void fake_stop(struct fake *f)
{
	upstream_client_free(f->c);
	kill(f->pid, SIGKILL);
	waitpid(f->pid, NULL, 0);
}

static int init(struct fake *f, struct tg_error *err)
{
	return upstream_client_initialize(f->c, "toolgate-test", "0", NULL, T, err);
}

static int test_normal(void)
{
	struct upstream_client_stats st;
	struct tg_error err;
	struct fake f;
	json_t *tools, *res, *args;
	int rc;

	CHECK(fake_start(&f, &ops, "normal", NULL) == 0);
	/* before initialize, only ping */
	CHECK(upstream_client_list_tools(f.c, T, &tools, &err) < 0);
	CHECK(strstr(err.msg, "not initialized"));
	CHECK(upstream_client_ping(f.c, T, &err) == 0);
	CHECK(init(&f, &err) == 0);
	CHECK(strcmp(upstream_client_protocol(f.c), "2025-11-25") == 0);
	CHECK(json_is_true(json_object_get(
		json_object_get(upstream_client_capabilities(f.c), "tools"), "listChanged")));
	CHECK(strcmp(json_string_value(json_object_get(upstream_client_server_info(f.c), "name")),
		     "fake") == 0);
	CHECK(strcmp(upstream_client_instructions(f.c), "A fake server for tests.") == 0);
	/* two pages, one tool each */
	CHECK(upstream_client_list_tools(f.c, T, &tools, &err) == 0);
	CHECK(json_array_size(tools) == 2);
	CHECK(strcmp(json_string_value(json_object_get(json_array_get(tools, 1), "name")), "add") ==
	      0);
	json_decref(tools);
	args = json_pack("{s:s}", "text", "hello");
	rc = upstream_client_call_tool(f.c, "echo", args, NULL, T, &res, &err);
	CHECK(rc == 0);
	CHECK(json_equal(json_object_get(res, "structuredContent"), args));
	json_decref(res);
	json_decref(args);
	/* a method the server lacks: its error, as it gave it */
	CHECK(upstream_client_request(f.c, "resources/list", NULL, T, &res, &err) == 1);
	CHECK(json_integer_value(json_object_get(res, "code")) == -32601);
	CHECK(strstr(err.msg, "no such method: resources/list (code -32601)"));
	json_decref(res);
	CHECK(upstream_client_ping(f.c, T, &err) == 0);
	upstream_client_get_stats(f.c, &st);
	CHECK(st.garbage == 0 && st.unexpected == 0 && st.dropped == 0);
	CHECK(!upstream_client_broken(f.c, NULL, 0));
	fake_stop(&f);
	return 0;
}

static int test_noinit(void)
{
	struct timespec t0, t1;
	struct tg_error err;
	struct fake f;
	char why[256];

	CHECK(fake_start(&f, &ops, "noinit", NULL) == 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(upstream_client_initialize(f.c, "t", "0", NULL, 300, &err) < 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	CHECK(err.code == TG_ERR_LIMIT);
	CHECK(strstr(err.msg, "initialize: no answer within 300 ms"));
	CHECK(t1.tv_sec - t0.tv_sec < 3);
	CHECK(upstream_client_broken(f.c, why, sizeof(why)));
	CHECK(strstr(why, "initialize"));
	/* broken stays broken */
	CHECK(upstream_client_ping(f.c, T, &err) < 0);
	CHECK(err.code == TG_ERR_UNAVAILABLE);
	fake_stop(&f);
	return 0;
}

static int test_version(void)
{
	struct tg_error err;
	struct fake f;

	CHECK(fake_start(&f, &ops, "version", "2024-11-05") == 0);
	CHECK(init(&f, &err) < 0);
	CHECK(strstr(err.msg, "protocol version \"2024-11-05\""));
	CHECK(upstream_client_broken(f.c, NULL, 0));
	fake_stop(&f);
	CHECK(fake_start(&f, &ops, "version", "2025-03-26") == 0);
	CHECK(init(&f, &err) == 0);
	CHECK(strcmp(upstream_client_protocol(f.c), "2025-03-26") == 0);
	fake_stop(&f);
	return 0;
}

static int test_garbage(void)
{
	struct upstream_client_stats st;
	struct tg_error err;
	struct fake f;
	json_t *tools;

	/* a few stray lines: counted, dropped, the answers still come */
	CHECK(fake_start(&f, &ops, "garbage", "3") == 0);
	CHECK(init(&f, &err) == 0);
	CHECK(upstream_client_list_tools(f.c, T, &tools, &err) == 0);
	CHECK(json_array_size(tools) == 2);
	json_decref(tools);
	upstream_client_get_stats(f.c, &st);
	CHECK(st.garbage == 9);
	CHECK(!upstream_client_broken(f.c, NULL, 0));
	fake_stop(&f);
	/* a server that writes mostly garbage: malformed, broken */
	CHECK(fake_start(&f, &ops, "garbage", "100") == 0);
	CHECK(init(&f, &err) < 0);
	CHECK(strstr(err.msg, "malformed: more than 64 lines"));
	fake_stop(&f);
	return 0;
}

static int test_oversized(void)
{
	struct tg_error err;
	struct fake f;
	json_t *res;
	char why[256];

	CHECK(fake_start(&f, &ops, "oversized", NULL) == 0);
	CHECK(init(&f, &err) == 0);
	CHECK(upstream_client_call_tool(f.c, "echo", NULL, NULL, 5000, &res, &err) < 0);
	CHECK(res == NULL);
	CHECK(err.code == TG_ERR_UNAVAILABLE);
	CHECK(strstr(err.msg,
		     "tools/call: upstream connection broken: a message over 4194304 bytes"));
	CHECK(upstream_client_broken(f.c, why, sizeof(why)));
	CHECK(upstream_client_ping(f.c, T, &err) < 0);
	CHECK(strstr(err.msg, "over 4194304 bytes"));
	fake_stop(&f);
	return 0;
}

static int test_unknown_ids(void)
{
	struct upstream_client_stats st;
	struct tg_error err;
	struct fake f;

	CHECK(fake_start(&f, &ops, "unknown", NULL) == 0);
	CHECK(init(&f, &err) == 0);
	CHECK(upstream_client_ping(f.c, T, &err) == 0);
	/* initialize: one unknown id, one answer twice; ping's unknown id
	 * came before its answer */
	upstream_client_get_stats(f.c, &st);
	CHECK(st.unexpected >= 3);
	CHECK(!upstream_client_broken(f.c, NULL, 0));
	fake_stop(&f);
	return 0;
}

static int test_flood(void)
{
	struct upstream_client_stats st;
	struct tg_error err;
	struct fake f;
	json_t *res;

	seen.slow = 1;
	CHECK(fake_start(&f, &ops, "flood", "5000") == 0);
	CHECK(init(&f, &err) == 0);
	/* the answer comes while the callback sleeps: the reader is free */
	CHECK(upstream_client_call_tool(f.c, "echo", NULL, NULL, T, &res, &err) == 0);
	json_decref(res);
	upstream_client_get_stats(f.c, &st);
	CHECK(st.dropped > 0 && st.dropped < 5000);
	fake_stop(&f);
	return 0;
}

struct canceller {
	struct upstream_client *c;
	int64_t id;
};

static void *cancel_later(void *arg)
{
	struct canceller *k = arg;

	usleep(100 * 1000);
	upstream_client_cancel(k->c, k->id, "by the test");
	return NULL;
}

/* The fake server's report of the cancellation it got, within 2 s. */
static int wait_message(const char *want)
{
	int i, found = 0;

	for (i = 0; i < 200 && !found; i++) {
		pthread_mutex_lock(&seen.lock);
		found = strcmp(seen.last_message, want) == 0;
		pthread_mutex_unlock(&seen.lock);
		if (!found)
			usleep(10 * 1000);
	}
	if (!found)
		fprintf(stderr, "last message: \"%s\", wanted \"%s\"\n", seen.last_message, want);
	return found;
}

static int test_hang(void)
{
	struct canceller k;
	struct tg_error err;
	struct fake f;
	pthread_t t;
	json_t *res, *params = json_pack("{s:s,s:{}}", "name", "echo", "arguments");
	char want[64];

	CHECK(fake_start(&f, &ops, "hang", NULL) == 0);
	CHECK(init(&f, &err) == 0);
	/* timed out: the server is told */
	k.c = f.c;
	k.id = upstream_client_send(f.c, "tools/call", params, &err);
	CHECK(k.id > 0);
	CHECK(upstream_client_wait(f.c, k.id, 200, &res, &err) < 0);
	CHECK(err.code == TG_ERR_LIMIT);
	CHECK(strstr(err.msg, "tools/call: no answer within 200 ms"));
	snprintf(want, sizeof(want), "cancelled %lld: timed out", (long long)k.id);
	CHECK(wait_message(want));
	/* cancelled from another thread: the waiter wakes, the server is told */
	k.id = upstream_client_send(f.c, "tools/call", params, &err);
	CHECK(k.id > 0);
	CHECK(pthread_create(&t, NULL, cancel_later, &k) == 0);
	CHECK(upstream_client_wait(f.c, k.id, 5000, &res, &err) < 0);
	pthread_join(t, NULL);
	CHECK(strstr(err.msg, "tools/call: cancelled: by the test"));
	snprintf(want, sizeof(want), "cancelled %lld: by the test", (long long)k.id);
	CHECK(wait_message(want));
	/* the connection is whole */
	CHECK(upstream_client_ping(f.c, T, &err) == 0);
	json_decref(params);
	fake_stop(&f);
	return 0;
}

static int test_sampling(void)
{
	const struct upstream_client_ops none = { NULL, NULL, NULL };
	struct upstream_client_stats st;
	struct tg_error err;
	struct fake f;
	json_t *res, *sc;

	seen.answer_sampling = 1;
	CHECK(fake_start(&f, &ops, "sampling", NULL) == 0);
	CHECK(init(&f, &err) == 0);
	CHECK(upstream_client_call_tool(f.c, "echo", NULL, NULL, T, &res, &err) == 0);
	sc = json_object_get(res, "structuredContent");
	CHECK(strcmp(json_string_value(json_object_get(json_object_get(sc, "sampling"), "model")),
		     "m") == 0);
	CHECK(json_is_object(json_object_get(sc, "ping")) &&
	      json_object_size(json_object_get(sc, "ping")) == 0);
	CHECK(json_integer_value(json_object_get(
		      json_object_get(json_object_get(sc, "roots"), "error"), "code")) == -32000);
	json_decref(res);
	upstream_client_get_stats(f.c, &st);
	CHECK(st.requests == 2); /* ping is the client's own */
	fake_stop(&f);
	/* no callback: method not found */
	CHECK(fake_start(&f, &none, "sampling", NULL) == 0);
	CHECK(init(&f, &err) == 0);
	CHECK(upstream_client_call_tool(f.c, "echo", NULL, NULL, T, &res, &err) == 0);
	sc = json_object_get(res, "structuredContent");
	sc = json_object_get(json_object_get(sc, "sampling"), "error");
	CHECK(json_integer_value(json_object_get(sc, "code")) == -32601);
	json_decref(res);
	fake_stop(&f);
	return 0;
}

/* A request answered later, from another thread: the dispatcher is free
 * meanwhile, and the answer reaches the server; the callback is given the
 * request's read sequence number; an answer over the ceiling is refused
 * (TG_ERR_LIMIT), nothing written, and the request may be answered
 * again. */
static int test_deferred(void)
{
	struct upstream_client_stats st;
	struct tg_error err;
	struct fake f;
	json_t *res, *id = NULL, *big;
	uint64_t before;
	int64_t call;
	char *text;
	int i;

	seen.defer_sampling = 1;
	CHECK(fake_start(&f, &ops, "sampling", NULL) == 0);
	CHECK(init(&f, &err) == 0);
	before = upstream_client_read_seq(f.c);
	call = upstream_client_send(f.c, "tools/call", NULL, &err);
	CHECK(call > 0);
	for (i = 0; i < 200 && !id; i++) {
		usleep(10 * 1000);
		pthread_mutex_lock(&seen.lock);
		id = seen.deferred;
		seen.deferred = NULL;
		pthread_mutex_unlock(&seen.lock);
	}
	CHECK(id);
	/* not answered yet, and nothing waits on the dispatcher */
	CHECK(upstream_client_flush(f.c, T) == 0);
	upstream_client_get_stats(f.c, &st);
	CHECK(st.requests == 0);
	CHECK(seen.deferred_seq > before && seen.deferred_seq <= upstream_client_read_seq(f.c));
	/* over the ceiling: not written, the connection whole */
	text = malloc(UPSTREAM_MAX_MESSAGE + 1);
	CHECK(text);
	memset(text, 'x', UPSTREAM_MAX_MESSAGE);
	text[UPSTREAM_MAX_MESSAGE] = '\0';
	big = json_pack("{s:s}", "model", text);
	free(text);
	CHECK(upstream_client_answer(f.c, id, big, 0, NULL, &err) < 0 &&
	      err.code == TG_ERR_LIMIT);
	upstream_client_get_stats(f.c, &st);
	CHECK(st.requests == 0 && !upstream_client_broken(f.c, NULL, 0));
	CHECK(upstream_client_answer(f.c, id, json_pack("{s:s}", "model", "later"), 0, NULL,
				     NULL) == 0);
	json_decref(id);
	CHECK(upstream_client_wait(f.c, call, T, &res, &err) == 0);
	CHECK(strcmp(json_string_value(json_object_get(json_object_get(
		     json_object_get(res, "structuredContent"), "sampling"), "model")),
		     "later") == 0);
	json_decref(res);
	upstream_client_get_stats(f.c, &st);
	CHECK(st.requests == 2);
	fake_stop(&f);
	seen.defer_sampling = 0;
	return 0;
}

static int test_rugpull(void)
{
	struct upstream_client_stats st;
	struct tg_error err;
	struct fake f;
	json_t *tools, *res;
	int i, n = 0;

	CHECK(fake_start(&f, &ops, "rugpull", "2") == 0);
	CHECK(init(&f, &err) == 0);
	CHECK(upstream_client_list_tools(f.c, T, &tools, &err) == 0);
	CHECK(strcmp(json_string_value(json_object_get(json_array_get(tools, 0), "description")),
		     "Echoes its arguments.") == 0);
	json_decref(tools);
	for (i = 0; i < 2; i++) {
		CHECK(upstream_client_call_tool(f.c, "echo", NULL, NULL, T, &res, &err) == 0);
		json_decref(res);
	}
	upstream_client_get_stats(f.c, &st);
	CHECK(st.list_changed == 1);
	for (i = 0; i < 200 && !n; i++) {
		pthread_mutex_lock(&seen.lock);
		n = (int)seen.list_changed;
		pthread_mutex_unlock(&seen.lock);
		if (!n)
			usleep(10 * 1000);
	}
	CHECK(n == 1);
	CHECK(upstream_client_list_tools(f.c, T, &tools, &err) == 0);
	CHECK(strstr(json_string_value(json_object_get(json_array_get(tools, 0), "description")),
		     "id_rsa"));
	json_decref(tools);
	fake_stop(&f);
	return 0;
}

static int test_eof(void)
{
	struct tg_error err;
	struct fake f;
	json_t *res;

	CHECK(fake_start(&f, &ops, "eof", NULL) == 0);
	CHECK(init(&f, &err) == 0);
	CHECK(upstream_client_call_tool(f.c, "echo", NULL, NULL, T, &res, &err) < 0);
	CHECK(err.code == TG_ERR_UNAVAILABLE);
	CHECK(strstr(err.msg, "EOF"));
	CHECK(upstream_client_notify(f.c, "notifications/x", NULL, &err) < 0);
	CHECK(strstr(err.msg, "EOF"));
	fake_stop(&f);
	return 0;
}

/* upstream_client_handle_line without threads (the fuzzer's way): one
 * line at a time, the queue drained by hand. */
static int test_lines(void)
{
	static const char note[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}";
	struct upstream_client_stats st;
	struct upstream_client *c;
	struct tg_error err;
	int to[2], from[2];
	char why[256];
	unsigned i;

	CHECK(pipe2(to, O_CLOEXEC) == 0 && pipe2(from, O_CLOEXEC) == 0);
	CHECK(upstream_client_new(from[0], to[1], NULL, &c, &err) == 0);
	for (i = 0; i < UPSTREAM_MAX_QUEUE + 10; i++)
		upstream_client_handle_line(c, note, sizeof(note) - 1);
	upstream_client_handle_line(c, "", 0);
	upstream_client_handle_line(c, "\r", 1);
	upstream_client_get_stats(c, &st);
	CHECK(st.dropped == 10 && st.garbage == 0);
	CHECK(upstream_client_drain(c) == UPSTREAM_MAX_QUEUE);
	for (i = 0; i < UPSTREAM_MAX_GARBAGE; i++)
		upstream_client_handle_line(c, "{\"jsonrpc\":\"1.0\"}", 17);
	CHECK(!upstream_client_broken(c, NULL, 0));
	upstream_client_handle_line(c, "nope", 4);
	CHECK(upstream_client_broken(c, why, sizeof(why)));
	CHECK(strstr(why, "malformed") && strstr(why, "not JSON"));
	upstream_client_free(c);
	close(to[0]);
	close(from[1]);
	/* a server gone: the write is EPIPE, never a SIGPIPE that kills */
	signal(SIGPIPE, SIG_DFL);
	CHECK(pipe2(to, O_CLOEXEC) == 0 && pipe2(from, O_CLOEXEC) == 0);
	close(to[0]);
	CHECK(upstream_client_new(from[0], to[1], NULL, &c, &err) == 0);
	CHECK(upstream_client_notify(c, "notifications/x", NULL, &err) < 0);
	CHECK(strstr(err.msg, "Broken pipe"));
	CHECK(upstream_client_broken(c, NULL, 0));
	upstream_client_free(c);
	close(from[1]);
	return 0;
}

const struct unit_test upstream_client_tests[] = {
	{ "upstream_client/normal", test_normal },
	{ "upstream_client/noinit", test_noinit },
	{ "upstream_client/version", test_version },
	{ "upstream_client/garbage", test_garbage },
	{ "upstream_client/oversized", test_oversized },
	{ "upstream_client/unknown_ids", test_unknown_ids },
	{ "upstream_client/flood", test_flood },
	{ "upstream_client/hang", test_hang },
	{ "upstream_client/sampling", test_sampling },
	{ "upstream_client/deferred", test_deferred },
	{ "upstream_client/rugpull", test_rugpull },
	{ "upstream_client/eof", test_eof },
	{ "upstream_client/lines", test_lines },
	UNIT_TESTS_END
};
