/*
 * Private interface of src/catalog/: the catalogue's own structure, shared
 * by catalog.c (contracts) and content.c (resources and prompts).
 */
#ifndef TG_CATALOG_INT_H
#define TG_CATALOG_INT_H

#include <jansson.h>

#include "toolgate/catalog.h"
#include "toolgate/upstream.h"

struct tg_catalog {
	struct tg_contract **v;
	size_t n;
	json_t *resources;      /* array: MCP resource definitions, content under "_text"/"_blob" */
	json_t *templates;      /* array: MCP resource templates, "_text" to fill */
	json_t *prompts;        /* array: MCP prompt definitions, "_messages" to fill */
	struct tg_upstream **up; /* DIR/upstreams/NAME.json, sorted by name */
	size_t nup;
	/* a catalogue with an upstream's tools (tg_catalog_derive): base's
	 * contracts, content and upstreams borrowed, its own tools in own */
	const struct tg_catalog *base;
	struct tg_contract **own;
	size_t nown;
};

/* DIR/resources/NAME.json and DIR/prompts/NAME.json into c (content.c). Absent
 * folders are no error. -1 and err naming the file and the field. */
int catalog_load_content(struct tg_catalog *c, const char *dir, struct tg_error *err);
void catalog_free_content(struct tg_catalog *c);

/* DIR/upstreams/NAME.json into c (upstreams.c), after the contracts. An
 * absent folder is no error. -1 and err naming the file and the field,
 * or the two files of a clash of names. */
int catalog_load_upstreams(struct tg_catalog *c, const char *dir, struct tg_error *err);
/* Lint's: every declaration of DIR/upstreams on its own, each problem
 * reported, with what tg_upstream_lint finds in each that loads; OUT
 * *files how many were read. The number of problems, or -1
 * and err when the folder cannot be read. */
int catalog_lint_upstreams(struct tg_catalog *c, const char *dir,
			   void (*report)(const char *line, void *ctx), void *ctx, size_t *files,
			   struct tg_error *err);
void catalog_free_upstreams(struct tg_catalog *c);

/* The *.json entries of dir, sorted, NULL-terminated, malloc'd (catalog.c);
 * NULL and err. A missing dir gives an empty list when missing_ok. */
char **catalog_json_files(const char *dir, int missing_ok, struct tg_error *err);
void catalog_free_files(char **files);

/* The x-mcp-header annotations of c's input schema into c->param_headers
 * (param_header.c). -1 and err naming origin, the property and the rule
 * broken. */
int contract_param_headers(struct tg_contract *c, const char *origin, struct tg_error *err);
void contract_free_param_headers(struct tg_contract *c);

#endif
