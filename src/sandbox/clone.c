/*
 * The sandbox's first process, started in its new namespaces.
 *
 * Where there is a trampoline for clone3 with a stack of the child's own
 * (x86-64), the child runs in the caller's memory, as a vfork child does
 * (CLONE_VM | CLONE_VFORK), until it execs toolgate-init (child.c): no
 * page table is copied, none of the caller's pages becomes copy-on-write
 * (a copy made every page the caller's threads wrote next fault, with a
 * TLB shootdown to every CPU they ran on), and there is no copy to tear
 * down. The calling thread sleeps in the kernel until that exec, so the
 * child may use its thread data (errno, glibc's own) as its own, and the
 * child writes no memory but its stack (and toolgate-init's argv[1] slot,
 * in the run's plan; and, the first time it calls a libc function the
 * program has not called yet, that function's GOT entry, the value any
 * thread would write). It starts with every signal blocked, and unblocks
 * them once every disposition is the default: no handler of the caller's
 * may run in the caller's memory from the child. Its id maps must be
 * written from outside while it waits: a helper thread, the mapper, reads
 * the child's first word on the status pipe (it exists, and the kernel
 * has written its pid), writes the maps and says "go".
 *
 * The dumpable flag belongs to the memory, so to the caller too: a root
 * caller's child that switches to the sandbox's host user clears it, and
 * that is what keeps a process of that user from reaching the caller's
 * memory through the child (ptrace, /proc/PID/mem) while they share it.
 * The child also clears it itself before the switch (fs.suid_dumpable 1
 * would leave it set). It is given back once no child shares the caller's
 * memory: not at the wake-up, which the kernel gives a moment before the
 * child lets go of the memory, but once kcmp says it has.
 *
 * Elsewhere, or when the mapper cannot start, the child is a copy of the
 * caller (clone3 without CLONE_VM), and the exec ends the copy.
 */
#include <errno.h>
#include <linux/kcmp.h>
#include <linux/sched.h>
#include <sched.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#define ASAN 1
#endif

#define CHILD_STACK (256u << 10) /* child.c's deepest path needs some 16 KiB */

#if defined(__x86_64__)
/* long sb_clone3_vm(struct clone_args *args, size_t size,
 *                   int (*fn)(void *), void *arg)
 * clone3; the child, on the stack args gave it, calls fn(arg) and exits
 * with what it returns. Returns as the system call does (-errno). */
long sb_clone3_vm(struct clone_args *args, size_t size, int (*fn)(void *), void *arg);
__asm__(".text\n"
	".globl sb_clone3_vm\n"
	".hidden sb_clone3_vm\n"
	".type sb_clone3_vm,@function\n"
	"sb_clone3_vm:\n"
	"	.cfi_startproc\n"
	"	mov %rdx, %r8\n"          /* fn and arg where the syscall keeps them */
	"	mov %rcx, %r9\n"
	"	mov $435, %eax\n"         /* SYS_clone3 */
	"	syscall\n"
	"	test %rax, %rax\n"
	"	jz 1f\n"
	"	ret\n"                    /* the caller, or an error */
	"1:	.cfi_undefined %rip\n"    /* the child, on its own stack */
	"	xor %ebp, %ebp\n"
	"	mov %r9, %rdi\n"
	"	call *%r8\n"
	"	mov %eax, %edi\n"
	"	mov $60, %eax\n"          /* SYS_exit */
	"	syscall\n"
	"	hlt\n"
	"	.cfi_endproc\n"
	".size sb_clone3_vm, .-sb_clone3_vm\n");
#define HAVE_CLONE_VM 1
#endif

static void args_init(struct clone_args *a, int cgroup_fd, int *pidfd)
{
	memset(a, 0, sizeof(*a));
	if (cgroup_fd >= 0) {
		a->flags |= CLONE_INTO_CGROUP;
		a->cgroup = (uint64_t)cgroup_fd;
	}
	/* The cgroup namespace comes once the child is in its cgroup. */
	a->flags |= CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
		    CLONE_NEWNET | CLONE_PIDFD;
	a->pidfd = (uint64_t)(uintptr_t)pidfd;
	/* No exit signal: the embedder gets no SIGCHLD it did not ask for,
	 * its waitpid(-1) (without __WALL) cannot reap our child, and an
	 * ignored SIGCHLD (auto-reap) cannot take the wait status from us.
	 * We learn of the exit through the pidfd and reap with __WALL. */
	a->exit_signal = 0;
}

