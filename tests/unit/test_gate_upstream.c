/*
 * Unit tests: an upstream's tools served by the gate (src/gate/upstreams.c,
 * snapshot.c, src/catalog/upstream_tool.c), with tests/upstream/fake_server.py
 * (mode runner) in the sandbox: its tools listed under its namespace as the
 * declaration says (renamed, hidden, read or write), every call through the
 * pipeline (validated by toolgate's validator, a write held for approval,
 * run once when approved, answered interrupted when its gateway died running
 * it), a dead server a typed error and then restarted,
 * a reload that changes the declaration serving what it says, what a
 * listing cannot serve withdrawn, a declared tool it does not list warned
 * of once a listing, and an upstream over Streamable HTTP
 * (tests/upstream/fake_http.py) served the same way.
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "failalloc.h"
#include "gate/gate_int.h"
#include "gatefix.h"
#include "toolgate/upstream.h"
#include "unit.h"

#define FAKE_ARGV "\"transport\":\"stdio\",\"argv\":[\"/usr/bin/python3\"," \
		  "\"/srv/fake/fake_server.py\",\"runner\"],\"sandbox\":{\"mounts\":" \
		  "[{\"host\":\"@FAKE@\",\"inside\":\"/srv/fake\"}]}"

static const char *const plain[] = {
	"{\"name\":\"plain\",\"version\":\"1.0.0\",\"authority\":\"read\"," FIX_OWNER ","
	"\"input_schema\":{\"type\":\"object\"}," FIX_ECHO "}",
	NULL,
};

static int read_only(json_t *t)
{
	return json_is_true(json_object_get(json_object_get(t, "annotations"), "readOnlyHint"));
}

static int progress_events;

static void progressed(void *ctx, const char *event)
{
	(void)ctx;
	if (strstr(event, "\"progress\""))
		progress_events++;
}

static int serves(void)
{
	static const char *const ups[] = {
		"fake",
		"{" FAKE_ARGV ",\"tools\":{\"echo\":{\"authority\":\"read\"},"
		"\"add\":{\"authority\":\"read\",\"rename\":\"sum\"},"
		"\"env\":{\"hide\":true},\"die\":{\"authority\":\"read\"},"
		"\"progress\":{\"authority\":\"read\"}}}",
		NULL,
	};
	struct fix_spec spec = { "gateup", plain, NULL, TG_ANOMALY_DEFAULT, ups };
	char code[64], ticket[64], first[64], *out;
	struct fix f;
	json_t *list, *recs;

	if (fix_open(&f, &spec) < 0)
		return -1;
	list = fix_tools_with(f.gate, "fake.echo");
	CHECK(list);
	/* the declaration's names and authority, never the server's hints */
	CHECK(fix_tool(list, "plain") && read_only(fix_tool(list, "fake.echo")));
	CHECK(fix_tool(list, "fake.sum") && read_only(fix_tool(list, "fake.sum")) &&
	      !fix_tool(list, "fake.add"));
	CHECK(!fix_tool(list, "fake.env") && fix_tool(list, "fake.read") &&
	      !read_only(fix_tool(list, "fake.read")));
	CHECK(json_is_string(json_object_get(fix_tool(list, "fake.echo"), "description")));
	json_decref(list);

	out = fix_call_text(&f, "fake.echo", "{\"text\":\"hi there\"}", NULL, code, ticket);
	CHECK(out && strncmp(out, "ok ", 3) == 0 && strstr(out, "hi there"));
	free(out);
	out = fix_call_text(&f, "fake.sum", "{\"a\":1,\"b\":2}", NULL, code, ticket);
	CHECK(out && strncmp(out, "ok ", 3) == 0);
	free(out);
	/* toolgate's validator, against the schema the server listed */
	out = fix_call_text(&f, "fake.echo", "{\"text\":5}", NULL, code, ticket);
	CHECK(out && strstr(out, "do not match the input schema of fake.echo"));
	free(out);
	/* hidden: no such tool */
	out = fix_call_text(&f, "fake.env", "{\"name\":\"PATH\"}", NULL, code, ticket);
	CHECK(!out && strcmp(code, "protocol") == 0);
	/* not declared: a write, held for a person, under the key derived
	 * for it without one, or the caller's own (another ticket) */
	out = fix_call_text(&f, "fake.read", "{\"path\":\"/etc/hostname\"}", NULL, code, ticket);
	CHECK(out && strcmp(code, "awaiting_approval") == 0 && ticket[0] &&
	      strstr(out, "one was derived from the arguments"));
	free(out);
	memcpy(first, ticket, sizeof(first));
	out = fix_call_text(&f, "fake.read", "{\"path\":\"/etc/hostname\"}", "k-1", code, ticket);
	CHECK(out && strcmp(code, "awaiting_approval") == 0 && ticket[0] &&
	      strcmp(ticket, first) != 0);
	free(out);
	/* its progress reaches the caller, as a command tool's */
	{
		struct tg_call c = { 0 };
		struct tg_call_result r;
		struct tg_error err;
		const char *a = "{\"n\":3,\"message\":\"step\"}";

		c.principal = "alice";
		c.tool = "fake.progress";
		c.arguments = a;
		c.arguments_len = strlen(a);
		c.notify = progressed;
		c.cancel_fd = -1;
		CHECK(tg_gate_call(f.gate, &c, &r, &err) == 0 && !r.is_error);
		tg_call_result_release(&r);
		CHECK(progress_events == 3);
	}
	/* a server that dies mid-call: a typed error, then it is back */
	out = fix_call_text(&f, "fake.die", "{}", NULL, code, ticket);
	CHECK(out && strcmp(code, "upstream_unavailable") == 0 && strstr(out, "signal 9"));
	free(out);
	out = fix_call_text(&f, "fake.echo", "{\"text\":\"again\"}", NULL, code, ticket);
	CHECK(out && strncmp(out, "ok ", 3) == 0 && strstr(out, "again"));
	free(out);
	fix_close(&f);
	recs = fix_records(f.log);
	CHECK(recs && fix_count(recs, "call", "fake.echo", "ok", NULL) == 2);
	CHECK(fix_count(recs, "call", "fake.die", "upstream_unavailable", NULL) == 1);
	CHECK(fix_count(recs, "call", "fake.read", "held", NULL) == 2);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* The fake server, its say tool a write (approved_once, interrupted). */
