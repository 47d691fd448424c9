/*
 * Parameter anomalies (toolgate/anomaly.h, docs/ANOMALIES.md), the parts
 * around the string rules (anomaly_rules.c): the configuration, the walk
 * of a call's arguments with its input schema, which says what each
 * string may hold, and the tools' baselines of size and entropy. The
 * gate calls these (auth/anomaly.h); what a call with findings leads to,
 * held or warned and recorded, is the gate's, and nothing here must ever
 * call into the gate or decide it.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "auth/anomaly_int.h"
#include "catalog/contract_doc.h"
#include "toolgate/contract.h"
#include "toolgate/redact.h"
#include "toolgate/store.h"
#include "util/hidden.h"
#include "util/log.h"
#include "util/utf8.h"

/* ---- actions and configuration ---------------------------------------- */

static const char *const action_names[] = { "default", "hold", "warn", "off" };

int tg_anomaly_action_parse(const char *name)
{
	int i;

	for (i = TG_ANOMALY_HOLD; name && i <= TG_ANOMALY_OFF; i++)
		if (strcmp(name, action_names[i]) == 0)
			return i;
	return -1;
}

const char *tg_anomaly_action_name(enum tg_anomaly_action action)
{
	return (unsigned)action <= TG_ANOMALY_OFF ? action_names[action] : "?";
}

#define MAX_TOOLS 4096          /* tools a configuration names */

struct tg_anomaly_config {
	enum tg_anomaly_action action;
	unsigned rules;           /* looked for, for every tool */
	double size_z, entropy_z; /* standard deviations above (size), away (entropy) */
	uint64_t min_samples;     /* calls a baseline needs before it judges */
	uint64_t size_floor;      /* bytes: smaller arguments are never too large */
	uint64_t max_pending;     /* a principal's anomalous calls awaiting review, at most */
	json_t *tools;            /* name -> {"_action": n, "_rules": mask} */
};

static const struct tg_anomaly_config defaults = {
	TG_ANOMALY_HOLD, TG_ANOMALY_ALL, 4.0, 4.0, 30, 1024, 16, NULL,
};

static int bad(struct tg_error *err, const char *field, const char *why)
{
	return tg_error_set(err, TG_ERR_INVALID, "anomalies: %s: %s", field, why);
}

/* A "skip" list: the rules it names, as a mask. */
static int skip_mask(const json_t *v, const char *field, unsigned *mask, struct tg_error *err)
{
	const json_t *item;
	size_t i;
	int r;

	*mask = 0;
	if (!v)
		return 0;
	if (!json_is_array(v))
		return bad(err, field, "a list of rule names (sql, address, traversal, shell, "
			   "unicode, size, entropy)");
	json_array_foreach(v, i, item) {
		r = json_is_string(item) ? tg_anomaly_rule_parse(json_string_value(item),
								  json_string_length(item))
					 : -1;
		if (r < 0)
			return bad(err, field, "a list of rule names (sql, address, traversal, "
				   "shell, unicode, size, entropy)");
		*mask |= TG_ANOMALY_BIT(r);
	}
	return 0;
}

static int action_of(const json_t *v, const char *field, int *out, struct tg_error *err)
{
	if (!v)
		return 0;
	*out = tg_anomaly_action_parse(json_string_value(v));
	return *out < 0 ? bad(err, field, "hold, warn or off") : 0;
}

static int number(const json_t *o, const char *key, double lo, double hi, double *out,
		  struct tg_error *err)
{
	const json_t *v = json_object_get(o, key);
	char why[96];

	if (!v)
		return 0;
	if (!json_is_number(v) || json_number_value(v) < lo || json_number_value(v) > hi) {
		snprintf(why, sizeof(why), "a number from %g to %g", lo, hi);
		return bad(err, key, why);
	}
	*out = json_number_value(v);
	return 0;
}

static int only(const json_t *o, const char *const *fields, const char *where,
		struct tg_error *err)
{
	const char *key;
	const json_t *v;
	size_t i;

	json_object_foreach((json_t *)o, key, v) {
		for (i = 0; fields[i] && strcmp(fields[i], key) != 0; i++) {
		}
		if (!fields[i])
			return tg_error_set(err, TG_ERR_INVALID, "anomalies: %s: unknown field "
					    "\"%.64s\"", where, key);
	}
	return 0;
}

