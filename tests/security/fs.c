/*
 * tg-escape, filesystem family: reach host files, write where the sandbox
 * must not let us, change the mount table, poke /proc and /sys, make
 * device nodes, escape a chroot.
 */
#include "tg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <unistd.h>

static int a_read_secret(int argc, char **argv)
{
	int r;

	if (argc < 2)
		return tg_report(TG_UNKNOWN, "usage: read_secret HOSTPATH");
	r = tg_file_has_secret(argv[1]);
	if (r > 0)
		return tg_report(TG_ESCAPED, "read %s: secret content read", argv[1]);
	if (r == 0)
		return tg_report(TG_BLOCKED, "read %s: readable but no secret in it", argv[1]);
	return tg_report(TG_BLOCKED, "open %s: %s", argv[1], tg_errname(errno));
}

/* Create a file in DIR; leave it there for the harness to find. */
static int a_write_dir(int argc, char **argv)
{
	char path[PATH_MAX];
	int fd;

	if (argc < 2)
		return tg_report(TG_UNKNOWN, "usage: %s DIR", argv[0]);
	snprintf(path, sizeof path, "%s/tgsec-written-%d", argv[1], (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return tg_report(TG_BLOCKED, "create %s: %s", path, tg_errname(errno));
	if (write(fd, "tgsec-written\n", 14) != 14) {
		int e = errno;
		close(fd);
		return tg_report(TG_ESCAPED, "created %s (write: %s)", path, tg_errname(e));
	}
	close(fd);
	return tg_report(TG_ESCAPED, "created and wrote %s", path);
}

static int a_proc1_root(int argc, char **argv)
{
	char path[PATH_MAX];
	DIR *d;
	struct dirent *de;
	int lasterr = 0;

	if (argc < 2)
		return tg_report(TG_UNKNOWN, "usage: proc1_root HOSTPATH");
	snprintf(path, sizeof path, "/proc/1/root%s", argv[1]);
	if (tg_file_has_secret(path) > 0)
		return tg_report(TG_ESCAPED, "read %s: secret content read", path);
	lasterr = errno;
	/* Every other visible process's root, too. */
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/root%s", de->d_name, argv[1]);
		if (tg_file_has_secret(path) > 0) {
			closedir(d);
			return tg_report(TG_ESCAPED, "read %s: secret content read", path);
		}
		/* a cwd left on the host filesystem leads out, too */
		snprintf(path, sizeof path, "/proc/%s/cwd/../../../../../../../../..%s",
			 de->d_name, argv[1]);
		if (tg_file_has_secret(path) > 0) {
			closedir(d);
			return tg_report(TG_ESCAPED, "read %s: secret content read", path);
		}
	}
	if (d)
		closedir(d);
	return tg_report(TG_BLOCKED, "/proc/1/root%s: %s (and no /proc/*/root led out)",
			 argv[1], tg_errname(lasterr));
}

/* DIR holds planted symlinks: abs -> absolute host path of the secret,
 * rel -> a relative path climbing out of DIR to the secret. */
static int a_symlink_escape(int argc, char **argv)
{
	static const char *const names[] = { "abs", "rel" };
	char path[PATH_MAX], own[PATH_MAX], target[PATH_MAX];
	char errs[512] = "";
	ssize_t tl;

	if (argc < 2)
		return tg_report(TG_UNKNOWN, "usage: symlink_escape DIR");
	for (size_t i = 0; i < 2; i++) {
		snprintf(path, sizeof path, "%s/%s", argv[1], names[i]);
		if (tg_file_has_secret(path) > 0)
			return tg_report(TG_ESCAPED, "followed %s out of the bind: secret read", path);
		snprintf(errs + strlen(errs), sizeof errs - strlen(errs), "%s: %s; ",
			 names[i], tg_errname(errno));
		/* Re-create the same link ourselves in /tmp (a writable place)
		 * and through /proc/self/root. */
		tl = readlink(path, target, sizeof target - 1);
		if (tl > 0) {
			target[tl] = '\0';
			snprintf(own, sizeof own, "/tmp/tgsec-link-%d-%zu", (int)getpid(), i);
			if (symlink(target, own) == 0) {
				int r = tg_file_has_secret(own);
				unlink(own);
				if (r > 0)
					return tg_report(TG_ESCAPED, "own symlink to %s: secret read", target);
			}
			snprintf(own, sizeof own, "/proc/self/root%s%.4000s",
				 target[0] == '/' ? "" : "/", target);
			if (tg_file_has_secret(own) > 0)
				return tg_report(TG_ESCAPED, "%s: secret read", own);
		}
	}
	return tg_report(TG_BLOCKED, "%s", errs);
}

/* DIR is a bind; climb out of it with "..". REL is the secret's path
 * relative to DIR's parent on the host, ABS its absolute host path. */
static int a_dotdot_escape(int argc, char **argv)
{
	char path[PATH_MAX];
	size_t off;

	if (argc < 4)
		return tg_report(TG_UNKNOWN, "usage: dotdot_escape DIR REL ABS");
	snprintf(path, sizeof path, "%s/../%s", argv[1], argv[2]);
	if (tg_file_has_secret(path) > 0)
		return tg_report(TG_ESCAPED, "%s: secret read", path);
	off = (size_t)snprintf(path, sizeof path, "%s", argv[1]);
	for (int i = 0; i < 40 && off < sizeof path - 8; i++)
		off += (size_t)snprintf(path + off, sizeof path - off, "/..");
	snprintf(path + off, sizeof path - off, "%s", argv[3]);
	if (tg_file_has_secret(path) > 0)
		return tg_report(TG_ESCAPED, "%s/..(x40)%s: secret read", argv[1], argv[3]);
	return tg_report(TG_BLOCKED, "%s/../%s and %s/..(x40)%s: %s", argv[1],
			 argv[2], argv[1], argv[3], tg_errname(errno));
}

static int a_open_by_handle_at(int argc, char **argv)
{
	const char *mp = tg_arg(argc, argv, 1, "/usr");
	union {
		struct file_handle fh;
		char buf[sizeof(struct file_handle) + 128];
	} h;
	uint32_t ino_gen[2] = { 2, 0 };	/* ext4 root inode, generation 0 */
	int mfd, fd, mnt_id;

	mfd = open(mp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		mfd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (mfd < 0)
		return tg_report(TG_UNKNOWN, "open %s: %s", mp, tg_errname(errno));
	/* "shocker": a forged handle for the root inode of the host fs. */
	memset(&h, 0, sizeof h);
	h.fh.handle_bytes = 8;
	h.fh.handle_type = 1;	/* FILEID_INO32_GEN */
	memcpy(h.fh.f_handle, ino_gen, 8);
	fd = open_by_handle_at(mfd, &h.fh, O_RDONLY | O_DIRECTORY);
	if (fd >= 0) {
		struct stat st;
		fstat(fd, &st);
		return tg_report(TG_ESCAPED, "open_by_handle_at(forged root handle) gave fd %d (inode %lu)",
				 fd, (unsigned long)st.st_ino);
	}
	int e1 = errno;
	/* A real handle, as a fallback proof that the call works. */
	memset(&h, 0, sizeof h);
	h.fh.handle_bytes = 128;
	if (name_to_handle_at(AT_FDCWD, mp, &h.fh, &mnt_id, 0) == 0) {
		fd = open_by_handle_at(mfd, &h.fh, O_RDONLY);
		if (fd >= 0)
			return tg_report(TG_ESCAPED, "open_by_handle_at(handle of %s) gave fd %d (forged: %s)",
					 mp, fd, tg_errname(e1));
		return tg_report(e1 == EPERM || errno == EPERM ? TG_BLOCKED : TG_UNKNOWN,
				 "open_by_handle_at: forged %s, real %s",
				 tg_errname(e1), tg_errname(errno));
	}
	return tg_report(e1 == EPERM ? TG_BLOCKED : TG_UNKNOWN,
			 "open_by_handle_at(forged): %s; name_to_handle_at %s: %s",
			 tg_errname(e1), mp, tg_errname(errno));
}

static int a_mount_tmpfs(int argc, char **argv)
{
	const char *dir = tg_arg(argc, argv, 1, "/tmp");

	if (mount("tgsec", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=1m") < 0)
		return tg_report(TG_BLOCKED, "mount tmpfs on %s: %s", dir, tg_errname(errno));
	umount2(dir, MNT_DETACH);
	return tg_report(TG_ESCAPED, "mounted a tmpfs on %s", dir);
}

static int try_write_in(const char *dir, char *msg, size_t n)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof path, "%s/.tgsec-rw-%d", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(msg, n, "write test: %s", tg_errname(errno));
		return -1;
	}
	close(fd);
	unlink(path);
	snprintf(msg, n, "wrote a file in it");
	return 0;
}

static int a_remount_rw(int argc, char **argv)
{
	const char *dir = tg_arg(argc, argv, 1, "/usr");
	char msg[128];

	if (mount(NULL, dir, NULL, MS_REMOUNT | MS_BIND, NULL) < 0)
		return tg_report(TG_BLOCKED, "remount %s read-write: %s", dir, tg_errname(errno));
	try_write_in(dir, msg, sizeof msg);
	return tg_report(TG_ESCAPED, "remounted %s read-write (%s)", dir, msg);
}

static int a_mount_setattr_rw(int argc, char **argv)
{
	const char *dir = tg_arg(argc, argv, 1, "/usr");
	struct mount_attr ma;
	char msg[128];

	memset(&ma, 0, sizeof ma);
	ma.attr_clr = MOUNT_ATTR_RDONLY;
	if (syscall(SYS_mount_setattr, AT_FDCWD, dir, 0, &ma, sizeof ma) < 0)
		return tg_report(TG_BLOCKED, "mount_setattr(%s, clear RDONLY): %s", dir,
				 tg_errname(errno));
	try_write_in(dir, msg, sizeof msg);
	return tg_report(TG_ESCAPED, "mount_setattr cleared RDONLY on %s (%s)", dir, msg);
}

static int a_fsopen_tmpfs(int argc, char **argv)
{
	long fd, mfd;

	(void)argc;
	(void)argv;
	fd = syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fd < 0)
		return tg_report(TG_BLOCKED, "fsopen(tmpfs): %s", tg_errname(errno));
	if (syscall(SYS_fsconfig, fd, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		return tg_report(TG_BLOCKED, "fsopen ok, fsconfig(CREATE): %s", tg_errname(errno));
	mfd = syscall(SYS_fsmount, fd, FSMOUNT_CLOEXEC, 0);
	if (mfd < 0)
		return tg_report(TG_BLOCKED, "fsopen ok, fsmount: %s", tg_errname(errno));
	return tg_report(TG_ESCAPED, "created a detached tmpfs mount (fd %ld)", mfd);
}

static int a_umount2(int argc, char **argv)
{
	const char *dir = tg_arg(argc, argv, 1, "/usr");

	if (umount2(dir, MNT_DETACH) < 0)
		return tg_report(TG_BLOCKED, "umount2(%s): %s", dir, tg_errname(errno));
	return tg_report(TG_ESCAPED, "unmounted %s", dir);
}

static int a_pivot_root(int argc, char **argv)
{
	long r;

	(void)argc;
	(void)argv;
	r = syscall(SYS_pivot_root, "/tgsec-nonexistent-new", "/tgsec-nonexistent-old");
	return tg_syscall_verdict("pivot_root(nonexistent paths)", r);
}

static int a_open_tree(int argc, char **argv)
{
	const char *p = tg_arg(argc, argv, 1, "/usr");
	long fd = syscall(SYS_open_tree, AT_FDCWD, p, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);

	if (fd < 0)
		return tg_report(TG_BLOCKED, "open_tree(%s, CLONE): %s", p, tg_errname(errno));
	return tg_report(TG_ESCAPED, "open_tree(%s, CLONE) made a detached mount (fd %ld)", p, fd);
}

static int a_move_mount(int argc, char **argv)
{
	long r;

	(void)argc;
	(void)argv;
	r = syscall(SYS_move_mount, -1, "", -1, "", 0);
	return tg_syscall_verdict("move_mount(-1, \"\", -1, \"\")", r);
}

static int a_proc_sys_core_pattern(int argc, char **argv)
{
	char cur[512];
	long n;
	int fd;
	ssize_t w;

	(void)argc;
	(void)argv;
	n = tg_read_file("/proc/sys/kernel/core_pattern", cur, sizeof cur);
	if (n <= 0)
		return tg_report(TG_UNKNOWN, "read core_pattern: %s", tg_errname(errno));
	fd = open("/proc/sys/kernel/core_pattern", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return tg_report(TG_BLOCKED, "open core_pattern for writing: %s", tg_errname(errno));
	/* Write back the unchanged value: proves write access, changes nothing. */
	w = write(fd, cur, (size_t)n);
	if (w < 0)
		return tg_report(TG_BLOCKED, "write core_pattern: %s", tg_errname(errno));
	return tg_report(TG_ESCAPED, "wrote %zd bytes to /proc/sys/kernel/core_pattern (same value)", w);
}

static int a_proc_sys_hostname(int argc, char **argv)
{
	const char *name = tg_arg(argc, argv, 1, "tgsec-pwned");
	struct utsname u;
	int fd = open("/proc/sys/kernel/hostname", O_WRONLY | O_CLOEXEC);

	if (fd < 0)
		return tg_report(TG_BLOCKED, "open /proc/sys/kernel/hostname for writing: %s",
				 tg_errname(errno));
	if (write(fd, name, strlen(name)) < 0)
		return tg_report(TG_BLOCKED, "write /proc/sys/kernel/hostname: %s", tg_errname(errno));
	close(fd);
	uname(&u);
	if (strcmp(u.nodename, name) == 0)
		return tg_report(TG_ESCAPED, "set hostname to %s through /proc/sys", name);
	return tg_report(TG_BLOCKED, "write accepted but hostname is %s", u.nodename);
}

static int a_sysrq_trigger(int argc, char **argv)
{
	int fd;

	(void)argc;
	(void)argv;
	/* Open only; never write a command. */
	fd = open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return tg_report(TG_BLOCKED, "open /proc/sysrq-trigger for writing: %s",
				 tg_errname(errno));
	close(fd);
	return tg_report(TG_ESCAPED, "opened /proc/sysrq-trigger for writing");
}

static int a_proc_kcore(int argc, char **argv)
{
	char c;
	int fd;

	(void)argc;
	(void)argv;
	fd = open("/proc/kcore", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return tg_report(TG_BLOCKED, "open /proc/kcore: %s", tg_errname(errno));
	if (read(fd, &c, 1) != 1)
		return tg_report(TG_BLOCKED, "read /proc/kcore: %s", tg_errname(errno));
	return tg_report(TG_ESCAPED, "read kernel memory from /proc/kcore");
}

static int a_see_sys(int argc, char **argv)
{
	static const char *const dirs[] = { "/sys/class/net", "/sys/kernel", "/sys/block",
					    "/sys/fs/cgroup" };
	int lasterr = 0;

	(void)argc;
	(void)argv;
	for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
		DIR *d = opendir(dirs[i]);
		int n = 0;
		if (!d) {
			lasterr = errno;
			continue;
		}
		while (readdir(d))
			n++;
		closedir(d);
		if (n > 2)
			return tg_report(TG_ESCAPED, "listed %s (%d entries)", dirs[i], n - 2);
	}
	return tg_report(TG_BLOCKED, "no /sys content visible (%s)", tg_errname(lasterr));
}

static int a_write_usr(int argc, char **argv)
{
	const char *dir = tg_arg(argc, argv, 1, "/usr");
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof path, "%s/.tgsec-write-%d", dir, (int)getpid());
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return tg_report(TG_BLOCKED, "create %s: %s", path, tg_errname(errno));
	close(fd);
	unlink(path);
	return tg_report(TG_ESCAPED, "created (and removed) %s", path);
}

static int a_mknod_char(int argc, char **argv)
{
	const char *dir = tg_arg(argc, argv, 1, "/tmp");
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof path, "%s/tgsec-null-%d", dir, (int)getpid());
	if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) < 0)
		return tg_report(TG_BLOCKED, "mknod %s c 1 3: %s", path, tg_errname(errno));
	fd = open(path, O_WRONLY | O_CLOEXEC);
	unlink(path);
	if (fd < 0)
		return tg_report(TG_BLOCKED, "mknod ok but open: %s", tg_errname(errno));
	if (write(fd, "x", 1) != 1)
		return tg_report(TG_BLOCKED, "mknod+open ok but write: %s", tg_errname(errno));
	return tg_report(TG_ESCAPED, "created and used char device 1:3 at %s", path);
}

