/*
 * The runner's insides (upstream_run.c), shared with what the server
 * notifies and asks (upstream_server.c): one upstream's runner, its
 * generations (one start of the server each), the calls in flight.
 * Nothing outside src/exec/upstream_*.c includes this.
 */
#ifndef TG_EXEC_UPSTREAM_RUN_INT_H
#define TG_EXEC_UPSTREAM_RUN_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>

#include "exec/upstream_relay.h"
#include "exec/upstream_run.h"
#include "toolgate/egress.h"
#include "toolgate/sandbox.h"
#include "upstream/client.h"
#include "upstream/http.h"

/* The most of a redacted line shown: a tg_log line is 1023 bytes */
#define LOG_SHOWN UPSTREAM_RUN_LOG_LINE

/* The rate a server's lines may go to the log at. */
struct rate {
	double tokens;          /* lines that may be logged now */
	uint64_t last_ms;
	unsigned long dropped;  /* lines not logged since the last that was */
};

/* A stderr line on its way to the log. */
struct lines {
	char buf[UPSTREAM_RUN_LOG_READ];
	size_t len;
	int cut;                /* the line went past buf: the rest is dropped */
	struct rate rate;
};

/* A call in flight (upstream_run_call_ex), known to the client's
 * callbacks by its server: its progress by its token, its server's
 * requests by being that server's one call when they were read. */
struct call_reg {
	struct call_reg *next;
	struct gen *g;
	uint64_t seq;           /* the client's read sequence before the call was sent */
	char token[32];
	const struct upstream_run_call_hooks *hooks;
	int progress;           /* it asked for its progress: token was sent */
	struct upstream_relay *relay; /* its server's requests to its client; NULL:
				       * none may reach it (no ask hook, or no relay) */
	unsigned busy;          /* hooks running on the dispatcher: the call waits */
};

/* One start of the server. */
struct gen {
	struct upstream_run *r;
	struct tg_sandbox_spec *spec;
	struct tg_egress_proxy *proxy;
	struct upstream_client *client;
	struct upstream_http *http; /* an http upstream's bridge, for its run */
	int in_r, out_w;        /* the run's ends: the server's stdin, its stdout */
	int cancel_r, cancel_w;
	pthread_t thread;
	int running;            /* thread was started */
	struct lines log;
	struct rate messages;   /* notifications/message, on the dispatcher */
	struct rate refused;    /* its requests refused, logged; on the dispatcher */
	/* under r->lock */
	int ended;              /* the run is over; why says how */
	char why[384];
	unsigned refs;          /* calls using client */
	/* a call ended without the server's answer, relay declared: no
	 * request of this server can be told to be a call's (its request
	 * may come for that call still); "" while none did */
	char unattributable[160];
	int unattributable_said; /* logged, once */
};

struct upstream_run {
	const struct tg_upstream *u;
	struct upstream_run_options opts;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t supervisor;
	int supervising;
	/* under lock */
	int stop;
	struct gen *starting;   /* being started: stop cancels its run */
	struct gen *cur;        /* up: initialized and listed */
	char *tools;            /* the last tools/list, JSON text */
	uint64_t listing;       /* changes of tools: upstream_run_tools */
	char why[512];          /* why it is not up, or "" */
	unsigned starts;
	int relist;             /* list_changed came: list the tools again */
	char *lists[UPSTREAM_RUN_NLISTS]; /* its resources, templates, prompts */
	unsigned relist_lists;  /* of those, to list again (bits) */
	uint64_t relist_at;     /* not before this (ms) */
	unsigned percall;       /* per_call: the calls' servers running */
	struct upstream_run_stats stats;
	struct call_reg *calls; /* the calls in flight */
	uint64_t tokens;        /* progress tokens given */
};

/* One more line of what (a kind of the server's text) to the log, by
 * rt's rate: 1 when it may go (upstream_run.c). */
int run_rate_take(struct rate *rt, const char *name, const char *what);
/* The server's text (len bytes) to the log, redacted and shown safe, "..."
 * after it when cut (upstream_run.c). */
void run_log_text(const char *name, const char *buf, size_t len, int cut);

/* The client's callbacks of a generation (upstream_server.c; ctx the
 * generation): its notifications, and its requests. */
void run_on_notification(void *ctx, const char *method, json_t *params);
json_t *run_on_request(void *ctx, json_t *id, const char *method, json_t *params, uint64_t seq,
		       struct upstream_rpc_error *e);

#endif
