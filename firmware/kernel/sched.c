/*
 * Scheduler core: ready queue, context-switch decisions, ISR entry/exit,
 * tick, timeouts, idle thread. See kernel.h for the rules.
 */
#include "kernel_internal.h"

k_thread_t *k_current;
volatile uint32_t k_isr_nesting;

static k_dnode_t ready_q[K_PRIO_COUNT];
static uint32_t ready_map[K_PRIO_COUNT / 32]; /* bit p%32 of word p/32: level p non-empty */
static uint32_t ready_summary;                /* bit w: ready_map[w] != 0 */

static k_dnode_t timeout_list; /* k_thread_t.tnode, sorted by wake_tick */
static volatile k_ticks_t tick_count;
static k_ticks_t slice_ticks;
static k_ticks_t slice_left;
static bool running;
static uint32_t switch_count;

static k_thread_t idle_thread;
static uint8_t idle_stack[K_ARCH_IDLE_STACK_SIZE] __attribute__((aligned(K_ARCH_STACK_ALIGN)));

/*
 * Index of the least significant set bit of a non-zero word, in constant
 * time (RV32IMAC has no ctz instruction; the multiply is one M-extension op).
 */
static inline unsigned lowest_bit(uint32_t x)
{
	static const uint8_t debruijn_pos[32] = {
		0, 1, 28, 2, 29, 14, 24, 3, 30, 22, 20, 15, 25, 17, 4, 8,
		31, 27, 13, 23, 21, 19, 16, 7, 26, 12, 18, 6, 11, 5, 10, 9,
	};
	return debruijn_pos[((x & -x) * 0x077CB531u) >> 27];
}

/* ---------------------------------------------------------------- ready queue */

static void rq_mark(uint8_t prio)
{
	ready_map[prio >> 5] |= 1u << (prio & 31);
	ready_summary |= 1u << (prio >> 5);
}

void k_rq_add_tail(k_thread_t *t)
{
	k_dlist_append(&ready_q[t->prio], &t->qnode);
	rq_mark(t->prio);
}

void k_rq_add_head(k_thread_t *t)
{
	k_dlist_prepend(&ready_q[t->prio], &t->qnode);
	rq_mark(t->prio);
}

void k_rq_remove(k_thread_t *t)
{
	k_dlist_remove(&t->qnode);
	if (k_dlist_empty(&ready_q[t->prio])) {
		ready_map[t->prio >> 5] &= ~(1u << (t->prio & 31));
		if (ready_map[t->prio >> 5] == 0)
			ready_summary &= ~(1u << (t->prio >> 5));
	}
}

k_thread_t *k_rq_highest(void)
{
	if (ready_summary == 0)
		return &idle_thread;
	unsigned word = lowest_bit(ready_summary);
	unsigned prio = (word << 5) | lowest_bit(ready_map[word]);
	return K_THREAD_OF(ready_q[prio].next, qnode);
}

bool k_rq_has_peer(const k_thread_t *t)
{
	return !k_dlist_empty(&ready_q[t->prio]) && !k_dlist_single(&ready_q[t->prio]);
}

/* ---------------------------------------------------------------- switching */

static void switch_to(k_thread_t *next)
{
	k_thread_t *prev = k_current;
	k_current = next;
	slice_left = slice_ticks;
	switch_count++;
	arch_switch(prev, next);
}

void k_reschedule(void)
{
	if (k_isr_nesting != 0 || !running)
		return;
	k_thread_t *next = k_rq_highest();
	if (next != k_current)
		switch_to(next);
}

void k_resched_unlock(unsigned key)
{
	k_reschedule();
	arch_irq_unlock(key);
}

K_IRQ_PATH(k_isr_enter) void k_isr_enter(void)
{
	k_isr_nesting++;
}

K_IRQ_PATH(k_isr_exit) k_thread_t *k_isr_exit(void)
{
	if (--k_isr_nesting != 0 || !running)
		return NULL;
	k_thread_t *next = k_rq_highest();
	if (next == k_current)
		return NULL;
	k_thread_t *prev = k_current;
	k_current = next;
	slice_left = slice_ticks;
	switch_count++;
	return prev;
}

