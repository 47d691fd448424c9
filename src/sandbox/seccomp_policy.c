/*
 * The seccomp-bpf policy of the sandbox, as data, and its compilation with
 * libseccomp. It is compiled at build time (tools/seccomp-gen.c writes the
 * programs into the library, see seccomp.c) and again by the unit tests,
 * which check that what the library embeds is what this file says.
 *
 * The policy is data (the tables below), in the order the filter checks it:
 * architecture first (anything but native x86_64/aarch64 entry points ends
 * the run: 32-bit int 0x80 and x32 calls are how filters get bypassed), then
 * the dangerous families, which end the whole sandbox and record the
 * syscall, then explicit errno answers where programs expect a soft
 * failure, then the allowlist; everything else gets ENOSYS.
 *
 * "End the sandbox and record" is SECCOMP_RET_USER_NOTIF: the calling
 * thread blocks in the kernel before the syscall runs, the parent reads the
 * syscall number from the listener and kills the pid namespace. A listener
 * is trustworthy where a SIGSYS handler (SECCOMP_RET_TRAP) is not: the
 * sandboxed code could replace the handler. If the parent is gone, a
 * notified call fails with ENOSYS, still never running.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

/* Calls that have no business in a sandbox and are the usual first step of
 * a kernel exploit or an escape: they end the run. */
static const char *const deadly[] = {
	"bpf", "perf_event_open", "userfaultfd",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"keyctl", "add_key", "request_key",
	"kexec_load", "kexec_file_load",
	"init_module", "finit_module", "delete_module",
	"mount", "umount2", "pivot_root", "chroot", "fsopen", "fsconfig",
	"fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
	"unshare", "setns",
	"clock_settime", "clock_adjtime", "settimeofday", "adjtimex",
	"reboot", "swapon", "swapoff", "acct", "quotactl", "quotactl_fd",
	"open_by_handle_at", "name_to_handle_at",
	"iopl", "ioperm", "uselib", "lookup_dcookie", "nfsservctl",
	"vhangup", "syslog", "kcmp", "fanotify_init",
	"move_pages", "migrate_pages", "process_madvise",
	"sethostname", "setdomainname",
};

/* Soft denials: programs probe these and cope with the errno. */
static const struct {
	const char *name;
	int err;
} soft[] = {
	{ "clone3", ENOSYS },    /* libc falls back to clone(), which we check */
	{ "seccomp", EPERM },
	{ "setgroups", EPERM },
	{ "sched_setscheduler", EPERM },
	{ "sched_setparam", EPERM },
	{ "sched_setattr", EPERM },
	{ "mbind", EPERM },
	{ "set_mempolicy", EPERM },
	{ "modify_ldt", EPERM },
	{ "memfd_secret", ENOSYS },
	{ "inotify_init", ENOSYS },
};

/* The allowlist: what ordinary programs (shells, coreutils, Python, gcc,
 * sqlite) use. Anything not here and not above gets ENOSYS. */