/* mknod a block device and open it: the disk behind /usr first, then
 * loop0 (some hosts forbid opening their disk even to root). */
static int a_mknod_block(int argc, char **argv)
{
	const char *dir = tg_arg(argc, argv, 1, "/tmp");
	char path[PATH_MAX], buf[4096], errs[256] = "";
	struct stat st;
	dev_t devs[2];

	if (stat("/usr", &st) < 0 && stat("/", &st) < 0)
		return tg_report(TG_UNKNOWN, "stat /usr: %s", tg_errname(errno));
	devs[0] = st.st_dev;
	devs[1] = makedev(7, 0);
	for (int i = 0; i < 2; i++) {
		ssize_t n;
		int fd;
		snprintf(path, sizeof path, "%s/tgsec-blk-%d-%d", dir, (int)getpid(), i);
		if (mknod(path, S_IFBLK | 0600, devs[i]) < 0)
			return tg_report(TG_BLOCKED, "mknod %s b %u:%u: %s", path, major(devs[i]),
					 minor(devs[i]), tg_errname(errno));
		fd = open(path, O_RDONLY | O_CLOEXEC);
		unlink(path);
		if (fd < 0) {
			snprintf(errs + strlen(errs), sizeof errs - strlen(errs),
				 "mknod b %u:%u ok, open: %s; ", major(devs[i]), minor(devs[i]),
				 tg_errname(errno));
			continue;
		}
		n = read(fd, buf, sizeof buf);
		close(fd);
		return tg_report(TG_ESCAPED, "%screated and opened block device %u:%u (read %zd bytes)",
				 errs, major(devs[i]), minor(devs[i]), n);
	}
	return tg_report(TG_BLOCKED, "%s", errs);
}

