/*
 * Private interface of src/mcp/: JSON-RPC 2.0 framing (jsonrpc.c), the
 * protocol session (session*.c; what only they share is in session_int.h),
 * transports (stdio.c, http*.c; what only http*.c and auth.c share is in
 * http_int.h), the HTTP headers that mirror a body (param.c).
 */
#ifndef TG_MCP_INT_H
#define TG_MCP_INT_H

#include <jansson.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

#include "toolgate/mcp.h"
#include "toolgate/trace.h"

#define MCP_MAX_MESSAGE (4u << 20)     /* one JSON-RPC message, bytes */
#define MCP_MODERN "2026-07-28"        /* the stateless revision (docs/MCP.md) */

/* JSON-RPC 2.0's error codes. */
enum {
	RPC_PARSE_ERROR = -32700,
	RPC_INVALID_REQUEST = -32600,
	RPC_METHOD_NOT_FOUND = -32601,
	RPC_INVALID_PARAMS = -32602,
	RPC_INTERNAL_ERROR = -32603,
};

/* The codes MCP 2026-07-28 adds. */
enum {
	RPC_HEADER_MISMATCH = -32020,
	RPC_MISSING_CLIENT_CAPABILITY = -32021,
	RPC_UNSUPPORTED_VERSION = -32022,
};

#define MCP_MAX_PRINCIPAL 128
#define MCP_SPARES_MAX 64 /* 128 descriptors, whatever the sessions */

struct mcp_tokens;
struct mcp_task;

/* The server's MCP tasks (task.c): every field of every task is under
 * lock; changed is broadcast on any change to any of them. */
struct mcp_tasks {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct mcp_task *list;      /* the tasks clients know, newest first */
	unsigned running;           /* task runs not yet ended, listed or not */
	int stopping;
};

struct tg_mcp {
	struct tg_gate *gate;
	char *principal;            /* stdio's, as configured */
	char *instructions;
	unsigned max_inflight;
	unsigned spares;            /* cancel pipes all sessions keep (atomic):
				     * at most MCP_SPARES_MAX */
	unsigned http_header_timeout; /* seconds; 0: the default (http_int.h) */
	struct mcp_tokens *tokens;  /* HTTP bearer tokens, or NULL: none required */
	unsigned char state_key[32]; /* seals MRTR requestStates (mrtr.c) */
	int policy;                 /* the gate has a policy (docs/AUTH.md) */
	char *principal_scopes;     /* the stdio principal's, with a policy */
	pthread_mutex_t lock;       /* watchers */
	pthread_mutex_t reload_lock;
	int hooked;             /* told of the gate's own changes (tg_gate_on_change) */
	struct mcp_watcher *watchers;
	struct mcp_tasks tasks;
};

/* ---- server.c: reloading the catalogue --------------------------------------- */

/* What a reload changed: which lists, and the URIs of the resources whose
 * contents changed (a JSON array of strings). */
struct mcp_change {
	int tools, prompts, resources;
	json_t *updated;
};

typedef void (*mcp_watch_fn)(void *ctx, const struct mcp_change *c);

/* Who hears of reloads (a stdio session, the HTTP server): called from
 * the reloading thread, with the server's lock held (a watcher must not
 * call mcp_watch or mcp_unwatch from there). */
struct mcp_watcher {
	mcp_watch_fn fn;
	void *ctx;
	struct mcp_watcher *next;
};

void mcp_watch(struct tg_mcp *m, struct mcp_watcher *w, mcp_watch_fn fn, void *ctx);
void mcp_unwatch(struct tg_mcp *m, struct mcp_watcher *w);

/* ---- auth.c ---------------------------------------------------------------- */

/* A principal's name: 1 to 127 of A-Z a-z 0-9 . _ @ - */
int mcp_principal_valid(const char *p);

/* A token file (docs/MCP.md): lines "SHA256-HEX PRINCIPAL". OUT *out. */
int mcp_tokens_load(const char *path, struct mcp_tokens **out, struct tg_error *err);
/* The principal a bearer token stands for, or NULL. */
const char *mcp_tokens_check(const struct mcp_tokens *t, const char *token, size_t len);
void mcp_tokens_free(struct mcp_tokens *t);
/* Who an HTTP request is, from its Authorization header (auth, NULL when
 * absent): with a policy, the subject and scopes of a token `toolgate
 * token issue` signed; with a token file, the principal its hash names;
 * without either, the configured principal. OUT principal (plen bytes)
 * and *scopes (malloc'd, with a policy; else NULL). 1 when a bearer
 * token verified, 0 when no token is asked for, -1 and why (the reason
 * for a 401, wlen bytes) when the request is refused, -2 and why (for a
 * 503) when the token could not be judged now (the store that holds the
 * revocations cannot be read). */
