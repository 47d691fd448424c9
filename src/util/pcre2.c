/*
 * PCRE2 loaded with dlopen the first time it is needed
 * (src/util/pcre2.h), as libsodium is (src/util/sodium.c).
 *
 * Owns: the table of its functions. Must never: publish the table before
 * every pointer in it is filled, or unload.
 */
#include <pthread.h>
#include <stddef.h>

#include "util/dl.h"
#include "util/pcre2.h"

#define LIBPCRE2 "libpcre2-8.so.0"

struct tg_pcre2_api tg_pcre2_fn;
int tg_pcre2_ready;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failed[300]; /* why it could not be loaded; "" when it was */

static const struct dl_sym syms[] = {
#define S(f) { "pcre2_" #f "_8", offsetof(struct tg_pcre2_api, f) }
	S(code_free),
	S(compile),
	S(compile_context_create),
	S(compile_context_free),
	S(get_error_message),
	S(get_ovector_pointer),
	S(jit_compile),
	S(jit_match),
	S(jit_stack_assign),
	S(jit_stack_create),
	S(jit_stack_free),
	S(match),
	S(match_context_create),
	S(match_context_free),
	S(match_data_create),
	S(match_data_free),
	S(pattern_info),
	S(set_depth_limit),
	S(set_match_limit),
	S(set_newline),
#undef S
};

static void load(void)
{
	struct tg_pcre2_api api = { 0 };

	if (!DL_TABLE(LIBPCRE2, syms, api, failed))
		return;
	tg_pcre2_fn = api;
	__atomic_store_n(&tg_pcre2_ready, 1, __ATOMIC_RELEASE);
}

int tg_pcre2_load(const char *what, struct tg_error *err)
{
	pthread_once(&once, load);
	return dl_loaded(failed, what, "PCRE2", "libpcre2-8-0", err);
}

void tg_pcre2_need(void)
{
	pthread_once(&once, load);
	dl_need(failed, "PCRE2", "libpcre2-8-0");
}
