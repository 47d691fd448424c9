/*
 * Unit tests: the cgroup backends' file formats, on fake hierarchies in a
 * temporary directory (cgroup v2 has no controllers on the build machines,
 * so this is where its backend is exercised; the v1 backend also runs for
 * real in every sandbox test).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/cgroup_int.h"
#include "util/file.h"
#include "unit.h"

static int put(const char *dir, const char *file, const char *text)
{
	char path[1024];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

static int has(const char *dir, const char *file, const char *want)
{
	char buf[256];

	if (file_read_small(dir, file, buf, sizeof(buf)) < 0)
		return 0;
	if (strcmp(buf, want) != 0) {
		fprintf(stderr, "%s/%s: '%s', want '%s'\n", dir, file, buf, want);
		return 0;
	}
	return 1;
}

static void rm_tree(const char *dir)
{
	char cmd[1100];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

static int v2_backend(void)
{
	char tmp[] = "/tmp/tg-unit-cg2-XXXXXX", parent[1100];
	struct tg_sandbox_spec *spec = unit_spec();
	struct sb_cgroup cg;
	struct sb_cgroup_stats st;
	struct tg_error err;

	CHECK(mkdtemp(tmp) && spec);
	memset(&cg, 0, sizeof(cg));
	cg.ops = &cg_v2_ops;
	snprintf(cg.root[0], sizeof(cg.root[0]), "%s", tmp);
	strcpy(cg.parent, "/deleg/toolgate");
	strcpy(cg.name, "run-1");
	/* the root has the controllers enabled already (a delegated tree may
	 * not write there); deleg and toolgate do not */
	CHECK(put(tmp, "cgroup.subtree_control", "cpu memory pids\n") == 0);
	snprintf(parent, sizeof(parent), "%s/deleg", tmp);
	CHECK(mkdir(parent, 0755) == 0 && put(parent, "cgroup.subtree_control", "") == 0);
	snprintf(parent, sizeof(parent), "%s/deleg/toolgate", tmp);
	CHECK(mkdir(parent, 0755) == 0 && put(parent, "cgroup.subtree_control", "") == 0);
	CHECK(cg.ops->create(&cg, &err) == 0);
	CHECK(cg.ndirs == 1 && strstr(cg.dir[0], "/deleg/toolgate/run-1"));
	CHECK(has(tmp, "cgroup.subtree_control", "cpu memory pids\n")); /* untouched */
	CHECK(has(parent, "cgroup.subtree_control", "+memory +pids +cpu"));
	/* the kernel makes these with the directory; the fake needs them */
	CHECK(put(cg.dir[0], "memory.max", "max") == 0 && put(cg.dir[0], "pids.max", "max") == 0 &&
	      put(cg.dir[0], "cpu.max", "max 100000") == 0);
	CHECK(tg_sandbox_spec_set_cpus(spec, 500, &err) == 0);
	CHECK(cg.ops->limits(&cg, spec, &err) == 0); /* no memory.swap.max: tolerated */
	CHECK(has(cg.dir[0], "memory.max", "268435456"));
	CHECK(has(cg.dir[0], "pids.max", "65"));
	CHECK(has(cg.dir[0], "cpu.max", "50000 100000"));
	CHECK(put(cg.dir[0], "memory.peak", "123456789\n") == 0);
	CHECK(put(cg.dir[0], "memory.events", "low 0\nhigh 0\nmax 4\noom 2\noom_kill 1\n") == 0);
	CHECK(put(cg.dir[0], "pids.events", "max 7\n") == 0);
	cg_counters_open(&cg);
	cgroup_stats(&cg, &st);
	cg_counters_close(&cg);
	CHECK(st.peak_memory == 123456789 && st.oom_kills == 1 && st.pids_max_events == 7);
	/* a second run in the same parent: no error for what exists */
	strcpy(cg.name, "run-2");
	CHECK(cg.ops->create(&cg, &err) == 0);
	/* the same name twice is an error, never a shared cgroup */
	CHECK(cg.ops->create(&cg, &err) < 0 && strstr(err.msg, "run-2"));
	rm_tree(tmp);
	tg_sandbox_spec_free(spec);
	return 0;
}

