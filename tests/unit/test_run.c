/*
 * Unit tests: tg_sandbox_run through the library API (these start real
 * sandboxes; the command-line behaviour is in tests/integration/).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "toolgate/sandbox.h"
#include "unit.h"

static struct tg_sandbox_result *run_argv(struct tg_sandbox_spec *s, char **argv)
{
	struct tg_sandbox_result *r = NULL;
	struct tg_error err;
	int argc = 0;

	while (argv[argc])
		argc++;
	if (tg_sandbox_spec_set_argv(s, argc, argv, &err) < 0 ||
	    tg_sandbox_run(s, &r, &err) < 0) {
		fprintf(stderr, "run: %s\n", err.msg);
		return NULL;
	}
	return r;
}

static int exit_codes_and_layers(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	char *argv[] = { "sh", "-c", "echo out; echo err >&2; exit 7", NULL };
	struct tg_sandbox_result *r = run_argv(s, argv);
	/* every layer but the egress proxy, which takes an allowlist */
	unsigned all = ((1u << TG_LAYER_COUNT) - 1) & ~(unsigned)TG_LAYER_EGRESS_PROXY;

	CHECK(r);
	CHECK(r->reason == TG_REASON_OK && r->exited && r->exit_code == 7);
	CHECK(r->out.len == 4 && memcmp(r->out.data, "out\n", 4) == 0);
	CHECK(r->err.len == 4 && memcmp(r->err.data, "err\n", 4) == 0);
	CHECK(r->wall_us > 0 && r->peak_memory > 0);
	/* every layer, in the same run */
	if (r->layers != all)
		fprintf(stderr, "layers %#x, want %#x\n", r->layers, all);
	CHECK(r->layers == all);
	tg_sandbox_result_free(r);
	tg_sandbox_spec_free(s);
	return 0;
}

static char seen[1 << 16];
static size_t nseen;

static void collect(int stream, const char *buf, size_t len, void *ctx)
{
	(void)ctx;
	if (stream == 1 && nseen + len <= sizeof(seen)) {
		memcpy(seen + nseen, buf, len);
		nseen += len;
	}
}

static int stdin_bytes_exact(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	char *argv[] = { "cat", NULL };
	static char data[200000];
	struct tg_sandbox_result *r;
	char path[] = "/tmp/tg-unit-stdin-XXXXXX";
	int fd = mkstemp(path);
	size_t i;

	CHECK(fd >= 0);
	unlink(path);
	for (i = 0; i < sizeof(data); i++)
		data[i] = (char)(i * 7 + i / 251);
	CHECK(write(fd, data, sizeof(data)) == (ssize_t)sizeof(data));
	lseek(fd, 0, SEEK_SET);
	tg_sandbox_spec_set_stdin_fd(s, fd);
	tg_sandbox_spec_set_output_fn(s, collect, NULL);
	r = run_argv(s, argv);
	CHECK(r && r->reason == TG_REASON_OK && r->exit_code == 0);
	CHECK(r->out.len == sizeof(data) && memcmp(r->out.data, data, sizeof(data)) == 0);
	CHECK(nseen == sizeof(seen) || nseen == sizeof(data));
	CHECK(memcmp(seen, data, nseen) == 0);
	close(fd);
	tg_sandbox_result_free(r);
	tg_sandbox_spec_free(s);
	return 0;
}

static int output_limit_exact(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	char *argv[] = { "sh", "-c", "yes abcdefgh", NULL };
	struct tg_sandbox_result *r;
	struct tg_error err;
	size_t i;

	CHECK(tg_sandbox_spec_set_output_limit(s, 100001, &err) == 0);
	r = run_argv(s, argv);
	CHECK(r && r->reason == TG_REASON_OUTPUT_TRUNCATED);
	CHECK(r->out.len == 100001 && r->out.truncated);
	for (i = 0; i + 9 <= r->out.len; i += 9)
		CHECK(memcmp(r->out.data + i, "abcdefgh\n", 9) == 0);
	CHECK(r->limits_hit & TG_LIMIT_OUTPUT);
	tg_sandbox_result_free(r);
	tg_sandbox_spec_free(s);
	return 0;
}

