/*
 * Message queues: fixed-size messages copied into a caller-provided ring of
 * `capacity` slots, FIFO. A send to an empty queue with a blocked receiver
 * copies straight into the receiver's buffer; a receive from a full queue
 * with a blocked sender moves that sender's message into the freed slot, so
 * message order is exactly send order. capacity 0 gives a rendezvous queue
 * (every send waits for a receiver and vice versa).
 */
#include <string.h>

#include "kernel_internal.h"

int k_msgq_init(k_msgq_t *q, void *buf, uint32_t msg_size, uint32_t capacity)
{
	if (msg_size == 0 || (capacity != 0 && buf == NULL))
		return K_EINVAL;
	k_waitq_init(&q->senders);
	k_waitq_init(&q->receivers);
	q->buf = buf;
	q->msg_size = msg_size;
	q->capacity = capacity;
	q->count = 0;
	q->read_idx = 0;
	q->write_idx = 0;
	return K_OK;
}

int k_msgq_delete(k_msgq_t *q)
{
	unsigned key = arch_irq_lock();
	k_waitq_wake_all(&q->senders, K_EDELETED);
	k_waitq_wake_all(&q->receivers, K_EDELETED);
	q->count = 0;
	k_resched_unlock(key);
	return K_OK;
}

static void ring_put(k_msgq_t *q, const void *msg)
{
	memcpy(q->buf + q->write_idx * q->msg_size, msg, q->msg_size);
	q->write_idx = (q->write_idx + 1 == q->capacity) ? 0 : q->write_idx + 1;
	q->count++;
}

static void ring_get(k_msgq_t *q, void *msg)
{
	memcpy(msg, q->buf + q->read_idx * q->msg_size, q->msg_size);
	q->read_idx = (q->read_idx + 1 == q->capacity) ? 0 : q->read_idx + 1;
	q->count--;
}

int k_msgq_send(k_msgq_t *q, const void *msg, k_ticks_t timeout)
{
	unsigned key = arch_irq_lock();
	k_thread_t *receiver = k_waitq_first(&q->receivers);
	if (receiver != NULL) {
		/* Receivers only wait on an empty queue: hand over directly. */
		memcpy(receiver->wait_msg, msg, q->msg_size);
		k_unpend(receiver, K_OK);
		k_resched_unlock(key);
		return K_OK;
	}
	if (q->count < q->capacity) {
		ring_put(q, msg);
		arch_irq_unlock(key);
		return K_OK;
	}
	if (timeout == K_NO_WAIT || k_in_isr()) {
		arch_irq_unlock(key);
		return K_EAGAIN;
	}
	k_current->wait_msg = (void *)msg;
	return k_pend_current(&q->senders, NULL, timeout, key);
}

int k_msgq_receive(k_msgq_t *q, void *msg, k_ticks_t timeout)
{
	unsigned key = arch_irq_lock();
	k_thread_t *sender = k_waitq_first(&q->senders);
	if (q->count > 0) {
		ring_get(q, msg);
		if (sender != NULL) {
			ring_put(q, sender->wait_msg);
			k_unpend(sender, K_OK);
		}
		k_resched_unlock(key);
		return K_OK;
	}
	if (sender != NULL) {
		/* Only possible with capacity 0: take the message from the sender. */
		memcpy(msg, sender->wait_msg, q->msg_size);
		k_unpend(sender, K_OK);
		k_resched_unlock(key);
		return K_OK;
	}
	if (timeout == K_NO_WAIT || k_in_isr()) {
		arch_irq_unlock(key);
		return K_EAGAIN;
	}
	k_current->wait_msg = msg;
	return k_pend_current(&q->receivers, NULL, timeout, key);
}

uint32_t k_msgq_count(const k_msgq_t *q)
{
	return q->count;
}
