/* Porting-layer sizes for the reference kernel on Cortex-M boards. The stack
 * arena is the board's (-DCM_STACK_ARENA_KIB=, set by the suite Makefile from
 * the board's RAM); SEO-f and TSL/IDL-b-128 need about 130 stacks. */
#ifndef BENCH_PORT_H
#define BENCH_PORT_H

#include <stdint.h>

#include "kernel/kernel.h"

typedef uint32_t bench_cycles_t; /* processor cycles (SysTick-derived) */

#ifndef CM_STACK_ARENA_KIB
#define CM_STACK_ARENA_KIB 48u
#endif

#define BENCH_PRIO_COUNT 256
#define BENCH_MAX_THREADS 260
#define BENCH_MAX_SEMS 8
#define BENCH_MAX_MUTEXES 8
#define BENCH_MAX_MSGQS 4
#ifdef CM_QEMU
#define BENCH_IRQ_LINES 8 /* NVIC 6..13 raised in software, but line 5 = TIM2 (NVIC 28) */
#else
/* STM32: EXTI0-4 on PA0-PA4, line 5 = TIM2; RP2040: line 0, line 1 = its timer's alarm 0.
 * TIM2 and the alarm are the load profiles' second interrupt source. */
#define BENCH_IRQ_LINES 6
#endif
/* The memory load profile's buffer (the suite's SUITE_LOAD_MEMORY_KIB): these cores have
 * no data cache; what fits beside the stacks. */
#define BENCH_LOAD_MEMORY_KIB 8u
#define BENCH_MAIN_STACK_BYTES 1024u
#define BENCH_STACK_ARENA_BYTES (CM_STACK_ARENA_KIB * 1024u)
#define BENCH_MQ_ARENA_BYTES 1024u

#ifdef CM_QEMU
/* Under QEMU lines are raised in software (NVIC set-pending). */
#define BENCH_PORT_HAS_SOFT_IRQ 1
void bench_port_raise_irq(int irq);
/* ... and the load profiles' line stands for TIM2: the busy-wait hook raises it through
 * this, once a profile started it (board_stm32f4.c). */
void bench_port_load_irq_step(void);
#endif

#endif /* BENCH_PORT_H */
