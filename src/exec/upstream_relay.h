/*
 * One call's share of what its upstream server asks the gateway's client
 * (docs/UPSTREAMS.md, "Relay"): the server's requests that the runner
 * (upstream_run.c) found to be the call's and its declaration's relay
 * allows, each passed to the call's ask hook (the same contract as
 * tg_call.ask) on a thread of the call's, never on the client's
 * dispatcher, and the answer given to the server with
 * upstream_client_answer (an error instead when the answer is over the
 * ceiling of a message to the server). upstream_relay.c owns it; private
 * to src/exec/.
 */
#ifndef TG_EXEC_UPSTREAM_RELAY_H
#define TG_EXEC_UPSTREAM_RELAY_H

#include <jansson.h>

#include "toolgate/upstream.h"
#include "upstream/client.h"

#define UPSTREAM_RELAY_MAX 4 /* requests of one call waiting for its client */

/* The call's hook: the request as JSON text {"request": {"method",
 * "params"}}; the answer {"result": ...} or {"error": {"code",
 * "message"}} (malloc'd), "" for "no answer now: the call is being
 * stopped to ask the client first" (MRTR), NULL for none. */
typedef char *(*upstream_relay_ask_fn)(void *ctx, const char *request,
				       const volatile int *stop);

struct upstream_relay;

/* A request a server may make of the client: its method, the relay entry
 * (and client capability) of that name, its bit of tg_upstream.relay. */
struct upstream_relay_kind {
	const char *method, *kind;
	unsigned bit;
};

/* The kind of method (sampling/createMessage, elicitation/create,
 * roots/list), or NULL for any other request. */
const struct upstream_relay_kind *upstream_relay_kind_of(const char *method);

/* The client capabilities a declaration's relay (its bits) declares to
 * the server: sampling, elicitation with form (the only mode relayed),
 * roots. NULL out of memory. */
json_t *upstream_relay_capabilities(unsigned relay);

/* A relay for one call whose server is spoken to with client (borrowed:
 * it must outlive the relay), asking ask with ctx. No thread is started
 * until a request comes. NULL out of memory. */
struct upstream_relay *upstream_relay_new(struct upstream_client *client,
					  upstream_relay_ask_fn ask, void *ctx);

/* The server's request id (borrowed; kept), method and params (copied;
 * may be NULL), queued for the call's client: 0, the client's
 * request callback deferring it (the relay answers it, once); or -1 with
 * *e filled: -32602 for what the client is never asked for an upstream
 * (sampling with tools or toolChoice, elicitation in a mode other than
 * form), -32603 when the call ended, is being stopped to ask its client
 * first, UPSTREAM_RELAY_MAX already wait, or no thread. A sampling
 * request's includeContext is taken out of the copy: the client adds
 * none of its context. Never blocks: the dispatcher calls it. */
int upstream_relay_push(struct upstream_relay *a, json_t *id, const char *method, json_t *params,
			struct upstream_rpc_error *e);

/* What the caller's client is never asked for an upstream, in either era:
 * sampling with tools or toolChoice, elicitation in a mode other than
 * form or without a requestedSchema object (-1, e: -32602 and why); a
 * sampling request's includeContext, a form's url and elicitationId are
 * taken out of params (the request's params, a copy of the caller's own,
 * changed here). 0 when it may be asked. */
int upstream_relay_admit(const char *method, json_t *params, struct upstream_rpc_error *e);

/* The call is over: its thread told to stop (an ask in progress returns
 * soon, as the hook's contract says) and joined; a request not yet asked
 * is answered -32603 (unless an ask answered "": the call was stopped to
 * ask its client, and the server is told nothing); nothing of it left.
 * NULL: nothing. */
void upstream_relay_free(struct upstream_relay *a);

#endif
