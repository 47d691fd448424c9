/*
 * libFuzzer entry point: the sandbox spec's validation of what a caller
 * (a contract, a command line) hands it: inside paths of binds and the work
 * directory, environment assignments, argv. The input is split on NUL into
 * fields. Accepted values must be normalised: absolute, no "." or "..",
 * never /proc or /dev.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sandbox/sandbox_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int under(const char *p, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(p, dir, n) == 0 && (p[n] == '\0' || p[n] == '/');
}

static int bad_inside(const char *p)
{
	size_t n = strlen(p);

	return p[0] != '/' || strstr(p, "/./") || strstr(p, "/../") || strstr(p, "//") ||
	       (n >= 2 && strcmp(p + n - 2, "/.") == 0) ||
	       (n >= 3 && strcmp(p + n - 3, "/..") == 0) ||
	       under(p, "/proc") || under(p, "/dev") || (n > 1 && p[n - 1] == '/');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tg_sandbox_spec *s = NULL;
	struct tg_error err;
	char *buf = malloc(size + 1), *field[4] = { "", "", "", "" };
	size_t i, n = 0;

	if (tg_sandbox_spec_new(TG_TIER_STRICT, &s, &err) < 0 || !buf)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	field[n++] = buf;
	for (i = 0; i < size && n < 4; i++)
		if (buf[i] == '\0')
			field[n++] = buf + i + 1;
	if (tg_sandbox_spec_add_bind(s, "/usr", field[0], 0, &err) == 0 &&
	    bad_inside(s->binds[0].inside))
		abort();
	if (tg_sandbox_spec_set_workdir(s, field[1], &err) == 0 && bad_inside(s->workdir))
		abort();
	if (tg_sandbox_spec_add_env(s, field[2], &err) == 0 &&
	    (!strchr(s->env[0], '=') || s->env[0][0] == '='))
		abort();
	{
		char *argv[] = { field[3], field[0], NULL };

		if (tg_sandbox_spec_set_argv(s, 2, argv, &err) == 0 && !s->argv[0][0])
			abort();
	}
	tg_sandbox_spec_free(s);
	free(buf);
	return 0;
}
