/*
 * The library's messages that no call returns, to the sink the caller set
 * (tg_log_set, include/toolgate/error.h); dropped without one.
 */
#ifndef TOOLGATE_UTIL_LOG_H
#define TOOLGATE_UTIL_LOG_H

#include "toolgate/error.h"

/* One line (printf-style, no newline) at level, to the caller's sink. */
void tg_log(enum tg_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 1 if a sink is set: a caller can skip building a message nobody reads. */
int tg_log_on(void);

#endif
