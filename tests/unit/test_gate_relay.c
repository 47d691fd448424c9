/*
 * Unit tests: an upstream server's requests to the caller's client through
 * the gate (src/gate/upstreams.c over src/exec/upstream_run.c and
 * upstream_relay.c; docs/UPSTREAMS.md, "Relay"), with
 * tests/upstream/fake_server.py (mode runner, its ask tool) in the
 * sandbox: a request the declaration's relay names reaches the call's ask
 * hook redacted, and the hook's answer the server; one it does not name
 * never reaches the hook; a caller that cannot be asked gets the server an
 * error; a call stopped to ask its client first (MRTR) is recorded
 * input_required.
 */
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gatefix.h"
#include "unit.h"

#define FAKE_ARGV "\"transport\":\"stdio\",\"argv\":[\"/usr/bin/python3\"," \
		  "\"/srv/fake/fake_server.py\",\"runner\"],\"sandbox\":{\"mounts\":" \
		  "[{\"host\":\"@FAKE@\",\"inside\":\"/srv/fake\"}]}"
#define SECRET "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB"

static const char *const none[] = { NULL };

/* What the caller's client was asked, and how it answers. */
struct client {
	pthread_mutex_t lock;
	int n;
	char last[1024];
	int cancel_w;                 /* >= 0: stop the call to ask first (MRTR) */
	volatile int suspended;       /* the call's input_required */
};

static char *client_ask(void *ctx, const char *request, const volatile int *stop)
{
	struct client *c = ctx;

	(void)stop;
	pthread_mutex_lock(&c->lock);
	c->n++;
	snprintf(c->last, sizeof(c->last), "%s", request);
	pthread_mutex_unlock(&c->lock);
	if (c->cancel_w >= 0) {
		/* as session_ask.c's tool_ask_modern: the run stopped, an
		 * error the server must never see */
		c->suspended = 1;
		if (write(c->cancel_w, "x", 1) < 0)
			return NULL;
		return strdup("{\"error\":{\"code\":-32603,\"message\":\"input required\"}}");
	}
	return strdup("{\"result\":{\"role\":\"assistant\",\"model\":\"m-answer\"}}");
}

/* fake.ask called with args; ask the client with cl (NULL: it cannot be
 * asked); the result's structured text copied into out (size bytes). 0,
 * or -1 on a protocol error. */
static int ask_call(struct fix *f, const char *args, struct client *cl, int cancel_fd,
		    struct tg_call_result *r)
{
	struct tg_call c = { 0 };
	struct tg_error err;

