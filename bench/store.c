/*
 * bench/store: what the store costs a gateway, on SQLite (a state
 * directory) or PostgreSQL (a postgres:// URL), through the public calls
 * of include/toolgate/store.h only (make bench-store runs both, side by
 * side: bench/store.sh).
 *
 *   gate WHERE [-n N]
 *       N writes, one after another from one thread, each making the
 *       store calls the gate makes for a write held for approval, then
 *       approved and retried (src/gate/write.c):
 *         1 tg_store_idem_begin         the key claimed (NEW)
 *         2 tg_store_tickets_pending    the principal's queue looked at
 *         3 tg_store_idem_hold          the ticket made, the key holding it
 *         4 tg_store_ticket_decide      approved, by another principal
 *         5 tg_store_idem_begin         the retry: DONE, {"ticket":ID}
 *         6 tg_store_ticket_get         the ticket read: approved
 *         7 tg_store_idem_reclaim       the key taken back to run it
 *         8 tg_store_idem_finish_call   the result kept, the ticket executed
 *       Prints p50 and p99 in µs of each step and of the whole (the sum
 *       of a write's eight), after N / 10 writes not counted (warm-up).
 *   claims WHERE [-r R] [-c C] [-t SECS]
 *       R processes (replicas), each with its own opening of the store, C
 *       threads in all spread over them, each claiming fresh keys
 *       (tg_store_idem_begin, NEW every time) as fast as it can for SECS
 *       seconds, all starting together once every replica is open.
 *       Prints claims a second in all, and the CPU the replicas, the
 *       PostgreSQL server (-s: its postmaster's pid and its children;
 *       without, every process named postgres), the rest and the whole
 *       machine used meanwhile, from /proc, in % of all its CPUs.
 *   ping URL [-n N]
 *       The floor of a PostgreSQL store, with libpq directly on one
 *       connection: a SELECT 1 round trip, and one INSERT committed (a
 *       table bench_floor made in the URL's schema), p50 and p99 in µs.
 *   fsync DIR [-n N]
 *       The floor of any durable commit on DIR's disk: 4 KiB written over
 *       a file and fsync'd, p50 and p99 in µs.
 *
 * Lines a script reads carry key=value fields (total p50= p99=, claims
 * rate=, ...).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "toolgate/store.h"

#define TTL 3600

/* "now" as the gate gives it: the store's clock where the store takes
 * that (TG_STORE_NOW), else this host's */
#ifdef TG_STORE_NOW
#define NOW() TG_STORE_NOW
#else
#define NOW() ((int64_t)time(NULL))
#endif
#define MAX_REPLICAS 64
#define MAX_CALLERS 1024

static const char result_text[] =
	"{\"content\":[{\"type\":\"text\",\"text\":\"done\"}],\"isError\":false}";

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The p-th quantile of v (sorted here). */
static double pct(double *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(size_t)((double)(n - 1) * p + 0.5)];
}

static void die(const char *what, const struct tg_error *err)
{
	fprintf(stderr, "bench/store: %s: %s\n", what, err ? err->msg : strerror(errno));
	exit(1);
}

static void log_stderr(void *ctx, enum tg_log_level level, const char *msg)
{
	(void)ctx;
	if (level == TG_LOG_ERROR || level == TG_LOG_WARNING)
		fprintf(stderr, "bench/store: (library) %s\n", msg);
}

/* ---- gate ------------------------------------------------------------------------- */

enum step {
	S_BEGIN, S_PENDING, S_HOLD, S_DECIDE, S_RETRY, S_GET, S_RECLAIM, S_FINISH, S_N
};

static const char *const step_name[S_N] = {
	"1 idem_begin (new)", "2 tickets_pending", "3 idem_hold", "4 ticket_decide",
	"5 idem_begin (done)", "6 ticket_get", "7 idem_reclaim", "8 idem_finish_call",
};

/* The time since *t, in µs; *t moves to now. */
static double lap(double *t)
{
	double n = now_us(), d = n - *t;

	*t = n;
	return d;
}

/* The first half of a held write: its key claimed, the queue looked at,
 * its ticket made and held by the key (OUT id). */