bool k_in_isr(void)
{
	return k_isr_nesting != 0;
}

uint32_t k_switch_count(void)
{
	return switch_count;
}

/* ---------------------------------------------------------------- wait queues */

void k_waitq_init(k_waitq_t *q)
{
	k_dlist_init(&q->waiters);
}

void k_waitq_insert(k_waitq_t *q, k_thread_t *t)
{
	/* Walk back from the tail to the last waiter of equal or higher
	 * priority: keeps priority order and FIFO among equals, and is O(1)
	 * for the common arrival patterns (see kernel.h). */
	k_dnode_t *where = q->waiters.prev;
	while (where != &q->waiters && K_THREAD_OF(where, qnode)->prio > t->prio)
		where = where->prev;
	k_dlist_insert_after(where, &t->qnode);
	t->pend_q = q;
}

k_thread_t *k_waitq_first(const k_waitq_t *q)
{
	k_dnode_t *n = k_dlist_first(&q->waiters);
	return n ? K_THREAD_OF(n, qnode) : NULL;
}

void k_unpend(k_thread_t *t, int result)
{
	k_dlist_remove(&t->qnode);
	t->pend_q = NULL;
	t->pend_mutex = NULL;
	t->state &= ~K_STATE_PENDING;
	k_timeout_remove(t);
	t->wait_result = result;
	if (k_thread_runnable(t))
		k_rq_add_tail(t);
}

void k_waitq_wake_all(k_waitq_t *q, int result)
{
	k_thread_t *t;
	while ((t = k_waitq_first(q)) != NULL)
		k_unpend(t, result);
}

int k_pend_current(k_waitq_t *q, k_mutex_t *m, k_ticks_t timeout, unsigned key)
{
	k_thread_t *self = k_current;
	k_rq_remove(self);
	self->state |= K_STATE_PENDING;
	self->pend_mutex = m;
	self->wait_result = K_OK;
	k_waitq_insert(q, self);
	if (timeout != K_FOREVER)
		k_timeout_add(self, timeout);
	if (m != NULL)
		k_pi_update(m->owner);
	k_reschedule();
	/* Resumed: whoever woke us (give, unlock, send, timeout, delete) set the
	 * result and took us off every queue. */
	int result = self->wait_result;
	arch_irq_unlock(key);
	return result;
}

/* ---------------------------------------------------------------- timeouts */

static inline bool tick_reached(k_ticks_t now, k_ticks_t when)
{
	return (int32_t)(now - when) >= 0;
}

void k_timeout_add(k_thread_t *t, k_ticks_t ticks)
{
	if (ticks > 0x7FFFFFFFu)
		ticks = 0x7FFFFFFFu;
	t->wake_tick = tick_count + ticks;
	/* Sorted by wake tick, FIFO among equal wake ticks. */
	k_dnode_t *where = timeout_list.prev;
	while (where != &timeout_list &&
	       (int32_t)(K_THREAD_OF(where, tnode)->wake_tick - t->wake_tick) > 0)
		where = where->prev;
	k_dlist_insert_after(where, &t->tnode);
}

void k_timeout_remove(k_thread_t *t)
{
	if (k_dnode_linked(&t->tnode))
		k_dlist_remove(&t->tnode);
}

static void expire(k_thread_t *t)
{
	k_dlist_remove(&t->tnode);
	if (t->state & K_STATE_PENDING) {
		k_mutex_t *m = t->pend_mutex;
		k_unpend(t, K_ETIMEDOUT);
		if (m != NULL)
			k_pi_update(m->owner); /* the owner may lose inherited priority */
	} else {
		t->state &= ~K_STATE_SLEEPING;
		if (k_thread_runnable(t))
			k_rq_add_tail(t);
	}
}

