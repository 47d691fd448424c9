/*
 * The redaction rules (docs/REDACTION.md): hand-written matchers that the
 * scan in redact.c calls at a candidate position. Each reads only the
 * window it is given (struct rwin) so that a stream decides as one call
 * does. They never allocate.
 *
 * Three families: anchored token formats (a fixed prefix, then an
 * alphabet and a length, a checksum where the format has one), keyed
 * values (the key before ':' or '=' names a secret; the value must not be
 * a placeholder and must have some entropy), and a generic rule for long
 * base64/base62 runs above an entropy floor, with the usual look-alikes
 * (digests, UUIDs, encoded text and images, identifiers) excluded.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "obs/redact_int.h"
#include "toolgate/redact.h"

unsigned char redact_cls[256];

__attribute__((constructor)) static void cls_init(void)
{
	int c;

	for (c = 0; c < 256; c++) {
		unsigned char k = 0;
		int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9');

		if (alnum || c == '+' || c == '/' || c == '_' || c == '-')
			k |= C_TOK;
		if (alnum)
			k |= C_ALNUM;
		if (c && strchr("AgxhsrnpSe-", c))
			k |= C_ANCH;
		if (c == ':' || c == '=' || c == '>')
			k |= C_ASSIGN;
		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))
			k |= C_HEX;
		if (alnum || c == '_' || c == '.' || c == '-')
			k |= C_IDENT;
		redact_cls[c] = k;
	}
}

#define CLS(c) (redact_cls[(unsigned char)(c)])

static int is_lower(int c) { return c >= 'a' && c <= 'z'; }
static int is_upper(int c) { return c >= 'A' && c <= 'Z'; }
static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alnum(int c) { return CLS(c) & C_ALNUM; }
static int is_b64url(int c) { return is_alnum(c) || c == '-' || c == '_'; }
static int is_b64(int c) { return is_alnum(c) || c == '+' || c == '/'; }
static int is_lhex(int c) { return is_digit(c) || (c >= 'a' && c <= 'f'); }
static int is_space(int c) { return c == ' ' || c == '\t'; }
static int is_tok_fn(int c) { return CLS(c) & C_TOK; }

/* How many bytes from i on satisfy ok, at most max, not past hi. */
static size_t run_of(const struct rwin *w, size_t i, int (*ok)(int), size_t max)
{
	size_t n = 0;

	while (i + n < w->hi && n < max && ok(w->b[i + n]))
		n++;
	return n;
}

static inline __attribute__((always_inline)) int has_at_n(const struct rwin *w, size_t i,
							 const char *s, size_t n)
{
	size_t j;

	/* byte by byte: most candidates differ at the first */
	if (i + n > w->hi)
		return 0;
	for (j = 0; j < n; j++)
		if (w->b[i + j] != (unsigned char)s[j])
			return 0;
	return 1;
}

/* s a literal: its length is known when compiled, and so is the compare */
#define has_at(w, i, s) has_at_n(w, i, s "", sizeof(s) - 1)
#define has_at_str(w, i, s) has_at_n(w, i, s, strlen(s))

/* Whether the token ends at i: no byte of its alphabet follows. */
static int ends_at(const struct rwin *w, size_t i, int (*ok)(int))
{
	return i >= w->hi || !ok(w->b[i]);
}

static int ci_contains(const unsigned char *v, size_t n, const char *s)
{
	size_t k = strlen(s), i;

	for (i = 0; i + k <= n; i++)
		if (strncasecmp((const char *)v + i, s, k) == 0)
			return 1;
	return 0;
}

/* ---- measures -------------------------------------------------------- */

/* Shannon entropy of v[0..n) in bits a byte. */
static double entropy(const unsigned char *v, size_t n)
{
	unsigned short cnt[256];
	double h = 0;
	size_t i;

	if (n == 0)
		return 0;
	memset(cnt, 0, sizeof(cnt));
	for (i = 0; i < n; i++)
		cnt[v[i]]++;
	for (i = 0; i < 256; i++)
		if (cnt[i]) {
			double p = (double)cnt[i] / (double)n;

			h -= p * log2(p);
		}
	return h;
}

/* The floor for a random-looking run of n bytes: 80% of what n bytes can
 * hold (log2 n), which 99.5% of random base62 strings of any length from 20
 * to 128 pass (docs/REDACTION.md has the figures), capped at 4.8. */
static double entropy_floor(size_t n)
{
	double f = 0.8 * log2((double)n);

	return f > 4.8 ? 4.8 : f;
}

/* The share of bytes in words: [a-z]{3,}, [A-Z][a-z]{2,}, [A-Z]{4,}.
 * Identifiers and paths are mostly words; random strings are not (a
 * random base62 string of 24 bytes reaches 0.7 once in a hundred). */
static double wordiness(const unsigned char *v, size_t n)
{
	size_t i = 0, in_words = 0;

	while (i < n) {
		size_t j = i;

		if (is_upper(v[i]) && i + 1 < n && is_lower(v[i + 1])) {
			j = i + 1;
			while (j < n && is_lower(v[j]))
				j++;
			if (j - i >= 3)
				in_words += j - i;
		} else if (is_lower(v[i])) {
			while (j < n && is_lower(v[j]))
				j++;
			if (j - i >= 3)
				in_words += j - i;
		} else if (is_upper(v[i])) {
			while (j < n && is_upper(v[j]))
				j++;
			if (j - i >= 4)
				in_words += j - i;
		} else {
			j = i + 1;
		}
		i = j;
	}
	return (double)in_words / (double)n;
}

static int b64_value(int c)
{
	if (is_upper(c))
		return c - 'A';
	if (is_lower(c))
		return c - 'a' + 26;
	if (is_digit(c))
		return c - '0' + 52;
	if (c == '+' || c == '-')
		return 62;
	if (c == '/' || c == '_')
		return 63;
	return -1;
}

/* Whether v, from its first byte on, decodes to mostly printable text. */
static int decodes_to_text_at(const unsigned char *v, size_t n)
{
	unsigned acc = 0, bits = 0, printable = 0, total = 0;
	size_t i;

	for (i = 0; i < n && i < 64; i++) {
		int x = b64_value(v[i]);

		if (x < 0)
			return 0;
		acc = (acc << 6) | (unsigned)x;
		bits += 6;
		if (bits >= 8) {
			unsigned char byte = (unsigned char)(acc >> (bits - 8));

			bits -= 8;
			total++;
			printable += (byte >= 0x20 && byte < 0x7f) || byte == '\n' ||
				     byte == '\t' || byte == '\r';
		}
	}
	return total >= 12 && printable * 100 >= total * 85;
}

/* Whether v decodes (base64, either alphabet) to mostly printable text:
 * base64 of ordinary text is not a key, and random bytes are printable
 * only a third of the time. Looks at the first 64 bytes, from the start
 * and from each of the three other alignments (a run cut out of a longer
 * one, a line after a JSON string's "\n"). */
