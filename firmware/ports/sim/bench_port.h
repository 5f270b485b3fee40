/* Porting-layer sizes for the reference kernel on the simulated SoC
 * (256 KiB RAM: code, data, 16 KiB boot/interrupt stack, these pools). */
#ifndef BENCH_PORT_H
#define BENCH_PORT_H

#include <stdint.h>

#include "kernel/kernel.h"

typedef uint32_t bench_cycles_t; /* mtime low word: CPU cycles */

#define BENCH_PRIO_COUNT 256
#define BENCH_MAX_THREADS 260 /* SEO-f: 255 waiters + releaser + spares */
#define BENCH_MAX_SEMS 8
#define BENCH_MAX_MUTEXES 8
#define BENCH_MAX_MSGQS 4
#define BENCH_IRQ_LINES 32
#define BENCH_MAIN_STACK_BYTES 2048u
#ifndef BENCH_STACK_ARENA_BYTES
#define BENCH_STACK_ARENA_BYTES (144u * 1024u) /* e.g. 280 stacks of 512 B */
#endif
#define BENCH_MQ_ARENA_BYTES 1024u

#endif /* BENCH_PORT_H */