static int a_chroot_escape(int argc, char **argv)
{
	const char *work = tg_arg(argc, argv, 2, "/tmp");
	char jail[PATH_MAX];

	if (argc < 2)
		return tg_report(TG_UNKNOWN, "usage: chroot_escape HOSTSECRET [WORKDIR]");
	if (chdir(work) < 0)
		return tg_report(TG_UNKNOWN, "chdir %s: %s", work, tg_errname(errno));
	snprintf(jail, sizeof jail, "tgsec-jail-%d", (int)getpid());
	if (mkdir(jail, 0755) < 0)
		return tg_report(TG_UNKNOWN, "mkdir %s: %s", jail, tg_errname(errno));
	/* Step 1 (the "jail"), then the classic: chroot again without chdir. */
	if (chroot(jail) < 0) {
		int e = errno;
		rmdir(jail);
		return tg_report(TG_BLOCKED, "chroot: %s", tg_errname(e));
	}
	for (int i = 0; i < 64; i++)
		if (chdir("..") < 0)
			break;
	if (chroot(".") < 0)
		return tg_report(TG_BLOCKED, "second chroot: %s", tg_errname(errno));
	char full[PATH_MAX + 64];
	snprintf(full, sizeof full, "%.3000s/%.60s", work, jail);
	rmdir(full);
	if (tg_file_has_secret(argv[1]) > 0)
		return tg_report(TG_ESCAPED, "chroot+chdir(..) escape: read %s", argv[1]);
	return tg_report(TG_BLOCKED, "chroot worked but %s not reachable: %s", argv[1],
			 tg_errname(errno));
}