static int tool_entries(struct tg_anomaly_config *c, const json_t *tools, struct tg_error *err)
{
	static const char *const fields[] = { "action", "skip", NULL };
	const char *name;
	const json_t *t;
	char where[160];

	if (!tools)
		return 0;
	if (!json_is_object(tools) || json_object_size(tools) > MAX_TOOLS)
		return bad(err, "tools", "an object of at most 4096 tools, by name");
	c->tools = json_object();
	if (!c->tools)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	json_object_foreach((json_t *)tools, name, t) {
		int action = TG_ANOMALY_DEFAULT;
		unsigned skip;

		snprintf(where, sizeof(where), "tools.%.128s", name);
		if (!name[0] || strlen(name) > 128 || !json_is_object(t))
			return bad(err, where, "a tool's name (1 to 128 bytes) and an object");
		if (only(t, fields, where, err) < 0 ||
		    action_of(json_object_get(t, "action"), where, &action, err) < 0 ||
		    skip_mask(json_object_get(t, "skip"), where, &skip, err) < 0)
			return -1;
		if (json_object_set_new(c->tools, name, json_pack("{s:i,s:i}", "_action", action,
								  "_rules",
								  (int)(c->rules & ~skip))) < 0)
			return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	return 0;
}

int tg_anomaly_config_new(const char *text, size_t len, struct tg_anomaly_config **out,
			  struct tg_error *err)
{
	static const char *const fields[] = { "action", "skip", "size_z", "entropy_z",
					      "min_samples", "size_floor", "max_pending", "tools",
					      NULL };
	struct tg_anomaly_config *c;
	json_error_t jerr;
	json_t *j;
	double samples = 30, floor_bytes = 1024, pending = 16;
	unsigned skip = 0;
	int action = TG_ANOMALY_HOLD;

	tg_error_clear(err);
	*out = NULL;
	if (len > 1u << 20)
		return bad(err, "configuration", "larger than 1 MiB");
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!j || !json_is_object(j)) {
		json_decref(j);
		return bad(err, "configuration", "a JSON object");
	}
	c = calloc(1, sizeof(*c));
	if (!c) {
		json_decref(j);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	*c = defaults;
	if (only(j, fields, "configuration", err) < 0 ||
	    action_of(json_object_get(j, "action"), "action", &action, err) < 0 ||
	    skip_mask(json_object_get(j, "skip"), "skip", &skip, err) < 0 ||
	    number(j, "size_z", 1, 100, &c->size_z, err) < 0 ||
	    number(j, "entropy_z", 1, 100, &c->entropy_z, err) < 0 ||
	    number(j, "min_samples", 5, 1e6, &samples, err) < 0 ||
	    number(j, "size_floor", 0, 64 << 20, &floor_bytes, err) < 0 ||
	    number(j, "max_pending", 1, 100000, &pending, err) < 0)
		goto fail;
	c->action = (enum tg_anomaly_action)action;
	c->rules = TG_ANOMALY_ALL & ~skip;
	c->min_samples = (uint64_t)samples;
	c->size_floor = (uint64_t)floor_bytes;
	c->max_pending = (uint64_t)pending;
	if (tool_entries(c, json_object_get(j, "tools"), err) < 0)
		goto fail;
	json_decref(j);
	*out = c;
	return 0;
fail:
	json_decref(j);
	tg_anomaly_config_free(c);
	return -1;
}

void tg_anomaly_config_free(struct tg_anomaly_config *c)
{
	if (!c)
		return;
	json_decref(c->tools);
	free(c);
}

uint64_t tg_anomaly_config_max_pending(const struct tg_anomaly_config *c)
{
	return (c ? c : &defaults)->max_pending;
}

enum tg_anomaly_action tg_anomaly_config_tool(const struct tg_anomaly_config *c,
					      const char *tool, unsigned *rules)
{
	const json_t *t;
	int action;

	if (!c)
		c = &defaults;
	*rules = c->rules;
	t = tool ? json_object_get(c->tools, tool) : NULL;
	if (!t)
		return c->action;
	*rules = (unsigned)json_integer_value(json_object_get(t, "_rules"));
	action = (int)json_integer_value(json_object_get(t, "_action"));
	return action == TG_ANOMALY_DEFAULT ? c->action : (enum tg_anomaly_action)action;
}

/* ---- the walk ----------------------------------------------------------- */

#define ENTROPY_MIN_BYTES 64  /* fewer string bytes: their entropy says nothing */

struct walk {
	const json_t *root;       /* the input schema, for "$ref": "#/..." */
	unsigned rules;
	unsigned unreachable;     /* rules for what the tool cannot reach: only where
				   * the schema declares it (an address format) */
	struct anomaly_report *r;
	char at[512];             /* the JSON pointer being walked */
	uint64_t hist[256];       /* the strings' bytes */
	uint64_t bytes;
};

/* The subschema a local reference ("#", "#/$defs/x") names, or NULL. */
static const json_t *resolve(const struct walk *w, const json_t *s)
{
	const char *ref = json_string_value(json_object_get(s, "$ref"));
	const json_t *at = w->root;
	char token[256];
	size_t n;

	if (!ref || ref[0] != '#')
		return NULL; /* another document's: unknown here, so plain text */
	ref++;
	while (*ref == '/' && at) {
		ref++;
		for (n = 0; *ref && *ref != '/' && n + 1 < sizeof(token); ref++) {
			if (ref[0] == '~' && (ref[1] == '0' || ref[1] == '1'))
				token[n++] = *++ref == '0' ? '~' : '/';
			else
				token[n++] = *ref;
		}
		token[n] = '\0';
		if (json_is_array(at)) {
			char *end;
			unsigned long i = strtoul(token, &end, 10);

			at = *end || end == token ? NULL : json_array_get(at, i);
		} else {
			at = json_object_get(at, token);
		}
	}
	return *ref ? NULL : at;
}

static const char *const applicators[] = { "allOf", "anyOf", "oneOf" };

/*
 * What a schema says of a value is read through its applicators the way
 * they apply: every allOf branch applies, so what any of them allows is
 * allowed; of anyOf and oneOf only those the value matches apply, and
 * which those are is not worked out here, so what is allowed is what
 * every branch allows (a oneOf whose SQL branch is for another "kind"
 * does not let SQL through this one). The same for a member's or an
 * item's subschema: an anyOf or oneOf gives one only when all its
 * branches give the same one. Every lookup visits at most LOOKUP_NODES
 * subschemas (a schema of references to anyOfs of references would
 * otherwise take exponential time): past that it allows nothing and
 * knows no subschema, which looks at more, never less.
 */
#define LOOKUP_NODES 256

/* One node more for this lookup; 0 when its budget is spent. */
static int visit(int *budget)
{
	return --*budget >= 0;
}

/* Formats that say a string is an address: the address rule looks at it
 * whatever the tool can reach. */
static int address_format(const json_t *s)
{
	static const char *const formats[] = { "uri", "uri-reference", "iri", "iri-reference",
					       "uri-template", "hostname", "idn-hostname",
					       "ipv4", "ipv6" };
	const char *f = json_string_value(json_object_get(s, "format"));
	size_t i;

	for (i = 0; f && i < sizeof(formats) / sizeof(formats[0]); i++)
		if (strcmp(f, formats[i]) == 0)
			return 1;
	return 0;
}

/* 1 if s lists v (enum or const), anywhere it applies or may apply: a
 * value the contract's author wrote out is no injection, whichever
 * branch it matched. */
static int listed(const struct walk *w, const json_t *s, const json_t *v, int *budget)
{
	const json_t *e, *item;
	size_t a, i;

	if (!json_is_object(s) || !visit(budget))
		return 0;
	if ((e = json_object_get(s, "const")) && json_equal(e, v))
		return 1;
	json_array_foreach(json_object_get(s, "enum"), i, item)
		if (json_equal(item, v))
			return 1;
	if (listed(w, resolve(w, s), v, budget))
		return 1;
	for (a = 0; a < 3; a++)
		json_array_foreach(json_object_get(s, applicators[a]), i, item)
			if (listed(w, item, v, budget))
				return 1;
	return 0;
}

/* The string rules s itself allows, and *address when it declares an
 * address: a declared language (contentMediaType other than text/plain:
 * code, markup, a query) holds SQL, shell and relative paths (a link to
 * ../README.md); "x-toolgate-allow" what it names. Through $ref and
 * allOf (all of it), anyOf and oneOf (what every branch allows). */
static unsigned allowed(const struct walk *w, const json_t *s, int *address, int *budget)
{
	const char *media;
	const json_t *item, *branches;
	unsigned m = 0, all;
	size_t a, i;
	int r;

	if (!json_is_object(s) || !visit(budget))
		return 0;
	media = json_string_value(json_object_get(s, "contentMediaType"));
	if (media && strcasecmp(media, "text/plain") != 0)
		m |= TG_ANOMALY_BIT(TG_ANOMALY_SQL) | TG_ANOMALY_BIT(TG_ANOMALY_SHELL) |
		     TG_ANOMALY_BIT(TG_ANOMALY_TRAVERSAL);
	*address |= address_format(s);
	json_array_foreach(json_object_get(s, "x-toolgate-allow"), i, item)
		if (json_is_string(item) &&
		    (r = tg_anomaly_rule_parse(json_string_value(item), json_string_length(item))) >= 0)
			m |= TG_ANOMALY_BIT(r);
	m |= allowed(w, resolve(w, s), address, budget);
	json_array_foreach(json_object_get(s, "allOf"), i, item)
		m |= allowed(w, item, address, budget);
	for (a = 1; a < 3; a++) {
		branches = json_object_get(s, applicators[a]);
		if (!json_array_size(branches))
			continue;
		all = TG_ANOMALY_STRING_RULES;
		json_array_foreach(branches, i, item)
			all &= allowed(w, item, address, budget);
		m |= all;
	}
	return *budget < 0 ? 0 : m;
}

/* What a member's or an item's subschema is looked up by. */
struct lookup {
	const char *key;    /* a member's name; NULL: item index */
	size_t index;
	int *declared;      /* set when a "properties" names the member */
};

static const json_t *sub(const struct walk *w, const json_t *s, const struct lookup *l,
			 int *budget);

/* The subschema s's applicators give: its reference's, the first allOf
 * branch that knows one, or the one every anyOf (oneOf) branch gives. */
static const json_t *through(const struct walk *w, const json_t *s, const struct lookup *l,
			     int *budget)
{
	const json_t *v, *item, *one;
	size_t a, i;

	if ((v = sub(w, resolve(w, s), l, budget)))
		return v;
	json_array_foreach(json_object_get(s, "allOf"), i, item)
		if ((v = sub(w, item, l, budget)))
			return v;
	for (a = 1; a < 3; a++) {
		one = NULL;
		json_array_foreach(json_object_get(s, applicators[a]), i, item) {
			v = sub(w, item, l, budget);
			if (!v || (one && v != one)) {
				one = NULL;
				break;
			}
			one = v;
		}
		if (one)
			return one;
	}
	return NULL;
}

/* The subschema of s for l's member or item: NULL when none is known
 * (nothing says, a patternProperties member, branches that disagree). */
static const json_t *sub(const struct walk *w, const json_t *s, const struct lookup *l,
			 int *budget)
{
	const json_t *v;

	if (!json_is_object(s) || !visit(budget))
		return NULL;
	if (l->key && (v = json_object_get(json_object_get(s, "properties"), l->key))) {
		*l->declared = 1;
		return v;
	}
	if (!l->key) {
		v = json_object_get(s, "prefixItems");
		if (l->index < json_array_size(v))
			return json_array_get(v, l->index);
		v = json_object_get(s, "items");
		if (json_is_object(v))
			return v;
		if (json_is_array(v)) /* draft 7's tuple */
			return json_array_get(v, l->index);
	}
	if ((v = through(w, s, l, budget)))
		return v;
	if (!l->key)
		return NULL;
	/* a patternProperties member is not known without its regex: plain */
	if (json_object_get(s, "patternProperties"))
		return NULL;
	v = json_object_get(s, "additionalProperties");
	return json_is_object(v) ? v : NULL;
}

static void keep(struct anomaly_report *r, const struct tg_anomaly_finding *f, const char *at)
{
	size_t n;

	r->total++;
	if (r->rules & TG_ANOMALY_BIT(f->rule) || r->n == ANOMALY_MAX_FINDINGS) {
		r->rules |= TG_ANOMALY_BIT(f->rule);
		return; /* one kept a rule: enough to show a reviewer */
	}
	r->rules |= TG_ANOMALY_BIT(f->rule);
	r->f[r->n] = *f;
	/* a person reads it: a member name's hidden characters escaped
	 * (util/hidden.h), cut where a character begins */
	n = strlen(at);
	if (hidden_count(at, n)) {
		hidden_display(at, n, r->f[r->n].at, sizeof(r->f[0].at), NULL);
	} else {
		n = utf8_cut(at, n, sizeof(r->f[0].at) - 1);
		memcpy(r->f[r->n].at, at, n);
		r->f[r->n].at[n] = '\0';
	}
	r->n++;
}

/* 1 if s (n bytes) holds a secret the redactor finds (or could not be
 * looked at): a finding's excerpt of it, cut, might leave a piece of the
 * secret that the redactor no longer knows for one. */
static int holds_secret(const char *s, size_t n)
{
	struct tg_redact_out o;
	struct tg_error err;
	int yes = tg_redact(s, n, &o, &err) < 0 || o.total > 0;

	tg_redact_out_release(&o);
	return yes;
}

/* f's why without its excerpt: what the rule saw, by name alone. */
static void withhold_excerpt(struct tg_anomaly_finding *f)
{
	char *colon = strstr(f->why, ": ");
	size_t at = colon ? (size_t)(colon - f->why) : strlen(f->why);

	snprintf(f->why + at, sizeof(f->why) - at, ": [excerpt withheld: the string holds a "
		 "secret]");
}

static void text(struct walk *w, const char *s, size_t n, unsigned rules)
{
	struct tg_anomaly_finding f[TG_ANOMALY_RULES];
	size_t i, found;

	for (i = 0; i < n; i++)
		w->hist[(unsigned char)s[i]]++;
	w->bytes += n;
	if (!rules)
		return;
	found = tg_anomaly_scan_string(s, n, rules, f, TG_ANOMALY_RULES);
	if (found && holds_secret(s, n))
		for (i = 0; i < found && i < TG_ANOMALY_RULES; i++)
			withhold_excerpt(&f[i]);
	for (i = 0; i < found && i < TG_ANOMALY_RULES; i++)
		keep(w->r, &f[i], w->at);
}

/* w->at with "/" and token appended (RFC 6901 escaped); its old length. */
static size_t push(struct walk *w, const char *token)
{
	size_t mark = strlen(w->at), o = mark;

	if (o + 1 < sizeof(w->at))
		w->at[o++] = '/';
	for (; *token && o + 2 < sizeof(w->at); token++) {
		if (*token == '~' || *token == '/') {
			w->at[o++] = '~';
			w->at[o++] = *token == '~' ? '0' : '1';
		} else {
			w->at[o++] = *token;
		}
	}
	w->at[o] = '\0';
	return mark;
}

/* The string rules for string v, whose schema is s. */
static unsigned string_rules(const struct walk *w, const json_t *s, const json_t *v)
{
	int budget = LOOKUP_NODES, address = 0;
	unsigned rules = w->rules & TG_ANOMALY_STRING_RULES;

	if (listed(w, s, v, &budget))
		return 0;
	budget = LOOKUP_NODES;
	rules &= ~allowed(w, s, &address, &budget);
	/* what the tool cannot reach, unless the schema says it is that */
	return rules & ~(w->unreachable & ~(address ? TG_ANOMALY_BIT(TG_ANOMALY_ADDRESS) : 0u));
}

static void walk(struct walk *w, const json_t *s, const json_t *v)
{
	const char *key;
	const json_t *item;
	char index[24];
	size_t i, mark;
	int budget;

	if (json_is_string(v)) {
		text(w, json_string_value(v), json_string_length(v), string_rules(w, s, v));
	} else if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, item) {
			int declared = 0;
			struct lookup l = { key, 0, &declared };
			const json_t *subschema;

			budget = LOOKUP_NODES;
			subschema = sub(w, s, &l, &budget);
			mark = push(w, key);
			/* a name the schema does not declare is data too */
			if (!declared)
				text(w, key, strlen(key),
				     w->rules & TG_ANOMALY_STRING_RULES & ~w->unreachable);
			walk(w, subschema, item);
			w->at[mark] = '\0';
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, item) {
			struct lookup l = { NULL, i, NULL };

			snprintf(index, sizeof(index), "%zu", i);
			mark = push(w, index);
			budget = LOOKUP_NODES;
			walk(w, sub(w, s, &l, &budget), item);
			w->at[mark] = '\0';
		}
	}
}

