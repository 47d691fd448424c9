/*
 * Private interface of src/upstream/: the declaration loader's state and
 * its small readers, shared by decl.c (the file, its transport and
 * sandbox) and decl_tools.c (its credentials and tools).
 */
#ifndef TG_UPSTREAM_INT_H
#define TG_UPSTREAM_INT_H

#include <jansson.h>

#include "toolgate/upstream.h"

#define UPSTREAM_MAX_TEXT 4096  /* every string of a declaration */
#define UPSTREAM_MAX_FIELD 320  /* a field's path in a message */

struct up_loader {
	const char *origin;
	struct tg_upstream *u;
	struct tg_error *err;
};

/* err: "upstream ORIGIN: FIELD: why"; -1. */
int up_bad(struct up_loader *l, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* -1 and err for out of memory. */
int up_nomem(struct up_loader *l);
/* Refuse any key of obj not in allowed (NULL-terminated), naming it by
 * its path below where ("" for the top). */
int up_only(struct up_loader *l, json_t *obj, const char *where, const char *const *allowed);
/* v, a string of at most max bytes without NUL, copied into OUT *out. */
int up_string(struct up_loader *l, json_t *v, const char *field, size_t max, char **out);
/* "where.key" (where "" : "key") into buf, key's control bytes (below
 * 0x20, 0x7f) written \xNN. */
void up_field(char *buf, size_t size, const char *where, const char *key);
/* A boolean field of obj (absent: 0) into OUT *out. */
int up_bool(struct up_loader *l, json_t *obj, const char *key, const char *field, int *out);
/* s is an environment variable's name: a letter or _, then letters,
 * digits or _, at most 128. */
int up_env_name(const char *s);
/* s is an absolute path (starts with '/', no NUL). */
int up_absolute(const char *s);

/* "credentials" and "tools" of doc (decl_tools.c). */
int up_load_credentials(struct up_loader *l, json_t *doc);
int up_load_tools(struct up_loader *l, json_t *doc);

#endif
