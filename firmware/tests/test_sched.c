/*
 * Scheduling rules of the reference kernel: preemption, FIFO within a
 * priority, yield, round-robin, priority changes, suspend/resume, delete,
 * interrupts with deferred rescheduling, timeouts. Priorities: 0 highest.
 */
#include "ktest.h"

static k_sem_t sem_a;
static k_sem_t sem_done;

static void log_name(void *arg)
{
	kt_log("%s", k_thread_self()->name);
	(void)arg;
}

/* ---------------------------------------------------------------- preemption */

static void preempt_on_create_main(void *arg)
{
	(void)arg;
	kt_log("m1");
	kt_spawn("H", 5, log_name, NULL);  /* more urgent: runs inside create */
	kt_log("m2");
	kt_spawn("L", 20, log_name, NULL); /* less urgent: waits for main */
	kt_log("m3");
	k_sleep(1);
	kt_log("m4");
}

static void preempt_on_create(void)
{
	KT_RUN(preempt_on_create_main, NULL, 10);
	KT_LOG_IS("m1 H m2 m3 L m4");
}

static void taker(void *arg)
{
	k_sem_t *s = arg;
	kt_log("%s:wait", k_thread_self()->name);
	KT_EQ(k_sem_take(s, K_FOREVER), K_OK);
	kt_log("%s:got", k_thread_self()->name);
}

static void preempt_on_give_main(void *arg)
{
	(void)arg;
	kt_spawn("H", 5, taker, &sem_a);
	kt_log("give");
	KT_EQ(k_sem_give(&sem_a), K_OK);
	kt_log("after");
	KT_EQ(k_sem_count(&sem_a), 0);
}

static void preempt_on_give(void)
{
	k_sem_init(&sem_a, 0, 1);
	KT_RUN(preempt_on_give_main, NULL, 10);
	KT_LOG_IS("H:wait give H:got after");
}

/* A lower-priority waiter is made ready by a give but does not preempt. */
static void no_preempt_by_lower_main(void *arg)
{
	(void)arg;
	kt_spawn("L", 20, taker, &sem_a);
	k_sleep(1); /* L runs and blocks */
	kt_log("give");
	KT_EQ(k_sem_give(&sem_a), K_OK);
	kt_log("after");
	k_sleep(1);
	kt_log("end");
}

static void no_preempt_by_lower(void)
{
	k_sem_init(&sem_a, 0, 1);
	KT_RUN(no_preempt_by_lower_main, NULL, 10);
	KT_LOG_IS("L:wait give after L:got end");
}

/* ---------------------------------------------------------------- FIFO */

static void fifo_main(void *arg)
{
	(void)arg;
	kt_spawn("A", 10, log_name, NULL);
	kt_spawn("B", 10, log_name, NULL);
	kt_spawn("C", 10, log_name, NULL);
	k_sleep(1);
	kt_log("|");
	/* Ready order also follows wake-up order (all woken while main runs). */
	kt_spawn("D", 10, taker, &sem_a);
	kt_spawn("E", 10, taker, &sem_a);
	kt_spawn("F", 10, taker, &sem_a);
	k_sleep(1);
	kt_log("|");
	for (int i = 0; i < 3; i++)
		KT_EQ(k_sem_give(&sem_a), K_OK);
	k_sleep(1);
	kt_log("end");
}

static void fifo_within_priority(void)
{
	k_sem_init(&sem_a, 0, 3);
	KT_RUN(fifo_main, NULL, 5);
	KT_LOG_IS("A B C | D:wait E:wait F:wait | D:got E:got F:got end");
}

/* ---------------------------------------------------------------- yield */

static void yielder(void *arg)
{
	(void)arg;
	for (int i = 0; i < 3; i++) {
		kt_log("%s", k_thread_self()->name);
		k_yield();
	}
	k_sem_give(&sem_done);
}

static void yield_main(void *arg)
{
	(void)arg;
	k_sem_init(&sem_done, 0, 3);
	kt_spawn("A", 10, yielder, NULL);
	kt_spawn("B", 10, yielder, NULL);
	kt_spawn("C", 10, yielder, NULL);
	for (int i = 0; i < 3; i++)
		k_sem_take(&sem_done, K_FOREVER);
	kt_log("end");
}

static void yield_rotates_equals(void)
{
	KT_RUN(yield_main, NULL, 5);
	KT_LOG_IS("A B C A B C A B C end");
}

static void yield_lower_main(void *arg)
{
	(void)arg;
	kt_spawn("L", 20, log_name, NULL);
	kt_log("m1");
	k_yield(); /* only a lower priority is ready: keep running */
	kt_log("m2");
	kt_spawn("E", 10, log_name, NULL);
	k_yield(); /* an equal priority is ready: it runs first */
	kt_log("m3");
	k_sleep(1);
}

