/* Unit tests: the MCP dispatch (src/mcp/session.c, stdio.c) without a
 * socket: tg_mcp_serve_stdio in a thread over two pipes, on a gate with a
 * policy, a real store and a real audit log (gatefix.h); the stdio
 * principal's scopes come from the policy. Each answer is read with a
 * time limit, so a server that does not answer fails the test at once. */
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "toolgate/mcp.h"
#include "gatefix.h"
#include "unit.h"

#define READ_MS 5000 /* one answer's wait: a builtin answers in microseconds */

static const char *const contracts[] = {
	"{\"name\":\"echo\",\"version\":\"1.0.0\"," FIX_OWNER ",\"authority\":\"read\","
	"\"input_schema\":{\"type\":\"object\"}," FIX_ECHO "}",
	"{\"name\":\"other\",\"version\":\"1.0.0\"," FIX_OWNER ",\"authority\":\"read\","
	"\"input_schema\":{\"type\":\"object\"}," FIX_ECHO "}",
	NULL,
};

#define POLICY "{\"audience\":\"gw\",\"max_token_ttl\":\"1h\",\"principals\":{" \
	"\"agent\":{\"scopes\":[\"echo:read\"]}}}"

/* One stdio session: the server's thread between two pipes. */
struct session {
	struct tg_mcp *mcp;
	int to_server, from_server;  /* the client's ends */
	int in, out;                 /* the server's */
	pthread_t thread;
	int started, rc;
	char buf[1 << 16];
	size_t len;
};

static void *serve(void *arg)
{
	struct session *s = arg;
	struct tg_error err;

	s->rc = tg_mcp_serve_stdio(s->mcp, s->in, s->out, &err);
	close(s->out); /* the client reads the end of the answers */
	return NULL;
}

static int start(struct session *s, struct tg_mcp *mcp)
{
	int a[2], b[2];

	memset(s, 0, sizeof(*s));
	s->mcp = mcp;
	if (pipe2(a, O_CLOEXEC) < 0)
		return -1;
	if (pipe2(b, O_CLOEXEC) < 0) {
		close(a[0]);
		close(a[1]);
		return -1;
	}
	s->in = a[0];
	s->to_server = a[1];
	s->from_server = b[0];
	s->out = b[1];
	if (pthread_create(&s->thread, NULL, serve, s) != 0)
		return -1;
	s->started = 1;
	return 0;
}

/* The client closes its side: the server ends (0), its answers all read. */
static int stop(struct session *s)
{
	if (s->to_server >= 0)
		close(s->to_server);
	s->to_server = -1;
	if (s->started)
		pthread_join(s->thread, NULL);
	s->started = 0;
	close(s->in);
	close(s->from_server);
	return s->rc;
}

static int send_line(struct session *s, const char *line)
{
	size_t n = strlen(line);

	return write(s->to_server, line, n) == (ssize_t)n && write(s->to_server, "\n", 1) == 1
		       ? 0 : -1;
}

/* The server's next line, parsed (any JSON), waiting at most READ_MS:
 * NULL when none came (said on stderr). */
static json_t *next_line(struct session *s)
{
	for (;;) {
		char *nl = memchr(s->buf, '\n', s->len);
		struct pollfd p = { s->from_server, POLLIN, 0 };
		ssize_t n;

		if (nl) {
			size_t line = (size_t)(nl - s->buf);
			json_t *j = json_loadb(s->buf, line, JSON_DECODE_ANY, NULL);

			if (!j)
				fprintf(stderr, "# not JSON: %.*s\n", (int)line, s->buf);
			memmove(s->buf, nl + 1, s->len - line - 1);
			s->len -= line + 1;
			return j;
		}
		if (s->len == sizeof(s->buf) || poll(&p, 1, READ_MS) != 1) {
			fprintf(stderr, "# no answer within %d ms\n", READ_MS);
			return NULL;
		}
		n = read(s->from_server, s->buf + s->len, sizeof(s->buf) - s->len);
		if (n <= 0) {
			fprintf(stderr, "# the server closed its output\n");
			return NULL;
		}
		s->len += (size_t)n;
	}
}

