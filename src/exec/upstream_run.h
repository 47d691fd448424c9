/*
 * The runner of one upstream (issue 18; docs/UPSTREAMS.md, "The runner"):
 * a stdio declaration's server kept running in the sandbox, or an http
 * one's reached through the Streamable HTTP bridge (src/upstream/http.h),
 * spoken to with the upstream client (src/upstream/client.h), started
 * again when it dies or its connection breaks. Private to the gateway (src/gate/ will be its caller); upstream_run.c
 * owns it.
 *
 * Life of a runner:
 *
 *     struct upstream_run *r;
 *     if (upstream_run_new(u, &opts, &r, &err) < 0) ... // refused: err names why
 *     upstream_run_wait(r, 15000, &err);               // optional: up, tools listed
 *     char *tools = upstream_run_tools(r);             // JSON array text, malloc'd
 *     upstream_run_call(r, "echo", "{\"text\":\"hi\"}", 5000, -1, &res, &err);
 *     upstream_run_call_ex(r, "echo", "{}", 5000, -1, &hooks, &res, &err); // progress, asks
 *     upstream_run_free(r);                            // nothing left behind
 *
 * A declaration's per_call (a fresh server per call): the server is
 * started to list the tools and stopped; each call starts one of its own
 * (at most UPSTREAM_RUN_PER_CALL_MAX at once) and ends it when it returns.
 */
#ifndef TG_EXEC_UPSTREAM_RUN_H
#define TG_EXEC_UPSTREAM_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "exec/exec.h"
#include "toolgate/error.h"
#include "toolgate/upstream.h"

#define UPSTREAM_RUN_HANDSHAKE_MS 10000     /* initialize, then each page of tools/list */
#define UPSTREAM_RUN_CREDENTIAL_MAX (64u << 10) /* one credential's file */
#define UPSTREAM_RUN_BACKOFF_MIN_MS 500     /* the first restart's delay, doubled each time */
#define UPSTREAM_RUN_BACKOFF_MAX_MS 30000
#define UPSTREAM_RUN_STABLE_MS 60000        /* up this long: the delay starts again at the min */
#define UPSTREAM_RUN_LOG_LINE 512           /* a stderr line logged, bytes (the rest cut) */
#define UPSTREAM_RUN_LOG_READ 4096          /* of a line, read and redacted before the cut */
#define UPSTREAM_RUN_LOG_RATE 10            /* stderr lines logged a second, on average */
#define UPSTREAM_RUN_LOG_BURST 50           /* and at once */
#define UPSTREAM_RUN_CALL_MS 60000          /* a call's timeout when neither caller nor
					     * declaration gives one */
#define UPSTREAM_RUN_PER_CALL_MAX 4        /* per_call: the calls' servers at once */
#define UPSTREAM_RUN_FLUSH_MS 1000         /* a call's progress, delivered after its answer */
#define UPSTREAM_RUN_RELIST_MS 250          /* list_changed: at most one tools/list again
					     * this often (a burst is one) */
#define UPSTREAM_RUN_LIST_MAX (4u << 20)    /* a listing of resources, templates or
					     * prompts, as JSON text */

/* The server's lists besides its tools (upstream_run_list): bit 1 << each
 * in upstream_run_options.lists_changed. */
enum upstream_run_list {
	UPSTREAM_RUN_RESOURCES = 0,  /* resources/list */
	UPSTREAM_RUN_TEMPLATES,      /* resources/templates/list */
	UPSTREAM_RUN_PROMPTS,        /* prompts/list */
	UPSTREAM_RUN_NLISTS
};

struct upstream_run_options {
	/* The gateway's directories (exec_dirs_new): the mounts and
	 * credential files are checked against them; borrowed, must outlive
	 * the runner; NULL: checked against nothing. */
	const struct exec_dirs *dirs;
	/* A connection the upstream's egress allowlist refused, as
	 * exec_env.egress_denied; NULL: not told. */
	void (*egress_denied)(void *ctx, const char *destination, const char *why);
	void *egress_ctx;
	const char *principal;   /* whose share of the egress; NULL: "" */
	/* The server's tools changed: a listing differs from the one before
	 * (the first listing counts as a change). Called from the runner's
	 * thread without its lock: it must not wait, nor call the runner
	 * back but for upstream_run_tools. NULL: not told. */
	void (*tools_changed)(void *ctx);
	void *tools_ctx;
	/* Its resources, resource templates or prompts changed (which: a bit
	 * 1 << enum upstream_run_list each), as tools_changed, with tools_ctx. */
	void (*lists_changed)(void *ctx, unsigned which);
	/* 1: upstream_run_wait returns at the first failure to start, or
	 * reach, the server (TG_ERR_UNAVAILABLE with its reason) instead of
	 * waiting through the restarts for its timeout, and the restarts
	 * are not logged, nor the writable mounts its sandbox's user cannot
	 * write (the caller says them itself): for one who asks to see the
	 * server once (tg_gate_upstream_probe), not for serving. */
	int fail_fast;
};

