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
#include <limits.h>
#include <pthread.h>
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
#include "util/sodium.h"

#define FIRST_LISTING "toolgate: the upstream's first listing"
#define SEEN_MAX 2048      /* definitions remembered an upstream (a listing: 1024 at most) */
#define TICKETS_AN_HOUR 6  /* review tickets opened for one tool, at most */
#define UPSTREAM_TICKETS_AN_HOUR 64 /* and for one upstream's tools */
#define SAID_AN_HOUR 256   /* changes of one upstream recorded one by one, at most */

/* n more within the hour b counts (a new hour begins past it): 1 when
 * that stays within max. */
static int budget_take(struct gate_pin_budget *b, int64_t now, unsigned max, unsigned n)
{
	if (now - b->since >= 3600) {
		b->since = now;
		b->n = 0;
	}
	if (b->n + n > max)
		return 0;
	b->n += n;
	return 1;
}

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

/* The changes not recorded one by one in the hour past (SAID_AN_HOUR),
 * recorded as one event once that hour is over. */
static void said_suppressed(struct gate_pin_round *r, int64_t now)
{
	struct gate_upstream *e = r->e;
	char what[200];

	if (!e->said_suppressed || now - e->said.since < 3600)
		return;
	snprintf(what, sizeof(what), "%u more definition changes were counted but not recorded "
		 "one by one (at most %u an hour)", e->said_suppressed, SAID_AN_HOUR);
	say(r, "upstream_definition_changes_suppressed", what);
	e->said_suppressed = 0;
}

/* ---- the memo: every definition judged this run ---------------------------- */

static struct gate_pin_memo *seen_find(struct gate_upstream *e, const char *tool,
				       const char *sha256)
{
	size_t i;

	for (i = 0; i < e->nseen; i++)
		if (strcmp(e->seen[i].tool, tool) == 0 && strcmp(e->seen[i].sha256, sha256) == 0)
			return &e->seen[i];
	return NULL;
}

/* The memo of tool's definition sha256, made when new (past SEEN_MAX,
 * the one judged longest ago, never one of this round, gives its place);
 * NULL out of memory. */
static struct gate_pin_memo *seen_get(struct gate_upstream *e, const char *tool,
				      const char *sha256)
{
	struct gate_pin_memo *m = seen_find(e, tool, sha256), *v;
	size_t i;

	if (m)
		return m;
	if (e->nseen == SEEN_MAX) {
		for (i = 0; i < e->nseen; i++)
			if (e->seen[i].round != e->round && (!m || e->seen[i].round < m->round))
				m = &e->seen[i];
		if (!m)
			return NULL; /* cannot be: a listing has at most 1024 tools */
	} else {
		if (e->nseen == e->seen_cap) {
			v = realloc(e->seen, (e->seen_cap * 2 + 16) * sizeof(*v));
			if (!v)
				return NULL;
			e->seen = v;
			e->seen_cap = e->seen_cap * 2 + 16;
		}
		m = &e->seen[e->nseen++];
	}
	memset(m, 0, sizeof(*m));
	snprintf(m->tool, sizeof(m->tool), "%s", tool);
	snprintf(m->sha256, sizeof(m->sha256), "%s", sha256);
	m->round = e->round;
	return m;
}

/* Whether a review ticket may be opened now for tool: at most
 * UPSTREAM_TICKETS_AN_HOUR for the upstream (a count that outlives the
 * memo), TICKETS_AN_HOUR for the tool (as far as the memo remembers). */
static int may_open(struct gate_upstream *e, const char *tool, int64_t now)
{
	unsigned n = 0;
	size_t i;

	if (now - e->tickets.since < 3600 && e->tickets.n >= UPSTREAM_TICKETS_AN_HOUR)
		return 0;
	for (i = 0; i < e->nseen; i++)
		if (e->seen[i].opened > now - 3600 && strcmp(e->seen[i].tool, tool) == 0)
			n += e->seen[i].opens;
	return n < TICKETS_AN_HOUR;
}

/* ---- the pins ------------------------------------------------------------------ */

