/*
 * Message queues: FIFO order, blocking on full and on empty, direct
 * hand-over, timeouts, rendezvous (capacity 0), deletion, send from an ISR.
 */
#include "ktest.h"

static k_msgq_t q;
static uint32_t q_buf[4];

static void sender(void *arg)
{
	(void)arg;
	for (uint32_t v = 1; v <= 4; v++) {
		KT_EQ(k_msgq_send(&q, &v, K_FOREVER), K_OK);
		kt_log("S%u", (unsigned)v);
	}
}

static void receiver(void *arg)
{
	(void)arg;
	for (int i = 0; i < 4; i++) {
		uint32_t v = 0;
		KT_EQ(k_msgq_receive(&q, &v, K_FOREVER), K_OK);
		kt_log("R%u", (unsigned)v);
	}
}

static void full_main(void *arg)
{
	(void)arg;
	kt_spawn("R", 20, receiver, NULL);
	kt_spawn("S", 10, sender, NULL);
	k_sleep(1);
	KT_EQ(k_msgq_count(&q), 0);
}

/* Sender more urgent than receiver, capacity 2: the sender fills the queue,
 * blocks on the 3rd message, and each receive lets it run again at once. */
static void sender_blocks_when_full(void)
{
	k_msgq_init(&q, q_buf, sizeof(uint32_t), 2);
	KT_RUN(full_main, NULL, 5);
	KT_LOG_IS("S1 S2 S3 R1 S4 R2 R3 R4");
}

static void empty_main(void *arg)
{
	(void)arg;
	kt_spawn("R", 10, receiver, NULL); /* blocks at once: queue empty */
	for (uint32_t v = 7; v < 11; v++) {
		kt_log("m%u", (unsigned)v);
		KT_EQ(k_msgq_send(&q, &v, K_NO_WAIT), K_OK); /* R preempts inside */
	}
	KT_EQ(k_msgq_count(&q), 0); /* every message went straight to R */
}

static void receiver_blocks_when_empty(void)
{
	k_msgq_init(&q, q_buf, sizeof(uint32_t), 2);
	KT_RUN(empty_main, NULL, 20);
	KT_LOG_IS("m7 R7 m8 R8 m9 R9 m10 R10");
}

static void fifo_main(void *arg)
{
	(void)arg;
	uint32_t v;
	for (v = 100; v < 104; v++)
		KT_EQ(k_msgq_send(&q, &v, K_NO_WAIT), K_OK);
	KT_EQ(k_msgq_send(&q, &v, K_NO_WAIT), K_EAGAIN);
	KT_EQ(k_msgq_count(&q), 4);
	for (uint32_t want = 100; want < 104; want++) {
		KT_EQ(k_msgq_receive(&q, &v, K_NO_WAIT), K_OK);
		KT_EQ(v, want);
	}
	KT_EQ(k_msgq_receive(&q, &v, K_NO_WAIT), K_EAGAIN);
	/* Wrap-around of the ring keeps the order. */
	for (uint32_t round = 0; round < 3; round++) {
		for (v = round * 10; v < round * 10 + 3; v++)
			KT_EQ(k_msgq_send(&q, &v, K_NO_WAIT), K_OK);
		for (uint32_t want = round * 10; want < round * 10 + 3; want++) {
			KT_EQ(k_msgq_receive(&q, &v, K_NO_WAIT), K_OK);
			KT_EQ(v, want);
		}
	}
	k_ticks_t t0 = k_tick_get();
	KT_EQ(k_msgq_receive(&q, &v, 2), K_ETIMEDOUT);
	KT_EQ(k_tick_get(), t0 + 2);
	for (v = 0; v < 4; v++)
		KT_EQ(k_msgq_send(&q, &v, K_NO_WAIT), K_OK);
	KT_EQ(k_msgq_send(&q, &v, 3), K_ETIMEDOUT);
	KT_EQ(k_tick_get(), t0 + 5);
}

static void fifo_and_timeouts(void)
{
	k_msgq_init(&q, q_buf, sizeof(uint32_t), 4);
	KT_RUN(fifo_main, NULL, 5);
}

/* Several blocked senders: their messages enter the queue in priority
 * order of the senders as space frees up. */
static void one_shot_sender(void *arg)
{
	uint32_t v = (uint32_t)(uintptr_t)arg;
	KT_EQ(k_msgq_send(&q, &v, K_FOREVER), K_OK);
}

