/*
 * Unit tests: the warm pool (src/sandbox/pool.c). Real sandboxes: a
 * warm run gives what a cold one gives (output, limits, seccomp), a call
 * that does not match the template runs cold, a prestarted command waits
 * for its stdin, and nothing one call leaves behind is there for the
 * next: files, processes, sockets, shared memory, SysV IPC.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"
#include "toolgate/sandbox.h"
#include "unit.h"

static struct tg_sandbox_spec *spec_of(char **argv)
{
	struct tg_sandbox_spec *s = unit_spec();
	int argc = 0;

	while (argv[argc])
		argc++;
	if (s && tg_sandbox_spec_set_argv(s, argc, argv, NULL) < 0) {
		tg_sandbox_spec_free(s);
		return NULL;
	}
	return s;
}

static struct tg_sandbox_pool *pool_of(char **argv, unsigned size, int prestart)
{
	struct tg_sandbox_spec *t = spec_of(argv);
	struct tg_sandbox_pool *p = NULL;
	struct tg_error err;

	if (t && tg_sandbox_pool_new(t, size, prestart, &p, &err) < 0)
		fprintf(stderr, "pool: %s\n", err.msg);
	tg_sandbox_spec_free(t);
	return p;
}

/* Until the pool has n ready (10 s at most). */
static int ready(struct tg_sandbox_pool *p, unsigned n)
{
	struct tg_sandbox_pool_stats st;
	int i;

	for (i = 0; i < 1000; i++) {
		tg_sandbox_pool_get_stats(p, &st);
		if (st.ready >= n)
			return 0;
		usleep(10000);
	}
	fprintf(stderr, "pool: %u ready of %u, %llu failed: %s\n", st.ready, n, st.failed,
		st.last_error);
	return -1;
}

static struct tg_sandbox_result *pool_run(struct tg_sandbox_pool *p, char **argv)
{
	struct tg_sandbox_spec *s = spec_of(argv);
	struct tg_sandbox_result *r = NULL;
	struct tg_error err;

	if (s && tg_sandbox_pool_run(p, s, &r, &err) < 0)
		fprintf(stderr, "pool run: %s\n", err.msg);
	tg_sandbox_spec_free(s);
	return r;
}

/* A warm run is a whole run: output, exit code, every layer, the
 * timeout, a seccomp kill; the pool refills. */
static int warm_runs(void)
{
	char *tmpl[] = { "true", NULL };
	char *echo[] = { "sh", "-c", "echo warm $HOME; exit 3", NULL };
	char *slow[] = { "sleep", "30", NULL };
	char *brief[] = { "sleep", "0.3", NULL };
	char *bad[] = { "unshare", "-U", "true", NULL };
	char *missing[] = { "no-such-command", NULL };
	char *whoami[] = { "sh", "-c", "read pid comm state ppid rest < /proc/self/stat; echo $pid $ppid", NULL };
	struct tg_sandbox_pool *p = pool_of(tmpl, 2, 0);
	struct tg_sandbox_pool_stats st;
	struct tg_sandbox_spec *s;
	struct tg_sandbox_result *r;
	struct tg_error err;

	CHECK(p && ready(p, 2) == 0);
	r = pool_run(p, echo);
	CHECK(r && r->reason == TG_REASON_OK && r->exited && r->exit_code == 3);
	CHECK(strcmp(r->out.data, "warm /work\n") == 0);
	CHECK(r->layers & TG_LAYER_SECCOMP && r->layers & TG_LAYER_LANDLOCK_FS &&
	      r->layers & TG_LAYER_CGROUP);
	tg_sandbox_result_free(r);
	/* the deadline counts from the call */
	s = spec_of(slow);
	CHECK(s && tg_sandbox_spec_set_timeout(s, 1000, &err) == 0);
	tg_sandbox_pool_free(p);
	p = NULL;
	{
		struct tg_sandbox_pool *q = NULL;

		CHECK(tg_sandbox_pool_new(s, 1, 0, &q, &err) == 0 && ready(q, 1) == 0);
		CHECK(tg_sandbox_pool_run(q, s, &r, &err) == 0);
		CHECK(r->reason == TG_REASON_TIMEOUT);
		tg_sandbox_result_free(r);
		/* a sandbox ready for longer than the limit is not late for its
		 * call: 0.3 s of work within 1 s, 1.5 s after it was ready */
		CHECK(ready(q, 1) == 0 && usleep(1500000) == 0);
		CHECK(tg_sandbox_spec_set_argv(s, 2, brief, &err) == 0);
		CHECK(tg_sandbox_pool_run(q, s, &r, &err) == 0);
		CHECK(r->reason == TG_REASON_OK && r->exited && r->exit_code == 0);
		tg_sandbox_result_free(r);
		tg_sandbox_pool_get_stats(q, &st);
		CHECK(st.warm_runs == 2 && st.cold_runs == 0);
		tg_sandbox_pool_free(q);
	}
	tg_sandbox_spec_free(s);
	p = pool_of(tmpl, 1, 0);
	CHECK(p && ready(p, 1) == 0);
	/* the command's process is made ahead and reads its job itself: a
	 * command that is not there is said as a cold run says it */
	r = pool_run(p, missing);
	CHECK(r && r->reason == TG_REASON_SETUP_FAILED && r->exec_errno == ENOENT);
	CHECK(strstr(r->message, "no-such-command") != NULL);
	tg_sandbox_result_free(r);
	/* and it is the sandbox's second process, PID 1's child, as cold */
	CHECK(ready(p, 1) == 0);
	r = pool_run(p, whoami);
	CHECK(r && r->reason == TG_REASON_OK && r->exited && r->exit_code == 0);
	CHECK(r->out.data && strcmp(r->out.data, "2 1\n") == 0);
	tg_sandbox_result_free(r);
	CHECK(ready(p, 1) == 0);
	r = pool_run(p, bad);
	CHECK(r && r->reason == TG_REASON_SECCOMP_VIOLATION);
	CHECK(strcmp(r->seccomp_syscall_name, "unshare") == 0);
	tg_sandbox_result_free(r);
	CHECK(ready(p, 1) == 0);
	tg_sandbox_pool_get_stats(p, &st);
	CHECK(st.warm_runs == 3 && st.made >= 4 && st.failed == 0);
	tg_sandbox_pool_free(p);
	return 0;
}

