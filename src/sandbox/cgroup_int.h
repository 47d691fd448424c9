/*
 * Private to the cgroup files: the backend interface the v1 and v2 files implement
 * and what they share.
 */
#ifndef TG_SANDBOX_CGROUP_INT_H
#define TG_SANDBOX_CGROUP_INT_H

#include "sandbox/sandbox_int.h"

#define CG_MAX_DIRS 3
/* the first CG_KEPT_OPEN are open for the cgroup's life */
enum { CG_PEAK, CG_OOM_KILLS, CG_PIDS_MAX, CG_KEPT_OPEN, CG_USAGE = CG_KEPT_OPEN, CG_PROCS,
       CG_COUNTERS };

struct cg_ops {
	const char *name;
	/* Create the directories (cg->root, parent and name are set). */
	int (*create)(struct sb_cgroup *cg, struct tg_error *err);
	/* Write the spec's limits into the created directories. */
	int (*limits)(struct sb_cgroup *cg, const struct tg_sandbox_spec *spec,
		      struct tg_error *err);
	/* Where the counters are: peak memory (writable: a write resets it
	 * to the usage now), OOM kills, hits of the pids limit, memory in use
	 * and processes (a number alone when key is NULL, else the line
	 * "key N"). */
	struct cg_counter {
		int dir;
		const char *file;
		const char *key;
	} counters[CG_COUNTERS];
	/* Written to reclaim what a spent cgroup still holds (v1: "0" to
	 * memory.force_empty; v2: a size to memory.reclaim). */
	const char *reclaim;
	/* Kill any process left: one call, best effort. */
	void (*kill)(struct sb_cgroup *cg);
};

struct sb_cgroup {
	const struct cg_ops *ops;
	char root[CG_MAX_DIRS][64];         /* hierarchy roots (v2: [0]) */
	char dir[CG_MAX_DIRS][SB_PATH_MAX]; /* v1: memory, pids, cpu; v2: one */
	int ndirs;
	int counter_fd[CG_KEPT_OPEN];       /* opened once made: read at the end */
	uint64_t base[CG_KEPT_OPEN];        /* their values when a reuse began */
	uint64_t memory_limit;
	char parent[SB_PATH_MAX];           /* relative, e.g. /toolgate */
	char name[64];
};

extern const struct cg_ops cg_v1_ops;
extern const struct cg_ops cg_v2_ops;

/* Open the counters' files (once the directories are made), and close
 * them; cgroup_stats reads them. */
void cg_counters_open(struct sb_cgroup *cg);
void cg_counters_close(struct sb_cgroup *cg);
/* mkdir -p of root + rel; then, if name is not NULL, mkdir of
 * root + rel + "/" + name, whose path goes to out (it must not exist). */
int cg_make_dir(const char *root, const char *rel, const char *name, char *out,
		size_t len, struct tg_error *err);
/* 1 if v2 directory dir hands memory, pids and cpu to its children
 * (its cgroup.subtree_control names them). */
int cg_v2_has_all(const char *dir);
/* tg_sandbox_cgroup_leaf on the v2 hierarchy at root, for the caller's
 * cgroup own (relative to it): the unit tests' entry, on a tree of their
 * own. 1 moved (moved[len]: the leaf's path), 0 nothing to do, -1 err. */
int cgroup_leaf_at(const char *root, const char *own, char *moved, size_t len,
		   struct tg_error *err);

#endif
