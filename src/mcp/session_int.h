/*
 * Private interface of one MCP session's files: what the pieces of
 * session.c share. Only session*.c include it; transports and task.c see
 * a session through mcp_int.h.
 *
 *   session.c          lifecycle (initialize, ping, logging/setLevel) and dispatch
 *   session_trace.c    each request's server span (docs/TRACING.md)
 *   session_tools.c    tools/list, tools/call and the calls in flight
 *   session_ask.c      a tool's questions to its client (sampling, elicitation, roots)
 *   session_tasks.c    tools/call as a task, the tasks methods (task.c: the registry)
 *   session_listen.c   subscriptions/listen, what a reload tells each client
 *   session_catalog.c  resources, prompts, completion
 *   session_modern.c   the 2026-07-28 stateless era
 */
#ifndef TG_MCP_SESSION_INT_H
#define TG_MCP_SESSION_INT_H

#include "mcp/mcp_int.h"

enum { SESSION_NEW, SESSION_INITIALIZING, SESSION_READY };

/* How a tools/call runs (tools_call). */
enum { CALL_PLAIN, CALL_HERE, CALL_THREAD };

/* Whether a tools/call becomes an MCP task (docs/MCP.md): never; when it
 * outlasts TASK_AFTER_MS (the 2026-07-28 extension, server-directed); at
 * once (2025-11-25: the client asked for one). */
enum { TASK_NEVER, TASK_MAYBE, TASK_NOW };

#define EXT_TASKS "io.modelcontextprotocol/tasks"
#define TASKS_VERSION "2025-11-25" /* the session revision with tasks */
#define META_VERSION "io.modelcontextprotocol/protocolVersion"
#define META_CAPS "io.modelcontextprotocol/clientCapabilities"
#define RPC_RESOURCE_NOT_FOUND (-32002) /* MCP's code for resources/read */

/* The session-era protocol revisions, newest first; the log levels, in
 * their order (session.c). */
#define SESSION_NVERSIONS 3
#define SESSION_NLOG_LEVELS 8
extern const char *const session_versions[SESSION_NVERSIONS];
extern const char *const session_log_levels[SESSION_NLOG_LEVELS];

/* A request in flight: what notifications/cancelled finds it by. */
struct inflight {
	json_t *id;
	int cancel[2];                 /* the gate's cancel fd: [0] read, [1] written */
	int cancelled;
	struct inflight *next;
};

/* A tools/call (or a tasks/result that waits) answered off the reader's
 * path (session_tools.c). */
struct call_job {
	struct call_opts opts;
	struct mcp_session *s;
	struct inflight *f;            /* NULL: run in the reader's thread */
	json_t *id;
	char *name;
	char *args;                    /* JSON text, or NULL */
	json_t *token;                 /* _meta.progressToken, or NULL */
	char *scopes;                  /* opts.scopes, copied: the request may go first */
	char *idem_key;                /* opts.idem_key, copied */
	struct mrtr *mrtr;             /* a modern call's questions, or NULL */
	json_t *caps;                  /* a modern call's clientCapabilities, or NULL */
	struct mcp_sink sink;
	int has_sink;
	struct mcp_task *wait_for;     /* tasks/result: the task whose end it awaits */
	struct tg_span *span;          /* the request's server span, ended with its answer */
};

/* A call's reports on their way out: progress against the request's
 * token (increasing only, as the specification requires), log messages
 * at or above the session's level. */
struct reporter {
	struct mcp_session *s;
	int log_at;                    /* as in struct call_opts */
	struct mcp_sink sink;
	json_t *token;                 /* the request's progressToken, or NULL */
	double last;                   /* the last progress sent */
	int sent;
	struct mrtr *mrtr;             /* a modern call's questions, or NULL */
	int cancel_w;                  /* stops the run; -1: none */
	volatile int suspended;        /* the run was stopped to ask the client */
	struct mcp_task *task;         /* the task the call runs for, or NULL */
};

/* ---- session.c ------------------------------------------------------------- */

/* Send msg (taken) on the session's channel; NULL (out of memory): nothing. */
void session_send_json(struct mcp_session *s, json_t *msg);
/* What the server offers, for the session era (session_era set, the
 * negotiated version) or the modern one. */
json_t *session_capabilities(int session_era, const char *version);
/* Wait on c (with m held) for a change, or 100 ms. */
void session_wait_a_while(pthread_cond_t *c, pthread_mutex_t *m);

/* ---- session_trace.c ------------------------------------------------------- */

/* The server span of the request this thread handles, or NULL. */
extern __thread struct tg_span *session_request_span;
/* A request's (id set) or notification's server span; NULL untraced. */
struct tg_span *session_span_start(struct mcp_session *s, const char *method, json_t *id,
				   json_t *params);
/* End sp with the answer resp (NULL: none was sent). sp NULL: nothing. */
void session_span_end(struct tg_span *sp, json_t *resp);

