/*
 * latscope reference kernel: public API.
 *
 * A small priority-preemptive RTOS written to be the device under test of
 * the simulated latscope demo, and to be read. The rules, all enforced by
 * firmware/tests:
 *
 * Priorities
 *   256 levels, 0 is the HIGHEST, 255 the lowest. All 256 are available to
 *   application threads: the idle thread lives outside the priority range and
 *   runs only when no thread is ready.
 *
 * Scheduling
 *   The highest-priority ready thread runs. Within a priority, threads run in
 *   FIFO order: a thread that becomes ready (created, woken, resumed) goes to
 *   the tail of its level; a running thread that is preempted by a
 *   higher-priority thread stays at the head of its level and resumes first.
 *   k_yield() moves the caller to the tail of its level (it never yields to a
 *   lower priority). A priority change puts a ready thread at the tail of its
 *   new level, except the running thread, which goes to the head (so priority
 *   inheritance and its undoing never cost the running thread its turn among
 *   equals). The ready-queue lookup is O(1): a 256-bit bitmap plus an 8-bit
 *   summary, de Bruijn find-first-set, no loop.
 *
 * Round-robin (optional)
 *   k_timeslice_set(n), n > 0: when the running thread has run for n ticks in
 *   a row and another thread of its priority is ready, the tick moves it to the
 *   tail of its level. The slice restarts whenever a thread is switched in.
 *
 * Wait queues
 *   Every blocking object keeps its waiters sorted by priority, FIFO within a
 *   priority. Waking is O(1) (the head); queueing walks from the tail, so it is
 *   O(1) when waiters arrive in priority order or all share one priority, and
 *   O(number of waiters of lower priority) otherwise.
 *
 * Timeouts
 *   In ticks. K_NO_WAIT fails at once, K_FOREVER never expires, n wakes the
 *   thread on the n-th tick announced after the call (so the real delay is
 *   between n-1 and n tick periods). Timeouts longer than 2^31-1 ticks are
 *   clamped to that.
 *
 * Mutexes
 *   Owner-recursive, with transitive priority inheritance: a thread's
 *   effective priority is the highest of its base priority and the priority of
 *   the first waiter of every mutex it owns, re-evaluated along the whole
 *   chain owner -> mutex it waits on -> that mutex's owner ... whenever a
 *   waiter arrives, leaves (timeout, deletion) or changes priority, and when a
 *   mutex is released. Unlock hands the mutex directly to its first waiter.
 *
 * Interrupts
 *   ISRs run between k_isr_enter()/k_isr_exit() (done by the port). Any call
 *   that cannot block (give, send/receive with K_NO_WAIT, resume, suspend) is
 *   allowed in an ISR; the rescheduling it causes is deferred to the exit of
 *   the outermost ISR. Blocking calls from an ISR behave as K_NO_WAIT; mutex
 *   calls from an ISR return K_EPERM.
 *
 * All objects are provided by the caller (static pools, no malloc).
 */
#ifndef KERNEL_KERNEL_H
#define KERNEL_KERNEL_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>

#include "kernel/list.h"
#include "arch_port.h" /* per port: struct k_arch_thread, K_ARCH_* sizes */

/*
 * K_IRQ_PATH(name): on the functions an interrupt runs through (trap entry,
 * dispatch, the ISR bookkeeping), which go into the ELF section
 * .text.irq_path.0.<name>. A linker script keeps them in one block from a
 * cache-line boundary (sim/firmware/link.ld), so that the path's code does
 * not evict itself from a direct-mapped instruction cache, whatever else a
 * build contains. Without such a script the sections land with the rest.
 */
#ifndef K_IRQ_PATH
#define K_IRQ_PATH(name) __attribute__((section(".text.irq_path.0." #name)))
#endif

#define K_PRIO_COUNT   256
#define K_PRIO_HIGHEST 0
#define K_PRIO_LOWEST  255

typedef uint32_t k_ticks_t;
#define K_NO_WAIT ((k_ticks_t)0)
#define K_FOREVER ((k_ticks_t)0xFFFFFFFFu)

/* Return codes: 0 on success, negative on failure. */
enum {
	K_OK = 0,
	K_EAGAIN = -1,     /* not available and the caller asked not to wait */
	K_ETIMEDOUT = -2,  /* the wait expired */
	K_EDELETED = -3,   /* the object was deleted while the caller waited */
	K_EINVAL = -4,     /* bad argument or object state */
	K_EPERM = -5,      /* not allowed here (mutex from ISR, unlock by non-owner) */
	K_EOVERFLOW = -6,  /* semaphore already at its limit */
};

/* Thread state bits; a thread is ready when none of the blocking bits is set. */
enum {
	K_STATE_PENDING = 1u << 0,   /* on an object's wait queue */
	K_STATE_SLEEPING = 1u << 1,  /* in k_sleep() */
	K_STATE_SUSPENDED = 1u << 2, /* k_thread_suspend(); orthogonal to waiting */
	K_STATE_DEAD = 1u << 3,      /* deleted or returned; never created is also DEAD */
	K_STATE_IDLE = 1u << 4,      /* the idle thread (never in the ready queue) */
};
#define K_STATE_BLOCKING (K_STATE_PENDING | K_STATE_SLEEPING | K_STATE_SUSPENDED | K_STATE_DEAD)

typedef struct k_waitq {
	k_dnode_t waiters; /* k_thread_t.qnode, sorted by prio, FIFO within prio */
} k_waitq_t;

struct k_mutex;

