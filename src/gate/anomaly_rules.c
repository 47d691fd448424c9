/*
 * Parameter anomalies, the string rules (include/toolgate/anomaly.h,
 * docs/ANOMALIES.md "The string rules"): sql, address, traversal and
 * shell, each a hand-written scan of one string for what its writer
 * seldom means and an attacker often does (unicode, the fifth, is in
 * anomaly_unicode.c).
 *
 * The rules look at shapes, not words: "select" in prose is nothing,
 * "UNION SELECT" or "' OR '1'='1" is SQL; a semicolon is punctuation,
 * "; rm -rf /" is a command. Each scan is one pass with a bounded look
 * ahead from each place it tries (a few hundred bytes at most), so the
 * time is linear in the string whatever its bytes; nothing is allocated
 * and nothing is kept between calls. What a finding shows of the string
 * is an excerpt of EXCERPT_MAX bytes, made printable.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "gate/anomaly_int.h"
#include "toolgate/egress.h"

#define EXCERPT_MAX 60

struct text {
	const unsigned char *s;
	size_t n;
};

static const char *const rule_names[TG_ANOMALY_RULES] = {
	"sql", "address", "traversal", "shell", "size", "entropy", "unicode",
};

/* ---- bytes -------------------------------------------------------------------- */

/* ASCII only, whatever the locale: the rules must not depend on it. */
static int is_alpha(unsigned char c)
{
	return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

static int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static int is_word(unsigned char c)
{
	return is_alpha(c) || is_digit(c) || c == '_';
}

static int is_hex(unsigned char c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static int hex_value(unsigned char c)
{
	return is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
}

static unsigned char lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

static int is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* c is one of set (a NUL byte never is). A loop, not strchr: the sets
 * are short, and this is on every byte's path. */
static int one_of(unsigned char c, const char *set)
{
	for (; *set; set++)
		if ((unsigned char)*set == c)
			return 1;
	return 0;
}

/* Whether s[at, at + k) is word (k bytes, lowercase) without case. */
static int same_lower(const unsigned char *s, const char *word, size_t k)
{
	size_t i;

	for (i = 0; i < k; i++)
		if (lower(s[i]) != (unsigned char)word[i])
			return 0;
	return 1;
}

/* The finding's text: label, then s[at, at + len) as an excerpt of at most
 * EXCERPT_MAX bytes, printable ASCII (others as \xNN, a backslash doubled),
 * "..." when cut. */
static void say(char *why, size_t cap, const char *label, const struct text *t, size_t at,
		size_t len)
{
	char ex[4 * EXCERPT_MAX + 8];
	size_t i, o = 0, end;

	if (at > t->n)
		at = t->n;
	if (len > t->n - at)
		len = t->n - at;
	end = at + (len > EXCERPT_MAX ? EXCERPT_MAX : len);
	for (i = at; i < end; i++) {
		unsigned char c = t->s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\') {
			ex[o++] = (char)c;
		} else if (c == '\\') {
			ex[o++] = '\\';
			ex[o++] = '\\';
		} else {
			ex[o++] = '\\';
			ex[o++] = 'x';
			ex[o++] = "0123456789abcdef"[c >> 4];
			ex[o++] = "0123456789abcdef"[c & 15];
		}
	}
	if (end < at + len) {
		memcpy(ex + o, "...", 3);
		o += 3;
	}
	ex[o] = '\0';
	snprintf(why, cap, "%s: %s", label, ex);
}

/* ---- sql ---------------------------------------------------------------------- */

/*
 * SQL is found by patterns of tokens. A token is alternatives separated by
 * spaces, optional when it starts with '?'. An alternative is a keyword
 * (lowercase, matched without case as a whole word), punctuation (matched
 * as it is), or a class, one capital letter:
 *
 *   Q  a quote, ' or "            N  a number (0x7e too)
 *   X  a hexadecimal number 0x..   I  an identifier (users, dbo.users, `t`)
 *   C  a list of columns          P  a parenthesised group
 *   O  a comparison (=, <>, LIKE)  L  a tautology ('1'='1, 1=1, 'a'='a)
 *   T  the end of a statement (; -- # ) a comment's start, the string's end), not read
 *   E  the string's end, past a comment's dashes and blanks
 *   V  digits, a word may follow (the 50000 of a MySQL versioned comment)
 *
 * Between two tokens come blanks, and what SQL parsers take for blanks:
 * comments, '+' and %20 of URL encoding. A token that is itself a comment
 * (the empty one, slash star star slash) is matched where it stands. A pattern's first token is a
 * keyword, punctuation or Q.
 */
#define SQL_LOOK 256 /* a pattern reads at most this far from where it starts */
#define SQL_BLANKS 64 /* of blanks between two tokens */
#define SQL_TOKENS 8

struct sql_pattern {
	const char *tok[SQL_TOKENS];
	const char *why;
};

static const struct sql_pattern sql_patterns[] = {
	{ { "union", "?all distinct", "?(", "select", "C", "from into T" }, "UNION SELECT" },
	{ { "select", "*", "from" }, "SELECT * FROM" },
	{ { "select", "C", "from", "I", "where", "I", "O" }, "SELECT ... FROM ... WHERE" },
	{ { "insert", "into", "I", "P", "values" }, "INSERT INTO ... VALUES" },
	{ { "insert", "into", "I", "values", "(" }, "INSERT INTO ... VALUES" },
	{ { "update", "I", "set", "I", "=" }, "UPDATE ... SET" },
	{ { "delete", "from", "I", "where" }, "DELETE FROM ... WHERE" },
	{ { "drop", "table database schema", "if", "exists" }, "DROP ... IF EXISTS" },
	{ { "drop truncate", "table database schema", "I", "T" }, "DROP or TRUNCATE statement" },
	{ { ";", "drop truncate", "table database schema" }, "stacked DROP" },
	{ { ";", "delete", "from", "I", "T" }, "stacked DELETE" },
	{ { ";", "shutdown", "T" }, "stacked SHUTDOWN" },
	{ { ";", "exec execute", "xp_cmdshell sp_executesql master" }, "stacked EXEC" },
	{ { "Q", "?)", ";", "exec execute declare shutdown waitfor" }, "quote, then a stacked statement" },
	{ { "Q", "?)", ";", "select", "C", "from -- #" }, "quote, then a stacked SELECT" },
	{ { "or and xor having || &&", "?(", "L" }, "tautology" },
	{ { "Q", "?)", "or", "true N", "T" }, "quote, then OR TRUE" },
	{ { "Q", "?)", "-- # /*", "E" }, "quote, then a comment" },
	{ { "Q", "?)", "order group", "by", "N" }, "quote, then ORDER BY" },
	{ { "and or xor select || && ; Q", "sleep", "(", "N", ")" }, "SLEEP probe" },
	{ { "pg_sleep", "(" }, "PG_SLEEP(" },
	{ { "benchmark", "(", "N", "," }, "BENCHMARK(" },
	{ { "waitfor", "delay time", "Q" }, "WAITFOR DELAY" },
	{ { "xp_cmdshell" }, "XP_CMDSHELL" },
	{ { "information_schema" }, "INFORMATION_SCHEMA" },
	{ { "into", "outfile dumpfile" }, "INTO OUTFILE" },
	{ { "load_file", "(" }, "LOAD_FILE(" },
	{ { "@@", "version datadir hostname basedir servername" }, "@@VERSION" },
	{ { "group_concat", "(" }, "GROUP_CONCAT(" },
	{ { "concat concat_ws char", "(", "X" }, "CONCAT(0x" },
	{ { "extractvalue updatexml", "(" }, "EXTRACTVALUE(" },
	{ { "utl_http utl_inaddr dbms_pipe dbms_lock", "." }, "Oracle package" },
	{ { "/**/", "select union from where and or insert update delete drop order having" },
	  "comment as a blank" },
	{ { "select union from where and or insert update delete drop order having", "/**/" },
	  "comment as a blank" },
	{ { "/*!", "V select union and or" }, "MySQL versioned comment" },
};

/* The first token's bytes are kept in a 64-bit mask a byte. */
_Static_assert(sizeof(sql_patterns) / sizeof(sql_patterns[0]) <= 64, "a mask of patterns");

struct cur {
	const unsigned char *s;
	size_t n;   /* the string's end */
	size_t lim; /* how far the pattern may read */
	size_t i;
};

static void sql_blanks(struct cur *c)
{
	size_t from = c->i, k;

	while (c->i < c->lim && c->i - from < SQL_BLANKS) {
		const unsigned char *p = c->s + c->i;
		size_t left = c->lim - c->i;

		if (is_blank(p[0]) || p[0] == '+') {
			c->i++;
		} else if (left >= 3 && p[0] == '%' &&
			   ((p[1] == '2' && p[2] == '0') || (p[1] == '0' && one_of(lower(p[2]), "9abcd")))) {
			c->i += 3; /* %20, %09, %0a to %0d */
		} else if (left >= 4 && p[0] == '/' && p[1] == '*' && p[2] != '!') {
			/* a comment, a blank to SQL between UNION and SELECT */
			for (k = 2; k + 1 < left && k < SQL_BLANKS && !(p[k] == '*' && p[k + 1] == '/');
			     k++) {
			}
			if (k + 1 >= left || k >= SQL_BLANKS)
				return;
			c->i += k + 2;
		} else {
			return;
		}
	}
}

/* Keyword or punctuation lit (k bytes) at the cursor. */
static int sql_lit(struct cur *c, const char *lit, size_t k)
{
	size_t end = c->i + k;

	if (k > c->lim - c->i || !same_lower(c->s + c->i, lit, k))
		return 0;
	/* a keyword ends its word; "=" is not "==" */
	if (end < c->n && is_word((unsigned char)lit[k - 1]) && is_word(c->s[end]))
		return 0;
	if (end < c->n && lit[k - 1] == '=' && c->s[end] == '=')
		return 0;
	c->i = end;
	return 1;
}

static int sql_number(struct cur *c, int hex_only)
{
	const unsigned char *s = c->s;
	size_t i = c->i;

	if (i + 2 < c->lim && s[i] == '0' && (s[i + 1] | 0x20) == 'x' && is_hex(s[i + 2])) {
		for (i += 2; i < c->lim && is_hex(s[i]); i++) {
		}
	} else if (!hex_only && i < c->lim && is_digit(s[i])) {
		while (i < c->lim && (is_digit(s[i]) || s[i] == '.'))
			i++;
	} else {
		return 0;
	}
	if (i < c->n && is_word(s[i]))
		return 0;
	c->i = i;
	return 1;
}

static int sql_ident(struct cur *c)
{
	const unsigned char *s = c->s;
	size_t i = c->i, start;
	unsigned char open = 0;

	if (i < c->lim && one_of(s[i], "`[\""))
		open = s[i++];
	start = i;
	if (i >= c->lim || !(is_alpha(s[i]) || s[i] == '_' || s[i] == '#' || s[i] == '@'))
		return 0;
	while (i < c->lim && i - start < 64 && (is_word(s[i]) || one_of(s[i], "$.#@")))
		i++;
	if (open) {
		if (i >= c->lim || s[i] != (open == '[' ? ']' : open))
			return 0;
		i++;
	}
	c->i = i;
	return 1;
}

static int sql_parens(struct cur *c)
{
	size_t i = c->i;
	int depth = 0;

	if (i >= c->lim || c->s[i] != '(')
		return 0;
	for (; i < c->lim; i++) {
		if (c->s[i] == '(')
			depth++;
		else if (c->s[i] == ')' && --depth == 0)
			break;
	}
	if (i >= c->lim)
		return 0;
	c->i = i + 1;
	return 1;
}

/* A value of a comparison: a quoted string (its closing quote may be
 * missing at the string's end, as in ' OR '1'='1), a number or a word.
 * OUT *at, *len: what it says. */
static int sql_value(struct cur *c, size_t *at, size_t *len)
{
	const unsigned char *s = c->s;
	size_t i = c->i, j;

	if (i >= c->lim)
		return 0;
	if (s[i] == '\'' || s[i] == '"') {
		for (j = i + 1; j < c->lim && j - i < 34 && s[j] != s[i]; j++) {
		}
		if (j < c->lim && s[j] == s[i])
			c->i = j + 1;
		else if (j == c->n)
			c->i = j;
		else
			return 0;
		*at = i + 1;
		*len = j - i - 1;
		return 1;
	}
	if (!is_word(s[i]))
		return 0;
	for (j = i; j < c->lim && j - i < 32 && (is_word(s[j]) || s[j] == '.'); j++) {
	}
	if (j < c->n && is_word(s[j]))
		return 0;
	*at = i;
	*len = j - i;
	c->i = j;
	return 1;
}

/* x = x, the two values the same: what OR makes true for every row. */
static int sql_tautology(struct cur *c)
{
	size_t a, alen, b, blen;

	if (!sql_value(c, &a, &alen))
		return 0;
	sql_blanks(c);
	if (!sql_lit(c, "=", 1) && !sql_lit(c, "like", 4) && !sql_lit(c, "<=>", 3))
		return 0;
	sql_blanks(c);
	sql_lit(c, "(", 1);
	if (!sql_value(c, &b, &blen) || alen != blen)
		return 0;
	while (alen--)
		if (lower(c->s[a + alen]) != lower(c->s[b + alen]))
			return 0;
	return 1;
}

static int sql_comparison(struct cur *c)
{
	static const char *const ops[] = { "<>", "!=", "<=", ">=", "=", "<", ">", "like", "in",
					   "is", "between", "regexp", "rlike" };
	size_t k;

	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (sql_lit(c, ops[k], strlen(ops[k])))
			return 1;
	return 0;
}

static int sql_column(struct cur *c)
{
	size_t at, b;

	if (sql_lit(c, "*", 1) || sql_number(c, 0) || sql_value(c, &at, &b) == 1)
		return 1;
	return 0;
}

/* Columns: items separated by commas, an item a value, *, or a call. */
static int sql_columns(struct cur *c)
{
	int items;
	size_t at;

	for (items = 0; items < 16; items++) {
		if (c->i < c->lim && c->s[c->i] == '@')
			c->i++;
		if (!sql_ident(c) && !sql_column(c))
			return 0;
		at = c->i;
		sql_blanks(c);
		if (!sql_parens(c))
			c->i = at;
		sql_blanks(c);
		if (c->i >= c->lim || c->s[c->i] != ',')
			return 1;
		c->i++;
		sql_blanks(c);
	}
	return 0;
}

static int sql_end_of_statement(struct cur *c)
{
	const unsigned char *p = c->s + c->i;

	if (c->i == c->n)
		return 1;
	if (c->i >= c->lim)
		return 0;
	if (one_of(p[0], ";#)"))
		return 1;
	return c->i + 1 < c->lim && ((p[0] == '-' && p[1] == '-') || (p[0] == '/' && p[1] == '*'));
}

static int sql_quote(struct cur *c)
{
	if (c->i >= c->lim || (c->s[c->i] != '\'' && c->s[c->i] != '"'))
		return 0;
	c->i++;
	return 1;
}

static int sql_any_number(struct cur *c)
{
	return sql_number(c, 0);
}

static int sql_hex_number(struct cur *c)
{
	return sql_number(c, 1);
}

static int sql_version(struct cur *c)
{
	size_t from = c->i;

	while (c->i < c->lim && is_digit(c->s[c->i]))
		c->i++;
	return c->i > from;
}

static int sql_end_of_string(struct cur *c)
{
	while (c->i < c->lim && (is_blank(c->s[c->i]) || one_of(c->s[c->i], "-+")))
		c->i++;
	return c->i == c->n;
}

static int sql_class(struct cur *c, char cls)
{
	static const struct {
		char cls;
		int (*match)(struct cur *c);
	} classes[] = {
		{ 'Q', sql_quote },     { 'N', sql_any_number },     { 'X', sql_hex_number },
		{ 'V', sql_version },   { 'I', sql_ident },          { 'C', sql_columns },
		{ 'P', sql_parens },    { 'O', sql_comparison },     { 'L', sql_tautology },
		{ 'T', sql_end_of_statement }, { 'E', sql_end_of_string },
	};
	size_t k;

	for (k = 0; k < sizeof(classes) / sizeof(classes[0]); k++)
		if (classes[k].cls == cls)
			return classes[k].match(c);
	return 0;
}

static int sql_token(struct cur *c, const char *tok)
{
	int optional = tok[0] == '?';
	const char *p = tok + optional;

	while (*p) {
		size_t k = strcspn(p, " "), at = c->i;
		int hit = k == 1 && *p >= 'A' && *p <= 'Z' ? sql_class(c, *p) : sql_lit(c, p, k);

		if (hit)
			return 1;
		c->i = at;
		p += k;
		p += *p == ' ';
	}
	return optional;
}

/* Whether pattern p matches at at; OUT *end where it ends. */
static int sql_match(const struct text *t, size_t at, const struct sql_pattern *p, size_t *end)
{
	struct cur c = { t->s, t->n, t->n - at > SQL_LOOK ? at + SQL_LOOK : t->n, at };
	size_t k;

	for (k = 0; k < SQL_TOKENS && p->tok[k]; k++) {
		if (k > 0 && strncmp(p->tok[k], "/*", 2) != 0)
			sql_blanks(&c);
		if (!sql_token(&c, p->tok[k]))
			return 0;
	}
	*end = c.i;
	return 1;
}

/* Where a pattern may start, made once: first[b] the patterns whose first
 * token has an alternative that is not a keyword and starts with byte b;
 * keywords[] the keywords first tokens have, each with its patterns. Prose
 * is mostly words, and most of its words are no keyword: looking a word up
 * whole, rather than trying each pattern its first letter allows, is what
 * keeps the rule fast. */
#define SQL_KEYWORD_MAX 24

static struct {
	uint64_t first[256];
	struct sql_keyword {
		char word[SQL_KEYWORD_MAX];
		size_t len;
		uint64_t patterns;
	} keywords[96];
	size_t nkeywords;
	unsigned char slot[256];  /* by hash: 1 + the keyword's index, 0: none */
} sql_starts;
static pthread_once_t sql_starts_once = PTHREAD_ONCE_INIT;

static unsigned sql_hash(const char *w, size_t k)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < k; i++)
		h = (h ^ (unsigned char)w[i]) * 16777619u;
	return h & 255;
}

