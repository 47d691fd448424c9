/*
 * The PostgreSQL backend's upkeep (docs/STORE.md, "PostgreSQL"): the port
 * of sqlite_upkeep.c and sqlite_pin.c (token revocations are pg_revoke.c's).
 * The anomaly baselines (docs/ANOMALIES.md), the collection of what expired
 * (idempotency records, revocations, tickets and their events past their
 * keeping) in batches so that calls go on between them; upstream pins
 * (docs/UPSTREAMS.md, "Pins": one row an upstream's tool, its accepted
 * definition's canonical text and hash) and skill pins (one row a skill's
 * name, its version and manifest's digest).
 *
 * Where SQLite's one writer made a count and the insert it allows one
 * step, a lock named for what is counted does (pg_lock): two gateways on
 * one database cannot both pass a limit.
 *
 * Must never: collect a ticket a running plan or rollback still reads,
 * hold a lock across a whole collection, hold more than TG_PIN_MAX_TOOLS
 * pins of one upstream or TG_SKILL_PIN_MAX skill pins, or check a
 * caller's input (the front did).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "store/pg_int.h"

#define TEXT_OF(x) #x
#define NUMBER(x) TEXT_OF(x)

/* ---- the collection ---------------------------------------------------------- */

#define GC_BATCH 500
#define GC_LIMIT " LIMIT " NUMBER(GC_BATCH)

/*
 * Each batch one statement in autocommit, its rows picked by a sub-SELECT
 * that locks them and skips those another transaction holds (SKIP
 * LOCKED): a batch never waits for a call, nor two gateways' collections
 * for each other (no deadlock between two sets of rows locked in two
 * orders), and what it skips (being moved, claimed, or collected by the
 * other) is looked at again by the next collection. A row changed by a
 * call that committed meanwhile is looked at again, as it now is, before
 * it is locked: a record claimed again or a ticket approved is not taken.
 * $1 is now, or (tickets and events) the cut-off, now - keep.
 */
/* Tickets a plan or a rollback still running reads are kept, whatever
 * their age. */
#define TICKETS_GONE "DELETE FROM tickets WHERE id IN (SELECT id FROM tickets WHERE " \
	"greatest(expires, coalesce(decided, 0)) <= $1::bigint " \
	"AND id NOT IN (SELECT id FROM sagas WHERE state IN ('running', 'compensating')) " \
	"AND id NOT IN (SELECT call_id FROM rollbacks WHERE state = 'running')" GC_LIMIT \
	" FOR UPDATE SKIP LOCKED)"
/* A ticket that ended without running keeps its hash, not its contents
 * (no event: the trigger fires on a change of state only). */
#define ENDED_UNRUN "(state IN ('rejected', 'cancelled', 'expired') OR " \
	"(state = 'pending' AND expires <= $1::bigint))"
#define TICKETS_EMPTIED "UPDATE tickets SET arguments = NULL, preview = NULL, findings = NULL " \
	"WHERE id IN (SELECT id FROM tickets WHERE " ENDED_UNRUN " AND (arguments IS NOT NULL " \
	"OR preview IS NOT NULL OR findings IS NOT NULL)" GC_LIMIT " FOR NO KEY UPDATE SKIP " \
	"LOCKED)"
/* A ticket's events go keep after they were written, whatever became of
 * the ticket: a reader that far behind has lost them anyway. */
#define EVENTS_GONE "DELETE FROM ticket_events WHERE seq IN (SELECT seq FROM ticket_events " \
	"WHERE at <= $1::bigint ORDER BY seq" GC_LIMIT " FOR UPDATE SKIP LOCKED)"

static const struct {
	const char *sql;
	int aged;       /* $1 the cut-off; skipped when keep < 0 (kept for ever) */
} gc_sql[5] = {
	{ "DELETE FROM idempotency WHERE (principal, tool, key) IN (SELECT principal, tool, key "
	  "FROM idempotency WHERE expires <= $1::bigint" GC_LIMIT " FOR UPDATE SKIP LOCKED)", 0 },
	/* a day past the token's expiry, not at it: the collection goes by
	 * the database's clock, a token's check by its replica's, which may
	 * be behind (docs/STORE.md, "Whose clock") */
	{ "DELETE FROM revocations WHERE jti IN (SELECT jti FROM revocations WHERE expires <= "
	  "$1::bigint - 86400" GC_LIMIT " FOR UPDATE SKIP LOCKED)", 0 },
	{ TICKETS_GONE, 1 },
	{ TICKETS_EMPTIED, 0 },
	{ EVENTS_GONE, 1 },
};

