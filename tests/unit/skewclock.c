/*
 * A wall clock the unit tests can put out of step (unit.h,
 * unit_clock_skew): the unit-test binary alone is linked with
 * -Wl,--wrap=time (Makefile, UNIT_WRAP), so every time() of the library's
 * objects returns libc's plus the skew; 0 unless a test sets it. What a
 * test shows with it: that a replica whose clock is wrong judges by the
 * store's clock where it must (docs/STORE.md, "Whose clock").
 */
#include <stdint.h>
#include <time.h>

#include "unit.h"

time_t __real_time(time_t *t);
time_t __wrap_time(time_t *t);

static int64_t skew;

void unit_clock_skew(int64_t seconds)
{
	__atomic_store_n(&skew, seconds, __ATOMIC_RELAXED);
}

time_t __wrap_time(time_t *t)
{
	time_t now = __real_time(NULL) + (time_t)__atomic_load_n(&skew, __ATOMIC_RELAXED);

	if (t)
		*t = now;
	return now;
}