static const char *const allowed[] = {
	/* files */
	"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv",
	"pwritev", "preadv2", "pwritev2", "open", "openat", "openat2", "creat",
	"close", "close_range", "lseek", "stat", "fstat", "lstat", "newfstatat",
	"statx", "statfs", "fstatfs", "access", "faccessat", "faccessat2",
	"readlink", "readlinkat", "getdents", "getdents64", "getcwd", "chdir",
	"fchdir", "rename", "renameat", "renameat2", "mkdir", "mkdirat", "rmdir",
	"link", "linkat", "unlink", "unlinkat", "symlink", "symlinkat", "chmod",
	"fchmod", "fchmodat", "chown", "fchown", "lchown", "fchownat", "umask",
	"truncate", "ftruncate", "fallocate", "fsync", "fdatasync",
	"sync_file_range", "sync", "syncfs", "flock", "fcntl", "dup", "dup2",
	"dup3", "pipe", "pipe2", "sendfile", "splice", "tee", "vmsplice",
	"copy_file_range", "utime", "utimes", "utimensat", "futimesat",
	"mknod", "mknodat", "fadvise64", "readahead", "getxattr", "lgetxattr",
	"fgetxattr", "listxattr", "llistxattr", "flistxattr", "setxattr",
	"lsetxattr", "fsetxattr", "removexattr", "lremovexattr", "fremovexattr",
	"inotify_init1", "inotify_add_watch", "inotify_rm_watch",
	"memfd_create", "ioctl",
	/* memory */
	"brk", "mmap", "munmap", "mremap", "mprotect", "msync", "mincore",
	"madvise", "mlock", "mlock2", "munlock", "mlockall", "munlockall",
	"get_mempolicy", "membarrier", "pkey_alloc", "pkey_free",
	"pkey_mprotect", "map_shadow_stack",
	/* processes and threads */
	"fork", "vfork", "execve", "execveat", "exit", "exit_group", "wait4",
	"waitid", "kill", "tkill", "tgkill", "getpid", "getppid", "gettid",
	"getpgid", "setpgid", "getpgrp", "getsid", "setsid", "set_tid_address",
	"set_robust_list", "get_robust_list", "futex", "futex_waitv", "rseq",
	"arch_prctl", "prctl", "sched_yield", "sched_getaffinity",
	"sched_setaffinity", "sched_getparam", "sched_getscheduler",
	"sched_get_priority_max", "sched_get_priority_min",
	"sched_rr_get_interval", "sched_getattr", "getpriority", "setpriority",
	"ioprio_get", "ioprio_set", "getrlimit", "setrlimit",
	"getrusage", "times", "capget", "capset", "pidfd_open",
	"pidfd_send_signal", "restart_syscall", "getcpu",
	/* identity (only ids mapped in the sandbox's user namespace exist) */
	"getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid",
	"getgroups", "setuid", "setgid", "setreuid", "setregid", "setresuid",
	"setresgid", "setfsuid", "setfsgid",
	/* signals and time */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigpending",
	"rt_sigtimedwait", "rt_sigqueueinfo", "rt_tgsigqueueinfo",
	"rt_sigsuspend", "sigaltstack", "pause", "nanosleep", "clock_nanosleep",
	"clock_gettime", "clock_getres", "gettimeofday", "time", "alarm",
	"getitimer", "setitimer", "timer_create", "timer_settime",
	"timer_gettime", "timer_getoverrun", "timer_delete", "timerfd_create",
	"timerfd_settime", "timerfd_gettime",
	/* events */
	"poll", "ppoll", "select", "pselect6", "epoll_create", "epoll_create1",
	"epoll_ctl", "epoll_wait", "epoll_pwait", "epoll_pwait2", "eventfd",
	"eventfd2", "signalfd", "signalfd4",
	/* sockets (families checked below) */
	"connect", "accept", "accept4", "bind", "listen", "sendto", "recvfrom",
	"sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown",
	"getsockname", "getpeername", "setsockopt", "getsockopt",
	/* System V and POSIX IPC: the sandbox has its own IPC namespace */
	"shmget", "shmat", "shmdt", "shmctl", "semget", "semop", "semctl",
	"semtimedop", "msgget", "msgsnd", "msgrcv", "msgctl", "mq_open",
	"mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
	"mq_getsetattr",
	/* misc */
	"uname", "sysinfo", "getrandom",
	/* landlock: a process may restrict itself further */
	"landlock_create_ruleset", "landlock_add_rule", "landlock_restrict_self",
};

#define NS_FLAGS (CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | \
		  CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP)

static int rule(scmp_filter_ctx ctx, uint32_t action, const char *name,
		unsigned n, const struct scmp_arg_cmp *cmp, struct tg_error *err)
{
	int nr = seccomp_syscall_resolve_name(name);
	int rc;

	if (nr == __NR_SCMP_ERROR)
		return 0; /* unknown to this libseccomp: the default (ENOSYS) covers it */
	if (action == SCMP_ACT_ERRNO(ENOSYS))
		return 0; /* listed for the reader; libseccomp refuses the default */
	rc = seccomp_rule_add_array(ctx, action, nr, n, cmp);
	if (rc < 0 && rc != -EEXIST)
		return tg_error_sys(err, -rc, "seccomp rule for %s", name);
	return 0;
}

static int add_checked_rules(scmp_filter_ctx ctx, uint32_t die,
			     struct tg_error *err)
{
	/* clone: threads and fork yes, new namespaces never. */
	struct scmp_arg_cmp no_ns = SCMP_A0(SCMP_CMP_MASKED_EQ, NS_FLAGS, 0);
	static const int families[] = { AF_UNIX, AF_INET, AF_INET6 };
	unsigned i;

