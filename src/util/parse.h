/*
 * Parsers for the human-written quantities of the command line and of
 * contracts: sizes ("256M"), durations ("10s") and CPU shares ("0.5").
 * Every parser bounds its input and rejects what it does not understand;
 * tests/fuzz/fuzz_parse.c drives them.
 */
#ifndef TG_UTIL_PARSE_H
#define TG_UTIL_PARSE_H

#include <stdint.h>

#include "toolgate/error.h"

/* "4096", "64K", "256M", "1G", "1.5G" (binary units; optional "iB"/"B").
 * OUT *bytes. Rejects overflow, negative numbers and trailing junk. */
int parse_size(const char *s, uint64_t *bytes, struct tg_error *err);

/* "250ms", "10s", "2m", "1h", or a bare number of seconds ("1.5").
 * OUT *ms. */
int parse_duration(const char *s, uint64_t *ms, struct tg_error *err);

/* "1", "0.5", "2.25": CPUs in thousandths. OUT *millicpus, > 0. */
int parse_cpus(const char *s, unsigned *millicpus, struct tg_error *err);

/* Decimal unsigned integer within [min, max]. OUT *v. */
int parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *v,
	       struct tg_error *err);

#endif
