/*
 * toolgate sandbox: run one command under every isolation layer a tier
 * requires, or refuse and say which layer is missing.
 *
 * Life of a run:
 *
 *     struct tg_sandbox_spec *s = tg_sandbox_spec_new(TG_TIER_STRICT);
 *     tg_sandbox_spec_set_argv(s, argc, argv, &err);
 *     struct tg_sandbox_result *r;
 *     if (tg_sandbox_run(s, &r, &err) < 0) ...   // spec refused, nothing ran
 *     ... r->reason, r->exit_code, r->out.data ...
 *     tg_sandbox_result_free(r);
 *     tg_sandbox_spec_free(s);
 *
 * The design is written in docs/SANDBOX.md; what is not protected is in
 * docs/SECURITY.md.
 */
#ifndef TOOLGATE_SANDBOX_H
#define TOOLGATE_SANDBOX_H

#include <stddef.h>
#include <stdint.h>

#include "toolgate/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tg_tier {
	TG_TIER_STRICT = 0,   /* generated or untrusted code */
	TG_TIER_STANDARD = 1, /* trusted tool scripts (egress through an allowlist) */
};

/* How a run ended. The first that applies wins, in this order:
 * setup_failed, seccomp_violation, memory_limit, pids_limit, timeout,
 * output_truncated, cancelled, ok. */
enum tg_sandbox_reason {
	TG_REASON_OK = 0,
	TG_REASON_TIMEOUT,
	TG_REASON_MEMORY_LIMIT,
	TG_REASON_PIDS_LIMIT,
	TG_REASON_SECCOMP_VIOLATION,
	TG_REASON_OUTPUT_TRUNCATED,
	TG_REASON_SETUP_FAILED,
	TG_REASON_CANCELLED,      /* the caller's cancel fd became readable */
};

/* Isolation layers, as bits of tg_sandbox_result.layers. */
enum tg_layer {
	TG_LAYER_USERNS       = 1u << 0,
	TG_LAYER_MOUNTNS      = 1u << 1,
	TG_LAYER_PIDNS        = 1u << 2,
	TG_LAYER_NETNS        = 1u << 3,
	TG_LAYER_IPCNS        = 1u << 4,
	TG_LAYER_UTSNS        = 1u << 5,
	TG_LAYER_CGROUPNS     = 1u << 6,
	TG_LAYER_ROOTFS       = 1u << 7,  /* tmpfs root, pivot_root, masked /proc */
	TG_LAYER_NO_NEW_PRIVS = 1u << 8,
	TG_LAYER_CAPS         = 1u << 9,  /* bounding, ambient, effective dropped */
	TG_LAYER_SECCOMP      = 1u << 10,
	TG_LAYER_LANDLOCK_FS  = 1u << 11,
	TG_LAYER_LANDLOCK_NET = 1u << 12, /* TCP bind/connect denied */
	TG_LAYER_LANDLOCK_SCOPE = 1u << 13, /* signals, abstract sockets */
	TG_LAYER_CGROUP       = 1u << 14, /* memory, pids and cpu limits */
	TG_LAYER_RLIMITS      = 1u << 15,
	TG_LAYER_USERNS_LIMIT = 1u << 16, /* nested user namespaces: max 0 */
	TG_LAYER_NEW_SESSION  = 1u << 17,
	TG_LAYER_CLEAN_ENV    = 1u << 18,
	TG_LAYER_FDS_CLOSED   = 1u << 19,
	TG_LAYER_TIMEOUT      = 1u << 20, /* wall-clock kill of the pid namespace */
	TG_LAYER_EGRESS_PROXY = 1u << 21, /* network through the allowlist proxy only */
};
#define TG_LAYER_COUNT 22

/* Limits that were reached, as bits of tg_sandbox_result.limits_hit. */
enum tg_limit {
	TG_LIMIT_TIMEOUT = 1u << 0,
	TG_LIMIT_MEMORY  = 1u << 1,
	TG_LIMIT_PIDS    = 1u << 2,
	TG_LIMIT_OUTPUT  = 1u << 3,
};

struct tg_sandbox_spec;

/* The unprivileged host uid and gid a root caller's sandbox runs as
 * (default 65534, nobody). A dedicated user no host daemon shares keeps
 * those daemons from signalling or tracing sandboxed commands. Refused for
 * 0 and for a non-root caller, who can only map itself. */
