/*
 * SEO-g-3, priority inversion (reference report 4.9.3): the time the high
 * thread needs to get a mutex held by the low thread while a medium thread
 * is ready. The sample (T1 before the lock, T2 after it, both in the high
 * thread, arg = iteration) covers: blocking, raising the owner's priority,
 * switching to it, its unlock handing the mutex over, the switch back.
 *
 * One iteration, started by the main thread (least urgent) giving go[LOW]:
 *   low:    lock, give go[MEDIUM]          -> medium preempts
 *   medium: give go[HIGH]                  -> high preempts
 *   high:   T1, lock: blocks; low inherits high's priority and runs before
 *           the ready medium thread
 *   low:    unlock: the mutex goes to high -> high preempts
 *   high:   T2, unlock, wait for go[HIGH]
 *   medium: SUITE_SEO_G_WORK iterations of work (what the inversion would
 *           have put inside the sample without inheritance), wait
 *   low:    wait; main runs the next iteration.
 */
#include "suite.h"

enum { HIGH, MEDIUM, LOW, ROLES };

static const int role_prio[ROLES] = {SUITE_PRIO_WORK, SUITE_PRIO_WORK + 10, SUITE_PRIO_WORK + 20};

#define MUTEX 0
#define GO(role) (role) /* semaphore ids 0..2 */

static void take_go(int role)
{
	SUITE_CHECK(bench_sem_take(GO(role), BENCH_FOREVER) == BENCH_SUCCESS);
}

static void high_thread(void *arg)
{
	(void)arg;
	for (unsigned i = 0;; i++) {
		take_go(HIGH);
		LS_MARK(SEO_G, T1, i);
		int rc = bench_mutex_lock(MUTEX, BENCH_FOREVER);
		LS_MARK(SEO_G, T2, i);
		SUITE_CHECK(rc == BENCH_SUCCESS);
		SUITE_CHECK(bench_mutex_unlock(MUTEX) == BENCH_SUCCESS);
	}
}

static void medium_thread(void *arg)
{
	(void)arg;
	for (;;) {
		take_go(MEDIUM);
		SUITE_CHECK(bench_sem_give(GO(HIGH)) == BENCH_SUCCESS);
		for (volatile unsigned w = 0; w < SUITE_SEO_G_WORK; w++)
			;
	}
}

static void low_thread(void *arg)
{
	(void)arg;
	for (;;) {
		take_go(LOW);
		SUITE_CHECK(bench_mutex_lock(MUTEX, BENCH_FOREVER) == BENCH_SUCCESS);
		SUITE_CHECK(bench_sem_give(GO(MEDIUM)) == BENCH_SUCCESS);
		SUITE_CHECK(bench_mutex_unlock(MUTEX) == BENCH_SUCCESS);
	}
}

void test_seo_g(void)
{
	static const bench_thread_entry_t body[ROLES] = {high_thread, medium_thread, low_thread};

	SUITE_CHECK(bench_mutex_create(MUTEX) == BENCH_SUCCESS);
	for (int role = 0; role < ROLES; role++) {
		SUITE_CHECK(bench_sem_create(GO(role), 0, 1) == BENCH_SUCCESS);
		suite_spawn(role, role_prio[role], body[role], (unsigned)role);
	}
	suite_main_priority(SUITE_PRIO_LOW); /* the three run and wait for go */
	suite_start(LS_TEST_SEO_G, "SEO-g", 3);
	for (unsigned i = 0; i < SUITE_OBJ_SAMPLES; i++) {
		suite_pace();
		SUITE_CHECK(bench_sem_give(GO(LOW)) == BENCH_SUCCESS); /* returns when all wait */
	}
	suite_end(LS_TEST_SEO_G);
	suite_main_priority(SUITE_PRIO_MAIN);
	suite_delete_threads(0, ROLES);
	for (int role = 0; role < ROLES; role++)
		SUITE_CHECK(bench_sem_delete(GO(role)) == BENCH_SUCCESS);
	SUITE_CHECK(bench_mutex_delete(MUTEX) == BENCH_SUCCESS);
}
