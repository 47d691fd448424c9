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
#include "util/pcre2.h"

enum {
	T_NULL = 1 << 0, T_BOOLEAN = 1 << 1, T_OBJECT = 1 << 2, T_ARRAY = 1 << 3,
	T_NUMBER = 1 << 4, T_STRING = 1 << 5, T_INTEGER = 1 << 6,
};

struct snode;
struct resource;

/* ---- instances (jv.c) ---------------------------------------------- */

enum { JV_NULL, JV_FALSE, JV_TRUE, JV_INT, JV_REAL, JV_STRING, JV_ARRAY, JV_OBJECT, JV_DEC };

struct jmember;

/* Numbers past a double's 17 digits (num.c): an exact decimal, at most
 * NUM_MAX_DIGITS significant digits, from 10^NUM_MIN_EXP up to a
 * double's range. */
#define NUM_MAX_DIGITS 400
#define NUM_STR_(x) #x
#define NUM_STR(x) NUM_STR_(x)
#define NUM_MIN_EXP (-400)

/* (neg ? -1 : 1) * 0.dig * 10^exp; dig has no leading or trailing '0' */
struct jdec {
	double approx;              /* the nearest double */
	int32_t exp;
	uint32_t ndig;
	uint8_t neg;
	char dig[];
};

/* A JSON value as the validator reads it; 16 bytes. */
struct jv {
	uint8_t kind;               /* JV_* */
	uint8_t tmask;              /* its T_* bits: T_NUMBER|T_INTEGER for 1.0 */
	/* numbers (num.c says what each means): JV_INT an integer literal
	 * that fits 64 bits, JV_REAL a double (at most 17 significant
	 * digits), JV_DEC an exact decimal (more) */
	uint32_t n;                 /* string bytes, array items, object members */
	union {
		long long i;
		double d;
		const struct jdec *dec;
		const char *s;      /* NUL terminated (it may also hold NULs) */
		struct jv *items;
		struct jmember *members;
	} u;
};

struct jmember {
	const char *key;            /* NUL terminated, in a jv_doc arena (16 bytes readable) */
	uint32_t klen, hash;        /* hash: jv_key_hash(key, klen) */
	struct jv val;
};

/* A parsed instance: the root and the arena everything lives in. */
struct jv_doc {
	struct jv root;
	struct jv_block *blocks;
};

/* Parse text (len bytes; RFC 8259, any value at the top) into OUT d.
 * -1 and err (the line and column, and what is wrong) for malformed text,
 * invalid UTF-8, a lone surrogate, a duplicate member name, nesting
 * deeper than max_depth. */
int jv_parse(struct jv_doc *d, const char *text, size_t len, size_t max_depth,
	     struct tg_error *err);
struct ptrmap;
/* Copy a jansson value into OUT d; -1 and err when nested too deep. */
int jv_from_json(struct jv_doc *d, const json_t *j, size_t max_depth, struct tg_error *err);
void jv_doc_release(struct jv_doc *d);
/* size bytes (16-aligned) in d's arena; NULL out of memory. */
void *jv_alloc(struct jv_doc *d, size_t size);
/* A jansson value into OUT *out, allocated in d's arena (not reset); a
 * number in exact (load.c's map of a schema document) is its exact
 * value. */
int jv_copy_json(struct jv_doc *d, const json_t *j, const struct ptrmap *exact,
		 struct jv *out, struct tg_error *err);
/* JSON Schema equality: 1.0 equals 1, member order does not matter. */
int jv_equal(const struct jv *a, const struct jv *b);
/* Equal values hash alike (jv_equal's sense). */
uint64_t jv_hash(const struct jv *v);
uint32_t jv_key_hash(const char *s, size_t n);

/* A number's nearest double. */
static inline double jv_number(const struct jv *v)
{
	return v->kind == JV_INT ? (double)v->u.i : v->kind == JV_DEC ? v->u.dec->approx : v->u.d;
}

/* num.c: numbers compared exactly (both a and b numbers): -1, 0, 1;
 * num_cmp takes the two commonest cases inline. */
int num_cmp_exact(const struct jv *a, const struct jv *b);
static inline int num_cmp(const struct jv *a, const struct jv *b)
{
	if (a->kind == JV_INT && b->kind == JV_INT)
		return (a->u.i > b->u.i) - (a->u.i < b->u.i);
	if (a->kind == JV_REAL && b->kind == JV_REAL)
		return (a->u.d > b->u.d) - (a->u.d < b->u.d);
	return num_cmp_exact(a, b);
}
int num_equal(const struct jv *a, const struct jv *b);

/* bigint.c: unsigned integers of up to BIG_LIMBS 32-bit limbs, least
 * significant first (10^400 < 2^1329), for multipleOf. */
#define BIG_LIMBS 43
/* The integer of decimal digits d[0, n) (n <= NUM_MAX_DIGITS) into out;
 * its length in limbs (0: zero). */