static int timeout_kills_namespace(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	/* a background child that ignores SIGTERM and outlives the shell */
	char *argv[] = { "sh", "-c", "trap '' TERM; (sleep 30 &); sleep 30", NULL };
	struct tg_sandbox_result *r;
	struct tg_error err;

	CHECK(tg_sandbox_spec_set_timeout(s, 300, &err) == 0);
	r = run_argv(s, argv);
	CHECK(r && r->reason == TG_REASON_TIMEOUT && r->signal == 9 && !r->exited);
	CHECK(r->wall_us >= 300000 && r->wall_us < 5000000);
	tg_sandbox_result_free(r);
	tg_sandbox_spec_free(s);
	return 0;
}

static int env_is_clean(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	char *argv[] = { "env", NULL };
	struct tg_sandbox_result *r;
	struct tg_error err;

	setenv("TG_UNIT_SECRET", "hunter2", 1);
	CHECK(tg_sandbox_spec_add_env(s, "GIVEN=yes", &err) == 0);
	CHECK(tg_sandbox_spec_add_env(s, "PATH=/usr/bin", &err) == 0);
	r = run_argv(s, argv);
	CHECK(r && r->reason == TG_REASON_OK);
	CHECK(!strstr(r->out.data, "hunter2") && !strstr(r->out.data, "TG_UNIT_SECRET"));
	CHECK(strstr(r->out.data, "GIVEN=yes\n"));
	CHECK(strstr(r->out.data, "PATH=/usr/bin\n") && !strstr(r->out.data, "/usr/local/bin"));
	CHECK(strstr(r->out.data, "HOME=/work\n"));
	tg_sandbox_result_free(r);
	tg_sandbox_spec_free(s);
	return 0;
}

static int exec_errors(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	char *argv[] = { "no-such-command-tg", NULL };
	char *argv2[] = { "/etc/passwd", NULL };
	struct tg_sandbox_result *r = run_argv(s, argv);

	CHECK(r && r->reason == TG_REASON_SETUP_FAILED && r->exec_errno == ENOENT);
	CHECK(strstr(r->message, "no-such-command-tg"));
	tg_sandbox_result_free(r);
	r = run_argv(s, argv2);
	CHECK(r && r->reason == TG_REASON_SETUP_FAILED && r->exec_errno == EACCES);
	tg_sandbox_result_free(r);
	tg_sandbox_spec_free(s);
	return 0;
}

static int refused_without_command(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	struct tg_sandbox_result *r = (void *)1;
	struct tg_error err;

	CHECK(tg_sandbox_run(s, &r, &err) < 0 && r == NULL);
	CHECK(err.code == TG_ERR_INVALID);
	tg_sandbox_spec_free(s);
	return 0;
}

static int many_runs_no_fd_leak(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	char *argv[] = { "true", NULL };
	int i, before, after;

	before = open("/dev/null", O_RDONLY);
	close(before);
	for (i = 0; i < 20; i++) {
		struct tg_sandbox_result *r = run_argv(s, argv);

		CHECK(r && r->reason == TG_REASON_OK);
		tg_sandbox_result_free(r);
	}
	after = open("/dev/null", O_RDONLY);
	close(after);
	CHECK(after == before);
	tg_sandbox_spec_free(s);
	return 0;
}

static int cancel_fd_ends_run(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	char *argv[] = { "sleep", "30", NULL };
	struct tg_sandbox_result *r;
	int p[2];

	CHECK(pipe(p) == 0 && write(p[1], "c", 1) == 1);
	tg_sandbox_spec_set_cancel_fd(s, p[0]);
	r = run_argv(s, argv);
	CHECK(r && r->reason == TG_REASON_CANCELLED && r->signal == 9 && !r->exited);
	CHECK(r->wall_us < 5000000);
	tg_sandbox_result_free(r);
	close(p[0]);
	close(p[1]);
	tg_sandbox_spec_free(s);
	return 0;
}