static void sql_keyword(const char *a, size_t k, uint64_t bit)
{
	size_t i;

	for (i = 0; i < sql_starts.nkeywords; i++)
		if (sql_starts.keywords[i].len == k && memcmp(sql_starts.keywords[i].word, a, k) == 0)
			break;
	if (i == sql_starts.nkeywords) {
		if (i == sizeof(sql_starts.keywords) / sizeof(sql_starts.keywords[0]) ||
		    k >= SQL_KEYWORD_MAX)
			abort(); /* the table above outgrew this one: a programming error */
		memcpy(sql_starts.keywords[i].word, a, k);
		sql_starts.keywords[i].len = k;
		sql_starts.nkeywords++;
	}
	sql_starts.keywords[i].patterns |= bit;
}

static void sql_starts_make(void)
{
	size_t p, k;

	for (p = 0; p < sizeof(sql_patterns) / sizeof(sql_patterns[0]); p++) {
		const char *a = sql_patterns[p].tok[0];
		uint64_t bit = (uint64_t)1 << p;

		for (; *a; a += k, a += *a == ' ') {
			unsigned char b = (unsigned char)*a;

			k = strcspn(a, " ");
			if (b == 'Q' && k == 1) {
				sql_starts.first['\''] |= bit;
				sql_starts.first['"'] |= bit;
			} else if (b >= 'a' && b <= 'z') {
				sql_keyword(a, k, bit);
			} else {
				sql_starts.first[b] |= bit;
			}
		}
	}
	/* open addressing: 256 slots for fewer than 96 keywords */
	for (k = 0; k < sql_starts.nkeywords; k++) {
		unsigned h = sql_hash(sql_starts.keywords[k].word, sql_starts.keywords[k].len);

		while (sql_starts.slot[h])
			h = (h + 1) & 255;
		sql_starts.slot[h] = (unsigned char)(k + 1);
	}
}

