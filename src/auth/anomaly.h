/*
 * What the gate calls of the anomaly rules (src/auth/anomaly*.c,
 * docs/ANOMALIES.md): a look at a call's arguments with its input schema
 * and the tool's baseline, the findings as JSON, and the baselines, kept
 * and learnt. What a call with findings leads to (held, warned, recorded)
 * is the gate's; nothing here knows the gate. Not public: jansson types.
 */
#ifndef TG_AUTH_ANOMALY_H
#define TG_AUTH_ANOMALY_H

#include <jansson.h>
#include <stdint.h>

#include "toolgate/anomaly.h"

struct tg_contract;
struct tg_store;

#define ANOMALY_MAX_FINDINGS 8   /* kept for a call; the count goes on */

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