/* ---- server runs (tg_sandbox_spec_set_server) ---------------------- */

#define LINE_LEN 2000 /* three lines pass the 4096-byte output limit */

struct echo {
	pthread_mutex_t lock;
	pthread_cond_t more;
	char got[3 * (LINE_LEN + 1)];
	size_t len;
	int other;      /* bytes on stderr, or past what was sent */
	int in_w, cancel_w;
};

static void echo_collect(int stream, const char *buf, size_t len, void *ctx)
{
	struct echo *e = ctx;

	pthread_mutex_lock(&e->lock);
	if (stream != 1 || e->len + len > sizeof(e->got)) {
		e->other = 1;
	} else {
		memcpy(e->got + e->len, buf, len);
		e->len += len;
	}
	pthread_cond_signal(&e->more);
	pthread_mutex_unlock(&e->lock);
}

/* Writes each line only once the echo of the one before came back (so
 * the output really streams), 700 ms apart, then cancels. */
static void *echo_writer(void *arg)
{
	struct echo *e = arg;
	char line[LINE_LEN + 1];
	int i;

	for (i = 0; i < 3; i++) {
		struct timespec until;
		size_t want = (size_t)(i + 1) * sizeof(line);

		memset(line, 'a' + i, LINE_LEN);
		line[LINE_LEN] = '\n';
		if (write(e->in_w, line, sizeof(line)) != (ssize_t)sizeof(line))
			return (void *)1;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 10;
		pthread_mutex_lock(&e->lock);
		while (e->len < want && !e->other &&
		       pthread_cond_timedwait(&e->more, &e->lock, &until) == 0) {
		}
		pthread_mutex_unlock(&e->lock);
		if (e->len != want || e->other) {
			fprintf(stderr, "line %d: %zu bytes echoed, want %zu\n", i, e->len, want);
			return (void *)1;
		}
		usleep(700000);
	}
	return write(e->cancel_w, "c", 1) == 1 ? NULL : (void *)1;
}

/* A server (cat) outlives the timeout it would have had, streams more
 * than the output limit without truncation or keeping any, and is ended
 * by the cancel fd. */
static int server_streams_until_cancelled(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	char *argv[] = { "cat", NULL };
	struct echo e = { .lock = PTHREAD_MUTEX_INITIALIZER, .more = PTHREAD_COND_INITIALIZER };
	struct tg_sandbox_result *r;
	struct tg_error err;
	pthread_t t;
	void *ret;
	int in[2], cancel[2], i;

	CHECK(pipe(in) == 0 && pipe(cancel) == 0);
	e.in_w = in[1];
	e.cancel_w = cancel[1];
	CHECK(tg_sandbox_spec_set_timeout(s, 1000, &err) == 0);
	CHECK(tg_sandbox_spec_set_output_limit(s, 4096, &err) == 0);
	tg_sandbox_spec_set_server(s, 1);
	tg_sandbox_spec_set_stdin_fd(s, in[0]);
	tg_sandbox_spec_set_cancel_fd(s, cancel[0]);
	tg_sandbox_spec_set_output_fn(s, echo_collect, &e);
	CHECK(pthread_create(&t, NULL, echo_writer, &e) == 0);
	r = run_argv(s, argv);
	CHECK(pthread_join(t, &ret) == 0 && ret == NULL);
	CHECK(r && r->reason == TG_REASON_CANCELLED && r->signal == 9 && !r->exited);
	CHECK(r->wall_us >= 2000000 && r->limits_hit == 0);
	CHECK(r->out.len == 0 && !r->out.truncated && r->err.len == 0);
	CHECK(!(r->layers & TG_LAYER_TIMEOUT) && (r->layers & TG_LAYER_SECCOMP));
	CHECK(e.len == sizeof(e.got) && !e.other);
	for (i = 0; i < (int)e.len; i++)
		CHECK(e.got[i] == ((i + 1) % (LINE_LEN + 1) ? 'a' + i / (LINE_LEN + 1) : '\n'));
	tg_sandbox_result_free(r);
	close(in[0]);
	close(in[1]);
	close(cancel[0]);
	close(cancel[1]);
	tg_sandbox_spec_free(s);
	return 0;
}