/* The answer to request id (NULL: an answer whose id is null), the lines
 * before it (notifications) passed over. */
static json_t *answer(struct session *s, json_int_t id, int null_id)
{
	json_t *j;

	while ((j = next_line(s)) != NULL) {
		json_t *got = json_object_get(j, "id");

		if (null_id ? json_is_null(got) : json_integer_value(got) == id)
			return j;
		json_decref(j);
	}
	return NULL;
}

/* The code of an error answer, 0 for none. */
static json_int_t error_code(json_t *a)
{
	return json_integer_value(json_object_get(json_object_get(a, "error"), "code"));
}

/* initialize in version, answered with that version, then initialized. */
static int initialize(struct session *s, const char *version)
{
	const char *chosen;
	char line[300];
	json_t *a;
	int ok;

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
		 "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},\"clientInfo\":"
		 "{\"name\":\"unit\",\"version\":\"1\"}}}", version);
	if (send_line(s, line) < 0 || !(a = answer(s, 1, 0)))
		return -1;
	chosen = json_string_value(json_object_get(json_object_get(a, "result"),
						   "protocolVersion"));
	ok = chosen && strcmp(chosen, version) == 0 &&
	     json_is_object(json_object_get(json_object_get(a, "result"), "serverInfo"));
	json_decref(a);
	if (!ok)
		fprintf(stderr, "# initialize %s refused\n", version);
	return ok && send_line(s, "{\"jsonrpc\":\"2.0\",\"method\":"
			       "\"notifications/initialized\"}") == 0 ? 0 : -1;
}

/* The text of a tools/call answer's first content block, or "". */
static const char *first_text(json_t *a)
{
	json_t *c = json_array_get(json_object_get(json_object_get(a, "result"), "content"), 0);
	const char *t = json_string_value(json_object_get(c, "text"));

	return t ? t : "";
}

static int open_server(struct fix *f, struct tg_mcp **mcp)
{
	struct fix_spec spec = { "dispatch", contracts, POLICY, TG_ANOMALY_DEFAULT, NULL };
	struct tg_mcp_options mo = { 0 };
	struct tg_error err;

	*mcp = NULL;
	if (fix_open(f, &spec) < 0)
		return -1;
	mo.principal = "agent";
	if (tg_mcp_new(f->gate, &mo, mcp, &err) < 0) {
		fprintf(stderr, "# %s\n", err.msg);
		fix_remove(f);
		return -1;
	}
	return 0;
}

/* A session of the current revision: tools listed, a call answered, its
 * record in the log; a method that does not exist, a line that is not
 * JSON and a batch (not in this revision) answered with their JSON-RPC
 * errors; a tool the principal's scopes do not allow refused as a tool
 * error, recorded forbidden. */