int mcp_http_identify(const struct tg_mcp *m, const char *auth, char *principal, size_t plen,
		      char **scopes, char *why, size_t wlen);

/* ---- mrtr.c ---------------------------------------------------------------- */

struct mrtr;

/* The multi round-trip state of a modern tools/call: params' requestState
 * opened and checked (it must be this server's, in time, for principal,
 * the tool params names and its arguments, exact[0, exact_len) when the
 * call has their text: call_opts), the inputResponses it asked for
 * taken; caps is the request's clientCapabilities. 0 and OUT *out; -1
 * and why (a -32602 message) when the state or responses are bad. */
int mrtr_open(const struct tg_mcp *m, const char *principal, const char *tool, json_t *params,
	      const char *exact, size_t exact_len, json_t *caps, struct mrtr **out, char *why,
	      size_t len);
/* A tool's question (method is one of sampling/createMessage,
 * elicitation/create, roots/list), under the tool's key (NULL or not 1 to
 * 64 of A-Z a-z 0-9 _ . -: one made of the question), more set when the
 * tool asks more before it reads an answer. Returns the line for the
 * tool (malloc'd): {"result": ...} when an earlier round answered it,
 * {"error": ...} when the client lacks the capability, "" (nothing to
 * write) while questions of this breath wait; or NULL and *stop set: the
 * run must end, and mrtr_response says what the client gets.
 * Thread-safe. */
char *mrtr_ask(struct mrtr *r, const char *method, json_t *params, const char *key, int more,
	       int *stop);
/* The answer to a call whose run was stopped for questions: an
 * InputRequiredResult (its resultType set, the rest of a modern result
 * left to the caller), or -32602 when the tool asks on and on. */
json_t *mrtr_response(struct mrtr *r, json_t *id);
/* For a call that failed after a question its client could not be asked:
 * -32021 with data.requiredCapabilities; NULL when there was none. */
json_t *mrtr_missing_capability(struct mrtr *r, json_t *id);
void mrtr_free(struct mrtr *r);

/* ---- stream.c -------------------------------------------------------------- */

/* A server-sent event stream (stream.c): events appended by any thread,
 * read by one connection at a time. With ids (a legacy session's), each
 * event has the id "NUMBER-N" and the events stay after they are read,
 * up to max_bytes (the oldest dropped first), for a client that resumes
 * with Last-Event-ID. */
struct mcp_stream;

struct mcp_stream *mcp_stream_new(unsigned long number, int ids, size_t max_bytes);
void mcp_stream_ref(struct mcp_stream *st);
void mcp_stream_unref(struct mcp_stream *st);
unsigned long mcp_stream_number(const struct mcp_stream *st);
/* Event 0: an id, no data, and the reconnection delay (SEP-1699). */
void mcp_stream_prime(struct mcp_stream *st, unsigned retry_ms);
/* Append msg (taken) as an event; final: the last one. Nothing is
 * appended once the stream ended. */
void mcp_stream_send(struct mcp_stream *st, json_t *msg, int final);
void mcp_stream_send_text(struct mcp_stream *st, const char *json);
/* No event will follow: a reader ends once it has read what is there. */
void mcp_stream_end(struct mcp_stream *st);
/* A connection starts reading at event first (after a Last-Event-ID of
 * first-1), taking the stream over from any other: its generation, or 0
 * when the stream was read to its end already. */
unsigned mcp_stream_attach(struct mcp_stream *st, unsigned long first);
/* Connection gen is gone. A stream without ids ends with it. */
void mcp_stream_detach(struct mcp_stream *st, unsigned gen);
/* For connection gen: up to max bytes of what follows the cursor,
 * waiting for them; a keep-alive comment after 15 s of silence; -1 at
 * the end (the stream then counts as read to its end) or when another
 * connection took the stream over. */
ssize_t mcp_stream_read(struct mcp_stream *st, unsigned gen, char *buf, size_t max);
/* 1 while a connection reads it. */
int mcp_stream_busy(struct mcp_stream *st);
/* 1 once a reader read the stream to its end. */
int mcp_stream_finished(struct mcp_stream *st);

/* ---- jsonrpc.c ---------------------------------------------------------- */

enum rpc_kind { RPC_REQUEST, RPC_NOTIFICATION, RPC_RESPONSE, RPC_INVALID };

/* What a message is. For RPC_INVALID, OUT *why says what is wrong and
 * *id the id to answer with (borrowed; json null when unknown). */