struct eof_ctx {
	int in_w;
	char out[64], err[64];
	size_t nout, nerr;
};

/* Closes the server's stdin from the caller's side once it answered. */
static void close_on_answer(int stream, const char *buf, size_t len, void *ctx)
{
	struct eof_ctx *c = ctx;
	char *to = stream == 1 ? c->out : c->err;
	size_t *n = stream == 1 ? &c->nout : &c->nerr;

	if (*n + len < sizeof(c->out)) {
		memcpy(to + *n, buf, len);
		*n += len;
		to[*n] = '\0';
	}
	if (c->in_w >= 0 && strstr(c->out, "got one\n")) {
		close(c->in_w);
		c->in_w = -1;
	}
}

/* The caller closes its end of stdin: the server reads end of file and
 * exits, and the run ends with its exit code. Its CPU seconds are not
 * limited by the timeout's backstop: it has the caller's own. */
static int server_exits_on_stdin_eof(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	char *argv[] = { "sh", "-c",
			 "while read l; do echo \"got $l\"; done; echo \"bye $(ulimit -t)\" >&2; exit 3",
			 NULL };
	struct eof_ctx c = { .in_w = -1 };
	struct tg_sandbox_result *r;
	struct tg_error err;
	struct rlimit cpu;
	char bye[64];
	int in[2], cancel[2];

	CHECK(getrlimit(RLIMIT_CPU, &cpu) == 0);
	if (cpu.rlim_cur == RLIM_INFINITY)
		snprintf(bye, sizeof(bye), "bye unlimited\n");
	else
		snprintf(bye, sizeof(bye), "bye %llu\n", (unsigned long long)cpu.rlim_cur);
	CHECK(tg_sandbox_spec_set_timeout(s, 1000, &err) == 0);
	CHECK(pipe(in) == 0 && pipe(cancel) == 0);
	CHECK(write(in[1], "one\n", 4) == 4);
	c.in_w = in[1];
	tg_sandbox_spec_set_server(s, 1);
	tg_sandbox_spec_set_stdin_fd(s, in[0]);
	tg_sandbox_spec_set_cancel_fd(s, cancel[0]);
	tg_sandbox_spec_set_output_fn(s, close_on_answer, &c);
	r = run_argv(s, argv);
	CHECK(r && r->reason == TG_REASON_OK && r->exited && r->exit_code == 3);
	CHECK(c.in_w == -1 && strcmp(c.out, "got one\n") == 0 && strcmp(c.err, bye) == 0);
	CHECK(r->out.len == 0 && r->err.len == 0);
	tg_sandbox_result_free(r);
	close(in[0]);
	close(cancel[0]);
	close(cancel[1]);
	tg_sandbox_spec_free(s);
	return 0;
}

/* Bytes each stream brought, taken slowly (the server writes faster
 * than they are taken, and exits with its pipes full). */
static void count_slowly(int stream, const char *buf, size_t len, void *ctx)
{
	size_t *n = ctx;

	(void)buf;
	n[stream == 2 ? 1 : 0] += len;
	usleep(300);
}

/* A server that writes a burst past the output limit (1 MiB by default)
 * and exits: every byte of both streams reaches the output function,
 * none is cut by the limit, and those in its pipes when it is reaped are
 * read too. (A pipe holds one read's worth here, so the grace after a
 * server's end, counted from it since it has no deadline, is not what
 * this shows.) */
static int server_last_words(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	char *argv[] = { "sh", "-c", "head -c 1000000 /dev/zero; head -c 3000000 /dev/zero >&2",
			 NULL };
	struct tg_sandbox_result *r;
	size_t n[2] = { 0, 0 };
	int in[2];

	CHECK(pipe(in) == 0);
	tg_sandbox_spec_set_server(s, 1);
	tg_sandbox_spec_set_stdin_fd(s, in[0]);
	tg_sandbox_spec_set_output_fn(s, count_slowly, n);
	r = run_argv(s, argv);
	CHECK(r && r->reason == TG_REASON_OK && r->exited && r->exit_code == 0);
	CHECK(n[0] == 1000000 && n[1] == 3000000);
	tg_sandbox_result_free(r);
	close(in[0]);
	close(in[1]);
	tg_sandbox_spec_free(s);
	return 0;
}

