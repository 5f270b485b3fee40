/*
 * Kernel-private helpers shared by the core's source files. Every function
 * here expects interrupts to be locked by the caller.
 */
#ifndef KERNEL_INTERNAL_H
#define KERNEL_INTERNAL_H

#include "kernel/kernel.h"
#include "kernel/arch.h"

#define K_THREAD_OF(node, member) K_CONTAINER_OF(node, k_thread_t, member)

static inline bool k_thread_runnable(const k_thread_t *t)
{
	return (t->state & (K_STATE_BLOCKING | K_STATE_IDLE)) == 0;
}

/* ready queue */
void k_rq_add_tail(k_thread_t *t);
void k_rq_add_head(k_thread_t *t);
void k_rq_remove(k_thread_t *t);
k_thread_t *k_rq_highest(void);
bool k_rq_has_peer(const k_thread_t *t); /* another ready thread at t->prio */

/* scheduling */
/* Switch to the highest ready thread if it is not the current one; deferred
 * (does nothing) inside an ISR or before k_start(). */
void k_reschedule(void);
/* k_reschedule() then arch_irq_unlock(key). */
void k_resched_unlock(unsigned key);
/* Block the current thread on q (mutex: the mutex q belongs to, for priority
 * inheritance) for at most timeout ticks. Unlocks with key before returning
 * the wait result set by whoever woke it. */
int k_pend_current(k_waitq_t *q, k_mutex_t *m, k_ticks_t timeout, unsigned key);
/* Take t off its wait queue and timeout list with the given result; make it
 * ready unless suspended. Does not reschedule and does not touch priority
 * inheritance (the caller knows which mutex, if any, is concerned). */
void k_unpend(k_thread_t *t, int result);
/* Wake every waiter of q with result (object deletion). */
void k_waitq_wake_all(k_waitq_t *q, int result);

/* wait queues */
void k_waitq_init(k_waitq_t *q);
void k_waitq_insert(k_waitq_t *q, k_thread_t *t);
k_thread_t *k_waitq_first(const k_waitq_t *q);

/* timeouts */
void k_timeout_add(k_thread_t *t, k_ticks_t ticks);
void k_timeout_remove(k_thread_t *t);

/* priority inheritance (mutex.c) */
/* Re-evaluate t's effective priority and walk the chain of mutex owners. */
void k_pi_update(k_thread_t *t);
/* Release every mutex t owns (thread deletion). */
void k_mutex_release_all(k_thread_t *t);
/* Change t's effective priority, keeping every queue it is on ordered. */
void k_set_effective_prio(k_thread_t *t, uint8_t prio);

extern volatile uint32_t k_isr_nesting;

#endif /* KERNEL_INTERNAL_H */
