/*
 * UTF-8, as the rest of the code needs it: a character's length and code
 * point, whether a text is UTF-8, where to cut one. Strict, as JSON's
 * strings must be: no overlong form, no surrogate, nothing past U+10FFFF.
 * One place for what the validator, the tracer, the description scanner,
 * the overlay's diffs and the records each did their own way.
 */
#ifndef TG_UTIL_UTF8_H
#define TG_UTIL_UTF8_H

#include <stddef.h>
#include <stdint.h>

/* The length (1 to 4) of the UTF-8 character at s, n bytes left (n >= 1),
 * 0 when the bytes there are not one; OUT *cp its code point when cp is
 * not NULL. */
size_t utf8_char(const unsigned char *s, size_t n, uint32_t *cp);

/* 1 if s[0, n) is all UTF-8. */
int utf8_valid(const char *s, size_t n);

/* At most n bytes of s (len bytes long): n, or less, so that the cut is
 * where a character begins (nothing is cut when len <= n). */
size_t utf8_cut(const char *s, size_t len, size_t n);

#endif
