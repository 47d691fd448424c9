/*
 * RFC 8785, the JSON Canonicalization Scheme (JCS): one text for one JSON
 * value, whatever the order of its members and the forms of its numbers
 * and strings, so that a hash of it says whether two values are the same.
 * What pins a tool's definition (src/upstream/pin.c); any part that may
 * call src/schema/ may use it.
 *
 * Not the arguments' fingerprint of the gate (src/gate/write.c): that is
 * jansson's sorted compact form, kept as it is so that the fingerprints
 * already stored stay valid.
 */
#ifndef TG_SCHEMA_JCS_H
#define TG_SCHEMA_JCS_H

#include <stddef.h>

#include <jansson.h>

/* What jcs_dump and jcs_text answer besides 0. */
enum jcs_fail {
	JCS_NOMEM = -1,    /* out of memory */
	JCS_TOO_LONG = -2, /* the canonical text would pass max bytes */
	JCS_INVALID = -3,  /* not JSON, or a value JCS cannot hold (NUL in a
			    * string, a number past a double's range, a
			    * member named twice) */
};

/* The canonical text of v into OUT *out (malloc'd, NUL-terminated) and
 * *len, at most max bytes: members sorted by their names' UTF-16 code
 * units, no whitespace, numbers as ECMAScript prints a double (an integer
 * past 2^53 is rounded as a double is), strings with only '"', '\\' and
 * the control characters escaped. 0, or an enum jcs_fail (*out NULL). */
int jcs_dump(json_t *v, size_t max, char **out, size_t *len);

/* The same from JSON text (len bytes; at most one value, nothing after
 * it but whitespace), read as JCS reads it: every number a double, a
 * member named twice refused. why (at least 160 bytes) says what was
 * wrong on JCS_INVALID. */
int jcs_text(const char *text, size_t len, size_t max, char **out, size_t *outlen, char *why,
	     size_t whylen);

/* text parsed as jcs_text parses it: OUT the value (json_decref it), or
 * NULL with why filled. */
json_t *jcs_load(const char *text, size_t len, char *why, size_t whylen);

#endif
