/*
 * Interface of src/sandbox/limits.c: a sandbox's limits as the catalogue's
 * files write them, `"limits": {"memory", "cpus", "pids", "timeout",
 * "output"}` (docs/contracts.md, "executor"), read by one parser so that
 * every file that gives a sandbox limits takes the same names, units and
 * bounds.
 */
#ifndef TG_SANDBOX_LIMITS_H
#define TG_SANDBOX_LIMITS_H

#include <jansson.h>
#include <stdint.h>

struct sandbox_limits {
	uint64_t memory;        /* bytes; 0: the tier's default */
	uint64_t timeout_ms;    /* 0: the tier's default */
	uint64_t output;        /* bytes, 1 KiB to 64 MiB; 0: 4 MiB */
	unsigned millicpus;     /* 10 to 1024000; 0: the tier's default */
	unsigned pids;          /* 1 to 65536; 0: the tier's default */
};

/* lim, a JSON object or NULL (no limits), into OUT *out (zeroed first).
 * -1 when it is refused, with OUT *key the field at fault ("memory", an
 * unknown field's name; NULL when lim is not an object) and *why what it
 * must be (static text). */
int sandbox_limits_parse(json_t *lim, struct sandbox_limits *out, const char **key,
			 const char **why);

#endif