	/* Several masked comparisons cannot express "any bit of NS_FLAGS", so
	 * each namespace flag gets its own deadly rule. */
	if (rule(ctx, SCMP_ACT_ALLOW, "clone", 1, &no_ns, err) < 0)
		return -1;
	for (i = 0; i < 32; i++) {
		unsigned long bit = 1ul << i;
		struct scmp_arg_cmp one = SCMP_A0(SCMP_CMP_MASKED_EQ, bit, bit);

		if (!(NS_FLAGS & bit))
			continue;
		if (rule(ctx, die, "clone", 1, &one, err) < 0)
			return -1;
	}
	/* socket: unix, inet and inet6; netlink only for routing queries
	 * (getaddrinfo uses it); everything else, vsock and packet included,
	 * EAFNOSUPPORT. SOCK_RAW needs CAP_NET_RAW, which is gone. */
	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		struct scmp_arg_cmp f = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)families[i]);

		if (rule(ctx, SCMP_ACT_ALLOW, "socket", 1, &f, err) < 0 ||
		    rule(ctx, SCMP_ACT_ALLOW, "socketpair", 1, &f, err) < 0)
			return -1;
	}
	{
		struct scmp_arg_cmp nl[2] = {
			SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
			SCMP_A2(SCMP_CMP_EQ, 0 /* NETLINK_ROUTE */),
		};
		struct scmp_arg_cmp nl_other[2] = {
			SCMP_A0(SCMP_CMP_EQ, AF_NETLINK),
			SCMP_A2(SCMP_CMP_NE, 0),
		};
		if (rule(ctx, SCMP_ACT_ALLOW, "socket", 2, nl, err) < 0 ||
		    rule(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", 2, nl_other, err) < 0)
			return -1;
	}
	/* Every other family the kernel knows answers EAFNOSUPPORT, as on a
	 * kernel built without it; beyond AF_MAX the default (ENOSYS). */
	for (i = 0; i < 46 /* AF_MAX in Linux 6.x */; i++) {
		struct scmp_arg_cmp f = SCMP_A0(SCMP_CMP_EQ, (scmp_datum_t)i);

		if (i == AF_UNIX || i == AF_INET || i == AF_INET6 || i == AF_NETLINK)
			continue;
		if (rule(ctx, SCMP_ACT_ERRNO(EAFNOSUPPORT), "socket", 1, &f, err) < 0)
			return -1;
	}
	/* prlimit64 on oneself only: the command shares a uid with the
	 * sandbox's init and could otherwise starve it (RLIMIT_CPU 0). */
	{
		struct scmp_arg_cmp self = SCMP_A0(SCMP_CMP_EQ, 0);

		if (rule(ctx, SCMP_ACT_ALLOW, "prlimit64", 1, &self, err) < 0)
			return -1;
	}
	/* personality: query and PER_LINUX only; no READ_IMPLIES_EXEC or
	 * ADDR_NO_RANDOMIZE. */
	{
		struct scmp_arg_cmp p0 = SCMP_A0(SCMP_CMP_EQ, PER_LINUX);
		struct scmp_arg_cmp pq = SCMP_A0(SCMP_CMP_EQ, 0xffffffffu);

		if (rule(ctx, SCMP_ACT_ALLOW, "personality", 1, &p0, err) < 0 ||
		    rule(ctx, SCMP_ACT_ALLOW, "personality", 1, &pq, err) < 0)
			return -1;
	}
	return 0;
}

static scmp_filter_ctx build(int kill_action, struct tg_error *err)
{
	uint32_t die = kill_action ? SCMP_ACT_KILL_PROCESS : SCMP_ACT_NOTIFY;
	scmp_filter_ctx ctx;
	unsigned i;
	int rc;

	ctx = seccomp_init(SCMP_ACT_ERRNO(ENOSYS));
	if (!ctx) {
		tg_error_set(err, TG_ERR_NOMEM, "seccomp_init failed");
		return NULL;
	}
	/* Foreign entry points (i386 int 0x80, x32) end the whole sandbox
	 * like the deadly families; the listener reports arch and number. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, die);
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	/* A binary tree instead of a linear list: every syscall pays log(n)
	 * instead of n, and so does the kernel, which runs the filter for each
	 * syscall number when it is attached to fill its action cache (with a
	 * linear 400-instruction filter that alone cost 0.3 ms a run). */
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	if (rc < 0) {
		tg_error_sys(err, -rc, "seccomp attributes");
		goto fail;
	}
	for (i = 0; i < sizeof(deadly) / sizeof(deadly[0]); i++)
		if (rule(ctx, die, deadly[i], 0, NULL, err) < 0)
			goto fail;
	for (i = 0; i < sizeof(soft) / sizeof(soft[0]); i++)
		if (rule(ctx, SCMP_ACT_ERRNO((uint32_t)soft[i].err), soft[i].name,
			 0, NULL, err) < 0)
			goto fail;
	if (add_checked_rules(ctx, die, err) < 0)
		goto fail;
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (rule(ctx, SCMP_ACT_ALLOW, allowed[i], 0, NULL, err) < 0)
			goto fail;
	return ctx;
fail:
	seccomp_release(ctx);
	return NULL;
}

/* A second, tiny filter for the ioctls that inject input into a terminal.
 * libseccomp cannot express "allow ioctl except these commands" in one
 * filter (an unconditional allow wins), but stacked filters take the most
 * restrictive answer, so this one's EPERM beats the main filter's allow.
 * The command is an int: compare its low 32 bits only, or a caller sets
 * high bits to slip TIOCSTI past (the kernel truncates them). */
static scmp_filter_ctx build_ioctl(struct tg_error *err)
{
	struct scmp_arg_cmp sti = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI);
	struct scmp_arg_cmp lnx = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX);
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	if (!ctx) {
		tg_error_set(err, TG_ERR_NOMEM, "seccomp_init failed");
		return NULL;
	}
	/* Foreign architectures are the main filter's to end (with a
	 * notification); a kill here would win and hide the syscall. */
	if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0 ||
	    seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ALLOW) < 0 ||
	    rule(ctx, SCMP_ACT_ERRNO(EPERM), "ioctl", 1, &sti, err) < 0 ||
	    rule(ctx, SCMP_ACT_ERRNO(EPERM), "ioctl", 1, &lnx, err) < 0) {
		seccomp_release(ctx);
		return NULL;
	}
	return ctx;
}

