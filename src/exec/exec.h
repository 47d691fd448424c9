/*
 * Executors (src/exec/): run one validated, authorized call of a tool and
 * turn what it produced into an MCP tool result. The gate (src/gate/) is
 * their only caller.
 */
#ifndef TG_EXEC_H
#define TG_EXEC_H

#include <jansson.h>

#include "toolgate/contract.h"
#include "toolgate/error.h"

/* What a tool produced. */
struct exec_out {
	json_t *content;        /* array of MCP content blocks (owned) */
	json_t *structured;     /* object, or NULL (owned) */
	char *exact;            /* structured's text as the tool wrote it, when
				 * jansson rounds a number of it (its copy has
				 * the nearest double: util/json_wide.h); else
				 * NULL (owned) */
	int is_error;
	json_t *changes;        /* an overlay dry run's changed paths (owned), or NULL */
	int changes_truncated;  /* more changed than changes lists */
	const char *sandbox;    /* why the sandbox ended the run (a reason's
				 * name: seccomp_violation, memory_limit...),
				 * or NULL: the command ended by itself */
	int held;               /* the gate did not run it: held for its anomalies
				 * (a plan's step; never a tool's own say) */
};

struct tg_sandbox_spec;
struct tg_sandbox_result;
struct tg_egress_proxy;

/* Where overlay dry runs keep their layers (command.c), each run's in a
 * directory EXEC_OVERLAY_DIR/EXEC_OVERLAY_PREFIX...: no tool is given a
 * directory that holds EXEC_OVERLAY_DIR or lies in a run's layers. */
#define EXEC_OVERLAY_DIR "/tmp"
#define EXEC_OVERLAY_PREFIX "toolgate-overlay-"

/* The host directories a command tool may be given besides its
 * contract's mounts (dirs.c); made once for a gate, read-only after. */
struct exec_dirs {
	char *workspace;        /* --workspace as given: at /workspace to a tool
				 * whose contract asks (executor.workspace); or NULL */
	char *tools_dir;        /* the catalogue: relative mount sources resolve
				 * against it; or NULL */
	char *tools_copy;       /* a verified copy of it (serve --catalog-trust):
				 * a relative source that stays inside the
				 * catalogue is taken from the copy; or NULL */
	char *state;            /* --state as given: STATE/tools/FAMILY at /state to a
				 * write tool that asks (executor.state); or NULL */
	char *workspace_real, *state_real, *tools_real; /* their real paths, for the checks */
	char **own_real;        /* the gateway's own files (exec_dirs_options.own_files) */
	size_t nown;
};

/* The gateway's settings of those directories, borrowed for
 * exec_dirs_new: the gate fills them from its own options (what each
 * means is said there, toolgate/gate.h); each NULL when it has none. */
struct exec_dirs_options {
	const char *workspace;        /* --workspace, or NULL */
	const char *tools_dir;        /* the catalogue's directory, or NULL */
	const char *tools_copy;       /* its verified copy, or NULL */
	const char *state_dir;        /* --state, or NULL */
	const char *const *own_files; /* NULL-terminated, or NULL */
};

/* The directories of the gateway opts describes (opts may be NULL: it has
 * none). OUT *out (exec_dirs_free). A state directory or catalogue that does not
 * exist yet is judged by where it will be. -1 and err naming the option
 * when the workspace does not exist; when it and the state directory
 * overlap (one is, holds or lies in the other); when it holds
 * .toolgate/undo, the undo records of an earlier toolgate (err says how
 * to move them); when it overlaps the catalogue, holds the overlay
 * layers' directory or lies in a run's layers, or holds one of the
 * gateway's own files. */
int exec_dirs_new(const struct exec_dirs_options *opts, struct exec_dirs **out,
		  struct tg_error *err);
void exec_dirs_free(struct exec_dirs *d);