	c.principal = "alice";
	c.tool = "fake.ask";
	c.arguments = args;
	c.arguments_len = strlen(args);
	c.cancel_fd = cancel_fd;
	if (cl) {
		c.ask = client_ask;
		c.notify_ctx = cl;
		c.input_required = &cl->suspended;
	}
	if (tg_gate_call(f->gate, &c, r, &err) < 0) {
		fprintf(stderr, "call: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* The code of the first answer in r's structured answers, 0 when none. */
static long long first_code(const struct tg_call_result *r)
{
	json_t *s = json_loads(r->structured_json ? r->structured_json : "null", 0, NULL);
	long long code = json_integer_value(json_object_get(json_object_get(
		json_array_get(json_object_get(s, "answers"), 0), "error"), "code"));

	json_decref(s);
	return code;
}

static int relayed(void)
{
	static const char *const ups[] = {
		"fake", "{" FAKE_ARGV ",\"relay\":[\"sampling\"],"
			"\"tools\":{\"ask\":{\"authority\":\"read\"}}}",
		NULL,
	};
	struct fix_spec spec = { "gaterelay", none, NULL, TG_ANOMALY_DEFAULT, ups };
	struct client cl = { .lock = PTHREAD_MUTEX_INITIALIZER, .cancel_w = -1 };
	struct tg_call_result r;
	struct fix f;
	json_t *recs;
	int p[2];

	if (fix_open(&f, &spec) < 0)
		return -1;
	CHECK(fix_wait_tool(f.gate, "fake.ask", 1) == 0);
	/* declared: the client is asked, without the secret, and the server
	 * gets its answer */
	CHECK(ask_call(&f, "{\"method\":\"sampling/createMessage\",\"params\":{\"messages\":[{"
		       "\"role\":\"user\",\"content\":{\"type\":\"text\",\"text\":\"key "
		       SECRET "\"}}],\"maxTokens\":5}}", &cl, -1, &r) == 0);
	CHECK(!r.is_error && r.structured_json && strstr(r.structured_json, "m-answer"));
	tg_call_result_release(&r);
	CHECK(cl.n == 1 && strstr(cl.last, "sampling/createMessage") &&
	      strstr(cl.last, "[REDACTED") && !strstr(cl.last, "ghp_0123456789"));
	/* not declared: refused, the client never asked */
	CHECK(ask_call(&f, "{\"method\":\"elicitation/create\",\"params\":{}}", &cl, -1, &r) == 0);
	CHECK(!r.is_error && first_code(&r) == -32601 && cl.n == 1);
	tg_call_result_release(&r);
	/* a caller whose client cannot be asked: the server gets an error */
	CHECK(ask_call(&f, "{\"method\":\"sampling/createMessage\",\"params\":{}}", NULL, -1,
		       &r) == 0);
	CHECK(!r.is_error && first_code(&r) == -32601);
	tg_call_result_release(&r);
	/* stopped to ask its client first (MRTR): input_required, as a
	 * command tool stopped so is */
	CHECK(pipe2(p, O_CLOEXEC) == 0);
	cl.cancel_w = p[1];
	CHECK(ask_call(&f, "{\"method\":\"sampling/createMessage\",\"params\":{}}", &cl, p[0],
		       &r) == 0);
	CHECK(r.is_error && cl.n == 2 && cl.suspended);
	tg_call_result_release(&r);
	close(p[0]);
	close(p[1]);
	fix_close(&f);
	recs = fix_records(f.log);
	CHECK(recs && fix_count(recs, "call", "fake.ask", "ok", NULL) == 3);
	CHECK(fix_count(recs, "call", "fake.ask", "input_required", NULL) == 1);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* Without relay, nothing the server asks reaches the client. */
static int not_declared(void)
{
	static const char *const ups[] = {
		"fake", "{" FAKE_ARGV ",\"tools\":{\"ask\":{\"authority\":\"read\"}}}",
		NULL,
	};
	struct fix_spec spec = { "gaterelay", none, NULL, TG_ANOMALY_DEFAULT, ups };
	struct client cl = { .lock = PTHREAD_MUTEX_INITIALIZER, .cancel_w = -1 };
	struct tg_call_result r;
	struct fix f;

	if (fix_open(&f, &spec) < 0)
		return -1;
	CHECK(fix_wait_tool(f.gate, "fake.ask", 1) == 0);
	CHECK(ask_call(&f, "{\"requests\":[{\"method\":\"sampling/createMessage\"},"
		       "{\"method\":\"roots/list\"}]}", &cl, -1, &r) == 0);
	CHECK(!r.is_error && first_code(&r) == -32601 && cl.n == 0);
	CHECK(strstr(r.structured_json, "relay does not name roots"));
	tg_call_result_release(&r);
	fix_remove(&f);
	return 0;
}

/* The server is told, at initialize, the client capabilities its relay
 * names, and none other: servers offer what asks only to a client that
 * says it answers (server-everything's sampling tool, for one). */
static int declared_at_initialize(void)
{
	static const char *const ups[] = {
		"fake", "{" FAKE_ARGV ",\"relay\":[\"sampling\",\"elicitation\"],"
			"\"tools\":{\"lists\":{\"authority\":\"read\"}}}",
		"other", "{" FAKE_ARGV ",\"tools\":{\"lists\":{\"authority\":\"read\"}}}",
		NULL,
	};
	struct fix_spec spec = { "gaterelayinit", none, NULL, TG_ANOMALY_DEFAULT, ups };
	char code[64], ticket[64], *out;
	struct fix f;

	if (fix_open(&f, &spec) < 0)
		return -1;
	CHECK(fix_wait_tool(f.gate, "fake.lists", 1) == 0 &&
	      fix_wait_tool(f.gate, "other.lists", 1) == 0);
	out = fix_call_text(&f, "fake.lists", "{}", NULL, code, ticket);
	CHECK(out && strstr(out, "\"sampling\":{}") && strstr(out, "\"elicitation\":{\"form\":{}}") &&
	      !strstr(out, "roots"));
	free(out);
	out = fix_call_text(&f, "other.lists", "{}", NULL, code, ticket);
	CHECK(out && strstr(out, "\"client\":{}"));
	free(out);
	fix_remove(&f);
	return 0;
}

const struct unit_test gate_relay_tests[] = {
	{ "gate_relay/declared_at_initialize", declared_at_initialize },
	{ "gate_relay/relayed", relayed },
	{ "gate_relay/not_declared", not_declared },
	UNIT_TESTS_END
};
