/*
 * The secret redactor's scan and its two faces, one call and a stream
 * (include/toolgate/redact.h, docs/REDACTION.md). The rules are in
 * redact_rules.c.
 *
 * One loop walks the input a byte at a time through a class table and
 * stops only where a rule could begin: a byte that starts an anchored
 * prefix after a non-alphanumeric byte, ':' or '=', or the start of a run
 * of token bytes long enough for the generic rule. There it asks the rules
 * in order (anchored, keyed, generic); the first that matches wins, its
 * span is replaced by "[REDACTED:<rule>]" and the scan goes on after it.
 *
 * At the start of a run of base64 or hex, before the generic rule, the
 * run is decoded (redact_enc.c) and the rules run on the decoded bytes,
 * once (they do not decode again): a secret there makes the whole run
 * the match.
 *
 * Each decision at position q reads at most LOOKBEHIND bytes before q and
 * WINDOW after (the window is cut there, so a rule cannot read further by
 * mistake). The scan decides a position only once WINDOW bytes follow it
 * or the input has ended; a stream keeps the undecided tail and
 * LOOKBEHIND bytes of context, and so makes exactly the decisions one
 * call makes, whatever the chunks.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "obs/redact_int.h"
#include "toolgate/redact.h"

#define WINDOW TG_REDACT_WINDOW
#define LOOKBEHIND TG_REDACT_LOOKBEHIND
/* A stream's buffer: the context, a window, and room for new input. */
#define STREAM_BUF (64 * 1024)
#define STEP 4096
#define HUGE_OUT (2u << 20)
/* Secrets remembered so that their repeats are redacted too. */
#define SEEN_MAX 64
#define SEEN_MIN 8
#define SEEN_LONGEST 256
/* The secrets a decoded run remembers at most. */
#define DSEC_MAX 4

/* What the scan has found so far, to redact again wherever it recurs: a
 * tool that read a password from a file and then echoes it must not show
 * it because the second time has no key before it. A bitmap of first two
 * bytes keeps the check to one lookup a byte. */
struct seen {
	uint64_t bits[65536 / 64];
	unsigned char bytes[SEEN_MAX][SEEN_LONGEST];
	unsigned short len[SEEN_MAX];
	const char *rule[SEEN_MAX];
	size_t n;
};

static const char *const rule_names[] = {
	"aws_access_key_id", "aws_secret_access_key", "gcp_api_key", "gcp_service_account",
	"azure_storage_key", "github_token", "gitlab_token", "slack_token", "slack_webhook",
	"stripe_key", "openai_key", "anthropic_key", "npm_token", "pypi_token", "sendgrid_key",
	"twilio_key", "private_key", "jwt", "url_password", "connection_string",
	"password_assignment", "high_entropy", NULL,
};

/* The hand-written rules' names, then the vendor rules' (redact_vendors.c). */
static const char *all_names[sizeof(rule_names) / sizeof(rule_names[0]) + REDACT_VENDORS_MAX];
static pthread_once_t all_once = PTHREAD_ONCE_INIT;

static void all_make(void)
{
	size_t n = 0, i;

	for (i = 0; rule_names[i]; i++)
		all_names[n++] = rule_names[i];
	for (i = 0; redact_vendor_ids[i]; i++)
		all_names[n++] = redact_vendor_ids[i];
	all_names[n] = NULL;
}

const char *const *tg_redact_rules(void)
{
	pthread_once(&all_once, all_make);
	return all_names;
}

/* The scan's state, for one input. Positions are in the current buffer;
 * base is the input offset of its byte 0. */
struct scan {
	uint64_t base;
	size_t pos;      /* the next position to decide */
	size_t emitted;  /* input before this was written (as is or redacted) */
	size_t counted;  /* newlines before this are in line */
	uint64_t line;
	size_t checked;  /* bytes before this went through the UTF-8 check */
	unsigned u8need; /* UTF-8: continuation bytes still expected */
	unsigned char u8lo, u8hi;
	unsigned flags;
	int more;        /* the last match was cut at a cap: MORE_KEY, MORE_ENC */
	const char *more_rule;
	uint64_t enc_next; /* a run cut at the cap, nothing found: decode again here (input offset + 1) */
	uint64_t enc_done; /* the input offset where the last run decoded ended */
	/* the secrets the last run decoded held, remembered when it is
	 * redacted: their bare repeats later are repeats */
	struct {
		unsigned char b[SEEN_LONGEST];
		size_t len;
		const char *rule;
	} dsec[DSEC_MAX];
	size_t ndsec;
	int nodecode;    /* REDACT_NO_DECODE */
	int noentropy;   /* REDACT_NO_ENTROPY */
	struct tg_redact_finding *f;
	size_t nf, fcap;
	uint64_t total;
	struct seen *seen; /* allocated at the first finding */
	struct xscan x;    /* an operator's rules (redact_x.c) */
	tg_redact_write_fn write;
	void *arg;
	int failed;
};