int pg_gc(struct tg_store *st, int64_t now, int64_t keep, struct tg_store_gc_stats *stats,
	  struct tg_error *err)
{
	uint64_t removed[5] = { 0, 0, 0, 0, 0 }, n;
	int64_t cut;
	size_t i;
	int rc = 0;

	/* now - keep, computed here without overflow (bigint arithmetic in
	 * the server would fail where SQLite's went on in floating point) */
	cut = keep > 0 && now < INT64_MIN + keep ? INT64_MIN : now - keep;
	/* in batches: calls go on between them, whatever the backlog */
	for (i = 0; rc == 0 && i < 5; i++) {
		if (gc_sql[i].aged && keep < 0)
			continue; /* tickets and their events kept for ever */
		do {
			struct pg_params p = { 0 };

			n = 0;
			pp_int(&p, gc_sql[i].aged ? cut : now);
			rc = pg_one(st, gc_sql[i].sql, &p, "gc", NULL, &n, err);
			removed[i] += n;
		} while (rc == 0 && n == GC_BATCH);
	}
	if (stats) {
		stats->idempotency = removed[0];
		stats->revocations = removed[1];
		stats->tickets = removed[2];
		stats->emptied = removed[3];
		stats->events = removed[4];
	}
	return rc;
}

/* ---- anomaly baselines ------------------------------------------------------- */

int pg_baselines_put(struct tg_store *st, const struct tg_baseline *b, size_t n,
		     struct tg_error *err)
{
	int64_t updated = (int64_t)time(NULL);
	PGconn *c;
	size_t i;
	int rc;

	c = pg_take(st, err);
	if (!c)
		return -1;
	rc = pg_begin(c, err);
	for (i = 0; rc == 0 && i < n; i++) {
		struct pg_params p = { 0 };

		pp_text(&p, b[i].tool);
		pp_int(&p, (int64_t)b[i].size_n);
		pp_double(&p, b[i].size_mean);
		pp_double(&p, b[i].size_m2);
		pp_int(&p, (int64_t)b[i].entropy_n);
		pp_double(&p, b[i].entropy_mean);
		pp_double(&p, b[i].entropy_m2);
		pp_int(&p, updated);
		rc = pg_do(c, "INSERT INTO baselines (tool, size_n, size_mean, size_m2, "
			   "entropy_n, entropy_mean, entropy_m2, updated) VALUES ($1, $2, $3, $4, "
			   "$5, $6, $7, $8) ON CONFLICT (tool) DO UPDATE SET size_n = "
			   "excluded.size_n, size_mean = excluded.size_mean, size_m2 = "
			   "excluded.size_m2, entropy_n = excluded.entropy_n, entropy_mean = "
			   "excluded.entropy_mean, entropy_m2 = excluded.entropy_m2, updated = "
			   "excluded.updated", &p, "baselines", NULL, err);
	}
	rc = pg_end(c, rc, err);
	pg_give(st, c);
	return rc;
}

int pg_baselines_load(struct tg_store *st, struct tg_baseline **out, size_t *n,
		      struct tg_error *err)
{
	struct tg_baseline *all = NULL;
	PGresult *r;
	int rows, i;