size_t big_from_digits(const char *d, size_t n, uint32_t *out);
/* Trailing zero bits of a nonzero a. */
unsigned big_ctz(const uint32_t *a, size_t n);
/* a >>= bits; its new length. */
size_t big_shr(uint32_t *a, size_t n, unsigned bits);
/* a /= m (m > 0), *n updated; the remainder. */
uint32_t big_divsmall(uint32_t *a, size_t *n, uint32_t m);
/* 1 when v (nonzero) divides u. */
int big_divides(const uint32_t *v, size_t n, const uint32_t *u, size_t m);

/* A multipleOf's value, with what num_multiple needs of it worked out
 * once: as n / 10^k when it is one (frac). */
struct num_div {
	struct jv v;
	long long n;
	int k, frac;
	/* v = B * 10^last, B = 2^p2 * 5^p5 * rest (num_multiple) */
	int last;
	uint32_t p2, p5;
	size_t nrest;
	uint32_t rest[BIG_LIMBS];
};
void num_divisor(struct num_div *d);
/* 1 when x is an integer multiple of d's value (which is > 0). */
int num_multiple(const struct jv *x, const struct num_div *d);
/* v for a message: an integer as it is, else d.ddde+N (40 digits at most). */
const char *num_text(const struct jv *v, char *buf, size_t size);

/* A JSON number literal t[0, len) (its syntax checked) read: the sign,
 * the count of significant digits and the exponent (value =
 * 0.DIGITS * 10^exp; exp saturates far past any bound); at most cap of
 * the digits into dig. Zero: nsig 0. */
struct num_lit {
	int neg;
	long long exp;
	size_t nsig;
};
void num_literal(const char *t, size_t len, char *dig, size_t cap, struct num_lit *o);

struct named_node {
	const char *name;        /* borrowed from the schema document */
	struct snode *node;
};

struct pattern_node {
	pcre2_code *re;
	struct snode *node;
};

/* What a subject must have for the pattern to match, known without
 * running it: its first byte (first, or -1) and a length (minlen). */
struct regex_hint {
	int first;
	uint32_t minlen;
};

/* A name the object keywords of a node mention (prepare.c). */
struct keyent {
	const char *name;        /* borrowed from the schema document */
	uint32_t len, hash;
	struct snode *prop;      /* properties/<name>, or NULL */
	struct snode *dep_schema; /* dependentSchemas/<name>, or NULL */
	uint32_t *dep_req;       /* dependentRequired/<name>: key indices */
	uint32_t ndep_req;
};

/* How a node is checked when no error list, annotation or dynamic scope
 * is in play (prepare.c decides, validate.c's eval() follows). */
enum {
	FAST_NONE,               /* the general path, apply() */
	FAST_TRUE, FAST_FALSE,   /* a boolean schema, or {} */
	FAST_TYPE,               /* "type" alone */
	FAST_VALUE,              /* value checks only */
	FAST_OBJECT,             /* value checks and object_fast() */
	FAST_ARRAY,              /* value checks and array_fast() */
};

/* A slot of a node's key table: the hash (compared first, without
 * touching the entry) and the key index + 1 (0: empty). */
struct kslot {
	uint32_t hash, idx;
	uint32_t len;
	const char *name;        /* the entry's name, here to compare without a hop */
	struct snode *prop;      /* the entry's "properties" subschema, or NULL */
};

/* Which groups of checks a node has (prepare.c), so validation skips the
 * rest without looking. */
enum {
	F_TYPE = 1 << 0, F_CONST = 1 << 1, F_ENUM = 1 << 2, F_NUM = 1 << 3, F_STR = 1 << 4,
	F_REF = 1 << 5, F_DYNREF = 1 << 6, F_APPL = 1 << 7, F_OBJ = 1 << 8, F_ARR = 1 << 9,
	F_UNEVAL_P = 1 << 10, F_UNEVAL_I = 1 << 11,
	F_VALUE = F_TYPE | F_CONST | F_ENUM | F_NUM | F_STR, /* checks of the value alone */
};

struct dep_required {
	const char *name;
	json_t *required;        /* array of strings, borrowed */
};

struct snode {
	/* what validation reads first, together (prepare.c fills most) */
	int boolean;             /* -1: an object schema; 0/1: false/true */
	unsigned flags;          /* F_* */
	unsigned types;          /* "type", 0 when absent */
	uint32_t nkeys, kmask;
	struct kslot *ktab;      /* kmask + 1 slots */
	int kperfect;            /* no two keys share a slot: one probe */
	int obj_fast;            /* object keywords object_fast() handles alone */
	int fast;                /* FAST_*: how validate.c's eval() takes it */
	struct snode *direct;    /* the end of a chain of nodes that are only a
				  * "$ref": what validation evaluates instead */
	uint64_t reqmask;        /* with obj_fast: the "required" key indices */
	struct keyent *keys;     /* properties, required, dependencies */
	uint32_t *req;           /* "required": key indices */
	uint32_t nreq;
	uint32_t ndeps;          /* keys with a dependency */
	uint32_t nenum;
	struct jv *enum_jv;
	struct jv *const_jv;
	struct resource *res;    /* the resource (document or $id) it belongs to */

