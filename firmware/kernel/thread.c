/*
 * Thread management: create, delete, exit, yield, priority, suspend/resume.
 */
#include <string.h>

#include "kernel_internal.h"

int k_thread_create(k_thread_t *t, const char *name, uint8_t prio,
		    void *stack, size_t stack_size, k_entry_t entry, void *arg)
{
	if (t == NULL || entry == NULL || stack == NULL || stack_size < K_ARCH_MIN_STACK_SIZE)
		return K_EINVAL;
	if (k_in_isr())
		return K_EPERM;
	unsigned key = arch_irq_lock();
	if (k_thread_alive(t)) {
		arch_irq_unlock(key);
		return K_EINVAL; /* still in use */
	}
	memset(t, 0, sizeof(*t));
	t->prio = prio;
	t->base_prio = prio;
	t->entry = entry;
	t->arg = arg;
	t->name = name;
	k_dlist_init(&t->owned);
	arch_context_init(t, stack, stack_size);
	k_rq_add_tail(t);
	k_resched_unlock(key);
	return K_OK;
}

bool k_thread_alive(const k_thread_t *t)
{
	/* A zeroed (never created) thread has prio 0 and no entry. */
	return t->entry != NULL && !(t->state & K_STATE_DEAD);
}

int k_thread_delete(k_thread_t *t)
{
	if (k_in_isr())
		return K_EPERM;
	unsigned key = arch_irq_lock();
	if (!k_thread_alive(t) || (t->state & K_STATE_IDLE)) {
		arch_irq_unlock(key);
		return K_EINVAL;
	}
	if (k_thread_runnable(t))
		k_rq_remove(t);
	if (t->state & K_STATE_PENDING) {
		k_mutex_t *m = t->pend_mutex;
		k_dlist_remove(&t->qnode);
		t->pend_q = NULL;
		t->pend_mutex = NULL;
		if (m != NULL)
			k_pi_update(m->owner);
	}
	k_timeout_remove(t);
	t->state = K_STATE_DEAD;
	k_mutex_release_all(t);
	/* If t deleted itself, this switches away for good: arch_switch saves
	 * a context that nobody will resume. */
	k_resched_unlock(key);
	return K_OK;
}

void k_thread_exit(void)
{
	k_thread_delete(k_current);
	for (;;) {
		/* unreachable: a dead thread is never switched back in */
	}
}

k_thread_t *k_thread_self(void)
{
	return k_current;
}

void k_yield(void)
{
	if (k_in_isr())
		return;
	unsigned key = arch_irq_lock();
	k_thread_t *self = k_current;
	if (k_thread_runnable(self) && k_rq_has_peer(self)) {
		k_rq_remove(self);
		k_rq_add_tail(self);
	}
	k_resched_unlock(key);
}

int k_thread_priority_set(k_thread_t *t, uint8_t prio)
{
	unsigned key = arch_irq_lock();
	if (!k_thread_alive(t) || (t->state & K_STATE_IDLE)) {
		arch_irq_unlock(key);
		return K_EINVAL;
	}
	t->base_prio = prio;
	k_pi_update(t); /* effective = max(base, inherited), then the chain */
	k_resched_unlock(key);
	return K_OK;
}

uint8_t k_thread_priority_get(const k_thread_t *t)
{
	return t->prio;
}

uint8_t k_thread_base_priority_get(const k_thread_t *t)
{
	return t->base_prio;
}

int k_thread_suspend(k_thread_t *t)
{
	unsigned key = arch_irq_lock();
	if (!k_thread_alive(t) || (t->state & K_STATE_IDLE)) {
		arch_irq_unlock(key);
		return K_EINVAL;
	}
	if (k_thread_runnable(t))
		k_rq_remove(t);
	t->state |= K_STATE_SUSPENDED;
	k_resched_unlock(key);
	return K_OK;
}

int k_thread_resume(k_thread_t *t)
{
	unsigned key = arch_irq_lock();
	if (!k_thread_alive(t) || (t->state & K_STATE_IDLE)) {
		arch_irq_unlock(key);
		return K_EINVAL;
	}
	if (t->state & K_STATE_SUSPENDED) {
		t->state &= ~K_STATE_SUSPENDED;
		if (k_thread_runnable(t))
			k_rq_add_tail(t);
	}
	k_resched_unlock(key);
	return K_OK;
}
