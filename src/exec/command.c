/*
 * Command tools: a program run in the sandbox per call (src/sandbox/).
 *
 * The protocol (docs/PIPELINE.md): the call's arguments, a JSON object, on
 * stdin; the tool's result, one JSON value, on stdout; exit status 0. A
 * tool that refuses or fails says so with a non-zero status and, if it
 * can, {"error": {"code": "...", "message": "..."}} on stdout, where the
 * code is one of its contract's typed errors. stderr is for the operator:
 * a short tail of it reaches the caller only when the tool failed without
 * a typed error.
 *
 * Everything the sandbox is given comes from the contract: the tier, the
 * limits, the mounts (read-only for a read tool: the loader refused
 * anything else), the environment, and the gateway's workspace and
 * state directory only when the contract asks for them (dirs.c). Nothing
 * of the gateway's environment or files passes otherwise: each mount and
 * the workspace are checked again, by their real paths, as the run is
 * built (exec_dirs_check_bind).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exec/exec.h"
#include "util/json_span.h"
#include "util/json_wide.h"
#include "util/log.h"
#include "toolgate/egress.h"
#include "toolgate/sandbox.h"

#define TOOL_OUTPUT_MAX (4u << 20) /* what a tool may print, stdout and stderr each */
#define STDERR_TAIL 400

#define OVERLAY_SIZE "256m"     /* what an overlay dry run may write, its mounts together */
#define OVERLAY_INODES "65536"  /* and how many files and directories */

/* An overlay dry run's layers: one upper and work directory per writable
 * mount, in a directory of the gateway's own, /tmp/toolgate-overlay-PID-X
 * (the overlay, made in the sandbox's mount namespace, needs them in the
 * gateway's tree): as root, a tmpfs of its own mounted there, bounded;
 * otherwise a private directory. Removed after the run; what a killed
 * gateway left, the next one removes (exec_overlay_sweep). */
struct overlays {
	int root;                      /* the layers' directory; -1 until made */
	char dir[64];                  /* its path */
	int mounted;                   /* a tmpfs is mounted at dir */
	size_t n;
	struct {
		char *host, *inside;   /* malloc'd */
		int unlisted;          /* its changes are not reported (/state) */
	} m[66];                       /* a contract's mounts (at most 64), the workspace, the state */
};

