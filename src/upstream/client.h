/*
 * The client side of MCP (2026-07-28, and 2025-11-25 with the two
 * revisions before it) over the stdio transport: what toolgate speaks to an upstream MCP server
 * (issue 18). Private to src/upstream/; client.c owns the connection
 * (framing, the pending table, the reader and dispatcher threads),
 * client_mcp.c the protocol's requests (server/discover or initialize,
 * tools/list, tools/call, ping). In the 2026-07-28 era every request
 * carries the version and capabilities discover sent in its _meta; the
 * client does not read the results' resultType (the runner does).
 *
 * The connection. Two descriptors: out_fd is the server's stdin, in_fd
 * its stdout; one JSON-RPC 2.0 message a line each way. A reader thread
 * frames lines and hands each to upstream_client_handle_line; a
 * dispatcher thread runs the caller's callbacks, so a slow callback never
 * stops the reader, and the reader never waits on a callback.
 *
 * What the server sends, and what it leads to:
 *   - a response to a request in flight: its waiter wakes with it;
 *   - a response to an id never sent, or to one already answered, timed
 *     out or cancelled: counted (stats.unexpected) and dropped. JSON-RPC
 *     says nothing of it, and a late answer to a cancelled request is
 *     what MCP's cancellation expects ("Cancellation"), so it is no fault;
 *   - a line that is not a JSON-RPC message (not JSON, not an object, no
 *     "jsonrpc":"2.0", neither request, notification nor response):
 *     counted (stats.garbage) and dropped. The stdio transport forbids
 *     it, yet servers do print a banner or a stray log line on stdout;
 *     past UPSTREAM_MAX_GARBAGE such lines the connection is broken
 *     ("malformed"): a server that writes little else is not speaking MCP;
 *   - a line over UPSTREAM_MAX_MESSAGE (4 MiB, as src/mcp/'s server side):
 *     the connection is broken ("oversized"), never buffered whole;
 *   - end of file or a read error on in_fd: broken ("EOF", or the errno);
 *   - a notification: queued for the notification callback;
 *   - a request (sampling/createMessage, elicitation/create, roots/list):
 *     queued for the request callback, whose result or error is the
 *     answer, or which defers it: the answer is given later, from any
 *     thread, by upstream_client_answer, so that a request a person
 *     answers never holds up the dispatcher; without a callback, "method
 *     not found" (-32601). A ping is answered {} by the reader itself, at
 *     once, as the specification asks.
 * Each notification and request queued has a read sequence number, one
 * more than the one queued before it: the request callback is given its
 * request's, and upstream_client_read_seq says the last one's, so that
 * the client's owner can tell a request read before some moment of its
 * own (the runner: before a call was sent) from one read after.
 * The queue holds at most UPSTREAM_MAX_QUEUE items and
 * UPSTREAM_MAX_QUEUE_BYTES bytes: past either, a notification is dropped
 * (stats.dropped) and a request answered -32603 "client busy" at once.
 *
 * Once broken, the connection stays broken: every waiter, present and
 * future, gets a TG_ERR_UNAVAILABLE error naming why ("upstream
 * connection broken: EOF", "...: a message over 4194304 bytes", ...).
 *
 * Requests: upstream_client_send gives an id, upstream_client_wait waits
 * for its answer with a timeout; on timeout or upstream_client_cancel
 * (from any thread) the request is forgotten and notifications/cancelled
 * sent upstream with the reason. Writes to out_fd never block without
 * bound: the descriptor is made non-blocking and a write that cannot
 * finish within UPSTREAM_WRITE_TIMEOUT_MS breaks the connection (a server
 * that does not read its stdin). SIGPIPE is blocked around each write.
 *
 * Never: spawn, sandbox or kill the server (the caller does; this module
 * owns two descriptors, nothing else), buffer without a ceiling, or call a
 * callback from the reader thread.
 */
#ifndef TG_UPSTREAM_CLIENT_H
#define TG_UPSTREAM_CLIENT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "toolgate/error.h"

