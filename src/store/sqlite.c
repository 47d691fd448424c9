/*
 * The SQLite backend of the store (docs/STORE.md): the opening and the
 * migrations, the statement helpers its files share (sqlite_int.h), and
 * store_sqlite_ops, the table the front (store.c) dispatches through.
 * SQLite in WAL mode, one connection behind a mutex, every change one
 * transaction; the tables' operations live in sqlite_idem.c,
 * sqlite_ticket.c, sqlite_event.c (tickets' events), sqlite_saga.c,
 * sqlite_upkeep.c and sqlite_pin.c (upstreams' and skills' pins).
 *
 * Migrations: migrations[i] takes the schema from version i to i + 1;
 * each runs in its own transaction with the PRAGMA user_version that
 * records it, so a crash leaves the file at one version or the next,
 * never between.
 *
 * Must never: rewrite a database it did not write or one from a newer
 * toolgate, edit a migration that has shipped, or check a caller's input
 * (the front did).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "store/sqlite_int.h"
#include "util/sqlite.h"

#define DB_FILE "toolgate.db"
#define APP_ID 0x74676174 /* "tgat": PRAGMA application_id, marks our files */
#define BUSY_MS 5000      /* another process holding the write lock */

static const char *const migrations[] = {
	/* 0 -> 1: idempotency records; revocations, tickets and sagas come
	 * with their features, each a migration of its own */
	"CREATE TABLE idempotency ("
	" principal TEXT NOT NULL,"
	" tool TEXT NOT NULL,"
	" key TEXT NOT NULL,"
	" fingerprint TEXT NOT NULL,"
	" state TEXT NOT NULL CHECK (state IN ('running', 'done')),"
	" result BLOB,"
	" runner TEXT NOT NULL,"
	" created INTEGER NOT NULL,"
	" expires INTEGER NOT NULL,"
	" PRIMARY KEY (principal, tool, key)"
	") WITHOUT ROWID;"
	"CREATE INDEX idempotency_expires ON idempotency (expires);",
	/* 1 -> 2: revoked tokens, kept until they would have expired */
	"CREATE TABLE revocations ("
	" jti TEXT PRIMARY KEY,"
	" expires INTEGER NOT NULL"
	") WITHOUT ROWID;"
	"CREATE INDEX revocations_expires ON revocations (expires);",
	/* 2 -> 3: approval tickets (docs/STORE.md) */
	"CREATE TABLE tickets ("
	" id TEXT PRIMARY KEY,"
	" principal TEXT NOT NULL,"
	" tool TEXT NOT NULL,"
	" args_sha256 TEXT NOT NULL,"
	" preview BLOB,"
	" state TEXT NOT NULL CHECK (state IN ('pending', 'approved', 'rejected', 'expired',"
	"  'cancelled', 'executed', 'failed', 'compensated')),"
	" reason TEXT,"
	" approver TEXT,"
	" created INTEGER NOT NULL,"
	" decided INTEGER,"
	" expires INTEGER NOT NULL"
	") WITHOUT ROWID;"
	"CREATE INDEX tickets_state ON tickets (state, created);",
	/* 3 -> 4: a ticket's arguments, for its approver to read and its
	 * compensation to use; the rollback log (docs/STORE.md) */
	"ALTER TABLE tickets ADD COLUMN arguments TEXT;"
	"CREATE TABLE rollbacks ("
	" call_id TEXT PRIMARY KEY,"
	" state TEXT NOT NULL CHECK (state IN ('running', 'succeeded', 'failed')),"
	" requested_by TEXT NOT NULL,"
	" attempts INTEGER NOT NULL,"
	" detail TEXT,"
	" started INTEGER NOT NULL,"
	" ended INTEGER"
	") WITHOUT ROWID;",
	/* 4 -> 5: saga logs (docs/STORE.md) */
	"CREATE TABLE sagas ("
	" id TEXT PRIMARY KEY,"
	" state TEXT NOT NULL CHECK (state IN ('running', 'done', 'compensating', 'compensated',"
	"  'failed')),"
	" runner TEXT NOT NULL,"
	" created INTEGER NOT NULL,"
	" updated INTEGER NOT NULL"
	") WITHOUT ROWID;"
	"CREATE TABLE saga_steps ("
	" saga_id TEXT NOT NULL REFERENCES sagas (id),"
	" n INTEGER NOT NULL,"
	" tool TEXT NOT NULL,"
	" call_id TEXT NOT NULL,"
	" state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'done', 'failed',"
	"  'compensated', 'compensation_failed')),"
	" arguments TEXT NOT NULL,"
	" result BLOB,"
	" PRIMARY KEY (saga_id, n)"
	") WITHOUT ROWID;"
	"CREATE INDEX sagas_state ON sagas (state);",
	/* 5 -> 6: the tools a ticket's approver must also cover (a plan's
	 * steps); which opening of the store runs a rollback */
	"ALTER TABLE tickets ADD COLUMN covers TEXT;"
	"ALTER TABLE rollbacks ADD COLUMN runner TEXT;",
	/* 6 -> 7: what held a call for review besides its authority (its
	 * arguments' anomalies); the tools' baselines (docs/ANOMALIES.md) */
	"ALTER TABLE tickets ADD COLUMN findings TEXT;"
	"CREATE TABLE baselines ("
	" tool TEXT PRIMARY KEY,"
	" size_n INTEGER NOT NULL, size_mean REAL NOT NULL, size_m2 REAL NOT NULL,"
	" entropy_n INTEGER NOT NULL, entropy_mean REAL NOT NULL, entropy_m2 REAL NOT NULL,"
	" updated INTEGER NOT NULL"
	") WITHOUT ROWID;",
	/* 7 -> 8: the accepted definitions of upstreams' tools
	 * (docs/UPSTREAMS.md, "Pins") */
	"CREATE TABLE upstream_pins ("
	" upstream TEXT NOT NULL,"
	" tool TEXT NOT NULL,"
	" sha256 TEXT NOT NULL,"
	" definition TEXT NOT NULL,"
	" pinned_at INTEGER NOT NULL,"
	" pinned_by TEXT NOT NULL,"
	" PRIMARY KEY (upstream, tool)"
	") WITHOUT ROWID;",
	/* 8 -> 9: an upstream definition's review ticket found by its tool
	 * and definition (docs/UPSTREAMS.md, "Pins") */
	"CREATE INDEX tickets_tool ON tickets (tool, args_sha256, created);",
	/* 9 -> 10: every move of a ticket as an event (docs/STORE.md,
	 * "Ticket events"), written by triggers in the statement that moves
	 * it, whichever process or path moves it; AUTOINCREMENT so that a
	 * sequence number is never given twice, even once collected */
	"CREATE TABLE ticket_events ("
	" seq INTEGER PRIMARY KEY AUTOINCREMENT,"
	" ticket TEXT NOT NULL,"
	" state TEXT NOT NULL,"
	" tool TEXT NOT NULL,"
	" principal TEXT NOT NULL,"
	" approver TEXT,"
	" created INTEGER NOT NULL,"
	" decided INTEGER,"
	" expires INTEGER NOT NULL,"
	" at INTEGER NOT NULL"
	");"
	"CREATE INDEX ticket_events_at ON ticket_events (at);"
	"CREATE TRIGGER ticket_created AFTER INSERT ON tickets BEGIN"
	" INSERT INTO ticket_events (ticket, state, tool, principal, approver, created, decided,"
	"  expires, at) VALUES (NEW.id, NEW.state, NEW.tool, NEW.principal, NEW.approver,"
	"  NEW.created, NEW.decided, NEW.expires, CAST(strftime('%s', 'now') AS INTEGER));"
	" END;"
	"CREATE TRIGGER ticket_moved AFTER UPDATE OF state ON tickets"
	" WHEN NEW.state IS NOT OLD.state BEGIN"
	" INSERT INTO ticket_events (ticket, state, tool, principal, approver, created, decided,"
	"  expires, at) VALUES (NEW.id, NEW.state, NEW.tool, NEW.principal, NEW.approver,"
	"  NEW.created, NEW.decided, NEW.expires, CAST(strftime('%s', 'now') AS INTEGER));"
	" END;",
	/* 10 -> 11: each webhook's place in the ticket events (docs/NOTIFY.md),
	 * so that a restarted gateway tells a receiver what it had not yet */
	"CREATE TABLE webhook_cursors ("
	" name TEXT PRIMARY KEY,"
	" seq INTEGER NOT NULL"
	") WITHOUT ROWID;",
	/* 11 -> 12: the skill served last under each name, its version and
	 * manifest's digest (docs/SKILLS.md, "Pinned") */
	"CREATE TABLE skill_pins ("
	" name TEXT PRIMARY KEY,"
	" version TEXT NOT NULL,"
	" sha256 TEXT NOT NULL,"
	" pinned_at INTEGER NOT NULL"
	") WITHOUT ROWID;",
};

