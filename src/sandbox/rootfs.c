/*
 * The sandbox's filesystem: a fresh tmpfs root entered with pivot_root.
 *
 *   /            tmpfs, read-only once built
 *   /usr ...     read-only binds of what programs need (rootfs_plan)
 *   /bin ...     the host's usrmerge links, recreated
 *   /etc         synthesized: passwd, group, hosts, nsswitch.conf, plus
 *                read-only ld.so.cache and alternatives
 *   /proc        a new procfs; /proc/sys and friends read-only, files that
 *                leak kernel state masked
 *   /dev         tmpfs with null, zero, full, random, urandom, shm
 *   /tmp, /work  size-capped tmpfs
 *   (no /sys)    no host path is visible unless bound
 *
 * Bind sources are cloned with open_tree() before anything is mounted over
 * them, then moved into place with move_mount(); mount points inside the
 * new root are walked one component at a time beneath the root and through
 * no symlink at all (RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS): a symlink that
 * an earlier run planted through a --rw bind fails the run, naming it,
 * rather than leading a mount (and the Landlock rule that goes with it)
 * somewhere else. The placed trees stay open: landlock.c gives its rules
 * these very mounts, never a path looked up again. Everything after clone
 * runs without malloc (see sandbox_int.h).
 */
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

/* The attachment point of the new root in the old tree. Anything mounted
 * here is only visible in the child's private mount namespace. */
#define NEWROOT "/tmp"

static const char *const devices[SB_DEVICES] = {
	"null", "zero", "full", "random", "urandom",
};

/* /proc entries that expose host kernel state or allow changing it. */
static const char *const proc_readonly[] = {
	"/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs",
};
static const char *const proc_masked_files[] = {
	"/proc/kcore", "/proc/keys", "/proc/key-users", "/proc/timer_list",
	"/proc/sched_debug", "/proc/latency_stats", "/proc/kallsyms", "/proc/kmsg",
	"/proc/config.gz", "/proc/vmallocinfo", "/proc/pagetypeinfo", "/proc/slabinfo",
	"/proc/sys/kernel/random/boot_id",
};
static const char *const proc_masked_dirs[] = {
	"/proc/acpi", "/proc/asound", "/proc/scsi", "/proc/driver", "/proc/dynamic_debug",
};

static const char etc_passwd[] =
	"root:x:0:0:root:/root:/usr/sbin/nologin\n"
	"sandbox:x:1000:1000:toolgate sandbox:/work:/bin/sh\n"
	"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n";
static const char etc_group[] =
	"root:x:0:\n"
	"sandbox:x:1000:\n"
	"nogroup:x:65534:\n";
static const char etc_hosts[] =
	"127.0.0.1\tlocalhost sandbox\n"
	"::1\tlocalhost ip6-localhost ip6-loopback\n";
static const char etc_nsswitch[] =
	"passwd: files\ngroup: files\nshadow: files\nhosts: files\n"
	"networks: files\nprotocols: files\nservices: files\n";

/* ---- planning, in the parent ---------------------------------------- */

static int plan_sysbind(struct sb_plan *plan, const char *host,
			const char *inside, int required, struct tg_error *err)
{
	struct sb_sysbind *b;
	struct stat st;

	char real[PATH_MAX];

	/* canonical, like user binds: clone_tree follows no symlink */
	if (!realpath(host, real) || stat(real, &st) < 0) {
		if (!required)
			return 0;
		return tg_error_sys(err, errno, "rootfs: %s", host);
	}
	if (strlen(real) >= sizeof(plan->sysbinds[0].host))
		return tg_error_set(err, TG_ERR_LIMIT, "rootfs: %s: path too long", host);
	if (plan->nsysbinds == (int)(sizeof(plan->sysbinds) / sizeof(plan->sysbinds[0])))
		return tg_error_set(err, TG_ERR_LIMIT, "rootfs: too many system binds");
	b = &plan->sysbinds[plan->nsysbinds++];
	memcpy(b->host, real, strlen(real) + 1); /* length checked above */
	snprintf(b->inside, sizeof(b->inside), "%s", inside);
	b->is_dir = S_ISDIR(st.st_mode);
	return 0;
}

