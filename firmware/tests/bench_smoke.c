/*
 * Porting-layer smoke test: written against latscope/bench_api.h only, so
 * it builds unchanged for every port (host kernel, Linux pthreads, RV32 sim).
 * It checks functional behaviour, not scheduling order: on a multi-core
 * Linux without real-time rights the order is not deterministic.
 *
 * Output lines (console): "PASS <case>", "FAIL <case>: line <n>", then
 * "SUMMARY bench_smoke: passed=<n> failed=<m>"; exit code = failures != 0.
 */
#include "latscope/bench_api.h"

#define MAIN_PRIO 20
#define WORKER_STACK 2048
#ifndef SMOKE_CHURN_ROUNDS
#define SMOKE_CHURN_ROUNDS 100 /* ~13 ticks of work in all on the simulated SoC */
#endif

static int case_failed;
static int fail_line;
static int passed;
static int failed;

#define CHECK(cond)                                       \
	do {                                              \
		if (!(cond) && !case_failed) {            \
			case_failed = 1;                  \
			fail_line = __LINE__;             \
		}                                         \
	} while (0)

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

static void run_case(const char *name, void (*fn)(void))
{
	case_failed = 0;
	fn();
	if (case_failed) {
		bench_console_write("FAIL ");
		bench_console_write(name);
		bench_console_write(": line ");
		put_uint((unsigned)fail_line);
		bench_console_write("\n");
		failed++;
	} else {
		bench_console_write("PASS ");
		bench_console_write(name);
		bench_console_write("\n");
		passed++;
	}
}

/* ---------------------------------------------------------------- cases */

static void semaphores(void)
{
	CHECK(bench_sem_create(0, 0, 1) == BENCH_SUCCESS);
	CHECK(bench_sem_create(0, 0, 1) == BENCH_ERROR); /* id in use */
	CHECK(bench_sem_give(0) == BENCH_SUCCESS);
	CHECK(bench_sem_give(0) == BENCH_FULL);
	CHECK(bench_sem_take(0, BENCH_NO_WAIT) == BENCH_SUCCESS);
	CHECK(bench_sem_take(0, BENCH_NO_WAIT) == BENCH_WOULD_BLOCK);
	bench_ticks_t t0 = bench_tick_count();
	CHECK(bench_sem_take(0, 2) == BENCH_TIMEOUT);
	CHECK(bench_tick_count() - t0 >= 1);
	CHECK(bench_sem_delete(0) == BENCH_SUCCESS);
	CHECK(bench_sem_give(0) == BENCH_ERROR); /* deleted */

	CHECK(bench_sem_create(1, 2, 3) == BENCH_SUCCESS);
	CHECK(bench_sem_take(1, BENCH_NO_WAIT) == BENCH_SUCCESS);
	CHECK(bench_sem_take(1, BENCH_NO_WAIT) == BENCH_SUCCESS);
	CHECK(bench_sem_take(1, BENCH_NO_WAIT) == BENCH_WOULD_BLOCK);
	for (int i = 0; i < 3; i++)
		CHECK(bench_sem_give(1) == BENCH_SUCCESS);
	CHECK(bench_sem_give(1) == BENCH_FULL);
	CHECK(bench_sem_delete(1) == BENCH_SUCCESS);
}

static volatile unsigned ping_count;

static void ponger(void *arg)
{
	unsigned rounds = (unsigned)(uintptr_t)arg;
	for (unsigned i = 0; i < rounds; i++) {
		if (bench_sem_take(0, BENCH_FOREVER) != BENCH_SUCCESS)
			return;
		ping_count++;
		bench_sem_give(1);
	}
}