static void senders_main(void *arg)
{
	(void)arg;
	uint32_t v = 1;
	KT_EQ(k_msgq_send(&q, &v, K_NO_WAIT), K_OK); /* queue (capacity 1) now full */
	kt_spawn("s30", 30, one_shot_sender, (void *)(uintptr_t)30);
	kt_spawn("s10", 10, one_shot_sender, (void *)(uintptr_t)10);
	kt_spawn("s20", 20, one_shot_sender, (void *)(uintptr_t)20);
	k_sleep(1); /* all three block on the full queue */
	for (int i = 0; i < 4; i++) {
		KT_EQ(k_msgq_receive(&q, &v, K_NO_WAIT), K_OK);
		kt_log("%u", (unsigned)v);
	}
}

static void blocked_senders_in_priority_order(void)
{
	k_msgq_init(&q, q_buf, sizeof(uint32_t), 1);
	KT_RUN(senders_main, NULL, 5);
	KT_LOG_IS("1 10 20 30");
}

static void rendezvous_main(void *arg)
{
	(void)arg;
	uint32_t v = 5;
	KT_EQ(k_msgq_send(&q, &v, K_NO_WAIT), K_EAGAIN); /* nobody receiving */
	kt_spawn("R", 1, receiver, NULL); /* more urgent: waits in receive */
	for (v = 1; v <= 4; v++)
		KT_EQ(k_msgq_send(&q, &v, K_NO_WAIT), K_OK);
	kt_spawn("S", 10, sender, NULL); /* less urgent than main: waits */
	uint32_t got[4];
	for (int i = 0; i < 4; i++)
		KT_EQ(k_msgq_receive(&q, &got[i], K_FOREVER), K_OK);
	kt_log("main:%u%u%u%u", (unsigned)got[0], (unsigned)got[1], (unsigned)got[2],
	       (unsigned)got[3]);
	k_sleep(1); /* let S return from its last send */
}

static void rendezvous_queue(void)
{
	k_msgq_init(&q, NULL, sizeof(uint32_t), 0);
	KT_RUN(rendezvous_main, NULL, 5);
	KT_LOG_IS("R1 R2 R3 R4 S1 S2 S3 main:1234 S4");
}

static void deleted_receiver(void *arg)
{
	(void)arg;
	uint32_t v;
	KT_EQ(k_msgq_receive(&q, &v, K_FOREVER), K_EDELETED);
	kt_log("R");
}

static void delete_main(void *arg)
{
	(void)arg;
	kt_spawn("R", 1, deleted_receiver, NULL);
	kt_log("del");
	KT_EQ(k_msgq_delete(&q), K_OK);
	kt_log("after");
}

static void delete_wakes_waiters(void)
{
	k_msgq_init(&q, q_buf, sizeof(uint32_t), 2);
	KT_RUN(delete_main, NULL, 5);
	KT_LOG_IS("del R after");
}

static void send_isr(void *arg)
{
	(void)arg;
	uint32_t v = 77;
	KT_EQ(k_msgq_send(&q, &v, K_FOREVER), K_OK); /* K_FOREVER acts as no-wait in ISR */
	KT_EQ(k_msgq_send(&q, &v, K_FOREVER), K_OK);
	KT_EQ(k_msgq_send(&q, &v, K_FOREVER), K_EAGAIN); /* full (capacity 1): no blocking */
	kt_log("isr");
	board_irq_line_ack(1);
}

static void isr_receiver(void *arg)
{
	(void)arg;
	uint32_t v = 0;
	KT_EQ(k_msgq_receive(&q, &v, K_FOREVER), K_OK);
	kt_log("R%u", (unsigned)v);
}

static void isr_send_main(void *arg)
{
	(void)arg;
	k_irq_attach(1, send_isr, NULL);
	board_irq_line_enable(1, true);
	kt_spawn("R", 10, isr_receiver, NULL);
	host_raise_irq(1);
	kt_log("main");
	KT_EQ(k_msgq_count(&q), 1);
}

static void send_from_isr(void)
{
	k_msgq_init(&q, q_buf, sizeof(uint32_t), 1);
	KT_RUN(isr_send_main, NULL, 20);
	KT_LOG_IS("isr R77 main");
}

int main(void)
{
	KT_CASE(sender_blocks_when_full);
	KT_CASE(receiver_blocks_when_empty);
	KT_CASE(fifo_and_timeouts);
	KT_CASE(blocked_senders_in_priority_order);
	KT_CASE(rendezvous_queue);
	KT_CASE(delete_wakes_waiters);
	KT_CASE(send_from_isr);
	return kt_summary("test_msgq");
}
