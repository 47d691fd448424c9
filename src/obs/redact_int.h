/*
 * The redactor's inside (src/obs/redact.c, src/obs/redact_rules.c): the
 * byte classes the scan uses, and the matchers it calls at a candidate
 * position. docs/REDACTION.md has the rules and why each is shaped so.
 */
#ifndef TG_OBS_REDACT_INT_H
#define TG_OBS_REDACT_INT_H

#include <stddef.h>

/* Byte classes: one table lookup a byte decides whether a position can
 * start anything at all. */
enum {
	C_TOK = 1,    /* a run's byte: [A-Za-z0-9+/_-] (base64, base62, ids) */
	C_ALNUM = 2,
	C_ANCH = 4,   /* the first byte of an anchored rule's prefix */
	C_ASSIGN = 8, /* ':' '=' '>': the key (or XML element) before names a secret */
	C_HEX = 16,
	C_IDENT = 32, /* a key's byte: [A-Za-z0-9_.-] */
};
extern unsigned char redact_cls[256];

/* A run shorter than this is never a high_entropy candidate; the scan
 * filters on it before calling the matcher. */
#define HE_MIN 24
#define HE_MAX 512

/* What a decision at position q may read: b[lo..hi), with lo == q only at
 * the very start of the input (so b[q - 1] exists whenever q > lo). */
struct rwin {
	const unsigned char *b;
	size_t lo, hi;
};

/* A match starts at most this far after the position it was decided at
 * (a key's blanks and quote, a flag's name, an Authorization scheme, the
 * fixed part of a webhook URL): those positions are decided too. */
#define SKIP_MAX 96

struct rmatch {
	size_t start, end; /* the bytes to redact, q <= start <= q + SKIP_MAX */
	const char *rule;
	unsigned flags;    /* TG_REDACT_TRUNCATED */
	int more;          /* a key block went on past the cap: rules_key_more next */
};

/* Each returns 1 and fills *m, or 0. */
/* At a byte of class C_ANCH: the prefixed token formats, JWTs, key blocks. */
int rules_anchor(const struct rwin *w, size_t q, struct rmatch *m);
/* At ':', '=' or '>': URLs with a password, key = value assignments,
 * <password>value</password>. */
int rules_assign(const struct rwin *w, size_t q, struct rmatch *m);
/* Right after a private_key match that ended at the cap inside the key's
 * body (m->more): the body goes on, in the same rule, up to its end or
 * the next cap. */
int rules_key_more(const struct rwin *w, size_t q, struct rmatch *m);
/* At the start of a run of C_TOK bytes at least HE_MIN long. */
int rules_entropy(const struct rwin *w, size_t q, struct rmatch *m);

#endif
