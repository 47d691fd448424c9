/* Unit tests: src/store/, the durable state (docs/STORE.md): the public
 * calls over the SQLite backend and, the same tests again, over the
 * PostgreSQL one ("store-pg/..."; tests/pg/pg.sh starts a cluster of the
 * tests' own and says where in TG_TEST_PG, each test in a schema of its
 * own), and the front over a stand-in backend. */
#include <libpq-fe.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "store/store_int.h"
#include "toolgate/store.h"
#include "unit.h"

static char dir[64];
static char where[512]; /* what tg_store_open is given: dir, or a URL */
static int on_pg;       /* the test runs on PostgreSQL */
static char schema[64];

/* sql run on TG_TEST_PG's database as another program would: 0 or -1. */
static int pg_sql(const char *sql)
{
	PGconn *c = PQconnectdb(getenv("TG_TEST_PG"));
	PGresult *r;
	int rc;

	PQclear(PQexec(c, "SET client_min_messages = warning"));
	r = PQstatus(c) == CONNECTION_OK ? PQexec(c, sql) : NULL;
	rc = r && (PQresultStatus(r) == PGRES_COMMAND_OK ||
		       PQresultStatus(r) == PGRES_TUPLES_OK) ? 0 : -1;

	if (rc < 0 && !strstr(sql, "toolgate_meta"))
		fprintf(stderr, "pg_sql %s: %s", sql, PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
	return rc;
}

/* A store of the test's own: a fresh directory, or a fresh schema in
 * TG_TEST_PG's database with where the URL that puts the tables in it. */
static int fresh_dir(void)
{
	static int made;
	const char *base = getenv("TG_TEST_PG");
	char sql[128];

	if (!on_pg) {
		if (unit_tmpdir(dir, "store") < 0)
			return -1;
		snprintf(where, sizeof(where), "%s", dir);
		return 0;
	}
	snprintf(schema, sizeof(schema), "t%d_%d", (int)getpid(), made++);
	snprintf(sql, sizeof(sql), "CREATE SCHEMA %s", schema);
	snprintf(where, sizeof(where), "%s%soptions=-csearch_path%%3D%s", base,
		 strchr(base, '?') ? "&" : "?", schema);
	return pg_sql(sql);
}

static void remove_dir(void)
{
	char sql[128];

	if (!on_pg) {
		unit_rmtree(dir);
		return;
	}
	snprintf(sql, sizeof(sql), "DROP SCHEMA %s CASCADE", schema);
	pg_sql(sql);
}

/* A dead opening's session may outlive its process for a moment (the
 * server reads the socket's end): its key is taken over once the server
 * let go of its lock. 0 taken, as tg_store_idem_takeover. */
static int takeover_when_free(struct tg_store *st, const struct tg_idem_key *k, char **marker,
			      struct tg_error *err)
{
	int rc, i;

	for (i = 0; i < 100; i++) {
		rc = tg_store_idem_takeover(st, k, marker, err);
		if (rc != 1)
			return rc;
		usleep(20000);
	}
	return rc;
}

/* Run sql on the database file directly, as another program would. */
static int raw_sql(const char *sql)
{
	char path[128];
	sqlite3 *db;
	int rc;

	snprintf(path, sizeof(path), "%s/toolgate.db", dir);
	if (sqlite3_open(path, &db) != SQLITE_OK)
		return -1;
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc == SQLITE_OK ? 0 : -1;
}

static int opens_and_migrates(void)
{
	struct tg_store *st;
	struct tg_error err;

	CHECK(fresh_dir() == 0);
	strcat(dir, "/state"); /* made by open */
	CHECK(tg_store_open(dir, &st, &err) == 0);
	CHECK(tg_store_schema(st) == TG_STORE_SCHEMA);
	tg_store_close(st);
	CHECK(tg_store_open(dir, &st, &err) == 0); /* again: nothing to migrate */
	CHECK(tg_store_schema(st) == TG_STORE_SCHEMA);
	tg_store_close(st);
	/* a newer toolgate's file is never touched */
	CHECK(raw_sql("PRAGMA user_version = 99") == 0);
	CHECK(tg_store_open(dir, &st, &err) < 0 && strstr(err.msg, "newer toolgate"));
	dir[strlen(dir) - strlen("/state")] = '\0';
	remove_dir();
	/* someone else's database in the state directory: refused */
	CHECK(fresh_dir() == 0);
	CHECK(raw_sql("CREATE TABLE theirs (x)") == 0);
	CHECK(tg_store_open(dir, &st, &err) < 0 && strstr(err.msg, "not a toolgate database"));
	remove_dir();
	CHECK(tg_store_open("/proc/no/such/dir", &st, &err) < 0 && err.code == TG_ERR_SYSTEM);
	return 0;
}

static struct tg_idem_key key_of(const char *principal, const char *tool, const char *key,
				 const char *fp)
{
	struct tg_idem_key k = { principal, tool, key, fp };

	return k;
}

static int begin_is(struct tg_store *st, struct tg_idem_key k, int64_t now, int want)
{
	struct tg_idem_record rec;
	struct tg_error err;
	int state;

	if (tg_store_idem_begin(st, &k, now, 100, &rec, &err) < 0) {
		fprintf(stderr, "begin: %s\n", err.msg);
		return 0;
	}
	state = rec.state;
	tg_idem_record_release(&rec);
	if (state != want)
		fprintf(stderr, "key %s: state %d, want %d\n", k.key, state, want);
	return state == want;
}

static int idempotency(void)
{
	static const char result[] = "{\"ok\":true}\0and a NUL";
	struct tg_idem_key k = key_of("alice", "sql.execute", "k-1", "fp-a");
	struct tg_idem_record rec;
	struct tg_store *st;
	struct tg_error err;
	char longkey[300];

	CHECK(fresh_dir() == 0);
	CHECK(tg_store_open(where, &st, &err) == 0);
	CHECK(begin_is(st, k, 1000, TG_IDEM_NEW));
	CHECK(begin_is(st, k, 1001, TG_IDEM_RUNNING));
	CHECK(begin_is(st, key_of("alice", "sql.execute", "k-1", "fp-b"), 1001, TG_IDEM_MISMATCH));
	/* scoped by principal and tool */
	CHECK(begin_is(st, key_of("bob", "sql.execute", "k-1", "fp-a"), 1001, TG_IDEM_NEW));
	CHECK(begin_is(st, key_of("alice", "fs.write", "k-1", "fp-a"), 1001, TG_IDEM_NEW));
	/* finishing needs the same arguments; then every retry replays */
	CHECK(tg_store_idem_finish(st, &(struct tg_idem_key){ "alice", "sql.execute", "k-1", "fp-b" },
				   "x", 1, &err) < 0);
	CHECK(tg_store_idem_finish(st, &k, result, sizeof(result), &err) == 0);
	CHECK(tg_store_idem_finish(st, &k, result, sizeof(result), &err) < 0); /* done already */
	CHECK(tg_store_idem_begin(st, &k, 1002, 100, &rec, &err) == 0);
	CHECK(rec.state == TG_IDEM_DONE && rec.result_len == sizeof(result) &&
	      memcmp(rec.result, result, sizeof(result)) == 0 && rec.created == 1000 &&
	      rec.expires == 1100);
	tg_idem_record_release(&rec);
	CHECK(begin_is(st, key_of("alice", "sql.execute", "k-1", "fp-b"), 1002, TG_IDEM_MISMATCH));
	/* expired: gone, the key is new again; gc removes what expired */
	CHECK(begin_is(st, k, 1100, TG_IDEM_NEW));
	{
		struct tg_store_gc_stats gc;

		CHECK(tg_store_gc(st, 5000, -1, &gc, &err) == 0 && gc.idempotency == 3);
	}
	/* a call refused before it ran frees its key */
	CHECK(begin_is(st, key_of("carol", "t", "k-2", "f"), 6000, TG_IDEM_NEW));
	CHECK(tg_store_idem_abandon(st, &(struct tg_idem_key){ "carol", "t", "k-2", "f" }, &err) == 0);
	CHECK(begin_is(st, key_of("carol", "t", "k-2", "f"), 6000, TG_IDEM_NEW));
	/* bad keys: a specific error each */
	memset(longkey, 'k', 256);
	longkey[256] = '\0';
	CHECK(tg_store_idem_begin(st, &(struct tg_idem_key){ "a", "t", longkey, "f" }, 1, 1, &rec,
				  &err) < 0 && strstr(err.msg, "longer than 255"));
	longkey[255] = '\0';
	CHECK(begin_is(st, key_of("a", "t", longkey, "f"), 1, TG_IDEM_NEW));
	CHECK(tg_store_idem_begin(st, &(struct tg_idem_key){ "a", "t", "", "f" }, 1, 1, &rec,
				  &err) < 0 && strstr(err.msg, "empty"));
	CHECK(tg_store_idem_begin(st, &(struct tg_idem_key){ "a", "t", "a\nb", "f" }, 1, 1, &rec,
				  &err) < 0 && strstr(err.msg, "printable"));
	CHECK(tg_store_idem_finish(st, &k, "x", TG_IDEM_MAX_RESULT + 1, &err) < 0 &&
	      err.code == TG_ERR_LIMIT);
	tg_store_close(st);
	remove_dir();
	return 0;
}

/* 100 threads, one key: exactly one runs. */
struct racer {
	struct tg_store *st;
	int state;
};

static void *race(void *arg)
{
	struct racer *r = arg;
	struct tg_idem_key k = { "alice", "sql.execute", "same", "fp" };
	struct tg_idem_record rec;
	struct tg_error err;

	if (tg_store_idem_begin(r->st, &k, 10, 100, &rec, &err) == 0)
		r->state = rec.state;
	tg_idem_record_release(&rec);
	return NULL;
}

static int concurrent_duplicates(void)
{
	struct racer rs[100];
	pthread_t t[100];
	struct tg_store *st;
	struct tg_error err;
	int i, news = 0, running = 0, status, forks_new = 0;
	pid_t pids[8];

	CHECK(fresh_dir() == 0);
	CHECK(tg_store_open(where, &st, &err) == 0);
	for (i = 0; i < 100; i++) {
		rs[i].st = st;
		rs[i].state = 0;
		CHECK(pthread_create(&t[i], NULL, race, &rs[i]) == 0);
	}
	for (i = 0; i < 100; i++) {
		pthread_join(t[i], NULL);
		news += rs[i].state == TG_IDEM_NEW;
		running += rs[i].state == TG_IDEM_RUNNING;
	}
	tg_store_close(st);
	CHECK(news == 1 && running == 99);
	/* and 8 processes, each with its own store on the one file */
	for (i = 0; i < 8; i++) {
		pids[i] = fork();
		CHECK(pids[i] >= 0);
		if (pids[i] == 0) {
			struct tg_idem_key k = { "bob", "fs.write", "same", "fp" };
			struct tg_idem_record rec;

			if (tg_store_open(where, &st, &err) < 0 ||
			    tg_store_idem_begin(st, &k, 10, 100, &rec, &err) < 0)
				_exit(2);
			_exit(rec.state == TG_IDEM_NEW ? 0 : 1);
		}
	}
	for (i = 0; i < 8; i++) {
		CHECK(waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status));
		CHECK(WEXITSTATUS(status) != 2);
		forks_new += WEXITSTATUS(status) == 0;
	}
	CHECK(forks_new == 1);
	remove_dir();
	/* and 6 processes opening a fresh file at once all migrate it, once */
	CHECK(fresh_dir() == 0);
	for (i = 0; i < 6; i++) {
		pids[i] = fork();
		CHECK(pids[i] >= 0);
		if (pids[i] == 0) {
			if (tg_store_open(where, &st, &err) < 0) {
				fprintf(stderr, "open: %s\n", err.msg);
				_exit(1);
			}
			_exit(tg_store_schema(st) == TG_STORE_SCHEMA ? 0 : 1);
		}
	}
	for (i = 0; i < 6; i++)
		CHECK(waitpid(pids[i], &status, 0) == pids[i] && WIFEXITED(status) &&
		      WEXITSTATUS(status) == 0);
	remove_dir();
	return 0;
}

