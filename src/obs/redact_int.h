/*
 * The redactor's inside (src/obs/redact.c, src/obs/redact_rules.c): the
 * byte classes the scan uses, and the matchers it calls at a candidate
 * position. docs/REDACTION.md has the rules and why each is shaped so.
 */
#ifndef TG_OBS_REDACT_INT_H
#define TG_OBS_REDACT_INT_H

#include <stddef.h>
#include <stdint.h>

#include "toolgate/redact.h"
#include "util/pcre2.h"

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
	unsigned flags;    /* TG_REDACT_TRUNCATED, TG_REDACT_ENCODED */
	int more;          /* the span went on past a cap: MORE_KEY or MORE_ENC next */
};

/* What goes on at the position right after a match cut at a cap. */
enum { MORE_KEY = 1, MORE_ENC = 2 };

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

/* ---- encoded runs (redact_enc.c) ------------------------------------ */

/* A run of base64 or hex shorter than this (padding aside) is not
 * decoded: 12 bytes, about the least a rule finds anything in. */
#define ENC_MIN 16
/* Shorter runs, down to this (the base64 of 8 bytes, a remembered
 * secret's least), are decoded only to look for remembered secrets. */
#define ENC_SEEN_MIN 11
/* The bytes of input one decision decodes at most (within the window),
 * and how far before its cut a run that goes on is decoded again, so
 * that a secret across the cut is whole in one of the two. */
#define ENC_CAP (16 * 1024)
#define ENC_BACK 640
/* A wrapped block's lines (base64 64 or 76, xxd -p 60) join when they
 * are this long and a multiple of 4. */
#define ENC_LINE_MIN 16
#define ENC_LINE_MAX 100

struct enc_span {
	size_t start, end; /* the encoded bytes, padding included */
	size_t back;       /* capped: where the next decision decodes again */
	int capped;        /* the run goes on at end (end is on a quantum) */
};

/* m is the encoded run sp, redacted whole for rule (its cap said in
 * more): what both the scan and a capped run's next decision report. */
static inline void enc_match(struct rmatch *m, const struct enc_span *sp, const char *rule)
{
	m->start = sp->start;
	m->end = sp->end;
	m->rule = rule;
	m->flags = TG_REDACT_ENCODED;
	m->more = sp->capped ? MORE_ENC : 0;
}

/* The run of base64 or hex at q: its span, and its characters decoded in
 * buf (at least ENC_CAP bytes; NULL: the span only) from the first of
 * their alignments that reads as text, *dec[0..*dn) (*dn 0: none does).
 * mid: q is inside a run, where a previous decision cut it (sp->back or
 * sp->end); otherwise q starts a run (a JSON escape's letter before it
 * is skipped), and one that starts before done (where the last run
 * decoded ended: a later line of a wrapped block decoded from its first)
 * is not decoded again. Reads only w. 1 and *sp; 0 when there is no run
 * of ENC_MIN characters (of one, without buf). */
int enc_run(const struct rwin *w, size_t q, int mid, size_t done, unsigned char *buf,
	    const unsigned char **dec, size_t *dn, struct enc_span *sp);
/* The run of r base64 characters at q (ENC_SEEN_MIN <= r < ENC_MIN, all
 * in w) decoded into out (at least r bytes), at its first character:
 * the decoded length (0 when r and its padding are not base64's), *end
 * past its padding. */
size_t enc_short(const struct rwin *w, size_t q, size_t r, unsigned char *out, size_t *end);
/* Whether d[0..n) reads as text: 3 bytes in 4 printable ASCII, blanks or
 * UTF-8. What a tool encodes and a rule could find in is text. */
int enc_texty(const unsigned char *d, size_t n);
/* After a match in a decoded run cut at the cap (MORE_ENC): the run goes
 * on at q and is redacted too, under the same rule, up to its end or
 * the next cap. */
int rules_enc_more(const struct rwin *w, size_t q, const char *rule, struct rmatch *m);

