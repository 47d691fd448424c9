/*
 * The SQLite backend's upstream pins (docs/STORE.md, "Upstream pins";
 * docs/UPSTREAMS.md, "Pins"): table upstream_pins, one row an upstream's
 * tool, holding the accepted definition's canonical text and its hash;
 * and its skill pins (docs/STORE.md, "Skill pins"): table skill_pins, one
 * row a skill's name, its version and manifest's digest.
 *
 * Must never: hold more than TG_PIN_MAX_TOOLS pins of one upstream or
 * TG_SKILL_PIN_MAX skill pins (the count and the insert are one
 * transaction), or check a caller's input (the front did).
 */
#include <pthread.h>
#include "util/sqlite.h"
#include <stdlib.h>
#include <string.h>

#include "store/sqlite_int.h"

#define PIN_COLUMNS "upstream, tool, sha256, definition, pinned_at, pinned_by"
#define TEXT_OF(x) #x
#define NUMBER(x) TEXT_OF(x)

/* A row of PIN_COLUMNS into p; -1 out of memory. */
static int pin_fill(sqlite3_stmt *s, void *out)
{
	struct tg_pin *p = out;
	const unsigned char *def = sqlite3_column_text(s, 3);

	memset(p, 0, sizeof(*p));
	store_copy_text(p->upstream, sizeof(p->upstream), sqlite3_column_text(s, 0));
	store_copy_text(p->tool, sizeof(p->tool), sqlite3_column_text(s, 1));
	store_copy_text(p->sha256, sizeof(p->sha256), sqlite3_column_text(s, 2));
	p->pinned_at = sqlite3_column_int64(s, 4);
	store_copy_text(p->pinned_by, sizeof(p->pinned_by), sqlite3_column_text(s, 5));
	p->definition = strdup(def ? (const char *)def : "");
	return p->definition ? 0 : -1;
}

static void pin_drop(void *p)
{
	tg_pin_release(p);
}

/* sql prepared with ?1 upstream and ?2 tool bound (each unless NULL);
 * -1 and err. */
static int prepare_pin(struct tg_store *st, const char *sql, sqlite3_stmt **s,
		       const char *upstream, const char *tool, struct tg_error *err)
{
	if (sqlite3_prepare_v2(sq_db(st), sql, -1, s, NULL) != SQLITE_OK)
		return store_db_error(err, sq_db(st), "pins");
	if (upstream)
		sqlite3_bind_text(*s, 1, upstream, -1, SQLITE_STATIC);
	if (tool)
		sqlite3_bind_text(*s, 2, tool, -1, SQLITE_STATIC);
	return 0;
}

