/*
 * latscope porting layer: the only RTOS interface the test suite uses.
 *
 * Shape follows rtos-benchmark's bench_api.h: objects are named by small
 * integer ids chosen by the test (0 .. BENCH_MAX_xxx-1), every call returns
 * BENCH_SUCCESS or an error code, and each RTOS fills the layer in its own
 * source file without touching the tests. docs/porting.md says how.
 *
 * A port provides "bench_port.h" (on the include path) defining:
 *   bench_cycles_t          unsigned type of bench_cycles(); differences are
 *                           taken modulo its width
 *   BENCH_PRIO_COUNT        number of distinct priorities offered (>= 32)
 *   BENCH_MAX_THREADS, BENCH_MAX_SEMS, BENCH_MAX_MUTEXES, BENCH_MAX_MSGQS
 *   BENCH_IRQ_LINES         interrupt lines usable with bench_irq_*
 * Trace markers are NOT part of this layer (see the marker library).
 *
 * Conventions common to all calls:
 *   - Priorities: 0 is the MOST urgent, BENCH_PRIO_COUNT-1 the least. A port
 *     maps them to native priorities preserving strict order (FreeRTOS:
 *     configMAX_PRIORITIES-1-p; Linux SCHED_FIFO: 99-p; Zephyr: p).
 *   - Timeouts are in ticks (bench_tick_period_ns()): BENCH_NO_WAIT fails at
 *     once, BENCH_FOREVER never expires.
 *   - "ISR-safe" calls may be made from a handler attached with
 *     bench_irq_attach(); a wake-up they cause takes effect when the handler
 *     returns (deferred rescheduling), never inside the handler.
 */
#ifndef LATSCOPE_BENCH_API_H
#define LATSCOPE_BENCH_API_H

#include <stddef.h>
#include <stdint.h>

#include "bench_port.h"

#define BENCH_SUCCESS     0
#define BENCH_ERROR       1 /* bad id, object in use/absent, not permitted */
#define BENCH_TIMEOUT     2 /* a timed wait expired */
#define BENCH_WOULD_BLOCK 3 /* BENCH_NO_WAIT and the object was not available */
#define BENCH_DELETED     4 /* the object was deleted while the caller waited */
#define BENCH_FULL        5 /* semaphore give at its maximum count */

typedef uint32_t bench_ticks_t;
#define BENCH_NO_WAIT ((bench_ticks_t)0)
#define BENCH_FOREVER ((bench_ticks_t)0xFFFFFFFFu)

/* Id of the thread bench_run() starts; valid wherever a thread id is. */
#define BENCH_THREAD_MAIN BENCH_MAX_THREADS

typedef void (*bench_thread_entry_t)(void *arg);
typedef void (*bench_isr_t)(void *arg);

/* ------------------------------------------------------------ start-up */

/*
 * Start the RTOS (if not started) and run entry(arg) in thread
 * BENCH_THREAD_MAIN at priority prio. Hosted ports return BENCH_SUCCESS
 * when entry returns; bare-metal ports may end the program instead.
 */
int bench_run(int prio, bench_thread_entry_t entry, void *arg);

/* End the test program with an exit code (0 = success). Hosted ports make
 * bench_run() return (BENCH_SUCCESS only for 0); bare-metal ports end the
 * program (the simulation's exit code). Does not return. */
void bench_exit(int code) __attribute__((noreturn));

/* Write a NUL-terminated string to the console (may be slow; not ISR-safe). */
void bench_console_write(const char *s);

/* ------------------------------------------------------------ threads */

/*
 * Create thread `id` and make it ready at once: if prio is more urgent than
 * the caller's, it runs before this call returns. stack_size is a request;
 * ports may round it up to their minimum. A thread whose entry returns is
 * deleted; its id may then be created again. Fails with BENCH_ERROR when id
 * is out of range or still alive.
 */
int bench_thread_create(int id, const char *name, int prio, size_t stack_size,
			bench_thread_entry_t entry, void *arg);
/* Delete thread id (it may be the caller: then the call does not return).
 * The thread is removed from whatever it waits on. */
int bench_thread_delete(int id);
/* Id of the calling thread, or -1 when not called from a bench thread. */
int bench_thread_self(void);
/* Move the caller behind the other ready threads of its priority. */
void bench_thread_yield(void);
/* Set the base priority; takes effect immediately (may preempt the caller). */
int bench_thread_set_priority(int id, int prio);
/* Base priority last set (priority inheritance does not show here). */
int bench_thread_get_priority(int id);
/* Suspend: the thread does not run until bench_thread_resume(); a thread
 * suspended while waiting keeps waiting. Suspending the caller blocks it. */
int bench_thread_suspend(int id);
int bench_thread_resume(int id); /* ISR-safe */
/* Block the caller for `ticks` ticks (0: yield). */
void bench_sleep(bench_ticks_t ticks);

/* ------------------------------------------------------------ semaphores */

/* Counting semaphore; binary = max_count 1. Waiters are served in priority
 * order (FIFO within a priority) where the RTOS supports it. */
int bench_sem_create(int id, unsigned initial_count, unsigned max_count);
/* Waiters are released with BENCH_DELETED. */
int bench_sem_delete(int id);
/* BENCH_FULL when already at max_count with no waiter. */
int bench_sem_give(int id);
/* The ISR form; RTOSes with a distinct FromISR call use it here. */
int bench_sem_give_from_isr(int id);
int bench_sem_take(int id, bench_ticks_t timeout);

/* ------------------------------------------------------------ mutexes */

/* Mutex with priority inheritance, recursive for its owner. Not ISR-safe. */
int bench_mutex_create(int id);
int bench_mutex_delete(int id);
int bench_mutex_lock(int id, bench_ticks_t timeout);
/* BENCH_ERROR when the caller is not the owner. */
int bench_mutex_unlock(int id);

/* ------------------------------------------------------------ message queues */

/* Queue of `capacity` messages of msg_size bytes each, FIFO; send blocks
 * while full, receive while empty (up to the timeout). */
int bench_mq_create(int id, size_t msg_size, unsigned capacity);
int bench_mq_delete(int id);
int bench_mq_send(int id, const void *msg, bench_ticks_t timeout);
int bench_mq_receive(int id, void *msg, bench_ticks_t timeout);

/* ------------------------------------------------------------ interrupts */

/* Attach handler(arg) to interrupt line irq (the line stays disabled). */
int bench_irq_attach(int irq, bench_isr_t handler, void *arg);
int bench_irq_enable(int irq);
int bench_irq_disable(int irq);
/* Acknowledge the interrupt at its source; the handler must call it, and
 * where it calls it is part of what the test measures. ISR-safe. */
void bench_irq_ack(int irq);
/* Mask / restore all interrupts (critical section). Nestable via the key. */
unsigned bench_irq_lock(void);
void bench_irq_unlock(unsigned key);

/* ------------------------------------------------------------ time */

/* Kernel tick: its period and the number announced since start. */
uint32_t bench_tick_period_ns(void);
bench_ticks_t bench_tick_count(void);
/* Free-running counter, ISR-safe and cheap; the suite uses it only for
 * sanity checks: latscope's real measurements are the appliance's stamps. */
bench_cycles_t bench_cycles(void);
uint32_t bench_cycles_per_second(void);

#endif /* LATSCOPE_BENCH_API_H */
