/*
 * tg_sandbox_run: the parent's side of a run.
 *
 * plan (may allocate) -> pipes -> cgroup -> clone3 into new user, mount,
 * pid, net, ipc and uts namespaces (CLONE_PIDFD) -> write the child's id
 * maps, let it go (it joins its cgroup itself, see cgroup_join_fds) ->
 * supervise -> reap -> collect.
 *
 * Supervision is one poll loop over the child's pidfd, its stdout and
 * stderr, the status pipe (which brings the hand-over: see below), the
 * seccomp listener, the sandbox's egress listener, and the caller's stdin. It ends the run (one
 * SIGKILL to the sandbox's PID 1 takes the whole pid namespace) at the
 * deadline, at a seccomp notification, when output passes its cap, or when
 * the caller cancels. A server run has no deadline and no cap: its output
 * is streamed, never kept.
 * No signal handler is installed: the library leaves the embedder's signal
 * dispositions alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "toolgate/egress.h"
#include "sandbox/cgroup_int.h"
#include "sandbox/sandbox_int.h"
#include "util/file.h"
#include "util/log.h"

#define CHUNK 65536
#define NO_DEADLINE UINT64_MAX /* a server run's (tg_sandbox_spec_set_server) */

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static void close_fd(int *fd)
{
	if (*fd >= 0) {
		close(*fd);
		*fd = -1;
	}
}

/* ---- host checks, once per process ----------------------------------- */

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static struct tg_sandbox_probe host;

static void probe_host_once(void)
{
	/* No trial namespaces here (that costs a fork and a network namespace):
	 * if the kernel refuses them, clone3 and the child name the layer. */
	probe_host_light(&host);
}

/* ---- the plan ------------------------------------------------------- */

struct run {
	const struct tg_sandbox_spec *spec;
	struct sb_plan plan;
	char *envp[SB_MAX_ENV + 16];
	char *env_owned[8];
	int nowned;
	struct sb_cgroup *cg;
	int sync_w, status_r, handover, stdin_w, stdout_r, stderr_r;
	int egress_l;             /* the sandbox's egress listener, taken, or -1 */
	uint64_t egress_pause;    /* no accept before (out of descriptors) */
	int handed_over;          /* SB_MSG_HANDOVER answered */
	int egress_r;             /* or its connections from the forwarder */
	int job_w;                /* a warm sandbox's job goes here, or -1 */
	int pidfd, listener, cg_clone_fd;
	pid_t pid;
	int reaped;
	uint64_t start, deadline;
	/* stdin relay */
	char inbuf[CHUNK];
	size_t inlen, inoff;
	int caller_in_eof;
	/* outcome */
	int killed_timeout, killed_output, killed_seccomp, killed_cancel;
	int got_exit, exit_status, exec_errno;
	uint64_t cmd_utime_us, cmd_stime_us; /* the command's, from the exit message */
	int warm;                 /* started by run_start: no need to wait for the reap */
	struct {
		dev_t dev;
		ino_t ino;
	} bind_ids[SB_MAX_BINDS]; /* a prepared run's bind sources, when made */
	size_t nbind_ids;
	char setup_error[480];
	unsigned layers;
};

static int env_has(const struct tg_sandbox_spec *s, const char *name)
{
	size_t n = strlen(name);
	int i;

	for (i = 0; i < s->nenv; i++)
		if (strncmp(s->env[i], name, n) == 0 && s->env[i][n] == '=')
			return 1;
	return 0;
}

#define PROXY_AT "127.0.0.1:" TG_STR(TG_SANDBOX_EGRESS_PORT)
#define TG_STR(x) TG_STR_(x)
#define TG_STR_(x) #x

/* What names the egress proxy to the clients of every language (Node
 * reads them when NODE_USE_ENV_PROXY is set). */
static const char *const proxy_env[] = {
	"http_proxy=http://" PROXY_AT,  "HTTP_PROXY=http://" PROXY_AT,
	"https_proxy=http://" PROXY_AT, "HTTPS_PROXY=http://" PROXY_AT,
	"all_proxy=socks5h://" PROXY_AT, "ALL_PROXY=socks5h://" PROXY_AT,
	"NODE_USE_ENV_PROXY=1",
};

static int plan_env(struct run *r, struct tg_error *err)
{
	const struct tg_sandbox_spec *s = r->spec;
	char *defaults[4];
	int n = 0, i;

	defaults[0] = strdup("PATH=" TG_SANDBOX_PATH);
	if (asprintf(&defaults[1], "HOME=%s", s->workdir) < 0)
		defaults[1] = NULL;
	defaults[2] = strdup("LANG=C.UTF-8");
	defaults[3] = strdup("TMPDIR=/tmp");
	for (i = 0; i < 4; i++)
		r->env_owned[r->nowned++] = defaults[i]; /* freed with the run */
	for (i = 0; i < 4; i++)
		if (!defaults[i])
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	for (i = 0; i < 4; i++) {
		char *eq = strchr(defaults[i], '=');

		*eq = '\0';
		if (!env_has(s, defaults[i]))
			r->envp[n++] = defaults[i];
		*eq = '=';
	}
	for (i = 0; s->egress && i < (int)(sizeof(proxy_env) / sizeof(proxy_env[0])); i++) {
		char name[32];

		snprintf(name, sizeof(name), "%.*s", (int)strcspn(proxy_env[i], "="), proxy_env[i]);
		if (!env_has(s, name))
			r->envp[n++] = (char *)proxy_env[i];
	}
	for (i = 0; i < s->nenv; i++)
		r->envp[n++] = s->env[i];
	r->envp[n] = NULL;
	return 0;
}