#define UPSTREAM_MAX_MESSAGE (4u << 20)        /* one JSON-RPC message, bytes */
#define UPSTREAM_MAX_GARBAGE 64u               /* lines that are not JSON-RPC */
#define UPSTREAM_MAX_QUEUE 256u                /* queued notifications and requests */
#define UPSTREAM_MAX_QUEUE_BYTES (16u << 20)   /* their bytes */
#define UPSTREAM_WRITE_TIMEOUT_MS 10000        /* one message written to the server */
#define UPSTREAM_MAX_TOOLS 1024u               /* a list (tools, resources...): entries in
						* all its pages */
#define UPSTREAM_MAX_PAGES 64u                 /* a list: pages */

/* The revision offered at initialize, and the ones accepted in the answer. */
#define UPSTREAM_PROTOCOL "2025-11-25"
/* The stateless revision, and the _meta members its requests carry. */
#define UPSTREAM_MODERN "2026-07-28"
#define UPSTREAM_META_VERSION "io.modelcontextprotocol/protocolVersion"
#define UPSTREAM_META_CAPABILITIES "io.modelcontextprotocol/clientCapabilities"

/* JSON-RPC 2.0's error codes the client answers with. */
enum {
	UPSTREAM_RPC_METHOD_NOT_FOUND = -32601,
	UPSTREAM_RPC_INVALID_PARAMS = -32602,
	UPSTREAM_RPC_INTERNAL_ERROR = -32603,
	/* not JSON-RPC's: a request callback's "answered later" */
	UPSTREAM_RPC_DEFERRED = 1,
};

struct upstream_client;

/* What a request callback answers when it does not give a result. */
struct upstream_rpc_error {
	int code;
	char message[256];
};

/* The caller's callbacks, run on the dispatcher thread one at a time (in
 * the order the server sent them), never on the reader. Either may be
 * NULL. params is borrowed for the call and may be NULL.
 *   notification: any notification (notifications/progress,
 *     notifications/message, notifications/tools/list_changed,
 *     notifications/resources/updated, ...).
 *   request: a request from the server, id its JSON-RPC id (borrowed);
 *     returns its result (an object, owned by the client from then on),
 *     or NULL with *e filled (its code 0: -32603), or NULL with e->code
 *     UPSTREAM_RPC_DEFERRED: nothing is answered now, and the callback's
 *     owner answers id (kept with json_incref) once, later, with
 *     upstream_client_answer, before upstream_client_free. seq is the
 *     request's read sequence number (upstream_client_read_seq). ping
 *     never reaches it. */
struct upstream_client_ops {
	void (*notification)(void *ctx, const char *method, json_t *params);
	json_t *(*request)(void *ctx, json_t *id, const char *method, json_t *params,
			   uint64_t seq, struct upstream_rpc_error *e);
	void *ctx;
};

struct upstream_client_stats {
	uint64_t garbage;          /* lines that were not JSON-RPC, dropped */
	uint64_t unexpected;       /* responses to no request in flight, dropped */
	uint64_t notifications;    /* notifications handed to the callback */
	uint64_t dropped;          /* notifications dropped: the queue was full */
	uint64_t requests;         /* requests from the server answered (a deferred one
				    * once upstream_client_answer answers it) */
	uint64_t list_changed;     /* notifications/tools/list_changed received */
};

/* A client over the two descriptors, which it owns from this call on
 * (closed by upstream_client_free, or here on failure): out_fd is written
 * (the server's stdin), in_fd read (its stdout). ops is copied; may be
 * NULL. No thread is started yet (upstream_client_start). 0, or -1 and
 * err. */
int upstream_client_new(int in_fd, int out_fd, const struct upstream_client_ops *ops,
			struct upstream_client **out, struct tg_error *err);

/* Starts the reader and the dispatcher. 0, or -1 and err. */
int upstream_client_start(struct upstream_client *c, struct tg_error *err);

/* Stops the threads, drops what is queued and every request still in
 * flight, closes both descriptors. No other thread may be in a call on c
 * (a wait least of all): cancel and end those first. NULL: nothing. */
void upstream_client_free(struct upstream_client *c);