enum rpc_kind rpc_classify(json_t *msg, json_t **id, const char **why);
/* A response, as JSON text (malloc'd; NULL out of memory). The result is
 * taken (its reference stolen). */
char *rpc_result(json_t *id, json_t *result);
char *rpc_error(json_t *id, int code, const char *message);
json_t *rpc_error_json(json_t *id, int code, const char *message);
json_t *rpc_result_json(json_t *id, json_t *result);

/* ---- session*.c ----------------------------------------------------------- */

/* Where a session's messages go: a transport's writer, called from any
 * thread (the session serializes calls to it). */
typedef void (*mcp_send_fn)(void *ctx, const char *text, size_t len);

struct inflight;
struct pending;
struct listener;

struct mcp_session {
	struct tg_mcp *mcp;
	mcp_send_fn send;
	void *send_ctx;
	pthread_mutex_t lock;             /* everything below, and send */
	pthread_cond_t changed;           /* an answer came, the session closes, or
					   * (closing) an in-flight call ended */
	pthread_cond_t slot;              /* an in-flight call ended: one waiter
					   * for a slot is woken, not all */
	int state;                        /* SESSION_* (session_int.h) */
	char version[16];                 /* negotiated protocol revision */
	json_t *client_capabilities;      /* only sampling, elicitation, roots: {} */
	int log_level;
	struct inflight *inflight;
	unsigned ninflight;
	int spare[4][2];                  /* cancel pipes of ended calls, empty
					   * (an idle session keeps them till it
					   * ends: MCP_SPARES_MAX in all) */
	unsigned nspare;
	char principal[MCP_MAX_PRINCIPAL]; /* who this session is (identify) */
	struct pending *pending;          /* requests to the client awaiting answers */
	struct listener *listeners;       /* open subscriptions/listen (stdio) */
	json_t *subscribed;               /* resources/subscribe URIs, or NULL */
	char *scopes;                     /* stdio: the configured principal's, with a
					   * policy; HTTP requests bring their own */
	unsigned long next_request;       /* their ids: "toolgate-N" */
	int closing;                      /* released: nobody will answer */
	const char *transport;            /* for traces: "pipe" (stdio), "tcp" (HTTP) */
	const char *session_id;           /* HTTP's Mcp-Session-Id, or NULL */
};

void mcp_session_init(struct mcp_session *s, struct tg_mcp *m, mcp_send_fn send, void *ctx);
/* End what the session has running: calls in flight cancelled (their
 * sandboxes killed, no response), questions to the client given up. */
void mcp_session_cancel(struct mcp_session *s);
/* Wait for the calls in flight (cancelled first when cancel is set: they
 * then send nothing), release the session. */
void mcp_session_release(struct mcp_session *s, int cancel);
/* One message (a stdio line): answered through send; a tools/call runs
 * on a thread of its own. */
void mcp_session_handle(struct mcp_session *s, const char *text, size_t len);
/* Where the notifications a call causes go (its progress, the tool's log
 * messages): send takes the message. NULL sink: the session's send. */
struct mcp_sink {
	void (*send)(void *ctx, json_t *msg);
	void *ctx;
};

/* A message's own text, as it came: where a tools/call's arguments are
 * taken from when jansson cannot hold their numbers exactly (an integer
 * past 64 bits, more than 17 significant digits: util/json_wide.h), so
 * that they reach the gate as the client wrote them. Valid only while
 * the message is dispatched. */
struct mcp_text {
	const char *text;
	size_t len;
};

/* One parsed message (an HTTP body) and its text (raw: NULL when not
 * kept): its answer, or NULL when it needs none (a notification, a
 * response, a cancelled call). Calls run in the caller's thread, still
 * cancellable by a notification from another; what they report while
 * running goes to sink. scopes: the caller's (its token's), which its
 * tool calls are authorized against; NULL without a policy (with one,
 * NULL holds no scope). */
json_t *mcp_session_dispatch(struct mcp_session *s, json_t *msg, const struct mcp_text *raw,
			     const struct mcp_sink *sink, const char *scopes);
/* The HTTP status a modern-era answer goes with: 400 for its protocol
 * errors (-32020, -32021, -32022), 404 for an unknown method, else 200. */
int mcp_modern_status(json_t *resp);
/* The session has answered initialize (SESSION_NEW no more). */
int mcp_session_started(struct mcp_session *s);
/* A reload changed c: the session's client hears what it asked for (a
 * legacy session: list_changed, and resources/updated for what it
 * subscribed to; stdio subscriptions/listen: what their filters name). */
