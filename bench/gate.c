/*
 * bench/gate: what the approval gate adds to a call (make bench-gate).
 *
 * One process, one run, the same builtin tool (echo) behind two contracts:
 * a read and a write. Reported, each as median and p99 microseconds:
 *
 *   read, no policy     tg_gate_call of the read tool: the pipeline alone
 *   read, no anomalies  the same with the anomaly rules off (serve
 *                       --anomalies off): what looking at the arguments
 *                       costs, for {"n":1} and for 1 KiB of prose
 *   read, gated         the same with the store attached and scopes checked:
 *                       a read skips dedupe and approval, so this should cost
 *                       what the scope check costs and nothing more
 *   read, audited       the first with its record in an audit log (in the
 *                       state directory), synced before the call returns:
 *                       one write and one fdatasync, the audit's price
 *   read, traced        the first with its spans (execute_tool, validate)
 *                       exported by OTLP/HTTP to a collector on loopback (a
 *                       thread here that takes them): what tracing costs a
 *                       call, the export being off its path
 *   write: held         a new key: the dry run, the key claimed, the ticket
 *                       and the key's answer committed (two transactions)
 *   write: decide       a person's approval (one transaction)
 *   write: run          the retry that runs it: key reclaimed, executed, its
 *                       result and the ticket's outcome committed
 *   write: replay       a later retry, answered from the stored result
 *
 * and, as the peer in the same run, one INSERT committed by SQLite in WAL
 * mode with synchronous=FULL, the durability every gate transaction pays:
 * the write path's cost is printed in those commits.
 *
 *     bench/gate [--calls N] [--writes N] [--state DIR]
 *
 * The state directory (default: a new one under /tmp) decides which disk
 * the commits sync to; put it where the gateway's would be.
 */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "toolgate/audit.h"
#include "toolgate/catalog.h"
#include "toolgate/gate.h"
#include "toolgate/store.h"
#include "toolgate/trace.h"

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

static double pct(double *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[(size_t)((double)(n - 1) * p)];
}

static void row(const char *what, double *v, size_t n, double unit)
{
	double p50 = pct(v, n, 0.5), p99 = pct(v, n, 0.99);

	printf("  %-22s %9.1f %9.1f", what, p50, p99);
	if (unit > 0)
		printf("   %5.1f commits", p50 / unit);
	printf("\n");
}

