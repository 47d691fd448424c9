/*
 * tg-escape, syscall family: dangerous syscalls called with harmless
 * invalid arguments.  Unsandboxed the call reaches the kernel and fails
 * with EINVAL/EFAULT/EBADF/ENOENT (counted as escaped); sandboxed the
 * process must be killed or get ENOSYS/EPERM.  Nothing here can have an
 * effect: no reboot, no module, no clock change.
 */
#include "tg.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/personality.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timex.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOARGS (void)argc; (void)argv

static int a_bpf(int argc, char **argv)
{
	char attr[128];

	NOARGS;
	memset(attr, 0, sizeof attr);
	return tg_syscall_verdict("bpf(cmd 0x7fff)", syscall(SYS_bpf, 0x7fff, attr, sizeof attr));
}

static int a_perf_event_open(int argc, char **argv)
{
	NOARGS;
	return tg_syscall_verdict("perf_event_open(NULL)",
				  syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0UL));
}

static int a_userfaultfd(int argc, char **argv)
{
	NOARGS;
	return tg_syscall_verdict("userfaultfd(bad flags)",
				  syscall(SYS_userfaultfd, 0x7ffffff0));
}

static int a_io_uring_setup(int argc, char **argv)
{
	NOARGS;
	return tg_syscall_verdict("io_uring_setup(0, NULL)",
				  syscall(SYS_io_uring_setup, 0, NULL));
}

static int a_keyctl(int argc, char **argv)
{
	NOARGS;
	return tg_syscall_verdict("keyctl(cmd 0x7fff)",
				  syscall(SYS_keyctl, 0x7fff, 0UL, 0UL, 0UL, 0UL));
}

static int a_add_key(int argc, char **argv)
{
	NOARGS;
	return tg_syscall_verdict("add_key(NULL)",
				  syscall(SYS_add_key, NULL, NULL, NULL, 0UL, 0L));
}

static int a_request_key(int argc, char **argv)
{
	NOARGS;
	return tg_syscall_verdict("request_key(NULL)",
				  syscall(SYS_request_key, NULL, NULL, NULL, 0L));
}

static int a_kexec_load(int argc, char **argv)
{
	NOARGS;
	return tg_syscall_verdict("kexec_load(0 segments, bad flags)",
				  syscall(SYS_kexec_load, 0UL, 0UL, NULL, 0xdead0000UL));
}

static int a_kexec_file_load(int argc, char **argv)
{
	NOARGS;
	return tg_syscall_verdict("kexec_file_load(-1, -1, bad flags)",
				  syscall(SYS_kexec_file_load, -1, -1, 0UL, NULL, 0xdead0000UL));
}

static int a_init_module(int argc, char **argv)
{
	NOARGS;
	return tg_syscall_verdict("init_module(NULL, 0)",
				  syscall(SYS_init_module, NULL, 0UL, ""));
}

static int a_finit_module(int argc, char **argv)
{
	NOARGS;
	return tg_syscall_verdict("finit_module(-1)", syscall(SYS_finit_module, -1, "", 0));
}

static int a_delete_module(int argc, char **argv)
{
	NOARGS;
	return tg_syscall_verdict("delete_module(nonexistent)",
				  syscall(SYS_delete_module, "tgsec_no_such_module", O_NONBLOCK));
}

static int a_reboot(int argc, char **argv)
{
	NOARGS;
	/* Wrong magic: the kernel rejects it with EINVAL before anything. */
	return tg_syscall_verdict("reboot(bad magic)",
				  syscall(SYS_reboot, 0xdeadbeefUL, 0x12345678UL, 0UL, NULL));
}

static int a_clock_settime(int argc, char **argv)
{
	NOARGS;
	return tg_syscall_verdict("clock_settime(CLOCK_REALTIME, NULL)",
				  syscall(SYS_clock_settime, CLOCK_REALTIME, NULL));
}

static int a_settimeofday(int argc, char **argv)
{
	struct timeval tv = { .tv_sec = 0, .tv_usec = 5000000 };	/* invalid */

	NOARGS;
	return tg_syscall_verdict("settimeofday(tv_usec=5000000)",
				  syscall(SYS_settimeofday, &tv, NULL));
}

static int a_adjtimex(int argc, char **argv)
{
	struct timex tx;

	NOARGS;
	memset(&tx, 0, sizeof tx);
	tx.modes = ADJ_TICK;
	tx.tick = 1;	/* out of range: EINVAL before any change */
	return tg_syscall_verdict("adjtimex(ADJ_TICK, tick=1)", syscall(SYS_adjtimex, &tx));
}

static int a_clock_adjtime(int argc, char **argv)
{
	struct timex tx;

	NOARGS;
	memset(&tx, 0, sizeof tx);
	tx.modes = ADJ_TICK;
	tx.tick = 1;
	return tg_syscall_verdict("clock_adjtime(REALTIME, ADJ_TICK, tick=1)",
				  syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx));
}

static int a_iopl(int argc, char **argv)
{
	NOARGS;
	/* Level 0 is what we already have: no effect even when it works. */
	return tg_syscall_verdict("iopl(0)", syscall(SYS_iopl, 0));
}

static int a_ioperm(int argc, char **argv)
{
	NOARGS;
	/* Turning no ports off: no effect. */
	return tg_syscall_verdict("ioperm(0, 0, 0)", syscall(SYS_ioperm, 0UL, 0UL, 0));
}