TG_API int tg_sandbox_spec_set_host_id(struct tg_sandbox_spec *spec, unsigned uid,
				       unsigned gid, struct tg_error *err);

/* Parent of the run's cgroups, relative to each hierarchy's root (default
 * /toolgate for root callers, the caller's own cgroup + /toolgate
 * otherwise). A non-root caller needs one delegated to it. */
TG_API int tg_sandbox_spec_set_cgroup_parent(struct tg_sandbox_spec *spec,
					     const char *path, struct tg_error *err);

/* Called with each chunk of output as it arrives (stream 1 or 2); only
 * bytes within the output limit are passed (a server run's: every byte,
 * tg_sandbox_spec_set_server). It runs inside the supervision
 * loop: while it blocks, neither the deadline nor a seccomp violation is
 * acted on, so it must not block for long (toolgate run bounds its writes
 * by the run's deadline). */
typedef void (*tg_sandbox_output_fn)(int stream, const char *buf, size_t len,
				     void *ctx);

/* A spec with the tier's defaults (strict: 1 CPU, 256 MiB, 64 pids, 10 s,
 * 1 MiB of output per stream, no network): OUT *out; -1 and err for a
 * tier that is neither, or out of memory. */
TG_API int tg_sandbox_spec_new(enum tg_tier tier, struct tg_sandbox_spec **out,
			       struct tg_error *err);
TG_API void tg_sandbox_spec_free(struct tg_sandbox_spec *spec);

/* The command: argv[0] is looked up in the sandbox's PATH. Copied. */
TG_API int tg_sandbox_spec_set_argv(struct tg_sandbox_spec *spec, int argc,
				    char *const argv[], struct tg_error *err);
TG_API int tg_sandbox_spec_set_memory(struct tg_sandbox_spec *spec,
				      uint64_t bytes, struct tg_error *err);
/* CPU share in milli-CPUs (1000 = one core). */
TG_API int tg_sandbox_spec_set_cpus(struct tg_sandbox_spec *spec,
				    unsigned millicpus, struct tg_error *err);
TG_API int tg_sandbox_spec_set_pids(struct tg_sandbox_spec *spec,
				    unsigned pids, struct tg_error *err);
TG_API int tg_sandbox_spec_set_timeout(struct tg_sandbox_spec *spec,
				       uint64_t ms, struct tg_error *err);
TG_API uint64_t tg_sandbox_spec_get_timeout(const struct tg_sandbox_spec *spec);
/* Cap on the captured bytes of each of stdout and stderr. A run whose
 * output passes the cap is ended with reason output_truncated. A server
 * run captures nothing, so has no cap. */
TG_API int tg_sandbox_spec_set_output_limit(struct tg_sandbox_spec *spec,
					    uint64_t bytes, struct tg_error *err);
/* Size of each tmpfs the sandbox may write (/tmp, the work directory). */
TG_API int tg_sandbox_spec_set_tmpfs_size(struct tg_sandbox_spec *spec,
					  uint64_t bytes, struct tg_error *err);
/* Bind HOST (must exist) at INSIDE (absolute, no "..", not /proc or /dev);
 * INSIDE NULL means the same path. Read-only unless writable. */
TG_API int tg_sandbox_spec_add_bind(struct tg_sandbox_spec *spec,
				    const char *host, const char *inside,
				    int writable, struct tg_error *err);
/* Bind directory HOST at INSIDE writable, but on an overlay: HOST is the
 * read-only lower layer, and every change lands in the upper directory
 * UPPER (with WORK for the overlay's own use): two empty directories of
 * one filesystem, the caller's own, reached without symlinks. The host's
 * directory never changes; what the run changed is read from UPPER
 * afterwards (an overlay dry run, docs/PIPELINE.md). The overlay is made
 * by the sandbox's user, and a root caller's run gives UPPER and WORK to
 * it (tg_sandbox_spec_host_id). */
TG_API int tg_sandbox_spec_add_overlay(struct tg_sandbox_spec *spec, const char *host,
				       const char *inside, const char *upper, const char *work,
				       struct tg_error *err);
/* The host ids a root caller's sandbox runs as (tg_sandbox_spec_set_host_id;
 * nobody unless set). */
TG_API void tg_sandbox_spec_host_id(const struct tg_sandbox_spec *spec, unsigned *uid,
				    unsigned *gid);
