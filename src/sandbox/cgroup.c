/*
 * cgroups: a run's memory, pids and CPU limits, behind a backend interface
 * (cgroup_int.h) with v1 (cgroup_v1.c) and v2 (cgroup_v2.c) beside it. Both
 * exist in the world: these build machines have v1 controllers and an empty
 * v2 hierarchy, production hosts are usually pure v2. Detection prefers v2
 * when it holds the three controllers, then v1; with neither the strict
 * tier refuses to run.
 */
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "sandbox/cgroup_int.h"
#include "util/file.h"

/* The counters read at a run's end, open from the cgroup's making: the
 * peak read-write, so that a reuse can reset it. Memory in use and the
 * processes are read only when a spent cgroup may serve again. */
void cg_counters_open(struct sb_cgroup *cg)
{
	int i;

	for (i = 0; i < CG_KEPT_OPEN; i++) {
		char path[SB_PATH_MAX + 32];

		snprintf(path, sizeof(path), "%s/%s", cg->dir[cg->ops->counters[i].dir],
			 cg->ops->counters[i].file);
		cg->counter_fd[i] = i == CG_PEAK ? open(path, O_RDWR | O_CLOEXEC) : -1;
		if (cg->counter_fd[i] < 0)
			cg->counter_fd[i] = open(path, O_RDONLY | O_CLOEXEC); /* -1: counts 0 */
	}
}

void cg_counters_close(struct sb_cgroup *cg)
{
	int i;

	for (i = 0; i < CG_KEPT_OPEN; i++)
		if (cg->counter_fd[i] >= 0) {
			close(cg->counter_fd[i]);
			cg->counter_fd[i] = -1;
		}
}

/* A counter from its open file: the number alone, or the one after
 * "key "; 0, or -1 when it cannot be read or is not there. pread from 0:
 * the file is read afresh, without the open (on cgroupfs an open costs
 * more than the read; at a warm run's end it was most of the parent's
 * own work). */