/* A server ended by its cgroup's OOM kill or by seccomp says so, as any
 * run does, its stdin still open. */
static int server_limits_as_any_run(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	char *hog[] = { "python3", "-c", "x = bytearray(100 << 20)", NULL };
	char *bad[] = { "unshare", "-U", "true", NULL };
	struct tg_sandbox_result *r;
	struct tg_error err;
	int in[2];

	CHECK(pipe(in) == 0);
	CHECK(tg_sandbox_spec_set_memory(s, 64u << 20, &err) == 0);
	tg_sandbox_spec_set_server(s, 1);
	tg_sandbox_spec_set_stdin_fd(s, in[0]);
	r = run_argv(s, hog);
	CHECK(r && r->reason == TG_REASON_MEMORY_LIMIT && (r->limits_hit & TG_LIMIT_MEMORY));
	tg_sandbox_result_free(r);
	r = run_argv(s, bad);
	CHECK(r && r->reason == TG_REASON_SECCOMP_VIOLATION);
	CHECK(strcmp(r->seccomp_syscall_name, "unshare") == 0);
	tg_sandbox_result_free(r);
	close(in[0]);
	close(in[1]);
	tg_sandbox_spec_free(s);
	return 0;
}

/* A bind source checked when the spec was built and swapped for a symlink
 * before the run (by an earlier sandbox writing there, say) is refused at
 * run time: the path is resolved again without following any. */
static int bind_source_swapped_for_symlink(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	char dir[] = "/tmp/tg-unit-swap-XXXXXX", path[64];
	char *argv[] = { "ls", "/data/etc", NULL };
	struct tg_sandbox_result *r;
	struct tg_error err;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/src", dir);
	CHECK(mkdir(path, 0755) == 0);
	CHECK(tg_sandbox_spec_add_bind(s, path, "/data", 0, &err) == 0);
	CHECK(rmdir(path) == 0 && symlink("/", path) == 0);
	r = run_argv(s, argv);
	CHECK(r && r->reason == TG_REASON_SETUP_FAILED);
	CHECK(strstr(r->message, "rootfs") && strstr(r->message, path) &&
	      strstr(r->message, "symbolic links"));
	CHECK(r->out.len == 0);
	tg_sandbox_result_free(r);
	unlink(path);
	rmdir(dir);
	tg_sandbox_spec_free(s);
	return 0;
}

/* Two writable binds, one nested in the other: a first run renames the
 * directory the inner bind sits in and leaves a symlink to "/" where its
 * mount point was. The second run's inner bind, and its read-write
 * Landlock rule, must not land on the root (where the rule would cover
 * /proc): the run fails, naming the mount point. */