/* One call over in[0..n), as tg_redact; REDACT_NO_DECODE: runs of base64
 * or hex are not decoded (bytes that were decoded already: one level);
 * REDACT_NO_ENTROPY: the generic rule (high_entropy) does not run (bytes
 * decoded from a value that are not text: an image's, an archive's). */
#define REDACT_NO_DECODE 1u
#define REDACT_NO_ENTROPY 2u
int redact_scan(const char *in, size_t n, unsigned opts, struct tg_redact_out *out,
		struct tg_error *err);

/* ---- an operator's rules: a gitleaks configuration ------------------ */
/* (redact_load.c reads it, redact_re2.c translates its expressions,
 * redact_x.c matches; docs/REDACTION.md, "gitleaks configurations") */

/* A block: what one decision runs the rules over, from a line start (or
 * the last block's cut) to a line end at most XSEG later; the next block
 * starts at a line start up to XOVER before it ends, so that a match over
 * lines of up to XOVER bytes is whole in one of the two. XSEG fits in the
 * window a decision may read, with SKIP_MAX to spare: a block is decided
 * that early, so that the positions a match decided before it skips see
 * its spans. */
#define XSEG TG_REDACT_KEY_CAP
#define XOVER 1024
/* A match a block's end cuts moves the next block's start to it only
 * this far from the block's start: every block advances at least so
 * much (a cut match nearer is longer than XSEG - XPART_MIN: not found
 * whole anyway). */
#define XPART_MIN (XSEG / 4)
/* Spans one block may add; past it the rest of the block is one span. */
#define XSPAN_MAX 1024

/* Ceilings on a configuration (beyond TOML's own). */
#define X_RULES_MAX 1000
#define X_ID_MAX 48           /* bytes of a rule id: [A-Za-z0-9._-] */
#define X_REGEX_MAX 4096      /* bytes of one expression */
#define X_KEYWORD_MAX 64      /* bytes of one keyword */
#define X_KEYWORD_BYTES (16 * 1024) /* of all keywords together */
#define X_LIST_MAX 10000      /* regexes, stopwords, keywords in one list */
#define X_ALLOW_MAX 100       /* allowlists of one rule, or global */
#define X_EXTEND_DEPTH 2      /* a file extending one extending one */

enum { XA_SECRET, XA_MATCH, XA_LINE };

struct xallow {
	int target;          /* XA_*: what the regexes are asked about */
	int all;             /* condition AND: every list given must say so */
	pcre2_code **re;
	size_t nre;
	char **stop;         /* lower case */
	size_t nstop;
};

struct xrule {
	const char *id;      /* interned: findings and metrics keep it */
	pcre2_code *re;      /* a vendor rule's: NULL until first needed (redact_x.c, rule_re) */
	const char *src;     /* a vendor rule's expression (static), or NULL */
	uint32_t groups;     /* capture groups in re (atomic: set with a vendor rule's re) */
	uint32_t group;      /* secretGroup; 0: the first that matched, else the match */
	double entropy;      /* 0: none asked */
	char **kw;           /* keywords, as given */
	size_t nkw;
	int vendor;          /* toolgate's own: placeholders are not secrets */
	struct xallow **allow; /* its own, then the global ones aimed at it */
	size_t nallow;
};

struct tg_redact_ruleset {
	int refs;            /* atomic */
	struct xrule *rules;
	size_t n;
	size_t nown;         /* the operator's, first; then toolgate's vendor rules */
	const char **ids;
	struct xallow **global; /* for every rule */
	size_t nglobal;
	struct xallow *allows;  /* every allowlist, owned */
	size_t nallows;
	char **notes;        /* NULL-terminated */
	size_t nnotes;
	/* keywords, ASCII folded: a bitmap of their first two bytes, and
	 * the keywords sorted by those two bytes (redact_x.c) */
	uint64_t bigram[65536 / 64];
	uint16_t rank[65536 / 64]; /* set bits of bigram before each word */
	uint16_t *first;     /* [a bigram's rank]: its first keyword in kws, and after the last one */
	struct xkw *kws;
	size_t nkws;
	char *kwtext;        /* the folded keywords, NUL after each */
	unsigned words;      /* of a bitmap of the rules: (n + 63) / 64 + 1 */
	uint64_t *always;    /* [words]: the rules that run on every block (no keyword) */
};