/* A call unlike the template runs cold, and says so in the stats. */
static int cold_when_unlike(void)
{
	char *tmpl[] = { "true", NULL };
	char *echo[] = { "echo", "cold", NULL };
	struct tg_sandbox_pool *p = pool_of(tmpl, 1, 0);
	struct tg_sandbox_pool_stats st;
	struct tg_sandbox_spec *s = spec_of(echo);
	struct tg_sandbox_result *r;
	struct tg_error err;

	CHECK(p && s && ready(p, 1) == 0);
	CHECK(tg_sandbox_spec_set_memory(s, 128u << 20, &err) == 0);
	CHECK(tg_sandbox_pool_run(p, s, &r, &err) == 0);
	CHECK(r->reason == TG_REASON_OK && strcmp(r->out.data, "cold\n") == 0);
	tg_sandbox_result_free(r);
	tg_sandbox_pool_get_stats(p, &st);
	CHECK(st.cold_runs == 1 && st.warm_runs == 0 && st.ready == 1);
	tg_sandbox_spec_free(s);
	tg_sandbox_pool_free(p);
	return 0;
}

/* A prestarted command has started before the call: it waits for its
 * stdin, and the call's answer comes from it. */
static int prestart(void)
{
	char *py[] = { "python3", "-c",
		       "import json, sys, os\n"
		       "line = sys.stdin.readline()\n"
		       "print(json.loads(line)['x'] * 2, os.getppid())", NULL };
	struct tg_sandbox_pool *p = pool_of(py, 1, 1);
	struct tg_sandbox_spec *s = spec_of(py);
	struct tg_sandbox_result *r;
	struct tg_error err;
	int fd = memfd_create("stdin", MFD_CLOEXEC);

	CHECK(p && s && fd >= 0 && ready(p, 1) == 0);
	CHECK(write(fd, "{\"x\": 21}\n", 10) == 10 && lseek(fd, 0, SEEK_SET) == 0);
	tg_sandbox_spec_set_stdin_fd(s, fd);
	CHECK(tg_sandbox_pool_run(p, s, &r, &err) == 0);
	CHECK(r->reason == TG_REASON_OK && r->exited && r->exit_code == 0);
	CHECK(strcmp(r->out.data, "42 1\n") == 0);
	tg_sandbox_result_free(r);
	close(fd);
	tg_sandbox_spec_free(s);
	tg_sandbox_pool_free(p);
	return 0;
}

/* Nothing crosses from one call to the next: the first leaves files in
 * every writable place, a process that outlives it, a listening abstract
 * socket, POSIX and SysV shared memory; the next finds none of it. */
