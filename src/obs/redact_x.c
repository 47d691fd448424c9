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

#define MATCH_LIMIT 1000000
#define DEPTH_LIMIT 10000
#define JIT_STACK_MAX (512 * 1024)

/* ---- the set in use ---------------------------------------------------- */

static pthread_mutex_t use_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tg_redact_ruleset *in_use;
static int any_in_use; /* atomic: skips the lock when none ever was */

void tg_redact_use(struct tg_redact_ruleset *rs)
{
	struct tg_redact_ruleset *old;

	if (rs)
		__atomic_add_fetch(&rs->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&use_lock);
	old = in_use;
	in_use = rs;
	__atomic_store_n(&any_in_use, rs != NULL, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&use_lock);
	tg_redact_ruleset_free(old);
}

struct tg_redact_ruleset *redact_x_get(void)
{
	struct tg_redact_ruleset *rs;

	if (!__atomic_load_n(&any_in_use, __ATOMIC_ACQUIRE))
		return NULL;
	pthread_mutex_lock(&use_lock);
	rs = in_use;
	if (rs)
		__atomic_add_fetch(&rs->refs, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&use_lock);
	if (rs && rs->n == 0) {
		tg_redact_ruleset_free(rs);
		rs = NULL;
	}
	return rs;
}

void redact_x_init(struct xscan *x)
{
	memset(x, 0, sizeof(*x));
	x->rs = redact_x_get();
	x->next = x->rs ? 1 : 0; /* the first block starts at 0 */
}

void redact_x_release(struct xscan *x)
{
	tg_redact_ruleset_free(x->rs);
	free(x->sp);
	free(x->low);
	memset(x, 0, sizeof(*x));
}

/* ---- matching, per thread ---------------------------------------------- */

/* One match context, match data and JIT stack per thread, made on first
 * use and freed when the thread exits (as schema/regex.c does). */
static __thread pcre2_match_context *tl_ctx;
static __thread pcre2_match_data *tl_md;
static __thread uint32_t tl_pairs;
static __thread pcre2_jit_stack *tl_jit;
static pthread_key_t tl_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;

static void tl_free(void *unused)
{
	(void)unused;
	pcre2_match_data_free(tl_md);
	pcre2_match_context_free(tl_ctx);
	pcre2_jit_stack_free(tl_jit);
	tl_md = NULL;
	tl_ctx = NULL;
	tl_jit = NULL;
	tl_pairs = 0;
}

static void tl_key_make(void)
{
	pthread_key_create(&tl_key, tl_free);
}

static int tl_ready(uint32_t groups)
{
	if (!tl_ctx) {
		pthread_once(&tl_once, tl_key_make);
		pthread_setspecific(tl_key, &tl_key);
		if (!(tl_ctx = pcre2_match_context_create(NULL)))
			return -1;
		pcre2_set_match_limit(tl_ctx, MATCH_LIMIT);
		pcre2_set_depth_limit(tl_ctx, DEPTH_LIMIT);
		tl_jit = pcre2_jit_stack_create(32 * 1024, JIT_STACK_MAX, NULL);
		if (tl_jit)
			pcre2_jit_stack_assign(tl_ctx, NULL, tl_jit);
	}
	if (!tl_md || tl_pairs < groups + 1) {
		pcre2_match_data_free(tl_md);
		tl_pairs = groups + 1 < 16 ? 16 : groups + 1;
		if (!(tl_md = pcre2_match_data_create(tl_pairs, NULL))) {
			tl_pairs = 0;
			return -1;
		}
	}
	return 0;
}

/* 1: re matches somewhere in s[0, n); 0: not; -1: undecided (limits). */
static int search(const pcre2_code *re, const unsigned char *s, size_t n)
{
	int rc = pcre2_match(re, s, n, 0, 0, tl_md, tl_ctx);

	return rc >= 0 ? 1 : rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
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
};

/* 1 when allowlist a lets the secret go; -1 when a regex was undecided
 * (then it does not). */