int sq_pin_get(struct tg_store *st, const char *upstream, const char *tool, struct tg_pin *pin,
	       struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = prepare_pin(st, "SELECT " PIN_COLUMNS " FROM upstream_pins WHERE upstream = ?1 AND "
			 "tool = ?2", &s, upstream, tool, err);
	if (rc == 0) {
		switch (sqlite3_step(s)) {
		case SQLITE_ROW:
			if (pin_fill(s, pin) < 0) {
				tg_pin_release(pin);
				rc = tg_error_set(err, TG_ERR_NOMEM, "out of memory");
			}
			break;
		case SQLITE_DONE:
			rc = 1;
			break;
		default:
			rc = store_db_error(err, sq_db(st), "pins");
		}
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

/* The pins of p's upstream other than p's tool (the caller holds the
 * write transaction): OUT *n. */
static int pins_besides(struct tg_store *st, const struct tg_pin *p, int64_t *n,
			struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	if (prepare_pin(st, "SELECT count(*) FROM upstream_pins WHERE upstream = ?1 AND tool != ?2",
			&s, p->upstream, p->tool, err) < 0)
		return -1;
	rc = sqlite3_step(s) == SQLITE_ROW ? 0 : store_db_error(err, sq_db(st), "pins");
	if (rc == 0)
		*n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return rc;
}

int sq_pin_set(struct tg_store *st, const struct tg_pin *p, struct tg_error *err)
{
	sqlite3_stmt *s = NULL;
	int64_t others = 0;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = store_exec(st, "BEGIN IMMEDIATE", err);
	if (rc == 0)
		rc = pins_besides(st, p, &others, err);
	if (rc == 0 && others >= TG_PIN_MAX_TOOLS)
		rc = tg_error_set(err, TG_ERR_LIMIT, "pins: upstream %s already has %d pins",
				  p->upstream, TG_PIN_MAX_TOOLS);
	if (rc == 0)
		rc = prepare_pin(st, "INSERT OR REPLACE INTO upstream_pins (" PIN_COLUMNS ") VALUES "
				 "(?1, ?2, ?3, ?4, ?5, ?6)", &s, p->upstream, p->tool, err);
	if (rc == 0) {
		sqlite3_bind_text(s, 3, p->sha256, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 4, p->definition, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 5, p->pinned_at);
		sqlite3_bind_text(s, 6, p->pinned_by, -1, SQLITE_STATIC);
		if (sqlite3_step(s) != SQLITE_DONE)
			rc = store_db_error(err, sq_db(st), "pins");
	}
	sqlite3_finalize(s);
	if (rc == 0 || sqlite3_get_autocommit(sq_db(st)) == 0)
		rc = store_end_tx(st, rc, err);
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_pin_delete(struct tg_store *st, const char *upstream, const char *tool,
		  struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = prepare_pin(st, "DELETE FROM upstream_pins WHERE upstream = ?1 AND tool = ?2", &s,
			 upstream, tool, err);
	if (rc == 0) {
		if (sqlite3_step(s) != SQLITE_DONE)
			rc = store_db_error(err, sq_db(st), "pins");
		else if (sqlite3_changes(sq_db(st)) == 0)
			rc = 1;
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_pin_list(struct tg_store *st, const char *upstream, struct tg_pin **out, size_t *n,
		struct tg_error *err)
{
	void *list = NULL;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	/* the bound of pin_set, again: a database written otherwise still
	 * answers at most this many */
	rc = store_select_list(st, "SELECT " PIN_COLUMNS " FROM upstream_pins WHERE upstream = ?1 "
			       "ORDER BY tool LIMIT " NUMBER(TG_PIN_MAX_TOOLS), upstream, sizeof(struct tg_pin),
			       pin_fill, pin_drop, &list, n, "pins", err);
	pthread_mutex_unlock(sq_lock(st));
	*out = list;
	return rc;
}

/* ---- skill pins ---- */

int sq_skill_pin_get(struct tg_store *st, const char *name, struct tg_skill_pin *pin,
		     struct tg_error *err)
{
	sqlite3_stmt *s;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = prepare_pin(st, "SELECT name, version, sha256, pinned_at FROM skill_pins WHERE "
			 "name = ?1", &s, name, NULL, err);
	if (rc == 0) {
		switch (sqlite3_step(s)) {
		case SQLITE_ROW:
			store_copy_text(pin->name, sizeof(pin->name), sqlite3_column_text(s, 0));
			store_copy_text(pin->version, sizeof(pin->version),
					sqlite3_column_text(s, 1));
			store_copy_text(pin->sha256, sizeof(pin->sha256), sqlite3_column_text(s, 2));
			pin->pinned_at = sqlite3_column_int64(s, 3);
			break;
		case SQLITE_DONE:
			rc = 1;
			break;
		default:
			rc = store_db_error(err, sq_db(st), "skill pins");
		}
		sqlite3_finalize(s);
	}
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}

int sq_skill_pin_set(struct tg_store *st, const struct tg_skill_pin *p, struct tg_error *err)
{
	sqlite3_stmt *s = NULL;
	int rc;

	pthread_mutex_lock(sq_lock(st));
	rc = store_exec(st, "BEGIN IMMEDIATE", err);
	if (rc == 0)
		rc = prepare_pin(st, "SELECT count(*) FROM skill_pins WHERE name != ?1", &s, p->name,
				 NULL, err);
	if (rc == 0) {
		if (sqlite3_step(s) != SQLITE_ROW)
			rc = store_db_error(err, sq_db(st), "skill pins");
		else if (sqlite3_column_int64(s, 0) >= TG_SKILL_PIN_MAX)
			rc = tg_error_set(err, TG_ERR_LIMIT, "skill pins: %d names are pinned already",
					  TG_SKILL_PIN_MAX);
		sqlite3_finalize(s);
		s = NULL;
	}
	if (rc == 0)
		rc = prepare_pin(st, "INSERT OR REPLACE INTO skill_pins (name, version, sha256, "
				 "pinned_at) VALUES (?1, ?2, ?3, ?4)", &s, p->name, p->version, err);
	if (rc == 0) {
		sqlite3_bind_text(s, 3, p->sha256, -1, SQLITE_STATIC);
		sqlite3_bind_int64(s, 4, p->pinned_at);
		if (sqlite3_step(s) != SQLITE_DONE)
			rc = store_db_error(err, sq_db(st), "skill pins");
	}
	sqlite3_finalize(s);
	if (rc == 0 || sqlite3_get_autocommit(sq_db(st)) == 0)
		rc = store_end_tx(st, rc, err);
	pthread_mutex_unlock(sq_lock(st));
	return rc;
}