static int a_int80_getpid(int argc, char **argv)
{
	long ret;

	NOARGS;
	/* i386 getpid is 20. */
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(20L)
			 : "memory", "r8", "r9", "r10", "r11");
	if (ret == (long)getpid())
		return tg_report(TG_ESCAPED, "32-bit int $0x80 getpid returned our pid %ld", ret);
	if (ret < 0 && ret > -4096)
		return tg_report(TG_BLOCKED, "int $0x80 getpid: %s", tg_errname((int)-ret));
	return tg_report(TG_ESCAPED, "int $0x80 getpid returned %ld", ret);
}

static int a_x32_getpid(int argc, char **argv)
{
	long r;

	NOARGS;
	r = syscall(0x40000000L | SYS_getpid);
	if (r == (long)getpid())
		return tg_report(TG_ESCAPED, "x32 getpid returned our pid");
	return tg_syscall_verdict("x32 getpid", r);
}

static int a_personality(int argc, char **argv)
{
	int old, now;

	NOARGS;
	old = personality(READ_IMPLIES_EXEC);
	if (old < 0)
		return tg_report(TG_BLOCKED, "personality(READ_IMPLIES_EXEC): %s", tg_errname(errno));
	now = personality(0xffffffff);
	if (now >= 0 && (now & READ_IMPLIES_EXEC))
		return tg_report(TG_ESCAPED, "personality now 0x%x: READ_IMPLIES_EXEC set", now);
	return tg_report(TG_BLOCKED, "personality call returned but flag not set (0x%x)", now);
}

static long do_int80_getpid(void)
{
	long ret;

	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory", "r8", "r9", "r10", "r11");
	return ret;
}

/* A forbidden call in a child process must end the WHOLE sandbox: the
 * parent must not live on. MODE: bpf (default) or int80. */
static int a_seccomp_child(int argc, char **argv)
{
	const char *mode = tg_arg(argc, argv, 1, "bpf");
	struct timespec ts = { 1, 500000000 };
	int st = 0;
	pid_t c = fork();

	if (c < 0)
		return tg_report(TG_UNKNOWN, "fork: %s", tg_errname(errno));
	if (c == 0) {
		char attr[128];
		memset(attr, 0, sizeof attr);
		if (strcmp(mode, "int80") == 0)
			do_int80_getpid();
		else
			syscall(SYS_bpf, 0x7fff, attr, sizeof attr);
		_exit(0);
	}
	waitpid(c, &st, 0);
	nanosleep(&ts, NULL);
	return tg_report(TG_ESCAPED, "parent lives on after its child's %s (child %s %d)", mode,
			 WIFSIGNALED(st) ? "killed by signal" : "exited",
			 WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
}

static void *bpf_thread(void *arg)
{
	char attr[128];

	(void)arg;
	memset(attr, 0, sizeof attr);
	syscall(SYS_bpf, 0x7fff, attr, sizeof attr);
	return NULL;
}

/* ... and a forbidden call in a thread, too. */
static int a_seccomp_thread(int argc, char **argv)
{
	struct timespec ts = { 1, 500000000 };
	pthread_t t;

	(void)argc;
	(void)argv;
	if (pthread_create(&t, NULL, bpf_thread, NULL))
		return tg_report(TG_UNKNOWN, "pthread_create failed");
	nanosleep(&ts, NULL);
	return tg_report(TG_ESCAPED, "main thread lives on after another thread called bpf");
}

const struct tg_attempt tg_sys_attempts[] = {
	{ "seccomp_child", "syscall", a_seccomp_child, "[bpf|int80]  forbidden call in a child: parent must die too" },
	{ "seccomp_thread", "syscall", a_seccomp_thread, "forbidden call in a thread: process must die" },
	{ "bpf", "syscall", a_bpf, "bpf(2), invalid command" },
	{ "perf_event_open", "syscall", a_perf_event_open, "perf_event_open(NULL)" },
	{ "userfaultfd", "syscall", a_userfaultfd, "userfaultfd(bad flags)" },
	{ "io_uring_setup", "syscall", a_io_uring_setup, "io_uring_setup(0, NULL)" },
	{ "keyctl", "syscall", a_keyctl, "keyctl(invalid)" },
	{ "add_key", "syscall", a_add_key, "add_key(NULL)" },
	{ "request_key", "syscall", a_request_key, "request_key(NULL)" },
	{ "kexec_load", "syscall", a_kexec_load, "kexec_load(bad flags)" },
	{ "kexec_file_load", "syscall", a_kexec_file_load, "kexec_file_load(bad flags)" },
	{ "init_module", "syscall", a_init_module, "init_module(NULL, 0)" },
	{ "finit_module", "syscall", a_finit_module, "finit_module(-1)" },
	{ "delete_module", "syscall", a_delete_module, "delete_module(nonexistent)" },
	{ "reboot", "syscall", a_reboot, "reboot with a bad magic" },
	{ "clock_settime", "syscall", a_clock_settime, "clock_settime(NULL)" },
	{ "settimeofday", "syscall", a_settimeofday, "settimeofday(invalid tv)" },
	{ "adjtimex", "syscall", a_adjtimex, "adjtimex(ADJ_TICK out of range)" },
	{ "clock_adjtime", "syscall", a_clock_adjtime, "clock_adjtime(ADJ_TICK out of range)" },
	{ "iopl", "syscall", a_iopl, "iopl(0)" },
	{ "ioperm", "syscall", a_ioperm, "ioperm(0, 0, 0)" },
	{ "int80_getpid", "syscall", a_int80_getpid, "32-bit int $0x80 getpid" },
	{ "x32_getpid", "syscall", a_x32_getpid, "x32 ABI getpid" },
	{ "personality", "syscall", a_personality, "personality(READ_IMPLIES_EXEC)" },
	{ NULL, NULL, NULL, NULL },
};
