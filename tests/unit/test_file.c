/*
 * util/file_read_all: the ceiling's edges, files with no size (procfs),
 * a FIFO refused rather than blocked on, and a ceiling below one page.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "util/file.h"

static int write_bytes(const char *path, size_t n)
{
	FILE *f = fopen(path, "wb");
	size_t i;

	if (!f)
		return -1;
	for (i = 0; i < n; i++)
		fputc('a' + (int)(i % 26), f);
	return fclose(f);
}

static int ceiling(void)
{
	char dir[] = "/tmp/tg-file-XXXXXX", path[64];
	size_t len = 0;
	char *buf;

	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/f", dir);

	/* exactly max: read whole and NUL-terminated */
	CHECK(write_bytes(path, 10000) == 0);
	buf = file_read_all(path, 10000, 1, &len);
	CHECK(buf && len == 10000 && buf[9999] == 'a' + 9999 % 26 && buf[10000] == '\0');
	free(buf);

	/* one byte past: EFBIG, with the ceiling above or below one page */
	errno = 0;
	CHECK(file_read_all(path, 9999, 1, &len) == NULL && errno == EFBIG);
	errno = 0;
	CHECK(file_read_all(path, 100, 0, &len) == NULL && errno == EFBIG);

	/* empty */
	CHECK(write_bytes(path, 0) == 0);
	buf = file_read_all(path, 0, 1, &len);
	CHECK(buf && len == 0 && buf[0] == '\0');
	free(buf);

	/* a FIFO: refused when regular_only, never opened for a blocking read */
	CHECK(unlink(path) == 0 && mkfifo(path, 0600) == 0);
	errno = 0;
	CHECK(file_read_all(path, 100, 1, &len) == NULL && errno == EINVAL);
	CHECK(unlink(path) == 0);

	/* missing: open's own errno */
	errno = 0;
	CHECK(file_read_all(path, 100, 0, &len) == NULL && errno == ENOENT);
	CHECK(rmdir(dir) == 0);
	return 0;
}

static int no_size(void)
{
	size_t len = 0;
	char *buf = file_read_all("/proc/self/status", 1 << 20, 0, &len);

	/* procfs says 0 bytes: read by pages until the end */
	CHECK(buf && len > 0 && strlen(buf) == len && strstr(buf, "Name:") == buf);
	free(buf);
	errno = 0;
	CHECK(file_read_all("/proc/self/status", 8, 0, &len) == NULL && errno == EFBIG);
	return 0;
}

const struct unit_test file_tests[] = {
	{ "file/read_all_ceiling", ceiling },
	{ "file/read_all_no_size", no_size },
	UNIT_TESTS_END,
};