static int nested_bind_symlink_planted(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	char dir[] = "/tmp/tg-unit-nest-XXXXXX", a[64], b[64], p[96];
	char *plant[] = { "sh", "-c", "mv /data/a /data/a.old && mkdir /data/a && ln -s / /data/a/b",
			  NULL };
	char *argv[] = { "sh", "-c", "echo 500 > /proc/self/oom_score_adj && echo wrote", NULL };
	struct tg_sandbox_result *r;
	struct tg_error err;
	struct stat st;

	CHECK(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/A", dir);
	snprintf(b, sizeof(b), "%s/B", dir);
	snprintf(p, sizeof(p), "%s/a", a);
	CHECK(mkdir(a, 0777) == 0 && mkdir(b, 0777) == 0 && mkdir(p, 0777) == 0);
	snprintf(p, sizeof(p), "%s/a/b", a);
	CHECK(mkdir(p, 0777) == 0);
	/* the sandbox's host user (65534 for root) may write them */
	snprintf(p, sizeof(p), "%s/a", a);
	CHECK(chmod(a, 0777) == 0 && chmod(p, 0777) == 0 && chmod(b, 0777) == 0);
	CHECK(tg_sandbox_spec_add_bind(s, a, "/data", 1, &err) == 0);
	CHECK(tg_sandbox_spec_add_bind(s, b, "/data/a/b", 1, &err) == 0);
	r = run_argv(s, plant);
	CHECK(r && r->reason == TG_REASON_OK && r->exit_code == 0);
	tg_sandbox_result_free(r);
	snprintf(p, sizeof(p), "%s/a/b", a);
	CHECK(lstat(p, &st) == 0 && S_ISLNK(st.st_mode));
	r = run_argv(s, argv);
	CHECK(r);
	if (r->reason != TG_REASON_SETUP_FAILED)
		fprintf(stderr, "second run: %s, out '%s'\n", tg_sandbox_reason_name(r->reason),
			r->out.data ? r->out.data : "");
	CHECK(r->reason == TG_REASON_SETUP_FAILED && r->out.len == 0);
	CHECK(strstr(r->message, "rootfs") && strstr(r->message, "/data/a/b") &&
	      strstr(r->message, "symbolic link"));
	tg_sandbox_result_free(r);
	unlink(p);
	snprintf(p, sizeof(p), "%s/a", a);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/a.old/b", a);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/a.old", a);
	rmdir(p);
	rmdir(a);
	rmdir(b);
	rmdir(dir);
	tg_sandbox_spec_free(s);
	return 0;
}

/* Runs from several threads at once: each gets its own sandbox, output
 * and result. */
static void *thread_runs(void *arg)
{
	long id = (long)arg, i;

	for (i = 0; i < 5; i++) {
		struct tg_sandbox_spec *s = unit_spec();
		char script[64], want[64];
		char *argv[] = { "sh", "-c", script, NULL };
		struct tg_sandbox_result *r;

		snprintf(script, sizeof(script), "echo thread %ld run %ld; exit %ld", id, i, id + i);
		snprintf(want, sizeof(want), "thread %ld run %ld\n", id, i);
		r = run_argv(s, argv);
		if (!r || r->reason != TG_REASON_OK || r->exit_code != id + i ||
		    strcmp(r->out.data ? r->out.data : "", want) != 0) {
			fprintf(stderr, "thread %ld run %ld: %s (%s) exit %d out '%s'\n", id, i,
				r ? tg_sandbox_reason_name(r->reason) : "no result",
				r ? r->message : "", r ? r->exit_code : -1,
				r && r->out.data ? r->out.data : "");
			return (void *)1;
		}
		tg_sandbox_result_free(r);
		tg_sandbox_spec_free(s);
	}
	return NULL;
}

static int concurrent_threads(void)
{
	pthread_t t[4];
	void *ret;
	long i;
	int bad = 0;

	for (i = 0; i < 4; i++)
		CHECK(pthread_create(&t[i], NULL, thread_runs, (void *)i) == 0);
	for (i = 0; i < 4; i++) {
		CHECK(pthread_join(t[i], &ret) == 0);
		bad += ret != NULL;
	}
	CHECK(bad == 0);
	return 0;
}

/* The sandbox's PID 1 is toolgate-init, exec'd, not a copy of the caller:
 * its name, its size (the caller's is many times it, and under ASan
 * terabytes of address space), and a command line without the caller's. */
static int pid1_is_init_not_a_copy(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	char *argv[] = { "sh", "-c",
			 "cat /proc/1/comm; sed -n 's/^VmSize:[^0-9]*\\([0-9]*\\) kB/\\1/p' "
			 "/proc/1/status; tr '\\0' ' ' </proc/1/cmdline", NULL };
	struct tg_sandbox_result *r = run_argv(s, argv);
	char name[64] = "", cmdline[512] = "";
	unsigned long vm_kb = 0;

	CHECK(r && r->reason == TG_REASON_OK && r->exit_code == 0 && r->out.data);
	CHECK(sscanf(r->out.data, "%63s %lu %511[^\n]", name, &vm_kb, cmdline) == 3);
	if (strcmp(name, "toolgate-init") != 0 || vm_kb == 0 || vm_kb > 4096)
		fprintf(stderr, "PID 1: %s\n", r->out.data);
	CHECK(strcmp(name, "toolgate-init") == 0);
	CHECK(vm_kb > 0 && vm_kb <= 4096);
	CHECK(strncmp(cmdline, "toolgate-init ", 14) == 0 && !strstr(cmdline, "unit-tests"));
	tg_sandbox_result_free(r);
	tg_sandbox_spec_free(s);
	return 0;
}

