/*
 * tg-escape, resources and leftovers.  Every attempt is bounded so it
 * cannot hurt the machine when run unsandboxed; success means it went past
 * the sandbox's limit.
 */
#include "tg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

static long argl(int argc, char **argv, int i, long def)
{
	return i < argc ? strtol(argv[i], NULL, 10) : def;
}

static double now_s(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int a_fork_bomb(int argc, char **argv)
{
	long max = argl(argc, argv, 1, 300), thresh = argl(argc, argv, 2, 64);
	pid_t *kids = calloc((size_t)max, sizeof *kids);
	long n = 0;
	int err = 0;

	if (!kids)
		return tg_report(TG_UNKNOWN, "calloc");
	for (; n < max; n++) {
		pid_t p = fork();
		if (p == 0) {
			alarm(10);	/* bounded even if the parent dies */
			for (;;)
				pause();
		}
		if (p < 0) {
			err = errno;
			break;
		}
		kids[n] = p;
	}
	for (long i = 0; i < n; i++)
		kill(kids[i], SIGKILL);
	for (long i = 0; i < n; i++)
		waitpid(kids[i], NULL, 0);
	free(kids);
	if (n > thresh)
		return tg_report(TG_ESCAPED, "%ld children alive at once (limit %ld)", n, thresh);
	return tg_report(TG_BLOCKED, "fork stopped after %ld children: %s", n, tg_errname(err));
}

static int bomb_pipe[2];

static void *bomb_thread(void *arg)
{
	char c;

	(void)arg;
	while (read(bomb_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static int a_thread_bomb(int argc, char **argv)
{
	long max = argl(argc, argv, 1, 300), thresh = argl(argc, argv, 2, 64);
	pthread_t *t = calloc((size_t)max, sizeof *t);
	pthread_attr_t at;
	long n = 0;
	int err = 0;

	if (!t || pipe(bomb_pipe) < 0)
		return tg_report(TG_UNKNOWN, "setup: %s", tg_errname(errno));
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 64 * 1024);
	for (; n < max; n++) {
		err = pthread_create(&t[n], &at, bomb_thread, NULL);
		if (err)
			break;
	}
	close(bomb_pipe[1]);	/* wakes every thread: read returns 0 */
	for (long i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	free(t);
	if (n > thresh)
		return tg_report(TG_ESCAPED, "%ld threads alive at once (limit %ld)", n, thresh);
	return tg_report(TG_BLOCKED, "pthread_create stopped after %ld threads: %s", n,
			 tg_errname(err));
}

static int a_memory_balloon(int argc, char **argv)
{
	long mb = argl(argc, argv, 1, 512);
	size_t len = (size_t)mb << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return tg_report(TG_BLOCKED, "mmap %ld MiB: %s", mb, tg_errname(errno));
	for (size_t off = 0; off < len; off += 4096)
		p[off] = (char)(off >> 12 | 1);
	munmap(p, len);
	return tg_report(TG_ESCAPED, "touched all %ld MiB", mb);
}

static int a_disk_fill(int argc, char **argv)
{
	const char *dir = tg_arg(argc, argv, 1, "/tmp");
	long max = argl(argc, argv, 2, 200), thresh = argl(argc, argv, 3, 100);
	static char chunk[1 << 20];
	char path[PATH_MAX];
	long mb = 0, files = 0;
	int err = 0;

	/* Files of 10 MiB each, so a per-file RLIMIT_FSIZE alone is not enough. */
	signal(SIGXFSZ, SIG_IGN);
	memset(chunk, 'D', sizeof chunk);
	while (mb < max && !err) {
		int fd;
		snprintf(path, sizeof path, "%s/tgsec-fill-%d-%ld", dir, (int)getpid(), files);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0) {
			err = errno;
			break;
		}
		files++;
		for (int i = 0; i < 10 && mb < max; i++) {
			ssize_t w = write(fd, chunk, sizeof chunk);
			if (w != (ssize_t)sizeof chunk) {
				err = w < 0 ? errno : ENOSPC;
				break;
			}
			mb++;
		}
		close(fd);
	}
	for (long i = 0; i < files; i++) {
		snprintf(path, sizeof path, "%s/tgsec-fill-%d-%ld", dir, (int)getpid(), i);
		unlink(path);
	}
	if (mb > thresh)
		return tg_report(TG_ESCAPED, "wrote %ld MiB to %s (limit %ld)", mb, dir, thresh);
	return tg_report(TG_BLOCKED, "stopped after %ld MiB in %s: %s", mb, dir, tg_errname(err));
}

static int a_fd_exhaustion(int argc, char **argv)
{
	long max = argl(argc, argv, 1, 2000), thresh = argl(argc, argv, 2, 300);
	struct rlimit rl;
	long n = 0;
	int err = 0;

	/* An attacker first raises the soft limit as far as allowed. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (; n < max; n++) {
		int fd = open("/dev/null", O_RDONLY);
		if (fd < 0)
			fd = dup(2);
		if (fd < 0) {
			err = errno;
			break;
		}
	}
	if (n > thresh)
		return tg_report(TG_ESCAPED, "opened %ld fds (limit %ld)", n, thresh);
	return tg_report(TG_BLOCKED, "stopped after %ld fds: %s", n, tg_errname(err));
}

/* Send fd n times (at most SCM_MAX_FD, 253) in one message on sock: 0,
 * or -1 with errno. */
static int send_fds(int sock, int fd, int n)
{
	union {
		char buf[CMSG_SPACE(253 * sizeof(int))];
		struct cmsghdr align;
	} c;
	char byte = 'x';
	struct iovec iov = { &byte, 1 };
	struct msghdr msg;
	struct cmsghdr *h;
	int i;

	if (n > 253)
		n = 253;
	memset(&msg, 0, sizeof msg);
	memset(&c, 0, sizeof c);
	msg.msg_iov = &iov;
	msg.msg_iovlen = 1;
	msg.msg_control = c.buf;
	msg.msg_controllen = CMSG_SPACE((size_t)n * sizeof(int));
	h = CMSG_FIRSTHDR(&msg);
	h->cmsg_level = SOL_SOCKET;
	h->cmsg_type = SCM_RIGHTS;
	h->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
	for (i = 0; i < n; i++)
		memcpy(CMSG_DATA(h) + (size_t)i * sizeof(int), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

/* The sandbox's RLIMIT_NOFILE, unsandboxed too. */
static void nofile_256(void)
{
	struct rlimit rl = { 256, 256 };

	setrlimit(RLIMIT_NOFILE, &rl);
}

/*
 * Descriptors in flight: the kernel counts, per host user, descriptors sent
 * over unix sockets and not yet received, and refuses a sender once the
 * count passes the sender's RLIMIT_NOFILE. Send one descriptor over and
 * over without reading until refused, print "READY n", hold them until
 * stdin closes (at most SECONDS). Every sandbox of a caller is one host
 * user: the harness starts other runs meanwhile, which must all start.
 * 0 = more than 256 held in flight (the attack is in place; the harness
 * judges its effect), 1 = refused before that.
 */
static int a_fd_inflight(int argc, char **argv)
{
	long secs = argl(argc, argv, 1, 20);
	struct pollfd in = { 0, POLLIN, 0 };
	int sv[2], p[2], i, err = 0;
	long held = 0;

	nofile_256();
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0 || pipe(p) < 0)
		return tg_report(TG_UNKNOWN, "socketpair: %s", tg_errname(errno));
	for (i = 0; i < 20; i++) {
		if (send_fds(sv[0], p[0], 200) < 0) {
			err = errno;
			break;
		}
		held += 200;
	}
	printf("READY %ld\n", held);
	fflush(stdout);
	if (held <= 256)
		return tg_report(TG_BLOCKED, "only %ld descriptors in flight: %s", held,
				 tg_errname(err));
	poll(&in, 1, (int)(secs * 1000));
	return tg_report(TG_ESCAPED, "held %ld descriptors in flight (then %s)", held,
			 tg_errname(err));
}

/* A datagram receiver bound to an abstract name and a sender connected to
 * it (one way: a sender only waits for room in a full queue when the
 * receiver is not connected back, as a socket pair's would be); the
 * receiver's queue filled with messages that carry nothing. 0 or -1. */
static int full_dgram_pair(int tag, int *rx, int *tx)
{
	struct sockaddr_un a;
	socklen_t len;
	char none = 0;

	memset(&a, 0, sizeof(a));
	a.sun_family = AF_UNIX;
	snprintf(a.sun_path + 1, sizeof(a.sun_path) - 1, "tg-amp-%d-%d", (int)getpid(), tag);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + strlen(a.sun_path + 1));
	*rx = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	*tx = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (*rx < 0 || *tx < 0 || bind(*rx, (struct sockaddr *)&a, len) < 0 ||
	    connect(*tx, (struct sockaddr *)&a, len) < 0)
		return -1;
	while (send(*tx, &none, 1, MSG_DONTWAIT) == 1) {
	}
	return errno == EAGAIN ? 0 : -1;
}

/*
 * The same, amplified past the check: the kernel checks the count before
 * a send but adds to it only when the message is queued, so senders
 * asleep on a full datagram queue have all passed the check. SENDERS
 * processes each wait to queue 253 descriptors on a receiver we filled;
 * one read from each lets them all in. "READY n" with the number queued,
 * held until stdin closes (at most SECONDS). 0 = more than 256 held.
 */
static int a_fd_inflight_amp(int argc, char **argv)
{
	long nsend = argl(argc, argv, 1, 40), secs = argl(argc, argv, 2, 20), i, queued = 0;
	struct pollfd in = { 0, POLLIN, 0 };
	int rx[64], tx, st;

	if (nsend < 1 || nsend > 64)
		nsend = 40;
	nofile_256();
	for (i = 0; i < nsend; i++) {
		pid_t pid;

		if (full_dgram_pair((int)i, &rx[i], &tx) < 0)
			return tg_report(TG_UNKNOWN, "datagram pair %ld: %s", i, tg_errname(errno));
		pid = fork();
		if (pid < 0)
			return tg_report(TG_UNKNOWN, "fork: %s", tg_errname(errno));
		if (pid == 0)
			_exit(send_fds(tx, tx, 253) < 0 ? 1 : 0);
		close(tx);
	}
	/* every sender past the check and asleep, then room for each */
	usleep(500000);
	for (i = 0; i < nsend; i++) {
		char b;

		if (recv(rx[i], &b, 1, MSG_DONTWAIT) < 0)
			return tg_report(TG_UNKNOWN, "read from receiver %ld: %s", i,
					 tg_errname(errno));
	}
	while (wait(&st) > 0)
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
			queued += 253;
	printf("READY %ld\n", queued);
	fflush(stdout);
	if (queued <= 256)
		return tg_report(TG_BLOCKED, "only %ld descriptors in flight", queued);
	poll(&in, 1, (int)(secs * 1000));
	return tg_report(TG_ESCAPED, "held %ld descriptors in flight, %ld senders", queued, nsend);
}

/* Helper for the harness: pass one descriptor over a socket pair with
 * RLIMIT_NOFILE at NOFILE (the command's 256 unless given), as a sandbox's
 * PID 1 did with its seccomp listener. 0 passed, 1 refused. */
int tg_helper_fd_pass(int argc, char **argv)
{
	long nofile = argl(argc, argv, 1, 256);
	struct rlimit rl = { (rlim_t)nofile, (rlim_t)nofile };
	int sv[2];

	tg_current = "fd-pass";
	setrlimit(RLIMIT_NOFILE, &rl);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0)
		return tg_report(TG_UNKNOWN, "socketpair: %s", tg_errname(errno));
	if (send_fds(sv[0], sv[1], 1) < 0)
		return tg_report(TG_BLOCKED, "passing one descriptor: %s", tg_errname(errno));
	return tg_report(TG_ESCAPED, "passed one descriptor");
}

/* Helper for the harness: run CMD with pidfd_getfd refused (EPERM), as
 * Yama's ptrace_scope 3 or an LSM would refuse it, so that toolgate's
 * other way of taking the sandbox's descriptors is tried. */
int tg_helper_deny_pidfd_getfd(int argc, char **argv)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_getfd, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { (unsigned short)(sizeof(f) / sizeof(f[0])), f };

	tg_current = "deny-pidfd-getfd";
	if (argc < 2)
		return tg_report(TG_UNKNOWN, "usage: deny-pidfd-getfd CMD [ARG...]");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		return tg_report(TG_UNKNOWN, "seccomp: %s", tg_errname(errno));
	execvp(argv[1], argv + 1);
	return tg_report(TG_UNKNOWN, "exec %s: %s", argv[1], tg_errname(errno));
}

static int a_cpu_spin(int argc, char **argv)
{
	long secs = argl(argc, argv, 1, 3);
	struct rlimit rl;
	double end;
	volatile unsigned long x = 0;

	/* Resist what can be resisted. */
	signal(SIGTERM, SIG_IGN);
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGXCPU, SIG_IGN);
	if (getrlimit(RLIMIT_CPU, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_CPU, &rl);
	}
	end = now_s(CLOCK_MONOTONIC) + (double)secs;
	while (now_s(CLOCK_MONOTONIC) < end)
		for (int i = 0; i < 100000; i++)
			x++;
	return tg_report(TG_ESCAPED, "spun for %ld s", secs);
}

static volatile int spin_stop;

static void *spin_thread(void *arg)
{
	volatile unsigned long x = 0;

	(void)arg;
	while (!spin_stop)
		x++;
	return NULL;
}

static int a_cpu_quota(int argc, char **argv)
{
	long secs = argl(argc, argv, 1, 2);
	double ratio_max = tg_arg(argc, argv, 2, NULL) ? strtod(argv[2], NULL) : 0.8;
	long nthreads = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t t[64];
	double w0, c0, w, c;

	if (nthreads < 1)
		nthreads = 1;
	if (nthreads > 64)
		nthreads = 64;
	w0 = now_s(CLOCK_MONOTONIC);
	c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
	for (long i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, spin_thread, NULL))
			return tg_report(TG_UNKNOWN, "pthread_create failed");
	while (now_s(CLOCK_MONOTONIC) < w0 + (double)secs)
		usleep(50000);
	spin_stop = 1;
	for (long i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	w = now_s(CLOCK_MONOTONIC) - w0;
	c = now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	if (c / w > ratio_max)
		return tg_report(TG_ESCAPED, "%ld threads used %.2f CPUs (allowed %.2f)", nthreads,
				 c / w, ratio_max);
	return tg_report(TG_BLOCKED, "%ld threads got only %.2f CPUs (allowed %.2f)", nthreads,
			 c / w, ratio_max);
}

static int flood(int fd, long mb)
{
	static char chunk[65536];
	long total = (long)mb << 20, done = 0;

	memset(chunk, 'A', sizeof chunk);
	chunk[sizeof chunk - 1] = '\n';
	while (done < total) {
		ssize_t w = write(fd, chunk, sizeof chunk);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return tg_report(TG_BLOCKED, "write failed after %ld bytes: %s", done,
					 tg_errname(errno));
		}
		done += w;
	}
	return tg_report(TG_ESCAPED, "wrote all %ld bytes to fd %d", done, fd);
}

