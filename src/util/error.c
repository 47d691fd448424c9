/*
 * One error type for the library (include/toolgate/error.h): a code and a
 * message that each layer may prefix with what it was doing.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "toolgate/error.h"

void tg_error_clear(struct tg_error *err)
{
	if (!err)
		return;
	err->code = TG_OK;
	err->sys_errno = 0;
	err->msg[0] = '\0';
}

int tg_error_set(struct tg_error *err, enum tg_errcode code, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return -1;
	err->code = code;
	err->sys_errno = 0;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return -1;
}

int tg_error_sys(struct tg_error *err, int errnum, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	if (!err)
		return -1;
	err->code = TG_ERR_SYSTEM;
	err->sys_errno = errnum;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	n = strlen(err->msg);
	snprintf(err->msg + n, sizeof(err->msg) - n, ": %s", strerror(errnum));
	return -1;
}

int tg_error_wrap(struct tg_error *err, const char *fmt, ...)
{
	char prefix[sizeof(err->msg)];
	char old[sizeof(err->msg)];
	va_list ap;

	if (!err)
		return -1;
	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->msg, sizeof(old));
	/* Truncation is acceptable: the message is for people. */
	{
		size_t pl = strnlen(prefix, sizeof(prefix) - 1);

		if (pl > sizeof(err->msg) - 3)
			pl = sizeof(err->msg) - 3;
		memcpy(err->msg, prefix, pl);
		memcpy(err->msg + pl, ": ", 2);
		snprintf(err->msg + pl + 2, sizeof(err->msg) - pl - 2, "%.*s",
			 (int)(sizeof(err->msg) - pl - 3), old);
	}
	return -1;
}
