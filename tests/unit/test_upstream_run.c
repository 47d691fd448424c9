/*
 * Unit tests: the runner of a stdio upstream (src/exec/upstream_run.c),
 * with tests/upstream/fake_server.py (mode runner) in the sandbox, declared
 * in a temporary catalogue (upstreams/fake.json) and loaded with
 * tg_upstream_load: its tools listed and called, a credential in its
 * environment and the gateway's own not, a mount readable and the rest of
 * the host absent, a server killed mid-call restarted, nothing left behind;
 * its requests to the client relayed to the call they are for and refused
 * when that cannot be told (with tests/upstream/late_server.py, a server
 * that asks for a call after it ended).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec/upstream_relay.h"
#include "exec/upstream_run.h"
#include "toolgate/upstream.h"
#include "unit.h"

#define SECRET "s3cr3t-for-the-test"
#define T 8000 /* ms: the first call waits for the server's start */

/* The log's lines, kept. */
struct said {
	pthread_mutex_t lock;
	char text[8192];
	size_t len;
};

static struct said said = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void keep_log(void *ctx, enum tg_log_level level, const char *message)
{
	struct said *s = ctx;

	(void)level;
	pthread_mutex_lock(&s->lock);
	s->len += (size_t)snprintf(s->text + s->len, sizeof(s->text) - s->len, "%s\n", message);
	if (s->len >= sizeof(s->text))
		s->len = sizeof(s->text) - 1;
	pthread_mutex_unlock(&s->lock);
}

/* The log's lines kept in said, from none. */
static void log_keep(void)
{
	tg_log_set(keep_log, &said);
	pthread_mutex_lock(&said.lock);
	said.len = 0;
	said.text[0] = '\0';
	pthread_mutex_unlock(&said.lock);
}

/* 1 when the log holds needle, waiting at most a second. */
static int log_has(const char *needle)
{
	int i, yes = 0;

	for (i = 0; i < 100 && !yes; i++) {
		pthread_mutex_lock(&said.lock);
		yes = strstr(said.text, needle) != NULL;
		pthread_mutex_unlock(&said.lock);
		if (!yes)
			usleep(10000);
	}
	return yes;
}

/* upstreams/fake.json: tests/upstream/fake_server.py runner, and extra. */
static int declare(const char *dir, const char *extra, struct tg_upstream **u)
{
	return unit_declare_upstream(dir, "fake_server.py\", \"runner\"", extra, u);
}

static int count_dir(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

/* The children of every thread of this process: 0 when none. */
static int children(void)
{
	char path[PATH_MAX], buf[64];
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;
	FILE *f;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/children", e->d_name);
		f = fopen(path, "r");
		if (f) {
			n += fgets(buf, sizeof(buf), f) != NULL && buf[0] != '\n';
			fclose(f);
		}
	}
	if (d)
		closedir(d);
	return n;
}

/* r freed: 0 when no process, descriptor or thread is left beyond the
 * fds and threads counted before it was made. */
static int stopped_clean(struct upstream_run *r, int fds, int threads)
{
	upstream_run_free(r);
	CHECK(children() == 0);
	CHECK(count_dir("/proc/self/fd") == fds);
	CHECK(count_dir("/proc/self/task") == threads);
	return 0;
}

/* One call; its structuredContent's member key, or NULL (the error in
 * err). */
static json_t *call(struct upstream_run *r, const char *tool, const char *args,
		    struct tg_error *err)
{
	char *text = NULL;
	json_t *res, *sc;

	if (upstream_run_call(r, tool, args, T, -1, &text, err) < 0)
		return NULL;
	res = json_loads(text, 0, NULL);
	free(text);
	sc = json_incref(json_object_get(res, "structuredContent"));
	json_decref(res);
	return sc;
}

/* The server runs in the sandbox: its tools listed and called, the
 * credential given, the gateway's environment not; the mount readable,
 * the rest of the host absent; its stderr logged redacted. */