static int write_file(const char *dir, const char *name, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

#define CONTRACT(name, authority, extra)                                                         \
	"{\"name\":\"" name "\",\"version\":\"1.0.0\",\"description\":\"bench\","                \
	"\"owner\":{\"team\":\"t\",\"contact\":\"c\"},\"authority\":\"" authority "\","         \
	"\"input_schema\":{\"type\":\"object\",\"properties\":{\"n\":{\"type\":\"integer\"}}},"  \
	"\"executor\":{\"kind\":\"builtin\",\"name\":\"echo\"}" extra "}"

/* One call; is_error into *failed. */
static double timed_call(struct tg_gate *g, struct tg_call *call, int *failed)
{
	struct tg_call_result r;
	struct tg_error err;
	double t0 = now_us(), dt;

	if (tg_gate_call(g, call, &r, &err) < 0) {
		fprintf(stderr, "bench/gate: %s\n", err.msg);
		exit(1);
	}
	dt = now_us() - t0;
	*failed = r.is_error;
	tg_call_result_release(&r);
	return dt;
}

/* The ticket a held call's answer names. */
static int ticket_of(struct tg_gate *g, struct tg_call *call, char *id)
{
	struct tg_call_result r;
	struct tg_error err;
	const char *at;

	if (tg_gate_call(g, call, &r, &err) < 0 || !r.structured_json)
		return -1;
	at = strstr(r.structured_json, "\"ticket\":\"");
	if (at)
		snprintf(id, 33, "%.32s", at + 10);
	tg_call_result_release(&r);
	return at ? 0 : -1;
}

/* The peer: one INSERT per transaction, WAL, synchronous=FULL. */
static void sqlite_commits(const char *dir, double *v, size_t n)
{
	char path[4096];
	sqlite3 *db;
	sqlite3_stmt *s;
	size_t i;

	snprintf(path, sizeof(path), "%s/peer.db", dir);
	if (sqlite3_open(path, &db) != SQLITE_OK ||
	    sqlite3_exec(db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; CREATE TABLE t "
			 "(k TEXT PRIMARY KEY, v BLOB)", NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?1, randomblob(200))", -1, &s, NULL) !=
		    SQLITE_OK) {
		fprintf(stderr, "bench/gate: sqlite: %s\n", sqlite3_errmsg(db));
		exit(1);
	}
	for (i = 0; i < n; i++) {
		char k[32];
		double t0 = now_us();

		snprintf(k, sizeof(k), "k%zu", i);
		sqlite3_bind_text(s, 1, k, -1, SQLITE_TRANSIENT);
		if (sqlite3_step(s) != SQLITE_DONE) {
			fprintf(stderr, "bench/gate: sqlite: %s\n", sqlite3_errmsg(db));
			exit(1);
		}
		sqlite3_reset(s);
		v[i] = now_us() - t0;
	}
	sqlite3_finalize(s);
	sqlite3_close(db);
}

/* A collector: every request on every connection answered 200, its
 * body read and dropped. */
static void *collector(void *arg)
{
	int lfd = *(int *)arg, fd;
	static char buf[1 << 16];

	while ((fd = accept(lfd, NULL, NULL)) >= 0) {
		size_t have = 0, skip = 0;
		ssize_t r;

		for (;;) {
			char *end, *cl;

			buf[have] = '\0';
			end = skip ? NULL : strstr(buf, "\r\n\r\n");
			if (end) {
				/* the headers: what follows is the body, to skip */
				size_t head = (size_t)(end + 4 - buf);

				cl = strcasestr(buf, "Content-Length:");
				skip = (cl ? strtoul(cl + 15, NULL, 10) : 0) + 1;
				memmove(buf, buf + head, have - head);
				have -= head;
			}
			if (skip) {
				size_t n = have < skip - 1 ? have : skip - 1;

				memmove(buf, buf + n, have - n);
				have -= n;
				skip -= n;
				if (skip == 1) {
					skip = 0;
					if (write(fd, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
						  38) != 38)
						break;
					continue;
				}
			}
			if (have == sizeof(buf) - 1)
				break; /* headers that long: not a client of ours */
			r = read(fd, buf + have, sizeof(buf) - 1 - have);
			if (r <= 0)
				break;
			have += (size_t)r;
		}
		close(fd);
	}
	return NULL;
}

/* A tracer exporting to a collector thread on loopback. */
static struct tg_tracer *traced(struct tg_error *err)
{
	static int lfd;
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t al = sizeof(a);
	struct tg_tracer_options o = { 0 };
	struct tg_tracer *t;
	pthread_t th;
	char url[64];

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(lfd, 8) < 0 ||
	    getsockname(lfd, (struct sockaddr *)&a, &al) < 0 ||
	    pthread_create(&th, NULL, collector, &lfd) != 0) {
		tg_error_set(err, TG_ERR_SYSTEM, "no collector");
		return NULL;
	}
	pthread_detach(th);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/v1/traces", ntohs(a.sin_port));
	o.endpoint = url;
	return tg_tracer_new(&o, &t, err) == 0 ? t : NULL;
}

