/*
 * The openings' liveness (docs/STORE.md, "Instances"), the store's own
 * whatever the backend: each opening of the store holds an exclusive
 * flock on instances/ID.lock in the state directory for its life, and a
 * backend asks store_instance_alive before it takes over a running key,
 * saga or rollback whose runner recorded another id.
 *
 * Must never: say dead when it cannot tell (a takeover would run a call
 * twice), or touch a database.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store_int.h"

/* ---- instances: which openings are alive ---------------------------------------------
 *
 * Each opening holds an exclusive flock on instances/ID.lock for its life;
 * the kernel drops it when the process dies, kill -9 included. A running
 * key whose runner's lock is free was left by a gateway that died
 * mid-call. The file is locked under a temporary name, then renamed into
 * place, so that no one ever sees it unlocked while its opening lives. */

#define INSTANCES "instances"

static int instance_path(const struct tg_store *st, const char *id, const char *suffix,
			 char *path, size_t len)
{
	return (size_t)snprintf(path, len, "%s/" INSTANCES "/%s%s", st->dir, id, suffix) < len
		       ? 0 : -1;
}

/* 1 if the opening id is alive (its lock is held), 0 if not (its file is
 * then removed). */
int store_instance_alive(const struct tg_store *st, const char *id)
{
	char path[4096];
	int fd, alive;

	if (strcmp(id, st->instance) == 0)
		return 1;
	if (strspn(id, "0123456789abcdef") != 32 || id[32] ||
	    instance_path(st, id, ".lock", path, sizeof(path)) < 0)
		return 0;
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno != ENOENT; /* cannot tell: say alive, take nothing over */
	/* taken: nobody holds it, the opening is dead; held: alive; any
	 * other failure: cannot tell, so alive (take nothing over) */
	alive = flock(fd, LOCK_EX | LOCK_NB) < 0;
	if (!alive)
		unlink(path);
	close(fd);
	return alive;
}

/* This opening's lock, and the files of dead ones swept. */
int store_instance_start(struct tg_store *st, struct tg_error *err)
{
	char dir[4096], tmp[4096], path[4096];
	struct dirent *e;
	DIR *d;

	st->alive_fd = -1;
	if ((size_t)snprintf(dir, sizeof(dir), "%s/" INSTANCES, st->dir) >= sizeof(dir) ||
	    instance_path(st, st->instance, ".tmp", tmp, sizeof(tmp)) < 0 ||
	    instance_path(st, st->instance, ".lock", path, sizeof(path)) < 0)
		return tg_error_set(err, TG_ERR_INVALID, "store: state directory path too long");
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return tg_error_sys(err, errno, "store: %s", dir);
	st->alive_fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (st->alive_fd < 0 || flock(st->alive_fd, LOCK_EX) < 0 || rename(tmp, path) < 0)
		return tg_error_sys(err, errno, "store: %s", tmp);
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		char id[33];

		if (n == 32 + 5 && strcmp(e->d_name + 32, ".lock") == 0) {
			snprintf(id, sizeof(id), "%.32s", e->d_name);
			store_instance_alive(st, id);
		}
	}
	if (d)
		closedir(d);
	return 0;
}

void store_instance_stop(struct tg_store *st)
{
	char path[4096];

	if (st->alive_fd < 0)
		return;
	if (instance_path(st, st->instance, ".lock", path, sizeof(path)) == 0)
		unlink(path);
	close(st->alive_fd);
	st->alive_fd = -1;
}