static int serves(void)
{
	char dir[64], extra[4096], data[PATH_MAX], state[PATH_MAX], *tools, *args;
	const char *p;
	uint64_t listing = 0;
	int i;
	struct exec_dirs_options dopts = { 0 };
	struct upstream_run_options ro = { 0 };
	struct exec_dirs *dirs = NULL;
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;
	json_t *v;

	tg_log_set(keep_log, &said);
	setenv("TG_TEST_HOST_SECRET", "the-gateway-s-own", 1);
	CHECK(unit_tmpdir(dir, "uprun") == 0);
	snprintf(data, sizeof(data), "%s/data", dir);
	snprintf(state, sizeof(state), "%s/state", dir);
	CHECK(mkdir(data, 0755) == 0 && mkdir(state, 0700) == 0);
	CHECK(unit_put(data, "f.txt", "mounted", 0644) == 0);
	CHECK(unit_put(dir, "outside.txt", "not given", 0644) == 0);
	CHECK(unit_put(dir, "token", SECRET "\r\n", 0600) == 0);
	snprintf(extra, sizeof(extra),
		 ", \"env\": {\"PLAIN\": \"1\"}, \"credentials\": {\"env\": {\"TG_TEST_TOKEN\": "
		 "\"%s/token\"}}", dir);
	CHECK(declare(dir, extra, &u) == 0);
	/* a second mount, read-only, for the data */
	u->mounts = realloc(u->mounts, 2 * sizeof(*u->mounts));
	CHECK(u->mounts);
	u->mounts[1].host = strdup(data);
	u->mounts[1].inside = strdup("/data");
	u->mounts[1].writable = 0;
	u->nmounts = 2;
	dopts.state_dir = state;
	CHECK(exec_dirs_new(&dopts, &dirs, &err) == 0);
	ro.dirs = dirs;
	if (upstream_run_new(u, &ro, &r, &err) < 0) {
		fprintf(stderr, "new: %s\n", err.msg);
		return -1;
	}
	if (upstream_run_wait(r, T, &err) < 0) {
		fprintf(stderr, "wait: %s\n", err.msg);
		return -1;
	}
	tools = upstream_run_tools(r, &listing);
	CHECK(tools && strstr(tools, "\"echo\"") && strstr(tools, "\"die\"") &&
	      strstr(tools, "\"read\""));
	CHECK(listing == 1);
	free(tools);
	v = call(r, "echo", "{\"text\":\"hi\"}", &err);
	CHECK(v && strcmp(json_string_value(json_object_get(v, "text")), "hi") == 0);
	json_decref(v);
	/* the credential, its CR LF stripped; compared, never printed */
	v = call(r, "env", "{\"name\":\"TG_TEST_TOKEN\"}", &err);
	CHECK(v && json_is_true(json_object_get(v, "set")));
	CHECK(strcmp(json_string_value(json_object_get(v, "value")), SECRET) == 0);
	json_decref(v);
	v = call(r, "env", "{\"name\":\"PLAIN\"}", &err);
	CHECK(v && json_is_true(json_object_get(v, "set")));
	json_decref(v);
	v = call(r, "env", "{\"name\":\"TG_TEST_HOST_SECRET\"}", &err);
	CHECK(v && json_is_false(json_object_get(v, "set")));
	json_decref(v);
	v = call(r, "read", "{\"path\":\"/data/f.txt\"}", &err);
	CHECK(v && strcmp(json_string_value(json_object_get(v, "text")), "mounted") == 0);
	json_decref(v);
	snprintf(extra, sizeof(extra), "{\"path\":\"%s/outside.txt\"}", dir);
	v = call(r, "read", extra, &err);
	CHECK(v && json_is_false(json_object_get(v, "ok")));
	json_decref(v);
	/* nor is the credential's file */
	snprintf(extra, sizeof(extra), "{\"path\":\"%s/token\"}", dir);
	v = call(r, "read", extra, &err);
	CHECK(v && json_is_false(json_object_get(v, "ok")));
	json_decref(v);
	/* stderr: prefixed, redacted, a long line cut */
	v = call(r, "say", "{\"lines\":[\"hello from fake\",\"key ghp_0123456789abcdefghijklmnopqrstuvwxyzAB\"]}",
		 &err);
	CHECK(v);
	json_decref(v);
	CHECK(log_has("upstream fake: hello from fake"));
	CHECK(log_has("upstream fake: key [REDACTED:"));
	CHECK(!log_has("ghp_0123456789"));
	/* past the rate, lines are counted, not logged; a long line is cut */
	memset(extra, 'a', 3000);
	extra[3000] = '\0';
	v = json_pack("{s:[s]}", "lines", extra);
	for (i = 0; v && i < 120; i++)
		json_array_append_new(json_object_get(v, "lines"), json_string("chatty"));
	args = json_dumps(v, JSON_COMPACT);
	json_decref(v);
	CHECK(args);
	v = call(r, "say", args, &err);
	free(args);
	CHECK(v);
	json_decref(v);
	usleep(300000);
	v = call(r, "say", "{\"lines\":[\"after the flood\"]}", &err);
	CHECK(v);
	json_decref(v);
	CHECK(log_has("upstream fake: after the flood"));
	/* what a terminal acts on (a C1 CSI, a bidi override), and the
	 * server's own error text, as the log may show them */
	usleep(1100000);
	v = call(r, "say", "{\"lines\":[\"csi \\u009b31m rlo \\u202e end\"]}", &err);
	CHECK(v);
	json_decref(v);
	CHECK(log_has("upstream fake: csi ?31m rlo ? end"));
	v = call(r, "fail", "{\"message\":\"\\u001b]0;x\\u0007 token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB\"}",
		 &err);
	CHECK(!v && strstr(err.msg, "upstream fake: fail") && !strchr(err.msg, 0x1b) &&
	      !strchr(err.msg, 0x07) && !strstr(err.msg, "ghp_0123456789") &&
	      strstr(err.msg, "[REDACTED:"));
	CHECK(log_has("lines of its stderr not logged"));
	if (!log_has("aaaa [cut]"))
		fprintf(stderr, "%s", said.text);
	CHECK(log_has("aaaa [cut]"));
	pthread_mutex_lock(&said.lock);
	for (i = 0, p = said.text; (p = strstr(p, "chatty")); p++)
		i++;
	pthread_mutex_unlock(&said.lock);
	CHECK(i >= 40 && i <= 60);
	CHECK(!log_has(SECRET));
	upstream_run_free(r);
	exec_dirs_free(dirs);
	tg_upstream_free(u);
	tg_log_set(NULL, NULL);
	unit_rmtree(dir);
	return 0;
}

/* A server killed mid-call: the call fails naming the upstream and the
 * signal, the server is started again, the next call works; stopping
 * leaves no process, thread or descriptor. */
static int restarts(void)
{
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;
	char dir[64], *text = NULL;
	uint64_t listing = 0;
	int fds, threads;
	json_t *v;

	CHECK(unit_tmpdir(dir, "uprun") == 0);
	CHECK(declare(dir, "", &u) == 0);
	fds = count_dir("/proc/self/fd");
	threads = count_dir("/proc/self/task");
	CHECK(upstream_run_new(u, NULL, &r, &err) == 0);
	CHECK(upstream_run_call(r, "die", NULL, T, -1, &text, &err) == -1 && !text);
	if (err.code != TG_ERR_UNAVAILABLE || !strstr(err.msg, "upstream fake: die:") ||
	    !strstr(err.msg, "signal 9")) {
		fprintf(stderr, "die: %s\n", err.msg);
		return -1;
	}
	v = call(r, "echo", "{\"text\":\"again\"}", &err);
	if (!v)
		fprintf(stderr, "echo: %s\n", err.msg);
	CHECK(v && strcmp(json_string_value(json_object_get(v, "text")), "again") == 0);
	json_decref(v);
	CHECK(upstream_run_starts(r) == 2);
	/* the same tools after the restart: the listing has not changed */
	free(upstream_run_tools(r, &listing));
	CHECK(listing == 1);
	CHECK(stopped_clean(r, fds, threads) == 0);
	tg_upstream_free(u);
	unit_rmtree(dir);
	return 0;
}

/* One call's structuredContent member key as an integer, or -1. */
static long long call_int(struct upstream_run *r, const char *tool, const char *args,
			  const char *key)
{
	struct tg_error err;
	json_t *v = call(r, tool, args, &err);
	long long n = json_is_integer(json_object_get(v, key))
			      ? (long long)json_integer_value(json_object_get(v, key)) : -1;

	if (!v)
		fprintf(stderr, "%s: %s\n", tool, err.msg);
	json_decref(v);
	return n;
}

static void count_changes(void *ctx)
{
	__atomic_add_fetch((int *)ctx, 1, __ATOMIC_SEQ_CST);
}

/* The server changes its tools and says so: they are listed again, the
 * listing's number goes up and the owner is told; a burst of
 * list_changed is listed a few times, not once each; a listing that
 * fails keeps the one before, logged redacted. One server keeps its
 * state across calls. */
