/*
 * An overlay dry run (docs/PIPELINE.md, "Dry run"): a command tool that
 * writes files but has no dry run of its own runs for real, with each of
 * its writable mounts on an overlay whose upper layer is a throw-away
 * directory; the host's files never change. What the run changed is then
 * read off the upper layer, as overlayfs leaves it:
 *
 *   a file or symlink     added (nothing below), modified, or replaced
 *                         (something of another kind below)
 *   a directory           walked; added when nothing was below; replaced
 *                         when marked opaque (user.overlay.opaque: what
 *                         was below is gone)
 *   a 0:0 character device  a whiteout: what was below is deleted
 *
 * Each change is reported with the path the tool saw, the sizes, and for
 * text files a unified diff (one hunk). The walk runs with the sandbox
 * user's rights (the caller sees to that: it shows nothing the tool could
 * not read), never follows a symlink nor crosses into another mount of the
 * host's directory (which the overlay does not show either), and is
 * bounded: at most MAX_CHANGES changes, MAX_DIFF_TOTAL bytes of diff.
 * Names and lines are reported as valid UTF-8 without control characters:
 * anything else is written \xNN, so that no name can hide or forge a line
 * of the report.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "exec/exec.h"
#include "util/file.h"
#include "util/utf8.h"

#define MAX_CHANGES 1000
#define MAX_DEPTH 64
#define MAX_DIFF_FILE (64u << 10)  /* a file diffed, bytes */
#define MAX_DIFF_TOTAL (256u << 10) /* every diff together, bytes */

struct walk {
	json_t *changes;
	size_t diff_left;
	int truncated;
};

/* s[0, n) as a JSON string of valid UTF-8 with no control character but a
 * tab: every other byte that is not, and the backslash, written \xNN
 * (\\). NULL out of memory. */
static json_t *safe_text(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	char *out = malloc(4 * n + 1), *p = out;
	size_t i = 0, len;
	json_t *j;

	if (!out)
		return NULL;
	while (i < n) {
		len = utf8_char(u + i, n - i, NULL);
		if (len && !(len == 1 && ((u[i] < 0x20 && u[i] != '\t') || u[i] == 0x7f ||
					 u[i] == '\\'))) {
			memcpy(p, s + i, len);
			p += len;
			i += len;
		} else if (u[i] == '\\') {
			*p++ = '\\';
			*p++ = '\\';
			i++;
		} else {
			*p++ = '\\';
			*p++ = 'x';
			*p++ = "0123456789abcdef"[u[i] >> 4];
			*p++ = "0123456789abcdef"[u[i] & 15];
			i++;
		}
	}
	*p = 0;
	j = json_string(out);
	free(out);
	return j;
}

static int add(struct walk *w, const char *path, const char *change, const char *kind,
	       json_t **out)
{
	json_t *c;

	*out = NULL;
	if (json_array_size(w->changes) >= MAX_CHANGES) {
		w->truncated = 1;
		return 0;
	}
	c = json_pack("{s:o?,s:s,s:s}", "path", safe_text(path, strlen(path)), "change", change,
		      "kind", kind);
	if (!c || !json_object_get(c, "path") || json_array_append_new(w->changes, c) < 0)
		return -1;
	*out = c;
	return 0;
}

/* name in directory dir, opened with how's flags, never through a symlink
 * nor into another mount: beneath dir. */
static int open_beneath(int dir, const char *name, int flags)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = (unsigned)flags | O_NOFOLLOW | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV |
		      RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, dir, name, &how, sizeof(how));
}

static const char *kind_of(mode_t m)
{
	return S_ISDIR(m) ? "dir" : S_ISREG(m) ? "file" : S_ISLNK(m) ? "symlink" : "special";
}

/* Up to max bytes of file name in dir: malloc'd, OUT *len; NULL when it
 * cannot be read, or is longer (*len then max + 1). */