static int counter_get(int fd, const char *key, uint64_t *v)
{
	char buf[4096], *p, *end;
	size_t klen;
	ssize_t n;

	if (fd < 0 || (n = pread(fd, buf, sizeof(buf) - 1, 0)) <= 0)
		return -1;
	buf[n] = '\0';
	p = buf;
	if (key) {
		klen = strlen(key);
		for (; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
			if (strncmp(p, key, klen) == 0 && p[klen] == ' ')
				break;
		if (!p || !*p)
			return -1;
		p += klen + 1;
	}
	if (*p < '0' || *p > '9')
		return -1;
	*v = strtoull(p, &end, 10);
	return 0;
}

/* Counter i now (open once if it is not kept open); -1 when unreadable. */
static int counter_now(struct sb_cgroup *cg, int i, uint64_t *v)
{
	char path[SB_PATH_MAX + 32];
	int fd, rc;

	if (i < 0 || i >= CG_COUNTERS)
		return -1;
	if (i < CG_KEPT_OPEN)
		return counter_get(cg->counter_fd[i], cg->ops->counters[i].key, v);
	snprintf(path, sizeof(path), "%s/%s", cg->dir[cg->ops->counters[i].dir],
		 cg->ops->counters[i].file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	rc = counter_get(fd, cg->ops->counters[i].key, v);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* A counter since this run began: less its baseline (0 unless reused);
 * 0 when unreadable. */
static uint64_t counter_of(struct sb_cgroup *cg, int i)
{
	uint64_t v;

	if (counter_now(cg, i, &v) < 0)
		return 0;
	return v > cg->base[i] ? v - cg->base[i] : 0;
}

int cg_make_dir(const char *root, const char *rel, const char *name, char *out,
		size_t len, struct tg_error *err)
{
	char path[SB_PATH_MAX];
	const char *p;
	size_t rl = strlen(root), need = rl + strlen(rel) + (name ? strlen(name) : 0) + 2;

	if (need >= sizeof(path) || (name && need >= len))
		return tg_error_set(err, TG_ERR_LIMIT, "cgroup: path too long");
	snprintf(path, sizeof(path), "%s%s", root, rel);
	for (p = path + rl + 1; (p = strchr(p, '/')); p++) {
		path[p - path] = '\0';
		if (mkdir(path, 0755) < 0 && errno != EEXIST)
			return tg_error_sys(err, errno, "cgroup: mkdir %s", path);
		path[p - path] = '/';
	}
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		return tg_error_sys(err, errno,
				    "cgroup: mkdir %s (a non-root caller needs a delegated "
				    "cgroup: --cgroup-parent)", path);
	if (!name)
		return 0;
	snprintf(out, len, "%s/%s", path, name);
	if (mkdir(out, 0755) < 0)
		return tg_error_sys(err, errno, "cgroup: mkdir %s", out);
	return 0;
}

static int is_fs(const char *path, long magic)
{
	struct statfs sf;

	return statfs(path, &sf) == 0 && (long)sf.f_type == magic;
}

static int v2_has_controllers(const char *root, int *memory, int *pids, int *cpu)
{
	char buf[512];

	if (file_read_small(root, "cgroup.controllers", buf, sizeof(buf)) < 0)
		return 0;
	*memory = strstr(buf, "memory") != NULL;
	*pids = strstr(buf, "pids") != NULL;
	*cpu = strstr(buf, "cpu") != NULL;
	return *memory && *pids && *cpu;
}

/* The detected hierarchy, once per process. */
static struct {
	int version;
	char root[3][64]; /* v2: [0]; v1: memory, pids, cpu */
	int memory, pids, cpu;
	char detail[256];
} det;

static void detect(void)
{
	static const char *const v1[3] = { "memory", "pids", "cpu" };
	int i, have[3];

	if (is_fs("/sys/fs/cgroup", CGROUP2_SUPER_MAGIC) &&
	    v2_has_controllers("/sys/fs/cgroup", &det.memory, &det.pids, &det.cpu)) {
		det.version = 2;
		snprintf(det.root[0], sizeof(det.root[0]), "/sys/fs/cgroup");
	} else if (is_fs("/sys/fs/cgroup/unified", CGROUP2_SUPER_MAGIC) &&
		   v2_has_controllers("/sys/fs/cgroup/unified", &det.memory,
				      &det.pids, &det.cpu)) {
		det.version = 2;
		snprintf(det.root[0], sizeof(det.root[0]), "/sys/fs/cgroup/unified");
	} else {
		for (i = 0; i < 3; i++) {
			snprintf(det.root[i], sizeof(det.root[i]), "/sys/fs/cgroup/%s", v1[i]);
			have[i] = is_fs(det.root[i], CGROUP_SUPER_MAGIC);
		}
		det.memory = have[0];
		det.pids = have[1];
		det.cpu = have[2];
		if (have[0] && have[1] && have[2])
			det.version = 1;
	}
	if (det.version == 2)
		snprintf(det.detail, sizeof(det.detail), "v2 at %s (memory, pids, cpu)",
			 det.root[0]);
	else if (det.version == 1)
		snprintf(det.detail, sizeof(det.detail),
			 "v1 controllers memory, pids, cpu under /sys/fs/cgroup");
	else
		snprintf(det.detail, sizeof(det.detail),
			 "no hierarchy with memory, pids and cpu (memory:%s pids:%s cpu:%s)",
			 det.memory ? "yes" : "no", det.pids ? "yes" : "no",
			 det.cpu ? "yes" : "no");
}

static pthread_once_t detected = PTHREAD_ONCE_INIT;

static void detect_once(void)
{
	pthread_once(&detected, detect);
}

int cgroup_detect(char *detail, size_t len, int *memory, int *pids, int *cpu)
{
	detect_once();
	if (detail)
		snprintf(detail, len, "%s", det.detail);
	if (memory)
		*memory = det.memory;
	if (pids)
		*pids = det.pids;
	if (cpu)
		*cpu = det.cpu;
	return det.version;
}

/* The caller's own cgroup path in hierarchy `ctrl` ("" for v2), from
 * /proc/self/cgroup. */
static int own_cgroup(const char *ctrl, char *out, size_t len)
{
	char buf[4096], *line, *save = NULL;
	int fd;
	ssize_t n;

	fd = open("/proc/self/cgroup", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		size_t cl;

		if (!c2)
			continue;
		cl = (size_t)(c2 - c1 - 1);
		if ((ctrl[0] == '\0' && cl == 0) ||
		    (cl == strlen(ctrl) && strncmp(c1 + 1, ctrl, cl) == 0)) {
			snprintf(out, len, "%s", strcmp(c2 + 1, "/") == 0 ? "" : c2 + 1);
			return 0;
		}
	}
	return -1;
}

/* Where a caller that is not root moved itself (cgroup_leaf_at): the
 * cgroup it was delegated, under which its runs go; "" when it did not. */
static char leaf_parent[SB_PATH_MAX / 2];

/* 1 if the caller is the one process of v2 directory dir. */
static int alone_in(const char *dir, const char *pid)
{
	char in[64];
	size_t n = strlen(pid);

	return file_read_small(dir, "cgroup.procs", in, sizeof(in)) == 0 &&
	       strncmp(in, pid, n) == 0 && (in[n] == '\0' || strcmp(in + n, "\n") == 0);
}

int cgroup_leaf_at(const char *root, const char *own, char *moved, size_t len,
		   struct tg_error *err)
{
	char dir[SB_PATH_MAX], leaf[SB_PATH_MAX + 16], procs[SB_PATH_MAX + 16], pid[32];
	int memory, pids, cpu;

	if (moved && len)
		moved[0] = '\0';
	if ((size_t)snprintf(dir, sizeof(dir), "%s%s", root, own) >= sizeof(dir))
		return tg_error_set(err, TG_ERR_INVALID, "cgroup: %s%s: too long a path", root, own);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	snprintf(procs, sizeof(procs), "%s/cgroup.procs", dir);
	/* the controllers handed down already, or not this caller's to hand:
	 * a cgroup given to it has memory, pids and cpu and it alone in it
	 * (a login shell's scope is writable too, and holds the shell) */
	if (cg_v2_has_all(dir) || access(dir, W_OK) < 0 || access(procs, W_OK) < 0 ||
	    !v2_has_controllers(dir, &memory, &pids, &cpu) || !alone_in(dir, pid))
		return 0;
	snprintf(leaf, sizeof(leaf), "%s/gateway", dir);
	if (mkdir(leaf, 0755) < 0 && errno != EEXIST)
		return tg_error_sys(err, errno, "cgroup: a leaf for the gateway, %s", leaf);
	if (file_write_small(leaf, "cgroup.procs", pid) < 0)
		return tg_error_sys(err, errno, "cgroup: moving the gateway into %s", leaf);
	if (moved)
		snprintf(moved, len, "%s", leaf);
	return 1;
}

int tg_sandbox_cgroup_leaf(char *moved, size_t len, struct tg_error *err)
{
	char own[SB_PATH_MAX / 2];
	int rc;

	if (moved && len)
		moved[0] = '\0';
	detect_once();
	/* root's runs go under /toolgate, beside everything else: the root
	 * cgroup has no rule against processes in it; v1 has no such rule */
	if (det.version != 2 || geteuid() == 0 || own_cgroup("", own, sizeof(own)) < 0 ||
	    own[0] == '\0')
		return 0;
	rc = cgroup_leaf_at(det.root[0], own, moved, len, err);
	if (rc == 1)
		snprintf(leaf_parent, sizeof(leaf_parent), "%s", own);
	return rc;
}

/* A process that died without cleaning up (kill -9) leaves its empty
 * run-PID-N directories behind. The first run of each process removes
 * those whose PID is gone; a cgroup still in use is busy and stays. */
static void sweep_stale(const struct sb_cgroup *cg)
{
	char dir[SB_PATH_MAX + 64], path[SB_PATH_MAX + 320];
	struct dirent *e;
	int i, pid;
	DIR *d;

	for (i = 0; i < CG_MAX_DIRS && cg->root[i][0]; i++) {
		snprintf(dir, sizeof(dir), "%s%s", cg->root[i], cg->parent);
		d = opendir(dir);
		if (!d)
			continue;
		while ((e = readdir(d))) {
			if (sscanf(e->d_name, "run-%d-", &pid) != 1 || pid <= 0 ||
			    pid == getpid() || kill(pid, 0) == 0 || errno != ESRCH)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			rmdir(path);
		}
		closedir(d);
	}
}

int cgroup_create(const struct tg_sandbox_spec *spec, struct sb_cgroup **out,
		  struct tg_error *err)
{
	static int swept;
	static unsigned seq;
	struct sb_cgroup *cg;
	char own[SB_PATH_MAX / 2];

	*out = NULL;
	detect_once();
	if (det.version == 0)
		return tg_error_set(err, TG_ERR_UNAVAILABLE, "cgroup: %s", det.detail);
	cg = calloc(1, sizeof(*cg));
	if (!cg)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	memset(cg->counter_fd, -1, sizeof(cg->counter_fd));
	cg->memory_limit = spec->memory;
	cg->ops = det.version == 2 ? &cg_v2_ops : &cg_v1_ops;
	memcpy(cg->root, det.root, sizeof(cg->root));
	if (spec->cgroup_parent) {
		snprintf(cg->parent, sizeof(cg->parent), "%s", spec->cgroup_parent);
	} else if (geteuid() == 0) {
		snprintf(cg->parent, sizeof(cg->parent), "/toolgate");
	} else if (leaf_parent[0]) {
		snprintf(cg->parent, sizeof(cg->parent), "%s/toolgate", leaf_parent);
	} else {
		if (own_cgroup(det.version == 2 ? "" : "memory", own, sizeof(own)) < 0)
			own[0] = '\0';
		snprintf(cg->parent, sizeof(cg->parent), "%s/toolgate", own);
	}
	snprintf(cg->name, sizeof(cg->name), "run-%d-%u", (int)getpid(),
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	if (!__atomic_exchange_n(&swept, 1, __ATOMIC_RELAXED))
		sweep_stale(cg);
	if (cg->ops->create(cg, err) < 0 || cg->ops->limits(cg, spec, err) < 0) {
		cgroup_destroy(cg);
		return -1;
	}
	cg_counters_open(cg);
	*out = cg;
	return 0;
}

/*
 * How the child joins its cgroup without the parent migrating it.
 *
 * Moving a process (cgroup.procs) takes cgroup_threadgroup_rwsem for
 * writing, which waits for an RCU grace period: under load that was 10 to
 * 16 ms per run, three times over with v1's three hierarchies. Two ways
 * around it: on v2, clone3(CLONE_INTO_CGROUP) starts the child in place
 * (fork only takes the lock for reading); on v1, a single-threaded child
 * writes "0" (itself) to each hierarchy's "tasks" file, which moves one
 * thread and skips the global lock. The fds are opened here, by the
 * caller, whose credentials the kernel checks (opener's, since Linux 5.16).
 */
int cgroup_join_fds(struct sb_cgroup *cg, int *clone_fd, int *tasks_fds,
		    struct tg_error *err)
{
	int i;

	*clone_fd = -1;
	for (i = 0; i < CG_MAX_DIRS; i++)
		tasks_fds[i] = -1;
	if (cg->ops == &cg_v2_ops) {
		*clone_fd = open(cg->dir[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (*clone_fd < 0)
			return tg_error_sys(err, errno, "cgroup: open %s", cg->dir[0]);
		return 0;
	}
	for (i = 0; i < cg->ndirs; i++) {
		char path[SB_PATH_MAX + 8];

		snprintf(path, sizeof(path), "%s/tasks", cg->dir[i]);
		tasks_fds[i] = open(path, O_WRONLY | O_CLOEXEC);
		if (tasks_fds[i] < 0) {
			int e = errno;

			while (i-- > 0)
				close(tasks_fds[i]);
			return tg_error_sys(err, e, "cgroup: open %s", path);
		}
	}
	return 0;
}

void cgroup_stats(struct sb_cgroup *cg, struct sb_cgroup_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!cg)
		return;
	st->peak_memory = counter_of(cg, CG_PEAK);
	st->oom_kills = counter_of(cg, CG_OOM_KILLS);
	st->pids_max_events = counter_of(cg, CG_PIDS_MAX);
}

/*
 * Reuse. Making a cgroup (three directories on v1, their limits, their
 * counters' files) and removing it after cost about a tenth of a warm
 * sandbox's making (docs/BENCHMARKS.md), so a warm pool keeps its spent
 * sandboxes' cgroups for the next ones, which have the same limits. A
 * cgroup is kept only when nothing of its run is left in it: no process,
 * and at most CG_REUSE_RESIDUE of memory still charged (kernel objects of
 * the sandbox that are freed after a grace period, page cache it read
 * first). The counters that cannot be reset (OOM kills, hits of the pids
 * limit) and the residue are taken as baselines; the peak is reset.
 * Nothing of it is visible inside a sandbox (no cgroupfs there).
 */
#define CG_REUSE_RESIDUE (4u << 20)

/* The residue a reused cgroup may hold: at most a sixteenth of its limit. */
static uint64_t residue_max(const struct sb_cgroup *cg)
{
	uint64_t sixteenth = cg->memory_limit / 16;

	return sixteenth < CG_REUSE_RESIDUE ? sixteenth : CG_REUSE_RESIDUE;
}

int cgroup_recycle(struct sb_cgroup *cg)
{
	uint64_t procs, usage;

	if (!cg || cg->ndirs == 0 || counter_now(cg, CG_PROCS, &procs) < 0 || procs != 0 ||
	    counter_now(cg, CG_USAGE, &usage) < 0)
		return -1;
	if (usage > residue_max(cg)) {
		/* more left charged than may be: reclaimed once, or not kept */
		char n[32];

		snprintf(n, sizeof(n), "%llu", (unsigned long long)usage);
		if (file_write_small(cg->dir[cg->ops->counters[CG_USAGE].dir], cg->ops->reclaim,
				     cg->ops == &cg_v2_ops ? n : "0") < 0 ||
		    counter_now(cg, CG_USAGE, &usage) < 0 || usage > residue_max(cg))
			return -1;
	}
	return 0;
}

int cgroup_reuse(struct sb_cgroup *cg)
{
	int i;

	/* cgroup_recycle passed it when its run was discarded; nothing has
	 * entered it since (no process is in it, nor can one be) */
	if (cg->counter_fd[CG_PEAK] < 0 || pwrite(cg->counter_fd[CG_PEAK], "0\n", 2, 0) != 2)
		return -1;
	/* the peak is now the usage at the reset: what the run adds is its own */
	for (i = 0; i < CG_KEPT_OPEN; i++)
		if (counter_now(cg, i, &cg->base[i]) < 0)
			return -1;
	return 0;
}

void cgroup_destroy(struct sb_cgroup *cg)
{
	int i, tries;

	if (!cg)
		return;
	cg_counters_close(cg);
	for (i = cg->ndirs - 1; i >= 0; i--) {
		for (tries = 0; tries < 100; tries++) {
			if (rmdir(cg->dir[i]) == 0 || errno == ENOENT)
				break;
			if (errno != EBUSY)
				break;
			cg->ops->kill(cg);
			usleep(1000);
		}
	}
	free(cg);
}