/* kill -9 at random moments while keys are claimed and finished: every
 * key acknowledged before the kill is there, finished, its result whole;
 * SQLite's file passes its integrity check. */
static int survives_kill9(void)
{
	struct tg_store *st;
	struct tg_error err;
	int round, acked_total = 0;

	CHECK(fresh_dir() == 0);
	srand((unsigned)time(NULL));
	for (round = 0; round < 10; round++) {
		int pfd[2], status, acked = -1, n;
		pid_t pid;
		char buf[16];

		CHECK(pipe(pfd) == 0);
		pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			int i;

			close(pfd[0]);
			if (tg_store_open(where, &st, &err) < 0)
				_exit(2);
			i = -1; /* opened: the kill's moment is counted from here */
			if (write(pfd[1], &i, sizeof(i)) != sizeof(i))
				_exit(4);
			for (i = 0;; i++) {
				char key[32], result[64];
				struct tg_idem_key k = { "p", "t", key, "fp" };
				struct tg_idem_record rec;

				snprintf(key, sizeof(key), "r%d-%d", round, i);
				snprintf(result, sizeof(result), "result of %s", key);
				if (tg_store_idem_begin(st, &k, 1, 1000000, &rec, &err) < 0 ||
				    tg_store_idem_finish(st, &k, result, strlen(result), &err) < 0)
					_exit(3);
				/* acknowledged: only now does the "client" hear of it */
				if (write(pfd[1], &i, sizeof(i)) != sizeof(i))
					_exit(4);
			}
		}
		close(pfd[1]);
		/* opened first (a PostgreSQL opening connects and migrates) */
		CHECK(read(pfd[0], buf, sizeof(int)) == (int)sizeof(int));
		usleep(20000 + (useconds_t)(rand() % 80000));
		kill(pid, SIGKILL);
		while ((n = (int)read(pfd[0], buf, sizeof(int))) == (int)sizeof(int))
			memcpy(&acked, buf, sizeof(int));
		close(pfd[0]);
		CHECK(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status));
		CHECK(tg_store_open(where, &st, &err) == 0);
		for (n = 0; n <= acked; n++) {
			char key[32], want[64];
			struct tg_idem_key k = { "p", "t", key, "fp" };
			struct tg_idem_record rec;

			snprintf(key, sizeof(key), "r%d-%d", round, n);
			snprintf(want, sizeof(want), "result of %s", key);
			CHECK(tg_store_idem_begin(st, &k, 2, 1000000, &rec, &err) == 0);
			CHECK(rec.state == TG_IDEM_DONE && rec.result_len == strlen(want) &&
			      memcmp(rec.result, want, rec.result_len) == 0);
			tg_idem_record_release(&rec);
		}
		tg_store_close(st);
		acked_total += acked + 1;
	}
	if (!on_pg) {
		char path[128];
		sqlite3 *db;
		sqlite3_stmt *s;
		int ok;

		snprintf(path, sizeof(path), "%s/toolgate.db", dir);
		CHECK(sqlite3_open(path, &db) == SQLITE_OK);
		CHECK(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &s, NULL) == SQLITE_OK);
		ok = sqlite3_step(s) == SQLITE_ROW &&
		     strcmp((const char *)sqlite3_column_text(s, 0), "ok") == 0;
		sqlite3_finalize(s);
		sqlite3_close(db);
		CHECK(ok);
	}
	fprintf(stderr, "survives_kill9: %d acknowledged keys over 10 kills, all there\n",
		acked_total);
	CHECK(acked_total > 10);
	remove_dir();
	return 0;
}

