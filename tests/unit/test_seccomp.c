/*
 * Unit tests: the seccomp policy itself, loaded (kill variant) into a
 * forked child, checked call by call.
 */
#include <errno.h>
#include <linux/audit.h>
#include <stdio.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"
#include "unit.h"

/* What the library embeds (compiled at build time) is what the policy in
 * seccomp_policy.c compiles to now. */
static int embedded_matches_policy(void)
{
	struct tg_error err;
	int w;

	for (w = SB_SECCOMP_MAIN; w <= SB_SECCOMP_IOCTL; w++) {
		const struct sock_fprog *e = seccomp_program(w, &err);
		struct sock_fprog *c = seccomp_policy_compile(w, &err);

		CHECK(e && c);
		CHECK(e->len == c->len && e->len > 5 && e->len < BPF_MAXINSNS);
		CHECK(memcmp(e->filter, c->filter, e->len * sizeof(struct sock_filter)) == 0);
		free(c->filter);
		free(c);
	}
	CHECK(seccomp_program(SB_SECCOMP_MAIN, &err)->len > 50);
	return 0;
}

/* Run fn under the kill-variant filter; return its wait status. */
static int under_filter(int (*fn)(void))
{
	struct tg_error err;
	const struct sock_fprog *prog = seccomp_program(SB_SECCOMP_MAIN_KILL, &err);
	const struct sock_fprog *ioctl_prog = seccomp_program(SB_SECCOMP_IOCTL, &err);
	pid_t pid;
	int st;

	if (!prog || !ioctl_prog)
		return -1;
	pid = fork();
	if (pid == 0) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, ioctl_prog) < 0 ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) < 0)
			_exit(99);
		_exit(fn());
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return st;
}

static int soft_denials_fn(void)
{
	/* allowed */
	if (syscall(SYS_getpid) <= 0)
		return 1;
	/* socket families */
	if (socket(AF_PACKET, SOCK_RAW, 0) >= 0 || errno != EAFNOSUPPORT)
		return 2;
	if (socket(40 /* AF_VSOCK */, SOCK_STREAM, 0) >= 0 || errno != EAFNOSUPPORT)
		return 3;
	if (socket(AF_NETLINK, SOCK_RAW, 9 /* NETLINK_AUDIT */) >= 0 || errno != EAFNOSUPPORT)
		return 4;
	if (socket(AF_NETLINK, SOCK_RAW, 0 /* NETLINK_ROUTE */) < 0)
		return 11;
	/* a family with high bits set: the kernel would truncate it to
	 * AF_PACKET, the filter compares all 64 bits and refuses */
	if (syscall(SYS_socket, 0x100000000ul | AF_PACKET, SOCK_RAW, 0) >= 0)
		return 12;
	if (socket(AF_UNIX, SOCK_STREAM, 0) < 0)
		return 5;
	/* clone3: ENOSYS so libc falls back to clone */
	if (syscall(SYS_clone3, NULL, 0) >= 0 || errno != ENOSYS)
		return 6;
	/* TIOCSTI, also with high bits set in the command */
	if (ioctl(0, TIOCSTI, "x") >= 0 || errno != EPERM)
		return 7;
	if (syscall(SYS_ioctl, 0, 0xdead00000000ul | TIOCSTI, "x") >= 0 || errno != EPERM)
		return 8;
	/* personality flags that weaken ASLR or NX */
	if (personality(READ_IMPLIES_EXEC) != -1)
		return 9;
	if (personality(0xffffffff) == -1)
		return 10;
	return 0;
}

static int soft_denials(void)
{
	int st = under_filter(soft_denials_fn);

	if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0))
		fprintf(stderr, "status %#x\n", st);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return 0;
}

static int call_unshare(void) { syscall(SYS_unshare, CLONE_NEWUSER); return 0; }
static int call_bpf(void) { syscall(SYS_bpf, -1, NULL, 0); return 0; }
static int call_ptrace(void) { syscall(SYS_ptrace, 16 /* ATTACH */, 1, 0, 0); return 0; }
static int call_clone_ns(void)
{
	syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0);
	return 0;
}
static int call_x32(void) { syscall(0x40000000 | SYS_getpid); return 0; }
static int call_mount(void) { syscall(SYS_mount, "none", "/", "tmpfs", 0, NULL); return 0; }

static int deadly(void)
{
	int (*fns[])(void) = { call_unshare, call_bpf, call_ptrace, call_clone_ns,
			       call_x32, call_mount };
	unsigned i;

	for (i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		int st = under_filter(fns[i]);

		if (!(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS))
			fprintf(stderr, "deadly call %u: status %#x\n", i, st);
		CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
	}
	return 0;
}

static int names(void)
{
	char buf[48];

	CHECK(strcmp(seccomp_syscall_name(SYS_unshare, AUDIT_ARCH_X86_64, buf, sizeof(buf)),
		     "unshare") == 0);
	CHECK(strcmp(seccomp_syscall_name(100000, AUDIT_ARCH_X86_64, buf, sizeof(buf)),
		     "100000") == 0);
	CHECK(strcmp(seccomp_syscall_name(20, AUDIT_ARCH_I386, buf, sizeof(buf)),
		     "i386:getpid") == 0);
	CHECK(strcmp(seccomp_syscall_name(0x40000000 | 39, AUDIT_ARCH_X86_64, buf, sizeof(buf)),
		     "x32:getpid") == 0);
	CHECK(strcmp(seccomp_syscall_name(1, 0x1234, buf, sizeof(buf)), "unknown:1") == 0);
	return 0;
}

const struct unit_test seccomp_tests[] = {
	{ "seccomp/embedded_matches_policy", embedded_matches_policy },
	{ "seccomp/soft_denials", soft_denials },
	{ "seccomp/deadly_calls_kill", deadly },
	{ "seccomp/names", names },
	UNIT_TESTS_END,
};
