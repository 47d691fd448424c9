/*
 * Private to the cgroup files: the backend interface the v1 and v2 files implement
 * and what they share.
 */
#ifndef TG_SANDBOX_CGROUP_INT_H
#define TG_SANDBOX_CGROUP_INT_H

#include "sandbox/sandbox_int.h"

#define CG_MAX_DIRS 3

struct cg_ops {
	const char *name;
	/* Create the directories (cg->root, parent and name are set). */
	int (*create)(struct sb_cgroup *cg, struct tg_error *err);
	/* Write the spec's limits into the created directories. */
	int (*limits)(struct sb_cgroup *cg, const struct tg_sandbox_spec *spec,
		      struct tg_error *err);
	void (*stats)(struct sb_cgroup *cg, struct sb_cgroup_stats *st);
	/* Kill any process left: one call, best effort. */
	void (*kill)(struct sb_cgroup *cg);
};

struct sb_cgroup {
	const struct cg_ops *ops;
	char root[CG_MAX_DIRS][64];         /* hierarchy roots (v2: [0]) */
	char dir[CG_MAX_DIRS][SB_PATH_MAX]; /* v1: memory, pids, cpu; v2: one */
	int ndirs;
	char parent[SB_PATH_MAX];           /* relative, e.g. /toolgate */
	char name[64];
};

extern const struct cg_ops cg_v1_ops;
extern const struct cg_ops cg_v2_ops;

/* Read "key N" from dir/file; 0 if absent. */
uint64_t cg_read_key(const char *dir, const char *file, const char *key);
/* Read a single number from dir/file; 0 if absent. */
uint64_t cg_read_u64(const char *dir, const char *file);
/* mkdir -p of root + rel; then, if name is not NULL, mkdir of
 * root + rel + "/" + name, whose path goes to out (it must not exist). */
int cg_make_dir(const char *root, const char *rel, const char *name, char *out,
		size_t len, struct tg_error *err);

#endif
