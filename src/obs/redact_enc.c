/*
 * Encoded secrets (docs/REDACTION.md, "Encoded secrets"): base64, either
 * alphabet, padded or not, wrapped in lines or not, and hex. Redaction
 * must see what the caller will decode.
 *
 * Two ways in. A run of such bytes inside text (a tool that printed
 * base64 of a .env) is decoded here, one decision at a time within the
 * scan's window, and redact.c runs the rules on the decoded bytes: when
 * they find a secret, the whole run becomes the marker. A value that is
 * nothing but such a run (fs.read's content of a binary file, an image's
 * data, a resource's blob) is decoded whole by tg_redact_value, redacted,
 * and encoded again the same way, so that the caller still decodes it.
 *
 * It must never read past the window it is given (a stream decides as
 * one call does), decode more than ENC_CAP bytes of input at one
 * decision, decode what it decoded a second time (one level), or
 * allocate in the scan's path.
 */
#include <stdlib.h>
#include <string.h>

#include "obs/redact_int.h"
#include "toolgate/redact.h"

#define TOK(c) (redact_cls[(unsigned char)(c)] & C_TOK)
#define HEX(c) (redact_cls[(unsigned char)(c)] & C_HEX)

static const char B64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char B64URL[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* A byte's base64 value (either alphabet) and hex value; and whether it
 * is text by itself (printable ASCII, a blank): tables, as the scan's. */
static unsigned char b64v[256], hexv[256], textv[256];

__attribute__((constructor)) static void enc_init(void)
{
	int c;

	for (c = 0; c < 64; c++) {
		b64v[(unsigned char)B64[c]] = (unsigned char)c;
		b64v[(unsigned char)B64URL[c]] = (unsigned char)c;
	}
	for (c = 0; c < 256; c++) {
		hexv[c] = (unsigned char)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
		textv[c] = (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t' || c == '\r';
	}
}

/* v[0..n), run bytes all, decoded in place (the output never passes the
 * input): hex, or base64 (a last lone character carries no byte). The
 * decoded length. */
static size_t decode_chars(unsigned char *v, size_t n, int hex)
{
	size_t i, o = 0;
	unsigned acc = 0, bits = 0;

	if (hex) {
		for (i = 0; i + 1 < n; i += 2)
			v[o++] = (unsigned char)(hexv[v[i]] << 4 | hexv[v[i + 1]]);
		return o;
	}
	for (i = 0; i + 4 <= n; i += 4) {
		acc = (unsigned)b64v[v[i]] << 18 | (unsigned)b64v[v[i + 1]] << 12 |
		      (unsigned)b64v[v[i + 2]] << 6 | b64v[v[i + 3]];
		v[o++] = (unsigned char)(acc >> 16);
		v[o++] = (unsigned char)(acc >> 8);
		v[o++] = (unsigned char)acc;
	}
	for (; i < n; i++) {
		acc = (acc << 6 | b64v[v[i]]) & 0xffffff;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			v[o++] = (unsigned char)(acc >> bits);
		}
	}
	return o;
}

/* ---- runs in text ---------------------------------------------------- */

/* The length of a line break at i: "\n", "\r\n", or the same escaped in a
 * JSON string ("\\n", "\\r\\n"); 0 if none. */
static size_t break_at(const struct rwin *w, size_t i)
{
	const unsigned char *b = w->b;

	if (i < w->hi && b[i] == '\n')
		return 1;
	if (i + 1 < w->hi && b[i] == '\r' && b[i + 1] == '\n')
		return 2;
	if (i + 1 < w->hi && b[i] == '\\' && b[i + 1] == 'n')
		return 2;
	if (i + 3 < w->hi && b[i] == '\\' && b[i + 1] == 'r' && b[i + 2] == '\\' && b[i + 3] == 'n')
		return 4;
	return 0;
}

static int line_joins(size_t len)
{
	return len >= ENC_LINE_MIN && len <= ENC_LINE_MAX && len % 4 == 0;
}

/* The line of run bytes that ends at e: its characters (JSON's escaped
 * slash "\\/" one), a JSON escape's letter before it ("\\nQUtJ") not
 * counted, at most ENC_LINE_MAX + 1. */
static size_t line_before(const struct rwin *w, size_t e)
{
	size_t k = e, n = 0;

	while (k > w->lo && n <= ENC_LINE_MAX + 1 && TOK(w->b[k - 1])) {
		k--, n++;
		if (w->b[k] == '/' && k > w->lo && w->b[k - 1] == '\\')
			k--;
	}
	if (n && k > w->lo && w->b[k - 1] == '\\' && strchr("nrtbf", w->b[k]))
		n--;
	return n;
}

/* How many of d[0..n) are not text (printable ASCII, blanks, UTF-8),
 * counting no further than stop. */
static size_t not_text(const unsigned char *d, size_t n, size_t stop)
{
	size_t i = 0, other = 0;

	while (i < n && other <= stop) {
		unsigned c = d[i], need, k;

		if (textv[c]) {
			i++;
			continue;
		}
		need = c >= 0xc2 && c <= 0xdf ? 1 : c >= 0xe0 && c <= 0xef ? 2 : c >= 0xf0 && c <= 0xf4 ? 3 : 0;
		for (k = 1; need && k <= need; k++)
			if (i + k >= n || (d[i + k] & 0xc0) != 0x80)
				need = 0;
		if (!need)
			other++;
		i += need + 1;
	}
	return other;
}

/* Run bytes v[0..n) decoded in place from the alignment (0 to 3
 * characters skipped, 0 or 1 for hex) whose decoding reads most as text
 * at its start, middle and end (64 characters each): a run cut out of a
 * longer one (a tail kept, an excerpt) still decodes, and so does one
 * whose first line is something else. Hex may follow "0x". *at: the
 * characters skipped. */
static size_t decode_aligned(unsigned char *v, size_t n, size_t *at)
{
	unsigned char head[64];
	size_t a, k, hex, best = SIZE_MAX, best_a = 0;
	size_t pre = n > 4 && v[0] == '0' && (v[1] | 0x20) == 'x' ? 2 : 0;
	size_t from[3];

	/* hex, "0x" before it or not */
	for (k = pre, hex = n >= pre + 2; hex && k < n; k++)
		hex = HEX(v[k]) != 0;
	if (hex && pre) {
		v += pre;
		n -= pre;
	} else {
		pre = 0;
	}
	from[0] = 0;
	from[1] = n / 2 & ~(size_t)3;
	from[2] = n > 64 ? (n - 64) & ~(size_t)3 : 0;
	for (a = 0; a < (hex ? 2 : 4) && a < n; a++) {
		size_t other = 0, f;

		for (f = 0; f < (n > 3 * sizeof(head) ? 3 : 1); f++) {
			k = n - from[f] - a < sizeof(head) ? n - from[f] - a : sizeof(head);
			memcpy(head, v + from[f] + a, k);
			k = decode_chars(head, k & ~(size_t)(hex ? 1 : 3), hex ? 1 : 0);
			other += not_text(head, k, k);
		}
		if (other < best) {
			best = other;
			best_a = a;
		}
		if (best == 0)
			break; /* all text: none reads better */
	}
	*at = pre + best_a;
	return decode_chars(v + best_a, n - best_a, hex ? 1 : 0);
}

int enc_run(const struct rwin *w, size_t q, int mid, size_t done, unsigned char *buf,
	    const unsigned char **dec, size_t *dn, struct enc_span *sp)
{
	const unsigned char *b = w->b;
	size_t s = q, i, chars = 0, line = 0, br, fast, skip;

	memset(sp, 0, sizeof(*sp));
	if (!mid) {
		/* "...\\nQUtJ..." in a JSON string: the run is after the escape */
		if (q > w->lo && b[q - 1] == '\\' && b[q] && strchr("nrtbf", b[q]))
			s = q + 1;
		/* a line of a wrapped block decoded already from its first
		 * line; one whose first line a rule took is decoded from here */
		if (s < done)
			return 0;
	} else {
		/* the line so far, for whether it joins the next */
		line = line_before(w, q);
	}
	/* the cap is looked at only near it: a byte at a time there, on
	 * quanta; before, a tight loop */
	fast = w->hi - s > ENC_CAP - 8 - ENC_BACK ? s + ENC_CAP - 8 - ENC_BACK : w->hi;
	i = s;
	for (;;) {
		size_t from = i, at = chars;

		while (i < fast && TOK(b[i]))
			i++;
		chars += i - from;
		line += i - from;
		while (i >= fast && i < w->hi && TOK(b[i])) {
			/* cut on a quantum, within the cap; decode again from
			 * ENC_BACK before the cut */
			if (chars % 4 == 0) {
				if (i - s >= ENC_CAP - 8) {
					sp->capped = 1;
					break;
				}
				if (!sp->back)
					sp->back = i;
			}
			i++, chars++, line++;
		}
		if (buf)
			memcpy(buf + at, b + from, i - from);
		if (sp->capped || i >= w->hi)
			break;
		if (b[i] == '\\' && i + 1 < w->hi && b[i + 1] == '/') {
			/* JSON's escaped slash: the run goes on through it */
			if (buf)
				buf[chars] = '/';
			chars++, line++;
			i += 2;
			continue;
		}
		if (b[i] == '=') {
			/* padding ends the run */
			i++;
			if (i < w->hi && b[i] == '=')
				i++;
			break;
		}
		br = break_at(w, i);
		if (!br || !line_joins(line) || i + br >= w->hi || !TOK(b[i + br]))
			break;
		i += br;
		line = 0;
	}
	if (!sp->capped)
		sp->back = 0;
	sp->start = s;
	sp->end = i;
	if (!buf)
		return chars > 0;
	if (chars < ENC_MIN)
		return 0;
	*dn = decode_aligned(buf, chars, &skip);
	*dec = buf + skip;
	return 1;
}

size_t enc_short(const struct rwin *w, size_t q, size_t r, unsigned char *out, size_t *end)
{
	size_t pad = 0;

	while (pad < 2 && q + r + pad < w->hi && w->b[q + r + pad] == '=')
		pad++;
	*end = q + r + pad;
	if (r % 4 == 1 || (pad && (r + pad) % 4))
		return 0;
	memcpy(out, w->b + q, r);
	return decode_chars(out, r, 0);
}

int enc_texty(const unsigned char *d, size_t n)
{
	/* stops once a quarter is not text: random bytes are told soon */
	return n > 0 && not_text(d, n, n / 4) * 4 <= n;
}

int rules_enc_more(const struct rwin *w, size_t q, const char *rule, struct rmatch *m)
{
	struct enc_span sp;

	if (!enc_run(w, q, 1, 0, NULL, NULL, NULL, &sp))
		return 0;
	enc_match(m, &sp, rule);
	return 1;
}

/* ---- a value that is all encoded ------------------------------------- */

/* How a value is encoded, to encode it again alike. */
struct form {
	int hex, url, padded, upper, crlf, final_nl;
	size_t width; /* characters a line but the last; 0: one line */
};

/* Whether v[0..n) is nothing but base64 or hex, and how. Lines, when
 * there are several, are all as long as the first (a multiple of 4), the
 * last no longer; padding only at the end, one newline after it at most. */
static int whole_form(const unsigned char *v, size_t n, struct form *f)
{
	size_t i, chars = 0, line = 0, pad = 0;
	int std = 0, url = 0, hex = 1, lower = 0, upper = 0;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < n; i++) {
		int c = v[i];

		if (TOK(c) && !pad) {
			std |= c == '+' || c == '/';
			url |= c == '-' || c == '_';
			if (!HEX(c))
				hex = 0;
			lower |= c >= 'a' && c <= 'f';
			upper |= c >= 'A' && c <= 'F';
			chars++, line++;
		} else if (c == '=' && pad < 2) {
			pad++;
		} else if (c == '\n' || (c == '\r' && i + 1 < n && v[i + 1] == '\n')) {
			int crlf = c == '\r';

			i += crlf;
			if (line == 0)
				return 0;
			if (i + 1 == n) {
				f->final_nl = 1;
				if (f->width && crlf != f->crlf)
					return 0;
				f->crlf = crlf;
				break;
			}
			if (pad || (f->width && (line != f->width || crlf != f->crlf)) || line % 4)
				return 0;
			f->width = line;
			f->crlf = crlf;
			line = 0;
		} else {
			return 0;
		}
	}
	if ((f->width && line > f->width) || (std && url))
		return 0;
	if (hex && !pad && chars % 2 == 0 && chars >= 24) {
		f->hex = 1;
		f->upper = upper && !lower;
		return 1;
	}
	f->url = url;
	f->padded = pad > 0;
	if (chars < ENC_MIN || (pad ? (chars + pad) % 4 : chars % 4 == 1))
		return 0;
	return 1;
}