/* Try every file under /proc/sys for writing (open only, never write). */
static int walk_sys(const char *dir, char *hit, size_t n, int depth)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int found = 0;

	if (!d)
		return 0;
	while (!found && (de = readdir(d))) {
		char path[PATH_MAX];
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof path, "%.2000s/%.255s", dir, de->d_name);
		if (de->d_type == DT_DIR) {
			if (depth < 6)
				found = walk_sys(path, hit, n, depth + 1);
		} else if (de->d_type == DT_REG) {
			int fd = open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
			if (fd >= 0) {
				close(fd);
				snprintf(hit, n, "%s", path);
				found = 1;
			}
		}
	}
	closedir(d);
	return found;
}

static int a_proc_sys_any(int argc, char **argv)
{
	char hit[PATH_MAX];

	(void)argc;
	(void)argv;
	if (walk_sys("/proc/sys", hit, sizeof hit, 0))
		return tg_report(TG_ESCAPED, "%s opens for writing", hit);
	return tg_report(TG_BLOCKED, "no file under /proc/sys opens for writing");
}

/* Kernel addresses (a KASLR leak) in /proc/kallsyms. */
static int a_kallsyms(int argc, char **argv)
{
	static char buf[1 << 16];
	long n;

	(void)argc;
	(void)argv;
	n = tg_read_file("/proc/kallsyms", buf, sizeof buf);
	if (n < 0)
		return tg_report(TG_BLOCKED, "read /proc/kallsyms: %s", tg_errname(errno));
	for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
		if (strtoull(line, NULL, 16) != 0)
			return tg_report(TG_ESCAPED, "/proc/kallsyms shows kernel addresses (%.16s...)", line);
	return tg_report(TG_BLOCKED, "/proc/kallsyms readable (%ld bytes) but addresses are zeroed", n);
}