static unsigned pair(const unsigned char *b)
{
	return (unsigned)b[0] | (unsigned)b[1] << 8;
}

static int seen_add(struct scan *s, const unsigned char *v, size_t n, const char *rule,
		    struct tg_error *err)
{
	struct seen *sn = s->seen;
	size_t i;

	if (n < SEEN_MIN || n > SEEN_LONGEST)
		return 0;
	if (!sn) {
		sn = s->seen = calloc(1, sizeof(*sn));
		if (!sn)
			return tg_error_set(err, TG_ERR_NOMEM, "redact: out of memory");
	}
	if (sn->n == SEEN_MAX)
		return 0; /* the first ones stay: deterministic, and enough for one output */
	for (i = 0; i < sn->n; i++)
		if (sn->len[i] == n && memcmp(sn->bytes[i], v, n) == 0)
			return 0;
	memcpy(sn->bytes[sn->n], v, n);
	sn->len[sn->n] = (unsigned short)n;
	sn->rule[sn->n] = rule;
	sn->n++;
	sn->bits[pair(v) / 64] |= 1ull << (pair(v) % 64);
	return 0;
}

/* The longest remembered secret at q that fits before hi. */
static int seen_at(const struct seen *sn, const unsigned char *b, size_t hi, size_t q,
		   struct rmatch *m)
{
	size_t i, best = 0;

	if (!sn || q + SEEN_MIN > hi || !(sn->bits[pair(b + q) / 64] & (1ull << (pair(b + q) % 64))))
		return 0;
	for (i = 0; i < sn->n; i++)
		if (sn->len[i] > best && q + sn->len[i] <= hi && b[q] == sn->bytes[i][0] &&
		    b[q + 1] == sn->bytes[i][1] && memcmp(b + q, sn->bytes[i], sn->len[i]) == 0) {
			best = sn->len[i];
			m->rule = sn->rule[i];
		}
	if (!best)
		return 0;
	m->start = q;
	m->end = q + best;
	m->flags = 0;
	m->more = 0;
	return 1;
}

/* ---- flags ----------------------------------------------------------- */

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/* UTF-8 validity and NUL bytes, over b[0..n), carried across calls. */
static void check_bytes(struct scan *s, const unsigned char *b, size_t n)
{
	size_t i = 0;

	if ((s->flags & (TG_REDACT_BINARY | TG_REDACT_INVALID_UTF8)) ==
	    (TG_REDACT_BINARY | TG_REDACT_INVALID_UTF8))
		return;
	while (i < n) {
		unsigned char x;

		if (s->u8need == 0) {
			/* ASCII without NUL, eight bytes at a time */
			while (i + 8 <= n) {
				uint64_t v;

				memcpy(&v, b + i, 8);
				if ((v & HIGHS) || ((v - ONES) & ~v & HIGHS))
					break;
				i += 8;
			}
			if (i >= n)
				break;
			x = b[i++];
			if (x < 0x80) {
				if (x == 0)
					s->flags |= TG_REDACT_BINARY;
			} else if (x < 0xc2 || x > 0xf4) {
				s->flags |= TG_REDACT_INVALID_UTF8;
			} else if (x < 0xe0) {
				s->u8need = 1, s->u8lo = 0x80, s->u8hi = 0xbf;
			} else if (x < 0xf0) {
				s->u8need = 2;
				s->u8lo = x == 0xe0 ? 0xa0 : 0x80; /* overlong */
				s->u8hi = x == 0xed ? 0x9f : 0xbf; /* surrogates */
			} else {
				s->u8need = 3;
				s->u8lo = x == 0xf0 ? 0x90 : 0x80;
				s->u8hi = x == 0xf4 ? 0x8f : 0xbf; /* past U+10FFFF */
			}
			continue;
		}
		x = b[i];
		if (x < s->u8lo || x > s->u8hi) {
			/* a broken sequence: this byte starts afresh */
			s->flags |= TG_REDACT_INVALID_UTF8;
			s->u8need = 0;
			continue;
		}
		i++;
		s->u8need--;
		s->u8lo = 0x80;
		s->u8hi = 0xbf;
	}
}

