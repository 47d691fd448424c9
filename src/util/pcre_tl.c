/*
 * The thread's PCRE2 match context and match data (util/pcre_tl.h): made
 * on first use, the match data grown when a caller needs more pairs,
 * freed by a key's destructor when the thread exits.
 */
#include <pthread.h>
#include <stddef.h>

#include "util/pcre_tl.h"

static __thread pcre2_match_context *tl_ctx;
static __thread pcre2_match_data *tl_md;
static __thread uint32_t tl_pairs;
static __thread pcre2_jit_stack *tl_jit;
static pthread_key_t tl_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;

static void tl_free(void *unused)
{
	(void)unused;
	pcre2_match_data_free(tl_md);
	pcre2_match_context_free(tl_ctx);
	pcre2_jit_stack_free(tl_jit);
	tl_md = NULL;
	tl_ctx = NULL;
	tl_jit = NULL;
	tl_pairs = 0;
}

static void tl_key_make(void)
{
	pthread_key_create(&tl_key, tl_free);
}

int pcre_tl(uint32_t pairs, pcre2_match_context **ctx, pcre2_match_data **md)
{
	if (!tl_ctx) {
		/* the key's value only marks the thread for the destructor */
		pthread_once(&tl_once, tl_key_make);
		pthread_setspecific(tl_key, &tl_key);
		if (!(tl_ctx = pcre2_match_context_create(NULL)))
			return -1;
		pcre2_set_match_limit(tl_ctx, PCRE_TL_MATCH_LIMIT);
		pcre2_set_depth_limit(tl_ctx, PCRE_TL_DEPTH_LIMIT);
		tl_jit = pcre2_jit_stack_create(32 * 1024, PCRE_TL_JIT_STACK_MAX, NULL);
		if (tl_jit)
			pcre2_jit_stack_assign(tl_ctx, NULL, tl_jit);
	}
	if (!tl_md || tl_pairs < pairs) {
		pcre2_match_data_free(tl_md);
		tl_pairs = pairs < 16 ? 16 : pairs;
		if (!(tl_md = pcre2_match_data_create(tl_pairs, NULL))) {
			tl_pairs = 0;
			return -1;
		}
	}
	*ctx = tl_ctx;
	*md = tl_md;
	return 0;
}
