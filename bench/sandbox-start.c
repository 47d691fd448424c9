/*
 * bench/sandbox-start: what a sandbox costs to start, run and reap a
 * command, against the same command without a sandbox and under
 * bubblewrap, measured side by side in one run.
 *
 *   bare     posix_spawn of the command from this program
 *   library  tg_sandbox_run() from this program (strict tier)
 *   cli      posix_spawn of `toolgate run -- CMD`
 *   bwrap    posix_spawn of bubblewrap with equivalent isolation: all
 *            namespaces, --die-with-parent --new-session --cap-drop ALL,
 *            read-only binds, --proc, --dev, --tmpfs /tmp, --clearenv and
 *            toolgate's own seccomp policy (kill variant) as its filter
 *   warm     tg_sandbox_pool_run(): a sandbox of the warm pool, made ahead
 *            (strict tier); for Python, the zygote: an interpreter started
 *            ahead in its fresh sandbox, standard library imported, that
 *            runs the snippet it reads on stdin
 *
 * Then a program's own start, no sandbox: `toolgate --version` against
 * `bwrap --version` and /bin/true, which is what the command pays before
 * it does anything (its shared libraries loaded and relocated).
 *
 * Then throughput: sandboxes per second, one caller after another and two
 * callers at once, for bubblewrap, cold runs and the warm pool, in rounds
 * of each in turn.
 *
 * The contenders are interleaved run by run (A B C D A B C D ...) because
 * these machines drift. Not a test: it asserts nothing; it prints median,
 * p95 and p99 in milliseconds and the ratios. docs/BENCHMARKS.md holds the
 * latest figures.
 *
 * usage: sandbox-start [-n RUNS] [-t TOOLGATE] [-b BWRAP]
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"
#include "toolgate/sandbox.h"

extern char **environ;

enum { BARE, LIBRARY, CLI, BWRAP, WARM, NCONT };
#define ROUNDS 5 /* of the throughput phase */
static const char *const cont_name[NCONT] = { "bare", "library", "cli", "bwrap", "warm" };

/* The zygote: imports what snippets usually reach for, then runs one;
 * and ends without tearing its modules down one by one (the sandbox goes
 * with it anyway). */
static char *zygote_argv[] = {
	"/usr/bin/python3", "-c",
	"import sys, os, io, json, re, math, random, string, textwrap, datetime, decimal, "
	"fractions, statistics, collections, itertools, functools, base64, hashlib\n"
	"exec(compile(sys.stdin.read(), '<snippet>', 'exec'), {'__name__': '__main__'})\n"
	"sys.stdout.flush(); sys.stderr.flush(); os._exit(0)\n",
	NULL
};

struct workload {
	const char *name;
	char *argv[4];
};