static void thread_handshake(void)
{
	const unsigned rounds = 50;
	ping_count = 0;
	CHECK(bench_sem_create(0, 0, 1) == BENCH_SUCCESS);
	CHECK(bench_sem_create(1, 0, 1) == BENCH_SUCCESS);
	CHECK(bench_thread_create(0, "ponger", MAIN_PRIO - 5, WORKER_STACK, ponger,
				  (void *)(uintptr_t)rounds) == BENCH_SUCCESS);
	CHECK(bench_thread_create(0, "again", MAIN_PRIO - 5, WORKER_STACK, ponger, NULL) ==
	      BENCH_ERROR); /* id alive */
	for (unsigned i = 0; i < rounds; i++) {
		CHECK(bench_sem_give(0) == BENCH_SUCCESS);
		CHECK(bench_sem_take(1, BENCH_FOREVER) == BENCH_SUCCESS);
		CHECK(ping_count == i + 1);
	}
	bench_sleep(1); /* let the ponger return */
	CHECK(bench_sem_delete(0) == BENCH_SUCCESS);
	CHECK(bench_sem_delete(1) == BENCH_SUCCESS);
}

static volatile int trylock_result;

static void trylocker(void *arg)
{
	(void)arg;
	trylock_result = bench_mutex_lock(0, BENCH_NO_WAIT);
	bench_sem_give(0);
}

static void mutexes(void)
{
	CHECK(bench_mutex_create(0) == BENCH_SUCCESS);
	CHECK(bench_sem_create(0, 0, 1) == BENCH_SUCCESS);
	CHECK(bench_mutex_lock(0, BENCH_FOREVER) == BENCH_SUCCESS);
	CHECK(bench_mutex_lock(0, BENCH_FOREVER) == BENCH_SUCCESS); /* recursive */
	trylock_result = -1;
	CHECK(bench_thread_create(1, "trylock", MAIN_PRIO - 1, WORKER_STACK, trylocker, NULL) ==
	      BENCH_SUCCESS);
	CHECK(bench_sem_take(0, BENCH_FOREVER) == BENCH_SUCCESS);
	CHECK(trylock_result == BENCH_WOULD_BLOCK);
	CHECK(bench_mutex_unlock(0) == BENCH_SUCCESS);
	CHECK(bench_mutex_unlock(0) == BENCH_SUCCESS);
	CHECK(bench_mutex_unlock(0) == BENCH_ERROR); /* not the owner any more */
	bench_sleep(1);
	CHECK(bench_mutex_delete(0) == BENCH_SUCCESS);
	CHECK(bench_sem_delete(0) == BENCH_SUCCESS);
}

static volatile uint32_t received[3];

static void mq_reader(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++) {
		uint32_t v = 0;
		if (bench_mq_receive(0, &v, BENCH_FOREVER) != BENCH_SUCCESS)
			return;
		received[i] = v;
	}
	bench_sem_give(0);
}

static void message_queues(void)
{
	uint32_t v;
	CHECK(bench_mq_create(0, sizeof(uint32_t), 3) == BENCH_SUCCESS);
	for (v = 1; v <= 3; v++)
		CHECK(bench_mq_send(0, &v, BENCH_NO_WAIT) == BENCH_SUCCESS);
	CHECK(bench_mq_send(0, &v, BENCH_NO_WAIT) == BENCH_WOULD_BLOCK);
	CHECK(bench_mq_send(0, &v, 2) == BENCH_TIMEOUT);
	for (uint32_t want = 1; want <= 3; want++) {
		CHECK(bench_mq_receive(0, &v, BENCH_NO_WAIT) == BENCH_SUCCESS);
		CHECK(v == want);
	}
	CHECK(bench_mq_receive(0, &v, BENCH_NO_WAIT) == BENCH_WOULD_BLOCK);

	/* A blocked reader gets every message, in order. */
	CHECK(bench_sem_create(0, 0, 1) == BENCH_SUCCESS);
	CHECK(bench_thread_create(2, "reader", MAIN_PRIO - 1, WORKER_STACK, mq_reader, NULL) ==
	      BENCH_SUCCESS);
	for (v = 10; v < 13; v++)
		CHECK(bench_mq_send(0, &v, BENCH_FOREVER) == BENCH_SUCCESS);
	CHECK(bench_sem_take(0, BENCH_FOREVER) == BENCH_SUCCESS);
	CHECK(received[0] == 10 && received[1] == 11 && received[2] == 12);
	bench_sleep(1);
	CHECK(bench_mq_delete(0) == BENCH_SUCCESS);
	CHECK(bench_sem_delete(0) == BENCH_SUCCESS);
}

