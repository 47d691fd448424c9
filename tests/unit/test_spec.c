/* Unit tests: src/sandbox/spec.c, the validation of every setter. */
#include <stdlib.h>
#include <string.h>

#include "sandbox/sandbox_int.h"
#include "unit.h"

static int defaults(void)
{
	struct tg_sandbox_spec *s = unit_spec();

	CHECK(s);
	CHECK(s->memory == 256ull << 20 && s->millicpus == 1000 && s->pids == 64);
	CHECK(s->timeout_ms == 10000 && s->output_limit == 1 << 20);
	CHECK(strcmp(s->workdir, "/work") == 0 && s->nenv == 0 && s->stdin_fd == -1);
	tg_sandbox_spec_free(s);
	tg_sandbox_spec_free(NULL);
	{
		struct tg_sandbox_spec *none = (struct tg_sandbox_spec *)1;
		struct tg_error err;

		CHECK(tg_sandbox_spec_new((enum tg_tier)7, &none, &err) < 0 && !none &&
		      err.code == TG_ERR_INVALID && strstr(err.msg, "strict or standard"));
	}
	return 0;
}

static int binds(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	struct tg_error err;

	CHECK(tg_sandbox_spec_add_bind(s, "/nonexistent-tg", NULL, 0, &err) < 0);
	CHECK(strstr(err.msg, "--ro /nonexistent-tg") && strstr(err.msg, "No such file"));
	CHECK(tg_sandbox_spec_add_bind(s, "/usr", "relative", 0, &err) < 0);
	CHECK(strstr(err.msg, "absolute"));
	CHECK(tg_sandbox_spec_add_bind(s, "/usr", "/a/../etc", 0, &err) < 0);
	CHECK(tg_sandbox_spec_add_bind(s, "/usr", "/proc/x", 1, &err) < 0);
	CHECK(strstr(err.msg, "--rw"));
	CHECK(tg_sandbox_spec_add_bind(s, "/usr", "/dev", 0, &err) < 0);
	CHECK(tg_sandbox_spec_add_bind(s, "/usr", "/", 0, &err) < 0);
	CHECK(tg_sandbox_spec_add_bind(s, "/dev/null", "/x", 0, &err) < 0);
	CHECK(strstr(err.msg, "not a directory or regular file"));
	CHECK(tg_sandbox_spec_add_bind(s, "/usr/bin/../lib", "//data///x/", 0, &err) == 0);
	CHECK(strcmp(s->binds[0].host, "/usr/lib") == 0);
	CHECK(strcmp(s->binds[0].inside, "/data/x") == 0 && s->binds[0].is_dir);
	tg_sandbox_spec_free(s);
	return 0;
}

static int limits(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	struct tg_error err;

	CHECK(tg_sandbox_spec_set_memory(s, 1 << 20, &err) < 0 && strstr(err.msg, "--memory"));
	CHECK(tg_sandbox_spec_set_memory(s, 1ull << 50, &err) < 0 &&
	      strstr(err.msg, "more than this host has"));
	CHECK(tg_sandbox_spec_set_memory(s, 64 << 20, &err) == 0 && s->memory == 64 << 20);
	CHECK(tg_sandbox_spec_set_cpus(s, 0, &err) < 0);
	CHECK(tg_sandbox_spec_set_cpus(s, 1000000, &err) < 0 && strstr(err.msg, "CPUs"));
	CHECK(tg_sandbox_spec_set_pids(s, 0, &err) < 0);
	CHECK(tg_sandbox_spec_set_timeout(s, 0, &err) < 0);
	CHECK(tg_sandbox_spec_set_output_limit(s, 2ull << 30, &err) < 0);
	CHECK(tg_sandbox_spec_set_tmpfs_size(s, 1, &err) < 0);
	CHECK(tg_sandbox_spec_set_workdir(s, "/proc/1", &err) < 0);
	CHECK(tg_sandbox_spec_set_workdir(s, "/srv//app/", &err) == 0 &&
	      strcmp(s->workdir, "/srv/app") == 0);
	tg_sandbox_spec_free(s);
	return 0;
}

static int env_and_argv(void)
{
	struct tg_sandbox_spec *s = unit_spec();
	struct tg_error err;
	char *argv[] = { "echo", "hi", NULL };
	char *empty[] = { "", NULL };

	CHECK(tg_sandbox_spec_add_env(s, "NOVALUE", &err) < 0);
	CHECK(tg_sandbox_spec_add_env(s, "=x", &err) < 0);
	CHECK(tg_sandbox_spec_add_env(s, "9X=1", &err) < 0);
	CHECK(tg_sandbox_spec_add_env(s, "A-B=1", &err) < 0);
	CHECK(tg_sandbox_spec_add_env(s, "A=1", &err) == 0);
	CHECK(tg_sandbox_spec_add_env(s, "A=2", &err) == 0);
	CHECK(s->nenv == 1 && strcmp(s->env[0], "A=2") == 0);
	CHECK(tg_sandbox_spec_set_argv(s, 0, argv, &err) < 0);
	CHECK(tg_sandbox_spec_set_argv(s, 1, empty, &err) < 0);
	CHECK(tg_sandbox_spec_set_argv(s, 2, argv, &err) == 0 && s->argc == 2);
	CHECK(s->argv[2] == NULL && strcmp(s->argv[1], "hi") == 0);
	tg_sandbox_spec_free(s);
	return 0;
}

/* Off by default; a warm sandbox made for one kind of run never serves
 * the other (a server's has no CPU-seconds rlimit). */
static int server(void)
{
	struct tg_sandbox_spec *t = unit_spec(), *s = unit_spec(), *d;

	CHECK(t && s && !s->server);
	tg_sandbox_spec_set_server(s, 7);
	CHECK(s->server == 1);
	CHECK(!spec_pool_match(t, s, 0) && !spec_pool_match(s, t, 0));
	d = spec_dup(s);
	CHECK(d && d->server && spec_pool_match(d, s, 0));
	tg_sandbox_spec_set_server(s, 0);
	CHECK(!s->server && spec_pool_match(t, s, 0));
	tg_sandbox_spec_free(d);
	tg_sandbox_spec_free(s);
	tg_sandbox_spec_free(t);
	return 0;
}

const struct unit_test spec_tests[] = {
	{ "spec/defaults", defaults },
	{ "spec/binds", binds },
	{ "spec/limits", limits },
	{ "spec/env_and_argv", env_and_argv },
	{ "spec/server", server },
	UNIT_TESTS_END,
};
