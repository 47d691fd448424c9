/*
 * The store (include/toolgate/store.h, docs/STORE.md): SQLite in WAL
 * mode, one connection behind a mutex, every change one transaction.
 *
 * Migrations: migrations[i] takes the schema from version i to i + 1;
 * each runs in its own transaction with the PRAGMA user_version that
 * records it, so a crash leaves the file at one version or the next,
 * never between.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sodium.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/store_int.h"
#include "toolgate/store.h"
#include "util/file.h"

#define DB_FILE "toolgate.db"
#define APP_ID 0x74676174 /* "tgat": PRAGMA application_id, marks our files */
#define BUSY_MS 5000      /* another process holding the write lock */

static int ticket_move(struct tg_store *st, const char *id, const char *from, const char *to,
		       const char *approver, const char *reason, int64_t now, struct tg_error *err);

/* ---- instances: which openings are alive ---------------------------------------------
 *
 * Each opening holds an exclusive flock on instances/ID.lock for its life;
 * the kernel drops it when the process dies, kill -9 included. A running
 * key whose runner's lock is free was left by a gateway that died
 * mid-call. The file is locked under a temporary name, then renamed into
 * place, so that no one ever sees it unlocked while its opening lives. */

#define INSTANCES "instances"

static int instance_path(const struct tg_store *st, const char *id, const char *suffix,
			 char *path, size_t len)
{
	return (size_t)snprintf(path, len, "%s/" INSTANCES "/%s%s", st->dir, id, suffix) < len
		       ? 0 : -1;
}

/* 1 if the opening id is alive (its lock is held), 0 if not (its file is
 * then removed). */
static int instance_alive(const struct tg_store *st, const char *id)
{
	char path[4096];
	int fd, alive;

	if (strcmp(id, st->instance) == 0)
		return 1;
	if (strspn(id, "0123456789abcdef") != 32 || id[32] ||
	    instance_path(st, id, ".lock", path, sizeof(path)) < 0)
		return 0;
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno != ENOENT; /* cannot tell: say alive, take nothing over */
	/* taken: nobody holds it, the opening is dead; held: alive; any
	 * other failure: cannot tell, so alive (take nothing over) */
	alive = flock(fd, LOCK_EX | LOCK_NB) < 0;
	if (!alive)
		unlink(path);
	close(fd);
	return alive;
}

/* This opening's lock, and the files of dead ones swept. */
static int instance_start(struct tg_store *st, struct tg_error *err)
{
	char dir[4096], tmp[4096], path[4096];
	struct dirent *e;
	DIR *d;

	st->alive_fd = -1;
	if ((size_t)snprintf(dir, sizeof(dir), "%s/" INSTANCES, st->dir) >= sizeof(dir) ||
	    instance_path(st, st->instance, ".tmp", tmp, sizeof(tmp)) < 0 ||
	    instance_path(st, st->instance, ".lock", path, sizeof(path)) < 0)
		return tg_error_set(err, TG_ERR_INVALID, "store: state directory path too long");
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return tg_error_sys(err, errno, "store: %s", dir);
	st->alive_fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (st->alive_fd < 0 || flock(st->alive_fd, LOCK_EX) < 0 || rename(tmp, path) < 0)
		return tg_error_sys(err, errno, "store: %s", tmp);
	d = opendir(dir);
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		char id[33];

		if (n == 32 + 5 && strcmp(e->d_name + 32, ".lock") == 0) {
			snprintf(id, sizeof(id), "%.32s", e->d_name);
			instance_alive(st, id);
		}
	}
	if (d)
		closedir(d);
	return 0;
}

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
};

int store_db_error(struct tg_error *err, sqlite3 *db, const char *what)
{
	return tg_error_set(err, TG_ERR_SYSTEM, "store: %s: %s", what,
			    db ? sqlite3_errmsg(db) : "out of memory");
}

int store_exec(struct tg_store *st, const char *sql, struct tg_error *err)
{
	char *msg = NULL;

	if (sqlite3_exec(st->db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	tg_error_set(err, TG_ERR_SYSTEM, "store: %s", msg ? msg : sqlite3_errmsg(st->db));
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
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

static int pragma_int(struct tg_store *st, const char *sql, int *out)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
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
		if (sqlite3_exec(st->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL) == SQLITE_OK)
			return 0;
		if ((sqlite3_errcode(st->db) & 0xff) != SQLITE_BUSY)
			break;
		sqlite3_sleep(20);
	}
	return store_db_error(err, st->db, "journal_mode = WAL");
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
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		return store_db_error(err, st->db, path);
	}
	sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
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
			sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
			return store_db_error(err, st->db, path);
		}
		if (now > version) {
			store_exec(st, "COMMIT", err);
			version = now - 1;
			continue;
		}
		if (store_exec(st, migrations[version], err) < 0 || store_exec(st, sql, err) < 0 ||
		    (version == 0 && store_exec(st, mark, err) < 0) ||
		    store_exec(st, "COMMIT", err) < 0) {
			sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
			return tg_error_wrap(err, "store %s: migrating to schema %d", path,
					     version + 1);
		}
	}
	st->schema = version;
	return 0;
}

