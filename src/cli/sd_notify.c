/*
 * The service manager's notification protocol (sd_notify(3)) for toolgate
 * serve under systemd's Type=notify (dist/toolgate.service,
 * docs/SYSTEMD.md): READY=1 once it listens, RELOADING=1 and READY=1
 * around a SIGHUP's reload, STOPPING=1 at shutdown, WATCHDOG=1 from a
 * thread while the gateway is healthy.
 *
 * libsystemd is loaded with dlopen() when $NOTIFY_SOCKET is set and only
 * then, as systemd loads its own optional libraries (dlopen_many_sym_or_warn):
 * `toolgate run` and a serve without a manager map nothing more. Without
 * libsystemd.so.0 it says so once and goes on without notifying rather
 * than speaking the protocol itself: a manager that sets NOTIFY_SOCKET is
 * systemd, whose host has the library, and a second implementation of the
 * datagram (abstract sockets, credentials) would be one more to keep.
 *
 * Must never: notify for any process but this one (the sandbox's children
 * get a clean environment and their own mount namespace: they cannot see
 * the socket), or block a caller on the manager.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "cli/sd_notify.h"

/* The function pointers, typed by the header's own prototypes. */
static struct {
	void *lib;
	__typeof__(sd_notify) *notify;
	__typeof__(sd_watchdog_enabled) *watchdog_enabled;
	const char *who;
} sd;

int sdn_open(const char *who)
{
	const char *sock = getenv("NOTIFY_SOCKET");

	sd.who = who;
	if (!sock || !*sock)
		return 0;
	sd.lib = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (sd.lib) {
		sd.notify = (__typeof__(sd_notify) *)dlsym(sd.lib, "sd_notify");
		sd.watchdog_enabled = (__typeof__(sd_watchdog_enabled) *)dlsym(sd.lib,
									     "sd_watchdog_enabled");
	}
	if (!sd.notify || !sd.watchdog_enabled) {
		const char *why = dlerror();

		fprintf(stderr, "toolgate %s: NOTIFY_SOCKET is set but libsystemd.so.0 cannot be "
			"used (%s): the service manager will hear nothing (no READY=1, no "
			"watchdog)\n", who, why ? why : "no sd_notify");
		if (sd.lib)
			dlclose(sd.lib);
		memset(&sd, 0, sizeof(sd));
		return 0;
	}
	return 1;
}

/* One message; a manager that cannot be told is said once. */
static void say(const char *state)
{
	static int told;
	int rc;

	if (!sd.notify)
		return;
	rc = sd.notify(0, state);
	if (rc < 0 && !__atomic_exchange_n(&told, 1, __ATOMIC_RELAXED))
		fprintf(stderr, "toolgate %s: notifying the service manager: %s\n", sd.who,
			strerror(-rc));
}

void sdn_ready(const char *status)
{
	char msg[600];

	if (!status) {
		say("READY=1");
		return;
	}
	/* STATUS= is one line: a newline would start another assignment */
	snprintf(msg, sizeof(msg), "READY=1\nSTATUS=%.500s", status);
	for (char *nl = strchr(msg + 8, '\n'); nl; nl = strchr(nl, '\n'))
		*nl = ' ';
	say(msg);
}

void sdn_reloading(void)
{
	struct timespec ts;
	char msg[96];

	/* MONOTONIC_USEC: the manager (253+, Type=notify-reload) waits for
	 * a READY=1 after this moment; older ones read RELOADING=1 alone */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)ts.tv_sec * 1000000ULL + (unsigned long long)ts.tv_nsec / 1000);
	say(msg);
}

void sdn_stopping(void)
{
	say("STOPPING=1");
}

/* ---- the watchdog ---------------------------------------------------------------- */

static struct {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int running, quit;
	uint64_t usec;
	int (*healthy)(void *ctx, unsigned budget_ms, char *why, size_t len);
	void *ctx;
} wd = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void deadline_after(struct timespec *t, uint64_t usec)
{
	clock_gettime(CLOCK_MONOTONIC, t);
	t->tv_sec += (time_t)(usec / 1000000);
	t->tv_nsec += (long)(usec % 1000000) * 1000;
	if (t->tv_nsec >= 1000000000L) {
		t->tv_sec++;
		t->tv_nsec -= 1000000000L;
	}
}

/* Every WATCHDOG_USEC/2: the check, then the ping if it passed. The check
 * may take a quarter of the period, so that a healthy gateway's ping is
 * never late however the check went. */
static void *watchdog_main(void *arg)
{
	unsigned budget_ms = (unsigned)(wd.usec / 4000);
	char why[256];
	int failing = 0;
	struct timespec next;

	(void)arg;
	if (budget_ms == 0)
		budget_ms = 1;
	pthread_mutex_lock(&wd.lock);
	while (!wd.quit) {
		pthread_mutex_unlock(&wd.lock);
		why[0] = '\0';
		if (wd.healthy(wd.ctx, budget_ms, why, sizeof(why)) == 0) {
			say("WATCHDOG=1");
			if (failing)
				fprintf(stderr, "toolgate %s: watchdog: healthy again, pinging\n",
					sd.who);
			failing = 0;
		} else if (!failing) {
			fprintf(stderr, "toolgate %s: watchdog: %s; not pinging the service "
				"manager while it lasts\n", sd.who, why[0] ? why : "unhealthy");
			failing = 1;
		}
		deadline_after(&next, wd.usec / 2);
		pthread_mutex_lock(&wd.lock);
		while (!wd.quit && pthread_cond_timedwait(&wd.cond, &wd.lock, &next) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&wd.lock);
	return NULL;
}

int sdn_watchdog_start(int (*healthy)(void *ctx, unsigned budget_ms, char *why, size_t len),
		       void *ctx)
{
	pthread_condattr_t ca;
	uint64_t usec = 0;
	int rc;

	/* sd_watchdog_enabled checks WATCHDOG_PID against getpid() */
	if (!sd.watchdog_enabled || sd.watchdog_enabled(0, &usec) <= 0 || usec == 0)
		return 0;
	wd.usec = usec;
	wd.healthy = healthy;
	wd.ctx = ctx;
	wd.quit = 0;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_destroy(&wd.cond);
	pthread_cond_init(&wd.cond, &ca);
	pthread_condattr_destroy(&ca);
	rc = pthread_create(&wd.thread, NULL, watchdog_main, NULL);
	if (rc != 0) {
		fprintf(stderr, "toolgate %s: watchdog thread: %s\n", sd.who, strerror(rc));
		return -1;
	}
	wd.running = 1;
	return 0;
}

void sdn_watchdog_stop(void)
{
	if (!wd.running)
		return;
	pthread_mutex_lock(&wd.lock);
	wd.quit = 1;
	pthread_cond_signal(&wd.cond);
	pthread_mutex_unlock(&wd.lock);
	pthread_join(wd.thread, NULL);
	wd.running = 0;
}
