/*
 * Private to the anomaly rules' files (src/auth/anomaly*.c) and their unit
 * tests and fuzzers: the pieces of a look (auth/anomaly.h, anomaly_look)
 * that the gate never calls one by one.
 */
#ifndef TG_AUTH_ANOMALY_INT_H
#define TG_AUTH_ANOMALY_INT_H

#include <jansson.h>
#include <stddef.h>

#include "auth/anomaly.h"

/* The unicode rule (anomaly_unicode.c) on s[0, n): 1 and why (cap bytes,
 * printable ASCII: what the character is, an excerpt) when s holds a
 * hidden character the rule flags (util/hidden.h), else 0. */
int anomaly_rule_unicode(const unsigned char *s, size_t n, char *why, size_t cap);

/* The string rules of rules on every string of args (and every member
 * name the schema does not declare), each rule where schema (the input
 * schema, as parsed; NULL: none) does not say the string may hold it,
 * and of those in unreachable (what the tool cannot reach: an address
 * for a tool with no network) only where the schema says the string is
 * one; plus the size (len: the arguments' bytes as sent) and entropy. */
void anomaly_scan_arguments(const json_t *schema, const json_t *args, size_t len,
			    unsigned rules, unsigned unreachable, struct anomaly_report *r);
/* The rules a tool cannot be steered by, for anomaly_scan_arguments: the
 * address rule for a tool with no network (a command tool without egress,
 * a builtin other than a plan), the traversal rule for one with no files
 * (a builtin other than a plan). */
unsigned anomaly_unreachable(const struct tg_contract *k);

/* r judged against tool's baseline under config: size and entropy
 * findings added to r (rules: those looked for). */
void anomaly_judge(struct anomaly_baselines *b, const struct tg_anomaly_config *config,
		   const char *tool, unsigned rules, struct anomaly_report *r);

#endif