static void yield_never_to_lower(void)
{
	KT_RUN(yield_lower_main, NULL, 10);
	KT_LOG_IS("m1 m2 E m3 L");
}

/* A preempted thread stays at the head of its level. */
static void preempted_a(void *arg)
{
	(void)arg;
	kt_log("A1");
	kt_spawn("H", 5, log_name, NULL);
	kt_log("A2");
}

static void preempted_main(void *arg)
{
	(void)arg;
	kt_spawn("A", 10, preempted_a, NULL);
	kt_spawn("B", 10, log_name, NULL);
	KT_EQ(k_thread_priority_set(k_thread_self(), 15), K_OK);
	kt_log("main");
}

static void preempted_resumes_first(void)
{
	KT_RUN(preempted_main, NULL, 1);
	KT_LOG_IS("A1 H A2 B main");
}

/* ---------------------------------------------------------------- round-robin */

static void spinner(void *arg)
{
	(void)arg;
	for (int i = 0; i < 4; i++) {
		kt_log("%s", k_thread_self()->name);
		host_tick(); /* the timer fires while this thread runs */
	}
	k_sem_give(&sem_done);
}

static void rr_main(void *arg)
{
	k_ticks_t slice = (k_ticks_t)(uintptr_t)arg;
	k_sem_init(&sem_done, 0, 2);
	k_timeslice_set(slice);
	kt_spawn("A", 10, spinner, NULL);
	kt_spawn("B", 10, spinner, NULL);
	k_sem_take(&sem_done, K_FOREVER);
	k_sem_take(&sem_done, K_FOREVER);
	KT_EQ(k_tick_get(), 8);
}

static void round_robin_on_tick(void)
{
	KT_RUN(rr_main, (void *)(uintptr_t)2, 5);
	KT_LOG_IS("A A B B A A B B");
}

static void round_robin_off(void)
{
	KT_RUN(rr_main, (void *)(uintptr_t)0, 5);
	KT_LOG_IS("A A A A B B B B");
}

/* A thread alone at its priority keeps the CPU when its slice ends. */
static void rr_alone_main(void *arg)
{
	(void)arg;
	k_timeslice_set(1);
	kt_spawn("L", 20, log_name, NULL);
	for (int i = 0; i < 3; i++) {
		kt_log("m");
		host_tick();
	}
	k_sleep(1);
}

static void round_robin_alone(void)
{
	KT_RUN(rr_alone_main, NULL, 10);
	KT_LOG_IS("m m m L");
}

/* ---------------------------------------------------------------- priorities */

static void prio_main(void *arg)
{
	(void)arg;
	k_thread_t *self = k_thread_self();
	k_thread_t *a = kt_spawn("A", 20, log_name, NULL);
	k_thread_t *b = kt_spawn("B", 10, log_name, NULL);
	kt_log("m1");
	/* Raising a ready thread above the caller preempts at once. */
	KT_EQ(k_thread_priority_set(a, 1), K_OK);
	kt_log("m2");
	/* Lowering the caller to an occupied level: it keeps the head. */
	KT_EQ(k_thread_priority_set(self, 10), K_OK);
	kt_log("m3");
	/* Lowering below a ready thread switches at once. */
	KT_EQ(k_thread_priority_set(self, 11), K_OK);
	kt_log("m4");
	KT_EQ(k_thread_priority_get(self), 11);
	KT_EQ(k_thread_base_priority_get(self), 11);
	(void)b;
}

static void priority_change(void)
{
	KT_RUN(prio_main, NULL, 5);
	KT_LOG_IS("m1 A m2 m3 B m4");
}

static void all_256_levels_main(void *arg)
{
	(void)arg;
	/* Lowest level first: creation order is the reverse of run order. */
	static const uint8_t prios[] = {255, 128, 64, 31, 32, 0};
	static char names[6][8];
	for (int i = 0; i < 6; i++) {
		snprintf(names[i], sizeof(names[i]), "%u", prios[i]);
		kt_spawn(names[i], prios[i], log_name, NULL);
	}
	kt_log("main");
	k_sleep(1); /* everyone else runs, strictly by level */
}

static void all_priority_levels(void)
{
	/* main at 0: nothing preempts it; "0" shares its level (FIFO). */
	KT_RUN(all_256_levels_main, NULL, 0);
	KT_LOG_IS("main 0 31 32 64 128 255");
}

/* ---------------------------------------------------------------- suspend */

static void self_suspender(void *arg)
{
	(void)arg;
	kt_log("S1");
	k_thread_suspend(k_thread_self());
	kt_log("S2");
}

