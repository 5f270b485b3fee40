/*
 * RV32 machine-mode port of the reference kernel (latscope simulated SoC,
 * VexRiscv IMAC). One privilege level, no FPU, no nested interrupts.
 */
#ifndef ARCH_PORT_H
#define ARCH_PORT_H

#include <stdint.h>

struct k_arch_thread {
	uint32_t sp; /* saved frame (arch_frame.h); offset 0 of k_thread_t */
};

/* Clear mstatus.MIE; the key is the previous MIE bit (8 or 0). */
static inline unsigned arch_irq_lock(void)
{
	unsigned mstatus;
	__asm__ volatile("csrrci %0, mstatus, 8" : "=r"(mstatus) : : "memory");
	return mstatus & 8u;
}

static inline void arch_irq_unlock(unsigned key)
{
	if (key != 0)
		__asm__ volatile("csrsi mstatus, 8" : : : "memory");
}

#define K_ARCH_IRQ_UNLOCKED_KEY 8u
#define K_ARCH_STACK_ALIGN 16
/* One 128-byte frame plus a few call levels of the kernel. */
#define K_ARCH_MIN_STACK_SIZE 384u
#define K_ARCH_IDLE_STACK_SIZE 384u

/* Static memory the C runtime need not zero (sim/firmware/link.ld's .noinit):
 * the 144 KiB stack arena. picolibc's size-optimised memset clears .bss a
 * byte at a time, about a million simulated cycles for the arena alone. */
#define K_ARCH_NOINIT __attribute__((section(".noinit")))

/* K_TRACE_WINDOW: byte address of the board's bus trace window (the latscope
 * SoC's 0xF0000100; the suite's sim build defines it). The kernel then writes
 * the marker KERNEL/ISR_ENTRY(line) (latscope/markers.h, docs/markers.md) in
 * ONE store just before it calls a line's handler: the end of the ILH tables
 * (docs/tests.md), whatever marker variant the suite uses. It also writes
 * KERNEL/TICK_ENTRY and KERNEL/TICK_EXIT around the tick's work, one store
 * each: the analysis flags the samples a tick interrupted. */
#ifdef K_TRACE_WINDOW
#include "latscope/markers.h"
#define K_TRACE_HANDLER_ENTRY(line) \
	(*(volatile uint32_t *)(K_TRACE_WINDOW) = \
		 LS_MARKER(LS_TEST_KERNEL, LS_POINT_ISR_ENTRY, (line)))
#define K_TRACE_TICK_ENTRY() \
	(*(volatile uint32_t *)(K_TRACE_WINDOW) = \
		 LS_MARKER(LS_TEST_KERNEL, LS_KERNEL_TICK_ENTRY, 0))
#define K_TRACE_TICK_EXIT() \
	(*(volatile uint32_t *)(K_TRACE_WINDOW) = \
		 LS_MARKER(LS_TEST_KERNEL, LS_KERNEL_TICK_EXIT, 0))
#endif

#endif /* ARCH_PORT_H */