	json_t *json;            /* the schema object (borrowed from its document) */
	char *path;              /* keyword location of this node, JSON Pointer */

	json_t *const_v;         /* borrowed, NULL when absent */
	json_t *enum_v;          /* borrowed array, NULL when absent */

	int has_min, has_max, has_xmin, has_xmax, has_mult;
	struct jv min, max, xmin, xmax;      /* numbers (num.c) */
	struct num_div *mult;                /* in the arena, with has_mult */
	long long min_len, max_len;          /* -1 when absent */
	pcre2_code *pattern;
	struct regex_hint pattern_hint;
	const char *format;                  /* borrowed */
	/* draft-07's content, asserted with format (validate.c): base64
	 * for contentEncoding, JSON for contentMediaType */
	unsigned char content_b64, content_json;

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
	int dynamic;                         /* some $dynamicRef may resolve dynamically */
	json_t *registered;                  /* URI -> document loaded from remote_dir */
	struct jv_doc arena;                 /* what schema_prepare made, and
					      * the exact numbers */
	/* json_t* of a number past a double's digits -> struct jv * (load.c) */
	struct ptrmap exact;
};

/* ptrmap.c */
void *ptrmap_get(const struct ptrmap *m, const void *key);
/* Insert or replace. -1 on ENOMEM. */
int ptrmap_put(struct ptrmap *m, const void *key, void *val);
void ptrmap_release(struct ptrmap *m);

/* load.c: a schema document from text (RFC 8259, duplicate names
 * refused, NUL allowed in strings), as jansson values; a number past a
 * double's 17 digits is a json_real of its nearest double, and its exact
 * value (a struct jv, in arena) is in exact under that json_t. NULL and
 * err ("line L, column C: what") when malformed. */
json_t *schema_load_text(const char *text, size_t len, struct jv_doc *arena,
			 struct ptrmap *exact, struct tg_error *err);

/* compile.c */
struct snode *schema_node(struct tg_schema *s, json_t *json, struct resource *res,
			  const char *path, struct tg_error *err);
/* The compiled node of a subschema, or NULL (compile_dynamic_anchors
 * compiled every $dynamicAnchor target). */
struct snode *schema_lookup(const struct tg_schema *s, const json_t *json);
int schema_resolve(struct tg_schema *s, struct resource *from, const char *ref,
		   json_t **out, struct resource **out_res, struct tg_error *err);

/* The base URI a schema document without "$id" has. */
const char *schema_base_uri(const struct tg_schema *s);

/* prepare.c: ready every compiled node for validation. */
int schema_prepare(struct tg_schema *s, struct tg_error *err);

/* uri.c: resolve ref against base (RFC 3986 section 5.2), malloc'd. */
char *uri_resolve(const char *base, const char *ref);
/* split "abs#frag": OUT *frag points into a malloc'd copy's fragment part
 * (or NULL); returns the malloc'd part before '#'. */
char *uri_split(const char *uri, char **frag);

/* regex.c: an ECMA-262 pattern of len bytes (it may hold NUL) compiled
 * with PCRE2, or NULL (err set). */
pcre2_code *regex_compile(const char *pattern, size_t len, struct tg_error *err);
/* ecma.c: the ECMA-262 expression re[0, n) as a PCRE2 pattern that
 * matches the same: 0 and OUT *out (malloc'd), or -1, *why (static) and
 * *at (its byte) when ECMA-262 has no such construct. */
int ecma_translate(const char *re, size_t n, char **out, const char **why, size_t *at);
/* 1 match, 0 none, -1 error (match limit). */
int regex_search(const pcre2_code *re, const char *s, size_t len);

void regex_hint(const char *pattern, size_t len, const pcre2_code *re, struct regex_hint *h);

/* format.c: 1 when s (n bytes) is in the format, or the format is unknown. */
int format_check(const char *format, const char *s, size_t n);
/* draft-07's content keywords asserted: s[0, n) is base64 (b64), and its
 * decoding (or s itself) a JSON document (json). 1 valid, 0 not base64,
 * -1 not JSON. */
int content_check(const char *s, size_t n, int b64, int json);
/* format_uri.c: RFC 3986 (iri: 3987) URI, absolute or a reference; RFC
 * 6570 URI Template. 1 valid, 0 not. */
int format_uri(const char *s, size_t n, int iri, int absolute);
int format_uri_template(const char *s, size_t n);
/* format_idn.c: IDNA 2008 host names (libidn2), a plain host name's
 * A-labels. 1 valid, 0 not (also when libidn2 cannot be loaded). */
int format_idn_hostname(const char *s, size_t n);
int format_alabels_ok(const char *s, size_t n);

/* validate.c: tg_schema_validate on a parsed instance (borrowed). */
int schema_validate_jv(const struct tg_schema *s, const struct jv *inst,
		       struct tg_schema_errors *errors, struct tg_error *err);

#endif
