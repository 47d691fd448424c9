/*
 * The sandbox's first process: PID 1 of the new pid namespace.
 *
 * It applies the layers in an order where each step still has the
 * privilege it needs and none is kept longer than needed:
 *
 *   close inherited fds -> join the run's cgroup, new cgroup namespace ->
 *   wait for the parent (id maps) -> new session -> clone bind sources ->
 *   drop host identity -> build and pivot into the tmpfs root -> hostname,
 *   loopback (and the egress listener on it) -> rlimits -> no_new_privs ->
 *   landlock (on the mounts just placed) -> drop every capability ->
 *   seccomp -> the hand-over (the parent takes the seccomp listener and the
 *   egress listener) -> not dumpable -> vfork the command, which lowers its
 *   RLIMIT_NOFILE and execs
 *
 * and then only reaps, so that a command that is itself killed or that
 * signals itself has its status passed through, and reports the command's
 * wait status. When it exits the kernel kills everything left in the pid
 * namespace. No malloc after clone (see sandbox_int.h); every failure is
 * reported with the layer's name and the process exits.
 *
 * Descriptors in flight: the kernel counts the descriptors sent over unix
 * sockets and not yet received per host user, and refuses a sender
 * (ETOOMANYREFS) once that count passes the sender's RLIMIT_NOFILE. Every
 * sandbox of a caller runs as the same host user, and a command can put
 * thousands in flight (datagram senders asleep on a full queue pass the
 * check before the count grows). So nothing of ours passes a descriptor
 * through a socket: the parent takes the two it needs from PID 1 with
 * pidfd_getfd (run.c, "The hand-over") and accepts the egress connections
 * itself. Only where the host forbids pidfd_getfd (Yama's ptrace_scope 3,
 * an LSM) does PID 1 send the listener, and an egress forwarder each
 * connection, both with the caller's RLIMIT_NOFILE raised to its hard
 * limit; only the command's process takes the 256, just before exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

extern char **environ;

static void send_msg(int fd, const struct sb_msg *m)
{
	ssize_t n;

	do
		n = write(fd, m, sizeof(*m));
	while (n < 0 && errno == EINTR);
}

/* TOOLGATE_TRACE=1: report how long the child took to reach `step`. */
static void trace(const struct sb_plan *plan, const char *step)
{
	struct timespec ts;
	struct sb_msg m;

	if (!plan->trace)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	memset(&m, 0, sizeof(m));
	m.kind = SB_MSG_TRACE;
	m.err = (int)((uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u -
		      plan->trace_start);
	snprintf(m.text, sizeof(m.text), "%s", step);
	send_msg(plan->status_wr, &m);
}

static const char *errdesc(int err)
{
	const char *d = strerrordesc_np(err);

	return d ? d : "unknown error";
}

void child_fail(const struct sb_plan *plan, const char *layer, int err,
		const char *what)
{
	struct sb_msg m;

	memset(&m, 0, sizeof(m));
	m.kind = SB_MSG_SETUP_ERROR;
	m.err = err;
	/* strerrordesc_np: no translation, so no locale lock that another
	 * thread of the caller may have held when we were cloned */
	if (err)
		snprintf(m.text, sizeof(m.text), "%s: %s: %s", layer, what, errdesc(err));
	else
		snprintf(m.text, sizeof(m.text), "%s: %s", layer, what);
	send_msg(plan->status_wr, &m);
	_exit(125);
}

#define KEEP_MAX 16

/* Close every fd but those in keep[] (any order, -1 entries ignored, at
 * most KEEP_MAX of them). */
static void close_all_except(const int *keep, int n)
{
	int sorted[KEEP_MAX], i, j, t, lo = 0, cnt = 0;

	for (i = 0; i < n && cnt < KEEP_MAX; i++)
		if (keep[i] >= 0)
			sorted[cnt++] = keep[i];
	for (i = 1; i < cnt; i++)
		for (j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
			t = sorted[j];
			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	for (i = 0; i < cnt; i++) {
		if (sorted[i] > lo)
			syscall(SYS_close_range, lo, sorted[i] - 1, 0);
		lo = sorted[i] + 1;
	}
	syscall(SYS_close_range, lo, ~0u, 0);
}

static int loopback_up(void)
{
	struct ifreq ifr;
	int fd, rc = -1;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	memcpy(ifr.ifr_name, "lo", 3);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		rc = ioctl(fd, SIOCSIFFLAGS, &ifr);
	}
	close(fd);
	return rc;
}

/* The egress listener on 127.0.0.1:TG_SANDBOX_EGRESS_PORT, made before
 * landlock forbids binding; -1 (errno). */
static int egress_listen(void)
{
	struct sockaddr_in sin;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons(TG_SANDBOX_EGRESS_PORT);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(fd, 64) < 0)) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	char byte = 'n';
	struct iovec iov = { &byte, 1 };
	struct msghdr msg;
	struct cmsghdr *c;

	memset(&msg, 0, sizeof(msg));
	memset(cbuf, 0, sizeof(cbuf));
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = cbuf;
	msg.msg_controllen = sizeof(cbuf);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* The egress forwarder, where the parent could not take the listener (an
 * 'S' hand-over), a process of the sandbox under all its layers: each
 * connection to the listener goes to the parent, which hands it to the
 * proxy. A raw clone (no atfork handlers, which could wait on a lock
 * some thread of the caller held at clone time); the child makes system
 * calls only. It goes with the pid namespace. -1 (errno) when it cannot
 * start. */