static int plan_run(struct run *r, int warm, struct tg_error *err)
{
	const struct tg_sandbox_spec *s = r->spec;
	struct sb_plan *p = &r->plan;
	int i;

	p->spec = s;
	p->caller_is_root = geteuid() == 0;
	p->hostname = "sandbox";
	p->workdir = s->workdir;
	snprintf(p->tmpfs_opts, sizeof(p->tmpfs_opts), "size=%llu,mode=1777",
		 (unsigned long long)s->tmpfs_size);
	snprintf(p->workdir_opts, sizeof(p->workdir_opts), "size=%llu,mode=0755",
		 (unsigned long long)s->tmpfs_size);
	p->landlock_abi = (unsigned)host.landlock_abi;
	p->nrlimits = 0;
	p->rlimits[p->nrlimits++] = (struct rlimit_plan){ RLIMIT_CORE, 0 };
	/* the command's only: PID 1 keeps its own high (child.c) */
	p->cmd_nofile = 256;
	p->rlimits[p->nrlimits++] = (struct rlimit_plan){ RLIMIT_FSIZE, s->tmpfs_size };
	p->rlimits[p->nrlimits++] = (struct rlimit_plan){ RLIMIT_MEMLOCK, 64 << 10 };
	/* Queued signals and POSIX message queues are counted per user up to
	 * the host (for a root caller, root's): keep the sandbox's share small. */
	p->rlimits[p->nrlimits++] = (struct rlimit_plan){ RLIMIT_SIGPENDING, 256 };
	p->rlimits[p->nrlimits++] = (struct rlimit_plan){ RLIMIT_MSGQUEUE, 0 };
	/* CPU seconds per process: a backstop under the wall-clock kill. A
	 * server has none (it would end a server that lives for days); the
	 * cgroup's CPU quota still caps its rate. */
	if (!s->server)
		p->rlimits[p->nrlimits++] =
			(struct rlimit_plan){ RLIMIT_CPU, s->timeout_ms / 1000 + 2 };
	p->seccomp = seccomp_program(SB_SECCOMP_MAIN, err);
	p->seccomp_ioctl = seccomp_program(SB_SECCOMP_IOCTL, err);
	if (!p->seccomp || !p->seccomp_ioctl)
		return tg_error_wrap(err, "seccomp");
	if (rootfs_plan(p, err) < 0)
		return -1;
	/* an overlay works on its upper layer as the sandbox's user (rootfs.c),
	 * which a root caller maps to an unprivileged host user: theirs */
	for (i = 0; p->caller_is_root && i < s->nbinds; i++)
		if (s->binds[i].upper &&
		    (fchownat(AT_FDCWD, s->binds[i].upper, s->host_uid, s->host_gid,
			      AT_SYMLINK_NOFOLLOW) < 0 ||
		     fchownat(AT_FDCWD, s->binds[i].work, s->host_uid, s->host_gid,
			      AT_SYMLINK_NOFOLLOW) < 0))
			return tg_error_sys(err, errno, "--overlay: the layers of %s",
					    s->binds[i].host);
	if (plan_env(r, err) < 0)
		return -1;
	p->envp = r->envp;
	/* toolgate-init's arguments (init_proto.h); [1] is the child's. A
	 * warm sandbox's command comes with its job: its template's argv is
	 * not shown in its /proc/1/cmdline */
	if ((p->init_fd = sb_init_fd(err)) < 0)
		return -1;
	p->init_argv = calloc((size_t)s->argc + 4, sizeof(char *));
	if (!p->init_argv)
		return tg_error_sys(err, ENOMEM, "planning the run");
	p->init_argv[0] = SB_INIT_NAME;
	p->init_argv[2] = s->workdir;
	for (i = 0; !warm && i < s->argc; i++)
		p->init_argv[3 + i] = s->argv[i];
	return 0;
}

/* ---- user namespace maps, written by the parent ---------------------- */

static int write_proc(pid_t pid, const char *file, const char *data, struct tg_error *err)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (file_write_small(path, file, data) < 0)
		return tg_error_sys(err, errno, "user namespace: write %s", file);
	return 0;
}

/* sb_spawn's maps: the child's, as pid (clone.c may call it from a
 * thread of its own, while the child runs in our memory: it reads r). */
static int write_maps(void *ctx, pid_t pid, struct tg_error *err)
{
	const struct run *r = ctx;
	char map[64];
	unsigned outer_uid = (unsigned)geteuid(), outer_gid = (unsigned)getegid();

	/* A root caller is mapped to an unprivileged host user; anyone else
	 * can only map themselves. setgroups stays "allow" for root so the
	 * child can drop root's supplementary groups; for others it must be
	 * "deny" (CVE-2014-8989: dropping groups could grant access). */
	if (r->plan.caller_is_root) {
		outer_uid = r->spec->host_uid;
		outer_gid = r->spec->host_gid;
	} else if (write_proc(pid, "setgroups", "deny", err) < 0) {
		return -1;
	}
	snprintf(map, sizeof(map), "%d %u 1\n", SB_INSIDE_UID, outer_uid);
	if (write_proc(pid, "uid_map", map, err) < 0)
		return -1;
	snprintf(map, sizeof(map), "%d %u 1\n", SB_INSIDE_GID, outer_gid);
	return write_proc(pid, "gid_map", map, err);
}

/* ---- supervision ---------------------------------------------------- */

static void kill_sandbox(struct run *r)
{
	if (r->pidfd >= 0)
		syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
}