static int tickets(void)
{
	struct tg_ticket req, t, t2, *list;
	struct tg_store *st;
	struct tg_error err;
	size_t n;

	CHECK(fresh_dir() == 0);
	CHECK(tg_store_open(where, &st, &err) == 0);
	memset(&req, 0, sizeof(req));
	strcpy(req.principal, "agent-1");
	strcpy(req.tool, "sql.execute@1.0.0");
	memset(req.args_sha256, 'a', 64);
	req.preview = "DELETE would remove 3 rows";
	CHECK(tg_store_ticket_create(st, &req, 1000, 3600, &t, &err) == 0);
	CHECK(strlen(t.id) == 32 && t.state == TG_TICKET_PENDING && t.expires == 4600);
	CHECK(tg_store_ticket_get(st, t.id, 1001, &t2, &err) == 0);
	CHECK(t2.state == TG_TICKET_PENDING && strcmp(t2.preview, req.preview) == 0 &&
	      strcmp(t2.principal, "agent-1") == 0);
	tg_ticket_release(&t2);
	/* the requester cannot approve; a rejection needs a reason */
	CHECK(tg_store_ticket_decide(st, t.id, "agent-1", 1, NULL, 1002, &err) < 0 &&
	      strstr(err.msg, "cannot approve it"));
	CHECK(tg_store_ticket_decide(st, t.id, "alice", 0, "", 1002, &err) < 0 &&
	      strstr(err.msg, "needs a reason"));
	/* only the moves a ticket makes */
	CHECK(tg_store_ticket_move(st, t.id, TG_TICKET_PENDING, TG_TICKET_EXECUTED, &err) < 0);
	CHECK(tg_store_ticket_move(st, t.id, TG_TICKET_APPROVED, TG_TICKET_EXECUTED, &err) < 0 &&
	      strstr(err.msg, "is not approved"));
	CHECK(tg_store_ticket_decide(st, t.id, "alice", 1, NULL, 1003, &err) == 0);
	CHECK(tg_store_ticket_decide(st, t.id, "bob", 0, "no", 1004, &err) < 0 &&
	      strstr(err.msg, "not pending"));
	CHECK(tg_store_ticket_move(st, t.id, TG_TICKET_APPROVED, TG_TICKET_EXECUTED, &err) == 0);
	CHECK(tg_store_ticket_move(st, t.id, TG_TICKET_EXECUTED, TG_TICKET_COMPENSATED, &err) == 0);
	CHECK(tg_store_ticket_get(st, t.id, 1005, &t2, &err) == 0);
	CHECK(t2.state == TG_TICKET_COMPENSATED && strcmp(t2.approver, "alice") == 0 &&
	      t2.decided == 1003);
	tg_ticket_release(&t2);
	tg_ticket_release(&t);
	/* rejected with its reason; expired when nobody decides: fail closed */
	CHECK(tg_store_ticket_create(st, &req, 2000, 60, &t, &err) == 0);
	CHECK(tg_store_ticket_decide(st, t.id, "alice", 0, "too broad", 2001, &err) == 0);
	CHECK(tg_store_ticket_get(st, t.id, 2002, &t2, &err) == 0 && t2.state == TG_TICKET_REJECTED &&
	      strcmp(t2.reason, "too broad") == 0);
	tg_ticket_release(&t2);
	tg_ticket_release(&t);
	CHECK(tg_store_ticket_create(st, &req, 3000, 60, &t, &err) == 0);
	CHECK(tg_store_ticket_decide(st, t.id, "alice", 1, NULL, 3060, &err) < 0 &&
	      strstr(err.msg, "is expired"));
	CHECK(tg_store_ticket_list(st, TG_TICKET_EXPIRED, 3060, &list, &n, &err) == 0 && n == 1 &&
	      strcmp(list[0].id, t.id) == 0);
	tg_ticket_release(&list[0]);
	free(list);
	tg_ticket_release(&t);
	CHECK(tg_store_ticket_list(st, TG_TICKET_ANY, 3060, &list, &n, &err) == 0 && n == 3);
	while (n)
		tg_ticket_release(&list[--n]);
	free(list);
	CHECK(tg_store_ticket_get(st, "nope", 1, &t2, &err) < 0 && strstr(err.msg, "not a ticket id"));
	CHECK(tg_store_ticket_get(st, "0123456789abcdef0123456789abcdef", 1, &t2, &err) < 0 &&
	      strstr(err.msg, "no such ticket"));
	tg_store_close(st);
	remove_dir();
	return 0;
}

/* A ticket keeps its arguments; an executed call's rollback is logged
 * before it runs, resumable, and its success compensates the ticket. */
static int rollbacks(void)
{
	struct tg_ticket req, t, t2;
	struct tg_rollback *list;
	struct tg_store *st;
	struct tg_error err;
	size_t n;

	CHECK(fresh_dir() == 0);
	CHECK(tg_store_open(where, &st, &err) == 0);
	memset(&req, 0, sizeof(req));
	strcpy(req.principal, "agent-1");
	strcpy(req.tool, "sql.execute@1.0.0");
	memset(req.args_sha256, 'b', 64);
	req.arguments = "{\"sql\":\"DELETE FROM orders\"}";
	CHECK(tg_store_ticket_create(st, &req, 1000, 3600, &t, &err) == 0);
	CHECK(t.arguments && strcmp(t.arguments, req.arguments) == 0);
	/* only an executed call is rolled back */
	CHECK(tg_store_rollback_begin(st, t.id, "alice", 1001, &err) < 0 &&
	      strstr(err.msg, "is pending: only an executed call"));
	CHECK(tg_store_ticket_decide(st, t.id, "alice", 1, NULL, 1002, &err) == 0);
	CHECK(tg_store_ticket_move(st, t.id, TG_TICKET_APPROVED, TG_TICKET_EXECUTED, &err) == 0);
	CHECK(tg_store_rollback_begin(st, t.id, "", 1003, &err) < 0);
	/* a first attempt fails; a second one (a crash in between: still
	 * running) is logged again; the third succeeds */
	CHECK(tg_store_rollback_begin(st, t.id, "alice", 1003, &err) == 0);
	CHECK(tg_store_rollback_end(st, t.id, 0, "conflict: orders 7 changed", 1004, &err) == 0);
	CHECK(tg_store_rollback_end(st, t.id, 1, "again", 1004, &err) < 0 &&
	      strstr(err.msg, "not running"));
	CHECK(tg_store_rollback_begin(st, t.id, "bob", 1005, &err) == 0);
	CHECK(tg_store_rollback_list(st, TG_ROLLBACK_RUNNING, &list, &n, &err) == 0 && n == 1 &&
	      list[0].attempts == 2 && strcmp(list[0].requested_by, "bob") == 0 && !list[0].ended);
	tg_rollback_release(&list[0]);
	free(list);
	/* one runner at a time: running here already, it is not begun again */
	CHECK(tg_store_rollback_begin(st, t.id, "bob", 1006, &err) < 0 &&
	      strstr(err.msg, "being rolled back by another process"));
	CHECK(tg_store_rollback_end(st, t.id, 1, "restored 3 rows", 1007, &err) == 0);
	CHECK(tg_store_ticket_get(st, t.id, 1008, &t2, &err) == 0 &&
	      t2.state == TG_TICKET_COMPENSATED);
	tg_ticket_release(&t2);
	/* done is done */
	CHECK(tg_store_rollback_begin(st, t.id, "bob", 1009, &err) == 1);
	CHECK(tg_store_rollback_list(st, TG_ROLLBACK_ANY, &list, &n, &err) == 0 && n == 1 &&
	      list[0].state == TG_ROLLBACK_SUCCEEDED && list[0].attempts == 2 &&
	      strcmp(list[0].detail, "restored 3 rows") == 0 && list[0].ended == 1007);
	tg_rollback_release(&list[0]);
	free(list);
	tg_ticket_release(&t);
	tg_store_close(st);
	remove_dir();
	return 0;
}