/* ---- session_tools.c ------------------------------------------------------- */

/* tools/list: a page (50, from params' cursor) of the tools the caller's
 * scopes allow it to call (with a policy, NULL holds none; without one,
 * every tool). */
json_t *tools_list(struct mcp_session *s, json_t *id, json_t *params, int old_shapes,
		   const char *scopes);
/* The arguments of the tools/call whose text raw is (NULL: not kept),
 * as the client wrote them, into o's exact_args when jansson rounds or
 * refuses one of their numbers; else NULL there. */
void session_exact_arguments(const struct mcp_text *raw, struct call_opts *o);
/* tools/call, run as mode (CALL_*) says; NULL when the answer is sent
 * from a thread of its own. given: the revision's call_opts. */
json_t *tools_call(struct mcp_session *s, json_t *id, json_t *params, int mode,
		   const struct mcp_sink *sink, const struct call_opts *given);
/* Run a tools/call through the gate; its response. */
json_t *tools_call_response(struct mcp_session *s, json_t *id, const char *name,
			    const char *args, struct inflight *f, struct mrtr *mrtr,
			    json_t *token, const struct mcp_sink *sink,
			    const struct call_opts *opts);
/* A sink that sends on session ctx. */
void session_sink_send(void *ctx, json_t *msg);
/* A job for request id (its cancel pipe made), NULL out of resources;
 * run it (taken) in flight as mode says. */
struct call_job *tools_job_new(struct mcp_session *s, json_t *id);
/* A cancel pipe s kept from an ended call into fd (the caller holds
 * s->lock): 1, or 0 and fd[0] -1 when none is kept. */
int session_spare_take(struct mcp_session *s, int fd[2]);
json_t *tools_job_start(struct mcp_session *s, struct call_job *j, int mode);

/* ---- session_ask.c --------------------------------------------------------- */

/* A tool's question (struct tg_call's ask; ctx a struct reporter): to the
 * session's client, by MRTR, or through the call's task. The answer line
 * (malloc'd). */
char *tool_ask(void *ctx, const char *request, const volatile int *stop);
char *tool_ask_modern(void *ctx, const char *request, const volatile int *stop);
char *task_ask(void *ctx, const char *request, const volatile int *stop);
/* A response from the client, to the question that waits for it. */
void deliver_answer(struct mcp_session *s, json_t *msg);

/* ---- session_tasks.c ------------------------------------------------------- */

/* Whether tools/call params runs as a task (OUT opts->task,
 * ->task_ttl_ms): NULL, or the error that refuses it. */
json_t *task_mode(struct mcp_session *s, json_t *id, const char *name, json_t *params,
		  struct call_opts *opts);
/* Job j's call as a task: the CreateTaskResult, or the call's answer. */
json_t *task_call(struct mcp_session *s, struct call_job *j);
/* tasks/result: what t's call answered, once it ended; NULL when the
 * request was cancelled or the server stops. */
json_t *task_result(struct mcp_session *s, json_t *id, struct mcp_task *t,
		    const struct inflight *f);
json_t *task_methods_legacy(struct mcp_session *s, json_t *id, const char *method,
			    json_t *params, int mode);
json_t *task_methods_modern(struct mcp_session *s, json_t *id, const char *method,
			    json_t *params, json_t *caps);

/* ---- session_listen.c ------------------------------------------------------ */

/* subscriptions/listen; NULL once acknowledged. sink: HTTP's stream. */
json_t *listen_request(struct mcp_session *s, json_t *id, json_t *params,
		       const struct mcp_sink *sink);
/* A cancelled subscription ends; 1 if rid named one. */
int listen_end(struct mcp_session *s, json_t *rid);
/* Every open subscription ends with its completion result. */
void listen_close_all(struct mcp_session *s);

/* ---- session_catalog.c ----------------------------------------------------- */

json_t *catalog_resources(struct mcp_session *s, const char *method, json_t *id,
			  json_t *params, const char *scopes);
json_t *catalog_prompts(struct mcp_session *s, const char *method, json_t *id, json_t *params,
			const char *scopes);
json_t *catalog_complete(struct mcp_session *s, json_t *id, json_t *params, const char *scopes);
json_t *catalog_prompt_get_modern(struct mcp_session *s, json_t *id, json_t *params,
				  json_t *caps, const char *scopes);

/* ---- session_modern.c ------------------------------------------------------ */

/* What every modern result carries (resultType, serverInfo; ttlMs and
 * cacheScope when cacheable). */
void modern_result(json_t *result, int cacheable);
/* A request of the 2026-07-28 era: its answer, or NULL (sent later). */
json_t *modern_handle(struct mcp_session *s, json_t *id, const char *method, json_t *params,
		      json_t *meta, const struct mcp_text *raw, int mode,
		      const struct mcp_sink *sink, const char *scopes);

#endif
