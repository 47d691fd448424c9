/*
 * bench/audit: records per second into the audit log (include/toolgate/
 * audit.h), each caller waiting until its record is written and synced,
 * as a call does before its answer; against SQLite inserts in WAL mode,
 * each its own transaction (synchronous=FULL: as durable; and NORMAL,
 * which a power cut may lose: for reference), in the same run, on the same
 * filesystem.
 *
 * 1, 4 and 16 callers; three rounds of each contender in turn (the
 * machine drifts), the medians printed, and the ratios. Not a test: it
 * asserts nothing. docs/BENCHMARKS.md holds the latest figures.
 *
 * usage: audit [-n RECORDS] [-d DIR]   (DIR: where the files go; default .)
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "toolgate/audit.h"

#define ROUNDS 3

enum { AUDIT, SQL_FULL, SQL_NORMAL, NCONT };
static const char *const name[NCONT] = { "audit log", "sqlite FULL", "sqlite NORMAL" };

/* A call's record as the gateway writes one. */
static const char record_fmt[] =
	"{\"kind\":\"call\",\"principal\":\"agent-%d\",\"tool\":\"sql.query\",\"outcome\":\"ok\","
	"\"duration_us\":%d,\"version\":\"1.0.0\",\"args_sha256\":"
	"\"2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae\"}";

struct job {
	int mode, id, n, failed;
	struct tg_audit *audit;
	const char *db_path;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	struct job *j = arg;
	sqlite3 *db = NULL;
	sqlite3_stmt *ins = NULL;
	struct tg_error err;
	char rec[512];
	int i;

	if (j->mode != AUDIT) {
		if (sqlite3_open(j->db_path, &db) != SQLITE_OK ||
		    sqlite3_busy_timeout(db, 60000) != SQLITE_OK ||
		    sqlite3_exec(db, j->mode == SQL_FULL ? "PRAGMA synchronous=FULL"
				 : "PRAGMA synchronous=NORMAL", NULL, NULL, NULL) != SQLITE_OK ||
		    sqlite3_prepare_v2(db, "INSERT INTO audit(ts, body) VALUES (?1, ?2)", -1, &ins,
				       NULL) != SQLITE_OK) {
			fprintf(stderr, "audit bench: sqlite: %s\n", sqlite3_errmsg(db));
			j->failed = j->n;
			sqlite3_close(db);
			return NULL;
		}
	}
	for (i = 0; i < j->n; i++) {
		snprintf(rec, sizeof(rec), record_fmt, j->id, i);
		if (j->mode == AUDIT) {
			int64_t t = tg_audit_append(j->audit, rec, &err);

			j->failed += t < 0 || tg_audit_wait(j->audit, t, &err) < 0;
		} else {
			sqlite3_bind_double(ins, 1, now_s());
			sqlite3_bind_text(ins, 2, rec, -1, SQLITE_STATIC);
			j->failed += sqlite3_step(ins) != SQLITE_DONE;
			sqlite3_reset(ins);
		}
	}
	sqlite3_finalize(ins);
	sqlite3_close(db);
	return NULL;
}

/* Records per second of mode with callers at once, n in all. */
static double run(int mode, int callers, int n, const char *dir, int round)
{
	char path[4096];
	struct job jobs[16];
	pthread_t th[16];
	struct tg_error err;
	struct tg_audit *a = NULL;
	double t0, t;
	int i, failed = 0;

	snprintf(path, sizeof(path), "%s/bench-audit-%d-%d-%d.%s", dir, mode, callers, round,
		 mode == AUDIT ? "log" : "db");
	unlink(path);
	if (mode == AUDIT && tg_audit_open(path, 0, &a, &err) < 0) {
		fprintf(stderr, "audit bench: %s\n", err.msg);
		return -1;
	}
	if (mode != AUDIT) {
		sqlite3 *db;

		if (sqlite3_open(path, &db) != SQLITE_OK ||
		    sqlite3_exec(db, "PRAGMA journal_mode=WAL; CREATE TABLE audit(seq INTEGER "
				 "PRIMARY KEY, ts REAL, body TEXT)", NULL, NULL, NULL) != SQLITE_OK) {
			fprintf(stderr, "audit bench: sqlite: %s\n", sqlite3_errmsg(db));
			sqlite3_close(db);
			return -1;
		}
		sqlite3_close(db);
	}
	for (i = 0; i < callers; i++) {
		jobs[i] = (struct job){ mode, i, n / callers, 0, a, path };
	}
	t0 = now_s();
	for (i = 0; i < callers; i++)
		pthread_create(&th[i], NULL, worker, &jobs[i]);
	for (i = 0; i < callers; i++) {
		pthread_join(th[i], NULL);
		failed += jobs[i].failed;
	}
	t = now_s() - t0;
	tg_audit_close(a);
	if (mode == AUDIT) {
		struct tg_audit_report rep;

		if (tg_audit_verify(path, NULL, &rep, &err) < 0 || rep.bad_line ||
		    rep.records != (uint64_t)(n / callers * callers)) {
			fprintf(stderr, "audit bench: the log does not verify\n");
			failed++;
		}
	}
	unlink(path);
	snprintf(path + strlen(path), 8, "-wal");
	unlink(path);
	path[strlen(path) - 4] = '\0';
	snprintf(path + strlen(path), 8, "-shm");
	unlink(path);
	if (failed) {
		fprintf(stderr, "audit bench: %d records failed under %s\n", failed, name[mode]);
		return -1;
	}
	return (n / callers * callers) / t;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const int callers[] = { 1, 4, 16 };
	const char *dir = ".";
	double r[3][NCONT][ROUNDS];
	struct statfs sf;
	int n = 2000, opt, c, m, q;

	while ((opt = getopt(argc, argv, "n:d:")) != -1) {
		if (opt == 'n')
			n = atoi(optarg);
		else if (opt == 'd')
			dir = optarg;
		else {
			fprintf(stderr, "usage: audit [-n RECORDS] [-d DIR]\n");
			return 2;
		}
	}
	if (n < 16 || statfs(dir, &sf) < 0) {
		fprintf(stderr, "audit bench: need RECORDS >= 16 and a directory\n");
		return 2;
	}
	printf("audit: %d records per run, each synced before its caller goes on; "
	       "%d rounds; in %s (filesystem 0x%lx)\n", n, ROUNDS, dir, (unsigned long)sf.f_type);
	for (q = 0; q < ROUNDS; q++)
		for (c = 0; c < 3; c++)
			for (m = 0; m < NCONT; m++)
				if ((r[c][m][q] = run(m, callers[c], m == AUDIT ? n : n / 4, dir, q)) <
				    0)
					return 1;
	printf("\n  records/s       %12s %12s %12s\n", "1 caller", "4 callers", "16 callers");
	for (m = 0; m < NCONT; m++) {
		printf("  %-14s", name[m]);
		for (c = 0; c < 3; c++) {
			qsort(r[c][m], ROUNDS, sizeof(double), cmp_double);
			printf(" %12.0f", r[c][m][ROUNDS / 2]);
		}
		printf("\n");
	}
	printf("  ratios: audit/sqlite-FULL");
	for (c = 0; c < 3; c++)
		printf(" %.2f", r[c][AUDIT][ROUNDS / 2] / r[c][SQL_FULL][ROUNDS / 2]);
	printf("   audit/sqlite-NORMAL");
	for (c = 0; c < 3; c++)
		printf(" %.2f", r[c][AUDIT][ROUNDS / 2] / r[c][SQL_NORMAL][ROUNDS / 2]);
	printf("\n");
	return 0;
}
