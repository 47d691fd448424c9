/*
 * toolgate-init's image in a memfd, made once and checked at every run:
 * the bytes compiled in (init_image.S), sealed against any change (its
 * mode too), close-on-exec. Every sandbox's PID 1 execs it (child.c) once its layers are in
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

static pthread_mutex_t image_lock = PTHREAD_MUTEX_INITIALIZER;
static int image_fd = -1;
static dev_t image_dev;
static ino_t image_ino;

/* The descriptor is still our image: a caller may have closed it (a
 * daemon's close-everything, a forked worker's) and the number since gone
 * to a file of its own, which a sandbox would otherwise exec as its PID 1. */
static int image_ok(void)
{
	struct stat st;
	int seals;

	if (image_fd < 0 || fstat(image_fd, &st) < 0 || st.st_dev != image_dev ||
	    st.st_ino != image_ino)
		return 0;
	seals = fcntl(image_fd, F_GET_SEALS);
	return seals >= 0 && (seals & (F_SEAL_WRITE | F_SEAL_SEAL)) == (F_SEAL_WRITE | F_SEAL_SEAL);
}

/* A new sealed image: its descriptor, or -1 with errno and *step. */
static int make_image(const char **step)
{
	const char *p = sb_init_image;
	size_t left = (size_t)(sb_init_image_end - sb_init_image);
	struct stat st;
	int fd, e;

	*step = "memfd_create";
	fd = memfd_create(SB_INIT_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
	if (fd < 0 && errno == EINVAL) /* before Linux 6.3 */
		fd = memfd_create(SB_INIT_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -1;
	*step = "write";
	while (left) {
		ssize_t n = write(fd, p, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto fail_fd;
		p += n;
		left -= (size_t)n;
	}
	*step = "fchmod";
	if (fchmod(fd, 0555) < 0)
		goto fail_fd;
	*step = "seal";
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_EXEC) < 0 &&
	    (errno != EINVAL ||
	     fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE) < 0))
		goto fail_fd;
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SEAL) < 0)
		goto fail_fd;
	*step = "fstat";
	if (fstat(fd, &st) < 0)
		goto fail_fd;
	image_dev = st.st_dev;
	image_ino = st.st_ino;
	return fd;
fail_fd:
	e = errno ? errno : EIO;
	close(fd);
	errno = e;
	return -1;
}

int sb_init_fd(struct tg_error *err)
{
	const char *step = "";
	int fd, e = 0;

	/* made at the first call and kept; made again when it is no longer
	 * ours (see image_ok) or could not be made before (EMFILE, ENOMEM:
	 * not every later sandbox's failure). The old number is not closed:
	 * it is the caller's now. */
	pthread_mutex_lock(&image_lock);
	if (!image_ok()) {
		image_fd = make_image(&step);
		e = errno;
	}
	fd = image_fd;
	pthread_mutex_unlock(&image_lock);
	if (fd < 0)
		return tg_error_sys(err, e, "%s: its image: %s%s", SB_INIT_NAME, step,
				    e == EACCES ? " (is vm.memfd_noexec 2?)" : "");
	return fd;
}