/* The fd of one message on sock: the first if it carries several (the
 * others closed), -1 if none, and *eof when the other end is gone. */
static int recv_fd(int sock, int *eof)
{
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} cbuf;
	char byte;
	struct iovec iov = { &byte, 1 };
	struct msghdr msg;
	struct cmsghdr *c;
	ssize_t n;
	int fd = -1;

	memset(&msg, 0, sizeof(msg));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf.buf;
	msg.msg_controllen = sizeof(cbuf.buf);
	n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	*eof = n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR);
	if (n <= 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		size_t k, count;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS ||
		    c->cmsg_len < CMSG_LEN(0))
			continue;
		count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < count; k++) {
			int got;

			memcpy(&got, CMSG_DATA(c) + k * sizeof(int), sizeof(int));
			if (fd < 0)
				fd = got;
			else
				close(got);
		}
	}
	return fd;
}

static void on_notify(struct run *r, struct tg_sandbox_result *res)
{
	struct seccomp_notif req;

	memset(&req, 0, sizeof(req));
	if (ioctl(r->listener, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0) {
		/* Only deadly calls notify. A signal can withdraw the
		 * notification before we read it (the call then fails with
		 * EINTR, never having run): the run ends all the same. */
		if (errno == EINTR)
			return;
		if (!r->killed_seccomp) {
			r->killed_seccomp = 1;
			snprintf(res->seccomp_syscall_name, sizeof(res->seccomp_syscall_name),
				 "unknown (withdrawn)");
		}
		kill_sandbox(r);
		return;
	}
	/* The call never runs: the thread is parked until the kill lands.
	 * The kill first, then the name: the first name a process gives
	 * loads libseccomp (seccomp.c), and the sandbox's other processes
	 * need not run on meanwhile. */
	kill_sandbox(r);
	if (!r->killed_seccomp) {
		r->killed_seccomp = 1;
		res->seccomp_syscall = req.data.nr;
		seccomp_syscall_name(req.data.nr, req.data.arch, res->seccomp_syscall_name,
				     sizeof(res->seccomp_syscall_name));
	}
}

static void trace_parent(const struct run *r, const char *what)
{
	if (r->plan.trace)
		tg_log(TG_LOG_TRACE, "%8.3f ms  parent: %s", (double)(now_us() - r->start) / 1000.0,
		       what);
}

/*
 * The hand-over: PID 1, toolgate-init by now (init.c), names the seccomp
 * listener and the egress listener in its descriptor table and waits; we
 * take both with pidfd_getfd and answer 'T'. It is not dumpable, and
 * needs not be: its memory is its own exec's, whose user namespace is the
 * sandbox's (run_init.c says why its image is readable), and the caller
 * owns that namespace, which is what pidfd_getfd's ptrace check asks. No
 * descriptor travels through a socket, so no count of descriptors in
 * flight can refuse them (child.c), and we accept the egress connections
 * ourselves. Where the host forbids it (Yama's ptrace_scope 3, an LSM's
 * ptrace rule) we answer 'S': PID 1 sends the listener on r->handover and
 * a forwarder in the sandbox passes each connection on r->egress_r.
 */
static void take_handover(struct run *r, const struct sb_msg *m)
{
	int l = -1, e = -1, why = 0;
	char answer = 'S';

	if (r->handover < 0 || r->handed_over)
		return; /* once, from PID 1 before the command (nothing else
			 * holds the status pipe's write end) */
	r->handed_over = 1;
	if (m->listener >= 0)
		l = (int)syscall(SYS_pidfd_getfd, r->pidfd, m->listener, 0);
	if (l >= 0 && m->egress >= 0)
		e = (int)syscall(SYS_pidfd_getfd, r->pidfd, m->egress, 0);
	if (l >= 0 && (m->egress < 0 || e >= 0)) {
		answer = 'T';
		r->listener = l; /* both close-on-exec */
		r->egress_l = e;
		if (e >= 0)
			fcntl(e, F_SETFL, O_NONBLOCK);
	} else {
		why = m->listener < 0 ? EBADF : errno;
		if (l >= 0)
			close(l);
	}
	/* PID 1 may be gone meanwhile: its result says why */
	if (send(r->handover, &answer, 1, MSG_NOSIGNAL | MSG_DONTWAIT) != 1)
		why = 0;
	if (answer == 'T') {
		close_fd(&r->handover);
		close_fd(&r->egress_r); /* no forwarder will write there */
	}
	if (r->plan.trace) {
		char what[160];

		snprintf(what, sizeof(what), "hand-over %s%s%s",
			 answer == 'T' ? "taken (pidfd_getfd)" : "over the socket",
			 why ? ": pidfd_getfd: " : "", why ? strerror(why) : "");
		trace_parent(r, what);
	}
}

static void on_status(struct run *r)
{
	struct sb_msg m;
	ssize_t n = read(r->status_r, &m, sizeof(m));

	if (n == 0) {
		close_fd(&r->status_r);
		return;
	}
	if (n != (ssize_t)sizeof(m))
		return;
	m.text[sizeof(m.text) - 1] = '\0';
	switch (m.kind) {
	case SB_MSG_SETUP_ERROR:
		snprintf(r->setup_error, sizeof(r->setup_error), "%s", m.text);
		break;
	case SB_MSG_EXEC_ERROR:
		r->exec_errno = m.err ? m.err : ENOEXEC;
		snprintf(r->setup_error, sizeof(r->setup_error), "exec %s", m.text);
		break;
	case SB_MSG_EXIT:
		if (r->plan.trace)
			tg_log(TG_LOG_TRACE, "%8.3f ms  parent: exit status",
			       (now_us() - r->start) / 1000.0);
		r->got_exit = 1;
		r->exit_status = m.status;
		r->cmd_utime_us = m.utime_us;
		r->cmd_stime_us = m.stime_us;
		break;
	case SB_MSG_LAYERS:
		r->layers = (unsigned)m.status;
		break;
	case SB_MSG_HANDOVER:
		take_handover(r, &m);
		break;
	case SB_MSG_TRACE:
		/* a warm sandbox counts from when it was made; the call from
		 * when it began (earlier steps come out negative) */
		tg_log(TG_LOG_TRACE, "%8.3f ms  %s",
		       ((double)m.err - (double)(r->start - r->plan.trace_start)) / 1000.0, m.text);
		break;
	}
}

static int grow_append(struct tg_sandbox_output *o, size_t *cap, const char *buf,
		       size_t n)
{
	size_t need = o->len + n + 1;

	if (need > *cap) {
		size_t ncap = *cap ? *cap : 4096;
		char *p;

		while (ncap < need)
			ncap *= 2;
		p = realloc(o->data, ncap);
		if (!p)
			return -1;
		o->data = p;
		*cap = ncap;
	}
	memcpy(o->data + o->len, buf, n);
	o->len += n;
	o->data[o->len] = '\0';
	return 0;
}

static void on_output(struct run *r, int stream, int *fd, struct tg_sandbox_output *o,
		      size_t *cap)
{
	char buf[CHUNK];
	uint64_t limit = r->spec->output_limit;
	ssize_t n = read(*fd, buf, sizeof(buf));
	size_t take;

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		close_fd(fd);
		return;
	}
	if (r->spec->server) {
		/* streamed, never kept: no cap to reach, nothing that grows
		 * with a server's days of talk (tg_sandbox_spec_set_server) */
		if (r->spec->out_fn)
			r->spec->out_fn(stream, buf, (size_t)n, r->spec->out_ctx);
		return;
	}
	if (o->truncated)
		return; /* drained and dropped until the sandbox is gone */
	take = (size_t)n;
	if (o->len + take > limit) {
		take = (size_t)(limit - o->len);
		o->truncated = 1;
		r->killed_output = 1;
		kill_sandbox(r);
	}
	if (take && r->spec->out_fn)
		r->spec->out_fn(stream, buf, take, r->spec->out_ctx);
	if (take && grow_append(o, cap, buf, take) < 0) {
		o->truncated = 1; /* out of memory: keep what we have */
		r->killed_output = 1;
		kill_sandbox(r);
	}
}

