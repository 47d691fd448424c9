/*
 * Unit tests: the 2026-07-28 era on the upstream's side. The client's
 * handshake (src/upstream/client_mcp.c) against tests/upstream/fake_modern.py
 * and fake_server.py over pipes: discover agreed, refused, never answered;
 * and the runner's (src/exec/upstream_modern.c) with fake_modern.py in the
 * sandbox: the era chosen or forced by the declaration, _meta on every
 * request, multi round-trip requests asked of the call's hook and sent
 * again, a subscription that hears list_changed, cancellation.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec/upstream_run.h"
#include "toolgate/upstream.h"
#include "toolgate/version.h"
#include "unit.h"
#include "upstream/client.h"

#define T 8000 /* ms: the first call waits for the server's start */

/* ---- the client over pipes ---- */

struct piped {
	pid_t pid;
	struct upstream_client *c;
};

/* python3 tests/upstream/SCRIPT MODE, and a started client over its pipes. */
static int piped_start(struct piped *p, const char *script, const char *mode)
{
	char dir[PATH_MAX], path[PATH_MAX + 64];
	int to[2], from[2];
	struct tg_error err;

	if (unit_upstream_dir(dir) < 0 || pipe2(to, O_CLOEXEC) < 0 || pipe2(from, O_CLOEXEC) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, script);
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (p->pid == 0) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		execl("/usr/bin/python3", "python3", path, mode, (char *)NULL);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	return upstream_client_new(from[0], to[1], NULL, &p->c, &err) < 0 ||
	       upstream_client_start(p->c, &err) < 0 ? -1 : 0;
}

static void piped_stop(struct piped *p)
{
	upstream_client_free(p->c);
	kill(p->pid, SIGKILL);
	waitpid(p->pid, NULL, 0);
}

static int discover(struct piped *p, int ms, char *why, size_t size, struct tg_error *err)
{
	json_t *caps = json_pack("{s:{}}", "sampling");
	int rc = upstream_client_discover(p->c, "toolgate-test", "0", caps, ms, why, size, err);

	json_decref(caps);
	return rc;
}

static int client_discover(void)
{
	struct tg_error err;
	struct piped p;
	json_t *tools, *res, *meta;
	char why[256];

	CHECK(piped_start(&p, "fake_modern.py", "modern") == 0);
	CHECK(discover(&p, 2000, why, sizeof(why), &err) == 1);
	CHECK(upstream_client_modern(p.c) == 1);
	CHECK(strcmp(upstream_client_protocol(p.c), "2026-07-28") == 0);
	CHECK(json_is_true(json_object_get(json_object_get(upstream_client_capabilities(p.c),
							   "tools"), "listChanged")));
	CHECK(strcmp(json_string_value(json_object_get(upstream_client_server_info(p.c), "name")),
		     "fake-modern") == 0);
	CHECK(strcmp(upstream_client_instructions(p.c), "A fake 2026-07-28 server.") == 0);
	/* every request carries the era's _meta: both pages listed */
	CHECK(upstream_client_list_tools(p.c, 2000, &tools, &err) == 0);
	CHECK(json_array_size(tools) >= 10);
	json_decref(tools);
	/* over the caller's own members of those names, beside the others */
	meta = json_pack("{s:s,s:s}", UPSTREAM_META_VERSION, "1999-01-01", "progressToken", "p1");
	CHECK(upstream_client_call_tool(p.c, "meta", NULL, meta, 2000, &res, &err) == 0);
	json_decref(meta);
	meta = json_object_get(json_object_get(res, "structuredContent"), "meta");
	CHECK(strcmp(json_string_value(json_object_get(meta, UPSTREAM_META_VERSION)),
		     "2026-07-28") == 0);
	CHECK(json_object_get(json_object_get(meta, UPSTREAM_META_CAPABILITIES), "sampling"));
	CHECK(strcmp(json_string_value(json_object_get(json_object_get(meta,
		     "io.modelcontextprotocol/clientInfo"), "name")), "toolgate-test") == 0);
	CHECK(strcmp(json_string_value(json_object_get(meta, "progressToken")), "p1") == 0);
	json_decref(res);
	/* no ping in this era: discover stands for it */
	CHECK(upstream_client_ping(p.c, 2000, &err) == 0);
	piped_stop(&p);

	/* a 2026-07-28 server has no initialize */
	CHECK(piped_start(&p, "fake_modern.py", "modern") == 0);
	CHECK(upstream_client_initialize(p.c, "t", "0", NULL, 2000, &err) < 0);
	piped_stop(&p);

	/* a server of both eras: the newer */
	CHECK(piped_start(&p, "fake_modern.py", "dual") == 0);
	CHECK(discover(&p, 2000, why, sizeof(why), &err) == 1);
	piped_stop(&p);
	return 0;
}