static int session_latest(void)
{
	struct session s;
	struct tg_mcp *mcp;
	struct fix f;
	json_t *a, *tools, *recs, *rec;

	CHECK(open_server(&f, &mcp) == 0);
	CHECK(start(&s, mcp) == 0);
	CHECK(initialize(&s, TG_MCP_LATEST) == 0);

	CHECK(send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}") == 0);
	CHECK((a = answer(&s, 2, 0)) != NULL);
	tools = json_object_get(json_object_get(a, "result"), "tools");
	CHECK(json_array_size(tools) == 1); /* not "other": its scopes do not allow it */
	CHECK(strcmp(json_string_value(json_object_get(json_array_get(tools, 0), "name")),
		     "echo") == 0);
	CHECK(json_is_object(json_object_get(json_array_get(tools, 0), "inputSchema")));
	json_decref(a);

	CHECK(send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":"
			"{\"name\":\"echo\",\"arguments\":{\"said\":\"hello\"}}}") == 0);
	CHECK((a = answer(&s, 3, 0)) != NULL);
	CHECK(json_is_false(json_object_get(json_object_get(a, "result"), "isError")));
	CHECK(strcmp(json_string_value(json_object_get(json_object_get(json_object_get(
		     a, "result"), "structuredContent"), "said")), "hello") == 0);
	json_decref(a);

	CHECK(send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"no/such\"}") == 0);
	CHECK((a = answer(&s, 4, 0)) != NULL && error_code(a) == -32601);
	json_decref(a);

	CHECK(send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":") == 0);
	CHECK((a = answer(&s, 0, 1)) != NULL && error_code(a) == -32700);
	json_decref(a);

	CHECK(send_line(&s, "[{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}]") == 0);
	CHECK((a = answer(&s, 0, 1)) != NULL && error_code(a) == -32600);
	CHECK(strstr(json_string_value(json_object_get(json_object_get(a, "error"), "message")),
		     "batches are not supported"));
	json_decref(a);

	CHECK(send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":"
			"{\"name\":\"other\",\"arguments\":{}}}") == 0);
	CHECK((a = answer(&s, 7, 0)) != NULL);
	CHECK(json_is_true(json_object_get(json_object_get(a, "result"), "isError")));
	CHECK(strstr(first_text(a), "it needs the scope other:read"));
	json_decref(a);

	/* still serving after all of that */
	CHECK(send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}") == 0);
	CHECK((a = answer(&s, 8, 0)) != NULL && json_is_object(json_object_get(a, "result")));
	json_decref(a);
	CHECK(stop(&s) == 0);
	tg_mcp_free(mcp);
	fix_close(&f);

	CHECK((recs = fix_records(f.log)) != NULL);
	CHECK(fix_count(recs, "call", "echo", "ok", &rec) == 1);
	CHECK(strcmp(json_string_value(json_object_get(rec, "principal")), "agent") == 0);
	CHECK(fix_count(recs, "call", "other", "forbidden", &rec) == 1);
	CHECK(strcmp(json_string_value(json_object_get(rec, "principal")), "agent") == 0);
	CHECK(fix_count(recs, "call", NULL, NULL, NULL) == 2);
	CHECK(fix_log_holds(f.log, "hello") == 0);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* A 2025-03-26 session takes a batch: one array of answers, a call's
 * among them; an empty batch is an error. */
static int batch_2025_03_26(void)
{
	struct session s;
	struct tg_mcp *mcp;
	struct fix f;
	json_t *a, *recs;
	size_t i;
	int ping = 0, call = 0;

	CHECK(open_server(&f, &mcp) == 0);
	CHECK(start(&s, mcp) == 0);
	CHECK(initialize(&s, "2025-03-26") == 0);
	CHECK(send_line(&s, "[{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"ping\"},"
			"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"},"
			"{\"jsonrpc\":\"2.0\",\"id\":11,\"method\":\"tools/call\",\"params\":"
			"{\"name\":\"echo\",\"arguments\":{\"said\":\"in a batch\"}}}]") == 0);
	CHECK((a = next_line(&s)) != NULL && json_array_size(a) == 2);
	for (i = 0; i < 2; i++) {
		json_t *one = json_array_get(a, i);
		json_int_t id = json_integer_value(json_object_get(one, "id"));

		ping += id == 10 && json_is_object(json_object_get(one, "result"));
		call += id == 11 && strstr(first_text(one), "in a batch") != NULL;
	}
	json_decref(a);
	CHECK(ping == 1 && call == 1);
	CHECK(send_line(&s, "[]") == 0);
	CHECK((a = answer(&s, 0, 1)) != NULL && error_code(a) == -32600);
	json_decref(a);
	CHECK(stop(&s) == 0);
	tg_mcp_free(mcp);
	fix_close(&f);

	CHECK((recs = fix_records(f.log)) != NULL);
	CHECK(fix_count(recs, "call", "echo", "ok", NULL) == 1);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* An upstream's resources and prompts through a session, both eras
 * (docs/UPSTREAMS.md, "Resources, prompts and completions"): listed once
 * its server listed them, read and redacted; a prompt refused without
 * the scope fake.prompts:read; a URI of no upstream -32002, or -32602 in
 * the 2026-07-28 era. */
