/* Unit tests: an operator's redaction rules from a gitleaks
 * configuration (src/obs/redact_load.c, redact_re2.c, redact_x.c): the
 * rules applied as gitleaks applies them (secretGroup, keywords,
 * entropy, allowlists by secret, match and line, AND, targetRules,
 * extend), each refusal by its message, Go's syntax translated or
 * refused, a stream deciding as one call does across blocks, a slow
 * expression failing closed, and the set in use swapped under a stream. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "obs/redact_int.h"
#include "toolgate/redact.h"
#include "unit.h"

static char dir[64];

/* Each test runs in its own process: its directory goes when it exits. */
static void dir_remove(void)
{
	if (dir[0])
		unit_rmtree(dir);
}

/* text written to dir/name, loaded: the set, or NULL (err said). */
static struct tg_redact_ruleset *load(const char *name, const char *text, struct tg_error *err)
{
	char path[128];
	struct tg_redact_ruleset *rs = NULL;

	if (!dir[0]) {
		if (unit_tmpdir(dir, "redact-x") < 0)
			return NULL;
		atexit(dir_remove);
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (unit_put(NULL, path, text, 0644) < 0)
		return NULL;
	if (tg_redact_ruleset_load(path, &rs, err) < 0)
		return NULL;
	return rs;
}

/* text refused with a message holding want. */
static int refused(const char *text, const char *want)
{
	struct tg_error err;
	struct tg_redact_ruleset *rs = load("bad.toml", text, &err);

	if (rs) {
		tg_redact_ruleset_free(rs);
		fprintf(stderr, "accepted: %s\n", text);
		return 0;
	}
	if (!strstr(err.msg, want)) {
		fprintf(stderr, "message: %s\nwant: %s\n", err.msg, want);
		return 0;
	}
	return 1;
}

/* in redacted in one call with rs in use is want. */
static int redacts_to(struct tg_redact_ruleset *rs, const char *in, const char *want)
{
	struct tg_redact_out o;
	struct tg_error err;
	int same;

	tg_redact_use(rs);
	if (tg_redact(in, strlen(in), &o, &err) < 0) {
		tg_redact_use(NULL);
		return 0;
	}
	tg_redact_use(NULL);
	same = strcmp(o.text, want) == 0;
	if (!same)
		fprintf(stderr, "got  %s\nwant %s\n", o.text, want);
	tg_redact_out_release(&o);
	return same;
}

static const char corp[] =
	"title = \"corp\"\n"
	"[[rules]]\n"
	"id = \"corp-key\"\n"
	"regex = '''corp_(?:live|test)_([a-z0-9]{24})\\b'''\n"
	"keywords = [\"CORP_\"]\n"
	"entropy = 3.0\n"
	"[[rules]]\n"
	"id = \"internal-token\"\n"
	"regex = '''(?i)(?:internal)[_-]handle\\s*[:=]\\s*['\"]?([a-z0-9]{20,})'''\n"
	"secretGroup = 1\n"
	"keywords = [\"internal\"]\n"
	"[[rules.allowlists]]\n"
	"stopwords = [\"sample\"]\n"
	"[[rules]]\n"
	"id = \"always\"\n"
	"regex = '''zz9plural([A-Z]{6})'''\n";

static int rules_apply(void)
{
	struct tg_error err;
	struct tg_redact_ruleset *rs = load("corp.toml", corp, &err);
	const char *const *ids;

	if (!rs)
		fprintf(stderr, "%s\n", err.msg);
	CHECK(rs);
	CHECK(tg_redact_ruleset_ids(rs, &ids) == 3 && strcmp(ids[0], "corp-key") == 0);
	/* the group is the secret; the keyword's case does not matter */
	CHECK(redacts_to(rs, "key corp_live_a1b2c3d4e5f6g7h8i9j0k1l2 end",
			 "key corp_live_[REDACTED:corp-key] end"));
	/* entropy at or under 3.0: not a secret; \b: a longer run is not one */
	CHECK(redacts_to(rs, "corp_live_aaaaaaaaaaaaaaaaaaaaaaaa", "corp_live_aaaaaaaaaaaaaaaaaaaaaaaa"));
	CHECK(redacts_to(rs, "corp_live_a1b2c3d4e5f6g7h8i9j0k1l2m", "corp_live_a1b2c3d4e5f6g7h8i9j0k1l2m"));
	/* the keyword absent from the block: the rule does not run */
	CHECK(redacts_to(rs, "crop_live_a1b2c3d4e5f6g7h8i9j0k1l2", "crop_live_a1b2c3d4e5f6g7h8i9j0k1l2"));
	/* stopwords: lower case, inside the secret */
	CHECK(redacts_to(rs, "Internal-Handle: abcdefghij0123456789xyz",
			 "Internal-Handle: [REDACTED:internal-token]"));
	CHECK(redacts_to(rs, "internal_handle=abcdsampleij0123456789xyz",
			 "internal_handle=abcdsampleij0123456789xyz"));
	/* no keyword: always runs */
	CHECK(redacts_to(rs, "a zz9pluralABCDEF b", "a zz9plural[REDACTED:always] b"));
	/* not in use: nothing */
	CHECK(redacts_to(NULL, "key corp_live_a1b2c3d4e5f6g7h8i9j0k1l2 end",
			 "key corp_live_a1b2c3d4e5f6g7h8i9j0k1l2 end"));
	tg_redact_ruleset_free(rs);
	return 0;
}

static int allowlists(void)
{
	static const char text[] =
		"[[rules]]\n"
		"id = \"tok\"\n"
		"regex = '''tok_([A-Za-z0-9]{16})'''\n"
		"[[rules.allowlists]]\n"
		"regexTarget = \"line\"\n"
		"regexes = ['''^# docs:''']\n"
		"[[rules.allowlists]]\n"
		"regexTarget = \"match\"\n"
		"regexes = ['''^tok_0''']\n"
		"[[rules.allowlists]]\n"
		"condition = \"AND\"\n"
		"regexes = ['''^A''']\n"
		"stopwords = [\"zz\"]\n"
		"[[allowlists]]\n"
		"targetRules = [\"tok\"]\n"
		"regexes = ['''^Q''']\n"
		"[[allowlists]]\n"
		"description = \"paths never hold for a stream\"\n"
		"condition = \"AND\"\n"
		"paths = ['''.*''']\n"
		"regexes = ['''.*''']\n";
	struct tg_error err;
	struct tg_redact_ruleset *rs = load("allow.toml", text, &err);
	const char *const *notes;

	CHECK(rs);
	CHECK(redacts_to(rs, "x tok_abcdefgh12345678 y", "x tok_[REDACTED:tok] y"));
	CHECK(redacts_to(rs, "# docs: tok_abcdefgh12345678", "# docs: tok_abcdefgh12345678"));
	CHECK(redacts_to(rs, "tok_0bcdefgh12345678", "tok_0bcdefgh12345678"));
	/* AND: both must hold */
	CHECK(redacts_to(rs, "tok_Abcdefgh12345zz8", "tok_Abcdefgh12345zz8"));
	CHECK(redacts_to(rs, "tok_Abcdefgh12345678", "tok_[REDACTED:tok]"));
	CHECK(redacts_to(rs, "tok_bbcdefgh12345zz8", "tok_[REDACTED:tok]"));
	/* a global allowlist aimed at the rule */
	CHECK(redacts_to(rs, "tok_Qbcdefgh12345678", "tok_Qbcdefgh12345678"));
	notes = tg_redact_ruleset_notes(rs);
	CHECK(notes[0] && strstr(notes[0], "allowlists[1]: paths and commits do not apply") &&
	      strstr(notes[0], "allows nothing here"));
	tg_redact_ruleset_free(rs);
	return 0;
}

static int extend(void)
{
	static const char base[] =
		"[[rules]]\n"
		"id = \"b-one\"\n"
		"regex = '''bone_([0-9]{8})'''\n"
		"keywords = [\"bone_\"]\n"
		"[[rules]]\n"
		"id = \"b-two\"\n"
		"regex = '''btwo_([0-9]{8})'''\n";
	static const char top[] =
		"[extend]\n"
		"path = \"base.toml\"\n"
		"disabledRules = [\"b-two\", \"nothing-such\"]\n"
		"[[rules]]\n"
		"id = \"b-one\"\n"
		"keywords = [\"alt_\"]\n"
		"regex = '''(?:bone|alt)_([0-9]{8})'''\n";
	struct tg_error err;
	struct tg_redact_ruleset *rs;
	const char *const *ids, *const *notes;

	struct tg_redact_ruleset *b = load("base.toml", base, &err);

	CHECK(b); /* written, and loads alone too */
	tg_redact_ruleset_free(b);
	rs = load("top.toml", top, &err);
	if (!rs)
		fprintf(stderr, "%s\n", err.msg);
	CHECK(rs);
	CHECK(tg_redact_ruleset_ids(rs, &ids) == 1 && strcmp(ids[0], "b-one") == 0);
	/* the extending file's regex, the keywords of both */
	CHECK(redacts_to(rs, "alt_12345678 bone_23456789 btwo_34567890",
			 "alt_[REDACTED:b-one] bone_[REDACTED:b-one] btwo_34567890"));
	notes = tg_redact_ruleset_notes(rs);
	CHECK(notes[0] && strstr(notes[0], "no rule nothing-such"));
	tg_redact_ruleset_free(rs);
	CHECK(refused("[extend]\npath = \"missing.toml\"\n", "missing.toml: No such file"));
	{
		/* a path past the ceiling once joined: said, not cut short */
		char longer[5100];

		snprintf(longer, sizeof(longer), "[extend]\npath = \"%04900d\"\n", 0);
		CHECK(refused(longer, "extend.path: longer than 4095 bytes"));
	}
	/* a file extending itself: the third level refused */
	CHECK(refused("[extend]\npath = \"bad.toml\"\n", "more than 2 levels of extension"));
	return 0;
}

static int refusals(void)
{
	CHECK(refused("[[rules]]\nid = \"a\"\nregex = 'x'\nsecretgroop = 1\n", "rule a: unknown key 'secretgroop'"));
	CHECK(refused("titel = \"x\"\n", "the top level: unknown key 'titel'"));
	CHECK(refused("[[rules]]\nid = \"a b\"\nregex = 'x'\n", "id must be 1 to 48 of"));
	CHECK(refused("[[rules]]\nid = \"a\"\nregex = 'x'\n[[rules]]\nid = \"a\"\nregex = 'y'\n",
		      "rule a given twice"));
	CHECK(refused("[[rules]]\nid = \"a\"\nregex = '(x)'\nsecretGroup = 2\n",
		      "rule a: secretGroup 2, but the regex has 1 groups"));
	CHECK(refused("[[rules]]\nid = \"a\"\nregex = 'x'\nentropy = 9\n", "entropy must be a number from 0 to 8"));
	CHECK(refused("[[rules]]\nid = \"a\"\n", "rule a: neither regex nor path"));
	CHECK(refused("[[rules]]\nid = \"a\"\nregex = 'x'\n[[rules.allowlists]]\ndescription = \"d\"\n",
		      "must hold regexes, stopwords, paths or commits"));
	CHECK(refused("[allowlist]\nregexes = ['x']\n[[allowlists]]\nregexes = ['y']\n",
		      "[allowlist] and [[allowlists]] both given"));
	CHECK(refused("[extend]\nuseDefault = true\npath = \"x.toml\"\n", "path and useDefault both given"));
	CHECK(refused("[extend]\nurl = \"https://example.com/x.toml\"\n", "extend.url: not supported"));
	CHECK(refused("[[allowlists]]\ntargetRules = [\"nope\"]\nregexes = ['x']\n",
		      "targetRules names no rule 'nope'"));
	CHECK(refused("[[rules]]\nid = \"a\"\nregex = 'x'\n[[rules.allowlists]]\nregexTarget = \"path\"\nregexes = ['x']\n",
		      "regexTarget must be secret, match or line"));
	CHECK(refused("[[rules]]\nid = \"a\"\nregex = 'x'\nkeywords = [\"\"]\n", "keywords[0]: 1 to 64 bytes"));
	CHECK(refused("[[rules]]\nid = \"a\"\nregex = 'x'\nkeywords = \"x\"\n", "keywords must be an array of strings"));
	CHECK(refused("[[rules]]\nid = \"a\"\nregex = '(x'\n", "rule a: regex: missing closing parenthesis"));
	CHECK(refused("[[rules]]\nid = \"a\"\nregex = 'x'\nRegex = 'y'\n", "given twice"));
	CHECK(refused("[[rules]\n", "bad.toml: line 1"));
	return 0;
}

/* RE2 expressions translated, or refused naming the construct. */
static int re2(void)
{
	static const struct {
		const char *re, *why;
	} no[] = {
		{ "a(?=b)", "a lookahead" },     { "(?<=a)b", "a lookbehind" },
		{ "(?<!a)b", "a lookbehind" },   { "(?!a)", "a lookahead" },
		{ "(?>ab)", "an atomic group" }, { "(a)\\1", "a back-reference" },
		{ "a*+", "a repetition of a repetition" }, { "a{2}{3}", "a repetition of a repetition" },
		{ "a\\Z", "the escape \\Z" },    { "\\Ka", "the escape \\K" },
		{ "\\R", "the escape \\R" },     { "(?x) a", "the flag x" },
		{ "(?#c)a", "an inline comment" }, { "(*UTF)a", "a backtracking verb" },
		{ "a{1001}", "a repetition count over 1000" }, { "a{3,2}", "bounds reversed" },
		{ "\\xg0", "without two hex digits" }, { "[a", "a class without its ]" },
		{ "(?(1)a|b)", "a group form other than" }, { "a\\", "a trailing backslash" },
		{ "[\\b]", "an assertion escape inside a class" },
		{ "a*\\Q\\E+a", "a repetition after an empty" }, { "\\p{Xan}", "Go does not have" },
		{ "\\p{L&}", "Go does not have" },
	};
	static const struct {
		const char *re, *subject;
		int match;
	} yes[] = {
		{ "a\\sb", "a\vb", 0 },        /* Go's \s has no \v */
		{ "a\\sb", "a\tb", 1 },
		{ "a[\\S]b", "a\vb", 1 },
		{ "a\\vb", "a\vb", 1 },        /* \v is the vertical tab */
		{ "a\\vb", "a\nb", 0 },
		{ "ab$", "ab\n", 0 },          /* $ is the end of the text */
		{ "(?m)ab$", "ab\n", 1 },
		{ "a{,3}", "a{,3}", 1 },       /* a literal in Go */
		{ "\\0101", "\b1", 1 },       /* octal: \\010, then 1 */
		{ "(?P<n>x)y", "xy", 1 },
		{ "(?i)ÄB", "äb", 1 },
		{ "\\pLx", "éx", 1 },
		{ "\\Qa.b\\E", "a.b", 1 },
		{ "\\Qa.b\\E", "axb", 0 },
		{ "[]a]", "]", 1 },
		{ "\\w+", "\xc3\xa9", 0 },     /* ASCII \w, as Go's */
		{ "[\\s-a]", "Q", 0 },         /* '-' after a class: itself */
		{ "[\\s-a]", "-", 1 },
		{ "x{01}", "x{01}", 1 },       /* a leading zero: no count in Go */
		{ "a\\ b", "a b", 1 },
	};
	struct tg_error err;
	size_t i;

	for (i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		pcre2_code *c = redact_re2_compile(no[i].re, strlen(no[i].re), "r", &err);

		if (c || !strstr(err.msg, no[i].why)) {
			fprintf(stderr, "%s: %s\n", no[i].re, c ? "accepted" : err.msg);
			pcre2_code_free(c);
			return -1;
		}
	}
	for (i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		pcre2_code *c = redact_re2_compile(yes[i].re, strlen(yes[i].re), "r", &err);
		pcre2_match_data *md;
		int rc;

		if (!c) {
			fprintf(stderr, "%s: %s\n", yes[i].re, err.msg);
			return -1;
		}
		md = pcre2_match_data_create(1, NULL); /* rc 0: matched, the groups past room */
		rc = pcre2_match(c, (PCRE2_SPTR)yes[i].subject, strlen(yes[i].subject), 0, 0, md, NULL);
		pcre2_match_data_free(md);
		pcre2_code_free(c);
		if ((rc >= 0) != yes[i].match) {
			fprintf(stderr, "%s on %s: %d\n", yes[i].re, yes[i].subject, rc);
			return -1;
		}
	}
	return 0;
}

struct sink {
	char *p;
	size_t len, cap;
};

static int sink_write(void *arg, const char *buf, size_t n, struct tg_error *err)
{
	struct sink *s = arg;

	(void)err;
	if (s->len + n + 1 > s->cap) {
		s->cap = (s->len + n + 1) * 2;
		if (!(s->p = realloc(s->p, s->cap)))
			return -1;
	}
	memcpy(s->p + s->len, buf, n);
	s->len += n;
	return 0;
}

/* t streamed in chunks (0: varying) equals one call, findings included. */
static int stream_same(const char *t, size_t n, size_t chunk, unsigned *seed)
{
	struct tg_redact_out one;
	struct tg_redact_stream *st;
	struct sink sink = { NULL, 0, 0 };
	const struct tg_redact_finding *f;
	struct tg_error err;
	size_t off = 0, nf, i;
	uint64_t total;
	unsigned flags;
	int rc = -1;

	if (tg_redact(t, n, &one, &err) < 0 || tg_redact_stream_new(sink_write, &sink, &st, &err) < 0)
		return -1;
	while (off < n) {
		size_t c = chunk ? chunk : 1 + (size_t)rand_r(seed) % 9000;

		if (c > n - off)
			c = n - off;
		if (tg_redact_stream_feed(st, t + off, c, &err) < 0)
			goto out;
		off += c;
	}
	if (tg_redact_stream_finish(st, &err) < 0)
		goto out;
	f = tg_redact_stream_findings(st, &nf, &total, &flags);
	if (sink.len != one.len || memcmp(sink.p, one.text, one.len) != 0 || nf != one.nfindings ||
	    flags != one.flags) {
		fprintf(stderr, "chunk %zu: stream %zu bytes %zu findings, one call %zu bytes %zu\n",
			chunk, sink.len, nf, one.len, one.nfindings);
		goto out;
	}
	for (i = 0; i < nf; i++)
		if (f[i].offset != one.findings[i].offset || f[i].length != one.findings[i].length ||
		    strcmp(f[i].rule, one.findings[i].rule) != 0)
			goto out;
	rc = 0;
out:
	tg_redact_stream_free(st);
	tg_redact_out_release(&one);
	free(sink.p);
	return rc;
}

/* Text with the operator's secrets across blocks: short lines, a line of
 * 40 KiB (cut mid-line), a match over lines, built-in secrets beside. */
static char *blocky_text(size_t *len)
{
	size_t cap = 400 * 1024, n = 0;
	char *t = malloc(cap);
	unsigned i;

	if (!t)
		return NULL;
	for (i = 0; n + 50000 < cap; i++) {
		switch (i % 7) {
		case 0:
			n += (size_t)sprintf(t + n, "log line %u corp_live_%08x%08x%08x ok\n", i,
					     i * 2654435761u, i ^ 0x5bd1e995u, i * 40503u);
			break;
		case 1:
			n += (size_t)sprintf(t + n, "multi BEGIN\nq%06u\nEND tail\n", i);
			break;
		case 2:
			if (i % 5 == 2) {
				/* a long line: secrets all along it */
				for (unsigned k = 0; k < 1200; k++)
					n += (size_t)sprintf(t + n, "w%u corp_test_%08x%08x%08x ", k,
							     k * 2654435761u, k + i, k * 7919u);
				t[n++] = '\n';
			}
			break;
		case 3:
			n += (size_t)sprintf(t + n, "password = \"Winter%uzZ!\"\n", i);
			break;
		default:
			n += (size_t)sprintf(t + n, "the quick brown fox %u jumps over the lazy dog\n", i);
		}
	}
	t[n] = '\0';
	*len = n;
	return t;
}

static size_t count(const char *t, const char *what)
{
	size_t n = 0;

	while ((t = strstr(t, what))) {
		n++;
		t++;
	}
	return n;
}

static int stream_equals_one_call(void)
{
	static const char text[] =
		"[[rules]]\n"
		"id = \"corp-key\"\n"
		"regex = '''corp_(?:live|test)_([a-z0-9]{24})\\b'''\n"
		"keywords = [\"corp_\"]\n"
		"[[rules]]\n"
		"id = \"multi\"\n"
		"regex = '''(?s)BEGIN\\n(q[0-9]+)\\nEND'''\n";
	static const size_t chunks[] = { 1, 7, 4096, 16384, 17000, 65536, 0, 0 };
	struct tg_error err;
	struct tg_redact_ruleset *rs = load("blocks.toml", text, &err);
	struct tg_redact_out o;
	unsigned seed = 7;
	size_t n, i, ncorp = 0, multi = 0;
	char *t = blocky_text(&n);

	CHECK(rs && t);
	tg_redact_use(rs);
	CHECK(tg_redact(t, n, &o, &err) == 0);
	for (i = 0; i < o.nfindings; i++) {
		ncorp += strcmp(o.findings[i].rule, "corp-key") == 0;
		multi += strcmp(o.findings[i].rule, "multi") == 0;
	}
	/* every secret found, on short lines, along the long ones, over lines */
	CHECK(!strstr(o.text, "corp_live_0") && !strstr(o.text, "\nq0"));
	/* each one: as many findings as the text has secrets */
	if (ncorp != count(t, "corp_") || multi != count(t, "multi BEGIN"))
		fprintf(stderr, "corp-key %zu of %zu, multi %zu of %zu\n", ncorp, count(t, "corp_"),
			multi, count(t, "multi BEGIN"));
	CHECK(ncorp == count(t, "corp_") && multi == count(t, "multi BEGIN") && ncorp > 1000);
	tg_redact_out_release(&o);
	for (i = 0; i < sizeof(chunks) / sizeof(chunks[0]); i++)
		CHECK(stream_same(t, n, chunks[i], &seed) == 0);
	tg_redact_use(NULL);
	tg_redact_ruleset_free(rs);
	free(t);
	return 0;
}

/* A rule that takes a key block's first line only does not leave the
 * block's body shown: the built-in rule redacts the rest. */
static int union_with_builtin(void)
{
	static const char text[] =
		"[[rules]]\n"
		"id = \"rsa-header\"\n"
		"regex = '''-----BEGIN RSA PRIVATE KEY-----'''\n";
	static const char key[] =
		"-----BEGIN RSA PRIVATE KEY-----\n"
		"MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n"
		"VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n"
		"-----END RSA PRIVATE KEY-----\n";
	struct tg_error err;
	struct tg_redact_ruleset *rs = load("rsa.toml", text, &err);
	struct tg_redact_out o;

	CHECK(rs);
	tg_redact_use(rs);
	CHECK(tg_redact(key, strlen(key), &o, &err) == 0);
	tg_redact_use(NULL);
	CHECK(!strstr(o.text, "MIIE") && !strstr(o.text, "VTLw") && !strstr(o.text, "END RSA"));
	tg_redact_out_release(&o);
	tg_redact_ruleset_free(rs);
	return 0;
}

/* A pattern that backtracks without end: the block redacted, flagged. */
static int undecided_fails_closed(void)
{
	static const char text[] =
		"[[rules]]\n"
		"id = \"slow\"\n"
		"regex = '''(x+x+)+y'''\n";
	struct tg_error err;
	struct tg_redact_ruleset *rs = load("slow.toml", text, &err);
	struct tg_redact_out o;
	char in[4096];

	CHECK(rs);
	/* x...xzy: the y the pattern needs is there, but not after the x's */
	memset(in, 'x', sizeof(in) - 3);
	in[sizeof(in) - 3] = 'z';
	in[sizeof(in) - 2] = 'y';
	in[sizeof(in) - 1] = '\0';
	tg_redact_use(rs);
	CHECK(tg_redact(in, strlen(in), &o, &err) == 0);
	tg_redact_use(NULL);
	CHECK((o.flags & TG_REDACT_UNDECIDED) && strcmp(o.text, "[REDACTED:slow]") == 0);
	tg_redact_out_release(&o);
	tg_redact_ruleset_free(rs);
	return 0;
}

/* base64 of an operator's secret: the run redacted, as a built-in one's. */
static int encoded(void)
{
	struct tg_error err;
	struct tg_redact_ruleset *rs = load("corp.toml", corp, &err);

	CHECK(rs);
	/* base64 of "key corp_live_a1b2c3d4e5f6g7h8i9j0k1l2" */
	CHECK(redacts_to(rs, "b'a2V5IGNvcnBfbGl2ZV9hMWIyYzNkNGU1ZjZnN2g4aTlqMGsxbDI='",
			 "b'[REDACTED:corp-key]'"));
	tg_redact_ruleset_free(rs);
	return 0;
}

/* The set swapped while a stream runs: the stream keeps its own. */
static int swapped_under_a_stream(void)
{
	struct tg_error err;
	struct tg_redact_ruleset *rs = load("corp.toml", corp, &err);
	struct tg_redact_stream *st;
	struct sink sink = { NULL, 0, 0 };
	static const char in[] = "key corp_live_a1b2c3d4e5f6g7h8i9j0k1l2 end";

	CHECK(rs);
	tg_redact_use(rs);
	tg_redact_ruleset_free(rs); /* the one in use holds it */
	CHECK(tg_redact_stream_new(sink_write, &sink, &st, &err) == 0);
	tg_redact_use(NULL);        /* freed now but for the stream's */
	CHECK(tg_redact_stream_feed(st, in, sizeof(in) - 1, &err) == 0);
	CHECK(tg_redact_stream_finish(st, &err) == 0);
	CHECK(sink.len && strstr(sink.p, "[REDACTED:corp-key]"));
	tg_redact_stream_free(st);
	free(sink.p);
	CHECK(redacts_to(NULL, in, in));
	return 0;
}

/* toolgate's vendor rules, with no operator's set in use: a format each
 * found whole, its placeholder not, a signed URL's signature only. */
static int vendor_rules(void)
{
	static const struct {
		const char *in, *want;
	} cases[] = {
		{ "DO=dop_v1_3f9a1c7e5b2d8f4a6c0e9b1d7f3a5c8e2b4d6f8a0c1e3b5d7f9a2c4e6b8d0f1a",
		  "DO=[REDACTED:digitalocean_token]" },
		{ "tok 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 end", "tok [REDACTED:huggingface_token] end" },
		{ "hvs.CAESIJx8Kq2mZp9Lw3Vb7Nc4Xy1Tr6Ud0Gs", "[REDACTED:vault_token]" },
		{ "https://x.blob.core.windows.net/c/b?sv=2022-11-02&se=2026-12-31&sig=Qm9xR2p1T3ZzS0x4WmJ3Y1ZkTnFoRmpLbGtNb3BxUnM%3D",
		  "https://x.blob.core.windows.net/c/b?sv=2022-11-02&se=2026-12-31&sig=[REDACTED:signed_url_signature]" },
		{ "dop_v1_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
		  "dop_v1_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" },
		{ "hf_EXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMP", "hf_EXAMPLEEXAMPLEEXAMPLEEXAMPLEEXAMP" },
		/* an API's object ids are not secrets */
		{ "payment_intent: pi_3MtwBwLkdIwHu7ix28a3tqPa", "payment_intent: pi_3MtwBwLkdIwHu7ix28a3tqPa" },
		{ "\"id\": \"chatcmpl-8YbqhXbJk1WjHfE1Mn3EHRGAXk8oj\"",
		  "\"id\": \"chatcmpl-8YbqhXbJk1WjHfE1Mn3EHRGAXk8oj\"" },
		/* one-letter flags after the commands they are a password's for */
		{ "redis-cli -h cache -a Xk29fLq83mZp7 ping", "redis-cli -h cache -a [REDACTED:password_assignment] ping" },
		{ "docker login -u ci -p Zq8xW2pL9vB4nM7kR5tY reg", "docker login -u ci -p [REDACTED:password_assignment] reg" },
		{ "sqlcmd -S db -U sa -P Str0ngPassw0rd1", "sqlcmd -S db -U sa -P [REDACTED:password_assignment]" },
		{ "ssh-keygen -t ed25519 -N Pa55phraseXyz9 -f k", "ssh-keygen -t ed25519 -N [REDACTED:password_assignment] -f k" },
		/* ... and not after others */
		{ "docker run -p 8080:80 -a stdout nginx", "docker run -p 8080:80 -a stdout nginx" },
		{ "HMAC_KEY=8f3a9c1b7e4d2f6a0b5c8e9d1f7a3b2c", "HMAC_KEY=[REDACTED:password_assignment]" },
		/* Docker's config.json: "auth" is base64 of user:password */
		{ "{\"auth\": \"ZGVwbG95OlpxOHhXMnBMOXZCNG5NN2s=\"}", "{\"auth\": \"[REDACTED:password_assignment]\"}" },
		{ "auth: required", "auth: required" },
	};
	size_t i;
	struct tg_error err;

	/* each expression compiles (a redaction compiles it at first use) */
	if (redact_vendors_check(&err) < 0) {
		fprintf(stderr, "%s\n", err.msg);
		return -1;
	}
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(redacts_to(NULL, cases[i].in, cases[i].want));
	return 0;
}

/* What a second reading found: each case as it was seen. */
static int second_reading(void)
{
	static const char text[] =
		"minVersion = \"v8.28.0\"\n"
		"[extend]\nuseDefault = true\n"
		"[[rules]]\nid = \"generic-api-key\"\n[[rules.allowlists]]\nstopwords = [\"x\"]\n"
		"[[rules]]\nid = \"jwt\"\nregex = '''zzjwt([0-9]{6})'''\n"
		"[[rules]]\nid = \"corp-token\"\nregex = '''corp-[a-z0-9]{4,}'''\n"
		"[[rules]]\nid = \"corp-val\"\nregex = '''corp_val=(\\S+)'''\n"
		"[[rules]]\nid = \"corp-blob\"\nregex = '''blob:([a-f]{1000}[a-f]{1000})'''\n"
		"[[allowlists]]\ntargetRules = [\"corp-val\", \"corp-val\", \"corp-val\", \"corp-val\"]\n"
		"regexes = ['''^nomatch$''']\n";
	struct tg_error err;
	struct tg_redact_ruleset *rs = load("second.toml", text, &err);
	struct tg_redact_out o;
	char *in;
	size_t n = 0, i;

	if (!rs)
		fprintf(stderr, "%s\n", err.msg);
	CHECK(rs);
	/* a span inside the bytes a built-in match skips: once, no loop */
	CHECK(redacts_to(rs, "deploy --corp-auth-token s3cr3tvalue123",
			 "deploy --[REDACTED:corp-token]-token [REDACTED:password_assignment]"));
	/* a byte that is not UTF-8 inside a secret: the whole secret */
	CHECK(redacts_to(rs, "corp_val=Gr\xfcn-s3cr3t-tail end", "corp_val=[REDACTED:corp-val] end"));
	CHECK(redacts_to(rs, "a zzjwt123456 b", "a zzjwt[REDACTED:jwt] b"));
	/* a match a block's end cuts in a long line: the next block starts at it */
	CHECK((in = malloc(20000)));
	for (i = 0; i < 60; i++)
		n += (size_t)sprintf(in + n, "line %zu of short text\n", i);
	memset(in + n, 'y', 7000);
	n += 7000;
	n += (size_t)sprintf(in + n, " blob:");
	for (i = 0; i < 2000; i++)
		in[n++] = "abcdef"[i * 7 % 6];
	in[n] = '\0';
	tg_redact_use(rs);
	CHECK(tg_redact(in, n, &o, &err) == 0);
	tg_redact_use(NULL);
	CHECK(o.nfindings == 1 && o.findings[0].length == 2000 && strstr(o.text, " blob:[REDACTED:corp-blob]"));
	tg_redact_out_release(&o);
	free(in);
	tg_redact_ruleset_free(rs);
	return 0;
}

/* What the second reading of the vendor rules found, as it was seen. */
static int second_reading_vendors(void)
{
	static const char text[] =
		"[[rules]]\nid = \"tok-rule\"\nregex = '''tok_[a-z0-9]{20}(?:[^\\n]*END)?'''\n"
		"[[rules]]\nid = \"pw-a\"\nregex = '''(?i)password\\s*[:=]\\s*(.+)'''\n"
		"[[rules]]\nid = \"pw-b\"\nregex = '''(?i)secret\\s*[:=]\\s*(.+)'''\n";
	static const struct {
		const char *in, *want;
	} cases[] = {
		/* a Resend key starts like an id, a Stripe client secret holds _secret_ */
		{ "RESEND re_u8jzPde0_IgxLd6GncfBAepfJBd0Kh8oO", "RESEND [REDACTED:high_entropy]" },
		/* a port mapping after docker run is no password, a glued one may start with '-' */
		{ "docker login -u a -p Zq8xW2pL9vB4nM7kR5tY r && docker run -p 8080:8080 nginx",
		  "docker login -u a -p [REDACTED:password_assignment] r && docker run -p 8080:8080 nginx" },
		{ "mysql -u root -p-S3cretPw99 db", "mysql -u root -p[REDACTED:password_assignment] db" },
		/* "auth" names a secret as the whole key only */
		{ "www_auth: WWWAuthenticate", "www_auth: WWWAuthenticate" },
	};
	struct tg_error err;
	struct tg_redact_ruleset *rs = load("second2.toml", text, &err);
	struct tg_redact_out o;
	char *in;
	size_t i, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK(redacts_to(NULL, cases[i].in, cases[i].want));
	CHECK(rs);
	/* a match that could run past the block's end: still found */
	CHECK((in = malloc(21000)));
	n = (size_t)sprintf(in, "hello tok_abcdefghij0123456789 ");
	memset(in + n, 'x', 20000);
	n += 20000;
	in[n] = '\0';
	tg_redact_use(rs);
	CHECK(tg_redact(in, n, &o, &err) == 0);
	CHECK(!strstr(o.text, "tok_abcdefghij0123456789"));
	tg_redact_out_release(&o);
	/* two rules with unbounded tails over 200 KB: every value redacted */
	free(in);
	CHECK((in = malloc(200001)));
	for (i = 0; i < 12500; i++)
		memcpy(in + i * 16, "password=secret=", 16);
	in[200000] = '\0';
	CHECK(tg_redact(in, 200000, &o, &err) == 0);
	tg_redact_use(NULL);
	CHECK(o.len < 2000);
	tg_redact_out_release(&o);
	free(in);
	tg_redact_ruleset_free(rs);
	return 0;
}

const struct unit_test redact_x_tests[] = {
	{ "redact_x/rules_apply", rules_apply },
	{ "redact_x/allowlists", allowlists },
	{ "redact_x/extend", extend },
	{ "redact_x/refusals", refusals },
	{ "redact_x/re2", re2 },
	{ "redact_x/stream_equals_one_call", stream_equals_one_call },
	{ "redact_x/union_with_builtin", union_with_builtin },
	{ "redact_x/undecided_fails_closed", undecided_fails_closed },
	{ "redact_x/encoded", encoded },
	{ "redact_x/swapped_under_a_stream", swapped_under_a_stream },
	{ "redact_x/vendor_rules", vendor_rules },
	{ "redact_x/second_reading", second_reading },
	{ "redact_x/second_reading_vendors", second_reading_vendors },
	UNIT_TESTS_END,
};
