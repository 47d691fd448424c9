/*
 * Private interface of src/schema/: the compiled form of a schema.
 *
 * A schema document is parsed once (jansson) and every subschema that is
 * ever applied is compiled into a struct snode: keywords become fields, the
 * regular expressions are compiled (PCRE2), and references are resolved to
 * the node they name (lazily, so cycles through $ref are fine). Validation
 * (validate.c) walks nodes, never JSON text.
 */
#ifndef TG_SCHEMA_INT_H
#define TG_SCHEMA_INT_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "toolgate/schema.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

enum {
	T_NULL = 1 << 0, T_BOOLEAN = 1 << 1, T_OBJECT = 1 << 2, T_ARRAY = 1 << 3,
	T_NUMBER = 1 << 4, T_STRING = 1 << 5, T_INTEGER = 1 << 6,
};

struct snode;
struct resource;

struct named_node {
	const char *name;        /* borrowed from the schema document */
	struct snode *node;
};

struct pattern_node {
	pcre2_code *re;
	struct snode *node;
};

struct dep_required {
	const char *name;
	json_t *required;        /* array of strings, borrowed */
};

struct snode {
	int boolean;             /* -1: an object schema; 0/1: false/true */
	json_t *json;            /* the schema object (borrowed from its document) */
	char *path;              /* keyword location of this node, JSON Pointer */
	struct resource *res;    /* the resource (document or $id) it belongs to */

	unsigned types;          /* "type", 0 when absent */
	json_t *const_v;         /* borrowed, NULL when absent */
	json_t *enum_v;          /* borrowed array, NULL when absent */

	int has_min, has_max, has_xmin, has_xmax, has_mult;
	double min, max, xmin, xmax, mult;
	long long min_len, max_len;          /* -1 when absent */
	pcre2_code *pattern;
	const char *format;                  /* borrowed */

	struct named_node *props;
	size_t nprops;
	struct pattern_node *patprops;
	size_t npatprops;
	struct snode *addl_props;
	struct snode *prop_names;
	json_t *required;                    /* borrowed array */
	struct dep_required *dep_req;
	size_t ndep_req;
	struct named_node *dep_schemas;
	size_t ndep_schemas;
	long long min_props, max_props;
	struct snode *uneval_props;

	struct snode **prefix;
	size_t nprefix;
	struct snode *items;
	struct snode *contains;
	long long min_contains, max_contains;
	long long min_items, max_items;
	int unique;
	struct snode *uneval_items;

	struct snode **all_of, **any_of, **one_of;
	size_t nall, nany, none;
	struct snode *not_, *if_, *then_, *else_;

	struct snode *ref;                   /* resolved $ref */
	struct snode *dyn_ref;               /* $dynamicRef resolved statically */
	const char *dyn_anchor_name;         /* set when dyn_ref may be dynamic */
};

/* A schema resource: a document or a subschema with its own $id. */
struct resource {
	char *uri;                           /* absolute, without fragment */
	json_t *root;                        /* borrowed (owned by struct doc) */
	json_t *dyn_anchors;                 /* name -> json subschema (object) */
	struct resource *next;
};

/* Open addressing on pointer keys (cap a power of two, at most half full). */
struct ptrmap {
	const void **keys;
	void **vals;
	size_t n, cap;
};

struct tg_schema {
	struct tg_schema_options opts;
	json_t *docs;                        /* array: every document loaded */
	struct resource *resources;
	/* json_t* (as a key: its address) -> struct snode*, so each subschema
	 * compiles once and reference cycles terminate */
	struct ptrmap nodes;
	/* json_t* of every schema object walked -> the struct resource it
	 * belongs to (its base URI), for targets reached by JSON Pointer */
	struct ptrmap owners;
	struct snode *root;
	int draft;
	int no_validation;                   /* dialect without the validation vocabulary */
};

/* compile.c */
struct snode *schema_node(struct tg_schema *s, json_t *json, struct resource *res,
			  const char *path, struct tg_error *err);
/* The compiled node of a subschema, or NULL (compile_dynamic_anchors
 * compiled every $dynamicAnchor target). */
struct snode *schema_lookup(const struct tg_schema *s, const json_t *json);
int schema_resolve(struct tg_schema *s, struct resource *from, const char *ref,
		   json_t **out, struct resource **out_res, struct tg_error *err);

/* uri.c: resolve ref against base (RFC 3986 section 5.2), malloc'd. */
char *uri_resolve(const char *base, const char *ref);
/* split "abs#frag": OUT *frag points into a malloc'd copy's fragment part
 * (or NULL); returns the malloc'd part before '#'. */
char *uri_split(const char *uri, char **frag);

/* regex.c: an ECMA-262 pattern of len bytes (it may hold NUL) compiled
 * with PCRE2, or NULL (err set). */
pcre2_code *regex_compile(const char *pattern, size_t len, struct tg_error *err);
/* 1 match, 0 none, -1 error (match limit). */
int regex_search(const pcre2_code *re, const char *s, size_t len);

/* format.c: 1 when s (n bytes) is in the format, or the format is unknown. */
int format_check(const char *format, const char *s, size_t n);

/* validate.c */
int json_equal_schema(const json_t *a, const json_t *b);
/* tg_schema_validate on a parsed instance (borrowed). */
int schema_validate_json(const struct tg_schema *s, json_t *inst,
			 struct tg_schema_errors *errors, struct tg_error *err);

#endif