/* What a principal puts on the approvers' queue is counted, in tickets
 * and bytes; the collection removes tickets past their keeping, and
 * keeps those a rollback still running reads. */
static int queue_and_collection(void)
{
	struct tg_ticket req, a, b, c, t2;
	struct tg_store_gc_stats gc;
	struct tg_store *st;
	struct tg_error err;
	uint64_t n, bytes;

	CHECK(fresh_dir() == 0);
	CHECK(tg_store_open(where, &st, &err) == 0);
	memset(&req, 0, sizeof(req));
	strcpy(req.principal, "agent-1");
	strcpy(req.tool, "fs.write@1.0.0");
	memset(req.args_sha256, 'c', 64);
	req.arguments = "{\"path\":\"a\"}";          /* 12 bytes */
	req.preview = "would write 1 byte";          /* 18 */
	CHECK(tg_store_ticket_create(st, &req, 1000, 100, &a, &err) == 0);
	CHECK(tg_store_ticket_create(st, &req, 1000, 100, &b, &err) == 0);
	strcpy(req.principal, "agent-2");
	CHECK(tg_store_ticket_create(st, &req, 1000, 100, &c, &err) == 0);
	CHECK(tg_store_tickets_pending(st, "agent-1", 1001, &n, &bytes, &err) == 0 && n == 2 &&
	      bytes == 2 * (12 + 18));
	/* decided or expired: no longer on the queue */
	CHECK(tg_store_ticket_decide(st, a.id, "alice", 1, NULL, 1002, &err) == 0);
	CHECK(tg_store_tickets_pending(st, "agent-1", 1003, &n, &bytes, &err) == 0 && n == 1 &&
	      bytes == 12 + 18);
	/* b expired: off the queue, but its contents count until emptied */
	CHECK(tg_store_tickets_pending(st, "agent-1", 1100, &n, &bytes, &err) == 0 && n == 0 &&
	      bytes == 12 + 18);
	CHECK(tg_store_gc(st, 1100, -1, &gc, &err) == 0 && gc.emptied == 2 && gc.tickets == 0);
	CHECK(tg_store_tickets_pending(st, "agent-1", 1100, &n, &bytes, &err) == 0 && bytes == 0);
	CHECK(tg_store_ticket_get(st, b.id, 1100, &req, &err) == 0 && !req.arguments &&
	      !req.preview && req.state == TG_TICKET_EXPIRED && strlen(req.args_sha256) == 64);
	tg_ticket_release(&req);
	/* a's call executed, and its rollback is running */
	CHECK(tg_store_ticket_move(st, a.id, TG_TICKET_APPROVED, TG_TICKET_EXECUTED, &err) == 0);
	CHECK(tg_store_rollback_begin(st, a.id, "alice", 1004, &err) == 0);
	/* kept for ever (keep < 0), then kept 500 s past expiry or decision */
	CHECK(tg_store_gc(st, 99999, -1, &gc, &err) == 0 && gc.tickets == 0);
	CHECK(tg_store_gc(st, 1599, 500, &gc, &err) == 0 && gc.tickets == 0);
	CHECK(tg_store_gc(st, 1600, 500, &gc, &err) == 0 && gc.tickets == 2); /* b and c */
	CHECK(tg_store_ticket_get(st, b.id, 1600, &t2, &err) < 0 && strstr(err.msg, "no such"));
	CHECK(tg_store_gc(st, 99999, 500, &gc, &err) == 0 && gc.tickets == 0); /* a: rolling back */
	CHECK(tg_store_rollback_end(st, a.id, 1, "undone", 99999, &err) == 0);
	CHECK(tg_store_gc(st, 99999, 500, &gc, &err) == 0 && gc.tickets == 1);
	tg_ticket_release(&a);
	tg_ticket_release(&b);
	tg_ticket_release(&c);
	tg_store_close(st);
	remove_dir();
	return 0;
}

/* Every move of a ticket leaves one event, numbered in order, whichever
 * opening of the store moves it (another process's decision is seen by
 * reading the events); the sweep expires what is past its time, with its
 * event; the events are read after a number, bounded, and collected
 * with the tickets. */