static void suspend_main(void *arg)
{
	(void)arg;
	k_thread_t *a = kt_spawn("A", 10, log_name, NULL);
	KT_EQ(k_thread_suspend(a), K_OK);
	k_sleep(2); /* A is ready but suspended: only idle runs */
	kt_log("m1");
	KT_EQ(k_thread_resume(a), K_OK); /* less urgent: no preemption */
	kt_log("m2");
	k_sleep(1);
	k_thread_t *s = kt_spawn("S", 1, self_suspender, NULL);
	kt_log("m3");
	KT_EQ(k_thread_resume(s), K_OK);
	kt_log("m4");
	/* A suspended waiter gets the semaphore but runs only once resumed. */
	k_thread_t *w = kt_spawn("W", 1, taker, &sem_a);
	KT_EQ(k_thread_suspend(w), K_OK);
	KT_EQ(k_sem_give(&sem_a), K_OK);
	KT_EQ(k_sem_count(&sem_a), 0);
	kt_log("m5");
	KT_EQ(k_thread_resume(w), K_OK);
	kt_log("m6");
}

static void suspend_resume(void)
{
	k_sem_init(&sem_a, 0, 1);
	KT_RUN(suspend_main, NULL, 5);
	KT_LOG_IS("m1 m2 A S1 m3 S2 m4 W:wait m5 W:got m6");
}

/* ---------------------------------------------------------------- delete */

static void self_deleter(void *arg)
{
	(void)arg;
	kt_log("D1");
	k_thread_delete(k_thread_self());
	kt_log("never");
}

static void timed_taker(void *arg)
{
	(void)arg;
	kt_log("T:wait");
	k_sem_take(&sem_a, 3);
	kt_log("T:never");
}

static void delete_main(void *arg)
{
	(void)arg;
	k_thread_t *r = kt_spawn("R", 20, log_name, NULL);
	KT_EQ(k_thread_delete(r), K_OK); /* ready, never ran */
	KT_EQ(k_thread_alive(r), 0);
	KT_EQ(k_thread_delete(r), K_EINVAL);

	k_thread_t *t = kt_spawn("T", 1, timed_taker, NULL); /* blocks with timeout */
	KT_EQ(k_thread_delete(t), K_OK);
	k_sleep(5); /* its timeout must not fire */
	KT_EQ(k_sem_give(&sem_a), K_OK);
	KT_EQ(k_sem_count(&sem_a), 1); /* no waiter left */

	kt_spawn("D", 1, self_deleter, NULL);
	kt_log("m");
	/* The object of a deleted thread can be created again. */
	static uint8_t r_stack[KT_STACK_SIZE] __attribute__((aligned(16)));
	KT_EQ(k_thread_create(r, "R2", 20, r_stack, 16, log_name, NULL), K_EINVAL); /* stack too small */
	KT_EQ(k_thread_create(r, "R2", 20, r_stack, sizeof(r_stack), log_name, NULL), K_OK);
	KT_EQ(k_thread_create(r, "R3", 20, r_stack, sizeof(r_stack), log_name, NULL), K_EINVAL); /* alive */
	kt_log("end");
	k_sleep(1);
}

static void delete_threads(void)
{
	k_sem_init(&sem_a, 0, 1);
	KT_RUN(delete_main, NULL, 5);
	KT_LOG_IS("T:wait D1 m end R2");
}

/* ---------------------------------------------------------------- interrupts */

static k_thread_t *isr_low;
static bool high_ran;

static void give_isr(void *arg)
{
	(void)arg;
	kt_log("isr:start");
	KT_CHECK(k_in_isr());
	KT_EQ(k_sem_give(&sem_a), K_OK);
	/* Deferred: the woken thread has not run, the interrupted one is current. */
	KT_CHECK(!high_ran);
	KT_CHECK(k_thread_self() == isr_low);
	kt_log("isr:end");
	board_irq_line_ack(3);
}

static void high_waiter(void *arg)
{
	(void)arg;
	kt_log("H:wait");
	KT_EQ(k_sem_take(&sem_a, K_FOREVER), K_OK);
	high_ran = true;
	kt_log("H:got");
}

static void isr_main(void *arg)
{
	(void)arg;
	isr_low = k_thread_self();
	high_ran = false;
	k_irq_attach(3, give_isr, NULL);
	board_irq_line_enable(3, true);
	kt_spawn("H", 5, high_waiter, NULL);
	uint32_t switches = k_switch_count();
	kt_log("raise");
	host_raise_irq(3);
	kt_log("L:after");
	KT_EQ(k_switch_count() - switches, 2); /* L->H at ISR exit, H->L */
	KT_EQ(host_isr_count(), 1);
}

static void isr_give_deferred_switch(void)
{
	k_sem_init(&sem_a, 0, 1);
	KT_RUN(isr_main, NULL, 20);
	KT_LOG_IS("H:wait raise isr:start isr:end H:got L:after");
}

static void log_isr(void *arg)
{
	(void)arg;
	kt_log("isr");
	board_irq_line_ack(0);
}

