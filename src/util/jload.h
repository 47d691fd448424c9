/*
 * The small readers the catalogue's loaders share (a contract's,
 * src/catalog/contract.c, and an upstream's declaration,
 * src/upstream/decl*.c): one way to refuse a field, to name it, and to
 * take a string or a boolean from a JSON document. util/jload.c owns
 * them.
 */
#ifndef TG_UTIL_JLOAD_H
#define TG_UTIL_JLOAD_H

#include <jansson.h>
#include <stddef.h>

#include "toolgate/error.h"

#define JLOAD_MAX_FIELD 320  /* a field's path in a message */

/* What is being loaded: its kind ("contract", "upstream") and file name
 * at the head of every message, and where the error goes. */
struct jload {
	const char *kind;
	const char *origin;
	struct tg_error *err;
};

/* err: "KIND ORIGIN: FIELD: why", TG_ERR_INVALID; -1. */
int jload_bad(const struct jload *l, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* -1 and err for out of memory. */
int jload_nomem(const struct jload *l);
/* "where.key" (where "": "key") into buf, key's control bytes (below
 * 0x20, 0x7f) written \xNN: a key is the file's text, and no byte of it
 * may reach a terminal or split a line of lint's output. */
void jload_field(char *buf, size_t size, const char *where, const char *key);
/* Refuse any key of obj not in allowed (NULL-terminated), naming it by
 * its path below where ("" for the top): "unknown field", and the
 * allowed name jload_nearest finds, if any: "unknown field (did you mean
 * \"argv\"?)". */
int jload_only(const struct jload *l, json_t *obj, const char *where,
	       const char *const *allowed);
#define JLOAD_NEAR_MAX 64  /* longer words are near nothing */

/* The edit distance (insertions, deletions, substitutions; case
 * ignored) of a and b; (size_t)-1 when either is over JLOAD_NEAR_MAX
 * bytes. Cannot fail. */
size_t jload_distance(const char *a, const char *b);
/* The name of names (NULL-terminated) within 2 edits of word and within
 * half its own length, the nearest (the first of equals); NULL for
 * none. Not for a word the file may hide bytes in: the name returned is
 * always one of names. */
const char *jload_nearest(const char *word, const char *const *names);
/* v, a string of at most max bytes without NUL, copied into OUT *out. */
int jload_string(const struct jload *l, json_t *v, const char *field, size_t max, char **out);
/* A boolean member key of obj (absent: 0) into OUT *out. */
int jload_bool(const struct jload *l, json_t *obj, const char *key, const char *field, int *out);
/* A NULL-terminated list of strings and each of them freed; NULL: nothing. */
void jload_strv_free(char **v);

#endif
