/*
 * cgroup v2 backend: one directory in the unified hierarchy, controllers
 * enabled on the way down, memory.peak (Linux 5.19+; reset by a write to
 * the same open file since 6.12, which a reused cgroup needs) for peak memory,
 * memory.events and pids.events for limit hits, cgroup.kill to empty it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sandbox/cgroup_int.h"
#include "util/file.h"

int cg_v2_has_all(const char *dir)
{
	char buf[256];

	if (file_read_small(dir, "cgroup.subtree_control", buf, sizeof(buf)) < 0)
		return 0;
	return strstr(buf, "memory") && strstr(buf, "pids") && strstr(buf, "cpu");
}

/* Enable memory, pids and cpu for the children of root and of every
 * component of rel, where they are not already: a delegated subtree has
 * them above it and may not write there. */
static int v2_enable(const char *root, const char *rel, struct tg_error *err)
{
	char path[SB_PATH_MAX];
	size_t rl = strlen(root);
	char *p;

	snprintf(path, sizeof(path), "%s%s", root, rel);
	p = path + rl;
	for (;;) {
		char save = *p;

		*p = '\0';
		if (!cg_v2_has_all(path) &&
		    file_write_small(path, "cgroup.subtree_control", "+memory +pids +cpu") < 0)
			return tg_error_sys(err, errno, "cgroup: enable controllers in %s", path);
		*p = save;
		if (!save)
			break;
		p = strchr(p + 1, '/');
		if (!p)
			p = path + strlen(path);
	}
	return 0;
}

static int v2_create(struct sb_cgroup *cg, struct tg_error *err)
{
	if (cg_make_dir(cg->root[0], cg->parent, NULL, NULL, 0, err) < 0 ||
	    v2_enable(cg->root[0], cg->parent, err) < 0 ||
	    cg_make_dir(cg->root[0], cg->parent, cg->name, cg->dir[0], sizeof(cg->dir[0]),
			err) < 0)
		return -1;
	cg->ndirs = 1;
	return 0;
}

static int v2_limits(struct sb_cgroup *cg, const struct tg_sandbox_spec *spec,
		     struct tg_error *err)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)spec->memory);
	if (file_write_small(cg->dir[0], "memory.max", buf) < 0)
		return tg_error_sys(err, errno, "cgroup: memory.max");
	/* No swap: the memory limit is the limit. */
	if (file_write_small(cg->dir[0], "memory.swap.max", "0") < 0 && errno != ENOENT)
		return tg_error_sys(err, errno, "cgroup: memory.swap.max");
	/* +1: the sandbox's init process counts too. */
	snprintf(buf, sizeof(buf), "%u", spec->pids + 1);
	if (file_write_small(cg->dir[0], "pids.max", buf) < 0)
		return tg_error_sys(err, errno, "cgroup: pids.max");
	snprintf(buf, sizeof(buf), "%u 100000", spec->millicpus * 100);
	if (file_write_small(cg->dir[0], "cpu.max", buf) < 0)
		return tg_error_sys(err, errno, "cgroup: cpu.max");
	return 0;
}

static void v2_kill(struct sb_cgroup *cg)
{
	file_write_small(cg->dir[0], "cgroup.kill", "1");
}

const struct cg_ops cg_v2_ops = {
	"v2", v2_create, v2_limits,
	{ { 0, "memory.peak", NULL }, { 0, "memory.events", "oom_kill" },
	  { 0, "pids.events", "max" }, { 0, "memory.current", NULL },
	  { 0, "pids.current", NULL } },
	"memory.reclaim",
	v2_kill,
};
