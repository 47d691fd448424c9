/*
 * tg-escape: entry point, dispatch and shared helpers.
 * Usage: tg-escape ATTEMPT [args]   |   tg-escape list   |   tg-escape help
 */
#include "tg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *tg_current = "tg-escape";

int tg_report(int rc, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s: %s [%s]\n", tg_current, msg,
		rc == TG_ESCAPED ? "ESCAPED" :
		rc == TG_BLOCKED ? "blocked" : "unknown");
	fflush(stderr);
	return rc;
}

const char *tg_errname(int err)
{
	const char *n = strerrorname_np(err);
	static char buf[32];

	if (n)
		return n;
	snprintf(buf, sizeof buf, "errno%d", err);
	return buf;
}

int tg_syscall_verdict(const char *what, long ret)
{
	int err = errno;

	if (ret >= 0)
		return tg_report(TG_ESCAPED, "%s returned %ld (reached the kernel)",
				 what, ret);
	if (err == ENOSYS || err == EPERM || err == EACCES)
		return tg_report(TG_BLOCKED, "%s: %s", what, tg_errname(err));
	return tg_report(TG_ESCAPED, "%s: %s (reached the kernel)", what,
			 tg_errname(err));
}

long tg_read_file(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t got = 0;
	int saved;

	if (fd < 0)
		return -1;
	while (got + 1 < n) {
		ssize_t r = read(fd, buf + got, n - 1 - got);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			saved = errno;
			close(fd);
			errno = saved;
			return -1;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	buf[got] = '\0';
	close(fd);
	return (long)got;
}

int tg_file_has_secret(const char *path)
{
	char buf[4096];

	if (tg_read_file(path, buf, sizeof buf) < 0)
		return -1;
	return strstr(buf, TG_SECRET_MARKER) != NULL;
}

int tg_tag_key(const char *tag)
{
	unsigned h = 2166136261u;

	for (const char *p = tag; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	return (int)((h & 0x0fffffffu) | 0x10000000u);
}

const char *tg_arg(int argc, char **argv, int i, const char *def)
{
	return i < argc ? argv[i] : def;
}

static const struct tg_attempt *const tables[] = {
	tg_net_attempts, tg_fs_attempts, tg_proc_attempts,
	tg_sys_attempts, tg_secret_attempts, tg_res_attempts,
};

static const struct tg_attempt *find_attempt(const char *name)
{
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
		for (const struct tg_attempt *a = tables[t]; a->name; a++)
			if (strcmp(a->name, name) == 0)
				return a;
	return NULL;
}

static void list_attempts(FILE *f, int verbose)
{
	for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
		for (const struct tg_attempt *a = tables[t]; a->name; a++) {
			if (verbose)
				fprintf(f, "  %-24s %-10s %s\n", a->name,
					a->family, a->usage);
			else
				fprintf(f, "%s %s\n", a->name, a->family);
		}
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: tg-escape ATTEMPT [args]\n"
		"       tg-escape list                    attempt names and families\n"
		"       tg-escape listen ADDR PORT        TCP+UDP decoy replying " TG_DECOY_MARKER "\n"
		"       tg-escape listen-unix NAME        abstract unix socket decoy\n"
		"       tg-escape listen-path PATH        unix socket decoy at PATH (mode 0777)\n"
		"       tg-escape shm-create TAG          SysV shm segment holding the secret marker\n"
		"       tg-escape victim TAG [SECONDS]    sleeping process with TAG in argv\n"
		"       tg-escape fd-pass [NOFILE]        pass one fd over a unix socket (NOFILE 256)\n"
		"       tg-escape deny-pidfd-getfd CMD... run CMD with pidfd_getfd refused (EPERM)\n"
		"exit: 0 escaped, 1 blocked, 2 could not tell\n"
		"attempts:\n");
	list_attempts(f, 1);
}

int main(int argc, char **argv)
{
	const struct tg_attempt *a;

	if (argc < 2) {
		usage(stderr);
		return TG_UNKNOWN;
	}
	if (strcmp(argv[1], "list") == 0) {
		list_attempts(stdout, 0);
		return 0;
	}
	if (strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "listen") == 0)
		return tg_helper_listen(argc - 1, argv + 1);
	if (strcmp(argv[1], "listen-unix") == 0)
		return tg_helper_listen_unix(argc - 1, argv + 1);
	if (strcmp(argv[1], "listen-path") == 0)
		return tg_helper_listen_path(argc - 1, argv + 1);
	if (strcmp(argv[1], "shm-create") == 0)
		return tg_helper_shm_create(argc - 1, argv + 1);
	if (strcmp(argv[1], "victim") == 0)
		return tg_helper_victim(argc - 1, argv + 1);
	if (strcmp(argv[1], "fd-pass") == 0)
		return tg_helper_fd_pass(argc - 1, argv + 1);
	if (strcmp(argv[1], "deny-pidfd-getfd") == 0)
		return tg_helper_deny_pidfd_getfd(argc - 1, argv + 1);

	a = find_attempt(argv[1]);
	if (!a) {
		fprintf(stderr, "tg-escape: unknown attempt '%s'\n", argv[1]);
		return TG_UNKNOWN;
	}
	tg_current = a->name;
	return a->fn(argc - 1, argv + 1);
}
