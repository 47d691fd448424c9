/*
 * A skill's files written out as they were read and hashed
 * (tg_skill_write, include/toolgate/skill.h): what `skill install` puts
 * into the skills folder, and what serve gives a sandbox of the folders
 * it verified (a signed catalogue's tools, a skill's scripts). Written
 * from memory, never copied again from the folder: a file swapped after
 * the read is not what lands.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "toolgate/skill.h"

/* text[0, len) into the new file path (mode), synced when asked: 0, or
 * -1 and err. */
static int put(const char *path, const char *text, uint64_t len, mode_t mode, int sync,
	       struct tg_error *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);

	if (fd < 0)
		return tg_error_sys(err, errno, "%s", path);
	for (uint64_t at = 0; at < len;) {
		ssize_t n = write(fd, text + at, (size_t)(len - at));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			tg_error_sys(err, n < 0 ? errno : EIO, "%s", path);
			close(fd);
			return -1;
		}
		at += (uint64_t)n;
	}
	/* the umask may have taken bits the sandbox's user needs to read */
	if (fchmod(fd, mode) < 0 || (sync && fsync(fd) < 0)) {
		tg_error_sys(err, errno, "%s", path);
		close(fd);
		return -1;
	}
	return close(fd) < 0 ? tg_error_sys(err, errno, "%s", path) : 0;
}

int tg_skill_write(const struct tg_skill *s, const char *to, unsigned flags,
		   struct tg_error *err)
{
	int sync = (flags & TG_SKILL_WRITE_SYNC) != 0;
	size_t tl = strlen(to);

	if (mkdir(to, 0755) < 0 || chmod(to, 0755) < 0)
		return tg_error_sys(err, errno, "%s", to);
	for (size_t i = 0; i < s->n_files; i++) {
		const struct tg_skill_file *k = &s->files[i];
		char path[PATH_MAX];

		/* the walk's own paths: names it read, no '..', no empty one */
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", to, k->path) >= sizeof(path))
			return tg_error_set(err, TG_ERR_LIMIT, "%s: path too long", k->path);
		for (char *slash = strchr(path + tl + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
			*slash = '\0';
			/* made now (EEXIST: by an earlier file, and chmod'd then),
			 * and as to: the umask may have taken the bits the
			 * sandbox's user needs to reach the files below */
			if (mkdir(path, 0755) < 0 ? errno != EEXIST : chmod(path, 0755) < 0)
				return tg_error_sys(err, errno, "%s", path);
			*slash = '/';
		}
		if (put(path, k->data, k->size, k->executable ? 0755 : 0644, sync, err) < 0)
			return -1;
	}
	if (flags & TG_SKILL_WRITE_MANIFEST) {
		char path[PATH_MAX];

		if ((size_t)snprintf(path, sizeof(path), "%s/%s", to, TG_SKILL_MANIFEST) >=
		    sizeof(path))
			return tg_error_set(err, TG_ERR_LIMIT, "%s: path too long", to);
		return put(path, s->manifest, strlen(s->manifest), 0644, sync, err);
	}
	return 0;
}
