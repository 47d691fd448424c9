/*
 * Private interface of src/upstream/: the declaration loader's state and
 * its own small readers (with util/jload.h's), shared by decl.c (the file, its transport and
 * sandbox) and decl_tools.c (its credentials and tools).
 */
#ifndef TG_UPSTREAM_INT_H
#define TG_UPSTREAM_INT_H

#include <jansson.h>

#include "toolgate/upstream.h"
#include "util/jload.h"

#define UPSTREAM_MAX_TEXT 4096  /* every string of a declaration */

/* The loader's state: what jload's readers (util/jload.h) refuse with,
 * "upstream ORIGIN: FIELD: why", and the declaration being made. */
struct up_loader {
	struct jload j;
	struct tg_upstream *u;
};

/* s is an environment variable's name: a letter or _, then letters,
 * digits or _, at most 128. */
int up_env_name(const char *s);
/* s is an absolute path (starts with '/', no NUL). */
int up_absolute(const char *s);

/* "credentials" and "tools" of doc (decl_tools.c). */
int up_load_credentials(struct up_loader *l, json_t *doc);
int up_load_tools(struct up_loader *l, json_t *doc);

#endif