static int under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Whether a mount already provides the work directory: a user's directory
 * bind, /tmp, or a place a tmpfs must not hide (/usr and the other system
 * binds, /etc, and the root links such as /bin, which lead into /usr). */
static int workdir_covered(const struct sb_plan *plan)
{
	const struct tg_sandbox_spec *spec = plan->spec;
	const char *w = plan->workdir;
	char link[40];
	int i;

	if (under(w, "/tmp") || under(w, "/etc"))
		return 1;
	for (i = 0; i < spec->nbinds; i++)
		if (spec->binds[i].is_dir && under(w, spec->binds[i].inside))
			return 1;
	for (i = 0; i < plan->nsysbinds; i++)
		if (under(w, plan->sysbinds[i].inside))
			return 1;
	for (i = 0; i < plan->nlinks; i++) {
		snprintf(link, sizeof(link), "/%s", plan->links[i].name);
		if (under(w, link))
			return 1;
	}
	return 0;
}

/* usrmerge links and their pre-merge directories, as the host has them */
static const char *const tops[] = {
	"bin", "sbin", "lib", "lib32", "lib64", "libx32",
};
/* the files of /etc a program's start needs */
static const char *const etc_files[] = {
	"/etc/ld.so.cache", "/etc/alternatives", "/etc/localtime",
};

int tg_sandbox_shows_host(const char *path)
{
	char top[16];
	unsigned i;

	if (under(path, "/usr"))
		return 1;
	for (i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
		snprintf(top, sizeof(top), "/%s", tops[i]);
		if (under(path, top))
			return 1;
	}
	for (i = 0; i < sizeof(etc_files) / sizeof(etc_files[0]); i++)
		if (under(path, etc_files[i]))
			return 1;
	return 0;
}