static int ticket_events(void)
{
	struct tg_ticket_event ev[8];
	struct tg_ticket_pending pend[4];
	struct tg_ticket req, a, b, c;
	struct tg_store_gc_stats gc;
	struct tg_store *st, *other;
	struct tg_error err;
	uint64_t last, n, start;
	size_t got;

	CHECK(fresh_dir() == 0);
	CHECK(tg_store_open(where, &st, &err) == 0);
	CHECK(tg_store_open(where, &other, &err) == 0); /* as toolgate approvals opens it */
	CHECK(tg_store_ticket_events(st, 0, 0, NULL, &got, &last, &err) == 0 && last == 0);
	CHECK(tg_store_ticket_events(st, 0, TG_TICKET_EVENTS_MAX + 1, ev, &got, &last, &err) < 0);
	memset(&req, 0, sizeof(req));
	strcpy(req.principal, "agent-1");
	strcpy(req.tool, "fs.write@1.0.0");
	memset(req.args_sha256, 'e', 64);
	CHECK(tg_store_ticket_create(st, &req, 1000, 100, &a, &err) == 0);
	CHECK(tg_store_ticket_create(st, &req, 1010, 100, &b, &err) == 0);
	strcpy(req.tool, "sql.execute@2.0.0");
	CHECK(tg_store_ticket_create(st, &req, 1020, 5, &c, &err) == 0);
	CHECK(tg_store_ticket_pending_stats(st, 1021, pend, 4, &got, &err) == 0 && got == 2 &&
	      strcmp(pend[0].tool, "fs.write@1.0.0") == 0 && pend[0].n == 2 &&
	      pend[0].oldest == 1000 && pend[1].n == 1);
	/* decided in the other opening: the first opening reads it */
	CHECK(tg_store_ticket_decide(other, a.id, "alice", 1, NULL, 1030, &err) == 0);
	CHECK(tg_store_ticket_decide(other, b.id, "bob", 0, "not today", 1031, &err) == 0);
	CHECK(tg_store_ticket_move(st, a.id, TG_TICKET_APPROVED, TG_TICKET_EXECUTED, &err) == 0);
	/* a refused move writes nothing */
	CHECK(tg_store_ticket_move(st, b.id, TG_TICKET_APPROVED, TG_TICKET_EXECUTED, &err) < 0);
	/* c expired without a reader: the sweep, once */
	CHECK(tg_store_ticket_expire(st, 1024, &n, &err) == 0 && n == 0);
	CHECK(tg_store_ticket_expire(st, 1025, &n, &err) == 0 && n == 1);
	CHECK(tg_store_ticket_expire(st, 1026, &n, &err) == 0 && n == 0);
	CHECK(tg_store_ticket_pending_stats(st, 1026, pend, 4, &got, &err) == 0 && got == 0);
	CHECK(tg_store_ticket_events(st, 0, 8, ev, &got, &last, &err) == 0 && got == 7 && last == 7);
	CHECK(ev[0].seq == 1 && ev[0].state == TG_TICKET_PENDING && strcmp(ev[0].ticket, a.id) == 0 &&
	      ev[0].created == 1000 && ev[0].expires == 1100 && !ev[0].approver[0] &&
	      strcmp(ev[0].principal, "agent-1") == 0);
	CHECK(ev[3].state == TG_TICKET_APPROVED && strcmp(ev[3].approver, "alice") == 0 &&
	      ev[3].decided == 1030 && strcmp(ev[3].tool, "fs.write@1.0.0") == 0);
	CHECK(ev[4].state == TG_TICKET_REJECTED && strcmp(ev[4].ticket, b.id) == 0);
	CHECK(ev[5].state == TG_TICKET_EXECUTED && strcmp(ev[5].approver, "alice") == 0);
	CHECK(ev[6].state == TG_TICKET_EXPIRED && strcmp(ev[6].ticket, c.id) == 0 &&
	      ev[6].decided == 1025 && ev[6].at > 1000000000);
	/* after a number, bounded */
	CHECK(tg_store_ticket_events(other, 3, 2, ev, &got, &last, &err) == 0 && got == 2 &&
	      ev[0].seq == 4 && ev[1].seq == 5 && last == 7);
	CHECK(tg_store_ticket_events(other, 7, 8, ev, &got, &last, &err) == 0 && got == 0);
	/* collected keep after they were written; their numbers are never
	 * given again */
	start = (uint64_t)time(NULL);
	CHECK(tg_store_gc(st, (int64_t)start, 3600, &gc, &err) == 0 && gc.events == 0);
	CHECK(tg_store_gc(st, (int64_t)start + 3601, 3600, &gc, &err) == 0 && gc.events == 7);
	CHECK(tg_store_ticket_events(st, 0, 8, ev, &got, &last, &err) == 0 && got == 0 && last == 7);
	tg_ticket_release(&c);
	CHECK(tg_store_ticket_create(st, &req, 2000, 100, &c, &err) == 0);
	CHECK(tg_store_ticket_events(st, 0, 8, ev, &got, &last, &err) == 0 && got == 1 &&
	      ev[0].seq == 8 && last == 8);
	tg_ticket_release(&a);
	tg_ticket_release(&b);
	tg_ticket_release(&c);
	tg_store_close(other);
	tg_store_close(st);
	remove_dir();
	return 0;
}

/* A held call's ticket is made only while its principal's queue has room,
 * looked at in the same transaction: no race lets two in past the bound. */
static int queue_bounded_hold(void)
{
	struct tg_queue_bounds bounds = { 2, 1000 };
	struct tg_idem_record rec;
	struct tg_ticket req, t;
	struct tg_store *st;
	struct tg_error err;
	char key[16], fp[65];
	int i, held = 0, full = 0;

	CHECK(fresh_dir() == 0);
	CHECK(tg_store_open(where, &st, &err) == 0);
	memset(&req, 0, sizeof(req));
	strcpy(req.principal, "agent-1");
	strcpy(req.tool, "fs.write@1.0.0");
	memset(req.args_sha256, 'd', 64);
	memset(fp, 'd', 64);
	fp[64] = '\0';
	req.arguments = "{\"path\":\"a\"}";
	for (i = 0; i < 4; i++) {
		struct tg_idem_key k = { "agent-1", "fs.write", key, fp };
		int rc;

		snprintf(key, sizeof(key), "k%d", i);
		CHECK(tg_store_idem_begin(st, &k, 1000, 100, &rec, &err) == 0 &&
		      rec.state == TG_IDEM_NEW);
		rc = tg_store_idem_hold(st, &k, &req, 1000, 100, &bounds, &t, &err);
		CHECK(rc >= 0);
		if (rc == 0) {
			held++;
			tg_ticket_release(&t);
		} else {
			full++; /* the key is still running: its caller abandons it */
			CHECK(tg_store_idem_abandon(st, &k, &err) == 0);
		}
	}
	CHECK(held == 2 && full == 2);
	/* bytes too: another principal with room for two by count, not bytes */
	strcpy(req.principal, "agent-2");
	bounds.max_bytes = 20;
	{
		struct tg_idem_key k = { "agent-2", "fs.write", "k0", fp };

		CHECK(tg_store_idem_begin(st, &k, 1000, 100, &rec, &err) == 0);
		CHECK(tg_store_idem_hold(st, &k, &req, 1000, 100, &bounds, &t, &err) == 0);
		tg_ticket_release(&t);
		k.key = "k1";
		CHECK(tg_store_idem_begin(st, &k, 1000, 100, &rec, &err) == 0);
		CHECK(tg_store_idem_hold(st, &k, &req, 1000, 100, &bounds, &t, &err) == 1);
	}
	tg_store_close(st);
	remove_dir();
	return 0;
}

/* A key whose gateway died running it is taken over by the next one; a
 * live runner's is not; an approved call's end and its ticket's are one
 * commit. */