/* Whether the sandbox's user may write host, a writable bind's source
 * (a directory: write and enter it), as the host decides it: that user is
 * the caller itself (the kernel asked, with its groups), or, for a root
 * caller, spec's host ids (tg_sandbox_spec_set_host_id; spec NULL:
 * nobody, 65534) by the path's mode bits, no supplementary group (ACLs
 * are not read). 1 yes; 0 no, why saying so and what would let it ("/srv/x
 * is not writable by the sandbox's user (uid 65534: chown 65534:65534
 * /srv/x)", or that it is on a read-only filesystem); -1 when host cannot
 * be looked at (why: the path and its errno's text). A writable bind the
 * user cannot write still binds: each write in it fails with EACCES. */
TG_API int tg_sandbox_bind_writable(const struct tg_sandbox_spec *spec, const char *host,
				    char *why, size_t len);
/* The same for reading (a directory: read and enter it): 0 with why
 * saying "... is not readable by the sandbox's user (uid 65534: chmod
 * o+rx ...)". */
TG_API int tg_sandbox_bind_readable(const struct tg_sandbox_spec *spec, const char *host,
				    char *why, size_t len);
/* The same for running host, a program in a bind or the host's /usr:
 * "... is not executable by the sandbox's user (uid 65534: chmod o+x
 * ...)". */
TG_API int tg_sandbox_bind_executable(const struct tg_sandbox_spec *spec, const char *host,
				      char *why, size_t len);
/* Working directory inside; a tmpfs is mounted there unless a bind covers
 * it. The default is /work, a tmpfs. */
TG_API int tg_sandbox_spec_set_workdir(struct tg_sandbox_spec *spec,
				       const char *dir, struct tg_error *err);
/* Egress through proxy (toolgate/egress.h), for the standard tier: the
 * sandbox's network namespace stays empty but for loopback, where a
 * listener on 127.0.0.1:TG_SANDBOX_EGRESS_PORT, taken from the sandbox
 * before its command starts, is accepted on by the run's supervision and
 * every connection handed to the proxy (where the host refuses
 * pidfd_getfd, a forwarder in the sandbox passes them over a unix socket:
 * docs/SANDBOX.md, "Limits"); http_proxy, https_proxy and
 * all_proxy (both cases) name it unless the spec sets them, and landlock's
 * TCP rules (ABI 4) let the command connect to that port only. The proxy
 * is borrowed: it must outlive the run. Refused for the strict tier, whose
 * code has no network at all. docs/EGRESS.md */
#define TG_SANDBOX_EGRESS_PORT 3128
struct tg_egress_proxy;
TG_API int tg_sandbox_spec_set_egress(struct tg_sandbox_spec *spec,
				      struct tg_egress_proxy *proxy, struct tg_error *err);
/* "NAME=VALUE". Nothing of the caller's environment passes otherwise. */
TG_API int tg_sandbox_spec_add_env(struct tg_sandbox_spec *spec,
				   const char *assignment, struct tg_error *err);
/* Bytes read from fd are relayed to the command's stdin through a pipe
 * (the sandbox never holds the caller's fd, terminal or not). -1, the
 * default, gives an empty stdin. The fd is not closed. */
TG_API void tg_sandbox_spec_set_stdin_fd(struct tg_sandbox_spec *spec, int fd);
/* When fd becomes readable (or is hung up), the run is ended at once:
 * reason cancelled. For a signalfd, an eventfd, or one end of a pipe. -1,
 * the default, disables it. The fd is not read or closed. */
TG_API void tg_sandbox_spec_set_cancel_fd(struct tg_sandbox_spec *spec, int fd);
TG_API void tg_sandbox_spec_set_output_fn(struct tg_sandbox_spec *spec,
					  tg_sandbox_output_fn fn, void *ctx);
