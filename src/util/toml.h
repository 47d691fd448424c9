/*
 * A strict reader of the TOML subset gitleaks configurations use
 * (docs/REDACTION.md, "gitleaks configurations"): Debian 12 ships no C
 * TOML library, and an operator's .gitleaks.toml is input from outside.
 * util/toml.c owns it.
 *
 * Read: comments; bare and quoted keys, dotted keys; tables ([a.b]) and
 * arrays of tables ([[rules]], [[rules.allowlists]]); basic and literal
 * strings, one-line and multi-line; decimal integers; floats; booleans;
 * arrays (over lines, a trailing comma, comments between); inline tables.
 * The document becomes a JSON object (jansson) with the same shape.
 *
 * Refused, each with the origin, the line and the column: anything
 * outside the subset (dates and times, hexadecimal, octal and binary
 * integers, inf and nan: named as such), a key given twice, a table
 * defined twice (by headers, or by a header after dotted keys) or added
 * to by a dotted key after a header defined it, a key that is both a
 * value and a table, an invalid
 * escape, a control character in a string, text that is not UTF-8 or
 * holds a NUL, and anything past the ceilings below. A leading byte
 * order mark is skipped. Never a crash or a hang on any bytes
 * (tests/fuzz/fuzz_toml.c).
 */
#ifndef TG_UTIL_TOML_H
#define TG_UTIL_TOML_H

#include <jansson.h>
#include <stddef.h>

#include "toolgate/error.h"

#define TOML_MAX (1u << 20)      /* bytes of a document */
#define TOML_DEPTH_MAX 16        /* arrays and inline tables within one another */
#define TOML_KEY_MAX 256         /* bytes of one key */
#define TOML_VALUES_MAX 100000   /* values in a document */

/* text[0, len) (origin names it in errors): 0 and OUT *out (a JSON object,
 * the caller's), or -1 and err ("ORIGIN: line L, column C: why"). */
int toml_parse(const char *text, size_t len, const char *origin, json_t **out,
	       struct tg_error *err);

#endif
