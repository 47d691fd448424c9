/*
 * toolgate: one error type for the whole library.
 *
 * A fallible function returns a negative int and fills a caller-owned
 * struct tg_error. Each layer may prefix what it was doing with
 * tg_error_wrap(), so the message a user finally sees reads from the outside
 * in: "--ro /nope: No such file or directory".
 */
#ifndef TOOLGATE_ERROR_H
#define TOOLGATE_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TG_API __attribute__((visibility("default")))

enum tg_errcode {
	TG_OK = 0,
	TG_ERR_INVALID,     /* bad input from the caller: option, path, limit */
	TG_ERR_NOMEM,       /* allocation failed */
	TG_ERR_SYSTEM,      /* a system call failed */
	TG_ERR_UNAVAILABLE, /* a kernel facility a tier needs is missing */
	TG_ERR_LIMIT,       /* an input exceeded its ceiling */
	TG_ERR_FORBIDDEN,   /* the caller may not: a scope it lacks, another's ticket */
};

struct tg_error {
	enum tg_errcode code;
	int sys_errno;      /* errno behind TG_ERR_SYSTEM, else 0 */
	char msg[512];
};

/* Reset *err to TG_OK with an empty message. err may be NULL. */
TG_API void tg_error_clear(struct tg_error *err);

/* Set code and a printf-style message; always returns -1 so callers can
 * write `return tg_error_set(...)`. err may be NULL. */
TG_API int tg_error_set(struct tg_error *err, enum tg_errcode code,
			const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Like tg_error_set with TG_ERR_SYSTEM, appending ": strerror(errnum)". */
TG_API int tg_error_sys(struct tg_error *err, int errnum, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prefix the existing message with "context: ", keeping its code and
 * sys_errno: for a callee that filled err, in place of a tg_error_set that
 * would lose them. Returns -1. err may be NULL. */
TG_API int tg_error_wrap(struct tg_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* What the library has to say that no call returns: a failure on a
 * thread of its own (a collection, a record it could not keep), something
 * a crashed gateway left behind, or the sandbox's timings under
 * TOOLGATE_TRACE=1. The library writes nowhere itself: fn gets each
 * message (one line, no newline, no "toolgate:" prefix) with its level,
 * from any thread, so it must be thread-safe and must not call back into
 * the library. Set it once, before the library's first call; NULL (the
 * default): the messages are dropped. The toolgate command sends them to
 * stderr. */
enum tg_log_level {
	TG_LOG_ERROR = 0,   /* something was not done: a record, a cleanup */
	TG_LOG_TRACE,       /* TOOLGATE_TRACE=1: where a sandbox's start spends its time */
	TG_LOG_INFO,        /* what an operator may want to read: an upstream server's
			     * stderr (redacted), its restarts */
	TG_LOG_WARNING,     /* what is configured and will not work as meant: a
			     * declared tool the server does not list, a writable
			     * mount the sandbox's user cannot write */
};
typedef void (*tg_log_fn)(void *ctx, enum tg_log_level level, const char *message);
TG_API void tg_log_set(tg_log_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
