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

enum { BARE, LIBRARY, CLI, BWRAP, NCONT };
static const char *const cont_name[NCONT] = { "bare", "library", "cli", "bwrap" };

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
	struct tg_sandbox_spec *spec[2];
	struct tg_error err;
	int runs = 500, opt, w, c, i, seccomp_fd, ioctl_fd;
	double *t[2][NCONT];
	char fdarg[16], fdarg2[16];

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

	for (w = 0; w < 2; w++) {
		spec[w] = tg_sandbox_spec_new(TG_TIER_STRICT);
		if (!spec[w] || tg_sandbox_spec_set_argv(spec[w], w ? 3 : 1,
							 workloads[w].argv, &err) < 0) {
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

		for (i = 0; i < runs; i++) {
			for (c = 0; c < NCONT; c++) {
				struct tg_sandbox_result *r = NULL;
				double t0 = now_ms();
				int rc;

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
	}
	return 0;
}
