/*
 * Private interface of src/sandbox/: only the files of src/sandbox/ include this.
 *
 * A run is planned in the parent (which may allocate) and carried out in the
 * child with system calls only: after clone the child never calls malloc,
 * so a multi-threaded embedder cannot deadlock it. The child's steps are in
 * child.c, one kernel facility per file beside it.
 */
#ifndef TG_SANDBOX_INT_H
#define TG_SANDBOX_INT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sandbox/init_proto.h"
#include "toolgate/sandbox.h"

#define SB_INSIDE_UID 1000
#define SB_INSIDE_GID 1000
#define SB_OVERFLOW_ID 65534 /* host id a root caller is mapped to */
#define SB_MAX_BINDS 64
#define SB_PATH_MAX 1024

struct sb_bind {
	char *host;   /* canonical host path (realpath) */
	char *inside; /* normalised absolute path inside */
	char *upper;  /* host is an overlay's lower layer: its upper directory */
	char *work;   /* and its work directory (canonical paths) */
	int writable;
	int is_dir;
};

struct tg_sandbox_spec {
	enum tg_tier tier;
	char **argv;   /* NULL-terminated */
	int argc;
	uint64_t memory;
	unsigned millicpus;
	unsigned pids;
	uint64_t timeout_ms;
	uint64_t output_limit;
	uint64_t tmpfs_size;
	struct sb_bind binds[SB_MAX_BINDS];
	int nbinds;
	char *workdir;
	char *env[SB_MAX_ENV + 1]; /* "NAME=VALUE", NULL-terminated */
	int nenv;
	int stdin_fd;
	int cancel_fd;
	tg_sandbox_output_fn out_fn;
	void *out_ctx;
	char *cgroup_parent;
	unsigned host_uid, host_gid; /* a root caller's identity outside */
	struct tg_egress_proxy *egress; /* borrowed; NULL: no network */
	int server;    /* tg_sandbox_spec_set_server: no deadline, output streamed only */
};

struct sock_fprog;

/* Everything the child needs, computed before clone. */
struct sb_plan {
	const struct tg_sandbox_spec *spec;
	int caller_is_root;
	/* fds the child keeps; all others are closed on entry */
	int sync_rd;    /* parent writes one byte when maps and cgroup are set */
	int status_wr;  /* struct sb_msg stream to the parent */
	int handover;   /* the parent's answer to SB_MSG_HANDOVER ('T' taken,
			 * 'S' send), and the listener sent on it after an 'S'
			 * (run.c, "The hand-over") */
	int stdin_rd, stdout_wr, stderr_wr;
	int cg_tasks[3];          /* v1: the child writes "0" to each, or -1 */
	int egress_wr;            /* egress: the forwarder hands loopback
				   * connections out here after an 'S', or -1 */
	int job_rd;               /* a warm sandbox reads its job here, or -1 */
	int init_fd;              /* toolgate-init's image (sb_init_fd), exec'd
				   * as PID 1 once the layers are in place */
	char **init_argv;         /* its arguments (init_proto.h); [1] the
				   * child's to fill */
	char *const *envp;
	char tmpfs_opts[64];      /* "size=N,mode=1777" for /tmp, /dev/shm */
	char workdir_opts[64];    /* "size=N,mode=0755" for the work directory */
	const char *workdir;
	int workdir_is_bound;     /* a mount already provides the work
				   * directory (rootfs_plan): no tmpfs there */
	/* Read-only system binds (/usr, lib directories that are not links,
	 * ld.so.cache...), and the links at the root (/bin -> usr/bin). */
	struct sb_sysbind {
		char host[SB_PATH_MAX];
		char inside[64];
		int is_dir;
	} sysbinds[12];
	int nsysbinds;
	struct sb_link {
		char name[32];
		char target[SB_PATH_MAX];
	} links[10];
	int nlinks;
	const char *hostname;
	int trace;                /* TOOLGATE_TRACE: time each step of the child */
	uint64_t trace_start;     /* CLOCK_MONOTONIC microseconds at clone */
	const struct sock_fprog *seccomp;
	const struct sock_fprog *seccomp_ioctl;
	unsigned landlock_abi;
	struct rlimit_plan {
		int resource;
		uint64_t value;
	} rlimits[10];            /* PID 1's, and so the command's */
	int nrlimits;
	uint64_t cmd_nofile;      /* the command's RLIMIT_NOFILE, set in its own
				   * process just before exec: PID 1 keeps its
				   * own as high as it may (descriptors in
				   * flight, see child.c) */
};

