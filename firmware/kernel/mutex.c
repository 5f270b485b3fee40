/*
 * Mutexes with transitive priority inheritance.
 *
 * Effective priority of a thread = the highest (numerically lowest) of its
 * base priority and of the first waiter of every mutex it owns. Whenever one
 * of those inputs changes, k_pi_update() recomputes it for the thread and,
 * if it changed and the thread itself waits on a mutex, for that mutex's
 * owner, and so on up the chain. The walk stops at the first thread whose
 * priority does not change, so it terminates even on a deadlock cycle; the
 * hop bound is a second guard.
 */
#include "kernel_internal.h"

#define PI_MAX_HOPS 256

static uint8_t inherited_target(const k_thread_t *t)
{
	uint8_t prio = t->base_prio;
	k_dnode_t *n;
	K_DLIST_FOR_EACH(&t->owned, n) {
		const k_mutex_t *m = K_CONTAINER_OF(n, k_mutex_t, owner_node);
		const k_thread_t *w = k_waitq_first(&m->waitq);
		if (w != NULL && w->prio < prio)
			prio = w->prio;
	}
	return prio;
}

void k_set_effective_prio(k_thread_t *t, uint8_t prio)
{
	if (prio == t->prio)
		return;
	if (k_thread_runnable(t)) {
		k_rq_remove(t);
		t->prio = prio;
		/* The running thread keeps its turn; see kernel.h. */
		if (t == k_current)
			k_rq_add_head(t);
		else
			k_rq_add_tail(t);
	} else if (t->state & K_STATE_PENDING) {
		k_waitq_t *q = t->pend_q;
		k_dlist_remove(&t->qnode);
		t->prio = prio;
		k_waitq_insert(q, t);
	} else {
		t->prio = prio;
	}
}

void k_pi_update(k_thread_t *t)
{
	for (unsigned hop = 0; t != NULL && hop < PI_MAX_HOPS; hop++) {
		uint8_t target = inherited_target(t);
		if (target == t->prio)
			return;
		k_set_effective_prio(t, target);
		if (!(t->state & K_STATE_PENDING) || t->pend_mutex == NULL)
			return;
		t = t->pend_mutex->owner;
	}
}

/* Give m from its owner to its first waiter (or make it free). */
static void hand_over(k_mutex_t *m)
{
	k_thread_t *old = m->owner;
	k_dlist_remove(&m->owner_node);
	k_thread_t *next = k_waitq_first(&m->waitq);
	if (next != NULL) {
		k_unpend(next, K_OK);
		m->owner = next;
		m->lock_count = 1;
		k_dlist_append(&next->owned, &m->owner_node);
		k_pi_update(next); /* it inherits from the waiters left behind */
	} else {
		m->owner = NULL;
		m->lock_count = 0;
	}
	k_pi_update(old); /* drop what old inherited through m */
}

int k_mutex_init(k_mutex_t *m)
{
	k_waitq_init(&m->waitq);
	m->owner = NULL;
	m->lock_count = 0;
	m->owner_node.next = NULL;
	m->owner_node.prev = NULL;
	return K_OK;
}

int k_mutex_delete(k_mutex_t *m)
{
	if (k_in_isr())
		return K_EPERM;
	unsigned key = arch_irq_lock();
	k_thread_t *owner = m->owner;
	k_waitq_wake_all(&m->waitq, K_EDELETED);
	if (owner != NULL) {
		k_dlist_remove(&m->owner_node);
		m->owner = NULL;
		m->lock_count = 0;
		k_pi_update(owner);
	}
	k_resched_unlock(key);
	return K_OK;
}

int k_mutex_lock(k_mutex_t *m, k_ticks_t timeout)
{
	if (k_in_isr())
		return K_EPERM;
	unsigned key = arch_irq_lock();
	k_thread_t *self = k_current;
	if (m->owner == NULL) {
		m->owner = self;
		m->lock_count = 1;
		k_dlist_append(&self->owned, &m->owner_node);
		arch_irq_unlock(key);
		return K_OK;
	}
	if (m->owner == self) {
		m->lock_count++;
		arch_irq_unlock(key);
		return K_OK;
	}
	if (timeout == K_NO_WAIT) {
		arch_irq_unlock(key);
		return K_EAGAIN;
	}
	/* On success the unlocker has already made us the owner. */
	return k_pend_current(&m->waitq, m, timeout, key);
}

int k_mutex_unlock(k_mutex_t *m)
{
	if (k_in_isr())
		return K_EPERM;
	unsigned key = arch_irq_lock();
	if (m->owner != k_current) {
		arch_irq_unlock(key);
		return K_EPERM;
	}
	if (--m->lock_count == 0)
		hand_over(m);
	k_resched_unlock(key);
	return K_OK;
}

k_thread_t *k_mutex_owner(const k_mutex_t *m)
{
	return m->owner;
}

void k_mutex_release_all(k_thread_t *t)
{
	k_dnode_t *n;
	while ((n = k_dlist_first(&t->owned)) != NULL)
		hand_over(K_CONTAINER_OF(n, k_mutex_t, owner_node));
}
