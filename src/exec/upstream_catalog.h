/*
 * An upstream server's lists besides its tools (resources, resource
 * templates, prompts), fetched for its runner (upstream_run.c) by
 * upstream_catalog.c. Private to src/exec/.
 */
#ifndef TG_EXEC_UPSTREAM_CATALOG_H
#define TG_EXEC_UPSTREAM_CATALOG_H

#include "exec/upstream_run.h"
#include "upstream/client.h"

/* The lists of which (bits 1 << enum upstream_run_list) of the server on
 * client c, of upstream name, into out[i] (JSON array text, malloc'd):
 * "[]" for one whose capability its initialize did not declare, NULL for
 * one not asked or that failed (logged, the server's text shown safe:
 * the runner keeps the listing before). Waits at most timeout_ms a page. */
void upstream_catalog_fetch(struct upstream_client *c, const char *name, unsigned which,
			    int timeout_ms, char *out[UPSTREAM_RUN_NLISTS]);

/* The lists got (as upstream_catalog_fetch's out) kept in kept, each
 * one that is not NULL in place of the one before: the bits of those
 * that differ. got NULL: kept freed and cleared, 0. */
unsigned upstream_catalog_keep(char *kept[UPSTREAM_RUN_NLISTS], char *const *got);

/* 1 if the server on c declared capability (an object) at initialize. */
int upstream_catalog_declares(struct upstream_client *c, const char *capability);

#endif
