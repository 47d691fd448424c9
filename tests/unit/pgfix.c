/*
 * A PostgreSQL store for a unit test (unit.h, unit_pg_store): a schema
 * of its own in the cluster TG_TEST_PG names (tests/pg/pg.sh starts one
 * for tests/run.sh), and the URL that puts toolgate's tables in it. The
 * schema is the test's to drop (unit_pg_drop); the cluster goes at the
 * end of the run anyway.
 */
#include <libpq-fe.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit.h"

int unit_on_pg;

static int pg_exec(const char *sql)
{
	PGconn *c = PQconnectdb(getenv("TG_TEST_PG"));
	PGresult *r = NULL;
	int rc = -1;

	if (PQstatus(c) == CONNECTION_OK) {
		PQclear(PQexec(c, "SET client_min_messages = warning"));
		r = PQexec(c, sql);
		rc = r && PQresultStatus(r) == PGRES_COMMAND_OK ? 0 : -1;
	}
	if (rc < 0)
		fprintf(stderr, "%s: %s", sql, PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
	return rc;
}

int unit_pg_store(char *where, size_t wlen, char *schema, size_t slen)
{
	static int made;
	const char *base = getenv("TG_TEST_PG");
	char sql[128];

	if (!base)
		return -1;
	snprintf(schema, slen, "f%d_%d", (int)getpid(), made++);
	snprintf(sql, sizeof(sql), "CREATE SCHEMA %s", schema);
	if ((size_t)snprintf(where, wlen, "%s%soptions=-csearch_path%%3D%s", base,
			     strchr(base, '?') ? "&" : "?", schema) >= wlen)
		return -1;
	return pg_exec(sql);
}

void unit_pg_drop(const char *schema)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "DROP SCHEMA %s CASCADE", schema);
	pg_exec(sql);
}
