/*
 * Host port test hooks. Time and interrupts only advance when asked to:
 *   - host_tick() from a thread = the timer interrupt fires now;
 *   - host_raise_irq(line) from a thread = the line's pending latch is set;
 *     with the line enabled the handler runs now (or, if interrupts are
 *     locked, at the moment they are unlocked), exactly like on the target;
 *   - when every thread is blocked the idle thread ticks until a timeout
 *     wakes someone; when nothing can ever wake, the run ends with
 *     HOST_EXIT_DEADLOCK.
 * ISRs run on the interrupted thread's stack between k_isr_enter() and
 * k_isr_exit(); a switch decided at exit happens when the ISR returns.
 */
#ifndef HOST_H
#define HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/kernel.h"

#define HOST_EXIT_DEADLOCK 99

/* k_init() must have been called (threads may be created before). Runs a
 * "main" thread at prio until it returns or board_exit()/host_stop() is
 * called; returns the exit code (0 when main returned). */
int host_run(k_entry_t entry, void *arg, uint8_t prio);
/* End the current run from any thread: host_run() returns code. */
void host_stop(int code) __attribute__((noreturn));

void host_tick(void);
void host_raise_irq(unsigned line);
bool host_irq_line_pending(unsigned line);
/* Number of interrupts (tick + lines) delivered since host_run(). */
uint32_t host_isr_count(void);

#endif /* HOST_H */
