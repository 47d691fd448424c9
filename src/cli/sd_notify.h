/* The service manager's notification protocol for toolgate serve
 * (src/cli/sd_notify.c, docs/SYSTEMD.md): readiness, reloads, stopping
 * and the watchdog, through libsystemd loaded only when $NOTIFY_SOCKET
 * says a manager listens. */
#ifndef TG_CLI_SD_NOTIFY_H
#define TG_CLI_SD_NOTIFY_H

#include <stdint.h>

/* Once, before any other call: loads libsystemd.so.0 with dlopen when
 * $NOTIFY_SOCKET is set (and only then). 1 when notifications will be
 * sent; 0 when there is no manager, or libsystemd cannot be loaded (said
 * once on stderr as "toolgate WHO: ..."). Every other function is a
 * no-op after 0. */
int sdn_open(const char *who);

/* READY=1 with STATUS=status (one line; NULL: none). */
void sdn_ready(const char *status);
/* RELOADING=1 with MONOTONIC_USEC= now, before a reload; sdn_ready after it. */
void sdn_reloading(void);
/* STOPPING=1, once shutdown has begun. */
void sdn_stopping(void);

/* The watchdog: when the manager asked for one ($WATCHDOG_USEC, and
 * $WATCHDOG_PID is this process or unset), a thread sends WATCHDOG=1
 * every WATCHDOG_USEC/2 while healthy(ctx, budget_ms, why, len) returns
 * 0; budget_ms is how long a check may take before the ping would be
 * late, and a check that fails returns -1 with what failed in why. A
 * failing check skips the ping (the manager then acts as WatchdogSec= says) and
 * is said on stderr once until it passes again. 0 (no watchdog asked, or
 * started), -1 when the thread cannot start (said). */
int sdn_watchdog_start(int (*healthy)(void *ctx, unsigned budget_ms, char *why, size_t len),
		       void *ctx);
/* Stops the thread and waits for it; a no-op when none runs. */
void sdn_watchdog_stop(void);

#endif