static int layers_dir(struct overlays *ov, struct tg_error *err)
{
	snprintf(ov->dir, sizeof(ov->dir), EXEC_OVERLAY_DIR "/" EXEC_OVERLAY_PREFIX "%d-XXXXXX",
		 (int)getpid());
	if (!mkdtemp(ov->dir)) {
		ov->dir[0] = 0;
		return tg_error_sys(err, errno, "overlay dry run: a directory for its layers");
	}
	/* what a dry run writes is bounded, or it does not run */
	if (geteuid() == 0) {
		if (mount("tmpfs", ov->dir, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  "size=" OVERLAY_SIZE ",nr_inodes=" OVERLAY_INODES ",mode=0711") < 0)
			return tg_error_sys(err, errno, "overlay dry run: a tmpfs for its layers");
		ov->mounted = 1;
	}
	ov->root = open(ov->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return ov->root < 0 ? tg_error_sys(err, errno, "overlay dry run: %s", ov->dir) : 0;
}

/* Mount host at inside writable on an overlay (layers in ov, made here). */
static int add_overlay(struct tg_sandbox_spec *spec, struct overlays *ov, const char *host,
		       const char *inside, struct tg_error *err)
{
	char name[24], upper[96], work[96];

	if (ov->n == sizeof(ov->m) / sizeof(ov->m[0]))
		return tg_error_set(err, TG_ERR_LIMIT, "overlay dry run: too many mounts");
	if (ov->root < 0 && layers_dir(ov, err) < 0)
		return -1;
	snprintf(name, sizeof(name), "%zu", ov->n);
	snprintf(upper, sizeof(upper), "%s/%zu/upper", ov->dir, ov->n);
	snprintf(work, sizeof(work), "%s/%zu/work", ov->dir, ov->n);
	if (mkdirat(ov->root, name, 0711) < 0 || mkdir(upper, 0755) < 0 || mkdir(work, 0700) < 0)
		return tg_error_sys(err, errno, "overlay dry run: its layers");
	if (tg_sandbox_spec_add_overlay(spec, host, inside, upper, work, err) < 0)
		return -1;
	ov->m[ov->n].host = strdup(host);
	ov->m[ov->n].inside = strdup(inside ? inside : host);
	if (!ov->m[ov->n].host || !ov->m[ov->n].inside) {
		free(ov->m[ov->n].host);
		free(ov->m[ov->n].inside);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	ov->n++;
	return 0;
}

/* The layers of dir go: a tmpfs unmounted (everything on it with it), a
 * directory emptied; then dir itself. */
static int layers_remove(const char *dir, int mounted)
{
	if (mounted && umount2(dir, MNT_DETACH | UMOUNT_NOFOLLOW) < 0)
		return -1;
	return exec_overlay_remove(dir);
}

static void overlays_free(struct overlays *ov)
{
	size_t i;

	if (!ov)
		return;
	if (ov->root >= 0)
		close(ov->root);
	if (ov->dir[0] && layers_remove(ov->dir, ov->mounted) < 0)
		tg_log(TG_LOG_ERROR, "overlay dry run: %s could not be removed: %s", ov->dir,
		       strerror(errno));
	for (i = 0; i < ov->n; i++) {
		free(ov->m[i].host);
		free(ov->m[i].inside);
	}
	free(ov);
}

void exec_overlay_sweep(void)
{
	DIR *d = opendir(EXEC_OVERLAY_DIR);
	struct dirent *e;
	char path[300];
	long pid;

	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, EXEC_OVERLAY_PREFIX, strlen(EXEC_OVERLAY_PREFIX)) != 0)
			continue;
		pid = strtol(e->d_name + strlen(EXEC_OVERLAY_PREFIX), NULL, 10);
		/* a live gateway's layers are its own */
		if (pid <= 0 || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		snprintf(path, sizeof(path), EXEC_OVERLAY_DIR "/%s", e->d_name);
		if (layers_remove(path, geteuid() == 0) < 0 && layers_remove(path, 0) < 0)
			tg_log(TG_LOG_ERROR, "%s, left by a gateway that is gone, could not be "
			       "removed: %s", path, strerror(errno));
	}
	if (d)
		closedir(d);
}

/* This thread's file access as the sandbox's host user (a root gateway's
 * sandbox runs as nobody): the walk below reads the host's files with
 * that user's rights, never root's, so that the report shows nothing the
 * tool could not read. Per thread (raw system calls: glibc would change
 * every thread's ids); undone by as_self. -1 when it cannot be done. */
struct creds {
	int changed;
	gid_t groups[64];
	int ngroups;
};

static int as_sandbox_user(const struct tg_sandbox_spec *spec, struct creds *c)
{
	unsigned uid, gid;

	c->changed = 0;
	if (geteuid() != 0)
		return 0; /* the sandbox runs as the caller: the same rights */
	tg_sandbox_spec_host_id(spec, &uid, &gid);
	c->ngroups = getgroups(64, c->groups);
	if (c->ngroups < 0 || syscall(SYS_setgroups, 0, NULL) < 0)
		return -1;
	c->changed = 1;
	syscall(SYS_setfsgid, gid);
	syscall(SYS_setfsuid, uid);
	/* setfsuid says nothing of failure: look */
	return (unsigned)syscall(SYS_setfsuid, -1) == uid &&
			       (unsigned)syscall(SYS_setfsgid, -1) == gid
		       ? 0
		       : -1;
}

