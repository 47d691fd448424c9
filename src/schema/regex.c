/*
 * "pattern" and "patternProperties": ECMA-262 regular expressions, read
 * as such and written as PCRE2's (ecma.c), run by PCRE2 in UTF mode with
 * match and depth limits, so a catastrophic pattern costs a bounded
 * amount of work and ends in an error instead of a hang.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schema/schema_int.h"
#include "util/pcre_tl.h"


pcre2_code *regex_compile(const char *pattern, size_t len, struct tg_error *err)
{
	/* no UCP: \d \w \b stay ASCII, as ECMA-262's; \p works in UTF mode;
	 * a reference to a group that took no part matches the empty string,
	 * as in ECMA-262 */
	uint32_t opts = PCRE2_UTF | PCRE2_DOLLAR_ENDONLY | PCRE2_NEVER_BACKSLASH_C |
			PCRE2_MATCH_UNSET_BACKREF;
	const char *why;
	char *src;
	PCRE2_SIZE off;
	pcre2_code *re;
	size_t at;
	int code;

	if (ecma_translate(pattern, len, &src, &why, &at) < 0) {
		tg_error_set(err, strcmp(why, "out of memory") == 0 ? TG_ERR_NOMEM : TG_ERR_INVALID,
			     "pattern '%.*s': %s at byte %zu", len < 80 ? (int)len : 80, pattern, why,
			     at + 1);
		return NULL;
	}
	if (tg_pcre2_load("pattern", err) < 0) {
		free(src);
		return NULL;
	}
	re = pcre2_compile((PCRE2_SPTR)src, PCRE2_ZERO_TERMINATED, opts, &code, &off, NULL);
	free(src);
	if (re) {
		/* JIT where the platform has it; the interpreter otherwise */
		pcre2_jit_compile(re, PCRE2_JIT_COMPLETE);
		return re;
	}
	{
		PCRE2_UCHAR msg[128];

		pcre2_get_error_message(code, msg, sizeof(msg));
		tg_error_set(err, TG_ERR_INVALID, "pattern '%.*s': %s", len < 80 ? (int)len : 80, pattern,
			     (char *)msg);
		return NULL;
	}
}

int regex_search(const pcre2_code *re, const char *s, size_t len)
{
	pcre2_match_context *ctx;
	pcre2_match_data *md;
	int rc;

	/* the thread's, with the match and depth limits (util/pcre_tl.h) */
	if (pcre_tl(1, &ctx, &md) < 0)
		return -1;
	/* Instance strings are valid UTF-8 (jv.c checks every one), so the
	 * per-match UTF check is skipped: it would read the whole subject. The
	 * JIT entry point skips the interpreter's option checks; a pattern
	 * the JIT could not compile goes through pcre2_match. */
	rc = pcre2_jit_match(re, (PCRE2_SPTR)s, len, 0, PCRE2_NO_UTF_CHECK, md, ctx);
	if (rc == PCRE2_ERROR_JIT_BADOPTION)
		rc = pcre2_match(re, (PCRE2_SPTR)s, len, 0, PCRE2_NO_UTF_CHECK, md, ctx);
	if (rc >= 0)
		return 1;
	if (rc == PCRE2_ERROR_NOMATCH)
		return 0;
	return -1;
}

void regex_hint(const char *pattern, size_t len, const pcre2_code *re, struct regex_hint *h)
{
	uint32_t minlen = 0;
	unsigned char c = len > 1 ? (unsigned char)pattern[1] : 0;

	h->first = -1;
	h->minlen = 0;
	if (pcre2_pattern_info(re, PCRE2_INFO_MINLENGTH, &minlen) == 0)
		h->minlen = minlen; /* characters: a subject has at least as many bytes */
	/* "^x..." with x a plain ASCII character, no quantifier on it and no
	 * alternation anywhere: only a subject starting with x can match (no
	 * multiline in ECMA-262 patterns here, so ^ is the start) */
	if (len > 1 && pattern[0] == '^' && c < 0x80 && !strchr("\\^$.|?*+()[]{}", c) &&
	    c >= 0x20 && (len == 2 || !strchr("?*+{", pattern[2])) && !memchr(pattern, '|', len))
		h->first = c;
}