void anomaly_scan_arguments(const json_t *schema, const json_t *args, size_t len,
			    unsigned rules, unsigned unreachable, struct anomaly_report *r)
{
	struct walk *w = calloc(1, sizeof(*w));
	double h = 0;
	size_t i;

	memset(r, 0, sizeof(*r));
	r->size = log(len ? (double)len : 1.0);
	if (!w) {
		/* out of memory: looked at all the same, without the schema's leave */
		struct tg_anomaly_finding f = { TG_ANOMALY_SIZE, "", "not looked at: out of memory" };

		keep(r, &f, "");
		return;
	}
	w->root = schema;
	w->rules = rules;
	w->unreachable = unreachable;
	w->r = r;
	walk(w, schema, args);
	for (i = 0; i < 256 && w->bytes; i++)
		if (w->hist[i]) {
			double p = (double)w->hist[i] / (double)w->bytes;

			h -= p * log2(p);
		}
	r->entropy = h;
	r->has_entropy = w->bytes >= ENTROPY_MIN_BYTES;
	free(w);
}

unsigned anomaly_unreachable(const struct tg_contract *k)
{
	switch (k->executor) {
	case TG_EXEC_PLAN:
	case TG_EXEC_PLAN_UNDO: /* its steps are other tools: they may reach anything */
	case TG_EXEC_UPSTREAM:  /* a server with its own mounts and network */
		return 0;
	case TG_EXEC_BUILTIN:
		return TG_ANOMALY_BIT(TG_ANOMALY_TRAVERSAL) | TG_ANOMALY_BIT(TG_ANOMALY_ADDRESS);
	case TG_EXEC_COMMAND:
		break;
	}
	/* a command tool without egress: its network namespace has no route */
	return k->egress && k->egress[0] ? 0 : TG_ANOMALY_BIT(TG_ANOMALY_ADDRESS);
}

