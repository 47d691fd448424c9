/*
 * tg-escape, process family: see, signal, trace or read processes outside,
 * enter or create namespaces, gain privilege through a setuid binary,
 * inject keystrokes into the caller's terminal, steal fds with pidfd.
 */
#include "tg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#define VICTIM_PREFIX "tgsecmark-"

static pid_t parse_pid(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	return (*s && !*end && v > 0 && v < INT32_MAX) ? (pid_t)v : -1;
}

/* cmdline of pid with NULs turned into spaces; -1 if unreadable. */
static long read_cmdline(const char *pid, char *buf, size_t n)
{
	char path[300];
	long len;

	snprintf(path, sizeof path, "/proc/%s/cmdline", pid);
	len = tg_read_file(path, buf, n);
	for (long i = 0; i < len; i++)
		if (buf[i] == '\0')
			buf[i] = ' ';
	return len;
}

int tg_helper_victim(int argc, char **argv)
{
	unsigned secs = argc > 2 ? (unsigned)atoi(argv[2]) : 120;

	(void)argv;
	alarm(secs ? secs : 120);
	for (;;)
		pause();
}

static int a_see_process(int argc, char **argv)
{
	char needle[256], buf[4096], self[32];
	struct dirent *de;
	DIR *d;
	int seen = 0;

	if (argc < 2)
		return tg_report(TG_UNKNOWN, "usage: see_process TAG [PID]");
	/* The victim's argv holds "tgsecmark-TAG"; our own argv only "TAG". */
	snprintf(needle, sizeof needle, VICTIM_PREFIX "%s", argv[1]);
	snprintf(self, sizeof self, "%d", (int)getpid());
	if (argc > 2 && read_cmdline(argv[2], buf, sizeof buf) >= 0 && strstr(buf, needle))
		return tg_report(TG_ESCAPED, "/proc/%s is the outside marker process", argv[2]);
	d = opendir("/proc");
	if (!d)
		return tg_report(TG_BLOCKED, "opendir /proc: %s", tg_errname(errno));
	while ((de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' || strcmp(de->d_name, self) == 0)
			continue;
		seen++;
		if (read_cmdline(de->d_name, buf, sizeof buf) > 0 && strstr(buf, needle)) {
			closedir(d);
			return tg_report(TG_ESCAPED, "found outside marker process as pid %s",
					 de->d_name);
		}
	}
	closedir(d);
	return tg_report(TG_BLOCKED, "marker process not visible (%d other pids visible)", seen);
}

static int a_kill_process(int argc, char **argv)
{
	pid_t pid;
	long pfd;
	int e1, e2 = 0;

	if (argc < 2 || (pid = parse_pid(argv[1])) < 0)
		return tg_report(TG_UNKNOWN, "usage: kill_process PID");
	pfd = syscall(SYS_pidfd_open, pid, 0);
	if (pfd >= 0) {
		if (syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0) == 0)
			return tg_report(TG_ESCAPED, "pidfd_send_signal(SIGKILL) to pid %d succeeded", pid);
		e2 = errno;
	} else {
		e2 = errno;
	}
	if (kill(pid, SIGKILL) == 0)
		return tg_report(TG_ESCAPED, "kill(%d, SIGKILL) succeeded", pid);
	e1 = errno;
	return tg_report(TG_BLOCKED, "kill(%d): %s; pidfd: %s", pid, tg_errname(e1), tg_errname(e2));
}

static int a_ptrace_attach(int argc, char **argv)
{
	pid_t pid;
	int st;

	if (argc < 2 || (pid = parse_pid(argv[1])) < 0)
		return tg_report(TG_UNKNOWN, "usage: ptrace_attach PID");
	if (ptrace(PTRACE_ATTACH, pid, NULL, NULL) < 0)
		return tg_report(TG_BLOCKED, "PTRACE_ATTACH %d: %s", pid, tg_errname(errno));
	waitpid(pid, &st, __WALL);
	ptrace(PTRACE_DETACH, pid, NULL, NULL);
	return tg_report(TG_ESCAPED, "attached to pid %d with ptrace (detached again)", pid);
}