static const char *const say_write[] = {
	"fake", "{" FAKE_ARGV ",\"tools\":{\"say\":{\"compensation\":"
		"{\"irreversible\":\"it only says\"}}}}",
	NULL,
};

/* A write approved runs once; its retries replay what it answered. */
/* f opened in directory name with say_write, and a call of say with args
 * under key held (say is a write) and approved by bob: 0 and its ticket
 * (64 bytes), or -1 (f then removed). */
static int say_approved(struct fix *f, const char *name, const char *args, const char *key,
			char *ticket)
{
	struct fix_spec spec = { name, plain, NULL, TG_ANOMALY_DEFAULT, say_write };
	char code[64], *out;
	struct tg_error err;
	json_t *list;
	int rc;

	if (fix_open(f, &spec) < 0)
		return -1;
	list = fix_tools_with(f->gate, "fake.say");
	rc = list && !read_only(fix_tool(list, "fake.say")) ? 0 : -1;
	json_decref(list);
	out = rc == 0 ? fix_call_text(f, "fake.say", args, key, code, ticket) : NULL;
	if (!out || strcmp(code, "awaiting_approval") != 0 ||
	    tg_store_ticket_decide(f->store, ticket, "bob", 1, NULL, (int64_t)time(NULL), &err) < 0)
		rc = -1;
	free(out);
	if (rc < 0)
		fix_remove(f);
	return rc;
}

