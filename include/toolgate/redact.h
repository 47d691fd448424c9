/*
 * The secret redactor (docs/REDACTION.md): finds credentials in text (a
 * tool's result, a log line) and replaces each with "[REDACTED:<rule>]",
 * where <rule> is one of the stable names below.
 *
 * Rules are hand-written matchers behind one pass of prefilters: a byte
 * class table, two-byte anchors ("gh", "AK", "-----BEGIN", "://"), the
 * assignment operators '=' and ':' (the key before them is looked up), and
 * the starts of long base64/base62 runs. A finding never carries the
 * secret's bytes: a rule name, where it was and how long.
 *
 * Every decision looks at a bounded window of input: at most
 * TG_REDACT_LOOKBEHIND bytes before the position it is made at and
 * TG_REDACT_WINDOW after. So a stream that keeps that much redacts exactly
 * as one call over the whole input does, whatever the chunks, in memory
 * that does not grow with the input. A private key block without its END
 * line within TG_REDACT_KEY_CAP is redacted as far as its body goes, in
 * findings of at most the cap, each flagged TG_REDACT_TRUNCATED: never
 * shown because it was long.
 *
 * Any bytes are accepted: NUL is a byte, invalid UTF-8 is redacted as the
 * bytes it is; both are flagged so a caller can say what it was given.
 *
 * Encoded secrets: a run of base64 (either alphabet, padded or not,
 * wrapped in lines or not) or hex in the text is decoded, one level, and
 * the rules run on what it decodes to; when they find a secret there the
 * whole run is redacted. tg_redact_value goes further for a value that
 * is nothing but base64 or hex: decoded whole, redacted, encoded again.
 */
#ifndef TOOLGATE_REDACT_H
#define TOOLGATE_REDACT_H

#include <stddef.h>
#include <stdint.h>

#include "toolgate/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The longest span one rule may match (a private key block), the window
 * ahead every decision may read, and the context behind it. */
#define TG_REDACT_KEY_CAP (16 * 1024)
#define TG_REDACT_WINDOW (TG_REDACT_KEY_CAP + 256)
#define TG_REDACT_LOOKBEHIND 128
/* Findings kept in detail; beyond, only counted (TG_REDACT_FINDINGS_CAPPED). */
#define TG_REDACT_FINDINGS_MAX 10000

/* Flags: of a finding (TRUNCATED) and of a whole input. */
enum {
	TG_REDACT_TRUNCATED = 1 << 0,       /* a key block redacted up to the cap, END unseen */
	TG_REDACT_BINARY = 1 << 1,          /* the input held NUL bytes */
	TG_REDACT_INVALID_UTF8 = 1 << 2,    /* the input was not valid UTF-8 */
	TG_REDACT_FINDINGS_CAPPED = 1 << 3, /* more findings than TG_REDACT_FINDINGS_MAX */
	TG_REDACT_ENCODED = 1 << 4,         /* found in a decoded run: the run redacted */
	TG_REDACT_DECODED = 1 << 5,         /* tg_redact_value: decoded whole, encoded again */
	TG_REDACT_UNDECIDED = 1 << 6,       /* an operator's rule hit its match limit: the rest of its block redacted */
};

struct tg_redact_finding {
	const char *rule;  /* static: "github_token", ..., or an operator's rule id (kept for the process's life) */
	uint64_t offset;   /* of the redacted bytes, in the input */
	uint64_t length;
	uint64_t line;     /* of offset, from 1 */
	unsigned flags;    /* TG_REDACT_TRUNCATED, TG_REDACT_ENCODED */
};

struct tg_redact_out {
	char *text;        /* the redacted input, NUL-terminated (len excludes it) */
	size_t len;
	struct tg_redact_finding *findings; /* in input order, at most TG_REDACT_FINDINGS_MAX */
	size_t nfindings;
	uint64_t total;    /* findings, counting those not kept */
	unsigned flags;    /* TG_REDACT_* of the whole input, and TRUNCATED or ENCODED if any finding has it */
};

/* The rule names, in a stable order, NULL-terminated (for docs, tests and
 * `toolgate redact --rules`). */
TG_API const char *const *tg_redact_rules(void);

/* Redact in[0..n) in one call. OUT: *out (released with
 * tg_redact_out_release, also after a failure). The output is at most
 * a small multiple of n (a redacted span may be shorter than its marker).
 * -1 and err only when memory runs out. */
TG_API int tg_redact(const char *in, size_t n, struct tg_redact_out *out, struct tg_error *err);
TG_API void tg_redact_out_release(struct tg_redact_out *out);