/* The sandbox's first process shares the caller's memory while it is set
 * up (clone.c), and with it the dumpable flag, which a root caller's
 * child clears before it switches to the sandbox's user: the caller has it
 * back once no child shares its memory, from one thread or several. */
static int caller_stays_dumpable(void)
{
	int before = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	pthread_t t[3];
	void *ret;
	long i;

	CHECK(before == 1);
	CHECK(thread_runs((void *)0) == NULL);
	CHECK(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == before);
	for (i = 0; i < 3; i++)
		CHECK(pthread_create(&t[i], NULL, thread_runs, (void *)i) == 0);
	for (i = 0; i < 3; i++) {
		CHECK(pthread_join(t[i], &ret) == 0);
		CHECK(ret == NULL);
	}
	CHECK(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == before);
	return 0;
}

/* A script without "#!" runs with /bin/sh, as glibc's execvp runs it,
 * whatever libc toolgate-init was built with. */
static int script_without_interpreter_line(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	char dir[] = "/tmp/tg-unit-noshebang-XXXXXX", path[64];
	char *argv[] = { "/opt/tg/script", "arg", NULL };
	struct tg_sandbox_result *r;
	struct tg_error err;
	FILE *f;

	CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/script", dir);
	CHECK((f = fopen(path, "w")) != NULL);
	fputs("echo \"no interpreter line: $1\"\n", f);
	CHECK(fclose(f) == 0 && chmod(path, 0755) == 0 && chmod(dir, 0755) == 0);
	CHECK(tg_sandbox_spec_add_bind(s, dir, "/opt/tg", 0, &err) == 0);
	r = run_argv(s, argv);
	CHECK(r && r->reason == TG_REASON_OK && r->exit_code == 0);
	CHECK(r->out.len == 25 && memcmp(r->out.data, "no interpreter line: arg\n", 25) == 0);
	tg_sandbox_result_free(r);
	tg_sandbox_spec_free(s);
	unlink(path);
	rmdir(dir);
	return 0;
}

const struct unit_test run_tests[] = {
	{ "run/script_without_interpreter_line", script_without_interpreter_line },
	{ "run/caller_stays_dumpable", caller_stays_dumpable },
	{ "run/pid1_is_init_not_a_copy", pid1_is_init_not_a_copy },
	{ "run/concurrent_threads", concurrent_threads },
	{ "run/bind_source_swapped_for_symlink", bind_source_swapped_for_symlink },
	{ "run/nested_bind_symlink_planted", nested_bind_symlink_planted },
	{ "run/cancel_fd_ends_run", cancel_fd_ends_run },
	{ "run/server_streams_until_cancelled", server_streams_until_cancelled },
	{ "run/server_exits_on_stdin_eof", server_exits_on_stdin_eof },
	{ "run/server_limits_as_any_run", server_limits_as_any_run },
	{ "run/server_last_words", server_last_words },
	{ "run/exit_codes_and_layers", exit_codes_and_layers },
	{ "run/stdin_bytes_exact", stdin_bytes_exact },
	{ "run/output_limit_exact", output_limit_exact },
	{ "run/timeout_kills_namespace", timeout_kills_namespace },
	{ "run/env_is_clean", env_is_clean },
	{ "run/exec_errors", exec_errors },
	{ "run/refused_without_command", refused_without_command },
	{ "run/many_runs_no_fd_leak", many_runs_no_fd_leak },
	UNIT_TESTS_END,
};