/* run_init.c: toolgate-init's image as a sealed memfd, made at the first
 * call and kept, made again when the descriptor is no longer ours; -1
 * and err when it cannot be. */
int sb_init_fd(struct tg_error *err);

/* clone.c: the sandbox's first process, child_main(plan), started in new
 * namespaces with its id maps written (maps) and "go" said on sync_w.
 * Returns its pid with *pidfd, the child past "go" or gone (error says
 * why when the maps were what failed: it is killed then), or -1 and err
 * when clone3 failed. Sharing the caller's memory where it can (the
 * file says when and what that asks of child.c). */
struct sb_spawn {
	const struct sb_plan *plan;
	int cgroup_fd;            /* CLONE_INTO_CGROUP, or -1 */
	int status_r;             /* the status pipe's read end */
	int sync_w;               /* "go" */
	int (*maps)(void *ctx, pid_t pid, struct tg_error *err);
	void *ctx;
	int pidfd;                /* out */
	char error[480];          /* out: "" or why the child was killed */
};
pid_t sb_spawn_child(struct sb_spawn *s, struct tg_error *err);

/* child.c: runs in the cloned child; never returns. */
void child_main(const struct sb_plan *plan) __attribute__((noreturn));
/* Report a setup failure of `layer` (with errno err, or 0) and _exit. */
void child_fail(const struct sb_plan *plan, const char *layer, int err,
		const char *what) __attribute__((noreturn));

/* rootfs.c, child side; each returns 0 or -1 with errno set and *what
 * naming the step. rootfs_clone takes detached copies of every bind source
 * (while the caller's credentials can still reach them) into t;
 * rootfs_build mounts the tmpfs root, places them, masks /proc and pivots.
 * The placed trees stay open in t (sys, user, workdir: the roots of those
 * mounts) for landlock_apply's rules, which rootfs_close then closes.
 * OUT *layers gains TG_LAYER_ROOTFS and TG_LAYER_USERNS_LIMIT. */
#define SB_DEVICES 5
struct sb_trees {
	int sys[12];
	int user[SB_MAX_BINDS];
	int dev[SB_DEVICES];
	int layers[SB_MAX_BINDS][3]; /* an overlay's lower, upper, work (O_PATH) */
	int workdir;                 /* the work directory's tmpfs, or -1 */
	/* what a failure names when it is more than a constant: here, on
	 * the child's stack, not in memory it shares with the caller */
	char what[SB_PATH_MAX + 96];
};
int rootfs_clone(const struct sb_plan *plan, struct sb_trees *t, const char **what);
int rootfs_build(const struct sb_plan *plan, struct sb_trees *t,
		 unsigned *layers, const char **what);
void rootfs_close(struct sb_trees *t);
/* Plan side: fill sysbinds, links (runs in the parent). */
int rootfs_plan(struct sb_plan *plan, struct tg_error *err);

/* seccomp.c */
struct sock_fprog;
/* The compiled programs, embedded at build time (never NULL). MAIN_KILL replaces the notify actions
 * with SECCOMP_RET_KILL_PROCESS (for peers without a listener, e.g. bwrap
 * in the benchmark); IOCTL is the stacked terminal-injection filter. */
enum { SB_SECCOMP_MAIN = 0, SB_SECCOMP_MAIN_KILL = 1, SB_SECCOMP_IOCTL = 2 };
const struct sock_fprog *seccomp_program(int which, struct tg_error *err);
/* Child side: install the ioctl filter, then the main one with a listener;
 * returns the listener fd or -1. */
int seccomp_install(const struct sock_fprog *main_prog,
		    const struct sock_fprog *ioctl_prog);
/* Name of syscall nr for the native architecture, or "unknown". */
const char *seccomp_syscall_name(int nr, uint32_t arch, char *buf, size_t len);
/* seccomp_policy.c: compile program `which` with libseccomp (malloc'd;
 * used by tools/seccomp-gen and the tests). */
