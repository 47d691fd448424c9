/*
 * What the store's files share (src/store/): the opening, and the
 * statement helpers. Nothing outside src/store/ includes it.
 */
#ifndef TG_STORE_INT_H
#define TG_STORE_INT_H

#include <pthread.h>
#include <sqlite3.h>

#include "toolgate/store.h"

struct tg_store {
	sqlite3 *db;
	pthread_mutex_t lock;
	int schema;
	char instance[33];    /* this opening's id: who claimed a running key */
	char *dir;            /* the state directory */
	int alive_fd;         /* instances/ID.lock, locked while this opening lives */
};

/* err says what failed and SQLite's message (TG_ERR_SYSTEM); -1. */
int store_db_error(struct tg_error *err, sqlite3 *db, const char *what);
/* sql run whole; -1 and err. */
int store_exec(struct tg_store *st, const char *sql, struct tg_error *err);
/* The end of a write transaction: committed if rc is 0, else rolled
 * back; rc, or -1 when the commit failed. */
int store_end_tx(struct tg_store *st, int rc, struct tg_error *err);
/* src (a column's text, or NULL: "") into dst of len bytes, cut. */
void store_copy_text(char *dst, size_t len, const unsigned char *src);

/* principal's pending tickets at now, and the bytes its tickets that did
 * not run hold (the caller holds the lock): tg_store_tickets_pending. */
int store_queue_load(struct tg_store *st, const char *principal, int64_t now, uint64_t *n,
		     uint64_t *bytes, struct tg_error *err);

#endif
