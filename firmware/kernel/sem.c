/*
 * Counting semaphores (binary = limit 1). A give with waiters hands the unit
 * straight to the first waiter (the count stays 0), so a woken thread never
 * has to compete for it again.
 */
#include "kernel_internal.h"

int k_sem_init(k_sem_t *s, uint32_t initial, uint32_t limit)
{
	if (limit == 0 || initial > limit)
		return K_EINVAL;
	k_waitq_init(&s->waitq);
	s->count = initial;
	s->limit = limit;
	return K_OK;
}

int k_sem_delete(k_sem_t *s)
{
	unsigned key = arch_irq_lock();
	k_waitq_wake_all(&s->waitq, K_EDELETED);
	s->count = 0;
	k_resched_unlock(key);
	return K_OK;
}

int k_sem_give(k_sem_t *s)
{
	unsigned key = arch_irq_lock();
	k_thread_t *w = k_waitq_first(&s->waitq);
	if (w != NULL) {
		k_unpend(w, K_OK);
		k_resched_unlock(key); /* deferred when called from an ISR */
		return K_OK;
	}
	if (s->count >= s->limit) {
		arch_irq_unlock(key);
		return K_EOVERFLOW;
	}
	s->count++;
	arch_irq_unlock(key);
	return K_OK;
}

int k_sem_take(k_sem_t *s, k_ticks_t timeout)
{
	unsigned key = arch_irq_lock();
	if (s->count > 0) {
		s->count--;
		arch_irq_unlock(key);
		return K_OK;
	}
	if (timeout == K_NO_WAIT || k_in_isr()) {
		arch_irq_unlock(key);
		return K_EAGAIN;
	}
	return k_pend_current(&s->waitq, NULL, timeout, key);
}

uint32_t k_sem_count(const k_sem_t *s)
{
	return s->count;
}