void mcp_session_changed(struct mcp_session *s, const struct mcp_change *c);
/* The notifications a subscriptions/listen stream with filter (what was
 * acknowledged) and subscription id gets for c: a JSON array. */
json_t *mcp_change_notifications(const struct mcp_change *c, json_t *filter, json_t *sub_id);
/* The result that ends the subscription of listen request id gracefully. */
json_t *mcp_listen_complete(json_t *id);
/* 1 if v is a session-era protocol version this server speaks. */
int mcp_version_known(const char *v);

/* How a call's answer is shaped and reported: by the legacy session's
 * revision, or by the modern request's own _meta. */
struct call_opts {
	int modern;                    /* 2026-07-28: resultType, serverInfo */
	int old_shapes;                /* before 2025-06-18: no structuredContent */
	int log_at;                    /* log level index; -1: the session's; 99: none */
	const char *scopes;            /* the caller's, with a policy (docs/AUTH.md) */
	const char *idem_key;          /* _meta's dev.toolgate/idempotencyKey, or NULL */
	int dry_run;                   /* _meta's dev.toolgate/dryRun */
	unsigned approval_wait_ms;     /* _meta's dev.toolgate/approvalWait, or
					* TG_APPROVAL_WAIT_POLICY when absent */
	int task;                      /* TASK_NEVER, TASK_MAYBE, TASK_NOW (session_int.h) */
	int64_t task_ttl_ms;           /* TASK_NOW: the client's ttl; 0: the default */
	struct mcp_task *run_of;       /* the task this call runs for, or NULL */
	struct tg_trace_ctx trace;     /* the request's span (valid 0: untraced) */
	const char *exact_args;        /* the arguments as the client wrote them,
					* when jansson rounds or refuses one of
					* their numbers; NULL otherwise. Only
					* while tools_call runs: never in a job */
	size_t exact_len;
};

/* ---- task.c: MCP tasks ------------------------------------------------------ */

/* A tools/call the client follows by its task id instead of waiting on
 * the request (docs/MCP.md): the 2025-11-25 revision's tasks (the client
 * asks for one) and the 2026-07-28 tasks extension (the server makes one
 * when a call outlasts TASK_AFTER_MS). The task is bound to its
 * principal: another one never sees it. */
enum mcp_task_status {
	TASK_WORKING,
	TASK_INPUT_REQUIRED,
	TASK_COMPLETED,
	TASK_FAILED,
	TASK_CANCELLED,
};

#define TASK_AFTER_MS 500                    /* a modern call not done by then: a task */
#define TASK_POLL_MS 500                     /* the poll interval suggested */
#define TASK_TTL_MS (2 * 3600 * 1000LL)      /* kept from creation, by default */
#define TASK_MIN_TTL_MS (60 * 1000LL)
#define TASK_MAX_TTL_MS (24 * 3600 * 1000LL)
#define TASK_MAX_LIVE 32                     /* unfinished tasks per principal */
#define TASK_MAX_KEPT 256                    /* tasks per principal, finished ones too */
#define TASK_MAX_QUESTIONS 16                /* asked at once */

struct mcp_task {
	char id[33];                   /* 128 random bits, hex */
	char principal[MCP_MAX_PRINCIPAL];
	int modern;                    /* the 2026-07-28 extension's shapes, else 2025-11-25's */
	enum mcp_task_status status;
	char *message;                 /* statusMessage, or NULL */
	int64_t created_ms, updated_ms, ttl_ms;
	json_t *result;                /* the call's result, once it ended with one */
	json_t *error;                 /* or the JSON-RPC error it ended with */
	json_t *asked;                 /* key -> {method, params}: inputRequests not answered */
	json_t *answers;               /* key -> {"result": answer}: answered, not yet read */
	json_t *breath;                /* the keys the tool waits on, in its order */
	unsigned next_key;
	json_t *caps;                  /* a modern call's clientCapabilities */
	int cancel[2];                 /* the run's cancel pipe: [0] read, [1] written */
	int listed;                    /* the client has its id (else in the registry only
					* to be counted and stopped) */
	volatile int withdraw;         /* cancelled by its client: a pending approval goes */
	int asking;                    /* the run stops to ask by MRTR: no task then */
	int done;                      /* the run ended */
	int refs;
	json_t *sync_resp;             /* the run's answer, while not listed */
	const char *missing;           /* a capability a question needed, undeclared */
	/* what the run runs (session_tasks.c) */
	struct mcp_session s;          /* the task's own: its principal, no client */
	char *name, *args, *scopes, *idem_key;
	json_t *req_id, *token;        /* the request's id and progressToken */
	struct call_opts opts;
	struct mrtr *mrtr;
	pthread_mutex_t sink_lock;
	struct mcp_sink sink;          /* the waiting request's; .send NULL once listed */
	struct mcp_task *next;
};