static void as_self(struct creds *c)
{
	if (!c->changed)
		return;
	syscall(SYS_setfsuid, geteuid());
	syscall(SYS_setfsgid, getegid());
	if (syscall(SYS_setgroups, c->ngroups, c->groups) < 0) {
		/* this thread would go on with fewer groups than the process */
		tg_log(TG_LOG_ERROR, "overlay dry run: the thread's groups cannot be restored");
		abort();
	}
}

/* What the run changed, read off the upper layers as the sandbox's user,
 * into o. */
static int overlay_report(struct overlays *ov, const struct tg_sandbox_spec *spec,
			  struct exec_out *o)
{
	size_t i, budget = exec_overlay_diff_budget();
	struct creds c;
	char upper[32];
	int fd, rc = 0;

	o->changes = json_array();
	if (!o->changes)
		return -1;
	for (i = 0; rc == 0 && i < ov->n; i++) {
		if (ov->m[i].unlisted)
			continue;
		snprintf(upper, sizeof(upper), "%zu/upper", i);
		fd = openat(ov->root, upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || as_sandbox_user(spec, &c) < 0) {
			if (fd >= 0)
				close(fd);
			as_self(&c);
			return -1;
		}
		rc = exec_overlay_changes(ov->m[i].host, fd, ov->m[i].inside, o->changes, &budget,
					  &o->changes_truncated);
		as_self(&c);
		close(fd);
	}
	return rc;
}

/* Host directory host at inside: writable when the tool may write it,
 * but never in a dry run (read-only) and on an overlay in an overlay dry
 * run (its changes thrown away). */
static int add_dir(struct tg_sandbox_spec *spec, struct overlays *ov, const struct exec_env *env,
		   const char *host, const char *inside, int writable, struct tg_error *err)
{
	if (ov && writable)
		return add_overlay(spec, ov, host, inside, err);
	return tg_sandbox_spec_add_bind(spec, host, inside, writable && !env->dry_run, err);
}

/* What the gateway gives the tool besides its mounts, and only when its
 * contract asks (docs/contracts.md): the workspace at /workspace, its
 * family's state directory at /state. */
static int add_given(const struct tg_contract *k, const struct exec_env *env,
		     struct tg_sandbox_spec *spec, struct overlays *ov, struct tg_error *err)
{
	char state[4096];
	unsigned uid, gid;

	if (k->workspace != TG_WORKSPACE_NONE) {
		if (!env->dirs->workspace)
			return tg_error_set(err, TG_ERR_INVALID, "%s: executor.workspace: the gateway "
					    "has no workspace to give it (serve --workspace DIR)",
					    k->name);
		if (exec_dirs_check_bind(env->dirs, env->dirs->workspace, 0, 0, err) < 0 ||
		    add_dir(spec, ov, env, env->dirs->workspace, "/workspace",
			    k->workspace == TG_WORKSPACE_WRITE, err) < 0)
			return tg_error_wrap(err, "executor.workspace");
	}
	if (!k->state)
		return 0;
	tg_sandbox_spec_host_id(spec, &uid, &gid);
	if (exec_state_dir(env->dirs, k, uid, gid, state, sizeof(state), err) < 0 ||
	    add_dir(spec, ov, env, state, "/state", 1, err) < 0)
		return tg_error_wrap(err, "executor.state");
	/* what an overlay dry run writes there is the tool's own records,
	 * not a change a person approves: thrown away with the rest, not
	 * listed */
	if (ov)
		ov->m[ov->n - 1].unlisted = 1;
	return 0;
}

static int build_spec(const struct tg_contract *k, const struct exec_env *env,
		      struct tg_sandbox_spec *spec, struct overlays *ov, struct tg_error *err)
{
	char path[4096];
	size_t i;
	int argc = 0;