static int a_output_flood(int argc, char **argv)
{
	return flood(1, argl(argc, argv, 1, 8));
}

static int a_output_flood_stderr(int argc, char **argv)
{
	return flood(2, argl(argc, argv, 1, 8));
}

/* RLIMIT_CORE must be 0 for good (hard limit): a crashing child must not
 * dump core. */
static int a_core_dump(int argc, char **argv)
{
	const char *dir = tg_arg(argc, argv, 1, "/tmp");
	struct rlimit rl;
	int st = 0;
	pid_t c;

	if (getrlimit(RLIMIT_CORE, &rl) == 0) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_CORE, &rl);
	}
	if (chdir(dir) < 0)
		return tg_report(TG_UNKNOWN, "chdir %s: %s", dir, tg_errname(errno));
	prctl(PR_SET_DUMPABLE, 1);
	c = fork();
	if (c == 0) {
		signal(SIGSEGV, SIG_DFL);
		raise(SIGSEGV);
		_exit(0);
	}
	if (c < 0)
		return tg_report(TG_UNKNOWN, "fork: %s", tg_errname(errno));
	waitpid(c, &st, 0);
	if (WIFSIGNALED(st) && WCOREDUMP(st)) {
		char p[64];
		snprintf(p, sizeof p, "core.%d", (int)c);
		unlink(p);
		unlink("core");
		return tg_report(TG_ESCAPED, "child dumped core (RLIMIT_CORE hard %llu)",
				 (unsigned long long)rl.rlim_max);
	}
	return tg_report(TG_BLOCKED, "no core dump (RLIMIT_CORE hard %llu)",
			 (unsigned long long)rl.rlim_max);
}