static int write_held(struct tg_store *st, const struct tg_idem_key *key, const char *args,
		      char *id, double *dt, struct tg_error *err)
{
	struct tg_queue_bounds bounds = { .max_pending = 1000, .max_bytes = 1u << 30 };
	struct tg_idem_record rec;
	struct tg_ticket req, t;
	uint64_t pending, bytes;
	int64_t now = NOW();
	double at = now_us();
	int rc;

	if (tg_store_idem_begin(st, key, now, TTL, &rec, err) < 0)
		return -1;
	tg_idem_record_release(&rec);
	if (rec.state != TG_IDEM_NEW)
		return tg_error_set(err, TG_ERR_INVALID, "a fresh key is not new (%d)", rec.state);
	dt[S_BEGIN] = lap(&at);
	if (tg_store_tickets_pending(st, key->principal, now, &pending, &bytes, err) < 0)
		return -1;
	dt[S_PENDING] = lap(&at);
	memset(&req, 0, sizeof(req));
	snprintf(req.principal, sizeof(req.principal), "%s", key->principal);
	snprintf(req.tool, sizeof(req.tool), "%s@1.0.0", key->tool);
	snprintf(req.args_sha256, sizeof(req.args_sha256), "%s", key->fingerprint);
	req.arguments = (char *)args;
	rc = tg_store_idem_hold(st, key, &req, now, TTL, &bounds, &t, err);
	if (rc != 0)
		return rc < 0 ? -1 : tg_error_set(err, TG_ERR_LIMIT, "the queue is full");
	dt[S_HOLD] = lap(&at);
	memcpy(id, t.id, sizeof(t.id));
	tg_ticket_release(&t);
	return 0;
}

/* The second half: approved by another, then the retry that runs it. */
static int write_approved(struct tg_store *st, const struct tg_idem_key *key, const char *id,
			  double *dt, struct tg_error *err)
{
	struct tg_idem_record rec;
	struct tg_ticket t;
	int64_t now = NOW();
	double at = now_us();
	int rc;

	if (tg_store_ticket_decide(st, id, "approver", 1, NULL, now, err) < 0)
		return -1;
	dt[S_DECIDE] = lap(&at);
	if (tg_store_idem_begin(st, key, now, TTL, &rec, err) < 0)
		return -1;
	if (rec.state != TG_IDEM_DONE || !strstr(rec.result, id)) {
		tg_idem_record_release(&rec);
		return tg_error_set(err, TG_ERR_INVALID, "the retry does not find its ticket");
	}
	dt[S_RETRY] = lap(&at);
	if (tg_store_ticket_get(st, id, now, &t, err) < 0)
		goto fail;
	tg_ticket_release(&t);
	if (t.state != TG_TICKET_APPROVED) {
		tg_error_set(err, TG_ERR_INVALID, "ticket %s is %s", id, tg_ticket_state_name(t.state));
		goto fail;
	}
	dt[S_GET] = lap(&at);
	rc = tg_store_idem_reclaim(st, key, rec.result, rec.result_len, err);
	tg_idem_record_release(&rec);
	if (rc != 0)
		return rc < 0 ? -1 : tg_error_set(err, TG_ERR_INVALID, "the key was not taken back");
	dt[S_RECLAIM] = lap(&at);
	if (tg_store_idem_finish_call(st, key, result_text, strlen(result_text), id,
				      TG_TICKET_EXECUTED, err) < 0)
		return -1;
	dt[S_FINISH] = lap(&at);
	return 0;
fail:
	tg_idem_record_release(&rec);
	return -1;
}

/* One write, i-th of this run: its eight steps' times into dt. */
static int write_once(struct tg_store *st, const char *run, size_t i, double *dt,
		      struct tg_error *err)
{
	char k[96], fp[65], args[64], id[33];
	struct tg_idem_key key = { .principal = "agent", .tool = "bench.write", .key = k,
				   .fingerprint = fp };

	snprintf(k, sizeof(k), "w-%s-%zu", run, i);
	snprintf(fp, sizeof(fp), "%064zx", i);
	snprintf(args, sizeof(args), "{\"n\":%zu}", i);
	if (write_held(st, &key, args, id, dt, err) < 0)
		return -1;
	return write_approved(st, &key, id, dt, err);
}

static void gate_row(const char *what, double *v, size_t n)
{
	printf("  %-24s %9.1f %9.1f\n", what, pct(v, n, 0.5), pct(v, n, 0.99));
}

