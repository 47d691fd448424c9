/*
 * What a command says as it runs (docs/CLI.md, "Logs"): one line a
 * message on stderr, as text ("toolgate WHO: MESSAGE", a warning as
 * "toolgate warning: ...", as ever) or, with --log-format json, as a JSON
 * object a line ({"time", "level", "who", "msg"}), which journald and log
 * shippers take as it is; messages below --log-level (default info) are
 * dropped. Text from outside in the library's messages (an upstream
 * server's stderr) was redacted, its hidden characters made '?', where
 * it came in (tg_redact_shown); the command's own messages are made of
 * its options, paths and counts. JSON escapes every control character.
 *
 * Must never: write a message in two pieces another thread's line could
 * come between (a line is one fputs under stdio's lock).
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "cli/log.h"
#include "toolgate/error.h"

#define LINE_MAX_BYTES 4096

static int json_lines;
static enum cli_level threshold = CLI_INFO;

static const char *const names[] = { "error", "warning", "info", "debug" };

int cli_log_setup(const char *who, const char *format, const char *level)
{
	size_t i;

	if (format && strcmp(format, "text") != 0 && strcmp(format, "json") != 0) {
		fprintf(stderr, "toolgate %s: --log-format '%s': takes text or json\n", who,
			format);
		return -1;
	}
	if (level) {
		for (i = 0; i < sizeof(names) / sizeof(names[0]) && strcmp(names[i], level); i++)
			;
		if (i == sizeof(names) / sizeof(names[0])) {
			fprintf(stderr, "toolgate %s: --log-level '%s': takes error, warning, info "
				"or debug\n", who, level);
			return -1;
		}
		threshold = (enum cli_level)i;
	}
	if (format)
		json_lines = strcmp(format, "json") == 0;
	return 0;
}

static void emit(enum cli_level level, const char *who, const char *msg)
{
	char stamp[40], line[LINE_MAX_BYTES + 64], *text;
	struct timeval tv;
	struct tm tm;
	json_t *o;

	if (level > threshold)
		return;
	if (!json_lines) {
		snprintf(line, sizeof(line), "toolgate%s%s: %s\n", *who ? " " : "", who, msg);
		fputs(line, stderr);
		return;
	}
	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(stamp + strlen(stamp), sizeof(stamp) - strlen(stamp), ".%03ldZ",
		 (long)tv.tv_usec / 1000);
	o = json_pack("{s:s,s:s,s:s,s:s}", "time", stamp, "level", names[level], "who",
		      *who ? who : "toolgate", "msg", msg);
	text = o ? json_dumps(o, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	json_decref(o);
	if (text) {
		snprintf(line, sizeof(line), "%s\n", text);
		fputs(line, stderr);
	}
	free(text);
}

void cli_log(enum cli_level level, const char *who, const char *fmt, ...)
{
	char msg[LINE_MAX_BYTES];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	emit(level, who, msg);
}

void cli_log_library(void *ctx, int level, const char *message)
{
	(void)ctx;
	/* as ever in text: "toolgate: ...", "toolgate warning: ...",
	 * "toolgate trace: ..." */
	if (level == TG_LOG_ERROR)
		emit(CLI_ERROR, "", message);
	else if (level == TG_LOG_WARNING)
		emit(CLI_WARNING, "warning", message);
	else if (level == TG_LOG_TRACE)
		emit(CLI_INFO, "trace", message); /* asked for: TOOLGATE_TRACE=1 */
	else
		emit(CLI_INFO, "", message);
}
