/*
 * Unit test runner (see unit.h). Usage: unit-tests [NAME-SUBSTRING]: every
 * test, or those whose name contains the substring (tests/README.md).
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/sandbox_int.h"
#include "toolgate/sandbox.h"
#include "toolgate/upstream.h"
#include "unit.h"

#define TEST_SECONDS 60

/* Every tests/unit/test_NAME.c defines NAME_tests[]; the Makefile lists
 * the NAMEs in unit_suites.h, so a new file is its own registration. */
#define UNIT_SUITE(name) extern const struct unit_test name##_tests[];
#include "unit_suites.h"
#undef UNIT_SUITE
#define UNIT_SUITE(name) name##_tests,
static const struct unit_test *const suites[] = {
#include "unit_suites.h"
};
#undef UNIT_SUITE

static int run_one(const struct unit_test *t)
{
	pid_t pid;
	int st;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int rc;

		alarm(TEST_SECONDS);
		rc = t->fn();
		exit(rc == 0 ? 0 : rc == UNIT_SKIP ? UNIT_SKIP : 1);
	}
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	if (WIFSIGNALED(st)) {
		fprintf(stderr, "%s: killed by signal %d\n", t->name, WTERMSIG(st));
		return -1;
	}
	return WEXITSTATUS(st) == 0 ? 0 : WEXITSTATUS(st) == UNIT_SKIP ? 1 : -1;
}

int unit_long(void)
{
	const char *l = getenv("TOOLGATE_CHECK_LONG");

	return l && strcmp(l, "1") == 0;
}

const char *unit_skip_why(const char *name)
{
	/* the one reason a test skips today: tests/run.sh (or its caller)
	 * started no PostgreSQL */
	return strstr(name, "-pg/") || strstr(name, "/pg_")
		       ? "no PostgreSQL to test against (TG_TEST_PG unset: tests/pg/pg.sh)"
		       : "its test said so";
}

int unit_tmpdir(char *dir, const char *name)
{
	snprintf(dir, 64, "/tmp/tg-unit-%.32s-XXXXXX", name);
	return mkdtemp(dir) ? 0 : -1;
}

int unit_upstream_dir(char *out)
{
	char exe[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n;

	if (realpath("tests/upstream", out) && access("tests/upstream/fake_server.py", R_OK) == 0)
		return 0;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -1;
	exe[n] = '\0';
	snprintf(path, sizeof(path), "%s/../../tests/upstream", dirname(exe));
	return realpath(path, out) ? 0 : -1;
}

int unit_put(const char *dir, const char *name, const char *text, unsigned mode)
{
	char path[PATH_MAX];
	FILE *f;
	int bad;

	if ((size_t)snprintf(path, sizeof(path), "%s%s%s", dir ? dir : "", dir ? "/" : "", name) >=
	    sizeof(path))
		return -1;
	f = fopen(path, "w");
	if (!f)
		return -1;
	bad = fputs(text, f) < 0;
	if (fclose(f) != 0 || bad)
		return -1;
	return chmod(path, (mode_t)mode);
}

int unit_declare_upstream(const char *dir, const char *server, const char *extra,
			  struct tg_upstream **u)
{
	char fake[PATH_MAX], sub[PATH_MAX], text[8192];
	struct tg_error err;

	if (unit_upstream_dir(fake) < 0)
		return -1;
	snprintf(sub, sizeof(sub), "%s/upstreams", dir);
	if (mkdir(sub, 0700) < 0 && errno != EEXIST)
		return -1;
	snprintf(text, sizeof(text),
		 "{\"transport\": \"stdio\", \"argv\": [\"/usr/bin/python3\", "
		 "\"/srv/fake/%s], \"sandbox\": {\"mounts\": "
		 "[{\"host\": \"%s\", \"inside\": \"/srv/fake\"}]}%s}",
		 server, fake, extra);
	if (unit_put(sub, "fake.json", text, 0600) < 0)
		return -1;
	snprintf(sub, sizeof(sub), "%s/upstreams/fake.json", dir);
	if (tg_upstream_load(sub, u, &err) < 0) {
		fprintf(stderr, "load: %s\n", err.msg);
		return -1;
	}
	return 0;
}

void unit_rmtree(const char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

struct tg_sandbox_spec *unit_spec(void)
{
	struct tg_sandbox_spec *s = NULL;
	struct tg_error err;

	if (tg_sandbox_spec_new(TG_TIER_STRICT, &s, &err) < 0)
		fprintf(stderr, "tg_sandbox_spec_new: %s\n", err.msg);
	return s;
}

int main(int argc, char **argv)
{
	unsigned s;
	int failed = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* toolgate-init's image is a descriptor the library keeps for the
	 * process's life from its first sandbox on: made here, before any
	 * test counts descriptors (each runs in a fork of this process) */
	{
		struct tg_error err;

		if (sb_init_fd(&err) < 0)
			fprintf(stderr, "unit: %s\n", err.msg);
	}
	for (s = 0; s < sizeof(suites) / sizeof(suites[0]); s++) {
		const struct unit_test *t;

		for (t = suites[s]; t->name; t++) {
			if (argc > 1 && !strstr(t->name, argv[1]))
				continue;
			int rc = run_one(t);

			if (rc == 0) {
				printf("ok - unit/%s\n", t->name);
			} else if (rc == 1) {
				printf("skip - unit/%s: %s\n", t->name, unit_skip_why(t->name));
			} else {
				printf("not ok - unit/%s\n", t->name);
				failed++;
			}
		}
	}
	return failed ? 1 : 0;
}