int anomaly_look(const struct tg_contract *k, const struct tg_anomaly_config *config,
		 struct anomaly_baselines *b, unsigned rules, const char *args, size_t len,
		 struct anomaly_report *r, json_error_t *jerr)
{
	/* as the validator took them: NULs in strings, integers past 64 bits */
	json_t *a = json_loadb(args, len,
			       JSON_DECODE_ANY | JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, jerr);

	if (!a)
		return -1;
	anomaly_scan_arguments(contract_input_doc(k), a, len, rules, anomaly_unreachable(k), r);
	json_decref(a);
	anomaly_judge(b, config, k->name, rules, r);
	return 0;
}

int tg_anomaly_check(const struct tg_contract *k, const struct tg_anomaly_config *config,
		     struct tg_store *store, const char *args, size_t len,
		     struct tg_anomaly_finding *out, size_t max, size_t *total,
		     enum tg_anomaly_action *action, struct tg_error *err)
{
	struct anomaly_baselines *b = NULL;
	struct anomaly_report *r;
	json_error_t jerr;
	unsigned rules;
	size_t i;
	int rc;

	tg_error_clear(err);
	*total = 0;
	*action = tg_anomaly_config_tool(config, k->name, &rules);
	r = malloc(sizeof(*r));
	if (!r || (store && !(b = anomaly_baselines_new()))) {
		free(r);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	if (b && anomaly_baselines_load(b, store) < 0) {
		anomaly_baselines_free(b, NULL);
		b = NULL; /* said on stderr: judged without it */
	}
	rc = anomaly_look(k, config, b, rules, args, len, r, &jerr);
	anomaly_baselines_free(b, NULL);
	if (rc < 0) {
		free(r);
		return tg_error_set(err, TG_ERR_INVALID, "arguments: line %d: %s", jerr.line,
				    jerr.text);
	}
	for (i = 0; i < r->n && i < max; i++)
		out[i] = r->f[i];
	*total = r->total;
	free(r);
	return (int)i;
}

json_t *anomaly_findings_json(const struct anomaly_report *r)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < r->n; i++)
		json_array_append_new(a, json_pack("{s:s,s:s,s:s}", "rule",
						   tg_anomaly_rule_name(r->f[i].rule), "at",
						   r->f[i].at, "why", r->f[i].why));
	return a;
}