	*out = NULL;
	*n = 0;
	if (pg_one(st, "SELECT tool, size_n, size_mean, size_m2, entropy_n, entropy_mean, "
		   "entropy_m2 FROM baselines", NULL, "baselines", &r, NULL, err) < 0)
		return -1;
	rows = PQntuples(r);
	if (rows > 0 && !(all = calloc((size_t)rows, sizeof(*all)))) {
		PQclear(r);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	for (i = 0; i < rows; i++) {
		struct tg_baseline *b = &all[i];

		pg_copy(b->tool, sizeof(b->tool), r, i, 0);
		b->size_n = (uint64_t)pg_int(r, i, 1);
		b->size_mean = pg_double(r, i, 2);
		b->size_m2 = pg_double(r, i, 3);
		b->entropy_n = (uint64_t)pg_int(r, i, 4);
		b->entropy_mean = pg_double(r, i, 5);
		b->entropy_m2 = pg_double(r, i, 6);
	}
	PQclear(r);
	*out = all;
	*n = (size_t)rows;
	return 0;
}

/* ---- upstream pins ------------------------------------------------------------ */

#define PIN_COLUMNS "upstream, tool, sha256, definition, pinned_at, pinned_by"

/* Row i of a SELECT PIN_COLUMNS into p: -1 out of memory. */
static int pin_row(const PGresult *r, int i, struct tg_pin *p)
{
	memset(p, 0, sizeof(*p));
	pg_copy(p->upstream, sizeof(p->upstream), r, i, 0);
	pg_copy(p->tool, sizeof(p->tool), r, i, 1);
	pg_copy(p->sha256, sizeof(p->sha256), r, i, 2);
	p->pinned_at = pg_int(r, i, 4);
	pg_copy(p->pinned_by, sizeof(p->pinned_by), r, i, 5);
	p->definition = strdup(PQgetvalue(r, i, 3)); /* "" for NULL, as SQLite's */
	return p->definition ? 0 : -1;
}

int pg_pin_get(struct tg_store *st, const char *upstream, const char *tool, struct tg_pin *pin,
	       struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r;
	int rc = 0;

	pp_text(&p, upstream);
	pp_text(&p, tool);
	if (pg_one(st, "SELECT " PIN_COLUMNS " FROM upstream_pins WHERE upstream = $1 AND "
		   "tool = $2", &p, "pins", &r, NULL, err) < 0)
		return -1;
	if (PQntuples(r) == 0) {
		rc = 1;
	} else if (pin_row(r, 0, pin) < 0) {
		tg_pin_release(pin);
		rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	PQclear(r);
	return rc;
}

/* The pins of p's upstream other than p's tool, on c inside the caller's
 * transaction, which holds the upstream's lock: OUT *n. */
static int pins_besides(PGconn *c, const struct tg_pin *pin, int64_t *n, struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r;

	pp_text(&p, pin->upstream);
	pp_text(&p, pin->tool);
	r = pg_run(c, "SELECT count(*) FROM upstream_pins WHERE upstream = $1 AND tool <> $2", &p,
		   "pins", err);
	if (!r)
		return -1;
	*n = PQntuples(r) == 1 ? pg_int(r, 0, 0) : 0;
	PQclear(r);
	return 0;
}

int pg_pin_set(struct tg_store *st, const struct tg_pin *pin, struct tg_error *err)
{
	char name[sizeof("pins:") + sizeof(pin->upstream)];
	struct pg_params p = { 0 };
	int64_t others = 0;
	PGconn *c;
	int rc;

	snprintf(name, sizeof(name), "pins:%s", pin->upstream);
	c = pg_take(st, err);
	if (!c)
		return -1;
	rc = pg_begin(c, err);
	/* the count and the insert one step: no other gateway adds a pin to
	 * this upstream between them */
	if (rc == 0)
		rc = pg_lock(c, name, err);
	if (rc == 0)
		rc = pins_besides(c, pin, &others, err);
	if (rc == 0 && others >= TG_PIN_MAX_TOOLS)
		rc = tg_error_set(err, TG_ERR_LIMIT, "pins: upstream %s already has %d pins",
				  pin->upstream, TG_PIN_MAX_TOOLS);
	if (rc == 0) {
		pp_text(&p, pin->upstream);
		pp_text(&p, pin->tool);
		pp_text(&p, pin->sha256);
		pp_text(&p, pin->definition);
		pp_int(&p, pin->pinned_at);
		pp_text(&p, pin->pinned_by);
		rc = pg_do(c, "INSERT INTO upstream_pins (" PIN_COLUMNS ") VALUES ($1, $2, $3, $4, "
			   "$5, $6) ON CONFLICT (upstream, tool) DO UPDATE SET sha256 = "
			   "excluded.sha256, definition = excluded.definition, pinned_at = "
			   "excluded.pinned_at, pinned_by = excluded.pinned_by", &p, "pins", NULL,
			   err);
	}
	rc = pg_end(c, rc, err);
	pg_give(st, c);
	return rc;
}

int pg_pin_delete(struct tg_store *st, const char *upstream, const char *tool,
		  struct tg_error *err)
{
	struct pg_params p = { 0 };
	uint64_t changed = 0;

	pp_text(&p, upstream);
	pp_text(&p, tool);
	if (pg_one(st, "DELETE FROM upstream_pins WHERE upstream = $1 AND tool = $2", &p, "pins",
		   NULL, &changed, err) < 0)
		return -1;
	return changed == 0 ? 1 : 0;
}

int pg_pin_list(struct tg_store *st, const char *upstream, struct tg_pin **out, size_t *n,
		struct tg_error *err)
{
	struct pg_params p = { 0 };
	struct tg_pin *list = NULL;
	PGresult *r;
	int rows, i, rc = 0;

	*out = NULL;
	*n = 0;
	pp_text(&p, upstream);
	/* the bound of pin_set, again: a database written otherwise still
	 * answers at most this many; COLLATE "C": by tool name byte for
	 * byte, as SQLite's BINARY, whatever the database's collation */
	if (pg_one(st, "SELECT " PIN_COLUMNS " FROM upstream_pins WHERE upstream = $1 ORDER BY "
		   "tool COLLATE \"C\" LIMIT " NUMBER(TG_PIN_MAX_TOOLS), &p, "pins", &r, NULL,
		   err) < 0)
		return -1;
	rows = PQntuples(r);
	if (rows > 0 && !(list = calloc((size_t)rows, sizeof(*list)))) {
		PQclear(r);
		return tg_error_set(err, TG_ERR_NOMEM, "out of memory");
	}
	for (i = 0; rc == 0 && i < rows; i++) {
		if (pin_row(r, i, &list[i]) < 0) {
			tg_pin_release(&list[i]);
			rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
		} else {
			(*n)++;
		}
	}
	PQclear(r);
	if (rc < 0) {
		while (*n)
			tg_pin_release(&list[--*n]);
		free(list);
		return -1;
	}
	*out = list;
	return 0;
}

/* ---- skill pins ---------------------------------------------------------------- */

int pg_skill_pin_get(struct tg_store *st, const char *name, struct tg_skill_pin *pin,
		     struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r;
	int rc = 0;

	pp_text(&p, name);
	if (pg_one(st, "SELECT name, version, sha256, pinned_at FROM skill_pins WHERE name = $1",
		   &p, "skill pins", &r, NULL, err) < 0)
		return -1;
	if (PQntuples(r) == 0) {
		rc = 1;
	} else {
		pg_copy(pin->name, sizeof(pin->name), r, 0, 0);
		pg_copy(pin->version, sizeof(pin->version), r, 0, 1);
		pg_copy(pin->sha256, sizeof(pin->sha256), r, 0, 2);
		pin->pinned_at = pg_int(r, 0, 3);
	}
	PQclear(r);
	return rc;
}

int pg_skill_pin_set(struct tg_store *st, const struct tg_skill_pin *pin, struct tg_error *err)
{
	struct pg_params p = { 0 };
	PGresult *r;
	PGconn *c;
	int rc;

	c = pg_take(st, err);
	if (!c)
		return -1;
	rc = pg_begin(c, err);
	/* the count and the insert one step, as pin_set's */
	if (rc == 0)
		rc = pg_lock(c, "skill_pins", err);
	if (rc == 0) {
		pp_text(&p, pin->name);
		r = pg_run(c, "SELECT count(*) FROM skill_pins WHERE name <> $1", &p, "skill pins",
			   err);
		if (!r)
			rc = -1;
		else if (PQntuples(r) == 1 && pg_int(r, 0, 0) >= TG_SKILL_PIN_MAX)
			rc = tg_error_set(err, TG_ERR_LIMIT, "skill pins: %d names are pinned "
					  "already", TG_SKILL_PIN_MAX);
		PQclear(r);
	}
	if (rc == 0) {
		p = (struct pg_params){ 0 };
		pp_text(&p, pin->name);
		pp_text(&p, pin->version);
		pp_text(&p, pin->sha256);
		pp_int(&p, pin->pinned_at);
		rc = pg_do(c, "INSERT INTO skill_pins (name, version, sha256, pinned_at) VALUES "
			   "($1, $2, $3, $4) ON CONFLICT (name) DO UPDATE SET version = "
			   "excluded.version, sha256 = excluded.sha256, pinned_at = "
			   "excluded.pinned_at", &p, "skill pins", NULL, err);
	}
	rc = pg_end(c, rc, err);
	pg_give(st, c);
	return rc;
}