static int run_gate(const char *where, size_t n)
{
	struct tg_store *st;
	struct tg_error err;
	size_t warm = n / 10 + 1, i, s;
	double *v = calloc((S_N + 4) * n, sizeof(double)), dt[S_N];
	char run[32];

	if (!v)
		die("calloc", NULL);
	if (tg_store_open(where, &st, &err) < 0)
		die(where, &err);
	snprintf(run, sizeof(run), "%ld-%d", (long)time(NULL), (int)getpid());
	for (i = 0; i < warm + n; i++) {
		if (write_once(st, run, i, dt, &err) < 0)
			die("a write", &err);
		if (i < warm)
			continue;
		for (s = 0; s < S_N; s++)
			v[s * n + i - warm] = dt[s];
		/* the whole, and the three parts a write is seen as */
		v[S_N * n + i - warm] = dt[S_BEGIN] + dt[S_PENDING] + dt[S_HOLD];
		v[(S_N + 1) * n + i - warm] = dt[S_DECIDE];
		v[(S_N + 2) * n + i - warm] = dt[S_RETRY] + dt[S_GET] + dt[S_RECLAIM] + dt[S_FINISH];
		v[(S_N + 3) * n + i - warm] = 0;
		for (s = 0; s < S_N; s++)
			v[(S_N + 3) * n + i - warm] += dt[s];
	}
	tg_store_close(st);
	printf("gate: %zu writes held, approved and run (%zu more first, not counted), "
	       "%s store, µs\n", n, warm, tg_store_remote(where) ? "PostgreSQL" : "SQLite");
	printf("  %-24s %9s %9s\n", "", "p50", "p99");
	for (s = 0; s < S_N; s++)
		gate_row(step_name[s], v + s * n, n);
	gate_row("held (1-3)", v + S_N * n, n);
	gate_row("approval (4)", v + (S_N + 1) * n, n);
	gate_row("approved retry (5-8)", v + (S_N + 2) * n, n);
	gate_row("a write, all eight", v + (S_N + 3) * n, n);
	printf("total p50=%.1f p99=%.1f\n", pct(v + (S_N + 3) * n, n, 0.5),
	       pct(v + (S_N + 3) * n, n, 0.99));
	free(v);
	return 0;
}

/* ---- claims ----------------------------------------------------------------------- */

struct caller {
	struct tg_store *st;
	pthread_barrier_t *go;
	int replica, id;
	double secs;
	uint64_t claims, errors;
	char first_error[512];
};

static void *caller_main(void *arg)
{
	struct caller *c = arg;
	struct tg_idem_record rec;
	struct tg_error err;
	char k[96], fp[65];
	struct tg_idem_key key = { .principal = "agent", .tool = "bench.claim", .key = k,
				   .fingerprint = fp };
	double end;
	uint64_t i;

	memset(fp, 'a', 64);
	fp[64] = '\0';
	pthread_barrier_wait(c->go);
	end = now_us() + c->secs * 1e6;
	for (i = 0; now_us() < end; i++) {
		snprintf(k, sizeof(k), "c-%d-%d-%d-%llu", (int)getpid(), c->replica, c->id,
			 (unsigned long long)i);
		if (tg_store_idem_begin(c->st, &key, NOW(), TTL, &rec, &err) < 0 ||
		    rec.state != TG_IDEM_NEW) {
			if (!c->errors++)
				snprintf(c->first_error, sizeof(c->first_error), "%s",
					 rec.state ? "a fresh key is not new" : err.msg);
			tg_idem_record_release(&rec);
			continue;
		}
		c->claims++;
	}
	return NULL;
}

struct counts {
	uint64_t claims, errors;
	int ok;
};

/* A replica: its own opening, n callers; ready said on fd ready, started
 * when go reads end of file, its counts written to res, ended when quit
 * reads end of file. */