	while (k->argv[argc])
		argc++;
	if (tg_sandbox_spec_set_argv(spec, argc, k->argv, err) < 0 ||
	    tg_sandbox_spec_set_output_limit(spec, k->output ? k->output : TOOL_OUTPUT_MAX,
					     err) < 0 ||
	    (k->memory && tg_sandbox_spec_set_memory(spec, k->memory, err) < 0) ||
	    (k->millicpus && tg_sandbox_spec_set_cpus(spec, k->millicpus, err) < 0) ||
	    (k->pids && tg_sandbox_spec_set_pids(spec, k->pids, err) < 0) ||
	    (k->timeout_ms && tg_sandbox_spec_set_timeout(spec, k->timeout_ms, err) < 0))
		return -1;
	for (i = 0; i < k->nmounts; i++) {
		const char *host = path;

		/* relative sources are the catalogue's own files */
		if (exec_mount_host(env->dirs, k->mounts[i].host, path, sizeof(path)) < 0)
			return tg_error_set(err, TG_ERR_INVALID, "mount %s: path too long",
					    k->mounts[i].host);
		/* the catalogue's check, again by what is there now; a dry
		 * run cannot write, whatever the tool does; an overlay dry run
		 * writes on a layer that is thrown away */
		if (exec_dirs_check_bind(env->dirs, host, 1, k->mounts[i].writable, err) < 0 ||
		    add_dir(spec, ov, env, host, k->mounts[i].inside, k->mounts[i].writable,
			    err) < 0)
			return tg_error_wrap(err, "executor.mounts[%zu]", i);
	}
	if (add_given(k, env, spec, ov, err) < 0)
		return -1;
	for (i = 0; k->env && k->env[i]; i++)
		if (tg_sandbox_spec_add_env(spec, k->env[i], err) < 0)
			return -1;
	/* a tool dry-run on an overlay runs as it would for real */
	if (env->dry_run && !ov && tg_sandbox_spec_add_env(spec, "TOOLGATE_DRY_RUN=1", err) < 0)
		return -1;
	if (env->call_id) {
		char var[96];

		snprintf(var, sizeof(var), "TOOLGATE_CALL_ID=%.64s", env->call_id);
		if (tg_sandbox_spec_add_env(spec, var, err) < 0)
			return -1;
	}
	if (env->cancel_fd >= 0)
		tg_sandbox_spec_set_cancel_fd(spec, env->cancel_fd);
	return 0;
}

/* The arguments as the command's stdin: a memfd the sandbox relays. */
static int args_fd(const char *args, size_t len, struct tg_error *err)
{
	int fd = memfd_create("toolgate-arguments", MFD_CLOEXEC);
	size_t off = 0;

	if (fd < 0)
		return tg_error_sys(err, errno, "memfd_create");
	while (off < len) {
		ssize_t w = write(fd, args + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			close(fd);
			return tg_error_sys(err, errno, "writing the arguments");
		}
		off += (size_t)w;
	}
	if (lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		return tg_error_sys(err, errno, "lseek");
	}
	return fd;
}

