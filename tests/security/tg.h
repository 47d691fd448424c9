/*
 * tg-escape: sandbox escape attempts for the toolgate security suite.
 *
 * Every attempt tries one real escape and judges its own success:
 *   exit 0  the escape SUCCEEDED (bad when sandboxed)
 *   exit 1  blocked
 *   exit 2  could not tell (setup error in the attempt itself)
 * and prints exactly one line to stderr saying what happened.
 */
#ifndef TG_ESCAPE_H
#define TG_ESCAPE_H

#include <stddef.h>

#define TG_ESCAPED 0
#define TG_BLOCKED 1
#define TG_UNKNOWN 2

/* Marker a decoy listener replies with. */
#define TG_DECOY_MARKER "TGSEC-DECOY-REPLY"
/* Every planted secret file contains this string. */
#define TG_SECRET_MARKER "TGSEC-SECRET"

typedef int (*tg_attempt_fn)(int argc, char **argv);

struct tg_attempt {
	const char *name;
	const char *family;
	tg_attempt_fn fn;
	const char *usage;
};

/* Name of the running attempt (for messages). */
extern const char *tg_current;

/* Print "<attempt>: <message>" to stderr and return rc. */
int tg_report(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Symbolic errno name ("ENOENT"), never NULL. */
const char *tg_errname(int err);
/* Judge a raw syscall made with harmless invalid arguments: reaching the
 * kernel (any result other than ENOSYS/EPERM/EACCES) counts as escaped.
 * Reads errno itself: call it right after the syscall. */
int tg_syscall_verdict(const char *what, long ret);
/* Read up to n-1 bytes of a file into buf (NUL terminated); -1 + errno. */
long tg_read_file(const char *path, char *buf, size_t n);
/* Does the file at path contain TG_SECRET_MARKER?  1 yes, 0 readable but
 * no, -1 not readable (errno set). */
int tg_file_has_secret(const char *path);
/* Argument i or a default. */
const char *tg_arg(int argc, char **argv, int i, const char *def);

/* SysV IPC key derived from a tag (never IPC_PRIVATE). */
int tg_tag_key(const char *tag);

/* Attempt tables, one per family file. */
extern const struct tg_attempt tg_net_attempts[];
extern const struct tg_attempt tg_fs_attempts[];
extern const struct tg_attempt tg_proc_attempts[];
extern const struct tg_attempt tg_sys_attempts[];
extern const struct tg_attempt tg_secret_attempts[];
extern const struct tg_attempt tg_res_attempts[];

/* Helper modes used by the harness (not attempts). */
int tg_helper_listen(int argc, char **argv);
int tg_helper_listen_unix(int argc, char **argv);
int tg_helper_victim(int argc, char **argv);
int tg_helper_listen_path(int argc, char **argv);
int tg_helper_shm_create(int argc, char **argv);
int tg_helper_fd_pass(int argc, char **argv);
int tg_helper_deny_pidfd_getfd(int argc, char **argv);

#endif
