/*
 * Private interface of src/mcp/: JSON-RPC 2.0 framing (jsonrpc.c), the
 * protocol session (session.c), transports (stdio.c, http.c), the HTTP
 * headers that mirror a body (param.c).
 */
#ifndef TG_MCP_INT_H
#define TG_MCP_INT_H

#include <jansson.h>
#include <pthread.h>

#include "toolgate/mcp.h"

#define MCP_MAX_MESSAGE (4u << 20)     /* one JSON-RPC message, bytes */

/* JSON-RPC 2.0's error codes. */
enum {
	RPC_PARSE_ERROR = -32700,
	RPC_INVALID_REQUEST = -32600,
	RPC_METHOD_NOT_FOUND = -32601,
	RPC_INVALID_PARAMS = -32602,
	RPC_INTERNAL_ERROR = -32603,
};

#define MCP_MAX_PRINCIPAL 128

struct mcp_tokens;

struct tg_mcp {
	struct tg_gate *gate;
	char *principal;            /* stdio's, as configured */
	char *instructions;
	unsigned max_inflight;
	struct mcp_tokens *tokens;  /* HTTP bearer tokens, or NULL: none required */
};

/* ---- auth.c ---------------------------------------------------------------- */

/* A principal's name: 1 to 127 of A-Z a-z 0-9 . _ @ - */
int mcp_principal_valid(const char *p);

/* A token file (docs/MCP.md): lines "SHA256-HEX PRINCIPAL". OUT *out. */
int mcp_tokens_load(const char *path, struct mcp_tokens **out, struct tg_error *err);
/* The principal a bearer token stands for, or NULL. */
const char *mcp_tokens_check(const struct mcp_tokens *t, const char *token, size_t len);
void mcp_tokens_free(struct mcp_tokens *t);

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

/* ---- session.c ------------------------------------------------------------ */

/* Where a session's messages go: a transport's writer, called from any
 * thread (the session serializes calls to it). */
typedef void (*mcp_send_fn)(void *ctx, const char *text, size_t len);

struct inflight;
struct pending;

struct mcp_session {
	struct tg_mcp *mcp;
	mcp_send_fn send;
	void *send_ctx;
	pthread_mutex_t lock;             /* everything below, and send */
	pthread_cond_t changed;           /* an in-flight call ended */
	int state;                        /* SESSION_* (session.c) */
	char version[16];                 /* negotiated protocol revision */
	json_t *client_capabilities;      /* only sampling, elicitation, roots: {} */
	int log_level;
	struct inflight *inflight;
	unsigned ninflight;
	char principal[MCP_MAX_PRINCIPAL]; /* who this session is (identify) */
	struct pending *pending;          /* requests to the client awaiting answers */
	unsigned long next_request;       /* their ids: "toolgate-N" */
	int closing;                      /* released: nobody will answer */
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

/* One parsed message (an HTTP body): its answer, or NULL when it needs
 * none (a notification, a response, a cancelled call). Calls run in the
 * caller's thread, still cancellable by a notification from another;
 * what they report while running goes to sink. */
json_t *mcp_session_dispatch(struct mcp_session *s, json_t *msg, const struct mcp_sink *sink);
/* The HTTP status a modern-era answer goes with: 400 for its protocol
 * errors (-32020, -32021, -32022), 404 for an unknown method, else 200. */
int mcp_modern_status(json_t *resp);
/* The session has answered initialize (SESSION_NEW no more). */
int mcp_session_started(struct mcp_session *s);
/* 1 if v is a session-era protocol version this server speaks. */
int mcp_version_known(const char *v);

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