/* ---- output ---------------------------------------------------------- */

static int out(struct scan *s, const char *buf, size_t n, struct tg_error *err)
{
	if (n == 0 || s->failed)
		return s->failed ? -1 : 0;
	if (s->write(s->arg, buf, n, err) < 0) {
		s->failed = 1;
		if (err && err->code == TG_OK)
			tg_error_set(err, TG_ERR_SYSTEM, "redact: the output could not be written");
		return -1;
	}
	return 0;
}

static void count_lines(struct scan *s, const unsigned char *b, size_t upto)
{
	const unsigned char *p = b + s->counted, *e = b + upto;

	while (p < e && (p = memchr(p, '\n', (size_t)(e - p)))) {
		s->line++;
		p++;
	}
	if (upto > s->counted)
		s->counted = upto;
}

static int record(struct scan *s, const unsigned char *b, const struct rmatch *m,
		  struct tg_error *err)
{
	struct tg_redact_finding *f;

	count_lines(s, b, m->start);
	if (seen_add(s, b + m->start, m->end - m->start, m->rule, err) < 0)
		return -1;
	if (m->flags & TG_REDACT_ENCODED) {
		size_t i;

		for (i = 0; i < s->ndsec; i++)
			if (seen_add(s, s->dsec[i].b, s->dsec[i].len, s->dsec[i].rule, err) < 0)
				return -1;
		s->ndsec = 0;
	}
	s->total++;
	s->flags |= m->flags;
	if (s->nf == TG_REDACT_FINDINGS_MAX) {
		s->flags |= TG_REDACT_FINDINGS_CAPPED;
		return 0;
	}
	if (s->nf == s->fcap) {
		size_t cap = s->fcap ? s->fcap * 2 : 16;

		if (cap > TG_REDACT_FINDINGS_MAX)
			cap = TG_REDACT_FINDINGS_MAX;
		f = realloc(s->f, cap * sizeof(*f));
		if (!f)
			return tg_error_set(err, TG_ERR_NOMEM, "redact: out of memory for findings");
		s->f = f;
		s->fcap = cap;
	}
	f = &s->f[s->nf++];
	f->rule = m->rule;
	f->offset = s->base + m->start;
	f->length = m->end - m->start;
	f->line = s->line + 1;
	f->flags = m->flags;
	return 0;
}

/* ---- the scan -------------------------------------------------------- */

/* The next position at or after p, before lim, where a rule could begin
 * (lim when none): a run counts from run_min bytes. b[p - 1] exists
 * unless p is the input's first byte. */
static size_t next_candidate(const unsigned char *b, size_t p, size_t lim, size_t hi,
			     const struct seen *sn, size_t run_min)
{
	unsigned prev = p ? redact_cls[b[p - 1]] : 0;

	for (; p < lim; p++) {
		unsigned k = redact_cls[b[p]];

		if (sn && p + 1 < hi && (sn->bits[pair(b + p) / 64] & (1ull << (pair(b + p) % 64))))
			return p; /* a remembered secret may start here */
		if (k & C_ASSIGN)
			return p;
		if ((k & C_ANCH) && (!(prev & C_ALNUM) || b[p] == '-'))
			return p;
		if ((k & C_TOK) && !(prev & C_TOK)) {
			/* a run starts: a candidate for the generic rule if long */
			size_t j = p + 1;

			/* JSON's escaped slash "\\/" goes on in it */
			while (j < hi && j - p < run_min &&
			       ((redact_cls[b[j]] & C_TOK) || (b[j] == '\\' && j + 1 < hi && b[j + 1] == '/')))
				j++;
			if (j - p >= run_min)
				return p;
		}
		prev = k;
	}
	return lim;
}

/* Runs count as candidates from ENC_MIN bytes when they are decoded
 * (ENC_SEEN_MIN once a secret is remembered: its base64 is a repeat),
 * from HE_MIN (the generic rule's least) when not. */
static size_t run_min(const struct scan *s)
{
	return s->nodecode ? HE_MIN : s->seen ? ENC_SEEN_MIN : ENC_MIN;
}