static int v1_backend(void)
{
	static const char *const ctrl[3] = { "memory", "pids", "cpu" };
	char tmp[] = "/tmp/tg-unit-cg1-XXXXXX";
	struct tg_sandbox_spec *spec = unit_spec();
	struct sb_cgroup cg;
	struct sb_cgroup_stats st;
	struct tg_error err;
	int i;

	CHECK(mkdtemp(tmp) && spec);
	memset(&cg, 0, sizeof(cg));
	cg.ops = &cg_v1_ops;
	for (i = 0; i < 3; i++) {
		snprintf(cg.root[i], sizeof(cg.root[i]), "%s/%s", tmp, ctrl[i]);
		CHECK(mkdir(cg.root[i], 0755) == 0);
	}
	strcpy(cg.parent, "/toolgate");
	strcpy(cg.name, "run-9");
	CHECK(cg.ops->create(&cg, &err) == 0 && cg.ndirs == 3);
	CHECK(put(cg.dir[0], "memory.limit_in_bytes", "") == 0 &&
	      put(cg.dir[0], "memory.memsw.limit_in_bytes", "") == 0 &&
	      put(cg.dir[1], "pids.max", "") == 0 && put(cg.dir[2], "cpu.cfs_period_us", "") == 0 &&
	      put(cg.dir[2], "cpu.cfs_quota_us", "") == 0);
	CHECK(tg_sandbox_spec_set_memory(spec, 64 << 20, &err) == 0);
	CHECK(tg_sandbox_spec_set_pids(spec, 9, &err) == 0);
	CHECK(tg_sandbox_spec_set_cpus(spec, 1500, &err) == 0 || sysconf(_SC_NPROCESSORS_ONLN) < 2);
	CHECK(cg.ops->limits(&cg, spec, &err) == 0);
	CHECK(has(cg.dir[0], "memory.limit_in_bytes", "67108864"));
	CHECK(has(cg.dir[0], "memory.memsw.limit_in_bytes", "67108864"));
	CHECK(has(cg.dir[1], "pids.max", "10"));
	CHECK(has(cg.dir[2], "cpu.cfs_period_us", "100000"));
	CHECK(put(cg.dir[0], "memory.max_usage_in_bytes", "4096\n") == 0);
	CHECK(put(cg.dir[0], "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n") == 0);
	CHECK(put(cg.dir[1], "pids.events", "max 0\n") == 0);
	cg_counters_open(&cg);
	cgroup_stats(&cg, &st);
	cg_counters_close(&cg);
	CHECK(st.peak_memory == 4096 && st.oom_kills == 3 && st.pids_max_events == 0);
	rm_tree(tmp);
	tg_sandbox_spec_free(spec);
	return 0;
}

/* A spent cgroup serves again only with nothing of its run left in it,
 * and a run in it counts only its own: on files shaped as v1's. */