static int nothing_crosses(void)
{
	char *tmpl[] = { "true", NULL };
	char *leave[] = { "python3", "-c",
			  "import os, socket, subprocess, ctypes\n"
			  "for d in ('/tmp', '/work', '/dev/shm'):\n"
			  "    open(d + '/left-behind', 'w').write('x')\n"
			  "subprocess.Popen(['sleep', '300'], start_new_session=True)\n"
			  "s = socket.socket(socket.AF_UNIX); s.bind('\\0left-behind'); s.listen()\n"
			  "libc = ctypes.CDLL(None)\n"
			  "libc.shmget.restype = ctypes.c_int\n"
			  "print('shm', libc.shmget(0x7467, 4096, 0o1666))\n",
			  NULL };
	char *look[] = { "sh", "-c",
			 "ls /tmp /work /dev/shm; cat /proc/[0-9]*/comm | grep -c sleep; "
			 "grep -c left-behind /proc/net/unix; "
			 "tail -n +2 /proc/sysvipc/shm | wc -l", NULL };
	struct tg_sandbox_pool *p = pool_of(tmpl, 2, 0);
	struct tg_sandbox_result *r;

	CHECK(p && ready(p, 2) == 0);
	r = pool_run(p, leave);
	CHECK(r && r->reason == TG_REASON_OK);
	if (!strstr(r->out.data, "shm ") || strstr(r->out.data, "shm -1"))
		fprintf(stderr, "leave: %s%s\n", r->out.data, r->err.data);
	CHECK(strstr(r->out.data, "shm ") && !strstr(r->out.data, "shm -1"));
	tg_sandbox_result_free(r);
	r = pool_run(p, look);
	CHECK(r && r->reason == TG_REASON_OK);
	/* three empty listings; no sleep; no socket; no segment */
	if (strstr(r->out.data, "left-behind") || !strstr(r->out.data, "\n0\n0\n0\n"))
		fprintf(stderr, "look: %s\n", r->out.data);
	CHECK(!strstr(r->out.data, "left-behind"));
	CHECK(strstr(r->out.data, "\n0\n0\n0\n"));
	tg_sandbox_result_free(r);
	tg_sandbox_pool_free(p);
	return 0;
}

/* A ready sandbox that can no longer serve is never handed out: a
 * prestarted command that ended while waiting, binds whose source was
 * renamed away and replaced. The call runs in a fresh one, or cold. */
static int stale_not_used(void)
{
	char *quit[] = { "true", NULL };
	char *look[] = { "cat", "/b/marker", NULL };
	char dir[64], path[128], moved[128];
	struct tg_sandbox_pool *p;
	struct tg_sandbox_pool_stats st;
	struct tg_sandbox_spec *s;
	struct tg_sandbox_result *r;
	struct tg_error err;
	FILE *f;

	/* prestarted, and ended before its call */
	p = pool_of(quit, 1, 1);
	CHECK(p && ready(p, 1) == 0);
	usleep(200000);
	s = spec_of(quit);
	CHECK(s && tg_sandbox_pool_run(p, s, &r, &err) == 0);
	CHECK(r->reason == TG_REASON_OK && r->exited && r->exit_code == 0);
	tg_sandbox_result_free(r);
	tg_sandbox_pool_get_stats(p, &st);
	CHECK(st.warm_runs == 0 && st.cold_runs == 1 && st.failed == 1);
	tg_sandbox_spec_free(s);
	tg_sandbox_pool_free(p);
	/* a bind whose directory was replaced */
	CHECK(unit_tmpdir(dir, "pool") == 0 && chmod(dir, 0755) == 0);
	snprintf(path, sizeof(path), "%s/b", dir);
	snprintf(moved, sizeof(moved), "%s/old", dir);
	CHECK(mkdir(path, 0755) == 0);
	s = spec_of(look);
	CHECK(s && tg_sandbox_spec_add_bind(s, path, "/b", 0, &err) == 0);
	CHECK(tg_sandbox_pool_new(s, 1, 0, &p, &err) == 0 && ready(p, 1) == 0);
	snprintf(path, sizeof(path), "%s/b/marker", dir);
	CHECK((f = fopen(path, "w")) && fputs("old\n", f) >= 0 && fclose(f) == 0);
	snprintf(path, sizeof(path), "%s/b", dir);
	CHECK(rename(path, moved) == 0 && mkdir(path, 0755) == 0);
	snprintf(path, sizeof(path), "%s/b/marker", dir);
	CHECK((f = fopen(path, "w")) && fputs("new\n", f) >= 0 && fclose(f) == 0);
	chmod(path, 0644);
	CHECK(tg_sandbox_pool_run(p, s, &r, &err) == 0);
	if (strcmp(r->out.data, "new\n") != 0)
		fprintf(stderr, "read %s%s\n", r->out.data, r->err.data);
	CHECK(strcmp(r->out.data, "new\n") == 0);
	tg_sandbox_result_free(r);
	tg_sandbox_spec_free(s);
	tg_sandbox_pool_free(p);
	unit_rmtree(dir);
	return 0;
}

/* A spec of argv with 64 MiB and 4 processes. */
static struct tg_sandbox_spec *limited(char **argv)
{
	struct tg_sandbox_spec *s = spec_of(argv);

