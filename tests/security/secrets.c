/*
 * tg-escape, secrets family: the caller's environment, inherited file
 * descriptors, the kernel log.
 */
#include "tg.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/klog.h>
#include <sys/shm.h>
#include <unistd.h>

extern char **environ;

/* Does a NUL-separated block contain an entry starting with "TG_SECRET="? */
static int block_has_secret(const char *buf, long n)
{
	for (long i = 0; i < n; i += (long)strlen(buf + i) + 1)
		if (strncmp(buf + i, "TG_SECRET=", 10) == 0)
			return 1;
	return 0;
}

static int a_env_secret(int argc, char **argv)
{
	static char buf[1 << 16];
	struct dirent *de;
	DIR *d;
	long n;
	int readable = 0;

	(void)argc;
	(void)argv;
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, "TG_SECRET=", 10) == 0)
			return tg_report(TG_ESCAPED, "TG_SECRET is in our environment");
	n = tg_read_file("/proc/self/environ", buf, sizeof buf);
	if (n > 0 && block_has_secret(buf, n))
		return tg_report(TG_ESCAPED, "TG_SECRET in /proc/self/environ");
	n = tg_read_file("/proc/1/environ", buf, sizeof buf);
	if (n > 0 && block_has_secret(buf, n))
		return tg_report(TG_ESCAPED, "TG_SECRET in /proc/1/environ");
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		char path[300];
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/environ", de->d_name);
		n = tg_read_file(path, buf, sizeof buf);
		if (n >= 0)
			readable++;
		if (n > 0 && block_has_secret(buf, n)) {
			closedir(d);
			return tg_report(TG_ESCAPED, "TG_SECRET in %s", path);
		}
	}
	if (d)
		closedir(d);
	return tg_report(TG_BLOCKED, "TG_SECRET not in environ or any of %d readable /proc/*/environ",
			 readable);
}

static int fd_has_secret(int fd)
{
	char buf[4096];
	ssize_t n = pread(fd, buf, sizeof buf - 1, 0);

	if (n < 0)
		n = read(fd, buf, sizeof buf - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strstr(buf, TG_SECRET_MARKER) != NULL;
}

static int a_inherited_fd_secret(int argc, char **argv)
{
	char path[300];
	struct dirent *de, *fe;
	DIR *d, *fd_dir;

	(void)argc;
	(void)argv;
	for (int fd = 3; fd <= 64; fd++)
		if (fcntl(fd, F_GETFD) >= 0 && fd_has_secret(fd))
			return tg_report(TG_ESCAPED, "inherited fd %d holds the secret", fd);
	/* Re-open through /proc/<pid>/fd of every visible process. */
	d = opendir("/proc");
	while (d && (de = readdir(d))) {
		if ((de->d_name[0] < '1' || de->d_name[0] > '9') && strcmp(de->d_name, "self"))
			continue;
		snprintf(path, sizeof path, "/proc/%s/fd", de->d_name);
		fd_dir = opendir(path);
		while (fd_dir && (fe = readdir(fd_dir))) {
			char p2[600];
			int fd;
			if (fe->d_name[0] == '.')
				continue;
			snprintf(p2, sizeof p2, "%s/%s", path, fe->d_name);
			fd = open(p2, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
			if (fd < 0)
				continue;
			if (fd_has_secret(fd)) {
				closedir(fd_dir);
				closedir(d);
				return tg_report(TG_ESCAPED, "%s holds the secret", p2);
			}
			close(fd);
		}
		if (fd_dir)
			closedir(fd_dir);
	}
	if (d)
		closedir(d);
	return tg_report(TG_BLOCKED, "no fd 3..64 and no /proc/*/fd/* leads to the secret");
}

static int a_leaked_fds(int argc, char **argv)
{
	char list[512] = "";
	int found = 0;

	(void)argc;
	(void)argv;
	for (int fd = 3; fd < 1024; fd++) {
		char p[64], t[128];
		ssize_t n;
		if (fcntl(fd, F_GETFD) < 0)
			continue;
		found++;
		snprintf(p, sizeof p, "/proc/self/fd/%d", fd);
		n = readlink(p, t, sizeof t - 1);
		t[n > 0 ? n : 0] = '\0';
		snprintf(list + strlen(list), sizeof list - strlen(list), "%d->%s ", fd,
			 n > 0 ? t : "?");
	}
	if (found)
		return tg_report(TG_ESCAPED, "%d inherited fds above 2: %s", found, list);
	return tg_report(TG_BLOCKED, "only fds 0-2 are open");
}

static int a_dmesg(int argc, char **argv)
{
	static char buf[1 << 16];
	int n, fd;

	(void)argc;
	(void)argv;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, sizeof buf);
	if (n > 0)
		return tg_report(TG_ESCAPED, "read %d bytes of the host kernel log (syslog)", n);
	int e = errno;
	fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && read(fd, buf, sizeof buf) > 0)
		return tg_report(TG_ESCAPED, "read the host kernel log from /dev/kmsg");
	return tg_report(TG_BLOCKED, "syslog(READ_ALL): %s; /dev/kmsg: %s", tg_errname(e),
			 tg_errname(errno));
}

