/*
 * An operator's rules at work (docs/REDACTION.md, "gitleaks
 * configurations"): the set in use (tg_redact_use), and the decision
 * the scan (redact.c) makes at each block's start: which rules' keywords
 * the block holds, their expressions run over it, each match's secret
 * judged as gitleaks judges it (secretGroup, entropy, allowlists), and
 * the secrets that remain added to the scan's pending spans, which the
 * scan redacts as it reaches them.
 *
 * A block is what one decision reads (redact_int.h, XSEG): a stream
 * therefore decides the same blocks as one call, whatever the chunks.
 * An expression that does not decide within its match limit (PCRE2
 * backtracks, RE2 does not) makes the rest of the block one span,
 * flagged TG_REDACT_UNDECIDED: never shown because a rule was slow.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "obs/redact_int.h"
#include "util/pcre_tl.h"
#include "util/utf8.h"

/* ---- the set in use ---------------------------------------------------- */

static pthread_mutex_t use_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tg_redact_ruleset *in_use;

void tg_redact_use(struct tg_redact_ruleset *rs)
{
	struct tg_redact_ruleset *old;

	if (rs)
		__atomic_add_fetch(&rs->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&use_lock);
	old = in_use;
	__atomic_store_n(&in_use, rs, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&use_lock);
	tg_redact_ruleset_free(old);
}

/* toolgate's vendor rules alone, made at the first redaction without an
 * operator's set (again at the next when memory ran out), kept for the
 * process's life. */
static struct tg_redact_ruleset *vendors_only; /* atomic */

static struct tg_redact_ruleset *vendors_make(void)
{
	struct tg_redact_ruleset *rs = calloc(1, sizeof(*rs));
	struct tg_error err;

	if (!rs)
		return NULL;
	rs->refs = 1;
	rs->rules = calloc(REDACT_VENDORS_MAX + 1, sizeof(*rs->rules));
	rs->ids = calloc(REDACT_VENDORS_MAX + 1, sizeof(*rs->ids));
	if (!rs->rules || !rs->ids || redact_vendors_add(rs, &err) < 0 ||
	    redact_x_keywords(rs, &err) < 0) {
		tg_redact_ruleset_free(rs);
		return NULL;
	}
	return rs;
}

struct tg_redact_ruleset *redact_x_get(void)
{
	struct tg_redact_ruleset *rs;

	pthread_mutex_lock(&use_lock);
	if (!in_use && !vendors_only)
		__atomic_store_n(&vendors_only, vendors_make(), __ATOMIC_RELEASE);
	rs = in_use ? in_use : vendors_only;
	if (rs)
		__atomic_add_fetch(&rs->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&use_lock);
	return rs;
}

int redact_x_init(struct xscan *x, struct tg_error *err)
{
	memset(x, 0, sizeof(*x));
	/* no operator's set: the vendor rules', never freed, borrowed without
	 * the lock or a reference (every redaction of every string passes
	 * here); a set put in use a moment later serves the next one */
	if (!__atomic_load_n(&in_use, __ATOMIC_ACQUIRE) &&
	    (x->rs = __atomic_load_n(&vendors_only, __ATOMIC_ACQUIRE))) {
		x->borrowed = 1;
		x->next = 1;
		return 0;
	}
	x->rs = redact_x_get();
	if (!x->rs)
		return tg_error_set(err, TG_ERR_NOMEM, "redact: out of memory for the rules");
	x->next = 1; /* the first block starts at 0 */
	return 0;
}

void redact_x_release(struct xscan *x)
{
	if (!x->borrowed)
		tg_redact_ruleset_free(x->rs);
	free(x->sp);
	free(x->dsp);
	free(x->low);
	free(x->fix);
	free(x->map);
	memset(x, 0, sizeof(*x));
}

/* ---- matching ----------------------------------------------------------- */