static int a_process_vm_readv(int argc, char **argv)
{
	char maps[256], path[64], buf[32];
	unsigned long addr = (unsigned long)(uintptr_t)&tg_current;
	struct iovec l, r;
	pid_t pid;
	ssize_t n;

	if (argc < 2 || (pid = parse_pid(argv[1])) < 0)
		return tg_report(TG_UNKNOWN, "usage: process_vm_readv PID");
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	if (tg_read_file(path, maps, sizeof maps) > 0)
		addr = strtoul(maps, NULL, 16);
	l.iov_base = buf;
	l.iov_len = sizeof buf;
	r.iov_base = (void *)(uintptr_t)addr;
	r.iov_len = sizeof buf;
	n = process_vm_readv(pid, &l, 1, &r, 1, 0);
	if (n < 0)
		return tg_report(TG_BLOCKED, "process_vm_readv(%d, 0x%lx): %s", pid, addr,
				 tg_errname(errno));
	return tg_report(TG_ESCAPED, "read %zd bytes of pid %d's memory at 0x%lx", n, pid, addr);
}

static int a_process_vm_writev(int argc, char **argv)
{
	pid_t pid = argc > 1 ? parse_pid(argv[1]) : getpid();
	long r;

	/* Invalid flags: the kernel returns EINVAL before touching anything. */
	r = syscall(SYS_process_vm_writev, pid > 0 ? pid : getpid(), NULL, 0, NULL, 0, 1UL);
	return tg_syscall_verdict("process_vm_writev(flags=1)", r);
}

static int a_setns(int argc, char **argv)
{
	static const char *const types[] = { "mnt", "net", "uts", "ipc", "pid", "cgroup",
					     "time", "user" };
	char path[64], errs[512] = "";

	(void)argc;
	(void)argv;
	for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
		int fd;
		snprintf(path, sizeof path, "/proc/1/ns/%s", types[i]);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			snprintf(path, sizeof path, "/proc/self/ns/%s", types[i]);
			fd = open(path, O_RDONLY | O_CLOEXEC);
		}
		if (fd < 0) {
			snprintf(errs + strlen(errs), sizeof errs - strlen(errs), "%s: open %s; ",
				 types[i], tg_errname(errno));
			continue;
		}
		if (setns(fd, 0) == 0)
			return tg_report(TG_ESCAPED, "setns(%s) succeeded", path);
		snprintf(errs + strlen(errs), sizeof errs - strlen(errs), "%s: %s; ",
			 types[i], tg_errname(errno));
		close(fd);
	}
	return tg_report(TG_BLOCKED, "%s", errs);
}

/* The sandbox's PID 1 is a copy of the caller's memory (forked, not
 * exec'd), dumpable only while toolgate takes its descriptors, before the
 * command exists: its maps, memory and descriptors must be closed to us.
 * Outside, PID (the harness's victim, which it may read). */
static int a_proc1_mem(int argc, char **argv)
{
	static char maps[1 << 16];
	char path[64], link[256], errs[256] = "";
	pid_t pid = argc > 1 ? parse_pid(argv[1]) : 1;
	unsigned long lo, hi;
	long n;
	int fd;

	if (pid < 0)
		return tg_report(TG_UNKNOWN, "usage: proc1_mem [PID]");
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	n = tg_read_file(path, maps, sizeof maps - 1);
	if (n <= 0) {
		snprintf(errs, sizeof errs, "maps: %s; ", n < 0 ? tg_errname(errno) : "empty");
	} else {
		char perms[8], byte[64];

		maps[n] = '\0';
		if (sscanf(maps, "%lx-%lx %7s", &lo, &hi, perms) != 3)
			return tg_report(TG_UNKNOWN, "/proc/1/maps: unexpected \"%.40s\"", maps);
		snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0 && pread(fd, byte, sizeof byte, (off_t)lo) > 0)
			return tg_report(TG_ESCAPED, "read pid %d's memory at %#lx through %s",
					 (int)pid, lo, path);
		return tg_report(TG_ESCAPED, "read /proc/%d/maps (%ld bytes; mem: %s)", (int)pid, n,
				 fd < 0 ? tg_errname(errno) : "no read");
	}
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		return tg_report(TG_ESCAPED, "opened %s", path);
	snprintf(errs + strlen(errs), sizeof errs - strlen(errs), "mem: %s; ", tg_errname(errno));
	for (int i = 0; i < 64; i++) {
		snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)pid, i);
		if (readlink(path, link, sizeof link - 1) >= 0)
			return tg_report(TG_ESCAPED, "followed %s", path);
	}
	return tg_report(TG_BLOCKED, "%sfd: %s", errs, tg_errname(errno));
}