/* Parse one line (without its newline) and act on it as described above:
 * a response to its waiter, a notification or request to the queue, a
 * ping answered. Never blocks but on the write of a ping's or a refused
 * request's answer. The reader's work, public so that a fuzzer can drive
 * it without threads. */
void upstream_client_handle_line(struct upstream_client *c, const char *line, size_t len);

/* Runs the callbacks of everything queued, on the calling thread: the
 * dispatcher's work, for the same fuzzer. Returns how many items. */
unsigned upstream_client_drain(struct upstream_client *c);

/* Wait at most timeout_ms for the callbacks of everything queued until
 * now to have run: e.g. the progress a server sent before its answer,
 * which the reader queued before it woke the answer's waiter. 0, or -1
 * when the time ran out or the client is stopping. Never from a
 * callback (the dispatcher would wait for itself). */
int upstream_client_flush(struct upstream_client *c, int timeout_ms);

/* Send a request (params borrowed, may be NULL). Before initialize has
 * been answered only initialize and ping may be sent. The request's id
 * (> 0), or -1 and err (broken, not initialized, a failed write). */
int64_t upstream_client_send(struct upstream_client *c, const char *method, json_t *params,
			     struct tg_error *err);

/* 1 once id (upstream_client_send's, not yet waited for) is settled
 * (answered, cancelled, or the connection broke), waited for at most
 * ms; 0 when it is not by then. It stays in flight either way, for
 * upstream_client_wait: a caller that answers quickly is so spared what
 * watching its cancellation costs. */
int upstream_client_settled(struct upstream_client *c, int64_t id, int ms);

/* Wait at most timeout_ms for the answer to id (upstream_client_send's).
 * 0: *result is the result (owned). 1: the server answered an error;
 * *result is its error object (owned), err says "METHOD: MESSAGE (code
 * N)". -1: no answer, *result NULL, err says why: TG_ERR_LIMIT when it
 * timed out, TG_ERR_INVALID when cancelled, TG_ERR_UNAVAILABLE when the
 * connection broke (its reason); on timeout and cancel
 * notifications/cancelled was sent. Each id is waited for once. */
int upstream_client_wait(struct upstream_client *c, int64_t id, int timeout_ms, json_t **result,
			 struct tg_error *err);

/* Send and wait: 0, 1 or -1 as upstream_client_wait. */
int upstream_client_request(struct upstream_client *c, const char *method, json_t *params,
			    int timeout_ms, json_t **result, struct tg_error *err);

/* Cancel request id from any thread: its waiter (present or to come)
 * returns -1 "cancelled: REASON". No effect when id is not in flight. */
void upstream_client_cancel(struct upstream_client *c, int64_t id, const char *reason);

/* The answer to a request of the server's that the request callback
 * deferred: result (an object, taken; NULL: the error code and message,
 * code 0 meaning -32603) to request id (borrowed). From any thread, once
 * per id, never after upstream_client_free. 0, or -1 and err (may be
 * NULL): TG_ERR_LIMIT when the answer is over UPSTREAM_MAX_MESSAGE
 * (nothing was written, the connection is whole and the request still
 * unanswered: answer it again, with an error), TG_ERR_UNAVAILABLE when
 * the connection is broken, or breaks. */
int upstream_client_answer(struct upstream_client *c, json_t *id, json_t *result, int code,
			   const char *message, struct tg_error *err);

/* The read sequence number of the last notification or request queued
 * (0 before any): whatever the reader queues from now on has a greater
 * one. From any thread. */
uint64_t upstream_client_read_seq(struct upstream_client *c);

/* Send a notification (params borrowed, may be NULL). 0, or -1 and err. */
int upstream_client_notify(struct upstream_client *c, const char *method, json_t *params,
			   struct tg_error *err);

/* 1 if the connection is broken, with why copied into why (size bytes). */
int upstream_client_broken(struct upstream_client *c, char *why, size_t size);

/* The counters, copied into *s. */
void upstream_client_get_stats(struct upstream_client *c, struct upstream_client_stats *s);

/* --- client_mcp.c: MCP's requests --- */