static const char *const fake[] = {
	"fake", "{\"transport\":\"stdio\",\"argv\":[\"/usr/bin/python3\","
		"\"/srv/fake/fake_server.py\",\"runner\"],\"sandbox\":{\"mounts\":"
		"[{\"host\":\"@FAKE@\",\"inside\":\"/srv/fake\"}]},"
		"\"tools\":{\"echo\":{\"authority\":\"read\"}}}",
	NULL,
};

#define MODERN_META "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"," \
		    "\"io.modelcontextprotocol/clientCapabilities\":{}}"

static int upstream_resources(void)
{
	struct fix_spec spec = { "dispatchres", contracts,
				 "{\"principals\":{\"agent\":{\"scopes\":[\"echo:read\","
				 "\"fake.resources:read\"]}}}", TG_ANOMALY_DEFAULT, fake };
	struct tg_mcp_options mo = { 0 };
	struct tg_error err;
	struct session s;
	struct tg_mcp *mcp;
	struct fix f;
	json_t *a, *c;
	const char *t;
	int tries, n = 0;

	CHECK(fix_open(&f, &spec) == 0);
	mo.principal = "agent";
	CHECK(tg_mcp_new(f.gate, &mo, &mcp, &err) == 0);
	CHECK(start(&s, mcp) == 0);
	CHECK(initialize(&s, TG_MCP_LATEST) == 0);
	for (tries = 0; tries < 300 && n < 2; tries++) {
		CHECK(send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":"
				"\"resources/list\"}") == 0);
		CHECK((a = answer(&s, 2, 0)) != NULL);
		n = (int)json_array_size(json_object_get(json_object_get(a, "result"), "resources"));
		json_decref(a);
		usleep(50000);
	}
	CHECK(n == 2);
	CHECK(send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\","
			"\"params\":{\"uri\":\"toolgate://upstream/fake/file:///notes.txt\"}}") == 0);
	CHECK((a = answer(&s, 3, 0)) != NULL);
	c = json_array_get(json_object_get(json_object_get(a, "result"), "contents"), 0);
	t = json_string_value(json_object_get(c, "text"));
	CHECK(t && strstr(t, "[REDACTED:") && !strstr(t, "AKIAZ"));
	json_decref(a);
	CHECK(send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"prompts/get\","
			"\"params\":{\"name\":\"fake.greet\",\"arguments\":{\"who\":\"a\"}}}") == 0);
	CHECK((a = answer(&s, 4, 0)) != NULL && error_code(a) == -32602);
	CHECK(strstr(json_string_value(json_object_get(json_object_get(a, "error"), "message")),
		     "fake.prompts:read"));
	json_decref(a);
	CHECK(send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\","
			"\"params\":{\"uri\":\"toolgate://upstream/nope/x\"}}") == 0);
	CHECK((a = answer(&s, 5, 0)) != NULL && error_code(a) == -32002);
	json_decref(a);
	/* the modern era: the same read, and not found as -32602 */
	CHECK(send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/read\","
			"\"params\":{\"uri\":\"toolgate://upstream/fake/file:///logs/x\","
			MODERN_META "}}") == 0);
	CHECK((a = answer(&s, 6, 0)) != NULL);
	c = json_array_get(json_object_get(json_object_get(a, "result"), "contents"), 0);
	CHECK(strcmp(json_string_value(json_object_get(c, "text")), "log of x") == 0);
	json_decref(a);
	CHECK(send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/read\","
			"\"params\":{\"uri\":\"toolgate://upstream/nope/x\"," MODERN_META "}}") == 0);
	CHECK((a = answer(&s, 7, 0)) != NULL && error_code(a) == -32602);
	json_decref(a);
	CHECK(stop(&s) == 0);
	tg_mcp_free(mcp);
	fix_remove(&f);
	return 0;
}

/* ---- tools/list shows what the caller may call (docs/AUTH.md) ---------------- */

#define LISTED_READS 60 /* r.00 to r.59, all allowed: more than a page */
#define LISTED_HIDDEN 30 /* s.00 to s.29, none allowed */

