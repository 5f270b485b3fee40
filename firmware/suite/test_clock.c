/*
 * Clock ISR, the method of reference report 4.12: the main thread times a
 * fixed piece of work, T1 before and T2 after it (arg = iteration). Most
 * samples are the work alone; those the kernel tick interrupted are longer
 * by the tick's whole cost (entry latency, the clock ISR, dispatch back), so
 * the difference of the two bands is the clock ISR's execution time.
 *
 * After T2 the thread writes PARAM with the number of ticks counted from just
 * before T1 to just after T2: a hint that sorts samples into the two bands
 * (a tick in the few instructions outside T1..T2 is counted too).
 */
#include "suite.h"

/* The work: a counted loop the compiler cannot remove or shorten. */
static void fixed_work(void)
{
	for (unsigned i = 0; i < SUITE_CLK_WORK; i++) {
		SUITE_BUSY();
		__asm__ volatile("");
	}
}

void test_clock_isr(void)
{
	suite_start(LS_TEST_CLOCK_ISR, "CLK-a", 1);
	for (unsigned i = 0; i < SUITE_CLK_SAMPLES; i++) {
		suite_pace();
		bench_ticks_t before = bench_tick_count();
		LS_MARK(CLOCK_ISR, T1, i);
		fixed_work();
		LS_MARK(CLOCK_ISR, T2, i);
		bench_ticks_t ticks = bench_tick_count() - before;
		LS_MARK(CLOCK_ISR, PARAM, ticks);
	}
	suite_end(LS_TEST_CLOCK_ISR);
}