static int approved_once(void)
{
	char code[64], ticket[64], *out, *again;
	struct fix f;
	json_t *recs;

	CHECK(say_approved(&f, "gateupw", "{\"lines\":[\"one\"]}", "k-say", ticket) == 0);
	out = fix_call_text(&f, "fake.say", "{\"lines\":[\"one\"]}", "k-say", code, ticket);
	CHECK(out && strncmp(out, "ok ", 3) == 0);
	again = fix_call_text(&f, "fake.say", "{\"lines\":[\"one\"]}", "k-say", code, ticket);
	CHECK(again && strcmp(out, again) == 0);
	free(out);
	free(again);
	fix_close(&f);
	recs = fix_records(f.log);
	CHECK(recs && fix_count(recs, "call", "fake.say", "ok", NULL) == 1);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* An approved write whose gateway died running it (its key left running
 * by an opening of the store that is gone, as kill -9 leaves it) is not
 * run again: an upstream's tools are not resumable, so the retry that
 * takes the key over is answered interrupted, not retryable (the key's
 * answer for good), the ticket failed, and a retry after replays that. */
static int interrupted(void)
{
	char code[64], ticket[64], marker[96], state[128], *out, *again;
	struct tg_store *dying;
	struct tg_idem_key key;
	struct tg_ticket t;
	struct tg_error err;
	struct fix f;
	json_t *recs;

	CHECK(say_approved(&f, "gateupc", "{\"lines\":[\"cut\"]}", "k-cut", ticket) == 0);
	CHECK(tg_store_ticket_get(f.store, ticket, (int64_t)time(NULL), &t, &err) == 0);
	/* a gateway claims the approved call, then stops without ending it */
	key = (struct tg_idem_key){ "alice", "fake.say", "k-cut", t.args_sha256 };
	snprintf(marker, sizeof(marker), "{\"ticket\":\"%s\"}", ticket);
	snprintf(state, sizeof(state), "%s/state", f.dir);
	CHECK(tg_store_open(state, &dying, &err) == 0);
	CHECK(tg_store_idem_reclaim(dying, &key, marker, strlen(marker), &err) == 0);
	tg_store_close(dying);
	tg_ticket_release(&t);
	out = fix_call_text(&f, "fake.say", "{\"lines\":[\"cut\"]}", "k-cut", code, ticket);
	CHECK(out && strcmp(code, "interrupted") == 0 && strstr(out, "\"retryable\":false"));
	again = fix_call_text(&f, "fake.say", "{\"lines\":[\"cut\"]}", "k-cut", code, ticket);
	CHECK(again && strcmp(out, again) == 0);
	free(out);
	free(again);
	CHECK(tg_store_ticket_get(f.store, ticket, (int64_t)time(NULL), &t, &err) == 0 &&
	      t.state == TG_TICKET_FAILED);
	tg_ticket_release(&t);
	fix_close(&f);
	recs = fix_records(f.log);
	CHECK(recs && fix_count(recs, "call", "fake.say", "interrupted", NULL) == 1);
	CHECK(fix_count(recs, "call", "fake.say", "replayed", NULL) == 1);
	CHECK(fix_count(recs, "call", "fake.say", "ok", NULL) == 0);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* upstreams/NAME.json of f's catalogue declared anew: the fake server,
 * and members (JSON text after its argv and sandbox, "" for none); the
 * catalogue reloaded. 0 or -1. */
static int redeclare(struct fix *f, const char *name, const char *members)
{
	char fake[4096], text[8192], path[256];
	struct tg_catalog *cat;
	struct tg_error err;

	if (unit_upstream_dir(fake) < 0)
		return -1;
	snprintf(text, sizeof(text), "{\"transport\":\"stdio\",\"argv\":[\"/usr/bin/python3\","
		 "\"/srv/fake/fake_server.py\",\"runner\"],\"sandbox\":{\"mounts\":"
		 "[{\"host\":\"%s\",\"inside\":\"/srv/fake\"}]}%s}", fake, members);
	snprintf(path, sizeof(path), "%s/cat/upstreams/%s.json", f->dir, name);
	if (unit_put(NULL, path, text, 0600) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/cat", f->dir);
	if (tg_catalog_load_dir(path, NULL, &cat, &err) < 0)
		return -1;
	if (tg_gate_reload(f->gate, cat, &err) == 0)
		return 0;
	fprintf(stderr, "# reload: %s\n", err.msg);
	tg_catalog_free(cat);
	return -1;
}

static int changes;

static void changed(void *ctx, const struct tg_catalog *old, const struct tg_catalog *now)
{
	(void)ctx;
	(void)old;
	(void)now;
	__atomic_add_fetch(&changes, 1, __ATOMIC_SEQ_CST);
}

/* A reload that declares the upstream otherwise serves what it says, and
 * the hook hears of it; a tool the listing cannot serve is withdrawn. */
static int reloads(void)
{
	static const char *const ups[] = {
		"fake", "{" FAKE_ARGV ",\"tools\":{\"echo\":{\"authority\":\"read\"},"
			"\"add\":{\"dry_run\":{\"argument\":\"dryRun\"}}}}",
		NULL,
	};
	struct fix_spec spec = { "gateupr", plain, NULL, TG_ANOMALY_DEFAULT, ups };
	char code[64], ticket[64], *out;
	struct fix f;
	json_t *list;

	if (fix_open(&f, &spec) < 0)
		return -1;
	tg_gate_on_change(f.gate, changed, NULL);
	list = fix_tools_with(f.gate, "fake.echo");
	/* add declares a dry run its schema has no argument for: withdrawn */
	CHECK(list && !fix_tool(list, "fake.add"));
	json_decref(list);
	CHECK(redeclare(&f, "fake", ",\"tools\":{\"echo\":{\"authority\":\"read\","
			"\"rename\":\"repeat\"}}") == 0);
	list = fix_tools_with(f.gate, "fake.repeat");
	/* add is served at last, but was not in the first listing pinned:
	 * new, it awaits review (strict) */
	CHECK(list && !fix_tool(list, "fake.echo") && !fix_tool(list, "fake.add"));
	json_decref(list);
	out = fix_call_text(&f, "fake.add", "{\"a\":1}", NULL, code, ticket);
	CHECK(out && strcmp(code, "definition_awaits_review") == 0 && ticket[0]);
	free(out);
	CHECK(__atomic_load_n(&changes, __ATOMIC_SEQ_CST) >= 1);
	out = fix_call_text(&f, "fake.repeat", "{\"text\":\"renamed\"}", NULL, code, ticket);
	CHECK(out && strncmp(out, "ok ", 3) == 0 && strstr(out, "renamed"));
	free(out);
	tg_gate_on_change(f.gate, NULL, NULL);
	fix_remove(&f);
	return 0;
}

/* What a listing withdraws is recorded once, however often the tools
 * are made again: here by a reload that changes another upstream. */
static int said_once(void)
{
	static const char *const ups[] = {
		"fake", "{" FAKE_ARGV ",\"tools\":{\"add\":{\"dry_run\":{\"argument\":\"dryRun\"}}}}",
		"other", "{" FAKE_ARGV "}",
		NULL,
	};
	struct fix_spec spec = { "gateup1", plain, NULL, TG_ANOMALY_DEFAULT, ups };
	struct fix f;
	json_t *list, *recs;

	if (fix_open(&f, &spec) < 0)
		return -1;
	list = fix_tools_with(f.gate, "fake.echo");
	json_decref(list);
	list = fix_tools_with(f.gate, "other.echo");
	CHECK(list && !fix_tool(list, "fake.add"));
	json_decref(list);
	CHECK(redeclare(&f, "other", ",\"tools\":{\"echo\":{\"rename\":\"again\"}}") == 0);
	list = fix_tools_with(f.gate, "other.again");
	CHECK(list && !fix_tool(list, "fake.add") && fix_tool(list, "fake.echo"));
	json_decref(list);
	fix_close(&f);
	recs = fix_records(f.log);
	CHECK(recs && fix_count(recs, "event", NULL, "upstream_tool_withdrawn", NULL) == 1);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* tests/upstream/fake_http.py on 127.0.0.1: its pid, *port; -1. */
static pid_t fake_http(int *port)
{
	char dir[4096], script[4200], line[32];
	size_t len = 0;
	int from[2];
	pid_t pid;

	if (unit_upstream_dir(dir) < 0 || pipe(from) < 0)
		return -1;
	snprintf(script, sizeof(script), "%s/fake_http.py", dir);
	pid = fork();
	if (pid == 0) {
		dup2(from[1], 1);
		execl("/usr/bin/python3", "python3", script, "0", (char *)NULL);
		_exit(127);
	}
	close(from[1]);
	while (pid > 0 && len + 1 < sizeof(line) && read(from[0], line + len, 1) == 1 &&
	       line[len] != '\n')
		len++;
	line[len] = '\0';
	close(from[0]);
	*port = (int)strtol(line, NULL, 10);
	return *port > 0 ? pid : -1;
}

/* An upstream reached over Streamable HTTP, served as a stdio one is. */
static int over_http(void)
{
	char decl[256], code[64], ticket[64], *out;
	const char *ups[] = { "web", decl, NULL };
	struct fix_spec spec = { "gateuph", plain, NULL, TG_ANOMALY_DEFAULT, ups };
	struct fix f;
	json_t *list;
	int port = 0, rc = -1;
	pid_t pid = fake_http(&port);

	CHECK(pid > 0);
	snprintf(decl, sizeof(decl), "{\"transport\":\"http\",\"url\":\"http://127.0.0.1:%d/mcp\","
		 "\"tools\":{\"echo\":{\"authority\":\"read\"}}}", port);
	if (fix_open(&f, &spec) < 0)
		goto out;
	list = fix_tools_with(f.gate, "web.echo");
	if (list && read_only(fix_tool(list, "web.echo")) && fix_tool(list, "web.slow") &&
	    !read_only(fix_tool(list, "web.slow"))) {
		out = fix_call_text(&f, "web.echo", "{\"over\":\"http\"}", NULL, code, ticket);
		rc = out && strncmp(out, "ok ", 3) == 0 && strstr(out, "http") ? 0 : -1;
		free(out);
	}
	json_decref(list);
	fix_remove(&f);
out:
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	return rc;
}

/* A credential that another upstream's sandbox is given (its mount holds
 * the file) refuses the gate, naming both; elsewhere it is served. */
static int credential_exposed(void)
{
	char dir[64], path[256], text[1024];
	struct tg_catalog *cat = NULL;
	struct tg_gate *g = NULL;
	struct tg_error err;

	CHECK(unit_tmpdir(dir, "gateupc") == 0);
	snprintf(path, sizeof(path), "%s/cat", dir);
	CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/cat/upstreams", dir);
	CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/shared", dir);
	CHECK(mkdir(path, 0700) == 0);
	snprintf(path, sizeof(path), "%s/shared/token", dir);
	CHECK(unit_put(NULL, path, "s3cret\n", 0600) == 0);
	snprintf(path, sizeof(path), "%s/cat/upstreams/a.json", dir);
	snprintf(text, sizeof(text), "{\"transport\":\"stdio\",\"argv\":[\"/bin/true\"],"
		 "\"sandbox\":{\"mounts\":[{\"host\":\"%s/shared\"}]}}", dir);
	CHECK(unit_put(NULL, path, text, 0600) == 0);
	snprintf(path, sizeof(path), "%s/cat/upstreams/b.json", dir);
	snprintf(text, sizeof(text), "{\"transport\":\"stdio\",\"argv\":[\"/bin/true\"],"
		 "\"credentials\":{\"env\":{\"TOKEN\":\"%s/shared/token\"}}}", dir);
	CHECK(unit_put(NULL, path, text, 0600) == 0);
	snprintf(path, sizeof(path), "%s/cat", dir);
	CHECK(tg_catalog_load_dir(path, NULL, &cat, &err) == 0);
	CHECK(tg_gate_new(cat, NULL, &g, &err) == -1 && !g);
	if (!strstr(err.msg, "upstream b: the credential TOKEN") ||
	    !strstr(err.msg, "upstream a's sandbox.mounts[0]")) {
		fprintf(stderr, "# %s\n", err.msg);
		return -1;
	}
	tg_catalog_free(cat);
	unit_rmtree(dir);
	return 0;
}

/* A server whose listing flips between one tool and none (each
 * start counts in a writable mount) */
static const char flip_py[] =
	"import json, os, sys\n"
	"p = '/srv/flip/count'\n"
	"n = int(open(p).read() or '0') + 1\n"
	"open(p, 'w').write(str(n))\n"
	"tools = [{'name': 'die'}]\n"
	"if n % 2 == 1:\n"
	"    tools = [{'name': 'die', 'inputSchema': {'type': 'object'}},"
	" {'name': 't', 'description': 'x', 'inputSchema': {'type': 'object'}}]\n"
	"def send(m):\n"
	"    sys.stdout.write(json.dumps(m) + '\\n'); sys.stdout.flush()\n"
	"for line in sys.stdin:\n"
	"    m = json.loads(line); mid = m.get('id'); meth = m.get('method')\n"
	"    if mid is None: continue\n"
	"    if meth == 'initialize':\n"
	"        send({'jsonrpc': '2.0', 'id': mid, 'result': {'protocolVersion': '2025-11-25',"
	" 'capabilities': {'tools': {}}, 'serverInfo': {'name': 'flip', 'version': '1'}}})\n"
	"    elif meth == 'tools/list':\n"
	"        send({'jsonrpc': '2.0', 'id': mid, 'result': {'tools': tools}})\n"
	"    elif meth == 'tools/call':\n"
	"        os.kill(os.getpid(), 9)\n"
	"    else:\n"
	"        send({'jsonrpc': '2.0', 'id': mid, 'result': {}})\n";

/* tg_gate_release finds a snapshot by its catalogue's pointer: two
 * snapshots of the bare base (an upstream that lists nothing servable)
 * share one, and a release of the older one drops the current one. */
static int release_by_pointer(void)
{
	char srv[64], path[128], decl[512], code[64], ticket[64], *out;
	const char *ups[] = { "flip", decl, NULL };
	struct fix_spec spec = { "gateupflip", plain, NULL, TG_ANOMALY_DEFAULT, ups };
	const struct tg_catalog *c0, *d;
	struct tg_catalog *cat;
	int stale;
	struct tg_error err;
	struct fix f;

	CHECK(unit_tmpdir(srv, "flipsrv") == 0);
	chmod(srv, 0755);
	snprintf(path, sizeof(path), "%s/flip.py", srv);
	CHECK(unit_put(NULL, path, flip_py, 0644) == 0);
	snprintf(path, sizeof(path), "%s/count", srv);
	CHECK(unit_put(NULL, path, "", 0666) == 0);
	snprintf(decl, sizeof(decl), "{\"transport\":\"stdio\",\"argv\":[\"/usr/bin/python3\","
		 "\"/srv/flip/flip.py\"],\"sandbox\":{\"mounts\":[{\"host\":\"%s\",\"inside\":"
		 "\"/srv/flip\",\"writable\":true}]},\"tools\":{\"die\":{\"authority\":\"read\"},"
		 "\"t\":{\"authority\":\"read\"}}}", srv);
	if (fix_open(&f, &spec) < 0)
		return -1;
	/* S0: the bare base, held (a call on it) */
	c0 = tg_gate_acquire(f.gate);
	CHECK(c0 == f.cat);
	/* S1: the server's first listing, with flip.t; held (a long call) */
	CHECK(fix_wait_tool(f.gate, "flip.t", 1) == 0);
	d = tg_gate_acquire(f.gate);
	CHECK(d != c0);
	/* the server dies and comes back listing no flip.t: S2, the bare base again */
	out = fix_call_text(&f, "flip.die", "{}", NULL, code, ticket);
	free(out);
	CHECK(fix_wait_tool(f.gate, "flip.t", 0) == 0);
	/* the S0 holder is done: this must not drop S2, the current one */
	tg_gate_release(f.gate, c0);
	/* were snapshots released by a catalogue they share, the retired one
	 * with flip.t would be current again, and the next one installed
	 * would free it under d's holder (a use after free, below) */
	stale = fix_has_tool(f.gate, "flip.t");
	snprintf(path, sizeof(path), "%s/cat", f.dir);
	CHECK(tg_catalog_load_dir(path, NULL, &cat, &err) == 0);
	CHECK(tg_gate_reload(f.gate, cat, &err) == 0);
	CHECK(tg_catalog_count(d) == 3);
	tg_gate_release(f.gate, d);
	CHECK(!stale);
	fix_remove(&f);
	unit_rmtree(srv);
	return 0;
}

/* A reload whose snapshot cannot be made once the upstreams' runners
 * were made says it failed and changes nothing: the caller frees its
 * catalogue, and no runner made for it is left borrowing it. */
static int reload_fails_late(void)
{
	static const char *const ups[] = {
		"fake", "{" FAKE_ARGV ",\"tools\":{\"echo\":{\"authority\":\"read\"}}}", NULL,
	};
	struct fix_spec spec = { "gateupoom", plain, NULL, TG_ANOMALY_DEFAULT, ups };
	char path[256], text[8192];
	struct tg_catalog *cat;
	struct tg_error err;
	unsigned long n, failed = 0;
	struct fix f;
	json_t *list;
	size_t i;
	int rc;

	if (fix_open(&f, &spec) < 0)
		return -1;
	list = fix_tools_with(f.gate, "fake.echo");
	CHECK(list);
	json_decref(list);
	/* fake stays as it is (kept); b is new each time. Every allocation
	 * fails in turn under make check-long, every 7th otherwise (all of
	 * them took 24 s under the sanitizers here, a seventh 3.4 s) */
	for (n = 1; n < 3000; n += unit_long() ? 1 : 7) {
		/* reached over HTTP at a port nobody listens on: no sandbox to
		 * start for each try */
		snprintf(text, sizeof(text), "{\"transport\":\"http\",\"url\":"
			 "\"http://127.0.0.1:9/mcp?v=%lu\"}", n);
		snprintf(path, sizeof(path), "%s/cat/upstreams/b.json", f.dir);
		CHECK(unit_put(NULL, path, text, 0600) == 0);
		snprintf(path, sizeof(path), "%s/cat", f.dir);
		CHECK(tg_catalog_load_dir(path, NULL, &cat, &err) == 0);
		failalloc_arm(n);
		rc = tg_gate_reload(f.gate, cat, &err);
		failalloc_disarm();
		if (rc == 0) {
			if (!failalloc_failed())
				break;
			continue;
		}
		failed++;
		/* nothing of cat was taken: no runner of it is served (one would
		 * read cat after the caller frees it) */
		for (i = 0; i < f.gate->nups; i++)
			CHECK(f.gate->ups[i]->u != tg_catalog_upstream_at(cat, 0) &&
			      f.gate->ups[i]->u != tg_catalog_upstream_at(cat, 1));
		tg_catalog_free(cat); /* the caller's again, as tg_gate_reload says */
	}
	fix_remove(&f);
	/* the failures were injected, and a reload went through at last */
	CHECK(failed > 0 && n < 3000);
	return 0;
}

/* The listed tool named name of l, or NULL. */
static const struct tg_listed_tool *listed(const struct tg_upstream_listing *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->tools[i].name && strcmp(l->tools[i].name, name) == 0)
			return &l->tools[i];
	return NULL;
}

/* tg_gate_upstream_probe: the server seen once, each tool judged as the
 * gate judges it; a server that cannot start is said at its first
 * failure, not after the timeout. */
static int probes(void)
{
	static const char *const ups[] = {
		"fake",
		"{" FAKE_ARGV ",\"tools\":{\"echo\":{\"authority\":\"read\"},"
		"\"add\":{\"rename\":\"die\"},\"env\":{\"hide\":true}}}",
		NULL,
	};
	struct fix_spec spec = { "gateprobe", plain, NULL, TG_ANOMALY_DEFAULT, ups };
	struct tg_upstream_listing l;
	const struct tg_listed_tool *t;
	struct tg_catalog *cat = NULL;
	char text[1024], path[256];
	struct tg_error err;
	struct fix f;
	time_t began;

	if (fix_open(&f, &spec) < 0)
		return -1;
	CHECK(tg_gate_upstream_probe(f.cat, "nope", NULL, 15000, &l, &err) < 0 &&
	      err.code == TG_ERR_INVALID && l.n == 0);
	CHECK(tg_gate_upstream_probe(f.cat, "fake", NULL, 15000, &l, &err) == 0);
	t = listed(&l, "echo");
	CHECK(t && t->verdict == TG_LISTED_SERVED && t->contract &&
	      t->contract->authority == TG_AUTHORITY_READ && strstr(t->definition, "\"echo\""));
	t = listed(&l, "env");
	CHECK(t && t->verdict == TG_LISTED_HIDDEN && !t->contract);
	/* add, listed first, renamed onto the name die is exposed under:
	 * die withdrawn, as when serving */
	t = listed(&l, "add");
	CHECK(t && t->verdict == TG_LISTED_SERVED && strcmp(t->contract->name, "fake.die") == 0 &&
	      t->contract->authority == TG_AUTHORITY_WRITE);
	t = listed(&l, "die");
	CHECK(t && t->verdict == TG_LISTED_REFUSED && strstr(t->why, "served already"));
	/* every declared tool listed, its mount read-only: nothing to warn of */
	CHECK(l.nwarnings == 0 && !l.warnings);
	tg_upstream_listing_release(&l);
	tg_upstream_listing_release(&l);

	snprintf(text, sizeof(text), "{\"transport\":\"stdio\",\"argv\":[\"/usr/bin/no-such-"
		 "python\"]}");
	snprintf(path, sizeof(path), "%s/cat/upstreams/fake.json", f.dir);
	CHECK(unit_put(NULL, path, text, 0600) == 0);
	snprintf(path, sizeof(path), "%s/cat", f.dir);
	CHECK(tg_catalog_load_dir(path, NULL, &cat, &err) == 0);
	began = time(NULL);
	CHECK(tg_gate_upstream_probe(cat, "fake", NULL, 15000, &l, &err) < 0 &&
	      err.code == TG_ERR_UNAVAILABLE && strstr(err.msg, "/usr/bin/no-such-python"));
	CHECK(time(NULL) - began < 10);
	tg_catalog_free(cat);
	fix_close(&f);
	fix_remove(&f);
	return 0;
}

/* The library's warnings of one text, counted (absent_warned). */
static struct {
	pthread_mutex_t lock;
	int n, other_level;
} warned = { PTHREAD_MUTEX_INITIALIZER, 0, 0 };

#define ABSENT_SAID "upstream fake: tools.ech0: declared, but the server lists no such " \
		    "tool (did you mean echo?)"

static void keep_warning(void *ctx, enum tg_log_level level, const char *message)
{
	(void)ctx;
	if (strcmp(message, ABSENT_SAID) != 0)
		return;
	pthread_mutex_lock(&warned.lock);
	warned.n++;
	warned.other_level += level != TG_LOG_WARNING;
	pthread_mutex_unlock(&warned.lock);
}

static int warned_count(void)
{
	int n;

	pthread_mutex_lock(&warned.lock);
	n = warned.n;
	pthread_mutex_unlock(&warned.lock);
	return n;
}

/* A declared tool the server does not list (a misspelt key of tools) is
 * warned of, naming the upstream, the field and the near name: once a
 * listing, not each time the tools are made again (a reload of another
 * upstream), and again when the listing changes; its tools are served
 * all the same. The probe says it in its warnings. */
static int absent_warned(void)
{
	static const char *const ups[] = {
		"fake", "{" FAKE_ARGV ",\"tools\":{\"ech0\":{\"authority\":\"read\"},"
			"\"change\":{\"authority\":\"read\"}}}",
		"other", "{" FAKE_ARGV "}",
		NULL,
	};
	struct fix_spec spec = { "gateupabs", plain, NULL, TG_ANOMALY_DEFAULT, ups };
	char code[64], ticket[64], *out;
	struct tg_upstream_listing l;
	struct tg_error err;
	struct fix f;
	json_t *list;
	int i;

	tg_log_set(keep_warning, NULL);
	if (fix_open(&f, &spec) < 0)
		return -1;
	CHECK(tg_gate_upstream_probe(f.cat, "fake", NULL, 15000, &l, &err) == 0);
	CHECK(l.nwarnings == 1 && strcmp(l.warnings[0], ABSENT_SAID + strlen("upstream fake: ")) == 0);
	tg_upstream_listing_release(&l);
	list = fix_tools_with(f.gate, "fake.echo");
	CHECK(list && fix_tool(list, "fake.echo"));
	json_decref(list);
	CHECK(warned_count() == 1);
	/* the tools made again for another upstream: not said again */
	CHECK(redeclare(&f, "other", ",\"tools\":{\"echo\":{\"rename\":\"again\"}}") == 0);
	list = fix_tools_with(f.gate, "other.again");
	json_decref(list);
	CHECK(warned_count() == 1);
	/* a listing that changed: said again */
	out = fix_call_text(&f, "fake.change", "{\"description\":\"Echoes, anew.\"}", NULL, code,
			    ticket);
	CHECK(out && strncmp(out, "ok ", 3) == 0);
	free(out);
	for (i = 0; i < 500 && warned_count() < 2; i++)
		usleep(10 * 1000);
	CHECK(warned_count() == 2);
	pthread_mutex_lock(&warned.lock);
	i = warned.other_level;
	pthread_mutex_unlock(&warned.lock);
	CHECK(i == 0);
	fix_close(&f);
	tg_log_set(NULL, NULL);
	fix_remove(&f);
	return 0;
}

/* The fake server in mode mode (and its argument), mounted as FAKE_ARGV's. */
#define FAKE_MODE(mode) "\"transport\":\"stdio\",\"argv\":[\"/usr/bin/python3\"," \
		  "\"/srv/fake/fake_server.py\"," mode "],\"sandbox\":{\"mounts\":" \
		  "[{\"host\":\"@FAKE@\",\"inside\":\"/srv/fake\"}]}"

static const char *const starting_ups[] = {
	"slow", "{" FAKE_MODE("\"slowinit\",\"1.5\"") ",\"tools\":{\"echo\":{\"authority\":"
		"\"read\"}}}",
	"quick", "{" FAKE_MODE("\"normal\"") "}",
	"broken", "{\"transport\":\"stdio\",\"argv\":[\"/usr/bin/no-such-python\"]}",
	NULL,
};

/* A call of tool with args by alice that can be cancelled (a pipe
 * nobody writes), as a transport makes one outside a batch. */
static int call_cancellable(struct fix *f, const char *tool, const char *args,
			    struct tg_call_result *r, struct tg_error *err)
{
	struct tg_call call;
	int p[2], rc;

	if (pipe(p) < 0)
		return -1;
	memset(&call, 0, sizeof(call));
	call.principal = "alice";
	call.tool = tool;
	call.arguments = args;
	call.arguments_len = strlen(args);
	call.cancel_fd = p[0];
	rc = tg_gate_call(f->gate, &call, r, err);
	close(p[0]);
	close(p[1]);
	return rc;
}

/* A call before its upstream's server listed its tools: it waits for
 * that first listing, then runs; a call of an upstream whose server
 * cannot start is told why, retryable, not "no such tool" (unless its
 * scopes would not let it call the tool); a tool called
 * without its namespace names the tools it may have meant. */
static int calls_while_starting(void)
{
	struct fix_spec spec = { "gatestart", plain, NULL, TG_ANOMALY_DEFAULT, starting_ups };
	struct fix_call c = { "alice", "echo", "{}", NULL, NULL, NULL, 0 };
	char code[64], ticket[64], *out, *text;
	struct tg_call_result r;
	struct tg_error err;
	json_t *recs, *list;
	struct fix f;

	if (fix_open(&f, &spec) < 0)
		return -1;
	/* its server answers initialize 1.5 s after it starts: not listed */
	text = tg_gate_tools_json(f.gate, NULL, &err);
	CHECK(text && !strstr(text, "slow.echo"));
	free(text);
	/* a call that cannot be cancelled (in a batch) does not wait */
	out = fix_call_text(&f, "slow.echo", "{\"text\":\"batch\"}", NULL, code, ticket);
	CHECK(out && strcmp(code, "upstream_unavailable") == 0 && strstr(out, "still starting"));
	free(out);
	/* one that can waits, and runs */
	CHECK(call_cancellable(&f, "slow.echo", "{\"text\":\"early\"}", &r, &err) == 0);
	CHECK(!r.is_error && r.content_json && strstr(r.content_json, "early"));
	tg_call_result_release(&r);
	/* a server that cannot start: why, and call again */
	out = fix_call_text(&f, "broken.echo", "{}", NULL, code, ticket);
	CHECK(out && strcmp(code, "upstream_unavailable") == 0 &&
	      strstr(out, "broken.echo: upstream broken has not listed its tools yet: the server "
		     "is down (the sandbox ended it: setup_failed: exec /usr/bin/no-such-python: "
		     "No such file or directory): call again") && strstr(out, "\"retryable\":true"));
	free(out);
	/* nor for a caller that may not call it: it learns nothing of it */
	CHECK(fix_call(&f, &(struct fix_call){ "alice", "broken.echo", "{}", "quick.*:read", NULL,
					       NULL, 0 }, &r, &err) < 0 &&
	      err.code == TG_ERR_INVALID && strstr(err.msg, "no such tool"));
	/* under no upstream's namespace: no such tool, as ever */
	CHECK(fix_call(&f, &(struct fix_call){ "alice", "nothing.echo", "{}", NULL, NULL, NULL, 0 },
		       &r, &err) < 0 && err.code == TG_ERR_INVALID &&
	      strstr(err.msg, "no such tool") && !strstr(err.msg, "did you mean"));
	/* the upstream's own name: the served tools it may be */
	CHECK((list = fix_tools_with(f.gate, "quick.echo")) != NULL);
	json_decref(list);
	CHECK(fix_call(&f, &c, &r, &err) < 0 && err.code == TG_ERR_INVALID &&
	      strstr(err.msg, "tool 'echo': no such tool (did you mean quick.echo or slow.echo?)"));
	c.tool = "sum";
	CHECK(fix_call(&f, &c, &r, &err) < 0 && !strstr(err.msg, "did you mean"));
	c.tool = "add@1";
	CHECK(fix_call(&f, &c, &r, &err) < 0 &&
	      strstr(err.msg, "(did you mean quick.add or slow.add?)"));
	fix_close(&f);
	recs = fix_records(f.log);
	CHECK(recs && fix_count(recs, "call", "slow.echo", "ok", NULL) == 1);
	CHECK(fix_count(recs, "call", "slow.echo", "upstream_unavailable", NULL) == 1);
	CHECK(fix_count(recs, "call", "broken.echo", "upstream_unavailable", NULL) == 1);
	json_decref(recs);
	fix_remove(&f);
	return 0;
}

/* A listing just after the gate started waits for the upstreams making
 * their first listing (tg_gate_await_upstreams), not for one that failed. */
static int lists_while_starting(void)
{
	static const char *const ups[] = {
		"slow", "{" FAKE_MODE("\"slowinit\",\"0.2\"") "}",
		"broken", "{\"transport\":\"stdio\",\"argv\":[\"/usr/bin/no-such-python\"]}",
		NULL,
	};
	struct fix_spec spec = { "gatelist", plain, NULL, TG_ANOMALY_DEFAULT, ups };
	struct tg_error err;
	struct fix f;
	char *text;

	if (fix_open(&f, &spec) < 0)
		return -1;
	tg_gate_await_upstreams(f.gate);
	text = tg_gate_tools_json(f.gate, NULL, &err);
	CHECK(text && strstr(text, "\"slow.echo\"") && strstr(text, "\"plain\""));
	free(text);
	fix_close(&f);
	fix_remove(&f);
	return 0;
}

const struct unit_test gate_upstream_tests[] = {
	{ "gate_upstream/absent_warned", absent_warned },
	{ "gate_upstream/probes", probes },
	{ "gate_upstream/reload_fails_late", reload_fails_late },
	{ "gate_upstream/release_by_pointer", release_by_pointer },
	{ "gate_upstream/serves", serves },
	{ "gate_upstream/calls_while_starting", calls_while_starting },
	{ "gate_upstream/lists_while_starting", lists_while_starting },
	{ "gate_upstream/approved_once", approved_once },
	{ "gate_upstream/interrupted", interrupted },
	{ "gate_upstream/reloads", reloads },
	{ "gate_upstream/said_once", said_once },
	{ "gate_upstream/over_http", over_http },
	{ "gate_upstream/credential_exposed", credential_exposed },
	UNIT_TESTS_END
};
