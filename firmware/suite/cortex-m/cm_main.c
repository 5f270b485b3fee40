/*
 * The suite on a Cortex-M board with the reference kernel's Cortex-M port:
 * bench_exit() ends the program (QEMU: semihosting exit code; a board prints
 * "exit <code>" and stops). Under QEMU (CM_QEMU) nothing drives the IRQ line:
 * the busy-wait hook raises line 0 every CM_QEMU_IRQ_STEPS steps instead, and
 * the load profiles' line every CM_QEMU_LOAD_STEPS once a profile started it.
 */
#include "suite.h"

#ifdef CM_QEMU
#ifndef CM_QEMU_IRQ_STEPS
#define CM_QEMU_IRQ_STEPS 50u
#endif
#ifndef CM_QEMU_LOAD_STEPS
#define CM_QEMU_LOAD_STEPS 37u
#endif

void suite_port_busy(void)
{
	static unsigned steps;
	if (++steps % CM_QEMU_IRQ_STEPS == 0)
		bench_port_raise_irq(SUITE_IRQ);
	if (steps % CM_QEMU_LOAD_STEPS == 0)
		bench_port_load_irq_step();
}
#endif

int main(void)
{
	bench_run(SUITE_PRIO_MAIN, suite_main, NULL);
	return 3; /* not reached */
}
