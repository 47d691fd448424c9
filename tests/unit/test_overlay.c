/* Unit tests: an overlay dry run's changes read off an upper layer made
 * by hand, as overlayfs would leave it (src/exec/overlay.c): added,
 * modified, unchanged copies, mode changes, whiteouts, opaque and new
 * directories, symlinks, diffs and their bounds. */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "exec/exec.h"
#include "unit.h"

static int put(const char *dir, const char *name, const char *text, mode_t mode)
{
	char path[256];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return -1;
	fchmod(fd, mode);
	return close(fd);
}

/* The change reported for path, or NULL. */
static json_t *change(json_t *changes, const char *path)
{
	json_t *c;
	size_t i;

	json_array_foreach(changes, i, c)
		if (strcmp(json_string_value(json_object_get(c, "path")), path) == 0)
			return c;
	return NULL;
}

static int is(json_t *c, const char *what, const char *kind)
{
	return c && strcmp(json_string_value(json_object_get(c, "change")), what) == 0 &&
	       strcmp(json_string_value(json_object_get(c, "kind")), kind) == 0;
}

static int changes_read(void)
{
	char top[64], lower[96], upper[96], path[160];
	json_t *changes = json_array(), *c;
	size_t budget = exec_overlay_diff_budget();
	int truncated = 0, whiteouts, opaque, ufd;
	const char *diff;

	CHECK(unit_tmpdir(top, "overlay") == 0);
	snprintf(lower, sizeof(lower), "%s/lower", top);
	snprintf(upper, sizeof(upper), "%s/upper", top);
	CHECK(mkdir(lower, 0755) == 0 && mkdir(upper, 0755) == 0);
	/* below: what the host has */
	CHECK(put(lower, "notes.txt", "one\ntwo\nthree\n", 0644) == 0);
	CHECK(put(lower, "same.txt", "unchanged\n", 0644) == 0);
	CHECK(put(lower, "mode.sh", "#!/bin/sh\n", 0644) == 0);
	CHECK(put(lower, "gone.txt", "bye\n", 0644) == 0);
	CHECK(put(lower, "bin.dat", "a\0b", 0644) == 0);
	snprintf(path, sizeof(path), "%s/old", lower);
	CHECK(mkdir(path, 0755) == 0 && put(path, "x", "x\n", 0644) == 0);
	/* above: what the run left */
	CHECK(put(upper, "notes.txt", "one\n2\nthree\nfour\n", 0644) == 0);
	CHECK(put(upper, "same.txt", "unchanged\n", 0644) == 0); /* copied up, no change */
	CHECK(put(upper, "mode.sh", "#!/bin/sh\n", 0755) == 0);
	CHECK(put(upper, "new.txt", "fresh", 0644) == 0);
	/* a name that would forge a line of the report, and bytes not UTF-8 */
	CHECK(put(upper, "x\nadded file passwd\xff", "a\x01\xfe\n", 0644) == 0);
	snprintf(path, sizeof(path), "%s/made", upper);
	CHECK(mkdir(path, 0755) == 0 && put(path, "y", "y\n", 0644) == 0);
	snprintf(path, sizeof(path), "%s/link", upper);
	CHECK(symlink("notes.txt", path) == 0);
	/* a whiteout and an opaque directory need root and user xattrs */
	snprintf(path, sizeof(path), "%s/gone.txt", upper);
	whiteouts = mknod(path, S_IFCHR | 0000, makedev(0, 0)) == 0;
	snprintf(path, sizeof(path), "%s/old", upper);
	CHECK(mkdir(path, 0755) == 0);
	opaque = setxattr(path, "user.overlay.opaque", "y", 1, 0) == 0;

	ufd = open(upper, O_RDONLY | O_DIRECTORY);
	CHECK(ufd >= 0);
	CHECK(exec_overlay_changes(lower, ufd, "/workspace", changes, &budget, &truncated) == 0);
	close(ufd);
	CHECK(!truncated);
	c = change(changes, "/workspace/notes.txt");
	CHECK(is(c, "modified", "file"));
	CHECK(json_integer_value(json_object_get(c, "before_bytes")) == 14);
	diff = json_string_value(json_object_get(c, "diff"));
	CHECK(diff && strstr(diff, "--- /workspace/notes.txt\n+++ /workspace/notes.txt\n"));
	CHECK(strstr(diff, "@@ -2,2 +2,3 @@\n-two\n-three\n+2\n+three\n+four\n"));
	CHECK(!change(changes, "/workspace/same.txt"));
	CHECK(is(change(changes, "/workspace/mode.sh"), "mode", "file"));
	CHECK(is(change(changes, "/workspace/new.txt"), "added", "file"));
	CHECK(strstr(json_string_value(json_object_get(change(changes, "/workspace/new.txt"),
						       "diff")),
		     "+fresh\n"));
	CHECK(is(change(changes, "/workspace/made"), "added", "dir"));
	CHECK(is(change(changes, "/workspace/made/y"), "added", "file"));
	c = change(changes, "/workspace/x\\x0aadded file passwd\\xff");
	CHECK(is(c, "added", "file"));
	CHECK(strstr(json_string_value(json_object_get(c, "diff")), "+a\\x01\\xfe\n"));
	c = change(changes, "/workspace/link");
	CHECK(is(c, "added", "symlink"));
	CHECK(strcmp(json_string_value(json_object_get(c, "target")), "notes.txt") == 0);
	if (whiteouts)
		CHECK(is(change(changes, "/workspace/gone.txt"), "deleted", "file"));
	/* an opaque directory: what was below is gone */
	if (opaque)
		CHECK(is(change(changes, "/workspace/old"), "replaced", "dir"));
	else
		CHECK(!change(changes, "/workspace/old"));
	json_decref(changes);
	unit_rmtree(top);
	return 0;
}

/* Binary files get no diff; the diffs together stay within their budget. */
static int diff_bounds(void)
{
	char top[64], lower[96], upper[96], big[2048];
	json_t *changes = json_array();
	size_t budget = 100;
	int truncated = 0, ufd;

	CHECK(unit_tmpdir(top, "overlay-bounds") == 0);
	snprintf(lower, sizeof(lower), "%s/lower", top);
	snprintf(upper, sizeof(upper), "%s/upper", top);
	CHECK(mkdir(lower, 0755) == 0 && mkdir(upper, 0755) == 0);
	memset(big, 'x', sizeof(big) - 2);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = 0;
	CHECK(put(upper, "big.txt", big, 0644) == 0);
	ufd = open(upper, O_RDONLY | O_DIRECTORY);
	CHECK(ufd >= 0);
	CHECK(exec_overlay_changes(lower, ufd, "/w", changes, &budget, &truncated) == 0);
	close(ufd);
	CHECK(json_array_size(changes) == 1);
	CHECK(!json_object_get(json_array_get(changes, 0), "diff"));
	CHECK(json_object_get(json_array_get(changes, 0), "diff_omitted"));
	CHECK(budget == 100);
	json_decref(changes);
	/* the remover takes everything, mode 000 directories too */
	snprintf(big, sizeof(big), "%s/layer", top);
	CHECK(mkdir(big, 0700) == 0);
	snprintf(big, sizeof(big), "%s/layer/sealed", top);
	CHECK(mkdir(big, 0000) == 0);
	CHECK(exec_overlay_remove(top) == 0);
	CHECK(access(top, F_OK) < 0);
	return 0;
}

const struct unit_test overlay_tests[] = {
	{ "overlay/changes_read", changes_read },
	{ "overlay/diff_bounds", diff_bounds },
	UNIT_TESTS_END,
};