/* v[0..n) encoded in form f: a new string (NUL-terminated), or NULL. */
static char *encode_as(const unsigned char *v, size_t n, const struct form *f, size_t *len)
{
	const char *digits = f->hex ? (f->upper ? "0123456789ABCDEF" : "0123456789abcdef")
				    : f->url ? B64URL : B64;
	size_t chars = f->hex ? n * 2 : (n + 2) / 3 * 4, cap, i, o = 0, line = 0;
	size_t brk = f->crlf ? 2 : 1;
	char *out;

	if (n > (SIZE_MAX - 64) / 4)
		return NULL;
	cap = chars + (f->width ? (chars / f->width + 1) * brk : 0) + brk + 1;
	out = malloc(cap);
	if (!out)
		return NULL;
#define PUT(ch)                                                   \
	do {                                                      \
		if (f->width && line == f->width) {               \
			if (f->crlf)                              \
				out[o++] = '\r';                  \
			out[o++] = '\n';                          \
			line = 0;                                 \
		}                                                 \
		out[o++] = (ch);                                  \
		line++;                                           \
	} while (0)
	for (i = 0; f->hex && i < n; i++) {
		PUT(digits[v[i] >> 4]);
		PUT(digits[v[i] & 15]);
	}
	for (i = 0; !f->hex && i < n; i += 3) {
		unsigned x = (unsigned)v[i] << 16 | (i + 1 < n ? (unsigned)v[i + 1] << 8 : 0) |
			     (i + 2 < n ? v[i + 2] : 0);
		size_t k, emit = i + 2 < n ? 4 : i + 1 < n ? 3 : 2;

		for (k = 0; k < emit; k++)
			PUT(digits[(x >> (18 - 6 * k)) & 63]);
		for (; f->padded && k < 4; k++)
			PUT('=');
	}
#undef PUT
	if (f->final_nl) {
		if (f->crlf)
			out[o++] = '\r';
		out[o++] = '\n';
	}
	out[o] = '\0';
	*len = o;
	return out;
}

