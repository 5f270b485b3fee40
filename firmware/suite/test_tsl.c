/*
 * Thread switch latency (reference report 4.5): N threads of equal priority
 * yield in turn. A thread marks T1 just before bench_thread_yield() and T2
 * just after it returns, so T1 of one thread and T2 of the next are adjacent
 * markers around one switch.
 *
 * The first round produces no sample: each thread's first T1 is followed by
 * the next thread's first T1 (a fresh thread starts at its entry, not in a
 * yield), and a T1 followed by another T1 pairs with nothing. Every T2 after
 * that ends exactly one sample until the count is reached; the thread that
 * counts the last one returns, and the T2s the others write on their way out
 * follow no unpaired T1.
 */
#include "suite.h"

static volatile unsigned tsl_samples;
static volatile unsigned tsl_done;

static void tsl_thread(void *arg)
{
	unsigned index = suite_index(arg);
	for (;;) {
		suite_pace();
		LS_MARK(TSL_A, T1, index);
		bench_thread_yield();
		LS_MARK(TSL_A, T2, index);
		if (tsl_done)
			return;
		if (++tsl_samples == SUITE_SAMPLES) {
			tsl_done = 1;
			return;
		}
	}
}

void test_tsl_a(unsigned threads)
{
	SUITE_CHECK(threads >= 2 && threads <= BENCH_MAX_THREADS);
	tsl_samples = 0;
	tsl_done = 0;
	/* Created below main's priority: none runs before all exist. */
	for (unsigned i = 0; i < threads; i++)
		suite_spawn((int)i, SUITE_PRIO_WORK, tsl_thread, i);
	suite_start(LS_TEST_TSL_A, "TSL-a", threads);
	suite_main_priority(SUITE_PRIO_LOW); /* back here when all have returned */
	suite_main_priority(SUITE_PRIO_MAIN);
	suite_end(LS_TEST_TSL_A);
	SUITE_CHECK(tsl_samples == SUITE_SAMPLES);
}
