/*
 * Host port: the kernel as a Linux user process. Threads are ucontext
 * contexts switched with swapcontext(); "interrupts" are simulated and
 * delivered synchronously (see host.h), so scheduling is deterministic.
 */
#ifndef ARCH_PORT_H
#define ARCH_PORT_H

#include <ucontext.h>

struct k_arch_thread {
	ucontext_t ctx;
};

/* Simulated global interrupt mask (the host's MIE): lock returns 1 when
 * interrupts were already masked, 0 when they were enabled. */
unsigned arch_irq_lock(void);
void arch_irq_unlock(unsigned key);

#define K_ARCH_IRQ_UNLOCKED_KEY 0u
#define K_ARCH_STACK_ALIGN 16
/* glibc stdio in a thread needs a few KiB; be generous, memory is cheap. */
#define K_ARCH_MIN_STACK_SIZE (32u * 1024u)
#define K_ARCH_IDLE_STACK_SIZE (64u * 1024u)

#endif /* ARCH_PORT_H */
