/*
 * The architecture interface: everything the portable kernel core needs from
 * a port. A port provides "arch_port.h" (in its include directory) with
 *   struct k_arch_thread            saved context, first member of k_thread_t
 *   unsigned arch_irq_lock(void)    mask interrupts, return the previous state
 *   void arch_irq_unlock(unsigned)  restore the state returned by lock
 *   K_ARCH_IRQ_UNLOCKED_KEY         the key meaning "interrupts enabled"
 *   K_ARCH_IDLE_STACK_SIZE          bytes for the idle thread's stack
 *   K_ARCH_STACK_ALIGN              alignment of thread stacks
 * and implements the functions below.
 *
 * Contract of the kernel with the port:
 *   - every arch_switch()/arch_start() call is made with interrupts locked
 *     and k_current already set to `to`;
 *   - the port's interrupt entry calls k_isr_enter(), dispatches
 *     (k_irq_dispatch() / k_tick_announce()), then k_isr_exit(); when that
 *     returns a thread, the port saves the interrupted context into it and
 *     resumes k_current instead of the interrupted thread;
 *   - a new thread's first instruction is k_thread_trampoline(), entered with
 *     interrupts in any state (the trampoline enables them).
 */
#ifndef KERNEL_ARCH_H
#define KERNEL_ARCH_H

#include "kernel/kernel.h"

/* Prepare t so that switching to it enters k_thread_trampoline(). */
void arch_context_init(k_thread_t *t, void *stack, size_t stack_size);
/* Save the running context into from, resume to. Returns when from is
 * switched back in. from may be a thread that was just deleted. */
void arch_switch(k_thread_t *from, k_thread_t *to);
/* Leave the boot context for the first thread. */
void arch_start(k_thread_t *first);
/* Called in a loop by the idle thread with interrupts enabled: wait for an
 * interrupt (or, on the host port, simulate the passage of time). */
void arch_idle(void);

/* Provided by the core for the ports. */
extern k_thread_t *k_current;
void k_thread_trampoline(void) __attribute__((noreturn));

#endif /* KERNEL_ARCH_H */