/* The handshake: initialize (offering UPSTREAM_PROTOCOL, the
 * capabilities given, borrowed, may be NULL: none; clientInfo
 * name/version), waiting at most timeout_ms, then
 * notifications/initialized. The server's protocolVersion must be
 * 2025-11-25, 2025-06-18 or 2025-03-26; anything else, no answer in time
 * or a malformed answer breaks the connection and is an error naming it.
 * 0, or -1 and err. */
int upstream_client_initialize(struct upstream_client *c, const char *name, const char *version,
			       json_t *capabilities, int timeout_ms, struct tg_error *err);

/* The 2026-07-28 era's handshake: server/discover, its _meta the version,
 * the capabilities given (borrowed, may be NULL: none) and clientInfo
 * name/version, waited for at most timeout_ms. 1: the server speaks that
 * era, and from now on every request carries that _meta (over the
 * caller's members of the same names); its capabilities, serverInfo and
 * instructions are discover's. 0: it does not (it refused discover, did
 * not answer it in time, or names other versions; why, size bytes, says
 * which): the connection is whole, for initialize. -1 and err: the
 * connection broke, or the answer is malformed. */
int upstream_client_discover(struct upstream_client *c, const char *name, const char *version,
			     json_t *capabilities, int timeout_ms, char *why, size_t size,
			     struct tg_error *err);

/* 1 once discover agreed the 2026-07-28 era, else 0. */
int upstream_client_modern(struct upstream_client *c);

/* After initialize or discover: the protocol version agreed, and the server's
 * capabilities, serverInfo and instructions as it sent them (borrowed,
 * NULL when absent), valid until upstream_client_free. */
const char *upstream_client_protocol(struct upstream_client *c);
json_t *upstream_client_capabilities(struct upstream_client *c);
json_t *upstream_client_server_info(struct upstream_client *c);
const char *upstream_client_instructions(struct upstream_client *c);

/* tools/list, following nextCursor: every tool of every page into *tools
 * (an array, owned), each page waited for at most timeout_ms. More than
 * UPSTREAM_MAX_PAGES pages or UPSTREAM_MAX_TOOLS tools, a cursor that
 * repeats itself, a page without a tools array: -1 and err. */
int upstream_client_list_tools(struct upstream_client *c, int timeout_ms, json_t **tools,
			       struct tg_error *err);

/* What one of MCP's lists is: its method, the result's array, the member
 * each entry must have as a string. */
struct upstream_list_kind {
	const char *method, *key, *field;
};
extern const struct upstream_list_kind upstream_list_tools, upstream_list_resources,
	upstream_list_templates, upstream_list_prompts;

/* The list k (tools/list as upstream_client_list_tools, resources/list,
 * resources/templates/list, prompts/list) followed through its pages as
 * tools are: every entry into *out (an array, owned), with the same
 * ceilings (UPSTREAM_MAX_PAGES pages, UPSTREAM_MAX_TOOLS entries) and,
 * unless max_bytes is 0, at most max_bytes of compact JSON text, refused
 * as soon as a page goes past it; an entry that is not an object with
 * k->field a string is refused. 0, or -1 and err (the server's error:
 * err says it). */
int upstream_client_list(struct upstream_client *c, const struct upstream_list_kind *k,
			 size_t max_bytes, int timeout_ms, json_t **out, struct tg_error *err);

/* tools/call of name with arguments (borrowed, may be NULL: {}) and meta
 * (borrowed, may be NULL: no _meta; e.g. a progressToken): 0, 1 or -1 as
 * upstream_client_wait, *result the raw result object (owned). A call
 * another thread may cancel is made with upstream_client_send and _wait
 * instead, the id known before the wait. */
int upstream_client_call_tool(struct upstream_client *c, const char *name, json_t *arguments,
			      json_t *meta, int timeout_ms, json_t **result, struct tg_error *err);

/* ping (server/discover in the 2026-07-28 era, which has no ping): 0 when
 * the server answered an object within timeout_ms, else -1 and err. */
int upstream_client_ping(struct upstream_client *c, int timeout_ms, struct tg_error *err);

#endif
