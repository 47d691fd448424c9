/*
 * The calling thread's PCRE2 match context and match data (util/pcre_tl.c),
 * shared by what matches expressions a thread at a time: the validator's
 * patterns (schema/regex.c) and the redactor's rules (obs/redact_x.c).
 * Allocating them for every match cost more than most matches.
 */
#ifndef TG_UTIL_PCRE_TL_H
#define TG_UTIL_PCRE_TL_H

#include <stdint.h>

#include "util/pcre2.h"

/* Every match's bounds: a catastrophic expression ends in an error. */
#define PCRE_TL_MATCH_LIMIT 1000000
#define PCRE_TL_DEPTH_LIMIT 10000
#define PCRE_TL_JIT_STACK_MAX (512 * 1024)

/* OUT *ctx (the limits above, a JIT stack of up to
 * PCRE_TL_JIT_STACK_MAX) and *md (room for at least pairs ovector pairs),
 * the thread's own, made on first use and freed when it exits: 0, or -1
 * when memory ran out. Valid until the thread's next call here. */
int pcre_tl(uint32_t pairs, pcre2_match_context **ctx, pcre2_match_data **md);

#endif