static struct gate_mem_pin *mem_find(struct tg_gate *g, const char *upstream, const char *tool)
{
	size_t i;

	for (i = 0; i < g->nmem; i++)
		if (strcmp(g->mem[i].upstream, upstream) == 0 && strcmp(g->mem[i].tool, tool) == 0)
			return &g->mem[i];
	return NULL;
}

/* Without a store: tool's pin kept in memory (tool "": the marker of a
 * first listing judged). */
static int mem_keep(struct tg_gate *g, const char *upstream, const char *tool, const char *sha256)
{
	struct gate_mem_pin *m = mem_find(g, upstream, tool), *v;

	if (!m) {
		if (g->nmem == g->mem_cap) {
			v = realloc(g->mem, (g->mem_cap * 2 + 16) * sizeof(*v));
			if (!v)
				return -1;
			g->mem = v;
			g->mem_cap = g->mem_cap * 2 + 16;
		}
		m = &g->mem[g->nmem++];
		snprintf(m->upstream, sizeof(m->upstream), "%s", upstream);
		snprintf(m->tool, sizeof(m->tool), "%s", tool);
	}
	snprintf(m->sha256, sizeof(m->sha256), "%s", sha256);
	return 0;
}

void gate_pins_release(struct tg_gate *g)
{
	free(g->mem);
	g->mem = NULL;
	g->nmem = g->mem_cap = 0;
}

/* 1 when nothing of upstream e was ever judged (trust on first use):
 * nothing pinned, no listing judged by this gateway, and no review
 * ticket of its ever (a first listing it held entirely, then rejected). */
static int first_listing(struct gate_pin_round *r)
{
	struct tg_error err;
	uint64_t n = 0;
	char principal[64];

	if (!r->g->store)
		return !mem_find(r->g, r->e->u->name, "");
	if (r->npins || r->e->listed)
		return 0;
	snprintf(principal, sizeof(principal), "upstream %s", r->e->u->name);
	if (tg_store_tickets_of(r->g->store, principal, &n, &err) < 0)
		return 0; /* unknown: not trusted */
	return n == 0;
}

int gate_pins_begin(struct tg_gate *g, struct gate_upstream *e, struct gate_pin_round *r)
{
	struct tg_error err;

	memset(r, 0, sizeof(*r));
	r->g = g;
	r->e = e;
	r->mode = (int)e->u->pin;
	if (r->mode == TG_UPSTREAM_PIN_OFF)
		return 0;
	e->round++;
	said_suppressed(r, (int64_t)time(NULL));
	if (g->store && tg_store_pin_list(g->store, e->u->name, &r->pins, &r->npins, &err) < 0) {
		/* nothing is trusted that could not be compared */
		tg_log(TG_LOG_ERROR, "upstream %s: its pins could not be read: %s", e->u->name,
		       err.msg);
		r->failed = err.code == TG_ERR_NOMEM;
		r->pins = NULL;
		r->npins = 0;
		r->mode = -1;
		return r->failed ? -1 : 0;
	}
	r->first = first_listing(r);
	return 0;
}

/* The pinned hash of tool, or NULL (unpinned). */
static const char *pinned(const struct gate_pin_round *r, const char *tool)
{
	const struct gate_mem_pin *m;
	size_t i;

	if (!r->g->store) {
		m = mem_find(r->g, r->e->u->name, tool);
		return m ? m->sha256 : NULL;
	}
	for (i = 0; i < r->npins; i++)
		if (strcmp(r->pins[i].tool, tool) == 0)
			return r->pins[i].sha256;
	return NULL;
}

/* The pinned definition of tool (canonical), or NULL. */
static const char *pinned_definition(const struct gate_pin_round *r, const char *tool)
{
	size_t i;

	for (i = 0; i < r->npins; i++)
		if (strcmp(r->pins[i].tool, tool) == 0)
			return r->pins[i].definition;
	return NULL;
}

/* d pinned as the first listing's: in the store, or in memory. */
static int pin_first(struct gate_pin_round *r, const struct tg_pin_definition *d,
		     struct tg_error *err)
{
	struct tg_pin p = { 0 };