/* The patterns that may start at s[i]: the keyword there, whole, or its
 * punctuation. */
static uint64_t sql_candidates(const struct text *t, size_t i)
{
	char w[SQL_KEYWORD_MAX];
	size_t k, j;
	unsigned h;

	if (!is_alpha(t->s[i]))
		return sql_starts.first[t->s[i]];
	for (j = 0; i + j < t->n && is_word(t->s[i + j]); j++) {
		if (j == SQL_KEYWORD_MAX)
			return 0;
		w[j] = (char)lower(t->s[i + j]);
	}
	for (h = sql_hash(w, j); (k = sql_starts.slot[h]); h = (h + 1) & 255)
		if (sql_starts.keywords[k - 1].len == j &&
		    memcmp(sql_starts.keywords[k - 1].word, w, j) == 0)
			return sql_starts.keywords[k - 1].patterns;
	return 0;
}

static int rule_sql(const struct text *t, char *why, size_t cap)
{
	uint64_t m;
	size_t i, p, end;

	pthread_once(&sql_starts_once, sql_starts_make);
	for (i = 0; i < t->n; i++) {
		/* a keyword starts a word, or follows a %20 */
		if (i > 0 && is_word(t->s[i]) && is_word(t->s[i - 1]) &&
		    !(i >= 3 && t->s[i - 3] == '%' && is_hex(t->s[i - 2])))
			continue;
		m = sql_candidates(t, i);
		if (!m)
			continue;
		for (p = 0; m; p++, m >>= 1)
			if ((m & 1) && sql_match(t, i, &sql_patterns[p], &end)) {
				say(why, cap, sql_patterns[p].why, t, i, end - i);
				return 1;
			}
	}
	return 0;
}