/* Maps, then "go"; on failure the reason in s->error and the child
 * killed (it waits for "go" otherwise). */
static void maps_and_go(struct sb_spawn *s, pid_t pid)
{
	struct tg_error err;
	char go = 'g';

	memset(&err, 0, sizeof(err));
	if (s->maps(s->ctx, pid, &err) == 0 && write(s->sync_w, &go, 1) == 1)
		return;
	snprintf(s->error, sizeof(s->error), "%.400s",
		 err.msg[0] ? err.msg : "user namespace: cannot start the child");
	syscall(SYS_pidfd_send_signal, s->pidfd, SIGKILL, NULL, 0);
}

#ifdef HAVE_CLONE_VM
struct vm_spawn {
	struct sb_spawn *s;
	pid_t tid;          /* CLONE_PARENT_SETTID: written before the child runs */
	int resumed;        /* the caller is back from clone3 */
};

static int child_entry(void *arg)
{
	const struct sb_plan *plan = arg;
	struct sb_msg m;

#ifdef ASAN
	/* the caller's thread, as AddressSanitizer sees it, is on our stack
	 * now (spawn_vm said so before the clone) */
	__sanitizer_finish_switch_fiber(NULL, NULL, NULL);
#endif

	/* the mapper waits for this: we exist, and our pid is written */
	memset(&m, 0, sizeof(m));
	m.kind = SB_MSG_HELLO;
	if (write(plan->status_wr, &m, sizeof(m)) != (ssize_t)sizeof(m))
		_exit(125);
	child_main(plan);
}

static void *mapper_main(void *arg)
{
	struct vm_spawn *v = arg;
	struct pollfd p = { v->s->status_r, POLLIN, 0 };
	struct sb_msg m;
	ssize_t n;

	/* the child's word; or the caller back from clone3 without one (no
	 * child, or one that died before it spoke): then nothing to do */
	for (;;) {
		if (__atomic_load_n(&v->resumed, __ATOMIC_ACQUIRE))
			return NULL;
		if (poll(&p, 1, 20) > 0)
			break;
	}
	do
		n = read(v->s->status_r, &m, sizeof(m));
	while (n < 0 && errno == EINTR);
	if (n == (ssize_t)sizeof(m) && m.kind == SB_MSG_HELLO)
		maps_and_go(v->s, __atomic_load_n(&v->tid, __ATOMIC_ACQUIRE));
	return NULL;
}

static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;
static int sharing, dump_saved;

/* How many children share our memory; the dumpable flag given back
 * when none does. */
static void sharing_begin(void)
{
	pthread_mutex_lock(&dump_lock);
	if (sharing++ == 0)
		dump_saved = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	pthread_mutex_unlock(&dump_lock);
}

static void sharing_end(void)
{
	pthread_mutex_lock(&dump_lock);
	if (--sharing == 0 && dump_saved >= 0 &&
	    prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != dump_saved)
		prctl(PR_SET_DUMPABLE, dump_saved, 0, 0, 0);
	pthread_mutex_unlock(&dump_lock);
}

/* The kernel wakes the caller of a vfork-style clone (mm_release) a moment
 * before the child lets go of the memory: an exec swaps it in exec_mmap
 * after that, an exit clears it in exit_mm after that. Until then a
 * process of the child's user may still open /proc/PID/mem on it, and
 * keeps what it opened: the dumpable flag must not come back before. */
static void wait_unshared(pid_t pid)
{
	int i;

	for (i = 0; i < 100000; i++) {
		if (syscall(SYS_kcmp, getpid(), pid, KCMP_VM, 0, 0) != 0)
			return; /* another memory, none (gone), or kcmp refused */
		sched_yield();
	}
}

/* -1 when the mapper cannot start (the caller then copies), else the
 * child's pid or -errno of clone3 in *rc. */