static volatile int blocked_result;

static void blocker(void *arg)
{
	(void)arg;
	blocked_result = bench_sem_take(0, BENCH_FOREVER);
}

static void thread_control(void)
{
	CHECK(bench_sem_create(0, 0, 1) == BENCH_SUCCESS);
	blocked_result = -1;
	/* Delete a thread blocked on a semaphore; its id is free again. */
	CHECK(bench_thread_create(3, "blocker", MAIN_PRIO - 1, WORKER_STACK, blocker, NULL) ==
	      BENCH_SUCCESS);
	bench_sleep(1);
	CHECK(bench_thread_delete(3) == BENCH_SUCCESS);
	CHECK(bench_thread_delete(3) == BENCH_ERROR);
	CHECK(bench_sem_give(0) == BENCH_SUCCESS); /* nobody takes it */
	CHECK(bench_sem_take(0, BENCH_NO_WAIT) == BENCH_SUCCESS);
	CHECK(blocked_result == -1);

	/* Suspend a waiter, give, resume: it completes. */
	CHECK(bench_thread_create(3, "blocker", MAIN_PRIO - 1, WORKER_STACK, blocker, NULL) ==
	      BENCH_SUCCESS);
	bench_sleep(1);
	CHECK(bench_thread_suspend(3) == BENCH_SUCCESS);
	CHECK(bench_thread_resume(3) == BENCH_SUCCESS);
	CHECK(bench_sem_give(0) == BENCH_SUCCESS);
	bench_sleep(2);
	CHECK(blocked_result == BENCH_SUCCESS);

	/* Priorities read back as set. */
	CHECK(bench_thread_self() == BENCH_THREAD_MAIN);
	CHECK(bench_thread_set_priority(BENCH_THREAD_MAIN, MAIN_PRIO + 1) == BENCH_SUCCESS);
	CHECK(bench_thread_get_priority(BENCH_THREAD_MAIN) == MAIN_PRIO + 1);
	CHECK(bench_thread_set_priority(BENCH_THREAD_MAIN, MAIN_PRIO) == BENCH_SUCCESS);
	CHECK(bench_thread_set_priority(BENCH_THREAD_MAIN, BENCH_PRIO_COUNT) == BENCH_ERROR);
	bench_thread_yield();
	CHECK(bench_sem_delete(0) == BENCH_SUCCESS);
}

static void time_source(void)
{
	CHECK(bench_tick_period_ns() > 0);
	CHECK(bench_cycles_per_second() > 0);
	bench_ticks_t t0 = bench_tick_count();
	bench_cycles_t c0 = bench_cycles();
	bench_sleep(3);
	CHECK(bench_tick_count() - t0 >= 2);
	CHECK((bench_cycles_t)(bench_cycles() - c0) > 0);
}

/*
 * Register-heavy computation repeated while a more urgent thread wakes on
 * every tick: on a preemptive target the tick interrupt switches away in
 * the middle of it, so a context switch that loses a register shows here.
 */
/* noipa: the two calls with equal arguments must really both run. 26 live
 * values: more than the caller-saved registers, so s0-s11 are in use too. */