/* ---- baselines ---------------------------------------------------------- */

#define BUCKETS 256
#define MAX_BASELINES 65536   /* tools with a baseline, at most */
#define WEIGHT_CAP 10000      /* past so many calls, an exponentially weighted average */
#define SIZE_SD_FLOOR 0.25    /* ln bytes: a tool always called alike still varies */
#define ENTROPY_SD_FLOOR 0.15 /* bits a byte */

struct welford {
	uint64_t n;
	double mean, m2;
};

struct baseline {
	char tool[160];
	struct welford size, entropy;
	int dirty;
	struct baseline *next;
};

struct anomaly_baselines {
	pthread_mutex_t lock;
	pthread_mutex_t saving;   /* one save at a time, so an older never lands last */
	struct baseline *bucket[BUCKETS];
	size_t count;
	time_t saved;
};

struct anomaly_baselines *anomaly_baselines_new(void)
{
	struct anomaly_baselines *b = calloc(1, sizeof(*b));

	if (b) {
		pthread_mutex_init(&b->lock, NULL);
		pthread_mutex_init(&b->saving, NULL);
		b->saved = time(NULL);
	}
	return b;
}

void anomaly_baselines_free(struct anomaly_baselines *b, struct tg_store *store)
{
	size_t i;

	if (!b)
		return;
	if (store)
		anomaly_baselines_save(b, store, 0);
	for (i = 0; i < BUCKETS; i++)
		while (b->bucket[i]) {
			struct baseline *e = b->bucket[i];

			b->bucket[i] = e->next;
			free(e);
		}
	pthread_mutex_destroy(&b->lock);
	pthread_mutex_destroy(&b->saving);
	free(b);
}