/* A catalogue's executors against the gateway's directories: every
 * builtin exists, and no command tool mounts a directory that is, holds
 * or lies in the state directory or the workspace, that holds
 * EXEC_OVERLAY_DIR (or lies in a run's layers), one of the gateway's own
 * files or .toolgate/undo, nor a writable one that overlaps the
 * catalogue. No upstream's credential file lies in the workspace,
 * the catalogue, a command tool's mount or another upstream's, is one of
 * the gateway's own files or lies in the state directory. A source that does not exist yet is judged by where it will
 * be when it is made (symlinks on the way followed). -1 and err naming
 * the contract's file and the mount. */
struct tg_catalog;
int exec_check_catalog(const struct tg_catalog *catalog, const struct exec_dirs *d,
		       struct tg_error *err);

/* The host path of a command tool's mount source host into out[len]: a
 * relative one is the catalogue's (tools_dir/host). 0, or -1 with errno
 * ENAMETOOLONG. */
int exec_mount_host(const struct exec_dirs *d, const char *host, char *out, size_t len);

/* A deployment problem (exec_preflight): where (a file and its field),
 * what is wrong, how to fix it. */
typedef void (*exec_problem_fn)(void *ctx, const char *where, const char *what,
				const char *fix);
/* What each command tool of catalogue needs of the host, as its sandbox
 * will see it (src/exec/preflight.c): argv[0] a program found in the
 * sandbox's view (along its PATH when bare), a path argument in one of
 * its mounts existing, each mount's source and the workspace existing
 * and readable by the sandbox's user, and writable by it where a write
 * tool writes when writes is non-zero (the gateway can run write tools),
 * and a workspace when a tool asks for one. Each problem goes to fn,
 * each directory said once. The number of problems. */
unsigned exec_preflight(const struct tg_catalog *catalog, const struct exec_dirs *d, int writes,
			exec_problem_fn fn, void *ctx);

/* Host directory host, about to be bound into a command tool's sandbox
 * (mount: a contract's mount, writable or not; else the workspace),
 * checked again by its real path now, as exec_check_catalog and
 * exec_dirs_new checked it when the catalogue loaded: what changed on the
 * host since is refused here. -1 and err naming host when it does not
 * exist or is refused. */
int exec_dirs_check_bind(const struct exec_dirs *d, const char *host, int mount, int writable,
			 struct tg_error *err);

/* File real (a real path), about to be read as a secret (an upstream's
 * credentials.env): -1 and err naming it when it is one of the gateway's
 * own files or lies in its state directory. */
int exec_dirs_check_secret(const struct exec_dirs *d, const char *real, struct tg_error *err);

/* The state directory of write tool k's family (its name up to the first
 * dot), STATE/tools/FAMILY, into path[len]: made when missing, mode 0700,
 * and given to uid:gid, the sandbox's host user, when the gateway is
 * root; STATE/tools likewise the gateway's, mode 0700, whoever made them
 * (a gateway that is not root refuses one another user owns). Nothing on
 * the way is followed if it is a symlink. -1 and err
 * when the gateway has no state directory or it cannot be made. */
int exec_state_dir(const struct exec_dirs *d, const struct tg_contract *k, unsigned uid,
		   unsigned gid, char *path, size_t len, struct tg_error *err);