static int takeover(void)
{
	struct tg_idem_key k = key_of("agent", "sql.execute", "k-9", "fp");
	struct tg_store *st, *other;
	struct tg_ticket req, t, t2;
	struct tg_error err;
	char *marker = NULL, m[64];
	pid_t pid;
	int status;

	CHECK(fresh_dir() == 0);
	CHECK(tg_store_open(where, &st, &err) == 0);
	memset(&req, 0, sizeof(req));
	strcpy(req.principal, "agent");
	strcpy(req.tool, "sql.execute@1.0.0");
	memset(req.args_sha256, 'c', 64);
	CHECK(tg_store_ticket_create(st, &req, 1000, 3600, &t, &err) == 0);
	CHECK(tg_store_ticket_decide(st, t.id, "alice", 1, NULL, 1001, &err) == 0);
	snprintf(m, sizeof(m), "{\"ticket\":\"%s\"}", t.id);
	/* a gateway claims the approved call, then dies (no close) */
	pid = fork();
	if (pid == 0) {
		struct tg_store *dying;

		if (tg_store_open(where, &dying, &err) < 0 || !begin_is(dying, k, 1002, TG_IDEM_NEW) ||
		    tg_store_idem_finish(dying, &k, m, strlen(m), &err) < 0 ||
		    tg_store_idem_reclaim(dying, &k, m, strlen(m), &err) != 0)
			_exit(1);
		_exit(0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0);
	CHECK(begin_is(st, k, 1003, TG_IDEM_RUNNING));
	/* a live one's key is not taken: another opening of this process */
	CHECK(tg_store_open(where, &other, &err) == 0);
	CHECK(begin_is(other, key_of("agent", "fs.write", "k-1", "fp"), 1003, TG_IDEM_NEW));
	CHECK(tg_store_idem_takeover(st, &(struct tg_idem_key){ "agent", "fs.write", "k-1", "fp" },
				     &marker, &err) == 1 && !marker);
	/* the dead one's is, with the ticket it was running */
	CHECK(takeover_when_free(st, &k, &marker, &err) == 0 && marker && strcmp(marker, m) == 0);
	free(marker);
	CHECK(tg_store_idem_takeover(st, &k, &marker, &err) == 1); /* ours now: alive */
	/* only the holder ends it; the key's answer and the ticket together */
	CHECK(tg_store_idem_finish_call(other, &k, "r", 1, t.id, TG_TICKET_EXECUTED, &err) < 0 &&
	      strstr(err.msg, "no longer holds it"));
	CHECK(tg_store_ticket_get(st, t.id, 1004, &t2, &err) == 0 && t2.state == TG_TICKET_APPROVED);
	tg_ticket_release(&t2);
	CHECK(tg_store_idem_finish_call(st, &k, "r", 1, t.id, TG_TICKET_EXECUTED, &err) == 0);
	CHECK(tg_store_ticket_get(st, t.id, 1005, &t2, &err) == 0 && t2.state == TG_TICKET_EXECUTED);
	tg_ticket_release(&t2);
	CHECK(begin_is(st, k, 1006, TG_IDEM_DONE));
	tg_ticket_release(&t);
	tg_store_close(other);
	tg_store_close(st);
	remove_dir();
	return 0;
}

/* ---- the seam: a stand-in backend, to see what reaches an op ---- */

static int fake_calls;
static struct tg_ticket fake_row;

static int fake_open(struct tg_store *st, struct tg_error *err)
{
	(void)err;
	st->schema = TG_STORE_SCHEMA;
	return 0;
}

static void fake_close(struct tg_store *st)
{
	(void)st;
}

static int fake_idem_begin(struct tg_store *st, const struct tg_idem_key *k, int64_t now,
			   int64_t ttl, struct tg_idem_record *rec, struct tg_error *err)
{
	(void)st, (void)k, (void)err;
	fake_calls++;
	rec->state = TG_IDEM_NEW;
	rec->expires = now + ttl;
	return 0;
}

static int fake_ticket_insert(struct tg_store *st, const struct tg_ticket *t,
			      const struct tg_idem_key *hold, const struct tg_queue_bounds *bounds,
			      struct tg_error *err)
{
	(void)st, (void)hold, (void)bounds, (void)err;
	fake_calls++;
	fake_row = *t;
	return 0;
}

static int fake_ticket_get(struct tg_store *st, const char *id, int64_t now, struct tg_ticket *t,
			   struct tg_error *err)
{
	(void)st, (void)now, (void)err;
	fake_calls++;
	snprintf(t->id, sizeof(t->id), "%s", id);
	snprintf(t->principal, sizeof(t->principal), "alice");
	t->state = TG_TICKET_PENDING;
	return 0;
}

static int fake_ticket_move(struct tg_store *st, const char *id, enum tg_ticket_state from,
			    enum tg_ticket_state to, const char *approver, const char *reason,
			    int64_t now, struct tg_error *err)
{
	(void)st, (void)id, (void)approver, (void)reason, (void)now, (void)err;
	fake_calls++;
	return from == TG_TICKET_PENDING && to == TG_TICKET_APPROVED ? 0 : 1;
}

static int fake_baselines_load(struct tg_store *st, struct tg_baseline **out, size_t *n,
			       struct tg_error *err)
{
	(void)st, (void)err;
	fake_calls++;
	*out = calloc(2, sizeof(**out));
	*n = *out ? 2 : 0;
	return *out ? 0 : -1;
}

static const struct tg_store_ops fake_ops = {
	.name = "fake",
	.open = fake_open,
	.close = fake_close,
	.idem_begin = fake_idem_begin,
	.ticket_insert = fake_ticket_insert,
	.ticket_get = fake_ticket_get,
	.ticket_move = fake_ticket_move,
	.baselines_load = fake_baselines_load,
};

static int count_baseline(void *ctx, const struct tg_baseline *b)
{
	(void)b;
	++*(int *)ctx;
	return 0;
}

/* A backend plugs in with its ops table alone; the front checks what it
 * hands an op (a refused input never reaches one), makes the ticket's id
 * and times, and runs a caller's function over what an op loaded. */
static int seam(void)
{
	static const char id[] = "0123456789abcdef0123456789abcdef";
	struct tg_idem_key bad = { "p", "t", "has space", "fp" }, good = { "p", "t", "k1", "fp" };
	struct tg_ticket req, out;
	struct tg_idem_record rec;
	struct tg_store *st;
	struct tg_error err;
	int seen = 0;

	CHECK(fresh_dir() == 0);
	CHECK(store_open_with(&fake_ops, dir, &st, &err) == 0);
	CHECK(tg_store_schema(st) == TG_STORE_SCHEMA);
	CHECK(tg_store_idem_begin(st, &bad, 1, 10, &rec, &err) < 0 && err.code == TG_ERR_INVALID);
	CHECK(tg_store_ticket_get(st, "not-an-id", 1, &out, &err) < 0 && err.code == TG_ERR_INVALID);
	CHECK(tg_store_ticket_move(st, id, TG_TICKET_PENDING, TG_TICKET_EXECUTED, &err) < 0 &&
	      strstr(err.msg, "not a move"));
	CHECK(fake_calls == 0);
	CHECK(tg_store_idem_begin(st, &good, 1, 10, &rec, &err) == 0 && rec.state == TG_IDEM_NEW &&
	      rec.expires == 11 && fake_calls == 1);
	/* the requester's own decision: read through the op, refused before a move */
	CHECK(tg_store_ticket_decide(st, id, "alice", 1, NULL, 5, &err) < 0 &&
	      strstr(err.msg, "cannot approve") && fake_calls == 2);
	CHECK(tg_store_ticket_decide(st, id, "bob", 1, NULL, 5, &err) == 0 && fake_calls == 4);
	/* the op's 1 (not in the state expected) becomes the front's refusal */
	CHECK(tg_store_ticket_move(st, id, TG_TICKET_APPROVED, TG_TICKET_EXECUTED, &err) < 0 &&
	      strstr(err.msg, "is not approved") && fake_calls == 5);
	memset(&req, 0, sizeof(req));
	snprintf(req.principal, sizeof(req.principal), "alice");
	snprintf(req.tool, sizeof(req.tool), "t@1");
	memset(req.args_sha256, 'a', 64);
	CHECK(tg_store_ticket_create(st, &req, 100, 50, &out, &err) == 0 && fake_calls == 6);
	CHECK(strlen(fake_row.id) == 32 && strspn(fake_row.id, "0123456789abcdef") == 32 &&
	      strcmp(out.id, fake_row.id) == 0 && fake_row.state == TG_TICKET_PENDING &&
	      fake_row.created == 100 && fake_row.expires == 150);
	tg_ticket_release(&out);
	CHECK(tg_store_baselines_each(st, count_baseline, &seen, &err) == 0 && seen == 2);
	tg_store_close(st);
	remove_dir();
	return 0;
}

/* Each webhook's cursor (migration 11): none until set, kept across
 * openings, replaced, and names checked. */
static int webhook_cursors(void)
{
	struct tg_store *st, *other;
	struct tg_error err;
	uint64_t seq;
	int found;

	CHECK(fresh_dir() == 0);
	CHECK(tg_store_open(where, &st, &err) == 0);
	CHECK(tg_store_webhook_cursor(st, "ops", &seq, &found, &err) == 0 && !found && seq == 0);
	CHECK(tg_store_webhook_cursor_set(st, "ops", 41, &err) == 0);
	CHECK(tg_store_webhook_cursor_set(st, "ops", 42, &err) == 0);
	CHECK(tg_store_webhook_cursor_set(st, "audit.team", 7, &err) == 0);
	CHECK(tg_store_open(where, &other, &err) == 0);
	CHECK(tg_store_webhook_cursor(other, "ops", &seq, &found, &err) == 0 && found && seq == 42);
	CHECK(tg_store_webhook_cursor(other, "audit.team", &seq, &found, &err) == 0 && seq == 7);
	CHECK(tg_store_webhook_cursor(other, "a b", &seq, &found, &err) < 0 &&
	      err.code == TG_ERR_INVALID);
	CHECK(tg_store_webhook_cursor_set(other, "", 1, &err) < 0);
	tg_store_close(other);
	tg_store_close(st);
	remove_dir();
	return 0;
}

/* ---- PostgreSQL: the same tests, and what only a database on the network
 * meets ---- */

#define ON_PG(fn)                                   \
	static int fn##_pg(void)                    \
	{                                           \
		on_pg = 1;                          \
		if (!getenv("TG_TEST_PG"))          \
			return UNIT_SKIP;           \
		return fn();                        \
	}
ON_PG(webhook_cursors)
ON_PG(takeover)
ON_PG(tickets)
ON_PG(rollbacks)
ON_PG(queue_and_collection)
ON_PG(queue_bounded_hold)
ON_PG(ticket_events)
ON_PG(idempotency)
ON_PG(concurrent_duplicates)
ON_PG(survives_kill9)

/* Opened and migrated once; a newer toolgate's database, someone else's
 * tables, a search_path with no schema, a password in the URL and a
 * server that is not there: each refused, saying which, touching nothing. */
static int pg_opens_and_refuses(void)
{
	struct tg_store *st;
	struct tg_error err;
	char sql[256], url[600];

	on_pg = 1;
	if (!getenv("TG_TEST_PG"))
		return UNIT_SKIP;
	CHECK(fresh_dir() == 0);
	CHECK(tg_store_remote(where) == 1 && tg_store_remote("/var/lib/toolgate") == 0);
	CHECK(tg_store_open(where, &st, &err) == 0 && tg_store_schema(st) == TG_STORE_SCHEMA);
	CHECK(tg_store_check(st, &err) == 0);
	tg_store_close(st);
	CHECK(tg_store_open(where, &st, &err) == 0); /* again: nothing to migrate */
	tg_store_close(st);
	snprintf(sql, sizeof(sql), "UPDATE %s.toolgate_meta SET value = '99' WHERE key = 'schema'",
		 schema);
	CHECK(pg_sql(sql) == 0);
	CHECK(tg_store_open(where, &st, &err) < 0 && err.code == TG_ERR_INVALID &&
	      strstr(err.msg, "schema 99, written by a newer toolgate"));
	remove_dir();
	CHECK(fresh_dir() == 0);
	snprintf(sql, sizeof(sql), "CREATE TABLE %s.theirs (x int)", schema);
	CHECK(pg_sql(sql) == 0);
	CHECK(tg_store_open(where, &st, &err) < 0 && err.code == TG_ERR_INVALID &&
	      strstr(err.msg, "not a toolgate database (someone else's tables)"));
	snprintf(sql, sizeof(sql), "SELECT x FROM %s.theirs", schema);
	CHECK(pg_sql(sql) == 0);
	snprintf(sql, sizeof(sql), "SELECT 1 FROM %s.toolgate_meta", schema);
	CHECK(pg_sql(sql) < 0); /* nothing of ours made beside theirs */
	remove_dir();
	snprintf(url, sizeof(url), "%s&options=-csearch_path%%3Dno_such_schema",
		 getenv("TG_TEST_PG"));
	CHECK(tg_store_open(url, &st, &err) < 0 && strstr(err.msg, "no schema to make the tables"));
	CHECK(tg_store_open("postgresql://tg:s3cret@127.0.0.1:1/db", &st, &err) < 0 &&
	      err.code == TG_ERR_INVALID && strstr(err.msg, "password file") &&
	      !strstr(err.msg, "s3cret"));
	CHECK(tg_store_open("postgres://x/db?nonsense=1", &st, &err) < 0 &&
	      err.code == TG_ERR_INVALID && strstr(err.msg, "nonsense"));
	/* refused by libpq before its password is seen: never shown either */
	CHECK(tg_store_open("postgres://tg:s3cret@x/db?nonsense=1", &st, &err) < 0 &&
	      err.code == TG_ERR_INVALID && strstr(err.msg, "postgres://tg:***@x/db") &&
	      !strstr(err.msg, "s3cret"));
	/* a raw '/' in a password: libpq reads a port there, the URL is
	 * shown without it */
	CHECK(tg_store_open("postgres://tg:s3/cr@t@x:5x/db", &st, &err) < 0 &&
	      strstr(err.msg, "store postgres://tg:***@x:5x/db") && !strstr(err.msg, "cr@t"));
	CHECK(tg_store_open("postgresql:///db?host=/proc/no/such", &st, &err) < 0 &&
	      err.code == TG_ERR_SYSTEM && strstr(err.msg, "/proc/no/such"));
	return 0;
}

struct claimer {
	struct tg_store *st;
	int rc;
	struct tg_error err;
};

static void *claim_blocked(void *arg)
{
	struct claimer *c = arg;
	struct tg_idem_record rec;

	c->rc = tg_store_idem_begin(c->st, &(struct tg_idem_key){ "p", "t", "cut", "fp" }, 10, 100,
				    &rec, &c->err);
	tg_idem_record_release(&rec);
	return NULL;
}

/* A claim whose connection is cut while it waits on the key's row (another
 * transaction holds it): a retryable error, never an answer it did not get;
 * the key is not left held, and the next claim, on a new connection, is
 * made. */
static int pg_connection_cut_mid_claim(void)
{
	struct claimer c = { 0 };
	struct tg_store *st;
	PGconn *holder, *killer;
	PGresult *r;
	pthread_t t;
	char sql[512];
	int i, cut = 0;

	on_pg = 1;
	if (!getenv("TG_TEST_PG"))
		return UNIT_SKIP;
	CHECK(fresh_dir() == 0);
	CHECK(tg_store_open(where, &st, &c.err) == 0);
	holder = PQconnectdb(getenv("TG_TEST_PG"));
	killer = PQconnectdb(getenv("TG_TEST_PG"));
	CHECK(PQstatus(holder) == CONNECTION_OK && PQstatus(killer) == CONNECTION_OK);
	snprintf(sql, sizeof(sql), "BEGIN; INSERT INTO %s.idempotency (principal, tool, key, "
		 "fingerprint, state, runner, created, expires) VALUES ('p', 't', 'cut', 'fp', "
		 "'running', 'x', 1, 2)", schema);
	PQclear(PQexec(holder, sql));
	c.st = st;
	CHECK(pthread_create(&t, NULL, claim_blocked, &c) == 0);
	for (i = 0; i < 200 && !cut; i++) {
		usleep(10000);
		r = PQexec(killer, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
			   "application_name = 'toolgate' AND wait_event_type = 'Lock'");
		cut = r && PQntuples(r) > 0;
		PQclear(r);
	}
	pthread_join(t, NULL);
	CHECK(cut);
	CHECK(c.rc < 0 && c.err.code == TG_ERR_SYSTEM);
	PQclear(PQexec(holder, "ROLLBACK"));
	PQfinish(holder);
	PQfinish(killer);
	CHECK(begin_is(st, key_of("p", "t", "cut", "fp"), 10, TG_IDEM_NEW));
	tg_store_close(st);
	remove_dir();
	return 0;
}

/* A key whose abandon fails (its connection cut: the database away for
 * it) is not left running under this opening, which lives, for its day:
 * the liveness watch lets go of it once the database answers; and a new
 * claim of the key by this opening settles it first, so that the kept
 * abandon never deletes the new claim's row. */
static int cut_and_abandon(struct tg_store *st, const struct tg_idem_key *k)
{
	PGconn *killer = PQconnectdb(getenv("TG_TEST_PG"));
	struct tg_error err;
	PGresult *r;
	int cut;

	/* the pool's connection that made the claim, cut */
	r = PQexec(killer, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
		   "application_name = 'toolgate' AND query LIKE 'INSERT INTO idempotency%'");
	cut = r && PQntuples(r) == 1;
	PQclear(r);
	PQfinish(killer);
	usleep(100000);
	return cut && tg_store_idem_abandon(st, k, &err) < 0 && err.code == TG_ERR_SYSTEM;
}

static int rows_of(const char *key)
{
	char sql[160];
	PGconn *c = PQconnectdb(getenv("TG_TEST_PG"));
	PGresult *r;
	int n = -1;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s.idempotency WHERE key = '%s'", schema,
		 key);
	r = PQexec(c, sql);
	if (r && PQresultStatus(r) == PGRES_TUPLES_OK)
		n = atoi(PQgetvalue(r, 0, 0));
	PQclear(r);
	PQfinish(c);
	return n;
}

