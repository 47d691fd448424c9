/*
 * What a command says as it runs, on stderr (src/cli/log.c, docs/CLI.md,
 * "Logs"): text or JSON lines, at or above a level.
 */
#ifndef TG_CLI_LOG_H
#define TG_CLI_LOG_H

enum cli_level { CLI_ERROR, CLI_WARNING, CLI_INFO, CLI_DEBUG };

/* --log-format (text or json) and --log-level (error, warning, info or
 * debug) of who: 0, or -1 having said what they take. NULL: as it was. */
int cli_log_setup(const char *who, const char *format, const char *level);
/* One line of who's at level, as printf would make it. */
void cli_log(enum cli_level level, const char *who, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The library's messages (tg_log_set's callback), at their level. */
void cli_log_library(void *ctx, int level, const char *message);

#endif
