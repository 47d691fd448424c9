/*
 * The limits a catalogue's file gives a sandbox (sandbox/limits.h): the
 * one reader of `"limits": {...}`, so that "256M" or a CPU share means
 * the same in every file and none accepts a field another refuses. It
 * reads; it never applies a limit (spec.c and the cgroup files do).
 */
#include <string.h>

#include "sandbox/limits.h"
#include "util/parse.h"

static int refuse(const char **key, const char **why, const char *k, const char *w)
{
	*key = k;
	*why = w;
	return -1;
}

int sandbox_limits_parse(json_t *lim, struct sandbox_limits *out, const char **key,
			 const char **why)
{
	static const char *const fields[] = { "memory", "cpus", "pids", "timeout", "output", NULL };
	struct tg_error perr;
	const char *k;
	json_t *v;
	double cpus;
	size_t i;

	memset(out, 0, sizeof(*out));
	*key = NULL;
	*why = NULL;
	if (!lim)
		return 0;
	if (!json_is_object(lim))
		return refuse(key, why, NULL, "must be an object");
	json_object_foreach(lim, k, v) {
		for (i = 0; fields[i] && strcmp(k, fields[i]) != 0; i++)
			;
		if (!fields[i])
			return refuse(key, why, k, "unknown field");
	}
	if ((v = json_object_get(lim, "memory")) &&
	    (!json_is_string(v) || parse_size(json_string_value(v), &out->memory, &perr) < 0))
		return refuse(key, why, "memory", "a size such as \"256M\"");
	/* what the program may print (stdout, stderr each): past it, the
	 * run is ended and its result flagged output_truncated */
	if ((v = json_object_get(lim, "output")) &&
	    (!json_is_string(v) || parse_size(json_string_value(v), &out->output, &perr) < 0 ||
	     out->output < 1024 || out->output > (64u << 20)))
		return refuse(key, why, "output", "a size from \"1K\" to \"64M\"");
	if ((v = json_object_get(lim, "timeout")) &&
	    (!json_is_string(v) || parse_duration(json_string_value(v), &out->timeout_ms, &perr) < 0))
		return refuse(key, why, "timeout", "a duration such as \"10s\"");
	if ((v = json_object_get(lim, "pids"))) {
		if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > 65536)
			return refuse(key, why, "pids", "an integer from 1 to 65536");
		out->pids = (unsigned)json_integer_value(v);
	}
	if ((v = json_object_get(lim, "cpus"))) {
		/* the range is checked on the number itself, before it is
		 * converted: a negative or huge double has no integer */
		cpus = json_number_value(v);
		if (!json_is_number(v) || !(cpus * 1000 + 0.5 >= 10 && cpus * 1000 + 0.5 < 1024001))
			return refuse(key, why, "cpus", "a number from 0.01 to 1024");
		out->millicpus = (unsigned)(cpus * 1000 + 0.5);
	}
	return 0;
}