static void replica(const char *where, int idx, int n, double secs, int ready, int go,
		    int res, int quit)
{
	struct caller *c = calloc((size_t)n, sizeof(*c));
	pthread_t *th = calloc((size_t)n, sizeof(*th));
	struct counts out = { 0, 0, 0 };
	pthread_barrier_t bar;
	struct tg_store *st;
	struct tg_error err;
	char b;
	int i;

	if (!c || !th || tg_store_open(where, &st, &err) < 0) {
		fprintf(stderr, "bench/store: replica %d: %s\n", idx, c && th ? err.msg : "calloc");
		if (write(ready, "x", 1) == 1 && write(res, &out, sizeof(out)) == sizeof(out))
			_exit(1);
		_exit(1);
	}
	pthread_barrier_init(&bar, NULL, (unsigned)n + 1);
	for (i = 0; i < n; i++) {
		c[i] = (struct caller){ .st = st, .go = &bar, .replica = idx, .id = i, .secs = secs };
		if (pthread_create(&th[i], NULL, caller_main, &c[i]) != 0)
			_exit(1);
	}
	if (write(ready, "r", 1) != 1 || read(go, &b, 1) != 0)
		_exit(1);
	pthread_barrier_wait(&bar);
	out.ok = 1;
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		out.claims += c[i].claims;
		out.errors += c[i].errors;
		if (c[i].errors)
			fprintf(stderr, "bench/store: replica %d caller %d: %llu errors, the first: "
				"%s\n", idx, i, (unsigned long long)c[i].errors, c[i].first_error);
	}
	if (write(res, &out, sizeof(out)) != sizeof(out) || read(quit, &b, 1) < 0)
		_exit(1);
	tg_store_close(st);
	_exit(0);
}

/* CPU ticks: the machine's (/proc/stat: busy, of which irq and softirq,
 * and steal; iowait; all), the replicas' processes', and each of the
 * server's, by pid (the postmaster given and its children, or without
 * one every process named postgres): a backend that started between two
 * readings counts whole in the second. */
#define MAX_SERVER 1024

struct cpu {
	unsigned long long busy, irq, steal, iowait, all, replicas;
	int nserver;
	int server_pid[MAX_SERVER];
	unsigned long long server[MAX_SERVER];
};

/* utime + stime of process pid (all its threads); its name into comm and
 * its parent's pid into *ppid (both may be NULL). */
static unsigned long long proc_ticks(const char *pid, char *comm, size_t len, int *ppid)
{
	char path[64], buf[1024], *open_, *close_;
	unsigned long long ut = 0, st = 0;
	int parent = 0;
	FILE *f;
	size_t n;

	if (comm)
		comm[0] = '\0';
	if (ppid)
		*ppid = 0;
	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	open_ = strchr(buf, '(');
	close_ = strrchr(buf, ')');
	if (!open_ || !close_)
		return 0;
	if (comm)
		snprintf(comm, len, "%.*s", (int)(close_ - open_ - 1), open_ + 1);
	/* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt
	 * majflt cmajflt utime stime */
	if (sscanf(close_ + 2, "%*c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &parent,
		   &ut, &st) != 3)
		return 0;
	if (ppid)
		*ppid = parent;
	return ut + st;
}

static void cpu_read(struct cpu *c, const pid_t *kids, int nkids, int postmaster)
{
	/* user nice system idle iowait irq softirq steal */
	unsigned long long v[8] = { 0 };
	char comm[64], pid[24];
	struct dirent *e;
	DIR *d;
	FILE *f;
	int i;

	memset(c, 0, sizeof(*c));
	f = fopen("/proc/stat", "r");
	if (f && fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
			&v[3], &v[4], &v[5], &v[6], &v[7]) == 8) {
		for (i = 0; i < 8; i++)
			c->all += v[i];
		c->iowait = v[4];
		c->busy = c->all - v[3] - v[4];
		c->irq = v[5] + v[6];
		c->steal = v[7];
	}
	if (f)
		fclose(f);
	d = opendir("/proc");
	while (d && (e = readdir(d)) && c->nserver < MAX_SERVER) {
		unsigned long long t;
		pid_t self;
		int ppid;

		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		t = proc_ticks(e->d_name, comm, sizeof(comm), &ppid);
		self = (pid_t)strtol(e->d_name, NULL, 10);
		if (postmaster > 0 ? self != postmaster && ppid != postmaster
				   : strcmp(comm, "postgres") != 0)
			continue;
		c->server_pid[c->nserver] = (int)self;
		c->server[c->nserver++] = t;
	}
	if (d)
		closedir(d);
	for (i = 0; i < nkids; i++) {
		snprintf(pid, sizeof(pid), "%d", (int)kids[i]);
		c->replicas += proc_ticks(pid, NULL, 0, NULL);
	}
}