/* Device nodes a sandbox must not offer (open read-only, never used). */
static int a_dev_sensitive(int argc, char **argv)
{
	static const char *const devs[] = {
		"/dev/kvm", "/dev/vda", "/dev/sda", "/dev/nvme0n1", "/dev/mem", "/dev/kmem",
		"/dev/port", "/dev/kmsg", "/dev/fuse", "/dev/net/tun", "/dev/loop-control",
		"/dev/loop0", "/dev/vsock", "/dev/vhost-vsock", "/dev/vhost-net",
		"/dev/uinput", "/dev/console", "/dev/tty0", "/dev/tty1", "/dev/mapper/control",
		"/dev/btrfs-control", "/dev/autofs", "/dev/hwrng", "/dev/cpu/0/msr",
		"/dev/dri/card0", "/dev/input/event0", "/dev/watchdog", "/dev/userfaultfd",
		"/dev/ptmx", "/dev/pts/ptmx", "/dev/mqueue", "/dev/sg0", "/dev/rtc0",
	};
	char opened[512] = "";
	int n = 0;

	(void)argc;
	(void)argv;
	for (size_t i = 0; i < sizeof devs / sizeof devs[0]; i++) {
		int fd = open(devs[i], O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0)
			continue;
		close(fd);
		n++;
		snprintf(opened + strlen(opened), sizeof opened - strlen(opened), "%s ", devs[i]);
	}
	if (n)
		return tg_report(TG_ESCAPED, "opened %d sensitive devices: %s", n, opened);
	return tg_report(TG_BLOCKED, "none of %zu sensitive device nodes opens",
			 sizeof devs / sizeof devs[0]);
}