void mcp_tasks_init(struct mcp_tasks *ts);
/* The server stops: every run cancelled and waited for, every task freed. */
void mcp_tasks_stop(struct mcp_tasks *ts);
/* A task of principal (not listed yet), one reference held; NULL out of
 * memory. ttl_ms 0: the default; else clamped to the limits. */
struct mcp_task *mcp_task_new(const char *principal, int modern, int64_t ttl_ms);
/* Drop a reference (ts->lock not held; _locked: held). */
void mcp_task_put(struct mcp_tasks *ts, struct mcp_task *t);
void mcp_task_put_locked(struct mcp_task *t);
/* With ts->lock held: how many unfinished tasks principal has. */
unsigned mcp_tasks_live_locked(struct mcp_tasks *ts, const char *principal);
/* With ts->lock held: a new run's task joins the registry, not listed
 * (a reference for the registry): counted against TASK_MAX_LIVE, stopped
 * with the server. -1 when the principal has TASK_MAX_LIVE unfinished
 * tasks, or the server stops. */
int mcp_task_add_locked(struct mcp_tasks *ts, struct mcp_task *t);
/* With ts->lock held: t leaves the registry (its run answered as a
 * request, or could not start). */
void mcp_task_drop_locked(struct mcp_tasks *ts, struct mcp_task *t);
/* With ts->lock held: added t becomes known to its client; the
 * principal's oldest finished tasks go past TASK_MAX_KEPT. */
void mcp_task_list_locked(struct mcp_tasks *ts, struct mcp_task *t);
/* With ts->lock held: the statusMessage (at most 1 KiB, cut on a UTF-8
 * character's first byte). */
void mcp_task_set_message_locked(struct mcp_task *t, const char *text);
/* principal's task id, a reference held; NULL when there is none (or it
 * is another principal's, or it expired). */
struct mcp_task *mcp_task_find(struct mcp_tasks *ts, const char *principal, const char *id);
/* With ts->lock held: t as the client sees it (its revision's shape);
 * detailed: a modern tasks/get's, with result, error or inputRequests. */
json_t *mcp_task_json_locked(const struct mcp_task *t, int detailed);
/* With ts->lock held: the run ended with JSON-RPC response resp (taken;
 * NULL: it failed inside). A cancelled task stays cancelled. */
void mcp_task_settle_locked(struct mcp_task *t, json_t *resp);
/* With ts->lock held: status moves (updated now, changed broadcast). */
void mcp_task_set_locked(struct mcp_tasks *ts, struct mcp_task *t, enum mcp_task_status status);
/* The client cancels t: its status before (a finished task is left as it
 * is); the run is told to stop. */
enum mcp_task_status mcp_task_cancel(struct mcp_tasks *ts, struct mcp_task *t);
/* A modern tasks/update's inputResponses (an object): each answers the
 * open question of its key; others are ignored. -1 and why when a
 * response is not an object. */
int mcp_task_answer(struct mcp_tasks *ts, struct mcp_task *t, json_t *responses, char *why,
		    size_t len);
/* tasks/list (2025-11-25): principal's tasks, oldest first, a page after
 * cursor (NULL: the first); NULL and *bad set for a cursor not ours. */
json_t *mcp_tasks_page(struct mcp_tasks *ts, const char *principal, const char *cursor,
		       int *bad);
int mcp_task_terminal(enum mcp_task_status status);
int64_t mcp_now_ms(void);

/* ---- param.c ---------------------------------------------------------------- */

struct tg_contract;

/* A header value as the client meant it: plain, or the base64 sentinel
 * "=?base64?...?=" decoded. malloc'd and NUL-terminated, OUT *len its
 * length (the decoded bytes may hold a NUL); NULL for bad base64 or out
 * of memory. */
char *mcp_header_decode(const char *v, size_t *len);

/* A request header by name (case-insensitive): its first value, NULL
 * when absent; OUT *count how many times it was given. */
typedef const char *(*mcp_header_fn)(void *ctx, const char *name, unsigned *count);

/* The Mcp-Param-{Name} headers of a tools/call of tool k against the
 * call's arguments (MCP 2026-07-28): NULL when every annotated value and
 * its header agree, else why (written to why, "Header mismatch: ...").
 * Headers no annotation names are not looked at. */
const char *mcp_params_mismatch(const struct tg_contract *k, json_t *arguments,
				mcp_header_fn get, void *ctx, char *why, size_t len);

#endif
