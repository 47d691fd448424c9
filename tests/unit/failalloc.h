/*
 * Allocation failure injection for the unit tests (tests/unit/failalloc.c,
 * used by test_alloc.c): the unit-test binary is linked with
 * -Wl,--wrap=malloc,... (Makefile), so every allocation the library's
 * objects and the tests make goes through a counter that can fail the Nth.
 * toolgate itself is linked without it.
 */
#ifndef TG_TEST_FAILALLOC_H
#define TG_TEST_FAILALLOC_H

#include <stddef.h>

/* Count the allocations from now on and fail the nth of them (from 1),
 * that one only; n 0: count, fail none. */
void failalloc_arm(unsigned long n);
/* Stop counting; the number of allocations counted since failalloc_arm. */
unsigned long failalloc_disarm(void);
/* Whether the armed allocation was reached (and failed) since the arm. */
int failalloc_failed(void);
/* One allocation: 1 if it is to fail. For allocators the --wrap cannot
 * reach (jansson's and SQLite's, in shared libraries, which the test
 * routes here). */
int failalloc_next(void);
/* malloc through the counter, for json_set_alloc_funcs. */
void *failalloc_malloc(size_t size);

#endif