static int client_fallback(void)
{
	struct tg_error err;
	struct piped p;
	char why[256];

	/* refused (-32601): not this era, the connection whole */
	CHECK(piped_start(&p, "fake_server.py", "normal") == 0);
	CHECK(discover(&p, 2000, why, sizeof(why), &err) == 0);
	CHECK(strstr(why, "server/discover") && strstr(why, "-32601"));
	CHECK(!upstream_client_modern(p.c));
	CHECK(upstream_client_initialize(p.c, "t", "0", NULL, 2000, &err) == 0);
	CHECK(strcmp(upstream_client_protocol(p.c), "2025-11-25") == 0);
	CHECK(upstream_client_ping(p.c, 2000, &err) == 0);
	piped_stop(&p);

	/* never answered: not this era once the probe's time is out */
	CHECK(piped_start(&p, "fake_server.py", "quietprobe") == 0);
	CHECK(discover(&p, 300, why, sizeof(why), &err) == 0);
	CHECK(strstr(why, "server/discover"));
	CHECK(upstream_client_initialize(p.c, "t", "0", NULL, 2000, &err) == 0);
	piped_stop(&p);
	return 0;
}

/* ---- the runner, the server in the sandbox ---- */

/* What the hook was asked, and how it answers. */
struct asked {
	pthread_mutex_t lock;
	int n;
	char last[1024];
	int hold;               /* answers "": the caller is asked by MRTR */
	int refuse;             /* answers an error */
	unsigned progress;      /* notify calls */
};

static char *ask(void *ctx, const char *request, const volatile int *stop)
{
	struct asked *a = ctx;
	json_t *q = json_loads(request, 0, NULL);
	const char *m = json_string_value(json_object_get(json_object_get(q, "request"),
							  "method"));
	char *out;

	(void)stop;
	pthread_mutex_lock(&a->lock);
	a->n++;
	snprintf(a->last, sizeof(a->last), "%s", request);
	pthread_mutex_unlock(&a->lock);
	if (a->hold)
		out = strdup("");
	else if (a->refuse)
		out = strdup("{\"error\":{\"code\":-1,\"message\":\"declined by the test\"}}");
	else if (m && strcmp(m, "sampling/createMessage") == 0)
		out = strdup("{\"result\":{\"role\":\"assistant\",\"model\":\"m\",\"content\":"
			     "{\"type\":\"text\",\"text\":\"sampled\"}}}");
	else
		out = strdup("{\"result\":{\"action\":\"accept\",\"content\":{\"ok\":true}}}");
	json_decref(q);
	return out;
}

static void notify(void *ctx, const char *event)
{
	struct asked *a = ctx;

	(void)event;
	pthread_mutex_lock(&a->lock);
	a->progress++;
	pthread_mutex_unlock(&a->lock);
}

/* A call of tool with args and hooks h: its result (owned), or NULL and err. */
static json_t *call(struct upstream_run *r, const char *tool, const char *args, int cancel_fd,
		    const struct upstream_run_call_hooks *h, struct tg_error *err)
{
	char *text = NULL;
	json_t *v;

	if (upstream_run_call_ex(r, tool, args, T, cancel_fd, h, &text, err) < 0)
		return NULL;
	v = json_loads(text, 0, NULL);
	free(text);
	return v;
}

static json_t *structured(json_t *res)
{
	return json_object_get(res, "structuredContent");
}

