/*
 * toolgate-init: the sandbox's PID 1 once its layers are in place.
 *
 * The child that applied the layers (child.c) shares the caller's memory
 * (or, where there is no clone3 trampoline, is a copy of it); it ends by
 * exec'ing this small static program from a sealed memfd (run_init.c),
 * so no process of the sandbox holds anything of the caller's memory
 * when the command starts. Everything here runs under every layer:
 * seccomp, landlock, no capabilities, the sandbox's user. It
 *
 *   passes the seccomp listener and the egress listener to the parent
 *   (the hand-over, run.c), starts the egress forwarder where the parent
 *   could not take them ('S'), reports the layers, then makes the
 *   command's process (vfork, or ahead of its job for a warm sandbox),
 *   reaps everything, and reports the command's wait status and CPU time
 *
 * and exits, which ends the pid namespace. The protocol is init_proto.h.
 * It is a program of its own, linked statically, with nothing of the
 * project but that header: what is exec'd into every sandbox is small,
 * starts without the dynamic loader, and maps nothing the command could
 * use.
 *
 * Descriptors in flight: the kernel counts the descriptors sent over unix
 * sockets and not yet received per host user, and refuses a sender
 * (ETOOMANYREFS) once that count passes the sender's RLIMIT_NOFILE. Every
 * sandbox of a caller runs as the same host user, and a command can put
 * thousands in flight. So nothing of ours passes a descriptor through a
 * socket: the parent takes the two it needs from us with pidfd_getfd and
 * accepts the egress connections itself. Only where the host forbids
 * pidfd_getfd (Yama's ptrace_scope 3, an LSM) do we send the listener,
 * and an egress forwarder each connection, with our RLIMIT_NOFILE at its
 * hard limit (child.c raised it); only the command's process takes the
 * plan's limit, just before exec.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/init_proto.h"

extern char **environ;

static struct {
	int trace;
	unsigned long long trace_start, nofile;
	unsigned layers;
	const char *workdir;
} cfg;

static void send_msg(const struct sb_msg *m)
{
	ssize_t n;

	do
		n = write(SB_INIT_FD_STATUS, m, sizeof(*m));
	while (n < 0 && errno == EINTR);
}

/* TOOLGATE_TRACE=1: how long from the clone to `step`. */
static void trace(const char *step)
{
	struct timespec ts;
	struct sb_msg m;

	if (!cfg.trace)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	memset(&m, 0, sizeof(m));
	m.kind = SB_MSG_TRACE;
	m.err = (int)((unsigned long long)ts.tv_sec * 1000000u +
		      (unsigned long long)ts.tv_nsec / 1000u - cfg.trace_start);
	snprintf(m.text, sizeof(m.text), "%s", step);
	send_msg(&m);
}

/* musl has no text for some numbers (ETOOMANYREFS among them): those
 * are named by their number, in a buffer of the caller's */
static const char *errdesc(int err, char *buf, size_t len)
{
	const char *d = strerror(err);

	if (d && strcmp(d, "No error information") != 0)
		return d;
	snprintf(buf, len, "error %d", err);
	return buf;
}

/* A setup failure of `layer` (with errno err, or 0), then _exit. */
static void fail(const char *layer, int err, const char *what) __attribute__((noreturn));
static void fail(const char *layer, int err, const char *what)
{
	struct sb_msg m;
	char num[32];

	memset(&m, 0, sizeof(m));
	m.kind = SB_MSG_SETUP_ERROR;
	m.err = err;
	if (err)
		snprintf(m.text, sizeof(m.text), "%s: %s: %s", layer, what,
			 errdesc(err, num, sizeof(num)));
	else
		snprintf(m.text, sizeof(m.text), "%s: %s", layer, what);
	send_msg(&m);
	_exit(125);
}

static int send_fd(int sock, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))];
	char byte = 'n';
	struct iovec iov = { &byte, 1 };
	struct msghdr msg;
	struct cmsghdr *c;
	ssize_t n;

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
	n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	if (n == 1)
		return 0;
	if (n >= 0)
		errno = EIO;
	return -1;
}

/* The egress forwarder, where the parent could not take the listener (an
 * 'S' hand-over), a process of the sandbox under all its layers: each
 * connection to the listener goes to the parent, which hands it to the
 * proxy. It goes with the pid namespace. */