/* The server's ticks from a to b. */
static unsigned long long server_ticks(const struct cpu *a, const struct cpu *b)
{
	unsigned long long sum = 0;
	int i, j;

	for (i = 0; i < b->nserver; i++) {
		unsigned long long was = 0;

		for (j = 0; j < a->nserver; j++)
			if (a->server_pid[j] == b->server_pid[i])
				was = a->server[j];
		if (b->server[i] > was)
			sum += b->server[i] - was;
	}
	return sum;
}

/* What was used between a and b, in % of all the machine's CPUs. */
static void cpu_print(const struct cpu *a, const struct cpu *b, double secs)
{
	double hz = (double)sysconf(_SC_CLK_TCK), cpus = (double)sysconf(_SC_NPROCESSORS_ONLN);
	double all = (double)(b->all - a->all), whole = secs * hz * cpus;
	double server, replicas, busy, others;

	if (all <= 0)
		all = 1;
	server = 100.0 * (double)server_ticks(a, b) / whole;
	replicas = 100.0 * (double)(b->replicas - a->replicas) / whole;
	busy = 100.0 * (double)(b->busy - a->busy) / all;
	/* the rest of busy: other processes (a neighbour's), the kernel's threads */
	others = busy - server - replicas;
	printf("  cpu (%% of %d CPUs): server=%.0f%% replicas=%.0f%% others=%.0f%% busy=%.0f%% "
	       "irq=%.0f%% steal=%.0f%% iowait=%.0f%%\n", (int)cpus, server, replicas,
	       others > 0 ? others : 0, busy, 100.0 * (double)(b->irq - a->irq) / all,
	       100.0 * (double)(b->steal - a->steal) / all,
	       100.0 * (double)(b->iowait - a->iowait) / all);
}

static int run_claims(const char *where, int nrep, int ncall, double secs, int postmaster)
{
	int ready[2], go[2], res[2], quit[2], i, ok = 1;
	pid_t kids[MAX_REPLICAS];
	struct counts total = { 0, 0, 1 }, one;
	static struct cpu a, b;
	double t0, t1;
	char x;

	if (nrep < 1 || nrep > MAX_REPLICAS || ncall < nrep || ncall > MAX_CALLERS || secs <= 0) {
		fprintf(stderr, "bench/store: claims: 1 to %d replicas, at least as many callers "
			"(at most %d), a time\n", MAX_REPLICAS, MAX_CALLERS);
		return 2;
	}
	if (pipe(ready) < 0 || pipe(go) < 0 || pipe(res) < 0 || pipe(quit) < 0)
		die("pipe", NULL);
	fflush(stdout);
	for (i = 0; i < nrep; i++) {
		kids[i] = fork();
		if (kids[i] < 0)
			die("fork", NULL);
		if (kids[i] == 0) {
			close(ready[0]);
			close(go[1]);
			close(res[0]);
			close(quit[1]);
			replica(where, i, ncall / nrep + (i < ncall % nrep), secs, ready[1], go[0],
				res[1], quit[0]);
		}
	}
	close(ready[1]);
	close(go[0]);
	close(res[1]);
	close(quit[0]);
	for (i = 0; i < nrep; i++)
		if (read(ready[0], &x, 1) != 1 || x != 'r')
			ok = 0;
	cpu_read(&a, kids, nrep, postmaster);
	t0 = now_us();
	close(go[1]); /* they start */
	for (i = 0; i < nrep; i++) {
		if (read(res[0], &one, sizeof(one)) != sizeof(one) || !one.ok)
			ok = 0;
		total.claims += one.claims;
		total.errors += one.errors;
	}
	t1 = now_us();
	cpu_read(&b, kids, nrep, postmaster);
	close(quit[1]); /* they end */
	for (i = 0; i < nrep; i++)
		waitpid(kids[i], NULL, 0);
	close(ready[0]);
	close(res[0]);
	if (!ok) {
		fprintf(stderr, "bench/store: claims: a replica failed\n");
		return 1;
	}
	printf("claims: %d replicas, %d callers, %.1f s, %s store\n", nrep, ncall, secs,
	       tg_store_remote(where) ? "PostgreSQL" : "SQLite");
	printf("claims rate=%.0f n=%llu errors=%llu\n", (double)total.claims / secs,
	       (unsigned long long)total.claims, (unsigned long long)total.errors);
	cpu_print(&a, &b, (t1 - t0) / 1e6);
	return total.errors ? 1 : 0;
}

/* ---- the floors ------------------------------------------------------------------ */

