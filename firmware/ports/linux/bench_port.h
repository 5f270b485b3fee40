/*
 * Porting layer on Linux user space (pthreads). Bench priority p maps to
 * SCHED_FIFO priority 98 - p; 99 is kept for the interrupt threads. Without
 * the right to use SCHED_FIFO (no CAP_SYS_NICE / RT bandwidth), threads run
 * SCHED_OTHER and priorities are only recorded: functional, not real time.
 */
#ifndef BENCH_PORT_H
#define BENCH_PORT_H

#include <stdint.h>

typedef uint32_t bench_cycles_t; /* CLOCK_MONOTONIC nanoseconds, wrapping */

#define BENCH_PRIO_COUNT 98
#define BENCH_MAX_THREADS 260
#define BENCH_MAX_SEMS 16
#define BENCH_MAX_MUTEXES 16
#define BENCH_MAX_MSGQS 8
#define BENCH_IRQ_LINES 8
#define BENCH_LINUX_TICK_NS 1000000u /* the API's tick: 1 ms */

/* Software-raised interrupts (tests); real lines come from UIO devices named
 * by the environment variable LATSCOPE_IRQ<n>_UIO (e.g. /dev/uio0). */
#define BENCH_PORT_HAS_SOFT_IRQ 1
void bench_port_raise_irq(int irq);
/* Raise irq every period_ns from a thread of its own (SCHED_FIFO native_prio when
 * permitted; 0: the caller's scheduling), timed to absolute deadlines. */
int bench_linux_raise_every(int irq, long period_ns, int native_prio);
/* The SCHED_FIFO priority (1..99) of a line's handler thread; default 99. */
int bench_linux_irq_priority(int irq, int native_prio);

/* The memory load profile's buffer (the suite's SUITE_LOAD_MEMORY_KIB): 4 MiB, larger than
 * a Raspberry Pi's last-level cache (Pi 4: 1 MiB L2, Pi 5: 2 MiB L3). */
#define BENCH_LOAD_MEMORY_KIB 4096u

/* 1 when threads really run SCHED_FIFO, 0 in the fallback (valid once
 * bench_run() has started). */
int bench_linux_realtime(void);

#endif /* BENCH_PORT_H */