	if (!r->g->store)
		return mem_keep(r->g, r->e->u->name, d->tool, d->sha256) < 0
		       ? tg_error_set(err, TG_ERR_NOMEM, "out of memory") : 0;
	snprintf(p.upstream, sizeof(p.upstream), "%s", r->e->u->name);
	snprintf(p.tool, sizeof(p.tool), "%s", d->tool);
	snprintf(p.sha256, sizeof(p.sha256), "%s", d->sha256);
	snprintf(p.pinned_by, sizeof(p.pinned_by), "%s", FIRST_LISTING);
	p.definition = d->canonical;
	p.pinned_at = (int64_t)time(NULL);
	return tg_store_pin_set(r->g->store, &p, err);
}

/* ---- the judgement ------------------------------------------------------------- */

/* 1 if the store pins d now (another process may have since the round
 * began, or the round itself). */
static int pinned_now(const struct gate_pin_round *r, const struct tg_pin_definition *d)
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

/* What became of ticket m->ticket: 1 when it keeps d out (pending:
 * m->pending; rejected: h->rejected and h->why), 0 when d is accepted now
 * (pinned here, or by another process), 2 when another is needed
 * (expired, cancelled, approved against a pin since replaced, gone);
 * -1 and err. */
static int ticket_state(struct gate_pin_round *r, const struct tg_pin_definition *d,
			struct gate_pin_memo *m, struct gate_held *h, struct tg_error *err)
{
	struct tg_ticket t;
	int rc = 2;

	if (tg_store_ticket_get(r->g->store, m->ticket, TG_STORE_NOW, &t, err) < 0)
		return err->code == TG_ERR_INVALID ? 2 : -1;
	switch (t.state) {
	case TG_TICKET_PENDING:
		m->pending = 1;
		rc = 1;
		break;
	case TG_TICKET_APPROVED:
	case TG_TICKET_EXECUTED:
		tg_error_clear(err);
		/* carried out here, or by toolgate upstream accept: either way
		 * only while the pin it was judged against is the tool's */
		rc = tg_gate_pin_accept(r->g->store, r->g->audit, t.id, err);
		if (rc == 0)
			tg_log(TG_LOG_INFO, "upstream %s: %s: the definition %s accepted (ticket "
			       "%s) is served", r->e->u->name, t.tool, t.approver, t.id);
		rc = rc >= 0 && pinned_now(r, d) ? 0 : err->code == TG_ERR_NOMEM ? -1 : 2;
		break;
	case TG_TICKET_REJECTED:
		snprintf(h->why, sizeof(h->why), "%s rejected this definition of it (ticket %s): "
			 "it is not served until the upstream lists another", t.approver, t.id);
		h->rejected = 1;
		rc = 1;
		break;
	default:
		break;
	}
	tg_ticket_release(&t);
	return rc;
}

/* A changed or added definition (k, made of d): its ticket found or
 * opened; 1 when it stays out of the pins (h->ticket, h->why), 0 when it
 * was accepted, -1 out of memory. */
static int under_review(struct gate_pin_round *r, const struct tg_contract *k,
			const struct tg_pin_definition *d, size_t nf, struct gate_pin_memo *m,
			struct gate_held *h)
{
	const char *against = pinned(r, d->tool);
	int64_t now = (int64_t)time(NULL);
	struct tg_ticket t;
	struct tg_error err;
	int rc, opening;
	size_t n;

