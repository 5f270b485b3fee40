/*
 * Interrupt handler table. The port's trap code finds which line fired and
 * calls k_irq_dispatch(line) between k_isr_enter() and k_isr_exit().
 */
#include "kernel_internal.h"

/*
 * K_TRACE_HANDLER_ENTRY(line): the port's trace point just before the kernel
 * calls the handler of `line`, so that a measurement can end at the user
 * handler's first instruction rather than at a marker inside it. A port with
 * a bus trace window makes it one store (arch_port.h); by default nothing.
 */
#ifndef K_TRACE_HANDLER_ENTRY
#define K_TRACE_HANDLER_ENTRY(line) ((void)(line))
#endif

static struct {
	k_isr_t isr;
	void *arg;
} irq_table[K_IRQ_LINES];

static uint32_t spurious_count;

int k_irq_attach(unsigned line, k_isr_t isr, void *arg)
{
	if (line >= K_IRQ_LINES)
		return K_EINVAL;
	unsigned key = arch_irq_lock();
	irq_table[line].isr = isr;
	irq_table[line].arg = arg;
	arch_irq_unlock(key);
	return K_OK;
}

K_IRQ_PATH(k_irq_dispatch) void k_irq_dispatch(unsigned line)
{
	if (line < K_IRQ_LINES && irq_table[line].isr != NULL) {
		k_isr_t isr = irq_table[line].isr;
		void *arg = irq_table[line].arg;
		K_TRACE_HANDLER_ENTRY(line); /* the last store before the call */
		isr(arg);
	} else {
		spurious_count++;
	}
}