/* Relay the caller's stdin into the sandbox's pipe. SIGPIPE is blocked for
 * the write and any pending one consumed, so a command that closes its
 * stdin early cannot kill the embedding process. */
static void relay_write(struct run *r)
{
	sigset_t pipe_set, old;
	struct timespec zero = { 0, 0 };
	ssize_t n;

	sigemptyset(&pipe_set);
	sigaddset(&pipe_set, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
	n = write(r->stdin_w, r->inbuf + r->inoff, r->inlen - r->inoff);
	if (n < 0 && errno == EPIPE)
		sigtimedwait(&pipe_set, NULL, &zero);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (n < 0) {
		if (errno != EAGAIN && errno != EINTR)
			close_fd(&r->stdin_w); /* the command stopped reading */
		return;
	}
	r->inoff += (size_t)n;
	if (r->inoff == r->inlen)
		r->inoff = r->inlen = 0;
}

static void relay_read(struct run *r)
{
	ssize_t n = read(r->spec->stdin_fd, r->inbuf, sizeof(r->inbuf));

	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		r->caller_in_eof = 1;
		return;
	}
	r->inlen = (size_t)n;
	r->inoff = 0;
}

/* Connections to the sandbox's egress listener (taken at the hand-over),
 * to the proxy. Out of descriptors, the rest wait in the backlog a while
 * rather than spin the loop. */
static void on_egress_connect(struct run *r)
{
	int i;

	for (i = 0; i < 16; i++) {
		int c = accept4(r->egress_l, NULL, NULL, SOCK_CLOEXEC);

		if (c >= 0) {
			tg_egress_proxy_adopt(r->spec->egress, c);
			continue;
		}
		if (errno == EINTR || errno == ECONNABORTED)
			continue;
		if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
			r->egress_pause = now_us() + 50000;
		else if (errno != EAGAIN)
			close_fd(&r->egress_l);
		return;
	}
}