static const struct workload workloads[] = {
	{ "/bin/true", { "/bin/true", NULL } },
	{ "python3 -c pass", { "/usr/bin/python3", "-c", "pass", NULL } },
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int spawn_wait(char *const argv[], posix_spawn_file_actions_t *fa)
{
	pid_t pid;
	int st;

	if (posix_spawn(&pid, argv[0], fa, NULL, argv, environ) != 0)
		return -1;
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* Until the pool is full and idle, so that its work is not timed with
 * another contender's. */
static void pool_settle(struct tg_sandbox_pool *p)
{
	struct tg_sandbox_pool_stats st;
	int i;

	for (i = 0; i < 20000; i++) {
		tg_sandbox_pool_get_stats(p, &st);
		if (st.ready == st.size && !st.refilling && !st.spent)
			return;
		usleep(200);
	}
}

static int warm_run(struct tg_sandbox_pool *p, struct tg_sandbox_spec *s, int stdin_fd)
{
	struct tg_sandbox_result *r = NULL;
	struct tg_error err;
	int rc;

	if (stdin_fd >= 0) {
		lseek(stdin_fd, 0, SEEK_SET);
		tg_sandbox_spec_set_stdin_fd(s, stdin_fd);
	}
	rc = tg_sandbox_pool_run(p, s, &r, &err) < 0		? -1
	     : r->reason == TG_REASON_OK && r->exited ? r->exit_code
							  : -1;
	if (rc != 0 && r)
		fprintf(stderr, "warm: %s %s\n", tg_sandbox_reason_name(r->reason), r->message);
	tg_sandbox_result_free(r);
	return rc;
}

/* ---- throughput --------------------------------------------------------------- */

struct tp {
	int mode; /* BWRAP, LIBRARY or WARM */
	char **bw;
	int sfd[2];       /* bubblewrap's seccomp programs: this caller's copies */
	char *bwv[64];
	char fdargs[2][16];
	posix_spawn_file_actions_t *fa;
	struct tg_sandbox_spec *spec;
	struct tg_sandbox_pool *pool;
	int runs, failed;
};

static void *tp_main(void *arg)
{
	struct tp *t = arg;
	struct tg_sandbox_result *r;
	struct tg_error err;
	int i, rc;

	for (i = 0; i < t->runs; i++) {
		if (t->mode == BWRAP) {
			lseek(t->sfd[0], 0, SEEK_SET);
			lseek(t->sfd[1], 0, SEEK_SET);
			rc = spawn_wait(t->bwv, t->fa);
		} else {
			r = NULL;
			rc = (t->mode == WARM ? tg_sandbox_pool_run(t->pool, t->spec, &r, &err)
					      : tg_sandbox_run(t->spec, &r, &err)) < 0
				     ? -1
				     : r->reason == TG_REASON_OK ? r->exit_code : -1;
			tg_sandbox_result_free(r);
		}
		t->failed += rc != 0;
	}
	return NULL;
}

/* Sandboxes per second of mode, with callers at once, runs in all. */
static double throughput(struct tp *base, int callers, int runs)
{
	pthread_t th[2];
	struct tp t[2];
	double t0;
	int i;

	if (base->pool) {
		struct tg_sandbox_pool_stats st;
		struct tp drain = *base;

		/* from a steady state, not from a full pool: the ready ones are
		 * taken, untimed, and the refill is at work when the clock starts */
		pool_settle(base->pool);
		tg_sandbox_pool_get_stats(base->pool, &st);
		drain.runs = (int)st.size;
		drain.failed = 0;
		tp_main(&drain);
		base->failed += drain.failed;
	}
	for (i = 0; i < callers; i++) {
		int k, s = 0;

		t[i] = *base;
		t[i].runs = runs / callers;
		/* each caller reads its own copies of the seccomp programs */
		for (k = 0; k < 2; k++) {
			char buf[1 << 16];
			ssize_t n = pread(base->sfd[k], buf, sizeof(buf), 0);

			t[i].sfd[k] = memfd_create("tg-bench-seccomp", 0);
			if (n <= 0 || t[i].sfd[k] < 0 || write(t[i].sfd[k], buf, (size_t)n) != n)
				return -1;
			snprintf(t[i].fdargs[k], sizeof(t[i].fdargs[k]), "%d", t[i].sfd[k]);
		}
		for (k = 0; base->bw[k]; k++) {
			t[i].bwv[k] = base->bw[k];
			if (k && strcmp(base->bw[k - 1], "--add-seccomp-fd") == 0)
				t[i].bwv[k] = t[i].fdargs[s++];
		}
		t[i].bwv[k] = NULL;
	}
	t0 = now_ms();
	for (i = 0; i < callers; i++)
		pthread_create(&th[i], NULL, tp_main, &t[i]);
	for (i = 0; i < callers; i++) {
		pthread_join(th[i], NULL);
		base->failed += t[i].failed;
		close(t[i].sfd[0]);
		close(t[i].sfd[1]);
	}
	return runs / ((now_ms() - t0) / 1000.0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(double *v, int n, double p)
{
	int i = (int)ceil(p / 100.0 * n) - 1;

	return v[i < 0 ? 0 : i >= n ? n - 1 : i];
}

int main(int argc, char **argv)
{
	char toolgate[PATH_MAX], self[PATH_MAX];
	const char *bwrap = "/usr/bin/bwrap";
	posix_spawn_file_actions_t fa;
	struct tg_sandbox_spec *spec[2], *warm_spec[2];
	struct tg_sandbox_pool *pool[2];
	struct tg_error err;
	int runs = 500, opt, w, c, i, seccomp_fd, ioctl_fd, snippet_fd;
	double *t[2][NCONT];
	char fdarg[16], fdarg2[16], *bw_true[64];

	snprintf(self, sizeof(self), "%s", argv[0]);
	snprintf(toolgate, sizeof(toolgate), "%s/../toolgate", dirname(self));
	while ((opt = getopt(argc, argv, "n:t:b:")) != -1) {
		switch (opt) {
		case 'n': runs = atoi(optarg); break;
		case 't': snprintf(toolgate, sizeof(toolgate), "%s", optarg); break;
		case 'b': bwrap = optarg; break;
		default:
			fprintf(stderr, "usage: sandbox-start [-n RUNS] [-t TOOLGATE] [-b BWRAP]\n");
			return 2;
		}
	}
	if (runs < 5 || access(toolgate, X_OK) < 0 || access(bwrap, X_OK) < 0) {
		fprintf(stderr, "sandbox-start: need RUNS >= 5, %s and %s\n", toolgate, bwrap);
		return 2;
	}

	/* bubblewrap gets toolgate's policy as raw BPF, kill instead of notify
	 * (it has no listener), plus the stacked ioctl filter. */
	seccomp_fd = memfd_create("tg-bench-seccomp", 0);
	ioctl_fd = memfd_create("tg-bench-ioctl", 0);
	if (seccomp_fd < 0 || ioctl_fd < 0 ||
	    sandbox_seccomp_export(seccomp_fd, SB_SECCOMP_MAIN_KILL, &err) < 0 ||
	    sandbox_seccomp_export(ioctl_fd, SB_SECCOMP_IOCTL, &err) < 0) {
		fprintf(stderr, "sandbox-start: seccomp export: %s\n", err.msg);
		return 1;
	}
	snprintf(fdarg, sizeof(fdarg), "%d", seccomp_fd);
	snprintf(fdarg2, sizeof(fdarg2), "%d", ioctl_fd);

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);

	/* the snippet the zygote runs: the same as python3 -c pass */
	snippet_fd = memfd_create("tg-bench-snippet", 0);
	if (snippet_fd < 0 || write(snippet_fd, "pass\n", 5) != 5)
		return 1;
	for (w = 0; w < 2; w++) {
		if (tg_sandbox_spec_new(TG_TIER_STRICT, &spec[w], &err) < 0 ||
		    tg_sandbox_spec_new(TG_TIER_STRICT, &warm_spec[w], &err) < 0 ||
		    tg_sandbox_spec_set_argv(spec[w], w ? 3 : 1, workloads[w].argv, &err) < 0 ||
		    tg_sandbox_spec_set_argv(warm_spec[w], w ? 3 : 1,
					     w ? zygote_argv : workloads[w].argv, &err) < 0 ||
		    tg_sandbox_pool_new(warm_spec[w], w ? 2 : 4, w, &pool[w], &err) < 0) {
			fprintf(stderr, "sandbox-start: %s\n", err.msg);
			return 1;
		}
		for (c = 0; c < NCONT; c++)
			t[w][c] = calloc((size_t)runs, sizeof(double));
	}

	printf("sandbox-start: %d runs per contender, interleaved\n", runs);
	for (w = 0; w < 2; w++) {
		char *cli_argv[8] = { toolgate, "run", "--", NULL };
		char *bw[64];
		int k = 0, j;

		for (j = 0; workloads[w].argv[j]; j++)
			cli_argv[3 + j] = workloads[w].argv[j];
		cli_argv[3 + j] = NULL;
		bw[k++] = (char *)bwrap;
		bw[k++] = "--unshare-all";
		bw[k++] = "--die-with-parent";
		bw[k++] = "--new-session";
		bw[k++] = "--cap-drop";
		bw[k++] = "ALL";
		bw[k++] = "--ro-bind"; bw[k++] = "/usr"; bw[k++] = "/usr";
		bw[k++] = "--symlink"; bw[k++] = "usr/bin"; bw[k++] = "/bin";
		bw[k++] = "--symlink"; bw[k++] = "usr/sbin"; bw[k++] = "/sbin";
		bw[k++] = "--symlink"; bw[k++] = "usr/lib"; bw[k++] = "/lib";
		bw[k++] = "--symlink"; bw[k++] = "usr/lib64"; bw[k++] = "/lib64";
		bw[k++] = "--ro-bind"; bw[k++] = "/etc/ld.so.cache"; bw[k++] = "/etc/ld.so.cache";
		bw[k++] = "--proc"; bw[k++] = "/proc";
		bw[k++] = "--dev"; bw[k++] = "/dev";
		bw[k++] = "--tmpfs"; bw[k++] = "/tmp";
		bw[k++] = "--clearenv";
		bw[k++] = "--add-seccomp-fd"; bw[k++] = fdarg2;
		bw[k++] = "--add-seccomp-fd"; bw[k++] = fdarg;
		bw[k++] = "--";
		for (j = 0; workloads[w].argv[j]; j++)
			bw[k++] = workloads[w].argv[j];
		bw[k] = NULL;

		if (w == 0)
			memcpy(bw_true, bw, sizeof(bw));
		for (i = 0; i < runs; i++) {
			for (c = 0; c < NCONT; c++) {
				struct tg_sandbox_result *r = NULL;
				double t0;
				int rc;

				pool_settle(pool[w]);
				t0 = now_ms();
				switch (c) {
				case BARE:
					rc = spawn_wait(workloads[w].argv, &fa);
					break;
				case LIBRARY:
					rc = tg_sandbox_run(spec[w], &r, &err) < 0 ? -1
					     : r->reason == TG_REASON_OK ? r->exit_code : -1;
					tg_sandbox_result_free(r);
					break;
				case CLI:
					rc = spawn_wait(cli_argv, &fa);
					break;
				case WARM:
					rc = warm_run(pool[w], warm_spec[w], w ? snippet_fd : -1);
					break;
				default:
					lseek(seccomp_fd, 0, SEEK_SET);
					lseek(ioctl_fd, 0, SEEK_SET);
					rc = spawn_wait(bw, &fa);
					break;
				}
				t[w][c][i] = now_ms() - t0;
				if (rc != 0) {
					fprintf(stderr, "sandbox-start: %s under %s failed (%d)%s%s\n",
						workloads[w].name, cont_name[c], rc,
						c == LIBRARY ? ": " : "", c == LIBRARY ? err.msg : "");
					return 1;
				}
			}
		}
	}

	for (w = 0; w < 2; w++) {
		double med[NCONT];

		printf("\n%s\n", workloads[w].name);
		printf("  %-8s %9s %9s %9s\n", "", "median", "p95", "p99");
		for (c = 0; c < NCONT; c++) {
			qsort(t[w][c], (size_t)runs, sizeof(double), cmp_double);
			med[c] = pct(t[w][c], runs, 50);
			printf("  %-8s %7.2fms %7.2fms %7.2fms\n", cont_name[c], med[c],
			       pct(t[w][c], runs, 95), pct(t[w][c], runs, 99));
		}
		printf("  ratios (median): library/bwrap %.2f  cli/bwrap %.2f  "
		       "library/bare %.2f  cli/bare %.2f  bwrap/bare %.2f\n",
		       med[LIBRARY] / med[BWRAP], med[CLI] / med[BWRAP], med[LIBRARY] / med[BARE],
		       med[CLI] / med[BARE], med[BWRAP] / med[BARE]);
		printf("  %s/bare %.2f  %s/bwrap %.2f\n", w ? "zygote" : "warm",
		       med[WARM] / med[BARE], w ? "zygote" : "warm", med[WARM] / med[BWRAP]);
	}

	/* a program's start alone: --version, interleaved with bwrap's and
	 * /bin/true's */
	{
		char *ver[3][3] = { { toolgate, "--version", NULL },
				    { (char *)bwrap, "--version", NULL },
				    { "/bin/true", NULL, NULL } };
		static const char *const vname[3] = { "toolgate", "bwrap", "true" };
		double *vt[3], vmed[3];
		int v;

		for (v = 0; v < 3; v++)
			vt[v] = calloc((size_t)runs, sizeof(double));
		for (i = 0; i < runs; i++)
			for (v = 0; v < 3; v++) {
				double t0 = now_ms();

				if (spawn_wait(ver[v], &fa) != 0) {
					fprintf(stderr, "sandbox-start: %s --version failed\n",
						vname[v]);
					return 1;
				}
				vt[v][i] = now_ms() - t0;
			}
		printf("\nstart alone (--version; /bin/true for the floor)\n");
		printf("  %-8s %9s %9s %9s\n", "", "median", "p95", "p99");
		for (v = 0; v < 3; v++) {
			qsort(vt[v], (size_t)runs, sizeof(double), cmp_double);
			vmed[v] = pct(vt[v], runs, 50);
			printf("  %-8s %7.2fms %7.2fms %7.2fms\n", vname[v], vmed[v],
			       pct(vt[v], runs, 95), pct(vt[v], runs, 99));
			free(vt[v]);
		}
		printf("  ratios (median): toolgate/bwrap %.2f  toolgate/true %.2f  "
		       "bwrap/true %.2f\n", vmed[0] / vmed[1], vmed[0] / vmed[2],
		       vmed[1] / vmed[2]);
	}

	/* throughput of /bin/true: a pool of 4, so that two callers find some;
	 * in ROUNDS rounds of every mode in turn (the machine drifts), each
	 * ratio taken within a round, the medians printed */
	{
		static const int modes[] = { BWRAP, LIBRARY, WARM };
		double rate[3][2][ROUNDS], ratio[2][2][ROUNDS], med[3][2], mr[2][2];
		struct tp base[3];
		int m, k, q, n = (runs < 100 ? 100 : runs) / ROUNDS * ROUNDS;

		for (m = 0; m < 3; m++) {
			memset(&base[m], 0, sizeof(base[m]));
			base[m].mode = modes[m];
			base[m].bw = bw_true;
			base[m].sfd[0] = ioctl_fd; /* in bw_true's order */
			base[m].sfd[1] = seccomp_fd;
			base[m].fa = &fa;
			base[m].spec = modes[m] == WARM ? warm_spec[0] : spec[0];
			base[m].pool = modes[m] == WARM ? pool[0] : NULL;
		}
		for (q = 0; q < ROUNDS; q++)
			for (k = 0; k < 2; k++) {
				for (m = 0; m < 3; m++)
					rate[m][k][q] = throughput(&base[m], k + 1, n / ROUNDS);
				ratio[0][k][q] = rate[2][k][q] / rate[0][k][q];
				ratio[1][k][q] = rate[1][k][q] / rate[0][k][q];
			}
		for (m = 0; m < 3; m++)
			if (base[m].failed) {
				fprintf(stderr, "sandbox-start: %d runs failed under %s\n",
					base[m].failed, cont_name[modes[m]]);
				return 1;
			}
		for (k = 0; k < 2; k++) {
			for (m = 0; m < 3; m++) {
				qsort(rate[m][k], ROUNDS, sizeof(double), cmp_double);
				med[m][k] = pct(rate[m][k], ROUNDS, 50);
			}
			for (m = 0; m < 2; m++) {
				qsort(ratio[m][k], ROUNDS, sizeof(double), cmp_double);
				mr[m][k] = pct(ratio[m][k], ROUNDS, 50);
			}
		}
		printf("\nsandboxes per second, /bin/true, %d runs each in %d rounds "
		       "(medians)\n", n, ROUNDS);
		printf("  %-8s %12s %12s\n", "", "1 caller", "2 callers");
		for (m = 0; m < 3; m++)
			printf("  %-8s %10.0f/s %10.0f/s\n", cont_name[modes[m]], med[m][0],
			       med[m][1]);
		printf("  ratios (median of the rounds'): warm/bwrap %.2f (1 caller)  %.2f "
		       "(2 callers);  cold/bwrap %.2f  %.2f\n", mr[0][0], mr[0][1], mr[1][0],
		       mr[1][1]);
	}
	for (w = 0; w < 2; w++)
		tg_sandbox_pool_free(pool[w]);
	return 0;
}
