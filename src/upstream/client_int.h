/*
 * What only src/upstream/client*.c share: the client's state. The
 * behaviour is described in client.h.
 */
#ifndef TG_UPSTREAM_CLIENT_INT_H
#define TG_UPSTREAM_CLIENT_INT_H

#include <pthread.h>

#include "upstream/client.h"

/* A request in flight, until its waiter takes the answer. */
struct client_pending {
	struct client_pending *next;
	int64_t id;
	char method[64];
	json_t *answer;             /* the result, or the error object */
	int is_error;
	int answered;
	int cancelled;
	char reason[128];           /* why it was cancelled */
};

/* A notification or a request from the server, for the dispatcher. */
struct client_item {
	struct client_item *next;
	json_t *msg;
	size_t bytes;
	uint64_t seq;               /* its read sequence number: queued_seq once queued */
};

struct upstream_client {
	int in_fd, out_fd;
	int stop_pipe[2];           /* written by upstream_client_free: the reader returns */
	struct upstream_client_ops ops;
	pthread_mutex_t lock;       /* every field below */
	pthread_cond_t answered;    /* a request answered or cancelled, or broken */
	pthread_cond_t queued;      /* an item queued, or stopping */
	pthread_cond_t dispatched;  /* an item's callback has run (upstream_client_flush) */
	pthread_mutex_t wlock;      /* one message written to out_fd at a time */
	struct client_pending *pending;
	int64_t next_id;
	struct client_item *head, *tail;
	unsigned items;
	size_t queued_bytes;
	uint64_t queued_seq;        /* items ever queued: the last one's read sequence */
	uint64_t done_seq;          /* items whose callbacks have run */
	int broken;
	char why[256];              /* why it broke */
	int stopping;
	int started;
	pthread_t reader, dispatcher;
	struct upstream_client_stats stats;
	/* the handshake (client_mcp.c) */
	int ready;                  /* initialize (or server/discover) answered */
	char protocol[16];
	json_t *init_result;        /* the server's answer to initialize or discover */
	json_t *meta;               /* the 2026-07-28 era: the _meta every request
				     * carries; NULL in the session era */
};

/* Declare the connection broken (the first reason stays): every waiter
 * wakes. */
void client_break(struct upstream_client *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