static void supervise(struct run *r, struct tg_sandbox_result *res)
{
	size_t outcap = 0, errcap = 0;

	/* done once the sandbox is reaped and every pipe closed; a warm run
	 * once its command's exit is reported and its output closed: the
	 * teardown of PID 1 (its namespaces, a copy of our address space) is
	 * the pool's to wait for, off the call's path */
	while ((!r->reaped || r->stdout_r >= 0 || r->stderr_r >= 0 || r->status_r >= 0) &&
	       !(r->warm && r->got_exit && r->stdout_r < 0 && r->stderr_r < 0)) {
		struct pollfd p[10];
		int n = 0, i_pid = -1, i_out = -1, i_err = -1, i_st = -1, i_sock = -1,
		    i_ln = -1, i_in = -1, i_cancel = -1, i_egress = -1, i_el = -1, timeout;
		uint64_t t = now_us();

		if (r->stdin_w >= 0 && r->inlen == 0 && r->caller_in_eof)
			close_fd(&r->stdin_w);
		if (!r->reaped)
			p[i_pid = n++] = (struct pollfd){ r->pidfd, POLLIN, 0 };
		if (r->stdout_r >= 0)
			p[i_out = n++] = (struct pollfd){ r->stdout_r, POLLIN, 0 };
		if (r->stderr_r >= 0)
			p[i_err = n++] = (struct pollfd){ r->stderr_r, POLLIN, 0 };
		if (r->status_r >= 0)
			p[i_st = n++] = (struct pollfd){ r->status_r, POLLIN, 0 };
		if (r->handover >= 0)
			p[i_sock = n++] = (struct pollfd){ r->handover, POLLIN, 0 };
		if (r->listener >= 0)
			p[i_ln = n++] = (struct pollfd){ r->listener, POLLIN, 0 };
		if (r->egress_r >= 0 && !r->reaped)
			p[i_egress = n++] = (struct pollfd){ r->egress_r, POLLIN, 0 };
		if (r->egress_l >= 0 && !r->reaped && t >= r->egress_pause)
			p[i_el = n++] = (struct pollfd){ r->egress_l, POLLIN, 0 };
		if (!r->reaped && !r->killed_cancel && r->spec->cancel_fd >= 0)
			p[i_cancel = n++] = (struct pollfd){ r->spec->cancel_fd, POLLIN, 0 };
		if (r->stdin_w >= 0 && r->inlen > 0)
			p[i_in = n++] = (struct pollfd){ r->stdin_w, POLLOUT, 0 };
		else if (r->stdin_w >= 0 && !r->caller_in_eof)
			p[i_in = n++] = (struct pollfd){ r->spec->stdin_fd, POLLIN, 0 };

		if (!r->reaped && t >= r->deadline) {
			if (!r->killed_timeout)
				kill_sandbox(r);
			r->killed_timeout = 1;
			timeout = 100;
		} else if (!r->reaped) {
			timeout = r->deadline == NO_DEADLINE ? -1
							     : (int)((r->deadline - t + 999) / 1000);
			if (r->egress_l >= 0 && t < r->egress_pause)
				timeout = 10;
		} else {
			timeout = 1000; /* draining after exit; pipes close with the ns */
		}
		if (poll(p, (nfds_t)n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (i_cancel >= 0 && p[i_cancel].revents) {
			r->killed_cancel = 1;
			kill_sandbox(r);
		}
		if (i_ln >= 0 && p[i_ln].revents & POLLIN)
			on_notify(r, res);
		else if (i_ln >= 0 && p[i_ln].revents & (POLLHUP | POLLERR))
			close_fd(&r->listener);
		if (i_sock >= 0 && p[i_sock].revents) {
			int eof;

			r->listener = recv_fd(r->handover, &eof);
			close_fd(&r->handover);
		}
		if (i_egress >= 0 && p[i_egress].revents) {
			int eof, fd = recv_fd(r->egress_r, &eof);

			if (fd >= 0)
				tg_egress_proxy_adopt(r->spec->egress, fd);
			else if (eof)
				close_fd(&r->egress_r);
		}
		if (i_el >= 0 && p[i_el].revents)
			on_egress_connect(r);
		if (i_st >= 0 && p[i_st].revents)
			on_status(r);
		if (i_out >= 0 && p[i_out].revents)
			on_output(r, 1, &r->stdout_r, &res->out, &outcap);
		if (i_err >= 0 && p[i_err].revents)
			on_output(r, 2, &r->stderr_r, &res->err, &errcap);
		if (i_in >= 0 && p[i_in].revents) {
			if (p[i_in].fd == r->stdin_w) {
				if (p[i_in].revents & (POLLERR | POLLHUP))
					close_fd(&r->stdin_w);
				else
					relay_write(r);
			} else {
				relay_read(r);
			}
		}
		if (i_pid >= 0 && p[i_pid].revents & POLLIN) {
			struct rusage ru;
			int st;

			pid_t w = wait4(r->pid, &st, __WALL, &ru);

			if (w < 0 && errno == ECHILD) {
				/* reaped by someone else: never spin on the pidfd */
				memset(&ru, 0, sizeof(ru));
				st = r->exit_status;
				w = r->pid;
			}
			if (w == r->pid) {
				r->reaped = 1;
				res->cpu_user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000u +
						   (uint64_t)ru.ru_utime.tv_usec;
				res->cpu_system_us = (uint64_t)ru.ru_stime.tv_sec * 1000000u +
						     (uint64_t)ru.ru_stime.tv_usec;
				res->wall_us = now_us() - r->start;
				if (r->plan.trace)
					tg_log(TG_LOG_TRACE, "%8.3f ms  reaped",
					       res->wall_us / 1000.0);
				if (!r->got_exit && WIFSIGNALED(st)) {
					/* init itself was killed: the command went with it */
					r->exit_status = st;
				}
				close_fd(&r->stdin_w);
				/* a server had no deadline: its pipes get
				 * their grace from its end */
				if (r->deadline == NO_DEADLINE)
					r->deadline = now_us();
			}
		}
		if (r->reaped && now_us() > r->deadline + 5000000u)
			break; /* a pipe held open past the namespace: give up */
	}
	if (!r->reaped) {
		res->wall_us = now_us() - r->start;
		if (r->plan.trace)
			tg_log(TG_LOG_TRACE, "%8.3f ms  warm: done (the pool reaps)",
			       res->wall_us / 1000.0);
	}
}

/* ---- the result ----------------------------------------------------- */

static void finish(struct run *r, struct tg_sandbox_result *res)
{
	struct sb_cgroup_stats cs;
	int st = r->exit_status, killed;

	cgroup_stats(r->cg, &cs);
	res->peak_memory = cs.peak_memory;
	if (r->got_exit) {
		/* the command's own, which PID 1 reaped (the sandbox's set-up
		 * is not the command's time) */
		res->cpu_user_us = r->cmd_utime_us;
		res->cpu_system_us = r->cmd_stime_us;
	}
	res->layers = r->layers;
	if (r->spec->server)
		res->layers &= ~(unsigned)TG_LAYER_TIMEOUT; /* a server has none */
	if (r->killed_timeout)
		res->limits_hit |= TG_LIMIT_TIMEOUT;
	if (cs.oom_kills)
		res->limits_hit |= TG_LIMIT_MEMORY;
	if (cs.pids_max_events)
		res->limits_hit |= TG_LIMIT_PIDS;
	if (r->killed_output)
		res->limits_hit |= TG_LIMIT_OUTPUT;
	killed = r->killed_timeout || r->killed_seccomp || r->killed_output || r->killed_cancel;
	if (r->got_exit || killed) {
		if (r->got_exit && WIFEXITED(st)) {
			res->exited = 1;
			res->exit_code = WEXITSTATUS(st);
		} else if (r->got_exit && WIFSIGNALED(st)) {
			res->signal = WTERMSIG(st);
		} else {
			res->signal = SIGKILL;
		}
	}
	res->exec_errno = r->exec_errno;
	if (r->setup_error[0] && !r->exec_errno) {
		res->reason = TG_REASON_SETUP_FAILED;
		snprintf(res->message, sizeof(res->message), "setup failed: %.480s",
			 r->setup_error);
	} else if (r->exec_errno) {
		res->reason = TG_REASON_SETUP_FAILED;
		snprintf(res->message, sizeof(res->message), "%s", r->setup_error);
	} else if (!r->got_exit && !killed) {
		res->reason = TG_REASON_SETUP_FAILED;
		snprintf(res->message, sizeof(res->message),
			 "setup failed: the sandbox ended before the command started");
	} else if (r->killed_seccomp) {
		res->reason = TG_REASON_SECCOMP_VIOLATION;
		snprintf(res->message, sizeof(res->message),
			 "ended by seccomp: the command called %s", res->seccomp_syscall_name);
		if (res->seccomp_syscall < 0)
			res->seccomp_syscall = 0x7fffffff; /* named "unknown (withdrawn)" */
	} else if (res->limits_hit & TG_LIMIT_MEMORY) {
		res->reason = TG_REASON_MEMORY_LIMIT;
		snprintf(res->message, sizeof(res->message), "memory limit reached");
	} else if (res->limits_hit & TG_LIMIT_PIDS) {
		res->reason = TG_REASON_PIDS_LIMIT;
		snprintf(res->message, sizeof(res->message), "process limit reached");
	} else if (r->killed_timeout) {
		res->reason = TG_REASON_TIMEOUT;
		snprintf(res->message, sizeof(res->message), "timed out after %llu ms",
			 (unsigned long long)r->spec->timeout_ms);
	} else if (r->killed_output) {
		res->reason = TG_REASON_OUTPUT_TRUNCATED;
		snprintf(res->message, sizeof(res->message),
			 "output passed the limit of %llu bytes",
			 (unsigned long long)r->spec->output_limit);
	} else if (r->killed_cancel) {
		res->reason = TG_REASON_CANCELLED;
		snprintf(res->message, sizeof(res->message), "cancelled by the caller");
	} else {
		res->reason = TG_REASON_OK;
	}
}

static struct tg_sandbox_result *result_new(void)
{
	struct tg_sandbox_result *res = calloc(1, sizeof(*res));

	if (!res)
		return NULL;
	res->seccomp_syscall = -1;
	return res;
}

void tg_sandbox_result_free(struct tg_sandbox_result *res)
{
	if (!res)
		return;
	free(res->out.data);
	free(res->err.data);
	free(res);
}

static struct run *run_new(const struct tg_sandbox_spec *spec)
{
	struct run *r = calloc(1, sizeof(*r));
	int i;

	if (!r)
		return NULL;
	r->spec = spec;
	r->sync_w = r->status_r = r->handover = r->stdin_w = r->stdout_r = r->stderr_r = -1;
	r->pidfd = r->listener = r->cg_clone_fd = r->egress_r = r->egress_l = r->job_w = -1;
	r->plan.sync_rd = r->plan.status_wr = r->plan.handover = r->plan.egress_wr = -1;
	r->plan.job_rd = r->plan.init_fd = -1;
	r->plan.stdin_rd = r->plan.stdout_wr = r->plan.stderr_wr = -1;
	for (i = 0; i < 3; i++)
		r->plan.cg_tasks[i] = -1;
	return r;
}

/* The fds only the child uses; the parent closes its copies after clone. */
static void close_child_ends(struct run *r)
{
	int i;

	close_fd(&r->plan.sync_rd);
	close_fd(&r->plan.status_wr);
	close_fd(&r->plan.handover);
	close_fd(&r->plan.egress_wr);
	close_fd(&r->plan.job_rd);
	close_fd(&r->plan.stdin_rd);
	close_fd(&r->plan.stdout_wr);
	close_fd(&r->plan.stderr_wr);
	for (i = 0; i < 3; i++)
		close_fd(&r->plan.cg_tasks[i]);
	close_fd(&r->cg_clone_fd);
}

/* Every channel between parent and child, both ends, close-on-exec. */
static int open_channels(struct run *r, int warm, struct tg_error *err)
{
	int p[5][2], sock[2], i;

	for (i = 0; i < 5; i++)
		if (pipe2(p[i], O_CLOEXEC) < 0) {
			int e = errno;

			while (i-- > 0) {
				close(p[i][0]);
				close(p[i][1]);
			}
			return tg_error_sys(err, e, "pipes");
		}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) < 0) {
		int e = errno;

		for (i = 0; i < 5; i++) {
			close(p[i][0]);
			close(p[i][1]);
		}
		return tg_error_sys(err, e, "socketpair");
	}
	r->plan.sync_rd = p[0][0];
	r->sync_w = p[0][1];
	r->status_r = p[1][0];
	r->plan.status_wr = p[1][1];
	r->plan.stdin_rd = p[2][0];
	r->stdin_w = p[2][1];
	r->stdout_r = p[3][0];
	r->plan.stdout_wr = p[3][1];
	r->stderr_r = p[4][0];
	r->plan.stderr_wr = p[4][1];
	r->handover = sock[0];
	r->plan.handover = sock[1];
	fcntl(r->stdin_w, F_SETFL, O_NONBLOCK);
	if (r->spec->egress) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sock) < 0)
			return tg_error_sys(err, errno, "socketpair");
		r->egress_r = sock[0];
		r->plan.egress_wr = sock[1];
	}
	if (warm) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock) < 0)
			return tg_error_sys(err, errno, "socketpair");
		r->job_w = sock[0];
		r->plan.job_rd = sock[1];
	}
	return 0;
}