struct sock_fprog *seccomp_policy_compile(int which, struct tg_error *err);
/* Write program `which` as raw BPF to fd (for bwrap --add-seccomp-fd). */
int sandbox_seccomp_export(int fd, int which, struct tg_error *err);

/* landlock.c */
int landlock_abi(void);
/* Child side: restrict self per the plan. The rules of the binds, the
 * system directories and the work directory's tmpfs are given the roots
 * of those very mounts, t's fds (rootfs_build), never a path looked up
 * again: -1 for a bind is an error (EBADF). 0 or -1 (errno set, *what
 * set). OUT *layers gains the TG_LAYER_LANDLOCK_* bits applied. */
int landlock_apply(const struct sb_plan *plan, const struct sb_trees *t,
		   unsigned *layers, const char **what);

/* cgroup.c: a small backend interface over cgroup v1 and v2. */
struct sb_cgroup;
struct sb_cgroup_stats {
	uint64_t peak_memory;
	uint64_t oom_kills;
	uint64_t pids_max_events;
};
/* Create the run's cgroup with the spec's limits. */
int cgroup_create(const struct tg_sandbox_spec *spec, struct sb_cgroup **out,
		  struct tg_error *err);
/* OUT: a directory fd for clone3(CLONE_INTO_CGROUP) on v2, or on v1 the
 * "tasks" files the child writes "0" to; unused entries are -1. The caller
 * closes them. */
int cgroup_join_fds(struct sb_cgroup *cg, int *clone_fd, int *tasks_fds,
		    struct tg_error *err);
void cgroup_stats(struct sb_cgroup *cg, struct sb_cgroup_stats *st);
/* Once its sandbox is gone: 0 if cg may serve another run of the same
 * limits (nothing of this one left in it), else -1 (destroy it). */
int cgroup_recycle(struct sb_cgroup *cg);
/* Before a cgroup cgroup_recycle kept serves again: reset its peak, take
 * its counters as baselines; -1 if it cannot (destroy it). */
int cgroup_reuse(struct sb_cgroup *cg);
/* Kill what is left, remove the directories, free. NULL is a no-op. */
void cgroup_destroy(struct sb_cgroup *cg);
/* 2, 1 or 0; detail says which controllers and where. */
int cgroup_detect(char *detail, size_t len, int *memory, int *pids, int *cpu);

/* spec.c, for pool.c: a copy of spec without its per-run parts (stdin,
 * cancel fd, output function, egress proxy); NULL out of memory. Whether
 * spec can run in a sandbox made for template t (prestart: whose command
 * was started already, so the command and environment must match too). */
struct tg_sandbox_spec *spec_dup(const struct tg_sandbox_spec *s);
int spec_pool_match(const struct tg_sandbox_spec *t, const struct tg_sandbox_spec *s, int prestart);

/* run.c, for pool.c: a run prepared ahead of its call. run_prepare clones
 * the sandbox of spec; warm: it waits, every layer in place, for its
 * command (run_start sends it); prestart: its command starts at once.
 * run_wait_ready waits until the sandbox says its layers are in place (0)
 * or failed (-1, err says why). run_start supervises spec's call in it
 * (spec's argv and environment for a warm one) to its result; the run
 * is spent then, and run_discard frees it (killing what is left).
 * run_prepare takes cg (or NULL), a cgroup run_discard kept and
 * cgroup_reuse readied, for its own (freed with the run); run_discard with keep_cgroup returns
 * the run's cgroup when another run may use it (cgroup_recycle), else
 * NULL. */
struct run;
struct run *run_prepare(const struct tg_sandbox_spec *spec, int prestart, struct sb_cgroup *cg,
			struct tg_error *err);
int run_wait_ready(struct run *r, int timeout_ms, struct tg_error *err);
/* Whether a ready run can still take a call: PID 1 alive and silent, its
 * binds' sources the files they were when it was made. */
int run_usable(struct run *r);
int run_start(struct run *r, const struct tg_sandbox_spec *spec, struct tg_sandbox_result **out,
	      struct tg_error *err);
struct sb_cgroup *run_discard(struct run *r, int keep_cgroup);

/* probe.c: everything tg_sandbox_probe_host checks except trying the
 * namespaces (userns and namespaces read 1). */
void probe_host_light(struct tg_sandbox_probe *p);

#endif