/* Output a toolgate-looking JSON result, then bytes that break naive
 * JSON embedding: the caller must still get exactly one valid object. */
static int a_json_forgery(int argc, char **argv)
{
	static const char forged[] =
		"{\"reason\":\"ok\",\"exit_code\":0,\"signal\":null,\"limits_hit\":[],"
		"\"stdout\":\"\",\"stderr\":\"\",\"forged\":true}\n";
	static const char junk[] = "\"}]}\\\n\x00\xff\xfe\xc3\x28\x1b[2J\x7f\r\t\"forged\":true}\n";

	(void)argc;
	(void)argv;
	if (write(1, forged, sizeof forged - 1) < 0 || write(1, junk, sizeof junk - 1) < 0 ||
	    write(2, forged, sizeof forged - 1) < 0 || write(2, junk, sizeof junk - 1) < 0)
		return tg_report(TG_UNKNOWN, "write: %s", tg_errname(errno));
	/* judged by the harness on toolgate's JSON */
	return tg_report(TG_ESCAPED, "\nwrote a forged result and JSON-breaking bytes to stdout and stderr");
}

/* ---- leftovers -------------------------------------------------------- */

#define tag_key(t) ((key_t)tg_tag_key(t))

static int a_leftover_spawn(int argc, char **argv)
{
	const char *tag, *tmp = tg_arg(argc, argv, 2, "/tmp"), *work = tg_arg(argc, argv, 3, "/work");
	char path[PATH_MAX], name[128];
	int made = 0, st;
	pid_t c;

	if (argc < 2)
		return tg_report(TG_UNKNOWN, "usage: leftover_spawn TAG [TMPDIR WORKDIR [LINGER_S]]");
	tag = argv[1];
	for (int i = 0; i < 2; i++) {
		int fd;
		snprintf(path, sizeof path, "%s/tgsec-left-%s", i ? work : tmp, tag);
		fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
		if (fd >= 0) {
			made++;
			close(fd);
		}
	}
	if (shmget(tag_key(tag), 4096, IPC_CREAT | 0666) >= 0)
		made++;
	snprintf(name, sizeof name, "tgsecleft-%s", tag);
	c = fork();
	if (c == 0) {
		setsid();
		if (fork() == 0) {
			/* Detached grandchild: rename, keep stdio open, sleep 30 s. */
			char *start = argv[-1], *end = argv[argc - 1] + strlen(argv[argc - 1]);
			struct timespec ts = { 30, 0 };
			signal(SIGHUP, SIG_IGN);
			signal(SIGTERM, SIG_IGN);
			prctl(PR_SET_NAME, "tgsecleft");
			if ((size_t)(end - start) > strlen(name)) {
				memset(start, 0, (size_t)(end - start));
				memcpy(start, name, strlen(name));
			}
			while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
				;
			_exit(0);
		}
		_exit(0);
	}
	if (c < 0)
		return tg_report(TG_UNKNOWN, "fork: %s", tg_errname(errno));
	waitpid(c, &st, 0);
	usleep(200000);	/* let the grandchild rename itself */
	if (argc > 4) {
		/* linger: keep the run alive so the wall-clock timeout ends it */
		struct timespec ts = { atol(argv[4]), 0 };
		while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
			;
	}
	if (made < 3)
		return tg_report(TG_UNKNOWN, "planted only %d of 3 leftovers", made);
	return tg_report(TG_ESCAPED, "planted files, shm key 0x%x and detached process %s",
			 (unsigned)tag_key(tag), name);
}