static int a_unshare_user(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (unshare(CLONE_NEWUSER) < 0)
		return tg_report(TG_BLOCKED, "unshare(CLONE_NEWUSER): %s", tg_errname(errno));
	return tg_report(TG_ESCAPED, "unshare(CLONE_NEWUSER) succeeded");
}

static int reap(long pid)
{
	int st = 0;

	if (waitpid((pid_t)pid, &st, __WALL) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static int a_clone_newuser(int argc, char **argv)
{
	long pid;

	(void)argc;
	(void)argv;
	pid = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD), NULL, NULL, NULL, 0UL);
	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return tg_report(TG_BLOCKED, "clone(CLONE_NEWUSER): %s", tg_errname(errno));
	reap(pid);
	return tg_report(TG_ESCAPED, "clone(CLONE_NEWUSER) made child %ld", pid);
}

struct tg_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal;
	uint64_t stack, stack_size, tls, set_tid, set_tid_size, cgroup;
};

static int a_clone3_ns(int argc, char **argv)
{
	struct tg_clone_args ca;
	long pid;

	(void)argc;
	(void)argv;
	memset(&ca, 0, sizeof ca);
	ca.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWUTS;
	ca.exit_signal = SIGCHLD;
	pid = syscall(SYS_clone3, &ca, sizeof ca);
	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return tg_report(TG_BLOCKED, "clone3(NEWUSER|NEWNS|NEWUTS): %s", tg_errname(errno));
	reap(pid);
	return tg_report(TG_ESCAPED, "clone3 with namespace flags made child %ld", pid);
}

static int a_setuid_binary(int argc, char **argv)
{
	uid_t r, e, s;

	(void)argc;
	(void)argv;
	getresuid(&r, &e, &s);
	if (e == 0 || r == 0 || s == 0)
		return tg_report(TG_ESCAPED, "running with uid %u euid %u suid %u (root)", r, e, s);
	if (setuid(0) == 0)
		return tg_report(TG_ESCAPED, "setuid(0) succeeded");
	return tg_report(TG_BLOCKED, "uid %u euid %u: the setuid bit gave no privilege", r, e);
}

static int a_tiocsti(int argc, char **argv)
{
	char errs[256] = "";
	char c = '#';
	int fd, ttys = 0;

	(void)argc;
	(void)argv;
	for (fd = 0; fd < 64; fd++) {
		if (fcntl(fd, F_GETFD) < 0)
			continue;
		if (ioctl(fd, TIOCSTI, &c) == 0)
			return tg_report(TG_ESCAPED, "TIOCSTI on fd %d injected a keystroke", fd);
		if (errno != ENOTTY) {
			ttys++;
			snprintf(errs + strlen(errs), sizeof errs - strlen(errs), "fd %d: %s; ",
				 fd, tg_errname(errno));
		}
	}
	fd = open("/dev/tty", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		if (ioctl(fd, TIOCSTI, &c) == 0)
			return tg_report(TG_ESCAPED, "TIOCSTI on /dev/tty injected a keystroke");
		snprintf(errs + strlen(errs), sizeof errs - strlen(errs), "/dev/tty: %s",
			 tg_errname(errno));
	} else {
		snprintf(errs + strlen(errs), sizeof errs - strlen(errs), "open /dev/tty: %s",
			 tg_errname(errno));
	}
	return tg_report(TG_BLOCKED, "no terminal to inject into (%d fds failed not ENOTTY) %s",
			 ttys, errs);
}

/* A handle on the caller's terminal: reading it steals keystrokes, writing
 * termios changes the user's terminal. */
static int a_tty_handle(int argc, char **argv)
{
	char name[128];

	(void)argc;
	(void)argv;
	for (int fd = 0; fd < 64; fd++) {
		if (fcntl(fd, F_GETFD) < 0 || !isatty(fd))
			continue;
		if (ttyname_r(fd, name, sizeof name) != 0)
			snprintf(name, sizeof name, "?");
		return tg_report(TG_ESCAPED, "fd %d is a terminal (%s)", fd, name);
	}
	int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd >= 0)
		return tg_report(TG_ESCAPED, "/dev/tty opens: we have a controlling terminal");
	return tg_report(TG_BLOCKED, "no fd is a terminal, /dev/tty: %s", tg_errname(errno));
}