const struct tg_attempt tg_fs_attempts[] = {
	{ "read_secret", "filesystem", a_read_secret, "HOSTPATH  read a secret file outside" },
	{ "write_outside", "filesystem", a_write_dir, "HOSTDIR  create a file in a host directory" },
	{ "write_ro_bind", "filesystem", a_write_dir, "DIR  create a file in a read-only bind" },
	{ "proc1_root", "filesystem", a_proc1_root, "HOSTPATH  read it via /proc/1/root (and /proc/*/root)" },
	{ "symlink_escape", "filesystem", a_symlink_escape, "DIR  follow planted symlinks out of a bind" },
	{ "dotdot_escape", "filesystem", a_dotdot_escape, "DIR REL ABS  climb out of a bind with .." },
	{ "open_by_handle_at", "filesystem", a_open_by_handle_at, "[MOUNTPOINT]  shocker-style forged handle" },
	{ "mount_tmpfs", "filesystem", a_mount_tmpfs, "[DIR]  mount(2) a tmpfs" },
	{ "remount_rw", "filesystem", a_remount_rw, "[DIR]  remount a read-only bind read-write" },
	{ "mount_setattr_rw", "filesystem", a_mount_setattr_rw, "[DIR]  clear MOUNT_ATTR_RDONLY" },
	{ "fsopen_tmpfs", "filesystem", a_fsopen_tmpfs, "new mount API: fsopen/fsconfig/fsmount" },
	{ "umount2", "filesystem", a_umount2, "[DIR]  unmount a mount" },
	{ "pivot_root", "filesystem", a_pivot_root, "pivot_root with nonexistent paths" },
	{ "open_tree", "filesystem", a_open_tree, "[PATH]  open_tree(OPEN_TREE_CLONE)" },
	{ "move_mount", "filesystem", a_move_mount, "move_mount with invalid arguments" },
	{ "proc_sys_core_pattern", "filesystem", a_proc_sys_core_pattern, "write core_pattern (same value)" },
	{ "proc_sys_hostname", "filesystem", a_proc_sys_hostname, "[NAME]  write /proc/sys/kernel/hostname" },
	{ "dev_sensitive", "filesystem", a_dev_sensitive, "open host device nodes (kvm, disks, kmsg, fuse, tun...)" },
	{ "proc_sys_any", "filesystem", a_proc_sys_any, "open any /proc/sys file for writing" },
	{ "kallsyms", "filesystem", a_kallsyms, "kernel addresses in /proc/kallsyms" },
	{ "sysrq_trigger", "filesystem", a_sysrq_trigger, "open /proc/sysrq-trigger for writing" },
	{ "proc_kcore", "filesystem", a_proc_kcore, "read /proc/kcore" },
	{ "see_sys", "filesystem", a_see_sys, "list /sys" },
	{ "write_usr", "filesystem", a_write_usr, "[DIR]  create a file in /usr" },
	{ "mknod_char", "filesystem", a_mknod_char, "[DIR]  mknod c 1:3 and use it" },
	{ "mknod_block", "filesystem", a_mknod_block, "[DIR]  mknod the host disk and read it" },
	{ "chroot_escape", "filesystem", a_chroot_escape, "HOSTSECRET [WORKDIR]  classic chroot escape" },
	{ NULL, NULL, NULL, NULL },
};