/* ---- address ------------------------------------------------------------------ */

/*
 * Addresses are judged by tg_egress_denied_range, the ranges the egress
 * proxy refuses. Where they are looked for decides the false positives:
 *
 *   - dotted quads anywhere in the text, but not a piece of a longer dotted
 *     number or of a word ("v10.0.0.1", "10.0.0.1-rc1", OID 1.3.6.1.4.1),
 *     not a netmask (255.255.255.0), and in 0.0.0.0/8 only 0.0.0.0 itself
 *     (0.1.2.3 is a version far more often than an address);
 *   - IPv6 literals anywhere ("::1", "[fd00:ec2::254]", "::ffff:a.b.c.d");
 *   - a URL's host (after "://") in every spelling a client accepts
 *     (2852039166, 0xa9fea9fe, 0251.0376.0251.0376, 169.254.43518, percent
 *     encoded), and internal names there: single-label hosts, localhost,
 *     .internal, .local, .home.arpa, metadata.goog;
 *   - a name of the metadata service or .internal/.localhost anywhere; the
 *     names that are also words (localhost, metadata, instance-data) only
 *     as the whole string or as NAME:PORT.
 */
#define HOST_MAX 255

static int host_byte(unsigned char c)
{
	return is_word(c) || c == '.' || c == '-';
}

static int ends_with(const char *s, size_t n, const char *tail)
{
	size_t k = strlen(tail);

	return n > k && memcmp(s + n - k, tail, k) == 0;
}

/* What an internal name (lowercase, n bytes) is; NULL for none. loose:
 * the name stands where only a host can (a URL, NAME:PORT, the whole
 * string), so names that are also words count. */
static const char *addr_name(const char *h, size_t n, int loose)
{
	if (ends_with(h, n, ".internal") || (n == 13 && memcmp(h, "metadata.goog", 13) == 0))
		return strstr(h, "metadata") ? "cloud metadata name" : "internal name (.internal)";
	if (ends_with(h, n, ".localhost"))
		return "loopback name (.localhost)";
	if (!loose)
		return NULL;
	if ((n == 8 && memcmp(h, "metadata", 8) == 0) || (n == 13 && memcmp(h, "instance-data", 13) == 0))
		return "cloud metadata name";
	if (n == 9 && memcmp(h, "localhost", 9) == 0)
		return "loopback name";
	if (ends_with(h, n, ".local"))
		return "link-local name (mDNS .local)";
	if (ends_with(h, n, ".home.arpa"))
		return "home network name (.home.arpa)";
	return NULL;
}

/* An address h (as written, printable) in a denied range: said with the
 * range, and the address it is when written otherwise (0xa9fea9fe). */
static int addr_say_ip(const char *h, const struct sockaddr_storage *ss, char *why, size_t cap)
{
	const char *range = tg_egress_denied_range((const struct sockaddr *)ss);
	char canon[INET6_ADDRSTRLEN] = "";
	int other;

	if (!range)
		return 0;
	if (ss->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, canon, sizeof(canon));
	else
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, canon, sizeof(canon));
	other = strcmp(canon, h) != 0;
	snprintf(why, cap, "%.60s%s%s%s: %s", h, other ? " (" : "", other ? canon : "",
		 other ? ")" : "", range);
	return 1;
}

static int addr_say_name(const char *h, const char *what, char *why, size_t cap)
{
	snprintf(why, cap, "%.60s: %s", h, what);
	return 1;
}

/* h (n bytes, NUL-terminated, lowercase) parsed as an IP literal and
 * judged; 0 for a name or nothing. */
static int addr_judge_ip(const char *h, char *why, size_t cap, int *is_name)
{
	struct sockaddr_storage ss;
	int rc = tg_egress_parse_ip(h, &ss);

	*is_name = rc == 0;
	return rc == 1 && addr_say_ip(h, &ss, why, cap);
}

/* The host of the URL whose "://" is at i. */
static int addr_url(const struct text *t, size_t i, char *why, size_t cap)
{
	const unsigned char *s = t->s;
	size_t a = i + 3, e = a, h, he, o = 0;
	char host[HOST_MAX + 1];
	const char *what;
	int is_name;

	while (e < t->n && e - a < 512 && !is_blank(s[e]) && !one_of(s[e], "/?#\\\"'<>`"))
		e++;
	for (h = e; h > a && s[h - 1] != '@'; h--) {
	}
	if (h < e && s[h] == '[') {
		for (he = h; he < e && s[he] != ']'; he++) {
		}
		he += he < e;
	} else {
		for (he = h; he < e && s[he] != ':'; he++) {
		}
	}
	while (h < he && o < HOST_MAX) {
		/* percent-encoded: what a client decodes before it looks */
		if (s[h] == '%' && he - h >= 3 && is_hex(s[h + 1]) && is_hex(s[h + 2])) {
			host[o++] = (char)lower((unsigned char)(hex_value(s[h + 1]) << 4 | hex_value(s[h + 2])));
			h += 3;
		} else {
			host[o++] = (char)lower(s[h++]);
		}
	}
	if (h < he || o == 0)
		return 0;
	if (o > 1 && host[o - 1] == '.')
		o--; /* a fully qualified spelling */
	host[o] = '\0';
	if (memchr(host, '\0', o))
		return 0;
	if (addr_judge_ip(host, why, cap, &is_name))
		return 1;
	if (!is_name)
		return 0;
	for (h = 0; h < o; h++)
		if (!host_byte((unsigned char)host[h]))
			return 0;
	what = addr_name(host, o, 1);
	if (!what && !memchr(host, '.', o))
		what = "single-label name (resolved inside the network)";
	return what && addr_say_name(host, what, why, cap);
}

/* The run at i of bytes in an IPv6 literal, if it has two colons. */
static int addr_v6(const struct text *t, size_t i, size_t *next, char *why, size_t cap)
{
	const unsigned char *s = t->s;
	size_t j = i, colons = 0, hexes = 0, k;
	char buf[64];
	int is_name;

	while (j < t->n && (is_hex(s[j]) || s[j] == ':' || s[j] == '.')) {
		colons += s[j] == ':';
		hexes += s[j] != ':' && s[j] != '.';
		j++;
	}
	if (colons < 2 || hexes == 0 || j - i >= sizeof(buf))
		return 0;
	/* a word goes on ("::1x"); a zone id (%eth0) may follow */
	if (j < t->n && (is_word(s[j]) || s[j] == ':'))
		return 0;
	memcpy(buf, s + i, j - i);
	buf[j - i] = '\0';
	for (k = 0; buf[k]; k++)
		buf[k] = (char)lower((unsigned char)buf[k]);
	if (!strchr(buf, ':') || buf[0] == '.' || buf[j - i - 1] == '.')
		return 0;
	*next = j;
	return addr_judge_ip(buf, why, cap, &is_name);
}