static int allowed(struct xscan *x, const struct xallow *a, const struct judged *j)
{
	int by_re = 0, by_stop = 0;
	size_t i;

	if (a->nre) {
		const unsigned char *s = a->target == XA_MATCH ? j->match : a->target == XA_LINE ? j->line : j->secret;
		size_t n = a->target == XA_MATCH ? j->nmatch : a->target == XA_LINE ? j->nline : j->nsecret;

		for (i = 0; i < a->nre && !by_re; i++) {
			int r = search(a->re[i], s, n);

			if (r < 0)
				return 0;
			by_re = r;
		}
	}
	if (a->nstop) {
		size_t n = j->nsecret < XSEG ? j->nsecret : XSEG;

		for (i = 0; i < n; i++)
			x->low[i] = j->secret[i] >= 'A' && j->secret[i] <= 'Z' ? (unsigned char)(j->secret[i] + 32) : j->secret[i];
		for (i = 0; i < a->nstop && !by_stop; i++)
			by_stop = memmem(x->low, n, a->stop[i], strlen(a->stop[i])) != NULL;
	}
	if (a->all)
		return (!a->nre || by_re) && (!a->nstop || by_stop);
	return by_re || by_stop;
}

/* The secret of a match (ov: its offsets in s), as gitleaks takes it:
 * secretGroup's, or the first group that matched something, or the
 * match without the newlines at its ends. 0 when there is none. */