int store_db_error(struct tg_error *err, sqlite3 *db, const char *what)
{
	return tg_error_set(err, TG_ERR_SYSTEM, "store: %s: %s", what,
			    db ? sqlite3_errmsg(db) : "out of memory");
}

int store_exec(struct tg_store *st, const char *sql, struct tg_error *err)
{
	char *msg = NULL;

	if (sqlite3_exec(sq_db(st), sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	tg_error_set(err, TG_ERR_SYSTEM, "store: %s", msg ? msg : sqlite3_errmsg(sq_db(st)));
	sqlite3_free(msg);
	return -1;
}

/* The end of a write transaction: committed if rc is 0, else rolled
 * back; rc, or -1 when the commit failed. */
int store_end_tx(struct tg_store *st, int rc, struct tg_error *err)
{
	if (rc == 0)
		rc = store_exec(st, "COMMIT", err);
	if (rc != 0)
		sqlite3_exec(sq_db(st), "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static int pragma_int(struct tg_store *st, const char *sql, int *out)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(sq_db(st), sql, -1, &s, NULL) != SQLITE_OK)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		*out = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return rc == SQLITE_ROW ? 0 : -1;
}

/* WAL mode; the switch takes a lock the busy timeout does not wait for,
 * so a process opening a fresh file beside another tries again. */
static int wal(struct tg_store *st, struct tg_error *err)
{
	int i;

	for (i = 0; i < 50; i++) {
		if (sqlite3_exec(sq_db(st), "PRAGMA journal_mode = WAL", NULL, NULL, NULL) == SQLITE_OK)
			return 0;
		if ((sqlite3_errcode(sq_db(st)) & 0xff) != SQLITE_BUSY)
			break;
		sqlite3_sleep(20);
	}
	return store_db_error(err, sq_db(st), "journal_mode = WAL");
}

/* Bring the schema to TG_STORE_SCHEMA, one transaction a step. */
static int migrate(struct tg_store *st, const char *path, struct tg_error *err)
{
	int version = 0, app = 0, tables = 0;
	char sql[64], mark[64];

	/* one read transaction, so that the three answers are of one state
	 * of the file: another process migrating it meanwhile must not look
	 * like someone else's tables */
	if (store_exec(st, "BEGIN", err) < 0)
		return -1;
	if (pragma_int(st, "PRAGMA user_version", &version) < 0 ||
	    pragma_int(st, "PRAGMA application_id", &app) < 0 ||
	    pragma_int(st, "SELECT count(*) FROM sqlite_master", &tables) < 0) {
		sqlite3_exec(sq_db(st), "ROLLBACK", NULL, NULL, NULL);
		return store_db_error(err, sq_db(st), path);
	}
	sqlite3_exec(sq_db(st), "COMMIT", NULL, NULL, NULL);
	if (app != 0 && app != APP_ID)
		return tg_error_set(err, TG_ERR_INVALID, "store %s: not a toolgate database", path);
	if (app == 0 && (version != 0 || tables != 0))
		return tg_error_set(err, TG_ERR_INVALID, "store %s: not a toolgate database "
				    "(someone else's tables)", path);
	if (version > TG_STORE_SCHEMA)
		return tg_error_set(err, TG_ERR_INVALID,
				    "store %s: schema %d, written by a newer toolgate (this one "
				    "knows %d); refusing to touch it", path, version,
				    TG_STORE_SCHEMA);
	snprintf(mark, sizeof(mark), "PRAGMA application_id = %d", APP_ID);
	for (; version < TG_STORE_SCHEMA; version++) {
		int now = 0;

		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", version + 1);
		if (store_exec(st, "BEGIN IMMEDIATE", err) < 0)
			return -1;
		/* another process may have migrated meanwhile: look again,
		 * holding the write lock */
		if (pragma_int(st, "PRAGMA user_version", &now) < 0) {
			sqlite3_exec(sq_db(st), "ROLLBACK", NULL, NULL, NULL);
			return store_db_error(err, sq_db(st), path);
		}
		if (now > version) {
			store_exec(st, "COMMIT", err);
			version = now - 1;
			continue;
		}
		if (store_exec(st, migrations[version], err) < 0 || store_exec(st, sql, err) < 0 ||
		    (version == 0 && store_exec(st, mark, err) < 0) ||
		    store_exec(st, "COMMIT", err) < 0) {
			sqlite3_exec(sq_db(st), "ROLLBACK", NULL, NULL, NULL);
			return tg_error_wrap(err, "store %s: migrating to schema %d", path,
					     version + 1);
		}
	}
	st->schema = version;
	return 0;
}

static void sq_close(struct tg_store *st)
{
	struct sq_store *q = st->be;

	if (!q)
		return;
	sqlite3_close(q->db);
	pthread_mutex_destroy(&q->lock);
	free(q);
	st->be = NULL;
}

/* toolgate.db in the state directory, opened, made WAL and migrated. */
static int sq_open(struct tg_store *st, struct tg_error *err)
{
	struct sq_store *q;
	char *path;
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, rc = -1;

	/* loaded first: nothing of SQLite's is called without its handle */
	if (tg_sqlite_load(st->dir, err) < 0)
		return -1;
	q = calloc(1, sizeof(*q));
	if (!q || asprintf(&path, "%s/%s", st->dir, DB_FILE) < 0) {
		free(q);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	pthread_mutex_init(&q->lock, NULL);
	st->be = q;
	if (sqlite3_open_v2(path, &q->db, flags, NULL) != SQLITE_OK) {
		store_db_error(err, q->db, path);
		goto out;
	}
	sqlite3_busy_timeout(q->db, BUSY_MS);
	sqlite3_extended_result_codes(q->db, 1);
	/* WAL: readers never wait for the writer; FULL: a commit is on the
	 * disk (WAL and its sync) before the caller hears of it */
	if (wal(st, err) < 0 ||
	    store_exec(st, "PRAGMA synchronous = FULL", err) < 0 ||
	    store_exec(st, "PRAGMA foreign_keys = ON", err) < 0 || migrate(st, path, err) < 0)
		goto out;
	chmod(path, 0600);
	rc = 0;
out:
	free(path);
	return rc;
}

/* ---- statement helpers ------------------------------------------------------- */

void store_copy_text(char *dst, size_t len, const unsigned char *src)
{
	snprintf(dst, len, "%s", src ? (const char *)src : "");
}

int store_prepare_key(struct tg_store *st, const char *sql, sqlite3_stmt **s,
		      const struct tg_idem_key *k, struct tg_error *err)
{
	if (sqlite3_prepare_v2(sq_db(st), sql, -1, s, NULL) != SQLITE_OK)
		return store_db_error(err, sq_db(st), "prepare");
	sqlite3_bind_text(*s, 1, k->principal, -1, SQLITE_STATIC);
	sqlite3_bind_text(*s, 2, k->tool, -1, SQLITE_STATIC);
	sqlite3_bind_text(*s, 3, k->key, -1, SQLITE_STATIC);
	return 0;
}

/* The rows of SELECT sql (?1 bound to state_name, NULL: any) as an array
 * of elements of size bytes, each filled by fill (-1: out of memory) and,
 * on failure, released by release (the caller holds lock). */
int store_select_list(struct tg_store *st, const char *sql, const char *state_name, size_t size,
		      int (*fill)(sqlite3_stmt *, void *), void (*release)(void *), void **out,
		      size_t *n, const char *what, struct tg_error *err)
{
	char *list = NULL, *bigger;
	size_t cap = 0;
	sqlite3_stmt *s;
	int rc = 0, step;

	if (sqlite3_prepare_v2(sq_db(st), sql, -1, &s, NULL) != SQLITE_OK)
		return store_db_error(err, sq_db(st), what);
	if (state_name)
		sqlite3_bind_text(s, 1, state_name, -1, SQLITE_STATIC);
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			bigger = realloc(list, cap * size);
			if (!bigger) {
				rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
				break;
			}
			list = bigger;
		}
		if (fill(s, list + *n * size) < 0) {
			release(list + *n * size);
			rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			break;
		}
		(*n)++;
	}
	if (rc == 0 && step != SQLITE_DONE)
		rc = store_db_error(err, sq_db(st), what);
	sqlite3_finalize(s);
	if (rc < 0) {
		while (*n)
			release(list + --*n * size);
		free(list);
		return -1;
	}
	*out = list;
	return 0;
}

/* ---- the table ------------------------------------------------------------------ */

const struct tg_store_ops store_sqlite_ops = {
	.name = "sqlite",
	.open = sq_open,
	.close = sq_close,
	.idem_begin = sq_idem_begin,
	.idem_finish = sq_idem_finish,
	.idem_reclaim = sq_idem_reclaim,
	.idem_takeover = sq_idem_takeover,
	.idem_replace = sq_idem_replace,
	.idem_abandon = sq_idem_abandon,
	.idem_finish_call = sq_idem_finish_call,
	.ticket_insert = sq_ticket_insert,
	.ticket_get = sq_ticket_get,
	.ticket_move = sq_ticket_move,
	.ticket_list = sq_ticket_list,
	.ticket_find = sq_ticket_find,
	.ticket_supersede = sq_ticket_supersede,
	.tickets_of = sq_tickets_of,
	.ticket_counts = sq_ticket_counts,
	.tickets_pending = sq_tickets_pending,
	.tickets_anomalous = sq_tickets_anomalous,
	.ticket_expire = sq_ticket_expire,
	.ticket_events = sq_ticket_events,
	.ticket_pending_stats = sq_ticket_pending_stats,
	.webhook_cursor = sq_webhook_cursor,
	.webhook_cursor_set = sq_webhook_cursor_set,
	.rollback_begin = sq_rollback_begin,
	.rollback_end = sq_rollback_end,
	.rollback_list = sq_rollback_list,
	.saga_begin = sq_saga_begin,
	.saga_take = sq_saga_take,
	.saga_get = sq_saga_get,
	.saga_step = sq_saga_step,
	.saga_set = sq_saga_set,
	.saga_orphans = sq_saga_orphans,
	.revoke = sq_revoke,
	.revoked = sq_revoked,
	.baselines_put = sq_baselines_put,
	.baselines_load = sq_baselines_load,
	.pin_get = sq_pin_get,
	.pin_set = sq_pin_set,
	.pin_delete = sq_pin_delete,
	.pin_list = sq_pin_list,
	.skill_pin_get = sq_skill_pin_get,
	.skill_pin_set = sq_skill_pin_set,
	.gc = sq_gc,
};