/* The rules in order at candidate q. In a stream, b holds LOOKBEHIND
 * bytes before any candidate (stream_compact keeps them), so the window
 * starts where it would in one call over the whole input. */
static struct rwin window_at(const unsigned char *b, size_t len, size_t q)
{
	struct rwin w;

	w.b = b;
	w.lo = q > LOOKBEHIND ? q - LOOKBEHIND : 0;
	w.hi = len - q > WINDOW ? q + WINDOW : len;
	return w;
}

static size_t window_end(size_t len, size_t q)
{
	return len - q > WINDOW ? q + WINDOW : len;
}

static int try_encoded(struct scan *s, const unsigned char *b, size_t len, size_t q, int mid,
		       struct rmatch *m);
static int try_short(struct scan *s, const struct rwin *w, size_t q, size_t r,
		     struct rmatch *m);

static int builtin_rules(struct scan *s, const unsigned char *b, size_t len, size_t q,
			 struct rmatch *m);

/* The operator's span pending at q (it starts at or before q and ends
 * after it), or NULL. settle() moves q past spans it emitted without
 * dropping them (only x_at does): those must not count. */
static const struct xspan *x_covers(const struct scan *s, size_t q)
{
	size_t i;

	for (i = 0; i < s->x.n && s->x.sp[i].start <= s->base + q; i++)
		if (s->x.sp[i].end > s->base + q)
			return &s->x.sp[i];
	return NULL;
}

/* Where the next pending span starts after p, at most lim. */
static size_t x_stop(const struct scan *s, size_t p, size_t lim)
{
	size_t i;

	for (i = 0; i < s->x.n; i++)
		if (s->x.sp[i].start > s->base + p)
			return s->x.sp[i].start - s->base < lim ? (size_t)(s->x.sp[i].start - s->base) : lim;
	return lim;
}

/* The rules in order at q, and an operator's span pending there: both
 * redacted when both match (a rule that takes a key block's first line
 * must not leave its body to chance). s: the scan, for the encoded runs
 * and the spans; NULL in decoded bytes (one level). */
static int try_rules(struct scan *s, const unsigned char *b, size_t len, size_t q,
		     struct rmatch *m)
{
	const struct xspan *sp = s ? x_covers(s, q) : NULL;
	int got = builtin_rules(s, b, len, q, m);

	if (!sp)
		return got;
	if (!got || (size_t)(sp->end - s->base) > m->end) {
		/* a built-in match cut at a cap goes on after the union */
		m->end = (size_t)(sp->end - s->base);
		m->more = got ? m->more : 0;
		m->flags = got ? m->flags : 0;
	}
	m->start = q;
	m->rule = sp->rule;
	m->flags |= sp->flags;
	return 1;
}

static int builtin_rules(struct scan *s, const unsigned char *b, size_t len, size_t q,
			 struct rmatch *m)
{
	struct rwin w = window_at(b, len, q);
	unsigned k = redact_cls[b[q]];
	unsigned prev;

	prev = q > w.lo ? redact_cls[b[q - 1]] : 0;
	if ((k & C_ANCH) && (!(prev & C_ALNUM) || b[q] == '-') && rules_anchor(&w, q, m))
		return 1;
	if ((k & C_ASSIGN) && rules_assign(&w, q, m))
		return 1;
	if ((k & C_TOK) && !(prev & C_TOK)) {
		/* a run, or a word where an anchor was asked about: counted
		 * as far as the two rules of runs care */
		size_t j = q + 1;

		while (j < w.hi && j - q < HE_MIN &&
		       ((redact_cls[b[j]] & C_TOK) || (b[j] == '\\' && j + 1 < w.hi && b[j + 1] == '/')))
			j++;
		if (j - q >= ENC_MIN && s && !s->nodecode && try_encoded(s, b, len, q, 0, m))
			return 1;
		if (j - q < ENC_MIN && j - q >= ENC_SEEN_MIN && s && !s->nodecode && s->seen &&
		    try_short(s, &w, q, j - q, m))
			return 1;
		if (j - q >= HE_MIN && !(s && s->noentropy) && rules_entropy(&w, q, m))
			return 1;
	}
	return 0;
}

/* The first rule that matches anywhere in decoded bytes d[0..n) (at
 * most ENC_CAP), remembered secrets included: its name, or NULL. The
 * first DSEC_MAX secrets found, in s->dsec. */
