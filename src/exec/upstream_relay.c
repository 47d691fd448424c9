/*
 * An upstream call's requests to the caller's client (upstream_relay.h;
 * docs/UPSTREAMS.md, "Relay"): a queue of at most UPSTREAM_RELAY_MAX
 * requests the runner's request callback pushed, and a thread of the
 * call's that asks the call's hook one at a time, in the order the server
 * sent them, and answers the server through the client. The client's
 * dispatcher only queues: a client that takes minutes to answer (a person
 * asked to elicit) never holds up the server's progress, its other
 * requests or its other calls.
 *
 * Never: block the dispatcher, ask after the call ended, answer one
 * request twice, or leave a thread or a request behind at
 * upstream_relay_free.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/upstream_relay.h"

/* The requests a server may make of the client, the relay entry that
 * allows each (docs/UPSTREAMS.md, "Relay"), and the capability a client
 * declares for it. */
static const struct upstream_relay_kind kinds[] = {
	{ "sampling/createMessage", "sampling", TG_UPSTREAM_RELAY_SAMPLING },
	{ "elicitation/create", "elicitation", TG_UPSTREAM_RELAY_ELICITATION },
	{ "roots/list", "roots", TG_UPSTREAM_RELAY_ROOTS },
};

const struct upstream_relay_kind *upstream_relay_kind_of(const char *method)
{
	size_t i;

	for (i = 0; method && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strcmp(method, kinds[i].method) == 0)
			return &kinds[i];
	return NULL;
}

json_t *upstream_relay_capabilities(unsigned relay)
{
	json_t *caps = json_object(), *v;
	size_t i;

	for (i = 0; caps && i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (!(relay & kinds[i].bit))
			continue;
		/* elicitation in form mode only: the relay refuses url */
		v = kinds[i].bit == TG_UPSTREAM_RELAY_ELICITATION ? json_pack("{s:{}}", "form")
								   : json_object();
		if (json_object_set_new(caps, kinds[i].kind, v) < 0) {
			json_decref(caps);
			return NULL;
		}
	}
	return caps;
}

struct relay_item {
	json_t *id;
	json_t *request;          /* {"request": {"method", "params"?}} */
};

struct upstream_relay {
	struct upstream_client *client;
	upstream_relay_ask_fn ask;
	void *ctx;
	pthread_mutex_t lock;
	pthread_cond_t more;
	struct relay_item queue[UPSTREAM_RELAY_MAX];
	size_t n;
	volatile int stop;        /* the call is over */
	int halted;               /* an ask answered "": the call is stopped to ask */
	pthread_t t;
	int running;              /* t was started */
};

struct upstream_relay *upstream_relay_new(struct upstream_client *client,
					  upstream_relay_ask_fn ask, void *ctx)
{
	struct upstream_relay *a = calloc(1, sizeof(*a));

	if (!a)
		return NULL;
	a->client = client;
	a->ask = ask;
	a->ctx = ctx;
	pthread_mutex_init(&a->lock, NULL);
	pthread_cond_init(&a->more, NULL);
	return a;
}

/* The hook's answer to the server: its result, its error, or (NULL, not
 * JSON, neither) an error of ours. "" was dealt with before. An answer
 * over the ceiling of a message to the server (a client's result, or its
 * error's message) was not written: the server is answered an error
 * instead, rather than left waiting for its timeout. */
static void give(struct upstream_relay *a, json_t *id, const char *answer)
{
	json_t *j = answer ? json_loads(answer, 0, NULL) : NULL;
	json_t *result = json_object_get(j, "result"), *error = json_object_get(j, "error");
	const char *message = json_string_value(json_object_get(error, "message"));
	json_t *code = json_object_get(error, "code");
	struct tg_error err;
	char over[128];
	int rc;

	if (result)
		rc = upstream_client_answer(a->client, id, json_incref(result), 0, NULL, &err);
	else if (json_is_object(error))
		rc = upstream_client_answer(a->client, id, NULL,
					    json_is_integer(code) ? (int)json_integer_value(code)
								  : UPSTREAM_RPC_INTERNAL_ERROR,
					    message ? message : "the client refused", &err);
	else
		rc = upstream_client_answer(a->client, id, NULL, UPSTREAM_RPC_INTERNAL_ERROR,
					    "no answer from the client", &err);
	if (rc < 0 && err.code == TG_ERR_LIMIT) {
		snprintf(over, sizeof(over), "the client's answer is over %u bytes, the most a "
			 "message to the server may hold", UPSTREAM_MAX_MESSAGE);
		upstream_client_answer(a->client, id, NULL, UPSTREAM_RPC_INTERNAL_ERROR, over,
				       NULL);
	}
	json_decref(j);
}

