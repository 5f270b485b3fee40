/*
 * Thread creation and deletion (reference report 4.4). The main thread marks
 * T1 right before the call measured and T2 right after it; arg = iteration.
 * Return codes are checked after T2, outside the sample.
 */
#include "suite.h"

#define TF_THREAD 0

/* TF-c's thread: it has run once it is blocked here. TF-a/b never run it. */
static void tf_body(void *arg)
{
	(void)arg;
	(void)bench_thread_suspend(bench_thread_self());
}

/* TF-a-1: create a thread (less urgent than main: it does not run). */
void test_tf_a(void)
{
	suite_start(LS_TEST_TF_A, "TF-a", 1);
	for (unsigned i = 0; i < SUITE_OBJ_SAMPLES; i++) {
		suite_pace();
		LS_MARK(TF_A, T1, i);
		int rc = bench_thread_create(TF_THREAD, "tf", SUITE_PRIO_BELOW, SUITE_STACK,
					     tf_body, NULL);
		LS_MARK(TF_A, T2, i);
		SUITE_CHECK(rc == BENCH_SUCCESS);
		SUITE_CHECK(bench_thread_delete(TF_THREAD) == BENCH_SUCCESS);
	}
	suite_end(LS_TEST_TF_A);
}

/* TF-b-1: delete a thread that never ran. */
void test_tf_b(void)
{
	suite_start(LS_TEST_TF_B, "TF-b", 1);
	for (unsigned i = 0; i < SUITE_OBJ_SAMPLES; i++) {
		suite_spawn(TF_THREAD, SUITE_PRIO_BELOW, tf_body, 0);
		suite_pace();
		LS_MARK(TF_B, T1, i);
		int rc = bench_thread_delete(TF_THREAD);
		LS_MARK(TF_B, T2, i);
		SUITE_CHECK(rc == BENCH_SUCCESS);
	}
	suite_end(LS_TEST_TF_B);
}

/* TF-c-2: delete a thread after it ran (it ran at once, more urgent than
 * main, and suspended itself). */
void test_tf_c(void)
{
	suite_start(LS_TEST_TF_C, "TF-c", 2);
	for (unsigned i = 0; i < SUITE_OBJ_SAMPLES; i++) {
		suite_spawn(TF_THREAD, SUITE_PRIO_HIGH, tf_body, 0);
		suite_pace();
		LS_MARK(TF_C, T1, i);
		int rc = bench_thread_delete(TF_THREAD);
		LS_MARK(TF_C, T2, i);
		SUITE_CHECK(rc == BENCH_SUCCESS);
	}
	suite_end(LS_TEST_TF_C);
}