static const char *decoded_secret(struct scan *s, const unsigned char *d, size_t n)
{
	const char *first = NULL;
	struct rmatch m;
	size_t p = 0;

	while (s->ndsec < DSEC_MAX && (p = next_candidate(d, p, n, n, s->seen, HE_MIN)) < n) {
		if (try_rules(NULL, d, n, p, &m) || seen_at(s->seen, d, window_end(n, p), p, &m)) {
			if (!first)
				first = m.rule;
			if (m.end - m.start <= SEEN_LONGEST) {
				memcpy(s->dsec[s->ndsec].b, d + m.start, m.end - m.start);
				s->dsec[s->ndsec].len = m.end - m.start;
				s->dsec[s->ndsec++].rule = m.rule;
			}
			p = m.end > p ? m.end : p + 1;
			continue;
		}
		p++;
	}
	if (!first && s->x.rs) {
		size_t a, e;

		first = redact_x_first(&s->x, d, n, &a, &e);
		if (first && e - a <= SEEN_LONGEST && s->ndsec < DSEC_MAX) {
			memcpy(s->dsec[s->ndsec].b, d + a, e - a);
			s->dsec[s->ndsec].len = e - a;
			s->dsec[s->ndsec++].rule = first;
		}
	}
	return first;
}

/* A run of ENC_SEEN_MIN to ENC_MIN characters at q (r of them), with
 * secrets remembered: when its base64 holds one, the run is a repeat. */
static int try_short(struct scan *s, const struct rwin *w, size_t q, size_t r,
		     struct rmatch *m)
{
	unsigned char d[ENC_MIN];
	size_t dn, end, i;

	dn = enc_short(w, q, r, d, &end);
	for (i = 0; i + SEEN_MIN <= dn; i++)
		if (seen_at(s->seen, d, dn, i, m)) {
			m->start = q;
			m->end = end;
			m->flags = TG_REDACT_ENCODED;
			return 1;
		}
	return 0;
}

/* The run of base64 or hex at q (mid: the rest of a run cut at the cap,
 * from where s->enc_next said), decoded: when it reads as text and the
 * rules find a secret in it, the whole run is the match, named by that
 * secret's rule, and a run cut at the cap is redacted on to its end
 * (MORE_ENC). Nothing found in a run cut at the cap: it is decoded again
 * from ENC_BACK before the cut, so that a secret across it is whole in
 * one of the two decisions. */
static int try_encoded(struct scan *s, const unsigned char *b, size_t len, size_t q, int mid,
		       struct rmatch *m)
{
	unsigned char buf[ENC_CAP];
	const unsigned char *dec;
	struct rwin w = window_at(b, len, q);
	struct enc_span sp;
	const char *rule;
	size_t dn;

	if (!enc_run(&w, q, mid, s->enc_done > s->base ? (size_t)(s->enc_done - s->base) : 0, buf,
		     &dec, &dn, &sp))
		return 0;
	if (s->base + sp.end > s->enc_done)
		s->enc_done = s->base + sp.end;
	s->ndsec = 0;
	rule = dn && enc_texty(dec, dn) ? decoded_secret(s, dec, dn) : NULL;
	if (!rule) {
		if (sp.capped)
			s->enc_next = s->base + sp.back + 1;
		return 0;
	}
	enc_match(m, &sp, rule);
	return 1;
}

/* Write the input up to m and m's marker, and record it. */
static int emit(struct scan *s, const unsigned char *b, const struct rmatch *m,
		struct tg_error *err)
{
	char marker[80];
	int mlen;

	if (record(s, b, m, err) < 0 ||
	    out(s, (const char *)b + s->emitted, m->start - s->emitted, err) < 0)
		return -1;
	mlen = snprintf(marker, sizeof(marker), "[REDACTED:%s]", m->rule);
	if (out(s, marker, (size_t)mlen, err) < 0)
		return -1;
	s->emitted = m->end;
	return 0;
}

/* A match decided at p may start later (after a key's blanks, a flag's
 * name, a scheme word): the positions between are decided too, first,
 * for what starts there. A match there that ends before m is written
 * before it; one that reaches into m widens m over both. */
static int settle(struct scan *s, const unsigned char *b, size_t len, size_t p,
		  struct rmatch *m, struct tg_error *err)
{
	size_t q = p;
	struct rmatch in;