static char *slurp(int dir, const char *name, size_t max, size_t *len)
{
	int fd = open_beneath(dir, name, O_RDONLY | O_NONBLOCK);
	struct stat st;
	char *buf = NULL;
	size_t n = 0;
	ssize_t r;

	*len = 0;
	/* a regular file, as it is now (never a FIFO that would block) */
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		buf = malloc(max + 1);
	while (buf && n <= max && (r = read(fd, buf + n, max + 1 - n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			buf = NULL;
			break;
		}
		n += (size_t)r;
	}
	if (fd >= 0)
		close(fd);
	*len = n;
	if (buf && n > max) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* The lines of text[0, len): OUT *starts (n + 1 entries, the last = len). */
static size_t split_lines(const char *text, size_t len, size_t **starts)
{
	size_t n = 0, i, *s;

	for (i = 0; i < len; i++)
		n += text[i] == '\n';
	n += len && text[len - 1] != '\n';
	s = malloc((n + 1) * sizeof(*s));
	if (!s) {
		*starts = NULL;
		return 0;
	}
	n = 0;
	for (i = 0; i < len; i++)
		if (i == 0 || text[i - 1] == '\n')
			s[n++] = i;
	s[n] = len;
	*starts = s;
	return n;
}

static int line_eq(const char *a, const size_t *as, size_t i, const char *b, const size_t *bs,
		   size_t j)
{
	size_t la = as[i + 1] - as[i], lb = bs[j + 1] - bs[j];

	return la == lb && memcmp(a + as[i], b + bs[j], la) == 0;
}

/* Lines [from, to) of text, each marked and made safe (safe_text), into
 * buf; -1 out of memory. */
static int put_lines(json_t *buf, char mark, const char *text, const size_t *s, size_t from,
		     size_t to)
{
	size_t i;

	for (i = from; i < to; i++) {
		size_t l = s[i + 1] - s[i];
		json_t *safe;
		char *line;
		size_t size;

		if (l && text[s[i] + l - 1] == '\n')
			l--;
		safe = safe_text(text + s[i], l);
		size = safe ? json_string_length(safe) + 3 : 0;
		line = safe ? malloc(size) : NULL;
		if (line)
			snprintf(line, size, "%c%s\n", mark, json_string_value(safe));
		json_decref(safe);
		if (!line || json_array_append_new(buf, json_string(line)) < 0) {
			free(line);
			return -1;
		}
		free(line);
	}
	return 0;
}

/* A unified diff of before and after (text: no NUL), one hunk between
 * the lines they share at the start and at the end: correct, if not
 * always the shortest. NULL when either is not text, or out of memory. */
static char *unified_diff(const char *path, const char *a, size_t alen, const char *b,
			  size_t blen)
{
	size_t *as, *bs, an, bn, pre = 0, suf = 0, i, total = 0;
	json_t *lines, *l;
	char head[64], *out = NULL, *p;

	if (memchr(a, 0, alen) || memchr(b, 0, blen))
		return NULL;
	an = split_lines(a, alen, &as);
	bn = split_lines(b, blen, &bs);
	lines = json_array();
	if (!as || !bs || !lines)
		goto done;
	while (pre < an && pre < bn && line_eq(a, as, pre, b, bs, pre))
		pre++;
	while (suf < an - pre && suf < bn - pre &&
	       line_eq(a, as, an - 1 - suf, b, bs, bn - 1 - suf))
		suf++;
	if (put_lines(lines, '-', a, as, pre, an - suf) < 0 ||
	    put_lines(lines, '+', b, bs, pre, bn - suf) < 0)
		goto done;
	snprintf(head, sizeof(head), "@@ -%zu,%zu +%zu,%zu @@\n", pre + (an - suf > pre),
		 an - suf - pre, pre + (bn - suf > pre), bn - suf - pre);
	total = strlen(head) + 2 * strlen(path) + 16; /* path: safe already */
	json_array_foreach(lines, i, l)
		total += json_string_length(l);
	out = malloc(total + 1);
	if (!out)
		goto done;
	p = out + snprintf(out, total + 1, "--- %s\n+++ %s\n%s", path, path, head);
	json_array_foreach(lines, i, l) {
		memcpy(p, json_string_value(l), json_string_length(l));
		p += json_string_length(l);
	}
	*p = 0;
done:
	free(as);
	free(bs);
	json_decref(lines);
	return out;
}

/* A regular file in upper, and what lower had under that name (lfd -1 or
 * lst NULL: nothing). */
static int file_change(struct walk *w, int ufd, int lfd, const char *name, const char *path,
		       const struct stat *ust, const struct stat *lst)
{
	size_t alen = 0, blen = 0;
	char *a = NULL, *b = NULL, *diff = NULL;
	json_t *c;
	int rc = 0;

	if (lst && S_ISREG(lst->st_mode) && lst->st_size == ust->st_size) {
		/* copied up but perhaps not changed (opened for writing, chmod) */
		a = slurp(lfd, name, MAX_DIFF_FILE, &alen);
		b = slurp(ufd, name, MAX_DIFF_FILE, &blen);
		if (a && b && alen == blen && memcmp(a, b, alen) == 0) {
			if ((lst->st_mode & 07777) != (ust->st_mode & 07777) &&
			    add(w, path, "mode", "file", &c) < 0)
				rc = -1;
			goto done;
		}
	}
	if (add(w, path, !lst ? "added" : S_ISREG(lst->st_mode) ? "modified" : "replaced", "file",
		&c) < 0) {
		rc = -1;
		goto done;
	}
	if (!c)
		goto done; /* past MAX_CHANGES */
	if (lst && S_ISREG(lst->st_mode))
		json_object_set_new(c, "before_bytes", json_integer((json_int_t)lst->st_size));
	json_object_set_new(c, "after_bytes", json_integer((json_int_t)ust->st_size));
	if (!b)
		b = slurp(ufd, name, MAX_DIFF_FILE, &blen);
	if (!a && lst && S_ISREG(lst->st_mode))
		a = slurp(lfd, name, MAX_DIFF_FILE, &alen);
	if (b && (a || !lst || !S_ISREG(lst->st_mode)))
		diff = unified_diff(json_string_value(json_object_get(c, "path")), a ? a : "",
				    a ? alen : 0, b, blen);
	if (diff && strlen(diff) <= w->diff_left) {
		w->diff_left -= strlen(diff);
		json_object_set_new(c, "diff", json_string(diff));
	} else {
		json_object_set_new(c, "diff_omitted",
				    json_string(diff ? "the diffs are longer than 256 KiB together"
						: !b || (lst && S_ISREG(lst->st_mode) && !a)
						? "more than 64 KiB, or not readable"
						: "not text"));
	}
done:
	free(a);
	free(b);
	free(diff);
	return rc;
}

static int walk_dir(struct walk *w, int ufd, int lfd, const char *path, int depth);

/* One entry name of upper directory ufd (lower lfd, or -1). */
/* A symlink, or another kind of file that is not a regular file. */
static int other_change(struct walk *w, int ufd, int lfd, const char *name, const char *path,
			const struct stat *ust, const struct stat *lst)
{
	char *ta = malloc(4096), *tb = malloc(4096);
	ssize_t na = -1, nb = -1;
	json_t *c;
	int rc = -1;

	if (!ta || !tb)
		goto done;
	if (lst && S_ISLNK(lst->st_mode))
		na = readlinkat(lfd, name, ta, 4096);
	if (S_ISLNK(ust->st_mode))
		nb = readlinkat(ufd, name, tb, 4096);
	rc = 0;
	if (na >= 0 && nb >= 0 && na == nb && memcmp(ta, tb, (size_t)na) == 0)
		goto done;
	rc = add(w, path, !lst ? "added" : (lst->st_mode & S_IFMT) == (ust->st_mode & S_IFMT)
					   ? "modified" : "replaced", kind_of(ust->st_mode), &c);
	if (rc == 0 && c && nb >= 0)
		json_object_set_new(c, "target", safe_text(tb, (size_t)nb));
done:
	free(ta);
	free(tb);
	return rc;
}

/* One entry name of upper directory ufd (lower lfd, or -1). */
static int entry(struct walk *w, int ufd, int lfd, const char *name, const char *dir_path,
		 int depth)
{
	struct stat ust, lst;
	int lower = lfd >= 0 && fstatat(lfd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0;
	char path[4096], opaque[4];
	json_t *c;
	int sub, lsub = -1, rc;

	if (fstatat(ufd, name, &ust, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir_path, name) >= sizeof(path))
		return add(w, dir_path, "modified", "dir", &c); /* too deep to name: the dir */
	if (S_ISCHR(ust.st_mode) && ust.st_rdev == makedev(0, 0))
		return lower ? add(w, path, "deleted", kind_of(lst.st_mode), &c) : 0;
	if (S_ISREG(ust.st_mode))
		return file_change(w, ufd, lfd, name, path, &ust, lower ? &lst : NULL);
	if (!S_ISDIR(ust.st_mode))
		return other_change(w, ufd, lfd, name, path, &ust, lower ? &lst : NULL);
	sub = openat(ufd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sub < 0) {
		/* the tool made it unreadable: say so rather than leave it out */
		return add(w, path, "unreadable", "dir", &c);
	}
	opaque[0] = 0;
	if (fgetxattr(sub, "user.overlay.opaque", opaque, sizeof(opaque) - 1) > 0)
		opaque[1] = 0;
	if (!lower || !S_ISDIR(lst.st_mode)) {
		rc = add(w, path, lower ? "replaced" : "added", "dir", &c);
	} else if (opaque[0] == 'y') {
		rc = add(w, path, "replaced", "dir", &c); /* what was below is gone */
	} else {
		rc = (lst.st_mode & 07777) != (ust.st_mode & 07777) ? add(w, path, "mode", "dir", &c)
								    : 0;
		lsub = open_beneath(lfd, name, O_RDONLY | O_DIRECTORY);
	}
	if (rc == 0)
		rc = walk_dir(w, sub, lsub, path, depth + 1);
	close(sub);
	if (lsub >= 0)
		close(lsub);
	return rc;
}

static int walk_dir(struct walk *w, int ufd, int lfd, const char *path, int depth)
{
	int fd = dup(ufd), rc = 0;
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	if (depth > MAX_DEPTH) {
		w->truncated = 1;
		closedir(d);
		return 0;
	}
	while (rc == 0 && !w->truncated && (e = readdir(d)))
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			rc = entry(w, ufd, lfd, e->d_name, path, depth);
	closedir(d);
	return rc;
}

int exec_overlay_changes(const char *lower, int upper_fd, const char *inside,
			 json_t *changes, size_t *diff_left, int *truncated)
{
	struct walk w = { changes, *diff_left, 0 };
	struct open_how how;
	char root[4096];
	int lfd, rc;

	memset(&how, 0, sizeof(how));
	how.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
	how.resolve = RESOLVE_NO_SYMLINKS;
	lfd = (int)syscall(SYS_openat2, AT_FDCWD, lower, &how, sizeof(how));
	snprintf(root, sizeof(root), "%s", strcmp(inside, "/") == 0 ? "" : inside);
	rc = walk_dir(&w, upper_fd, lfd, root, 0);
	if (lfd >= 0)
		close(lfd);
	*diff_left = w.diff_left;
	*truncated |= w.truncated;
	return rc;
}

size_t exec_overlay_diff_budget(void)
{
	return MAX_DIFF_TOTAL;
}

int exec_overlay_remove(const char *dir)
{
	return file_remove_tree(dir);
}