static void run_free(struct run *r)
{
	int i;

	if (!r)
		return;
	if (r->pid > 0 && !r->reaped) {
		kill_sandbox(r);
		waitpid(r->pid, NULL, __WALL);
	}
	close_child_ends(r);
	cgroup_destroy(r->cg);
	close_fd(&r->sync_w);
	close_fd(&r->status_r);
	close_fd(&r->handover);
	close_fd(&r->egress_r);
	close_fd(&r->egress_l);
	close_fd(&r->job_w);
	close_fd(&r->stdin_w);
	close_fd(&r->stdout_r);
	close_fd(&r->stderr_r);
	close_fd(&r->pidfd);
	close_fd(&r->listener);
	for (i = 0; i < r->nowned; i++)
		free(r->env_owned[i]);
	free(r->plan.init_argv);
	free(r);
}

/* Plan, channels, cgroup, clone, id maps, go: the sandbox is on its way
 * (warm: to wait for its job once its layers are in place). */
static int launch(struct run *r, int warm, struct tg_error *err)
{
	struct sb_spawn sp;

	r->start = now_us();
	/* timings only when asked for, and when someone reads them */
	r->plan.trace = getenv("TOOLGATE_TRACE") != NULL && tg_log_on();
	r->plan.trace_start = r->start;
	if (plan_run(r, warm, err) < 0 || open_channels(r, warm, err) < 0)
		return -1;
	trace_parent(r, "planned");
	if ((!r->cg && cgroup_create(r->spec, &r->cg, err) < 0) ||
	    cgroup_join_fds(r->cg, &r->cg_clone_fd, r->plan.cg_tasks, err) < 0)
		return -1;
	trace_parent(r, "cgroup");
	sp.plan = &r->plan;
	sp.cgroup_fd = r->cg_clone_fd;
	sp.status_r = r->status_r;
	sp.sync_w = r->sync_w;
	sp.maps = write_maps;
	sp.ctx = r;
	r->pid = sb_spawn_child(&sp, err);
	if (r->pid < 0)
		return -1;
	r->pidfd = sp.pidfd;
	r->plan.init_argv[1] = NULL; /* the child's, on a stack now gone */
	close_child_ends(r);
	/* The child waited for its id maps; when they failed it was killed. */
	if (sp.error[0])
		snprintf(r->setup_error, sizeof(r->setup_error), "%s", sp.error);
	close_fd(&r->sync_w);
	trace_parent(r, "clone3, maps, go");
	return 0;
}