	while (q < m->start) {
		if (q == p) {
			/* a rule took p; a remembered secret may start there too */
			if (!seen_at(s->seen, b, window_end(len, q), q, &in)) {
				q++;
				continue;
			}
		} else {
			if (!x_covers(s, q)) {
				size_t to = x_stop(s, q, m->start);

				q = next_candidate(b, q, to, len, s->seen, run_min(s));
				if (q >= m->start)
					break;
				if (q == to)
					continue; /* a span starts here: decided next round */
			}
			/* only what starts where it is decided: a secret in
			 * the skipped bytes is one of those, and a match that
			 * skips in turn would make this quadratic */
			if ((!try_rules(s, b, len, q, &in) &&
			     !seen_at(s->seen, b, window_end(len, q), q, &in)) ||
			    in.start != q) {
				q++;
				continue;
			}
		}
		if (in.end > m->start) {
			/* one redaction over both, named by the rule decided first */
			m->start = in.start;
			if (in.end > m->end) {
				m->end = in.end;
				m->more = in.more;
			}
			m->flags |= in.flags;
			return 0;
		}
		if (emit(s, b, &in, err) < 0)
			return -1;
		q = in.end;
	}
	return 0;
}

/* What goes on right after a match cut at a cap: a key block's body, an
 * encoded run. */
static int more_at(struct scan *s, const unsigned char *b, size_t len, size_t p,
		   struct rmatch *m)
{
	struct rwin w = window_at(b, len, p);
	int kind = s->more;

	s->more = 0;
	return kind == MORE_KEY ? rules_key_more(&w, p, m) : rules_enc_more(&w, p, s->more_rule, m);
}

/* Where the scan must stop next, at most lim: an encoded run's next
 * decision (s->enc_next, decided there first) when one is due before. */
static size_t enc_due(struct scan *s, const unsigned char *b, size_t len, size_t p, size_t lim,
		      struct rmatch *m, int *matched)
{
	uint64_t at = s->base + p + 1;

	*matched = 0;
	if (s->enc_next && s->enc_next <= at) {
		/* at p, or passed by a match that ran over it: then from the
		 * match's end, where the scan resumed, the run going on there */
		s->enc_next = 0;
		if (try_encoded(s, b, len, p, 1, m)) {
			*matched = 1;
			return p;
		}
	}
	if (s->enc_next && s->enc_next - 1 - s->base < lim)
		return (size_t)(s->enc_next - 1 - s->base);
	return lim;
}

/* The operator's rules at p: the block due by p + SKIP_MAX decided (so
 * that the positions a match decided at p skips see its spans; the
 * block's XSEG fit in p's window with that to spare), or one a match
 * ran past (read from where it starts: the buffer keeps it), and the
 * spans behind p dropped. */
static int x_at(struct scan *s, const unsigned char *b, size_t len, int eof, size_t p,
		struct tg_error *err)
{
	struct xscan *x = &s->x;
	size_t i;

	while (x->next && x->next - 1 <= s->base + p + SKIP_MAX) {
		size_t q = (size_t)(x->next - 1 - s->base);
		struct rwin w = window_at(b, len, q);

		if (redact_x_block(x, b, w.lo, q, w.hi, eof && w.hi == len, s->base, err) < 0)
			return -1;
	}
	for (i = 0; i < x->n && x->sp[i].end <= s->base + p; i++)
		;
	if (i) {
		memmove(x->sp, x->sp + i, (x->n - i) * sizeof(*x->sp));
		x->n -= i;
	}
	return 0;
}

/* At most lim: where the next block is due (SKIP_MAX before its start). */
static size_t x_due(const struct scan *s, size_t p, size_t lim)
{
	uint64_t at;

	if (!s->x.next)
		return lim;
	at = s->x.next - 1 - SKIP_MAX;
	return at > s->base + p && at - s->base < lim ? (size_t)(at - s->base) : lim;
}

/* Decide what can be decided in b[0..len) (all of it at eof), writing the
 * output up to there. A position is decided once its window and the
 * positions a match there may skip are all in b. */
static int scan_run(struct scan *s, const unsigned char *b, size_t len, int eof,
		    struct tg_error *err)
{
	size_t lim = eof ? len : (len > WINDOW + SKIP_MAX ? len - WINDOW - SKIP_MAX : 0);
	size_t p = s->pos;
	struct rmatch m;