/* Export ctx's BPF into a malloc'd sock_fprog. libseccomp 2.5 can only
 * export to a file descriptor, so a memfd carries it. */
static struct sock_fprog *export_prog(scmp_filter_ctx ctx, struct tg_error *err)
{
	struct sock_fprog *prog = NULL;
	struct sock_filter *insns = NULL;
	off_t size;
	int fd, rc;

	fd = memfd_create("tg-seccomp", MFD_CLOEXEC);
	if (fd < 0) {
		tg_error_sys(err, errno, "memfd_create");
		return NULL;
	}
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0) {
		tg_error_sys(err, -rc, "seccomp_export_bpf");
		goto out;
	}
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % (off_t)sizeof(struct sock_filter) != 0 ||
	    size / (off_t)sizeof(struct sock_filter) > BPF_MAXINSNS) {
		tg_error_set(err, TG_ERR_SYSTEM, "seccomp program has a bad size (%lld)",
			     (long long)size);
		goto out;
	}
	insns = malloc((size_t)size);
	prog = malloc(sizeof(*prog));
	if (!insns || !prog) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	if (pread(fd, insns, (size_t)size, 0) != size) {
		tg_error_sys(err, errno, "reading seccomp program");
		goto out;
	}
	prog->len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
	prog->filter = insns;
	insns = NULL;
	close(fd);
	return prog;
out:
	free(insns);
	free(prog);
	close(fd);
	return NULL;
}

struct sock_fprog *seccomp_policy_compile(int which, struct tg_error *err)
{
	struct sock_fprog *prog = NULL;
	scmp_filter_ctx ctx;

	ctx = which == SB_SECCOMP_IOCTL ? build_ioctl(err) : build(which == SB_SECCOMP_MAIN_KILL, err);
	if (ctx) {
		prog = export_prog(ctx, err);
		seccomp_release(ctx);
	}
	return prog;
}
