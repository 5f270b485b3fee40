/*
 * Cortex-M port of the reference kernel (ARMv6-M and ARMv7-M: Cortex-M0+,
 * M3, M4 without FPU context). Threads run in thread mode on the process
 * stack (PSP); handlers and the kernel's ISRs on the main stack (MSP).
 * Interrupts are masked with PRIMASK. The ISRs share one priority (they do not
 * nest, as on the RV32 port) but for the load profiles' line, one level above
 * or below (cm_board.h); PendSV, the context switch, has the lowest.
 */
#ifndef ARCH_PORT_H
#define ARCH_PORT_H

#include <stdint.h>

struct k_arch_thread {
	uint32_t sp; /* saved r4-r11 + exception frame (switch.S); offset 0 of k_thread_t */
};

/* Set PRIMASK; the key is its previous value (1 = was masked). */
static inline unsigned arch_irq_lock(void)
{
	unsigned primask;
	__asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(primask) : : "memory");
	return primask;
}

static inline void arch_irq_unlock(unsigned key)
{
	__asm__ volatile("msr primask, %0" : : "r"(key) : "memory");
}

#define K_ARCH_IRQ_UNLOCKED_KEY 0u
#define K_ARCH_STACK_ALIGN 8
/* 64-byte frame plus a few call levels of the kernel. */
#define K_ARCH_MIN_STACK_SIZE 256u
#define K_ARCH_IDLE_STACK_SIZE 256u

/* K_TRACE_MARKERS: the program has a marker port (the suite's Cortex-M builds
 * define it: ls_marker_port.h of the board on the include path, the strobe
 * shadow in suite.c). The kernel then writes KERNEL/TICK_ENTRY and
 * KERNEL/TICK_EXIT (latscope/markers.h, docs/markers.md) around the tick's
 * work in the SysTick ISR, through the same marker port as the tests (these
 * boards have no bus trace window): the analysis flags the samples a tick
 * interrupted. Each costs one GPIO marker (STM32: two BSRR stores; RP2040:
 * one SIO load and store) inside the tick. No handler-entry marker here: on a
 * GPIO port it would add a marker's cost to every IL sample. */
#ifdef K_TRACE_MARKERS
#include "latscope/marker.h"
#define K_TRACE_TICK_ENTRY() ls_mark_value(LS_MARKER(LS_TEST_KERNEL, LS_KERNEL_TICK_ENTRY, 0))
#define K_TRACE_TICK_EXIT() ls_mark_value(LS_MARKER(LS_TEST_KERNEL, LS_KERNEL_TICK_EXIT, 0))
#endif

#endif /* ARCH_PORT_H */