static int runner_modern(void)
{
	struct asked a = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct upstream_run_call_hooks h = { .notify = notify, .ctx = &a, .ask = ask };
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;
	uint64_t listing, now;
	char dir[64], *tools;
	json_t *v;
	int i;

	CHECK(unit_tmpdir(dir, "upmodern") == 0);
	CHECK(unit_declare_upstream(dir, "fake_modern.py\", \"modern\"",
		      ", \"relay\": [\"elicitation\", \"sampling\"]", &u) == 0);
	CHECK(upstream_run_new(u, NULL, &r, &err) == 0);
	CHECK(upstream_run_wait(r, T, &err) == 0);
	/* _meta on the call: the version, the relay's capabilities */
	v = call(r, "meta", "{}", -1, NULL, &err);
	CHECK(v && strcmp(json_string_value(json_object_get(json_object_get(structured(v), "meta"),
		     UPSTREAM_META_VERSION)), "2026-07-28") == 0);
	CHECK(json_object_get(json_object_get(structured(v), "caps"), "sampling") &&
	      json_object_get(json_object_get(json_object_get(structured(v), "caps"),
					      "elicitation"), "form") &&
	      !json_object_get(json_object_get(structured(v), "caps"), "roots"));
	json_decref(v);
	/* one round: asked, answered, sent again with the server's state */
	v = call(r, "confirm", "{\"message\":\"Go?\"}", -1, &h, &err);
	CHECK(v && json_is_true(json_object_get(json_object_get(json_object_get(structured(v),
		     "answer"), "content"), "ok")));
	CHECK(a.n == 1 && strstr(a.last, "\"method\":\"elicitation/create\"") &&
	      strstr(a.last, "\"key\":\"ok\"") && strstr(a.last, "Go?"));
	json_decref(v);
	/* two rounds, the first answer kept by the server's state */
	v = call(r, "twice", "{}", -1, &h, &err);
	CHECK(v && json_object_get(structured(v), "s") && json_object_get(structured(v), "e"));
	CHECK(a.n == 3);
	json_decref(v);
	/* its progress reaches the hook, as in the session era */
	v = call(r, "progress", "{\"n\":3}", -1, &h, &err);
	CHECK(v && a.progress == 3);
	json_decref(v);
	/* what the declaration does not relay is not declared: the server
	 * knows it cannot ask, and the hook is never asked */
	CHECK(!call(r, "roots", "{}", -1, &h, &err) && a.n == 3);
	CHECK(strstr(err.msg, "Missing required client capability: roots (code -32021)"));
	/* and one that asks anyway is refused by the runner */
	CHECK(!call(r, "roots", "{\"force\":true}", -1, &h, &err) && a.n == 3);
	CHECK(strstr(err.msg, "asks its client for roots/list, which its declaration does not "
		     "relay"));
	/* a call whose client cannot be asked */
	CHECK(!call(r, "confirm", "{\"message\":\"x\"}", -1, NULL, &err));
	CHECK(strstr(err.msg, "this call's client cannot be asked"));
	/* the client declines: the call's error says so */
	a.refuse = 1;
	CHECK(!call(r, "confirm", "{\"message\":\"x\"}", -1, &h, &err));
	CHECK(strstr(err.msg, "did not answer elicitation/create: declined by the test"));
	a.refuse = 0;
	/* the caller is asked by MRTR itself: the call stops */
	a.hold = 1;
	CHECK(!call(r, "confirm", "{\"message\":\"x\"}", -1, &h, &err));
	CHECK(strstr(err.msg, "stopped to ask its client first"));
	a.hold = 0;
	/* a server that asks on and on */
	i = a.n;
	CHECK(!call(r, "forever", "{}", -1, &h, &err));
	CHECK(strstr(err.msg, "still asks for input after 10 rounds") && a.n == i + 9);
	/* its tools change: heard on the subscription, listed again */
	free(upstream_run_tools(r, &listing));
	v = call(r, "change", "{\"description\":\"Changed by the test.\"}", -1, NULL, &err);
	CHECK(v);
	json_decref(v);
	for (i = 0; i < 100; i++) {
		tools = upstream_run_tools(r, &now);
		if (now != listing && strstr(tools, "Changed by the test."))
			break;
		free(tools);
		tools = NULL;
		usleep(50 * 1000);
	}
	CHECK(tools);
	free(tools);
	upstream_run_free(r);
	tg_upstream_free(u);
	unit_rmtree(dir);
	return 0;
}