static int decodes_to_text(const unsigned char *v, size_t n)
{
	size_t a;

	for (a = 0; a < 4 && a < n; a++)
		if (decodes_to_text_at(v + a, n - a))
			return 1;
	return 0;
}

/* A placeholder, a template or a reference, not a value: "${DB_PASSWORD}",
 * "<your-token>", "changeme", "xxxxxxxx", "****". The list is in
 * docs/REDACTION.md. */
static int is_placeholder(const unsigned char *v, size_t n);

int redact_placeholder(const unsigned char *v, size_t n)
{
	return is_placeholder(v, n);
}

static int is_placeholder(const unsigned char *v, size_t n)
{
	static const char *const words[] = {
		"xxxx", "****", "....", "example", "placeholder", "changeme", "change_me",
		"change-me", "changeit", "your_", "your-", "yourpass", "yoursecret", "yourtoken",
		"yourkey", "yourapi", "redacted", "dummy", "sample", "replace", "insert_",
		"fixme", "todo", "<", ">", "{{", "}}", "${", "$(", "fake",
	};
	static const char *const exact[] = {
		"null", "none", "nil", "true", "false", "undefined", "empty", "secret",
		"password", "passwd", "token", "required", "optional", "string", "default",
		"hidden", "masked", "n/a", "notset", "unset", "str", "bool", "int",
	};
	char low[256];
	size_t i, low_n;

	if (n == 0)
		return 1;
	/* $VAR, %VAR%, %s, %(name)s: a reference to the value, not it;
	 * but "%40..." is a percent-encoded password */
	if (n > 1 && v[0] == '$' && (is_upper(v[1]) || is_lower(v[1]) || v[1] == '_'))
		return 1;
	if (v[0] == '%' && (v[n - 1] == '%' || v[1] == '(' || v[1] == '{' || (v[1] == 's' && n == 2)))
		return 1;
	for (i = 1; i < n && v[i] == v[0]; i++)
		;
	if (i == n)
		return 1;
	for (i = 0; i < sizeof(exact) / sizeof(exact[0]); i++)
		if (strlen(exact[i]) == n && strncasecmp((const char *)v, exact[i], n) == 0)
			return 1;
	/* the words, in a lowercase copy of the first 256 bytes: one memmem
	 * each, so that a long value costs no more than a short one */
	low_n = n < sizeof(low) ? n : sizeof(low);
	for (i = 0; i < low_n; i++)
		low[i] = (char)(is_upper(v[i]) ? v[i] + 32 : v[i]);
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (memmem(low, low_n, words[i], strlen(words[i])))
			return 1;
	return 0;
}

/* ---- checksums ------------------------------------------------------- */

