/*
 * bench/seccomp-export: writes toolgate's own seccomp programs, as the
 * kernel takes them, for a peer that installs them with bubblewrap's
 * --add-seccomp-fd (bench/mcp-sandbox.sh's TypeScript server does, so that
 * both sides of that comparison filter the same system calls).
 *
 * usage: seccomp-export DIR   writes DIR/main.bpf (the kill variant of the
 *                             main policy) and DIR/ioctl.bpf
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

static int export(const char *dir, const char *name, int which)
{
	struct tg_error err;
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(path);
		return -1;
	}
	if (sandbox_seccomp_export(fd, which, &err) < 0) {
		fprintf(stderr, "seccomp-export: %s: %s\n", path, err.msg);
		close(fd);
		return -1;
	}
	return close(fd);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: seccomp-export DIR\n");
		return 2;
	}
	if (export(argv[1], "main.bpf", SB_SECCOMP_MAIN_KILL) < 0 ||
	    export(argv[1], "ioctl.bpf", SB_SECCOMP_IOCTL) < 0)
		return 1;
	return 0;
}