/* on: a server run, for a process that lives as long as its caller (an
 * MCP server speaking JSON-RPC on its stdin and stdout). It has no
 * wall-clock limit (the spec's timeout is ignored, and with it the
 * RLIMIT_CPU backstop; the cgroup's CPU quota still applies, and
 * TG_LAYER_TIMEOUT is not in its layers). stdout and stderr go to the
 * output function only, every byte, and are never kept: the result's out
 * and err stay empty and no output limit applies (without an output
 * function they are dropped). stdin is relayed from the stdin fd for the
 * whole run; end of file there (the caller closed its end) closes the
 * server's stdin. It ends when the server exits (reason ok, or
 * memory_limit, pids_limit, seccomp_violation as any run), or at once when
 * the cancel fd becomes readable: reason cancelled, signal SIGKILL; without
 * a cancel fd tg_sandbox_run returns only when the server exits. The
 * output function must not block (nothing else is served meanwhile, and
 * no deadline bounds it). Off by default. docs/SANDBOX.md, "Server runs". */
TG_API void tg_sandbox_spec_set_server(struct tg_sandbox_spec *spec, int on);

struct tg_sandbox_output {
	char *data;        /* NUL-terminated for convenience; len is exact */
	size_t len;
	int truncated;
};

struct tg_sandbox_result {
	enum tg_sandbox_reason reason;
	int exited;            /* 1: exit_code is valid */
	int exit_code;
	int signal;            /* terminating signal, 0 if none */
	int exec_errno;        /* the command could not be executed: errno */
	uint64_t wall_us;
	uint64_t cpu_user_us;
	uint64_t cpu_system_us;
	uint64_t peak_memory;  /* bytes, from the cgroup; 0 if unknown */
	unsigned layers;       /* TG_LAYER_* applied to this run */
	unsigned limits_hit;   /* TG_LIMIT_* */
	int seccomp_syscall;   /* syscall number that ended the run, or -1 */
	char seccomp_syscall_name[48];
	char message[512];     /* human-readable detail for setup_failed etc. */
	struct tg_sandbox_output out;
	struct tg_sandbox_output err;
};

/*
 * Run the spec. Returns 0 and a result (owned by the caller) whenever the
 * sandbox was attempted, including setup failures inside it (reason
 * setup_failed, message names the layer). Returns -1 and fills err, with no
 * result and nothing left behind, when the spec is refused before anything
 * starts: invalid spec, or a layer the tier requires is unavailable
 * (TG_ERR_UNAVAILABLE, message names the layer).
 *
 * Thread-safe: runs may proceed from several threads at once. The sandbox
 * gets no SIGCHLD-style exit signal, so the embedder's own waitpid(-1)
 * cannot reap it. The sandbox's first process starts in the caller's
 * memory, as a vfork child does, while the calling thread waits, and
 * execs toolgate-init once its layers are in place (docs/SANDBOX.md); it
 * closes every fd it does not need at once, but fds the embedder opens
 * without O_CLOEXEC in other threads may be inherited by commands those
 * threads exec. While such a child of a root caller shares its memory,
 * the process is not dumpable.
 */
TG_API int tg_sandbox_run(const struct tg_sandbox_spec *spec,
			  struct tg_sandbox_result **out, struct tg_error *err);
TG_API void tg_sandbox_result_free(struct tg_sandbox_result *result);

/*
 * The warm pool: sandboxes made ahead of their calls (docs/SANDBOX.md).
 *
 * A pool keeps size (1 to 64) sandboxes of template ready, every layer in
 * place, each waiting for its command; prestart: with the template's own
 * command already started, waiting for its stdin (an interpreter that has
 * done its imports). tg_sandbox_pool_run runs spec in a ready one when
 * spec matches the template: the same tier, limits, timeout, server or not
 * (tg_sandbox_spec_set_server), tmpfs size,
 * binds (no overlay), work directory, host ids, cgroup parent and egress
 * or none; for a prestart pool also the same command and environment.
 * Otherwise, or when none is ready, it runs spec cold (tg_sandbox_run).
 * Its result is the one a cold run gives. A sandbox serves one call and is
 * destroyed; the pool's thread refills it in the background. Sandboxes
 * with egress always run cold.
 */
struct tg_sandbox_pool;

struct tg_sandbox_pool_stats {
	unsigned size;           /* sandboxes kept ready */
	unsigned ready;          /* ready now */
	unsigned refilling;      /* being made now */
	unsigned spent;          /* used, waiting to be destroyed */
	unsigned long long made, failed; /* sandboxes made ready, and that failed */
	unsigned long long warm_runs, cold_runs; /* calls that found one, and not */
	char last_error[256];    /* why the last one failed */
	unsigned long long cgroups_reused; /* made with a spent one's cgroup */
};