/* The contracts of the listing tests: the reads above, the write w.a
 * (allowed) and w.b (its read scope does not let one call a write). */
static char **listing_contracts(void)
{
	char **k = calloc(LISTED_READS + LISTED_HIDDEN + 3, sizeof(*k));
	size_t i, n = 0;

	for (i = 0; k && i < LISTED_READS + LISTED_HIDDEN; i++)
		if (asprintf(&k[n++], "{\"name\":\"%s.%02zu\",\"version\":\"1.0.0\"," FIX_OWNER
			     ",\"authority\":\"read\",\"input_schema\":{\"type\":\"object\"},"
			     FIX_ECHO "}", i < LISTED_READS ? "r" : "s",
			     i < LISTED_READS ? i : i - LISTED_READS) < 0)
			k[--n] = NULL;
	for (i = 0; k && i < 2; i++)
		if (asprintf(&k[n++], "{\"name\":\"w.%c\",\"version\":\"1.0.0\"," FIX_OWNER
			     ",\"authority\":\"write\",\"dry_run\":\"unsupported\","
			     "\"compensation\":{\"irreversible\":\"t\"},\"input_schema\":"
			     "{\"type\":\"object\"}," FIX_ECHO "}", i ? 'b' : 'a') < 0)
			k[--n] = NULL;
	return k;
}

static void contracts_free(char **k)
{
	size_t i;

	for (i = 0; k && k[i]; i++)
		free(k[i]);
	free(k);
}

/* Every page of tools/list (modern: the 2026-07-28 era's request), the
 * names in order into *names; 0, or -1 when a page was wrong: more than
 * 50, a cursor on the last, none on a full one before the end. */
static int list_all(struct session *s, int modern, json_t **names)
{
	char line[512], cursor[64] = "";
	json_t *a, *r, *t;
	size_t i, pages = 0;
	int id = 100;

	*names = json_array();
	for (;;) {
		snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":"
			 "\"tools/list\",\"params\":{%s%s%s%s}}", id, cursor[0] ? "\"cursor\":\"" : "",
			 cursor, cursor[0] ? "\"" : "", modern ? (cursor[0] ? "," MODERN_META
								    : MODERN_META) : "");
		if (send_line(s, line) < 0 || !(a = answer(s, id++, 0)))
			return -1;
		r = json_object_get(a, "result");
		if (json_array_size(json_object_get(r, "tools")) > 50 ||
		    (modern && !json_object_get(r, "resultType"))) {
			json_decref(a);
			return -1;
		}
		json_array_foreach(json_object_get(r, "tools"), i, t)
			json_array_append(*names, json_object_get(t, "name"));
		pages++;
		t = json_object_get(r, "nextCursor");
		if (!t) {
			json_decref(a);
			return pages ? 0 : -1;
		}
		snprintf(cursor, sizeof(cursor), "%s", json_string_value(t));
		json_decref(a);
	}
}

/* 1 if names holds name. */
static int has_name(json_t *names, const char *name)
{
	json_t *n;
	size_t i;

	json_array_foreach(names, i, n)
		if (strcmp(json_string_value(n), name) == 0)
			return 1;
	return 0;
}

/* A listing as the stdio principal holding the scopes the policy gives
 * it: exactly the tools they allow, each once over the pages, in both
 * eras, an upstream's NAME.tool filtered as the catalogue's are. */