struct exec_env {
	const struct exec_dirs *dirs; /* what a tool may be given besides its mounts */
	int cancel_fd;          /* -1: none */
	/* What the tool reports while it runs ({"progress": ...} or {"log":
	 * ...}, docs/PIPELINE.md), as JSON text; NULL: dropped. */
	void (*notify)(void *ctx, const char *event);
	void *notify_ctx;
	/* An interactive tool's request to the client ({"request": {method,
	 * params}}): the answer, {"result": ...} or {"error": {...}}, JSON text
	 * (malloc'd), written back on the tool's stdin. May block until the
	 * client answers; gives up when *stop becomes non-zero. NULL: every
	 * request gets an error. */
	char *(*ask)(void *ctx, const char *request, const volatile int *stop);
	/* A write tool's run (docs/PIPELINE.md, "Write calls"): dry_run
	 * non-zero shows what it would do, with every mount read-only so
	 * that it cannot do it (TOOLGATE_DRY_RUN=1); call_id, the approved
	 * call's id (TOOLGATE_CALL_ID), keys its before-image and makes a
	 * rerun after a crash a replay. NULL: none. */
	int dry_run;
	const char *call_id;
	/* A connection the tool's egress allowlist refused (docs/EGRESS.md):
	 * "host:port" as asked, and why. Called from the proxy's threads and
	 * the run's supervision thread: it must not wait. NULL: not told. */
	void (*egress_denied)(void *ctx, const char *destination, const char *why);
	void *egress_ctx;
	/* Runs the sandbox (the gate's warm pools); poolable when nothing of
	 * the spec is particular to this call. NULL: tg_sandbox_run. */
	int (*sandbox)(void *ctx, const struct tg_contract *k, const struct tg_sandbox_spec *spec,
		       int poolable, struct tg_sandbox_result **out, struct tg_error *err);
	void *sandbox_ctx;
	/* Who the call is for: the tool's egress draws on that principal's
	 * share of the gateway's egress (docs/EGRESS.md, "Limits"). NULL: "". */
	const char *principal;
};

void exec_out_release(struct exec_out *o);

/* What a run changed on an overlay (overlay.c): its upper layer (the
 * directory upper_fd) against lower, the host directory it covered, named
 * as the tool saw it under inside. Appends {path, change, kind, ...}
 * objects to changes, within *diff_left bytes of diff (decreased);
 * *truncated set past the limits (a directory that cannot be read is
 * listed as "unreadable"). The
 * caller runs it with the sandbox user's file rights. 0, or -1 out of
 * memory. */
int exec_overlay_changes(const char *lower, int upper_fd, const char *inside,
			 json_t *changes, size_t *diff_left, int *truncated);
/* The bytes of diff a run's changes may show, together. */
size_t exec_overlay_diff_budget(void);
/* Remove directory dir and everything in it, following no symlink;
 * 0 or -1. */
int exec_overlay_remove(const char *dir);
/* Remove the overlay layers a killed gateway left in /tmp (command.c). */
void exec_overlay_sweep(void);

/* A builtin tool by the contract's executor name, with args (read from
 * text, len bytes, which a number past a double's digits keeps exactly:
 * util/json_wide.h); dry_run: show, do not do (a builtin that changes
 * anything must honour it). -1 and err when no builtin has that name (a
 * configuration error, caught at gate start by exec_builtin_exists). */
int exec_builtin(const struct tg_contract *k, json_t *args, const char *text, size_t len,
		 int dry_run, struct exec_out *o, struct tg_error *err);
int exec_builtin_exists(const char *name);

/* A command tool in the sandbox: the arguments (JSON text) on stdin, the
 * result on stdout (docs/PIPELINE.md says what it may write). 0 with a
 * result, successful or not; -1 and err when the sandbox refused to start
 * (a layer the tier needs is missing). */
int exec_command(const struct tg_contract *k, const char *args, size_t len,
		 const struct exec_env *env, struct exec_out *o, struct tg_error *err);

/* Egress for one sandbox run through a proxy of rules (NULL-terminated,
 * at least one), started here and set on spec: refusals go to on_deny
 * (NULL: not told) with ctx, drawn on principal's share (NULL: "").
 * OUT *proxy (tg_egress_proxy_stop after the run). -1 and err naming
 * who (a tool or an upstream) and field. */
int exec_egress_start(char *const *rules, const char *who, const char *field,
		      void (*on_deny)(void *ctx, const char *destination, const char *why),
		      void *ctx, const char *principal, struct tg_sandbox_spec *spec,
		      struct tg_egress_proxy **proxy, struct tg_error *err);

/* A text content block. */
json_t *exec_text(const char *text);

#endif
