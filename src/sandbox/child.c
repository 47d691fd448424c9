/*
 * The sandbox's first process, PID 1 of the new pid namespace, until it
 * execs toolgate-init (init.c).
 *
 * It applies the layers in an order where each step still has the
 * privilege it needs and none is kept longer than needed:
 *
 *   close inherited fds -> join the run's cgroup, new cgroup namespace ->
 *   wait for the parent (id maps) -> new session -> clone bind sources ->
 *   drop host identity -> build and pivot into the tmpfs root -> hostname,
 *   loopback (and the egress listener on it) -> rlimits -> no_new_privs ->
 *   landlock (on the mounts just placed) -> drop every capability ->
 *   seccomp -> exec toolgate-init from its sealed memfd
 *
 * and toolgate-init does the rest under every layer: the hand-over, the
 * command, the reaping. Every failure is reported with the layer's name
 * and the process exits.
 *
 * Until that exec we run in the caller's memory, as a vfork child does,
 * its calling thread asleep (clone.c), or elsewhere in a copy of it: no
 * process of a sandbox holds anything of the caller's memory once
 * anything but our own code runs in it. No malloc, nor anything else of
 * libc's that takes a lock or knows about threads; no memory written but
 * our stack (and toolgate-init's argv[1], in the run's plan).
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

/* A setup failure of `layer` (with errno err, or 0) on fd, then _exit. */
static void report_fail(int fd, const char *layer, int err, const char *what)
	__attribute__((noreturn));
static void report_fail(int fd, const char *layer, int err, const char *what)
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
	send_msg(fd, &m);
	_exit(125);
}

void child_fail(const struct sb_plan *plan, const char *layer, int err,
		const char *what)
{
	report_fail(plan->status_wr, layer, err, what);
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
	/* Not dumpable before the switch, whatever fs.suid_dumpable says
	 * (1 would leave a child that shares the caller's memory open to
	 * the sandbox's host user); clone.c gives it back to the caller. */
	if (plan->caller_is_root && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		child_fail(plan, "process", errno, "PR_SET_DUMPABLE");
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

/* The layers that take privilege away, most general first; seccomp last
 * because it forbids what the others need. Returns the seccomp listener. */
static int restrict_self(const struct sb_plan *plan, struct sb_trees *trees, unsigned *layers)
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
	return listener;
}

/*
 * PID 1 becomes toolgate-init (init_proto.h): its descriptors moved to
 * their numbers (through numbers above them, so that none lands on
 * another before it moved), the rest closed by the exec, the plan in its
 * arguments. Landlock does not stand in the way (the image is a memfd, on
 * no filesystem a rule could name), nor seccomp (execveat is the
 * command's too), nor no_new_privs (nothing set-id).
 */
static void exec_init(const struct sb_plan *plan, unsigned layers, int listener, int egress_fd)
	__attribute__((noreturn));
static void exec_init(const struct sb_plan *plan, unsigned layers, int listener, int egress_fd)
{
	static char *const no_env[] = { NULL };
	const int from[SB_INIT_FD_COUNT] = {
		[SB_INIT_FD_STATUS] = plan->status_wr, [SB_INIT_FD_HANDOVER] = plan->handover,
		[SB_INIT_FD_STDIN] = plan->stdin_rd, [SB_INIT_FD_STDOUT] = plan->stdout_wr,
		[SB_INIT_FD_STDERR] = plan->stderr_wr, [SB_INIT_FD_LISTENER] = listener,
		[SB_INIT_FD_EGRESS] = egress_fd, [SB_INIT_FD_EGRESS_CHAN] = plan->egress_wr,
		[SB_INIT_FD_JOB] = plan->job_rd,
	};
	int high[SB_INIT_FD_COUNT], fd, image;
	char cfg[96];

	trace(plan, "exec " SB_INIT_NAME);
	image = fcntl(plan->init_fd, F_DUPFD_CLOEXEC, SB_INIT_FD_COUNT);
	if (image < 0)
		child_fail(plan, SB_INIT_NAME, errno, "move its descriptors");
	for (fd = SB_INIT_FD_STATUS; fd < SB_INIT_FD_COUNT; fd++) {
		high[fd] = -1;
		if (from[fd] >= 0 &&
		    (high[fd] = fcntl(from[fd], F_DUPFD_CLOEXEC, SB_INIT_FD_COUNT)) < 0)
			child_fail(plan, SB_INIT_NAME, errno, "move its descriptors");
	}
	syscall(SYS_close_range, 0, SB_INIT_FD_COUNT - 1, 0);
	for (fd = SB_INIT_FD_STATUS; fd < SB_INIT_FD_COUNT; fd++)
		if (high[fd] >= 0 && dup2(high[fd], fd) != fd)
			_exit(125); /* the status pipe may be what failed */
	snprintf(cfg, sizeof(cfg), "%d:%llu:%u:%llu", plan->trace,
		 (unsigned long long)plan->trace_start, layers,
		 (unsigned long long)plan->cmd_nofile);
	/* the arguments were laid out in the plan; the numbers are ours to
	 * write (the array is the run's: nothing reads it until the run ends,
	 * and the exec has copied it by then) */
	plan->init_argv[1] = cfg;
	syscall(SYS_execveat, image, "", plan->init_argv, plan->job_rd < 0 ? plan->envp : no_env,
		AT_EMPTY_PATH);
	report_fail(SB_INIT_FD_STATUS, SB_INIT_NAME, errno, "exec");
}

void child_main(const struct sb_plan *plan)
{
	const int keep[] = {
		plan->sync_rd, plan->status_wr, plan->handover,
		plan->stdin_rd, plan->stdout_wr, plan->stderr_wr,
		plan->cg_tasks[0], plan->cg_tasks[1], plan->cg_tasks[2],
		plan->egress_wr, plan->job_rd, plan->init_fd,
	};
	unsigned layers = TG_LAYER_USERNS | TG_LAYER_MOUNTNS | TG_LAYER_PIDNS |
			  TG_LAYER_IPCNS | TG_LAYER_UTSNS |
			  TG_LAYER_CLEAN_ENV | TG_LAYER_TIMEOUT;
	struct sb_trees trees;
	int listener, egress_fd = -1;

	_Static_assert(sizeof(keep) / sizeof(keep[0]) <= KEEP_MAX, "keep[] too long");
	close_all_except(keep, (int)(sizeof(keep) / sizeof(keep[0])));
	layers |= TG_LAYER_FDS_CLOSED;
	/* The caller's signal handlers are not ours to run (they would run
	 * in the caller's memory, or a copy of it), and a caller
	 * that ignores SIGCHLD would make toolgate-init auto-reap the
	 * command and lose its status: every disposition back to default,
	 * nothing blocked. */
	reset_signals();
	memset(&trees, -1, sizeof(trees));
	setup_world(plan, &trees, &layers, &egress_fd);
	listener = restrict_self(plan, &trees, &layers);
	if (plan->egress_wr >= 0)
		layers |= TG_LAYER_EGRESS_PROXY;
	/* The cgroup and its limits were in place before we started. */
	layers |= TG_LAYER_CGROUP;
	exec_init(plan, layers, listener, egress_fd);
}