__attribute__((noipa)) static uint32_t churn(uint32_t seed, unsigned rounds)
{
	uint32_t v[26];
	for (unsigned n = 0; n < 26; n++)
		v[n] = seed * (2u * n + 1u) + n;
#define CHURN_STEP(x, y, z) v[x] += (v[y] ^ (v[z] >> 3)) + 0x9E3779B9u
	for (unsigned r = 0; r < rounds; r++) {
		CHURN_STEP(0, 1, 2); CHURN_STEP(1, 2, 3); CHURN_STEP(2, 3, 4);
		CHURN_STEP(3, 4, 5); CHURN_STEP(4, 5, 6); CHURN_STEP(5, 6, 7);
		CHURN_STEP(6, 7, 8); CHURN_STEP(7, 8, 9); CHURN_STEP(8, 9, 10);
		CHURN_STEP(9, 10, 11); CHURN_STEP(10, 11, 12); CHURN_STEP(11, 12, 13);
		CHURN_STEP(12, 13, 14); CHURN_STEP(13, 14, 15); CHURN_STEP(14, 15, 16);
		CHURN_STEP(15, 16, 17); CHURN_STEP(16, 17, 18); CHURN_STEP(17, 18, 19);
		CHURN_STEP(18, 19, 20); CHURN_STEP(19, 20, 21); CHURN_STEP(20, 21, 22);
		CHURN_STEP(21, 22, 23); CHURN_STEP(22, 23, 24); CHURN_STEP(23, 24, 25);
		CHURN_STEP(24, 25, 0); CHURN_STEP(25, 0, 1);
	}
#undef CHURN_STEP
	uint32_t sum = 0;
	for (unsigned n = 0; n < 26; n++)
		sum ^= v[n] * (n + 1u);
	return sum;
}

static volatile int ticker_stop;
static volatile unsigned ticker_wakeups;
static volatile uint32_t churn_mismatches;

static void ticker(void *arg)
{
	(void)arg;
	while (!ticker_stop) {
		bench_sleep(1);
		ticker_wakeups++;
	}
}

static volatile unsigned wakeups_during_churn;

static void churner(void *arg)
{
	unsigned rounds = (unsigned)(uintptr_t)arg;
	unsigned before = ticker_wakeups;
	for (uint32_t seed = 1; seed <= 40; seed++)
		if (churn(seed, rounds) != churn(seed, rounds))
			churn_mismatches++;
	wakeups_during_churn = ticker_wakeups - before;
	bench_sem_give(0);
}

static void preemption_integrity(void)
{
	ticker_stop = 0;
	churn_mismatches = 0;
	CHECK(bench_sem_create(0, 0, 1) == BENCH_SUCCESS);
	CHECK(bench_thread_create(4, "ticker", MAIN_PRIO - 10, WORKER_STACK, ticker, NULL) ==
	      BENCH_SUCCESS);
	CHECK(bench_thread_create(5, "churner", MAIN_PRIO - 5, WORKER_STACK, churner,
				  (void *)(uintptr_t)SMOKE_CHURN_ROUNDS) == BENCH_SUCCESS);
	CHECK(bench_sem_take(0, BENCH_FOREVER) == BENCH_SUCCESS);
	CHECK(churn_mismatches == 0);
	/* Informative: 0 on the host port, where time stands still while busy. */
	bench_console_write("INFO preemption_integrity: tick wake-ups during the churn: ");
	put_uint(wakeups_during_churn);
	bench_console_write("\n");
	ticker_stop = 1;
	bench_sleep(2);
	CHECK(bench_sem_delete(0) == BENCH_SUCCESS);
}

#if defined(BENCH_PORT_HAS_SOFT_IRQ) || defined(SMOKE_EXTERNAL_IRQ)
static volatile unsigned isr_runs;

/* arg: the line. Gives semaphore 0 and acknowledges at the source. */
static void smoke_isr(void *arg)
{
	isr_runs++;
	bench_sem_give_from_isr(0);
	bench_irq_ack((int)(uintptr_t)arg);
}

/* More urgent than main: the handler's give makes it preempt main when
 * the handler returns. */
static void isr_waiter(void *arg)
{
	(void)arg;
	for (;;) {
		if (bench_sem_take(0, BENCH_FOREVER) != BENCH_SUCCESS)
			return;
		bench_sem_give(1);
	}
}
#endif

#ifdef BENCH_PORT_HAS_SOFT_IRQ
#define SOFT_LINE 5