static void masked_main(void *arg)
{
	(void)arg;
	k_irq_attach(0, log_isr, NULL);
	board_irq_line_enable(0, true);
	unsigned key = arch_irq_lock();
	host_raise_irq(0);
	kt_log("raised");
	KT_CHECK(host_irq_line_pending(0));
	arch_irq_unlock(key);
	kt_log("unlocked");
	/* A disabled line stays pending until enabled. */
	board_irq_line_enable(0, false);
	host_raise_irq(0);
	kt_log("raised");
	board_irq_line_enable(0, true);
	kt_log("enabled");
}

static void irq_pending_while_masked(void)
{
	KT_RUN(masked_main, NULL, 10);
	KT_LOG_IS("raised isr unlocked raised isr enabled");
}

/* A tick interrupt that wakes a more urgent sleeper switches at its exit. */
static void sleeper(void *arg)
{
	k_sleep((k_ticks_t)(uintptr_t)arg);
	kt_log("%s@%u", k_thread_self()->name, (unsigned)k_tick_get());
}

static void tick_wake_main(void *arg)
{
	(void)arg;
	kt_spawn("H", 5, sleeper, (void *)(uintptr_t)2);
	kt_log("t0");
	host_tick();
	kt_log("t1");
	host_tick(); /* H wakes here and runs before this call returns */
	kt_log("t2");
}

static void tick_wakes_and_preempts(void)
{
	KT_RUN(tick_wake_main, NULL, 10);
	KT_LOG_IS("t0 t1 H@2 t2");
}

/* ---------------------------------------------------------------- timeouts */

static void timeout_main(void *arg)
{
	(void)arg;
	k_ticks_t t0 = k_tick_get();
	KT_EQ(k_sem_take(&sem_a, K_NO_WAIT), K_EAGAIN);
	KT_EQ(k_tick_get(), t0);
	KT_EQ(k_sem_take(&sem_a, 3), K_ETIMEDOUT);
	KT_EQ(k_tick_get(), t0 + 3);
	k_sleep(5);
	KT_EQ(k_tick_get(), t0 + 8);
	/* Sleepers wake in deadline order; equal deadlines in FIFO order. */
	kt_spawn("c", 1, sleeper, (void *)(uintptr_t)3);
	kt_spawn("a", 1, sleeper, (void *)(uintptr_t)1);
	kt_spawn("b", 1, sleeper, (void *)(uintptr_t)3);
	kt_spawn("d", 1, sleeper, (void *)(uintptr_t)2);
	k_sleep(4);
	kt_log("main@%u", (unsigned)k_tick_get());
}

static void timeouts(void)
{
	k_sem_init(&sem_a, 0, 1);
	KT_RUN(timeout_main, NULL, 5);
	KT_LOG_IS("a@9 d@10 c@11 b@11 main@12");
}

/* A wait satisfied before its timeout must not expire later. */
static void early_giver(void *arg)
{
	(void)arg;
	k_sleep(1);
	k_sem_give(&sem_a);
}

static void satisfied_main(void *arg)
{
	(void)arg;
	kt_spawn("G", 20, early_giver, NULL);
	KT_EQ(k_sem_take(&sem_a, 5), K_OK);
	KT_EQ(k_tick_get(), 1);
	KT_CHECK(!k_timeouts_pending());
}

static void timeout_cancelled_by_give(void)
{
	k_sem_init(&sem_a, 0, 1);
	KT_RUN(satisfied_main, NULL, 5);
}

static void deadlock_main(void *arg)
{
	(void)arg;
	k_sem_take(&sem_a, K_FOREVER);
}

static void deadlock_is_reported(void)
{
	k_sem_init(&sem_a, 0, 1);
	KT_EQ(host_run(deadlock_main, NULL, 5), HOST_EXIT_DEADLOCK);
}

int main(void)
{
	KT_CASE(preempt_on_create);
	KT_CASE(preempt_on_give);
	KT_CASE(no_preempt_by_lower);
	KT_CASE(fifo_within_priority);
	KT_CASE(yield_rotates_equals);
	KT_CASE(yield_never_to_lower);
	KT_CASE(preempted_resumes_first);
	KT_CASE(round_robin_on_tick);
	KT_CASE(round_robin_off);
	KT_CASE(round_robin_alone);
	KT_CASE(priority_change);
	KT_CASE(all_priority_levels);
	KT_CASE(suspend_resume);
	KT_CASE(delete_threads);
	KT_CASE(isr_give_deferred_switch);
	KT_CASE(irq_pending_while_masked);
	KT_CASE(tick_wakes_and_preempts);
	KT_CASE(timeouts);
	KT_CASE(timeout_cancelled_by_give);
	KT_CASE(deadlock_is_reported);
	return kt_summary("test_sched");
}