/* Text from outside (a server's, an agent's) as the gateway's log shows
 * it (src/obs/shown.c): in[0..n) redacted, then each character a
 * terminal acts on or a reader does not see (controls, escapes, bidi
 * controls, zero-width characters) as '?', a tab kept; at most cap - 1
 * bytes into out, NUL-terminated (cut there). 0, or -1 when it could not
 * be redacted: out is then a note saying so, never the text. */
TG_API int tg_redact_shown(const char *in, size_t n, char *out, size_t cap);

/* Redact one value that may be encoded data (a JSON string of a tool's
 * result: fs.read's content of a binary file, an image's data, a
 * resource's blob). A value that is nothing but base64 (standard or
 * URL-safe, padded or not, in lines of one width or not, a newline at
 * its end or not) or hex, and whose decoded bytes hold a secret, comes
 * back encoded the same way with those bytes redacted (their own base64
 * or hex runs decoded one level, as tg_redact does), flagged
 * TG_REDACT_DECODED; its findings' offsets and lines are then in the
 * decoded bytes. Any other value, or one whose decoding holds nothing,
 * is redacted as tg_redact does. OUT: *out, released with
 * tg_redact_out_release (also after a failure). -1 and err only when
 * memory runs out. */
TG_API int tg_redact_value(const char *in, size_t n, struct tg_redact_out *out,
			   struct tg_error *err);

/*
 * An operator's rules: a gitleaks configuration (docs/REDACTION.md,
 * "gitleaks configurations"), applied beside the built-in rules. Its
 * expressions are Go's (RE2) syntax, matched by PCRE2 once translated
 * (a construct the two read differently is refused); keywords filter
 * which rules run on a block of at most TG_REDACT_KEY_CAP bytes; a
 * match's secret (secretGroup), its entropy and the allowlists decide
 * as gitleaks does. What needs a file path or a commit does not apply
 * and is said in a note.
 */
struct tg_redact_ruleset;

/* Read the configuration at path (and the one its extend.path names,
 * relative to it). OUT: *out, one reference, dropped with
 * tg_redact_ruleset_free. -1 and err naming the file (and its line and
 * column, or the rule and field) on anything wrong or past a ceiling. */
TG_API int tg_redact_ruleset_load(const char *path, struct tg_redact_ruleset **out,
				  struct tg_error *err);
/* Drops a reference; NULL is a no-op. */
TG_API void tg_redact_ruleset_free(struct tg_redact_ruleset *rs);
/* The rules applied, by id, in the file's order (borrowed): their count. */
TG_API size_t tg_redact_ruleset_ids(const struct tg_redact_ruleset *rs, const char *const **ids);
/* What of the file does not apply, and why: NULL-terminated (borrowed). */
TG_API const char *const *tg_redact_ruleset_notes(const struct tg_redact_ruleset *rs);
/* From now on every redaction in the process (a call, a value, a stream
 * begun after) applies rs's rules too: a reference is taken, the set
 * used before dropped; NULL: the built-in rules only. One begun before
 * keeps the set it began with. Thread-safe. */
TG_API void tg_redact_use(struct tg_redact_ruleset *rs);

/* Streaming: output (redacted bytes, in order) goes to write as it is
 * decided, at most TG_REDACT_WINDOW + 4 KiB + 96 bytes behind the input; write returns 0, or -1 to stop (feed and finish then fail
 * with the error it put in err, or a generic one). The concatenated
 * output, the findings and the flags equal tg_redact()'s over the
 * concatenated input. Memory stays under 96 KiB (the buffer, the
 * secrets remembered to redact their repeats), up to 460 KiB more for
 * the rules that run over blocks (the secrets found ahead, a secret
 * lowered for stopwords, a block that is not UTF-8 copied with U+FFFD),
 * plus the findings kept. */
typedef int (*tg_redact_write_fn)(void *arg, const char *buf, size_t len, struct tg_error *err);
struct tg_redact_stream;

TG_API int tg_redact_stream_new(tg_redact_write_fn write, void *arg,
				struct tg_redact_stream **out, struct tg_error *err);
TG_API int tg_redact_stream_feed(struct tg_redact_stream *s, const void *buf, size_t n,
				 struct tg_error *err);
/* The end of the input: decide and write what is held back. Feeding after
 * finish is an error. */
TG_API int tg_redact_stream_finish(struct tg_redact_stream *s, struct tg_error *err);
/* The findings so far (borrowed, valid until the next feed or free), and
 * the count and flags as in struct tg_redact_out. */
TG_API const struct tg_redact_finding *tg_redact_stream_findings(const struct tg_redact_stream *s,
								 size_t *n, uint64_t *total,
								 unsigned *flags);
/* NULL is a no-op. */
TG_API void tg_redact_stream_free(struct tg_redact_stream *s);

#ifdef __cplusplus
}
#endif

#endif