/* Supervise r's command to its result. */
static int conclude(struct run *r, struct tg_sandbox_result **out, struct tg_error *err)
{
	struct tg_sandbox_result *res = result_new();

	if (!res)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (r->spec->stdin_fd < 0)
		r->caller_in_eof = 1;
	r->deadline = r->spec->server ? NO_DEADLINE : now_us() + r->spec->timeout_ms * 1000u;
	supervise(r, res);
	finish(r, res);
	*out = res;
	return 0;
}

int tg_sandbox_run(const struct tg_sandbox_spec *spec, struct tg_sandbox_result **out,
		   struct tg_error *err)
{
	struct run *r;
	int rc = -1;

	*out = NULL;
	if (!spec || !spec->argv)
		return tg_error_set(err, TG_ERR_INVALID, "no command given");
	pthread_once(&probe_once, probe_host_once);
	if (tg_sandbox_tier_check(spec->tier, &host, err) < 0)
		return -1;
	r = run_new(spec);
	if (!r)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (launch(r, 0, err) == 0)
		rc = conclude(r, out, err);
	run_free(r);
	return rc;
}

/* ---- runs prepared ahead, for the warm pool (pool.c) ------------------- */

struct run *run_prepare(const struct tg_sandbox_spec *spec, int prestart, struct sb_cgroup *cg,
			struct tg_error *err)
{
	struct run *r;
	int i;