static int pg_abandon_when_cut(void)
{
	struct tg_idem_key k = key_of("p", "t", "dropped", "fp");
	struct tg_store *st;
	struct tg_error err;
	int i;

	on_pg = 1;
	if (!getenv("TG_TEST_PG"))
		return UNIT_SKIP;
	CHECK(fresh_dir() == 0);
	CHECK(tg_store_open(where, &st, &err) == 0);
	CHECK(begin_is(st, k, 10, TG_IDEM_NEW));
	CHECK(cut_and_abandon(st, &k));
	CHECK(rows_of("dropped") == 1); /* left running */
	for (i = 0; i < 40 && rows_of("dropped") != 0; i++)
		usleep(100000);
	CHECK(rows_of("dropped") == 0); /* let go by the watch */
	/* again, and claimed at once: settled before the claim */
	CHECK(begin_is(st, k, 10, TG_IDEM_NEW));
	CHECK(cut_and_abandon(st, &k));
	CHECK(begin_is(st, k, 10, TG_IDEM_NEW));
	CHECK(rows_of("dropped") == 1);
	usleep(1500000); /* the watch's sweep finds nothing of it to delete */
	CHECK(begin_is(st, k, 10, TG_IDEM_RUNNING));
	tg_store_close(st);
	remove_dir();
	return 0;
}

