/*
 * A skill's folder read without running anything (include/toolgate/skill.h,
 * docs/SKILLS.md): every file walked with its kind, size and SHA-256, its
 * SKILL.md parsed (src/skills/frontmatter.c), its manifest made.
 *
 * The folder is walked by descriptors, each name opened beneath its
 * parent with O_NOFOLLOW, and each file's kind checked again on the
 * descriptor read: a name swapped for a link or a FIFO between the look
 * and the read is refused, not followed or waited on. A link is followed
 * only by openat2's RESOLVE_BENEATH from the skill's own folder, so one
 * that leaves it (to /etc/shadow, through '..' or an absolute path, or
 * through another link) fails in the kernel, not in a check of ours.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "toolgate/skill.h"
#include "skills/skill_int.h"
#include "util/sodium.h"
#include "util/utf8.h"

struct walk {
	const char *dir; /* as given, for messages */
	int root;
	struct tg_skill *s;
	size_t cap;
	size_t folders; /* walked: counted against the files' ceiling too */
	struct tg_error *err;
};

static int open_beneath(int root, const char *path, int flags)
{
	struct open_how how;

	memset(&how, 0, sizeof(how));
	how.flags = (uint64_t)flags | O_CLOEXEC;
	how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
	return (int)syscall(SYS_openat2, root, path, &how, sizeof(how));
}

static const char *kind(mode_t mode)
{
	if (S_ISFIFO(mode))
		return "a FIFO";
	if (S_ISSOCK(mode))
		return "a socket";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device";
	if (S_ISDIR(mode))
		return "a folder";
	return "not a regular file";
}

/* A name the manifest can hold and a person can read: UTF-8, no control
 * character (C0, DEL or C1), bidi control or line separator, no backslash
 * (sha256sum would escape it). The manifest is printed (`skill manifest`,
 * `sha256sum -c`): U+009B is a terminal's CSI as ESC [ is, and U+202E
 * shows "exe.txt" for "txt.exe". */
static int name_ok(struct walk *w, const char *path, const char *name)
{
	size_t len = strlen(name), at = 0;
	int bad = !utf8_valid(name, len) || skill_name_hidden(name, len);
	char shown[256];

	for (size_t i = 0; i < len && !bad; i++) {
		unsigned char c = (unsigned char)name[i];

		bad = c < 0x20 || c == 0x7f || c == '\\';
	}
	if (!bad)
		return 0;
	/* the name as a person can read it: each byte it may not have a '?' */
	for (size_t i = 0; i < len && at + 1 < sizeof(shown); i++) {
		unsigned char c = (unsigned char)name[i];

		shown[at++] = c < 0x20 || c >= 0x7f || c == '\\' ? '?' : (char)c;
	}
	shown[at] = '\0';
	return tg_error_set(w->err, TG_ERR_INVALID,
			    "%s/%s%s%s: a name that is not UTF-8, or has a control character or a "
			    "backslash (C1 and bidi controls count; each such byte shown as '?')",
			    w->dir, path, *path ? "/" : "", shown);
}

/* What the file open at fd holds, at most max bytes, into *out (NUL
 * after it) and *len; its size from fstat (size) a first guess, the
 * file read to its end whatever it says. */
