/*
 * cgroup v1 backend: one directory in each of the memory, pids and cpu
 * hierarchies. OOM kills are counted by memory.oom_control's oom_kill
 * (Linux 4.13+), hits of the pids limit by pids.events.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox/cgroup_int.h"
#include "util/file.h"

enum { V1_MEMORY, V1_PIDS, V1_CPU };

static int v1_create(struct sb_cgroup *cg, struct tg_error *err)
{
	int i;

	for (i = 0; i < 3; i++) {
		if (cg_make_dir(cg->root[i], cg->parent, cg->name, cg->dir[i],
				sizeof(cg->dir[i]), err) < 0)
			return -1;
		cg->ndirs = i + 1;
	}
	return 0;
}

static int v1_limits(struct sb_cgroup *cg, const struct tg_sandbox_spec *spec,
		     struct tg_error *err)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)spec->memory);
	if (file_write_small(cg->dir[V1_MEMORY], "memory.limit_in_bytes", buf) < 0)
		return tg_error_sys(err, errno, "cgroup: memory.limit_in_bytes");
	/* With swap accounting, swap counts against the same limit. */
	if (file_write_small(cg->dir[V1_MEMORY], "memory.memsw.limit_in_bytes", buf) < 0 &&
	    errno != ENOENT)
		return tg_error_sys(err, errno, "cgroup: memory.memsw.limit_in_bytes");
	/* +1: the sandbox's init process counts too. */
	snprintf(buf, sizeof(buf), "%u", spec->pids + 1);
	if (file_write_small(cg->dir[V1_PIDS], "pids.max", buf) < 0)
		return tg_error_sys(err, errno, "cgroup: pids.max");
	if (file_write_small(cg->dir[V1_CPU], "cpu.cfs_period_us", "100000") < 0)
		return tg_error_sys(err, errno, "cgroup: cpu.cfs_period_us");
	snprintf(buf, sizeof(buf), "%u", spec->millicpus * 100);
	if (file_write_small(cg->dir[V1_CPU], "cpu.cfs_quota_us", buf) < 0)
		return tg_error_sys(err, errno, "cgroup: cpu.cfs_quota_us");
	return 0;
}

/* The pid a line of cgroup.procs names: digits alone, then the newline or
 * the end; 0 for anything else. Never 0 or negative: kill(0) would signal
 * the gateway's own process group and kill(-1) every process it may. */
static pid_t procs_pid(const char *line)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)line[0]))
		return 0;
	errno = 0;
	v = strtol(line, &end, 10);
	if (errno || (*end != '\n' && *end != '\0') || v <= 0 || v > INT_MAX)
		return 0;
	return (pid_t)v;
}

static void v1_kill(struct sb_cgroup *cg)
{
	char path[SB_PATH_MAX + 16], line[32];
	FILE *f;
	int i, partial;

	for (i = 0; i < cg->ndirs; i++) {
		snprintf(path, sizeof(path), "%s/cgroup.procs", cg->dir[i]);
		f = fopen(path, "re");
		if (!f)
			continue;
		/* a line longer than the buffer is no pid: none of its pieces */
		for (partial = 0; fgets(line, sizeof(line), f);) {
			int whole = strchr(line, '\n') != NULL;
			pid_t pid = partial || (!whole && !feof(f)) ? 0 : procs_pid(line);

			partial = !whole;
			if (pid > 0)
				kill(pid, SIGKILL);
		}
		fclose(f);
	}
}

const struct cg_ops cg_v1_ops = {
	"v1", v1_create, v1_limits,
	{ { V1_MEMORY, "memory.max_usage_in_bytes", NULL },
	  { V1_MEMORY, "memory.oom_control", "oom_kill" },
	  { V1_PIDS, "pids.events", "max" },
	  { V1_MEMORY, "memory.usage_in_bytes", NULL },
	  { V1_PIDS, "pids.current", NULL } },
	"memory.force_empty",
	v1_kill,
};