struct upstream_run;

/* A runner of upstream u, stdio or http (borrowed: it must outlive the
 * runner; opts copied, its pointers borrowed likewise; may be NULL). A
 * stdio one's sandbox spec is built, and either's credentials
 * read once here, so that a refusal is said at once: -1 and err naming the
 * upstream and the mount or credential (a mount that is, holds or lies in
 * the state directory, one of the gateway's own files...; a credential
 * file that is not a regular file of the caller's with no group or other
 * bits, over 64 KiB, one of the gateway's own files, in the state
 * directory or under /proc or /dev). A writable mount the sandbox's user
 * cannot write is logged as a warning (tg_upstream_check_mounts), once,
 * and the server started all the same. Then a thread starts the server and
 * keeps it running (restarts with backoff); the call returns without
 * waiting for it. OUT *out. */
int upstream_run_new(const struct tg_upstream *u, const struct upstream_run_options *opts,
		     struct upstream_run **out, struct tg_error *err);

/* Stop: the server's run cancelled, every thread joined, every
 * descriptor closed; no process or cgroup is left. No call may be in
 * progress. NULL: nothing. */
void upstream_run_free(struct upstream_run *r);

/* Wait at most timeout_ms for the server to be up (initialized, its tools
 * listed; per_call: its tools listed once). 0, or -1 and err: TG_ERR_UNAVAILABLE naming the upstream and
 * why it is not (its last failure; with opts.fail_fast, at that failure
 * rather than at the timeout), or TG_ERR_LIMIT when still starting. */
int upstream_run_wait(struct upstream_run *r, int timeout_ms, struct tg_error *err);

/* The tools of the last tools/list, a JSON array as text (malloc'd), or
 * NULL before the first listing (or out of memory); *listing (may be
 * NULL) the listing's number: 0 before the first, and one more each time
 * what the server lists changes, whether across a restart or not: the
 * tools are listed at each start, and again when the server sends
 * notifications/tools/list_changed (at most once per
 * UPSTREAM_RUN_RELIST_MS; a failed listing keeps the one before). */
char *upstream_run_tools(struct upstream_run *r, uint64_t *listing);

/* Where the server's first listing stands: 1 its tools were listed (at
 * least once, whatever happened since); 0 not yet, and no start has
 * failed: the first is under way; -1 not yet, and its last start failed
 * (or the runner stops): why (size bytes) says why, shown safe, as
 * upstream_run_wait's error does. A server that failed stays -1 through
 * its backoff and its next start, until one lists. */
int upstream_run_first_listing(struct upstream_run *r, char *why, size_t size);

/* The server's list which (upstream_run_list), JSON array text
 * (malloc'd): listed at each start and again on its
 * notifications/resources/list_changed or notifications/prompts/list_changed
 * (coalesced as tools' are), each followed through its pages with the
 * tools' ceilings and at most UPSTREAM_RUN_LIST_MAX bytes; "[]" when the
 * server's initialize declared no resources (or prompts) capability; NULL
 * before the first listing (or out of memory). A listing that fails is
 * logged and the one before kept. */
char *upstream_run_list(struct upstream_run *r, enum upstream_run_list which);

/* One request of the server's own catalogue (resources/read, prompts/get,
 * completion/complete): method with params_json (an object's text) sent
 * only when its initialize declared capability ("resources", "prompts",
 * "completions"), waited for at most timeout_ms (<= 0 as
 * upstream_run_call), through a per_call server of its own as a call.
 * 0: *result_json the server's result, an object's text (malloc'd). -1
 * and err as upstream_run_call (TG_ERR_INVALID: no such capability,
 * params not an object, the server's JSON-RPC error or a result that is
 * not an object; the server's words shown safe, obs_shown). */
int upstream_run_request(struct upstream_run *r, const char *capability, const char *method,
			 const char *params_json, int timeout_ms, char **result_json,
			 struct tg_error *err);