int main(int argc, char **argv)
{
	size_t calls = 20000, writes = 300, i;
	char dir[] = "/tmp/tg-bench-gate-XXXXXX", cat_dir[4200], state[4200], cmd[4300];
	const char *state_arg = NULL;
	struct tg_catalog *cat;
	struct tg_gate *plain, *gated, *audited, *tgate, *quiet;
	struct tg_gate_options aopts = { 0 }, topts = { 0 }, qopts = { 0 }, sopts = { 0 };
	struct tg_tracer_stats ts;
	struct tg_audit *audit = NULL;
	struct tg_store *st;
	struct tg_error err;
	char prose[1200];
	size_t plen;
	double *a, *b, *c, *d, *e, *pa, *pe, *held, *decide, *run, *replay, *peer, commit;
	int failed = 0, f, k;

	for (k = 1; k + 1 < argc; k += 2) {
		if (strcmp(argv[k], "--calls") == 0)
			calls = strtoul(argv[k + 1], NULL, 10);
		else if (strcmp(argv[k], "--writes") == 0)
			writes = strtoul(argv[k + 1], NULL, 10);
		else if (strcmp(argv[k], "--state") == 0)
			state_arg = argv[k + 1];
	}
	if (calls < 10 || writes < 10 || !mkdtemp(dir)) {
		fprintf(stderr, "usage: bench/gate [--calls N>=10] [--writes N>=10] [--state DIR]\n");
		return 2;
	}
	snprintf(cat_dir, sizeof(cat_dir), "%s/catalog", dir);
	snprintf(state, sizeof(state), "%s", state_arg ? state_arg : dir);
	if (state_arg == NULL)
		strcat(state, "/state");
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", cat_dir);
	if (system(cmd) != 0 ||
	    write_file(cat_dir, "r.json", CONTRACT("bench.read", "read", "")) < 0 ||
	    write_file(cat_dir, "w.json", CONTRACT("bench.write", "write",
						   ",\"dry_run\":\"supported\",\"compensation\":"
						   "{\"irreversible\":\"bench\"}")) < 0 ||
	    tg_catalog_load_dir(cat_dir, NULL, &cat, &err) < 0 ||
	    tg_gate_new(cat, NULL, &plain, &err) < 0 || tg_store_open(state, &st, &err) < 0 ||
	    ((sopts.store = st), (sopts.ticket_ttl = 3600),
	     tg_gate_new(cat, &sopts, &gated, &err)) < 0 ||
	    (snprintf(cmd, sizeof(cmd), "%s/audit.log", state),
	     tg_audit_open(cmd, 0, &audit, &err)) < 0 ||
	    ((aopts.audit = audit), tg_gate_new(cat, &aopts, &audited, &err)) < 0 ||
	    !(topts.tracer = traced(&err)) || tg_gate_new(cat, &topts, &tgate, &err) < 0 ||
	    ((qopts.anomalies = TG_ANOMALY_OFF), tg_gate_new(cat, &qopts, &quiet, &err)) < 0) {
		fprintf(stderr, "bench/gate: %s\n", err.msg);
		return 1;
	}
	a = calloc(calls, sizeof(*a));
	b = calloc(calls, sizeof(*b));
	c = calloc(calls, sizeof(*c));
	d = calloc(calls, sizeof(*d));
	e = calloc(calls, sizeof(*e));
	pa = calloc(calls, sizeof(*pa));
	pe = calloc(calls, sizeof(*pe));
	held = calloc(writes, sizeof(*held));
	decide = calloc(writes, sizeof(*decide));
	run = calloc(writes, sizeof(*run));
	replay = calloc(writes, sizeof(*replay));
	peer = calloc(writes, sizeof(*peer));
	if (!a || !b || !c || !d || !e || !pa || !pe || !held || !decide || !run || !replay || !peer)
		return 1;

	/* 1 KiB of prose, as a note or a search a model sends */
	plen = (size_t)snprintf(prose, sizeof(prose), "{\"n\":1,\"text\":\"");
	while (plen < 1024 + 16)
		plen += (size_t)snprintf(prose + plen, sizeof(prose) - plen, "%s",
					 "Please find the invoices from last March that were paid "
					 "late, and list each with its customer and amount. ");
	plen += (size_t)snprintf(prose + plen, sizeof(prose) - plen, "\"}");
	/* reads, interleaved so that both see the same machine */
	for (i = 0; i < calls; i++) {
		struct tg_call r1 = { .principal = "agent", .tool = "bench.read",
				      .arguments = "{\"n\":1}", .arguments_len = 7,
				      .cancel_fd = -1 };
		struct tg_call r2 = r1;

		r2.scopes = "bench.*:read bench.write:write";
		a[i] = timed_call(plain, &r1, &f);
		failed |= f;
		b[i] = timed_call(gated, &r2, &f);
		failed |= f;
		c[i] = timed_call(audited, &r1, &f);
		failed |= f;
		d[i] = timed_call(tgate, &r1, &f);
		failed |= f;
		e[i] = timed_call(quiet, &r1, &f);
		failed |= f;
		r1.arguments = prose;
		r1.arguments_len = plen;
		pa[i] = timed_call(plain, &r1, &f);
		failed |= f;
		pe[i] = timed_call(quiet, &r1, &f);
		failed |= f;
	}
	/* approved writes, phase by phase */
	for (i = 0; i < writes; i++) {
		char key[64], id[33];
		struct tg_call w = { .principal = "agent", .tool = "bench.write",
				     .arguments = "{\"n\":2}", .arguments_len = 7, .cancel_fd = -1,
				     .scopes = "bench.write:write", .idempotency_key = key };
		double t0;

		snprintf(key, sizeof(key), "bench-%zu-%ld", i, (long)getpid());
		t0 = now_us();
		if (ticket_of(gated, &w, id) < 0) {
			fprintf(stderr, "bench/gate: the write was not held\n");
			return 1;
		}
		held[i] = now_us() - t0;
		t0 = now_us();
		if (tg_store_ticket_decide(st, id, "alice", 1, NULL, (int64_t)time(NULL), &err) < 0) {
			fprintf(stderr, "bench/gate: %s\n", err.msg);
			return 1;
		}
		decide[i] = now_us() - t0;
		run[i] = timed_call(gated, &w, &f);
		failed |= f;
		replay[i] = timed_call(gated, &w, &f);
		failed |= f;
	}
	sqlite_commits(dir, peer, writes);
	commit = pct(peer, writes, 0.5);

	printf("bench/gate: %zu reads each way, %zu approved writes; microseconds\n", calls, writes);
	printf("  %-22s %9s %9s\n", "", "p50", "p99");
	row("read, no policy", a, calls, 0);
	row("read, no anomalies", e, calls, 0);
	printf("  %-22s %+9.1f %+9.1f   (%.2fx)\n", "read: anomalies add", pct(a, calls, 0.5) -
	       pct(e, calls, 0.5), pct(a, calls, 0.99) - pct(e, calls, 0.99),
	       pct(a, calls, 0.5) / pct(e, calls, 0.5));
	row("1 KiB prose", pa, calls, 0);
	row("1 KiB, no anomalies", pe, calls, 0);
	printf("  %-22s %+9.1f %+9.1f   (%.2fx)\n", "1 KiB: anomalies add", pct(pa, calls, 0.5) -
	       pct(pe, calls, 0.5), pct(pa, calls, 0.99) - pct(pe, calls, 0.99),
	       pct(pa, calls, 0.5) / pct(pe, calls, 0.5));
	row("read, gated", b, calls, 0);
	printf("  %-22s %+9.1f %+9.1f   (%.2fx)\n", "read: gate adds", pct(b, calls, 0.5) -
	       pct(a, calls, 0.5), pct(b, calls, 0.99) - pct(a, calls, 0.99),
	       pct(b, calls, 0.5) / pct(a, calls, 0.5));
	row("read, audited", c, calls, 0);
	printf("  %-22s %+9.1f %+9.1f   (%.2fx)\n", "read: audit adds", pct(c, calls, 0.5) -
	       pct(a, calls, 0.5), pct(c, calls, 0.99) - pct(a, calls, 0.99),
	       pct(c, calls, 0.5) / pct(a, calls, 0.5));
	row("read, traced", d, calls, 0);
	printf("  %-22s %+9.1f %+9.1f   (%.2fx)\n", "read: tracing adds", pct(d, calls, 0.5) -
	       pct(a, calls, 0.5), pct(d, calls, 0.99) - pct(a, calls, 0.99),
	       pct(d, calls, 0.5) / pct(a, calls, 0.5));
	row("write: held", held, writes, commit);
	row("write: decide", decide, writes, commit);
	row("write: run", run, writes, commit);
	row("write: replay", replay, writes, commit);
	row("peer: sqlite commit", peer, writes, commit);
	printf("  an approved write's gate work (held + run): %.1f us = %.1f fsync'd SQLite "
	       "commits\n", pct(held, writes, 0.5) + pct(run, writes, 0.5),
	       (pct(held, writes, 0.5) + pct(run, writes, 0.5)) / commit);
	tg_gate_free(plain);
	tg_gate_free(gated);
	tg_gate_free(audited);
	tg_gate_free(tgate);
	tg_gate_free(quiet);
	tg_tracer_get_stats(topts.tracer, &ts);
	tg_tracer_free(topts.tracer);
	printf("  spans: %llu ended, %llu exported in %llu requests, %llu dropped\n",
	       (unsigned long long)ts.ended, (unsigned long long)ts.exported,
	       (unsigned long long)ts.exports, (unsigned long long)ts.dropped);
	tg_audit_close(audit);
	tg_store_close(st);
	tg_catalog_free(cat);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench/gate: could not remove %s\n", dir);
	if (failed) {
		fprintf(stderr, "bench/gate: a call failed\n");
		return 1;
	}
	return 0;
}
