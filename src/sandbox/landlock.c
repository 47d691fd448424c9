/*
 * Landlock: the filesystem rules that match the sandbox's mounts, TCP bind
 * and connect denied outright (ABI 4), and signal and abstract-socket
 * scoping (ABI 6). A second layer under the mount namespace: even a process
 * that found a path out of its root could not open what no rule names.
 *
 * The rules of the binds, the system directories and the work directory
 * are given the roots of the mounts rootfs.c placed (their fds), never a
 * path opened again: a path would follow a symlink planted through a
 * writable bind, and a rule could then grant more than the mounts do.
 *
 * The kernel headers of older distributions lack the newer fields, so the
 * structures and bits this file uses are declared here, per the Landlock
 * ABI documentation (Documentation/userspace-api/landlock.rst).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped;             /* ABI 6 */
};

struct ll_path_beneath {
	uint64_t allowed_access;
	int32_t parent_fd;
} __attribute__((packed));

#define LL_CREATE_RULESET_VERSION (1u << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_RULE_NET_PORT 2

struct ll_net_port {
	uint64_t allowed_access;
	uint64_t port;
} __attribute__((packed));

#define LL_FS_EXECUTE     (1ull << 0)
#define LL_FS_WRITE_FILE  (1ull << 1)
#define LL_FS_READ_FILE   (1ull << 2)
#define LL_FS_READ_DIR    (1ull << 3)
#define LL_FS_REMOVE_DIR  (1ull << 4)
#define LL_FS_REMOVE_FILE (1ull << 5)
#define LL_FS_MAKE_CHAR   (1ull << 6)
#define LL_FS_MAKE_DIR    (1ull << 7)
#define LL_FS_MAKE_REG    (1ull << 8)
#define LL_FS_MAKE_SOCK   (1ull << 9)
#define LL_FS_MAKE_FIFO   (1ull << 10)
#define LL_FS_MAKE_BLOCK  (1ull << 11)
#define LL_FS_MAKE_SYM    (1ull << 12)
#define LL_FS_REFER       (1ull << 13) /* ABI 2 */
#define LL_FS_TRUNCATE    (1ull << 14) /* ABI 3 */
#define LL_FS_IOCTL_DEV   (1ull << 15) /* ABI 5 */
#define LL_NET_BIND_TCP    (1ull << 0)
#define LL_NET_CONNECT_TCP (1ull << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ull << 0)
#define LL_SCOPE_SIGNAL        (1ull << 1)

#define LL_READ (LL_FS_READ_FILE | LL_FS_READ_DIR)
#define LL_RX   (LL_READ | LL_FS_EXECUTE)
/* Writable trees: everything but device nodes and device ioctls. */
#define LL_RW (LL_RX | LL_FS_WRITE_FILE | LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE | \
	       LL_FS_MAKE_DIR | LL_FS_MAKE_REG | LL_FS_MAKE_SOCK |               \
	       LL_FS_MAKE_FIFO | LL_FS_MAKE_SYM | LL_FS_REFER | LL_FS_TRUNCATE)

int landlock_abi(void)
{
	long abi = syscall(__NR_landlock_create_ruleset, NULL, 0,
			   LL_CREATE_RULESET_VERSION);
	return abi < 0 ? 0 : (int)abi;
}

static uint64_t handled_fs(int abi)
{
	uint64_t fs = (LL_FS_MAKE_SYM << 1) - 1; /* ABI 1: bits 0..12 */

	if (abi >= 2)
		fs |= LL_FS_REFER;
	if (abi >= 3)
		fs |= LL_FS_TRUNCATE;
	if (abi >= 5)
		fs |= LL_FS_IOCTL_DEV;
	return fs;
}

/* Rights that apply to a file (the rest only make sense on directories). */
#define LL_FILE_RIGHTS (LL_FS_EXECUTE | LL_FS_WRITE_FILE | LL_FS_READ_FILE | \
			LL_FS_TRUNCATE | LL_FS_IOCTL_DEV)