int rootfs_plan(struct sb_plan *plan, struct tg_error *err)
{
	char host[64], target[SB_PATH_MAX];
	struct stat st;
	unsigned i;
	int n;

	plan->nsysbinds = 0;
	plan->nlinks = 0;
	if (plan_sysbind(plan, "/usr", "/usr", 1, err) < 0)
		return -1;
	for (i = 0; i < sizeof(tops) / sizeof(tops[0]); i++) {
		snprintf(host, sizeof(host), "/%s", tops[i]);
		if (lstat(host, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			struct sb_link *l = &plan->links[plan->nlinks];

			n = (int)readlink(host, target, sizeof(target) - 1);
			if (n < 0)
				return tg_error_sys(err, errno, "rootfs: readlink %s", host);
			target[n] = '\0';
			snprintf(l->name, sizeof(l->name), "%s", tops[i]);
			memcpy(l->target, target, (size_t)n + 1);
			plan->nlinks++;
		} else if (S_ISDIR(st.st_mode)) {
			if (plan_sysbind(plan, host, host, 1, err) < 0)
				return -1;
		}
	}
	for (i = 0; i < sizeof(etc_files) / sizeof(etc_files[0]); i++)
		if (plan_sysbind(plan, etc_files[i], etc_files[i], 0, err) < 0)
			return -1;
	plan->workdir_is_bound = workdir_covered(plan);
	return 0;
}

/* ---- in the child ----------------------------------------------------- */

/* A detached copy of the mount tree at path. Sources were made canonical
 * when the spec was built (realpath), so any symlink met now was put there
 * since, perhaps by an earlier sandbox writing through a --rw bind: the
 * path is resolved without following any (ELOOP), as root could otherwise
 * be led to bind the host's / into the sandbox. */
static int clone_tree(const char *path, unsigned long attr_set, int recursive)
{
	struct mount_attr attr;
	struct open_how how;
	int fd, src, saved;

	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_CLOEXEC;
	how.resolve = RESOLVE_NO_SYMLINKS;
	src = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
	if (src < 0)
		return -1;
	fd = (int)open_tree(src, "", AT_EMPTY_PATH | OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
			    (recursive ? AT_RECURSIVE : 0));
	saved = errno;
	close(src);
	errno = saved;
	if (fd < 0)
		return -1;
	memset(&attr, 0, sizeof(attr));
	attr.attr_set = attr_set;
	if (mount_setattr(fd, "", AT_EMPTY_PATH | (recursive ? AT_RECURSIVE : 0),
			  &attr, sizeof(attr)) < 0) {
		saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* A directory, for an overlay's layer: O_PATH, no symlink on the way,
 * beneath dir. */
static int layer_dir(int dir, const char *path)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
	how.resolve = RESOLVE_NO_SYMLINKS | (dir == AT_FDCWD ? 0 : RESOLVE_BENEATH);
	return (int)syscall(SYS_openat2, dir, path, &how, sizeof(how));
}

/* An overlay of layers fd[3] (lower, upper, work; opened while the host
 * tree was in view, named now through /proc/self/fd): a detached mount,
 * made as the sandbox's user, so that the overlay works on its upper
 * layer with that user's rights and no more. User extended attributes,
 * which a user namespace may set, mark what it deleted or replaced. */
static int overlay_tree(const int fd[3])
{
	static const char *const keys[] = { "lowerdir", "upperdir", "workdir" };
	char path[48];
	int fs, mnt, saved, i;

	fs = fsopen("overlay", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -1;
	for (i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd[i]);
		if (fsconfig(fs, FSCONFIG_SET_STRING, keys[i], path, 0) < 0)
			goto fail;
	}
	if (fsconfig(fs, FSCONFIG_SET_FLAG, "userxattr", NULL, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		goto fail;
	mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	saved = errno;
	close(fs);
	errno = saved;
	return mnt;
fail:
	saved = errno;
	close(fs);
	errno = saved;
	return -1;
}

int rootfs_clone(const struct sb_plan *plan, struct sb_trees *t, const char **what)
{
	const struct tg_sandbox_spec *spec = plan->spec;
	const unsigned long ro = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV;
	char path[SB_PATH_MAX];
	int i;

	*what = "make / private";
	/* No mount event may propagate back to the host. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	for (i = 0; i < plan->nsysbinds; i++) {
		*what = plan->sysbinds[i].host;
		t->sys[i] = clone_tree(plan->sysbinds[i].host, ro, 1);
		if (t->sys[i] < 0)
			return -1;
	}
	for (i = 0; i < spec->nbinds; i++) {
		*what = spec->binds[i].host;
		if (spec->binds[i].upper) {
			/* mounted in rootfs_build, as the sandbox's user */
			/* by path: in this mount namespace, which the overlay
			 * needs them in */
			t->layers[i][0] = layer_dir(AT_FDCWD, spec->binds[i].host);
			t->layers[i][1] = layer_dir(AT_FDCWD, spec->binds[i].upper);
			t->layers[i][2] = layer_dir(AT_FDCWD, spec->binds[i].work);
			if (t->layers[i][0] < 0 || t->layers[i][1] < 0 || t->layers[i][2] < 0)
				return -1;
			continue;
		}
		t->user[i] = clone_tree(spec->binds[i].host,
					spec->binds[i].writable
						? MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
						: ro, 1);
		if (t->user[i] < 0)
			return -1;
	}
	for (i = 0; i < SB_DEVICES; i++) {
		snprintf(path, sizeof(path), "/dev/%s", devices[i]);
		*what = "/dev nodes";
		t->dev[i] = clone_tree(path, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, 0);
		if (t->dev[i] < 0)
			return -1;
	}
	return 0;
}

static int write_file(int dirfd, const char *name, const char *data, mode_t mode)
{
	size_t len = strlen(data), off = 0;
	ssize_t n;
	int fd, saved;

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
	if (fd < 0)
		return -1;
	while (off < len) {
		n = write(fd, data + off, len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
		off += (size_t)n;
	}
	return close(fd);
}

/* An O_PATH fd of name beneath dirfd: through no symlink (ELOOP), never
 * out of dirfd (EXDEV); into whatever is mounted on the way. */
static int open_beneath(int dirfd, const char *name)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = O_PATH | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
	return (int)syscall(SYS_openat2, dirfd, name, &how, sizeof(how));
}

/* Open (creating as needed) the mount point `inside` under the root dirfd,
 * one component at a time, each beneath the directory the last one gave
 * and through no symlink: a symlink planted in a writable bind (by an
 * earlier run) fails with ELOOP and *what naming it, so a mount lands
 * exactly at `inside` or nowhere. A missing component is made in the
 * directory so opened. Returns an O_PATH fd. */
/* inside, its first component one of the root's own links (bin ->
 * usr/bin, made by this run in its fresh root: trusted, unlike a link in
 * a bind) written as where the link leads, into out; else inside. */
static const char *through_root_links(const struct sb_plan *plan, const char *inside,
				      char *out, size_t len)
{
	int i;

	for (i = 0; i < plan->nlinks; i++) {
		const char *name = plan->links[i].name, *to = plan->links[i].target;
		size_t n = strlen(name);

		if (inside[0] != '/' || strncmp(inside + 1, name, n) != 0 ||
		    (inside[1 + n] != '/' && inside[1 + n] != '\0'))
			continue;
		while (*to == '/')
			to++;
		if ((size_t)snprintf(out, len, "/%s%s", to, inside + 1 + n) >= len)
			return inside; /* too long: walked as it is, and refused */
		return out;
	}
	return inside;
}

static int make_mountpoint(const struct sb_plan *plan, struct sb_trees *t, int rootfd,
			   const char *inside, int is_dir, const char **what)
{
	char buf[SB_PATH_MAX], canon[SB_PATH_MAX];
	char *comp, *slash;
	int parent, next, fd, last, saved;
	struct stat st;
	size_t len;

	inside = through_root_links(plan, inside, canon, sizeof(canon));
	len = strlen(inside);
	if (len >= sizeof(buf) || inside[0] != '/') {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(buf, inside, len + 1);
	parent = open_beneath(rootfd, ".");
	if (parent < 0)
		return -1;
	for (comp = buf + 1; comp && *comp; comp = slash ? slash + 1 : NULL) {
		slash = strchr(comp, '/');
		last = slash == NULL || slash[1] == '\0';
		if (slash)
			*slash = '\0';
		next = open_beneath(parent, comp);
		if (next < 0 && errno == ENOENT) {
			if (last && !is_dir) {
				fd = openat(parent, comp, O_WRONLY | O_CREAT | O_EXCL |
					    O_NOFOLLOW | O_CLOEXEC, 0644);
				if (fd >= 0)
					close(fd);
			} else {
				fd = mkdirat(parent, comp, 0755);
			}
			if (fd < 0 && errno != EEXIST)
				goto fail;
			next = open_beneath(parent, comp);
		}
		if (next < 0 && errno == ELOOP) {
			/* buf ends at comp here */
			if (strcmp(buf, inside) == 0)
				snprintf(t->what, sizeof(t->what),
					 "%s is a symbolic link (a mount point never follows one)",
					 inside);
			else
				snprintf(t->what, sizeof(t->what),
					 "%s: %s is a symbolic link (a mount point never follows one)",
					 inside, buf);
			*what = t->what;
			errno = ELOOP;
		}
		if (next < 0)
			goto fail;
		close(parent);
		parent = next;
		if (slash)
			*slash = '/';
		if (last)
			break;
	}
	if (fstat(parent, &st) < 0)
		goto fail;
	if (!!S_ISDIR(st.st_mode) != !!is_dir) {
		errno = is_dir ? ENOTDIR : EISDIR;
		goto fail;
	}
	return parent;
fail:
	saved = errno;
	close(parent);
	errno = saved;
	return -1;
}

/* Move tree onto `inside`; the tree stays open (landlock.c's rules take
 * it), its caller closes it. */
static int place(const struct sb_plan *plan, struct sb_trees *t, int tree, int rootfd,
		 const char *inside, int is_dir, const char **what)
{
	int target, rc, saved;

	target = make_mountpoint(plan, t, rootfd, inside, is_dir, what);
	if (target < 0)
		return -1;
	rc = move_mount(tree, "", target, "",
			MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	saved = errno;
	close(target);
	errno = saved;
	return rc;
}

void rootfs_close(struct sb_trees *t)
{
	int i;

	for (i = 0; i < (int)(sizeof(t->sys) / sizeof(t->sys[0])); i++)
		if (t->sys[i] >= 0) {
			close(t->sys[i]);
			t->sys[i] = -1;
		}
	for (i = 0; i < SB_MAX_BINDS; i++)
		if (t->user[i] >= 0) {
			close(t->user[i]);
			t->user[i] = -1;
		}
	if (t->workdir >= 0) {
		close(t->workdir);
		t->workdir = -1;
	}
}

static int setup_dev(const struct sb_plan *plan, struct sb_trees *t, const char **what)
{
	static const char *const links[][2] = {
		{ "/proc/self/fd", NEWROOT "/dev/fd" },
		{ "/proc/self/fd/0", NEWROOT "/dev/stdin" },
		{ "/proc/self/fd/1", NEWROOT "/dev/stdout" },
		{ "/proc/self/fd/2", NEWROOT "/dev/stderr" },
	};
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
	char path[64];
	unsigned i;
	int fd;

	*what = "/dev tmpfs";
	if (mkdir(NEWROOT "/dev", 0755) < 0 ||
	    mount("tmpfs", NEWROOT "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC,
		  "size=64k,nr_inodes=64,mode=0755") < 0)
		return -1;
	*what = "/dev nodes";
	for (i = 0; i < SB_DEVICES; i++) {
		snprintf(path, sizeof(path), NEWROOT "/dev/%s", devices[i]);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
		if (fd < 0)
			return -1;
		close(fd);
		if (move_mount(t->dev[i], "", AT_FDCWD, path, MOVE_MOUNT_F_EMPTY_PATH) < 0)
			return -1;
		close(t->dev[i]);
		t->dev[i] = -1;
	}
	for (i = 0; i < sizeof(links) / sizeof(links[0]); i++)
		if (symlink(links[i][0], links[i][1]) < 0)
			return -1;
	*what = "/dev/shm";
	if (mkdir(NEWROOT "/dev/shm", 01777) < 0 ||
	    mount("tmpfs", NEWROOT "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
		  plan->tmpfs_opts) < 0)
		return -1;
	*what = "/dev read-only";
	return mount_setattr(AT_FDCWD, NEWROOT "/dev", 0, &attr, sizeof(attr));
}

/* Limits of the sandbox's own user namespace (the user.* sysctls are per
 * user namespace, and a count charged here is charged to the namespace's
 * creator on the host too: without them a run could take all of root's
 * inotify instances). No namespace of any kind can be created inside (a
 * second layer under seccomp). Best effort for the knobs a kernel lacks;
 * 0 if user.max_user_namespaces took. */
static int limit_userns(void)
{
	static const struct {
		const char *file;
		const char *value;
	} knobs[] = {
		{ NEWROOT "/proc/sys/user/max_user_namespaces", "0\n" },
		{ NEWROOT "/proc/sys/user/max_mnt_namespaces", "0\n" },
		{ NEWROOT "/proc/sys/user/max_net_namespaces", "0\n" },
		{ NEWROOT "/proc/sys/user/max_pid_namespaces", "0\n" },
		{ NEWROOT "/proc/sys/user/max_ipc_namespaces", "0\n" },
		{ NEWROOT "/proc/sys/user/max_uts_namespaces", "0\n" },
		{ NEWROOT "/proc/sys/user/max_cgroup_namespaces", "0\n" },
		{ NEWROOT "/proc/sys/user/max_time_namespaces", "0\n" },
		{ NEWROOT "/proc/sys/user/max_inotify_instances", "16\n" },
		{ NEWROOT "/proc/sys/user/max_inotify_watches", "8192\n" },
		{ NEWROOT "/proc/sys/user/max_fanotify_groups", "0\n" },
		{ NEWROOT "/proc/sys/user/max_fanotify_marks", "0\n" },
	};
	unsigned i;
	int rc = -1;

	for (i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
		size_t len = strlen(knobs[i].value);
		int fd = open(knobs[i].file, O_WRONLY | O_CLOEXEC);
		int ok;

		if (fd < 0)
			continue;
		ok = write(fd, knobs[i].value, len) == (ssize_t)len;
		close(fd);
		if (i == 0 && ok)
			rc = 0;
	}
	return rc;
}

static int setup_proc(unsigned *layers, const char **what)
{
	struct mount_attr ro = {
		.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			    MOUNT_ATTR_NOEXEC,
	};
	char path[96];
	unsigned i;

	*what = "/proc";
	if (mkdir(NEWROOT "/proc", 0555) < 0 ||
	    mount("proc", NEWROOT "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -1;
	if (limit_userns() == 0)
		*layers |= TG_LAYER_USERNS_LIMIT;
	/* /proc/sys read-only: a sandbox that can write kernel.core_pattern
	 * runs a program of its choosing as host root. */
	for (i = 0; i < sizeof(proc_readonly) / sizeof(proc_readonly[0]); i++) {
		snprintf(path, sizeof(path), NEWROOT "%s", proc_readonly[i]);
		*what = proc_readonly[i];
		if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0) {
			if (errno == ENOENT)
				continue;
			return -1;
		}
		if (mount_setattr(AT_FDCWD, path, AT_RECURSIVE, &ro, sizeof(ro)) < 0)
			return -1;
	}
	for (i = 0; i < sizeof(proc_masked_files) / sizeof(proc_masked_files[0]); i++) {
		snprintf(path, sizeof(path), NEWROOT "%s", proc_masked_files[i]);
		*what = proc_masked_files[i];
		if (mount(NEWROOT "/dev/null", path, NULL, MS_BIND, NULL) < 0 &&
		    errno != ENOENT)
			return -1;
	}
	for (i = 0; i < sizeof(proc_masked_dirs) / sizeof(proc_masked_dirs[0]); i++) {
		snprintf(path, sizeof(path), NEWROOT "%s", proc_masked_dirs[i]);
		*what = proc_masked_dirs[i];
		if (mount("tmpfs", path, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
			  "size=4k,nr_inodes=1,mode=0555") < 0 && errno != ENOENT)
			return -1;
	}
	return 0;
}

static int setup_etc(const struct sb_plan *plan, int rootfd, const char **what)
{
	*what = "/etc";
	if (mkdirat(rootfd, "etc", 0755) < 0 ||
	    write_file(rootfd, "etc/passwd", etc_passwd, 0644) < 0 ||
	    write_file(rootfd, "etc/group", etc_group, 0644) < 0 ||
	    write_file(rootfd, "etc/hosts", etc_hosts, 0644) < 0 ||
	    write_file(rootfd, "etc/nsswitch.conf", etc_nsswitch, 0644) < 0 ||
	    write_file(rootfd, "etc/hostname", "sandbox\n", 0644) < 0 ||
	    write_file(rootfd, "etc/resolv.conf", "# no network\n", 0644) < 0)
		return -1;
	(void)plan;
	return 0;
}

int rootfs_build(const struct sb_plan *plan, struct sb_trees *t,
		 unsigned *layers, const char **what)
{
	const struct tg_sandbox_spec *spec = plan->spec;
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
	int rootfd = -1, fsfd = -1, i;

	*what = "tmpfs root";
	fsfd = fsopen("tmpfs", FSOPEN_CLOEXEC);
	if (fsfd < 0 ||
	    fsconfig(fsfd, FSCONFIG_SET_STRING, "size", "1m", 0) < 0 ||
	    fsconfig(fsfd, FSCONFIG_SET_STRING, "nr_inodes", "4096", 0) < 0 ||
	    fsconfig(fsfd, FSCONFIG_SET_STRING, "mode", "0755", 0) < 0 ||
	    fsconfig(fsfd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return -1;
	rootfd = fsmount(fsfd, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	close(fsfd);
	if (rootfd < 0)
		return -1;
	if (move_mount(rootfd, "", AT_FDCWD, NEWROOT, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return -1;
	/* overlays now, as the sandbox's user, before setup_proc forbids the
	 * anonymous mount namespace each new mount briefly needs */
	for (i = 0; i < spec->nbinds; i++) {
		if (!spec->binds[i].upper)
			continue;
		*what = spec->binds[i].inside;
		t->user[i] = overlay_tree(t->layers[i]);
		if (t->user[i] < 0)
			return -1;
		close(t->layers[i][0]);
		close(t->layers[i][1]);
		close(t->layers[i][2]);
	}

	*what = "system binds";
	for (i = 0; i < plan->nsysbinds; i++) {
		if (strncmp(plan->sysbinds[i].inside, "/etc/", 5) == 0)
			continue; /* after /etc exists */
		if (place(plan, t, t->sys[i], rootfd, plan->sysbinds[i].inside,
			  plan->sysbinds[i].is_dir, what) < 0)
			return -1;
	}
	*what = "root links";
	for (i = 0; i < plan->nlinks; i++)
		if (symlinkat(plan->links[i].target, rootfd, plan->links[i].name) < 0)
			return -1;
	if (setup_etc(plan, rootfd, what) < 0)
		return -1;
	*what = "/etc binds";
	for (i = 0; i < plan->nsysbinds; i++) {
		if (strncmp(plan->sysbinds[i].inside, "/etc/", 5) != 0)
			continue;
		if (place(plan, t, t->sys[i], rootfd, plan->sysbinds[i].inside,
			  plan->sysbinds[i].is_dir, what) < 0)
			return -1;
	}
	if (setup_dev(plan, t, what) < 0 || setup_proc(layers, what) < 0)
		return -1;
	*what = "/tmp";
	if (mkdir(NEWROOT "/tmp", 01777) < 0 ||
	    mount("tmpfs", NEWROOT "/tmp", "tmpfs", MS_NOSUID | MS_NODEV,
		  plan->tmpfs_opts) < 0)
		return -1;
	if (!plan->workdir_is_bound) {
		char path[SB_PATH_MAX + 8], canon[SB_PATH_MAX];
		int fd;

		*what = "work directory";
		fd = make_mountpoint(plan, t, rootfd, plan->workdir, 1, what);
		if (fd < 0)
			return -1;
		close(fd);
		/* by the path just made: in the root's own tmpfs, no link but
		 * the root's own */
		snprintf(path, sizeof(path), NEWROOT "%s",
			 through_root_links(plan, plan->workdir, canon, sizeof(canon)));
		if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV,
			  plan->workdir_opts) < 0)
			return -1;
		/* the tmpfs's root, for its Landlock rule */
		t->workdir = make_mountpoint(plan, t, rootfd, plan->workdir, 1, what);
		if (t->workdir < 0)
			return -1;
	}
	for (i = 0; i < spec->nbinds; i++) {
		*what = spec->binds[i].inside;
		if (place(plan, t, t->user[i], rootfd, spec->binds[i].inside,
			  spec->binds[i].is_dir, what) < 0)
			return -1;
	}
	if (plan->workdir_is_bound) {
		int fd;

		/* made where the covering mount allows it (EROFS otherwise) */
		*what = "work directory";
		fd = make_mountpoint(plan, t, rootfd, plan->workdir, 1, what);
		if (fd < 0)
			return -1;
		close(fd);
	}
	*what = "root read-only";
	if (mount_setattr(rootfd, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0)
		return -1;
	/* pivot_root(".", ".") stacks the old root under the new one; the
	 * detach below then drops every host mount from this namespace. */
	*what = "pivot_root";
	if (fchdir(rootfd) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return -1;
	close(rootfd);
	*layers |= TG_LAYER_ROOTFS;
	return 0;
}