struct xkw {
	const char *w;       /* folded */
	size_t len;
	uint32_t rule;
	uint16_t h;          /* w[0] << 8 | w[1] */
};

/* ASCII folded to lower case (redact_x.c). */
extern const unsigned char redact_fold[256];

struct xspan {
	uint64_t start, end; /* input offsets */
	const char *rule;
	unsigned flags;      /* TG_REDACT_UNDECIDED */
};

/* One scan's side of the operator's rules. */
struct xscan {
	struct tg_redact_ruleset *rs; /* a reference, or NULL: none in use */
	uint64_t next;       /* the next block's start + 1 (0: none left) */
	struct xspan *sp;    /* pending, sorted, disjoint */
	size_t n, cap;
	pcre2_match_context *mctx; /* the thread's (util/pcre_tl.h), for the block at hand */
	pcre2_match_data *md;
	int borrowed;        /* rs is the vendor rules' set, held by no reference */
	struct xspan *dsp;   /* a decoded run's, kept for the next */
	size_t dcap;
	unsigned char *fix;  /* a block that is not UTF-8, with U+FFFD (redact_x.c) */
	uint32_t *map;
	size_t nfix;
	unsigned char *low;  /* XSEG bytes: a secret lower-cased, for stopwords */
};

/* re[0, n) in Go's syntax as PCRE2's: 0 and OUT *out (malloc'd), or -1
 * and err "WHAT: why at byte N". */
int redact_re2_translate(const char *re, size_t n, const char *what, char **out,
			 struct tg_error *err);
/* The same, compiled as every operator's expression is (UTF, invalid UTF
 * matched, $ at the end only, LF lines, JIT). */
pcre2_code *redact_re2_compile(const char *re, size_t n, const char *what, struct tg_error *err);
/* The set in use now (tg_redact_use), else toolgate's vendor rules
 * alone: a reference taken; NULL only when even those cannot be made. */
struct tg_redact_ruleset *redact_x_get(void);
/* The keyword automaton of rs's rules' keywords: 0, or -1 and err. */
int redact_x_keywords(struct tg_redact_ruleset *rs, struct tg_error *err);

/* ---- toolgate's own vendor rules (redact_vendors.c) ----------------- */
#define REDACT_VENDORS_MAX 200
/* Their ids, NULL-terminated. */
extern const char *const redact_vendor_ids[];
/* Appended to rs->rules (room for REDACT_VENDORS_MAX), their expressions
 * compiled when first needed: 0, or -1 and err. */
int redact_vendors_add(struct tg_redact_ruleset *rs, struct tg_error *err);
/* Every vendor expression compiled once, each with a group for the
 * secret (what redact_vendors_add leaves to first use; the unit tests
 * ask): 0, or -1 and err naming the rule. */
int redact_vendors_check(struct tg_error *err);
/* A value that is a placeholder or an example, not a secret
 * (redact_rules.c: "${X}", "xxxx", "example", "changeme", ...). */
int redact_placeholder(const unsigned char *v, size_t n);
/* A scan's start (x->rs from redact_x_get: -1 and err when memory ran
 * out) and end. */
int redact_x_init(struct xscan *x, struct tg_error *err);
void redact_x_release(struct xscan *x);
/* The block starting at q (b[lo..hi) readable, lo <= q, hi the end of
 * the window or, at_end, of the input; base: b[0]'s input offset): its
 * rules run, their secrets added to x's spans, x->next set. 0, or -1 and
 * err when memory runs out. */
int redact_x_block(struct xscan *x, const unsigned char *b, size_t lo, size_t q, size_t hi,
		   int at_end, uint64_t base, struct tg_error *err);
/* The first secret an operator's rule finds in d[0, n) (decoded bytes,
 * n <= XSEG): its rule, *start and *end; NULL if none. */
const char *redact_x_first(struct xscan *x, const unsigned char *d, size_t n, size_t *start,
			   size_t *end);

#endif
