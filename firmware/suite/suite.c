/*
 * latscope test suite: the run order, the selection, and the helpers every
 * test uses. Progress goes to the console; the measurements are the markers.
 */
#include "suite.h"

LS_MARKER_DEFINE_STATE;

static const unsigned idl_b_threads[] = {SUITE_IDL_B_THREADS};
static const unsigned tsl_threads[] = {SUITE_TSL_THREADS};
static const char *running_name = "";
static unsigned running_n;


static void put_uint(unsigned v)
{
	char buf[12];
	int i = sizeof(buf) - 1;
	buf[i] = '\0';
	do {
		buf[--i] = (char)('0' + v % 10);
		v /= 10;
	} while (v != 0);
	bench_console_write(&buf[i]);
}

void suite_fail(const char *file, int line, const char *what)
{
	bench_console_write("suite: FAIL ");
	bench_console_write(file);
	bench_console_write(":");
	put_uint((unsigned)line);
	bench_console_write(": ");
	bench_console_write(what);
	bench_console_write("\n");
	bench_exit(2);
}

void suite_start(enum ls_test test, const char *name, unsigned n)
{
	running_name = name;
	running_n = n;
	bench_console_write("suite: ");
	bench_console_write(name);
	bench_console_write("-");
	put_uint(n);
	bench_console_write("\n");
	/* Adjacent, so that no ISR marker of the test comes between them. */
	unsigned key = bench_irq_lock();
	ls_mark_value(LS_MARKER(test, LS_POINT_START, n));
	if (n > LS_ARG_MASK)
		ls_mark_value(LS_MARKER(test, LS_POINT_PARAM, n >> 7));
	bench_irq_unlock(key);
}

void suite_end(enum ls_test test)
{
	ls_mark_value(LS_MARKER(test, LS_POINT_END, 0));
}

void suite_pace(void)
{
#if SUITE_PACE_CYCLES > 0
	static bench_cycles_t last;
	while ((bench_cycles_t)(bench_cycles() - last) < SUITE_PACE_CYCLES)
		;
	last = bench_cycles();
#endif
}

void suite_spawn(int id, int prio, bench_thread_entry_t entry, unsigned index)
{
	int rc = bench_thread_create(id, "suite", prio, SUITE_STACK, entry,
				     (void *)(uintptr_t)index);
	SUITE_CHECK(rc == BENCH_SUCCESS);
}

void suite_delete_threads(int first, int count)
{
	for (int id = first; id < first + count; id++)
		(void)bench_thread_delete(id); /* BENCH_ERROR: it had returned already */
}

void suite_main_priority(int prio)
{
	SUITE_CHECK(bench_thread_set_priority(BENCH_THREAD_MAIN, prio) == BENCH_SUCCESS);
}

void suite_irq_watch_start(suite_irq_watch_t *w, unsigned calls, unsigned wanted)
{
	w->seen = calls;
	w->wanted = wanted;
	w->since = bench_tick_count();
}

static void irq_timeout(const suite_irq_watch_t *w) __attribute__((noreturn));
static void irq_timeout(const suite_irq_watch_t *w)
{
	bench_irq_disable(SUITE_IRQ);
	bench_console_write("suite: FAIL ");
	bench_console_write(running_name);
	bench_console_write("-");
	put_uint(running_n);
	bench_console_write(": no interrupt for ");
	put_uint(SUITE_IRQ_TIMEOUT_MS);
	bench_console_write(" ms (");
	put_uint(w->seen);
	bench_console_write(" handler calls of ");
	put_uint(w->wanted);
	bench_console_write(")\nsuite:   expected: rising edges of the appliance's IRQ on ");
	bench_console_write(SUITE_IRQ_PIN);
	bench_console_write("\nsuite:   likely: the IRQ wire not connected (board IRQ -> that pin, "
			    "docs/duts/); the wrong polarity (the DUT takes rising edges); the "
			    "appliance's IRQ generator off (latscope capture --irq-period N); the "
			    "line's interrupt disabled on the DUT\n");
	bench_exit(2);
}

void suite_irq_watch(suite_irq_watch_t *w, unsigned calls)
{
	bench_ticks_t now = bench_tick_count();
	if (calls != w->seen) {
		w->seen = calls;
		w->since = now;
		return;
	}
	uint64_t waited_ns = (uint64_t)(bench_ticks_t)(now - w->since) * bench_tick_period_ns();
	if (waited_ns >= (uint64_t)SUITE_IRQ_TIMEOUT_MS * 1000000u)
		irq_timeout(w);
}

void suite_wait_for(volatile unsigned *count, unsigned target, volatile unsigned *irq_calls)
{
	suite_irq_watch_t watch;
	unsigned polls = 0;
	suite_irq_watch_start(&watch, *irq_calls, target);
	while (*count < target) {
		SUITE_BUSY();
		if (suite_load_has_thread()) {
			bench_sleep(1);
			suite_irq_watch(&watch, *irq_calls);
		} else if (++polls == SUITE_IL_HEARTBEAT) {
			/* Not every poll: the spin is what the IRQ interrupts, keep it short. */
			polls = 0;
			suite_irq_watch(&watch, *irq_calls);
		}
	}
}

static int selected(enum ls_test test)
{
	return (SUITE_SELECT & SUITE_BIT(test)) != 0;
}

void suite_main(void *arg)
{
	(void)arg;
	bench_console_write("suite: start\n");
	suite_load_start();
	if (selected(LS_TEST_IL_A))
		test_il_a();
	for (unsigned i = 0; i < SUITE_COUNT_OF(idl_b_threads) && selected(LS_TEST_IDL_B); i++)
		test_idl_b(idl_b_threads[i]);
	for (unsigned i = 0; i < SUITE_COUNT_OF(tsl_threads) && selected(LS_TEST_TSL_A); i++)
		test_tsl_a(tsl_threads[i]);
	if (selected(LS_TEST_TF_A))
		test_tf_a();
	if (selected(LS_TEST_TF_B))
		test_tf_b();
	if (selected(LS_TEST_TF_C))
		test_tf_c();
	if (selected(LS_TEST_SEO_A))
		test_seo_a();
	if (selected(LS_TEST_SEO_B))
		test_seo_b();
	if (selected(LS_TEST_SEO_C))
		test_seo_c();
	if (selected(LS_TEST_SEO_D))
		test_seo_d();
	if (selected(LS_TEST_SEO_E))
		test_seo_e();
	if (selected(LS_TEST_SEO_F))
		test_seo_f(SUITE_SEO_F_MAX);
	if (selected(LS_TEST_SEO_G))
		test_seo_g();
	if (selected(LS_TEST_MQ))
		test_mq();
	if (selected(LS_TEST_CLOCK_ISR))
		test_clock_isr();
	bench_console_write("suite: done\n");
	bench_exit(0);
}