int tg_helper_shm_create(int argc, char **argv)
{
	int id;
	char *p;

	if (argc < 2) {
		fprintf(stderr, "usage: tg-escape shm-create TAG\n");
		return 2;
	}
	id = shmget(tg_tag_key(argv[1]), 4096, IPC_CREAT | 0644);
	if (id < 0 || (p = shmat(id, NULL, 0)) == (void *)-1) {
		fprintf(stderr, "shm-create: %s\n", strerror(errno));
		return 2;
	}
	strcpy(p, TG_SECRET_MARKER "-shm");
	shmdt(p);
	printf("%d\n", id);
	return 0;
}

/* A SysV shm segment of the host, by key and by id enumeration. */
static int a_sysv_shm_host(int argc, char **argv)
{
	struct shm_info si;
	struct shmid_ds ds;
	int id, max;

	if (argc < 2)
		return tg_report(TG_UNKNOWN, "usage: sysv_shm_host TAG");
	id = shmget(tg_tag_key(argv[1]), 0, 0);
	if (id >= 0) {
		char *p = shmat(id, NULL, SHM_RDONLY);
		int has = p != (void *)-1 && strstr(p, TG_SECRET_MARKER) != NULL;
		return tg_report(TG_ESCAPED, "found the host's shm segment by key (id %d)%s", id,
				 has ? ", read the secret" : "");
	}
	int e = errno;
	max = shmctl(0, SHM_INFO, (struct shmid_ds *)(void *)&si);
	for (int i = 0; i <= max && i < 4096; i++) {
		int sid = shmctl(i, SHM_STAT, &ds);
		if (sid >= 0)
			return tg_report(TG_ESCAPED, "SHM_STAT %d found a segment (id %d, key 0x%x)", i,
					 sid, (unsigned)ds.shm_perm.__key);
	}
	return tg_report(TG_BLOCKED, "host segment not found by key (%s) nor by enumeration",
			 tg_errname(e));
}

const struct tg_attempt tg_secret_attempts[] = {
	{ "sysv_shm_host", "secrets", a_sysv_shm_host, "TAG  attach the host's SysV shm segment" },
	{ "env_secret", "secrets", a_env_secret, "find TG_SECRET in environ or /proc/*/environ" },
	{ "inherited_fd_secret", "secrets", a_inherited_fd_secret, "read the secret through an inherited fd" },
	{ "leaked_fds", "secrets", a_leaked_fds, "any fd above 2 open at start" },
	{ "dmesg", "secrets", a_dmesg, "read the host kernel log" },
	{ NULL, NULL, NULL, NULL },
};
