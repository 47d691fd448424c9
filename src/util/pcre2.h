/*
 * PCRE2 (libpcre2-8.so.0), loaded the first time an expression is
 * compiled (src/util/pcre2.c), as libsodium is (src/util/sodium.h):
 * `toolgate run` and a sandbox's start never map it, and mapping it cost
 * every start 5 page faults of some 115 (docs/BENCHMARKS.md, "Start
 * alone"). Include this instead of <pcre2.h>: the pcre2_ functions below
 * are PCRE2's 8-bit ones, through the table tg_pcre2() returns.
 *
 * Every match runs on code a compile made, and every compile is preceded
 * by tg_pcre2_load with the caller's error (the validator's patterns, the
 * redactor's and the skill scanner's rules), so a library that cannot be
 * loaded is an error naming what needs it. A call made before any load
 * (freeing a context never made, say) loads it through tg_pcre2(), which
 * stops the process with a message naming the package when it cannot.
 */
#ifndef TG_UTIL_PCRE2_H
#define TG_UTIL_PCRE2_H

#ifndef PCRE2_CODE_UNIT_WIDTH
#define PCRE2_CODE_UNIT_WIDTH 8
#endif
#include <pcre2.h>

#include "toolgate/error.h"

/* each the pointer of its function's own type, as the header declares it */
struct tg_pcre2_api {
	__typeof__(pcre2_code_free_8) *code_free;
	__typeof__(pcre2_compile_8) *compile;
	__typeof__(pcre2_compile_context_create_8) *compile_context_create;
	__typeof__(pcre2_compile_context_free_8) *compile_context_free;
	__typeof__(pcre2_get_error_message_8) *get_error_message;
	__typeof__(pcre2_get_ovector_pointer_8) *get_ovector_pointer;
	__typeof__(pcre2_jit_compile_8) *jit_compile;
	__typeof__(pcre2_jit_match_8) *jit_match;
	__typeof__(pcre2_jit_stack_assign_8) *jit_stack_assign;
	__typeof__(pcre2_jit_stack_create_8) *jit_stack_create;
	__typeof__(pcre2_jit_stack_free_8) *jit_stack_free;
	__typeof__(pcre2_match_8) *match;
	__typeof__(pcre2_match_context_create_8) *match_context_create;
	__typeof__(pcre2_match_context_free_8) *match_context_free;
	__typeof__(pcre2_match_data_create_8) *match_data_create;
	__typeof__(pcre2_match_data_free_8) *match_data_free;
	__typeof__(pcre2_pattern_info_8) *pattern_info;
	__typeof__(pcre2_set_depth_limit_8) *set_depth_limit;
	__typeof__(pcre2_set_match_limit_8) *set_match_limit;
	__typeof__(pcre2_set_newline_8) *set_newline;
};
extern struct tg_pcre2_api tg_pcre2_fn;
extern int tg_pcre2_ready; /* 1 once tg_pcre2_fn is filled (atomic) */

/* libpcre2-8.so.0 loaded, once a process, thread-safe: 0; or -1 and err
 * saying it could not be and what needs it. */
int tg_pcre2_load(const char *what, struct tg_error *err);

/* tg_pcre2_load's, for a call that has no error to give: the process ends
 * (abort) when the library cannot be loaded, the reason given to the log
 * sink (tg_log_set) first. */
void tg_pcre2_need(void);

static inline const struct tg_pcre2_api *tg_pcre2(void)
{
	if (__builtin_expect(!__atomic_load_n(&tg_pcre2_ready, __ATOMIC_ACQUIRE), 0))
		tg_pcre2_need();
	return &tg_pcre2_fn;
}

/* PCRE2's frees do nothing with NULL: these do nothing with NULL without
 * loading it (a schema, rule set or scan that compiled nothing, a vendor
 * rule never compiled, is freed with no library and never stops the
 * process); whatever else they are given PCRE2 made, so it is loaded */
#define TG_PCRE2_FREE(f, type)                    \
	static inline void tg_pcre2_##f(type *p) /* NOLINT(bugprone-macro-parentheses): a type */ \
	{                                        \
		if (p)                           \
			tg_pcre2()->f(p);        \
	}
TG_PCRE2_FREE(code_free, pcre2_code)
TG_PCRE2_FREE(compile_context_free, pcre2_compile_context)
TG_PCRE2_FREE(jit_stack_free, pcre2_jit_stack)
TG_PCRE2_FREE(match_context_free, pcre2_match_context)
TG_PCRE2_FREE(match_data_free, pcre2_match_data)
#undef TG_PCRE2_FREE

/* pcre2.h names each function as a macro of its 8-bit name: these replace
 * them; any other pcre2_ function is a link error */
#undef pcre2_code_free
#define pcre2_code_free tg_pcre2_code_free
#undef pcre2_compile
#define pcre2_compile (tg_pcre2()->compile)
#undef pcre2_compile_context_create
#define pcre2_compile_context_create (tg_pcre2()->compile_context_create)
#undef pcre2_compile_context_free
#define pcre2_compile_context_free tg_pcre2_compile_context_free
#undef pcre2_get_error_message
#define pcre2_get_error_message (tg_pcre2()->get_error_message)
#undef pcre2_get_ovector_pointer
#define pcre2_get_ovector_pointer (tg_pcre2()->get_ovector_pointer)
#undef pcre2_jit_compile
#define pcre2_jit_compile (tg_pcre2()->jit_compile)
#undef pcre2_jit_match
#define pcre2_jit_match (tg_pcre2()->jit_match)
#undef pcre2_jit_stack_assign
#define pcre2_jit_stack_assign (tg_pcre2()->jit_stack_assign)
#undef pcre2_jit_stack_create
#define pcre2_jit_stack_create (tg_pcre2()->jit_stack_create)
#undef pcre2_jit_stack_free
#define pcre2_jit_stack_free tg_pcre2_jit_stack_free
#undef pcre2_match
#define pcre2_match (tg_pcre2()->match)
#undef pcre2_match_context_create
#define pcre2_match_context_create (tg_pcre2()->match_context_create)
#undef pcre2_match_context_free
#define pcre2_match_context_free tg_pcre2_match_context_free
#undef pcre2_match_data_create
#define pcre2_match_data_create (tg_pcre2()->match_data_create)
#undef pcre2_match_data_free
#define pcre2_match_data_free tg_pcre2_match_data_free
#undef pcre2_pattern_info
#define pcre2_pattern_info (tg_pcre2()->pattern_info)
#undef pcre2_set_depth_limit
#define pcre2_set_depth_limit (tg_pcre2()->set_depth_limit)
#undef pcre2_set_match_limit
#define pcre2_set_match_limit (tg_pcre2()->set_match_limit)
#undef pcre2_set_newline
#define pcre2_set_newline (tg_pcre2()->set_newline)

#endif
