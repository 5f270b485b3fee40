/* Porting-layer sizes for the RV32 port on QEMU's "virt" machine: a
 * development check of the RV32 port (context switch, trap path) on a
 * second RISC-V target; not part of the latscope SoC. */
#ifndef BENCH_PORT_H
#define BENCH_PORT_H

#include <stdint.h>

#include "kernel/kernel.h"

typedef uint32_t bench_cycles_t; /* CLINT mtime (10 MHz) low word */

#define BENCH_PRIO_COUNT 256
#define BENCH_MAX_THREADS 260
#define BENCH_MAX_SEMS 8
#define BENCH_MAX_MUTEXES 8
#define BENCH_MAX_MSGQS 4
#define BENCH_IRQ_LINES 32
#define BENCH_MAIN_STACK_BYTES 2048u
#define BENCH_STACK_ARENA_BYTES (144u * 1024u)
#define BENCH_MQ_ARENA_BYTES 1024u

/* Lines are raised in software through the CLINT software interrupt. */
#define BENCH_PORT_HAS_SOFT_IRQ 1
void bench_port_raise_irq(int irq);

#endif /* BENCH_PORT_H */