static void floor_row(const char *what, double *v, size_t n)
{
	printf("%s p50=%.1f p99=%.1f\n", what, pct(v, n, 0.5), pct(v, n, 0.99));
}

static PGresult *pq_ok(PGconn *c, PGresult *r)
{
	ExecStatusType s = PQresultStatus(r);

	if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) {
		fprintf(stderr, "bench/store: ping: %s", PQerrorMessage(c));
		exit(1);
	}
	return r;
}

static int run_ping(const char *url, size_t n)
{
	double *v = calloc(n, sizeof(*v)), t;
	PGconn *c = PQconnectdb(url);
	size_t i;

	if (!v)
		die("calloc", NULL);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "bench/store: ping: %s", PQerrorMessage(c));
		return 1;
	}
	PQclear(pq_ok(c, PQexec(c, "CREATE TABLE IF NOT EXISTS bench_floor (k bigint PRIMARY KEY, "
				 "v text)")));
	for (i = 0; i < n + n / 10; i++) {
		t = now_us();
		PQclear(pq_ok(c, PQexec(c, "SELECT 1")));
		if (i >= n / 10)
			v[i - n / 10] = now_us() - t;
	}
	floor_row("ping", v, n);
	for (i = 0; i < n + n / 10; i++) {
		char sql[128];

		snprintf(sql, sizeof(sql), "INSERT INTO bench_floor VALUES (%zu, repeat('x', 200))", i);
		t = now_us();
		PQclear(pq_ok(c, PQexec(c, sql)));
		if (i >= n / 10)
			v[i - n / 10] = now_us() - t;
	}
	floor_row("commit", v, n);
	PQfinish(c);
	free(v);
	return 0;
}

static int run_fsync(const char *dir, size_t n)
{
	double *v = calloc(n, sizeof(*v)), t;
	char path[4096], page[4096];
	size_t i;
	int fd;

	if (!v)
		die("calloc", NULL);
	snprintf(path, sizeof(path), "%s/bench-fsync", dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die(path, NULL);
	for (i = 0; i < n + n / 10; i++) {
		memset(page, (int)('a' + i % 26), sizeof(page));
		t = now_us();
		if (pwrite(fd, page, sizeof(page), 0) != (ssize_t)sizeof(page) || fsync(fd) < 0)
			die(path, NULL);
		if (i >= n / 10)
			v[i - n / 10] = now_us() - t;
	}
	close(fd);
	unlink(path);
	floor_row("fsync", v, n);
	free(v);
	return 0;
}

static void usage(void) __attribute__((noreturn));

/* The number s says, within lo and hi, else the usage. */
static double number(const char *s, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || v < lo || v > hi) {
		fprintf(stderr, "bench/store: %s: not a number from %g to %g\n", s, lo, hi);
		exit(2);
	}
	return v;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench/store gate WHERE [-n N]\n"
			"       bench/store claims WHERE [-r REPLICAS] [-c CALLERS] [-t SECONDS] [-s PID]\n"
			"       bench/store ping URL [-n N]\n"
			"       bench/store fsync DIR [-n N]\n"
			"WHERE: a state directory (SQLite) or a postgres:// URL\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *mode, *where;
	long n = 1000, reps = 1, callers = 1, postmaster = 0;
	double secs = 3;
	int o;

	if (argc < 3)
		usage();
	mode = argv[1];
	where = argv[2];
	optind = 3;
	while ((o = getopt(argc, argv, "n:r:c:t:s:")) != -1) {
		switch (o) {
		case 'n': n = (long)number(optarg, 1, 1e8); break;
		case 'r': reps = (long)number(optarg, 1, MAX_REPLICAS); break;
		case 'c': callers = (long)number(optarg, 1, MAX_CALLERS); break;
		case 't': secs = number(optarg, 0.1, 3600); break;
		case 's': postmaster = (long)number(optarg, 0, 1 << 30); break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	signal(SIGPIPE, SIG_IGN);
	tg_log_set(log_stderr, NULL);
	if (strcmp(mode, "gate") == 0)
		return run_gate(where, (size_t)n);
	if (strcmp(mode, "claims") == 0)
		return run_claims(where, (int)reps, (int)callers, secs, (int)postmaster);
	if (strcmp(mode, "ping") == 0)
		return run_ping(where, (size_t)n);
	if (strcmp(mode, "fsync") == 0)
		return run_fsync(where, (size_t)n);
	usage();
}
