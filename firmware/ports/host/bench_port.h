/* Porting-layer sizes for the reference kernel on the host port. */
#ifndef BENCH_PORT_H
#define BENCH_PORT_H

#include <stdint.h>

#include "kernel/kernel.h"

typedef uint32_t bench_cycles_t; /* nanoseconds, wrapping */

#define BENCH_PRIO_COUNT 256
#define BENCH_MAX_THREADS 260
#define BENCH_MAX_SEMS 16
#define BENCH_MAX_MUTEXES 16
#define BENCH_MAX_MSGQS 8
#define BENCH_IRQ_LINES 32
#define BENCH_MAIN_STACK_BYTES (256u * 1024u)
#define BENCH_STACK_ARENA_BYTES (24u * 1024u * 1024u)
#define BENCH_MQ_ARENA_BYTES (64u * 1024u)

/* The host can raise its own interrupts (used by the portable smoke test). */
#define BENCH_PORT_HAS_SOFT_IRQ 1
void bench_port_raise_irq(int irq);

#endif /* BENCH_PORT_H */
