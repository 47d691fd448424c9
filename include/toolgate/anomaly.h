/*
 * Parameter anomalies (docs/ANOMALIES.md): a call's arguments, once they
 * match the tool's input schema, are looked at for what a tool's caller
 * seldom means and an attacker often does. Deterministic rules on each
 * string the arguments hold, chosen by what the schema says the string is
 * (a field declared SQL is not searched for SQL):
 *
 *   sql        SQL injection shapes (UNION SELECT, '; DROP, ' OR 1=1, ...)
 *   address    an address in a private, loopback, link-local or cloud
 *              metadata range (169.254.169.254, 10.0.0.7, [::1], their
 *              decimal, hex and octal spellings, metadata host names)
 *   traversal  a ".." path segment, plain or percent-encoded, or a NUL
 *   shell      shell constructs ($(...), backquotes, ; rm, | sh, > /etc/...)
 *   unicode    what a person reviewing the call would not see as it is: bidi
 *              controls (Trojan Source), terminal escapes and control
 *              characters, tag characters, zero-width characters joining
 *              no script, runs of variation selectors
 *
 * and two per tool, from a baseline of its past calls (Welford's mean and
 * variance, kept in the store):
 *
 *   size       the arguments' size far above the tool's usual
 *   entropy    their entropy far from the tool's usual
 *
 * What a finding leads to is configuration (the policy's "anomalies"):
 * by default the call is held for a person's review through the approval
 * gate, never silently run.
 */
#ifndef TOOLGATE_ANOMALY_H
#define TOOLGATE_ANOMALY_H

#include <stddef.h>
#include <stdint.h>

#include "toolgate/error.h"

#ifdef __cplusplus
extern "C" {
#endif

enum tg_anomaly_rule {
	TG_ANOMALY_SQL = 0,
	TG_ANOMALY_ADDRESS,
	TG_ANOMALY_TRAVERSAL,
	TG_ANOMALY_SHELL,
	TG_ANOMALY_SIZE,
	TG_ANOMALY_ENTROPY,
	TG_ANOMALY_UNICODE,     /* a string rule, numbered after the others kept theirs */
	TG_ANOMALY_RULES
};

#define TG_ANOMALY_BIT(r) (1u << (r))
#define TG_ANOMALY_ALL ((1u << TG_ANOMALY_RULES) - 1)
/* the rules that look at one string */
#define TG_ANOMALY_STRING_RULES                                                  \
	(TG_ANOMALY_BIT(TG_ANOMALY_SQL) | TG_ANOMALY_BIT(TG_ANOMALY_ADDRESS) |     \
	 TG_ANOMALY_BIT(TG_ANOMALY_TRAVERSAL) | TG_ANOMALY_BIT(TG_ANOMALY_SHELL) | \
	 TG_ANOMALY_BIT(TG_ANOMALY_UNICODE))

/* "sql", "address", "traversal", "shell", "size", "entropy", "unicode" */
TG_API const char *tg_anomaly_rule_name(enum tg_anomaly_rule rule);
/* The rule named name (len bytes); -1 for none. */
TG_API int tg_anomaly_rule_parse(const char *name, size_t len);

struct tg_anomaly_finding {
	enum tg_anomaly_rule rule;
	char at[128];     /* JSON pointer of the value in the arguments; "" the whole
			   * (a member name's hidden characters escaped, util/hidden.h) */
	char why[160];    /* printable ASCII: what was seen ("UNION SELECT", "169.254.169.254
			   * is link-local and cloud metadata (169.254.0.0/16)", ...) */
};

/* The string rules of rules (a mask of TG_ANOMALY_BIT, others ignored) on
 * one string s[0, n) (UTF-8 expected, may hold NULs and anything else):
 * at most one finding a rule, the first max of them in out (their at left
 * ""), the count as the result. Pure: no state, no allocation beyond the
 * stack, linear in n. */
TG_API size_t tg_anomaly_scan_string(const char *s, size_t n, unsigned rules,
				     struct tg_anomaly_finding *out, size_t max);

/* What a finding leads to. */
enum tg_anomaly_action {
	TG_ANOMALY_DEFAULT = 0,  /* the configuration's (hold when it says nothing) */
	TG_ANOMALY_HOLD,         /* held for a person's review: a ticket, never run unseen */
	TG_ANOMALY_WARN,         /* run, the findings recorded and counted */
	TG_ANOMALY_OFF,          /* not looked for */
};

/* "hold", "warn", "off"; -1 for none. */
TG_API int tg_anomaly_action_parse(const char *name);
TG_API const char *tg_anomaly_action_name(enum tg_anomaly_action action);

/* The configuration (a policy's "anomalies", docs/ANOMALIES.md):
 *
 *   {"action": "hold", "skip": ["entropy"], "size_z": 4, "entropy_z": 4,
 *    "min_samples": 30, "size_floor": 1024, "max_pending": 16,
 *    "tools": {"net.scan": {"action": "warn", "skip": ["address"]}}}
 *
 * every field optional. */
struct tg_anomaly_config;

/* The configuration in json (len bytes, a JSON object): OUT *out, or -1
 * and err naming the field that is wrong. */
TG_API int tg_anomaly_config_new(const char *json, size_t len, struct tg_anomaly_config **out,
				 struct tg_error *err);
TG_API void tg_anomaly_config_free(struct tg_anomaly_config *config);
/* For tool (a name): what its findings lead to, and the rules looked for
 * (a mask of TG_ANOMALY_BIT). config NULL: the defaults. */
TG_API enum tg_anomaly_action tg_anomaly_config_tool(const struct tg_anomaly_config *config,
						     const char *tool, unsigned *rules);
/* How many anomalous reads of one principal may await review at once
 * (a read scope must not fill the approvers' queue); config NULL: 16. */
TG_API uint64_t tg_anomaly_config_max_pending(const struct tg_anomaly_config *config);

/* What the gate's stage 4c would find in args (JSON text, len bytes) for
 * contract k under config (NULL: the defaults), as an operator asks
 * `toolgate anomalies`: the string rules, and with store the size and
 * entropy rules against the tool's baseline kept there (nothing learnt).
 * The findings kept (one a rule) in out, at most max, their count as the
 * result; OUT *total all of them, *action what they would lead to; -1 and
 * err when args are not JSON. */
struct tg_contract;
struct tg_store;
TG_API int tg_anomaly_check(const struct tg_contract *k, const struct tg_anomaly_config *config,
			    struct tg_store *store, const char *args, size_t len,
			    struct tg_anomaly_finding *out, size_t max, size_t *total,
			    enum tg_anomaly_action *action, struct tg_error *err);

#ifdef __cplusplus
}
#endif

#endif
