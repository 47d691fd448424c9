/*
 * The gateway's sandboxes shared (src/gate/runs.c): at most so many at
 * once, a principal at most its share; another principal gets a place
 * while one is at its share; a place given back wakes a waiter; a caller
 * that gives up stops waiting.
 */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "gate/gate_int.h"
#include "unit.h"

struct taker {
	struct gate_runs *r;
	const char *principal;
	int cancel_fd, rc, done;
};

static void *take(void *arg)
{
	struct taker *t = arg;

	t->rc = gate_runs_take(t->r, t->principal, t->cancel_fd, 0);
	__atomic_store_n(&t->done, 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/* 1 once t is done, looking every 10 ms for at most ms. */
static int done_within(struct taker *t, int ms)
{
	for (; ms > 0 && !__atomic_load_n(&t->done, __ATOMIC_SEQ_CST); ms -= 10)
		usleep(10000);
	return __atomic_load_n(&t->done, __ATOMIC_SEQ_CST);
}

static int shared_fairly(void)
{
	struct gate_runs r;
	struct taker a3 = { &r, "agent-a", -1, -1, 0 }, c1 = { &r, "agent-c", -1, -1, 0 };
	pthread_t ta, tc;
	int cancel[2], i;

	CHECK(gate_runs_init(&r, 4, 2) == 0);
	CHECK(gate_runs_take(&r, "agent-a", -1, 0) == 0 && gate_runs_take(&r, "agent-a", -1, 0) == 0);
	/* a is at its share: b still gets in */
	CHECK(gate_runs_take(&r, "agent-b", -1, 0) == 0 && gate_runs_active(&r) == 3);
	/* a's third waits, however often others' places come and go (each
	 * wakes it: its wait is by the clock, not by the wake-ups) */
	CHECK(pthread_create(&ta, NULL, take, &a3) == 0);
	CHECK(!done_within(&a3, 100));
	for (i = 0; i < 300; i++) {
		CHECK(gate_runs_take(&r, "agent-d", -1, 0) == 0);
		gate_runs_give(&r, "agent-d");
		if (i % 30 == 0)
			usleep(2000);
	}
	CHECK(!done_within(&a3, 100));
	/* and gets the place one of a's gives back */
	gate_runs_give(&r, "agent-a");
	CHECK(done_within(&a3, 2000) && a3.rc == 0);
	pthread_join(ta, NULL);
	CHECK(gate_runs_take(&r, "agent-b", -1, 0) == 0 && gate_runs_active(&r) == 4);
	/* all four taken: c waits until it gives up */
	CHECK(pipe(cancel) == 0);
	c1.cancel_fd = cancel[0];
	CHECK(pthread_create(&tc, NULL, take, &c1) == 0);
	CHECK(!done_within(&c1, 300));
	CHECK(write(cancel[1], "x", 1) == 1);
	CHECK(done_within(&c1, 2000) && c1.rc == 2);
	pthread_join(tc, NULL);
	close(cancel[0]);
	close(cancel[1]);
	/* given back, each principal's count goes down with the total */
	gate_runs_give(&r, "agent-a");
	gate_runs_give(&r, "agent-a");
	gate_runs_give(&r, "agent-b");
	gate_runs_give(&r, "agent-b");
	gate_runs_give(&r, "agent-b"); /* one too many: ignored */
	CHECK(gate_runs_active(&r) == 0);
	CHECK(gate_runs_take(&r, "agent-c", -1, 0) == 0 && gate_runs_take(&r, "agent-c", -1, 0) == 0);
	gate_runs_release(&r);
	/* the defaults: 32, a quarter each */
	CHECK(gate_runs_init(&r, 0, 0) == 0 && r.max == 32 && r.per_principal == 8);
	gate_runs_release(&r);
	CHECK(gate_runs_init(&r, 3, 9) == 0 && r.per_principal == 3);
	gate_runs_release(&r);
	return 0;
}

const struct unit_test runs_tests[] = {
	{ "runs/shared_fairly", shared_fairly },
	UNIT_TESTS_END,
};