static int tools_list_scoped(void)
{
	static const char policy[] = "{\"principals\":{\"agent\":{\"scopes\":[\"r.*:read\","
				     "\"w.a:write\",\"w.b:read\",\"fake.echo:read\"]}}}";
	char **k = listing_contracts();
	struct fix_spec spec = { "listscoped", (const char *const *)k, policy,
				 TG_ANOMALY_DEFAULT, fake };
	struct tg_mcp_options mo = { 0 };
	struct tg_error err;
	struct session s;
	struct tg_mcp *mcp;
	struct fix f;
	json_t *names, *all;
	char name[16];
	int modern, i;

	CHECK(k && fix_open(&f, &spec) == 0);
	contracts_free(k);
	/* the upstream's tools are served, whoever may see them */
	all = fix_tools_with(f.gate, "fake.echo");
	CHECK(all && fix_tool(all, "fake.echo") && fix_tool(all, "s.00") && fix_tool(all, "w.b"));
	CHECK(json_array_size(all) > LISTED_READS + LISTED_HIDDEN + 3); /* fake's others too */
	json_decref(all);
	mo.principal = "agent";
	CHECK(tg_mcp_new(f.gate, &mo, &mcp, &err) == 0);
	CHECK(start(&s, mcp) == 0);
	CHECK(initialize(&s, TG_MCP_LATEST) == 0);
	for (modern = 0; modern < 2; modern++) {
		CHECK(list_all(&s, modern, &names) == 0);
		CHECK(json_array_size(names) == LISTED_READS + 2);
		for (i = 0; i < LISTED_READS; i++) {
			snprintf(name, sizeof(name), "r.%02d", i);
			CHECK(has_name(names, name));
		}
		CHECK(has_name(names, "w.a") && has_name(names, "fake.echo"));
		CHECK(!has_name(names, "w.b") && !has_name(names, "s.00") &&
		      !has_name(names, "fake.read"));
		json_decref(names);
	}
	CHECK(stop(&s) == 0);
	tg_mcp_free(mcp);
	fix_remove(&f);
	return 0;
}

/* Without a policy, every tool is listed, as before. */
static int tools_list_no_policy(void)
{
	char **k = listing_contracts();
	struct fix_spec spec = { "listall", (const char *const *)k, NULL, TG_ANOMALY_DEFAULT,
				 NULL };
	struct tg_mcp_options mo = { 0 };
	struct tg_error err;
	struct session s;
	struct tg_mcp *mcp;
	struct fix f;
	json_t *names;
	int modern;

	CHECK(k && fix_open(&f, &spec) == 0);
	contracts_free(k);
	mo.principal = "local";
	CHECK(tg_mcp_new(f.gate, &mo, &mcp, &err) == 0);
	CHECK(start(&s, mcp) == 0);
	CHECK(initialize(&s, TG_MCP_LATEST) == 0);
	for (modern = 0; modern < 2; modern++) {
		CHECK(list_all(&s, modern, &names) == 0);
		CHECK(json_array_size(names) == LISTED_READS + LISTED_HIDDEN + 2);
		CHECK(has_name(names, "s.29") && has_name(names, "w.b"));
		json_decref(names);
	}
	CHECK(stop(&s) == 0);
	tg_mcp_free(mcp);
	fix_remove(&f);
	return 0;
}

/* ---- a stock host's writes: no key, no wait asked (docs/PIPELINE.md) ---------- */

static const char *const writes[] = {
	"{\"name\":\"w.put\",\"version\":\"1.0.0\"," FIX_OWNER ",\"authority\":\"write\","
	"\"dry_run\":\"unsupported\",\"compensation\":{\"irreversible\":\"t\"},"
	"\"input_schema\":{\"type\":\"object\"}," FIX_ECHO "}",
	NULL,
};

/* A server for agent (w.put:write) with the policy's writes.wait. */
static int open_writes(struct fix *f, struct tg_mcp **mcp, const char *name, const char *wait)
{
	char policy[300];
	struct fix_spec spec = { name, writes, policy, TG_ANOMALY_DEFAULT, NULL };
	struct tg_mcp_options mo = { 0 };
	struct tg_error err;

	snprintf(policy, sizeof(policy), "{\"principals\":{\"agent\":{\"scopes\":[\"w.put:write\"]},"
		 "\"alice\":{\"scopes\":[\"w.*:approve\"]}},\"writes\":{\"wait\":\"%s\"}}", wait);
	*mcp = NULL;
	if (fix_open(f, &spec) < 0)
		return -1;
	mo.principal = "agent";
	if (tg_mcp_new(f->gate, &mo, mcp, &err) < 0) {
		fix_remove(f);
		return -1;
	}
	return 0;
}