static int a_nnp_off(int argc, char **argv)
{
	int r = prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0);

	(void)argc;
	(void)argv;
	if (r == 1)
		return tg_report(TG_BLOCKED, "no_new_privs is set");
	if (prctl(PR_SET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0 || r == 0)
		return tg_report(TG_ESCAPED, "no_new_privs is not set (setuid/file caps would work)");
	return tg_report(TG_UNKNOWN, "PR_GET_NO_NEW_PRIVS: %s", tg_errname(errno));
}

/* Any capability left in any set of /proc/self/status. */
static int a_capabilities(int argc, char **argv)
{
	static const char *const sets[] = { "CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:" };
	char buf[8192], left[256] = "";

	(void)argc;
	(void)argv;
	if (tg_read_file("/proc/self/status", buf, sizeof buf) < 0)
		return tg_report(TG_UNKNOWN, "read /proc/self/status: %s", tg_errname(errno));
	for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++) {
		char *p = strstr(buf, sets[i]);
		unsigned long long v;
		if (!p)
			continue;
		v = strtoull(p + strlen(sets[i]), NULL, 16);
		if (v)
			snprintf(left + strlen(left), sizeof left - strlen(left), "%s %llx ", sets[i], v);
	}
	if (left[0])
		return tg_report(TG_ESCAPED, "capabilities left: %s", left);
	return tg_report(TG_BLOCKED, "every capability set is empty");
}

static int a_seccomp_mode(int argc, char **argv)
{
	char buf[8192], *p;

	(void)argc;
	(void)argv;
	if (tg_read_file("/proc/self/status", buf, sizeof buf) < 0)
		return tg_report(TG_UNKNOWN, "read /proc/self/status: %s", tg_errname(errno));
	p = strstr(buf, "Seccomp:");
	if (!p)
		return tg_report(TG_UNKNOWN, "no Seccomp: line");
	if (atoi(p + 8) == 2)
		return tg_report(TG_BLOCKED, "seccomp filter mode is on");
	return tg_report(TG_ESCAPED, "no seccomp filter (Seccomp: %d)", atoi(p + 8));
}

/* Is host uid 0 mapped into our user namespace? */
static int a_uid_map_root(int argc, char **argv)
{
	char buf[4096], *line;
	unsigned long in, out, count;

	(void)argc;
	(void)argv;
	if (tg_read_file("/proc/self/uid_map", buf, sizeof buf) < 0)
		return tg_report(TG_UNKNOWN, "read uid_map: %s", tg_errname(errno));
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		if (sscanf(line, "%lu %lu %lu", &in, &out, &count) == 3 && out == 0 && count > 0)
			return tg_report(TG_ESCAPED, "host root is mapped (uid_map: %lu %lu %lu), we are uid %u",
					 in, out, count, (unsigned)getuid());
	if (getuid() == 0 || geteuid() == 0)
		return tg_report(TG_ESCAPED, "running as uid 0");
	return tg_report(TG_BLOCKED, "host root not mapped, uid %u", (unsigned)getuid());
}

static int a_tioclinux(int argc, char **argv)
{
	char sub = 12; /* TIOCL_GETFGCONSOLE: read-only */
	int r;

	(void)argc;
	(void)argv;
	r = ioctl(0, TIOCLINUX, &sub);
	return tg_syscall_verdict("ioctl(0, TIOCLINUX, GETFGCONSOLE)", r);
}

static int a_tiocsti_highbits(int argc, char **argv)
{
	char c = '#';
	long r;

	(void)argc;
	(void)argv;
	/* ioctl's cmd is an unsigned int: the kernel drops bits 32..63. */
	r = syscall(SYS_ioctl, 0, (1UL << 32) | TIOCSTI, &c);
	return tg_syscall_verdict("ioctl(0, (1<<32)|TIOCSTI)", r);
}

static int a_tioclinux_highbits(int argc, char **argv)
{
	char sub = 12;
	long r;

	(void)argc;
	(void)argv;
	r = syscall(SYS_ioctl, 0, (1UL << 32) | TIOCLINUX, &sub);
	return tg_syscall_verdict("ioctl(0, (1<<32)|TIOCLINUX)", r);
}