/* Whose clock judges expiry (docs/STORE.md, "Whose clock"): with
 * TG_STORE_NOW, PostgreSQL's is the database's, so two replicas whose wall
 * clocks disagree by an hour, either way, make and expire a ticket alike;
 * SQLite's is the host's. */
static int pg_clock_is_the_databases(void)
{
	struct tg_ticket req, t, seen;
	struct tg_store *st;
	struct tg_error err;
	int64_t real = (int64_t)time(NULL);

	on_pg = 1;
	if (!getenv("TG_TEST_PG"))
		return UNIT_SKIP;
	CHECK(fresh_dir() == 0);
	CHECK(tg_store_open(where, &st, &err) == 0);
	memset(&req, 0, sizeof(req));
	strcpy(req.principal, "agent");
	strcpy(req.tool, "sql.execute@1.0.0");
	memset(req.args_sha256, 'c', 64);
	/* a replica an hour ahead makes it: 1 s to live by the database */
	unit_clock_skew(3600);
	CHECK(tg_store_ticket_create(st, &req, TG_STORE_NOW, 1, &t, &err) == 0);
	CHECK(t.created >= real - 5 && t.created <= real + 5 && t.expires == t.created + 1);
	/* one an hour behind reads it: pending, then expired 2 s on */
	unit_clock_skew(-3600);
	CHECK(tg_store_ticket_get(st, t.id, TG_STORE_NOW, &seen, &err) == 0 &&
	      seen.state == TG_TICKET_PENDING);
	tg_ticket_release(&seen);
	sleep(2);
	CHECK(tg_store_ticket_get(st, t.id, TG_STORE_NOW, &seen, &err) == 0 &&
	      seen.state == TG_TICKET_EXPIRED && seen.decided >= t.expires &&
	      seen.decided <= t.expires + 5);
	tg_ticket_release(&seen);
	tg_ticket_release(&t);
	tg_store_close(st);
	remove_dir();
	/* SQLite's clock is the host's, skewed as it is */
	on_pg = 0;
	CHECK(fresh_dir() == 0);
	CHECK(tg_store_open(where, &st, &err) == 0);
	CHECK(tg_store_ticket_create(st, &req, TG_STORE_NOW, 2, &t, &err) == 0);
	CHECK(t.created <= real - 3500);
	tg_ticket_release(&t);
	tg_store_close(st);
	unit_clock_skew(0);
	remove_dir();
	return 0;
}

const struct unit_test store_tests[] = {
	{ "store/webhook_cursors", webhook_cursors },
	{ "store/seam", seam },
	{ "store/takeover", takeover },
	{ "store/tickets", tickets },
	{ "store/rollbacks", rollbacks },
	{ "store/queue_and_collection", queue_and_collection },
	{ "store/queue_bounded_hold", queue_bounded_hold },
	{ "store/ticket_events", ticket_events },
	{ "store/opens_and_migrates", opens_and_migrates },
	{ "store/idempotency", idempotency },
	{ "store/concurrent_duplicates", concurrent_duplicates },
	{ "store/survives_kill9", survives_kill9 },
	{ "store-pg/webhook_cursors", webhook_cursors_pg },
	{ "store-pg/takeover", takeover_pg },
	{ "store-pg/tickets", tickets_pg },
	{ "store-pg/rollbacks", rollbacks_pg },
	{ "store-pg/queue_and_collection", queue_and_collection_pg },
	{ "store-pg/queue_bounded_hold", queue_bounded_hold_pg },
	{ "store-pg/ticket_events", ticket_events_pg },
	{ "store-pg/idempotency", idempotency_pg },
	{ "store-pg/concurrent_duplicates", concurrent_duplicates_pg },
	{ "store-pg/survives_kill9", survives_kill9_pg },
	{ "store-pg/opens_and_refuses", pg_opens_and_refuses },
	{ "store-pg/connection_cut_mid_claim", pg_connection_cut_mid_claim },
	{ "store-pg/clock_is_the_databases", pg_clock_is_the_databases },
	{ "store-pg/abandon_when_cut", pg_abandon_when_cut },
	UNIT_TESTS_END,
};
