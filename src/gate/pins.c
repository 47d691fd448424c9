/*
 * Pins (docs/UPSTREAMS.md, "Pins"): each tool an upstream lists judged
 * against the definition a person accepted, so that a server cannot
 * change what a tool says or takes under a name already trusted (a rug
 * pull). The first listing of an upstream with nothing pinned is
 * trusted and pinned; after that a tool whose definition changed, or that
 * is new, is held in "strict" mode (listed nowhere, refused with its
 * ticket when called) and served in "review" mode, and either way an
 * approval ticket is opened whose preview is what changed
 * (tg_catalog_upstream_diff) and whose findings are the description
 * scanner's. A person with the tool's approve scope approves it; the gate
 * then pins the definition approved (the ticket's, hashed, never what
 * the server lists by then) and serves it. A definition the scanner finds
 * something in is held in both modes. "off" judges nothing.
 *
 * Each change is said once (an audit event, a count, a log line), however
 * often the snapshots are made again: what the last judgement said is
 * kept (the memo).
 *
 * Never: serve a changed definition in strict mode before its ticket is
 * approved; pin what the approver did not see; open a second ticket for
 * a definition that has one pending.
 */
#include <jansson.h>
#include <pthread.h>
#include <sodium.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gate/gate_int.h"
#include "obs/metrics.h"
#include "obs/shown.h"
#include "toolgate/audit.h"
#include "toolgate/catalog.h"
#include "toolgate/scan.h"
#include "toolgate/upstream.h"
#include "util/log.h"

#define FIRST_LISTING "toolgate: the upstream's first listing"

/* ---- saying it --------------------------------------------------------------- */

static void say(const struct gate_pin_round *r, const char *event, const char *what)
{
	char subject[200], shown[800];

	obs_shown(what, strlen(what), shown, sizeof(shown));
	snprintf(subject, sizeof(subject), "upstream %s", r->e->u->name);
	tg_log(TG_LOG_INFO, "%s: %s", subject, shown);
	if (tg_record_event(r->g->audit, "", subject, event, shown) < 0)
		tg_log(TG_LOG_ERROR, "%s: %s could not be recorded", subject, event);
}

/* ---- the memo ---------------------------------------------------------------- */

static struct gate_pin_memo *memo_find(struct gate_pin_memo *v, size_t n, const char *tool,
				       const char *sha256)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i].tool, tool) == 0 && (!sha256 || strcmp(v[i].sha256, sha256) == 0))
			return &v[i];
	return NULL;
}

static struct gate_pin_memo *memo_add(struct gate_pin_memo **v, size_t *n, size_t *cap,
				      const char *tool, const char *sha256, int change)
{
	struct gate_pin_memo *m;

	if (*n == *cap) {
		m = realloc(*v, (*cap * 2 + 8) * sizeof(*m));
		if (!m)
			return NULL;
		*v = m;
		*cap = *cap * 2 + 8;
	}
	m = &(*v)[(*n)++];
	memset(m, 0, sizeof(*m));
	snprintf(m->tool, sizeof(m->tool), "%s", tool);
	snprintf(m->sha256, sizeof(m->sha256), "%s", sha256);
	m->change = change;
	return m;
}

/* ---- the pins ------------------------------------------------------------------ */

int gate_pins_begin(struct tg_gate *g, struct gate_upstream *e, int tell,
		    struct gate_pin_round *r)
{
	struct tg_error err;

	memset(r, 0, sizeof(*r));
	r->g = g;
	r->e = e;
	r->tell = tell;
	r->mode = (int)e->u->pin;
	if (r->mode == TG_UPSTREAM_PIN_OFF)
		return 0;
	if (!g->store) {
		r->first = !e->listed;
		return 0;
	}
	if (tg_store_pin_list(g->store, e->u->name, &r->pins, &r->npins, &err) < 0) {
		/* nothing is trusted that could not be compared */
		tg_log(TG_LOG_ERROR, "upstream %s: its pins could not be read: %s", e->u->name,
		       err.msg);
		r->failed = err.code == TG_ERR_NOMEM;
		r->pins = NULL;
		r->npins = 0;
		r->mode = -1;
		return r->failed ? -1 : 0;
	}
	r->first = r->npins == 0;
	return 0;
}

