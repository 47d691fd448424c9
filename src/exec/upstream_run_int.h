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
	int stderr_seen;        /* it wrote on stderr (__atomic: its run's thread sets it) */
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
	/* per_call (upstream_server.c): a call or request was sent to it, so
	 * that its list_changed are heeded (a start's own are not); the
	 * listing's own server, whose changes are listed again on it
	 * (self_changed: RUN_SELF_* bits, under r->lock) */
	volatile int heed;
	int listing;
	unsigned self_changed;
	/* the 2026-07-28 era's subscriptions/listen (upstream_modern.c),
	 * on the supervisor's thread */
	int64_t listen_id;      /* open, or 0 */
	uint64_t listen_at;     /* not opened again before this (ms) */
	int listen_off;         /* the server has none, or nothing of it changes */
};

#define RUN_SELF_TOOLS 1u        /* gen.self_changed: its tools */
#define RUN_SELF_LISTS 2u        /* its resources, templates or prompts */

/* What a runner learnt of its server's era (upstream_modern.c). */
enum run_era {
	RUN_ERA_UNKNOWN = 0,    /* discover is tried first (auto) */
	RUN_ERA_SESSION_TRY,    /* its connection broke on discover: initialize next */
	RUN_ERA_SESSION,        /* it is a session-era server: initialize */
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
	enum run_era era;       /* under lock */
	char protocol[16];      /* agreed at the last handshake; under lock */
};

/* One more line of what (a kind of the server's text) to the log, by
 * rt's rate: 1 when it may go (upstream_run.c). */
int run_rate_take(struct rate *rt, const char *name, const char *what);
/* The server's text (len bytes) to the log, redacted and shown safe, "..."
 * after it when cut (upstream_run.c). */
void run_log_text(const char *name, const char *buf, size_t len, int cut);

/* ---- upstream_modern.c: the protocol eras ---- */

#define UPSTREAM_MODERN_PROBE_MS 5000  /* auto: discover answered within, or initialize */
#define UPSTREAM_MODERN_LISTEN_MS 1000 /* subscriptions/listen opened again at most this often */
#define UPSTREAM_MODERN_ROUNDS 10      /* a call's input_required rounds */
#define UPSTREAM_MODERN_REQUESTS 16    /* inputRequests of one round */

/* The handshake of g's client in the era the declaration and what r
 * learnt say (discover, initialize, or discover then initialize),
 * declaring the relay's client capabilities. 0, or -1 and err. */
int run_handshake(struct upstream_run *r, struct gen *g, int timeout_ms, struct tg_error *err);

/* g up and spoken to in the 2026-07-28 era: its subscriptions/listen
 * opened, or its end noticed (opened again later). Never blocks; the
 * supervisor calls it while it watches g. */
void run_listen(struct upstream_run *r, struct gen *g);

/* resultType of a 2026-07-28 result res of method: 0 complete (or
 * none), 1 input_required, -1 and err for anything else. */
int run_result_type(json_t *res, const char *method, struct tg_error *err);

/* A tools/call answered input_required (res): each of its inputRequests
 * that the declaration relays asked of the call's client through
 * hooks->ask, one at a time, until deadline or cancel_fd; OUT *retry the
 * members the call is sent again with (inputResponses, and the server's
 * requestState as it came). 0; -1 and err: a request the declaration
 * does not relay or the relay never asks, a client that cannot be asked
 * or refused, the call's end, or "stopped to ask its client first" (the
 * caller is asked by MRTR). */
int run_input_required(const struct upstream_run *r, json_t *res,
		       const struct upstream_run_call_hooks *hooks, uint64_t deadline,
		       int cancel_fd, json_t **retry, struct tg_error *err);

/* The client's callbacks of a generation (upstream_server.c; ctx the
 * generation): its notifications, and its requests. */
void run_on_notification(void *ctx, const char *method, json_t *params);
json_t *run_on_request(void *ctx, json_t *id, const char *method, json_t *params, uint64_t seq,
		       struct upstream_rpc_error *e);

#endif
