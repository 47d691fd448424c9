/*
 * toolgate-init's image in a memfd, once per process: the bytes compiled
 * in (init_image.S), sealed against any change (its mode too), close-on-
 * exec. Every sandbox's PID 1 execs it (child.c) once its layers are in
 * place: a file on no filesystem, so it needs no path inside the sandbox,
 * and Landlock's rules, which are about paths, do not apply to it; no
 * process of a sandbox holds a descriptor of it or can reach it through
 * /proc/1/exe (not dumpable).
 *
 * Mode 0555, readable: an image the exec cannot read makes the process
 * not dumpable, which we want, but also moves its memory's user
 * namespace up to one that maps the image's owner; for a root caller
 * that is the initial one, where pidfd_getfd would then ask the caller
 * for CAP_SYS_PTRACE (run.c, "The hand-over"). toolgate-init makes itself
 * not dumpable as its first act instead.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U /* Linux 6.3: say so, or the kernel warns */
#endif
#ifndef F_SEAL_EXEC
#define F_SEAL_EXEC 0x0020 /* Linux 6.3: the mode is sealed too */
#endif

extern const char sb_init_image[], sb_init_image_end[];

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int image_fd = -1, image_errno;
static const char *image_step = "";

static void make_image(void)
{
	const char *p = sb_init_image;
	size_t left = (size_t)(sb_init_image_end - sb_init_image);
	int fd;

	image_step = "memfd_create";
	fd = memfd_create(SB_INIT_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
	if (fd < 0 && errno == EINVAL) /* before Linux 6.3 */
		fd = memfd_create(SB_INIT_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		goto fail;
	image_step = "write";
	while (left) {
		ssize_t n = write(fd, p, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail_fd;
		p += n;
		left -= (size_t)n;
	}
	image_step = "fchmod";
	if (fchmod(fd, 0555) < 0)
		goto fail_fd;
	image_step = "seal";
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_EXEC) < 0 &&
	    (errno != EINVAL ||
	     fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0))
		goto fail_fd;
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL) < 0)
		goto fail_fd;
	image_fd = fd;
	return;
fail_fd:
	image_errno = errno ? errno : EIO;
	close(fd);
	return;
fail:
	image_errno = errno;
}

int sb_init_fd(struct tg_error *err)
{
	pthread_once(&once, make_image);
	if (image_fd < 0)
		return tg_error_sys(err, image_errno, "%s: its image: %s%s", SB_INIT_NAME,
				    image_step,
				    image_errno == EACCES ? " (is vm.memfd_noexec 2?)" : "");
	return image_fd;
}