TG_API int tg_sandbox_pool_new(const struct tg_sandbox_spec *template_spec, unsigned size,
			       int prestart, struct tg_sandbox_pool **out, struct tg_error *err);
/* Destroy the ready sandboxes. No tg_sandbox_pool_run may be running. */
TG_API void tg_sandbox_pool_free(struct tg_sandbox_pool *pool);
/* Whether spec would run in one of pool's sandboxes (were one ready). */
TG_API int tg_sandbox_pool_matches(const struct tg_sandbox_pool *pool,
				   const struct tg_sandbox_spec *spec);
/* pool NULL: tg_sandbox_run. */
TG_API int tg_sandbox_pool_run(struct tg_sandbox_pool *pool, const struct tg_sandbox_spec *spec,
			       struct tg_sandbox_result **out, struct tg_error *err);
TG_API void tg_sandbox_pool_get_stats(struct tg_sandbox_pool *pool,
				      struct tg_sandbox_pool_stats *stats);

/* The result as one JSON object, NUL-terminated, malloc'd. Output that is
 * not valid UTF-8 is base64-encoded and marked so. */
TG_API char *tg_sandbox_result_json(const struct tg_sandbox_result *result,
				    struct tg_error *err);

TG_API const char *tg_sandbox_reason_name(enum tg_sandbox_reason reason);
/* Name of one TG_LAYER_* bit, or NULL. */
TG_API const char *tg_sandbox_layer_name(unsigned layer);
TG_API const char *tg_tier_name(enum tg_tier tier);
/* "strict" or "standard"; -1 if unknown. */
TG_API int tg_tier_parse(const char *name);

/* What this host offers, as `toolgate doctor` reports it. */
struct tg_sandbox_probe {
	int userns;           /* clone(CLONE_NEWUSER) works for this caller */
	int namespaces;       /* mount, pid, net, ipc, uts, cgroup with it */
	int seccomp;          /* filters with user notification and kill */
	int landlock_abi;     /* 0 if unavailable */
	int cgroup_version;   /* 2, 1, or 0 if no usable controllers */
	int cgroup_memory, cgroup_pids, cgroup_cpu; /* controllers present */
	int cgroup_writable;  /* this caller can create a run's cgroup */
	int overlayfs;
	int mount_api;        /* open_tree / move_mount / mount_setattr */
	int clone3_pidfd;
	char cgroup_detail[256];
};

/* The PATH a sandbox's command has unless its environment sets one. */
#define TG_SANDBOX_PATH "/usr/local/bin:/usr/bin:/bin"
/* 1 if path, inside a sandbox, is the host's same path, bound read-only
 * into every sandbox's root (docs/SANDBOX.md, "Root filesystem"): /usr,
 * the root directories and links into it (/bin, /lib...), and three files
 * of /etc. The rest of its root is what its spec binds, and tmpfs. */
TG_API int tg_sandbox_shows_host(const char *path);

/* A caller that is not root, in a cgroup v2 that was delegated to it
 * (systemd's Delegate=yes; docs/SYSTEMD.md, "Delegated cgroups"): the
 * kernel lets a cgroup with processes in it hand no controller to its
 * children ("no internal processes"), so the caller moves itself into a
 * leaf of its own, OWN/gateway, and its runs' cgroups go beside it,
 * under OWN/toolgate (a spec's cgroup parent still wins). Nothing to do
 * for root, on cgroup v1, where OWN hands the controllers down already,
 * or where OWN is not a cgroup given to the caller: one it may write,
 * with memory, pids and cpu, and no process but the caller in it (a
 * login shell's scope holds the shell; the run then says why). To
 * call before the runs, once: 1 moved (moved[len], may be NULL: the
 * leaf's path), 0 nothing done, -1 and err when the move failed. */
TG_API int tg_sandbox_cgroup_leaf(char *moved, size_t len, struct tg_error *err);

/* Probe the kernel. Never fails; missing features read 0. */
TG_API void tg_sandbox_probe_host(struct tg_sandbox_probe *probe);

/* 0 when the tier's guarantees hold on this host; otherwise -1 and err
 * names the first missing layer. */
TG_API int tg_sandbox_tier_check(enum tg_tier tier,
				 const struct tg_sandbox_probe *probe,
				 struct tg_error *err);

#ifdef __cplusplus
}
#endif
#endif