/* A tools/call of w.put with args as a stock host makes it (no _meta but
 * a progress token when token): its id's answer, the progress
 * notifications before it counted into *progress. */
static json_t *host_call(struct session *s, int id, const char *args, int token, int *progress)
{
	char line[400];
	json_t *j;

	snprintf(line, sizeof(line), "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"tools/call\","
		 "\"params\":{\"name\":\"w.put\",\"arguments\":%s%s}}", id, args,
		 token ? ",\"_meta\":{\"progressToken\":\"p1\"}" : "");
	if (send_line(s, line) < 0)
		return NULL;
	while ((j = next_line(s)) != NULL) {
		const char *m = json_string_value(json_object_get(j, "method"));
		const char *msg = json_string_value(json_object_get(json_object_get(j, "params"),
								    "message"));

		if (json_integer_value(json_object_get(j, "id")) == id)
			return j;
		if (m && strcmp(m, "notifications/progress") == 0 && msg &&
		    strstr(msg, "awaiting approval: ticket "))
			(*progress)++;
		json_decref(j);
	}
	return NULL;
}

/* The dev.toolgate/error's code and ticket of an answer a. */
static const char *answer_error(json_t *a, const char *what)
{
	json_t *e = json_object_get(json_object_get(json_object_get(a, "result"), "_meta"),
				    "dev.toolgate/error");

	return json_string_value(json_object_get(e, what));
}

/* No decision within the policy's wait: the call answers, the model told
 * to ask again later with the same arguments, the key derived; it heard
 * progress meanwhile. The retry finds the same ticket. */
static int host_wait_lapses(void)
{
	struct session s;
	struct tg_mcp *mcp;
	struct fix f;
	json_t *a, *key;
	char ticket[64];
	int progress = 0;

	CHECK(open_writes(&f, &mcp, "hostwait", "1s") == 0);
	CHECK(start(&s, mcp) == 0);
	CHECK(initialize(&s, TG_MCP_LATEST) == 0);
	CHECK((a = host_call(&s, 2, "{\"n\":1}", 1, &progress)) != NULL);
	CHECK(json_is_true(json_object_get(json_object_get(a, "result"), "isError")));
	CHECK(strcmp(answer_error(a, "code"), "awaiting_approval") == 0);
	snprintf(ticket, sizeof(ticket), "%s", answer_error(a, "ticket"));
	CHECK(strstr(first_text(a), "awaiting approval: ticket ") &&
	      strstr(first_text(a), "ask again later with the same arguments"));
	key = json_object_get(json_object_get(json_object_get(a, "result"), "_meta"),
			      "dev.toolgate/idempotencyKey");
	CHECK(json_is_true(json_object_get(key, "derived")) &&
	      strncmp(json_string_value(json_object_get(key, "key")), "derived:", 8) == 0);
	CHECK(progress >= 1);
	json_decref(a);
	CHECK((a = host_call(&s, 3, "{\"n\":1}", 0, &progress)) != NULL);
	CHECK(strcmp(answer_error(a, "ticket"), ticket) == 0);
	json_decref(a);
	CHECK(stop(&s) == 0);
	tg_mcp_free(mcp);
	fix_remove(&f);
	return 0;
}

struct approver {
	struct fix *f;
	int done;
};

/* Approves the first pending ticket once there is one (at most 20 s). */
static void *approve_soon(void *arg)
{
	struct approver *ap = arg;
	struct tg_ticket *all;
	struct tg_error err;
	size_t n, i;
	int tries;

	for (tries = 0; tries < 400 && !ap->done; tries++) {
		all = NULL;
		n = 0;
		if (tg_store_ticket_list(ap->f->store, TG_TICKET_PENDING, (int64_t)time(NULL), &all, &n,
					 &err) == 0 && n > 0)
			ap->done = tg_store_ticket_decide(ap->f->store, all[0].id, "alice", 1, NULL,
							  (int64_t)time(NULL), &err) == 0;
		for (i = 0; i < n; i++)
			tg_ticket_release(&all[i]);
		free(all);
		usleep(50000);
	}
	return NULL;
}