static int a_unshare_mount(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	if (unshare(CLONE_NEWNS) < 0)
		return tg_report(TG_BLOCKED, "unshare(CLONE_NEWNS): %s", tg_errname(errno));
	return tg_report(TG_ESCAPED, "unshare(CLONE_NEWNS) succeeded");
}

static int a_clone_newnet(int argc, char **argv)
{
	long pid;

	(void)argc;
	(void)argv;
	pid = syscall(SYS_clone, (unsigned long)(CLONE_NEWNET | SIGCHLD), NULL, NULL, NULL, 0UL);
	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return tg_report(TG_BLOCKED, "clone(CLONE_NEWNET): %s", tg_errname(errno));
	reap(pid);
	return tg_report(TG_ESCAPED, "clone(CLONE_NEWNET) made child %ld", pid);
}

static int a_pidfd_getfd(int argc, char **argv)
{
	pid_t pid = argc > 1 ? parse_pid(argv[1]) : -1;
	long pfd = -1, fd;
	const char *whose = "outside pid";

	if (pid > 0)
		pfd = syscall(SYS_pidfd_open, pid, 0);
	if (pfd < 0) {
		whose = "own pid";
		pfd = syscall(SYS_pidfd_open, getpid(), 0);
	}
	if (pfd < 0)
		return tg_report(TG_UNKNOWN, "pidfd_open: %s", tg_errname(errno));
	fd = syscall(SYS_pidfd_getfd, pfd, 1, 0);
	if (fd < 0)
		return tg_report(TG_BLOCKED, "pidfd_getfd(%s, 1): %s", whose, tg_errname(errno));
	return tg_report(TG_ESCAPED, "pidfd_getfd took fd 1 of the %s as fd %ld", whose, fd);
}

const struct tg_attempt tg_proc_attempts[] = {
	{ "see_process", "process", a_see_process, "TAG [PID]  find the outside tgsecmark-TAG process" },
	{ "kill_process", "process", a_kill_process, "PID  kill an outside process" },
	{ "ptrace_attach", "process", a_ptrace_attach, "PID  PTRACE_ATTACH an outside process" },
	{ "process_vm_readv", "process", a_process_vm_readv, "PID  read another process's memory" },
	{ "process_vm_writev", "process", a_process_vm_writev, "[PID]  process_vm_writev, invalid flags" },
	{ "setns", "process", a_setns, "setns into /proc/1/ns/*" },
	{ "proc1_mem", "process", a_proc1_mem, "[PID]  read PID 1's memory (/proc/1/maps, mem, fd)" },
	{ "unshare_user", "process", a_unshare_user, "unshare(CLONE_NEWUSER)" },
	{ "clone_newuser", "process", a_clone_newuser, "clone(CLONE_NEWUSER)" },
	{ "clone3_ns", "process", a_clone3_ns, "clone3 with namespace flags" },
	{ "setuid_binary", "process", a_setuid_binary, "run as a setuid-root copy: euid 0?" },
	{ "tiocsti", "process", a_tiocsti, "inject a keystroke into the caller's terminal" },
	{ "tioclinux", "process", a_tioclinux, "ioctl TIOCLINUX reaches the tty layer" },
	{ "pidfd_getfd", "process", a_pidfd_getfd, "[PID]  steal an fd with pidfd_getfd" },
	{ "nnp_off", "process", a_nnp_off, "no_new_privs not set" },
	{ "capabilities", "process", a_capabilities, "any capability left in any set" },
	{ "seccomp_mode", "process", a_seccomp_mode, "no seccomp filter on us" },
	{ "uid_map_root", "process", a_uid_map_root, "host uid 0 mapped in, or running as 0" },
	{ "tty_handle", "process", a_tty_handle, "any fd on the caller's terminal" },
	{ "tiocsti_highbits", "process", a_tiocsti_highbits, "TIOCSTI with the upper 32 bits of cmd set" },
	{ "tioclinux_highbits", "process", a_tioclinux_highbits, "TIOCLINUX with the upper 32 bits of cmd set" },
	{ "unshare_mount", "process", a_unshare_mount, "unshare(CLONE_NEWNS)" },
	{ "clone_newnet", "process", a_clone_newnet, "clone(CLONE_NEWNET)" },
	{ NULL, NULL, NULL, NULL },
};