/* Whether /prefix at i after address v names the network v starts
 * (10.0.0.0/8, 0.0.0.0/0): a range written down, not a host to reach. */
static int cidr_network(const struct text *t, size_t i, uint32_t v)
{
	unsigned bits = 0;
	size_t j;

	for (j = i; j < t->n && j - i < 2 && is_digit(t->s[j]); j++)
		bits = bits * 10 + (unsigned)(t->s[j] - '0');
	if (j == i || bits > 32 || (j < t->n && is_word(t->s[j])))
		return 0;
	return bits == 32 ? 0 : (v & (0xffffffffu >> bits)) == 0;
}

/* A dotted quad at i, four decimal parts, not part of a longer number or
 * word. */
static int addr_quad(const struct text *t, size_t i, size_t *next, char *why, size_t cap)
{
	const unsigned char *s = t->s;
	size_t j = i, end, parts = 1, digits = 0;
	struct sockaddr_storage ss;
	uint32_t v;
	char buf[24];
	int is_name;

	while (j < t->n && (is_digit(s[j]) || s[j] == '.'))
		j++;
	*next = j;
	end = j;
	if (s[end - 1] == '.')
		end--; /* the end of a sentence, or a name (10.0.0.1.nip.io) */
	else if (j < t->n && (is_word(s[j]) || (s[j] == '-' && j + 1 < t->n && is_alpha(s[j + 1]))))
		return 0;
	for (j = i; j < end; j++) {
		if (s[j] != '.') {
			if (++digits > 4)
				return 0;
			continue;
		}
		if (!digits)
			return 0;
		parts++;
		digits = 0;
	}
	if (parts != 4 || !digits || end - i >= sizeof(buf))
		return 0;
	memcpy(buf, s + i, end - i);
	buf[end - i] = '\0';
	if (tg_egress_parse_ip(buf, &ss) != 1)
		return 0;
	v = ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr);
	/* a netmask, a version 0.x.y.z: not addresses anyone reaches */
	if (v >= 0xff000000u && (~v & (~v + 1)) == 0)
		return 0;
	if ((v >> 24) == 0 && v != 0)
		return 0;
	if (end < t->n && s[end] == '/' && cidr_network(t, end + 1, v))
		return 0;
	return addr_judge_ip(buf, why, cap, &is_name);
}

/* A host name at i: an internal one anywhere, or a word-like one standing
 * as a host (the whole string, or NAME:PORT). */
static int addr_host_name(const struct text *t, size_t i, size_t *next, char *why, size_t cap)
{
	const unsigned char *s = t->s;
	size_t j = i, k, from = 0, to = t->n;
	char buf[HOST_MAX + 1];
	const char *what;
	int loose;

	while (j < t->n && host_byte(s[j]))
		j++;
	*next = j;
	k = j;
	while (k > i && s[k - 1] == '.')
		k--;
	if (k - i > HOST_MAX || k == i)
		return 0;
	while (from < t->n && is_blank(s[from]))
		from++;
	while (to > from && is_blank(s[to - 1]))
		to--;
	loose = (from == i && to == k) ||
		(k < t->n && s[k] == ':' && k + 1 < t->n && is_digit(s[k + 1]));
	for (j = i; j < k; j++)
		buf[j - i] = (char)lower(s[j]);
	buf[k - i] = '\0';
	what = addr_name(buf, k - i, loose);
	return what && addr_say_name(buf, what, why, cap);
}

static int rule_address(const struct text *t, char *why, size_t cap)
{
	const unsigned char *s = t->s;
	size_t i = 0, next;

	for (i = 0; i < t->n; i = next) {
		unsigned char prev = i > 0 ? s[i - 1] : ' ';

		next = i + 1;
		if (s[i] == ':' && i + 2 < t->n && s[i + 1] == '/' && s[i + 2] == '/' &&
		    addr_url(t, i, why, cap))
			return 1;
		/* runs start where a word, a number or a literal does not go on */
		if (host_byte(prev))
			continue;
		if (prev != ':' && (is_hex(s[i]) || s[i] == ':') && addr_v6(t, i, &next, why, cap))
			return 1;
		if (next > i + 1)
			continue;
		if (is_digit(s[i]) && addr_quad(t, i, &next, why, cap))
			return 1;
		if (is_alpha(s[i]) && addr_host_name(t, i, &next, why, cap))
			return 1;
	}
	return 0;
}

/* ---- traversal ---------------------------------------------------------------- */

/*
 * The string is read as units: a dot, a separator (/ or \), a NUL, a break
 * (blanks, quotes, brackets and the punctuation around paths in text) or
 * anything else, each spelled plainly or encoded the ways servers have
 * decoded them: percent-encoding, repeated (%252e), %uXXXX, and overlong
 * UTF-8 (C0 AE, %c0%ae, %e0%80%ae). A segment is what lies between two
 * separators or breaks; one of exactly two dots next to a separator is
 * traversal, so is ".." as the whole string, and "....//" (left as "../"
 * by a filter that removes "../" once). "...", "a..b", "wait... /x" are
 * not.
 */
enum unit { U_OTHER, U_DOT, U_SEP, U_NUL, U_BREAK, U_START, U_END };

/* The byte or code point at i, percent-decoded as many times as it is
 * encoded (at most four); OUT *len its length, *enc whether encoded. */
static long pct_at(const struct text *t, size_t i, size_t *len, int *enc)
{
	const unsigned char *s = t->s;
	size_t j = i + 1;
	long v = '%';
	int levels = 0;

	*len = 1;
	if (s[i] != '%')
		return s[i];
	if (i + 6 <= t->n && (s[i + 1] | 0x20) == 'u' && is_hex(s[i + 2]) && is_hex(s[i + 3]) &&
	    is_hex(s[i + 4]) && is_hex(s[i + 5])) {
		*len = 6;
		*enc = 1;
		return hex_value(s[i + 2]) << 12 | hex_value(s[i + 3]) << 8 |
		       hex_value(s[i + 4]) << 4 | hex_value(s[i + 5]);
	}
	while (levels++ < 4 && j + 2 <= t->n && is_hex(s[j]) && is_hex(s[j + 1])) {
		v = hex_value(s[j]) << 4 | hex_value(s[j + 1]);
		j += 2;
		*len = j - i;
		*enc = 1;
		if (v != '%')
			break;
	}
	return v;
}

static enum unit unit_of(long cp)
{
	if (cp < 0x80 && is_word((unsigned char)cp))
		return U_OTHER; /* most bytes: said at once */
	if (cp == '.' || cp == 0xff0e)
		return U_DOT;
	if (cp == '/' || cp == '\\' || cp == 0x2215 || cp == 0x2216 || cp == 0xff0f || cp == 0xff3c)
		return U_SEP;
	if (cp == 0)
		return U_NUL;
	if (cp < 0x80 && (is_blank((unsigned char)cp) || one_of((unsigned char)cp, "\"'`<>(){}[]|,;=:?#&")))
		return U_BREAK;
	return U_OTHER;
}

