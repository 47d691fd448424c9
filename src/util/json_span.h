/*
 * Where a JSON value lies in its text: for a reader that needs a value's
 * own bytes (its numbers as written) from a document another parser has
 * already read and checked. The walk is iterative (no depth limit to
 * hit) and stays inside [0, n) whatever the text.
 */
#ifndef TG_UTIL_JSON_SPAN_H
#define TG_UTIL_JSON_SPAN_H

#include <stddef.h>

/* The value at or after t[pos] (whitespace skipped): OUT *start, and the
 * index just past it; 0 when there is none there. */
size_t json_span_value(const char *t, size_t n, size_t pos, size_t *start);
/* The start of the value of member key of the object at or after t[pos]
 * (a name matches with its escapes decoded, as jansson reads it: "\u0061"
 * is "a"); 0 when there is none. */
size_t json_span_member(const char *t, size_t n, size_t pos, const char *key);
/* The start of item idx of the array at or after t[pos]; 0 when none. */
size_t json_span_item(const char *t, size_t n, size_t pos, size_t idx);
/* Past the item or member value at t[pos] and the ',' after it: where
 * the next one begins (whitespace before it included), to walk an
 * array's items in one pass; 0 after the last one, or malformed text. */
size_t json_span_next(const char *t, size_t n, size_t pos);

#endif