static int egress_forwarder(int lfd, int chan)
{
	long pid = syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);

	if (pid != 0)
		return pid < 0 ? -1 : 0;
	{
		const int keep[] = { lfd, chan };

		close_all_except(keep, 2);
	}
	for (;;) {
		int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

		if (c < 0 && (errno == EINTR || errno == ECONNABORTED))
			continue;
		if (c < 0)
			_exit(0);
		/* a handoff the kernel's count of descriptors in flight refuses
		 * (ETOOMANYREFS: another run of the same host user holds many)
		 * loses that one connection, not every later one */
		if (send_fd(chan, c) < 0 && errno != ETOOMANYREFS)
			_exit(0);
		close(c);
	}
}

static int drop_identity(const struct sb_plan *plan)
{
	/* A root caller leaves host root behind: supplementary groups first
	 * (gid 0 among them), then gid, then uid, all to ids that map to an
	 * unprivileged host user. */
	/* Raw system calls, not libc's: in a multi-threaded caller, glibc's
	 * set*id() signals every thread it knows of to change credentials
	 * too and waits for them; the clone copied that list but none of the
	 * threads, so it would wait forever. We are the only thread here. */
	if (plan->caller_is_root && syscall(SYS_setgroups, 0, NULL) < 0)
		return -1;
	if (syscall(SYS_setresgid, SB_INSIDE_GID, SB_INSIDE_GID, SB_INSIDE_GID) < 0 ||
	    syscall(SYS_setresuid, SB_INSIDE_UID, SB_INSIDE_UID, SB_INSIDE_UID) < 0)
		return -1;
	return 0;
}

static int drop_caps(void)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2];
	int cap;

	for (cap = 0; cap < 64; cap++)
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
			return -1;
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return -1;
	memset(data, 0, sizeof(data));
	return (int)syscall(SYS_capset, &hdr, data);
}

