/*
 * Parameter anomalies, the sql rule (docs/ANOMALIES.md "The string rules"):
 * SQL injection found by patterns of tokens, not by words. One pass over
 * the string with a bounded look ahead from each place it tries; nothing
 * allocated, the keyword table built once. Must never depend on the
 * locale or read past the string.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "auth/anomaly_int.h"
#include "auth/anomaly_text.h"

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

int anomaly_rule_sql(const struct text *t, char *why, size_t cap)
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
				anomaly_say(why, cap, sql_patterns[p].why, t, i, end - i);
				return 1;
			}
	}
	return 0;
}