	pthread_once(&probe_once, probe_host_once);
	if (tg_sandbox_tier_check(spec->tier, &host, err) < 0) {
		cgroup_destroy(cg);
		return NULL;
	}
	r = run_new(spec);
	if (!r) {
		cgroup_destroy(cg);
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		return NULL;
	}
	r->cg = cg;
	/* which files the binds are, before the sandbox takes its copies */
	for (i = 0; i < spec->nbinds; i++) {
		struct stat st;

		if (stat(spec->binds[i].host, &st) == 0) {
			r->bind_ids[i].dev = st.st_dev;
			r->bind_ids[i].ino = st.st_ino;
		}
	}
	r->nbind_ids = (size_t)spec->nbinds;
	if (launch(r, !prestart, err) < 0) {
		run_free(r);
		return NULL;
	}
	return r;
}

int run_wait_ready(struct run *r, int timeout_ms, struct tg_error *err)
{
	uint64_t until = now_us() + (uint64_t)timeout_ms * 1000u;

	while (!r->layers && !r->setup_error[0] && r->status_r >= 0) {
		struct pollfd p = { r->status_r, POLLIN, 0 };
		uint64_t t = now_us();

		if (t >= until)
			return tg_error_set(err, TG_ERR_SYSTEM, "warm sandbox: not ready within %d ms",
					    timeout_ms);
		if (poll(&p, 1, (int)((until - t) / 1000 + 1)) > 0)
			on_status(r);
	}
	if (r->layers && !r->setup_error[0])
		return 0;
	return tg_error_set(err, TG_ERR_SYSTEM, "warm sandbox: %s",
			    r->setup_error[0] ? r->setup_error : "ended before it was ready");
}

/* s and its NUL at buf + off when they fit in cap bytes (the caller sized
 * buf from the same strings, so they do); the offset after them. */
static size_t put_string(char *buf, size_t cap, size_t off, const char *s)
{
	size_t n = strlen(s) + 1;

	if (off > cap || n > cap - off)
		return off;
	memcpy(buf + off, s, n);
	return off + n;
}

int run_start(struct run *r, const struct tg_sandbox_spec *spec, struct tg_sandbox_result **out,
	      struct tg_error *err)
{
	int rc;

	*out = NULL;
	r->spec = spec; /* its stdin, cancel fd, output, limits and proxy */
	r->start = now_us();
	r->warm = 1;
	if (r->job_w >= 0) {
		struct sb_job h;
		char *buf;
		size_t len = 0, off = 0;
		int i, n;

		/* the command and its environment, as a cold run computes them */
		for (i = 0; i < r->nowned; i++)
			free(r->env_owned[i]);
		r->nowned = 0;
		if (plan_env(r, err) < 0)
			return -1;
		for (i = 0; i < spec->argc; i++)
			len += strlen(spec->argv[i]) + 1;
		for (n = 0; r->envp[n]; n++)
			len += strlen(r->envp[n]) + 1;
		buf = malloc(sizeof(h) + len);
		if (!buf)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		h.argc = (uint32_t)spec->argc;
		h.envc = (uint32_t)n;
		h.len = (uint32_t)len;
		memcpy(buf, &h, sizeof(h));
		off = sizeof(h);
		for (i = 0; i < spec->argc; i++)
			off = put_string(buf, sizeof(h) + len, off, spec->argv[i]);
		for (i = 0; i < n; i++)
			off = put_string(buf, sizeof(h) + len, off, r->envp[i]);
		for (len = 0; len < off;) {
			ssize_t w = send(r->job_w, buf + len, off - len, MSG_NOSIGNAL);

			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break; /* the sandbox is gone: its result says why */
			len += (size_t)w;
		}
		explicit_bzero(buf, off); /* its environment may hold secrets */
		free(buf);
		close_fd(&r->job_w);
	}
	trace_parent(r, "warm: job sent");
	rc = conclude(r, out, err);
	/* the call's spec is the caller's to free: nothing of it stays */
	r->spec = r->plan.spec;
	r->envp[0] = NULL;
	return rc;
}

int run_usable(struct run *r)
{
	struct pollfd p[2] = { { r->pidfd, POLLIN, 0 }, { r->status_r, POLLIN, 0 } };
	size_t i;

	/* PID 1 alive, nothing said since it was ready (a prestarted
	 * command that ended, a killed sandbox: both say so here) */
	if (r->pidfd < 0 || r->status_r < 0 || poll(p, 2, 0) != 0)
		return 0;
	/* the binds' sources are still the ones it holds (a directory
	 * renamed away and replaced since would be stale) */
	for (i = 0; i < r->nbind_ids; i++) {
		struct stat st;

		if (stat(r->plan.spec->binds[i].host, &st) < 0 ||
		    st.st_dev != r->bind_ids[i].dev || st.st_ino != r->bind_ids[i].ino)
			return 0;
	}
	return 1;
}

struct sb_cgroup *run_discard(struct run *r, int keep_cgroup)
{
	struct sb_cgroup *cg = NULL;

	if (!r)
		return NULL;
	if (r->pid > 0 && !r->reaped) {
		pid_t w;

		kill_sandbox(r);
		while ((w = waitpid(r->pid, NULL, __WALL)) < 0 && errno == EINTR) {
		}
		r->reaped = w == r->pid;
	}
	/* PID 1 reaped: its namespace's every process is gone with it */
	if (keep_cgroup && r->pid > 0 && r->reaped && cgroup_recycle(r->cg) == 0) {
		cg = r->cg;
		r->cg = NULL;
	}
	run_free(r);
	return cg;
}
