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

/* A fresh directory /tmp/tg-unit-NAME-XXXXXX in dir (64 bytes); 0 or -1. */
int unit_tmpdir(char *dir, const char *name);
/* Remove dir and everything in it. */
void unit_rmtree(const char *dir);

extern const struct unit_test parse_tests[];
extern const struct unit_test spec_tests[];
extern const struct unit_test seccomp_tests[];
extern const struct unit_test run_tests[];
extern const struct unit_test cgroup_tests[];
extern const struct unit_test landlock_tests[];
extern const struct unit_test schema_tests[];
extern const struct unit_test contract_tests[];
extern const struct unit_test param_tests[];
extern const struct unit_test catalog_tests[];
extern const struct unit_test result_tests[];
extern const struct unit_test file_tests[];
extern const struct unit_test store_tests[];
extern const struct unit_test auth_tests[];
extern const struct unit_test task_tests[];
extern const struct unit_test overlay_tests[];
extern const struct unit_test dirs_tests[];
extern const struct unit_test egress_tests[];
extern const struct unit_test pool_tests[];
extern const struct unit_test audit_tests[];
extern const struct unit_test metrics_tests[];
extern const struct unit_test trace_tests[];
extern const struct unit_test scan_tests[];
extern const struct unit_test redact_tests[];
extern const struct unit_test anomaly_tests[];
extern const struct unit_test anomaly_walk_tests[];
extern const struct unit_test anomaly_unicode_tests[];
extern const struct unit_test runs_tests[];

#endif