/* The pinned hash of tool, or NULL (unpinned). */
static const char *pinned(const struct gate_pin_round *r, const char *tool)
{
	const struct gate_pin_memo *m;
	size_t i;

	if (!r->g->store) {
		m = memo_find(r->e->mem, r->e->nmem, tool, NULL);
		return m ? m->sha256 : NULL;
	}
	for (i = 0; i < r->npins; i++)
		if (strcmp(r->pins[i].tool, tool) == 0)
			return r->pins[i].sha256;
	return NULL;
}

/* d pinned, by who: in the store, or in memory without one. */
static int pin_keep(struct gate_pin_round *r, const struct tg_pin_definition *d, const char *who,
		    struct tg_error *err)
{
	struct gate_upstream *e = r->e;
	struct tg_pin p = { 0 };
	size_t cap = e->nmem;

	if (!r->g->store) {
		struct gate_pin_memo *m = memo_find(e->mem, e->nmem, d->tool, NULL);

		if (m) {
			snprintf(m->sha256, sizeof(m->sha256), "%s", d->sha256);
			return 0;
		}
		return memo_add(&e->mem, &e->nmem, &cap, d->tool, d->sha256, TG_PIN_UNCHANGED)
		       ? 0 : tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	snprintf(p.upstream, sizeof(p.upstream), "%s", e->u->name);
	snprintf(p.tool, sizeof(p.tool), "%s", d->tool);
	snprintf(p.sha256, sizeof(p.sha256), "%s", d->sha256);
	snprintf(p.pinned_by, sizeof(p.pinned_by), "%s", who);
	p.definition = d->canonical;
	p.pinned_at = (int64_t)time(NULL);
	return tg_store_pin_set(r->g->store, &p, err);
}

/* ---- tickets ------------------------------------------------------------------- */

/* The ticket that asks for d, as the store keeps it: its tool
 * ("NAME.tool@definition", so its approver needs NAME.tool's approve
 * scope) and its arguments (the definition, canonical). */
static int ticket_of(const struct gate_pin_round *r, const struct tg_contract *k,
		     const struct tg_pin_definition *d, struct tg_ticket *t)
{
	unsigned char h[crypto_hash_sha256_BYTES];
	json_t *a;

	/* the definition as its canonical text, byte for byte what is pinned */
	memset(t, 0, sizeof(*t));
	a = json_pack("{s:s,s:s,s:s,s:s}", "upstream", r->e->u->name, "tool", d->tool, "sha256",
		      d->sha256, "definition", d->canonical);
	t->arguments = a ? json_dumps(a, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(a);
	if (!t->arguments)
		return -1;
	crypto_hash_sha256(h, (const unsigned char *)t->arguments, strlen(t->arguments));
	sodium_bin2hex(t->args_sha256, sizeof(t->args_sha256), h, sizeof(h));
	snprintf(t->principal, sizeof(t->principal), "upstream %s", r->e->u->name);
	snprintf(t->tool, sizeof(t->tool), "%s@definition", k->name);
	return 0;
}

/* The newest ticket in the store for t's tool and arguments, whatever
 * its state (one opened before a restart), into id; 0 when none. */
static int ticket_known(struct gate_pin_round *r, const struct tg_ticket *t, char *id)
{
	struct tg_error err;
	size_t i;

	if (!r->looked) {
		r->looked = 1;
		if (tg_store_ticket_list(r->g->store, TG_TICKET_ANY, (int64_t)time(NULL),
					 &r->tickets, &r->ntickets, &err) < 0) {
			tg_log(TG_LOG_ERROR, "upstream %s: its tickets could not be read: %s",
			       r->e->u->name, err.msg);
			r->tickets = NULL;
			r->ntickets = 0;
		}
	}
	for (i = r->ntickets; i-- > 0;)
		if (strcmp(r->tickets[i].tool, t->tool) == 0 &&
		    strcmp(r->tickets[i].args_sha256, t->args_sha256) == 0) {
			snprintf(id, 33, "%s", r->tickets[i].id);
			return 1;
		}
	return 0;
}

/* Tickets pending for another definition of t's tool withdrawn: a
 * server that keeps changing a tool has one ticket open for it, its
 * latest definition's, not one for each. */
static void superseded(struct gate_pin_round *r, const struct tg_ticket *t)
{
	char id[33];
	size_t i;

	ticket_known(r, t, id); /* the store's tickets, looked at once */
	for (i = 0; i < r->ntickets; i++)
		if (r->tickets[i].state == TG_TICKET_PENDING &&
		    strcmp(r->tickets[i].tool, t->tool) == 0 &&
		    strcmp(r->tickets[i].args_sha256, t->args_sha256) != 0 &&
		    tg_store_ticket_move(r->g->store, r->tickets[i].id, TG_TICKET_PENDING,
					 TG_TICKET_CANCELLED, NULL) == 0)
			r->tickets[i].state = TG_TICKET_CANCELLED;
}

/* The scanner's findings on k as a ticket keeps them ([{rule, at, why}]),
 * or NULL when none; *n their count. */
static char *findings_of(const struct tg_contract *k, size_t *n)
{
	struct tg_scan_finding f[16];
	char line[400];
	json_t *v;
	char *text;
	size_t i;

	*n = tg_scan_contract(k, f, 16);
	if (!*n)
		return NULL;
	v = json_array();
	for (i = 0; v && i < *n && i < 16; i++) {
		tg_scan_describe(&f[i], line, sizeof(line));
		json_array_append_new(v, json_pack("{s:s,s:s,s:s}", "rule", f[i].rule, "at",
						   f[i].where, "why", line));
	}
	text = v ? json_dumps(v, JSON_COMPACT) : NULL;
	json_decref(v);
	return text;
}

/* A ticket opened for d (pin: the old definition, or NULL), into id. */
static int ticket_open(struct gate_pin_round *r, const struct tg_pin_definition *d, const char *old, struct tg_ticket *t,
		       const char *findings, char *id, struct tg_error *err)
{
	struct tg_ticket made;
	char *report = NULL;
	json_t *p;
	int breaking;

	if (tg_catalog_upstream_diff(r->e->u, old, old ? strlen(old) : 0, d->canonical,
				     strlen(d->canonical), &report, &breaking, err) < 0)
		return -1;
	p = json_pack("{s:[{s:s,s:s}],s:b,s:{s:s,s:s,s:b}}", "content", "type", "text", "text",
		      report, "isError", 0, "structured", "change", old ? "changed" : "added",
		      "definition", d->sha256, "breaking", breaking);
	free(report);
	t->preview = p ? json_dumps(p, JSON_COMPACT) : NULL;
	json_decref(p);
	t->findings = (char *)findings;
	if (!t->preview)
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	if (tg_store_ticket_create(r->g->store, t, (int64_t)time(NULL), r->g->ticket_ttl, &made,
				   err) < 0) {
		free(t->preview);
		t->preview = NULL;
		t->findings = NULL;
		return -1;
	}
	free(t->preview);
	t->preview = NULL;
	t->findings = NULL;
	snprintf(id, 33, "%s", made.id);
	tg_ticket_release(&made);
	return 0;
}

/* Ticket t (approved) carried out (tg_gate_pin_accept). 0, or -1 and err. */
static int accept(struct gate_pin_round *r, const struct tg_ticket *t, struct tg_error *err)
{
	int rc = tg_gate_pin_accept(r->g->store, r->g->audit, t->id, err);

	if (rc < 0)
		return -1;
	tg_log(TG_LOG_INFO, "upstream %s: %s: the definition accepted by %s (ticket %s) is "
	       "served", r->e->u->name, t->tool, t->approver, t->id);
	return 0;
}

/* The definition approved ticket a holds (its arguments, hashed as the
 * store keeps them): 0 and OUT *d, its upstream in up; -1 and err. */
static int approved_definition(const struct tg_ticket *t, struct tg_pin_definition *d,
			       char *up, size_t len, struct tg_error *err)
{
	unsigned char h[crypto_hash_sha256_BYTES];
	char hex[65], principal[128];
	const char *u, *tool, *sha, *def;
	size_t n = strlen(t->tool);
	json_t *a;

	if (n < 11 || strcmp(t->tool + n - 11, "@definition") != 0 || !t->arguments)
		return tg_error_set(err, TG_ERR_INVALID, "ticket %s is not an upstream definition's "
				    "(its tool is %s)", t->id, t->tool);
	crypto_hash_sha256(h, (const unsigned char *)t->arguments, strlen(t->arguments));
	sodium_bin2hex(hex, sizeof(hex), h, sizeof(h));
	a = json_loads(t->arguments, 0, NULL);
	u = json_string_value(json_object_get(a, "upstream"));
	tool = json_string_value(json_object_get(a, "tool"));
	sha = json_string_value(json_object_get(a, "sha256"));
	def = json_string_value(json_object_get(a, "definition"));
	snprintf(principal, sizeof(principal), "upstream %s", u ? u : "");
	if (strcmp(hex, t->args_sha256) != 0 || !u || !tool || !sha || !def ||
	    strcmp(principal, t->principal) != 0 || strlen(u) >= len) {
		json_decref(a);
		return tg_error_set(err, TG_ERR_INVALID, "ticket %s: its arguments are not the "
				    "definition it was opened for", t->id);
	}
	snprintf(up, len, "%s", u);
	if (tg_upstream_definition(def, strlen(def), d, err) < 0 ||
	    strcmp(d->sha256, sha) != 0 || strcmp(d->tool, tool) != 0 ||
	    strcmp(d->canonical, def) != 0) {
		tg_pin_definition_release(d);
		json_decref(a);
		return err->code == TG_ERR_NOMEM ? -1 : tg_error_set(err, TG_ERR_INVALID, "ticket %s: "
			"its definition does not hash to the one it names", t->id);
	}
	json_decref(a);
	return 0;
}

int tg_gate_pin_accept(struct tg_store *st, struct tg_audit *audit, const char *id,
		       struct tg_error *err)
{
	struct tg_pin_definition d = { 0 };
	struct tg_pin p = { 0 };
	struct tg_ticket t;
	char up[33], subject[80], what[400];
	int rc = -1;

	tg_error_clear(err);
	if (tg_store_ticket_get(st, id, (int64_t)time(NULL), &t, err) < 0)
		return -1;
	if (approved_definition(&t, &d, up, sizeof(up), err) < 0)
		goto out;
	if (t.state == TG_TICKET_EXECUTED) {
		rc = 1; /* carried out before */
		goto out;
	}
	if (t.state != TG_TICKET_APPROVED) {
		tg_error_set(err, TG_ERR_INVALID, "ticket %s is %s: only an approved one is "
			     "accepted", id, tg_ticket_state_name(t.state));
		goto out;
	}
	snprintf(p.upstream, sizeof(p.upstream), "%s", up);
	snprintf(p.tool, sizeof(p.tool), "%s", d.tool);
	snprintf(p.sha256, sizeof(p.sha256), "%s", d.sha256);
	snprintf(p.pinned_by, sizeof(p.pinned_by), "%s", t.approver);
	p.definition = d.canonical;
	p.pinned_at = (int64_t)time(NULL);
	if (tg_store_pin_set(st, &p, err) < 0)
		goto out;
	/* another process may have moved it already: the pin is the same */
	tg_store_ticket_move(st, id, TG_TICKET_APPROVED, TG_TICKET_EXECUTED, NULL);
	snprintf(subject, sizeof(subject), "upstream %s", up);
	snprintf(what, sizeof(what), "tool %s: definition %.12s accepted by %s (ticket %s)",
		 d.tool, d.sha256, t.approver, id);
	if (tg_record_event(audit, t.approver, subject, "upstream_definition_accepted", what) < 0)
		tg_log(TG_LOG_ERROR, "%s: %s: its record could not be written", subject, what);
	rc = 0;
out:
	tg_pin_definition_release(&d);
	tg_ticket_release(&t);
	return rc;
}

/* ---- the judgement ------------------------------------------------------------- */

/* 1 if the store pins d now (another process may have since the round
 * began). */
static int now_pinned(const struct gate_pin_round *r, const struct tg_pin_definition *d)
{
	struct tg_error err;
	struct tg_pin p;
	int yes;

	if (tg_store_pin_get(r->g->store, r->e->u->name, d->tool, &p, &err) != 0)
		return 0;
	yes = strcmp(p.sha256, d->sha256) == 0;
	tg_pin_release(&p);
	return yes;
}

/* What became of ticket id: 1 and h->why when it keeps d out (pending,
 * rejected), 0 when d is now accepted (pinned here), 2 when another is
 * needed (expired, cancelled, or none); -1 and err. */
static int ticket_state(struct gate_pin_round *r, const char *id,
			const struct tg_pin_definition *d, struct gate_pin_memo *m,
			struct gate_held *h, struct tg_error *err)
{
	struct tg_ticket t;
	int rc = 2;

	if (tg_store_ticket_get(r->g->store, id, (int64_t)time(NULL), &t, err) < 0)
		return err->code == TG_ERR_INVALID ? 2 : -1;
	switch (t.state) {
	case TG_TICKET_PENDING:
		m->pending = 1;
		rc = 1;
		break;
	case TG_TICKET_APPROVED:
		rc = accept(r, &t, err) < 0 ? -1 : 0;
		break;
	case TG_TICKET_EXECUTED:
		/* accepted elsewhere (toolgate upstream accept) just now, or
		 * long ago and pinned over since: served only if pinned now */
		rc = now_pinned(r, d) ? 0 : 2;
		break;
	case TG_TICKET_REJECTED:
		snprintf(h->why, sizeof(h->why), "%s rejected this definition of it (ticket %s): "
			 "it is not served until the upstream lists another", t.approver, id);
		h->rejected = 1;
		rc = 1;
		break;
	default:
		break;
	}
	tg_ticket_release(&t);
	return rc;
}

/* A changed or added definition: its ticket found or opened; 1 when it
 * stays out of the pins (h->ticket, h->why), 0 when it was accepted. */
static int under_review(struct gate_pin_round *r, const struct tg_contract *k,
			const struct tg_pin_definition *d, const char *old, const char *findings,
			struct gate_pin_memo *m, const struct gate_pin_memo *prior,
			struct gate_held *h)
{
	struct tg_ticket t;
	struct tg_error err;
	int rc;

	if (findings)
		snprintf(h->why, sizeof(h->why), "its definition is new or changed, and the "
			 "description scanner found what a model would read as an instruction "
			 "in it: it awaits review");
	else
		snprintf(h->why, sizeof(h->why), "its definition differs from the one "
			 "accepted, and awaits review");
	if (!r->g->store) {
		snprintf(h->why, sizeof(h->why), "its definition differs from this run's first "
			 "listing, and nothing can accept it without a store (serve --policy): "
			 "it is served again when the upstream lists it as it was");
		return 1;
	}
	if (ticket_of(r, k, d, &t) < 0)
		return -1;
	if (prior && prior->ticket[0])
		snprintf(h->ticket, sizeof(h->ticket), "%s", prior->ticket);
	else if (!ticket_known(r, &t, h->ticket))
		h->ticket[0] = '\0';
	rc = h->ticket[0] ? ticket_state(r, h->ticket, d, m, h, &err) : 2;
	if (rc == 2)
		superseded(r, &t);
	if (rc == 2 && ticket_open(r, d, old, &t, findings, h->ticket, &err) == 0) {
		m->pending = 1;
		rc = 1;
	} else if (rc == 2 || rc < 0) {
		tg_log(TG_LOG_ERROR, "upstream %s: tool %s: its review ticket: %s", r->e->u->name,
		       d->tool, err.msg);
		h->ticket[0] = '\0';
		snprintf(h->why, sizeof(h->why), "its definition differs from the one accepted, "
			 "and its review ticket could not be opened (the gateway's log says why)");
		rc = 1;
	}
	snprintf(m->ticket, sizeof(m->ticket), "%s", h->ticket);
	free(t.arguments);
	return rc;
}

/* The old definition of d's tool, as pinned, or NULL. */
static const char *old_definition(const struct gate_pin_round *r, const char *tool)
{
	size_t i;

	for (i = 0; i < r->npins; i++)
		if (strcmp(r->pins[i].tool, tool) == 0)
			return r->pins[i].definition;
	return NULL;
}

/* A change said once: the memo of the judgement before did not hold it. */
static void said(struct gate_pin_round *r, const char *tool, const char *sha256, int change,
		 const char *ticket, int held)
{
	char what[500];

	if (memo_find(r->e->memo, r->e->nmemo, tool, sha256) &&
	    memo_find(r->e->memo, r->e->nmemo, tool, sha256)->change == change)
		return;
	metrics_definition_change(r->g->metrics, r->e->u->name, tg_pin_change_name(change));
	snprintf(what, sizeof(what), "tool %s: definition %s (%.12s)%s%s%s", tool,
		 tg_pin_change_name(change), sha256,
		 change == TG_PIN_REMOVED ? ": not listed any more"
		 : held ? ": held until a person accepts it" : ": served, and to be reviewed",
		 ticket && *ticket ? ", ticket " : "", ticket ? ticket : "");
	say(r, "upstream_definition_changed", what);
}

int gate_pins_judge(struct gate_pin_round *r, const char *def, size_t len, struct tg_contract *k,
		    struct gate_held *h)
{
	const struct gate_pin_memo *prior;
	struct tg_pin_definition d;
	struct gate_pin_memo *m;
	struct tg_error err;
	const char *pin;
	char *findings;
	size_t nf;
	int change, rc, out;

	memset(h, 0, sizeof(*h));
	if (r->mode == TG_UPSTREAM_PIN_OFF)
		return PIN_SERVE;
	if (r->mode < 0 || tg_upstream_definition(def, len, &d, &err) < 0) {
		/* made into k, so it has one: only the pins are unreadable */
		tg_contract_free(k);
		return PIN_DROP;
	}
	pin = pinned(r, d.tool);
	change = !pin ? TG_PIN_ADDED : strcmp(pin, d.sha256) ? TG_PIN_CHANGED : TG_PIN_UNCHANGED;
	findings = change == TG_PIN_UNCHANGED ? NULL : findings_of(k, &nf);
	if (r->first && change == TG_PIN_ADDED && !findings) {
		/* trusted on first use */
		if (pin_keep(r, &d, FIRST_LISTING, &err) < 0)
			tg_log(TG_LOG_ERROR, "upstream %s: tool %s could not be pinned: %s",
			       r->e->u->name, d.tool, err.msg);
		change = TG_PIN_UNCHANGED;
	}
	m = memo_add(&r->memo, &r->nmemo, &r->cap, d.tool, d.sha256, change);
	if (!m) {
		rc = -1;
		goto out;
	}
	if (change == TG_PIN_UNCHANGED) {
		rc = PIN_SERVE;
		goto out;
	}
	prior = memo_find(r->e->memo, r->e->nmemo, d.tool, d.sha256);
	rc = under_review(r, k, &d, old_definition(r, d.tool), findings, m, prior, h);
	if (rc < 0)
		goto out;
	if (rc == 0) {
		m->change = TG_PIN_UNCHANGED; /* accepted now */
		rc = PIN_SERVE;
		goto out;
	}
	/* held in strict mode, and in every mode when the scanner found
	 * something a model would read as an order */
	out = r->mode == TG_UPSTREAM_PIN_STRICT || findings || h->rejected;
	said(r, d.tool, d.sha256, change, h->ticket, out);
	if (out) {
		h->k = k;
		rc = PIN_HOLD;
	} else {
		rc = PIN_SERVE;
	}
out:
	free(findings);
	tg_pin_definition_release(&d);
	if (rc < 0) {
		r->failed = 1;
		tg_contract_free(k);
	}
	return rc;
}

void gate_pins_end(struct gate_pin_round *r)
{
	struct gate_upstream *e = r->e;
	size_t i;

	if (r->mode >= 0 && r->mode != TG_UPSTREAM_PIN_OFF && !r->failed) {
		/* the pins no listing names now: removed (served again if
		 * they come back as they were) */
		for (i = 0; i < r->npins; i++) {
			if (memo_find(r->memo, r->nmemo, r->pins[i].tool, NULL))
				continue;
			said(r, r->pins[i].tool, r->pins[i].sha256, TG_PIN_REMOVED, NULL, 0);
			if (!memo_add(&r->memo, &r->nmemo, &r->cap, r->pins[i].tool,
				      r->pins[i].sha256, TG_PIN_REMOVED)) {
				r->failed = 1;
				break;
			}
		}
	}
	if (!r->failed) {
		free(e->memo);
		e->memo = r->memo;
		e->nmemo = r->nmemo;
		e->listed = 1;
	} else {
		free(r->memo);
	}
	for (i = 0; i < r->npins; i++)
		tg_pin_release(&r->pins[i]);
	free(r->pins);
	for (i = 0; i < r->ntickets; i++)
		tg_ticket_release(&r->tickets[i]);
	free(r->tickets);
	memset(r, 0, sizeof(*r));
}

/* ---- decisions, and calls of held tools ---------------------------------------- */

int gate_pins_due(struct tg_gate *g, int *waiting)
{
	struct tg_ticket t;
	struct tg_error err;
	size_t i, j;
	int due = 0;

	*waiting = 0;
	if (!g->store)
		return 0;
	for (i = 0; i < g->nups && !due; i++) {
		struct gate_upstream *e = g->ups[i];

		for (j = 0; j < e->nmemo && !due; j++) {
			if (!e->memo[j].pending)
				continue;
			*waiting = 1;
			if (tg_store_ticket_get(g->store, e->memo[j].ticket, (int64_t)time(NULL), &t,
						&err) < 0)
				continue;
			due = t.state != TG_TICKET_PENDING;
			tg_ticket_release(&t);
		}
	}
	return due;
}

const struct gate_held *gate_held_find(struct tg_gate *g, const struct tg_catalog *catalog,
				       const char *ref)
{
	const struct gate_held *h = NULL;
	struct snapshot *sn;
	size_t n = strcspn(ref, "@"), i;

	pthread_mutex_lock(&g->lock);
	for (sn = g->cur; sn && sn->catalog != catalog; sn = sn->next)
		;
	for (i = 0; sn && !h && i < sn->nheld; i++)
		if (strlen(sn->held[i].k->name) == n && strncmp(sn->held[i].k->name, ref, n) == 0)
			h = &sn->held[i];
	pthread_mutex_unlock(&g->lock);
	return h;
}