static unsigned hash(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 16777619u;
	return h % BUCKETS;
}

/* tool's baseline; made when create (NULL: none, or too many). Locked. */
static struct baseline *find(struct anomaly_baselines *b, const char *tool, int create)
{
	unsigned h = hash(tool);
	struct baseline *e;

	for (e = b->bucket[h]; e; e = e->next)
		if (strcmp(e->tool, tool) == 0)
			return e;
	if (!create || b->count >= MAX_BASELINES || strlen(tool) >= sizeof(e->tool) ||
	    !(e = calloc(1, sizeof(*e))))
		return NULL;
	memcpy(e->tool, tool, strlen(tool) + 1); /* shorter: checked above */
	e->next = b->bucket[h];
	b->bucket[h] = e;
	b->count++;
	return e;
}

static void learn(struct welford *w, double x)
{
	double d = x - w->mean;

	if (w->n < WEIGHT_CAP) {
		w->n++;
		w->mean += d / (double)w->n;
		w->m2 += d * (x - w->mean);
	} else {
		/* the usual moves on, slowly: old calls weigh less */
		double a = 1.0 / WEIGHT_CAP, var = w->m2 / (double)(w->n - 1);

		w->mean += a * d;
		var = (1 - a) * (var + a * d * d);
		w->m2 = var * (double)(w->n - 1);
	}
}