/* 1: re matches somewhere in s[0, n); 0: not; -1: undecided (limits). */
static int search(const struct xscan *x, const pcre2_code *re, const unsigned char *s, size_t n)
{
	int rc = pcre2_match(re, s, n, 0, 0, x->md, x->mctx);

	return rc >= 0 ? 1 : rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

/* r's expression: compiled at load (an operator's), or at the first block
 * that asks for it (toolgate's vendor rules: start-up pays for none of
 * them). The set is shared: the first compilation published wins, its
 * group count stored first. NULL when memory ran out. */
static pcre2_code *rule_re(struct xrule *r, uint32_t *groups)
{
	pcre2_code *re = __atomic_load_n(&r->re, __ATOMIC_ACQUIRE), *none = NULL;
	struct tg_error err;
	uint32_t g = 0;

	if (!re && r->src) {
		if (!(re = redact_re2_compile(r->src, strlen(r->src), r->id, &err)))
			return NULL;
		pcre2_pattern_info(re, PCRE2_INFO_CAPTURECOUNT, &g);
		__atomic_store_n(&r->groups, g, __ATOMIC_RELAXED);
		if (!__atomic_compare_exchange_n(&r->re, &none, re, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE)) {
			pcre2_code_free(re);
			re = none;
		}
	}
	*groups = __atomic_load_n(&r->groups, __ATOMIC_RELAXED);
	return re;
}

/* ---- a match judged ---------------------------------------------------- */

static double entropy(const unsigned char *s, size_t n)
{
	unsigned count[256] = { 0 };
	double h = 0;
	size_t i;

	for (i = 0; i < n; i++)
		count[s[i]]++;
	for (i = 0; i < 256; i++)
		if (count[i]) {
			double p = (double)count[i] / (double)n;

			h -= p * log2(p);
		}
	return h;
}

struct judged {
	const unsigned char *secret, *match, *line;
	size_t nsecret, nmatch, nline;
	size_t nlow;         /* of x->low, the secret lowered (0: not yet) */
};

/* 1 when allowlist a lets the secret go; -1 when a regex was undecided
 * (then it does not). */
static int allowed(struct xscan *x, const struct xallow *a, struct judged *j)
{
	int by_re = 0, by_stop = 0;
	size_t i;

	if (a->nre) {
		const unsigned char *s = a->target == XA_MATCH ? j->match : a->target == XA_LINE ? j->line : j->secret;
		size_t n = a->target == XA_MATCH ? j->nmatch : a->target == XA_LINE ? j->nline : j->nsecret;

		for (i = 0; i < a->nre && !by_re; i++) {
			int r = search(x, a->re[i], s, n);

			if (r < 0)
				return 0;
			by_re = r;
		}
	}
	if (a->nstop) {
		/* lowered once for every allowlist that asks */
		if (!j->nlow) {
			j->nlow = j->nsecret < XSEG ? j->nsecret : XSEG;
			for (i = 0; i < j->nlow; i++)
				x->low[i] = redact_fold[j->secret[i]];
		}
		for (i = 0; i < a->nstop && !by_stop; i++)
			by_stop = memmem(x->low, j->nlow, a->stop[i], strlen(a->stop[i])) != NULL;
	}
	if (a->all)
		return (!a->nre || by_re) && (!a->nstop || by_stop);
	return by_re || by_stop;
}

/* The secret of a match (ov: its offsets in s), as gitleaks takes it:
 * secretGroup's, or the first group that matched something, or the
 * match without the newlines at its ends. 0 when there is none. */
static int secret_of(const struct xrule *r, uint32_t groups, const PCRE2_SIZE *ov,
		     const unsigned char *s, size_t *a, size_t *b)
{
	uint32_t g;

	if (r->group) {
		if (ov[2 * r->group] == PCRE2_UNSET || ov[2 * r->group] == ov[2 * r->group + 1])
			return 0;
		*a = ov[2 * r->group];
		*b = ov[2 * r->group + 1];
		return 1;
	}
	for (g = 1; g <= groups; g++)
		if (ov[2 * g] != PCRE2_UNSET && ov[2 * g + 1] > ov[2 * g]) {
			*a = ov[2 * g];
			*b = ov[2 * g + 1];
			return 1;
		}
	*a = ov[0];
	*b = ov[1];
	while (*a < *b && s[*a] == '\n')
		(*a)++;
	while (*b > *a && s[*b - 1] == '\n')
		(*b)--;
	return *b > *a;
}

/* Whether the secret s[a, b) of a match s[ms, me) of rule r in a block
 * ending at e stands: its entropy, then every allowlist that applies
 * (their searches reuse the match data: the match is passed by value). */
static int stands(struct xscan *x, const struct xrule *r, const unsigned char *s, size_t lo,
		  size_t e, size_t ms, size_t me, size_t a, size_t b)
{
	struct judged j;
	size_t ls = ms, le = me, i;

	if (r->entropy > 0 && entropy(s + a, b - a) <= r->entropy)
		return 0;
	if (r->vendor && redact_placeholder(s + a, b - a))
		return 0;
	if (!r->nallow && !x->rs->nglobal)
		return 1;
	while (ls > lo && s[ls - 1] != '\n')
		ls--;
	while (le < e && s[le] != '\n')
		le++;
	j.secret = s + a;
	j.nsecret = b - a;
	j.match = s + ms;
	j.nmatch = me - ms;
	j.line = s + ls;
	j.nline = le - ls;
	j.nlow = 0;
	if (!x->low && !(x->low = malloc(XSEG)))
		return 1; /* no memory to ask: redacted */
	for (i = 0; i < x->rs->nglobal; i++)
		if (allowed(x, x->rs->global[i], &j))
			return 0;
	for (i = 0; i < r->nallow; i++)
		if (allowed(x, r->allow[i], &j))
			return 0;
	return 1;
}

/* ---- spans ------------------------------------------------------------- */

static int span_cmp(const void *a, const void *b)
{
	const struct xspan *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start ? 1 : 0;
}

/* Room for n more spans at the end of x->sp: grown, never shrunk, so
 * that a stream allocates nothing block after block. */
static int spans_room(struct xscan *x, size_t n, struct tg_error *err)
{
	struct xspan *sp;
	size_t cap;

	if (x->n + n <= x->cap)
		return 0;
	cap = x->cap ? x->cap : 64;
	while (cap < x->n + n)
		cap *= 2;
	if (!(sp = realloc(x->sp, cap * sizeof(*sp))))
		return tg_error_set(err, TG_ERR_NOMEM, "redact: out of memory for spans");
	x->sp = sp;
	x->cap = cap;
	return 0;
}

/* x->sp[0, n) sorted, overlaps joined under the rule that starts first. */
static void spans_settle(struct xscan *x)
{
	size_t i, k = 0;

	qsort(x->sp, x->n, sizeof(*x->sp), span_cmp);
	for (i = 0; i < x->n; i++) {
		if (k && x->sp[i].start <= x->sp[k - 1].end) {
			if (x->sp[i].end > x->sp[k - 1].end)
				x->sp[k - 1].end = x->sp[i].end;
			x->sp[k - 1].flags |= x->sp[i].flags;
			continue;
		}
		x->sp[k++] = x->sp[i];
	}
	x->n = k;
}

/* ---- a block ------------------------------------------------------------ */

/* Which rules s[q, e) holds a keyword of, case aside: bits in
 * found[rs->words]. Each position's two bytes, folded, are looked up in
 * a bitmap of the keywords' first two bytes (one load a byte, no chain
 * from one byte to the next: most positions stop there), and the
 * keywords starting so are compared where it holds. */
static void keywords_in(const struct tg_redact_ruleset *rs, const unsigned char *s, size_t q,
			size_t e, uint64_t *found)
{
	const unsigned char *fold = redact_fold;

	/* the rules that run on every block, then those whose keyword is here */
	memcpy(found, rs->always, rs->words * sizeof(*found));
	if (!rs->nkws || e - q < 2)
		return;
	for (size_t i = q; i + 1 < e; i++) {
		unsigned h = (unsigned)fold[s[i]] << 8 | fold[s[i + 1]];
		uint64_t word = rs->bigram[h >> 6];
		size_t lo, hi, r;

		if (!(word >> (h & 63) & 1))
			continue;
		/* the keywords of this bigram: a run of the sorted list, found
		 * by the bigram's rank among the bitmap's set bits */
		r = rs->rank[h >> 6] + (size_t)__builtin_popcountll(word & ((1ull << (h & 63)) - 1));
		hi = rs->first[r + 1];
		for (lo = rs->first[r]; lo < hi; lo++) {
			const struct xkw *k = &rs->kws[lo];
			size_t j;

			if (found[k->rule / 64] & (1ull << (k->rule % 64)) || k->len > e - i)
				continue;
			for (j = 2; j < k->len && fold[s[i + j]] == (unsigned char)k->w[j]; j++)
				;
			if (j == k->len)
				found[k->rule / 64] |= 1ull << (k->rule % 64);
		}
	}
}

/* Rule r over s[q, e) (s[lo, q) before it, for \b and (?m)^; opts:
 * PCRE2_NOTBOL/NOTEOL), its secrets appended to sp (at most XSPAN_MAX;
 * then the rest of the block is one span). */
/* A block as the rules read it: s[lo, e), q its start; map (NULL: s is
 * the input) the input offset of each byte of s, s being a copy with
 * each byte that is not UTF-8 written U+FFFD, as Go reads it (PCRE2
 * would match no byte there, and a secret holding one would be cut). */
struct xblk {
	const unsigned char *s;
	size_t lo, q, e;
	const uint32_t *map; /* offsets from mlo (a one call's input may pass 4 GiB) */
	size_t mlo;
	uint64_t base;
	uint32_t opts;
	size_t reach; /* where a match the block's end cut short starts (in s) */
};

static uint64_t at_input(const struct xblk *k, size_t i)
{
	return k->base + (k->map ? k->mlo + k->map[i] : i);
}

/* One more span: room made as they come (most blocks have none), -1
 * when memory ran out. */
static int push(struct xscan *x, size_t *n, struct xspan sp)
{
	struct tg_error err;

	if (spans_room(x, *n + 1, &err) < 0)
		return -1;
	x->sp[x->n + (*n)++] = sp;
	return 0;
}

/* r over the block k, its secrets pushed after x's pending spans (*n of
 * them so far, at most XSPAN_MAX: then the rest of the block is one): 0,
 * or -1 when memory ran out (for its expression or a span). */
static int rule_run(struct xscan *x, struct xrule *r, struct xblk *k, size_t *n)
{
	const unsigned char *s = k->s;
	size_t lo = k->lo, e = k->e, off = k->q, far = k->q + XPART_MIN;
	int near = 0; /* after a cut match near the block's start: complete ones only */
	uint32_t groups;
	const pcre2_code *re = rule_re(r, &groups);

	if (!re || pcre_tl(groups + 1, &x->mctx, &x->md) < 0)
		return -1;
	while (off <= e) {
		PCRE2_SIZE *ov;
		size_t a, b, ms, me;
		uint32_t opts;
		int rc;

		if (near && off >= far)
			near = 0; /* past far: cut matches count again */
		opts = near ? k->opts & ~(uint32_t)PCRE2_PARTIAL_HARD : k->opts;
		rc = pcre2_match(re, s + lo, e - lo, off - lo, opts, x->md, x->mctx);
		if (rc == PCRE2_ERROR_NOMATCH && near) {
			/* none complete before far: cut ones from far on */
			near = 0;
			off = far;
			continue;
		}
		if (rc == PCRE2_ERROR_NOMATCH)
			return 0;
		if (rc == PCRE2_ERROR_PARTIAL) {
			ov = pcre2_get_ovector_pointer(x->md);
			if (lo + ov[0] >= far) {
				/* a match the block's end cut: the next block
				 * starts at it and reads the rest of this one */
				if (lo + ov[0] < k->reach)
					k->reach = lo + ov[0];
				return 0;
			}
			/* cut, but too near the block's start for the next
			 * block to start there (blocks would advance a few
			 * bytes each): complete matches from it (PARTIAL_HARD
			 * prefers a cut match to a complete one at one start),
			 * up to far, then cut ones again */
			near = 1;
			off = lo + ov[0];
			continue;
		}
		if (rc > 0 && near && lo + pcre2_get_ovector_pointer(x->md)[0] >= far) {
			/* the first complete one is past far: from far, cut
			 * ones too */
			near = 0;
			off = far;
			continue;
		}
		if (rc < 0 || *n == XSPAN_MAX) {
			/* undecided, or too many: the rest of the block is redacted */
			struct xspan rest = { at_input(k, off), at_input(k, e), r->id, TG_REDACT_UNDECIDED };
			struct xspan *last = *n ? &x->sp[x->n + *n - 1] : NULL;

			if (*n < XSPAN_MAX)
				return push(x, n, rest);
			if (last->start < rest.start)
				rest.start = last->start;
			*last = rest;
			return 0;
		}
		ov = pcre2_get_ovector_pointer(x->md);
		for (uint32_t g = 0; g <= groups; g++)
			if (ov[2 * g] != PCRE2_UNSET) {
				ov[2 * g] += lo;
				ov[2 * g + 1] += lo;
			}
		ms = ov[0];
		me = ov[1];
		if (secret_of(r, groups, ov, s, &a, &b) && stands(x, r, s, lo, e, ms, me, a, b) &&
		    push(x, n, (struct xspan){ at_input(k, a), at_input(k, b), r->id, 0 }) < 0)
			return -1;
		if (me > ms) {
			off = me;
			continue;
		}
		/* an empty match: on past its character */
		off = ms + 1;
		while (off < e && (s[off] & 0xC0) == 0x80)
			off++;
	}
	return 0;
}

/* Where the block from q ends: a line's end at most XSEG after q (cut
 * there, mid-line, when no line ends in its second half). */
static size_t block_end(const unsigned char *b, size_t q, size_t hi, int at_end)
{
	size_t e = hi - q > XSEG ? q + XSEG : hi;
	const unsigned char *nl;

	if ((e == hi && at_end) || e - q <= XSEG / 2)
		return e;
	nl = memrchr(b + q + XSEG / 2, '\n', e - q - XSEG / 2);
	return nl ? (size_t)(nl - b) + 1 : e;
}

/* b[lo, e) with each byte that is not UTF-8 as U+FFFD, into x->fix, and
 * the input offset of each byte in x->map (e's after the last): 1, or 0
 * when b[lo, e) is UTF-8 already (nothing made), -1 without memory. */
static int fixed(struct xscan *x, const unsigned char *b, size_t lo, size_t e)
{
	size_t i = lo, k = 0, len;
	uint32_t cp;

	/* ASCII, eight bytes at a time: most text never goes further */
	while (i + 8 <= e) {
		uint64_t v;

		memcpy(&v, b + i, 8);
		if (v & 0x8080808080808080ull)
			break;
		i += 8;
	}
	while (i < e && (len = utf8_char(b + i, e - i, &cp)) > 0)
		i += len;
	if (i == e)
		return 0;
	if (!x->fix && (!(x->fix = malloc(3 * (XSEG + TG_REDACT_LOOKBEHIND) + 3)) ||
			!(x->map = malloc((3 * (XSEG + TG_REDACT_LOOKBEHIND) + 4) * sizeof(*x->map)))))
		return -1;
	for (i = lo; i < e;) {
		len = utf8_char(b + i, e - i, &cp);
		if (len == 0) {
			memcpy(x->fix + k, "\xEF\xBF\xBD", 3);
			x->map[k] = x->map[k + 1] = x->map[k + 2] = (uint32_t)(i - lo);
			k += 3;
			i++;
			continue;
		}
		for (size_t j = 0; j < len; j++, k++) {
			x->fix[k] = b[i + j];
			x->map[k] = (uint32_t)(i + j - lo);
		}
		i += len;
	}
	x->map[k] = (uint32_t)(e - lo);
	x->nfix = k;
	return 1;
}

int redact_x_block(struct xscan *x, const unsigned char *b, size_t lo, size_t q, size_t hi,
		   int at_end, uint64_t base, struct tg_error *err)
{
	const struct tg_redact_ruleset *rs = x->rs;
	uint64_t found[(X_RULES_MAX + REDACT_VENDORS_MAX) / 64 + 2];
	struct xblk k = { b, lo, q, 0, NULL, 0, base, 0, 0 };
	size_t e, n = 0, r, w, next = 0;
	int last, f, failed = 0;

	e = block_end(b, q, hi, at_end);
	last = e == hi && at_end;
	/* the next block: from the first line start at most XOVER before e */
	if (!last) {
		size_t nb = e - XOVER > q ? e - XOVER : q + 1;
		const unsigned char *nl = memchr(b + nb - 1, '\n', e - nb);

		next = nl ? (size_t)(nl - b) + 1 : nb;
	}
	if (base + lo > 0)
		k.opts |= PCRE2_NOTBOL;
	if (!last)
		k.opts |= PCRE2_NOTEOL | PCRE2_PARTIAL_HARD;
	if ((f = fixed(x, b, lo, e)) < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "redact: out of memory for a block's copy");
	k.e = e;
	k.reach = e;
	if (f) {
		/* the copy, read from its start: lo, q and e where they went */
		size_t i;

		k.s = x->fix;
		k.lo = 0;
		k.map = x->map;
		k.mlo = lo;
		for (i = 0; lo + x->map[i] < q; i++)
			;
		k.q = i;
		k.e = x->nfix;
		k.reach = k.e;
	}
	keywords_in(rs, k.s, k.q, k.e, found);
	/* the rules found, in their order: set bits, not every rule */
	for (w = 0; w < rs->words && !failed; w++)
		for (uint64_t bits = found[w]; bits && !failed; bits &= bits - 1) {
			r = w * 64 + (size_t)__builtin_ctzll(bits);
			/* the set is shared, its vendor rules compiled on first use */
			failed = rule_run(x, (struct xrule *)&rs->rules[r], &k, &n) < 0;
		}
	if (n) {
		x->n += n;
		spans_settle(x);
	}
	if (failed) /* a vendor rule's expression not compiled: PCRE2 absent, or memory */
		return tg_pcre2_load("redact", err) < 0
			       ? -1
			       : tg_error_set(err, TG_ERR_NOMEM,
					      "redact: out of memory for the rules' matching");
	if (!last && k.reach < k.e) {
		size_t at = k.map ? lo + k.map[k.reach] : k.reach;

		if (at > q && at < next)
			next = at;
	}
	x->next = last ? 0 : base + next + 1;
	return 0;
}

const char *redact_x_first(struct xscan *x, const unsigned char *d, size_t n, size_t *start,
			   size_t *end)
{
	uint64_t next = x->next;
	struct xspan *keep = x->sp;
	size_t nkeep = x->n, capkeep = x->cap;
	const char *rule = NULL;
	struct tg_error err;

	/* decoded bytes are a block of their own, their spans in a buffer
	 * of their own (kept for the next run decoded) */
	x->sp = x->dsp;
	x->cap = x->dcap;
	x->n = 0;
	if (redact_x_block(x, d, 0, 0, n, 1, 0, &err) < 0) {
		/* no memory to look: the run counts as holding a secret */
		rule = x->rs->n ? x->rs->rules[0].id : "out_of_memory";
		*start = 0;
		*end = n;
	} else if (x->n) {
		rule = x->sp[0].rule;
		*start = (size_t)x->sp[0].start;
		*end = (size_t)x->sp[0].end;
	}
	x->dsp = x->sp;
	x->dcap = x->cap;
	x->sp = keep;
	x->n = nkeep;
	x->cap = capkeep;
	x->next = next;
	return rule;
}

/* ---- keywords ---------------------------------------------------------- */

/* ASCII folded to lower case; other bytes as they are. */
const unsigned char redact_fold[256] = {
#define F4(c) F1(c), F1((c) + 1), F1((c) + 2), F1((c) + 3)
#define F1(c) (unsigned char)((c) >= 'A' && (c) <= 'Z' ? (c) + 32 : (c))
#define F16(c) F4(c), F4((c) + 4), F4((c) + 8), F4((c) + 12)
	F16(0), F16(16), F16(32), F16(48), F16(64), F16(80), F16(96), F16(112),
	F16(128), F16(144), F16(160), F16(176), F16(192), F16(208), F16(224), F16(240),
#undef F16
#undef F1
#undef F4
};

static int kw_cmp(const void *a, const void *b)
{
	const struct xkw *x = a, *y = b;

	return x->h < y->h ? -1 : x->h > y->h ? 1 : 0;
}

/* A keyword of one byte, or of bytes past ASCII (folding is ASCII's
 * here): its rule runs on every block instead, never less often than
 * gitleaks runs it. */
static int filterable(const char *w)
{
	if (!w[0] || !w[1])
		return 0;
	for (; *w; w++)
		if ((unsigned char)*w & 0x80)
			return 0;
	return 1;
}

int redact_x_keywords(struct tg_redact_ruleset *rs, struct tg_error *err)
{
	size_t total = 0, n = 0, r, k;

	for (r = 0; r < rs->n; r++) {
		for (k = 0; k < rs->rules[r].nkw; k++) {
			total += strlen(rs->rules[r].kw[k]);
			n++;
		}
	}
	if (total > X_KEYWORD_BYTES)
		return tg_error_set(err, TG_ERR_INVALID,
				    "redaction rules: keywords: %zu bytes in all, more than %d", total,
				    X_KEYWORD_BYTES);
	if (rs->n > X_RULES_MAX + REDACT_VENDORS_MAX) /* redact_x_block's bitmap */
		return tg_error_set(err, TG_ERR_INVALID, "redaction rules: %zu rules, more than %d",
				    rs->n, X_RULES_MAX + REDACT_VENDORS_MAX);
	rs->words = (unsigned)(rs->n + 63) / 64 + 1;
	if (!(rs->kws = calloc(n + 1, sizeof(*rs->kws))) ||
	    !(rs->kwtext = malloc(total + n + 1)) ||
	    !(rs->always = calloc(rs->words, sizeof(*rs->always))))
		return tg_error_set(err, TG_ERR_NOMEM, "redaction rules: out of memory");
	/* a rule without keywords runs on every block */
	for (r = 0; r < rs->n; r++)
		if (!rs->rules[r].nkw)
			rs->always[r / 64] |= 1ull << (r % 64);
	memset(rs->bigram, 0, sizeof(rs->bigram));
	total = 0;
	for (r = 0; r < rs->n; r++)
		for (k = 0; k < rs->rules[r].nkw; k++) {
			const char *w = rs->rules[r].kw[k];
			struct xkw *e = &rs->kws[rs->nkws];
			size_t len = strlen(w), j;

			if (!filterable(w)) {
				rs->always[r / 64] |= 1ull << (r % 64);
				continue;
			}
			e->w = rs->kwtext + total;
			for (j = 0; j <= len; j++)
				rs->kwtext[total + j] = (char)redact_fold[(unsigned char)w[j]];
			total += len + 1;
			e->len = len;
			e->rule = (uint32_t)r;
			e->h = (uint16_t)((unsigned)(unsigned char)e->w[0] << 8 | (unsigned char)e->w[1]);
			rs->bigram[e->h >> 6] |= 1ull << (e->h & 63);
			rs->nkws++;
		}
	qsort(rs->kws, rs->nkws, sizeof(*rs->kws), kw_cmp);
	/* each bigram's rank among the set bits, and its keywords' start */
	{
		unsigned nb = 0, w;
		size_t i;

		for (w = 0; w < 65536 / 64; w++) {
			rs->rank[w] = (uint16_t)nb;
			nb += (unsigned)__builtin_popcountll(rs->bigram[w]);
		}
		if (!(rs->first = calloc(nb + 2, sizeof(*rs->first))))
			return tg_error_set(err, TG_ERR_NOMEM, "redaction rules: out of memory");
		for (i = 0, nb = 0; i < rs->nkws; i++)
			if (i == 0 || rs->kws[i].h != rs->kws[i - 1].h)
				rs->first[nb++] = (uint16_t)i;
		rs->first[nb] = (uint16_t)rs->nkws;
	}
	return 0;
}
