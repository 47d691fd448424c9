/*
 * What the pipeline uses of the anomaly rules (src/gate/anomaly.c,
 * docs/ANOMALIES.md): the walk of a call's arguments with its input
 * schema, and the tools' baselines.
 */
#ifndef TG_ANOMALY_INT_H
#define TG_ANOMALY_INT_H

#include <jansson.h>
#include <stdint.h>

#include "toolgate/anomaly.h"

struct tg_store;

#define ANOMALY_MAX_FINDINGS 8   /* kept for a call; the count goes on */

/* The unicode rule (anomaly_unicode.c) on s[0, n): 1 and why (cap bytes,
 * printable ASCII: what the character is, an excerpt) when s holds a
 * hidden character the rule flags (util/hidden.h), else 0. */
int anomaly_rule_unicode(const unsigned char *s, size_t n, char *why, size_t cap);

/* A call's arguments, looked at. */
struct anomaly_report {
	struct tg_anomaly_finding f[ANOMALY_MAX_FINDINGS];
	size_t n;                 /* kept */
	size_t total;             /* found */
	unsigned rules;           /* the rules that found something (TG_ANOMALY_BIT) */
	/* for the baselines */
	double size;              /* ln of the arguments' bytes */
	double entropy;           /* bits a byte of their strings' bytes */
	int has_entropy;          /* enough string bytes for it to mean anything */
};

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
struct tg_contract;
unsigned anomaly_unreachable(const struct tg_contract *k);

/* The tools' baselines: Welford's running mean and variance of each
 * tool's sizes and entropies, kept in the store. */
struct anomaly_baselines;

struct anomaly_baselines *anomaly_baselines_new(void);
/* Saved first when store is given. */
void anomaly_baselines_free(struct anomaly_baselines *b, struct tg_store *store);
/* Those the store keeps, added (a tool already known is left as it is). */
int anomaly_baselines_load(struct anomaly_baselines *b, struct tg_store *store);
/* Those changed since they were last saved, saved when at least every
 * seconds have passed since (0: now). */
void anomaly_baselines_save(struct anomaly_baselines *b, struct tg_store *store,
			    unsigned every);

/* r judged against tool's baseline under config: size and entropy
 * findings added to r (rules: those looked for). */
void anomaly_judge(struct anomaly_baselines *b, const struct tg_anomaly_config *config,
		   const char *tool, unsigned rules, struct anomaly_report *r);
/* A call of tool that raised nothing and ran, learnt: its size, and its
 * entropy when it has one. Nothing else is (a retry, a poll of a ticket,
 * a replay, an anomaly): the usual is what tools are used for. */
void anomaly_learn(struct anomaly_baselines *b, const char *tool, double size, double entropy,
		   int has_entropy);

/* Stage 4c's look at args (JSON text, len bytes) for contract k: the
 * string rules of rules walked with its input schema, then size and
 * entropy judged against b (NULL: no baseline), into *r; nothing learnt.
 * -1 and *jerr when jansson cannot read the arguments. */
int anomaly_look(const struct tg_contract *k, const struct tg_anomaly_config *config,
		 struct anomaly_baselines *b, unsigned rules, const char *args, size_t len,
		 struct anomaly_report *r, json_error_t *jerr);

/* r's findings as a JSON array of {rule, at, why}, a new reference. */
json_t *anomaly_findings_json(const struct anomaly_report *r);

#endif