/* The unit at i; OUT *len, *enc. */
static enum unit unit_at(const struct text *t, size_t i, size_t *len, int *enc)
{
	size_t l2, l3;
	long b = pct_at(t, i, len, enc), b2, b3, cp;

	/* overlong UTF-8 of '.', '/' or '\': C0 AE, C0 AF, C1 9C, E0 80 AE */
	if ((b == 0xc0 || b == 0xc1) && i + *len < t->n) {
		b2 = pct_at(t, i + *len, &l2, enc);
		if (b2 >= 0x80 && b2 <= 0xbf && unit_of((b & 0x1f) << 6 | (b2 & 0x3f)) != U_OTHER &&
		    ((b & 0x1f) << 6 | (b2 & 0x3f)) < 0x80) {
			*enc = 1;
			*len += l2;
			return unit_of((b & 0x1f) << 6 | (b2 & 0x3f));
		}
	} else if (b > 0xe0 && b < 0xf0 && i + *len < t->n) {
		/* a three-byte character written raw or encoded: fullwidth ．and
		 * ／, the division and set-minus slashes */
		b2 = pct_at(t, i + *len, &l2, enc);
		if (b2 >= 0x80 && b2 <= 0xbf && i + *len + l2 < t->n) {
			b3 = pct_at(t, i + *len + l2, &l3, enc);
			cp = (b & 0x0f) << 12 | (b2 & 0x3f) << 6 | (b3 & 0x3f);
			if (b3 >= 0x80 && b3 <= 0xbf && unit_of(cp) != U_OTHER) {
				*len += l2 + l3;
				return unit_of(cp);
			}
		}
	} else if (b == 0xe0 && i + *len < t->n) {
		b2 = pct_at(t, i + *len, &l2, enc);
		if (b2 >= 0x80 && b2 <= 0x9f && i + *len + l2 < t->n) {
			b3 = pct_at(t, i + *len + l2, &l3, enc);
			if (b3 >= 0x80 && b3 <= 0xbf && ((b2 & 0x3f) << 6 | (b3 & 0x3f)) < 0x80 &&
			    unit_of((b2 & 0x3f) << 6 | (b3 & 0x3f)) != U_OTHER) {
				*enc = 1;
				*len += l2 + l3;
				return unit_of((b2 & 0x3f) << 6 | (b3 & 0x3f));
			}
		}
	}
	return unit_of(b);
}

static int rule_traversal(const struct text *t, char *why, size_t cap)
{
	size_t i = 0, len = 0, from = 0, nlen;
	enum unit u, left = U_START;
	int dots = 0, other = 0, enc = 0, e, ne;

	for (i = 0; i <= t->n; i += len) {
		e = 0;
		u = i == t->n ? U_END : unit_at(t, i, &len, &e);
		if (u == U_NUL) {
			say(why, cap, e ? "encoded NUL byte" : "NUL byte", t, i > 20 ? i - 20 : 0, 40);
			return 1;
		}
		enc |= e;
		if (u == U_DOT || u == U_OTHER) {
			dots += u == U_DOT;
			other |= u == U_OTHER;
			continue;
		}
		/* the end of a segment */
		if (!other && dots == 2 &&
		    (left == U_SEP || u == U_SEP || (left == U_START && u == U_END))) {
			say(why, cap, enc ? "encoded '..' path segment" : "'..' path segment", t, from,
			    i - from + (u == U_END ? 0 : len));
			return 1;
		}
		ne = 0;
		if (!other && dots == 4 && u == U_SEP && i + len < t->n &&
		    unit_at(t, i + len, &nlen, &ne) == U_SEP) {
			say(why, cap, "'....//' path segment", t, from, i - from + len + nlen);
			return 1;
		}
		if (u == U_END)
			break;
		left = u;
		from = i;
		dots = other = 0;
		enc = e;
	}
	return 0;
}

/* ---- shell -------------------------------------------------------------------- */

/*
 * A command word counts after a separator (; && || | & newline, plain or
 * %-encoded), inside $( ) or a backquote pair, or in <( ); and only with
 * what that command is given in an attack, so that "first; second", a
 * markdown table "| id | name |" or "; cat food" are not commands. What
 * follows a word may be:
 *
 *   S_END   nothing: the string's end, a newline, ; & # ) ` < >
 *   S_OPT   an option (-rf, -c)       S_PATH  a path (/etc/passwd, ~/.x, $HOME)
 *   S_HOST  a host or URL             S_NUM   a number
 *   S_QUOTE a quoted or $ argument    S_ANY   any word
 *   S_NUMEND a number, then nothing (sleep 5)
 */
enum {
	S_END = 1 << 0,
	S_OPT = 1 << 1,
	S_PATH = 1 << 2,
	S_HOST = 1 << 3,
	S_NUM = 1 << 4,
	S_QUOTE = 1 << 5,
	S_ANY = 1 << 6,
	S_NUMEND = 1 << 7,
	S_NOCASE = 1 << 8, /* a Windows command, named in any case, ".exe" or not */
};

static const struct {
	const char *name;
	unsigned after;
} commands[] = {
	{ "sh", S_END | S_OPT | S_PATH },        { "bash", S_END | S_OPT | S_PATH },
	{ "zsh", S_END | S_OPT | S_PATH },       { "ksh", S_END | S_OPT | S_PATH },
	{ "dash", S_END | S_OPT | S_PATH },      { "csh", S_END | S_OPT | S_PATH },
	{ "busybox", S_ANY },                    { "curl", S_OPT | S_PATH | S_HOST | S_QUOTE },
	{ "wget", S_OPT | S_PATH | S_HOST | S_QUOTE },
	{ "nc", S_OPT | S_HOST | S_NUM },        { "ncat", S_OPT | S_HOST | S_NUM },
	{ "netcat", S_OPT | S_HOST | S_NUM },    { "socat", S_OPT | S_HOST | S_NUM | S_ANY },
	{ "telnet", S_OPT | S_HOST | S_NUM },    { "python", S_OPT | S_PATH },
	{ "python2", S_OPT | S_PATH },           { "python3", S_OPT | S_PATH },
	{ "perl", S_OPT | S_PATH },              { "ruby", S_OPT | S_PATH },
	{ "php", S_OPT | S_PATH },               { "node", S_OPT | S_PATH },
	{ "lua", S_OPT | S_PATH },               { "powershell", S_OPT | S_PATH | S_NOCASE },
	{ "pwsh", S_OPT | S_PATH | S_NOCASE },   { "cmd", S_OPT | S_PATH | S_NOCASE },
	{ "rm", S_OPT | S_PATH },                { "chmod", S_ANY },
	{ "chown", S_ANY },                      { "chgrp", S_ANY },
	{ "cat", S_PATH },                       { "head", S_PATH },
	{ "tail", S_PATH },                      { "tac", S_PATH },
	{ "less", S_PATH },                      { "more", S_PATH },
	{ "xxd", S_PATH },                       { "strings", S_PATH },
	{ "tee", S_PATH },                       { "touch", S_PATH },
	{ "echo", S_QUOTE | S_NUM },             { "printf", S_QUOTE },
	{ "eval", S_QUOTE | S_PATH | S_OPT },    { "exec", S_QUOTE | S_PATH | S_OPT },
	{ "base64", S_END | S_OPT | S_PATH },    { "id", S_END | S_OPT },
	{ "whoami", S_END | S_OPT },             { "uname", S_END | S_OPT },
	{ "hostname", S_END | S_OPT },           { "ifconfig", S_END | S_OPT },
	{ "ipconfig", S_END | S_OPT | S_NOCASE }, { "pwd", S_END },
	{ "env", S_END },                        { "printenv", S_END },
	{ "ls", S_END | S_OPT | S_PATH },        { "mkfifo", S_PATH },
	{ "mknod", S_PATH },                     { "ping", S_OPT | S_HOST },
	{ "nslookup", S_HOST },                  { "dig", S_HOST },
	{ "sleep", S_NUMEND },                   { "crontab", S_OPT | S_PATH },
	{ "nohup", S_ANY },                      { "xterm", S_OPT },
	{ "kill", S_OPT },
};