static int reuse_baselines(void)
{
	static const char *const ctrl[3] = { "memory", "pids", "cpu" };
	char tmp[] = "/tmp/tg-unit-cg3-XXXXXX";
	struct sb_cgroup cg;
	struct sb_cgroup_stats st;
	struct tg_error err;
	int i;

	CHECK(mkdtemp(tmp));
	memset(&cg, 0, sizeof(cg));
	memset(cg.counter_fd, -1, sizeof(cg.counter_fd));
	cg.ops = &cg_v1_ops;
	cg.memory_limit = 64u << 20;
	for (i = 0; i < 3; i++) {
		snprintf(cg.root[i], sizeof(cg.root[i]), "%s/%s", tmp, ctrl[i]);
		CHECK(mkdir(cg.root[i], 0755) == 0);
	}
	strcpy(cg.parent, "/toolgate");
	strcpy(cg.name, "run-7");
	CHECK(cg.ops->create(&cg, &err) == 0 && cg.ndirs == 3);
	/* the spent run's: a 50 MB peak, 2 OOM kills, 3 pids limit hits */
	CHECK(put(cg.dir[0], "memory.max_usage_in_bytes", "50000000\n") == 0 &&
	      put(cg.dir[0], "memory.oom_control", "oom_kill_disable 0\noom_kill 2\n") == 0 &&
	      put(cg.dir[1], "pids.events", "max 3\n") == 0 &&
	      put(cg.dir[0], "memory.usage_in_bytes", "262144\n") == 0 &&
	      put(cg.dir[1], "pids.current", "0\n") == 0 &&
	      put(cg.dir[0], "memory.force_empty", "") == 0);
	cg_counters_open(&cg);
	CHECK(cgroup_recycle(&cg) == 0 && cgroup_reuse(&cg) == 0);
	/* the peak was reset: "0" written over it (a file reads 0 then; the
	 * kernel's reads the usage at the reset, the baseline) */
	CHECK(has(cg.dir[0], "memory.max_usage_in_bytes", "0\n000000\n"));
	/* the next run: a 1 MB peak, no OOM kill, no pids limit hit */
	CHECK(put(cg.dir[0], "memory.max_usage_in_bytes", "1310720\n") == 0);
	cgroup_stats(&cg, &st);
	CHECK(st.peak_memory == 1310720 && st.oom_kills == 0 && st.pids_max_events == 0);
	/* one more OOM kill, one more hit: counted once */
	CHECK(put(cg.dir[0], "memory.oom_control", "oom_kill_disable 0\noom_kill 3\n") == 0 &&
	      put(cg.dir[1], "pids.events", "max 4\n") == 0);
	cgroup_stats(&cg, &st);
	CHECK(st.oom_kills == 1 && st.pids_max_events == 1);
	/* not kept: a process left; more memory left than a sixteenth of
	 * the limit (after a reclaim that freed nothing); a counter that
	 * cannot be read */
	CHECK(put(cg.dir[1], "pids.current", "1\n") == 0 && cgroup_recycle(&cg) < 0);
	CHECK(put(cg.dir[1], "pids.current", "0\n") == 0 && cgroup_recycle(&cg) == 0);
	CHECK(put(cg.dir[0], "memory.usage_in_bytes", "4194305\n") == 0 &&
	      cgroup_recycle(&cg) < 0);
	CHECK(has(cg.dir[0], "memory.force_empty", "0"));
	CHECK(put(cg.dir[0], "memory.usage_in_bytes", "4194304\n") == 0 &&
	      cgroup_recycle(&cg) == 0);
	CHECK(put(cg.dir[0], "memory.usage_in_bytes", "") == 0 && cgroup_recycle(&cg) < 0);
	CHECK(put(cg.dir[0], "memory.usage_in_bytes", "0\n") == 0 &&
	      put(cg.dir[1], "pids.current", "gone\n") == 0 && cgroup_recycle(&cg) < 0);
	/* a small limit keeps a small residue: 4 MiB / 16 */
	cg.memory_limit = 4u << 20;
	CHECK(put(cg.dir[1], "pids.current", "0\n") == 0 &&
	      put(cg.dir[0], "memory.usage_in_bytes", "266240\n") == 0 &&
	      cgroup_recycle(&cg) < 0);
	cg_counters_close(&cg);
	rm_tree(tmp);
	return 0;
}

/* A child that waits to be killed (for 20 s at most); -1 if fork fails. */
static pid_t sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		alarm(20);
		pause();
		_exit(0);
	}
	return pid;
}

/* v1's kill signals the pids of cgroup.procs and nothing else: a line that
 * is not a positive pid alone is skipped, and so is every piece of a line
 * longer than its buffer. atoi made "0", "x" and "" pid 0, and kill(0)
 * signals the caller's own process group: here the test's own group (it
 * makes one first), so a regression kills this test and nothing else. No
 * line here is a negative number or another process's pid. */