static uint32_t crc32_of(const unsigned char *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	size_t i;
	int k;

	for (i = 0; i < n; i++) {
		c ^= p[i];
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

/* GitHub's and npm's tokens: 30 random base62 bytes, then the CRC32 of
 * those in base62 (0-9A-Za-z), six digits, zero-padded. */
static int base62_crc_ok(const unsigned char *body, size_t n)
{
	static const char digits[] =
		"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
	uint32_t crc;
	char enc[6];
	int i;

	if (n != 36)
		return 0;
	crc = crc32_of(body, 30);
	for (i = 5; i >= 0; i--) {
		enc[i] = digits[crc % 62];
		crc /= 62;
	}
	return memcmp(enc, body + 30, 6) == 0;
}

/* A token's random part: its checksum holds, or it is random enough and
 * no placeholder ("ghp_xxxxxxxx..." in a README is not a token). */
static int random_enough(const unsigned char *v, size_t n)
{
	return !is_placeholder(v, n) && entropy(v, n) >= entropy_floor(n) - 0.5;
}

/* The same for hex, whose 16 symbols hold less: 4 bits a byte at most. */
static int random_hex_enough(const unsigned char *v, size_t n)
{
	return !is_placeholder(v, n) && entropy(v, n) >= 3.0;
}

/* ---- anchored formats ------------------------------------------------ */

static int found(struct rmatch *m, size_t start, size_t end, const char *rule)
{
	m->start = start;
	m->end = end;
	m->rule = rule;
	m->flags = 0;
	m->more = 0;
	return 1;
}

static int m_aws_id(const struct rwin *w, size_t q, struct rmatch *m)
{
	size_t n;

	if (!has_at(w, q, "AKIA") && !has_at(w, q, "ASIA") && !has_at(w, q, "ABIA") &&
	    !has_at(w, q, "ACCA"))
		return 0;
	for (n = 0; q + 4 + n < w->hi && n < 16; n++) {
		int c = w->b[q + 4 + n];

		if (!is_upper(c) && !is_digit(c))
			break;
	}
	if (n != 16 || !ends_at(w, q + 20, is_alnum))
		return 0;
	/* AWS documents AKIAIOSFODNN7EXAMPLE; its keys never say EXAMPLE */
	if (ci_contains(w->b + q, 20, "EXAMPLE"))
		return 0;
	return found(m, q, q + 20, "aws_access_key_id");
}

static int m_prefixed(const struct rwin *w, size_t q, size_t plen, int (*ok)(int), size_t min,
		      size_t max, const char *rule, struct rmatch *m)
{
	size_t n = run_of(w, q + plen, ok, max + 1);

	if (n < min || n > max || !random_enough(w->b + q + plen, n))
		return 0;
	return found(m, q, q + plen + n, rule);
}

static int m_github(const struct rwin *w, size_t q, struct rmatch *m)
{
	size_t n;

	if (has_at(w, q, "github_pat_")) {
		n = run_of(w, q + 11, is_b64url, 256);
		if (n < 60 || n > 120 || !random_enough(w->b + q + 11, n))
			return 0;
		return found(m, q, q + 11 + n, "github_token");
	}
	if (q + 4 > w->hi || !strchr("pousr", w->b[q + 2]) || w->b[q + 2] == '\0' ||
	    w->b[q + 3] != '_')
		return 0;
	n = run_of(w, q + 4, is_alnum, 37);
	if (n != 36)
		return 0;
	if (!base62_crc_ok(w->b + q + 4, n) && !random_enough(w->b + q + 4, n))
		return 0;
	return found(m, q, q + 40, "github_token");
}

static int m_gitlab(const struct rwin *w, size_t q, struct rmatch *m)
{
	static const char *const pfx[] = { "glpat-", "gldt-", "glrt-", "glptt-", "glcbt-",
					   "glft-", "glsoat-", "gloas-", "glimt-", "glagent-" };
	size_t i, n;

	for (i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++) {
		size_t pl = strlen(pfx[i]);

		if (!has_at_str(w, q, pfx[i]))
			continue;
		/* glpat-<20> or the newer glpat-<base64url>.<version>.<crc> */
		for (n = 0; q + pl + n < w->hi && n < 256; n++) {
			int c = w->b[q + pl + n];

			if (!is_b64url(c) && c != '.')
				break;
		}
		while (n && w->b[q + pl + n - 1] == '.')
			n--;
		if (n < 20 || n > 255 || !random_enough(w->b + q + pl, n < 20 ? n : 20))
			return 0;
		return found(m, q, q + pl + n, "gitlab_token");
	}
	return 0;
}

static int slack_ok(int c) { return is_alnum(c) || c == '-'; }

static int m_slack(const struct rwin *w, size_t q, struct rmatch *m)
{
	size_t n;

	if (has_at(w, q, "xapp-"))
		return m_prefixed(w, q, 5, slack_ok, 20, 250, "slack_token", m);
	if (q + 5 > w->hi || memcmp(w->b + q, "xox", 3) != 0 || !strchr("abposre", w->b[q + 3]) ||
	    w->b[q + 3] == '\0' || w->b[q + 4] != '-')
		return 0;
	n = run_of(w, q + 5, slack_ok, 251);
	if (n < 10 || n > 250 || is_placeholder(w->b + q + 5, n))
		return 0;
	return found(m, q, q + 5 + n, "slack_token");
}

static int webhook_ok(int c) { return is_alnum(c) || c == '/' || c == '_' || c == '-'; }

static int m_slack_webhook(const struct rwin *w, size_t q, struct rmatch *m)
{
	size_t p, n;

	if (has_at(w, q, "hooks.slack.com/services/") || has_at(w, q, "hooks.slack.com/triggers/"))
		p = q + 25;
	else if (has_at(w, q, "hooks.slack.com/workflows/"))
		p = q + 26;
	else
		return 0;
	n = run_of(w, p, webhook_ok, 200);
	if (n < 20 || is_placeholder(w->b + p, n))
		return 0;
	/* the whole URL but its scheme: it is the credential */
	return found(m, q, p + n, "slack_webhook");
}

static int m_s(const struct rwin *w, size_t q, struct rmatch *m)
{
	size_t p, n;

	if (has_at(w, q, "sk_live_") || has_at(w, q, "sk_test_"))
		return m_prefixed(w, q, 8, is_alnum, 20, 247, "stripe_key", m);
	if (has_at(w, q, "sk-ant-")) {
		/* sk-ant-api03-<93 base64url>AA, sk-ant-admin01-..., sk-ant-oat01-... */
		n = run_of(w, q + 7, is_alnum, 12);
		if (n < 2 || q + 7 + n >= w->hi || w->b[q + 7 + n] != '-')
			return 0;
		p = q + 7 + n + 1;
		n = run_of(w, p, is_b64url, 301);
		if (n < 32 || n > 300 || !random_enough(w->b + p, n))
			return 0;
		return found(m, q, p + n, "anthropic_key");
	}
	if (!has_at(w, q, "sk-"))
		return 0;
	/* OpenAI: sk-proj-, sk-svcacct-, sk-admin-, or legacy sk-<48>; every
	 * form carries "T3BlbkFJ" (base64 of "OpenAI") */
	p = q + 3;
	n = run_of(w, p, is_b64url, 301);
	if (n < 20 || n > 300)
		return 0;
	if (!ci_contains(w->b + p, n, "T3BlbkFJ") && (n < 40 || !random_enough(w->b + p, n)))
		return 0;
	return found(m, q, p + n, "openai_key");
}

static int m_S(const struct rwin *w, size_t q, struct rmatch *m)
{
	size_t a, b;

	if (has_at(w, q, "SG.")) {
		a = run_of(w, q + 3, is_b64url, 23);
		if (a != 22 || q + 3 + a >= w->hi || w->b[q + 3 + a] != '.')
			return 0;
		b = run_of(w, q + 26, is_b64url, 44);
		if (b != 43 || !random_enough(w->b + q + 26, b))
			return 0;
		return found(m, q, q + 69, "sendgrid_key");
	}
	if (has_at(w, q, "SK")) {
		a = run_of(w, q + 2, is_lhex, 33);
		if (a != 32 || !ends_at(w, q + 34, is_alnum) || !random_hex_enough(w->b + q + 2, 32))
			return 0;
		return found(m, q, q + 34, "twilio_key");
	}
	return 0;
}

static int m_jwt(const struct rwin *w, size_t q, struct rmatch *m)
{
	size_t a, b, c;

	if (!has_at(w, q, "eyJ"))
		return 0;
	/* a header is a small JSON object: 1 KiB of base64 is plenty, and
	 * bounds what "eyJ-eyJ-eyJ-..." costs at each "eyJ" */
	a = run_of(w, q, is_b64url, 1025);
	if (a < 10 || a > 1024 || q + a >= w->hi || w->b[q + a] != '.' ||
	    !has_at(w, q + a + 1, "eyJ"))
		return 0;
	b = run_of(w, q + a + 1, is_b64url, 8193);
	if (b < 10 || b > 8192 || q + a + 1 + b >= w->hi || w->b[q + a + 1 + b] != '.')
		return 0;
	c = run_of(w, q + a + b + 2, is_b64url, 1025);
	if (c > 1024)
		return 0;
	return found(m, q, q + a + b + 2 + c, "jwt");
}

/* Where a key's body ends, walking from i up to cap: base64 bytes and
 * line breaks ("\n", "\r", or "\\n" in a JSON string) go on, header
 * lines before the body are skipped, a quote ends it there, anything else
 * ends it before its line. *more: cap
 * was reached inside the body. */
static size_t key_body_end(const struct rwin *w, size_t i, size_t cap, int *more)
{
	const unsigned char *b = w->b;
	size_t line_start = i, last_break = i;
	int in_body = 0;

	*more = 0;
	while (i < cap) {
		int c = b[i];

		if (i == line_start && !in_body && is_upper(c)) {
			/* a header before the body: "Proc-Type: 4,ENCRYPTED",
			 * "DEK-Info: ...", "Version: ...", to the line's end */
			size_t k = i;

			while (k < cap && (is_upper(b[k]) || is_lower(b[k]) || b[k] == '-'))
				k++;
			if (k > i && k + 1 < cap && b[k] == ':' && b[k + 1] == ' ') {
				while (k < cap && b[k] != '\n' && b[k] != '\r' && b[k] != '\\')
					k++;
				i = k;
				if (i >= cap)
					break;
				c = b[i];
			}
		}
		if (c == '\n' || c == '\r' || (c == '\\' && i + 1 < cap && b[i + 1] == 'n')) {
			last_break = i;
			i += c == '\\' ? 2 : 1;
			line_start = i;
			continue;
		}
		if (is_b64(c) || c == '=') {
			in_body = 1;
			i++;
			continue;
		}
		/* a quote ends a key in a JSON or YAML string there; any other
		 * byte says the line was not the key's */
		return (c == '"' || c == '\'') && i > line_start ? i : last_break;
	}
	*more = 1;
	return cap;
}

/* "-----BEGIN ... PRIVATE KEY-----" up to its END line, within the cap;
 * without one there, the body up to where it stops looking like one, or
 * up to the cap (then the scan goes on with rules_key_more), flagged. */
static int m_pem(const struct rwin *w, size_t q, struct rmatch *m)
{
	size_t p = q + 11, n, cap, e, body, end_at;
	const unsigned char *end;
	int more;

	if (!has_at(w, q, "-----BEGIN "))
		return 0;
	for (n = 0; p + n < w->hi && n < 40; n++) {
		int c = w->b[p + n];

		if (!is_upper(c) && !is_digit(c) && c != ' ')
			break;
	}
	/* the label ends in "PRIVATE KEY" (RSA, EC, DSA, OPENSSH, ENCRYPTED,
	 * PGP ... BLOCK): back up to where it starts */
	for (e = p; e <= p + n; e++)
		if (has_at(w, e, "PRIVATE KEY-----") || has_at(w, e, "PRIVATE KEY BLOCK-----"))
			break;
	if (e > p + n)
		return 0;
	body = e + (has_at(w, e, "PRIVATE KEY-----") ? 16 : 22);
	cap = w->hi - q < TG_REDACT_KEY_CAP ? w->hi : q + TG_REDACT_KEY_CAP;
	end = memmem(w->b + e, cap - e, "-----END ", 9);
	if (end) {
		const unsigned char *close;
		size_t at = (size_t)(end - w->b) + 9;
		size_t lim = cap - at < 64 ? cap : at + 64;

		close = memmem(w->b + at, lim - at, "-----", 5);
		if (close)
			return found(m, q, (size_t)(close - w->b) + 5, "private_key");
	}
	end_at = key_body_end(w, body, cap, &more);
	found(m, q, end_at, "private_key");
	m->flags = TG_REDACT_TRUNCATED;
	m->more = more;
	return 1;
}

int rules_key_more(const struct rwin *w, size_t q, struct rmatch *m)
{
	size_t cap = w->hi - q < TG_REDACT_KEY_CAP ? w->hi : q + TG_REDACT_KEY_CAP;
	int more;
	size_t end = key_body_end(w, q, cap, &more);

	if (end == q)
		return 0;
	found(m, q, end, "private_key");
	m->flags = TG_REDACT_TRUNCATED;
	m->more = more;
	return 1;
}

static int m_flag(const struct rwin *w, size_t q, struct rmatch *m);
static int m_short_pass(const struct rwin *w, size_t q, struct rmatch *m);

/* The token formats at q; with formats_only, not the flags that name a
 * value after them (a value is asked whether it is a format: asking it
 * whether it is a flag would chain from flag to flag). */
static int anchor_at(const struct rwin *w, size_t q, struct rmatch *m, int formats_only)
{
	switch (w->b[q]) {
	case 'A':
		if (has_at(w, q, "AIza"))
			return run_of(w, q + 4, is_b64url, 36) == 35 &&
			       random_enough(w->b + q + 4, 35) &&
			       found(m, q, q + 39, "gcp_api_key");
		return m_aws_id(w, q, m);
	case 'g':
		if (q + 1 < w->hi && (w->b[q + 1] == 'h' || w->b[q + 1] == 'i'))
			return m_github(w, q, m);
		if (q + 1 < w->hi && w->b[q + 1] == 'l')
			return m_gitlab(w, q, m);
		return 0;
	case 'x':
		return m_slack(w, q, m);
	case 'h':
		return m_slack_webhook(w, q, m);
	case 's':
		return m_s(w, q, m);
	case 'r':
		if (has_at(w, q, "rk_live_") || has_at(w, q, "rk_test_"))
			return m_prefixed(w, q, 8, is_alnum, 20, 247, "stripe_key", m);
		return 0;
	case 'n':
		if (!has_at(w, q, "npm_") || run_of(w, q + 4, is_alnum, 37) != 36)
			return 0;
		if (!base62_crc_ok(w->b + q + 4, 36) && !random_enough(w->b + q + 4, 36))
			return 0;
		return found(m, q, q + 40, "npm_token");
	case 'p':
		/* the macaroon's first bytes: "pypi.org" (or test.pypi.org) */
		if (has_at(w, q, "pypi-AgEIcHlwaS5vcmc") || has_at(w, q, "pypi-AgENdGVzdC5weXBp"))
			return m_prefixed(w, q, 5, is_b64url, 60, 4096, "pypi_token", m);
		return 0;
	case 'S':
		return m_S(w, q, m);
	case 'e':
		return m_jwt(w, q, m);
	case '-':
		return m_pem(w, q, m) ||
		       (!formats_only && (m_flag(w, q, m) || m_short_pass(w, q, m)));
	}
	return 0;
}

int rules_anchor(const struct rwin *w, size_t q, struct rmatch *m)
{
	return anchor_at(w, q, m, 0);
}

/* ---- key = value ----------------------------------------------------- */

enum key_kind {
	K_NONE,
	K_SECRET,      /* password_assignment */
	K_AUTH,        /* an Authorization header: a scheme, then the credential */
	K_CONN_PW,     /* password / pwd: a connection string's, when ';' or '&' delimit it */
	K_AWS_SECRET,
	K_AZURE,
	K_GCP_KEY,     /* "private_key" */
	K_GCP_KEY_ID,  /* "private_key_id" */
	K_NOT_SECRET,  /* a digest, a cursor, an image: high_entropy keeps off it */
};

static inline __attribute__((always_inline)) int ends_with_n(const char *s, size_t n,
							    const char *suffix, size_t k)
{
	size_t j;

	if (n < k)
		return 0;
	for (j = k; j-- > 0;)
		if (s[n - k + j] != suffix[j])
			return 0;
	return 1;
}

#define ends_with(s, n, lit) ends_with_n(s, n, lit "", sizeof(lit) - 1)

/* Which key the identifier before position q (skipping blanks and a
 * quote) is: normalized (lowercase, no separators) in key; its start in
 * *kstart. */
/* The identifier that ends at q, skipping blanks and a quote before q:
 * [*k, *e); 0 when there is none. */
static int key_span(const struct rwin *w, size_t q, size_t *k, size_t *e)
{
	size_t i = q;

	while (i > w->lo && q - i < 8 && is_space(w->b[i - 1]))
		i--;
	if (i > w->lo && (w->b[i - 1] == '"' || w->b[i - 1] == '\''))
		i--;
	*e = i;
	while (i > w->lo && *e - i < 63 && (CLS(w->b[i - 1]) & C_IDENT))
		i--;
	*k = i;
	return *e - i >= 2;
}

/* What the key b[k..e) names: compared lowercase without separators
 * ("DB_PASSWORD", "dbPassword" and "db-password" alike). K_NOT_SECRET (a
 * digest's key, an image's) only when not_secret_too: the generic rule's
 * question, rarer than the keyed rules'. */
static enum key_kind classify_key(const struct rwin *w, size_t k, size_t e, int not_secret_too)
{
#define KW(s) { s, sizeof(s) - 1 }
	static const struct {
		const char *s;
		size_t n;
	} secret[] = {
		KW("password"), KW("passwd"), KW("secret"), KW("token"), KW("apikey"),
		KW("accesskey"), KW("secretkey"), KW("privatekey"), KW("clientkey"), KW("authkey"),
		KW("signingkey"), KW("encryptionkey"), KW("masterkey"), KW("credential"),
		KW("credentials"), KW("passphrase"), KW("apisecret"), KW("sessionkey"),
		KW("hmackey"), KW("appkey"), KW("jwtkey"), KW("licensekey"), KW("creds"),
		KW("pw"), KW("pswd"), KW("pword"),
	}, not_secret[] = {
		KW("pagetoken"), KW("nexttoken"), KW("continuationtoken"), KW("synctoken"),
		KW("cursor"), KW("hash"), KW("digest"), KW("checksum"), KW("integrity"), KW("etag"),
		KW("sha"), KW("sha1"), KW("sha256"), KW("sha512"), KW("md5"), KW("nonce"), KW("salt"),
		KW("iv"), KW("fingerprint"), KW("signature"), KW("image"), KW("icon"),
		KW("thumbnail"), KW("avatar"), KW("logo"), KW("font"), KW("photo"), KW("data"),
		KW("id"), KW("id2"), KW("uuid"), KW("commit"), KW("revision"), KW("rev"),
		KW("tokenizer"), KW("publickey"), KW("pubkey"), KW("certificate"), KW("cert"),
		KW("challenge"), KW("ciphertext"), KW("encrypted"),
	};
#undef KW
	char key[64];
	size_t n = 0, i, raw_n = e - k;

	for (i = k; i < e; i++) {
		int c = w->b[i];

		if (c == '_' || c == '-' || c == '.')
			continue;
		key[n++] = (char)(is_upper(c) ? c + 32 : c);
	}
	key[n] = '\0';
	if (n < 2)
		return K_NONE;
	if (not_secret_too)
		for (i = 0; i < sizeof(not_secret) / sizeof(not_secret[0]); i++)
			if (ends_with_n(key, n, not_secret[i].s, not_secret[i].n))
				return K_NOT_SECRET;
	/* every secret key below ends in one of these: most keys (an hour
	 * of a timestamp, "status", "level") stop here */
	if (!strchr("dtnylsehw", key[n - 1]))
		return K_NONE;
	if (ends_with(key, n, "authorization"))
		return K_AUTH;
	if (ends_with(key, n, "secretaccesskey") || ends_with(key, n, "awssecretkey"))
		return K_AWS_SECRET;
	if (ends_with(key, n, "accountkey") || ends_with(key, n, "sharedaccesskey") ||
	    ends_with(key, n, "storagekey"))
		return K_AZURE;
	if (strcmp(key, "privatekeyid") == 0)
		return K_GCP_KEY_ID;
	if (strcmp(key, "privatekey") == 0 && e < w->hi && w->b[e] == '"')
		return K_GCP_KEY;
	if (strcmp(key, "password") == 0 || strcmp(key, "pwd") == 0)
		return K_CONN_PW;
	for (i = 0; i < sizeof(not_secret) / sizeof(not_secret[0]); i++)
		if (ends_with_n(key, n, not_secret[i].s, not_secret[i].n))
			return K_NONE; /* "next_page_token": not to redact */
	for (i = 0; i < sizeof(secret) / sizeof(secret[0]); i++)
		if (ends_with_n(key, n, secret[i].s, secret[i].n))
			return K_SECRET;
	/* "auth" only as the whole key (Docker's config.json, .npmrc's
	 * _auth): not oauth, www_auth, server_auth, basicAuth */
	if (strcmp(key, "auth") == 0)
		return K_SECRET;
	/* "pass" and "pwd" only as a whole word: not "bypass", "compass" */
	if (strcmp(key, "pass") == 0 ||
	    (ends_with(key, n, "pass") && raw_n > 4 && strchr("_-.", w->b[e - 5])) ||
	    (ends_with(key, n, "pwd") && raw_n > 3 && strchr("_-.", w->b[e - 4])))
		return K_SECRET;
	return K_NONE;
}

static enum key_kind key_before(const struct rwin *w, size_t q, size_t *kstart,
				 int not_secret_too)
{
	size_t e;

	if (!key_span(w, q, kstart, &e))
		return K_NONE;
	return classify_key(w, *kstart, e, not_secret_too);
}

static int value_end_ok(int c, int conn)
{
	if (c == '\n' || c == '\r' || is_space(c) || c == '"' || c == '\'' || c == '`' ||
	    c == ',' || c == ';' || c == ')' || c == '}' || c == ']' || c == '<' || c == '>' ||
	    c == '\\' || c == '\0')
		return 0;
	return !(conn && c == '&');
}

/* The value after the operator at q: [*vs, *ve), quoted or not. */
static int value_after(const struct rwin *w, size_t q, int conn, size_t *vs, size_t *ve,
		       int *quoted)
{
	size_t v = q + 1, i;

	if (v < w->hi && ((w->b[q] == ':' && w->b[v] == '=') || (w->b[q] == '=' && w->b[v] == '>')))
		v++;
	for (i = 0; v < w->hi && i < 16 && is_space(w->b[v]); i++)
		v++;
	if (v >= w->hi)
		return 0;
	*quoted = 0;
	if (w->b[v] == '"' || w->b[v] == '\'' || w->b[v] == '`' || (conn && w->b[v] == '{')) {
		int close = w->b[v] == '{' ? '}' : w->b[v];

		*vs = ++v;
		/* a line at most, and up to the cap: a key in a JSON string is
		 * one line of a few KiB */
		for (i = v; i < w->hi && i - v < TG_REDACT_KEY_CAP; i++) {
			if (w->b[i] == '\\' && close != '}') {
				i++;
				continue;
			}
			if (w->b[i] == close || w->b[i] == '\n')
				break;
		}
		if (i >= w->hi || i - v >= TG_REDACT_KEY_CAP || w->b[i] != close)
			return 0;
		*ve = i;
		*quoted = 1;
		return *ve > *vs;
	}
	/* an unquoted value of more than 256 bytes is no password; the
	 * bound keeps "password=password=..." linear */
	*vs = v;
	for (i = v; i < w->hi && i - v < 257 && value_end_ok(w->b[i], conn); i++)
		;
	*ve = i;
	return i - v < 257 && *ve > *vs;
}

/* Code, not a value: a call, a member chain, a path. */
static int looks_like_code(const unsigned char *v, size_t n)
{
	size_t i, dots = 0;
	int ident = is_lower(v[0]) || is_upper(v[0]) || v[0] == '_';

	for (i = 0; i < n; i++) {
		if (v[i] == '(' || v[i] == '[')
			return 1;
		if (v[i] == '.')
			dots++;
		else if (!is_alnum(v[i]) && v[i] != '_')
			ident = 0;
	}
	if (ident && dots)
		return 1; /* process.env.TOKEN, settings.SECRET_KEY */
	if ((v[0] == '/' || (n > 1 && (v[0] == '.' || v[0] == '~') && v[1] == '/')) &&
	    wordiness(v, n) > 0.5)
		return 1;
	return 0;
}

/* A keyed value worth redacting: long enough, no placeholder, no code, and
 * not a plain lowercase word chain ("tls-secret", "db_credentials"). */
static int secret_value_ok(const unsigned char *v, size_t n, int quoted)
{
	int lo = 0, up = 0, dg = 0, sym = 0, other_sym = 0, classes;
	size_t i;

	if (n < 8 || n > 1000 || is_placeholder(v, n))
		return 0;
	if (!quoted && looks_like_code(v, n))
		return 0;
	if (memmem(v, n, "://", 3))
		return 0; /* a URL: url_password decides */
	for (i = 0; i < n; i++) {
		int c = v[i];

		if (is_lower(c))
			lo = 1;
		else if (is_upper(c))
			up = 1;
		else if (is_digit(c))
			dg = 1;
		else {
			sym = 1;
			if (c != '_' && c != '-' && c != '.' && c != ' ')
				other_sym = 1;
		}
	}
	if (!up && !dg && !other_sym)
		return 0;
	classes = lo + up + dg + sym;
	if (classes >= 2 && entropy(v, n) >= 2.5)
		return 1;
	return n >= 16 && entropy(v, n) >= 3.0;
}

/* A byte that ends a URL's authority. ';' too: JDBC's parameters follow
 * the host, and a password with an '@' would otherwise reach into them. */
static int authority_end(int c)
{
	return c == '/' || c == '?' || c == '#' || c == ' ' || c == '\t' || c == '\n' ||
	       c == '\r' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '`' ||
	       c == ';' || c == '\0';
}

/* At the ':' between a URL's user and its password ("scheme://user:pass@"),
 * not at the scheme's: the password starts right after the decision, so
 * nothing before it (a token as the user name) goes unexamined. */
static int m_url(const struct rwin *w, size_t q, struct rmatch *m)
{
	size_t u = q, s, i, at = 0;

	while (u > w->lo && q - u < 100 && !authority_end(w->b[u - 1]) && w->b[u - 1] != '@' &&
	       w->b[u - 1] != ':')
		u--;
	if (u < w->lo + 3 || !has_at(w, u - 3, "://"))
		return 0;
	for (s = u - 3; s > w->lo && u - 3 - s < 32 &&
			(is_alnum(w->b[s - 1]) || w->b[s - 1] == '+' || w->b[s - 1] == '.' ||
			 w->b[s - 1] == '-');
	     s--)
		;
	if (u - 3 - s < 2 || !(is_lower(w->b[s]) || is_upper(w->b[s])))
		return 0;
	/* the last '@' before the authority ends: an '@' unencoded in a
	 * password happens */
	for (i = q + 1; i < w->hi && i - q < 512 && !authority_end(w->b[i]); i++)
		if (w->b[i] == '@')
			at = i;
	if (!at || at - q - 1 < 3 || is_placeholder(w->b + q + 1, at - q - 1))
		return 0;
	return found(m, q + 1, at, "url_password");
}

/* The value after the separator at q (':', '=', '>' of an XML element,
 * the blank after a --flag) of a key of that kind, which starts at kstart. */
static int keyed_value(const struct rwin *w, size_t q, enum key_kind kind, size_t kstart,
		       struct rmatch *m)
{
	const unsigned char *b = w->b;
	size_t vs, ve, n, i;
	int quoted, conn, sep;

	if (kind == K_NONE || kind == K_NOT_SECRET)
		return 0;
	/* the byte before the key: ';' in ADO, JDBC and ODBC strings, '&' or
	 * '?' in a URL's query, where '&' also ends the value */
	for (i = kstart; i > w->lo && kstart - i < 8 && is_space(b[i - 1]); i--)
		;
	sep = i > w->lo ? b[i - 1] : 0;
	conn = (kind == K_CONN_PW || kind == K_AZURE) && sep && strchr(";&?{", sep);
	if (!value_after(w, q, conn && (sep == '&' || sep == '?'), &vs, &ve, &quoted))
		return 0;
	if (kind == K_AUTH) {
		/* "Authorization: Bearer <credential>": past the scheme, up to
		 * a blank (or the closing quote) */
		static const char *const schemes[] = { "bearer ", "basic ", "token ", "bot ",
							"apikey ", "digest " };
		size_t lim = quoted ? ve : (w->hi - vs > 1024 ? vs + 1024 : w->hi);

		for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
			if (lim - vs > strlen(schemes[i]) &&
			    strncasecmp((const char *)b + vs, schemes[i], strlen(schemes[i])) == 0) {
				vs += strlen(schemes[i]);
				break;
			}
		for (ve = vs; ve < lim && !is_space(b[ve]) && (quoted || value_end_ok(b[ve], 0)); ve++)
			;
		kind = K_SECRET;
	}
	if (ve <= vs)
		return 0;
	n = ve - vs;
	if (kind == K_GCP_KEY && has_at(w, vs, "-----BEGIN ") && quoted)
		return found(m, vs, ve, "gcp_service_account");
	/* the value is itself a known format: its own rule names it */
	if ((CLS(b[vs]) & C_ANCH) && anchor_at(w, vs, m, 1) && m->start == vs)
		return 1;
	switch (kind) {
	case K_AWS_SECRET:
		if (n == 40 && run_of(w, vs, is_b64, 40) == 40 && !ci_contains(b + vs, n, "EXAMPLE") &&
		    random_enough(b + vs, n))
			return found(m, vs, ve, "aws_secret_access_key");
		break;
	case K_AZURE:
		if (n >= 40 && run_of(w, vs, is_b64, n) >= n - 2 && random_enough(b + vs, n))
			return found(m, vs, ve, "azure_storage_key");
		return 0;
	case K_GCP_KEY_ID:
		if (n == 40 && run_of(w, vs, is_lhex, 40) == 40)
			return found(m, vs, ve, "gcp_service_account");
		return 0;
	case K_CONN_PW:
		/* Password=...; in ADO, JDBC, ODBC; user=...&password=... in a URL */
		if (conn && n >= 3 && !is_placeholder(b + vs, n))
			return found(m, vs, ve, "connection_string");
		break;
	default:
		break;
	}
	if (secret_value_ok(b + vs, n, quoted))
		return found(m, vs, ve, "password_assignment");
	return 0;
}

static enum key_kind named_by_attribute(const struct rwin *w, size_t k);

/* "curl -u user:password", "--user user:password": the key is a flag. */
static int user_flag_before(const struct rwin *w, size_t k)
{
	if (k > w->lo && (w->b[k - 1] == '\'' || w->b[k - 1] == '"'))
		k--;
	return (k >= w->lo + 3 && has_at(w, k - 3, "-u ")) ||
	       (k >= w->lo + 7 && (has_at(w, k - 7, "--user ") || has_at(w, k - 7, "--user=")));
}

int rules_assign(const struct rwin *w, size_t q, struct rmatch *m)
{
	const unsigned char *b = w->b;
	size_t kstart = 0, e, vs, ve;
	enum key_kind kind;

	if (b[q] == ':' && has_at(w, q + 1, "//"))
		return 0; /* a scheme's: its password, if any, is at the next ':' */
	if (b[q] == ':' && m_url(w, q, m))
		return 1;
	if (b[q] == '=' && ((q > w->lo && strchr("=!<>", b[q - 1])) || has_at(w, q + 1, "=")))
		return 0; /* a comparison */
	if (b[q] == ':' && ((q > w->lo && b[q - 1] == ':') || has_at(w, q + 1, ":")))
		return 0;
	if (b[q] == '>') {
		/* <password>value</password> */
		if (!key_span(w, q, &kstart, &e) || e != q || kstart == w->lo ||
		    b[kstart - 1] != '<')
			return 0;
		for (ve = vs = q + 1; ve < w->hi && ve - vs < 1024 && b[ve] != '<' && b[ve] != '\n';
		     ve++)
			;
		if (ve >= w->hi || b[ve] != '<' || ve == vs)
			return 0;
		if (classify_key(w, kstart, e, 0) == K_NONE ||
		    !secret_value_ok(b + vs, ve - vs, 1))
			return 0;
		return found(m, vs, ve, "password_assignment");
	}
	if (b[q] == ':' && key_span(w, q, &kstart, &e) && e == q && user_flag_before(w, kstart)) {
		for (ve = vs = q + 1; ve < w->hi && ve - vs < 256 && value_end_ok(b[ve], 0); ve++)
			;
		if (ve - vs >= 3 && !is_placeholder(b + vs, ve - vs))
			return found(m, vs, ve, "password_assignment");
		return 0;
	}
	kind = key_before(w, q, &kstart, 0);
	if (kind == K_NONE && b[q] == '=' && q - kstart == 5 &&
	    strncasecmp((const char *)b + kstart, "value", 5) == 0)
		kind = named_by_attribute(w, kstart);
	return keyed_value(w, q, kind, kstart, m);
}

/* <add key="ApiSecret" value="..."/>: .NET's appSettings, where one
 * attribute names the value of the next. */
static enum key_kind named_by_attribute(const struct rwin *w, size_t k)
{
	size_t e, s;

	while (k > w->lo && is_space(w->b[k - 1]))
		k--;
	if (k == w->lo || (w->b[k - 1] != '"' && w->b[k - 1] != '\''))
		return K_NONE;
	e = --k;
	while (k > w->lo && e - k < 64 && w->b[k - 1] != w->b[e])
		k--;
	s = k;
	if (k < w->lo + 5 || w->b[k - 1] != w->b[e] || w->b[k - 2] != '=' ||
	    !(strncasecmp((const char *)w->b + k - 5, "key", 3) == 0 ||
	      (k >= w->lo + 6 && strncasecmp((const char *)w->b + k - 6, "name", 4) == 0)))
		return K_NONE;
	return classify_key(w, s, e, 0);
}

/* A one-letter flag names a password only after some commands: mysql's
 * -pSECRET (glued: a blank after -p asks for it), sshpass -p SECRET,
 * redis-cli -a, a registry login's -p, sqlcmd's -P, ssh-keygen's -N and
 * -P (passphrases), mongo's -p, az login -p. The command is looked for
 * earlier on the line, with a blank after it. */
enum { SP_GLUED = 1, SP_APART = 2 };

static const struct short_pass {
	const char *cmd;
	char flag;
	unsigned char how;
} short_pass[] = {
	{ "mysql ", 'p', SP_GLUED }, { "mysqldump ", 'p', SP_GLUED },
	{ "mysqladmin ", 'p', SP_GLUED }, { "mariadb ", 'p', SP_GLUED },
	{ "mariadb-dump ", 'p', SP_GLUED }, { "sshpass ", 'p', SP_GLUED | SP_APART },
	{ "redis-cli ", 'a', SP_APART }, { "docker login ", 'p', SP_APART },
	{ "podman login ", 'p', SP_APART }, { "buildah login ", 'p', SP_APART },
	{ "nerdctl login ", 'p', SP_APART }, { "helm registry login ", 'p', SP_APART },
	{ "oras login ", 'p', SP_APART }, { "sqlcmd ", 'P', SP_APART }, { "bcp ", 'P', SP_APART },
	{ "osql ", 'P', SP_APART }, { "ssh-keygen ", 'N', SP_APART },
	{ "ssh-keygen ", 'P', SP_APART }, { "mongo ", 'p', SP_APART },
	{ "mongosh ", 'p', SP_APART }, { "mongodump ", 'p', SP_APART },
	{ "mongorestore ", 'p', SP_APART }, { "mongoexport ", 'p', SP_APART },
	{ "mongoimport ", 'p', SP_APART }, { "az login ", 'p', SP_APART },
};

/* A port or a port mapping, as docker run -p takes one: digits with ':'
 * '.' '-' between them (an address, a range), "/tcp" or "/udp" after. */
static int port_mapping(const unsigned char *v, size_t n)
{
	size_t i, digits = 0;

	if (n > 4 && (memcmp(v + n - 4, "/tcp", 4) == 0 || memcmp(v + n - 4, "/udp", 4) == 0))
		n -= 4;
	for (i = 0; i < n; i++) {
		if (v[i] >= '0' && v[i] <= '9')
			digits++;
		else if (v[i] != ':' && v[i] != '.' && v[i] != '-')
			return 0;
	}
	return digits > 0;
}

static int m_short_pass(const struct rwin *w, size_t q, struct rmatch *m)
{
	const unsigned char *b = w->b;
	size_t ls = q, vs, ve, i;
	unsigned how = 0;
	int glued;
	unsigned char quote;

	if (q + 2 >= w->hi || q == w->lo || b[q] != '-' || !is_space(b[q - 1]) ||
	    !strchr("paPN", b[q + 1]) || !b[q + 1])
		return 0;
	while (ls > w->lo && b[ls - 1] != '\n')
		ls--;
	for (i = 0; i < sizeof(short_pass) / sizeof(short_pass[0]); i++)
		if (short_pass[i].flag == (char)b[q + 1] &&
		    memmem(b + ls, q - ls, short_pass[i].cmd, strlen(short_pass[i].cmd)))
			how |= short_pass[i].how;
	glued = !is_space(b[q + 2]);
	if (!(how & (glued ? SP_GLUED : SP_APART)))
		return 0;
	vs = glued ? q + 2 : q + 3;
	quote = vs < w->hi && (b[vs] == '\'' || b[vs] == '"') ? b[vs] : 0;
	if (quote) {
		for (ve = vs + 1; ve < w->hi && ve - vs < 256 && b[ve] != b[vs] && b[ve] != '\n'; ve++)
			;
		if (ve >= w->hi || b[ve] != b[vs])
			return 0;
		vs++;
	} else {
		for (ve = vs; ve < w->hi && ve - vs < 256 && !is_space(b[ve]) && b[ve] != '\n' &&
			      b[ve] != '\r' && b[ve] != '\0';
		     ve++)
			;
	}
	/* -p -x: another flag; "$VAR" a reference ('$...' is literal) */
	if (ve - vs < 4 || is_placeholder(b + vs, ve - vs) || (!glued && !quote && b[vs] == '-') ||
	    (b[vs] == '$' && quote != '\''))
		return 0;
	if (b[q + 1] == 'p' && !glued && port_mapping(b + vs, ve - vs))
		return 0; /* docker run --name mongo -p 27017:27017: another command's -p */
	return found(m, vs, ve, "password_assignment");
}

/* "--api-key VALUE", "--password VALUE": a flag names the secret after it. */
static int m_flag(const struct rwin *w, size_t q, struct rmatch *m)
{
	size_t e = q + 2;

	/* a flag's name starts with a letter: "-------" is no flag, and a run
	 * of dashes would otherwise try one at each */
	if (!has_at(w, q, "--") || q + 2 >= w->hi || !(is_lower(w->b[q + 2]) || is_upper(w->b[q + 2])))
		return 0;
	while (e < w->hi && e - q < 40 && (is_alnum(w->b[e]) || w->b[e] == '-' || w->b[e] == '_'))
		e++;
	if (e - q < 4 || e >= w->hi || w->b[e] != ' ')
		return 0;
	return keyed_value(w, e, classify_key(w, q + 2, e, 0), q + 2, m);
}

/* ---- generic --------------------------------------------------------- */

static int line_break_at(const struct rwin *w, size_t i)
{
	return i >= w->hi || w->b[i] == '\n' || w->b[i] == '\r' || has_at(w, i, "\\n");
}

/* A line of a base64 block: a certificate, a public key, a MIME part. Their
 * lines are 64 or 76 bytes (the last shorter, before its END line); a
 * private key's are redacted whole by private_key before they get here. */
static int block_line(const struct rwin *w, size_t q, size_t end)
{
	size_t n = end - q, e = end;

	if (!(q > w->lo && w->b[q - 1] == '\n') && !(q >= w->lo + 2 && w->b[q - 2] == '\\' &&
						     w->b[q - 1] == 'n'))
		return 0;
	if (!line_break_at(w, end))
		return 0;
	if (n == 64 || n == 76)
		return 1;
	if (end >= w->hi)
		return 0;
	e += has_at(w, e, "\\n") || has_at(w, e, "\r\n") ? 2 : 1;
	return has_at(w, e, "-----END ");
}

static int m_entropy(const struct rwin *w, size_t q, struct rmatch *m)
{
	static const char *const hashed[] = { "sha1-", "sha256-", "sha384-", "sha512-", "md5-",
					      "nonce-" /* CSP */ };
	static const char *const media[] = { "iVBORw0KGgo", "/9j/", "R0lGOD", "UklGR", "JVBERi0",
					     "UEsDB", "H4sI", "AAAA" /* ssh public keys */ };
	static const char *const before[] = { "h1:", "sha256:", "sha512:", "sha1:", "md5:",
					      "base64,", "sha384:" };
	/* the ids APIs hand out, typed by a prefix: public names of objects
	 * (Stripe's, OpenAI's, Anthropic's), random to look at, no secret */
	static const char *const ids[] = {
		"ch_", "cus_", "pi_", "pm_", "py_", "sub_", "si_", "in_", "ii_", "il_", "evt_",
		"txn_", "acct_", "prod_", "price_", "plan_", "seti_", "src_", "card_", "po_", "tr_",
		"cs_live_", "cs_test_", "req_", "chatcmpl-", "cmpl-", "msg_", "msgbatch_", "run_",
		"thread_", "asst_", "file-", "file_", "ft-", "ftjob-", "batch_", "call_", "resp_",
		"step_", "vs_", "toolu_", "srvtoolu_", "org-", "proj_",
	};
	const unsigned char *v = w->b + q;
	size_t n = run_of(w, q, is_tok_fn, HE_MAX + 1), end, i, kstart;
	int lo = 0, up = 0, dg = 0, hex = 1;

	if (n < HE_MIN || n > HE_MAX)
		return 0;
	for (end = q + n; end < w->hi && end - q - n < 2 && w->b[end] == '='; end++)
		;
	for (i = 0; i < sizeof(hashed) / sizeof(hashed[0]); i++)
		if (has_at_str(w, q, hashed[i]))
			return 0;
	for (i = 0; i < sizeof(media) / sizeof(media[0]); i++)
		if (has_at_str(w, q, media[i]))
			return 0;
	/* (not Resend's keys, re_...; not a client secret,
	 * pi_..._secret_..., which the id starts) */
	for (i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		if (has_at_str(w, q, ids[i]) && !memmem(v, n, "_secret_", 8))
			return 0;
	for (i = 0; i < sizeof(before) / sizeof(before[0]); i++) {
		size_t k = strlen(before[i]);

		if (q - w->lo >= k && strncasecmp((const char *)v - k, before[i], k) == 0)
			return 0;
	}
	for (i = 0; i < n; i++) {
		int c = v[i];

		lo |= is_lower(c);
		up |= is_upper(c);
		dg |= is_digit(c);
		if (!(CLS(c) & C_HEX) && c != '-')
			hex = 0;
	}
	if (block_line(w, q, end))
		return 0;
	/* digests and UUIDs are hex; a hex secret needs a key to say so */
	if (hex || !lo || !up || !dg)
		return 0;
	if (wordiness(v, n) >= 0.7 || entropy(v, n) < entropy_floor(n) || decodes_to_text(v, n))
		return 0;
	/* "checksum": "...", etag=..., a JSON field holding an image */
	i = q;
	while (i > w->lo && q - i < 4 && (w->b[i - 1] == '"' || w->b[i - 1] == '\'' ||
					  is_space(w->b[i - 1])))
		i--;
	if (i > w->lo && (w->b[i - 1] == ':' || w->b[i - 1] == '=') &&
	    key_before(w, i - 1, &kstart, 1) == K_NOT_SECRET)
		return 0;
	return found(m, q, end, "high_entropy");
}

int rules_entropy(const struct rwin *w, size_t q, struct rmatch *m)
{
	return m_entropy(w, q, m);
}