	snprintf(h->why, sizeof(h->why), nf ? "its definition is new or changed, and the "
		 "description scanner found what a model would read as an instruction in it: it "
		 "awaits review" : "its definition differs from the one accepted, and awaits review");
	if (!r->g->store) {
		snprintf(h->why, sizeof(h->why), "its definition differs from this run's first "
			 "listing, and nothing can accept it without a store (serve --policy): "
			 "it is served again when the upstream lists it as it was");
		return 1;
	}
	if (gate_pin_ticket_of(r->e->u->name, k->name, d, against, &t) < 0)
		return -1;
	/* this run's ticket for it, else the store's (opened before a
	 * restart), unless the upstream opened all it may this hour */
	opening = may_open(r->e, d->tool, now);
	if (!m->ticket[0] || strcmp(m->args, t.args_sha256) != 0) {
		struct tg_ticket f;

		m->ticket[0] = '\0';
		if (opening &&
		    tg_store_ticket_find(r->g->store, t.tool, t.args_sha256, now, &f, &err) == 0) {
			snprintf(m->ticket, sizeof(m->ticket), "%s", f.id);
			snprintf(m->args, sizeof(m->args), "%s", t.args_sha256);
			tg_ticket_release(&f);
		}
	}
	rc = m->ticket[0] ? ticket_state(r, d, m, h, &err) : 2;
	if (rc == 2 && !opening) {
		snprintf(h->why, sizeof(h->why), "its upstream changed its definitions too often "
			 "within the hour (%u review tickets a tool, %u an upstream, at most): it "
			 "is held, without a ticket, until it is listed again past the hour",
			 TICKETS_AN_HOUR, UPSTREAM_TICKETS_AN_HOUR);
		m->ticket[0] = '\0';
		rc = 1;
	} else if (rc == 2) {
		/* one ticket pending a tool: its latest definition's */
		if (tg_store_ticket_supersede(r->g->store, t.tool, t.args_sha256, &n, &err) < 0)
			tg_log(TG_LOG_ERROR, "upstream %s: tool %s: its earlier review tickets could "
			       "not be cancelled: %s", r->e->u->name, d->tool, err.msg);
		if (gate_pin_ticket_open(r->g, r->e->u, k, d, pinned_definition(r, d->tool), &t,
					 m->ticket, &err) == 0) {
			snprintf(m->args, sizeof(m->args), "%s", t.args_sha256);
			/* counted within the hour its first opening began */
			if (m->opened <= now - 3600) {
				m->opened = now;
				m->opens = 0;
			}
			m->opens++;
			budget_take(&r->e->tickets, now, UINT_MAX, 1);
			m->pending = 1;
			rc = 1;
		}
	}
	if (rc == 2 || rc < 0) {
		tg_log(TG_LOG_ERROR, "upstream %s: tool %s: its review ticket: %s", r->e->u->name,
		       d->tool, err.msg);
		m->ticket[0] = '\0';
		snprintf(h->why, sizeof(h->why), "its definition differs from the one accepted, "
			 "and its review ticket could not be opened (the gateway's log says why)");
		rc = rc < 0 && err.code == TG_ERR_NOMEM ? -1 : 1;
	}
	snprintf(h->ticket, sizeof(h->ticket), "%s", m->ticket);
	free(t.arguments);
	return rc;
}
/* m's change said, once a run: logged, recorded, counted. */
static void said(struct gate_pin_round *r, struct gate_pin_memo *m, int held)
{
	char what[500];

	if (m->said == m->change || m->change == TG_PIN_UNCHANGED)
		return;
	m->said = m->change;
	metrics_definition_change(r->g->metrics, r->e->u->name, tg_pin_change_name(m->change));
	said_suppressed(r, (int64_t)time(NULL));
	if (!budget_take(&r->e->said, (int64_t)time(NULL), SAID_AN_HOUR, 1)) {
		r->e->said_suppressed++; /* counted; recorded as one, past the hour */
		return;
	}
	snprintf(what, sizeof(what), "tool %s: definition %s (%.12s)%s%s%s", m->tool,
		 tg_pin_change_name(m->change), m->sha256,
		 m->change == TG_PIN_REMOVED ? ": not listed any more"
		 : held ? ": held until a person accepts it" : ": served, and to be reviewed",
		 m->ticket[0] ? ", ticket " : "", m->ticket);
	say(r, "upstream_definition_changed", what);
}

/* A definition that can be neither compared nor pinned: held. */
static int cannot(struct gate_pin_round *r, struct tg_contract *k, struct gate_held *h,
		  const char *why)
{
	tg_log(TG_LOG_ERROR, "upstream %s: tool %s: %s", r->e->u->name, k->upstream_tool, why);
	snprintf(h->why, sizeof(h->why), "%s (the gateway's log says why)", why);
	h->k = k;
	return PIN_HOLD;
}