/*
 * K_TRACE_TICK_ENTRY / K_TRACE_TICK_EXIT: the port's trace points around the
 * tick's work, so that an analysis can flag the samples a tick interrupted
 * (docs/markers.md, KERNEL/T1 and T2). A port with a bus trace window makes
 * each one store (arch_port.h); by default nothing.
 */
#ifndef K_TRACE_TICK_ENTRY
#define K_TRACE_TICK_ENTRY() ((void)0)
#define K_TRACE_TICK_EXIT() ((void)0)
#endif

void k_tick_announce(void)
{
	K_TRACE_TICK_ENTRY();
	unsigned key = arch_irq_lock();
	k_ticks_t now = ++tick_count;
	k_dnode_t *n;
	while ((n = k_dlist_first(&timeout_list)) != NULL &&
	       tick_reached(now, K_THREAD_OF(n, tnode)->wake_tick))
		expire(K_THREAD_OF(n, tnode));

	k_thread_t *cur = k_current;
	if (slice_ticks != 0 && running && k_thread_runnable(cur)) {
		if (--slice_left == 0) {
			slice_left = slice_ticks;
			if (k_rq_has_peer(cur)) {
				k_rq_remove(cur);
				k_rq_add_tail(cur);
			}
		}
	}
	k_resched_unlock(key); /* deferred: we are in an ISR */
	K_TRACE_TICK_EXIT();
}

bool k_timeouts_pending(void)
{
	return !k_dlist_empty(&timeout_list);
}

k_ticks_t k_tick_get(void)
{
	return tick_count;
}

void k_timeslice_set(k_ticks_t ticks)
{
	unsigned key = arch_irq_lock();
	slice_ticks = ticks;
	slice_left = ticks;
	arch_irq_unlock(key);
}

void k_sleep(k_ticks_t ticks)
{
	if (k_in_isr())
		return; /* an ISR cannot sleep */
	if (ticks == 0) {
		k_yield();
		return;
	}
	unsigned key = arch_irq_lock();
	k_thread_t *self = k_current;
	k_rq_remove(self);
	self->state |= K_STATE_SLEEPING;
	if (ticks != K_FOREVER)
		k_timeout_add(self, ticks);
	k_resched_unlock(key);
}

/* ---------------------------------------------------------------- lifecycle */

static void idle_loop(void *arg)
{
	(void)arg;
	for (;;)
		arch_idle();
}

k_thread_t *k_idle_thread(void)
{
	return &idle_thread;
}

void k_thread_trampoline(void)
{
	arch_irq_unlock(K_ARCH_IRQ_UNLOCKED_KEY);
	k_thread_t *self = k_current;
	self->entry(self->arg);
	k_thread_exit();
}

void k_init(void)
{
	unsigned key = arch_irq_lock();
	for (unsigned p = 0; p < K_PRIO_COUNT; p++)
		k_dlist_init(&ready_q[p]);
	for (unsigned w = 0; w < K_PRIO_COUNT / 32; w++)
		ready_map[w] = 0;
	ready_summary = 0;
	k_dlist_init(&timeout_list);
	tick_count = 0;
	slice_ticks = 0;
	slice_left = 0;
	running = false;
	switch_count = 0;
	k_isr_nesting = 0;

	idle_thread = (k_thread_t){0};
	idle_thread.state = K_STATE_IDLE;
	idle_thread.prio = K_PRIO_LOWEST;
	idle_thread.base_prio = K_PRIO_LOWEST;
	idle_thread.entry = idle_loop;
	idle_thread.name = "idle";
	k_dlist_init(&idle_thread.owned);
	arch_context_init(&idle_thread, idle_stack, sizeof(idle_stack));
	k_current = &idle_thread; /* until k_start(): creators are "the boot context" */
	arch_irq_unlock(key);
}

bool k_started(void)
{
	return running;
}

void k_start(void)
{
	(void)arch_irq_lock();
	running = true;
	k_current = k_rq_highest();
	slice_left = slice_ticks;
	arch_start(k_current);
	/* Only ports that can stop the kernel (host) come back here. */
	running = false;
}