static int secret_of(const struct xrule *r, const PCRE2_SIZE *ov, const unsigned char *s,
		     size_t *a, size_t *b)
{
	uint32_t g;

	if (r->group) {
		if (ov[2 * r->group] == PCRE2_UNSET || ov[2 * r->group] == ov[2 * r->group + 1])
			return 0;
		*a = ov[2 * r->group];
		*b = ov[2 * r->group + 1];
		return 1;
	}
	for (g = 1; g <= r->groups; g++)
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

/* The block's spans nsp[0, n) (any order) merged into x's pending ones:
 * sorted, overlaps joined under the rule that starts first. */
static int spans_merge(struct xscan *x, struct xspan *nsp, size_t n, struct tg_error *err)
{
	struct xspan *all;
	size_t i, k = 0;

	if (!n)
		return 0;
	all = malloc((x->n + n) * sizeof(*all));
	if (!all)
		return tg_error_set(err, TG_ERR_NOMEM, "redact: out of memory for spans");
	if (x->n)
		memcpy(all, x->sp, x->n * sizeof(*all));
	memcpy(all + x->n, nsp, n * sizeof(*all));
	qsort(all, x->n + n, sizeof(*all), span_cmp);
	for (i = 0; i < x->n + n; i++) {
		if (k && all[i].start <= all[k - 1].end) {
			if (all[i].end > all[k - 1].end)
				all[k - 1].end = all[i].end;
			all[k - 1].flags |= all[i].flags;
			continue;
		}
		all[k++] = all[i];
	}
	free(x->sp);
	x->sp = all;
	x->n = k;
	x->cap = x->n + n;
	return 0;
}

/* ---- a block ------------------------------------------------------------ */

/* Which rules s[q, e) holds a keyword of: bits in found[rs->words]. */
static void keywords_in(const struct tg_redact_ruleset *rs, const unsigned char *s, size_t q,
			size_t e, uint64_t *found)
{
	unsigned st = 0;

	memset(found, 0, rs->words * sizeof(*found));
	if (rs->states <= 1)
		return;
	for (size_t i = q; i < e; i++) {
		st = rs->go[(size_t)st * rs->ncls + rs->cls[s[i]]];
		if (st)
			for (unsigned w = 0; w < rs->words; w++)
				found[w] |= rs->out[(size_t)st * rs->words + w];
	}
}

/* Rule r over s[q, e) (s[lo, q) before it, for \b and (?m)^; opts:
 * PCRE2_NOTBOL/NOTEOL), its secrets appended to sp (at most XSPAN_MAX;
 * then the rest of the block is one span). */
static void rule_run(struct xscan *x, const struct xrule *r, const unsigned char *s, size_t lo,
		     size_t q, size_t e, uint32_t opts, uint64_t base, struct xspan *sp, size_t *n)
{
	size_t off = q;

	while (off <= e) {
		PCRE2_SIZE *ov;
		size_t a, b, ms, me;
		int rc = pcre2_match(r->re, s + lo, e - lo, off - lo, opts, tl_md, tl_ctx);

		if (rc == PCRE2_ERROR_NOMATCH)
			return;
		if (rc < 0 || *n == XSPAN_MAX) {
			/* undecided, or too many: the rest of the block is redacted */
			struct xspan rest = { base + off, base + e, r->id, TG_REDACT_UNDECIDED };

			if (*n < XSPAN_MAX) {
				sp[(*n)++] = rest;
			} else {
				if (sp[*n - 1].start < rest.start)
					rest.start = sp[*n - 1].start;
				sp[*n - 1] = rest;
			}
			return;
		}
		ov = pcre2_get_ovector_pointer(tl_md);
		for (uint32_t g = 0; g <= r->groups; g++)
			if (ov[2 * g] != PCRE2_UNSET) {
				ov[2 * g] += lo;
				ov[2 * g + 1] += lo;
			}
		ms = ov[0];
		me = ov[1];
		if (secret_of(r, ov, s, &a, &b) && stands(x, r, s, lo, e, ms, me, a, b))
			sp[(*n)++] = (struct xspan){ base + a, base + b, r->id, 0 };
		if (me > ms) {
			off = me;
			continue;
		}
		/* an empty match: on past its character */
		off = ms + 1;
		while (off < e && (s[off] & 0xC0) == 0x80)
			off++;
	}
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

int redact_x_block(struct xscan *x, const unsigned char *b, size_t lo, size_t q, size_t hi,
		   int at_end, uint64_t base, struct tg_error *err)
{
	const struct tg_redact_ruleset *rs = x->rs;
	uint64_t found[X_RULES_MAX / 64 + 2];
	struct xspan *sp;
	size_t e, n = 0, r;
	uint32_t opts = 0;
	int rc;

	e = block_end(b, q, hi, at_end);
	/* the next block: from the first line start at most XOVER before e */
	if (e == hi && at_end) {
		x->next = 0;
	} else {
		size_t nb = e - XOVER > q ? e - XOVER : q + 1;
		const unsigned char *nl = memchr(b + nb - 1, '\n', e - nb);

		x->next = base + (nl ? (size_t)(nl - b) + 1 : nb) + 1;
	}
	if (base + lo > 0)
		opts |= PCRE2_NOTBOL;
	if (!(e == hi && at_end))
		opts |= PCRE2_NOTEOL;
	if (tl_ready(rs->groups) < 0)
		return tg_error_set(err, TG_ERR_NOMEM, "redact: out of memory for matching");
	if (!(sp = malloc(XSPAN_MAX * sizeof(*sp))))
		return tg_error_set(err, TG_ERR_NOMEM, "redact: out of memory for spans");
	keywords_in(rs, b, q, e, found);
	for (r = 0; r < rs->n; r++)
		if (rs->rules[r].always || (found[r / 64] & (1ull << (r % 64))))
			rule_run(x, &rs->rules[r], b, lo, q, e, opts, base, sp, &n);
	rc = spans_merge(x, sp, n, err);
	free(sp);
	return rc;
}

const char *redact_x_first(struct xscan *x, const unsigned char *d, size_t n, size_t *start,
			   size_t *end)
{
	uint64_t next = x->next;
	struct xspan *keep = x->sp;
	size_t nkeep = x->n, capkeep = x->cap;
	const char *rule = NULL;
	struct tg_error err;

	/* decoded bytes are a block of their own, beside the scan's spans */
	x->sp = NULL;
	x->n = x->cap = 0;
	if (redact_x_block(x, d, 0, 0, n, 1, 0, &err) == 0 && x->n) {
		rule = x->sp[0].rule;
		*start = (size_t)x->sp[0].start;
		*end = (size_t)x->sp[0].end;
	}
	free(x->sp);
	x->sp = keep;
	x->n = nkeep;
	x->cap = capkeep;
	x->next = next;
	return rule;
}