/* Decided while the call waits: the call runs, and its answer is the
 * result; a retry replays it, saying it is an earlier call's. */
static int host_wait_approved(void)
{
	struct approver ap;
	struct session s;
	struct tg_mcp *mcp;
	struct fix f;
	pthread_t t;
	json_t *a, *r;
	char *text;
	int progress = 0;

	CHECK(open_writes(&f, &mcp, "hostok", "2m") == 0);
	CHECK(start(&s, mcp) == 0);
	CHECK(initialize(&s, TG_MCP_LATEST) == 0);
	ap.f = &f;
	ap.done = 0;
	CHECK(pthread_create(&t, NULL, approve_soon, &ap) == 0);
	a = host_call(&s, 2, "{\"n\":2}", 1, &progress);
	pthread_join(t, NULL);
	CHECK(a && ap.done);
	r = json_object_get(a, "result");
	CHECK(json_is_false(json_object_get(r, "isError")) &&
	      json_integer_value(json_object_get(json_object_get(r, "structuredContent"), "n")) == 2);
	CHECK(json_is_true(json_object_get(json_object_get(json_object_get(r, "_meta"),
							   "dev.toolgate/idempotencyKey"), "derived")));
	json_decref(a);
	CHECK((a = host_call(&s, 3, "{\"n\":2}", 0, &progress)) != NULL);
	r = json_object_get(a, "result");
	text = json_dumps(json_object_get(r, "content"), 0);
	CHECK(json_is_false(json_object_get(r, "isError")) && text && strstr(text, "earlier call"));
	free(text);
	json_decref(a);
	CHECK(stop(&s) == 0);
	tg_mcp_free(mcp);
	fix_remove(&f);
	return 0;
}

/* A waiting call is cancelled by notifications/cancelled: no answer, the
 * session serves on, the ticket stays pending for a retry. */
static int host_wait_cancelled(void)
{
	struct tg_ticket *all = NULL;
	struct tg_error err;
	struct session s;
	struct tg_mcp *mcp;
	struct fix f;
	json_t *a;
	size_t n = 0, i;

	CHECK(open_writes(&f, &mcp, "hostcancel", "30m") == 0);
	CHECK(start(&s, mcp) == 0);
	CHECK(initialize(&s, TG_MCP_LATEST) == 0);
	CHECK(send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":"
			"{\"name\":\"w.put\",\"arguments\":{\"n\":3},\"_meta\":"
			"{\"progressToken\":7}}}") == 0);
	/* its first progress says it waits */
	CHECK((a = next_line(&s)) != NULL &&
	      strcmp(json_string_value(json_object_get(a, "method")), "notifications/progress") == 0);
	json_decref(a);
	CHECK(send_line(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
			"\"params\":{\"requestId\":2}}") == 0);
	CHECK(send_line(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ping\"}") == 0);
	CHECK((a = answer(&s, 3, 0)) != NULL);
	json_decref(a);
	/* it returned (stop joins the server, which waits for its calls) */
	CHECK(stop(&s) == 0);
	tg_mcp_free(mcp);
	CHECK(tg_store_ticket_list(f.store, TG_TICKET_PENDING, (int64_t)time(NULL), &all, &n,
				   &err) == 0);
	for (i = 0; i < n; i++)
		tg_ticket_release(&all[i]);
	free(all);
	CHECK(n == 1);
	fix_remove(&f);
	return 0;
}

const struct unit_test dispatch_tests[] = {
	{ "dispatch/upstream_resources", upstream_resources },
	{ "dispatch/session_latest", session_latest },
	{ "dispatch/batch_2025_03_26", batch_2025_03_26 },
	{ "dispatch/tools_list_scoped", tools_list_scoped },
	{ "dispatch/tools_list_no_policy", tools_list_no_policy },
	{ "dispatch/host_wait_lapses", host_wait_lapses },
	{ "dispatch/host_wait_approved", host_wait_approved },
	{ "dispatch/host_wait_cancelled", host_wait_cancelled },
	UNIT_TESTS_END,
};