/* A rule for what fd is (a file gets only the rights a file has). */
static int add_fd(int ruleset, int fd, uint64_t access, uint64_t handled)
{
	struct ll_path_beneath pb;
	struct stat st;

	if (fd < 0) {
		errno = EBADF;
		return -1;
	}
	if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode))
		access &= LL_FILE_RIGHTS;
	pb.allowed_access = access & handled;
	pb.parent_fd = fd;
	return (int)syscall(__NR_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0);
}

/* The fixed places: the root's own directories and mounts, which no bind
 * can replace (the root is read-only, /proc and /dev are reserved). */
static int add_path(int ruleset, const char *path, uint64_t access,
		    uint64_t handled)
{
	int fd, rc, saved;

	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -1;
	rc = add_fd(ruleset, fd, access, handled);
	saved = errno;
	close(fd);
	errno = saved;
	return rc;
}

int landlock_apply(const struct sb_plan *plan, const struct sb_trees *t,
		   unsigned *layers, const char **what)
{
	const struct tg_sandbox_spec *spec = plan->spec;
	struct ll_ruleset_attr attr;
	int abi = (int)plan->landlock_abi;
	size_t attr_size;
	uint64_t fs = handled_fs(abi);
	int ruleset, i, rc = -1, saved;
	static const struct {
		const char *path;
		uint64_t access;
	} fixed[] = {
		{ "/", LL_FS_READ_DIR },
		{ "/usr", LL_RX },
		{ "/etc", LL_READ },
		{ "/proc", LL_READ },
		{ "/dev", LL_READ | LL_FS_WRITE_FILE },
		{ "/dev/shm", LL_RW },
		{ "/tmp", LL_RW },
	};

	memset(&attr, 0, sizeof(attr));
	attr.handled_access_fs = fs;
	attr_size = sizeof(attr.handled_access_fs);
	if (abi >= 4) {
		/* All TCP bind and connect fail, but a connection to the
		 * egress listener's port when there is one (the network
		 * namespace has loopback only: that is the listener). */
		attr.handled_access_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;
		attr_size = offsetof(struct ll_ruleset_attr, scoped);
	}
	if (abi >= 6) {
		attr.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
		attr_size = sizeof(attr);
	}
	*what = "landlock_create_ruleset";
	ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, attr_size, 0);
	if (ruleset < 0)
		return -1;
	*what = "landlock_add_rule";
	for (i = 0; i < (int)(sizeof(fixed) / sizeof(fixed[0])); i++)
		if (add_path(ruleset, fixed[i].path, fixed[i].access, fs) < 0 &&
		    errno != ENOENT)
			goto out;
	/* Directories bound by plan (lib dirs that are not symlinks). */
	for (i = 0; i < plan->nsysbinds; i++)
		if (plan->sysbinds[i].is_dir &&
		    add_fd(ruleset, t->sys[i], LL_RX, fs) < 0) {
			*what = plan->sysbinds[i].inside;
			goto out;
		}
	for (i = 0; i < spec->nbinds; i++)
		if (add_fd(ruleset, t->user[i], spec->binds[i].writable ? LL_RW : LL_RX,
			   fs) < 0) {
			*what = spec->binds[i].inside;
			goto out;
		}
	/* The work directory's tmpfs; a covered one has its mount's rule. */
	if (!plan->workdir_is_bound && add_fd(ruleset, t->workdir, LL_RW, fs) < 0) {
		*what = "work directory";
		goto out;
	}
	if (abi >= 4 && plan->egress_wr >= 0) {
		struct ll_net_port np = { LL_NET_CONNECT_TCP, TG_SANDBOX_EGRESS_PORT };

		if (syscall(__NR_landlock_add_rule, ruleset, LL_RULE_NET_PORT, &np, 0) < 0)
			goto out;
	}
	*what = "landlock_restrict_self";
	if (syscall(__NR_landlock_restrict_self, ruleset, 0) < 0)
		goto out;
	*layers |= TG_LAYER_LANDLOCK_FS;
	if (abi >= 4)
		*layers |= TG_LAYER_LANDLOCK_NET;
	if (abi >= 6)
		*layers |= TG_LAYER_LANDLOCK_SCOPE;
	rc = 0;
out:
	saved = errno;
	close(ruleset);
	errno = saved;
	return rc;
}