int tg_store_open(const char *dir, struct tg_store **out, struct tg_error *err)
{
	struct tg_store *st;
	unsigned char rnd[16];
	char *path;
	int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;

	tg_error_clear(err);
	*out = NULL;
	if (file_private_dir(dir) < 0)
		return file_private_dir_why(errno)
			       ? tg_error_set(err, TG_ERR_INVALID, "store: state directory %s: %s", dir,
					      file_private_dir_why(errno))
			       : tg_error_sys(err, errno, "store: state directory %s", dir);
	if (sodium_init() < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "store: libsodium cannot start");
	st = calloc(1, sizeof(*st));
	if (!st || asprintf(&path, "%s/%s", dir, DB_FILE) < 0) {
		free(st);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	randombytes_buf(rnd, sizeof(rnd));
	sodium_bin2hex(st->instance, sizeof(st->instance), rnd, sizeof(rnd));
	pthread_mutex_init(&st->lock, NULL);
	st->alive_fd = -1;
	if (!(st->dir = strdup(dir))) {
		tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto fail;
	}
	if (instance_start(st, err) < 0)
		goto fail;
	if (sqlite3_open_v2(path, &st->db, flags, NULL) != SQLITE_OK) {
		store_db_error(err, st->db, path);
		goto fail;
	}
	sqlite3_busy_timeout(st->db, BUSY_MS);
	sqlite3_extended_result_codes(st->db, 1);
	/* WAL: readers never wait for the writer; FULL: a commit is on the
	 * disk (WAL and its sync) before the caller hears of it */
	if (wal(st, err) < 0 ||
	    store_exec(st, "PRAGMA synchronous = FULL", err) < 0 ||
	    store_exec(st, "PRAGMA foreign_keys = ON", err) < 0 || migrate(st, path, err) < 0)
		goto fail;
	chmod(path, 0600);
	free(path);
	*out = st;
	return 0;
fail:
	free(path);
	tg_store_close(st);
	return -1;
}

void tg_store_close(struct tg_store *st)
{
	if (!st)
		return;
	sqlite3_close(st->db);
	pthread_mutex_destroy(&st->lock);
	if (st->alive_fd >= 0) {
		char path[4096];

		if (instance_path(st, st->instance, ".lock", path, sizeof(path)) == 0)
			unlink(path);
		close(st->alive_fd);
	}
	free(st->dir);
	free(st);
}

int tg_store_schema(const struct tg_store *st)
{
	return st->schema;
}

/* ---- idempotency ----------------------------------------------------------- */

static int key_ok(const struct tg_idem_key *k, struct tg_error *err)
{
	size_t n = k->key ? strlen(k->key) : 0, i;

	if (n == 0)
		return tg_error_set(err, TG_ERR_INVALID, "idempotency key: empty");
	if (n > TG_IDEM_MAX_KEY)
		return tg_error_set(err, TG_ERR_INVALID,
				    "idempotency key: %zu bytes, longer than %d", n, TG_IDEM_MAX_KEY);
	for (i = 0; i < n; i++)
		if (k->key[i] < 0x21 || k->key[i] > 0x7e)
			return tg_error_set(err, TG_ERR_INVALID,
					    "idempotency key: byte %zu is not printable ASCII", i);
	if (!k->principal || !k->tool || !k->fingerprint)
		return tg_error_set(err, TG_ERR_INVALID, "idempotency key: no principal, tool "
				    "or fingerprint");
	return 0;
}

static int prepare(struct tg_store *st, const char *sql, sqlite3_stmt **s,
		   const struct tg_idem_key *k, struct tg_error *err)
{
	if (sqlite3_prepare_v2(st->db, sql, -1, s, NULL) != SQLITE_OK)
		return store_db_error(err, st->db, "prepare");
	sqlite3_bind_text(*s, 1, k->principal, -1, SQLITE_STATIC);
	sqlite3_bind_text(*s, 2, k->tool, -1, SQLITE_STATIC);
	sqlite3_bind_text(*s, 3, k->key, -1, SQLITE_STATIC);
	return 0;
}

/* What the key's live record says (the caller holds the write
 * transaction): 0 none, 1 filled in rec, -1 error. */
static int idem_lookup(struct tg_store *st, const struct tg_idem_key *k, int64_t now,
		       struct tg_idem_record *rec, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc, found = 0;

	if (prepare(st, "SELECT fingerprint, state, result, created, expires FROM idempotency "
		    "WHERE principal = ?1 AND tool = ?2 AND key = ?3 AND expires > ?4", &s, k,
		    err) < 0)
		return -1;
	sqlite3_bind_int64(s, 4, now);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW) {
		const char *fp = (const char *)sqlite3_column_text(s, 0);
		const char *state = (const char *)sqlite3_column_text(s, 1);

		found = 1;
		rec->created = sqlite3_column_int64(s, 3);
		rec->expires = sqlite3_column_int64(s, 4);
		if (!fp || strcmp(fp, k->fingerprint) != 0) {
			rec->state = TG_IDEM_MISMATCH;
		} else if (state && strcmp(state, "done") == 0) {
			int n = sqlite3_column_bytes(s, 2);
			const void *b = sqlite3_column_blob(s, 2);

			rec->state = TG_IDEM_DONE;
			rec->result = malloc((size_t)n + 1);
			if (!rec->result) {
				sqlite3_finalize(s);
				return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			}
			if (n)
				memcpy(rec->result, b, (size_t)n);
			rec->result[n] = '\0';
			rec->result_len = (size_t)n;
		} else {
			rec->state = TG_IDEM_RUNNING;
		}
	} else if (rc != SQLITE_DONE) {
		found = store_db_error(err, st->db, "idempotency lookup");
	}
	sqlite3_finalize(s);
	return found;
}

int tg_store_idem_begin(struct tg_store *st, const struct tg_idem_key *k, int64_t now,
			int64_t ttl, struct tg_idem_record *rec, struct tg_error *err)
{
	sqlite3_stmt *s = NULL;
	int rc = -1, found;

	tg_error_clear(err);
	memset(rec, 0, sizeof(*rec));
	if (key_ok(k, err) < 0)
		return -1;
	pthread_mutex_lock(&st->lock);
	/* read and claim in one write transaction: two gateways on one
	 * file cannot both see the key free */
	if (store_exec(st, "BEGIN IMMEDIATE", err) < 0)
		goto out;
	found = idem_lookup(st, k, now, rec, err);
	if (found != 0) {
		rc = found < 0 ? -1 : 0;
		goto end;
	}
	if (prepare(st, "INSERT OR REPLACE INTO idempotency (principal, tool, key, fingerprint, "
		    "state, result, runner, created, expires) VALUES (?1, ?2, ?3, ?4, 'running', "
		    "NULL, ?5, ?6, ?7)", &s, k, err) < 0)
		goto end;
	sqlite3_bind_text(s, 4, k->fingerprint, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 5, st->instance, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 6, now);
	sqlite3_bind_int64(s, 7, now + ttl);
	if (sqlite3_step(s) != SQLITE_DONE) {
		store_db_error(err, st->db, "idempotency claim");
		goto end;
	}
	rec->state = TG_IDEM_NEW;
	rec->created = now;
	rec->expires = now + ttl;
	rc = 0;
end:
	sqlite3_finalize(s);
	if (rc == 0 && store_exec(st, "COMMIT", err) < 0)
		rc = -1;
	if (rc < 0) {
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		tg_idem_record_release(rec);
	}
out:
	pthread_mutex_unlock(&st->lock);
	return rc;
}