static int read_whole(struct walk *w, const char *path, int fd, uint64_t size, uint64_t max,
		      char **out, uint64_t *len)
{
	size_t cap = (size_t)(size < max ? size : max) + 1, got = 0;
	char *buf = malloc(cap + 1);

	*out = NULL;
	if (!buf)
		return tg_error_set(w->err, TG_ERR_NOMEM, "out of memory");
	for (;;) {
		ssize_t n;

		if (got == cap) { /* it grew while read */
			char *more;

			if (got > max) {
				free(buf);
				return tg_error_set(w->err, TG_ERR_LIMIT, "%s/%s: over %llu bytes",
						    w->dir, path, (unsigned long long)max);
			}
			cap = cap * 2 > max + 1 ? (size_t)max + 1 : cap * 2;
			more = realloc(buf, cap + 1);
			if (!more) {
				free(buf);
				return tg_error_set(w->err, TG_ERR_NOMEM, "out of memory");
			}
			buf = more;
		}
		n = read(fd, buf + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return tg_error_sys(w->err, errno, "%s/%s", w->dir, path);
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got > max) {
		free(buf);
		return tg_error_set(w->err, TG_ERR_LIMIT, "%s/%s: over %llu bytes", w->dir, path,
				    (unsigned long long)max);
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return 0;
}

/* The file open at fd (its stat in st), path in the skill: read, hashed
 * and listed, its bytes kept (what is scanned and served is what was
 * hashed). md: it is SKILL.md. Closes fd. */
static int add_file(struct walk *w, const char *path, int fd, const struct stat *st, int link,
		    int md)
{
	struct tg_skill *s = w->s;
	struct tg_skill_file *f;
	uint64_t max = md ? TG_SKILL_MD_MAX : TG_SKILL_FILE_MAX, got = 0;
	char *buf = NULL;
	int rc = -1;

	if (!S_ISREG(st->st_mode)) {
		tg_error_set(w->err, TG_ERR_INVALID, "%s/%s: %s%s", w->dir, path,
			     link ? "a link to " : "", kind(st->st_mode));
		goto out;
	}
	if ((uint64_t)st->st_size > max) {
		tg_error_set(w->err, TG_ERR_LIMIT, "%s/%s: %lld bytes, at most %llu", w->dir, path,
			     (long long)st->st_size, (unsigned long long)max);
		goto out;
	}
	if (s->n_files >= TG_SKILL_FILES_MAX) {
		tg_error_set(w->err, TG_ERR_LIMIT, "%s: more than %d files", w->dir,
			     TG_SKILL_FILES_MAX);
		goto out;
	}
	if (s->bytes + (uint64_t)st->st_size > TG_SKILL_BYTES_MAX) {
		tg_error_set(w->err, TG_ERR_LIMIT, "%s: over %u bytes in all", w->dir,
			     TG_SKILL_BYTES_MAX);
		goto out;
	}
	if (read_whole(w, path, fd, (uint64_t)st->st_size, max, &buf, &got) < 0)
		goto out;
	if (s->bytes + got > TG_SKILL_BYTES_MAX) {
		tg_error_set(w->err, TG_ERR_LIMIT, "%s: over %u bytes in all", w->dir,
			     TG_SKILL_BYTES_MAX);
		goto out;
	}
	if (s->n_files == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 16;
		struct tg_skill_file *more = reallocarray(s->files, cap, sizeof(*more));

		if (!more) {
			tg_error_set(w->err, TG_ERR_NOMEM, "out of memory");
			goto out;
		}
		s->files = more;
		w->cap = cap;
	}
	f = &s->files[s->n_files];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path) {
		tg_error_set(w->err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	crypto_hash_sha256(f->sha256, (unsigned char *)buf, got);
	f->size = got;
	f->data = buf;
	f->executable = (st->st_mode & 0111) != 0;
	f->link = link;
	s->n_files++;
	s->bytes += got;
	if (md) {
		s->skill_md = buf;
		s->skill_md_len = got;
	}
	buf = NULL;
	rc = 0;
out:
	free(buf);
	close(fd);
	return rc;
}

/* A link at path in the skill: followed beneath the skill's folder. What
 * it names is looked at (O_PATH) before it is opened for reading: opening
 * a device runs its driver (a tape rewinds, a watchdog starts), so only a
 * regular file is opened, and it must be the one looked at. */
static int add_link(struct walk *w, int dfd, const char *name, const char *path)
{
	char target[PATH_MAX], proc[40];
	ssize_t n = readlinkat(dfd, name, target, sizeof(target) - 1);
	struct stat st, again;
	int fd, rfd;

	if (n < 0)
		return tg_error_sys(w->err, errno, "%s/%s", w->dir, path);
	target[n] = '\0';
	fd = open_beneath(w->root, path, O_PATH);
	if (fd < 0 && errno == EXDEV)
		return tg_error_set(w->err, TG_ERR_INVALID,
				    "%s/%s: a link leaving the skill's folder, or absolute (to %s): "
				    "a link may name only a file of the skill, relatively",
				    w->dir, path, target);
	if (fd < 0 && errno == ELOOP)
		return tg_error_set(w->err, TG_ERR_INVALID, "%s/%s: a loop of links (to %s)",
				    w->dir, path, target);
	if (fd < 0 && errno == ENOENT)
		return tg_error_set(w->err, TG_ERR_INVALID, "%s/%s: a link to nothing (%s)",
				    w->dir, path, target);
	if (fd < 0)
		return tg_error_sys(w->err, errno, "%s/%s (a link to %s)", w->dir, path, target);
	if (fstat(fd, &st) < 0) {
		close(fd);
		return tg_error_sys(w->err, errno, "%s/%s", w->dir, path);
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		if (S_ISDIR(st.st_mode))
			return tg_error_set(w->err, TG_ERR_INVALID,
					    "%s/%s: a link to a folder (%s): only a file may be "
					    "linked", w->dir, path, target);
		return tg_error_set(w->err, TG_ERR_INVALID, "%s/%s: a link to %s (%s)", w->dir,
				    path, kind(st.st_mode), target);
	}
	/* the very file looked at, opened again through its descriptor; without
	 * /proc, by its path again, and refused below if it is another */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	rfd = open(proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (rfd < 0 && errno == ENOENT)
		rfd = open_beneath(w->root, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
	close(fd);
	fd = rfd;
	if (fd < 0)
		return tg_error_sys(w->err, errno, "%s/%s (a link to %s)", w->dir, path, target);
	if (fstat(fd, &again) < 0 || again.st_dev != st.st_dev || again.st_ino != st.st_ino) {
		close(fd);
		return tg_error_set(w->err, TG_ERR_INVALID, "%s/%s: changed while read (a link "
				    "to %s)", w->dir, path, target);
	}
	return add_file(w, path, fd, &again, 1, 0);
}

static int walk_dir(struct walk *w, int dfd, const char *prefix, unsigned depth);

/* Entry name of the folder open at dfd, whose path in the skill is
 * prefix (empty at the top). */
static int walk_entry(struct walk *w, int dfd, const char *prefix, const char *name,
		      unsigned depth)
{
	char path[TG_SKILL_PATH_MAX + 1];
	struct stat st;
	int fd, n;

	if (name_ok(w, prefix, name) < 0)
		return -1;
	n = snprintf(path, sizeof(path), "%s%s%s", prefix, *prefix ? "/" : "", name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return tg_error_set(w->err, TG_ERR_LIMIT, "%s/%s/%.40s...: a path over %d bytes",
				    w->dir, prefix, name, TG_SKILL_PATH_MAX);
	if (depth == 0 &&
	    (strcmp(name, TG_SKILL_MANIFEST) == 0 || strcmp(name, TG_SKILL_SIGNATURE) == 0))
		return 0; /* read by the verification, not listed */
	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return tg_error_sys(w->err, errno, "%s/%s", w->dir, path);
	if (S_ISLNK(st.st_mode)) {
		if (depth == 0 && strcmp(name, "SKILL.md") == 0)
			return tg_error_set(w->err, TG_ERR_INVALID,
					    "%s/SKILL.md: a link: SKILL.md must be a file", w->dir);
		return add_link(w, dfd, name, path);
	}
	if (S_ISDIR(st.st_mode)) {
		int rc;

		if (depth + 1 > TG_SKILL_DEPTH_MAX)
			return tg_error_set(w->err, TG_ERR_LIMIT,
					    "%s/%s: folders more than %d deep", w->dir, path,
					    TG_SKILL_DEPTH_MAX);
		if (++w->folders > TG_SKILL_FILES_MAX)
			return tg_error_set(w->err, TG_ERR_LIMIT, "%s: more than %d folders",
					    w->dir, TG_SKILL_FILES_MAX);
		fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return tg_error_sys(w->err, errno, "%s/%s", w->dir, path);
		rc = walk_dir(w, fd, path, depth + 1);
		close(fd);
		return rc;
	}
	if (!S_ISREG(st.st_mode))
		return tg_error_set(w->err, TG_ERR_INVALID, "%s/%s: %s", w->dir, path,
				    kind(st.st_mode));
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return tg_error_sys(w->err, errno, "%s/%s", w->dir, path);
	if (fstat(fd, &st) < 0) {
		close(fd);
		return tg_error_sys(w->err, errno, "%s/%s", w->dir, path);
	}
	return add_file(w, path, fd, &st, 0, depth == 0 && strcmp(name, "SKILL.md") == 0);
}

/* The folder open at dfd (not closed here), its path in the skill prefix. */
static int walk_dir(struct walk *w, int dfd, const char *prefix, unsigned depth)
{
	int fd = dup(dfd), rc = 0;
	DIR *d;
	struct dirent *e;

	if (fd < 0)
		return tg_error_sys(w->err, errno, "%s", w->dir);
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return tg_error_sys(w->err, errno, "%s/%s", w->dir, prefix);
	}
	errno = 0;
	while (rc == 0 && (e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		rc = walk_entry(w, dfd, prefix, e->d_name, depth);
		errno = 0;
	}
	if (rc == 0 && errno)
		rc = tg_error_sys(w->err, errno, "%s/%s", w->dir, prefix);
	closedir(d);
	return rc;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct tg_skill_file *)a)->path,
		      ((const struct tg_skill_file *)b)->path);
}

/* The canonical manifest of s's files, and its digest. */
static int make_manifest(struct tg_skill *s, struct tg_error *err)
{
	size_t len = 0, at = 0;

	for (size_t i = 0; i < s->n_files; i++)
		len += 64 + 2 + strlen(s->files[i].path) + 1;
	s->manifest = malloc(len + 1);
	if (!s->manifest)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	for (size_t i = 0; i < s->n_files; i++) {
		const struct tg_skill_file *f = &s->files[i];

		sodium_bin2hex(s->manifest + at, 65, f->sha256, 32);
		at += 64;
		at += (size_t)snprintf(s->manifest + at, len + 1 - at, "  %s\n", f->path);
	}
	s->manifest[at] = '\0';
	crypto_hash_sha256(s->digest, (unsigned char *)s->manifest, at);
	return 0;
}

/* The folder's own name (of its real path) is the frontmatter's. */
static int name_matches(const char *dir, const struct tg_skill_meta *m, struct tg_error *err)
{
	char *real = realpath(dir, NULL);
	const char *base;
	int rc = 0;

	if (!real)
		return tg_error_sys(err, errno, "%s", dir);
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	if (strcmp(base, m->name) != 0)
		rc = tg_error_set(err, TG_ERR_INVALID,
				  "%s/SKILL.md: name '%s' is not the folder's name ('%s'); the "
				  "standard has them equal",
				  dir, m->name, base);
	free(real);
	return rc;
}

/* The folder dir read; as a skill (SKILL.md required and checked) when
 * skill is 1. */
static int load(const char *dir, int skill, struct tg_skill **out, struct tg_error *err)
{
	struct tg_skill *s = calloc(1, sizeof(*s));
	struct walk w = { .dir = dir, .s = s, .err = err };
	struct stat st;
	int rc = -1;

	*out = NULL;
	w.root = -1;
	if (!s || !(s->dir = strdup(dir))) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	if (tg_sodium_load("skills", err) < 0)
		goto out;
	w.root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w.root < 0 || fstat(w.root, &st) < 0) {
		tg_error_sys(err, errno, "%s", dir);
		goto out;
	}
	s->dev = (uint64_t)st.st_dev;
	s->ino = (uint64_t)st.st_ino;
	if (walk_dir(&w, w.root, "", 0) < 0)
		goto out;
	if (!skill)
		goto sorted;
	if (!s->skill_md) {
		tg_error_set(err, TG_ERR_INVALID, "%s: no SKILL.md: a skill is a folder with one",
			     dir);
		goto out;
	}
	if (tg_skill_frontmatter_parse(s->skill_md, s->skill_md_len, &s->meta, err) < 0) {
		tg_error_wrap(err, "%s/SKILL.md", dir);
		goto out;
	}
	if (name_matches(dir, &s->meta, err) < 0)
		goto out;
sorted:
	if (s->n_files)
		qsort(s->files, s->n_files, sizeof(*s->files), by_path);
	if (make_manifest(s, err) < 0)
		goto out;
	*out = s;
	s = NULL;
	rc = 0;
out:
	if (w.root >= 0)
		close(w.root);
	tg_skill_free(s);
	return rc;
}

int tg_skill_load(const char *dir, struct tg_skill **out, struct tg_error *err)
{
	return load(dir, 1, out, err);
}

int tg_folder_load(const char *dir, struct tg_skill **out, struct tg_error *err)
{
	return load(dir, 0, out, err);
}

int tg_skill_dir_open(const struct tg_skill *skill, struct tg_error *err)
{
	struct stat st;
	int fd = open(skill->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return tg_error_sys(err, errno, "%s", skill->dir);
	if (fstat(fd, &st) < 0) {
		tg_error_sys(err, errno, "%s", skill->dir);
		close(fd);
		return -1;
	}
	/* the operator named dir; an attacker who may write its parent can make
	 * it a link to another folder once it was read */
	if ((uint64_t)st.st_dev != skill->dev || (uint64_t)st.st_ino != skill->ino) {
		close(fd);
		return tg_error_set(err, TG_ERR_INVALID,
				    "%s: no longer the folder that was read (replaced or moved "
				    "since)", skill->dir);
	}
	return fd;
}

void tg_skill_free(struct tg_skill *skill)
{
	if (!skill)
		return;
	for (size_t i = 0; i < skill->n_files; i++) {
		free(skill->files[i].path);
		free(skill->files[i].data);
	}
	free(skill->files);
	tg_skill_meta_release(&skill->meta);
	free(skill->manifest);
	free(skill->dir);
	free(skill);
}

static int file_cmp(const void *key, const void *f)
{
	return strcmp(key, ((const struct tg_skill_file *)f)->path);
}

const struct tg_skill_file *tg_skill_file(const struct tg_skill *s, const char *path)
{
	/* sorted by path as bytes: strcmp's order */
	return s->n_files ? bsearch(path, s->files, s->n_files, sizeof(*s->files), file_cmp) : NULL;
}
