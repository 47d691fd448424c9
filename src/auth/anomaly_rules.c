/*
 * Parameter anomalies, the string rules (include/toolgate/anomaly.h,
 * docs/ANOMALIES.md "The string rules"): their names, the finding's
 * excerpt, and one scan of a string by the rules asked for. The rules are
 * a file each: anomaly_sql.c, anomaly_address.c, anomaly_traversal.c,
 * anomaly_shell.c and anomaly_unicode.c, each a hand-written scan of one
 * string for what its writer seldom means and an attacker often does.
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

#include "auth/anomaly_int.h"
#include "auth/anomaly_text.h"


static const char *const rule_names[TG_ANOMALY_RULES] = {
	"sql", "address", "traversal", "shell", "size", "entropy", "unicode",
};

/* ---- the finding's excerpt --------------------------------------------------- */

void anomaly_say(char *why, size_t cap, const char *label, const struct text *t, size_t at,
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

/* ---- the interface ------------------------------------------------------------- */

static int rule_unicode(const struct text *t, char *why, size_t cap)
{
	return anomaly_rule_unicode(t->s, t->n, why, cap); /* anomaly_unicode.c */
}

static const struct {
	enum tg_anomaly_rule rule;
	int (*scan)(const struct text *t, char *why, size_t cap);
} string_rules[] = {
	{ TG_ANOMALY_SQL, anomaly_rule_sql },
	{ TG_ANOMALY_ADDRESS, anomaly_rule_address },
	{ TG_ANOMALY_TRAVERSAL, anomaly_rule_traversal },
	{ TG_ANOMALY_SHELL, anomaly_rule_shell },
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