/* One statement on the key's row; 0, or -1 and err. */
static int idem_update(struct tg_store *st, const char *sql, const struct tg_idem_key *k,
		       const char *blob, size_t len, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	pthread_mutex_lock(&st->lock);
	rc = prepare(st, sql, &s, k, err);
	if (rc == 0) {
		sqlite3_bind_text(s, 4, k->fingerprint, -1, SQLITE_STATIC);
		if (blob)
			sqlite3_bind_blob(s, 5, blob, (int)len, SQLITE_STATIC);
		if (sqlite3_bind_parameter_count(s) >= 6)
			sqlite3_bind_text(s, 6, st->instance, -1, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, st->db, "idempotency");
		if (rc == 0 && sqlite3_changes(st->db) != 1)
			rc = tg_error_set(err, TG_ERR_INVALID,
					  "idempotency key %.64s: no running call of this tool and "
					  "these arguments holds it", k->key);
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

/* A key, and a result of len bytes to keep under it, both acceptable. */
static int result_ok(const struct tg_idem_key *k, size_t len, struct tg_error *err)
{
	tg_error_clear(err);
	if (key_ok(k, err) < 0)
		return -1;
	if (len > TG_IDEM_MAX_RESULT)
		return tg_error_set(err, TG_ERR_LIMIT, "idempotency: a result of %zu bytes, more "
				    "than %u", len, TG_IDEM_MAX_RESULT);
	return 0;
}

int tg_store_idem_finish(struct tg_store *st, const struct tg_idem_key *k, const char *result,
			 size_t len, struct tg_error *err)
{
	if (result_ok(k, len, err) < 0)
		return -1;
	return idem_update(st, "UPDATE idempotency SET state = 'done', result = ?5 WHERE "
			   "principal = ?1 AND tool = ?2 AND key = ?3 AND fingerprint = ?4 AND "
			   "state = 'running'", k, result ? result : "", result ? len : 0, err);
}

int tg_store_idem_reclaim(struct tg_store *st, const struct tg_idem_key *k, const char *expect,
			  size_t len, struct tg_error *err)
{
	int rc;

	tg_error_clear(err);
	if (key_ok(k, err) < 0)
		return -1;
	rc = idem_update(st, "UPDATE idempotency SET state = 'running', runner = ?6 WHERE "
			 "principal = ?1 AND tool = ?2 AND key = ?3 AND fingerprint = ?4 AND "
			 "state = 'done' AND result = ?5", k, expect, len, err);
	if (rc < 0 && err->code == TG_ERR_INVALID) {
		tg_error_clear(err);
		return 1; /* another retry took it, or it changed */
	}
	return rc;
}

int tg_store_idem_takeover(struct tg_store *st, const struct tg_idem_key *k, char **marker,
			   struct tg_error *err)
{
	sqlite3_stmt *s = NULL;
	char runner[33] = "";
	int rc = 1, step;

	tg_error_clear(err);
	*marker = NULL;
	if (key_ok(k, err) < 0)
		return -1;
	pthread_mutex_lock(&st->lock);
	if (store_exec(st, "BEGIN IMMEDIATE", err) < 0) {
		pthread_mutex_unlock(&st->lock);
		return -1;
	}
	if (prepare(st, "SELECT runner, result FROM idempotency WHERE principal = ?1 AND tool = ?2 "
		    "AND key = ?3 AND fingerprint = ?4 AND state = 'running'", &s, k, err) < 0) {
		rc = -1;
		goto end;
	}
	sqlite3_bind_text(s, 4, k->fingerprint, -1, SQLITE_STATIC);
	step = sqlite3_step(s);
	if (step == SQLITE_ROW) {
		const void *b = sqlite3_column_blob(s, 1);
		int n = sqlite3_column_bytes(s, 1);

		store_copy_text(runner, sizeof(runner), sqlite3_column_text(s, 0));
		if (b && n > 0 && (*marker = malloc((size_t)n + 1))) {
			memcpy(*marker, b, (size_t)n);
			(*marker)[n] = '\0';
		} else if (b && n > 0) {
			rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		}
	} else if (step != SQLITE_DONE) {
		rc = store_db_error(err, st->db, "idempotency");
	}
	sqlite3_finalize(s);
	s = NULL;
	/* the runner is gone: its lock is free (it died holding the key) */
	if (rc == 1 && runner[0] && !instance_alive(st, runner)) {
		if (prepare(st, "UPDATE idempotency SET runner = ?5 WHERE principal = ?1 AND "
			    "tool = ?2 AND key = ?3 AND state = 'running' AND runner = ?4", &s, k,
			    err) < 0) {
			rc = -1;
			goto end;
		}
		sqlite3_bind_text(s, 4, runner, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 5, st->instance, -1, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE && sqlite3_changes(st->db) == 1 ? 0
		     : store_db_error(err, st->db, "idempotency takeover");
	}
end:
	sqlite3_finalize(s);
	if (rc >= 0 && store_exec(st, "COMMIT", err) < 0)
		rc = -1;
	if (rc < 0)
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
	if (rc != 0) {
		free(*marker);
		*marker = NULL;
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int tg_store_idem_finish_call(struct tg_store *st, const struct tg_idem_key *k, const char *result,
			      size_t len, const char *ticket, enum tg_ticket_state to,
			      struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if (result_ok(k, len, err) < 0)
		return -1;
	if (to != TG_TICKET_EXECUTED && to != TG_TICKET_FAILED)
		return tg_error_set(err, TG_ERR_INVALID, "a call ends executed or failed");
	pthread_mutex_lock(&st->lock);
	rc = store_exec(st, "BEGIN IMMEDIATE", err);
	if (rc == 0 && (rc = prepare(st, "UPDATE idempotency SET state = 'done', result = ?5 WHERE "
				     "principal = ?1 AND tool = ?2 AND key = ?3 AND fingerprint = ?4 "
				     "AND state = 'running' AND runner = ?6", &s, k, err)) == 0) {
		sqlite3_bind_text(s, 4, k->fingerprint, -1, SQLITE_STATIC);
		sqlite3_bind_blob(s, 5, result, (int)len, SQLITE_STATIC);
		sqlite3_bind_text(s, 6, st->instance, -1, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, st->db, "idempotency");
		if (rc == 0 && sqlite3_changes(st->db) != 1)
			rc = tg_error_set(err, TG_ERR_INVALID, "idempotency key %.64s: this gateway "
					  "no longer holds it", k->key);
		sqlite3_finalize(s);
	}
	/* the key's answer and the ticket's outcome: one commit, never one
	 * without the other */
	if (rc == 0 && (rc = ticket_move(st, ticket, "approved", tg_ticket_state_name(to), NULL,
					 NULL, 0, err)) > 0)
		rc = tg_error_set(err, TG_ERR_INVALID, "ticket %.40s is no longer approved", ticket);
	rc = store_end_tx(st, rc, err);
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int tg_store_idem_replace(struct tg_store *st, const struct tg_idem_key *k, const char *expect,
			  size_t elen, const char *result, size_t len, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if (result_ok(k, len, err) < 0)
		return -1;
	pthread_mutex_lock(&st->lock);
	rc = prepare(st, "UPDATE idempotency SET result = ?5 WHERE principal = ?1 AND tool = ?2 "
		     "AND key = ?3 AND fingerprint = ?4 AND state = 'done' AND result = ?6", &s, k,
		     err);
	if (rc == 0) {
		sqlite3_bind_text(s, 4, k->fingerprint, -1, SQLITE_STATIC);
		sqlite3_bind_blob(s, 5, result, (int)len, SQLITE_STATIC);
		sqlite3_bind_blob(s, 6, expect, (int)elen, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE ? (sqlite3_changes(st->db) == 1 ? 0 : 1)
						    : store_db_error(err, st->db, "idempotency");
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int tg_store_idem_abandon(struct tg_store *st, const struct tg_idem_key *k, struct tg_error *err)
{
	tg_error_clear(err);
	if (key_ok(k, err) < 0)
		return -1;
	return idem_update(st, "DELETE FROM idempotency WHERE principal = ?1 AND tool = ?2 AND "
			   "key = ?3 AND fingerprint = ?4 AND state = 'running'", k, NULL, 0, err);
}

void tg_idem_record_release(struct tg_idem_record *rec)
{
	free(rec->result);
	rec->result = NULL;
	rec->result_len = 0;
}


/* ---- approval tickets -------------------------------------------------------- */

static const char *const ticket_states[] = { "pending",   "approved", "rejected",
					     "expired",   "cancelled", "executed",
					     "failed",    "compensated" };

const char *tg_ticket_state_name(enum tg_ticket_state s)
{
	return (unsigned)s < sizeof(ticket_states) / sizeof(ticket_states[0]) ? ticket_states[s]
									     : "?";
}

static int state_of(const char *name)
{
	size_t i;

	for (i = 0; name && i < sizeof(ticket_states) / sizeof(ticket_states[0]); i++)
		if (strcmp(name, ticket_states[i]) == 0)
			return (int)i;
	return -1;
}

void tg_ticket_release(struct tg_ticket *t)
{
	free(t->preview);
	free(t->reason);
	free(t->arguments);
	free(t->covers);
	free(t->findings);
	t->preview = t->reason = t->arguments = t->covers = t->findings = NULL;
}

void store_copy_text(char *dst, size_t len, const unsigned char *src)
{
	snprintf(dst, len, "%s", src ? (const char *)src : "");
}

/* Fill t from a row of SELECT TICKET_COLUMNS. */
#define TICKET_COLUMNS "id, principal, tool, args_sha256, preview, state, reason, approver, " \
	"created, decided, expires, arguments, covers, findings"

static int ticket_row(sqlite3_stmt *s, struct tg_ticket *t)
{
	const unsigned char *preview = sqlite3_column_text(s, 4), *reason = sqlite3_column_text(s, 6);
	const unsigned char *args = sqlite3_column_text(s, 11), *covers = sqlite3_column_text(s, 12);
	const unsigned char *findings = sqlite3_column_text(s, 13);

	memset(t, 0, sizeof(*t));
	store_copy_text(t->id, sizeof(t->id), sqlite3_column_text(s, 0));
	store_copy_text(t->principal, sizeof(t->principal), sqlite3_column_text(s, 1));
	store_copy_text(t->tool, sizeof(t->tool), sqlite3_column_text(s, 2));
	store_copy_text(t->args_sha256, sizeof(t->args_sha256), sqlite3_column_text(s, 3));
	t->state = (enum tg_ticket_state)state_of((const char *)sqlite3_column_text(s, 5));
	store_copy_text(t->approver, sizeof(t->approver), sqlite3_column_text(s, 7));
	t->created = sqlite3_column_int64(s, 8);
	t->decided = sqlite3_column_int64(s, 9);
	t->expires = sqlite3_column_int64(s, 10);
	t->preview = preview ? strdup((const char *)preview) : NULL;
	t->reason = reason ? strdup((const char *)reason) : NULL;
	t->arguments = args ? strdup((const char *)args) : NULL;
	t->covers = covers ? strdup((const char *)covers) : NULL;
	t->findings = findings ? strdup((const char *)findings) : NULL;
	return (preview && !t->preview) || (reason && !t->reason) || (args && !t->arguments) ||
	       (covers && !t->covers) || (findings && !t->findings) ? -1 : 0;
}

/* A pending ticket past its expiry is expired, fail closed (the caller
 * holds lock). */
static int expire_tickets(struct tg_store *st, int64_t now, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, "UPDATE tickets SET state = 'expired', decided = ?1 WHERE "
			       "state = 'pending' AND expires <= ?1", -1, &s, NULL) != SQLITE_OK)
		return store_db_error(err, st->db, "tickets");
	sqlite3_bind_int64(s, 1, now);
	rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, st->db, "tickets");
	sqlite3_finalize(s);
	return rc;
}

/* A pending ticket for req; with hold, the key (running, this opening's)
 * then answers {"ticket": ID}: both in one transaction. */
/* 1 if req's principal's queue has no room for req's ticket within
 * bounds (the caller holds the write transaction), 0 if it has, -1. */
static int queue_full(struct tg_store *st, const struct tg_ticket *req, int64_t now,
		      const struct tg_queue_bounds *bounds, struct tg_error *err)
{
	uint64_t n, bytes, add = (req->arguments ? strlen(req->arguments) : 0) +
				 (req->preview ? strlen(req->preview) : 0) +
				 (req->findings ? strlen(req->findings) : 0);

	if (store_queue_load(st, req->principal, now, &n, &bytes, err) < 0)
		return -1;
	return n >= bounds->max_pending || bytes + add > bounds->max_bytes;
}

static int ticket_create(struct tg_store *st, const struct tg_ticket *req, int64_t now,
			 int64_t ttl, const struct tg_idem_key *hold,
			 const struct tg_queue_bounds *bounds, struct tg_ticket *out,
			 struct tg_error *err)
{
	unsigned char rnd[16];
	char marker[64];
	sqlite3_stmt *s;
	int rc;

	tg_error_clear(err);
	if (!req->principal[0] || !req->tool[0] || strlen(req->args_sha256) != 64 || ttl <= 0)
		return tg_error_set(err, TG_ERR_INVALID, "ticket: a principal, a tool, the "
				    "arguments' SHA-256 and a lifetime are required");
	if (req->preview && strlen(req->preview) > TG_IDEM_MAX_RESULT)
		return tg_error_set(err, TG_ERR_LIMIT, "ticket: a preview of more than %u bytes",
				    TG_IDEM_MAX_RESULT);
	if (req->arguments && strlen(req->arguments) > TG_IDEM_MAX_RESULT)
		return tg_error_set(err, TG_ERR_LIMIT, "ticket: arguments of more than %u bytes",
				    TG_IDEM_MAX_RESULT);
	if (req->covers && strlen(req->covers) > 4096)
		return tg_error_set(err, TG_ERR_LIMIT, "ticket: covers more than 4096 bytes of tools");
	if (req->findings && strlen(req->findings) > 16384)
		return tg_error_set(err, TG_ERR_LIMIT, "ticket: findings of more than 16384 bytes");
	*out = *req;
	out->preview = out->reason = out->arguments = out->covers = out->findings = NULL;
	randombytes_buf(rnd, sizeof(rnd));
	sodium_bin2hex(out->id, sizeof(out->id), rnd, sizeof(rnd));
	out->state = TG_TICKET_PENDING;
	out->approver[0] = '\0';
	out->created = now;
	out->decided = 0;
	out->expires = now + ttl;
	pthread_mutex_lock(&st->lock);
	if (hold && store_exec(st, "BEGIN IMMEDIATE", err) < 0) {
		pthread_mutex_unlock(&st->lock);
		return -1;
	}
	/* the principal's queue, looked at where nobody else can add to it */
	rc = hold && bounds ? queue_full(st, req, now, bounds, err) : 0;
	if (rc != 0) {
		sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
		pthread_mutex_unlock(&st->lock);
		return rc;
	}
	rc = sqlite3_prepare_v2(st->db, "INSERT INTO tickets (" TICKET_COLUMNS ") VALUES (?1, ?2, "
				"?3, ?4, ?5, 'pending', NULL, NULL, ?6, NULL, ?7, ?8, ?9, ?10)", -1, &s, NULL) ==
			     SQLITE_OK ? 0 : store_db_error(err, st->db, "ticket");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, out->id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, req->principal, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 3, req->tool, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 4, req->args_sha256, -1, SQLITE_STATIC);
		if (req->preview)
			sqlite3_bind_text(s, 5, req->preview, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 6, now);
		sqlite3_bind_int64(s, 7, now + ttl);
		if (req->arguments)
			sqlite3_bind_text(s, 8, req->arguments, -1, SQLITE_STATIC);
		if (req->covers)
			sqlite3_bind_text(s, 9, req->covers, -1, SQLITE_STATIC);
		if (req->findings)
			sqlite3_bind_text(s, 10, req->findings, -1, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, st->db, "ticket");
		sqlite3_finalize(s);
	}
	if (hold) {
		snprintf(marker, sizeof(marker), "{\"ticket\":\"%s\"}", out->id);
		if (rc == 0 && (rc = prepare(st, "UPDATE idempotency SET state = 'done', result = ?5 "
					     "WHERE principal = ?1 AND tool = ?2 AND key = ?3 AND "
					     "fingerprint = ?4 AND state = 'running' AND runner = ?6",
					     &s, hold, err)) == 0) {
			sqlite3_bind_text(s, 4, hold->fingerprint, -1, SQLITE_STATIC);
			sqlite3_bind_blob(s, 5, marker, (int)strlen(marker), SQLITE_STATIC);
			sqlite3_bind_text(s, 6, st->instance, -1, SQLITE_STATIC);
			rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, st->db, "idempotency");
			if (rc == 0 && sqlite3_changes(st->db) != 1)
				rc = tg_error_set(err, TG_ERR_INVALID, "idempotency key %.64s: this "
						  "gateway no longer holds it", hold->key);
			sqlite3_finalize(s);
		}
		rc = store_end_tx(st, rc, err);
	}
	pthread_mutex_unlock(&st->lock);
	if (rc == 0 && ((req->preview && !(out->preview = strdup(req->preview))) ||
			(req->arguments && !(out->arguments = strdup(req->arguments))) ||
			(req->covers && !(out->covers = strdup(req->covers))) ||
			(req->findings && !(out->findings = strdup(req->findings))))) {
		tg_ticket_release(out);
		rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	return rc;
}

int tg_store_ticket_create(struct tg_store *st, const struct tg_ticket *req, int64_t now,
			   int64_t ttl, struct tg_ticket *out, struct tg_error *err)
{
	return ticket_create(st, req, now, ttl, NULL, NULL, out, err);
}

int tg_store_idem_hold(struct tg_store *st, const struct tg_idem_key *key,
		       const struct tg_ticket *req, int64_t now, int64_t ttl,
		       const struct tg_queue_bounds *bounds, struct tg_ticket *out,
		       struct tg_error *err)
{
	tg_error_clear(err);
	if (key_ok(key, err) < 0)
		return -1;
	return ticket_create(st, req, now, ttl, key, bounds, out, err);
}

/* Ticket id as stored, into t (the caller holds lock). */
static int ticket_read(struct tg_store *st, const char *id, struct tg_ticket *t,
		       struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	memset(t, 0, sizeof(*t));
	if (sqlite3_prepare_v2(st->db, "SELECT " TICKET_COLUMNS " FROM tickets WHERE id = ?1", -1,
			       &s, NULL) != SQLITE_OK)
		return store_db_error(err, st->db, "ticket");
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	switch (sqlite3_step(s)) {
	case SQLITE_ROW:
		rc = ticket_row(s, t) < 0 ? tg_error_set(err, TG_ERR_NOMEM, "out of memory") : 0;
		break;
	case SQLITE_DONE:
		rc = tg_error_set(err, TG_ERR_INVALID, "ticket %s: no such ticket", id);
		break;
	default:
		rc = store_db_error(err, st->db, "ticket");
	}
	sqlite3_finalize(s);
	if (rc < 0)
		tg_ticket_release(t);
	return rc;
}

int tg_store_ticket_get(struct tg_store *st, const char *id, int64_t now, struct tg_ticket *t,
			struct tg_error *err)
{
	int rc;

	tg_error_clear(err);
	memset(t, 0, sizeof(*t));
	if (!id || strlen(id) != 32 || strspn(id, "0123456789abcdef") != 32)
		return tg_error_set(err, TG_ERR_INVALID, "ticket %.40s: not a ticket id (32 hex "
				    "digits)", id ? id : "");
	pthread_mutex_lock(&st->lock);
	rc = ticket_read(st, id, t, err);
	/* read, and written only when it expires now: an approval wait
	 * looks at its ticket every 100 ms, and must not take the write lock
	 * each time */
	if (rc == 0 && t->state == TG_TICKET_PENDING && t->expires <= now) {
		rc = ticket_move(st, id, "pending", "expired", NULL, NULL, now, err);
		tg_ticket_release(t);
		if (rc >= 0)
			rc = ticket_read(st, id, t, err); /* expired, or decided meanwhile */
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

/* Move ticket id from state from to state to (the caller holds lock). */
static int ticket_move(struct tg_store *st, const char *id, const char *from, const char *to,
		       const char *approver, const char *reason, int64_t now, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(st->db, "UPDATE tickets SET state = ?2, approver = coalesce(?3, "
			       "approver), reason = coalesce(?4, reason), decided = coalesce(?5, "
			       "decided) WHERE id = ?1 AND state = ?6", -1, &s, NULL) != SQLITE_OK)
		return store_db_error(err, st->db, "ticket");
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, to, -1, SQLITE_STATIC);
	if (approver)
		sqlite3_bind_text(s, 3, approver, -1, SQLITE_STATIC);
	if (reason)
		sqlite3_bind_text(s, 4, reason, -1, SQLITE_STATIC);
	if (now)
		sqlite3_bind_int64(s, 5, now);
	sqlite3_bind_text(s, 6, from, -1, SQLITE_STATIC);
	rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, st->db, "ticket");
	if (rc == 0 && sqlite3_changes(st->db) != 1)
		rc = 1; /* not in state from */
	sqlite3_finalize(s);
	return rc;
}

int tg_store_ticket_decide(struct tg_store *st, const char *id, const char *approver, int approve,
			   const char *reason, int64_t now, struct tg_error *err)
{
	struct tg_ticket t;
	int rc;

	if (tg_store_ticket_get(st, id, now, &t, err) < 0)
		return -1;
	tg_ticket_release(&t);
	if (!approver || !*approver)
		return tg_error_set(err, TG_ERR_INVALID, "ticket %s: no approver", id);
	if (strcmp(approver, t.principal) == 0)
		return tg_error_set(err, TG_ERR_INVALID, "ticket %s: %s asked for this call and "
				    "cannot approve it (another identity must)", id, approver);
	if (!approve && (!reason || !*reason || strlen(reason) > 1000))
		return tg_error_set(err, TG_ERR_INVALID, "ticket %s: a rejection needs a reason (1 "
				    "to 1000 bytes)", id);
	if (t.state != TG_TICKET_PENDING)
		return tg_error_set(err, TG_ERR_INVALID, "ticket %s is %s, not pending", id,
				    tg_ticket_state_name(t.state));
	pthread_mutex_lock(&st->lock);
	rc = ticket_move(st, id, "pending", approve ? "approved" : "rejected", approver,
			 approve ? NULL : reason, now, err);
	pthread_mutex_unlock(&st->lock);
	if (rc > 0)
		return tg_error_set(err, TG_ERR_INVALID, "ticket %s: decided meanwhile", id);
	return rc;
}

int tg_store_ticket_move(struct tg_store *st, const char *id, enum tg_ticket_state from,
			 enum tg_ticket_state to, struct tg_error *err)
{
	/* the moves after a decision: approved -> executed | failed,
	 * executed -> compensated, pending -> cancelled */
	static const int allowed[][2] = {
		{ TG_TICKET_APPROVED, TG_TICKET_EXECUTED }, { TG_TICKET_APPROVED, TG_TICKET_FAILED },
		{ TG_TICKET_EXECUTED, TG_TICKET_COMPENSATED }, { TG_TICKET_PENDING, TG_TICKET_CANCELLED },
	};
	size_t i;
	int rc;

	tg_error_clear(err);
	for (i = 0; i < sizeof(allowed) / sizeof(allowed[0]); i++)
		if (allowed[i][0] == (int)from && allowed[i][1] == (int)to)
			break;
	if (i == sizeof(allowed) / sizeof(allowed[0]))
		return tg_error_set(err, TG_ERR_INVALID, "ticket %.40s: %s to %s is not a move a "
				    "ticket makes", id, tg_ticket_state_name(from),
				    tg_ticket_state_name(to));
	pthread_mutex_lock(&st->lock);
	rc = ticket_move(st, id, tg_ticket_state_name(from), tg_ticket_state_name(to), NULL, NULL, 0,
			 err);
	pthread_mutex_unlock(&st->lock);
	if (rc > 0)
		return tg_error_set(err, TG_ERR_INVALID, "ticket %.40s is not %s", id,
				    tg_ticket_state_name(from));
	return rc;
}

/* The rows of SELECT sql (?1 bound to state_name, NULL: any) as an array
 * of elements of size bytes, each filled by fill (-1: out of memory) and,
 * on failure, released by release (the caller holds lock). */
static int select_list(struct tg_store *st, const char *sql, const char *state_name, size_t size,
		       int (*fill)(sqlite3_stmt *, void *), void (*release)(void *), void **out,
		       size_t *n, const char *what, struct tg_error *err)
{
	char *list = NULL, *bigger;
	size_t cap = 0;
	sqlite3_stmt *s;
	int rc = 0, step;

	if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
		return store_db_error(err, st->db, what);
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
		rc = store_db_error(err, st->db, what);
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

static int fill_ticket(sqlite3_stmt *s, void *t)
{
	return ticket_row(s, t);
}

static void release_ticket(void *t)
{
	tg_ticket_release(t);
}

int tg_store_ticket_list(struct tg_store *st, int state, int64_t now, struct tg_ticket **out,
			 size_t *n, struct tg_error *err)
{
	void *list = NULL;
	int rc;

	tg_error_clear(err);
	*out = NULL;
	*n = 0;
	pthread_mutex_lock(&st->lock);
	rc = expire_tickets(st, now, err);
	if (rc == 0)
		rc = select_list(st, "SELECT " TICKET_COLUMNS " FROM tickets WHERE ?1 IS NULL OR "
				 "state = ?1 ORDER BY created, id LIMIT 10000",
				 state >= 0 ? tg_ticket_state_name((enum tg_ticket_state)state) : NULL,
				 sizeof(**out), fill_ticket, release_ticket, &list, n, "tickets", err);
	pthread_mutex_unlock(&st->lock);
	*out = list;
	return rc;
}

int tg_store_ticket_counts(struct tg_store *st, int64_t now, uint64_t counts[8],
			   struct tg_error *err)
{
	sqlite3_stmt *s = NULL;
	int rc, i;

	tg_error_clear(err);
	memset(counts, 0, 8 * sizeof(counts[0]));
	pthread_mutex_lock(&st->lock);
	rc = expire_tickets(st, now, err);
	if (rc == 0 && sqlite3_prepare_v2(st->db, "SELECT state, count(*) FROM tickets GROUP BY "
					  "state", -1, &s, NULL) != SQLITE_OK)
		rc = store_db_error(err, st->db, "tickets");
	while (rc == 0 && (rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *state = (const char *)sqlite3_column_text(s, 0);

		for (i = 0; state && i < 8; i++)
			if (strcmp(state, ticket_states[i]) == 0)
				counts[i] = (uint64_t)sqlite3_column_int64(s, 1);
		rc = 0;
	}
	if (rc == SQLITE_DONE)
		rc = 0;
	else if (rc > 0)
		rc = store_db_error(err, st->db, "tickets");
	sqlite3_finalize(s);
	pthread_mutex_unlock(&st->lock);
	return rc;
}

/* ---- rollbacks -------------------------------------------------------------- */

static const char *const rollback_states[] = { "running", "succeeded", "failed" };

const char *tg_rollback_state_name(enum tg_rollback_state state)
{
	return (unsigned)state < 3 ? rollback_states[state] : "unknown";
}

void tg_rollback_release(struct tg_rollback *r)
{
	free(r->detail);
	r->detail = NULL;
}

int tg_store_rollback_begin(struct tg_store *st, const char *call_id, const char *who,
			    int64_t now, struct tg_error *err)
{
	struct tg_ticket t;
	sqlite3_stmt *s;
	int rc;

	if (tg_store_ticket_get(st, call_id, now, &t, err) < 0)
		return -1;
	tg_ticket_release(&t);
	if (t.state == TG_TICKET_COMPENSATED)
		return 1;
	if (t.state != TG_TICKET_EXECUTED)
		return tg_error_set(err, TG_ERR_INVALID, "call %s is %s: only an executed call can "
				    "be rolled back", call_id, tg_ticket_state_name(t.state));
	if (!who || !*who || strlen(who) >= sizeof(((struct tg_rollback *)0)->requested_by))
		return tg_error_set(err, TG_ERR_INVALID, "rollback %s: who asks is required", call_id);
	pthread_mutex_lock(&st->lock);
	rc = store_exec(st, "BEGIN IMMEDIATE", err);
	/* one runner at a time: a rollback running in a live process (this
	 * one included) is not started again; a dead one's is resumed */
	if (rc == 0 && sqlite3_prepare_v2(st->db, "SELECT runner FROM rollbacks WHERE call_id = ?1 "
					  "AND state = 'running'", -1, &s, NULL) != SQLITE_OK)
		rc = store_db_error(err, st->db, "rollback");
	if (rc == 0) {
		char runner[33] = "";

		sqlite3_bind_text(s, 1, call_id, -1, SQLITE_STATIC);
		if (sqlite3_step(s) == SQLITE_ROW) {
			store_copy_text(runner, sizeof(runner), sqlite3_column_text(s, 0));
			if (runner[0] && (strcmp(runner, st->instance) == 0 ||
					  instance_alive(st, runner)))
				rc = tg_error_set(err, TG_ERR_INVALID, "call %s is being rolled back "
						  "by another process: wait for it", call_id);
		}
		sqlite3_finalize(s);
	}
	if (rc == 0 &&
	    sqlite3_prepare_v2(st->db, "INSERT INTO rollbacks (call_id, state, requested_by, "
			       "attempts, detail, started, ended, runner) VALUES (?1, 'running', ?2, "
			       "1, NULL, ?3, NULL, ?4) ON CONFLICT (call_id) DO UPDATE SET state = "
			       "'running', requested_by = ?2, attempts = attempts + 1, started = ?3, "
			       "ended = NULL, runner = ?4", -1, &s, NULL) != SQLITE_OK)
		rc = store_db_error(err, st->db, "rollback");
	else if (rc == 0) {
		sqlite3_bind_text(s, 1, call_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, who, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, now);
		sqlite3_bind_text(s, 4, st->instance, -1, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, st->db, "rollback");
		sqlite3_finalize(s);
	}
	rc = store_end_tx(st, rc, err);
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int tg_store_rollback_end(struct tg_store *st, const char *call_id, int ok, const char *detail,
			  int64_t now, struct tg_error *err)
{
	sqlite3_stmt *s;
	size_t len = detail ? strlen(detail) : 0;
	int rc;

	tg_error_clear(err);
	if (len > TG_ROLLBACK_MAX_DETAIL)
		len = TG_ROLLBACK_MAX_DETAIL;
	pthread_mutex_lock(&st->lock);
	rc = store_exec(st, "BEGIN IMMEDIATE", err);
	if (rc == 0)
		rc = sqlite3_prepare_v2(st->db, "UPDATE rollbacks SET state = ?2, detail = ?3, "
					"ended = ?4 WHERE call_id = ?1 AND state = 'running' AND "
					"runner = ?5", -1, &s,
					NULL) == SQLITE_OK ? 0 : store_db_error(err, st->db, "rollback");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, call_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, ok ? "succeeded" : "failed", -1, SQLITE_STATIC);
		if (detail)
			sqlite3_bind_text(s, 3, detail, (int)len, SQLITE_STATIC);
		sqlite3_bind_int64(s, 4, now);
		sqlite3_bind_text(s, 5, st->instance, -1, SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, st->db, "rollback");
		if (rc == 0 && sqlite3_changes(st->db) != 1)
			rc = tg_error_set(err, TG_ERR_INVALID, "rollback %.40s: not running here",
					  call_id);
		sqlite3_finalize(s);
	}
	if (rc == 0 && ok && (rc = ticket_move(st, call_id, "executed", "compensated", NULL, NULL, 0,
					      err)) > 0)
		rc = tg_error_set(err, TG_ERR_INVALID, "call %.40s is no longer executed", call_id);
	rc = store_end_tx(st, rc, err);
	pthread_mutex_unlock(&st->lock);
	return rc;
}

static int fill_rollback(sqlite3_stmt *s, void *p)
{
	const unsigned char *detail = sqlite3_column_text(s, 4);
	const char *name = (const char *)sqlite3_column_text(s, 1);
	struct tg_rollback *r = p;

	memset(r, 0, sizeof(*r));
	store_copy_text(r->call_id, sizeof(r->call_id), sqlite3_column_text(s, 0));
	r->state = name && strcmp(name, "succeeded") == 0 ? TG_ROLLBACK_SUCCEEDED
		 : name && strcmp(name, "failed") == 0 ? TG_ROLLBACK_FAILED
		 : TG_ROLLBACK_RUNNING;
	store_copy_text(r->requested_by, sizeof(r->requested_by), sqlite3_column_text(s, 2));
	r->attempts = sqlite3_column_int(s, 3);
	r->started = sqlite3_column_int64(s, 5);
	r->ended = sqlite3_column_int64(s, 6);
	return detail && !(r->detail = strdup((const char *)detail)) ? -1 : 0;
}

static void release_rollback(void *r)
{
	tg_rollback_release(r);
}

int tg_store_rollback_list(struct tg_store *st, int state, struct tg_rollback **out, size_t *n,
			   struct tg_error *err)
{
	void *list = NULL;
	int rc;

	tg_error_clear(err);
	*out = NULL;
	*n = 0;
	pthread_mutex_lock(&st->lock);
	rc = select_list(st, "SELECT call_id, state, requested_by, attempts, detail, started, "
			 "ended FROM rollbacks WHERE ?1 IS NULL OR state = ?1 ORDER BY started, "
			 "call_id LIMIT 10000",
			 state >= 0 ? tg_rollback_state_name((enum tg_rollback_state)state) : NULL,
			 sizeof(**out), fill_rollback, release_rollback, &list, n, "rollbacks", err);
	pthread_mutex_unlock(&st->lock);
	*out = list;
	return rc;
}

/* ---- sagas -------------------------------------------------------------------- */

static const char *const saga_states[] = { "running", "done", "compensating", "compensated",
					   "failed" };
static const char *const step_states[] = { "pending", "running", "done", "failed",
					   "compensated", "compensation_failed" };

const char *tg_saga_state_name(enum tg_saga_state state)
{
	return (unsigned)state < 5 ? saga_states[state] : "unknown";
}

const char *tg_saga_step_state_name(enum tg_saga_step_state state)
{
	return (unsigned)state < 6 ? step_states[state] : "unknown";
}

static int state_index(const char *const *names, size_t n, const char *name)
{
	size_t i;

	for (i = 0; name && i < n; i++)
		if (strcmp(names[i], name) == 0)
			return (int)i;
	return 0;
}

void tg_saga_release(struct tg_saga *saga)
{
	size_t i;

	for (i = 0; saga->steps && i < saga->n; i++) {
		free(saga->steps[i].arguments);
		free(saga->steps[i].result);
	}
	free(saga->steps);
	saga->steps = NULL;
	saga->n = 0;
}

/* Whether this opening may run saga id: 0 (absent, or its runner is
 * this opening or dead), 1 (a live one runs it); the caller holds lock,
 * in a write transaction. */
static int saga_claim(struct tg_store *st, const char *id, struct tg_error *err)
{
	char runner[33] = "";
	sqlite3_stmt *s;
	int rc = 0;

	if (sqlite3_prepare_v2(st->db, "SELECT runner FROM sagas WHERE id = ?1", -1, &s, NULL) !=
	    SQLITE_OK)
		return store_db_error(err, st->db, "saga");
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW) {
		store_copy_text(runner, sizeof(runner), sqlite3_column_text(s, 0));
		rc = strcmp(runner, st->instance) != 0 && instance_alive(st, runner);
	}
	sqlite3_finalize(s);
	return rc;
}

int tg_store_saga_take(struct tg_store *st, const char *id, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	tg_error_clear(err);
	pthread_mutex_lock(&st->lock);
	rc = store_exec(st, "BEGIN IMMEDIATE", err);
	if (rc == 0)
		rc = saga_claim(st, id, err);
	if (rc == 0) {
		rc = sqlite3_prepare_v2(st->db, "UPDATE sagas SET runner = ?2 WHERE id = ?1", -1, &s,
					NULL) == SQLITE_OK ? 0 : store_db_error(err, st->db, "saga");
		if (rc == 0) {
			sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
			sqlite3_bind_text(s, 2, st->instance, -1, SQLITE_STATIC);
			rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, st->db, "saga");
			sqlite3_finalize(s);
		}
	}
	if (rc == 1) {
		store_exec(st, "COMMIT", err);
	} else {
		rc = store_end_tx(st, rc, err);
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int tg_store_saga_begin(struct tg_store *st, const char *id, const struct tg_saga_step *steps,
			size_t n, int64_t now, struct tg_error *err)
{
	sqlite3_stmt *s = NULL;
	size_t i;
	int rc;

	tg_error_clear(err);
	if (!id || strlen(id) != 32 || n == 0 || n > TG_SAGA_MAX_STEPS)
		return tg_error_set(err, TG_ERR_INVALID, "saga: an id and 1 to %d steps",
				    TG_SAGA_MAX_STEPS);
	pthread_mutex_lock(&st->lock);
	rc = store_exec(st, "BEGIN IMMEDIATE", err);
	if (rc == 0)
		rc = saga_claim(st, id, err);
	if (rc == 0 && sqlite3_prepare_v2(st->db, "INSERT INTO sagas (id, state, runner, created, "
					  "updated) VALUES (?1, 'running', ?2, ?3, ?3) ON CONFLICT "
					  "(id) DO UPDATE SET runner = ?2", -1, &s, NULL) != SQLITE_OK)
		rc = store_db_error(err, st->db, "saga");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, st->instance, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, now);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, st->db, "saga");
		sqlite3_finalize(s);
		s = NULL;
	}
	if (rc == 0 && sqlite3_prepare_v2(st->db, "INSERT OR IGNORE INTO saga_steps (saga_id, n, "
					  "tool, call_id, state, arguments) VALUES (?1, ?2, ?3, ?4, "
					  "'pending', ?5)", -1, &s, NULL) != SQLITE_OK)
		rc = store_db_error(err, st->db, "saga");
	for (i = 0; rc == 0 && i < n; i++) {
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, (sqlite3_int64)i);
		sqlite3_bind_text(s, 3, steps[i].tool, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 4, steps[i].call_id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 5, steps[i].arguments ? steps[i].arguments : "{}", -1,
				  SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE ? 0 : store_db_error(err, st->db, "saga");
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
	rc = store_end_tx(st, rc, err);
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int tg_store_saga_get(struct tg_store *st, const char *id, struct tg_saga *saga,
		      struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc = 1, step;

	tg_error_clear(err);
	memset(saga, 0, sizeof(*saga));
	pthread_mutex_lock(&st->lock);
	if (sqlite3_prepare_v2(st->db, "SELECT state FROM sagas WHERE id = ?1", -1, &s, NULL) !=
	    SQLITE_OK) {
		rc = store_db_error(err, st->db, "saga");
		goto out;
	}
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	step = sqlite3_step(s);
	if (step == SQLITE_ROW) {
		store_copy_text(saga->id, sizeof(saga->id), (const unsigned char *)id);
		saga->state = (enum tg_saga_state)state_index(saga_states, 5,
							      (const char *)sqlite3_column_text(s, 0));
		rc = 0;
	} else if (step != SQLITE_DONE) {
		rc = store_db_error(err, st->db, "saga");
	}
	sqlite3_finalize(s);
	if (rc != 0)
		goto out;
	saga->steps = calloc(TG_SAGA_MAX_STEPS, sizeof(*saga->steps));
	if (!saga->steps || sqlite3_prepare_v2(st->db, "SELECT n, tool, call_id, state, "
					       "arguments, result FROM saga_steps WHERE saga_id = "
					       "?1 ORDER BY n", -1, &s, NULL) != SQLITE_OK) {
		rc = saga->steps ? store_db_error(err, st->db, "saga")
				 : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		goto out;
	}
	sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
	while ((step = sqlite3_step(s)) == SQLITE_ROW && saga->n < TG_SAGA_MAX_STEPS) {
		struct tg_saga_step *p = &saga->steps[saga->n++];
		const unsigned char *a = sqlite3_column_text(s, 4), *r = sqlite3_column_text(s, 5);

		store_copy_text(p->tool, sizeof(p->tool), sqlite3_column_text(s, 1));
		store_copy_text(p->call_id, sizeof(p->call_id), sqlite3_column_text(s, 2));
		p->state = (enum tg_saga_step_state)state_index(step_states, 6, (const char *)
								sqlite3_column_text(s, 3));
		p->arguments = a ? strdup((const char *)a) : NULL;
		p->result = r ? strdup((const char *)r) : NULL;
		if ((a && !p->arguments) || (r && !p->result)) {
			rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			break;
		}
	}
	if (rc == 0 && step != SQLITE_DONE && step != SQLITE_ROW)
		rc = store_db_error(err, st->db, "saga");
	sqlite3_finalize(s);
out:
	pthread_mutex_unlock(&st->lock);
	if (rc < 0)
		tg_saga_release(saga);
	return rc;
}

int tg_store_saga_step(struct tg_store *st, const char *id, size_t step,
		       enum tg_saga_step_state state, const char *result, struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	tg_error_clear(err);
	if (result && strlen(result) > TG_IDEM_MAX_RESULT)
		return tg_error_set(err, TG_ERR_LIMIT, "saga: a step's result over %u bytes",
				    TG_IDEM_MAX_RESULT);
	pthread_mutex_lock(&st->lock);
	rc = sqlite3_prepare_v2(st->db, "UPDATE saga_steps SET state = ?3, result = coalesce(?4, "
				"result) WHERE saga_id = ?1 AND n = ?2", -1, &s, NULL) == SQLITE_OK
		     ? 0 : store_db_error(err, st->db, "saga");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 2, (sqlite3_int64)step);
		sqlite3_bind_text(s, 3, tg_saga_step_state_name(state), -1, SQLITE_STATIC);
		if (result)
			sqlite3_bind_blob(s, 4, result, (int)strlen(result), SQLITE_STATIC);
		rc = sqlite3_step(s) == SQLITE_DONE && sqlite3_changes(st->db) == 1
			     ? 0 : store_db_error(err, st->db, "saga step");
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int tg_store_saga_set(struct tg_store *st, const char *id, enum tg_saga_state state, int64_t now,
		      struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	tg_error_clear(err);
	pthread_mutex_lock(&st->lock);
	rc = sqlite3_prepare_v2(st->db, "UPDATE sagas SET state = ?2, updated = ?3 WHERE id = ?1",
				-1, &s, NULL) == SQLITE_OK ? 0 : store_db_error(err, st->db, "saga");
	if (rc == 0) {
		sqlite3_bind_text(s, 1, id, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, tg_saga_state_name(state), -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 3, now);
		rc = sqlite3_step(s) == SQLITE_DONE && sqlite3_changes(st->db) == 1
			     ? 0 : store_db_error(err, st->db, "saga");
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(&st->lock);
	return rc;
}

int tg_store_saga_orphans(struct tg_store *st, char (**ids)[33], size_t *n, struct tg_error *err)
{
	char (*list)[33] = NULL, (*bigger)[33], runner[33];
	sqlite3_stmt *s = NULL, *claim = NULL;
	size_t cap = 0;
	int rc, step;

	tg_error_clear(err);
	*ids = NULL;
	*n = 0;
	pthread_mutex_lock(&st->lock);
	rc = store_exec(st, "BEGIN IMMEDIATE", err);
	if (rc == 0 && (sqlite3_prepare_v2(st->db, "SELECT id, runner FROM sagas WHERE state IN "
					   "('running', 'compensating') LIMIT 10000", -1, &s,
					   NULL) != SQLITE_OK ||
			sqlite3_prepare_v2(st->db, "UPDATE sagas SET runner = ?2 WHERE id = ?1", -1,
					   &claim, NULL) != SQLITE_OK))
		rc = store_db_error(err, st->db, "sagas");
	while (rc == 0 && (step = sqlite3_step(s)) == SQLITE_ROW) {
		store_copy_text(runner, sizeof(runner), sqlite3_column_text(s, 1));
		if (instance_alive(st, runner))
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			bigger = realloc(list, cap * sizeof(*list));
			if (!bigger) {
				rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
				break;
			}
			list = bigger;
		}
		store_copy_text(list[*n], sizeof(list[*n]), sqlite3_column_text(s, 0));
		sqlite3_bind_text(claim, 1, list[*n], -1, SQLITE_STATIC);
		sqlite3_bind_text(claim, 2, st->instance, -1, SQLITE_STATIC);
		if (sqlite3_step(claim) != SQLITE_DONE)
			rc = store_db_error(err, st->db, "sagas");
		sqlite3_reset(claim);
		(*n)++;
	}
	sqlite3_finalize(s);
	sqlite3_finalize(claim);
	rc = store_end_tx(st, rc, err);
	pthread_mutex_unlock(&st->lock);
	if (rc < 0) {
		free(list);
		*n = 0;
		return -1;
	}
	*ids = list;
	return 0;
}
