/*
 * Private to the string rules of parameter anomalies (anomaly_rules.c and
 * one file a rule: anomaly_sql.c, anomaly_address.c, anomaly_traversal.c,
 * anomaly_shell.c): the string a rule scans, the byte classes they share,
 * and the finding's excerpt. ASCII byte tests only, never the locale's.
 */
#ifndef TG_AUTH_ANOMALY_TEXT_H
#define TG_AUTH_ANOMALY_TEXT_H

#include <stddef.h>

#define EXCERPT_MAX 60

struct text {
	const unsigned char *s;
	size_t n;
};

/* ASCII only, whatever the locale: the rules must not depend on it. */
static inline int is_alpha(unsigned char c)
{
	return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
}

static inline int is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static inline int is_word(unsigned char c)
{
	return is_alpha(c) || is_digit(c) || c == '_';
}

static inline int is_hex(unsigned char c)
{
	return is_digit(c) || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

static inline int hex_value(unsigned char c)
{
	return is_digit(c) ? c - '0' : (c | 0x20) - 'a' + 10;
}

static inline unsigned char lower(unsigned char c)
{
	return c >= 'A' && c <= 'Z' ? (unsigned char)(c + 32) : c;
}

static inline int is_blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* c is one of set (a NUL byte never is). A loop, not strchr: the sets
 * are short, and this is on every byte's path. */
static inline int one_of(unsigned char c, const char *set)
{
	for (; *set; set++)
		if ((unsigned char)*set == c)
			return 1;
	return 0;
}

/* Whether s[at, at + k) is word (k bytes, lowercase) without case. */
static inline int same_lower(const unsigned char *s, const char *word, size_t k)
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
void anomaly_say(char *why, size_t cap, const char *label, const struct text *t, size_t at,
		 size_t len);

/* Each rule: 1 and the finding in why (cap bytes) when t holds what it
 * looks for, else 0. Linear in t's length; nothing allocated or kept. */
int anomaly_rule_sql(const struct text *t, char *why, size_t cap);
int anomaly_rule_address(const struct text *t, char *why, size_t cap);
int anomaly_rule_traversal(const struct text *t, char *why, size_t cap);
int anomaly_rule_shell(const struct text *t, char *why, size_t cap);

#endif