static int relists(void)
{
	struct upstream_run_options ro = { 0 };
	struct upstream_run_stats st;
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;
	char dir[64], *tools;
	uint64_t listing = 0;
	int changes = 0, i;
	long long lists;
	json_t *v;

	log_keep(); /* from none: serves left a redaction in the log */
	CHECK(unit_tmpdir(dir, "uprun") == 0);
	CHECK(declare(dir, "", &u) == 0);
	ro.tools_changed = count_changes;
	ro.tools_ctx = &changes;
	CHECK(upstream_run_new(u, &ro, &r, &err) == 0);
	CHECK(upstream_run_wait(r, T, &err) == 0);
	free(upstream_run_tools(r, &listing));
	CHECK(listing == 1);
	/* told after the server is up: wait can return first */
	for (i = 0; i < 100 && !__atomic_load_n(&changes, __ATOMIC_SEQ_CST); i++)
		usleep(10000);
	CHECK(__atomic_load_n(&changes, __ATOMIC_SEQ_CST) == 1);
	v = call(r, "change", "{\"description\":\"Rug pulled.\",\"notify\":20}", &err);
	CHECK(v && json_is_true(json_object_get(v, "changed")));
	json_decref(v);
	for (i = 0; i < 500 && listing < 2; i++) {
		usleep(10000);
		free(upstream_run_tools(r, &listing));
	}
	tools = upstream_run_tools(r, &listing);
	CHECK(listing == 2 && tools && strstr(tools, "Rug pulled."));
	free(tools);
	for (i = 0; i < 100 && __atomic_load_n(&changes, __ATOMIC_SEQ_CST) < 2; i++)
		usleep(10000);
	CHECK(__atomic_load_n(&changes, __ATOMIC_SEQ_CST) == 2);
	/* the burst's listings are over: two pages each, the first and at
	 * most three more for twenty notifications */
	usleep(1000000);
	lists = call_int(r, "lists", NULL, "lists");
	CHECK(lists >= 4 && lists <= 8);
	upstream_run_get_stats(r, &st);
	CHECK(st.relists >= 1 && st.relists <= 3 && st.relist_failures == 0);
	free(upstream_run_tools(r, &listing));
	CHECK(listing == 2 && __atomic_load_n(&changes, __ATOMIC_SEQ_CST) == 2);

	/* a listing that fails: the one before stays */
	v = call(r, "breaklist", NULL, &err);
	CHECK(v && json_is_true(json_object_get(v, "broken")));
	json_decref(v);
	for (i = 0; i < 500 && st.relist_failures == 0; i++) {
		usleep(10000);
		upstream_run_get_stats(r, &st);
	}
	CHECK(st.relist_failures == 1);
	CHECK(log_has("upstream fake: its tools changed, but listing them again failed"));
	CHECK(log_has("[REDACTED:") && !log_has("ghp_0123456789"));
	tools = upstream_run_tools(r, &listing);
	CHECK(listing == 2 && tools && strstr(tools, "Rug pulled."));
	free(tools);

	/* one long-lived server: its state stays between calls */
	CHECK(call_int(r, "count", NULL, "count") == 1);
	CHECK(call_int(r, "count", NULL, "count") == 2);
	CHECK(call_int(r, "count", NULL, "count") == 3);
	CHECK(upstream_run_starts(r) == 1);
	upstream_run_free(r);
	CHECK(children() == 0);
	tg_upstream_free(u);
	tg_log_set(NULL, NULL);
	unit_rmtree(dir);
	return 0;
}

/* A call's progress events, kept one a line. */
struct events {
	pthread_mutex_t lock;
	char text[4096];
	size_t len;
	int n;
};

static void keep_event(void *ctx, const char *event)
{
	struct events *e = ctx;

	pthread_mutex_lock(&e->lock);
	e->len += (size_t)snprintf(e->text + e->len, sizeof(e->text) - e->len, "%s\n", event);
	if (e->len >= sizeof(e->text))
		e->len = sizeof(e->text) - 1;
	e->n++;
	pthread_mutex_unlock(&e->lock);
}

/* progress tool: the call's token as the server saw it (text, malloc'd),
 * or NULL. */
static char *progress_call(struct upstream_run *r, const struct upstream_run_call_hooks *h)
{
	char *text = NULL, *token = NULL;
	struct tg_error err;
	json_t *res, *t;

	if (upstream_run_call_ex(r, "progress", "{\"n\":3,\"message\":\"key "
				 "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB\"}", T, -1, h, &text,
				 &err) < 0) {
		fprintf(stderr, "progress: %s\n", err.msg);
		return NULL;
	}
	res = json_loads(text, 0, NULL);
	t = json_object_get(json_object_get(res, "structuredContent"), "token");
	token = json_dumps(t, JSON_ENCODE_ANY);
	json_decref(res);
	free(text);
	return token;
}

/* 0 once no process of this one's is left, waiting at most two
 * seconds (a server being stopped). */
static int no_children(void)
{
	int i;

	for (i = 0; i < 200 && children(); i++)
		usleep(10000);
	return children() == 0 ? 0 : -1;
}

/* per_call: the server started to list the tools, then stopped; each call
 * a fresh server (its state starts again), ended when the call returns,
 * its credential read again; a credential gone fails that call by name;
 * nothing left behind after each call or at the end. */
static int per_call(void)
{
	char dir[64], extra[PATH_MAX + 128], path[PATH_MAX], *text = NULL, *tools;
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;
	struct events ev = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct upstream_run_call_hooks h = { .notify = keep_event, .ctx = &ev };
	uint64_t listing = 0;
	int fds, threads, i;
	json_t *v;

	CHECK(unit_tmpdir(dir, "uprun") == 0);
	CHECK(unit_put(dir, "token", SECRET, 0600) == 0);
	snprintf(extra, sizeof(extra), ", \"per_call\": true, \"credentials\": {\"env\": "
		 "{\"TG_TEST_TOKEN\": \"%s/token\"}}", dir);
	CHECK(declare(dir, extra, &u) == 0 && u->per_call);
	fds = count_dir("/proc/self/fd");
	threads = count_dir("/proc/self/task");
	CHECK(upstream_run_new(u, NULL, &r, &err) == 0);
	CHECK(upstream_run_wait(r, T, &err) == 0);
	tools = upstream_run_tools(r, &listing);
	CHECK(listing == 1 && tools && strstr(tools, "\"count\""));
	free(tools);
	/* the listing's server is stopped once it has listed */
	CHECK(no_children() == 0);
	for (i = 0; i < 3; i++) {
		CHECK(call_int(r, "count", NULL, "count") == 1);
		CHECK(children() == 0);
	}
	CHECK(upstream_run_starts(r) == 4);
	v = call(r, "env", "{\"name\":\"TG_TEST_TOKEN\"}", &err);
	CHECK(v && strcmp(json_string_value(json_object_get(v, "value")), SECRET) == 0);
	json_decref(v);
	/* its progress, from the call's own server */
	tools = progress_call(r, &h);
	CHECK(tools && ev.n == 3);
	free(tools);
	CHECK(upstream_run_starts(r) == 6);
	/* a server that dies mid-call: that call fails, the next works */
	CHECK(upstream_run_call(r, "die", NULL, T, -1, &text, &err) == -1 && !text);
	CHECK(err.code == TG_ERR_UNAVAILABLE && strstr(err.msg, "signal 9"));
	CHECK(call_int(r, "count", NULL, "count") == 1);
	/* checked again at each start: a credential gone is that call's
	 * failure, named */
	snprintf(path, sizeof(path), "%s/token", dir);
	CHECK(unlink(path) == 0);
	CHECK(upstream_run_call(r, "count", NULL, T, -1, &text, &err) == -1 && !text);
	CHECK(strstr(err.msg, "upstream fake") && strstr(err.msg, "credentials.env.TG_TEST_TOKEN"));
	CHECK(children() == 0);
	CHECK(stopped_clean(r, fds, threads) == 0);
	tg_upstream_free(u);
	unit_rmtree(dir);
	return 0;
}