/* Call tool (the upstream's own name) with args_json (an object's text;
 * NULL: {}), waiting at most timeout_ms (<= 0: the declaration's
 * limits.timeout, else UPSTREAM_RUN_CALL_MS) for the server to be up and
 * answer; cancel_fd (-1: none) readable cancels it (the server is sent
 * notifications/cancelled). per_call: the call starts a server of its
 * own (its mounts and credentials checked again), initializes it within
 * the same timeout and ends it before returning, whatever happened;
 * while UPSTREAM_RUN_PER_CALL_MAX calls hold one it waits for its turn.
 * 0: *result_json the MCP tool result, JSON text (malloc'd). -1 and err,
 * *result_json NULL:
 *   TG_ERR_UNAVAILABLE: the server is down, or died during the call, or
 *     (per_call) its server did not start; err names the upstream and
 *     why (its exit status, the signal, the sandbox's reason, a refused
 *     credential, or the client's: "connection broken: EOF");
 *   TG_ERR_LIMIT: timed out (per_call: also waiting for its turn);
 *   TG_ERR_INVALID: cancelled, args_json not an
 *     object, or the server answered a JSON-RPC error (err says it). */
int upstream_run_call(struct upstream_run *r, const char *tool, const char *args_json,
		      int timeout_ms, int cancel_fd, char **result_json, struct tg_error *err);

/* What a call may be told while it runs (upstream_run_call_ex). */
struct upstream_run_call_hooks {
	/* Its progress, as a command tool reports it (exec_env.notify,
	 * docs/PIPELINE.md): {"progress": {"progress": N, "total": M,
	 * "message": "..."}} (total and message when the server gave them,
	 * the message redacted, shown and cut as a stderr line is), JSON text
	 * borrowed for the call. Called on the client's dispatcher thread,
	 * never after the call returns: it must not wait, nor call the runner.
	 * NULL: no progress asked for. */
	void (*notify)(void *ctx, const char *event);
	void *ctx;               /* both hooks' */
	/* Its server's requests to the client that the declaration's relay
	 * allows (docs/UPSTREAMS.md, "Relay"), as tg_call.ask takes them: the
	 * request {"request": {"method", "params"}} (JSON text, borrowed);
	 * the answer {"result": ...} or {"error": {"code", "message"}}
	 * (malloc'd), given to the server; "" for "no answer now: the call is
	 * being stopped to ask the client first" (MRTR): the server is sent
	 * nothing and the call ends when its cancel_fd stops it; NULL: the
	 * server is answered an error. Called on a thread of the call's (never
	 * the client's dispatcher), one request at a time, never after the
	 * call returns; may block until the client answers, and must return
	 * soon after *stop becomes non-zero. A server's request is the call's
	 * only when the call was the one in flight on that server when the
	 * request was read and no call of the server has ended without its
	 * answer since it started (per_call: always); else it is refused
	 * (-32603). NULL: every request refused. */
	char *(*ask)(void *ctx, const char *request, const volatile int *stop);
};

/* upstream_run_call, and the call's hooks (borrowed for the call; NULL:
 * none). With a notify hook the tools/call carries
 * _meta.progressToken, a token of the runner's unique to the call, and
 * the server's notifications/progress with that token reach the hook,
 * those sent before its answer before the call returns (waited for at
 * most UPSTREAM_RUN_FLUSH_MS); progress with any other token is dropped
 * and counted (progress_dropped). With an ask hook, the server's
 * requests the declaration's relay allows are the hook's (at most
 * UPSTREAM_RELAY_MAX waiting at once; past them -32603; what the client
 * is never asked for an upstream, upstream_relay_push's); a request it
 * does not allow is answered -32601 and logged; none outlives the call.
 * A call that ends without the server's answer (timed out, cancelled,
 * stopped to ask its client first) on a long-lived server whose
 * declaration relays anything makes every later request of that server
 * refused until it starts again (docs/UPSTREAMS.md, "Relay"). */
int upstream_run_call_ex(struct upstream_run *r, const char *tool, const char *args_json,
			 int timeout_ms, int cancel_fd, const struct upstream_run_call_hooks *hooks,
			 char **result_json, struct tg_error *err);

/* The revision its server agreed at its last start ("" before any), into
 * out (size bytes). */
void upstream_run_protocol(struct upstream_run *r, char *out, size_t size);

/* How many times the server was started (tests); per_call: the listing's
 * starts and every call's. */
unsigned upstream_run_starts(struct upstream_run *r);

struct upstream_run_stats {
	uint64_t relists;           /* tools listed again after list_changed */
	uint64_t relist_failures;   /* of those, failed: the listing before kept */
	uint64_t progress_dropped;  /* notifications/progress for no call of that
				     * server's, or malformed */
};

/* The runner's counters, copied into *s (OUT). */
void upstream_run_get_stats(struct upstream_run *r, struct upstream_run_stats *s);

#endif
