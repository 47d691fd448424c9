/*
 * The PostgreSQL backend's schema (docs/STORE.md, "PostgreSQL"), kept
 * apart from pg.c so that the reader of a query finds its tables in one
 * place. pg_migrations[i] brings the schema to pg_migrations[i].version;
 * the first makes, at once, what SQLite's migrations 1 to 12 made one
 * at a time (no PostgreSQL database older than the backend exists).
 * Never edit a migration that has shipped: append one, and raise
 * TG_STORE_SCHEMA with SQLite's.
 *
 * idempotency.claim is a random number a claim writes with its row: a
 * claim whose connection dropped before its answer came reads it back on
 * another to learn whether it was made (pg_idem.c).
 *
 * audit_anchors keeps each replica's audit log's head (docs/AUDIT.md,
 * "Replicas and anchors"), one row a replica's log (its chain: the hash
 * of its first record), moved only forward.
 *
 * Types: a number is bigint (unix seconds, counts); a result kept byte
 * for byte (an idempotency record's) is bytea; every other text is text.
 * Ticket events are numbered by the one row of ticket_event_counter,
 * which the trigger updates: the row's lock makes every transaction that
 * moves a ticket commit its events in the order of their numbers, so a
 * reader after number N never later finds one below it (a sequence would
 * hand out numbers that commit out of order).
 */
#ifndef TG_STORE_PG_SCHEMA_H
#define TG_STORE_PG_SCHEMA_H

struct pg_migration {
	int version;
	const char *sql;
};

