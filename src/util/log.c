/*
 * Where the library's own messages go (include/toolgate/error.h,
 * tg_log_set): to the caller's sink, or nowhere. The library never writes
 * to a descriptor it was not given; the caller decides where a message
 * goes (the toolgate command: stderr).
 *
 * Owns: the sink, set once before the library's threads start and read
 * by them afterwards. Must never: allocate, block on a lock, or write a
 * message anywhere but the sink.
 */
#include <stdarg.h>
#include <stdio.h>

#include "util/log.h"

static tg_log_fn sink;
static void *sink_ctx;

void tg_log_set(tg_log_fn fn, void *ctx)
{
	sink_ctx = ctx;
	sink = fn;
}

int tg_log_on(void)
{
	return sink != NULL;
}

void tg_log(enum tg_log_level level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!sink)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	sink(sink_ctx, level, line);
}