static void reset_signals(void)
{
	sigset_t none;
	int sig;

	for (sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static void run_command(const struct sb_plan *plan, char *const *argv, char *const *envp)
	__attribute__((noreturn));
static void run_command(const struct sb_plan *plan, char *const *argv, char *const *envp)
{
	struct rlimit nofile = { plan->cmd_nofile, plan->cmd_nofile };
	struct sb_msg m;
	int status_fd = 3;

	/* stdio from the pipes; the status pipe moves to fd 3 and closes
	 * itself on exec, so the command never holds it. */
	if (dup2(plan->stdin_rd, 0) < 0 || dup2(plan->stdout_wr, 1) < 0 ||
	    dup2(plan->stderr_wr, 2) < 0 ||
	    dup3(plan->status_wr, status_fd, O_CLOEXEC) < 0)
		_exit(125);
	syscall(SYS_close_range, 4, ~0u, 0);
	/* the command's own descriptor limit, PID 1's stays (see the top) */
	if (setrlimit(RLIMIT_NOFILE, &nofile) < 0) {
		memset(&m, 0, sizeof(m));
		m.kind = SB_MSG_SETUP_ERROR;
		m.err = errno;
		snprintf(m.text, sizeof(m.text), "rlimits: RLIMIT_NOFILE: %s", errdesc(m.err));
		send_msg(status_fd, &m);
		_exit(125);
	}
	if (chdir(plan->workdir) < 0) {
		memset(&m, 0, sizeof(m));
		m.kind = SB_MSG_SETUP_ERROR;
		m.err = errno;
		snprintf(m.text, sizeof(m.text), "work directory: %s: %s", plan->workdir,
			 errdesc(m.err));
		send_msg(status_fd, &m);
		_exit(125);
	}
	/* PATH lookup with the sandbox's environment, not the caller's:
	 * execvp reads environ (shared with init through vfork; init does not
	 * use it). Signals were reset in init before the vfork. */
	environ = (char **)envp;
	execvp(argv[0], argv);
	memset(&m, 0, sizeof(m));
	m.kind = SB_MSG_EXEC_ERROR;
	m.err = errno;
	snprintf(m.text, sizeof(m.text), "%s: %s", argv[0], errdesc(m.err));
	send_msg(status_fd, &m);
	_exit(errno == ENOENT ? 127 : 126);
}

/* A warm sandbox's job (pool.c): its command and environment, read from
 * the job socket into memory of our own (no malloc here). The sandbox
 * waits for it with every layer in place; EOF means the pool let it go. */
static char job_buf[2 * SB_ARG_MAX + 8192]; /* argv, env, and the defaults */
static char *job_argv[SB_MAX_ARGV + 1];
static char *job_envp[SB_MAX_ENV + 24];

static int read_full(int fd, void *buf, size_t n)
{
	char *b = buf;

	while (n) {
		/* raw: see prefork_main */
		ssize_t r = syscall(SYS_read, fd, b, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		b += r;
		n -= (size_t)r;
	}
	return 0;
}

static void wait_job(const struct sb_plan *plan)
{
	struct sb_job h;
	size_t off = 0;
	uint32_t i;

	if (read_full(plan->job_rd, &h, sizeof(h)) < 0)
		_exit(0);
	if (h.argc == 0 || h.argc > SB_MAX_ARGV || h.envc >= sizeof(job_envp) / sizeof(char *) ||
	    h.len > sizeof(job_buf) || read_full(plan->job_rd, job_buf, h.len) < 0)
		child_fail(plan, "warm pool", EINVAL, "a malformed job");
	close(plan->job_rd);
	for (i = 0; i < h.argc + h.envc; i++) {
		char *s = job_buf + off;
		char *nul = memchr(s, 0, h.len - off);

		if (off >= h.len || !nul)
			child_fail(plan, "warm pool", EINVAL, "a malformed job");
		if (i < h.argc)
			job_argv[i] = s;
		else
			job_envp[i - h.argc] = s;
		off = (size_t)(nul - job_buf) + 1;
	}
	job_argv[h.argc] = NULL;
	job_envp[h.envc] = NULL;
}

/*
 * A warm sandbox's command process, made ahead (a cold run vforks it once
 * the layers are in place; a warm one has it waiting, so that a call pays
 * neither the fork nor a wake-up of PID 1). It reads the job itself and
 * execs. It shares PID 1's memory until then, as a vfork child would, on
 * a stack of its own, and its thread data (errno, glibc's own): both make
 * raw system calls only while the other may run (PID 1 its closes and
 * waits, the child its reads), and the child writes its job into job_buf,
 * which PID 1 never reads. The stack has no guard page: what runs on it
 * (the job's parsing, execvp's path search) needs a few KiB of it.
 */
static char prefork_stack[2 * SB_ARG_MAX + 65536] __attribute__((aligned(16)));

static int prefork_main(void *arg)
{
	const struct sb_plan *plan = arg;

	wait_job(plan);
	trace(plan, "job read");
	run_command(plan, job_argv, job_envp);
}

/* Namespaces, cgroup, session, filesystem, identity: everything that
 * still needs the capabilities the new user namespace gave us. */
static void setup_world(const struct sb_plan *plan, struct sb_trees *trees, unsigned *layers,
			int *egress_fd)
{
	const char *what = "";
	char go;
	int i;

	/* Into the run's cgroup first, so all that follows is charged to it
	 * (on v2 clone3 put us there already; see cgroup_join_fds). */
	for (i = 0; i < 3; i++) {
		if (plan->cg_tasks[i] < 0)
			continue;
		if (write(plan->cg_tasks[i], "0", 1) != 1)
			child_fail(plan, "cgroup", errno, "join");
		close(plan->cg_tasks[i]);
	}
	if (unshare(CLONE_NEWCGROUP) < 0)
		child_fail(plan, "cgroup namespace", errno, "unshare");
	*layers |= TG_LAYER_CGROUPNS;
	/* The parent writes our id maps first. */
	if (read(plan->sync_rd, &go, 1) != 1)
		_exit(125);
	close(plan->sync_rd);
	trace(plan, "go");
	if (setsid() < 0)
		child_fail(plan, "session", errno, "setsid");
	*layers |= TG_LAYER_NEW_SESSION;

	if (rootfs_clone(plan, trees, &what) < 0)
		child_fail(plan, "rootfs", errno, what);
	if (drop_identity(plan) < 0)
		child_fail(plan, "user namespace", errno, "switch to the sandbox user");
	/* Die with the parent: without it nobody enforces the limits. Set
	 * after the id switch, which clears it; the LAYERS message fails if
	 * the parent went away before this point. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		child_fail(plan, "process", errno, "PR_SET_PDEATHSIG");
	if (rootfs_build(plan, trees, layers, &what) < 0)
		child_fail(plan, "rootfs", errno, what);
	trace(plan, "rootfs");
	if (sethostname(plan->hostname, strlen(plan->hostname)) < 0)
		child_fail(plan, "uts namespace", errno, "sethostname");
	if (loopback_up() < 0)
		child_fail(plan, "network namespace", errno, "loopback up");
	*layers |= TG_LAYER_NETNS;
	if (plan->egress_wr >= 0 && (*egress_fd = egress_listen()) < 0)
		child_fail(plan, "egress proxy", errno, "listen on 127.0.0.1:3128");
}

/*
 * The hand-over: the parent takes the seccomp listener and the egress
 * listening socket from our descriptors with pidfd_getfd, so that no
 * count of descriptors in flight can refuse them (see the top). That
 * needs us dumpable while it looks (the caller owns our user namespace,
 * but our memory is its copy, which only CAP_SYS_PTRACE in the caller's
 * own namespace reaches otherwise; a root caller's id switch made us
 * not dumpable): nothing else runs in the sandbox yet, and no process of
 * the sandbox's host user outside it owns our namespace. Then never
 * again: the command must not open /proc/1/fd or /proc/1/mem. The answer
 * is 'T' (taken: both are closed here, no forwarder is needed) or 'S'
 * (send the listener on plan->handover; the forwarder passes the egress
 * connections). The egress listener stays in *egress_fd for an 'S'.
 */
static void hand_over(const struct sb_plan *plan, int listener, int *egress_fd)
{
	struct sb_msg m;
	char answer = 0;
	ssize_t n;

	if (prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		child_fail(plan, "process", errno, "PR_SET_DUMPABLE");
	memset(&m, 0, sizeof(m));
	m.kind = SB_MSG_HANDOVER;
	m.listener = listener;
	m.egress = *egress_fd;
	send_msg(plan->status_wr, &m);
	do
		n = read(plan->handover, &answer, 1);
	while (n < 0 && errno == EINTR);
	/* Not dumpable before anything else: the command cannot open
	 * /proc/1/fd or /proc/1/mem. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		child_fail(plan, "process", errno, "PR_SET_DUMPABLE");
	if (n != 1 || (answer != 'T' && answer != 'S'))
		_exit(125); /* the parent is gone, or gave up on us */
	if (answer == 'S' && send_fd(plan->handover, listener) < 0)
		child_fail(plan, "seccomp", errno, "hand the listener to the parent");
	close(listener);
	close(plan->handover);
	if (answer == 'T' && *egress_fd >= 0) {
		close(*egress_fd);
		*egress_fd = -1;
	}
	trace(plan, answer == 'T' ? "hand-over: taken" : "hand-over: sent");
}

/* The layers that take privilege away, most general first; seccomp last
 * because it forbids what the others need; then the hand-over. */
static void restrict_self(const struct sb_plan *plan, struct sb_trees *trees, unsigned *layers,
			  int *egress_fd)
{
	struct rlimit nofile;
	const char *what = "";
	int i, listener;

	for (i = 0; i < plan->nrlimits; i++) {
		struct rlimit rl = { plan->rlimits[i].value, plan->rlimits[i].value };

		if (setrlimit(plan->rlimits[i].resource, &rl) < 0)
			child_fail(plan, "rlimits", errno, "setrlimit");
	}
	/* ours as high as it goes: what an 'S' hand-over sends must pass
	 * what it can of the descriptors a command holds in flight */
	if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &nofile) < 0)
			child_fail(plan, "rlimits", errno, "raise PID 1's RLIMIT_NOFILE");
	}
	*layers |= TG_LAYER_RLIMITS;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		child_fail(plan, "no_new_privs", errno, "prctl");
	*layers |= TG_LAYER_NO_NEW_PRIVS;
	if (landlock_apply(plan, trees, layers, &what) < 0)
		child_fail(plan, "landlock", errno, what);
	rootfs_close(trees);
	trace(plan, "landlock");
	if (drop_caps() < 0)
		child_fail(plan, "capabilities", errno, "drop");
	*layers |= TG_LAYER_CAPS;
	listener = seccomp_install(plan->seccomp, plan->seccomp_ioctl);
	if (listener < 0)
		child_fail(plan, "seccomp", errno, "install filter");
	*layers |= TG_LAYER_SECCOMP;
	trace(plan, "seccomp");
	hand_over(plan, listener, egress_fd);
}

void child_main(const struct sb_plan *plan)
{
	const int keep[] = {
		plan->sync_rd, plan->status_wr, plan->handover,
		plan->stdin_rd, plan->stdout_wr, plan->stderr_wr,
		plan->cg_tasks[0], plan->cg_tasks[1], plan->cg_tasks[2],
		plan->egress_wr, plan->job_rd,
	};
	unsigned layers = TG_LAYER_USERNS | TG_LAYER_MOUNTNS | TG_LAYER_PIDNS |
			  TG_LAYER_IPCNS | TG_LAYER_UTSNS |
			  TG_LAYER_CLEAN_ENV | TG_LAYER_TIMEOUT;
	struct sb_trees trees;
	struct sb_msg m;
	struct rusage ru;
	pid_t pid = -1;
	int i, status, egress_fd = -1;

	_Static_assert(sizeof(keep) / sizeof(keep[0]) <= KEEP_MAX, "keep[] too long");
	close_all_except(keep, (int)(sizeof(keep) / sizeof(keep[0])));
	layers |= TG_LAYER_FDS_CLOSED;
	/* The caller's signal handlers are not ours to run (a command could
	 * signal us and run them in this copy of the caller), and a caller
	 * that ignores SIGCHLD would make us auto-reap the command and lose
	 * its status: every disposition back to default, nothing blocked. */
	reset_signals();
	/* Our copy of the caller's argv and environment strings: wiped. */
	for (i = 0; i < 2; i++)
		if (plan->scrub[i][1] > plan->scrub[i][0])
			memset((void *)plan->scrub[i][0], 0,
			       plan->scrub[i][1] - plan->scrub[i][0]);
	memset(&trees, -1, sizeof(trees));
	setup_world(plan, &trees, &layers, &egress_fd);
	restrict_self(plan, &trees, &layers, &egress_fd);
	if (egress_fd >= 0 && egress_forwarder(egress_fd, plan->egress_wr) < 0)
		child_fail(plan, "egress proxy", errno, "start the forwarder");
	if (egress_fd >= 0)
		close(egress_fd);
	if (plan->egress_wr >= 0) {
		close(plan->egress_wr);
		layers |= TG_LAYER_EGRESS_PROXY;
	}
	/* The cgroup and its limits were in place before we started. */
	layers |= TG_LAYER_CGROUP;

	if (plan->job_rd >= 0) {
		/* no SIGCHLD, as for the vfork below: we reap with __WALL */
		pid = clone(prefork_main, prefork_stack + sizeof(prefork_stack), CLONE_VM,
			    (void *)plan);
		if (pid < 0)
			child_fail(plan, "process", errno, "fork");
		/* from here on raw system calls while the child may run (see
		 * prefork_main) */
		syscall(SYS_close, plan->job_rd);
	}
	memset(&m, 0, sizeof(m));
	m.kind = SB_MSG_LAYERS;
	m.status = (int)layers;
	if (syscall(SYS_write, plan->status_wr, &m, sizeof(m)) != (long)sizeof(m))
		_exit(125); /* parent gone */

	if (plan->job_rd < 0) {
		/* vfork: our address space is a copy of the caller's, possibly
		 * large; the command's process borrows it until exec instead of
		 * copying the page tables. run_command only makes system calls. */
		pid = vfork();
		if (pid < 0)
			child_fail(plan, "process", errno, "fork");
		if (pid == 0)
			run_command(plan, plan->spec->argv, plan->envp);
	}
	syscall(SYS_close, plan->stdin_rd);
	syscall(SYS_close, plan->stdout_wr);
	syscall(SYS_close, plan->stderr_wr);
	for (;;) {
		pid_t w = (pid_t)syscall(SYS_wait4, -1, &status, __WALL, NULL);

		if (w == pid) {
			trace(plan, "command ended");
			/* what the command left running ends with it, and is gone
			 * before anyone hears the command ended (a warm run's
			 * caller goes on at that word) */
			kill(-1, SIGKILL);
			while (waitpid(-1, NULL, __WALL) > 0 || errno == EINTR)
				;
			/* the CPU time of everything the command ran */
			getrusage(RUSAGE_CHILDREN, &ru);
			memset(&m, 0, sizeof(m));
			m.kind = SB_MSG_EXIT;
			m.status = status;
			m.utime_us = (uint64_t)ru.ru_utime.tv_sec * 1000000u +
				     (uint64_t)ru.ru_utime.tv_usec;
			m.stime_us = (uint64_t)ru.ru_stime.tv_sec * 1000000u +
				     (uint64_t)ru.ru_stime.tv_usec;
			send_msg(plan->status_wr, &m);
			_exit(0);
		}
		if (w < 0 && errno != EINTR)
			_exit(125);
	}
}