static int runner_protocol(void)
{
	struct upstream_run_options fail = { .fail_fast = 1 };
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;
	char dir[64];
	json_t *v;

	CHECK(unit_tmpdir(dir, "upproto") == 0);
	/* auto: a session-era server is initialized after discover */
	CHECK(unit_declare_upstream(dir, "fake_server.py\", \"runner\"", "", &u) == 0);
	CHECK(upstream_run_new(u, NULL, &r, &err) == 0);
	v = call(r, "lists", "{}", -1, NULL, &err);
	CHECK(v);
	json_decref(v);
	upstream_run_free(r);
	tg_upstream_free(u);
	/* 2026-07-28 named: a session-era server is refused, saying why */
	CHECK(unit_declare_upstream(dir, "fake_server.py\", \"runner\"", ", \"protocol\": \"2026-07-28\"", &u) == 0);
	CHECK(upstream_run_new(u, &fail, &r, &err) == 0);
	CHECK(upstream_run_wait(r, T, &err) < 0);
	CHECK(strstr(err.msg, "does not speak 2026-07-28, which its declaration's protocol names"));
	CHECK(strstr(err.msg, "; declare \"protocol\": \"auto\" to speak its own"));
	upstream_run_free(r);
	tg_upstream_free(u);
	/* 2025-11-25 named: a 2026-07-28 server is never sent discover */
	CHECK(unit_declare_upstream(dir, "fake_modern.py\", \"modern\"", ", \"protocol\": \"2025-11-25\"", &u) == 0);
	CHECK(upstream_run_new(u, &fail, &r, &err) == 0);
	CHECK(upstream_run_wait(r, T, &err) < 0 && strstr(err.msg, "initialize"));
	upstream_run_free(r);
	tg_upstream_free(u);
	/* a typo is refused at load, naming the field */
	CHECK(unit_declare_upstream(dir, "fake_modern.py\", \"modern\"", ", \"protocol\": \"2026\"", &u) < 0);
	unit_rmtree(dir);
	return 0;
}

/* The log's lines, kept. */
static struct {
	pthread_mutex_t lock;
	char text[8192];
	size_t len;
} said = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void keep_log(void *ctx, enum tg_log_level level, const char *message)
{
	(void)ctx;
	(void)level;
	pthread_mutex_lock(&said.lock);
	said.len += (size_t)snprintf(said.text + said.len, sizeof(said.text) - said.len, "%s\n",
				     message);
	if (said.len >= sizeof(said.text))
		said.len = sizeof(said.text) - 1;
	pthread_mutex_unlock(&said.lock);
}

/* The runner's cancellation in this era: notifications/cancelled, as the
 * server's stderr (in the log) says. */
static int runner_cancel(void)
{
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;
	char dir[64];
	int p[2], i, yes = 0;

	CHECK(unit_tmpdir(dir, "upmcancel") == 0);
	CHECK(unit_declare_upstream(dir, "fake_modern.py\", \"modern\"", "", &u) == 0);
	tg_log_set(keep_log, NULL);
	CHECK(upstream_run_new(u, NULL, &r, &err) == 0);
	CHECK(upstream_run_wait(r, T, &err) == 0);
	CHECK(pipe(p) == 0);
	CHECK(write(p[1], "x", 1) == 1);
	CHECK(!call(r, "hang", "{}", p[0], NULL, &err) && strstr(err.msg, "cancelled"));
	for (i = 0; i < 100 && !yes; i++) {
		pthread_mutex_lock(&said.lock);
		yes = strstr(said.text, "cancelled ") && strstr(said.text, "cancelled by the caller");
		pthread_mutex_unlock(&said.lock);
		usleep(20 * 1000);
	}
	CHECK(yes);
	close(p[0]);
	close(p[1]);
	upstream_run_free(r);
	tg_log_set(NULL, NULL);
	tg_upstream_free(u);
	unit_rmtree(dir);
	return 0;
}

/* ---- hostile and edge-case servers (tool raw) ---- */

/* A hook that keeps the contract of include/toolgate/gate.h and
 * docs/PIPELINE.md as session_ask.c's task_ask does: a question marked
 * "more" is answered "" (nothing now), and the last of the breath gets
 * every answer, one line each, in the order asked. */