	while (p < lim) {
		size_t stop = lim;
		int matched = 0;

		if (s->x.rs && x_at(s, b, len, eof, p, err) < 0)
			return -1;
		if (s->more && more_at(s, b, len, p, &m))
			goto matched;
		if (s->enc_next)
			stop = enc_due(s, b, len, p, lim, &m, &matched);
		if (matched)
			goto matched;
		if (!x_covers(s, p)) {
			if (s->x.rs)
				stop = x_stop(s, p, x_due(s, p, stop));
			p = next_candidate(b, p, stop, len, s->seen, run_min(s));
			if (p >= stop) {
				if (stop < lim)
					continue; /* a run's, a block's or a span's turn first */
				break;
			}
		}
		/* a match further than SKIP_MAX from p would be decided on
		 * bytes a stream may not hold yet: none is, by construction */
		if ((!try_rules(s, b, len, p, &m) && !seen_at(s->seen, b, window_end(len, p), p, &m)) ||
		    m.start > p + SKIP_MAX) {
			p++;
			continue;
		}
		if (m.start > p && settle(s, b, len, p, &m, err) < 0)
			return -1;
matched:
		s->more = m.more;
		s->more_rule = m.rule;
		if (emit(s, b, &m, err) < 0)
			return -1;
		p = m.end;
	}
	if (p < lim)
		p = lim;
	s->pos = p; /* past lim when a match ran on: decided up to its end */
	if (out(s, (const char *)b + s->emitted, p - s->emitted, err) < 0)
		return -1;
	s->emitted = p;
	count_lines(s, b, p);
	check_bytes(s, b + s->checked, p - s->checked);
	s->checked = p;
	if (eof && s->u8need)
		s->flags |= TG_REDACT_INVALID_UTF8; /* cut mid-character */
	return 0;
}

/* ---- one call -------------------------------------------------------- */

struct growbuf {
	char *p;
	size_t len, cap;
};

static int grow_write(void *arg, const char *buf, size_t n, struct tg_error *err)
{
	struct growbuf *g = arg;

	if (g->len + n + 1 > g->cap) {
		size_t cap = g->cap ? g->cap : 4096;
		char *p;

		while (cap < g->len + n + 1)
			cap *= 2;
		p = realloc(g->p, cap);
		if (!p)
			return tg_error_set(err, TG_ERR_NOMEM, "redact: out of memory for the output");
		g->p = p;
		g->cap = cap;
	}
	memcpy(g->p + g->len, buf, n);
	g->len += n;
	return 0;
}

int tg_redact(const char *in, size_t n, struct tg_redact_out *out_, struct tg_error *err)
{
	return redact_scan(in, n, 0, out_, err);
}

int redact_scan(const char *in, size_t n, unsigned opts, struct tg_redact_out *out_,
		struct tg_error *err)
{
	struct growbuf g = { NULL, 0, 0 };
	struct scan s;
	int rc;

	memset(out_, 0, sizeof(*out_));
	memset(&s, 0, sizeof(s));
	tg_error_clear(err);
	s.write = grow_write;
	s.arg = &g;
	s.nodecode = (opts & REDACT_NO_DECODE) != 0;
	s.noentropy = (opts & REDACT_NO_ENTROPY) != 0;
	if (redact_x_init(&s.x, err) < 0)
		return -1;
	/* room for the input as is, and markers longer than what they hide:
	 * one allocation for most inputs */
	g.cap = n + n / 16 + 4096;
	if (g.cap >= HUGE_OUT) {
		/* a fresh output of many MiB takes a page fault every 4 KiB
		 * (dear in a VM: a quarter of a 50 MB call's time here); in
		 * 2 MiB pages, where the kernel allows them, one every 2 MiB */
		void *p = NULL;

		g.cap = (g.cap + HUGE_OUT - 1) / HUGE_OUT * HUGE_OUT;
		if (posix_memalign(&p, HUGE_OUT, g.cap) == 0) {
			g.p = p;
			madvise(p, g.cap, MADV_HUGEPAGE);
		}
	} else {
		g.p = malloc(g.cap);
	}
	if (!g.p) {
		tg_error_set(err, TG_ERR_NOMEM, "redact: out of memory for %zu bytes of output", n);
		goto fail;
	}
	rc = scan_run(&s, (const unsigned char *)in, n, 1, err);
	if (rc < 0)
		goto fail;
	g.p[g.len] = '\0';
	out_->text = g.p;
	out_->len = g.len;
	out_->findings = s.f;
	out_->nfindings = s.nf;
	out_->total = s.total;
	out_->flags = s.flags;
	free(s.seen);
	redact_x_release(&s.x);
	return 0;
fail:
	free(g.p);
	free(s.f);
	free(s.seen);
	redact_x_release(&s.x);
	return -1;
}