	if (s && (tg_sandbox_spec_set_memory(s, 64u << 20, NULL) < 0 ||
		  tg_sandbox_spec_set_pids(s, 4, NULL) < 0)) {
		tg_sandbox_spec_free(s);
		return NULL;
	}
	return s;
}

static struct tg_sandbox_result *limited_run(struct tg_sandbox_pool *p, char **argv,
					     unsigned long long *reused)
{
	struct tg_sandbox_spec *s = limited(argv);
	struct tg_sandbox_pool_stats st;
	struct tg_sandbox_result *r = NULL;
	struct tg_error err;

	if (ready(p, 1) < 0)
		return NULL;
	tg_sandbox_pool_get_stats(p, &st);
	*reused = st.cgroups_reused;
	if (s && tg_sandbox_pool_run(p, s, &r, &err) < 0)
		fprintf(stderr, "pool run: %s\n", err.msg);
	tg_sandbox_spec_free(s);
	return r;
}

/* A spent sandbox's cgroup serves the next sandbox, and nothing of one
 * run's counters is in the next one's result: an OOM kill, a hit of the
 * pids limit, a peak. */
static int cgroup_reused(void)
{
	char *tmpl[] = { "true", NULL };
	char *hog[] = { "python3", "-c", "x = bytearray(100 << 20)", NULL };
	char *bomb[] = { "sh", "-c", "for i in 1 2 3 4 5 6 7 8; do sleep 1 & done; wait", NULL };
	char *big[] = { "python3", "-c", "x = bytearray(30 << 20)", NULL };
	struct tg_sandbox_spec *t = limited(tmpl);
	struct tg_sandbox_pool *p = NULL;
	struct tg_sandbox_pool_stats st;
	struct tg_sandbox_result *r;
	struct tg_error err;
	unsigned long long before, after;
	int i, strict = cgroup_detect(NULL, 0, NULL, NULL, NULL) == 1;

	CHECK(t && tg_sandbox_pool_new(t, 1, 0, &p, &err) == 0);
	tg_sandbox_spec_free(t);
	/* each follow-up runs in the cgroup of the run before it (the count
	 * of reuses grows by one: a pool of one), where the host allows
	 * reuse: always on v1; on v2 from Linux 6.12 (memory.peak reset) */
	r = limited_run(p, hog, &before);
	CHECK(r && r->reason == TG_REASON_MEMORY_LIMIT);
	tg_sandbox_result_free(r);
	r = limited_run(p, tmpl, &after);
	CHECK(r && r->reason == TG_REASON_OK && r->limits_hit == 0);
	CHECK(!strict || after == before + 1);
	tg_sandbox_result_free(r);
	r = limited_run(p, bomb, &before);
	CHECK(r && r->reason == TG_REASON_PIDS_LIMIT);
	tg_sandbox_result_free(r);
	r = limited_run(p, tmpl, &after);
	CHECK(r && r->reason == TG_REASON_OK && r->limits_hit == 0);
	CHECK(!strict || after == before + 1);
	tg_sandbox_result_free(r);
	r = limited_run(p, big, &before);
	CHECK(r && r->reason == TG_REASON_OK && r->peak_memory >= 30u << 20);
	tg_sandbox_result_free(r);
	/* the peak was reset: the next run's is its own (in big's cgroup
	 * when the count of reuses grew by one: a pool of one) */
	r = limited_run(p, tmpl, &after);
	CHECK(r && r->reason == TG_REASON_OK && r->peak_memory < 10u << 20);
	CHECK(!strict || after == before + 1);
	tg_sandbox_result_free(r);
	/* reused when nothing is left in it: after runs of `true`, surely */
	for (i = 0; i < 3; i++) {
		r = limited_run(p, tmpl, &before);
		CHECK(r && r->reason == TG_REASON_OK);
		tg_sandbox_result_free(r);
	}
	CHECK(ready(p, 1) == 0);
	tg_sandbox_pool_get_stats(p, &st);
	CHECK((!strict || st.cgroups_reused >= 6) && st.failed == 0);
	if (!st.cgroups_reused)
		fprintf(stderr, "# no cgroup reused here (cgroup v2 before Linux 6.12)\n");
	tg_sandbox_pool_free(p);
	return 0;
}

const struct unit_test pool_tests[] = {
	{ "pool/warm_runs", warm_runs },
	{ "pool/cold_when_unlike", cold_when_unlike },
	{ "pool/prestart", prestart },
	{ "pool/nothing_crosses", nothing_crosses },
	{ "pool/stale_not_used", stale_not_used },
	{ "pool/cgroup_reused", cgroup_reused },
	UNIT_TESTS_END
};
