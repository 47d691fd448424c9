/*
 * JSON numbers past what jansson holds exactly: an integer literal past
 * 64 bits, which jansson refuses ("too big integer"), and a literal of
 * more than 17 significant digits, which it rounds to a double. Such a
 * number means what it says (docs/SCHEMA.md, "Numbers"); where a value's
 * own text is at hand, these let a reader keep it: read the text with
 * such numbers as doubles, find out whether a text holds one, and hash a
 * value by its exact numbers.
 *
 * Every function takes text another parser may not have checked, and
 * stays inside [0, n) whatever it holds.
 */
#ifndef TG_UTIL_JSON_WIDE_H
#define TG_UTIL_JSON_WIDE_H

#include <jansson.h>
#include <stddef.h>

/* 1 if t[0, n) has a number (outside its strings) that jansson would
 * refuse or round: an integer literal past 64 bits, or a literal of more
 * than 17 significant digits; else 0. */
int json_wide_has_long(const char *t, size_t n);

/* json_loadb(t, n, flags, e), but an integer literal past 64 bits is
 * read as a real (its nearest double) where jansson refuses it. A number
 * past a double's range is still refused. e's position is t's. */
json_t *json_wide_load(const char *t, size_t n, size_t flags, json_error_t *e);

/* The text whose hash says whether two values are the same (the gate's
 * arguments' fingerprint): jansson's sorted compact form of t (read with
 * JSON_ALLOW_NUL), byte for byte what it was before numbers were kept.
 * When t has a long number (and so goes on as written, not as jansson's
 * form), every number's literal follows the form as "\nK:LITERAL", K its
 * index among the value's numbers in the form's order: values whose
 * numbers are written differently do not share a text, even where they
 * share a double (0.1 and 0.10000000000000001). NULL when t is not one
 * JSON value (or has a member named twice beside a long number), or out
 * of memory; malloc'd. */
char *json_wide_canonical(const char *t, size_t n);

/* t (one JSON value) as jansson writes it compact, but every number as
 * written: no whitespace between tokens, each string's escapes decoded
 * and written again only where JSON needs them ("\u0072" is "r"), so
 * that what a person is shown reads as what a tool decodes. Malloc'd,
 * NUL-terminated, its length in OUT *len; NULL out of memory. */
char *json_wide_text(const char *t, size_t n, size_t *len);

#endif