void tg_redact_out_release(struct tg_redact_out *o)
{
	if (!o)
		return;
	free(o->text);
	free(o->findings);
	memset(o, 0, sizeof(*o));
}

/* ---- a stream -------------------------------------------------------- */

struct tg_redact_stream {
	struct scan s;
	unsigned char *buf; /* STREAM_BUF bytes */
	size_t len;
	int finished;
};

int tg_redact_stream_new(tg_redact_write_fn write, void *arg, struct tg_redact_stream **outp,
			 struct tg_error *err)
{
	struct tg_redact_stream *st;

	*outp = NULL;
	if (!write)
		return tg_error_set(err, TG_ERR_INVALID, "redact stream: no output function");
	st = calloc(1, sizeof(*st));
	if (!st || !(st->buf = malloc(STREAM_BUF))) {
		free(st);
		return tg_error_set(err, TG_ERR_NOMEM, "redact stream: out of memory");
	}
	st->s.write = write;
	st->s.arg = arg;
	if (redact_x_init(&st->s.x, err) < 0) {
		free(st->buf);
		free(st);
		return -1;
	}
	*outp = st;
	return 0;
}

/* Drop what no decision can read again: all but LOOKBEHIND bytes before
 * the next position (or before an operator's block still to decide). */
static void stream_compact(struct tg_redact_stream *st)
{
	struct scan *s = &st->s;
	size_t from = s->pos, keep;

	/* and a block a match ran past, still to decide from its start */
	if (s->x.next && s->x.next - 1 - s->base < from)
		from = (size_t)(s->x.next - 1 - s->base);
	keep = from > LOOKBEHIND ? from - LOOKBEHIND : 0;

	if (keep == 0)
		return;
	memmove(st->buf, st->buf + keep, st->len - keep);
	st->len -= keep;
	s->base += keep;
	s->pos -= keep;
	s->emitted -= keep;
	s->counted -= keep;
	s->checked -= keep;
}

int tg_redact_stream_feed(struct tg_redact_stream *st, const void *data, size_t n,
			  struct tg_error *err)
{
	const unsigned char *p = data;

	if (st->finished)
		return tg_error_set(err, TG_ERR_INVALID, "redact stream: fed after its end");
	if (st->s.failed)
		return tg_error_set(err, TG_ERR_INVALID, "redact stream: its output failed before");
	while (n) {
		size_t room, take;

		if (st->len == STREAM_BUF)
			stream_compact(st); /* full: then pos is past half of it */
		room = STREAM_BUF - st->len;
		take = n < room ? n : room;
		memcpy(st->buf + st->len, p, take);
		st->len += take;
		p += take;
		n -= take;
		/* decide once a step's worth is decidable: tiny writes cost
		 * no scan each, and output lags the input by at most
		 * WINDOW + SKIP_MAX + STEP */
		if (st->len - st->s.pos < WINDOW + SKIP_MAX + STEP)
			continue;
		if (scan_run(&st->s, st->buf, st->len, 0, err) < 0)
			return -1;
		if (st->s.pos > STREAM_BUF / 2)
			stream_compact(st);
	}
	return 0;
}

int tg_redact_stream_finish(struct tg_redact_stream *st, struct tg_error *err)
{
	if (st->finished)
		return tg_error_set(err, TG_ERR_INVALID, "redact stream: finished twice");
	st->finished = 1;
	return scan_run(&st->s, st->buf, st->len, 1, err);
}

const struct tg_redact_finding *tg_redact_stream_findings(const struct tg_redact_stream *st,
							  size_t *n, uint64_t *total,
							  unsigned *flags)
{
	if (n)
		*n = st->s.nf;
	if (total)
		*total = st->s.total;
	if (flags)
		*flags = st->s.flags;
	return st->s.f;
}

void tg_redact_stream_free(struct tg_redact_stream *st)
{
	if (!st)
		return;
	free(st->s.f);
	free(st->s.seen);
	redact_x_release(&st->s.x);
	free(st->buf);
	free(st);
}