int gate_pins_judge(struct gate_pin_round *r, const char *def, size_t len, struct tg_contract *k,
		    struct gate_held *h)
{
	const char *tool = k->upstream_tool, *sha = k->upstream_definition, *pin;
	struct tg_pin_definition d = { 0 };
	struct gate_pin_memo *m;
	struct tg_error err;
	size_t nf = 0;
	int change, rc;

	memset(h, 0, sizeof(*h));
	if (r->mode == TG_UPSTREAM_PIN_OFF)
		return PIN_SERVE;
	if (r->mode < 0)
		return cannot(r, k, h, "its pins could not be read, so it could not be compared");
	/* k holds its definition's hash (tg_catalog_upstream_tool): the
	 * canonical text is made again only for what is pinned or ticketed */
	pin = pinned(r, tool);
	change = !pin ? TG_PIN_ADDED : strcmp(pin, sha) ? TG_PIN_CHANGED : TG_PIN_UNCHANGED;
	if (change != TG_PIN_UNCHANGED) {
		nf = gate_pin_findings(k);
		if (tg_upstream_definition(def, len, &d, &err) < 0) {
			tg_contract_free(k); /* k was made of it: only memory can fail */
			r->failed = 1;
			return -1;
		}
	}
	if (r->first && change == TG_PIN_ADDED && !nf) {
		/* trusted on first use; unpinned, it would be trusted again */
		if (pin_first(r, &d, &err) < 0) {
			tg_pin_definition_release(&d);
			return cannot(r, k, h, "it could not be pinned");
		}
		change = TG_PIN_UNCHANGED;
	}
	m = seen_get(r->e, tool, sha);
	if (!m) {
		rc = -1;
		goto out;
	}
	m->round = r->e->round;
	m->pending = 0;
	m->change = change;
	if (change == TG_PIN_UNCHANGED) {
		rc = PIN_SERVE;
		goto out;
	}
	rc = under_review(r, k, &d, nf, m, h);
	if (rc < 0)
		goto out;
	if (rc == 0) {
		m->change = TG_PIN_UNCHANGED; /* accepted now */
		rc = PIN_SERVE;
		goto out;
	}
	/* held in strict mode, and in every mode when the scanner found an
	 * order in it or a person rejected it */
	rc = r->mode == TG_UPSTREAM_PIN_STRICT || nf || h->rejected || !h->ticket[0]
	     ? PIN_HOLD : PIN_SERVE;
	said(r, m, rc == PIN_HOLD);
	if (rc == PIN_HOLD)
		h->k = k;
out:
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
	struct gate_pin_memo *m;
	size_t i, j;
	int listed;

	if (r->mode >= 0 && r->mode != TG_UPSTREAM_PIN_OFF && !r->failed) {
		/* the pins no listing names now: removed (served again if
		 * they come back as they were) */
		for (i = 0; i < r->npins; i++) {
			for (j = 0, listed = 0; j < e->nseen && !listed; j++)
				listed = e->seen[j].round == e->round &&
					 strcmp(e->seen[j].tool, r->pins[i].tool) == 0;
			if (listed || !(m = seen_get(e, r->pins[i].tool, r->pins[i].sha256)))
				continue;
			m->change = TG_PIN_REMOVED;
			said(r, m, 0);
		}
		e->listed = 1;
		/* out of memory, the marker is lost: the next listing is
		 * judged as a first one, as after a restart without a store */
		if (!r->g->store)
			(void)mem_keep(r->g, e->u->name, "", "");
	}
	for (i = 0; i < r->npins; i++)
		tg_pin_release(&r->pins[i]);
	free(r->pins);
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

		for (j = 0; j < e->nseen && !due; j++) {
			if (e->seen[j].round != e->round || !e->seen[j].pending)
				continue;
			*waiting = 1;
			if (tg_store_ticket_get(g->store, e->seen[j].ticket, TG_STORE_NOW, &t,
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