static void *relay_main(void *arg)
{
	struct upstream_relay *a = arg;
	struct relay_item it;
	char *text, *answer;

	pthread_mutex_lock(&a->lock);
	for (;;) {
		while (!a->n && !a->stop)
			pthread_cond_wait(&a->more, &a->lock);
		if (a->stop || a->halted)
			break; /* the rest is upstream_relay_free's */
		it = a->queue[0];
		memmove(a->queue, a->queue + 1, --a->n * sizeof(a->queue[0]));
		pthread_mutex_unlock(&a->lock);
		text = json_dumps(it.request, JSON_COMPACT);
		answer = text ? a->ask(a->ctx, text, &a->stop) : NULL;
		free(text);
		pthread_mutex_lock(&a->lock);
		if (answer && !*answer)
			/* the call is being stopped to ask its client first
			 * (MRTR): the server hears nothing, its call ends */
			a->halted = 1;
		pthread_mutex_unlock(&a->lock);
		if (!answer || *answer)
			give(a, it.id, answer);
		free(answer);
		json_decref(it.id);
		json_decref(it.request);
		pthread_mutex_lock(&a->lock);
	}
	pthread_mutex_unlock(&a->lock);
	return NULL;
}

/* What the agent's client is never asked for an upstream (params: a
 * copy of the request's, changed here). A sampling request's includeContext
 * ("thisServer", "allServers") asks the client to add its MCP context,
 * which is toolgate's: every upstream's and contract's outputs, the
 * answer going back to this upstream; it is taken out ("none", the
 * default). Sampling with tools and URL-mode elicitation need
 * sub-capabilities (sampling.tools, elicitation.url) that toolgate does
 * not keep of the client's declaration: refused. 0, or -1 and e. */
int upstream_relay_admit(const char *method, json_t *params, struct upstream_rpc_error *e)
{
	const char *mode = json_string_value(json_object_get(params, "mode"));

	e->code = UPSTREAM_RPC_INVALID_PARAMS;
	if (strcmp(method, "sampling/createMessage") == 0) {
		if (json_object_get(params, "tools") || json_object_get(params, "toolChoice")) {
			snprintf(e->message, sizeof(e->message), "sampling with tools is not "
				 "relayed: toolgate cannot tell whether the agent's client "
				 "declared sampling.tools");
			return -1;
		}
		json_object_del(params, "includeContext");
	} else if (strcmp(method, "elicitation/create") == 0) {
		if (json_object_get(params, "mode") && (!mode || strcmp(mode, "form") != 0)) {
			snprintf(e->message, sizeof(e->message), "elicitation in mode %.32s is not "
				 "relayed, only form mode (toolgate cannot tell whether the agent's "
				 "client declared elicitation.url)", mode ? mode : "(not a string)");
			return -1;
		}
		if (!json_is_object(json_object_get(params, "requestedSchema"))) {
			snprintf(e->message, sizeof(e->message), "elicitation in form mode needs a "
				 "requestedSchema object");
			return -1;
		}
		/* a url mode's members, in a form: not the client's to follow */
		json_object_del(params, "url");
		json_object_del(params, "elicitationId");
	}
	return 0;
}

int upstream_relay_push(struct upstream_relay *a, json_t *id, const char *method, json_t *params,
			struct upstream_rpc_error *e)
{
	json_t *req = json_pack("{s:{s:s}}", "request", "method", method), *copy;
	int rc = -1;

	if (req && json_is_object(params)) {
		copy = json_deep_copy(params);
		if (copy && upstream_relay_admit(method, copy, e) < 0) {
			json_decref(copy);
			json_decref(req);
			return -1;
		}
		json_object_set_new(json_object_get(req, "request"), "params", copy);
	}
	pthread_mutex_lock(&a->lock);
	e->code = UPSTREAM_RPC_INTERNAL_ERROR;
	if (!req) {
		snprintf(e->message, sizeof(e->message), "out of memory");
	} else if (a->stop) {
		snprintf(e->message, sizeof(e->message), "the call ended before its client "
			 "could be asked");
	} else if (a->halted) {
		snprintf(e->message, sizeof(e->message), "the call is being stopped to ask its "
			 "client first (multi round-trip): nothing more is asked in this run");
	} else if (a->n >= UPSTREAM_RELAY_MAX) {
		snprintf(e->message, sizeof(e->message), "%d requests of this call already wait "
			 "for its client", UPSTREAM_RELAY_MAX);
	} else if (!a->running && pthread_create(&a->t, NULL, relay_main, a) != 0) {
		snprintf(e->message, sizeof(e->message), "no thread to ask the client");
	} else {
		a->running = 1;
		a->queue[a->n].id = json_incref(id);
		a->queue[a->n].request = req;
		a->n++;
		req = NULL;
		pthread_cond_signal(&a->more);
		rc = 0;
	}
	pthread_mutex_unlock(&a->lock);
	json_decref(req);
	return rc;
}

void upstream_relay_free(struct upstream_relay *a)
{
	size_t i;

	if (!a)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = 1;
	pthread_cond_signal(&a->more);
	pthread_mutex_unlock(&a->lock);
	if (a->running)
		pthread_join(a->t, NULL);
	/* never asked: the server is not left waiting, unless the call was
	 * stopped to ask (then it hears nothing more of the call) */
	for (i = 0; i < a->n; i++) {
		if (!a->halted)
			upstream_client_answer(a->client, a->queue[i].id, NULL,
					       UPSTREAM_RPC_INTERNAL_ERROR,
					       "the call ended before its client answered", NULL);
		json_decref(a->queue[i].id);
		json_decref(a->queue[i].request);
	}
	pthread_cond_destroy(&a->more);
	pthread_mutex_destroy(&a->lock);
	free(a);
}