static double sd_of(const struct welford *w, double floor_sd)
{
	double sd = w->n > 1 ? sqrt(w->m2 / (double)(w->n - 1)) : 0;

	return sd > floor_sd ? sd : floor_sd;
}

static void human_bytes(double bytes, char *out, size_t len)
{
	if (bytes < 10240)
		snprintf(out, len, "%.0f B", bytes);
	else if (bytes < 10 * 1048576.0)
		snprintf(out, len, "%.1f KiB", bytes / 1024);
	else
		snprintf(out, len, "%.1f MiB", bytes / 1048576);
}

static void judge_size(const struct baseline *e, const struct tg_anomaly_config *c,
		       struct anomaly_report *r)
{
	double z = (r->size - e->size.mean) / sd_of(&e->size, SIZE_SD_FLOOR);
	struct tg_anomaly_finding f = { TG_ANOMALY_SIZE, "", "" };
	char now[32], usual[32];

	if (exp(r->size) < (double)c->size_floor || z < c->size_z)
		return;
	human_bytes(exp(r->size), now, sizeof(now));
	human_bytes(exp(e->size.mean), usual, sizeof(usual));
	snprintf(f.why, sizeof(f.why), "%s of arguments, %.1f standard deviations above the "
		 "tool's usual %s (%llu calls)", now, z, usual, (unsigned long long)e->size.n);
	keep(r, &f, "");
}

static void judge_entropy(const struct baseline *e, const struct tg_anomaly_config *c,
			  struct anomaly_report *r)
{
	double z = (r->entropy - e->entropy.mean) / sd_of(&e->entropy, ENTROPY_SD_FLOOR);
	struct tg_anomaly_finding f = { TG_ANOMALY_ENTROPY, "", "" };

	if (fabs(z) < c->entropy_z)
		return;
	snprintf(f.why, sizeof(f.why), "%.2f bits a byte in its strings, %.1f standard "
		 "deviations %s the tool's usual %.2f (%llu calls)", r->entropy, fabs(z),
		 z > 0 ? "above" : "below", e->entropy.mean, (unsigned long long)e->entropy.n);
	keep(r, &f, "");
}