static int v1_kill_lines(void)
{
	char tmp[] = "/tmp/tg-unit-cgk-XXXXXX", text[512];
	struct sb_cgroup cg;
	pid_t listed, spared;
	int st;

	CHECK(setpgid(0, 0) == 0);
	CHECK(mkdtemp(tmp));
	listed = sleeper();
	spared = sleeper();
	CHECK(listed > 0 && spared > 0);
	memset(&cg, 0, sizeof(cg));
	cg.ops = &cg_v1_ops;
	cg.ndirs = 1;
	snprintf(cg.dir[0], sizeof(cg.dir[0]), "%s", tmp);
	snprintf(text, sizeof(text),
		 "0\nx\n\n00\n %d\n+%d\n%dx\n0000000000000000000000000000000%d\n%d\n", (int)spared,
		 (int)spared, (int)spared, (int)spared, (int)listed);
	CHECK(put(tmp, "cgroup.procs", text) == 0);
	cg.ops->kill(&cg);
	CHECK(waitpid(listed, &st, 0) == listed && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
	CHECK(waitpid(spared, &st, WNOHANG) == 0);
	kill(spared, SIGKILL);
	CHECK(waitpid(spared, &st, 0) == spared);
	rm_tree(tmp);
	return 0;
}

/* A gateway that is not root, in a delegated v2 cgroup with no
 * controllers handed down: it moves itself into OWN/gateway (the kernel
 * makes cgroup.procs in a new cgroup; the fake tree has it made); one
 * whose cgroup hands them down already stays, and so does one that is
 * not alone in its cgroup or was given no controllers. */
static int v2_leaf(void)
{
	char tmp[] = "/tmp/tg-cg-leaf-XXXXXX", own[1100], leaf[1200], moved[1300], pid[32];

	CHECK(mkdtemp(tmp));
	snprintf(own, sizeof(own), "%s/system.slice", tmp);
	CHECK(mkdir(own, 0755) == 0);
	snprintf(own, sizeof(own), "%s/system.slice/toolgate.service", tmp);
	snprintf(leaf, sizeof(leaf), "%s/gateway", own);
	CHECK(mkdir(own, 0755) == 0 && mkdir(leaf, 0755) == 0);
	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	CHECK(put(own, "cgroup.subtree_control", "\n") == 0 && put(own, "cgroup.procs", pid) == 0 &&
	      put(own, "cgroup.controllers", "cpuset cpu io memory pids\n") == 0 &&
	      put(leaf, "cgroup.procs", "") == 0);
	/* a shell's scope: another process in it, nothing moved */
	snprintf(moved, sizeof(moved), "1\n%d\n", (int)getpid());
	CHECK(put(own, "cgroup.procs", moved) == 0);
	CHECK(cgroup_leaf_at(tmp, "/system.slice/toolgate.service", moved, sizeof(moved), NULL) ==
	      0 && moved[0] == '\0');
	/* no controllers given: nothing moved */
	CHECK(put(own, "cgroup.procs", pid) == 0 && put(own, "cgroup.controllers", "cpu\n") == 0);
	CHECK(cgroup_leaf_at(tmp, "/system.slice/toolgate.service", moved, sizeof(moved), NULL) ==
	      0);
	CHECK(put(own, "cgroup.controllers", "cpuset cpu io memory pids\n") == 0);
	CHECK(cgroup_leaf_at(tmp, "/system.slice/toolgate.service", moved, sizeof(moved), NULL) ==
	      1);
	CHECK(strcmp(moved, leaf) == 0);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	CHECK(has(leaf, "cgroup.procs", pid));
	/* handed down already: nothing to do */
	CHECK(put(own, "cgroup.subtree_control", "cpu memory pids\n") == 0);
	CHECK(cgroup_leaf_at(tmp, "/system.slice/toolgate.service", moved, sizeof(moved), NULL) ==
	      0 && moved[0] == '\0');
	rm_tree(tmp);
	return 0;
}

const struct unit_test cgroup_tests[] = {
	{ "cgroup/v2_leaf", v2_leaf },
	{ "cgroup/v2_backend", v2_backend },
	{ "cgroup/v1_backend", v1_backend },
	{ "cgroup/reuse_baselines", reuse_baselines },
	{ "cgroup/v1_kill_lines", v1_kill_lines },
	UNIT_TESTS_END,
};
