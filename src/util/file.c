/*
 * Small kernel files, read or written in one system call (file.h). A
 * kernel file returns its whole value in one read and takes one in one
 * write; a short count is an error, never a partial value. And the small
 * file-system matters the parts share: a private directory, a lock file
 * naming its holder, room to write.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "util/file.h"

static int join(char *out, size_t len, const char *dir, const char *file)
{
	int n = file ? snprintf(out, len, "%s/%s", dir, file) : snprintf(out, len, "%s", dir);

	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int file_read_small(const char *dir, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if (len == 0 || join(path, sizeof(path), dir, file) < 0)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

int file_write_small(const char *dir, const char *file, const char *s)
{
	char path[PATH_MAX];
	size_t len = strlen(s);
	ssize_t n;
	int fd, saved;

	if (join(path, sizeof(path), dir, file) < 0)
		return -1;
	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = write(fd, s, len);
	saved = errno;
	close(fd);
	errno = saved;
	if (n >= 0 && (size_t)n != len)
		errno = EIO;
	return n == (ssize_t)len ? 0 : -1;
}

int file_contains(const char *dir, const char *file, const char *needle)
{
	char buf[4096];

	return file_read_small(dir, file, buf, sizeof(buf)) == 0 && strstr(buf, needle) != NULL;
}

char *file_read_all(const char *path, size_t max, int regular_only, size_t *len)
{
	return file_read_stat(path, max, regular_only, len, NULL);
}

char *file_read_stat(const char *path, size_t max, int regular_only, size_t *len,
		     struct stat *st_out)
{
	size_t cap, n = 0;
	struct stat st;
	char *buf, *bigger;
	/* O_NONBLOCK: opening a FIFO to refuse it must not wait for a writer */
	int fd = open(path, O_RDONLY | O_CLOEXEC | (regular_only ? O_NONBLOCK : 0)), e = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0)
		e = errno;
	else if (regular_only && !S_ISREG(st.st_mode))
		e = EINVAL;
	if (e) {
		close(fd);
		errno = e;
		return NULL;
	}
	/* its size, to read it in one go (one byte more shows it grew), or a
	 * page for what has none; never more than one byte past max */
	cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
	if (cap > max + 1)
		cap = max + 1;
	buf = malloc(cap + 1);
	while (buf) {
		ssize_t r;

		if (n == cap) {
			if (cap > max) {
				e = EFBIG;
				break;
			}
			cap = cap > (max + 1) / 2 ? max + 1 : cap * 2;
			/* not realloc: the bytes read so far (a key's, maybe)
			 * are left in no freed block unwiped */
			bigger = malloc(cap + 1);
			if (!bigger)
				break;
			memcpy(bigger, buf, n);
			explicit_bzero(buf, n);
			free(buf);
			buf = bigger;
		}
		r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			e = errno;
			break;
		}
		if (r == 0) {
			close(fd);
			buf[n] = '\0';
			*len = n;
			if (st_out)
				*st_out = st;
			return buf;
		}
		n += (size_t)r;
	}
	if (buf)
		explicit_bzero(buf, n); /* a secret's file too long: its bytes go */
	free(buf);
	close(fd);
	errno = e ? e : ENOMEM; /* 0: malloc or realloc failed */
	return NULL;
}

int file_private_dir(const char *dir)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return -1;
	if (lstat(dir, &st) < 0)
		return -1;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR; /* a symbolic link, or not a directory */
		return -1;
	}
	if (st.st_uid != geteuid()) {
		errno = EPERM;
		return -1;
	}
	if (st.st_mode & 022) {
		errno = EACCES;
		return -1;
	}
	return 0;
}

const char *file_private_dir_why(int errnum)
{
	switch (errnum) {
	case ENOTDIR:
		return "a symbolic link or not a directory";
	case EPERM:
		return "another user's";
	case EACCES:
		return "writable by group or others (anyone there could plant a file)";
	default:
		return NULL;
	}
}

int file_lock_pid(const char *path, int *fd, long *holder)
{
	char pid[32];
	ssize_t n;
	int f, e;

	*fd = -1;
	*holder = 0;
	f = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
	if (f < 0)
		return -1;
	if (flock(f, LOCK_EX | LOCK_NB) < 0) {
		e = errno;
		n = pread(f, pid, sizeof(pid) - 1, 0);
		if (n > 0) {
			pid[n] = '\0';
			*holder = strtol(pid, NULL, 10);
		}
		close(f);
		errno = e == EAGAIN ? EWOULDBLOCK : e;
		return -1;
	}
	/* a stale pid from a killed holder goes: this one is the holder now */
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(f, 0) < 0 || pwrite(f, pid, (size_t)n, 0) != n) {
		e = errno;
		close(f);
		errno = e ? e : EIO;
		return -1;
	}
	*fd = f;
	return 0;
}

int file_room(const struct statvfs *vfs, char *why, size_t len)
{
	unsigned long long blocks = geteuid() == 0 ? vfs->f_bfree : vfs->f_bavail;
	unsigned long long bytes = blocks * (vfs->f_frsize ? vfs->f_frsize : vfs->f_bsize);

	if (vfs->f_flag & ST_RDONLY) {
		snprintf(why, len, "mounted read-only");
		return -1;
	}
	if (bytes < FILE_ROOM_MIN) {
		snprintf(why, len, "full: %llu KiB free", bytes >> 10);
		return -1;
	}
	return 0;
}

#define REMOVE_DEPTH 128 /* directories in directories a removal enters */

/* Everything in directory fd (then closed); 0 or -1. */
static int empty_dir(int fd, int depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	int rc = 0;

	if (!d) {
		close(fd);
		return -1;
	}
	while ((e = readdir(d))) {
		int sub;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0) == 0)
			continue;
		if (errno != EISDIR || depth > REMOVE_DEPTH) {
			rc = -1;
			continue;
		}
		/* one that may not be entered (overlayfs leaves its work
		 * directory mode 000) is made so */
		if (fchmodat(dirfd(d), e->d_name, 0700, 0) < 0 && errno != EPERM) {
			rc = -1;
			continue;
		}
		sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0 || empty_dir(sub, depth + 1) < 0 ||
		    unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) < 0)
			rc = -1;
	}
	closedir(d);
	return rc;
}

int file_remove_tree(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 || empty_dir(fd, 0) < 0)
		return -1;
	return rmdir(dir);
}

int file_temp_dir(const char *prefix, char *out, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	int n = snprintf(out, len, "%s/%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", prefix);

	if (n < 0 || (size_t)n >= len) {
		out[0] = '\0';
		errno = ENAMETOOLONG;
		return -1;
	}
	if (!mkdtemp(out)) {
		out[0] = '\0';
		return -1;
	}
	/* mkdtemp makes it 0700: the sandbox's user reads what is in it */
	if (chmod(out, 0755) < 0) {
		int e = errno;

		rmdir(out);
		out[0] = '\0';
		errno = e;
		return -1;
	}
	return 0;
}