void anomaly_judge(struct anomaly_baselines *b, const struct tg_anomaly_config *c,
		   const char *tool, unsigned rules, struct anomaly_report *r)
{
	struct baseline *e;

	if (!c)
		c = &defaults;
	if (!b || !tool)
		return;
	pthread_mutex_lock(&b->lock);
	e = find(b, tool, 0);
	if (e && (rules & TG_ANOMALY_BIT(TG_ANOMALY_SIZE)) && e->size.n >= c->min_samples)
		judge_size(e, c, r);
	if (e && (rules & TG_ANOMALY_BIT(TG_ANOMALY_ENTROPY)) && r->has_entropy &&
	    e->entropy.n >= c->min_samples)
		judge_entropy(e, c, r);
	pthread_mutex_unlock(&b->lock);
}

void anomaly_learn(struct anomaly_baselines *b, const char *tool, double size, double entropy,
		   int has_entropy)
{
	struct baseline *e;

	if (!b || !tool)
		return;
	pthread_mutex_lock(&b->lock);
	if ((e = find(b, tool, 1))) {
		learn(&e->size, size);
		if (has_entropy)
			learn(&e->entropy, entropy);
		e->dirty = 1;
	}
	pthread_mutex_unlock(&b->lock);
}

static int loaded(void *ctx, const struct tg_baseline *s)
{
	struct anomaly_baselines *b = ctx;
	struct baseline *e;

	pthread_mutex_lock(&b->lock);
	if (!find(b, s->tool, 0) && (e = find(b, s->tool, 1))) {
		e->size.n = s->size_n;
		e->size.mean = s->size_mean;
		e->size.m2 = s->size_m2;
		e->entropy.n = s->entropy_n;
		e->entropy.mean = s->entropy_mean;
		e->entropy.m2 = s->entropy_m2;
	}
	pthread_mutex_unlock(&b->lock);
	return 0;
}

int anomaly_baselines_load(struct anomaly_baselines *b, struct tg_store *store)
{
	struct tg_error err;

	if (!b || !store)
		return 0;
	if (tg_store_baselines_each(store, loaded, b, &err) < 0) {
		tg_log(TG_LOG_ERROR, "anomaly baselines not loaded: %s", err.msg);
		return -1;
	}
	return 0;
}

void anomaly_baselines_save(struct anomaly_baselines *b, struct tg_store *store,
			    unsigned every)
{
	struct tg_baseline *out = NULL;
	struct baseline *e;
	struct tg_error err;
	time_t now = time(NULL);
	size_t i, n = 0;

	if (!b || !store)
		return;
	if (every ? pthread_mutex_trylock(&b->saving) != 0 : pthread_mutex_lock(&b->saving) != 0)
		return; /* another call is saving them: this one need not wait */
	pthread_mutex_lock(&b->lock);
	if (every && now - b->saved < (time_t)every) {
		pthread_mutex_unlock(&b->lock);
		pthread_mutex_unlock(&b->saving);
		return;
	}
	b->saved = now;
	out = calloc(b->count ? b->count : 1, sizeof(*out));
	for (i = 0; out && i < BUCKETS; i++)
		for (e = b->bucket[i]; e; e = e->next) {
			if (!e->dirty)
				continue;
			snprintf(out[n].tool, sizeof(out[n].tool), "%s", e->tool);
			out[n].size_n = e->size.n;
			out[n].size_mean = e->size.mean;
			out[n].size_m2 = e->size.m2;
			out[n].entropy_n = e->entropy.n;
			out[n].entropy_mean = e->entropy.mean;
			out[n].entropy_m2 = e->entropy.m2;
			e->dirty = 0;
			n++;
		}
	pthread_mutex_unlock(&b->lock);
	if (n && tg_store_baselines_put(store, out, n, &err) < 0) {
		tg_log(TG_LOG_ERROR, "anomaly baselines not saved: %s", err.msg);
		/* saved with the next */
		pthread_mutex_lock(&b->lock);
		for (i = 0; i < n; i++)
			if ((e = find(b, out[i].tool, 0)))
				e->dirty = 1;
		pthread_mutex_unlock(&b->lock);
	}
	pthread_mutex_unlock(&b->saving);
	free(out);
}
