/*
 * Binary semaphore (reference report 4.7): creation, deletion, deletion
 * after use, uncontested acquire and release (SEO-a..e: T1 and T2 around the
 * call in the main thread, arg = iteration), and release to 1..N pending
 * threads of different priority (SEO-f: T1 before the give in the releaser,
 * T2 in the released thread). Return codes are checked after T2.
 */
#include "suite.h"

#define SEM 0

static void create_binary(unsigned initial)
{
	SUITE_CHECK(bench_sem_create(SEM, initial, 1) == BENCH_SUCCESS);
}

/* SEO-a-1 */
void test_seo_a(void)
{
	suite_start(LS_TEST_SEO_A, "SEO-a", 1);
	for (unsigned i = 0; i < SUITE_OBJ_SAMPLES; i++) {
		suite_pace();
		LS_MARK(SEO_A, T1, i);
		int rc = bench_sem_create(SEM, 0, 1);
		LS_MARK(SEO_A, T2, i);
		SUITE_CHECK(rc == BENCH_SUCCESS);
		SUITE_CHECK(bench_sem_delete(SEM) == BENCH_SUCCESS);
	}
	suite_end(LS_TEST_SEO_A);
}

/* SEO-b-1: delete a semaphore never used. */
void test_seo_b(void)
{
	suite_start(LS_TEST_SEO_B, "SEO-b", 1);
	for (unsigned i = 0; i < SUITE_OBJ_SAMPLES; i++) {
		create_binary(0);
		suite_pace();
		LS_MARK(SEO_B, T1, i);
		int rc = bench_sem_delete(SEM);
		LS_MARK(SEO_B, T2, i);
		SUITE_CHECK(rc == BENCH_SUCCESS);
	}
	suite_end(LS_TEST_SEO_B);
}

/* SEO-c-1: delete a semaphore after a give and a take. */
void test_seo_c(void)
{
	suite_start(LS_TEST_SEO_C, "SEO-c", 1);
	for (unsigned i = 0; i < SUITE_OBJ_SAMPLES; i++) {
		create_binary(0);
		SUITE_CHECK(bench_sem_give(SEM) == BENCH_SUCCESS);
		SUITE_CHECK(bench_sem_take(SEM, BENCH_NO_WAIT) == BENCH_SUCCESS);
		suite_pace();
		LS_MARK(SEO_C, T1, i);
		int rc = bench_sem_delete(SEM);
		LS_MARK(SEO_C, T2, i);
		SUITE_CHECK(rc == BENCH_SUCCESS);
	}
	suite_end(LS_TEST_SEO_C);
}

/* SEO-d-1: take an available semaphore. */
void test_seo_d(void)
{
	create_binary(1);
	suite_start(LS_TEST_SEO_D, "SEO-d", 1);
	for (unsigned i = 0; i < SUITE_OBJ_SAMPLES; i++) {
		suite_pace();
		LS_MARK(SEO_D, T1, i);
		int rc = bench_sem_take(SEM, BENCH_NO_WAIT);
		LS_MARK(SEO_D, T2, i);
		SUITE_CHECK(rc == BENCH_SUCCESS);
		SUITE_CHECK(bench_sem_give(SEM) == BENCH_SUCCESS);
	}
	suite_end(LS_TEST_SEO_D);
	SUITE_CHECK(bench_sem_delete(SEM) == BENCH_SUCCESS);
}

/* SEO-e-1: give a semaphore nobody waits for. */
void test_seo_e(void)
{
	create_binary(0);
	suite_start(LS_TEST_SEO_E, "SEO-e", 1);
	for (unsigned i = 0; i < SUITE_OBJ_SAMPLES; i++) {
		suite_pace();
		LS_MARK(SEO_E, T1, i);
		int rc = bench_sem_give(SEM);
		LS_MARK(SEO_E, T2, i);
		SUITE_CHECK(rc == BENCH_SUCCESS);
		SUITE_CHECK(bench_sem_take(SEM, BENCH_NO_WAIT) == BENCH_SUCCESS);
	}
	suite_end(LS_TEST_SEO_E);
	SUITE_CHECK(bench_sem_delete(SEM) == BENCH_SUCCESS);
}

/* ---------------------------------------------------------------- SEO-f-N */

/* Waiter k has priority N-1-k: each newcomer is the most urgent, so the give
 * releases the thread that joined last. Back in take at once after T2. */
static void seo_f_waiter(void *arg)
{
	unsigned index = suite_index(arg);
	for (;;) {
		int rc = bench_sem_take(SEM, BENCH_FOREVER);
		LS_MARK(SEO_F, T2, index);
		SUITE_CHECK(rc == BENCH_SUCCESS);
	}
}

/*
 * Cycles of 1, 2, ... N pending threads: the main thread (least urgent of
 * all) adds one waiter (it runs at once and pends), marks T1 with the number
 * pending and gives; the released waiter preempts it, marks T2 and pends
 * again. After N, all waiters are deleted and the next cycle starts at 1.
 */
void test_seo_f(unsigned max_pending)
{
	unsigned n = max_pending;
	if (n > BENCH_PRIO_COUNT - 1u)
		n = BENCH_PRIO_COUNT - 1u;
	if (n > BENCH_MAX_THREADS)
		n = BENCH_MAX_THREADS;
	create_binary(0);
	suite_main_priority(BENCH_PRIO_COUNT - 1);
	suite_start(LS_TEST_SEO_F, "SEO-f", n);
	unsigned pending = 0;
	for (unsigned i = 0; i < SUITE_OBJ_SAMPLES; i++) {
		if (pending == n) {
			suite_delete_threads(0, (int)n);
			pending = 0;
		}
		suite_spawn((int)pending, (int)(n - 1u - pending), seo_f_waiter, pending);
		pending++;
		suite_pace();
		LS_MARK(SEO_F, T1, pending);
		int rc = bench_sem_give(SEM);
		SUITE_CHECK(rc == BENCH_SUCCESS);
	}
	suite_end(LS_TEST_SEO_F);
	suite_delete_threads(0, (int)pending);
	suite_main_priority(SUITE_PRIO_MAIN);
	SUITE_CHECK(bench_sem_delete(SEM) == BENCH_SUCCESS);
}