static void interrupts(void)
{
	isr_runs = 0;
	CHECK(bench_sem_create(0, 0, 1) == BENCH_SUCCESS);
	CHECK(bench_sem_create(1, 0, 1) == BENCH_SUCCESS);
	CHECK(bench_irq_attach(SOFT_LINE, smoke_isr, (void *)(uintptr_t)SOFT_LINE) == BENCH_SUCCESS);
	CHECK(bench_irq_enable(SOFT_LINE) == BENCH_SUCCESS);
	for (unsigned i = 1; i <= 3; i++) { /* the handler wakes main itself */
		bench_port_raise_irq(SOFT_LINE);
		CHECK(bench_sem_take(0, 100) == BENCH_SUCCESS);
		CHECK(isr_runs == i);
	}
	CHECK(bench_thread_create(6, "isr_waiter", MAIN_PRIO - 2, WORKER_STACK, isr_waiter,
				  NULL) == BENCH_SUCCESS);
	for (unsigned i = 4; i <= 6; i++) { /* the handler wakes another thread */
		bench_port_raise_irq(SOFT_LINE);
		CHECK(bench_sem_take(1, 100) == BENCH_SUCCESS);
		CHECK(isr_runs == i);
	}
	CHECK(bench_irq_disable(SOFT_LINE) == BENCH_SUCCESS);
	CHECK(bench_thread_delete(6) == BENCH_SUCCESS);
	CHECK(bench_sem_delete(0) == BENCH_SUCCESS);
	CHECK(bench_sem_delete(1) == BENCH_SUCCESS);
}
#endif

#ifdef SMOKE_EXTERNAL_IRQ
/* Interrupts from outside the program (on the simulated SoC: the harness's
 * IRQ driver, --irq-period) on line SMOKE_EXTERNAL_IRQ; each one wakes a
 * more urgent thread through the handler. */
static void external_interrupts(void)
{
	const int line = SMOKE_EXTERNAL_IRQ;
	isr_runs = 0;
	CHECK(bench_sem_create(0, 0, 1) == BENCH_SUCCESS);
	CHECK(bench_sem_create(1, 0, 1) == BENCH_SUCCESS);
	CHECK(bench_thread_create(6, "isr_waiter", MAIN_PRIO - 2, WORKER_STACK, isr_waiter,
				  NULL) == BENCH_SUCCESS);
	CHECK(bench_irq_attach(line, smoke_isr, (void *)(uintptr_t)line) == BENCH_SUCCESS);
	CHECK(bench_irq_enable(line) == BENCH_SUCCESS);
	unsigned woken = 0;
	while (woken < 20 && bench_sem_take(1, 100) == BENCH_SUCCESS)
		woken++;
	CHECK(bench_irq_disable(line) == BENCH_SUCCESS);
	CHECK(woken == 20);
	CHECK(isr_runs >= 20);
	CHECK(bench_thread_delete(6) == BENCH_SUCCESS);
	CHECK(bench_sem_delete(0) == BENCH_SUCCESS);
	CHECK(bench_sem_delete(1) == BENCH_SUCCESS);
}
#endif

static void smoke_main(void *arg)
{
	(void)arg;
	run_case("semaphores", semaphores);
	run_case("thread_handshake", thread_handshake);
	run_case("mutexes", mutexes);
	run_case("message_queues", message_queues);
	run_case("thread_control", thread_control);
	run_case("time_source", time_source);
	run_case("preemption_integrity", preemption_integrity);
#ifdef BENCH_PORT_HAS_SOFT_IRQ
	run_case("interrupts", interrupts);
#endif
#ifdef SMOKE_EXTERNAL_IRQ
	run_case("external_interrupts", external_interrupts);
#endif
	bench_console_write("SUMMARY bench_smoke: passed=");
	put_uint((unsigned)passed);
	bench_console_write(" failed=");
	put_uint((unsigned)failed);
	bench_console_write("\n");
	bench_exit(failed != 0);
}

int main(void)
{
	return bench_run(MAIN_PRIO, smoke_main, NULL) == BENCH_SUCCESS ? 0 : 1;
}