typedef void (*k_entry_t)(void *arg);

typedef struct k_thread {
	struct k_arch_thread arch; /* must stay first: port assembly uses offset 0 */
	k_dnode_t qnode;           /* ready queue or a wait queue (never both) */
	k_dnode_t tnode;           /* timeout list */
	uint8_t prio;              /* effective priority (after inheritance) */
	uint8_t base_prio;         /* priority set by create/priority_set */
	uint8_t state;             /* K_STATE_* */
	k_waitq_t *pend_q;         /* the wait queue it is on (PENDING) */
	struct k_mutex *pend_mutex; /* set when pend_q belongs to a mutex */
	k_ticks_t wake_tick;       /* when on the timeout list */
	int wait_result;           /* what the blocking call returns */
	void *wait_msg;            /* message queue: caller's message buffer */
	k_dnode_t owned;           /* mutexes owned (k_mutex_t.owner_node) */
	k_entry_t entry;
	void *arg;
	const char *name;
} k_thread_t;

typedef struct k_sem {
	k_waitq_t waitq;
	uint32_t count;
	uint32_t limit;
} k_sem_t;

typedef struct k_mutex {
	k_waitq_t waitq;
	k_thread_t *owner;
	uint32_t lock_count; /* recursion depth of the owner */
	k_dnode_t owner_node; /* on owner->owned */
} k_mutex_t;

typedef struct k_msgq {
	k_waitq_t senders;   /* blocked in send: queue full */
	k_waitq_t receivers; /* blocked in receive: queue empty */
	uint8_t *buf;
	uint32_t msg_size;
	uint32_t capacity;   /* messages; 0 makes a rendezvous queue */
	uint32_t count;
	uint32_t read_idx;
	uint32_t write_idx;
} k_msgq_t;

typedef void (*k_isr_t)(void *arg);

/* ---- kernel lifecycle ---- */
/* Reset every kernel structure and create the idle thread. Call first. */
void k_init(void);
/* Switch to the highest-priority ready thread. The port decides whether
 * this returns (host port: when host_stop() is called) or not. */
void k_start(void);
bool k_started(void);

/* ---- threads ---- */
/* Create a thread and make it ready; it preempts the caller at once when it
 * has a higher priority. stack/stack_size: caller-owned memory. */
int k_thread_create(k_thread_t *t, const char *name, uint8_t prio,
		    void *stack, size_t stack_size, k_entry_t entry, void *arg);
/* Delete any thread (self too: then it does not return). Removes it from
 * every queue; mutexes it owns are released to their first waiter. */
int k_thread_delete(k_thread_t *t);
void k_thread_exit(void) __attribute__((noreturn));
k_thread_t *k_thread_self(void);
void k_yield(void);
int k_thread_priority_set(k_thread_t *t, uint8_t prio);
uint8_t k_thread_priority_get(const k_thread_t *t);      /* effective */
uint8_t k_thread_base_priority_get(const k_thread_t *t); /* as set */
int k_thread_suspend(k_thread_t *t);
int k_thread_resume(k_thread_t *t);
bool k_thread_alive(const k_thread_t *t);
void k_sleep(k_ticks_t ticks);

/* ---- time ---- */
k_ticks_t k_tick_get(void);
void k_timeslice_set(k_ticks_t ticks); /* 0 disables round-robin */
/* Called by the port's timer ISR, between k_isr_enter() and k_isr_exit(). */
void k_tick_announce(void);

/* ---- semaphores (binary: limit 1) ---- */
int k_sem_init(k_sem_t *s, uint32_t initial, uint32_t limit);
int k_sem_delete(k_sem_t *s);
int k_sem_give(k_sem_t *s);
int k_sem_take(k_sem_t *s, k_ticks_t timeout);
uint32_t k_sem_count(const k_sem_t *s);

/* ---- mutexes with priority inheritance ---- */
int k_mutex_init(k_mutex_t *m);
int k_mutex_delete(k_mutex_t *m);
int k_mutex_lock(k_mutex_t *m, k_ticks_t timeout);
int k_mutex_unlock(k_mutex_t *m);
k_thread_t *k_mutex_owner(const k_mutex_t *m);

/* ---- message queues: fixed-size messages, FIFO ---- */
int k_msgq_init(k_msgq_t *q, void *buf, uint32_t msg_size, uint32_t capacity);
int k_msgq_delete(k_msgq_t *q);
int k_msgq_send(k_msgq_t *q, const void *msg, k_ticks_t timeout);
int k_msgq_receive(k_msgq_t *q, void *msg, k_ticks_t timeout);
uint32_t k_msgq_count(const k_msgq_t *q);

/* ---- interrupts ---- */
#define K_IRQ_LINES 32
int k_irq_attach(unsigned line, k_isr_t isr, void *arg);
/* Run the handler attached to line (port's interrupt dispatch). */
void k_irq_dispatch(unsigned line);
void k_isr_enter(void);
/* Leave an ISR. When this was the outermost one and a different thread must
 * run, make it current and return the thread that was interrupted (whose
 * context the port must save); otherwise return NULL. */
k_thread_t *k_isr_exit(void);
bool k_in_isr(void);

/* Test/diagnostic access. */
k_thread_t *k_idle_thread(void);
/* Number of context switches since k_init() (voluntary + from ISR exit). */
uint32_t k_switch_count(void);
/* True when some thread waits with a finite timeout (host idle uses it). */
bool k_timeouts_pending(void);

#endif /* KERNEL_KERNEL_H */
