/*
 * Interrupt handling (reference report 4.2 and 4.3): the appliance's IRQ
 * generator interrupts the DUT about every 50 us on SUITE_IRQ.
 *
 * Both tests open the line the same way: START, acknowledge, enable. An edge
 * before the acknowledge is cleared unhandled (its irq event then has no
 * ISR_ENTRY before the next edge and pairs with nothing); an edge between
 * the acknowledge and the enable is taken at the enable, a true latency of
 * an IRQ that met a masked line. So every handler call of the window answers
 * an edge of the window.
 */
#include "suite.h"

#define SEM_IDL 0
#define SEM_IL 1 /* SUITE_IL_SEM_GIVE's */

static volatile unsigned isr_calls;  /* handler calls since the line was opened */
static volatile unsigned idl_woken;  /* IDL-b: T2 markers written */

static void open_irq_line(bench_isr_t handler)
{
	isr_calls = 0;
	SUITE_CHECK(bench_irq_attach(SUITE_IRQ, handler, NULL) == BENCH_SUCCESS);
	bench_irq_ack(SUITE_IRQ);
	SUITE_CHECK(bench_irq_enable(SUITE_IRQ) == BENCH_SUCCESS);
}

/* ---------------------------------------------------------------- IL-a-1 / IDL-a-1 */

/* No rescheduling: mark, acknowledge, mark. */
SUITE_ISR(il_isr) static void il_isr(void *arg)
{
	(void)arg;
	unsigned n = isr_calls;
	LS_MARK(IL_A, ISR_ENTRY, n);
	bench_irq_ack(SUITE_IRQ);
	isr_calls = n + 1;
	LS_MARK(IL_A, ISR_EXIT, n);
}

/*
 * The high-priority thread: polls the handler count, writes THREAD as soon
 * as it sees a new call (the end of the IDL-a sample: the poll loop is a load
 * and a branch, so that marker follows the return within one iteration), and
 * a THREAD heartbeat every SUITE_IL_HEARTBEAT polls so that the IRQ also
 * lands on marker stores. A thread that marked without pause would overflow
 * the appliance's FIFO and lose every sample to it. With SUITE_IL_SEM_GIVE
 * the heartbeat also runs a kernel path (a give with nobody waiting, a take
 * that does not block) that the IRQ can meet.
 */
static void il_thread(void *arg)
{
	unsigned index = suite_index(arg);
	unsigned seen = 0, polls = 0, beats = 0;
	suite_irq_watch_t watch;

	suite_start(LS_TEST_IL_A, "IL-a", 1);
	if (SUITE_IL_SEM_GIVE)
		SUITE_CHECK(bench_sem_create(SEM_IL, 0, 1) == BENCH_SUCCESS);
	open_irq_line(il_isr);
	suite_irq_watch_start(&watch, 0, SUITE_SAMPLES);
	while (seen < SUITE_SAMPLES) {
		SUITE_BUSY();
		unsigned now = isr_calls;
		if (now != seen) {
			LS_MARK(IL_A, THREAD, index);
			seen = now;
			polls = 0;
		} else if (++polls == SUITE_IL_HEARTBEAT) {
			LS_MARK(IL_A, THREAD, index);
			if (SUITE_IL_SEM_GIVE) {
				(void)bench_sem_give(SEM_IL);
				(void)bench_sem_take(SEM_IL, BENCH_NO_WAIT);
			}
			polls = 0;
			/* Off the fast path, after the marker. The check costs about 50 cycles: a
			 * flood of a heartbeat every few polls (the loss tests' SUITE_IL_HEARTBEAT=4:
			 * a marker every 65 cycles, every 113 with a check each time, within the
			 * link's rate) checks every SUITE_IL_WATCH_EVERY-th heartbeat only. */
			if (++beats % SUITE_IL_WATCH_EVERY == 0)
				suite_irq_watch(&watch, now);
		}
	}
	bench_irq_disable(SUITE_IRQ);
	if (SUITE_IL_SEM_GIVE)
		SUITE_CHECK(bench_sem_delete(SEM_IL) == BENCH_SUCCESS);
	suite_end(LS_TEST_IL_A);
}

void test_il_a(void)
{
	/* More urgent than main: runs to its end inside the create call. */
	suite_spawn(0, SUITE_PRIO_HIGH, il_thread, 0);
}

/* ---------------------------------------------------------------- IDL-b-N */

/* Rescheduling: the give wakes the first of the pending threads, which runs
 * when the handler returns (the kernel defers the switch to ISR exit). */
SUITE_ISR(idl_isr) static void idl_isr(void *arg)
{
	(void)arg;
	unsigned n = isr_calls;
	LS_MARK(IDL_B, ISR_ENTRY, n);
	bench_irq_ack(SUITE_IRQ);
	isr_calls = n + 1;
	(void)bench_sem_give_from_isr(SEM_IDL); /* BENCH_FULL only if nobody pends */
	LS_MARK(IDL_B, ISR_EXIT, n);
}

/* N of these pend on the semaphore, FIFO among equals: they wake in turn. */
static void idl_waiter(void *arg)
{
	unsigned index = suite_index(arg);
	for (;;) {
		int rc = bench_sem_take(SEM_IDL, BENCH_FOREVER);
		LS_MARK(IDL_B, T2, index);
		SUITE_CHECK(rc == BENCH_SUCCESS);
		/* The last sample closes the line before anyone else can run. */
		if (++idl_woken == SUITE_SAMPLES)
			bench_irq_disable(SUITE_IRQ);
	}
}

void test_idl_b(unsigned threads)
{
	SUITE_CHECK(threads >= 1 && threads <= BENCH_MAX_THREADS);
	SUITE_CHECK(bench_sem_create(SEM_IDL, 0, 1) == BENCH_SUCCESS);
	for (unsigned i = 0; i < threads; i++)
		suite_spawn((int)i, SUITE_PRIO_WORK, idl_waiter, i);
	idl_woken = 0;
	/* Main becomes the low-priority thread the IRQ interrupts; the waiters
	 * run first and pend in creation order. */
	suite_main_priority(SUITE_PRIO_LOW);
	suite_start(LS_TEST_IDL_B, "IDL-b", threads);
	open_irq_line(idl_isr);
	suite_wait_for(&idl_woken, SUITE_SAMPLES, &isr_calls);
	suite_main_priority(SUITE_PRIO_MAIN);
	suite_end(LS_TEST_IDL_B);
	suite_delete_threads(0, (int)threads);
	SUITE_CHECK(bench_sem_delete(SEM_IDL) == BENCH_SUCCESS);
}