static const struct pg_migration pg_migrations[] = {
	{ 12,
	  "CREATE TABLE toolgate_meta ("
	  " key text PRIMARY KEY,"
	  " value text NOT NULL);"
	  "CREATE TABLE idempotency ("
	  " principal text NOT NULL,"
	  " tool text NOT NULL,"
	  " key text NOT NULL,"
	  " fingerprint text NOT NULL,"
	  " state text NOT NULL CHECK (state IN ('running', 'done')),"
	  " result bytea,"
	  " runner text NOT NULL,"
	  " claim bigint,"
	  " created bigint NOT NULL,"
	  " expires bigint NOT NULL,"
	  " PRIMARY KEY (principal, tool, key));"
	  "CREATE INDEX idempotency_expires ON idempotency (expires);"
	  "CREATE TABLE revocations ("
	  " jti text PRIMARY KEY,"
	  " expires bigint NOT NULL);"
	  "CREATE INDEX revocations_expires ON revocations (expires);"
	  "CREATE TABLE tickets ("
	  " id text PRIMARY KEY,"
	  " principal text NOT NULL,"
	  " tool text NOT NULL,"
	  " args_sha256 text NOT NULL,"
	  " preview text,"
	  " state text NOT NULL CHECK (state IN ('pending', 'approved', 'rejected', 'expired',"
	  "  'cancelled', 'executed', 'failed', 'compensated')),"
	  " reason text,"
	  " approver text,"
	  " created bigint NOT NULL,"
	  " decided bigint,"
	  " expires bigint NOT NULL,"
	  " arguments text,"
	  " covers text,"
	  " findings text);"
	  "CREATE INDEX tickets_state ON tickets (state, created);"
	  "CREATE INDEX tickets_tool ON tickets (tool, args_sha256, created);"
	  "CREATE INDEX tickets_principal ON tickets (principal, state);"
	  "CREATE TABLE rollbacks ("
	  " call_id text PRIMARY KEY,"
	  " state text NOT NULL CHECK (state IN ('running', 'succeeded', 'failed')),"
	  " requested_by text NOT NULL,"
	  " attempts bigint NOT NULL,"
	  " detail text,"
	  " started bigint NOT NULL,"
	  " ended bigint,"
	  " runner text);"
	  "CREATE TABLE sagas ("
	  " id text PRIMARY KEY,"
	  " state text NOT NULL CHECK (state IN ('running', 'done', 'compensating', 'compensated',"
	  "  'failed')),"
	  " runner text NOT NULL,"
	  " created bigint NOT NULL,"
	  " updated bigint NOT NULL);"
	  "CREATE INDEX sagas_state ON sagas (state);"
	  "CREATE TABLE saga_steps ("
	  " saga_id text NOT NULL REFERENCES sagas (id),"
	  " n bigint NOT NULL,"
	  " tool text NOT NULL,"
	  " call_id text NOT NULL,"
	  " state text NOT NULL CHECK (state IN ('pending', 'running', 'done', 'failed',"
	  "  'compensated', 'compensation_failed')),"
	  " arguments text NOT NULL,"
	  " result text,"
	  " PRIMARY KEY (saga_id, n));"
	  "CREATE TABLE baselines ("
	  " tool text PRIMARY KEY,"
	  " size_n bigint NOT NULL, size_mean double precision NOT NULL,"
	  " size_m2 double precision NOT NULL,"
	  " entropy_n bigint NOT NULL, entropy_mean double precision NOT NULL,"
	  " entropy_m2 double precision NOT NULL,"
	  " updated bigint NOT NULL);"
	  "CREATE TABLE upstream_pins ("
	  " upstream text NOT NULL,"
	  " tool text NOT NULL,"
	  " sha256 text NOT NULL,"
	  " definition text NOT NULL,"
	  " pinned_at bigint NOT NULL,"
	  " pinned_by text NOT NULL,"
	  " PRIMARY KEY (upstream, tool));"
	  "CREATE TABLE webhook_cursors ("
	  " name text PRIMARY KEY,"
	  " seq bigint NOT NULL);"
	  "CREATE TABLE skill_pins ("
	  " name text PRIMARY KEY,"
	  " version text NOT NULL,"
	  " sha256 text NOT NULL,"
	  " pinned_at bigint NOT NULL);"
	  "CREATE TABLE ticket_event_counter ("
	  " one boolean PRIMARY KEY DEFAULT true CHECK (one),"
	  " n bigint NOT NULL);"
	  "INSERT INTO ticket_event_counter (n) VALUES (0);"
	  "CREATE TABLE ticket_events ("
	  " seq bigint PRIMARY KEY,"
	  " ticket text NOT NULL,"
	  " state text NOT NULL,"
	  " tool text NOT NULL,"
	  " principal text NOT NULL,"
	  " approver text,"
	  " created bigint NOT NULL,"
	  " decided bigint,"
	  " expires bigint NOT NULL,"
	  " at bigint NOT NULL);"
	  "CREATE INDEX ticket_events_at ON ticket_events (at);"
	  "CREATE FUNCTION toolgate_ticket_event() RETURNS trigger LANGUAGE plpgsql AS $f$"
	  " DECLARE s bigint;"
	  " BEGIN"
	  "  IF TG_OP = 'UPDATE' AND NEW.state IS NOT DISTINCT FROM OLD.state THEN"
	  "   RETURN NULL;"
	  "  END IF;"
	  "  UPDATE ticket_event_counter SET n = n + 1 RETURNING n INTO s;"
	  "  INSERT INTO ticket_events (seq, ticket, state, tool, principal, approver, created,"
	  "   decided, expires, at) VALUES (s, NEW.id, NEW.state, NEW.tool, NEW.principal,"
	  "   NEW.approver, NEW.created, NEW.decided, NEW.expires,"
	  "   floor(extract(epoch FROM now()))::bigint);"
	  "  PERFORM pg_notify('toolgate_ticket_events', s::text);"
	  "  RETURN NULL;"
	  " END $f$;"
	  "CREATE TRIGGER ticket_created AFTER INSERT ON tickets"
	  " FOR EACH ROW EXECUTE FUNCTION toolgate_ticket_event();"
	  "CREATE TRIGGER ticket_moved AFTER UPDATE OF state ON tickets"
	  " FOR EACH ROW EXECUTE FUNCTION toolgate_ticket_event();"
	  "CREATE TABLE audit_anchors ("
	  " replica text NOT NULL,"
	  " chain text NOT NULL,"
	  " seq bigint NOT NULL,"
	  " hash text NOT NULL,"
	  " at bigint NOT NULL,"
	  " PRIMARY KEY (replica, chain));"
	  "CREATE INDEX audit_anchors_at ON audit_anchors (replica, at);" },
};

#endif