static int error_result(struct exec_out *o, json_t *structured, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int error_result(struct exec_out *o, json_t *structured, const char *fmt, ...)
{
	char text[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	o->is_error = 1;
	o->structured = structured;
	o->content = json_pack("[o]", exec_text(text));
	return o->content ? 0 : -1;
}

/* The last bytes of stderr, printable, for a failure without a typed error. */
static void stderr_tail(const struct tg_sandbox_output *e, char *buf, size_t len)
{
	size_t start = e->len > STDERR_TAIL ? e->len - STDERR_TAIL : 0, i, o = 0;

	for (i = start; i < e->len && o + 1 < len; i++) {
		unsigned char c = (unsigned char)e->data[i];

		buf[o++] = (c >= 0x20 && c != 0x7f) || c == '\n' || c >= 0x80 ? (char)c : '?';
	}
	while (o && buf[o - 1] == '\n')
		o--;
	buf[o] = '\0';
}

/* A typed error the tool printed: {"error": {"code", "message"}}. */
static int typed_error(const struct tg_contract *k, const struct tg_sandbox_result *r,
		       struct exec_out *o)
{
	json_t *doc = r->out.len ? json_loadb(r->out.data, r->out.len, 0, NULL) : NULL;
	json_t *e = json_object_get(doc, "error");
	const char *code = json_string_value(json_object_get(e, "code"));
	const char *msg = json_string_value(json_object_get(e, "message"));
	size_t i;
	int rc;

	if (!code) {
		json_decref(doc);
		return 1;
	}
	for (i = 0; i < k->nerrors; i++)
		if (strcmp(k->errors[i].code, code) == 0)
			break;
	if (i == k->nerrors)
		rc = error_result(o, NULL, "%s: the tool failed with an error its contract does not "
				  "declare ('%.80s')", k->name, code);
	else
		rc = error_result(o, json_pack("{s:{s:s,s:s,s:b}}", "error", "code", code, "message",
					       msg ? msg : k->errors[i].meaning, "retryable",
					       k->errors[i].retryable),
				  "%s: %s", code, msg ? msg : k->errors[i].meaning);
	json_decref(doc);
	return rc;
}

/* An MCP result's structuredContent as the tool wrote it, for the output
 * schema's check (exec.h, exact), when jansson rounds a number of it:
 * found in the output by its name (no name twice: refused when read). */
static int exact_structured(const struct tg_sandbox_result *r, struct exec_out *o)
{
	size_t at, start, end, len;

	if (!o->structured)
		return 0;
	at = json_span_member(r->out.data, r->out.len, 0, "structuredContent");
	end = at ? json_span_value(r->out.data, r->out.len, at, &start) : 0;
	if (!end || !json_wide_has_long(r->out.data + start, end - start))
		return 0;
	o->exact = json_wide_text(r->out.data + start, end - start, &len);
	return o->exact ? 0 : -1;
}

/* "output": "mcp": stdout is an MCP tool result, {content, structuredContent?,
 * isError?}, each content block of a type MCP defines. Taken (v). */
static int mcp_result(const struct tg_contract *k, json_t *v, const struct tg_sandbox_result *r,
		      struct exec_out *o)
{
	static const char *const types[] = { "text", "image", "audio", "resource",
					     "resource_link", NULL };
	json_t *content = json_object_get(v, "content"), *sc = json_object_get(v, "structuredContent");
	json_t *iserr = json_object_get(v, "isError"), *b;
	const char *key;
	size_t i, t;

	json_object_foreach(v, key, b)
		if (strcmp(key, "content") && strcmp(key, "structuredContent") && strcmp(key, "isError"))
			goto bad;
	if (!json_is_array(content) || (sc && !json_is_object(sc)) || (iserr && !json_is_boolean(iserr)))
		goto bad;
	json_array_foreach(content, i, b) {
		const char *type = json_string_value(json_object_get(b, "type"));

		for (t = 0; type && types[t] && strcmp(types[t], type); t++)
			;
		if (!type || !types[t])
			goto bad;
	}
	o->content = json_incref(content);
	o->structured = json_incref(sc);
	o->is_error = json_is_true(iserr);
	json_decref(v);
	return exact_structured(r, o);
bad:
	json_decref(v);
	return error_result(o, NULL, "%s: the tool's output is not an MCP tool result ({content: "
			    "[blocks of type text, image, audio, resource or resource_link], "
			    "structuredContent?, isError?})", k->name);
}

static int interpret(const struct tg_contract *k, const struct tg_sandbox_result *r,
		     struct exec_out *o)
{
	char tail[STDERR_TAIL + 1];
	json_error_t jerr;
	json_t *v;

	if (r->reason != TG_REASON_OK || !r->exited || r->exit_code != 0) {
		int t = r->reason == TG_REASON_OK ? typed_error(k, r, o) : 1;

		if (t <= 0)
			return t;
		stderr_tail(&r->err, tail, sizeof(tail));
		if (r->reason != TG_REASON_OK)
			o->sandbox = tg_sandbox_reason_name(r->reason);
		if (r->reason != TG_REASON_OK)
			return error_result(o, NULL, "%s: the run ended: %s%s%s", k->name,
					    tg_sandbox_reason_name(r->reason),
					    r->message[0] ? ": " : "", r->message);
		if (r->exec_errno)
			return error_result(o, NULL, "%s: the command could not be run: %s", k->name,
					    strerror(r->exec_errno));
		return error_result(o, NULL, "%s: the tool failed (%s %d)%s%s", k->name,
				    r->exited ? "exit status" : "signal",
				    r->exited ? r->exit_code : r->signal, tail[0] ? ": " : "", tail);
	}
	v = json_wide_load(r->out.data, r->out.len, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
	if (!v)
		return error_result(o, NULL, "%s: the tool's output is not JSON: %s", k->name,
				    jerr.text);
	if (k->output_mcp)
		return mcp_result(k, v, r, o);
	{
		/* every digit of a number jansson would round: an object's
		 * text with its numbers as written (json_wide_text), which
		 * mirrors its structured copy and is redacted as that
		 * (gate/output.c) */
		size_t len;
		int exact = json_is_object(v) && json_wide_has_long(r->out.data, r->out.len);
		char *text = exact ? json_wide_text(r->out.data, r->out.len, &len)
				   : json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

		o->content = text ? json_pack("[o]", exec_text(text)) : NULL;
		if (exact)
			o->exact = text;
		else
			free(text);
	}
	if (json_is_object(v))
		o->structured = v;
	else
		json_decref(v);
	return o->content ? 0 : -1;
}

/* Reports from the tool while it runs: stderr lines "@toolgate {...}",
 * each a JSON object with "progress" or "log" (docs/PIPELINE.md). Lines
 * are put together across chunks; a report line longer than 4 KiB is
 * dropped. */
#define REPORT_PREFIX "@toolgate "
#define MAX_REPORT 4096

#define MAX_PENDING 16 /* requests of one tool waiting for the client */

/* An interactive tool's stdin: the arguments, then one answer line per
 * request, written by a helper thread so that neither the client's time
 * to answer nor a full pipe holds up the sandbox's supervision. */
struct asker {
	const struct exec_env *env;
	int wfd;                   /* the pipe's write end: the tool's stdin */
	const char *args;
	size_t len;
	pthread_mutex_t lock;
	pthread_cond_t more;
	char *queue[MAX_PENDING];
	size_t nq;
	volatile int stop;         /* the run ended */
	pthread_t t;
	int running;               /* t was started */
};

struct reports {
	const struct exec_env *env;
	struct asker *asker;       /* interactive tools only */
	char line[MAX_REPORT];
	size_t len;
	int overlong;
};

static int write_line(int fd, const char *text, size_t n)
{
	size_t off = 0;

	while (off <= n) {
		const char *p = off < n ? text + off : "\n";
		size_t left = off < n ? n - off : 1;
		ssize_t w = write(fd, p, left);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		off += (size_t)w;
	}
	return 0;
}

static void *asker_main(void *arg)
{
	struct asker *a = arg;
	sigset_t pipe;

	/* a tool that stopped reading is EPIPE here, never SIGPIPE */
	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, NULL);
	if (write_line(a->wfd, a->args, a->len) < 0)
		return NULL;
	for (;;) {
		char *req, *answer;

		pthread_mutex_lock(&a->lock);
		while (!a->nq && !a->stop)
			pthread_cond_wait(&a->more, &a->lock);
		if (a->stop && !a->nq) {
			pthread_mutex_unlock(&a->lock);
			return NULL;
		}
		req = a->queue[0];
		memmove(a->queue, a->queue + 1, --a->nq * sizeof(a->queue[0]));
		pthread_mutex_unlock(&a->lock);
		answer = a->env->ask && !a->stop ? a->env->ask(a->env->notify_ctx, req, &a->stop) : NULL;
		free(req);
		if (!answer)
			answer = strdup("{\"error\":{\"code\":-32601,\"message\":\"no client to "
					"ask\"}}");
		if (answer && !*answer) {
			free(answer); /* nothing to write: its answer comes on a rerun */
			continue;
		}
		/* JSON text from jansson: no raw newline inside */
		if (!answer || write_line(a->wfd, answer, strlen(answer)) < 0) {
			free(answer);
			return NULL;
		}
		free(answer);
	}
}

static void ask_later(struct asker *a, const char *request)
{
	char *copy = strdup(request);

	pthread_mutex_lock(&a->lock);
	if (copy && a->nq < MAX_PENDING) {
		a->queue[a->nq++] = copy;
		copy = NULL;
		pthread_cond_signal(&a->more);
	}
	pthread_mutex_unlock(&a->lock);
	free(copy); /* too many at once: the tool waits in vain, within its time limit */
}

/* {"request": {...}, "key"?: string, "more"?: boolean}: a question. */
static int is_request(json_t *j)
{
	json_t *k = json_object_get(j, "key"), *m = json_object_get(j, "more");

	return json_is_object(json_object_get(j, "request")) && (!k || json_is_string(k)) &&
	       (!m || json_is_boolean(m)) && json_object_size(j) == (size_t)(1 + !!k + !!m);
}

static void report_line(struct reports *r)
{
	size_t pl = strlen(REPORT_PREFIX);
	json_t *j;
	char *text;

	if (r->overlong || r->len <= pl || memcmp(r->line, REPORT_PREFIX, pl) != 0)
		return;
	j = json_loadb(r->line + pl, r->len - pl, JSON_REJECT_DUPLICATES, NULL);
	if (json_is_object(j) &&
	    ((json_object_size(j) == 1 &&
	      (json_object_get(j, "progress") || json_object_get(j, "log"))) ||
	     (r->asker && is_request(j)))) {
		text = json_dumps(j, JSON_COMPACT);
		if (text && json_object_get(j, "request"))
			ask_later(r->asker, text);
		else if (text && r->env->notify)
			r->env->notify(r->env->notify_ctx, text);
		free(text);
	}
	json_decref(j);
}

static void on_output(int stream, const char *buf, size_t len, void *ctx)
{
	struct reports *r = ctx;
	size_t i;

	if (stream != 2)
		return;
	for (i = 0; i < len; i++) {
		if (buf[i] == '\n') {
			report_line(r);
			r->len = 0;
			r->overlong = 0;
		} else if (r->len < sizeof(r->line)) {
			r->line[r->len++] = buf[i];
		} else {
			r->overlong = 1;
		}
	}
}

/* The tool's egress (and an upstream's, upstream_run.c): a proxy of its
 * allowlist for one run. */
int exec_egress_start(char *const *rules, const char *who, const char *field,
		      void (*on_deny)(void *ctx, const char *destination, const char *why),
		      void *ctx, const char *principal, struct tg_sandbox_spec *spec,
		      struct tg_egress_proxy **proxy, struct tg_error *err)
{
	struct tg_egress_proxy_options po;

	memset(&po, 0, sizeof(po));
	po.rules = (const char *const *)rules;
	while (rules[po.nrules])
		po.nrules++;
	po.on_deny = on_deny;
	po.ctx = ctx;
	po.principal = principal;
	if (tg_egress_proxy_start(&po, proxy, err) < 0)
		return tg_error_wrap(err, "%s: %s", who, field);
	return tg_sandbox_spec_set_egress(spec, *proxy, err);
}

int exec_command(const struct tg_contract *k, const char *args, size_t len,
		 const struct exec_env *env, struct exec_out *o, struct tg_error *err)
{
	struct tg_egress_proxy *proxy = NULL;
	struct reports *reports = NULL;
	struct asker *asker = NULL;
	int pfd[2] = { -1, -1 };
	struct tg_sandbox_spec *spec = NULL;
	struct tg_sandbox_result *r = NULL;
	struct overlays *ov = NULL;
	int fd = -1, rc = -1, e;

	memset(o, 0, sizeof(*o));
	if (tg_sandbox_spec_new(k->tier, &spec, err) < 0)
		return -1;
	if (env->dry_run && k->dry_run == TG_DRY_RUN_OVERLAY) {
		ov = calloc(1, sizeof(*ov));
		if (!ov) {
			tg_sandbox_spec_free(spec);
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		}
		ov->root = -1;
	}
	if (build_spec(k, env, spec, ov, err) < 0)
		goto out;
	/* an overlay dry run has no network: what it would send could not
	 * be taken back like its files */
	if (k->egress && k->egress[0] && !ov &&
	    exec_egress_start(k->egress, k->name, "executor.egress", env->egress_denied,
			      env->egress_ctx, env->principal, spec, &proxy, err) < 0)
		goto out;
	if (k->interactive && memchr(args, '\n', len)) {
		/* the arguments are the first line: one line */
		rc = error_result(o, NULL, "%s: arguments with a raw newline cannot go to an "
				  "interactive tool", k->name);
		goto out;
	}
	if (k->interactive) {
		/* stdin a pipe kept open: the arguments, then the answers */
		asker = calloc(1, sizeof(*asker));
		if (!asker) {
			tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			goto out;
		}
		if (pipe2(pfd, O_CLOEXEC) < 0) {
			tg_error_sys(err, errno, "%s: the pipe of its answers", k->name);
			goto out;
		}
		asker->env = env;
		asker->wfd = pfd[1];
		asker->args = args;
		asker->len = len;
		pthread_mutex_init(&asker->lock, NULL);
		pthread_cond_init(&asker->more, NULL);
		e = pthread_create(&asker->t, NULL, asker_main, asker);
		if (e != 0) {
			pthread_cond_destroy(&asker->more);
			pthread_mutex_destroy(&asker->lock);
			tg_error_sys(err, e, "%s: the thread that writes its answers", k->name);
			goto out_asker;
		}
		asker->running = 1;
		tg_sandbox_spec_set_stdin_fd(spec, pfd[0]);
	} else {
		fd = args_fd(args, len, err);
		if (fd < 0)
			goto out;
		tg_sandbox_spec_set_stdin_fd(spec, fd);
	}
	if (env->notify || asker) {
		reports = calloc(1, sizeof(*reports));
		if (!reports) {
			tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			goto out;
		}
		reports->env = env;
		reports->asker = asker;
		tg_sandbox_spec_set_output_fn(spec, on_output, reports);
	}
	if ((env->sandbox ? env->sandbox(env->sandbox_ctx, k, spec,
					 !ov && !proxy && !env->dry_run, &r, err)
			  : tg_sandbox_run(spec, &r, err)) < 0)
		goto out;
	rc = interpret(k, r, o);
	if (rc == 0 && ov && overlay_report(ov, spec, o) < 0)
		rc = tg_error_set(err, TG_ERR_SYSTEM, "overlay dry run: its changes cannot be read");
	else if (rc < 0)
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
out:
	if (asker && asker->running) {
		/* the run is over: the helper stops asking, and a write to a
		 * pipe nobody reads fails (its read end closes here) */
		pthread_mutex_lock(&asker->lock);
		asker->stop = 1;
		pthread_cond_signal(&asker->more);
		pthread_mutex_unlock(&asker->lock);
		close(pfd[0]);
		pfd[0] = -1;
		pthread_join(asker->t, NULL);
		while (asker->nq)
			free(asker->queue[--asker->nq]);
		pthread_cond_destroy(&asker->more);
		pthread_mutex_destroy(&asker->lock);
	}
out_asker:
	if (pfd[0] >= 0)
		close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	free(asker);
	if (fd >= 0)
		close(fd);
	free(reports);
	tg_sandbox_result_free(r);
	tg_sandbox_spec_free(spec);
	tg_egress_proxy_stop(proxy);
	overlays_free(ov);
	if (rc < 0)
		exec_out_release(o);
	return rc;
}