static int a_leftover_check(int argc, char **argv)
{
	const char *tag, *tmp = tg_arg(argc, argv, 2, "/tmp"), *work = tg_arg(argc, argv, 3, "/work");
	char path[PATH_MAX], found[512] = "", name[128], self[32];
	struct dirent *de;
	DIR *d;
	int id;

	if (argc < 2)
		return tg_report(TG_UNKNOWN, "usage: leftover_check TAG [TMPDIR WORKDIR] [clean]");
	tag = argv[1];
	for (int i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "%s/tgsec-left-%s", i ? work : tmp, tag);
		if (access(path, F_OK) == 0) {
			snprintf(found + strlen(found), sizeof found - strlen(found), "%.200s; ", path);
			if (argc > 4)
				unlink(path);
		}
	}
	id = shmget(tag_key(tag), 0, 0);
	if (id >= 0) {
		snprintf(found + strlen(found), sizeof found - strlen(found), "shm key 0x%x; ",
			 (unsigned)tag_key(tag));
		if (argc > 4)
			shmctl(id, IPC_RMID, NULL);
	}
	snprintf(name, sizeof name, "tgsecleft-%s", tag);
	snprintf(self, sizeof self, "%d", (int)getpid());
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		char buf[512];
		if (de->d_name[0] < '1' || de->d_name[0] > '9' || !strcmp(de->d_name, self))
			continue;
		snprintf(path, sizeof path, "/proc/%s/cmdline", de->d_name);
		if (tg_read_file(path, buf, sizeof buf) > 0 && strcmp(buf, name) == 0) {
			snprintf(found + strlen(found), sizeof found - strlen(found),
				 "process %s; ", de->d_name);
			if (argc > 4)
				kill((pid_t)atoi(de->d_name), SIGKILL);
		}
	}
	if (d)
		closedir(d);
	if (found[0])
		return tg_report(TG_ESCAPED, "leftovers of an earlier run: %s", found);
	return tg_report(TG_BLOCKED, "no leftovers of an earlier run");
}

