/*
 * Small files of the kernel's (procfs, cgroupfs): read or written whole in
 * one call; files from outside (schemas, resources, instances) read
 * whole under a ceiling; the state directory made private, a lock file
 * that names its holder, and whether a file system has room to write.
 */
#ifndef TG_UTIL_FILE_H
#define TG_UTIL_FILE_H

#include <stddef.h>
#include <sys/stat.h>

/* Read at most len-1 bytes of dir/file (file may be NULL: dir is the
 * path) into buf, NUL-terminated. 0, or -1 with errno. */
int file_read_small(const char *dir, const char *file, char *buf, size_t len);

/* Replace the contents of dir/file with s in one write (O_TRUNC, as a
 * shell's > does; cgroupfs and procfs ignore it). 0, or -1 with errno. */
int file_write_small(const char *dir, const char *file, const char *s);

/* 1 if dir/file exists and contains needle (within its first 4 KiB). */
int file_contains(const char *dir, const char *file, const char *needle);

/* The whole of path, at most max bytes, NUL-terminated (the count in
 * *len), malloc'd. NULL with errno: EFBIG past max, EINVAL when
 * regular_only and path is not a regular file (a FIFO would block the
 * reader), ENOMEM, or open's and read's own. What it read and did not
 * return is wiped (the file may be a key's), not left in freed memory. */
char *file_read_all(const char *path, size_t max, int regular_only, size_t *len);
/* The same, and what fstat said of the file it read (st_out not NULL):
 * the mode and owner checked are those of the bytes read, not of what
 * the path names a moment later. */
char *file_read_stat(const char *path, size_t max, int regular_only, size_t *len,
		     struct stat *st_out);

/* The state directory dir, made 0700 when missing: 0, or -1 with errno
 * ENOTDIR (a symbolic link or not a directory), EPERM (another user's),
 * EACCES (writable by group or others: anyone could plant a key), or
 * mkdir's and lstat's own. */
int file_private_dir(const char *dir);
/* A new folder of the caller's in $TMPDIR (else /tmp), named
 * PREFIX-XXXXXX, into out[len]: mode 0755, the caller's alone to write,
 * which the sandbox's user reads (the verified copies a tool is given). 0,
 * or -1 with errno (out "" then). */
int file_temp_dir(const char *prefix, char *out, size_t len);
/* Why file_private_dir refused a directory, for its errno: ENOTDIR,
 * EPERM, EACCES; NULL for others (a system error: strerror says). */
const char *file_private_dir_why(int errnum);

/* An exclusive flock on path (made 0600 when missing, never through a
 * symbolic link; O_CLOEXEC, so that no child, a sandboxed one above all,
 * inherits it), held while the descriptor stays open and dropped by the
 * kernel when the process dies, kill -9 included: the lock, not the file,
 * says who holds it. This process's pid is written in it for the next
 * one's message. 0 and OUT *fd; -1 with errno: EWOULDBLOCK when another
 * process holds it (*holder its pid as it wrote it, 0 when not yet
 * written or unreadable), or open's own. */
int file_lock_pid(const char *path, int *fd, long *holder);

struct statvfs;
/* Whether the file system statvfs(3) described in *vfs takes writes: 0
 * when it is mounted read-write with at least FILE_ROOM_MIN bytes free
 * to this user (to root, the blocks reserved for it too); else -1 and
 * what it lacks in why ("mounted read-only", "full: 12 KiB free"). Looks
 * only: writes nothing. */
#define FILE_ROOM_MIN (1u << 20)
int file_room(const struct statvfs *vfs, char *why, size_t len);

/* Directory dir and everything in it removed, no symbolic link followed
 * (a link is removed, not what it names), at most 128 levels deep: 0, or
 * -1 and errno, what could be removed gone. */
int file_remove_tree(const char *dir);

#endif
