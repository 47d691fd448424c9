/*
 * A small test runner: each test is a function returning 0 on success,
 * run in its own forked process with a time limit (a seccomp test may kill
 * its own process), printing "ok - unit/NAME" or "not ok - unit/NAME: why".
 */
#ifndef TG_TEST_UNIT_H
#define TG_TEST_UNIT_H

#include <stdio.h>

#define CHECK(cond)                                                             \
	do {                                                                    \
		if (!(cond)) {                                                  \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,  \
				__LINE__, #cond);                               \
			return -1;                                              \
		}                                                               \
	} while (0)

struct unit_test {
	const char *name;
	int (*fn)(void);
};

#define UNIT_TESTS_END { NULL, NULL }

/* What a test returns when what it needs is not there: "skip - unit/NAME"
 * with unit_skip_why's reason, neither a pass nor a failure. */
#define UNIT_SKIP 77
const char *unit_skip_why(const char *name);

/* A file tests/unit/test_NAME.c defines
 *     const struct unit_test NAME_tests[] = { { "NAME/what", fn }, ..., UNIT_TESTS_END };
 * and nothing else registers it: the Makefile finds the file, main.c runs it. */

/* 1 under make check-long (TOOLGATE_CHECK_LONG=1): a sweep of every
 * allocation failure, say, rather than a sample of them; else 0. */
int unit_long(void);
/* A fresh directory /tmp/tg-unit-NAME-XXXXXX in dir (64 bytes); 0 or -1. */
int unit_tmpdir(char *dir, const char *name);
/* tests/upstream (the fake MCP server's directory), absolute, into out
 * (PATH_MAX bytes): from the working directory (the tree's root), else
 * from the test binary's (build/tests/). 0 or -1. */
int unit_upstream_dir(char *out);
/* text written to dir/name (dir NULL: to the path name), then given
 * mode; 0 or -1. */
int unit_put(const char *dir, const char *name, const char *text, unsigned mode);
/* upstreams/fake.json in dir, loaded into *u: a stdio upstream running
 * /usr/bin/python3 /srv/fake/SERVER, server a script of tests/upstream/
 * (bound at /srv/fake) and its arguments as the inside of a JSON array
 * after the script's opening quote ("fake_server.py\", \"runner\""), extra
 * (JSON members, "" for none) after the mount. 0, or -1 (said on stderr). */
struct tg_upstream;
int unit_declare_upstream(const char *dir, const char *server, const char *extra,
			  struct tg_upstream **u);
/* Every time() of the library from now on returns the host's plus seconds
 * (tests/unit/skewclock.c): this process's wall clock put out of step. */
#include <stdint.h>
void unit_clock_skew(int64_t seconds);
/* With unit_on_pg set, the gate's fixture (gatefix.h) keeps its store in
 * PostgreSQL: unit_pg_store makes a schema of the test's own in the
 * cluster TG_TEST_PG names (tests/unit/pgfix.c), its name in schema and
 * the URL that puts the tables there in where: 0, or -1 (no cluster). */
extern int unit_on_pg;
int unit_pg_store(char *where, size_t wlen, char *schema, size_t slen);
void unit_pg_drop(const char *schema);
/* Remove dir and everything in it. */
void unit_rmtree(const char *dir);
/* A strict tier's sandbox spec (tg_sandbox_spec_new), or NULL. */
struct tg_sandbox_spec *unit_spec(void);

#endif
