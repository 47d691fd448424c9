/*
 * The one rule for a secret's file (docs/UPSTREAMS.md, "credentials"),
 * which the loader applies by the path (decl_tools.c) and the runner again
 * on the descriptor it opened (src/exec/upstream_run.c): a regular file of
 * this user's, no bit for group or others, outside /proc and /dev.
 */
#ifndef TOOLGATE_UPSTREAM_SECRET_H
#define TOOLGATE_UPSTREAM_SECRET_H

#include <stddef.h>
#include <sys/stat.h>

/* 0 if the file the caller found (st: its stat; given: the path it was
 * named by; real: where it resolves, NULL when nowhere) may hold a
 * secret; else -1 and why, to follow its path ("is not a regular file"),
 * in why (len bytes). */
int upstream_secret_check(const struct stat *st, const char *given, const char *real, char *why,
			  size_t len);

#endif