static char *breath_ask(void *ctx, const char *request, const volatile int *stop)
{
	struct asked *a = ctx;
	json_t *q = json_loads(request, 0, NULL);
	int more = json_is_true(json_object_get(q, "more"));
	char *out;
	int i, n;

	(void)stop;
	json_decref(q);
	pthread_mutex_lock(&a->lock);
	a->n++;
	n = ++a->hold; /* questions of this breath so far */
	if (!more)
		a->hold = 0;
	pthread_mutex_unlock(&a->lock);
	if (more)
		return strdup("");
	out = calloc((size_t)n, 80);
	for (i = 0; out && i < n; i++)
		strcat(strcat(out, i ? "\n" : ""),
		       "{\"result\":{\"action\":\"accept\",\"content\":{\"ok\":true}}}");
	return out;
}

#define FORM "{\"method\":\"elicitation/create\",\"params\":{\"message\":\"%s\"," \
	     "\"requestedSchema\":{\"type\":\"object\"}%s}}"

static int together(void)
{
	struct asked a = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct upstream_run_call_hooks hb = { .ctx = &a, .ask = breath_ask };
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;
	char dir[64], args[2048];
	json_t *v;

	CHECK(unit_tmpdir(dir, "upreview") == 0);
	CHECK(unit_declare_upstream(dir, "fake_modern.py\", \"modern\"",
		      ", \"relay\": [\"elicitation\"]", &u) == 0);
	CHECK(upstream_run_new(u, NULL, &r, &err) == 0);
	CHECK(upstream_run_wait(r, T, &err) == 0);

	/* two questions in one round, asked of a client that answers them
	 * together as the hook's contract says (a task's client): "" for
	 * the first, both lines with the last */
	snprintf(args, sizeof(args), "{\"reply\":{\"resultType\":\"input_required\","
		 "\"requestState\":\"s1\",\"inputRequests\":{\"a\":" FORM ",\"b\":" FORM
		 "}}}", "first?", "", "second?", "");
	v = call(r, "raw", args, -1, &hb, &err);
	CHECK(v && json_object_get(json_object_get(json_object_get(structured(v), "retry"),
						   "inputResponses"), "b"));
	json_decref(v);
	upstream_run_free(r);
	tg_upstream_free(u);
	unit_rmtree(dir);
	return 0;
}

static int checked_first(void)
{
	struct asked a = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct upstream_run_call_hooks h = { .ctx = &a, .ask = ask };
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;
	char dir[64], args[2048];
	json_t *v;

	CHECK(unit_tmpdir(dir, "upreview2") == 0);
	CHECK(unit_declare_upstream(dir, "fake_modern.py\", \"modern\"",
		      ", \"relay\": [\"elicitation\"]", &u) == 0);
	CHECK(upstream_run_new(u, NULL, &r, &err) == 0);
	CHECK(upstream_run_wait(r, T, &err) == 0);
	/* a round whose second question the relay refuses (URL mode): the
	 * call fails before anyone is asked the first */
	snprintf(args, sizeof(args), "{\"reply\":{\"resultType\":\"input_required\","
		 "\"inputRequests\":{\"a\":" FORM ",\"b\":" FORM "}}}", "Pay 500 EUR?", "",
		 "then open this", ",\"mode\":\"url\",\"url\":\"https://evil.example/\"");
	v = call(r, "raw", args, -1, &h, &err);
	CHECK(!v && strstr(err.msg, "url"));
	CHECK(a.n == 0); /* nothing asked of a round the call cannot finish */
	upstream_run_free(r);
	tg_upstream_free(u);
	unit_rmtree(dir);
	return 0;
}

const struct unit_test upstream_modern_tests[] = {
	{ "upstream_modern/client_discover", client_discover },
	{ "upstream_modern/client_fallback", client_fallback },
	{ "upstream_modern/runner_modern", runner_modern },
	{ "upstream_modern/together", together },
	{ "upstream_modern/checked_first", checked_first },
	{ "upstream_modern/runner_protocol", runner_protocol },
	{ "upstream_modern/runner_cancel", runner_cancel },
	UNIT_TESTS_END
};