static size_t shell_blank(const struct text *t, size_t i)
{
	if (i < t->n && (t->s[i] == ' ' || t->s[i] == '\t'))
		return 1;
	if (i + 3 <= t->n && t->s[i] == '%' && t->s[i + 1] == '2' && t->s[i + 2] == '0')
		return 3;
	return 0;
}

static size_t shell_blanks(const struct text *t, size_t i)
{
	size_t k = i, b;

	while (k - i < 32 && (b = shell_blank(t, k)) != 0)
		k += b;
	return k;
}

/* Nothing more to the command at i: see S_END. */
static int shell_end(const struct text *t, size_t i)
{
	if (i < t->n && t->s[i] == '|')
		return 1; /* "id|", not "id |" which is a table's cell */
	i = shell_blanks(t, i);
	return i == t->n || one_of(t->s[i], ";&#)`<>\n\r");
}

/* What the argument s[0, n) may be, as S_ bits. */
static unsigned shell_arg(const unsigned char *s, size_t n)
{
	unsigned bits = S_ANY;
	size_t k;

	if (!n || s[0] == '|')
		return 0;
	if (s[0] == '-' && n > 1 && (is_alpha(s[1]) || s[1] == '-'))
		bits |= S_OPT;
	if (one_of(s[0], "/~$") || (s[0] == '.' && n > 1 && one_of(s[1], "./")) || memchr(s, '/', n))
		bits |= S_PATH;
	if (is_digit(s[0]))
		bits |= S_NUM | S_HOST;
	if (one_of(s[0], "\"'$"))
		bits |= S_QUOTE;
	for (k = 1; k + 1 < n; k++)
		if (s[k] == '.' || s[k] == ':')
			bits |= S_HOST;
	return bits;
}

/* Whether what follows the command word (at i) is what after allows. */
static int shell_args(const struct text *t, size_t i, unsigned after)
{
	size_t k = shell_blanks(t, i), a;

	if (shell_end(t, i))
		return (after & S_END) != 0;
	if (k == i)
		return 0; /* "rm-rf": not a command and its argument */
	for (a = k; a < t->n && a - k < 64 && !is_blank(t->s[a]); a++) {
	}
	if ((after & S_NUMEND) && is_digit(t->s[k]) && shell_end(t, a)) {
		while (k < a && is_digit(t->s[k]))
			k++;
		return k == a;
	}
	return (shell_arg(t->s + k, a - k) & after & ~(unsigned)S_END) != 0;
}

/* The command named at i (after a /bin/ or /usr/bin/ of its path); OUT
 * *end after its name. -1 for none. */
static int shell_command(const struct text *t, size_t i, size_t *end)
{
	static const char *const dirs[] = { "/usr/local/bin/", "/usr/bin/", "/usr/sbin/", "/bin/",
					    "/sbin/" };
	const unsigned char *s = t->s;
	size_t j, k, d;

	for (d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++)
		if (t->n - i >= strlen(dirs[d]) && memcmp(s + i, dirs[d], strlen(dirs[d])) == 0) {
			i += strlen(dirs[d]);
			break;
		}
	for (j = i; j < t->n && j - i < 16 && is_word(s[j]); j++) {
	}
	if (j == i || (j < t->n && is_word(s[j])))
		return -1;
	for (k = 0; k < sizeof(commands) / sizeof(commands[0]); k++) {
		size_t len = strlen(commands[k].name);

		if (len != j - i)
			continue;
		if (commands[k].after & S_NOCASE) {
			if (!same_lower(s + i, commands[k].name, len))
				continue;
			if (j + 4 <= t->n && same_lower(s + j, ".exe", 4))
				j += 4;
		} else if (memcmp(s + i, commands[k].name, len) != 0) {
			continue;
		}
		*end = j;
		return (int)k;
	}
	return -1;
}

/* The separator at i, its length; 0 for none. */
static size_t shell_separator(const struct text *t, size_t i)
{
	const unsigned char *s = t->s;
	size_t k;

	if (s[i] == '&' || s[i] == '|')
		return i + 1 < t->n && s[i + 1] == s[i] ? 2 : 1;
	if (s[i] == '\n' || s[i] == '\r')
		return 1;
	if (s[i] == ';') {
		/* the end of an HTML entity (&lt;) is not one */
		for (k = i; k > 0 && i - k < 10 && (is_word(s[k - 1]) || s[k - 1] == '#'); k--) {
		}
		return k > 0 && k < i && s[k - 1] == '&' ? 0 : 1;
	}
	if (s[i] == '%' && i + 3 <= t->n &&
	    (same_lower(s + i + 1, "0a", 2) || same_lower(s + i + 1, "0d", 2) ||
	     same_lower(s + i + 1, "3b", 2) || same_lower(s + i + 1, "7c", 2) ||
	     same_lower(s + i + 1, "26", 2)))
		return 3;
	return 0;
}

/* A command after the separator at i. */
static int shell_chained(const struct text *t, size_t i)
{
	size_t sep = shell_separator(t, i), j, end;
	int k;

	if (!sep)
		return 0;
	j = shell_blanks(t, i + sep);
	if (j >= t->n || (k = shell_command(t, j, &end)) < 0)
		return 0;
	return shell_args(t, end, commands[k].after);
}

/* $( command ... ), and <( ) or >( ): a command word, then ')' within
 * reach. "$(5)", "$((1+2))" and Makefile's "$(CC)" are not. */
static int shell_substitution(const struct text *t, size_t i)
{
	size_t j = shell_blanks(t, i + 2), end, k;

	if (shell_command(t, j, &end) < 0)
		return 0;
	for (k = end; k < t->n && k - end < 512; k++)
		if (t->s[k] == ')')
			return 1;
	return 0;
}

/* `command`: a backquote pair around a command, stuck to a word or a
 * separator, or the whole string. "run `ls -la`" in markdown is not. */
