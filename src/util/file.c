/*
 * Small kernel files, read or written in one system call (file.h). A
 * kernel file returns its whole value in one read and takes one in one
 * write; a short count is an error, never a partial value.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
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
