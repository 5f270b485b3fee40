/*
 * MQ-a-1: message send -> blocked receiver resumes. The receiver is more
 * urgent than the main thread and waits in receive on an empty queue; main
 * marks T1 (arg = the message) and sends; the receiver preempts it at once
 * and marks T2 with the message it got, then waits again.
 */
#include "suite.h"

#define QUEUE 0
#define RECEIVER 0

static void receiver(void *arg)
{
	(void)arg;
	for (;;) {
		uint32_t msg = 0;
		int rc = bench_mq_receive(QUEUE, &msg, BENCH_FOREVER);
		LS_MARK(MQ, T2, msg);
		SUITE_CHECK(rc == BENCH_SUCCESS);
	}
}

void test_mq(void)
{
	SUITE_CHECK(bench_mq_create(QUEUE, sizeof(uint32_t), 4) == BENCH_SUCCESS);
	suite_spawn(RECEIVER, SUITE_PRIO_HIGH, receiver, 0); /* runs, blocks in receive */
	suite_start(LS_TEST_MQ, "MQ-a", 1);
	for (uint32_t i = 0; i < SUITE_OBJ_SAMPLES; i++) {
		suite_pace();
		LS_MARK(MQ, T1, i);
		int rc = bench_mq_send(QUEUE, &i, BENCH_FOREVER);
		SUITE_CHECK(rc == BENCH_SUCCESS);
	}
	suite_end(LS_TEST_MQ);
	suite_delete_threads(RECEIVER, 1);
	SUITE_CHECK(bench_mq_delete(QUEUE) == BENCH_SUCCESS);
}