static int shell_backquote(const struct text *t, size_t i, size_t *next)
{
	const unsigned char *s = t->s;
	size_t c, end, from = 0, to = t->n, b;

	for (c = i + 1; c < t->n && c - i < 256 && s[c] != '`'; c++) {
	}
	(void)next; /* what the pair holds is looked at too: "`curl x | sh`" */
	if (c >= t->n || s[c] != '`')
		return 0;
	if (shell_command(t, shell_blanks(t, i + 1), &end) < 0)
		return 0;
	while (from < t->n && is_blank(s[from]))
		from++;
	while (to > from && is_blank(s[to - 1]))
		to--;
	if (from == i && to == c + 1)
		return 1;
	for (b = i; b > 0 && i - b < 8 && s[b - 1] == ' '; b--) {
	}
	if (i > 0 && (is_word(s[i - 1]) || one_of(s[i - 1], "=\"'$")))
		return 1;
	if (b > 0 && one_of(s[b - 1], ";&"))
		return 1;
	return c + 1 < t->n && (is_word(s[c + 1]) || one_of(s[c + 1], ";&"));
}

/* $IFS, ${IFS}, ${PATH:0:1}, ${@} and w$@hoami: expansions that stand for
 * blanks or cut words, used to slip commands past filters. */
static int shell_expansion(const struct text *t, size_t i)
{
	const unsigned char *s = t->s;
	size_t left = t->n - i, k;

	if (left >= 4 && memcmp(s + i, "$IFS", 4) == 0 && (left == 4 || !is_word(s[i + 4])))
		return 1;
	if (left >= 3 && s[i + 1] == '@' && i > 0 && is_word(s[i - 1]) && is_word(s[i + 2]))
		return 1;
	if (left < 4 || s[i + 1] != '{')
		return 0;
	if (left >= 5 && memcmp(s + i + 2, "IFS", 3) == 0)
		return 1;
	if (one_of(s[i + 2], "@*") && s[i + 3] == '}')
		return 1;
	for (k = i + 2; k < t->n && k - i < 34 && (is_word(s[k])); k++) {
	}
	return k > i + 2 && k + 1 < t->n && s[k] == ':' && (is_digit(s[k + 1]) || s[k + 1] == '-');
}

/* > or >> into an absolute path or the home directory; /dev/null and the
 * like are harmless. Not "->", "=>", "<b>/x" (markup), "cost > 5", nor a
 * line's leading ">" (a quote in markdown and mail). */
static int shell_redirect(const struct text *t, size_t i)
{
	static const char *const harmless[] = { "/dev/null", "/dev/stdout", "/dev/stderr",
						"/dev/fd/" };
	const unsigned char *s = t->s;
	size_t j = i + 1, k;
	unsigned char prev = i > 0 ? s[i - 1] : '\n';

	if (prev == '>' || prev == '-' || prev == '=' || prev == '<' || is_alpha(prev) ||
	    one_of(prev, "\"'/"))
		return 0;
	for (k = i; k > 0 && i - k < 64 && (s[k - 1] == ' ' || s[k - 1] == '\t'); k--) {
	}
	if (k == 0 || s[k - 1] == '\n' || s[k - 1] == '\r')
		return 0;
	if (j < t->n && one_of(s[j], ">|&"))
		j++;
	j = shell_blanks(t, j);
	for (k = 0; k < sizeof(harmless) / sizeof(harmless[0]); k++)
		if (t->n - j >= strlen(harmless[k]) && memcmp(s + j, harmless[k], strlen(harmless[k])) == 0)
			return 0;
	if (j + 2 <= t->n && s[j] == '~' && s[j + 1] == '/')
		return 1;
	if (j + 6 <= t->n && memcmp(s + j, "$HOME/", 6) == 0)
		return 1;
	return j + 2 <= t->n && s[j] == '/' && (is_alpha(s[j + 1]) || s[j + 1] == '.');
}

/* What kind of shell construct starts at i; NULL for none. *next: where to
 * look next. */
static const char *shell_at(const struct text *t, size_t i, size_t *next)
{
	const unsigned char *s = t->s;
	size_t left = t->n - i;

	*next = i + 1;
	switch (s[i]) {
	case '$':
		if (left >= 3 && s[i + 1] == '(' && s[i + 2] != '(' && shell_substitution(t, i))
			return "command substitution";
		return shell_expansion(t, i) ? "shell expansion" : NULL;
	case '`':
		return shell_backquote(t, i, next) ? "backquoted command" : NULL;
	case '<':
		return left >= 2 && s[i + 1] == '(' && shell_substitution(t, i) ? "process substitution"
										  : NULL;
	case '>':
		if (left >= 2 && s[i + 1] == '(' && shell_substitution(t, i))
			return "process substitution";
		return shell_redirect(t, i) ? "redirection into a file" : NULL;
	case '/':
		return left >= 9 && (memcmp(s + i, "/dev/tcp/", 9) == 0 ||
				     memcmp(s + i, "/dev/udp/", 9) == 0)
			       ? "network redirection"
			       : NULL;
	}
	return shell_chained(t, i) ? "command after a separator" : NULL;
}

static int rule_shell(const struct text *t, char *why, size_t cap)
{
	size_t i, next;
	const char *what;

	for (i = 0; i < t->n; i = next)
		if ((what = shell_at(t, i, &next)) != NULL) {
			say(why, cap, what, t, i, EXCERPT_MAX);
			return 1;
		}
	return 0;
}

/* ---- the interface ------------------------------------------------------------- */

static int rule_unicode(const struct text *t, char *why, size_t cap)
{
	return anomaly_rule_unicode(t->s, t->n, why, cap); /* anomaly_unicode.c */
}

static const struct {
	enum tg_anomaly_rule rule;
	int (*scan)(const struct text *t, char *why, size_t cap);
} string_rules[] = {
	{ TG_ANOMALY_SQL, rule_sql },
	{ TG_ANOMALY_ADDRESS, rule_address },
	{ TG_ANOMALY_TRAVERSAL, rule_traversal },
	{ TG_ANOMALY_SHELL, rule_shell },
	{ TG_ANOMALY_UNICODE, rule_unicode },
};

const char *tg_anomaly_rule_name(enum tg_anomaly_rule rule)
{
	return (unsigned)rule < TG_ANOMALY_RULES ? rule_names[rule] : "?";
}

int tg_anomaly_rule_parse(const char *name, size_t len)
{
	int r;

	for (r = 0; name && r < TG_ANOMALY_RULES; r++)
		if (strlen(rule_names[r]) == len && memcmp(name, rule_names[r], len) == 0)
			return r;
	return -1;
}

size_t tg_anomaly_scan_string(const char *s, size_t n, unsigned rules,
			      struct tg_anomaly_finding *out, size_t max)
{
	struct text t = { (const unsigned char *)s, s ? n : 0 };
	char why[sizeof(((struct tg_anomaly_finding *)NULL)->why)];
	size_t r, count = 0;

	for (r = 0; r < sizeof(string_rules) / sizeof(string_rules[0]); r++) {
		if (!(rules & TG_ANOMALY_BIT(string_rules[r].rule)) ||
		    !string_rules[r].scan(&t, why, sizeof(why)))
			continue;
		if (out && count < max) {
			memset(&out[count], 0, sizeof(out[count]));
			out[count].rule = string_rules[r].rule;
			memcpy(out[count].why, why, sizeof(why));
		}
		count++;
	}
	return count;
}