static void egress_forwarder(int lfd, int chan)
{
	pid_t pid = fork();

	if (pid < 0)
		fail("egress proxy", errno, "start the forwarder");
	if (pid > 0)
		return;
	syscall(SYS_close_range, 0, lfd - 1, 0);
	syscall(SYS_close_range, lfd + 1, chan - 1, 0);
	syscall(SYS_close_range, chan + 1, ~0u, 0);
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

/*
 * The hand-over: the parent takes the seccomp listener and the egress
 * listening socket from our descriptors with pidfd_getfd, so that no
 * count of descriptors in flight can refuse them (see the top). We are
 * not dumpable: the caller owns our user namespace, which is what the
 * kernel asks of it instead, and the command, which owns nothing, cannot
 * open /proc/1/fd or /proc/1/mem. The answer is 'T' (taken: both are
 * closed here, no forwarder is needed) or 'S' (send the listener; the
 * forwarder passes the egress connections). Returns whether the egress
 * listener is still ours to forward.
 */
static int hand_over(int egress)
{
	struct sb_msg m;
	char answer = 0;
	ssize_t n;

	memset(&m, 0, sizeof(m));
	m.kind = SB_MSG_HANDOVER;
	m.listener = SB_INIT_FD_LISTENER;
	m.egress = egress ? SB_INIT_FD_EGRESS : -1;
	send_msg(&m);
	do
		n = read(SB_INIT_FD_HANDOVER, &answer, 1);
	while (n < 0 && errno == EINTR);
	if (n != 1 || (answer != 'T' && answer != 'S'))
		_exit(125); /* the parent is gone, or gave up on us */
	if (answer == 'S' && send_fd(SB_INIT_FD_HANDOVER, SB_INIT_FD_LISTENER) < 0)
		fail("seccomp", errno, "hand the listener to the parent");
	close(SB_INIT_FD_LISTENER);
	close(SB_INIT_FD_HANDOVER);
	trace(answer == 'T' ? "hand-over: taken" : "hand-over: sent");
	return egress && answer == 'S';
}

/* A file the kernel will not exec (ENOEXEC: a script without "#!") runs
 * with /bin/sh, as glibc's execvp does; musl's does not, and the command
 * must not behave differently with the compiler that built us. */
static void exec_file(const char *path, char *const *argv, char *const *envp)
{
	size_t n = 0;

	execve(path, argv, envp);
	if (errno != ENOEXEC)
		return;
	while (argv[n])
		n++;
	{
		char *sh_argv[n + 2];

		sh_argv[0] = "/bin/sh";
		sh_argv[1] = (char *)path;
		/* argv[1..n], its NULL included */
		memcpy(sh_argv + 2, argv + 1, n * sizeof(char *));
		execve("/bin/sh", sh_argv, envp);
	}
	errno = ENOEXEC;
}

/* execvp with the command's environment, glibc's way (exec_file): PATH
 * from envp ("/bin:/usr/bin" without one), an entry that is missing or
 * not permitted skipped, EACCES reported if one was seen. Returns only
 * on failure, with errno. */
static void exec_command(char *const *argv, char *const *envp)
{
	const char *file = argv[0], *path = "/bin:/usr/bin", *p, *z;
	size_t flen = strlen(file);
	int eacces = 0;
	char *const *e;

	if (!*file) {
		errno = ENOENT;
		return;
	}
	if (strchr(file, '/')) {
		exec_file(file, argv, envp);
		return;
	}
	for (e = envp; *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0) {
			path = *e + 5;
			break;
		}
	for (p = path;; p = z + 1) {
		char buf[4096];
		size_t dlen;

		z = strchrnul(p, ':');
		dlen = (size_t)(z - p);
		if (dlen + 1 + flen + 1 <= sizeof(buf)) {
			memcpy(buf, p, dlen);
			if (dlen)
				buf[dlen++] = '/'; /* an empty entry: the work directory */
			memcpy(buf + dlen, file, flen + 1);
			exec_file(buf, argv, envp);
			switch (errno) {
			case EACCES:
				eacces = 1;
				break;
			case ENOENT:
			case ENOTDIR:
			case ESTALE:
			case ENODEV:
			case ETIMEDOUT:
				break;
			default:
				return;
			}
		}
		if (!*z)
			break;
	}
	errno = eacces ? EACCES : ENOENT;
}

static void run_command(char *const *argv, char *const *envp) __attribute__((noreturn));
static void run_command(char *const *argv, char *const *envp)
{
	struct rlimit nofile = { cfg.nofile, cfg.nofile };
	struct sb_msg m;
	char num[32];

	/* stdio from the pipes; the status pipe stays open until exec, so
	 * the command never holds it */
	if (dup2(SB_INIT_FD_STDIN, 0) < 0 || dup2(SB_INIT_FD_STDOUT, 1) < 0 ||
	    dup2(SB_INIT_FD_STDERR, 2) < 0 ||
	    fcntl(SB_INIT_FD_STATUS, F_SETFD, FD_CLOEXEC) < 0)
		_exit(125);
	syscall(SYS_close_range, SB_INIT_FD_STATUS + 1, ~0u, 0);
	/* the command's own descriptor limit, PID 1's stays (see the top) */
	if (setrlimit(RLIMIT_NOFILE, &nofile) < 0)
		fail("rlimits", errno, "RLIMIT_NOFILE");
	if (chdir(cfg.workdir) < 0)
		fail("work directory", errno, cfg.workdir);
	/* PATH lookup with the sandbox's environment, not ours */
	exec_command(argv, envp);
	memset(&m, 0, sizeof(m));
	m.kind = SB_MSG_EXEC_ERROR;
	m.err = errno;
	snprintf(m.text, sizeof(m.text), "%s: %s", argv[0], errdesc(m.err, num, sizeof(num)));
	send_msg(&m);
	_exit(m.err == ENOENT ? 127 : 126);
}

/* A warm sandbox's job (pool.c): its command and environment, read from
 * the job socket. The sandbox waits for it with every layer in place; EOF
 * means the pool let it go. */
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

static void wait_job(void)
{
	struct sb_job h;
	size_t off = 0;
	uint32_t i;

	if (read_full(SB_INIT_FD_JOB, &h, sizeof(h)) < 0)
		_exit(0);
	if (h.argc == 0 || h.argc > SB_MAX_ARGV || h.envc >= sizeof(job_envp) / sizeof(char *) ||
	    h.len > sizeof(job_buf) || read_full(SB_INIT_FD_JOB, job_buf, h.len) < 0)
		fail("warm pool", EINVAL, "a malformed job");
	for (i = 0; i < h.argc + h.envc; i++) {
		char *s = job_buf + off;
		char *nul = off < h.len ? memchr(s, 0, h.len - off) : NULL;

		if (!nul)
			fail("warm pool", EINVAL, "a malformed job");
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
 * the hand-over is done; a warm one has it waiting, so that a call pays
 * neither the fork nor a wake-up of PID 1). It reads the job itself and
 * execs. It shares PID 1's memory until then, as a vfork child would, on
 * a stack of its own, and its thread data (errno, glibc's own): both make
 * raw system calls only while the other may run (PID 1 its closes and
 * waits, the child its reads), and the child writes its job into job_buf,
 * which PID 1 never reads. The stack has no guard page: what runs on it
 * (the job's parsing, the path search) needs a few KiB of it.
 */
static char prefork_stack[2 * SB_ARG_MAX + 65536] __attribute__((aligned(16)));

static int prefork_main(void *arg)
{
	(void)arg;
	wait_job();
	trace("job read");
	run_command(job_argv, job_envp);
}

static int parse_cfg(int argc, char **argv)
{
	char *end;

	if (argc < 3)
		return -1;
	errno = 0;
	cfg.trace = (int)strtoul(argv[1], &end, 10);
	if (*end++ != ':')
		return -1;
	cfg.trace_start = strtoull(end, &end, 10);
	if (*end++ != ':')
		return -1;
	cfg.layers = (unsigned)strtoul(end, &end, 10);
	if (*end++ != ':')
		return -1;
	cfg.nofile = strtoull(end, &end, 10);
	if (*end || errno || !cfg.nofile)
		return -1;
	cfg.workdir = argv[2];
	return 0;
}

static int fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

int main(int argc, char **argv)
{
	int warm = fd_open(SB_INIT_FD_JOB), status;
	struct rusage ru;
	struct sb_msg m;
	pid_t pid = -1;

	/* not dumpable before anything else: nothing of the sandbox may
	 * trace us or open /proc/1/mem or /proc/1/fd (run_init.c says why
	 * the exec does not do it) */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		_exit(125);
	prctl(PR_SET_NAME, SB_INIT_NAME, 0, 0, 0);
	if (!fd_open(SB_INIT_FD_STATUS))
		_exit(125);
	if (parse_cfg(argc, argv) < 0 || (!warm && argc < 4))
		fail(SB_INIT_NAME, EINVAL, "its arguments");
	trace(SB_INIT_NAME);
	if (hand_over(fd_open(SB_INIT_FD_EGRESS)))
		egress_forwarder(SB_INIT_FD_EGRESS, SB_INIT_FD_EGRESS_CHAN);
	close(SB_INIT_FD_EGRESS);
	close(SB_INIT_FD_EGRESS_CHAN);

	if (warm) {
		/* no SIGCHLD, as for the vfork below: we reap with __WALL */
		pid = clone(prefork_main, prefork_stack + sizeof(prefork_stack), CLONE_VM, NULL);
		if (pid < 0)
			fail("process", errno, "fork");
		/* from here on raw system calls while the child may run (see
		 * prefork_main) */
		syscall(SYS_close, SB_INIT_FD_JOB);
	}
	memset(&m, 0, sizeof(m));
	m.kind = SB_MSG_LAYERS;
	m.status = (int)cfg.layers;
	if (syscall(SYS_write, SB_INIT_FD_STATUS, &m, sizeof(m)) != (long)sizeof(m))
		_exit(125); /* parent gone */

	if (!warm) {
		/* vfork: the command's process borrows our memory until exec;
		 * run_command only makes system calls */
		pid = vfork();
		if (pid < 0)
			fail("process", errno, "fork");
		if (pid == 0)
			run_command(argv + 3, environ);
	}
	syscall(SYS_close, SB_INIT_FD_STDIN);
	syscall(SYS_close, SB_INIT_FD_STDOUT);
	syscall(SYS_close, SB_INIT_FD_STDERR);
	for (;;) {
		pid_t w = (pid_t)syscall(SYS_wait4, -1, &status, __WALL, NULL);

		if (w == pid) {
			trace("command ended");
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
			send_msg(&m);
			_exit(0);
		}
		if (w < 0 && errno != EINTR)
			_exit(125);
	}
}
