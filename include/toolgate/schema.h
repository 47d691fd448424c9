/*
 * toolgate schema: JSON Schema (2020-12, and draft-07 on request) compiled
 * once into a validator, then applied to many instances.
 *
 *     struct tg_schema *s;
 *     if (tg_schema_compile(text, len, NULL, &s, &err) < 0) ...  // invalid schema
 *     int ok = tg_schema_validate(s, inst, inst_len, NULL, &err); // 1, 0 or -1
 *     tg_schema_free(s);
 *
 * docs/SCHEMA.md says what is implemented and how it is tested (the
 * official JSON Schema Test Suite).
 */
#ifndef TOOLGATE_SCHEMA_H
#define TOOLGATE_SCHEMA_H

#include <stddef.h>

#include "toolgate/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tg_schema_draft {
	TG_SCHEMA_2020_12 = 0, /* default; also what "$schema" selects */
	TG_SCHEMA_DRAFT7 = 7,
};

struct tg_schema_options {
	enum tg_schema_draft draft;   /* when the schema has no "$schema" */
	int format_assert;            /* "format" as an assertion, not annotation */
	/* Registered schemas: a reference to REMOTE_BASE/path resolves to the
	 * file REMOTE_DIR/path (never fetched; no "..", 8 MiB at most). Both
	 * NULL: none. */
	const char *remote_base;
	const char *remote_dir;
	/* The schema document's base URI, against which its relative
	 * references resolve; NULL: "urn:toolgate:schema". */
	const char *base_uri;
	size_t max_depth;             /* instance nesting; 0: 512 */
	size_t max_bytes;             /* instance text; 0: 16 MiB */
};

struct tg_schema;

/* One failed assertion, in the shape of JSON Schema's "basic" output. */
struct tg_schema_error {
	char instance_location[256]; /* JSON Pointer into the instance */
	char keyword_location[256];  /* JSON Pointer into the schema */
	char message[256];
};

struct tg_schema_errors {
	struct tg_schema_error *v;  /* caller-provided array */
	size_t cap;                 /* its length */
	size_t n;                   /* OUT: how many were filled */
};

/* Compile the schema text. OUT *out, owned by the caller. -1 and err for
 * malformed JSON, an invalid schema, an unresolvable reference. */
TG_API int tg_schema_compile(const char *text, size_t len,
			     const struct tg_schema_options *opts,
			     struct tg_schema **out, struct tg_error *err);
TG_API void tg_schema_free(struct tg_schema *schema);

/* The schema as one self-contained document (JSON text, malloc'd; NULL
 * and err when out of memory): each registered schema it references is
 * embedded under "$defs" ("definitions" in draft-07) with its URI as
 * "$id", and the root gets the base URI as "$id" when it has none, so a
 * peer resolves every reference without the files. A schema that uses no
 * registered schema comes back as written. */
TG_API char *tg_schema_bundle(const struct tg_schema *schema, struct tg_error *err);

/* Validate instance text: 1 valid, 0 invalid (errors filled if given),
 * -1 the instance could not be checked (malformed, too large or deep). */
TG_API int tg_schema_validate(const struct tg_schema *schema, const char *instance,
			      size_t len, struct tg_schema_errors *errors,
			      struct tg_error *err);

#ifdef __cplusplus
}
#endif
#endif
