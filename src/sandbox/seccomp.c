/*
 * Seccomp at run time: the programs compiled from seccomp_policy.c at build
 * time (so no run, and no process, pays for libseccomp's compiler: that was
 * 2 ms per `toolgate run`), installed in each child with a
 * user-notification listener, and the names of the syscalls that end runs.
 * libseccomp is used here for those names alone, and loaded the first time
 * a run ends on one (seccomp_policy.c, which needs all of it, is built into
 * tools/seccomp-gen and the unit tests, not into the library): mapping it
 * cost every `toolgate run` 6 page faults (docs/BENCHMARKS.md, "Start
 * alone").
 */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"
#include "util/dl.h"
#include "util/log.h"

#define LIBSECCOMP "libseccomp.so.2"

/* Written by tools/seccomp-gen into $(BUILD)/gen/seccomp_bpf.c, indexed by
 * SB_SECCOMP_MAIN, _MAIN_KILL and _IOCTL. */
extern const struct sock_fprog sb_seccomp_programs[3];

const struct sock_fprog *seccomp_program(int which, struct tg_error *err)
{
	(void)err;
	if (which < SB_SECCOMP_MAIN || which > SB_SECCOMP_IOCTL)
		which = SB_SECCOMP_MAIN;
	return &sb_seccomp_programs[which];
}

int seccomp_install(const struct sock_fprog *main_prog, const struct sock_fprog *ioctl_prog)
{
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, ioctl_prog) < 0)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
			    SECCOMP_FILTER_FLAG_NEW_LISTENER, main_prog);
}

static __typeof__(seccomp_syscall_resolve_num_arch) *resolve_num_arch;
static pthread_once_t resolve_once = PTHREAD_ONCE_INIT;

static void resolve_load(void)
{
	static const struct dl_sym syms[] = { { "seccomp_syscall_resolve_num_arch", 0 } };
	__typeof__(resolve_num_arch) f = NULL;
	char why[300];

	if (DL_TABLE(LIBSECCOMP, syms, f, why))
		resolve_num_arch = f;
	else /* the number alone, then */
		tg_log(TG_LOG_WARNING, "syscalls are named by number: libseccomp could not be "
		       "loaded (%s): install libseccomp2", why);
}

const char *seccomp_syscall_name(int nr, uint32_t arch, char *buf, size_t len)
{
	static const struct {
		uint32_t audit;
		uint32_t scmp;
		const char *prefix;
	} arches[] = {
		{ SCMP_ARCH_X86_64, SCMP_ARCH_X86_64, "" },
		{ SCMP_ARCH_X86, SCMP_ARCH_X86, "i386:" },
		{ SCMP_ARCH_AARCH64, SCMP_ARCH_AARCH64, "" },
		{ SCMP_ARCH_ARM, SCMP_ARCH_ARM, "arm:" },
	};
	const char *prefix = "";
	uint32_t scmp = 0;
	char *name = NULL;
	unsigned i;

	for (i = 0; i < sizeof(arches) / sizeof(arches[0]); i++)
		if (arches[i].audit == arch) {
			scmp = arches[i].scmp;
			prefix = arches[i].prefix;
		}
	/* x32 calls come with the x86_64 audit arch and bit 30 set. */
	if (arch == SCMP_ARCH_X86_64 && (nr & 0x40000000)) {
		scmp = SCMP_ARCH_X32;
		prefix = "x32:";
	}
	if (scmp)
		pthread_once(&resolve_once, resolve_load);
	if (scmp && resolve_num_arch)
		name = resolve_num_arch(scmp, nr);
	if (name)
		snprintf(buf, len, "%s%s", prefix, name);
	else
		snprintf(buf, len, "%s%d", scmp ? prefix : "unknown:", nr);
	free(name);
	return buf;
}

int sandbox_seccomp_export(int fd, int which, struct tg_error *err)
{
	const struct sock_fprog *prog = seccomp_program(which, err);
	size_t n;

	if (!prog)
		return -1;
	n = prog->len * sizeof(struct sock_filter);
	if (write(fd, prog->filter, n) != (ssize_t)n)
		return tg_error_sys(err, errno, "writing seccomp program");
	return 0;
}