/* Calls at once, per_call: each its own server, at most
 * UPSTREAM_RUN_PER_CALL_MAX at a time, all answered. */
struct racer {
	struct upstream_run *r;
	long long count;
	int done;
};

static void *race(void *arg)
{
	struct racer *k = arg;

	k->count = call_int(k->r, "count", NULL, "count");
	__atomic_store_n(&k->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

static int per_call_at_once(void)
{
	struct racer k[UPSTREAM_RUN_PER_CALL_MAX + 2];
	pthread_t t[UPSTREAM_RUN_PER_CALL_MAX + 2];
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;
	char dir[64];
	size_t i, n = UPSTREAM_RUN_PER_CALL_MAX + 2, done = 0;
	int most = 0, now;

	CHECK(unit_tmpdir(dir, "uprun") == 0);
	CHECK(declare(dir, ", \"per_call\": true", &u) == 0);
	CHECK(upstream_run_new(u, NULL, &r, &err) == 0);
	CHECK(upstream_run_wait(r, T, &err) == 0);
	for (i = 0; i < n; i++) {
		k[i].r = r;
		k[i].count = 0;
		k[i].done = 0;
		CHECK(pthread_create(&t[i], NULL, race, &k[i]) == 0);
	}
	/* a server is a child of the thread that runs it: never more than
	 * the bound at once */
	while (done < n) {
		now = children();
		most = now > most ? now : most;
		usleep(2000);
		for (i = 0, done = 0; i < n; i++)
			done += (size_t)__atomic_load_n(&k[i].done, __ATOMIC_SEQ_CST);
	}
	CHECK(most <= UPSTREAM_RUN_PER_CALL_MAX);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	for (i = 0; i < n; i++)
		CHECK(k[i].count == 1);
	CHECK(upstream_run_starts(r) == 1 + n);
	upstream_run_free(r);
	CHECK(children() == 0);
	tg_upstream_free(u);
	unit_rmtree(dir);
	return 0;
}

/* A call's progress: a token of its own on the request, each
 * notification with it delivered to the call's hook in the command
 * tools' shape before the call returns, one with another token dropped
 * and counted; the server's log messages logged redacted. */
static int progress(void)
{
	struct events ev = { .lock = PTHREAD_MUTEX_INITIALIZER };
	struct upstream_run_call_hooks h = { .notify = keep_event, .ctx = &ev };
	struct upstream_run_stats st;
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;
	char dir[64], *t1, *t2, *t3;

	tg_log_set(keep_log, &said);
	CHECK(unit_tmpdir(dir, "uprun") == 0);
	CHECK(declare(dir, "", &u) == 0);
	CHECK(upstream_run_new(u, NULL, &r, &err) == 0);
	t1 = progress_call(r, &h);
	CHECK(t1 && strncmp(t1, "\"toolgate-", 10) == 0);
	/* every one before the answer, in order, nothing else */
	CHECK(ev.n == 3);
	CHECK(strcmp(ev.text,
		     "{\"progress\":{\"progress\":1,\"total\":3,\"message\":\"step 1\"}}\n"
		     "{\"progress\":{\"progress\":2,\"total\":3,\"message\":\"step 2\"}}\n"
		     "{\"progress\":{\"progress\":3,\"total\":3,\"message\":\"step 3\"}}\n") == 0);
	upstream_run_get_stats(r, &st);
	CHECK(st.progress_dropped == 1);
	/* another call, another token */
	t2 = progress_call(r, &h);
	CHECK(t2 && strncmp(t2, "\"toolgate-", 10) == 0 && strcmp(t1, t2) != 0);
	CHECK(ev.n == 6);
	/* without hooks no token is asked for: what comes is dropped */
	t3 = progress_call(r, NULL);
	CHECK(t3 && strcmp(t3, "null") == 0);
	CHECK(ev.n == 6);
	/* a dropped notification waits for no call: the reader may count
	 * it a moment after the answer woke the caller (seen once in a
	 * loaded run); the count must still come to exactly this */
	for (int i = 0; i < 500; i++) {
		upstream_run_get_stats(r, &st);
		if (st.progress_dropped >= 2 + 4)
			break;
		usleep(10000);
	}
	if (st.progress_dropped != 2 + 4)
		fprintf(stderr, "progress_dropped %llu\n", (unsigned long long)st.progress_dropped);
	CHECK(st.progress_dropped == 2 + 4);
	free(t1);
	free(t2);
	free(t3);
	CHECK(log_has("upstream fake: [warning fake] key [REDACTED:"));
	CHECK(!log_has("ghp_0123456789"));
	upstream_run_free(r);
	tg_upstream_free(u);
	tg_log_set(NULL, NULL);
	unit_rmtree(dir);
	return 0;
}

/* What the gateway keeps is not given: a mount of the state directory, a
 * credential that is a file of its own, in its state directory, or whose
 * mode changed since the declaration loaded; each refused by name. */
static int refuses(void)
{
	char dir[64], state[PATH_MAX], own[PATH_MAX], extra[PATH_MAX + 128];
	const char *own_files[] = { own, NULL };
	struct exec_dirs_options dopts = { 0 };
	struct upstream_run_options ro = { 0 };
	struct exec_dirs *dirs = NULL;
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;

	CHECK(unit_tmpdir(dir, "uprun") == 0);
	snprintf(state, sizeof(state), "%s/state", dir);
	snprintf(own, sizeof(own), "%s/tokens.json", dir);
	CHECK(mkdir(state, 0700) == 0);
	CHECK(unit_put(dir, "tokens.json", "{}", 0600) == 0 && unit_put(state, "k", "x", 0600) == 0);
	CHECK(unit_put(dir, "loose", "x", 0600) == 0);
	dopts.state_dir = state;
	dopts.own_files = own_files;
	CHECK(exec_dirs_new(&dopts, &dirs, &err) == 0);
	ro.dirs = dirs;

	/* the state directory as a mount */
	CHECK(declare(dir, "", &u) == 0);
	free(u->mounts[0].host);
	u->mounts[0].host = strdup(state);
	CHECK(upstream_run_new(u, &ro, &r, &err) == -1 && !r);
	CHECK(strstr(err.msg, "upstream fake: sandbox.mounts[0]") && strstr(err.msg, "state"));
	tg_upstream_free(u);

	/* the gateway's token file as a credential */
	snprintf(extra, sizeof(extra), ", \"credentials\": {\"env\": {\"K\": \"%s\"}}", own);
	CHECK(declare(dir, extra, &u) == 0);
	CHECK(upstream_run_new(u, &ro, &r, &err) == -1 && !r);
	CHECK(strstr(err.msg, "upstream fake: credentials.env.K") &&
	      strstr(err.msg, "gateway's own"));
	tg_upstream_free(u);

	/* a file of the state directory */
	snprintf(extra, sizeof(extra), ", \"credentials\": {\"env\": {\"K\": \"%s/k\"}}", state);
	CHECK(declare(dir, extra, &u) == 0);
	CHECK(upstream_run_new(u, &ro, &r, &err) == -1 && !r);
	CHECK(strstr(err.msg, "credentials.env.K") && strstr(err.msg, "state directory"));
	tg_upstream_free(u);

	/* a credential in one of its own mounts: the server could read it
	 * there, or swap it for a link before a restart */
	snprintf(extra, sizeof(extra), "%s/m", dir);
	CHECK(mkdir(extra, 0700) == 0 && unit_put(extra, "tok", "x", 0600) == 0);
	snprintf(extra, sizeof(extra), ", \"credentials\": {\"env\": {\"K\": \"%s/m/tok\"}}", dir);
	CHECK(declare(dir, extra, &u) == 0);
	free(u->mounts[0].host);
	snprintf(extra, sizeof(extra), "%s/m", dir);
	u->mounts[0].host = strdup(extra);
	CHECK(upstream_run_new(u, &ro, &r, &err) == -1 && !r);
	CHECK(strstr(err.msg, "credentials.env.K") && strstr(err.msg, "its own mounts"));
	tg_upstream_free(u);

	/* a mode loosened after the load */
	snprintf(extra, sizeof(extra), ", \"credentials\": {\"env\": {\"K\": \"%s/loose\"}}", dir);
	CHECK(declare(dir, extra, &u) == 0);
	snprintf(own, sizeof(own), "%s/loose", dir);
	CHECK(chmod(own, 0640) == 0);
	CHECK(upstream_run_new(u, &ro, &r, &err) == -1 && !r);
	CHECK(strstr(err.msg, "credentials.env.K") && strstr(err.msg, "0600"));
	tg_upstream_free(u);

	exec_dirs_free(dirs);
	unit_rmtree(dir);
	return 0;
}

/* ---- relay: the server's requests to the caller's client ---- */

/* What the ask hook saw and how it answers. */
struct asked {
	pthread_mutex_t lock;
	int n;                   /* requests it was given */
	char last[512];          /* the last of them */
	int slow_ms;             /* it takes this long to answer */
	int block;               /* it waits for *stop, then answers nothing */
	int cancel_w;            /* >= 0: it stops the call (MRTR) and answers "" */
	int big;                 /* it answers a result over UPSTREAM_MAX_MESSAGE */
};

static char *ask_hook(void *ctx, const char *request, const volatile int *stop)
{
	struct asked *a = ctx;

	pthread_mutex_lock(&a->lock);
	a->n++;
	snprintf(a->last, sizeof(a->last), "%s", request);
	pthread_mutex_unlock(&a->lock);
	if (a->slow_ms)
		usleep((unsigned)a->slow_ms * 1000);
	while (a->block && !*stop)
		usleep(10000);
	if (a->block)
		return NULL;
	if (a->cancel_w >= 0) {
		/* as session_ask.c's MRTR does: the call's cancel pipe */
		if (write(a->cancel_w, "x", 1) < 0)
			return NULL;
		return strdup("");
	}
	if (a->big) {
		char *text = malloc(UPSTREAM_MAX_MESSAGE + 64);

		if (text) {
			memset(text, 'x', UPSTREAM_MAX_MESSAGE + 63);
			memcpy(text, "{\"result\":{\"model\":\"", 20);
			memcpy(text + UPSTREAM_MAX_MESSAGE + 60, "\"}}", 4);
		}
		return text;
	}
	return strdup("{\"result\":{\"model\":\"m\",\"role\":\"assistant\"}}");
}

/* The ask tool called with args and hooks: its answers (owned), or NULL
 * and err. */
static json_t *asking(struct upstream_run *r, const char *args, int timeout_ms, int cancel_fd,
		      const struct upstream_run_call_hooks *h, struct tg_error *err)
{
	char *text = NULL;
	json_t *res, *a;

	if (upstream_run_call_ex(r, "ask", args, timeout_ms, cancel_fd, h, &text, err) < 0)
		return NULL;
	res = json_loads(text, 0, NULL);
	free(text);
	a = json_incref(json_object_get(json_object_get(res, "structuredContent"), "answers"));
	json_decref(res);
	return a;
}

/* answers[i]'s error code, 0 when it has none. */
static long long answer_code(json_t *answers, size_t i)
{
	return json_integer_value(json_object_get(
		json_object_get(json_array_get(answers, i), "error"), "code"));
}

/* answers[i]'s error message, "" when it has none. */
static const char *answer_message(json_t *answers, size_t i)
{
	const char *m = json_string_value(json_object_get(json_object_get(
		json_array_get(answers, i), "error"), "message"));

	return m ? m : "";
}

struct asker_call {
	struct upstream_run *r;
	const struct upstream_run_call_hooks *h;
	json_t *answers;
};

static void *ask_held(void *arg)
{
	struct asker_call *k = arg;
	struct tg_error err;

	k->answers = asking(k->r, "{\"hold\":1,\"method\":\"sampling/createMessage\"}", T, -1,
			    k->h, &err);
	return NULL;
}

#define SAMPLE "{\"method\":\"sampling/createMessage\",\"params\":{\"maxTokens\":5}}"

/* A request the declaration relays reaches the call's hook and its answer
 * the server; one it does not relay, or from a server with several calls
 * in flight, or to a call with no hook, is refused and never reaches a
 * hook; at most UPSTREAM_RELAY_MAX wait at once; a call that ends, or is
 * stopped to ask (""), leaves nothing behind. */
static int relays(void)
{
	struct asked a = { .lock = PTHREAD_MUTEX_INITIALIZER, .cancel_w = -1 };
	struct upstream_run_call_hooks h = { .ctx = &a, .ask = ask_hook };
	struct asker_call k = { 0 };
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;
	char dir[64], args[2048];
	int fds, threads, i, refused = 0, answered = 0;
	pthread_t t;
	json_t *v;

	tg_log_set(keep_log, &said);
	CHECK(unit_tmpdir(dir, "uprelay") == 0);
	CHECK(declare(dir, ", \"relay\": [\"sampling\"]", &u) == 0);
	fds = count_dir("/proc/self/fd");
	threads = count_dir("/proc/self/task");
	CHECK(upstream_run_new(u, NULL, &r, &err) == 0);
	v = asking(r, SAMPLE, T, -1, &h, &err);
	CHECK(v && strcmp(json_string_value(json_object_get(json_object_get(
		     json_array_get(v, 0), "result"), "model")), "m") == 0);
	CHECK(a.n == 1 && strstr(a.last, "\"method\":\"sampling/createMessage\"") &&
	      strstr(a.last, "\"maxTokens\":5"));
	json_decref(v);
	/* not declared: refused, named, logged, the hook never asked */
	v = asking(r, "{\"method\":\"elicitation/create\",\"params\":{}}", T, -1, &h, &err);
	CHECK(v && answer_code(v, 0) == -32601 && a.n == 1);
	CHECK(strstr(json_string_value(json_object_get(json_object_get(json_array_get(v, 0),
		     "error"), "message")), "upstream fake: elicitation/create is not relayed: its "
		     "declaration's relay does not name elicitation"));
	json_decref(v);
	CHECK(log_has("upstream fake: refused its request elicitation/create"));
	/* a call without a hook: its client cannot be asked */
	v = asking(r, SAMPLE, T, -1, NULL, &err);
	CHECK(v && answer_code(v, 0) == -32601 && a.n == 1);
	json_decref(v);
	/* two calls in flight: nobody can tell whose it is */
	k.r = r;
	k.h = &h;
	CHECK(pthread_create(&t, NULL, ask_held, &k) == 0);
	usleep(300 * 1000);
	v = call(r, "echo", "{\"text\":\"meanwhile\"}", &err);
	pthread_join(t, NULL);
	CHECK(v && k.answers && answer_code(k.answers, 0) == -32603 && a.n == 1);
	CHECK(strstr(json_string_value(json_object_get(json_object_get(
		     json_array_get(k.answers, 0), "error"), "message")),
		     "toolgate cannot tell which call this request is for"));
	json_decref(v);
	json_decref(k.answers);
	/* seven at once to a slow client: at most UPSTREAM_RELAY_MAX wait */
	snprintf(args, sizeof(args), "{\"requests\":[%s,%s,%s,%s,%s,%s,%s]}", SAMPLE, SAMPLE,
		 SAMPLE, SAMPLE, SAMPLE, SAMPLE, SAMPLE);
	a.slow_ms = 100;
	v = asking(r, args, T, -1, &h, &err);
	CHECK(v && json_array_size(v) == 7);
	for (i = 0; i < 7; i++) {
		refused += answer_code(v, (size_t)i) == -32603;
		answered += json_object_get(json_array_get(v, (size_t)i), "result") != NULL;
	}
	CHECK(refused >= 1 && answered >= UPSTREAM_RELAY_MAX && refused + answered == 7);
	json_decref(v);
	a.slow_ms = 0;
	/* a client that never answers: the call times out, its hook is
	 * stopped, nothing is left */
	a.block = 1;
	CHECK(!asking(r, SAMPLE, 1500, -1, &h, &err) && err.code == TG_ERR_LIMIT);
	a.block = 0;
	CHECK(log_has("ask cancelled"));
	/* that call ended without the server's answer: no request of the
	 * server can be told to be a call's now, until it restarts */
	i = a.n;
	v = asking(r, SAMPLE, T, -1, &h, &err);
	CHECK(v && answer_code(v, 0) == -32603 && a.n == i);
	CHECK(strstr(answer_message(v, 0), "toolgate cannot tell which call this request is "
		     "for: a call ended without the server's answer (tools/call: no answer within"));
	json_decref(v);
	/* the server is still served */
	v = call(r, "echo", "{\"text\":\"after\"}", &err);
	CHECK(v);
	json_decref(v);
	CHECK(stopped_clean(r, fds, threads) == 0);
	tg_log_set(NULL, NULL);
	tg_upstream_free(u);
	unit_rmtree(dir);
	return 0;
}

/* Stopped to ask the client first (MRTR): the server is told nothing, its
 * call is cancelled, and its requests are refused from then on (that
 * call's may still come). */
static int relays_stopped(void)
{
	struct asked a = { .lock = PTHREAD_MUTEX_INITIALIZER, .cancel_w = -1 };
	struct upstream_run_call_hooks h = { .ctx = &a, .ask = ask_hook };
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;
	int fds, threads, cancel[2];
	char dir[64];
	json_t *v;

	log_keep();
	CHECK(unit_tmpdir(dir, "uprelay") == 0);
	CHECK(declare(dir, ", \"relay\": [\"sampling\"]", &u) == 0);
	fds = count_dir("/proc/self/fd");
	threads = count_dir("/proc/self/task");
	CHECK(upstream_run_new(u, NULL, &r, &err) == 0);
	CHECK(pipe2(cancel, O_CLOEXEC) == 0);
	a.cancel_w = cancel[1];
	CHECK(!asking(r, SAMPLE, T, cancel[0], &h, &err) && strstr(err.msg, "cancelled"));
	CHECK(log_has("ask cancelled") && a.n == 1);
	a.cancel_w = -1;
	close(cancel[0]);
	close(cancel[1]);
	v = asking(r, SAMPLE, T, -1, &h, &err);
	CHECK(v && answer_code(v, 0) == -32603 && a.n == 1);
	CHECK(strstr(answer_message(v, 0), "a call ended without the server's answer "
		     "(tools/call: cancelled"));
	json_decref(v);
	CHECK(stopped_clean(r, fds, threads) == 0);
	tg_log_set(NULL, NULL);
	tg_upstream_free(u);
	unit_rmtree(dir);
	return 0;
}

/* per_call: the call's own server's requests are the call's. */
static int relays_per_call(void)
{
	struct asked a = { .lock = PTHREAD_MUTEX_INITIALIZER, .cancel_w = -1 };
	struct upstream_run_call_hooks h = { .ctx = &a, .ask = ask_hook };
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;
	char dir[64];
	int fds, threads;
	json_t *v;

	CHECK(unit_tmpdir(dir, "uprelay") == 0);
	CHECK(declare(dir, ", \"per_call\": true, \"relay\": [\"roots\", \"sampling\"]", &u) == 0);
	fds = count_dir("/proc/self/fd");
	threads = count_dir("/proc/self/task");
	CHECK(upstream_run_new(u, NULL, &r, &err) == 0);
	CHECK(upstream_run_wait(r, T, &err) == 0);
	v = asking(r, "{\"requests\":[{\"method\":\"roots/list\"}," SAMPLE "]}", T, -1, &h, &err);
	CHECK(v && json_object_get(json_array_get(v, 0), "result") &&
	      json_object_get(json_array_get(v, 1), "result") && a.n == 2);
	json_decref(v);
	CHECK(stopped_clean(r, fds, threads) == 0);
	tg_upstream_free(u);
	unit_rmtree(dir);
	return 0;
}

/* What the agent's client is never asked for an upstream: a sampling
 * request's includeContext is taken out; sampling with tools and
 * URL-mode elicitation are refused (-32602), the hook never asked; a
 * form elicitation is relayed; an answer over the ceiling of a message
 * to the server reaches it as an error instead of never. */
static int relay_filters(void)
{
	struct asked a = { .lock = PTHREAD_MUTEX_INITIALIZER, .cancel_w = -1 };
	struct upstream_run_call_hooks h = { .ctx = &a, .ask = ask_hook };
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;
	char dir[64];
	json_t *v;

	CHECK(unit_tmpdir(dir, "uprelay") == 0);
	CHECK(declare(dir, ", \"relay\": [\"sampling\", \"elicitation\"]", &u) == 0);
	CHECK(upstream_run_new(u, NULL, &r, &err) == 0);
	v = asking(r, "{\"method\":\"sampling/createMessage\",\"params\":{\"maxTokens\":5,"
		   "\"includeContext\":\"allServers\"}}", T, -1, &h, &err);
	CHECK(v && json_object_get(json_array_get(v, 0), "result") && a.n == 1);
	CHECK(strstr(a.last, "\"maxTokens\":5") && !strstr(a.last, "includeContext"));
	json_decref(v);
	v = asking(r, "{\"requests\":[{\"method\":\"sampling/createMessage\",\"params\":{"
		   "\"maxTokens\":5,\"tools\":[{\"name\":\"t\",\"inputSchema\":{}}]}},"
		   "{\"method\":\"elicitation/create\",\"params\":{\"mode\":\"url\","
		   "\"url\":\"https://example.com/\",\"message\":\"go\"}},"
		   "{\"method\":\"elicitation/create\",\"params\":{\"message\":\"name?\","
		   "\"requestedSchema\":{\"type\":\"object\"}}}]}", T, -1, &h, &err);
	CHECK(v && answer_code(v, 0) == -32602 && answer_code(v, 1) == -32602);
	CHECK(strstr(answer_message(v, 0), "sampling with tools is not relayed"));
	CHECK(strstr(answer_message(v, 1), "elicitation in mode url is not relayed"));
	CHECK(json_object_get(json_array_get(v, 2), "result") && a.n == 2 &&
	      strstr(a.last, "elicitation/create"));
	json_decref(v);
	/* the client's answer over 4 MiB: an error instead */
	a.big = 1;
	v = asking(r, SAMPLE, T, -1, &h, &err);
	CHECK(v && answer_code(v, 0) == -32603 && a.n == 3);
	CHECK(strstr(answer_message(v, 0), "the client's answer is over 4194304 bytes"));
	json_decref(v);
	a.big = 0;
	upstream_run_free(r);
	tg_upstream_free(u);
	unit_rmtree(dir);
	return 0;
}

static char *halt_hook(void *ctx, const char *request, const volatile int *stop)
{
	struct asked *a = ctx;

	(void)request;
	(void)stop;
	pthread_mutex_lock(&a->lock);
	a->n++;
	pthread_mutex_unlock(&a->lock);
	return strdup("");
}

/* A relay whose call is being stopped to ask its client first refuses
 * what comes next saying so (not "4 requests already wait"), and the
 * server hears nothing of the call. */
static int relay_halted(void)
{
	struct asked a = { .lock = PTHREAD_MUTEX_INITIALIZER, .cancel_w = -1 };
	struct upstream_rpc_error e = { 0, "" };
	struct upstream_client *c = NULL;
	struct upstream_relay *rl;
	struct tg_error err;
	json_t *id = json_integer(7);
	int to[2], from[2], i, n = 0;
	char buf[64];

	CHECK(id && pipe2(to, O_CLOEXEC) == 0 && pipe2(from, O_CLOEXEC) == 0);
	CHECK(upstream_client_new(from[0], to[1], NULL, &c, &err) == 0);
	CHECK((rl = upstream_relay_new(c, halt_hook, &a)) != NULL);
	CHECK(upstream_relay_push(rl, id, "roots/list", NULL, &e) == 0);
	for (i = 0; i < 300 && !n; i++) {
		usleep(10000);
		pthread_mutex_lock(&a.lock);
		n = a.n;
		pthread_mutex_unlock(&a.lock);
	}
	CHECK(n == 1);
	usleep(200 * 1000); /* the relay took the hook's "" */
	CHECK(upstream_relay_push(rl, id, "roots/list", NULL, &e) < 0 && e.code == -32603);
	CHECK(strstr(e.message, "the call is being stopped to ask its client first"));
	upstream_relay_free(rl);
	upstream_client_free(c);
	CHECK(read(to[0], buf, sizeof(buf)) == 0); /* nothing was written */
	close(to[0]);
	close(from[1]);
	json_decref(id);
	return 0;
}

/* How many times the log holds needle. */
static int log_count(const char *needle)
{
	const char *p;
	int n = 0;

	pthread_mutex_lock(&said.lock);
	for (p = said.text; (p = strstr(p, needle)) != NULL; p++)
		n++;
	pthread_mutex_unlock(&said.lock);
	return n;
}

/* tests/upstream/late_server.py's tool p called with args and hooks: its
 * client's answer as the server got it (owned), or NULL and err. */
static json_t *late_p(struct upstream_run *r, const char *args,
		      const struct upstream_run_call_hooks *h, struct tg_error *err)
{
	char *text = NULL;
	json_t *res, *a;

	if (upstream_run_call_ex(r, "p", args, T, -1, h, &text, err) < 0)
		return NULL;
	res = json_loads(text, 0, NULL);
	free(text);
	a = json_incref(json_object_get(json_object_get(res, "structuredContent"), "answer"));
	json_decref(res);
	return a;
}

/* A long-lived server's request for a call that ended without its answer
 * (alice's, timed out; the server ignores the cancel) comes while another
 * call is alone in flight (bob's): nobody's client is asked, the server
 * is refused, and said once in the log; every request of that server is
 * refused until it restarts, then relayed again. */
static int relay_late(void)
{
	struct asked alice = { .lock = PTHREAD_MUTEX_INITIALIZER, .cancel_w = -1 };
	struct asked bob = { .lock = PTHREAD_MUTEX_INITIALIZER, .cancel_w = -1 };
	struct asked carol = { .lock = PTHREAD_MUTEX_INITIALIZER, .cancel_w = -1 };
	struct upstream_run_call_hooks ha = { .ctx = &alice, .ask = ask_hook };
	struct upstream_run_call_hooks hb = { .ctx = &bob, .ask = ask_hook };
	struct upstream_run_call_hooks hc = { .ctx = &carol, .ask = ask_hook };
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;
	char dir[64], *res = NULL;
	int fds, threads, i;
	json_t *v;

	log_keep();
	CHECK(unit_tmpdir(dir, "uplate") == 0);
	CHECK(unit_declare_upstream(dir, "late_server.py\"", ", \"relay\": [\"sampling\"]", &u) == 0);
	fds = count_dir("/proc/self/fd");
	threads = count_dir("/proc/self/task");
	CHECK(upstream_run_new(u, NULL, &r, &err) == 0);
	CHECK(upstream_run_wait(r, T, &err) == 0);
	/* alice's call: never answered, timed out after 1 s */
	CHECK(upstream_run_call_ex(r, "a", "{\"secret\":\"alice-only\"}", 1000, -1, &ha, &res,
				   &err) < 0 && err.code == TG_ERR_LIMIT);
	/* bob's, alone in flight when the server asks twice for alice */
	CHECK(upstream_run_call_ex(r, "b", "{}", T, -1, &hb, &res, &err) == 0);
	free(res);
	CHECK(alice.n == 0 && bob.n == 0);
	CHECK(log_count("upstream fake: refused its request sampling/createMessage: toolgate "
			"cannot tell which call this request is for: a call ended without the "
			"server's answer (tools/call: no answer within") == 1);
	/* any later request too, not logged again */
	v = late_p(r, "{\"who\":\"carol\"}", &hc, &err);
	CHECK(v && json_integer_value(json_object_get(json_object_get(v, "error"), "code")) ==
		   -32603 && carol.n == 0);
	json_decref(v);
	CHECK(log_count("a call ended without the server's answer") == 1);
	/* restarted: its requests are relayed again */
	CHECK(upstream_run_call(r, "die", "{}", T, -1, &res, &err) < 0);
	for (i = 0; i < 500 && upstream_run_starts(r) < 2; i++)
		usleep(10000);
	CHECK(upstream_run_wait(r, T, &err) == 0);
	v = late_p(r, "{\"who\":\"carol\"}", &hc, &err);
	CHECK(v && json_object_get(v, "result") && carol.n == 1 && strstr(carol.last, "carol"));
	json_decref(v);
	CHECK(stopped_clean(r, fds, threads) == 0);
	tg_log_set(NULL, NULL);
	tg_upstream_free(u);
	unit_rmtree(dir);
	return 0;
}

/* p's progress takes the dispatcher 800 ms: what was read after it waits. */
static void slow_note(void *ctx, const char *event)
{
	(void)ctx;
	(void)event;
	usleep(800 * 1000);
}

struct late_call {
	struct upstream_run *r;
	const struct upstream_run_call_hooks *h;
	json_t *answer;
};

static void *late_p_main(void *arg)
{
	struct late_call *k = arg;
	struct tg_error err;

	k->answer = late_p(k->r, "{\"who\":\"pat\"}", k->h, &err);
	return NULL;
}

/* A request is a call's only when that call was in flight when the
 * request was read: p's request, read while p was alone in flight but
 * handed on once bob's call had begun too (the dispatcher held up by p's
 * progress), is p's; bob's client is never asked. */
static int relay_read_before(void)
{
	struct asked pat = { .lock = PTHREAD_MUTEX_INITIALIZER, .cancel_w = -1 };
	struct asked bob = { .lock = PTHREAD_MUTEX_INITIALIZER, .cancel_w = -1 };
	struct upstream_run_call_hooks hp = { .ctx = &pat, .ask = ask_hook, .notify = slow_note };
	struct upstream_run_call_hooks hb = { .ctx = &bob, .ask = ask_hook };
	struct late_call k = { 0 };
	struct upstream_run *r = NULL;
	struct tg_upstream *u = NULL;
	struct tg_error err;
	char dir[64], *res = NULL;
	pthread_t t;

	CHECK(unit_tmpdir(dir, "uplate") == 0);
	CHECK(unit_declare_upstream(dir, "late_server.py\"", ", \"relay\": [\"sampling\"]", &u) == 0);
	CHECK(upstream_run_new(u, NULL, &r, &err) == 0);
	CHECK(upstream_run_wait(r, T, &err) == 0);
	k.r = r;
	k.h = &hp;
	CHECK(pthread_create(&t, NULL, late_p_main, &k) == 0);
	usleep(300 * 1000);
	CHECK(upstream_run_call_ex(r, "b", "{}", T, -1, &hb, &res, &err) == 0);
	free(res);
	pthread_join(t, NULL);
	CHECK(k.answer && json_object_get(k.answer, "result"));
	CHECK(pat.n == 1 && strstr(pat.last, "pat") && bob.n == 0);
	json_decref(k.answer);
	upstream_run_free(r);
	tg_upstream_free(u);
	unit_rmtree(dir);
	return 0;
}

const struct unit_test upstream_run_tests[] = {
	{ "upstream_run/serves", serves },
	{ "upstream_run/restarts", restarts },
	{ "upstream_run/relists", relists },
	{ "upstream_run/per_call", per_call },
	{ "upstream_run/per_call_at_once", per_call_at_once },
	{ "upstream_run/progress", progress },
	{ "upstream_run/refuses", refuses },
	{ "upstream_run/relays", relays },
	{ "upstream_run/relays_stopped", relays_stopped },
	{ "upstream_run/relays_per_call", relays_per_call },
	{ "upstream_run/relay_filters", relay_filters },
	{ "upstream_run/relay_halted", relay_halted },
	{ "upstream_run/relay_late", relay_late },
	{ "upstream_run/relay_read_before", relay_read_before },
	UNIT_TESTS_END
};