/* A value longer than this that decodes to bytes that are not text is
 * an encoding (an image, an archive), not a key that is the value itself
 * (an Azure key is 88 characters): high_entropy does not run on it. */
#define VALUE_KEY_MAX 128

static void take(struct tg_redact_out *to, struct tg_redact_out *from)
{
	*to = *from;
	memset(from, 0, sizeof(*from));
}

int tg_redact_value(const char *in, size_t n, struct tg_redact_out *out, struct tg_error *err)
{
	const unsigned char *v = (const unsigned char *)in;
	struct tg_redact_out dec_out, again;
	struct form f;
	unsigned char *dec = NULL;
	size_t i, dn = 0, elen = 0;
	char *enc = NULL;
	unsigned binary;
	int rc = -1;

	memset(out, 0, sizeof(*out));
	memset(&dec_out, 0, sizeof(dec_out));
	memset(&again, 0, sizeof(again));
	tg_error_clear(err);
	if (!whole_form(v, n, &f))
		return redact_scan(in, n, 0, out, err);
	dec = malloc(n + 1);
	if (!dec)
		return tg_error_set(err, TG_ERR_NOMEM, "redact: out of memory to decode %zu bytes", n);
	for (i = 0; i < n; i++)
		if (TOK(v[i]))
			dec[dn++] = v[i];
	dn = decode_chars(dec, dn, f.hex);
	/* bytes that are not text (an image, an archive), and their
	 * encoding: the rules of formats and keys only, high_entropy would
	 * cut random bytes */
	binary = enc_texty(dec, dn) ? 0 : REDACT_NO_ENTROPY;
	if (redact_scan((const char *)dec, dn, binary, &dec_out, err) < 0)
		goto out;
	if (dec_out.total == 0) {
		/* nothing in it as decoded from its first character: the value
		 * as text, its run decoded as runs are, from whichever
		 * alignment reads as text (a value cut out of a longer one,
		 * "ab" + base64), the decoded copies gone first (a blob may be
		 * large) */
		free(dec);
		dec = NULL;
		tg_redact_out_release(&dec_out);
		rc = redact_scan(in, n, n > VALUE_KEY_MAX ? binary : 0, out, err);
		goto out;
	}
	enc = encode_as((const unsigned char *)dec_out.text, dec_out.len, &f, &elen);
	if (!enc) {
		tg_error_set(err, TG_ERR_NOMEM, "redact: out of memory to encode %zu bytes again",
			     dec_out.len);
		goto out;
	}
	/* what it encodes to is shown: the rules see it too (bytes that
	 * happen to spell a token stay what they were where nothing changed) */
	if (redact_scan(enc, elen, REDACT_NO_DECODE | binary, &again, err) < 0)
		goto out;
	take(out, &dec_out);
	free(out->text);
	if (again.total) {
		/* the findings listed stay the decoded bytes' */
		out->text = again.text;
		out->len = again.len;
		again.text = NULL;
		out->total += again.total;
		out->flags |= again.flags;
	} else {
		out->text = enc;
		out->len = elen;
		enc = NULL;
	}
	out->flags |= TG_REDACT_DECODED;
	rc = 0;
out:
	free(dec);
	free(enc);
	tg_redact_out_release(&dec_out);
	tg_redact_out_release(&again);
	return rc;
}