static int spawn_vm(struct sb_spawn *s, long *rc)
{
	struct vm_spawn v = { s, 0, 0 };
	struct clone_args a;
	pthread_attr_t attr;
	pthread_t mapper;
	sigset_t all, old, mine;
	char *stack;
	int e;
#ifdef ASAN
	void *fake = NULL, *own_bottom = NULL;
	size_t own_size = 0;
	pthread_attr_t self;
	int fiber = 0;
#endif

	stack = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
	if (stack == MAP_FAILED)
		return -1;
	/* a guard page: an overflow faults instead of writing our memory */
	if (mprotect(stack, 4096, PROT_NONE) < 0) {
		munmap(stack, CHILD_STACK);
		return -1;
	}
	pthread_attr_init(&attr);
#ifndef ASAN
	pthread_attr_setstacksize(&attr, 128u << 10);
#endif
	/* the mapper takes no signal of the embedder's */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&mapper, &attr, mapper_main, &v);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (e) {
		munmap(stack, CHILD_STACK);
		return -1;
	}
	args_init(&a, s->cgroup_fd, &s->pidfd);
	a.flags |= CLONE_VM | CLONE_VFORK | CLONE_PARENT_SETTID;
	a.parent_tid = (uint64_t)(uintptr_t)&v.tid;
	a.stack = (uint64_t)(uintptr_t)(stack + 4096);
	a.stack_size = CHILD_STACK - 4096;
	if (s->plan->caller_is_root)
		sharing_begin();
#ifdef ASAN
	/* For AddressSanitizer, the child is this thread on another stack
	 * (it shares our thread data): a fiber's switch, there and back. */
	if (pthread_getattr_np(pthread_self(), &self) == 0) {
		fiber = pthread_attr_getstack(&self, &own_bottom, &own_size) == 0;
		pthread_attr_destroy(&self);
	}
	if (fiber)
		__sanitizer_start_switch_fiber(&fake, stack + 4096, CHILD_STACK - 4096);
#endif
	/* No handler of the embedder's may run in the child before
	 * reset_signals (a process-group signal, a terminal's ^C): it would
	 * run in our memory, not a copy. The child starts with everything
	 * blocked and unblocks once every disposition is the default, as
	 * posix_spawn does. */
	pthread_sigmask(SIG_SETMASK, &all, &mine);
	/* back here once the child has exec'd toolgate-init, or died */
	*rc = sb_clone3_vm(&a, sizeof(a), child_entry, (void *)s->plan);
	pthread_sigmask(SIG_SETMASK, &mine, NULL);
#ifdef ASAN
	if (fiber) {
		__sanitizer_start_switch_fiber(NULL, own_bottom, own_size);
		__sanitizer_finish_switch_fiber(fake, NULL, NULL);
	}
#endif
	if (s->plan->caller_is_root) {
		if (*rc > 0)
			wait_unshared((pid_t)*rc);
		sharing_end();
	}
	/* the mapper is done, or sees this within 20 ms */
	__atomic_store_n(&v.resumed, 1, __ATOMIC_RELEASE);
	pthread_join(mapper, NULL);
#ifdef ASAN
	/* what the child's frames poisoned, before the range is reused */
	__asan_unpoison_memory_region(stack, CHILD_STACK);
#endif
	munmap(stack, CHILD_STACK);
	return 0;
}
#endif

pid_t sb_spawn_child(struct sb_spawn *s, struct tg_error *err)
{
	struct clone_args a;
	long pid;

	s->pidfd = -1;
	s->error[0] = '\0';
#ifdef HAVE_CLONE_VM
	if (spawn_vm(s, &pid) == 0) {
		if (pid < 0)
			return tg_error_sys(err, (int)-pid,
					    "clone3 (user, mount, pid, net, ipc, uts namespaces)");
		return (pid_t)pid;
	}
#endif
	args_init(&a, s->cgroup_fd, &s->pidfd);
	pid = syscall(SYS_clone3, &a, sizeof(a));
	if (pid < 0)
		return tg_error_sys(err, errno, "clone3 (user, mount, pid, net, ipc, uts namespaces)");
	if (pid == 0)
		child_main(s->plan);
	maps_and_go(s, (pid_t)pid);
	return (pid_t)pid;
}