const struct tg_attempt tg_res_attempts[] = {
	{ "fork_bomb", "resources", a_fork_bomb, "[MAX THRESH]  >THRESH children alive at once" },
	{ "thread_bomb", "resources", a_thread_bomb, "[MAX THRESH]  >THRESH threads alive at once" },
	{ "memory_balloon", "resources", a_memory_balloon, "[MiB]  touch 512 MiB" },
	{ "disk_fill", "resources", a_disk_fill, "[DIR MAX THRESH]  write >100 of 200 MiB" },
	{ "fd_exhaustion", "resources", a_fd_exhaustion, "[MAX THRESH]  open >300 fds" },
	{ "fd_inflight", "resources", a_fd_inflight, "[SECONDS]  hold >256 fds in flight over a unix socket until stdin closes" },
	{ "fd_inflight_amp", "resources", a_fd_inflight_amp, "[SENDERS SECONDS]  hold SENDERS x 253 fds in flight (senders asleep on full queues) until stdin closes" },
	{ "cpu_spin", "resources", a_cpu_spin, "[SECONDS]  spin past the timeout" },
	{ "cpu_quota", "resources", a_cpu_quota, "[SECONDS RATIO]  use more CPUs than allowed" },
	{ "output_flood", "resources", a_output_flood, "[MiB]  write 8 MiB to stdout" },
	{ "output_flood_stderr", "resources", a_output_flood_stderr, "[MiB]  write 8 MiB to stderr" },
	{ "core_dump", "resources", a_core_dump, "[DIR]  a crashing child dumps core" },
	{ "json_forgery", "output", a_json_forgery, "forged JSON result + bytes that break naive embedding" },
	{ "leftover_spawn", "leftovers", a_leftover_spawn, "TAG [TMP WORK]  plant files, shm, a detached process (0 = planted)" },
	{ "leftover_check", "leftovers", a_leftover_check, "TAG [TMP WORK] [clean]  find an earlier run's leftovers" },
	{ NULL, NULL, NULL, NULL },
};
